#include "options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>

#include "../kernel_lib/check.hpp"
#include "cli_checks.hpp"

namespace gemm {

static void build_app(CLI::App& app, Options& o) {
  app.option_defaults()->always_capture_default();
  const auto positive = CLI::Range(1, 1 << 30);
  app.add_option("--m", o.m, "rows of A and C")->check(cli::decimal)->check(positive);
  app.add_option("--n", o.n, "columns of B and C")->check(cli::decimal)->check(positive);
  app.add_option("--k", o.k, "inner dimension")->check(cli::decimal)->check(positive);
  app.add_option("--alpha", o.alpha, "fp32 steps: scale of A*B");
  app.add_option("--beta", o.beta, "fp32 steps: scale of the C read in (0: C is never read)");
  app.add_option("--reps", o.reps, "paired rounds: each kernel is timed once per round (median reported)")->check(cli::decimal)->check(CLI::Range(20, 100000));
  app.add_option("--warmup", o.warmup, "untimed warm-up launches")->check(cli::decimal)->check(CLI::Range(1, 100000));
  app.add_option("--settle-s", o.settle_s,
                 "seconds of untimed paired rounds before the timed ones, so they meet a settled power state")
      ->check(cli::finite)->check(CLI::Range(0.0, 60.0));
  app.add_option("--seed", o.seed, "input generator seed")->check(cli::decimal)->check(CLI::Range(0.0, 4294967295.0));
  auto* check_only = app.add_flag("--check-only", o.check_only, "check (against cuBLAS; fp8: against the fp64 oracle), do not time");
  auto* no_check = app.add_flag("--no-check", o.no_check, "time without checking");
  check_only->excludes(no_check);
  app.add_flag("--exact", o.exact, "small-integer inputs compared with == (fp32: |alpha|,|beta| integers <= 16; fp8: K <= 1024)");
  app.add_option("--dist", o.dist, "fp8 steps: inputs before quantization, normal (N(0,1)) or llm (outlier channels in A, "
                 "weights whose size changes per 128x128 block; also prints the error against the unquantized product)")
      ->check(CLI::IsMember({"normal", "llm"}));
  app.add_option("--csv", o.csv, "append result rows (one per kernel and mode) to this CSV file");
  app.add_option("--refs", o.refs, "references timed beside the step, alternating launch by launch")
      ->delimiter(',')
      ->check(CLI::IsMember({"cublas", "cublaslt", "cutlass", "none"}));
  app.add_option("--lt-algos", o.lt_algos, "cuBLASLt heuristic algorithms tried for the cublaslt reference")
      ->check(cli::decimal)->check(CLI::Range(1, 64));
  app.add_option("--energy-s", o.energy_s, "seconds of back-to-back launches per kernel for energy per GEMM (0: skip)")
      ->check(cli::finite)->check(CLI::Range(0.0, 60.0));
  app.add_option("--sustained", o.sustained_s, "also loop each kernel for this many seconds (power-capped steady state)")
      ->check(cli::finite)->check(CLI::Range(0.0, 600.0));
  app.add_option("--series", o.series, "sustained mode: write every clock/power sample to this CSV");
  app.add_option("--trace", o.trace, "check, then run the step once and write its pipeline trace (make trace builds)");
  app.add_option("--profile-once", o.profile_once, "check, then run this kernel once inside cudaProfilerStart/Stop "
                 "(cublaslt: cuBLASLt's first heuristic algorithm; for an fp8 step, cuBLASLt FP8 of its scaling)")
      ->check(CLI::IsMember({"step", "cublas", "cublaslt"}));
}

static void validate(const Options& o) {
  if (!o.series.empty() && o.sustained_s <= 0) throw Error("--series needs --sustained SECONDS");
  if (!o.trace.empty() && (o.check_only || o.no_check || !o.profile_once.empty()))
    throw Error("--trace runs the check itself and then one traced launch: drop --check-only/--no-check/--profile-once");
  if (!o.profile_once.empty() && (o.check_only || o.no_check))
    throw Error("--profile-once runs the check itself and then one launch: drop --check-only/--no-check");
  if (!std::isfinite(o.alpha) || !std::isfinite(o.beta))
    throw Error("--alpha and --beta must be finite");
  if (o.exact && o.dist != "normal")
    throw Error("--exact draws small integers of its own: --dist " + o.dist + " applies to random inputs only");
  if (o.exact) {
    // |a|, |b| <= 2 and |alpha| <= 16: |alpha * sum| <= 64 K must stay below 2^24 to be exact in fp32.
    if (o.k > kMaxExactK)
      throw Error(fmt::format("--exact needs K <= {} so that every partial sum is an integer below 2^24 "
                              "(exact in fp32); got K={}", kMaxExactK, o.k));
    for (float v : {o.alpha, o.beta})
      if (v != std::trunc(v) || std::fabs(v) > 16)
        throw Error(fmt::format(
            "--exact needs integer --alpha and --beta with |value| <= 16 (got {}) so that every "
            "product stays exact in fp32", v));
  }
}

Options parse_options(int argc, const char* const* argv, const std::string& program, int& exit_code) {
  exit_code = -1;
  Options o;
  CLI::App app{fmt::format("{}: one step of the matmul series, checked (against cuBLAS; fp8 against an fp64 oracle) and timed", program)};
  build_app(app, o);
  exit_code = cli::parse(app, argc, argv, program);  // --help: usage on stdout, 0; bad input: one line, 2
  if (exit_code >= 0) return o;
  try {
    validate(o);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    exit_code = 2;
  }
  return o;
}

Options parse_options_or_throw(const std::vector<std::string>& args) {
  Options o;
  CLI::App app{"test"};
  build_app(app, o);
  std::vector<const char*> argv{"test"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw Error(fmt::format("{}: {}", e.get_name(), e.what()));
  }
  validate(o);
  return o;
}

}  // namespace gemm
