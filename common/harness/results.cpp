#include "results.hpp"

#include <fmt/format.h>

#include <ctime>
#include <fstream>

#include "../kernel_lib/check.hpp"
#include "telemetry.hpp"

namespace gemm {

double flop_per_clock(Dtype dtype, int sm_count) {
  return double(sm_count) * (dtype == Dtype::fp8 ? 8192 : dtype == Dtype::bf16 ? 4096 : 256);
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

namespace {

constexpr const char* kCsvHeader =
    "step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
    "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
    "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date,rel_rms_err,"
    "scaling,accumulation";

// A number for a table or CSV cell, or "" when it is unknown (0).
std::string num(double v, int digits) { return v > 0 ? fmt::format("{:.{}f}", v, digits) : ""; }

// The row's derived numbers.
struct Derived {
  double tflops, sol, tflop_per_j;
};
Derived derive(const RunInfo& run, const Row& r) {
  const Problem& p = run.problem;
  const double tf = tflops(p.m, p.n, p.k, r.t.median_ms);
  const double fpc = flop_per_clock(p.dtype, run.device.sm_count);
  const double gflop = 2e-9 * double(p.m) * p.n * p.k;
  return {tf, r.clock_mhz > 0 ? tf / (fpc * r.clock_mhz * 1e-6) : 0, r.joules > 0 ? gflop * 1e-3 / r.joules : 0};
}

}  // namespace

void print_table(const RunInfo& run, const std::vector<Row>& rows) {
  fmt::print("{:<10} {:<34} {:>9} {:>9} {:>19} {:>8} {:>6} {:>7} {:>7}  {}\n", "mode", "kernel", "ms", "TFLOP/s",
             "step/kernel [IQR]", "SM MHz", "SoL%", "W", "TFLOP/J", "");
  for (const Row& r : rows) {
    const Derived d = derive(run, r);
    const std::string ratio =
        r.mode == "burst" ? fmt::format("{:.3f} [{:.3f},{:.3f}]", r.ratio.median, r.ratio.q25, r.ratio.q75)
                          : fmt::format("{:.3f} (unpaired)", r.ratio.median);
    fmt::print("{:<10} {:<34} {:>9.4f} {:>9.2f} {:>19} {:>8.0f} {:>6} {:>7} {:>7}  {}\n", r.mode,
               r.kernel == "step" ? run.program : r.kernel, r.t.median_ms, d.tflops, ratio, r.clock_mhz,
               num(100 * d.sol, 1), num(r.power_w, 0), num(d.tflop_per_j, 3), r.detail == run.program ? "" : r.detail);
  }
}

namespace {
const Row* burst_row(const std::vector<Row>& rows, const char* kernel) {
  for (const Row& r : rows)
    if (r.mode == "burst" && r.kernel == kernel) return &r;
  return nullptr;
}
}  // namespace

const Row* fp8_ratio_reference(const std::vector<Row>& rows) {
  const Row* r = burst_row(rows, kLtBest);
  return r ? r : burst_row(rows, kLtStandIn);
}

void print_summary_line(const RunInfo& run, const std::vector<Row>& rows) {
  const Problem& p = run.problem;
  const bool fp8 = p.dtype == Dtype::fp8;
  const Row* r = fp8 ? fp8_ratio_reference(rows) : burst_row(rows, "cublas");
  if (!r) return;
  const bool stand_in = r->kernel == kLtStandIn;
  std::string tail;
  if (fp8) {
    if (stand_in) tail += "  (against cuBLASLt per-tensor, default accumulation: no block-scaled algorithm here)";
    if (const Row* f = burst_row(rows, kLtFast))
      tail += fmt::format("  fast-accum {:.2f} TFLOP/s ratio {:.3f} [IQR {:.3f}-{:.3f}]", tflops(p.m, p.n, p.k, f->t.median_ms),
                          f->ratio.median, f->ratio.q25, f->ratio.q75);
    if (rows[0].rel_rms_err >= 0)
      tail += stand_in ? fmt::format("  rel RMS err {:.3g} (the stand-in is not checked: another product)", rows[0].rel_rms_err)
                       : fmt::format("  rel RMS err {:.3g} (cuBLASLt {:.3g})", rows[0].rel_rms_err, r->rel_rms_err);
  }
  fmt::print("{:<24} {:<5} {:>6} {:>6} {:>6}  {:>9.4f} ms  {:>8.2f} TFLOP/s  {} {:>8.2f} TFLOP/s  paired "
             "ratio {:.3f} [IQR {:.3f}-{:.3f}]{}  {}\n",
             run.program, dtype_name(run.step.dtype), p.m, p.n, p.k, rows[0].t.median_ms,
             tflops(p.m, p.n, p.k, rows[0].t.median_ms),
             !fp8 ? "cuBLAS" : stand_in ? "cuBLASLt per-tensor stand-in" : "cuBLASLt", tflops(p.m, p.n, p.k, r->t.median_ms),
             r->ratio.median, r->ratio.q25, r->ratio.q75, tail, run.check);
}

Fp8Columns fp8_columns(const Step& step, Dtype dtype, Scaling scaling, const std::string& kernel) {
  if (dtype != Dtype::fp8) return {};
  if (kernel == "step") return {scaling_name(step.scaling), accumulation_name(step.accumulation)};
  if (kernel == kLtBest) return {scaling_name(scaling), "default"};
  if (kernel == kLtFast) return {"per_tensor", "fast"};
  if (kernel == kLtStandIn) return {"per_tensor", "default"};
  throw Error(fmt::format("no scaling and accumulation known for the fp8 kernel '{}' (results.hpp, fp8_columns)", kernel));
}

const char* csv_header() { return kCsvHeader; }

void append_csv_rows(const std::string& path, const RunInfo& run, const std::vector<Row>& rows) {
  std::vector<Fp8Columns> fp8;  // first: a kernel without columns throws before the file is touched
  for (const Row& r : rows) fp8.push_back(fp8_columns(run.step, run.problem.dtype, run.problem.scaling, r.kernel));
  bool fresh = true;
  {
    std::ifstream in(path);
    std::string first;
    fresh = !in.good() || !std::getline(in, first) || first.empty();
    if (!fresh && first != kCsvHeader)
      throw Error(fmt::format("{} has other columns than this harness writes (a file from before the scaling and "
                              "accumulation columns: `python3 scripts/results_columns.py migrate {}` brings it to "
                              "them); or use a new --csv file",
                              path, path));
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error(fmt::format("cannot open {} for writing", path));
  if (fresh) out << kCsvHeader << '\n';
  const Step& step = run.step;
  const Problem& p = run.problem;
  const DeviceInfo& dev = run.device;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Derived d = derive(run, r);
    out << fmt::format("{},{},\"{}\",{},{},{},{},{},{},\"{}\",{:.5f},{:.5f},{:.5f},{:.3f},{:.4f},{},{},{},{:.0f},{},"
                       "{},{},{},{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{}",
                       step.id, step.name, step.technique, dtype_name(step.dtype), p.m, p.n, p.k, r.mode, r.kernel,
                       r.detail, r.t.median_ms, r.t.min_ms, r.t.max_ms, d.tflops, r.ratio.median,
                       r.mode == "burst" ? num(r.ratio.q25, 4) : "", r.mode == "burst" ? num(r.ratio.q75, 4) : "",
                       r.rounds, r.clock_mhz, r.clock_source, num(r.power_w, 1), num(r.joules, 5),
                       num(d.tflop_per_j, 4), num(d.sol, 4), r.reasons, run.check, dev.name, dev.sm_count,
                       dev.l2_bytes >> 20, dev.sm_clock_mhz, num(Nvml::get().power_limit_w(), 0), dev.driver,
                       dev.runtime, dev.cublas, today(), r.rel_rms_err >= 0 ? fmt::format("{:.4g}", r.rel_rms_err) : "",
                       fp8[i].scaling, fp8[i].accumulation)
        << '\n';
  }
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

}  // namespace gemm
