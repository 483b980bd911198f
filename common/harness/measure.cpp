// The measurement of one step executable after its check passed, as its phases: gather the
// contenders (the step and its references), check the references, time them paired, measure energy,
// run the sustained state, then report the rows (results.hpp).
#include "measure.hpp"

#include <cuda_profiler_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include "../kernel_lib/launch.hpp"
#include "cublaslt.hpp"
#include "cutlass_ref.hpp"
#include "results.hpp"
#include "telemetry.hpp"
#include "timing.hpp"
#include "trace_run.hpp"

namespace gemm {

namespace {

bool wants(const Options& o, const char* ref) { return std::find(o.refs.begin(), o.refs.end(), ref) != o.refs.end(); }

// The step and the references it is timed beside, and what their launches hold on to.
struct Contenders {
  std::vector<Contender> all;  // all[0] is the step
  std::unique_ptr<LtGemm> lt;
  std::unique_ptr<LtGemm> lt_fast;  // fp8: fast accumulation
  std::unique_ptr<LtGemm> lt_stand_in;  // fp8: per-tensor where cuBLASLt has no block-scaled algorithm
  std::vector<DeviceBuffer<char>> cutlass_workspaces;
};

// The problem's A, B and C as the references take them, whatever its dtype.
struct Operands {
  const void* a;
  const void* b;
  void* c;
};
Operands operands(const ProblemBuffers& ws) {
  switch (ws.problem().dtype) {
    case Dtype::fp32: { const Fp32Gemm g = ws.fp32_args(); return {g.a, g.b, g.c}; }
    case Dtype::bf16: { const Bf16Gemm g = ws.bf16_args(); return {g.a, g.b, g.c}; }
    default: { const Fp8Gemm g = ws.fp8_args(); return {g.a, g.b, g.c}; }
  }
}

// cuBLASLt's fastest of its top candidates for the shape (chosen by a short paired run of the
// candidates, each after the same flush), as the contender `name`.
Contender fastest_lt(const LtGemm* lt, const char* name, const char* what, const Problem& p, const void* a,
                     const void* b, void* out) {
  std::vector<Contender> algos;
  for (int i = 0; i < lt->count(); ++i)
    algos.push_back({lt->describe(i), "", [=](cudaStream_t s) { lt->run(i, a, b, out, s); }});
  const PairedTiming sel = time_paired(algos, 1, 0, 10, nullptr);
  int best = 0;
  for (int i = 1; i < int(algos.size()); ++i)
    if (sel.timing[i].median_ms < sel.timing[best].median_ms) best = i;
  fmt::print("{}: {} algorithms tried, fastest {} ({:.2f} TFLOP/s in the selection run)\n", what, algos.size(),
             algos[best].name, tflops(p.m, p.n, p.k, sel.timing[best].median_ms));
  return {name, algos[best].name, [=](cudaStream_t s) { lt->run(best, a, b, out, s); }};
}

// Phase 1: the step, cuBLAS, cuBLASLt's fastest of its top o.lt_algos algorithms and every CUTLASS
// configuration that takes the shape (bf16), as o.refs asks. fp8: "cublaslt" is cuBLASLt FP8 with the
// step's scaling twice, default accumulation ("cublaslt_best") and fast accumulation
// ("cublaslt_fast", per-tensor scales only: block scaling has no fast mode); cuBLAS has no FP8 GEMM and the CUTLASS references are bf16, so "cublas" and
// "cutlass" are skipped with a line saying so. Where cuBLASLt has no block-scaled algorithm for the
// shape (M = 1 on Hopper), cuBLASLt per-tensor with default accumulation on the same e4m3 data is timed
// instead as "cublaslt_stand_in" (issue 47: the bar is the same); it computes another product, so it is
// never checked (drop_failed_references) and has no error.
void gather_contenders(Contenders& c, const Step& step, ProblemBuffers& ws, const Options& o,
                       const std::string& program) {
  const Problem& p = ws.problem();
  const Bf16Gemm b16 = ws.bf16_args();
  const Fp8Gemm f8 = ws.fp8_args();
  const auto [a, b, out] = operands(ws);
  c.all.push_back({"step", program, [&step, &ws](cudaStream_t s) { launch_step(step, ws, s); }});
  if (p.dtype == Dtype::fp8) {
    for (const char* ref : {"cublas", "cutlass"})
      if (wants(o, ref)) fmt::print("{}: not run for fp8 (no FP8 GEMM of that reference here)\n", ref);
    if (wants(o, "cublaslt")) {
      try {
        c.lt = std::make_unique<LtGemm>(f8, false, o.lt_algos);
      } catch (const Error& e) {
        // The block-scaled reference is newer (cuBLASLt 12.9 on): where it has no algorithm for a shape,
        // the step is still checked against the fp64 oracle, and timed beside the per-tensor stand-in.
        if (f8.scaling == Scaling::per_tensor) throw;
        fmt::print("cuBLASLt FP8 block-scaled: not run: {}; timed instead: cuBLASLt FP8 per-tensor (scales 1), "
                   "default accumulation, as {}: another product than the step's, so not checked against the "
                   "fp64 oracle and no error reported\n",
                   e.what(), kLtStandIn);
        try {
          c.lt_stand_in = std::make_unique<LtGemm>(per_tensor_stand_in(f8), false, o.lt_algos);
        } catch (const Error& e2) {
          fmt::print("{}: not run: {}\n", kLtStandIn, e2.what());
        }
      }
      if (c.lt) c.all.push_back(fastest_lt(c.lt.get(), kLtBest, "cuBLASLt FP8", p, a, b, out));
      if (c.lt_stand_in)
        c.all.push_back(fastest_lt(c.lt_stand_in.get(), kLtStandIn, "cuBLASLt FP8 per-tensor stand-in", p, a, b, out));
      if (f8.scaling == Scaling::per_tensor) {
        c.lt_fast = std::make_unique<LtGemm>(f8, true, o.lt_algos);
        c.all.push_back(fastest_lt(c.lt_fast.get(), kLtFast, "cuBLASLt FP8 fast accumulation", p, a, b, out));
      } else {
        fmt::print("cuBLASLt FP8 fast accumulation: not run for block scales (cuBLASLt has no such mode)\n");
      }
    }
    return;
  }
  if (wants(o, "cublas")) c.all.push_back({"cublas", "default heuristic", [&ws](cudaStream_t s) { launch_cublas(ws, s); }});
  if (wants(o, "cublaslt")) {
    c.lt = std::make_unique<LtGemm>(p.dtype, p.m, p.n, p.k, p.alpha, p.beta, o.lt_algos);
    c.all.push_back(fastest_lt(c.lt.get(), "cublaslt_best", "cuBLASLt", p, a, b, out));
  }
  if (wants(o, "cutlass") && p.dtype == Dtype::bf16) {
    if (cutlass_ref::config_count() == 0) fmt::print("CUTLASS: not built into this binary (no CUTLASS headers at build time)\n");
    c.cutlass_workspaces.reserve(cutlass_ref::config_count());
    for (int i = 0; i < cutlass_ref::config_count(); ++i) {
      if (auto why = cutlass_ref::refusal(i, b16)) {
        fmt::print("CUTLASS {}: not run: {}\n", cutlass_ref::config_name(i), *why);
        continue;
      }
      c.cutlass_workspaces.emplace_back(cutlass_ref::workspace_bytes(i, b16));
      void* w = c.cutlass_workspaces.back().get();
      c.all.push_back({cutlass_ref::config_name(i), "CUTLASS 4.2 headers",
                       [=](cudaStream_t s) { cutlass_ref::run(i, b16, w, s); }});
    }
  }
}

// Phase 2: every reference but cuBLAS must compute the same C as cuBLAS (within the step's
// tolerance; bf16: or, where the two disagree, be inside the fp64 oracle's, judge_reference) before it is timed; one that does not is dropped with one labelled line on stdout,
// "reference dropped: NAME ...", and the run goes on: the exit code speaks of the step alone (README:
// 1 is a wrong step or a CUDA error), and bench.py records the dropped reference as a row of its own.
// fp8: every reference but the stand-in (another product: gather_contenders), and the step once more,
// against the fp64 oracle of the dequantized product; each one's relative RMS error goes to `rel_rms`
// (by contender name) for the rows (bf16 and fp32 rows leave the column empty: their references are
// compared with cuBLAS, not with an oracle). Throws gemm::Error where the step fails its second check.
void drop_failed_references(Contenders& c, ProblemBuffers& ws, std::map<std::string, double>& rel_rms) {
  const bool fp8 = ws.problem().dtype == Dtype::fp8;
  const char* oracle = fp8 ? "the fp64 oracle" : "cuBLAS";
  const bool others = std::any_of(c.all.begin() + 1, c.all.end(), [](const Contender& x) { return x.name != "cublas"; });
  if (!others && !fp8) return;
  const std::vector<float> want = ws.reference();
  // Where the inputs before quantization were kept (--dist llm), one more line each: the error against
  // their fp64 product, quantization included (printed only: the column stays the oracle's).
  const std::vector<float> truth = ws.has_unquantized() ? ws.unquantized_product() : std::vector<float>{};
  for (auto it = c.all.begin() + (fp8 ? 0 : 1); it != c.all.end();) {
    if (it->name == "cublas" || it->name == kLtStandIn) {
      ++it;
      continue;
    }
    ws.reset_output(nullptr);
    it->launch(nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const CheckReport r = ws.check_against_reference(want);
    if (fp8) fmt::print("{}: relative RMS error against {}: {:.3g}\n", it->name == "step" ? it->detail : it->name, oracle, r.rel_rms_err);
    if (!truth.empty())
      fmt::print("{}: relative RMS error against the fp64 product of the unquantized inputs: {:.3g}\n",
                 it->name == "step" ? it->detail : it->name, ws.check_against(truth).rel_rms_err);
    if (it == c.all.begin()) {  // the step, whose check passed before measure_step
      if (!r.passed) throw Error(fmt::format("the step failed its second check against {}: {}", oracle, r.summary()));
      rel_rms[it->name] = r.rel_rms_err;
      ++it;
    } else if (!r.passed) {
      fmt::print("reference dropped: {} failed its check against {} and is not timed ({} elements outside "
                 "tolerance, {} writes past C, max |err| {:.3g}); the step's own check passed\n",
                 it->name, oracle, r.mismatches, r.guard_writes, r.max_abs_err);
      it = c.all.erase(it);
    } else {
      if (fp8) rel_rms[it->name] = r.rel_rms_err;  // the column means "against the fp64 oracle": fp8 only
      ++it;
    }
  }
  ws.reset_output(nullptr);
}

// Phase 3: the paired burst loop (NVML polled meanwhile), one row per contender with the step's
// paired ratio over it.
std::vector<Row> time_burst(const std::vector<Contender>& all, const Options& o, Sampler& sampler,
                            TelemetrySummary& loop_nvml) {
  const PairedTiming pt = time_paired(all, o.warmup, o.settle_s, o.reps, &sampler);
  loop_nvml = pt.nvml;
  const std::string reasons = pt.nvml.available ? clock_reason_names(pt.nvml.reasons) : "";
  std::vector<Row> rows;
  for (size_t i = 0; i < all.size(); ++i) {
    Row r("burst", all[i].name, all[i].detail, pt.timing[i]);
    r.ratio = i == 0 ? RatioStats{1, 1, 1, 1, 1} : paired_ratio(pt.timing[0], pt.timing[i]);
    r.clock_mhz = quantile(pt.clock_mhz[i], 0.5);
    r.clock_source = "probe";
    r.reasons = reasons;
    r.rounds = o.reps;
    rows.push_back(r);
  }
  return rows;
}

// Phase 4: energy per GEMM for the burst rows, from a back-to-back block of each kernel alone (the
// paired loop mixes kernels, and NVML's energy counter, refreshed about every 100 ms, cannot tell
// them apart).
void measure_energy(std::vector<Row>& burst, const std::vector<Contender>& all, double seconds, Sampler& sampler) {
  if (seconds <= 0 || !Nvml::get().available()) return;
  for (size_t i = 0; i < all.size(); ++i) {
    const Sustained e = time_sustained(all[i].launch, seconds, 0, sampler);
    burst[i].power_w = e.nvml.counter_watts();
    burst[i].joules = e.joules_per_gemm;
  }
}

// Phase 5: each kernel alone for `seconds`; the second half is the settled state. One row each, with
// the step's (unpaired) ratio over it; every NVML sample goes to `series` when it is named.
std::vector<Row> time_sustained_rows(const std::vector<Contender>& all, double seconds, Sampler& sampler,
                                     const std::string& series, const Step& step, const Problem& p) {
  std::vector<Sustained> runs;
  std::vector<Row> rows;
  for (const Contender& c : all) {
    runs.push_back(time_sustained(c.launch, seconds, seconds / 2, sampler));
    const Sustained& s = runs.back();
    Row r("sustained", c.name, c.detail, make_timing({s.ms_per_gemm}));
    r.clock_mhz = s.nvml.clock_mean_mhz;
    r.clock_source = "nvml";
    r.power_w = s.nvml.counter_watts();
    r.joules = s.joules_per_gemm;
    r.reasons = s.nvml.available ? clock_reason_names(s.nvml.reasons) : "";
    r.rounds = s.launches;
    rows.push_back(r);
  }
  const double step_ms = runs[0].ms_per_gemm;
  for (size_t i = 0; i < runs.size(); ++i)
    rows[i].ratio = {step_ms > 0 ? runs[i].ms_per_gemm / step_ms : 0, 0, 0, 0, 0};  // two separate runs: no spread
  if (!series.empty()) {
    std::ofstream out(series, std::ios::app);
    if (!out) throw Error(fmt::format("cannot open --series {} for writing", series));
    out.seekp(0, std::ios::end);
    if (out.tellp() == 0) out << "step,m,n,k,kernel,t_s,sm_clock_mhz,power_w,energy_mj,clock_reasons\n";
    for (size_t i = 0; i < runs.size(); ++i)
      for (const TelemetrySample& s : runs[i].series)
        out << fmt::format("{},{},{},{},{},{:.4f},{},{:.1f},{},{}\n", step.id, p.m, p.n, p.k, all[i].name, s.t_s,
                           s.sm_clock_mhz, s.power_w, s.energy_mj, clock_reason_names(s.reasons & ~1ULL));
  }
  return rows;
}

}  // namespace

void profile_once(const Step& step, ProblemBuffers& ws, const std::string& what) {
  // "cublaslt": its heuristic's first algorithm (the one a caller gets without timing a list); for fp8,
  // which cuBLAS has no GEMM of, cuBLASLt FP8 of the problem's scaling (the step's), default accumulation.
  const Problem& p = ws.problem();
  if (what == "cublas" && p.dtype == Dtype::fp8)
    throw Error("--profile-once cublas: cuBLAS has no FP8 GEMM (--profile-once cublaslt profiles cuBLASLt FP8)");
  std::unique_ptr<LtGemm> lt;
  if (what == "cublaslt")
    lt = p.dtype == Dtype::fp8 ? std::make_unique<LtGemm>(ws.fp8_args(), false, 1)
                               : std::make_unique<LtGemm>(p.dtype, p.m, p.n, p.k, p.alpha, p.beta, 1);
  const Operands io = operands(ws);
  const Launch launch = what == "step" ? Launch([&](cudaStream_t s) { launch_step(step, ws, s); })
                        : lt           ? Launch([&](cudaStream_t s) { lt->run(0, io.a, io.b, io.c, s); })
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
  Contenders c;
  gather_contenders(c, step, ws, o, program);
  std::map<std::string, double> rel_rms;
  drop_failed_references(c, ws, rel_rms);
  Sampler sampler;
  TelemetrySummary loop_nvml;
  std::vector<Row> rows = time_burst(c.all, o, sampler, loop_nvml);
  for (Row& r : rows)
    if (auto e = rel_rms.find(r.kernel); e != rel_rms.end()) r.rel_rms_err = e->second;
  measure_energy(rows, c.all, o.energy_s, sampler);
  if (o.sustained_s > 0) {
    std::vector<Row> sustained = time_sustained_rows(c.all, o.sustained_s, sampler, o.series, step, ws.problem());
    rows.insert(rows.end(), sustained.begin(), sustained.end());
  }

  const RunInfo run{step, ws.problem(), dev, program, check};
  print_table(run, rows);
  if (!o.csv.empty()) append_csv_rows(o.csv, run, rows);
  if (loop_nvml.available)
    fmt::print("NVML over the paired loop ({:.2f} s, {} samples; NVML refreshes about every 100 ms): SM clock mean {:.0f} MHz ({:.0f}-{:.0f}), power "
               "mean {:.0f} W (max {:.0f} W, limit {:.0f} W), clock reasons: {}\n",
               loop_nvml.seconds, loop_nvml.samples, loop_nvml.clock_mean_mhz, loop_nvml.clock_min_mhz,
               loop_nvml.clock_max_mhz, loop_nvml.power_mean_w, loop_nvml.power_max_w, Nvml::get().power_limit_w(),
               clock_reason_names(loop_nvml.reasons));
  else
    fmt::print("clock and power: {}\n", Nvml::get().why_not());
  print_summary_line(run, rows);
  return 0;
}

}  // namespace gemm
