// build/bin/tune (`make tune`, through scripts/tune.py): every entry of the family's menu
// (common/kernel_lib/family/menu.hpp) and the last bf16 step's hand rule, timed paired with cuBLAS on
// each shape it is given, one CSV row per (shape, contender). For each shape: the inputs once (random
// normal, seeded), cuBLAS's C as the reference, every entry that takes the shape launched once and
// checked against it (where C has at most --check-max-elems elements: the tests and the fuzzer check
// the menu everywhere), each on its own zeroed workspace; then the paired loop (time_paired: cuBLAS
// and every entry that passed, alternating launch by launch, each after the same L2 flush), so the
// ratios to cuBLAS are of one power state and clock drift cancels.
//   build/bin/tune --shapes 4096x4096x4096,128x14336x4096 --rounds 10 --csv t.csv
//   build/bin/tune --shapes ... --entries pp128x128-c2x2-s6 --hand-step ""   (entries added to a tuned menu)
// Output: a line per shape (the fastest entry and its ratio), the rows appended to --csv (header
// written when the file is new; cluster: 1, 2m, 2n or 2x2). Exit 0; 1 when an entry computed a wrong C or
// its launch threw (its row's check says FAIL or ERROR and it is not timed); 2 on bad input or no
// Hopper GPU.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/harness/buffer.hpp"
#include "../common/harness/cli_checks.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/problem.hpp"
#include "../common/harness/results.hpp"
#include "../common/harness/timing.hpp"
#include "../common/kernel_lib/family/menu_steps.hpp"
#include "../common/kernel_lib/launch.hpp"

namespace {

using namespace gemm;

struct Shape {
  int m, n, k;
};

/// "MxNxK,MxNxK,...": the shapes, each side at least 1 and K % 8 == 0 (every entry's TMA constraint).
std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    Shape s{};
    char x1 = 0, x2 = 0;
    int used = 0;
    if (std::sscanf(item.c_str(), "%d%c%d%c%d%n", &s.m, &x1, &s.n, &x2, &s.k, &used) != 5 || x1 != 'x' || x2 != 'x' ||
        used != int(item.size()) || s.m < 1 || s.n < 1 || s.k < 1 || s.k % 8 != 0)
      throw Error(fmt::format("--shapes: \"{}\" is not MxNxK with M, N, K >= 1 and K % 8 == 0", item));
    out.push_back(s);
    pos = end + 1;
  }
  return out;
}

/// One contender's launch on its own workspace (a split's counters must be zero at every launch; a
/// workspace shared between entries of different layouts would not be).
struct Candidate {
  Step step;
  int entry;  ///< its index in family::menu::kBf16; -1: the hand rule's step
  DeviceBuffer<char> workspace;
  std::string check = "pass";
};

void launch_on(const Candidate& c, const ProblemBuffers& ws, cudaStream_t s) {
  Bf16Gemm g = ws.bf16_args();
  g.workspace = c.workspace.get();
  g.workspace_bytes = c.workspace.bytes();
  c.step.bf16(g, s);
}

constexpr const char* kHeader =
    "m,n,k,contender,bm,bn,consumers,swap,cluster,stmatrix,stages,split_items,units,ms,tflops,ratio_vs_cublas,ratio_q25,"
    "ratio_q75,clock_mhz,cublas_ms,check,gpu,date";

int run(const std::vector<Shape>& shapes, int rounds, double settle_s, int64_t check_max, const std::string& csv,
        const std::string& hand_step, const std::vector<std::string>& only) {
  const DeviceInfo dev = query_device();
  if (dev.cc_major != 9 || dev.cc_minor != 0) {
    std::fprintf(stderr, "error: tune: the menu is sm_90a code; this GPU is %s (cc %d.%d)\n", dev.name.c_str(),
                 dev.cc_major, dev.cc_minor);
    return 2;
  }
  fmt::print("# {}\n# tune: {} shapes, {} paired rounds each\n", describe(dev), shapes.size(), rounds);
  const bool fresh = !std::filesystem::exists(csv) || std::filesystem::file_size(csv) == 0;
  std::ofstream out(csv, std::ios::app);
  if (!out) throw Error("tune: cannot open " + csv + " for appending");
  if (fresh) out << kHeader << "\n";
  std::vector<Step> pool = family::menu::bf16_steps();
  for (const std::string& e : only)
    if (std::none_of(pool.begin(), pool.end(), [&](const Step& st) { return st.name == e; }))
      throw Error("--entries: \"" + e + "\" is not an entry of the menu (tests/test_family.cpp lists their names)");
  if (!hand_step.empty()) pool.push_back(find_step(hand_step));
  const size_t menu_size = family::menu::kBf16.size();
  int wrong = 0, errors = 0;
  for (const Shape& sh : shapes) {
    ProblemBuffers ws(Problem{Dtype::bf16, sh.m, sh.n, sh.k, 1, 0, 2026, false});
    const bool check = int64_t(sh.m) * sh.n <= check_max;
    const std::vector<float> want = check ? ws.reference() : std::vector<float>{};
    std::vector<Candidate> cands;
    for (size_t j = 0; j < pool.size(); ++j) {
      const Step& st = pool[j];
      if (j < menu_size && !only.empty() && std::find(only.begin(), only.end(), st.name) == only.end()) continue;
      if (st.unsupported && st.unsupported(sh.m, sh.n, sh.k)) continue;  // refused: not a contender here
      Candidate c{st, j < family::menu::kBf16.size() ? int(j) : -1, DeviceBuffer<char>(0)};
      ws.reset_output(nullptr);
      try {  // a plan or launch the entry refuses at run time (a cluster that does not fit): its row says why
        c.workspace = DeviceBuffer<char>(st.workspace_bytes ? st.workspace_bytes(sh.m, sh.n, sh.k) : 0);
        if (c.workspace.bytes() > 0) CUDA_CHECK(cudaMemset(c.workspace.get(), 0, c.workspace.bytes()));
        launch_on(c, ws, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
      } catch (const Error& e) {
        c.check = fmt::format("ERROR: {}", e.what());
        std::replace(c.check.begin(), c.check.end(), '"', '\'');
        ++errors;
        cands.push_back(std::move(c));
        continue;
      }
      if (check) {
        const CheckReport r = ws.check_against_reference(want);
        c.check = r.check_column();
        if (!r.passed) ++wrong;
      } else {
        c.check = fmt::format("not checked (C over {} elements)", check_max);
      }
      cands.push_back(std::move(c));
    }
    std::vector<Contender> all{{"cublas", "", [&ws](cudaStream_t s) { launch_cublas(ws, s); }}};
    std::vector<const Candidate*> timed;
    for (const Candidate& c : cands)
      if (c.check.rfind("pass", 0) == 0 || c.check.rfind("not checked", 0) == 0) {
        all.push_back({c.step.name, "", [&c, &ws](cudaStream_t s) { launch_on(c, ws, s); }});
        timed.push_back(&c);
      }
    const PairedTiming pt = time_paired(all, 2, settle_s, rounds, nullptr);
    const std::string date = today();
    const Timing& cub = pt.timing[0];
    const Candidate* best = nullptr;
    double best_ratio = 0;
    for (const Candidate& c : cands) {
      const auto it = std::find(timed.begin(), timed.end(), &c);
      const bool ran = it != timed.end();
      const size_t i = ran ? size_t(it - timed.begin()) + 1 : 0;
      const RatioStats r = ran ? paired_ratio(pt.timing[i], cub) : RatioStats{};
      const bool menu = c.entry >= 0;
      const family::Spec s = menu ? family::menu::kBf16[size_t(c.entry)].spec : family::Spec{};
      double clock = 0;
      if (ran) clock = quantile(pt.clock_mhz[i], 0.5);
      const bool launched = c.check.rfind("ERROR", 0) != 0;
      const family::Plan pl = menu && launched ? family::menu::launch_plan(size_t(c.entry), sh.m, sh.n, sh.k) : family::Plan{};
      const std::string cluster = s.cluster_m == 2 && s.cluster_n == 2 ? "2x2" : s.cluster_m == 2 ? "2m" : s.cluster_n == 2 ? "2n" : "1";
      out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",\"{}\",{}\n", sh.m, sh.n, sh.k,
                         menu ? c.step.name : "step" + c.step.id, menu ? s.bm : c.step.tile.bm,
                         menu ? s.bn : c.step.tile.bn,
                         menu ? (s.consumers == family::Consumers::pingpong ? "pingpong" : "cooperative") : "",
                         menu ? int(s.swap) : 0, menu ? cluster : "1", menu ? int(s.stmatrix) : 0,
                         menu ? s.stages : c.step.tile.stages, menu && launched ? std::to_string(pl.split.sk_tiles) : "",
                         menu && launched ? std::to_string(pl.split.blocks) : "",
                         ran ? fmt::format("{:.5f}", pt.timing[i].median_ms) : "",
                         ran ? fmt::format("{:.1f}", tflops(sh.m, sh.n, sh.k, pt.timing[i].median_ms)) : "",
                         ran ? fmt::format("{:.4f}", r.median) : "", ran ? fmt::format("{:.4f}", r.q25) : "",
                         ran ? fmt::format("{:.4f}", r.q75) : "", ran ? fmt::format("{:.0f}", clock) : "",
                         fmt::format("{:.5f}", cub.median_ms), c.check, dev.name, date);
      if (ran && menu && r.median > best_ratio) best_ratio = r.median, best = &c;
    }
    out.flush();
    fmt::print("{}x{}x{}: {} contenders timed; fastest entry {} at {:.3f}x cuBLAS ({:.3f} ms)\n", sh.m, sh.n, sh.k,
               timed.size(), best ? best->step.name : "none", best_ratio, cub.median_ms);
    std::fflush(stdout);
  }
  if (wrong) fmt::print("{} entries computed a wrong C (rows with check FAIL)\n", wrong);
  if (errors) fmt::print("{} launches refused at run time (rows with check ERROR)\n", errors);
  return wrong || errors ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tune: the family's menu entries and the hand rule's step, timed paired with cuBLAS per shape"};
  std::string shapes_text, csv, hand_step;
  std::vector<std::string> only;
  int rounds = 10;
  double settle_s = 0.3;
  int64_t check_max = int64_t(1) << 25;
  app.add_option("--shapes", shapes_text, "MxNxK,MxNxK,... (K % 8 == 0)")->required();
  app.add_option("--csv", csv, "CSV the rows are appended to")->required();
  app.add_option("--rounds", rounds, "paired rounds per shape")->check(CLI::Range(3, 1000));
  app.add_option("--settle-s", settle_s, "untimed paired rounds first, seconds")->check(CLI::Range(0.0, 10.0));
  app.add_option("--check-max-elems", check_max, "check entries against cuBLAS where M*N is at most this")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  app.add_option("--hand-step", hand_step, "a registered bf16 step timed beside the menu (its hand rule), e.g. 28");
  app.add_option("--entries", only, "time only these menu entries (comma list of names; default: all)")->delimiter(',');
  if (const int status = cli::parse(app, argc, argv, "tune"); status >= 0) return status;
  try {
    const std::vector<Shape> shapes = parse_shapes(shapes_text);
    if (cuda_device_count() == 0) {
      std::fprintf(stderr, "error: tune: no CUDA device found\n");
      return 2;
    }
    return run(shapes, rounds, settle_s, check_max, csv, hand_step, only);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: tune: %s\n", e.what());
    return 2;
  }
}
