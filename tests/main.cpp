// Catch2 (v2, header-only) runner with a listener that ends the run with the plain summary line
// "N passed, N failed, N skipped" counted over test cases. A test case that called mark_skipped()
// (GPU tests on a machine without a GPU) counts as skipped, not passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "../common/harness/device_info.hpp"
#include "support.hpp"

namespace {

std::set<std::string> failed_cases;

std::set<std::string>& skipped_cases() {
  static std::set<std::string> s;
  return s;
}
std::string current_case;
Catch::Counts case_counts;  // filled when the run ends, printed after Catch's own report
// Every test case runs under a watchdog (kTestCaseLimit), so a GPU check that deadlocks anywhere ends
// the run with a message naming the test case instead of hanging it; expect_pass and guarded_check
// add one per check that names the check.
std::unique_ptr<gemm_test::Watchdog> case_watchdog;

struct SummaryListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    current_case = info.name;
    case_watchdog = std::make_unique<gemm_test::Watchdog>("test case '" + info.name + "'", gemm_test::kTestCaseLimit);
  }
  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    case_watchdog.reset();
    if (stats.totals.assertions.failed > 0) failed_cases.insert(stats.testInfo.name);
  }
  void testRunEnded(Catch::TestRunStats const& stats) override { case_counts = stats.totals.testCases; }
};
CATCH_REGISTER_LISTENER(SummaryListener)

}  // namespace

namespace gemm_test {

void mark_skipped(const char* why) {
  if (skipped_cases().insert(current_case).second) std::printf("skipped: %s (%s)\n", why, current_case.c_str());
}

bool have_gpu() {
  static const bool present = gemm::cuda_device_count() > 0;
  if (!present) mark_skipped("no CUDA device");
  return present;
}

std::filesystem::path binary_dir() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  const std::filesystem::path exe = n > 0 ? std::filesystem::path(std::string(buf.data(), size_t(n)))
                                          : std::filesystem::path("build/bin/tests");
  return exe.parent_path();
}

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> chunk{};
  while (fgets(chunk.data(), int(chunk.size()), pipe)) r.output += chunk.data();
  const int st = pclose(pipe);
  r.exited = WIFEXITED(st);
  r.status = r.exited ? WEXITSTATUS(st) : -1;
  return r;
}

bool have_cc(int cc) {
  const gemm::DeviceInfo d = gemm::query_device();
  if (d.cc_major * 10 + d.cc_minor == cc) return true;
  const std::string why = "needs compute capability " + std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  mark_skipped(why.c_str());
  return false;
}

}  // namespace gemm_test

int main(int argc, char* argv[]) {
  const int status = Catch::Session().run(argc, argv);
  size_t skipped = 0;  // a case that skipped part of itself but failed elsewhere counts as failed
  for (const std::string& name : skipped_cases()) skipped += failed_cases.count(name) ? 0 : 1;
  const size_t passed = case_counts.passed >= skipped ? case_counts.passed - skipped : 0;
  std::printf("%zu passed, %zu failed, %zu skipped\n", passed,
              size_t(case_counts.failed + case_counts.failedButOk), skipped);
  return status;
}
