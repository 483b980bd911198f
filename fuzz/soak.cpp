// build/bin/soak (`make soak`): the last bf16 steps, launched back to back for minutes over a rotating
// set of shapes, the way a training job runs them. Every Nth launch's C is checked against cuBLAS (the
// harness's own comparison) and compared bit for bit with the first result of the same step and shape:
// a stream-K fixup, a ring position or a counter that drifts after thousands of launches shows up as a
// mismatch or as different bits. Reports launches, checks, mismatches and bit differences (both must be
// 0), and the SM clock and power range NVML saw. A check copies C to the host and compares it there, so
// with a small --check-every the GPU idles through the checks; a larger one (100 and up) keeps it
// near its power cap for longer stretches.
//   build/bin/soak --minutes 10                       the default steps, 10 minutes
//   build/bin/soak --steps 23 --minutes 1 --check-every 5
// Exit status: 0 when every check passed and every result had the same bits; 1 otherwise or on a CUDA
// error; 2 for bad arguments or no GPU.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../common/harness/cli_checks.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/problem.hpp"
#include "../common/harness/runner.hpp"
#include "../common/harness/telemetry.hpp"
#include "../common/harness/watchdog.hpp"
#include "../common/kernel_lib/check.hpp"

using gemm::Step;

namespace {

struct Shape {
  int m, n, k;
  const char* what;
};

// The rotation: squares, a ragged edge, and the shapes where the stream-K steps split (many waves and
// a nearly empty one; under a quarter wave; 4 waves and a few tiles), sized so that one launch takes
// 0.1-10 ms and a minute holds thousands of launches.
const std::vector<Shape> kShapes = {
    {4096, 4096, 4096, "square"},
    {8192, 8192, 4608, "many waves, a nearly empty last one"},
    {2304, 3840, 2304, "4 waves and 12 tiles of 128x128"},
    {512, 1024, 4096, "under a quarter wave, long K"},
    {1445, 2856, 72, "ragged edges, a K tail"},
    {1536, 3072, 2304, "one wave and 12 tiles of 128x256"},
};

// The default steps: the last bf16 step and every bf16 step with a stream-K workspace.
std::vector<Step> default_steps() {
  std::vector<Step> out;
  const auto all = gemm::registered_steps();
  const Step* last = nullptr;
  for (const Step& s : all)
    if (!s.fixture && s.dtype == gemm::Dtype::bf16) last = &s;
  for (const Step& s : all)
    if (!s.fixture && s.dtype == gemm::Dtype::bf16 && (s.workspace_bytes || &s == last)) out.push_back(s);
  return out;
}

struct Work {
  const Step* step;
  Shape shape;
  std::unique_ptr<gemm::ProblemBuffers> buffers;
  std::vector<float> reference;  // cuBLAS, once
  std::vector<float> first;      // the step's first result, bit for bit
  long launches = 0, checks = 0, mismatches = 0, bit_diffs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Soak: the last bf16 steps, launched back to back over a rotating set of shapes for minutes; every "
               "Nth result checked against cuBLAS and compared bit for bit with the first"};
  double minutes = 10;
  int check_every = 10, per_visit = 50;
  std::vector<std::string> step_ids;
  app.add_option("--minutes", minutes, "how long to run (default 10)")->check(CLI::Range(0.01, 600.0));
  app.add_option("--check-every", check_every, "check every Nth launch of a step and shape (default 10)")->check(CLI::Range(1, 1000000));
  app.add_option("--per-visit", per_visit, "launches of one step and shape before the next (default 50)")->check(CLI::Range(1, 1000000));
  gemm::cli::add_steps_option(app, step_ids, "comma-separated step ids (default: the last bf16 step and the stream-K ones)");
  if (const int status = gemm::cli::parse(app, argc, argv, "soak"); status >= 0) return status;

  std::vector<Step> steps;
  try {
    steps = step_ids.empty() ? default_steps() : gemm::cli::named_steps(step_ids);
  } catch (const gemm::Error& e) {  // a step id that is not registered: bad input
    fmt::print(stderr, "error: soak: {}\n", e.what());
    return 2;
  }
  try {
    if (gemm::cuda_device_count() == 0) {
      fmt::print(stderr, "error: soak: no CUDA device found\n");
      return 2;
    }
    const gemm::DeviceInfo dev = gemm::query_device();
    const gemm::Gpu gpu = gemm::gpu_of(dev);
    std::vector<Work> work;
    for (const Step& s : steps)
      for (const Shape& sh : kShapes) {
        if (auto why = gemm::refusal(s, sh.m, sh.n, sh.k, &gpu)) {
          fmt::print(stderr, "error: soak: step {} refuses {}x{}x{}: {}\n", s.id, sh.m, sh.n, sh.k, *why);
          return 2;
        }
        work.push_back({&s, sh, nullptr, {}, {}});
      }
    fmt::print("# {}\n# soak: steps", gemm::describe(dev));
    for (const Step& s : steps) fmt::print(" {}", s.id);
    fmt::print(", {} shapes, {:.1f} minutes, every {}th launch checked\n", kShapes.size(), minutes, check_every);
    std::fflush(stdout);

    // Buffers and references first, outside the soak's time (cuBLAS runs once per shape and step).
    for (Work& w : work) {
      w.buffers = std::make_unique<gemm::ProblemBuffers>(gemm::Problem{gemm::Dtype::bf16, w.shape.m, w.shape.n, w.shape.k});
      gemm::reserve_workspace(*w.step, *w.buffers);
      w.reference = w.buffers->cublas_reference();
    }
    gemm::Sampler sampler;
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::duration<double>(minutes * 60);
    for (size_t visit = 0; std::chrono::steady_clock::now() < until; ++visit) {
      Work& w = work[visit % work.size()];
      gemm::Watchdog dog(fmt::format("soak: step {} at {}x{}x{} did not finish a visit in 120 s (a hang)", w.step->id,
                                     w.shape.m, w.shape.n, w.shape.k),
                         std::chrono::seconds(120));
      for (int i = 0; i < per_visit; ++i) {
        const bool check = w.launches % check_every == 0;
        if (check) w.buffers->reset_output(nullptr);  // NaN: an element a launch skipped fails
        gemm::launch_step(*w.step, *w.buffers, nullptr);
        CUDA_CHECK_LAUNCH();
        ++w.launches;
        if (!check) continue;
        CUDA_CHECK(cudaDeviceSynchronize());
        ++w.checks;
        const gemm::CheckReport r = w.buffers->check_against_reference(w.reference);
        if (!r.passed) {
          ++w.mismatches;
          fmt::print("MISMATCH step {} {}x{}x{} launch {}: {}\n", w.step->id, w.shape.m, w.shape.n, w.shape.k,
                     w.launches, r.summary());
        }
        std::vector<float> c = w.buffers->download_c();
        if (w.first.empty()) {
          w.first = std::move(c);
        } else if (!std::equal(c.begin(), c.end(), w.first.begin(), [](float x, float y) {
                     return std::memcmp(&x, &y, sizeof x) == 0;
                   })) {
          ++w.bit_diffs;
          fmt::print("BITS step {} {}x{}x{} launch {}: C differs from the first result\n", w.step->id, w.shape.m,
                     w.shape.n, w.shape.k, w.launches);
        }
      }
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sampler.stop();
    const gemm::TelemetrySummary t = sampler.summary();
    long launches = 0, checks = 0, mismatches = 0, bit_diffs = 0;
    std::map<std::string, long> per_step;
    for (const Work& w : work) {
      launches += w.launches, checks += w.checks, mismatches += w.mismatches, bit_diffs += w.bit_diffs;
      per_step[w.step->id] += w.launches;
      fmt::print("{} {:>5}x{:<5}x{:<5} {:<40} launches {:>7} checks {:>5} mismatches {} bit differences {}\n",
                 w.step->id, w.shape.m, w.shape.n, w.shape.k, w.shape.what, w.launches, w.checks, w.mismatches,
                 w.bit_diffs);
    }
    if (t.available)
      fmt::print("NVML over {:.0f} s: SM clock {:.0f}-{:.0f} MHz (mean {:.0f}), power up to {:.0f} W (mean {:.0f} W), "
                 "clock reasons: {}\n", t.seconds, t.clock_min_mhz, t.clock_max_mhz, t.clock_mean_mhz, t.power_max_w,
                 t.power_mean_w, gemm::clock_reason_names(t.reasons));
    else
      fmt::print("clock and power: {}\n", gemm::Nvml::get().why_not());
    fmt::print("soak: {:.1f} minutes, {} launches, {} checks, {} mismatches, {} bit differences: {}\n", seconds / 60,
               launches, checks, mismatches, bit_diffs, mismatches == 0 && bit_diffs == 0 ? "PASS" : "FAIL");
    return mismatches == 0 && bit_diffs == 0 ? 0 : 1;
  } catch (const gemm::Error& e) {
    fmt::print(stderr, "error: soak: {}\n", e.what());
    return 1;
  }
}
