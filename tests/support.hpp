// Shared by the test files: GPU skipping that the summary line counts.
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

namespace gemm_test {

/// True when a CUDA device is present. Otherwise records the current test case as skipped
/// (printing "skipped: no CUDA device") so the summary line counts it as skipped, not passed.
bool have_gpu();

/// Records the current test case as skipped with `why`.
void mark_skipped(const char* why);

/// The folder holding this test binary (BUILD/bin), where the step executables are too.
std::filesystem::path binary_dir();

/// The outcome of a shell command: exit status (-1 when it ended by a signal, i.e. crashed) and
/// its stdout and stderr together.
struct CommandResult {
  int status = -1;
  bool exited = false;  ///< false: killed by a signal, or popen failed
  std::string output;
};

/// Runs `command` through the shell with stderr merged into stdout and waits for it.
CommandResult run_command(const std::string& command);

/// True when device 0 has compute capability `cc` (e.g. 90); otherwise records the current test
/// case as skipped ("needs compute capability 9.0"). Call after have_gpu().
bool have_cc(int cc);

}  // namespace gemm_test

/// First line of every GPU test case.
#define REQUIRE_GPU_OR_SKIP()            \
  do {                                   \
    if (!gemm_test::have_gpu()) return;  \
  } while (0)

/// First line of every test case that runs sm_90a code (Hopper steps).
#define REQUIRE_HOPPER_OR_SKIP()                                   \
  do {                                                             \
    if (!gemm_test::have_gpu() || !gemm_test::have_cc(90)) return; \
  } while (0)
