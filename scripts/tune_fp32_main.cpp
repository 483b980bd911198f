// The fp32 tuning sweep (steps 05-09): for every generated configuration, prune it when it uses
// local memory (a spill or a stack frame), check it (exact mode on a ragged shape, random-normal
// mode at the timing size) and only then time it with the harness's own time_launch; time the best
// few again at every size. Every point goes to one CSV row. Built and driven by scripts/tune_fp32.py.
//   tune_fp32 --csv out.csv [--sizes 4096 8192] [--top 4] [--reps 10] [--steps 08 09]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "../common/harness/device_info.hpp"
#include "../common/harness/runner.hpp"
#include "../common/harness/timing.hpp"
#include "tune_fp32.hpp"

namespace tune {
static std::vector<Config>& config_list() { static std::vector<Config> v; return v; }
static std::vector<Pruned>& pruned_list() { static std::vector<Pruned> v; return v; }
bool add(const Config& c) { config_list().push_back(c); return true; }
bool add_pruned(const Pruned& p) { pruned_list().push_back(p); return true; }
const std::vector<Config>& configs() { return config_list(); }
const std::vector<Pruned>& pruned() { return pruned_list(); }
}  // namespace tune

using namespace gemm;

namespace {

struct Row {
  const tune::Config* c = nullptr;
  int regs = 0, local = 0, blocks_per_sm = 0;
  std::string status;              // "ok", "pruned: ...", "FAIL: ..."
  std::map<int, double> tflops;    // size -> TFLOP/s
  std::map<int, double> ratio;     // size -> ratio to cuBLAS in this run
};

Step as_step(const tune::Config& c) {
  Step s;
  s.id = c.step;
  s.name = c.params;
  s.dtype = Dtype::fp32;
  s.fp32 = c.launch;
  return s;
}

// The first failing check's summary, or "" when all pass. Exact mode on a ragged shape (indexing,
// edges, K tail) and random-normal mode on the timing workspace.
std::string check(const tune::Config& c, ProblemBuffers& timing_ws, const std::vector<float>& want) {
  const Step s = as_step(c);
  for (Problem p : {Problem{Dtype::fp32, 1000, 1004, 1036, 1, 0, 5, true},
                    Problem{Dtype::fp32, 129, 68, 20, 1.5f, -0.5f, 6, false}}) {
    const CheckReport r = check_step(s, p);
    if (!r.passed) return fmt::format("FAIL M={} N={} K={}: {}", p.m, p.n, p.k, r.summary());
  }
  timing_ws.reset_output(nullptr);
  launch_step(s, timing_ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const CheckReport r = timing_ws.check_against(want);
  return r.passed ? "" : "FAIL at timing size: " + r.summary();
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv = "tune_fp32.csv";
  std::vector<int> sizes{4096, 8192};
  int top = 4, reps = 10;
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { fmt::print(stderr, "error: {} needs a value\n", a); std::exit(2); }
      return argv[++i];
    };
    if (a == "--csv") csv = next();
    else if (a == "--top") top = std::stoi(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--sizes") { sizes.clear(); while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(std::stoi(argv[++i])); }
    else if (a == "--steps") { while (i + 1 < argc && argv[i + 1][0] != '-') only.insert(argv[++i]); }
    else { fmt::print(stderr, "error: unknown flag {}\n", a); return 2; }
  }
  try {
    if (cuda_device_count() == 0) { fmt::print(stderr, "error: no CUDA device\n"); return 2; }
    const DeviceInfo dev = query_device();
    fmt::print("# {}\n", describe(dev));
    std::vector<Row> rows;
    for (const tune::Config& c : tune::configs())
      if (only.empty() || only.count(c.step)) rows.push_back(Row{&c});

    // 1) Resources: registers and local memory of each instantiation; local memory means a spill or
    //    a stack frame (ptxas reports them as local), which the ladder does not allow.
    for (Row& r : rows) {
      cudaFuncAttributes attr{};
      CUDA_CHECK(cudaFuncGetAttributes(&attr, r.c->kernel));
      r.regs = attr.numRegs;
      r.local = int(attr.localSizeBytes);
      if (r.local > 0) r.status = fmt::format("pruned: {} bytes of local memory (spill/stack)", r.local);
    }

    // 2) Check, then time, at the first size; cuBLAS is timed in the same process for the ratio.
    std::map<int, double> cublas_tf;
    auto time_at = [&](int size, std::vector<Row*> todo, int nreps) {
      ProblemBuffers ws(Problem{Dtype::fp32, size, size, size, 1, 0, 2026, false});
      const std::vector<float> want = ws.cublas_reference();
      if (!cublas_tf.count(size)) {
        const Timing t = time_launch([&](cudaStream_t s) { launch_cublas(ws, s); }, 3, 20);
        cublas_tf[size] = tflops(size, size, size, t.median_ms);
        fmt::print("cuBLAS {}^3: {:.2f} TFLOP/s\n", size, cublas_tf[size]);
      }
      for (Row* r : todo) {
        if (auto why = refusal(as_step(*r->c), size, size, size)) { r->status = "refused: " + *why; continue; }
        const std::string bad = check(*r->c, ws, want);
        if (!bad.empty()) { r->status = bad; fmt::print("{} {}: {}\n", r->c->step, r->c->params, bad); continue; }
        if (r->blocks_per_sm == 0)
          CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->blocks_per_sm, r->c->kernel, r->c->threads, r->c->dyn_smem));
        const Timing t = time_launch([&](cudaStream_t s) { launch_step(as_step(*r->c), ws, s); }, 2, nreps);
        r->status = "ok";
        r->tflops[size] = tflops(size, size, size, t.median_ms);
        r->ratio[size] = r->tflops[size] / cublas_tf[size];
        fmt::print("{} {:<48} regs {:>3} blocks/SM {} {}^3 {:7.2f} TFLOP/s {:.3f}x cuBLAS\n", r->c->step,
                   r->c->params, r->regs, r->blocks_per_sm, size, r->tflops[size], r->ratio[size]);
        std::fflush(stdout);
      }
    };
    std::vector<Row*> first;
    for (Row& r : rows) if (r.status.empty()) first.push_back(&r);
    time_at(sizes[0], first, reps);

    // 3) The best `top` of each step at the first size are timed at every other size, with the
    //    harness's default 20 repetitions, and the first size again with 20.
    std::map<std::string, std::vector<Row*>> by_step;
    for (Row& r : rows) if (r.status == "ok") by_step[r.c->step].push_back(&r);
    std::vector<Row*> finalists;
    for (auto& [step, v] : by_step) {
      std::sort(v.begin(), v.end(), [&](Row* a, Row* b) { return a->tflops[sizes[0]] > b->tflops[sizes[0]]; });
      for (int i = 0; i < int(v.size()) && i < top; ++i) finalists.push_back(v[i]);
    }
    for (int size : sizes) time_at(size, finalists, 20);

    // 4) CSV: every configuration, pruned or measured.
    std::ofstream out(csv);
    out << "step,params,threads,regs,local_bytes,dyn_smem,blocks_per_sm,status,finalist";
    for (int s : sizes) out << ",tflops_" << s << ",cublas_tflops_" << s << ",ratio_" << s;
    out << ",gpu,driver_cuda,runtime\n";
    for (const tune::Pruned& p : tune::pruned())
      if (only.empty() || only.count(p.step))
        out << fmt::format("{},{},,,,,,\"pruned: {}\",0{},\"{}\",{},{}\n", p.step, p.params, p.reason,
                           std::string(3 * sizes.size(), ','), dev.name, dev.driver, dev.runtime);
    for (const Row& r : rows) {
      const bool fin = std::find(finalists.begin(), finalists.end(), &r) != finalists.end();
      out << fmt::format("{},{},{},{},{},{},{},\"{}\",{}", r.c->step, r.c->params, r.c->threads, r.regs,
                         r.local, r.c->dyn_smem, r.blocks_per_sm, r.status, fin ? 1 : 0);
      for (int s : sizes) {
        if (r.tflops.count(s)) out << fmt::format(",{:.3f},{:.3f},{:.4f}", r.tflops.at(s), cublas_tf[s], r.ratio.at(s));
        else out << ",,,";
      }
      out << fmt::format(",\"{}\",{},{}\n", dev.name, dev.driver, dev.runtime);
    }
    if (!out) throw Error("cannot write " + csv);

    // 5) The choice per step: the finalist with the best worst-case ratio over all sizes.
    fmt::print("\n==== best configuration per step (min ratio over sizes) ====\n");
    for (auto& [step, v] : by_step) {
      Row* best = nullptr;
      double best_score = -1;
      for (Row* r : v) {
        if (int(r->tflops.size()) != int(sizes.size())) continue;
        double score = 1e9;
        for (int s : sizes) score = std::min(score, r->ratio[s]);
        if (score > best_score) best_score = score, best = r;
      }
      if (!best) continue;
      std::string line = fmt::format("{} {} regs={} blocks/SM={}", step, best->c->params, best->regs, best->blocks_per_sm);
      for (int s : sizes) line += fmt::format(" | {}: {:.2f} TFLOP/s {:.3f}x", s, best->tflops[s], best->ratio[s]);
      fmt::print("{}\n", line);
    }
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
