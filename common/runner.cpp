#include "runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "device_info.hpp"
#include "reference.hpp"
#include "timing.hpp"

namespace gemm {

size_t step_workspace_bytes(const Step& step, int m, int n, int k) {
  return step.workspace_bytes ? step.workspace_bytes(m, n, k) : 0;
}

void reserve_workspace(const Step& step, ProblemBuffers& buffers) {
  const Problem& p = buffers.problem();
  buffers.reserve_workspace(step_workspace_bytes(step, p.m, p.n, p.k));
}

void launch_step(const Step& step, const ProblemBuffers& ws, cudaStream_t stream) {
  if (step.dtype == Dtype::fp32)
    step.fp32(ws.fp32_args(), stream);
  else
    step.bf16(ws.bf16_args(), stream);
}

void launch_cublas(const ProblemBuffers& ws, cudaStream_t stream) {
  if (ws.problem().dtype == Dtype::fp32)
    cublas_sgemm(ws.fp32_args(), stream);
  else
    cublas_bf16_gemm(ws.bf16_args(), stream);
}

std::optional<std::string> refusal(const Step& step, int m, int n, int k) {
  if (step.required_cc) {
    const DeviceInfo d = query_device();
    if (d.cc_major * 10 + d.cc_minor != step.required_cc)
      return fmt::format("step {} is built for compute capability {}.{} only (sm_{}a); this GPU ({}) is {}.{}",
                         step.id, step.required_cc / 10, step.required_cc % 10, step.required_cc,
                         d.name, d.cc_major, d.cc_minor);
  }
  return shape_refusal(step, m, n, k);
}

CheckReport check_step(const Step& step, ProblemBuffers& ws, Oracle oracle) {
  const Problem& p = ws.problem();
  if (auto why = refusal(step, p.m, p.n, p.k)) throw Error(*why);
  const std::vector<float> want = oracle == Oracle::cublas ? ws.cublas_reference() : ws.cpu_reference();
  reserve_workspace(step, ws);
  ws.reset_output(nullptr);
  launch_step(step, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return ws.check_against(want);
}

CheckReport check_step(const Step& step, const Problem& problem, Oracle oracle) {
  ProblemBuffers ws(problem);
  return check_step(step, ws, oracle);
}

// Appends `row` to the CSV at `path`, writing `header` first when the file is new or empty; refuses
// to mix schemas (a file whose first line is another header).
static void append_csv(const std::string& path, const std::string& header, const std::string& row) {
  bool fresh = true;
  {
    std::ifstream in(path);
    std::string first;
    fresh = !in.good() || !std::getline(in, first) || first.empty();
    if (!fresh && first != header)
      throw Error(fmt::format("{} has other columns than this harness writes; use a new --csv file", path));
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error(fmt::format("cannot open {} for writing", path));
  if (fresh) out << header << '\n';
  out << row << '\n';
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

static std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
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
    if (auto why = shape_refusal(step, o.m, o.n, o.k)) {  // needs no GPU
      fmt::print(stderr, "error: {} refuses M={} N={} K={}: {}\n", program, o.m, o.n, o.k, *why);
      return 2;
    }
    if (step.dtype == Dtype::bf16 && (o.alpha != 1.0f || o.beta != 0.0f)) {
      fmt::print(stderr, "error: {} computes C = A * B^T (bf16): --alpha and --beta apply to fp32 steps only\n", program);
      return 2;
    }
    if (!o.csv.empty() && !std::ofstream(o.csv, std::ios::app)) {  // before minutes of work, not after
      fmt::print(stderr, "error: {}: cannot open --csv {} for appending\n", program, o.csv);
      return 2;
    }
    if (cuda_device_count() == 0) {
      fmt::print(stderr, "error: {}: no CUDA device found (this step needs a GPU)\n", program);
      return 2;
    }
    const DeviceInfo dev = query_device();
    if (auto why = refusal(step, o.m, o.n, o.k)) {  // the GPU's compute capability
      fmt::print(stderr, "error: {} refuses M={} N={} K={}: {}\n", program, o.m, o.n, o.k, *why);
      return 2;
    }
    Problem p{step.dtype, o.m, o.n, o.k, o.alpha, o.beta, o.seed, o.exact};
    ProblemBuffers ws(p);
    reserve_workspace(step, ws);  // the step's scratch, allocated once, outside the timed region
    fmt::print("# {}\n", describe(dev));

    std::string check = "skipped";
    if (!o.no_check) {
      const CheckReport r = check_step(step, ws, Oracle::cublas);
      fmt::print("{} {} M={} N={} K={}{}: check against cuBLAS {}\n", program, dtype_name(step.dtype),
                 o.m, o.n, o.k, o.exact ? " (exact)" : "", r.summary());
      if (!r.passed) return 1;  // a failed step is never timed or reported
      check = o.exact ? "exact" : "pass";
    }
    if (o.check_only) return 0;

    auto run_step = [&](cudaStream_t s) { launch_step(step, ws, s); };
    auto run_ref = [&](cudaStream_t s) { launch_cublas(ws, s); };
    // With beta != 0 every repetition reads the C the previous one wrote: the work and the bytes
    // are those of one GEMM each time, only the values drift, and they are not checked again.
    ws.reset_output(nullptr);
    const Timing t = time_launch(run_step, o.warmup, o.reps);
    const Timing ref = time_launch(run_ref, o.warmup, o.reps);
    const double tf = tflops(o.m, o.n, o.k, t.median_ms), ref_tf = tflops(o.m, o.n, o.k, ref.median_ms);
    fmt::print("{:<24} {:<5} {:>6} {:>6} {:>6}  {:>9.3f} ms  {:>8.2f} TFLOP/s  cuBLAS {:>8.2f} TFLOP/s  {:>6.1f}%  {}\n",
               program, dtype_name(step.dtype), o.m, o.n, o.k, t.median_ms, tf, ref_tf,
               100.0 * tf / ref_tf, check);
    if (!o.csv.empty()) {
      append_csv(o.csv,
                 "step,name,technique,dtype,m,n,k,ms,tflops,cublas_ms,cublas_tflops,ratio,check,reps,"
                 "gpu,sm_count,l2_mib,max_sm_clock_mhz,driver_cuda,runtime,cublas,date",
                 fmt::format("{},{},\"{}\",{},{},{},{},{:.4f},{:.3f},{:.4f},{:.3f},{:.4f},{},{},\"{}\",{},{},{},{},{},{},{}",
                             step.id, step.name, step.technique, dtype_name(step.dtype), o.m, o.n,
                             o.k, t.median_ms, tf, ref.median_ms, ref_tf, tf / ref_tf, check, o.reps,
                             dev.name, dev.sm_count, dev.l2_bytes >> 20, dev.sm_clock_mhz,
                             dev.driver, dev.runtime, dev.cublas, today()));
    }
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}: {}\n", program, e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: {}: out of host memory for M={} N={} K={}\n", program, o.m, o.n, o.k);
    return 1;
  }
}

}  // namespace gemm
