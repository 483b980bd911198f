// Shared by the test files: GPU skipping that the summary line counts.
#pragma once
#include <catch2/catch.hpp>

namespace gemm_test {

/// True when a CUDA device is present. Otherwise records the current test case as skipped
/// (printing "skipped: no CUDA device") so the summary line counts it as skipped, not passed.
bool have_gpu();

/// Records the current test case as skipped with `why`.
void mark_skipped(const char* why);

}  // namespace gemm_test

/// First line of every GPU test case.
#define REQUIRE_GPU_OR_SKIP()            \
  do {                                   \
    if (!gemm_test::have_gpu()) return;  \
  } while (0)
