// Validators for the command lines of the step programs, fuzz and soak (CLI11).
// CLI11 converts "011" as octal and "0x10" as hexadecimal, and lets "nan" through a CLI::Range (every
// comparison with NaN is false); sizes, counts and seeds here are decimal and times are finite, so
// these refuse anything else before it is converted, with the option's name in the error.
#pragma once
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace gemm::cli {

/// A non-negative decimal integer: digits only, no sign, no leading zero (but "0" itself).
inline const CLI::Validator decimal(
    [](std::string& s) -> std::string {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || (s.size() > 1 && s[0] == '0')) return "'" + s + "' is not a decimal integer (no sign, no leading 0)";
      return {};
    },
    "DECIMAL");

/// A finite floating-point number (refuses nan and inf, which CLI::Range does not catch).
inline const CLI::Validator finite(
    [](std::string& s) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return "'" + s + "' is not a finite number";
      return {};
    },
    "FINITE");

}  // namespace gemm::cli
