// CPU tests of the benchmark's arithmetic: paired ratios and quantiles, the NVML summary (energy
// from counter updates only, idle excluded from the reasons), the clock-reason names, the speed of
// light per clock, and the benchmark flags. No GPU or NVML needed.
#include <catch2/catch.hpp>

#include "../common/kernel_lib/check.hpp"
#include "../common/harness/results.hpp"
#include "../common/harness/options.hpp"
#include "../common/harness/telemetry.hpp"
#include "../common/harness/timing.hpp"
#include "../common/harness/trace_run.hpp"
#include "support.hpp"

using namespace gemm;

TEST_CASE("quantile interpolates between order statistics", "[cpu][bench]") {
  CHECK(quantile({}, 0.5) == 0);
  CHECK(quantile({3, 1, 2}, 0.5) == 2);
  CHECK(quantile({1, 2, 3, 4}, 0.5) == Approx(2.5));
  CHECK(quantile({1, 2, 3, 4, 5}, 0.25) == Approx(2));
  CHECK(quantile({10, 0}, 1.0) == 10);
}

TEST_CASE("paired ratios are per round, not a ratio of medians", "[cpu][bench]") {
  // The reference is slow in rounds 0-1 (a power dip) and fast in 2-4; the step follows the same
  // power state, so every per-round ratio is exactly 1.25, while the medians alone give 1.0.
  const Timing step = make_timing({2.0, 2.0, 1.6, 1.6, 1.6});
  const Timing ref = make_timing({2.5, 2.5, 2.0, 2.0, 2.0});
  const RatioStats r = paired_ratio(step, ref);
  CHECK(r.median == Approx(1.25));
  CHECK(r.q25 == Approx(1.25));
  CHECK(r.q75 == Approx(1.25));
  CHECK(step.median_ms == Approx(1.6));
  CHECK(ref.median_ms == Approx(2.0));
  // A step faster in alternate rounds shows a spread.
  const RatioStats s = paired_ratio(make_timing({1, 2, 1, 2}), make_timing({2, 2, 2, 2}));
  CHECK(s.min == Approx(1.0));
  CHECK(s.max == Approx(2.0));
  CHECK(s.median == Approx(1.5));
}

TEST_CASE("the NVML summary takes energy from counter updates and ignores idle", "[cpu][bench]") {
  // The counter refreshes every 100 ms (samples every 25 ms repeat the old value): 700 W.
  std::vector<TelemetrySample> s;
  for (int i = 0; i <= 40; ++i) {
    const double t = 0.025 * i;
    const unsigned long long e = 1000000 + 70000ULL * unsigned(i / 4);  // +70 J every 100 ms
    s.push_back({t, unsigned(1400 + i), 690.0, e, i == 3 ? 0x1ULL : 0x4ULL});
  }
  const TelemetrySummary w = summarize(s, 0.0, 1.0);
  CHECK(w.available);
  CHECK(w.samples == 41);
  CHECK(w.counter_watts() == Approx(700.0));
  CHECK(w.clock_min_mhz == 1400);
  CHECK(w.clock_max_mhz == 1440);
  CHECK(w.reasons == 0x4ULL);  // the idle bit of sample 3 is dropped
  // A window with a single counter update has no energy rate (rather than a wrong one).
  const TelemetrySummary short_w = summarize(s, 0.09, 0.16);
  CHECK(short_w.available);
  CHECK(short_w.counter_watts() == 0);
  // No samples: not available.
  CHECK_FALSE(summarize({}, 0, 1).available);
}

TEST_CASE("clock reasons are named", "[cpu][bench]") {
  CHECK(clock_reason_names(0) == "none");
  CHECK(clock_reason_names(0x4) == "sw_power_cap");
  CHECK(clock_reason_names(0x4 | 0x80) == "sw_power_cap+hw_power_brake");
}

TEST_CASE("speed of light per SM clock", "[cpu][bench]") {
  // 132 SMs x 4 tensor cores x 1024 dense bf16 FLOP per clock (the datasheet's 989 TFLOP/s at 1.83 GHz).
  CHECK(flop_per_clock(Dtype::bf16, 132) == 540672);
  CHECK(flop_per_clock(Dtype::bf16, 132) * 1.83e9 / 1e12 == Approx(989.4).epsilon(1e-3));
  CHECK(flop_per_clock(Dtype::fp32, 132) == 132 * 128 * 2);
}

TEST_CASE("benchmark flags are parsed and refused by name", "[cpu][bench]") {
  const Options d = parse_options_or_throw({});
  CHECK(d.refs == std::vector<std::string>{"cublas", "cublaslt", "cutlass"});
  CHECK(d.sustained_s == 0);
  const Options o = parse_options_or_throw({"--refs", "cublas,cutlass", "--sustained", "3", "--series", "s.csv"});
  CHECK(o.refs == std::vector<std::string>{"cublas", "cutlass"});
  CHECK(o.sustained_s == 3);
  CHECK_THROWS_AS(parse_options_or_throw({"--refs", "mkl"}), Error);
  CHECK_THROWS_WITH(parse_options_or_throw({"--series", "s.csv"}), Catch::Contains("--sustained"));
  CHECK_THROWS_AS(parse_options_or_throw({"--sustained", "-1"}), Error);
  CHECK_THROWS_AS(parse_options_or_throw({"--profile-once", "cutlass"}), Error);
  CHECK_THROWS_WITH(parse_options_or_throw({"--profile-once", "step", "--check-only"}), Catch::Contains("--profile-once"));
}

TEST_CASE("pipeline traces: opt-in, refused where not built, and the flag conflicts are named", "[cpu][bench][trace]") {
  // The test binary links the timed kernels, built without GEMM_TRACE: no traced kernel registered.
  CHECK_FALSE(gemm::trace::available());
  CHECK_THROWS_WITH(gemm::trace::run_traced([](cudaStream_t) {}, "/dev/null", 16, 4), Catch::Contains("make trace STEP=NN"));
  CHECK(std::string(gemm::trace::kind_name(gemm::trace::mma)) == "wgmma");
  CHECK(std::string(gemm::trace::kind_name(gemm::trace::consumer_wait)) == "wait full");
  CHECK(gemm::parse_options_or_throw({"--trace", "t.json"}).trace == "t.json");
  CHECK_THROWS_WITH(gemm::parse_options_or_throw({"--trace", "t.json", "--check-only"}), Catch::Contains("--trace runs the check itself"));
  CHECK_THROWS_WITH(gemm::parse_options_or_throw({"--trace", "t.json", "--profile-once", "step"}), Catch::Contains("--trace"));
}

/// tests/bench_faults.py's `cases` (bench.py with stand-in binaries, no GPU), its scratch directory
/// `scratch_name` beside the build's bin/: the script's output and exit status.
static gemm_test::CommandResult bench_faults(const std::string& cases, const std::string& scratch_name) {
  const std::filesystem::path repo = gemm_test::repo_dir();
  const std::filesystem::path scratch = gemm_test::binary_dir().parent_path() / scratch_name;
  return gemm_test::run_command("python3 '" + (repo / "tests/bench_faults.py").string() + "' --repo '" + repo.string() +
                                "' --scratch '" + scratch.string() + "' --cases " + cases);
}

TEST_CASE("bench.py under faults: signals, a full disk, a busy GPU, an out-of-memory shape, a kill in the commit; the twin shows the damage", "[cpu][bench][reliability]") {
  if (!gemm_test::have_repo("scripts/bench.py and tests/bench_faults.py")) return;
  const auto r = bench_faults("faults", "bench-faults-test");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("PASS twin: written in place, the same kill leaves a damaged file") &&
                           Catch::Contains(" passed, 0 failed"));
}

TEST_CASE("bench.py --shapes with stand-ins: its plan, a well-formed CSV, a REFUSED row, the random set (issue 46); plot_shapes.py and shapes_table.py on a synthetic CSV", "[cpu][bench][shapes]") {
  if (!gemm_test::have_repo("scripts/bench.py and tests/bench_faults.py")) return;
  const auto r = bench_faults("shapes", "bench-shapes-test");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("PASS --shapes with stand-ins writes a well-formed CSV") &&
                           Catch::Contains("PASS --shapes: a shape a step refuses (exit 2) is a REFUSED row") &&
                           Catch::Contains("PASS shapes_table.py on a small synthetic CSV") &&
                           Catch::Contains("PASS random_shapes: the committed seed's draw is reproducible") &&
                           Catch::Contains("PASS --shapes-set sweep runs no random shape") &&
                           Catch::Contains("PASS --shapes-set random with stand-ins: every random shape once, its rows "
                                           "tagged family=random") &&
                           Catch::Contains("PASS --resume refuses the rows of another --shapes-set") &&
                           Catch::Contains("PASS shapes_table.py on a synthetic CSV with random rows") &&
                           Catch::Contains("plot_shapes.py") && Catch::Contains(" passed, 0 failed"));
}

TEST_CASE("bench.py --shapes --random-seed with stand-ins: a held-out draw's rows (family random-S) beside seed 46's, its own block in shapes_table.py, a bad seed refused", "[cpu][bench][shapes]") {
  if (!gemm_test::have_repo("scripts/bench.py and tests/bench_faults.py")) return;
  const auto r = bench_faults("heldout", "bench-heldout-test");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("PASS random_family, random_seed_of, is_random_family name the draws") &&
                           Catch::Contains("PASS --random-seed 4701 --dry-run: the plan names the seed") &&
                           Catch::Contains("PASS --shapes-set random --random-seed 4701 with stand-ins: every shape of "
                                           "the draw once, its rows tagged family=random-4701") &&
                           Catch::Contains("PASS --resume refuses the rows of another --random-seed") &&
                           Catch::Contains("PASS shapes_table.py: a block naming seed 4701 apart from the sweep's summary") &&
                           Catch::Contains("PASS a bad --random-seed") && Catch::Contains("plot_shapes.py") &&
                           Catch::Contains(" passed, 0 failed"));
}
