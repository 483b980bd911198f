// The step executables' contract, run as a user would: exit 0 on success, 2 on refused input
// (with a message naming the constraint), never a crash. Runs the binaries next to this test binary.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "../common/device_info.hpp"

namespace {

std::string bin_dir() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  REQUIRE(n > 0);
  std::string path(buf.data(), size_t(n));
  return path.substr(0, path.rfind('/'));
}

struct Outcome {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& step, const std::string& args) {
  const std::string cmd = bin_dir() + "/" + step + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 512> chunk{};
  while (fgets(chunk.data(), int(chunk.size()), p)) out += chunk.data();
  const int status = pclose(p);
  REQUIRE(WIFEXITED(status));  // a signal (crash) fails here
  return {WEXITSTATUS(status), out};
}

}  // namespace

TEST_CASE("step executables refuse bad input with exit 2 and a message", "[cpu][exe]") {
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
}

TEST_CASE("step executables print usage with --help and exit 0", "[cpu][exe]") {
  auto r = run("02_gmem_coalescing", "--help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("--check-only") && Catch::Contains("--exact"));
}

TEST_CASE("a valid run checks, times and prints one result row; no GPU is a clean refusal", "[cpu][exe]") {
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
