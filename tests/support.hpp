// Shared by the test files: GPU skipping that the summary line counts, the watchdog that guards every
// GPU check, the shape suites and the one-check helper.
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../common/kernel_lib/registry.hpp"
#include "../common/harness/runner.hpp"
#include "../common/harness/watchdog.hpp"

namespace gemm_test {

/// The watchdog of common/harness/watchdog.hpp (also used by build/bin/fuzz).
using Watchdog = gemm::Watchdog;

/// Limit of one GPU check (expect_pass, guarded_check); the first also pays for cuBLAS start-up.
constexpr std::chrono::seconds kGpuCheckLimit{120};
/// Limit of one whole test case: main.cpp's listener runs every test case under a watchdog of this
/// limit, so no GPU check of any file can hang the run. The longest case is the CPU's `sass html`
/// over every step (steps 29 and 39 each disassemble the menu's 50 kernels): past 900 s on CI's
/// machine once step 39 came (2026-12-07), so the limit is 1800 s.
constexpr std::chrono::seconds kTestCaseLimit{1800};

/// One shape of a suite, with what it exercises.
struct Shape {
  int m, n, k;
  std::string what;
};

/// The shape suite every step runs (test_gpu.cpp): square, ragged primes, the six orderings of three
/// distinct sizes (odd, and multiples of 8 that are ragged against every tile), degenerate
/// M / N / K = 1, K smaller than every tile, a single small tile.
std::vector<Shape> generic_shape_suite();

/// The shape suite built around one step's tile (its registry metadata): one tile, less than one,
/// K == BK, ragged M and N, N = 8 mod 16, odd N, and K tails against the ring of `stages` buffers
/// (one tile short of a full ring, a ring exactly, one K tile past it, two rings and a tail).
/// M, N >= 1 and K a multiple of 8 in every shape (the TMA steps' constraint).
std::vector<Shape> tile_shape_suite(const gemm::Tile& t);

/// "step 11 M=.. N=.. K=.. seed=.. [exact] (what)": the name of one check in messages.
std::string describe(const gemm::Step& step, const gemm::Problem& p, const std::string& what);

/// check_step under a watchdog of kGpuCheckLimit naming the check. Throws what check_step throws.
gemm::CheckReport guarded_check(const gemm::Step& step, const gemm::Problem& p,
                                gemm::Oracle oracle = gemm::Oracle::cublas, const std::string& what = "");

/// Runs one guarded check and reports it as a Catch assertion with the harness's summary. A shape the
/// step refuses is not run: returns false (and, when `refusal_fails`, fails the test naming the
/// reason); callers that skip refused shapes require a minimum number of checks per step instead.
bool expect_pass(const gemm::Step& step, const gemm::Problem& p, gemm::Oracle oracle,
                 const std::string& what = "", bool refusal_fails = false);

/// `step` on `p` ten times: the first checked against ws.reference(), the other nine the same bits.
void expect_same_bits_ten_times(const gemm::Step& step, const gemm::Problem& p, const std::string& what);

/// The registered steps this GPU can run (Hopper steps need compute capability 9.0), fixtures excluded.
std::vector<gemm::Step> runnable_steps();

/// True when a CUDA device is present. Otherwise records the current test case as skipped
/// (printing "skipped: no CUDA device") so the summary line counts it as skipped, not passed.
bool have_gpu();

/// Records the current test case as skipped with `why`.
void mark_skipped(const char* why);

/// The folder holding this test binary (BUILD/bin), where the step executables are too.
std::filesystem::path binary_dir();

/// The repository this suite belongs to: the current directory when it holds the Makefile, kernels/
/// and scripts/ (as under `make test`), else the folder above this binary's build folder
/// (BUILD/bin/../..) when that does; empty when neither (the binary was copied elsewhere, as it is to
/// the GPU machine).
std::filesystem::path repo_dir();
/// True when repo_dir() found the repository; otherwise records the current test case as skipped:
/// "no repository next to this binary (it needs `what`)", so the summary counts it as skipped.
bool have_repo(const std::string& what);
/// True when every executable in `names` sits next to this binary. When one is missing: under the
/// repository (a build that should have made it) the test fails naming it; elsewhere (the test binary
/// copied alone) the test case is recorded as skipped with the reason.
bool have_executables(const std::vector<std::string>& names);

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
