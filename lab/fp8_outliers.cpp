// build/bin/lab_fp8_outliers (`scripts/gpu_session.sh outliers`; docs/fp8.md, "What block scaling buys"):
// the error of FP8 GEMMs against the fp64 product of the *unquantized* inputs, for each way of scaling
// them, with and without promotion, as K grows, on N(0, 1) inputs and on inputs shaped like a language
// model's (fp8.hpp, Dist::llm). The rest of the accuracy lab (lab/fp8_accumulator.cu, gpu_session.sh lab)
// measures the arithmetic alone, against the oracle of the dequantized product; this adds what the
// quantization costs.
// For each inputs and K the inputs are drawn once (the harness's generator, fp8_inputs: what a step
// program quantizes with the same --seed and --dist) and their fp64 product computed once; then per
// scaling they are quantized (quantize_device over the scaling's grids), the fp64 product of the
// quantized values is a row of its own ("fp64 oracle": the quantization alone), and each kernel of the
// scaling runs once on the same bytes:
//   per_tensor  the unpromoted step (30: whole K in the tensor core), the promoted step (31: every
//               128 K), cuBLASLt FP8 default and fast accumulation
//   per_row     cuBLASLt FP8 with outer-vector scales, one per row of A and one per row of B, default
//               and fast accumulation where cuBLASLt has an algorithm (no step takes such scales)
//   row_128     the block-scaled step (34) given scales that do not change along K: one per row of A,
//               one per 128 rows of B, the nearest to per-row that a 128 x 128 layout can carry
//   block       the block-scaled step (1 x 128 A, 128 x 128 B), cuBLASLt FP8 block-scaled
// Each run is checked against the oracle of its own dequantized product (the harness's tolerance, the
// row's check column); its relative RMS errors against both products go to the CSV, with what the
// quantization did to A's and B's values (how many were flushed to zero or left subnormal). For llm
// inputs the fp64 oracle rows also hold err_ordinary, the error of the ordinary channels' share of
// the product (Result says how): the outlier channels make most of the product, so the whole
// product's error cannot show what their scales cost the other channels.
//   build/bin/lab_fp8_outliers --csv out.csv                        the default sweep (about a minute)
//   build/bin/lab_fp8_outliers --dists llm --ks 4096 --outlier-maxes 100,10000,100000 --csv out.csv
//   build/bin/lab_fp8_outliers --cpu-model --ks 256,1024,4096       the quantization alone on the host
// --cpu-model needs no GPU: host draws (std::mt19937_64, Box-Muller; not cuRAND's, so other values of
// the same distributions) shaped and quantized by the same code, the "fp64 oracle" rows only: the
// quantization's share of the error, which the prediction in the book is made from.
// Exit status: 0 when every run passed its check; 1 otherwise or on a CUDA error; 2 for bad input or no GPU.
#include <CLI/CLI.hpp>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "../common/harness/cli_checks.hpp"
#include "../common/harness/compare.hpp"
#include "../common/harness/cublaslt.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/fp8.hpp"
#include "../common/harness/problem.hpp"
#include "../common/harness/reference.hpp"
#include "../common/harness/results.hpp"
#include "../common/kernel_lib/check.hpp"

using namespace gemm;

namespace {

constexpr const char* kHeader =
    "dist,outlier_max,m,n,k,seed,scaling,accumulation,kernel,detail,err_unquantized,err_dequantized,check,"
    "err_ordinary,a_nonzero,a_flushed,a_subnormal,b_nonzero,b_flushed,b_subnormal,gpu,cublas,date";

struct Args {
  int m = 256, n = 256;
  std::vector<int> ks{256, 1024, 4096, 16384, 65536};
  std::vector<std::string> dists{"normal", "llm"};
  std::vector<double> outlier_maxes{1000};
  uint64_t seed = 2026;
  std::string csv, unpromoted = "30", promoted = "31", block = "34";
  bool cpu_model = false;
};

// One inputs-and-K point of the sweep: its problem (seed, dist, shape) and the CSV cells it shares.
struct Point {
  Problem p;
  std::string prefix;  // dist,outlier_max,m,n,k,seed
};

// One scaling: its name and the grids A and B are quantized over.
struct Scheme {
  const char* name;
  ScaleGrid ga, gb;
};

std::vector<Scheme> schemes(int m, int n, int k) {
  return {{"per_tensor", per_tensor_grid(m, k), per_tensor_grid(n, k)},
          {"per_row", row_grid(m, k), row_grid(n, k)},
          {"row_128", row_grid(m, k), row_block_grid_128(n, k)},
          {"block", activation_grid_1x128(m, k), weight_grid_128x128(n, k)}};
}

// What one kernel run (or the oracle) measured: the CSV's cells from `accumulation` to `err_ordinary`
// (an error < 0 is not measured: an empty cell).
struct Result {
  std::string accumulation, kernel, detail;
  double err_unquantized = -1, err_dequantized = -1;
  std::string check;
  /// fp64 oracle rows of llm inputs: the error of the ordinary channels' share of the product (A's
  /// outlier channels set to zero after quantization, the scales they set kept, against the unquantized
  /// product without them): what the outliers' scales cost the rest, which the whole product's error
  /// hides when the outlier channels make most of it.
  double err_ordinary = -1;
};

class Csv {
 public:
  explicit Csv(const std::string& path) {
    if (path.empty()) return;
    bool fresh = true;
    {
      std::ifstream in(path);
      std::string first;
      fresh = !in.good() || !std::getline(in, first) || first.empty();
      if (!fresh && first != kHeader) throw Error(fmt::format("{} has other columns than this lab writes; use a new --csv file", path));
    }
    out_ = std::make_unique<std::ofstream>(path, std::ios::app);
    if (!*out_) throw Error(fmt::format("cannot open --csv {} for appending", path));
    if (fresh) *out_ << kHeader << '\n';
  }
  void row(const Point& pt, const char* scaling, const Result& r, const Fp8Census& a, const Fp8Census& b,
           const std::string& gpu, const std::string& cublas) {
    auto err = [](double e) { return e >= 0 ? fmt::format("{:.4g}", e) : std::string(); };
    const std::string line =
        fmt::format("{},{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},\"{}\",{},{}", pt.prefix, scaling, r.accumulation,
                    r.kernel, r.detail, err(r.err_unquantized), err(r.err_dequantized), r.check, err(r.err_ordinary), a.nonzero, a.flushed,
                    a.subnormal, b.nonzero, b.flushed, b.subnormal, gpu, cublas, today());
    fmt::print("{}\n", line);
    if (out_) {
      *out_ << line << '\n';
      if (!*out_) throw Error("cannot write the --csv file");
    }
  }

 private:
  std::unique_ptr<std::ofstream> out_;
};

std::vector<Point> points(const Args& a) {
  std::vector<Point> out;
  for (const std::string& d : a.dists) {
    const bool llm = d == "llm";
    for (double f : llm ? a.outlier_maxes : std::vector<double>{0})
      for (int k : a.ks) {
        Point pt{Problem{Dtype::fp8, a.m, a.n, k, 1, 0, a.seed, false, Scaling::per_tensor}, ""};
        pt.p.dist = llm ? Dist::llm : Dist::normal;
        if (llm) pt.p.llm.outlier_max = f;
        pt.prefix = fmt::format("{},{},{},{},{},{}", d, llm ? fmt::format("{:g}", f) : "", a.m, a.n, k, a.seed);
        out.push_back(pt);
      }
  }
  return out;
}

// relative RMS error of `got` against `want` (compare's, with a tolerance nobody reads)
double rel_err(const std::vector<float>& got, const std::vector<float>& want, int m, int n) {
  return compare(got, want, {}, {}, m, n, Tolerance{Dtype::fp8, false, 1}).rel_rms_err;
}

// A's outlier channels (llm inputs; none for normal ones): where llm_channel_factors is not 1.
std::vector<int64_t> outlier_channels(const Problem& p) {
  std::vector<int64_t> out;
  if (p.dist != Dist::llm) return out;
  const std::vector<float> f = llm_channel_factors(p.k, p.seed, p.llm);
  for (int64_t c = 0; c < p.k; ++c)
    if (f[size_t(c)] != 1.0f) out.push_back(c);
  return out;
}

// `a` (rows x k row-major) with the columns `cols` set to zero.
template <class T>
std::vector<T> without_columns(std::vector<T> a, int64_t k, const std::vector<int64_t>& cols) {
  for (size_t r = 0; r < a.size() / size_t(k); ++r)
    for (int64_t c : cols) a[r * size_t(k) + size_t(c)] = T{};
  return a;
}

// ---- The host model (--cpu-model): the quantization alone, no GPU -----------------------------------

// N(0, 1) from the engine by Box-Muller (the same on every platform, unlike std::normal_distribution).
std::vector<float> host_normals(std::mt19937_64& rng, int64_t count) {
  std::vector<float> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; i += 2) {
    const double u1 = (double(rng() >> 11) + 1.0) * 0x1.0p-53, u2 = double(rng() >> 11) * 0x1.0p-53;  // u1 in (0, 1]
    const double r = std::sqrt(-2.0 * std::log(u1));
    x[size_t(i)] = float(r * std::cos(2 * std::numbers::pi * u2));
    if (i + 1 < count) x[size_t(i + 1)] = float(r * std::sin(2 * std::numbers::pi * u2));
  }
  return x;
}

int run_cpu_model(const Args& a, Csv& csv) {
  for (const Point& pt : points(a)) {
    const Problem& p = pt.p;
    std::mt19937_64 rng(p.seed);
    std::vector<float> x = host_normals(rng, int64_t(p.m) * p.k), w = host_normals(rng, int64_t(p.n) * p.k);
    if (p.dist == Dist::llm) {
      scale_by_grid_host(x, column_grid(p.m, p.k), llm_channel_factors(p.k, p.seed, p.llm));
      scale_by_grid_host(w, weight_grid_128x128(p.n, p.k), llm_block_sigmas(p.n, p.k, p.seed, p.llm));
    }
    auto product = [&](const std::vector<float>& a, const std::vector<float>& b) {  // fp64, rounded to fp32
      const std::vector<double> c = cpu_gemm_dequant(std::vector<double>(a.begin(), a.end()),
                                                     std::vector<double>(b.begin(), b.end()), p.m, p.n, p.k);
      return std::vector<float>(c.begin(), c.end());
    };
    const std::vector<int64_t> outliers = outlier_channels(p);
    const std::vector<float> truth = product(x, w);
    const std::vector<float> truth_ordinary = outliers.empty() ? std::vector<float>{} : product(without_columns(x, p.k, outliers), w);
    for (const Scheme& s : schemes(p.m, p.n, p.k)) {
      std::vector<float> sa, sb;
      const std::vector<__nv_fp8_storage_t> qa = quantize_host(x, s.ga, sa), qb = quantize_host(w, s.gb, sb);
      auto values = [](const std::vector<__nv_fp8_storage_t>& q) {
        std::vector<float> v(q.size());
        for (size_t i = 0; i < q.size(); ++i) v[i] = e4m3_value(q[i]);
        return v;
      };
      const std::vector<double> b64 = dequantize_host(values(qb), sb, s.gb);
      auto oracle = [&](const std::vector<float>& qa_values) {  // the dequantized product, rounded to bf16 as the GPU oracle's
        const std::vector<double> c = cpu_gemm_dequant(dequantize_host(qa_values, sa, s.ga), b64, p.m, p.n, p.k);
        std::vector<float> out(c.size());
        for (size_t i = 0; i < c.size(); ++i) out[i] = __bfloat162float(__double2bfloat16(c[i]));
        return out;
      };
      Result r{"exact", "fp64 oracle", "host model", rel_err(oracle(values(qa)), truth, p.m, p.n), 0, "-"};
      if (!outliers.empty()) r.err_ordinary = rel_err(oracle(without_columns(values(qa), p.k, outliers)), truth_ordinary, p.m, p.n);
      csv.row(pt, s.name, r, fp8_census(x, qa), fp8_census(w, qb), "host model", "");
    }
  }
  return 0;
}

// ---- The GPU sweep ------------------------------------------------------------------------------------

std::vector<float> to_host(const float* d, size_t count) {
  std::vector<float> h(count);
  if (count) CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<__nv_fp8_storage_t> bytes_to_host(const __nv_fp8_storage_t* d, size_t count) {
  std::vector<__nv_fp8_storage_t> h(count);
  if (count) CUDA_CHECK(cudaMemcpy(h.data(), d, count, cudaMemcpyDeviceToHost));
  return h;
}

// The operands of one scaling on the device: e4m3 bytes and scales in the grid's layout, plus the
// scales written out for a block-scaled kernel (expand_scales) where the grids nest in its blocks.
struct Quantized {
  DeviceBuffer<__nv_fp8_storage_t> qa, qb;
  DeviceBuffer<float> sa, sb, sfa, sfb;
};

DeviceBuffer<float> upload(const std::vector<float>& h) {
  DeviceBuffer<float> d(h.size());
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(d.get(), h.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

// C (m x n bf16, device) with a kernel's result, as fp32 on the host.
std::vector<float> c_to_host(const DeviceBuffer<__nv_bfloat16>& c) {
  std::vector<__nv_bfloat16> h(c.size());
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(h.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost));
  std::vector<float> out(h.size());
  for (size_t i = 0; i < h.size(); ++i) out[i] = __bfloat162float(h[i]);
  return out;
}

struct Sweep {
  const Args& a;
  Csv& csv;
  DeviceInfo dev;
  Gpu gpu;
  Step unpromoted, promoted, block;
  bool all_passed = true;

  // Runs `launch` into C (NaN first), checks it against `deq` (tolerance of the problem's inputs) and
  // measures it against both products.
  Result measure(const Problem& p, const std::function<void(__nv_bfloat16*)>& launch, const std::vector<float>& deq,
                 const std::vector<float>& truth, std::string accumulation, std::string kernel, std::string detail) {
    DeviceBuffer<__nv_bfloat16> c(size_t(p.m) * p.n);
    CUDA_CHECK(cudaMemset(c.get(), 0xFF, c.bytes()));  // NaN: an element the kernel skipped fails
    launch(c.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got = c_to_host(c);
    Tolerance tol{Dtype::fp8, false, p.k};
    if (p.dist != Dist::normal) tol.sum_rms = rms(deq);  // as ProblemBuffers::check_against
    const CheckReport r = compare(got, deq, {}, {}, p.m, p.n, tol);
    if (!r.passed) {
      all_passed = false;
      fmt::print(stderr, "{} {} at K={}: {}\n", kernel, detail, p.k, r.summary());
    }
    return {std::move(accumulation), std::move(kernel), std::move(detail), rel_err(got, truth, p.m, p.n),
            r.rel_rms_err, r.passed ? "pass" : "FAIL"};
  }

  // One cuBLASLt FP8 run, or a line saying why cuBLASLt has none for this scaling and mode.
  void lt(const Point& pt, const Scheme& s, const Fp8Gemm& g, bool fast, LtScales scales, const std::vector<float>& deq,
          const std::vector<float>& truth, const Fp8Census& ca, const Fp8Census& cb) {
    std::unique_ptr<LtGemm> lt;
    try {
      lt = std::make_unique<LtGemm>(g, fast, 1, scales);
    } catch (const Error& e) {
      fmt::print("# cuBLASLt {} {}: not run: {}\n", s.name, fast ? "fast accumulation" : "default", e.what());
      return;
    }
    const Result r = measure(pt.p, [&](__nv_bfloat16* c) { lt->run(0, g.a, g.b, c, nullptr); }, deq, truth,
                             fast ? "tensor_core" : "cublaslt_default", fast ? "cuBLASLt fast" : "cuBLASLt", lt->describe(0));
    csv.row(pt, s.name, r, ca, cb, dev.name, dev.cublas);
  }

  // One step of the series, given the scales in the layout of its own scaling.
  void step(const Point& pt, const Scheme& s, const Step& st, Fp8Gemm g, const char* accumulation,
            const std::vector<float>& deq, const std::vector<float>& truth, const Fp8Census& ca, const Fp8Census& cb) {
    const Problem& p = pt.p;
    if (auto why = refusal(st, p.m, p.n, p.k, &gpu)) {
      fmt::print("# step {} {}: not run: {}\n", st.id, s.name, *why);
      return;
    }
    DeviceBuffer<char> workspace(st.workspace_bytes ? st.workspace_bytes(p.m, p.n, p.k) : 0);
    if (workspace.bytes()) CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    g.workspace = workspace.get();
    g.workspace_bytes = workspace.bytes();
    g.scaling = st.scaling;
    const Result r = measure(p, [&](__nv_bfloat16* c) { g.c = c; st.fp8(g, nullptr); }, deq, truth, accumulation,
                             "step " + st.id, st.id + "_" + st.name);
    csv.row(pt, s.name, r, ca, cb, dev.name, dev.cublas);
  }

  void run(const Point& pt) {
    const Problem& p = pt.p;
    Fp8Inputs in = fp8_inputs(p);
    DeviceBuffer<float> want(size_t(p.m) * p.n);
    oracle_fp32_device(in.a.get(), in.b.get(), p.m, p.n, p.k, want.get());
    const std::vector<float> truth = to_host(want.get(), want.size());
    const std::vector<float> x = to_host(in.a.get(), size_t(p.m) * p.k), w = to_host(in.b.get(), size_t(p.n) * p.k);
    // The ordinary channels' share (Result::err_ordinary): the unquantized product without A's outliers.
    const std::vector<int64_t> outliers = outlier_channels(p);
    std::vector<float> truth_ordinary;
    if (!outliers.empty()) {
      const DeviceBuffer<float> x0 = upload(without_columns(x, p.k, outliers));
      oracle_fp32_device(x0.get(), in.b.get(), p.m, p.n, p.k, want.get());
      truth_ordinary = to_host(want.get(), want.size());
    }
    const ScaleGrid fa = activation_grid_1x128(p.m, p.k), fb = weight_grid_128x128(p.n, p.k);
    for (const Scheme& s : schemes(p.m, p.n, p.k)) {
      const std::string name = s.name;
      Quantized q{DeviceBuffer<__nv_fp8_storage_t>(x.size()), DeviceBuffer<__nv_fp8_storage_t>(w.size()),
                  DeviceBuffer<float>(size_t(s.ga.count())), DeviceBuffer<float>(size_t(s.gb.count())), {}, {}};
      quantize_device(in.a.get(), s.ga, q.qa.get(), q.sa.get());
      quantize_device(in.b.get(), s.gb, q.qb.get(), q.sb.get());
      oracle_fp8_device(q.qa.get(), q.sa.get(), s.ga, q.qb.get(), q.sb.get(), s.gb, p.m, p.n, p.k, want.get());
      const std::vector<float> deq = to_host(want.get(), want.size());
      const std::vector<__nv_fp8_storage_t> qa_host = bytes_to_host(q.qa.get(), x.size());
      const Fp8Census ca = fp8_census(x, qa_host);
      const Fp8Census cb = fp8_census(w, bytes_to_host(q.qb.get(), w.size()));
      Result oracle{"exact", "fp64 oracle", "the quantized inputs' fp64 product, rounded to bf16", rel_err(deq, truth, p.m, p.n), 0, "-"};
      if (!outliers.empty()) {
        const std::vector<__nv_fp8_storage_t> qa0 = without_columns(qa_host, p.k, outliers);
        DeviceBuffer<__nv_fp8_storage_t> d_qa0(qa0.size());
        CUDA_CHECK(cudaMemcpy(d_qa0.get(), qa0.data(), qa0.size(), cudaMemcpyHostToDevice));
        oracle_fp8_device(d_qa0.get(), q.sa.get(), s.ga, q.qb.get(), q.sb.get(), s.gb, p.m, p.n, p.k, want.get());
        oracle.err_ordinary = rel_err(to_host(want.get(), want.size()), truth_ordinary, p.m, p.n);
      }
      csv.row(pt, s.name, oracle, ca, cb, dev.name, dev.cublas);
      Fp8Gemm g{p.m, p.n, p.k, reinterpret_cast<const __nv_fp8_e4m3*>(q.qa.get()),
                reinterpret_cast<const __nv_fp8_e4m3*>(q.qb.get()), nullptr};
      if (name == "per_tensor" || name == "per_row") {  // the per-tensor pointers (per_row: m and n floats)
        g.scaling = Scaling::per_tensor;
        g.scale_a = q.sa.get();
        g.scale_b = q.sb.get();
      }
      if (name == "per_tensor") {
        step(pt, s, unpromoted, g, "tensor_core", deq, truth, ca, cb);
        step(pt, s, promoted, g, "promoted", deq, truth, ca, cb);
      }
      const LtScales lt_scales = name == "per_row" ? LtScales::outer_vector : LtScales::as_problem;
      if (name == "row_128" || name == "block") {  // block-scaled kernels: the scales in 1 x 128 / 128 x 128 layout
        q.sfa = upload(expand_scales(to_host(q.sa.get(), q.sa.size()), s.ga, fa));
        q.sfb = upload(expand_scales(to_host(q.sb.get(), q.sb.size()), s.gb, fb));
        g.scaling = Scaling::block;
        g.sfa = q.sfa.get();
        g.sfb = q.sfb.get();
        step(pt, s, block, g, "promoted", deq, truth, ca, cb);
      }
      if (name != "row_128") {
        lt(pt, s, g, false, lt_scales, deq, truth, ca, cb);
        if (name != "block") lt(pt, s, g, true, lt_scales, deq, truth, ca, cb);  // block scaling has no fast mode
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"FP8 error against the fp64 product of the unquantized inputs, per scaling (per tensor, per row, "
               "1x128/128x128 blocks), with and without promotion, as K grows (docs/fp8.md)"};
  Args a;
  app.add_option("--m", a.m, "rows of A and C (default 256)")->check(cli::decimal)->check(CLI::Range(1, 1 << 16));
  app.add_option("--n", a.n, "rows of B, columns of C (default 256)")->check(cli::decimal)->check(CLI::Range(1, 1 << 16));
  app.add_option("--ks", a.ks, "comma-separated K (each a multiple of 16; default 256,1024,4096,16384,65536)")
      ->delimiter(',')->check(CLI::Range(16, 1 << 20));
  app.add_option("--dists", a.dists, "comma-separated inputs: normal, llm (default both)")
      ->delimiter(',')->check(CLI::IsMember({"normal", "llm"}));
  app.add_option("--outlier-maxes", a.outlier_maxes, "llm: comma-separated largest outlier factors (log-uniform from 10; default 1000)")
      ->delimiter(',')->check(cli::finite)->check(CLI::Range(10.0, 1e30));
  app.add_option("--seed", a.seed, "the inputs' seed (as a step program's --seed)")->check(cli::decimal)->check(CLI::Range(0.0, 4294967295.0));
  app.add_option("--csv", a.csv, "append the rows to this CSV (they are printed either way)");
  app.add_option("--unpromoted-step", a.unpromoted, "the per-tensor step that keeps K in the tensor core (default 30)");
  app.add_option("--promoted-step", a.promoted, "the per-tensor step that promotes (default 31)");
  app.add_option("--block-step", a.block, "the block-scaled step (default 34)");
  app.add_flag("--cpu-model", a.cpu_model, "the quantization alone, on the host (no GPU; fp64 oracle rows only)");
  if (const int status = cli::parse(app, argc, argv, "lab_fp8_outliers"); status >= 0) return status;
  for (int k : a.ks)
    if (k % 16 != 0) {
      fmt::print(stderr, "error: lab_fp8_outliers: K={} is not a multiple of 16 (the FP8 steps' and cuBLASLt's TMA rows)\n", k);
      return 2;
    }
  try {
    if (a.cpu_model) {
      Csv csv(a.csv);
      return run_cpu_model(a, csv);
    }
    std::vector<Step> steps;
    try {
      for (const std::string& id : {a.unpromoted, a.promoted, a.block}) steps.push_back(find_step(id));
    } catch (const Error& e) {  // an id that is not registered: bad input
      fmt::print(stderr, "error: lab_fp8_outliers: {}\n", e.what());
      return 2;
    }
    if (steps[0].dtype != Dtype::fp8 || steps[0].scaling != Scaling::per_tensor || steps[1].dtype != Dtype::fp8 ||
        steps[1].scaling != Scaling::per_tensor || steps[2].dtype != Dtype::fp8 || steps[2].scaling != Scaling::block) {
      fmt::print(stderr, "error: lab_fp8_outliers: --unpromoted-step and --promoted-step name per-tensor fp8 steps, "
                 "--block-step a block-scaled one\n");
      return 2;
    }
    if (cuda_device_count() == 0) {
      fmt::print(stderr, "error: lab_fp8_outliers: no CUDA device found (--cpu-model runs without one)\n");
      return 2;
    }
    Csv csv(a.csv);
    const DeviceInfo dev = query_device();
    Sweep sweep{a, csv, dev, gpu_of(dev), steps[0], steps[1], steps[2]};
    fmt::print("# {}\n# {}\n", describe(sweep.dev), kHeader);
    for (const Point& pt : points(a)) sweep.run(pt);
    fmt::print("lab_fp8_outliers: {}\n", sweep.all_passed ? "every run passed its check against its dequantized oracle"
                                                          : "FAIL: a run failed its check (lines above)");
    return sweep.all_passed ? 0 : 1;
  } catch (const OutOfMemory& e) {
    fmt::print(stderr, "error: lab_fp8_outliers: {}\n", e.what());
    return 2;
  } catch (const Error& e) {
    fmt::print(stderr, "error: lab_fp8_outliers: {}\n", e.what());
    return 1;
  }
}
