// What a step executable does, as functions the tests and the fuzzer call too.
#pragma once
#include <string>

#include "../kernel_lib/registry.hpp"
#include "compare.hpp"
#include "problem.hpp"

namespace gemm {

/// What a check compares with. cublas: the dtype's reference (ProblemBuffers::reference()): cuBLAS for
/// fp32 and bf16, the fp64 GPU oracle of the dequantized product for fp8 (cuBLAS has no FP8 GEMM, and
/// cuBLASLt's is itself a reference checked against the oracle); a bf16 C that fails against cuBLAS is
/// judged by the fp64 GPU oracle (ProblemBuffers::check_against_reference, compare.hpp's
/// judge_reference). cpu_fp64: the fp64 CPU loop (small shapes).
enum class Oracle { cublas, cpu_fp64 };

/// Checks `step` on the buffers: refuses (gemm::Error carrying refusal()'s reason, for this device)
/// a shape or GPU the step does not support, then reserves the step workspace, fills C with NaN (or
/// C0), runs the step once and compares C with the oracle. Throws gemm::Error on a refusal or a CUDA
/// failure; a wrong answer is a CheckReport with passed == false.
CheckReport check_step(const Step& step, const Problem& problem, Oracle oracle = Oracle::cublas);
CheckReport check_step(const Step& step, ProblemBuffers& buffers, Oracle oracle = Oracle::cublas);

/// The whole run of one step executable: parse, refuse, check, time, print, append CSV.
/// Exit codes: 0 success; 1 wrong answer or CUDA failure; 2 refused input (bad flag, unsupported
/// shape, wrong GPU, no GPU).
int step_main(int argc, const char* const* argv);

}  // namespace gemm
