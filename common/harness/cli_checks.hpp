// The command lines of the step programs, fuzz and soak (CLI11): the parse all three run, the --steps
// option fuzz and soak share, and validators. CLI11 converts "011" as octal and "0x10" as
// hexadecimal, and lets "nan" through a CLI::Range (every comparison with NaN is false); sizes, counts
// and seeds here are decimal and times are finite, so the validators refuse anything else before it
// is converted, with the option's name in the error.
#pragma once
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "../kernel_lib/registry.hpp"

namespace gemm::cli {

/// Parses argv into `app`. Returns -1 when it parsed (go on); after --help, 0 (the usage printed on
/// stdout); after bad input, 2, with one line on stderr: "error: PROGRAM: WHAT (see --help)".
inline int parse(CLI::App& app, int argc, const char* const* argv, const std::string& program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "error: %s: %s (see --help)\n", program.c_str(), e.what());
    return 2;
  }
  return -1;
}

/// fuzz's and soak's --steps: comma-separated step ids into `ids`.
inline CLI::Option* add_steps_option(CLI::App& app, std::vector<std::string>& ids, const std::string& help) {
  return app.add_option("--steps", ids, help)->delimiter(',');
}

/// The registered steps that `ids` names, each once, in the order given. Throws gemm::Error naming the
/// registered ids for one that is not registered.
inline std::vector<Step> named_steps(const std::vector<std::string>& ids) {
  std::vector<Step> steps;
  std::set<std::string> seen;
  for (const std::string& id : ids)
    if (seen.insert(id).second) steps.push_back(find_step(id));
  return steps;
}

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
