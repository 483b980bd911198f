// build/bin/fuzz (`make fuzz`): every built step on randomly drawn, seeded shapes, checked against
// cuBLAS (fp8 steps: the fp64 oracle of the dequantized product) with the harness's own check
// (gemm::check_step); a shape outside a step's declared
// constraints (gemm::refusal) must be refused with a message and never launched (C stays all
// NaN). Every check runs under a watchdog: a hang ends the run naming the step and the shape.
//   build/bin/fuzz --seed 1 --count 3000               all steps, 3000 shapes in all
//   build/bin/fuzz --seed 1 --steps 06,14 --count 400  two steps
//   build/bin/fuzz --seed 1 --steps 06 --first 17 --count 1   shape 17 of step 06 again
//   build/bin/fuzz --seed 1 --count 30 --dry-run       print the draws (no GPU needed)
//   build/bin/fuzz --seed 1 --menu --count 2000        the family's menu (family/menu.hpp), every entry
// Shape i of a step depends only on (seed, step id, i), so --first/--count re-draw it exactly, and a
// failure prints the step executable's own command for it. Output: one line per failure, one summary
// line per step, then "N passed, N failed". Exit 0: all passed; 1: a failure; 2: bad input or no
// CUDA device; 3: the watchdog fired.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/kernel_lib/check.hpp"
#include "../common/harness/cli_checks.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/fp8.hpp"
#include "../common/harness/watchdog.hpp"
#include "../common/harness/options.hpp"
#include "../common/harness/runner.hpp"
#include "../common/kernel_lib/family/menu_steps.hpp"

namespace fuzz {

using gemm::Dtype;
using gemm::Step;

/// One drawn case: the shape, the mode and where it came from (for the reproduction lines).
struct Draw {
  int m = 1, n = 1, k = 1;
  float alpha = 1, beta = 0;
  bool exact = false;
  uint64_t seed = 0;   ///< the Problem's input seed (the step executable's --seed)
  std::string kind;    ///< which family of shapes it was drawn from
  int index = 0;       ///< its number within the step's sequence (fuzz --first)
};

/// splitmix64: a well-mixed 64-bit hash, so neighbouring (seed, step, index) give unrelated streams.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The primes below `limit` (a small sieve).
std::vector<int> primes_below(int limit) {
  std::vector<bool> composite(limit, false);
  std::vector<int> out;
  for (int i = 2; i < limit; ++i) {
    if (composite[i]) continue;
    out.push_back(i);
    for (int64_t j = int64_t(i) * i; j < limit; j += i) composite[j] = true;
  }
  return out;
}

/// Draws shape `index` of step `step` for run seed `seed`: a pure function of the three.
/// Families: tiny, prime, skinny (M or N of 1-16, K up to 8192), flat (K of 1-32), K of one to a
/// few pipeline stages, tile boundaries +-1, ragged mid-size, and grid-limit (M or N past 65535
/// blocks of 128 on a grid axis, tiny otherwise); for the bf16 steps also small-m (M of 1-64 or 65, half
/// the time one of the edges 1, 2, 7, 8, 16, 31, 32, 33, 63, 64, 65; N and K of 8-8192: the decode
/// shapes, which step 24 runs swapped), a quarter of their draws, so that with the other families'
/// small M about 45 % of a bf16 step's draws have M <= 64. A drawn shape the step refuses is kept as a
/// refusal check 30% of the time; otherwise N and K are rounded up to multiples of 8 first (and M
/// folded into 1 .. BN where only that makes the step take it), so most draws of the steps with
/// alignment constraints still run. Sizes are capped (M*N <= 3M elements,
/// M*N*K <= 2.5e8; grid-limit draws have K <= 8) so thousands of checks take minutes.
Draw draw(const Step& step, uint64_t seed, int index) {
  uint64_t h = seed;
  for (char c : step.id) h = mix(h ^ uint64_t(uint8_t(c)));
  std::mt19937_64 rng(mix(h ^ mix(uint64_t(index) + 0x5151)));
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  static const std::vector<int> primes = primes_below(2100);
  auto prime = [&](int hi) {
    const auto end = std::upper_bound(primes.begin(), primes.end(), hi);
    return primes[std::uniform_int_distribution<size_t>(0, size_t(end - primes.begin()) - 1)(rng)];
  };
  auto edge = [&](std::initializer_list<int> tiles, int max_mult) {
    const int t = *(tiles.begin() + uni(0, int(tiles.size()) - 1));
    return std::max(1, t * uni(1, max_mult) + uni(-1, 1));
  };
  Draw d;
  d.index = index;
  static const char* kinds[] = {"tiny", "prime", "skinny", "flat", "k-stages", "tile-edge", "ragged", "grid-limit", "small-m"};
  int family = index % 16 == 15 && chance(0.5) ? 7 : uni(0, 6);  // grid-limit: ~3% (large C)
  if (step.dtype != Dtype::fp32 && family != 7 && chance(0.25)) family = 8;  // small-m: bf16 and fp8 steps only
  d.kind = kinds[family];
  switch (family) {
    case 0: d.m = uni(1, 16), d.n = uni(1, 16), d.k = uni(1, 16); break;
    case 1: d.m = prime(1031), d.n = prime(1031), d.k = prime(2053); break;
    case 2:
      d.k = uni(1024, 8192);
      if (chance(0.5)) d.m = uni(1, 16), d.n = uni(16, 2048);
      else d.n = uni(1, 16), d.m = uni(16, 2048);
      break;
    case 3: d.m = uni(256, 2048), d.n = uni(256, 2048), d.k = uni(1, 32); break;
    case 4: d.m = uni(1, 700), d.n = uni(1, 700), d.k = uni(1, 5 * 64 + 8); break;
    case 5: d.m = edge({16, 32, 64, 128, 256}, 5), d.n = edge({16, 32, 64, 128, 256}, 5), d.k = edge({8, 16, 32, 64}, 8); break;
    case 6: d.m = uni(100, 1500), d.n = uni(100, 1500), d.k = uni(8, 700); break;
    case 8: {
      static const int edges[] = {1, 2, 7, 8, 16, 31, 32, 33, 63, 64, 65};
      d.m = chance(0.5) ? edges[uni(0, 10)] : uni(1, 64), d.n = uni(8, 8192), d.k = uni(8, 8192);
      break;
    }
    default:
      if (chance(0.5)) d.m = 65535 * 128 + uni(1, 200), d.n = uni(1, 4);
      else d.n = 65535 * 128 + uni(1, 200), d.m = uni(1, 4);
      d.k = uni(1, 8);
  }
  if (gemm::refusal(step, d.m, d.n, d.k) && !chance(0.3)) {
    const int align = step.dtype == Dtype::fp8 ? 16 : 8;  // fp8: 16 one-byte elements per 16-byte TMA row pitch
    d.n = (d.n + align - 1) / align * align;
    d.k = (d.k + align - 1) / align * align;
    // A step that still refuses, but takes M folded into 1 .. BN (a swapped menu entry, which takes M
    // only up to its width): the folded M.
    const int folded = 1 + (d.m - 1) % std::max(1, step.tile.bn);
    if (family != 7 && gemm::refusal(step, d.m, d.n, d.k) && !gemm::refusal(step, folded, d.n, d.k)) d.m = folded;
  }
  while (family != 7 && (double(d.m) * d.n > 3e6 || double(d.m) * d.n * d.k > 2.5e8)) {
    if (d.k > 8192 || (d.k >= d.m && d.k >= d.n && d.k > 8)) d.k = std::max(8, d.k / 16 * 8);
    else if (d.m >= d.n) d.m = std::max(1, d.m / 2);
    else d.n = std::max(8, d.n / 16 * 8);
  }
  d.exact = chance(0.5) && !(step.dtype == Dtype::fp8 && d.k > gemm::kMaxExactKFp8);  // fp8.hpp: exact K bound
  if (step.dtype == Dtype::fp32 && chance(0.5)) {
    // Values exactly representable with few digits, so the printed command reproduces them exactly.
    if (d.exact) {
      static const float alphas[] = {-2, -1, 1, 2, 3}, betas[] = {0, 1, -1, 2};
      d.alpha = alphas[uni(0, 4)], d.beta = betas[uni(0, 3)];
    } else {
      static const float alphas[] = {0.5f, 1.5f, -0.75f, 2.25f, -1}, betas[] = {0, 0.5f, -1.25f, 1};
      d.alpha = alphas[uni(0, 4)], d.beta = betas[uni(0, 3)];
    }
  }
  d.seed = mix(h ^ uint64_t(index)) % 1000000007ull;
  return d;
}

/// "M=.. N=.. K=.. alpha=.. beta=.. exact seed=.. (kind)"
std::string describe(const Step& step, const Draw& d) {
  std::string s = fmt::format("M={} N={} K={}", d.m, d.n, d.k);
  if (step.dtype == Dtype::fp32) s += fmt::format(" alpha={} beta={}", d.alpha, d.beta);
  return s + fmt::format("{} seed={} ({} #{})", d.exact ? " exact" : "", d.seed, d.kind, d.index);
}

/// The two commands that reproduce one draw: the step executable's own check, and this fuzzer on
/// exactly that draw.
std::string reproduce(const std::filesystem::path& bin_dir, const Step& step, const Draw& d, uint64_t seed) {
  if (step.id == step.name)  // a menu entry: no executable of its own
    return fmt::format("  reproduce: {} --seed {} --menu --steps {} --first {} --count 1", (bin_dir / "fuzz").string(), seed,
                       step.name, d.index);
  std::string exe = (bin_dir / (step.id + "_" + step.name)).string();
  exe += fmt::format(" --m {} --n {} --k {} --seed {}", d.m, d.n, d.k, d.seed);
  if (step.dtype == Dtype::fp32 && (d.alpha != 1 || d.beta != 0)) exe += fmt::format(" --alpha {} --beta {}", d.alpha, d.beta);
  exe += " --check-only";
  if (d.exact) exe += " --exact";
  return fmt::format("  reproduce: {}\n  or:        {} --seed {} --steps {} --first {} --count 1", exe,
                     (bin_dir / "fuzz").string(), seed, step.id, d.index);
}

/// The outcome of one draw: "" when it behaved (checked and passed, or refused as declared), else
/// the failure's description.
struct Outcome {
  bool refused = false;
  std::string failure;
};

/// Bytes of C that are no longer 0xFF (reset_output's NaN fill in fp32 and bf16): all of C when it
/// is at most 16 MiB, else its first and last 8 MiB.
int64_t bytes_changed(const gemm::ProblemBuffers& ws) {
  const gemm::Problem& p = ws.problem();
  const int64_t bytes = int64_t(p.m) * p.n * (p.dtype == Dtype::fp32 ? 4 : 2);  // fp8 steps write bf16 C
  const char* c = p.dtype == Dtype::fp32  ? reinterpret_cast<const char*>(ws.fp32_args().c)
                  : p.dtype == Dtype::bf16 ? reinterpret_cast<const char*>(ws.bf16_args().c)
                                           : reinterpret_cast<const char*>(ws.fp8_args().c);
  const int64_t chunk = std::min<int64_t>(bytes, int64_t(8) << 20);
  std::vector<unsigned char> host(size_t(chunk), 0);
  int64_t changed = 0;
  for (int64_t offset : {int64_t(0), bytes - chunk}) {
    CUDA_CHECK(cudaMemcpy(host.data(), c + offset, size_t(chunk), cudaMemcpyDeviceToHost));
    changed += std::count_if(host.begin(), host.end(), [](unsigned char b) { return b != 0xFF; });
    if (bytes <= chunk) break;
  }
  return changed;
}

/// Runs one draw: a refused shape must throw gemm::Error carrying the refusal and leave C all NaN
/// (nothing launched); an accepted one must pass check_step against cuBLAS.
Outcome run_one(const Step& step, const Draw& d) {
  const gemm::Problem p{step.dtype, d.m, d.n, d.k, d.alpha, d.beta, d.seed, d.exact, step.scaling};
  Outcome o;
  if (const auto why = gemm::refusal(step, d.m, d.n, d.k)) {
    o.refused = true;
    if (why->empty()) return {true, "refused with an empty message"};
    // C filled with NaN (beta = 0 for the buffers: with beta != 0 reset_output would copy C0 into C,
    // and a refusal does not depend on alpha or beta), so any byte that changes was written by a launch.
    gemm::Problem nan_c = p;
    nan_c.beta = 0;
    gemm::ProblemBuffers ws(nan_c);
    ws.reset_output(nullptr);
    try {
      gemm::check_step(step, ws, gemm::Oracle::cublas);
      return {true, fmt::format("shape_refusal says \"{}\" but check_step ran it", *why)};
    } catch (const gemm::Error& e) {
      if (std::string(e.what()).find(*why) == std::string::npos)
        return {true, fmt::format("refused with \"{}\", not the declared \"{}\"", e.what(), *why)};
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    const int64_t written = bytes_changed(ws);
    if (written) return {true, fmt::format("refused (\"{}\") but {} bytes of C were written: something launched", *why, written)};
    return o;
  }
  const gemm::CheckReport r = gemm::check_step(step, p, gemm::Oracle::cublas);
  if (!r.passed) o.failure = r.summary();
  return o;
}

/// Totals of one step's run.
struct Tally {
  int checked = 0, exact = 0, refused = 0, failed = 0;
  double seconds = 0;
};

int main(int argc, char** argv) {
  CLI::App app{"fuzz: every built step on randomly drawn, seeded shapes, checked against cuBLAS (fp8 steps: the fp64 oracle)"};
  uint64_t seed = 1;
  int count = 3000, first = 0, timeout_s = 120, max_failures = 20;
  std::vector<std::string> step_ids;
  bool dry_run = false, menu = false;
  app.add_option("--seed", seed, "run seed: shape i of a step depends only on (seed, step id, i)")
      ->check(gemm::cli::decimal)->check(CLI::Range(0.0, 4294967295.0));
  app.add_option("--count", count, "shapes in all, split evenly over the steps")->check(gemm::cli::decimal)->check(CLI::Range(1, 10000000));
  app.add_option("--first", first, "index of each step's first shape (with --count 1: re-run one draw)")
      ->check(CLI::Range(0, 1 << 30));
  gemm::cli::add_steps_option(app, step_ids, "step ids to fuzz, comma-separated (default: every built step)");
  app.add_option("--timeout-s", timeout_s, "watchdog limit per check, seconds")->check(CLI::Range(1, 3600));
  app.add_option("--max-failures", max_failures, "failures printed in full per step (all are counted)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_flag("--dry-run", dry_run, "print the draws and the refusals they meet, run nothing (no GPU needed)");
  app.add_flag("--menu", menu, "fuzz the family's menu entries (family/menu.hpp) instead of the steps; --steps then names entries");
  if (const int status = gemm::cli::parse(app, argc, argv, "fuzz"); status >= 0) return status;

  std::vector<Step> steps;
  try {
    if (menu) {
      // Each entry's id is its name: the draws depend on (seed, name, i), and the lines name the entry.
      std::string names;
      for (Step s : gemm::family::menu::bf16_steps()) {
        s.id = s.name;
        names += (names.empty() ? "" : ", ") + s.name;
        if (step_ids.empty() || std::find(step_ids.begin(), step_ids.end(), s.name) != step_ids.end()) steps.push_back(s);
      }
      for (const std::string& id : step_ids)
        if (std::none_of(steps.begin(), steps.end(), [&](const Step& s) { return s.name == id; }))
          throw gemm::Error("no menu entry '" + id + "' (the entries: " + names + ")");
    } else if (step_ids.empty()) {
      for (const Step& s : gemm::registered_steps())
        if (!s.fixture) steps.push_back(s);
    } else {
      steps = gemm::cli::named_steps(step_ids);
    }
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "error: fuzz: %s\n", e.what());
    return 2;
  }
  if (steps.empty()) {
    std::fprintf(stderr, "error: fuzz: no step to fuzz\n");
    return 2;
  }
  const int per_step = (count + int(steps.size()) - 1) / int(steps.size());
  const std::filesystem::path bin_dir = std::filesystem::path(argv[0]).parent_path();

  if (dry_run) {
    for (const Step& step : steps)
      for (int i = first; i < first + per_step; ++i) {
        const Draw d = draw(step, seed, i);
        const auto why = gemm::refusal(step, d.m, d.n, d.k);
        fmt::print("{} {}{}\n", step.id, describe(step, d), why ? " refused: " + *why : "");
      }
    return 0;
  }
  if (gemm::cuda_device_count() == 0) {
    std::fprintf(stderr, "error: fuzz: no CUDA device found (the fuzzer checks the steps on a GPU)\n");
    return 2;
  }
  const gemm::DeviceInfo dev = gemm::query_device();
  fmt::print("# {}\n# fuzz --seed {} --count {}: {} shapes for each of {} steps\n", gemm::describe(dev), seed, count,
             per_step, steps.size());
  std::fflush(stdout);

  int passed = 0, failed = 0, skipped_steps = 0;
  for (const Step& step : steps) {
    const std::string program = step.id == step.name ? step.name : step.id + "_" + step.name;
    const gemm::Gpu gpu = gemm::gpu_of(dev);
    // The GPU: a shape every step takes (M = 8 for a swapped menu entry, which takes M up to its width).
    auto why = gemm::refusal(step, 128, 128, 128, &gpu);
    if (why && !gemm::refusal(step, 8, 128, 128, &gpu)) why.reset();
    if (why) {
      fmt::print("{}: skipped: {}\n", program, *why);
      ++skipped_steps;
      continue;
    }
    Tally t;
    const auto start = std::chrono::steady_clock::now();
    for (int i = first; i < first + per_step; ++i) {
      const Draw d = draw(step, seed, i);
      Outcome o;
      {
        gemm::Watchdog dog(fmt::format("step {} {} did not finish in {} s (a hang); {} passed, {} failed before it\n{}",
                                        program, describe(step, d), timeout_s, passed, failed + 1,
                                        reproduce(bin_dir, step, d, seed)),
                           std::chrono::seconds(timeout_s), &gemm::Watchdog::exit_with);
        try {
          o = run_one(step, d);
        } catch (const gemm::Error& e) {
          o.failure = fmt::format("error: {}", e.what());
        } catch (const std::bad_alloc&) {
          o.failure = "out of host memory";
        }
      }
      if (o.failure.empty()) {
        ++passed;
        if (o.refused) ++t.refused;
        else ++t.checked, t.exact += d.exact;
      } else {
        ++failed;
        ++t.failed;
        if (t.failed <= max_failures)
          fmt::print("FAIL {} {}: {}\n{}\n", program, describe(step, d), o.failure, reproduce(bin_dir, step, d, seed));
        // A sticky CUDA error (illegal address, ...) poisons the context: nothing after it can run.
        const cudaError_t sticky = cudaDeviceSynchronize();
        if (sticky != cudaSuccess) {
          fmt::print("{}: the CUDA context is lost ({}); stopping\n{} passed, {} failed\n", program,
                     cudaGetErrorString(sticky), passed, failed);
          return 1;
        }
      }
    }
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{}: {} {} shapes: {} checked against {} ({} exact), {} refused as declared, {} failed ({:.1f} s)\n",
               program, t.failed ? "FAIL" : "PASS", per_step, t.checked,
               step.dtype == Dtype::fp8 ? "the fp64 oracle" : "cuBLAS", t.exact, t.refused, t.failed, t.seconds);
    std::fflush(stdout);
  }
  if (skipped_steps) fmt::print("{} step(s) skipped: they need another GPU\n", skipped_steps);
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace fuzz

int main(int argc, char** argv) { return fuzz::main(argc, argv); }
