#include "runner.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <optional>

#include "../kernel_lib/check.hpp"
#include "device_info.hpp"
#include "measure.hpp"
#include "trace_run.hpp"

namespace gemm {

namespace {

// check_step once the run was admitted (refusal() said nothing).
CheckReport run_check(const Step& step, ProblemBuffers& buffers, Oracle oracle) {
  const std::vector<float> want = oracle == Oracle::cublas ? buffers.reference() : buffers.cpu_reference();
  reserve_workspace(step, buffers);
  buffers.reset_output(nullptr);
  launch_step(step, buffers, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return oracle == Oracle::cublas ? buffers.check_against_reference(want) : buffers.check_against(want);
}

}  // namespace

CheckReport check_step(const Step& step, ProblemBuffers& buffers, Oracle oracle) {
  const Problem& p = buffers.problem();
  const Gpu gpu = gpu_of(query_device());
  if (auto why = refusal(step, p.m, p.n, p.k, &gpu)) throw Error(*why);
  return run_check(step, buffers, oracle);
}

CheckReport check_step(const Step& step, const Problem& problem, Oracle oracle) {
  ProblemBuffers buffers(problem);
  return check_step(step, buffers, oracle);
}

int step_main(int argc, const char* const* argv) {
  const std::vector<Step> steps = registered_steps();
  if (steps.size() != 1) {
    fmt::print(stderr, "error: a step executable must link exactly one step ({} linked)\n", steps.size());
    return 2;
  }
  const Step& step = steps.front();
  const std::string program = fmt::format("{}_{}", step.id, step.name);
  int exit_code = -1;
  const Options o = parse_options(argc, argv, program, exit_code);
  if (exit_code >= 0) return exit_code;

  try {
    // The one refusal (registry.hpp): the shape always, the compute capability when there is a GPU.
    std::optional<DeviceInfo> dev;
    if (cuda_device_count() > 0) dev = query_device();
    const Gpu gpu = dev ? gpu_of(*dev) : Gpu{};
    if (auto why = refusal(step, o.m, o.n, o.k, dev ? &gpu : nullptr)) {
      fmt::print(stderr, "error: {} refuses M={} N={} K={}: {}\n", program, o.m, o.n, o.k, *why);
      return 2;
    }
    if (step.dtype != Dtype::fp32 && (o.alpha != 1.0f || o.beta != 0.0f)) {
      fmt::print(stderr, "error: {} computes C = A * B^T ({}): --alpha and --beta apply to fp32 steps only\n", program,
                 dtype_name(step.dtype));
      return 2;
    }
    if (o.dist != "normal" && step.dtype != Dtype::fp8) {
      fmt::print(stderr, "error: {} refuses --dist {}: it shapes the inputs an fp8 step quantizes ({} steps take N(0, 1))\n",
                 program, o.dist, dtype_name(step.dtype));
      return 2;
    }
    if (step.dtype == Dtype::fp8 && o.exact && o.k > kMaxExactKFp8) {
      fmt::print(stderr, "error: {} refuses --exact with K={}: fp8 exact mode needs K <= {} (every partial sum exact "
                 "in the FP8 tensor cores' ~14-bit accumulator; common/harness/fp8.hpp)\n", program, o.k, kMaxExactKFp8);
      return 2;
    }
    if (o.profile_once == "cublas" && step.dtype == Dtype::fp8) {  // before the check, not after it
      fmt::print(stderr, "error: {}: --profile-once cublas: cuBLAS has no FP8 GEMM; --profile-once cublaslt profiles "
                 "cuBLASLt FP8 with this step's scaling ({}), as scripts/profile.py does\n", program,
                 scaling_name(step.scaling));
      return 2;
    }
    if (!o.csv.empty() && !std::ofstream(o.csv, std::ios::app)) {  // before minutes of work, not after
      fmt::print(stderr, "error: {}: cannot open --csv {} for appending\n", program, o.csv);
      return 2;
    }
    if (!o.trace.empty() && !trace::available()) {
      fmt::print(stderr, "error: {}: --trace needs the traced build of this step: make trace STEP={}\n", program, step.id);
      return 2;
    }
    if (!dev) {
      fmt::print(stderr, "error: {}: no CUDA device found (this step needs a GPU)\n", program);
      return 2;
    }
    Problem p{step.dtype, o.m, o.n, o.k, o.alpha, o.beta, o.seed, o.exact, step.scaling};
    p.dist = o.dist == "llm" ? Dist::llm : Dist::normal;
    ProblemBuffers ws(p);
    reserve_workspace(step, ws);  // the step's scratch, allocated once, outside the timed region
    fmt::print("# {}\n", describe(*dev));

    std::string check = "skipped";
    if (!o.no_check) {
      const CheckReport r = run_check(step, ws, Oracle::cublas);
      fmt::print("{} {} M={} N={} K={}{}: check against {} {}\n", program, dtype_name(step.dtype), o.m, o.n, o.k,
                 o.exact ? " (exact)" : "", step.dtype == Dtype::fp8 ? "the fp64 oracle" : "cuBLAS", r.summary());
      if (!r.passed) return 1;  // a failed step is never timed or reported
      if (ws.has_unquantized())  // the step's C is still there: its error against the real product
        fmt::print("{}: relative RMS error against the fp64 product of the unquantized inputs ({} inputs): {:.3g} "
                   "(quantization and arithmetic; against the dequantized oracle: {:.3g})\n", program, dist_name(p.dist),
                   ws.check_against(ws.unquantized_product()).rel_rms_err, r.rel_rms_err);
      check = o.exact ? "exact" : r.check_column();
    }
    if (o.check_only) return 0;

    if (!o.trace.empty()) {
      trace_once(step, ws, o.trace);
      return 0;
    }
    if (!o.profile_once.empty()) {
      profile_once(step, ws, o.profile_once);
      return 0;
    }
    // With beta != 0 every repetition reads the C the previous one wrote: the work and the bytes
    // are those of one GEMM each time, only the values drift, and they are not checked again.
    ws.reset_output(nullptr);
    return measure_step(step, ws, o, *dev, program, check);
  } catch (const OutOfMemory& e) {  // a shape too large for this GPU is refused input, not a failure
    fmt::print(stderr, "error: {} refuses M={} N={} K={}: {}\n", program, o.m, o.n, o.k, e.what());
    return 2;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}: {}\n", program, e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: {}: out of host memory for M={} N={} K={}\n", program, o.m, o.n, o.k);
    return 1;
  }
}

}  // namespace gemm
