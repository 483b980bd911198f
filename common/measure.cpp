#include "measure.hpp"
#include "trace.hpp"

#include <cuda_profiler_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <memory>

#include "cublaslt.hpp"
#include "cutlass_ref.hpp"
#include "launch.hpp"
#include "runner.hpp"
#include "telemetry.hpp"
#include "timing.hpp"

namespace gemm {

double flop_per_clock(Dtype dtype, int sm_count) { return double(sm_count) * (dtype == Dtype::bf16 ? 4096 : 256); }

namespace {

// Appends `row` to the CSV at `path`, writing `header` first when the file is new or empty; refuses
// to mix schemas (a file whose first line is another header).
void append_csv(const std::string& path, const std::string& header, const std::string& row) {
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

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

bool wants(const Options& o, const char* ref) { return std::find(o.refs.begin(), o.refs.end(), ref) != o.refs.end(); }

// A number for a table or CSV cell, or "" when it is unknown (0).
std::string num(double v, int digits) { return v > 0 ? fmt::format("{:.{}f}", v, digits) : ""; }

constexpr const char* kCsvHeader =
    "step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
    "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
    "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date";

// One row of the table and the CSV.
struct Row {
  std::string mode, kernel, detail;
  Timing t;
  RatioStats ratio;  // step over this kernel; median 0 when not paired
  double clock_mhz = 0;
  std::string clock_source;
  double power_w = 0, joules = 0;
  std::string reasons;
  int rounds = 0;
  Row(std::string m, std::string k, std::string d, Timing timing)
      : mode(std::move(m)), kernel(std::move(k)), detail(std::move(d)), t(std::move(timing)) {}
};

}  // namespace

void profile_once(const Step& step, ProblemBuffers& ws, const std::string& what) {
  const Launch launch = what == "step" ? Launch([&](cudaStream_t s) { launch_step(step, ws, s); })
                                       : Launch([&](cudaStream_t s) { launch_cublas(ws, s); });
  for (int i = 0; i < 3; ++i) launch(nullptr);  // warm: module load, cuBLAS heuristics
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaProfilerStart());
  launch(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaProfilerStop());
}

void trace_once(const Step& step, ProblemBuffers& ws, const std::string& path) {
  for (int i = 0; i < 2; ++i) launch_step(step, ws, nullptr);  // warm: module load
  CUDA_CHECK(cudaDeviceSynchronize());
  // A slot for every block of the step's grid and a place for every K tile it runs (tile from the
  // registry). One block per tile, one tile of K tiles each; a persistent step has at most one block per
  // SM, and its blocks number K tiles across their tiles: ceil(tiles / blocks) tiles each, plus two for
  // a stream-K range that may cross two tile boundaries.
  const Problem& p = ws.problem();
  const int64_t bm = std::max(step.tile.bm, 1), bn = std::max(step.tile.bn, 1), bk = std::max(step.tile.bk, 1);
  const int64_t tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn), k_tiles = (p.k + bk - 1) / bk;
  int64_t blocks = tiles, tiles_per_block = 1;
  if (step.persistent) {
    blocks = sm_count();  // stream-K (step 21) may run more blocks than tiles, never more than SMs
    tiles_per_block = (tiles + blocks - 1) / blocks + 2;
  }
  const trace::Summary s = trace::run_traced([&](cudaStream_t st) { launch_step(step, ws, st); }, path,
                                             unsigned(blocks), unsigned(tiles_per_block * k_tiles));
  fmt::print("trace: {} intervals of the blocks on SMs 0-{} over {:.1f} us written to {}\n", s.recorded,
             trace::kTracedSMs - 1, s.span_us, path);
}

int measure_step(const Step& step, ProblemBuffers& ws, const Options& o, const DeviceInfo& dev,
                 const std::string& program, const std::string& check) {
  const Problem& p = ws.problem();
  const Fp32Gemm f32 = ws.fp32_args();
  const Bf16Gemm b16 = ws.bf16_args();
  const void* a = p.dtype == Dtype::fp32 ? static_cast<const void*>(f32.a) : static_cast<const void*>(b16.a);
  const void* b = p.dtype == Dtype::fp32 ? static_cast<const void*>(f32.b) : static_cast<const void*>(b16.b);
  void* c = p.dtype == Dtype::fp32 ? static_cast<void*>(f32.c) : static_cast<void*>(b16.c);
  int exit_code = 0;

  std::vector<Contender> contenders{{"step", fmt::format("{}", program), [&](cudaStream_t s) { launch_step(step, ws, s); }}};
  std::vector<Contender> refs;
  if (wants(o, "cublas")) refs.push_back({"cublas", "default heuristic", [&](cudaStream_t s) { launch_cublas(ws, s); }});

  std::unique_ptr<LtGemm> lt;
  if (wants(o, "cublaslt")) {
    lt = std::make_unique<LtGemm>(p.dtype, p.m, p.n, p.k, p.alpha, p.beta, o.lt_algos);
    std::vector<Contender> algos;
    for (int i = 0; i < lt->count(); ++i)
      algos.push_back({lt->describe(i), "", [&, i](cudaStream_t s) { lt->run(i, a, b, c, s); }});
    // Choose with a short paired run of the candidates (each after the same flush), keep the fastest.
    const PairedTiming sel = time_paired(algos, 1, 0, 10, nullptr);
    int best = 0;
    for (int i = 1; i < int(algos.size()); ++i)
      if (sel.timing[i].median_ms < sel.timing[best].median_ms) best = i;
    fmt::print("cuBLASLt: {} algorithms tried, fastest {} ({:.2f} TFLOP/s in the selection run)\n", algos.size(),
               algos[best].name, tflops(p.m, p.n, p.k, sel.timing[best].median_ms));
    refs.push_back({"cublaslt_best", algos[best].name, [&, best](cudaStream_t s) { lt->run(best, a, b, c, s); }});
  }

  std::vector<DeviceBuffer<char>> cutlass_ws;
  if (wants(o, "cutlass") && p.dtype == Dtype::bf16) {
    if (cutlass_ref::config_count() == 0) fmt::print("CUTLASS: not built into this binary (no CUTLASS headers at build time)\n");
    cutlass_ws.reserve(cutlass_ref::config_count());
    for (int i = 0; i < cutlass_ref::config_count(); ++i) {
      if (auto why = cutlass_ref::refusal(i, b16)) {
        fmt::print("CUTLASS {}: not run: {}\n", cutlass_ref::config_name(i), *why);
        continue;
      }
      cutlass_ws.emplace_back(cutlass_ref::workspace_bytes(i, b16));
      void* w = cutlass_ws.back().get();
      refs.push_back({cutlass_ref::config_name(i), "CUTLASS 4.2 headers",
                      [&, i, w](cudaStream_t s) { cutlass_ref::run(i, b16, w, s); }});
    }
  }

  // Every reference must compute the same C as cuBLAS (within the step's tolerance) before it is timed.
  if (refs.size() > (wants(o, "cublas") ? 1u : 0u)) {
    const std::vector<float> want = ws.cublas_reference();
    for (auto it = refs.begin(); it != refs.end();) {
      if (it->name == "cublas") {
        ++it;
        continue;
      }
      ws.reset_output(nullptr);
      it->launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const CheckReport r = ws.check_against(want);
      if (!r.passed) {
        fmt::print(stderr, "error: reference {} failed its check against cuBLAS and is not timed: {}\n", it->name,
                   r.summary());
        exit_code = 1;
        it = refs.erase(it);
      } else {
        ++it;
      }
    }
    ws.reset_output(nullptr);
  }
  contenders.insert(contenders.end(), refs.begin(), refs.end());

  // Paired burst timing, NVML polled meanwhile.
  Sampler sampler;
  const PairedTiming pt = time_paired(contenders, o.warmup, o.settle_s, o.reps, &sampler);
  const std::string loop_reasons = pt.nvml.available ? clock_reason_names(pt.nvml.reasons) : "";
  std::vector<Row> rows;
  for (size_t i = 0; i < contenders.size(); ++i) {
    Row r("burst", contenders[i].name, contenders[i].detail, pt.timing[i]);
    r.ratio = i == 0 ? RatioStats{1, 1, 1, 1, 1} : paired_ratio(pt.timing[0], pt.timing[i]);
    r.clock_mhz = quantile(pt.clock_mhz[i], 0.5);
    r.clock_source = "probe";
    r.reasons = loop_reasons;
    r.rounds = o.reps;
    rows.push_back(r);
  }
  // Energy per GEMM: a back-to-back block of each kernel (the paired loop mixes kernels, and NVML's
  // energy counter, refreshed about every 100 ms, cannot tell them apart).
  if (o.energy_s > 0 && Nvml::get().available())
    for (size_t i = 0; i < contenders.size(); ++i) {
      const Sustained e = time_sustained(contenders[i].launch, o.energy_s, 0, sampler);
      rows[i].power_w = e.nvml.counter_watts();
      rows[i].joules = e.joules_per_gemm;
    }
  // Sustained: each kernel alone for o.sustained_s seconds; the second half is the settled state.
  std::vector<Sustained> sustained;
  if (o.sustained_s > 0) {
    for (size_t i = 0; i < contenders.size(); ++i) {
      sustained.push_back(time_sustained(contenders[i].launch, o.sustained_s, o.sustained_s / 2, sampler));
      const Sustained& s = sustained.back();
      Row r("sustained", contenders[i].name, contenders[i].detail, make_timing({s.ms_per_gemm}));
      r.clock_mhz = s.nvml.clock_mean_mhz;
      r.clock_source = "nvml";
      r.power_w = s.nvml.counter_watts();
      r.joules = s.joules_per_gemm;
      r.reasons = s.nvml.available ? clock_reason_names(s.nvml.reasons) : "";
      r.rounds = s.launches;
      rows.push_back(r);
    }
    const double step_ms = sustained[0].ms_per_gemm;
    for (size_t i = 0; i < sustained.size(); ++i) {
      Row& r = rows[contenders.size() + i];
      const double v = step_ms > 0 ? sustained[i].ms_per_gemm / step_ms : 0;
      r.ratio = {v, 0, 0, 0, 0};  // two separate runs, not paired: no spread
    }
    if (!o.series.empty()) {
      std::ofstream out(o.series, std::ios::app);
      if (!out) throw Error(fmt::format("cannot open --series {} for writing", o.series));
      out.seekp(0, std::ios::end);
      if (out.tellp() == 0) out << "step,m,n,k,kernel,t_s,sm_clock_mhz,power_w,energy_mj,clock_reasons\n";
      for (size_t i = 0; i < sustained.size(); ++i)
        for (const TelemetrySample& s : sustained[i].series)
          out << fmt::format("{},{},{},{},{},{:.4f},{},{:.1f},{},{}\n", step.id, p.m, p.n, p.k, contenders[i].name, s.t_s,
                             s.sm_clock_mhz, s.power_w, s.energy_mj, clock_reason_names(s.reasons & ~1ULL));
    }
  }

  // The table.
  const double fpc = flop_per_clock(p.dtype, dev.sm_count);
  const double gflop = 2e-9 * double(p.m) * p.n * p.k;
  fmt::print("{:<10} {:<34} {:>9} {:>9} {:>19} {:>8} {:>6} {:>7} {:>7}  {}\n", "mode", "kernel", "ms", "TFLOP/s",
             "step/kernel [IQR]", "SM MHz", "SoL%", "W", "TFLOP/J", "");
  for (const Row& r : rows) {
    const double tf = tflops(p.m, p.n, p.k, r.t.median_ms);
    const double sol = r.clock_mhz > 0 ? tf / (fpc * r.clock_mhz * 1e-6) : 0;
    const double tpj = r.joules > 0 ? gflop * 1e-3 / r.joules : 0;
    const std::string ratio =
        r.mode == "burst" ? fmt::format("{:.3f} [{:.3f},{:.3f}]", r.ratio.median, r.ratio.q25, r.ratio.q75)
                          : fmt::format("{:.3f} (unpaired)", r.ratio.median);
    fmt::print("{:<10} {:<34} {:>9.4f} {:>9.2f} {:>19} {:>8.0f} {:>6} {:>7} {:>7}  {}\n", r.mode,
               r.kernel == "step" ? program : r.kernel, r.t.median_ms, tf, ratio, r.clock_mhz,
               num(100 * sol, 1), num(r.power_w, 0), num(tpj, 3), r.detail == program ? "" : r.detail);
    if (!o.csv.empty())
      append_csv(o.csv, kCsvHeader,
                 fmt::format("{},{},\"{}\",{},{},{},{},{},{},\"{}\",{:.5f},{:.5f},{:.5f},{:.3f},{:.4f},{},{},{},{:.0f},{},"
                             "{},{},{},{},{},{},\"{}\",{},{},{},{},{},{},{},{}",
                             step.id, step.name, step.technique, dtype_name(step.dtype), p.m, p.n, p.k, r.mode,
                             r.kernel, r.detail, r.t.median_ms, r.t.min_ms, r.t.max_ms, tf, r.ratio.median,
                             r.mode == "burst" ? num(r.ratio.q25, 4) : "", r.mode == "burst" ? num(r.ratio.q75, 4) : "",
                             r.rounds, r.clock_mhz, r.clock_source, num(r.power_w, 1), num(r.joules, 5), num(tpj, 4),
                             num(sol, 4), r.reasons, check, dev.name, dev.sm_count, dev.l2_bytes >> 20,
                             dev.sm_clock_mhz, num(Nvml::get().power_limit_w(), 0), dev.driver, dev.runtime,
                             dev.cublas, today()));
  }
  if (pt.nvml.available)
    fmt::print("NVML over the paired loop ({:.2f} s, {} samples; NVML refreshes about every 100 ms): SM clock mean {:.0f} MHz ({:.0f}-{:.0f}), power "
               "mean {:.0f} W (max {:.0f} W, limit {:.0f} W), clock reasons: {}\n",
               pt.nvml.seconds, pt.nvml.samples, pt.nvml.clock_mean_mhz, pt.nvml.clock_min_mhz, pt.nvml.clock_max_mhz,
               pt.nvml.power_mean_w, pt.nvml.power_max_w, Nvml::get().power_limit_w(), loop_reasons);
  else
    fmt::print("clock and power: {}\n", Nvml::get().why_not());
  // The line scripts and people grep for: the step against cuBLAS, paired.
  for (const Row& r : rows)
    if (r.mode == "burst" && r.kernel == "cublas")
      fmt::print("{:<24} {:<5} {:>6} {:>6} {:>6}  {:>9.4f} ms  {:>8.2f} TFLOP/s  cuBLAS {:>8.2f} TFLOP/s  paired "
                 "ratio {:.3f} [IQR {:.3f}-{:.3f}]  {}\n",
                 program, dtype_name(step.dtype), p.m, p.n, p.k, rows[0].t.median_ms,
                 tflops(p.m, p.n, p.k, rows[0].t.median_ms), tflops(p.m, p.n, p.k, r.t.median_ms), r.ratio.median,
                 r.ratio.q25, r.ratio.q75, check);
  return exit_code;
}

}  // namespace gemm
