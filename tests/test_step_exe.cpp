// The step executables' contract, run as a user would: exit 0 on success, 2 on refused input
// (with a message naming the constraint), never a crash. Runs the binaries next to this test binary.
#include <catch2/catch.hpp>

#include <string>

#include "../common/harness/device_info.hpp"
#include "support.hpp"

namespace {

struct Outcome {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& step, const std::string& args) {
  const gemm_test::CommandResult r = gemm_test::run_command((gemm_test::binary_dir() / step).string() + " " + args);
  INFO(r.output);
  REQUIRE(r.exited);  // a signal (crash) fails here
  return {r.status, r.output};
}

}  // namespace

TEST_CASE("step executables refuse bad input with exit 2 and a message", "[cpu][exe]") {
  if (!gemm_test::have_executables({"01_naive", "02_gmem_coalescing", "03_smem_tiling"})) return;
  auto r = run("01_naive", "--bogus");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("bogus"));
  r = run("01_naive", "--m abc");
  CHECK(r.exit_code == 2);
  r = run("03_smem_tiling", "--k 0");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("not in range"));
  r = run("02_gmem_coalescing", "--m 3000000 --n 1 --k 1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("refuses M=3000000") && Catch::Contains("grid axis y"));
  r = run("01_naive", "--exact --alpha 0.3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--exact needs integer"));
  // Sizes are decimal: CLI11 alone would read 011 as octal 9 and 0x10 as 16; times are finite.
  for (const char* bad : {"--k 011", "--m 0x10", "--n -5", "--seed -1", "--seed 4294967296", "--reps 020"}) {
    r = run("01_naive", bad);
    INFO(bad << ": " << r.output);
    CHECK(r.exit_code == 2);
  }
  r = run("01_naive", "--k 011");
  CHECK_THAT(r.output, Catch::Contains("'011' is not a decimal integer"));
  r = run("01_naive", "--settle-s nan");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("not a finite number"));
}

TEST_CASE("step executables print usage with --help and exit 0", "[cpu][exe]") {
  if (!gemm_test::have_executables({"02_gmem_coalescing"})) return;
  auto r = run("02_gmem_coalescing", "--help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("--check-only") && Catch::Contains("--exact"));
}

TEST_CASE("a valid run checks, times and prints one result row; no GPU is a clean refusal", "[cpu][exe]") {
  if (!gemm_test::have_executables({"03_smem_tiling"})) return;
  const auto r = run("03_smem_tiling", "--m 200 --n 100 --k 50 --beta 1 --reps 20");
  if (gemm::cuda_device_count() == 0) {
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("no CUDA device"));
  } else {
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("PASS") && Catch::Contains("TFLOP/s") && Catch::Contains("cuBLAS"));
  }
}
