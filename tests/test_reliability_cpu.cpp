// Reliability tests that need no GPU: the wrong-capability refusal through its seam
// (gemm::capability_refusal), the 16-byte-row refusals of steps 06-09, the tolerance against a real
// error (one dropped product at K = 8192), ptxas warnings in the build, one clear line and a
// non-zero exit for every kind of bad input (step executables, make, the fuzzer, the sanitizer
// script), the fuzzer's seeded draws, and scripts/sanitize.sh's verdicts against a stub sanitizer
// (it must fail when the deliberately broken fixtures are not reported).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../common/harness/compare.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/harness/runner.hpp"
#include "support.hpp"

using namespace gemm;
namespace fs = std::filesystem;

namespace {

/// The build folder (the parent of this binary's folder) and the repository (the current directory
/// when it holds the Makefile, as under `make test`, else the build folder's parent).
fs::path build_dir() { return gemm_test::binary_dir().parent_path(); }
fs::path repo_dir() { return gemm_test::repo_dir(); }

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Lines of `text` that start with `prefix`.
std::vector<std::string> lines_with_prefix(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

/// Runs `command`; a crash (signal) fails the calling test.
gemm_test::CommandResult run(const std::string& command) {
  gemm_test::CommandResult r = gemm_test::run_command(command);
  INFO(command << "\n" << r.output);
  REQUIRE(r.exited);
  return r;
}

/// Runs a binary next to this test binary with `args`.
gemm_test::CommandResult run_bin(const std::string& name, const std::string& args) {
  return run(quote((gemm_test::binary_dir() / name).string()) + " " + args);
}

/// A refused input: exit 2, exactly one line starting "error:", and it contains `what`.
void expect_one_clear_line(const gemm_test::CommandResult& r, const std::string& what, int status = 2) {
  INFO(r.output);
  CHECK(r.status == status);
  const auto errors = lines_with_prefix(r.output, "error:");
  CHECK(errors.size() == 1);
  if (!errors.empty()) CHECK_THAT(errors.front(), Catch::Contains(what));
}

/// Files under `dir` (not recursing) whose name ends in .txt and whose text holds "warning".
std::vector<std::string> ptxas_reports_with_warnings(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".txt") continue;
    std::ifstream in(e.path());
    for (std::string l; std::getline(in, l);)
      if (l.find("warning") != std::string::npos) {
        out.push_back(e.path().filename().string() + ": " + l);
        break;
      }
  }
  return out;
}

}  // namespace

TEST_CASE("Hopper steps are refused on any compute capability but 9.0 (refusal() with a Gpu)", "[cpu][reliability]") {
  for (const Step& s : registered_steps()) {
    CAPTURE(s.id);
    for (auto [major, minor] : {std::pair{8, 0}, {8, 9}, {9, 0}, {10, 0}, {12, 0}, {7, 5}}) {
      const Gpu gpu{major, minor, "Test GPU"};
      const auto why = refusal(s, 128, 128, 128, &gpu);  // a shape every step takes
      if (!s.required_cc || major * 10 + minor == s.required_cc) {
        CHECK_FALSE(why.has_value());
        continue;
      }
      REQUIRE(why.has_value());
      CHECK_THAT(*why, Catch::Contains(fmt::format("step {} is built for compute capability 9.0 only", s.id)) &&
                           Catch::Contains(fmt::format("this GPU (Test GPU) is {}.{}", major, minor)));
      CHECK(why->find('\n') == std::string::npos);  // one line
    }
  }
  // The Hopper steps do need 9.0 (a step that forgot required_cc would run sm_90a code anywhere).
  int hopper = 0;
  for (const Step& s : registered_steps()) hopper += !s.fixture && s.dtype == Dtype::bf16 && s.required_cc == 90;
  CHECK(hopper >= 1);
}

// Moved from a GPU-only test of tests/test_fp32_ladder.cpp, where CI (no GPU) never ran them.
TEST_CASE("steps 06-09 refuse N % 4 != 0 and K % 4 != 0 with the reason; 04 and 05 accept them", "[cpu][reliability]") {
  struct S { int m, n, k; const char* why; };
  // Each step with what it should do: true where its float4 / cp.async loads need 16-byte aligned rows.
  for (const auto& [id, aligned] : {std::pair{"04", false}, {"05", false}, {"06", true}, {"07", true}, {"08", true},
                                    {"09", true}}) {
    const Step step = find_step(id);
    for (S s : {S{64, 66, 64, "N=66 is not a multiple of 4"}, S{64, 64, 66, "K=66 is not a multiple of 4"},
                S{33, 161, 96, "N=161 is not a multiple of 4"}, S{8, 8, 5, "K=5 is not a multiple of 4"}}) {
      INFO(fmt::format("step {} M={} N={} K={}", id, s.m, s.n, s.k));
      const auto why = refusal(step, s.m, s.n, s.k);
      if (aligned) {
        REQUIRE(why.has_value());
        CHECK_THAT(*why, Catch::Contains(s.why) && Catch::Contains("16-byte aligned"));
      } else {
        CHECK_FALSE(why.has_value());
      }
    }
    CHECK_FALSE(refusal(step, 1, 4, 4).has_value());
    CHECK_FALSE(refusal(step, 4097, 4100, 4104).has_value());
  }
}

TEST_CASE("tolerance: one dropped product at K = 8192 is outside it for most elements; fp32 rounding is inside", "[cpu][reliability][tolerance]") {
  // Random normal A (m x K) and B (K x n), as the GPU checks draw them. The reference is the fp64
  // product rounded to fp32. A correct fp32 kernel (here: a sequential fp32 sum, the worst common
  // order) must pass; the same sum without the product of k = 4096 (fixture x6's bug) must fail
  // almost everywhere: |a b| of two N(0, 1) values is below the tolerance 16 * 2^-24 * 8192 ~ 0.0078
  // only ~3% of the time.
  const int m = 24, n = 24, K = 8192;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(size_t(m) * K), b(size_t(K) * n);
  for (float& v : a) v = normal(rng);
  for (float& v : b) v = normal(rng);
  std::vector<float> want(size_t(m) * n), got(want.size()), dropped(want.size());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      float sum = 0, sum_dropped = 0;
      for (int k = 0; k < K; ++k) {
        const float p = a[size_t(i) * K + k] * b[size_t(k) * n + j];
        exact += double(a[size_t(i) * K + k]) * b[size_t(k) * n + j];
        sum += p;
        if (k != 4096) sum_dropped += p;
      }
      want[size_t(i) * n + j] = float(exact);
      got[size_t(i) * n + j] = sum;
      dropped[size_t(i) * n + j] = sum_dropped;
    }
  const std::vector<float> guard(16, std::numeric_limits<float>::quiet_NaN());
  const Tolerance tol{Dtype::fp32, false, K, 1.0, 0.0};
  const CheckReport right = compare(got, want, {}, guard, m, n, tol);
  INFO(right.summary());
  CHECK(right.passed);
  const CheckReport wrong = compare(dropped, want, {}, guard, m, n, tol);
  INFO(wrong.summary());
  CHECK_FALSE(wrong.passed);
  CHECK(wrong.mismatches > 0.9 * m * n);
}

TEST_CASE("ptxas: no step's report holds a warning (the build's `|| true` hides them)", "[cpu][reliability][ptxas]") {
  const fs::path reports = build_dir() / "ptxas";
  if (!fs::exists(reports / "01_naive.txt")) {
    gemm_test::mark_skipped("no build/ptxas reports next to this binary: run where the build happened");
    return;
  }
  for (const std::string& w : ptxas_reports_with_warnings(reports)) FAIL_CHECK(w);
  // The scan can fail: the SASS twin tests/sass_twins/ptxas_warning.cu draws a real ptxas warning.
  const fs::path twins = reports / "sass_twins";
  REQUIRE(fs::exists(twins / "ptxas_warning.txt"));
  const auto hits = ptxas_reports_with_warnings(twins);
  CHECK(std::any_of(hits.begin(), hits.end(), [](const std::string& h) { return h.rfind("ptxas_warning.txt", 0) == 0; }));
}

TEST_CASE("bad input to a step executable: one clear line and exit 2", "[cpu][reliability][exe]") {
  if (!gemm_test::have_executables({"01_naive", "06_vectorized_loads", "09_async_copy_pipeline", "12_larger_tiles",
                                    "14_two_consumers"}))
    return;
  // Numbers: not a number, negative, too large for an int, fractional.
  expect_one_clear_line(run_bin("01_naive", "--m 12x"), "--m");
  expect_one_clear_line(run_bin("01_naive", "--n -5"), "--n");
  expect_one_clear_line(run_bin("01_naive", "--k 99999999999"), "--k");
  expect_one_clear_line(run_bin("01_naive", "--m 1.5"), "--m");
  expect_one_clear_line(run_bin("01_naive", "--reps 3"), "--reps");
  // Conflicting flags.
  expect_one_clear_line(run_bin("01_naive", "--check-only --no-check"), "excludes");
  expect_one_clear_line(run_bin("01_naive", "--series s.csv"), "--series needs --sustained");
  expect_one_clear_line(run_bin("01_naive", "--profile-once step --check-only"), "--profile-once");
  expect_one_clear_line(run_bin("14_two_consumers", "--m 64 --n 64 --k 64 --alpha 2"), "apply to fp32 steps only");
  // Unsupported shapes (refused before any GPU is looked for).
  expect_one_clear_line(run_bin("06_vectorized_loads", "--m 64 --n 66 --k 64"), "N=66 is not a multiple of 4");
  expect_one_clear_line(run_bin("09_async_copy_pipeline", "--m 64 --n 64 --k 66"), "K=66 is not a multiple of 4");
  expect_one_clear_line(run_bin("14_two_consumers", "--m 64 --n 64 --k 12"), "K % 8 == 0");
  // A missing GPU (on a machine with one, a valid run passes instead).
  const auto r = run_bin("12_larger_tiles", "--m 64 --n 64 --k 64 --check-only");
  if (cuda_device_count() == 0) expect_one_clear_line(r, "no CUDA device found");
}

TEST_CASE("bad input to make: an unknown step id is one clear line and a non-zero exit", "[cpu][reliability][make]") {
  if (!gemm_test::have_repo("the Makefile")) return;
  if (gemm_test::run_command("make --version").status != 0) {
    gemm_test::mark_skipped("no make on PATH");
    return;
  }
  // make bench without a GPU stops before compiling, in one line; with one (a stand-in nvidia-smi) the
  // same makefile parses and would build and run (a dry run: nothing is built).
  const fs::path smi_dir = build_dir() / "make-bench-test", no_smi_dir = build_dir() / "make-bench-test-none";
  fs::create_directories(smi_dir);
  fs::create_directories(no_smi_dir);
  std::ofstream(smi_dir / "nvidia-smi") << "#!/bin/sh\necho 'GPU 0: Stand-in (UUID: GPU-0)'\n";
  std::ofstream(no_smi_dir / "nvidia-smi") << "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2; exit 9\n";  // as with no driver
  fs::permissions(smi_dir / "nvidia-smi", fs::perms::owner_all);
  fs::permissions(no_smi_dir / "nvidia-smi", fs::perms::owner_all);
  for (const std::string goal : {"bench", "bench-sweep", "bench-waves", "bench-shapes"}) {
    const auto none = run("PATH=" + quote(no_smi_dir.string()) + ":$PATH make -n -s --no-print-directory -C " +
                          quote(repo_dir().string()) + " " + goal);
    INFO("make " << goal << " (no GPU)\n" << none.output);
    CHECK(none.status != 0);
    CHECK_THAT(none.output, Catch::Contains("needs an NVIDIA GPU") && !Catch::Contains("unterminated"));
    // With a GPU, make would first remake its dependency stamp: only where the build made it (not on a
    // GPU machine handed the executables alone, where installing is not the test's business).
    if (!fs::exists(build_dir() / ".deps-ok")) {
      WARN("make " << goal << " with a stand-in GPU: not tried, no " << (build_dir() / ".deps-ok").string());
      continue;
    }
    const auto gpu = run("PATH=" + quote(smi_dir.string()) + ":$PATH make -n -s --no-print-directory -C " +
                         quote(repo_dir().string()) + " " + goal);
    INFO("make " << goal << " (a stand-in GPU)\n" << gpu.output);
    CHECK(gpu.status == 0);
    CHECK_THAT(gpu.output, Catch::Contains("scripts/bench.py"));
  }
  fs::remove_all(smi_dir);
  fs::remove_all(no_smi_dir);
  for (const std::string goal : {"99", "run STEP=99", "sass STEP=7", "diff A=05 B=97"}) {
    const auto r = run("make -n -s --no-print-directory -C " + quote(repo_dir().string()) + " " + goal);
    INFO("make " << goal << "\n" << r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Catch::Contains("no step '"));
    CHECK(lines_with_prefix(r.output, "mk/goals.mk:").size() == 1);  // the goal checks live in mk/goals.mk
  }
}

TEST_CASE("fuzz: --help, bad input, no GPU, and seeded draws that cover every family and reproduce", "[cpu][reliability][fuzz]") {
  if (!gemm_test::have_executables({"fuzz"})) return;
  const auto help = run_bin("fuzz", "--help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output, Catch::Contains("--seed") && Catch::Contains("--count") && Catch::Contains("--steps"));
  expect_one_clear_line(run_bin("fuzz", "--steps 06,zz --dry-run"), "no step 'zz'");
  expect_one_clear_line(run_bin("fuzz", "--count 0"), "--count");
  if (cuda_device_count() == 0) expect_one_clear_line(run_bin("fuzz", "--count 10"), "no CUDA device");

  // 800 draws of steps 06 and 14: every family appears, some draws are refusals of each step and
  // most are not, sizes stay modest, and the same seed gives the same draws.
  const auto a = run_bin("fuzz", "--seed 7 --count 800 --steps 06,14 --dry-run");
  REQUIRE(a.status == 0);
  CHECK(a.output == run_bin("fuzz", "--seed 7 --count 800 --steps 06,14 --dry-run").output);
  CHECK(a.output != run_bin("fuzz", "--seed 8 --count 800 --steps 06,14 --dry-run").output);
  for (const char* family : {"(tiny ", "(prime ", "(skinny ", "(flat ", "(k-stages ", "(tile-edge ", "(ragged ", "(grid-limit "})
    CHECK_THAT(a.output, Catch::Contains(family));
  const auto lines06 = lines_with_prefix(a.output, "06 "), lines14 = lines_with_prefix(a.output, "14 ");
  CHECK(lines06.size() == 400);
  CHECK(lines14.size() == 400);
  // The small-M family is the bf16 steps' alone, a quarter of their draws.
  auto count_of = [](const std::vector<std::string>& lines, const char* what) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  CHECK(count_of(lines06, "(small-m ") == 0);
  CHECK(count_of(lines14, "(small-m ") >= 60);
  CHECK(count_of(lines14, "(small-m ") <= 140);
  for (const auto* lines : {&lines06, &lines14}) {
    const auto refused = std::count_if(lines->begin(), lines->end(), [](const std::string& l) { return l.find(" refused: ") != std::string::npos; });
    CHECK(refused >= 10);
    CHECK(refused <= 200);
  }
  // Shape 123 of step 06, drawn alone, is the same as in the whole sequence.
  const auto one = run_bin("fuzz", "--seed 7 --count 1 --steps 06 --first 123 --dry-run");
  REQUIRE(one.status == 0);
  CHECK(one.output == lines06.at(123) + "\n");
  // --menu: the family's menu entries, each by its name, with draws of their own; a swapped entry
  // refuses M past its width as declared; --steps picks entries by name.
  const auto menu = run_bin("fuzz", "--seed 7 --menu --count " + std::to_string(100 * gemm::family::menu::kBf16.size()) +
                                        " --dry-run");  // 100 a menu entry
  REQUIRE(menu.status == 0);
  const auto pp = lines_with_prefix(menu.output, "pp128x128-s6 "), sw = lines_with_prefix(menu.output, "pp128x8-swap-");
  CHECK(pp.size() == 100);
  CHECK(sw.size() == 100);
  CHECK(count_of(sw, "refused: a narrow swapped tile is for M <= its width") >= 10);
  const auto picked = run_bin("fuzz", "--seed 7 --menu --steps pp128x128-s6 --count 100 --dry-run");
  REQUIRE(picked.status == 0);
  CHECK(lines_with_prefix(picked.output, "pp128x128-s6 ") == pp);
}

TEST_CASE("soak: --help, bad input and no GPU are one clear line and the right exit", "[cpu][reliability][soak]") {
  if (!gemm_test::have_executables({"soak"})) return;
  const auto help = run_bin("soak", "--help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output, Catch::Contains("--minutes") && Catch::Contains("--check-every") && Catch::Contains("--steps"));
  expect_one_clear_line(run_bin("soak", "--steps 23,zz"), "no step 'zz'");
  expect_one_clear_line(run_bin("soak", "--minutes 0"), "--minutes");
  if (cuda_device_count() == 0) expect_one_clear_line(run_bin("soak", "--minutes 0.1"), "no CUDA device");
}

TEST_CASE("sanitize.sh: bad input, and its verdicts against a stub sanitizer (fixtures must be caught)", "[cpu][reliability][sanitize]") {
  if (!gemm_test::have_repo("scripts/sanitize.sh")) return;
  const fs::path script = repo_dir() / "scripts/sanitize.sh";
  REQUIRE(fs::exists(script));
  const auto help = run(quote(script.string()) + " --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output, Catch::Contains("racecheck") && Catch::Contains("initcheck"));
  expect_one_clear_line(run(quote(script.string()) + " --tools memcheck,bogus"), "unknown tool 'bogus'");
  expect_one_clear_line(run(quote(script.string()) + " --frobnicate"), "unknown argument");
  // A malformed shape or a missing value is refused before anything runs (else xargs shifts the words).
  expect_one_clear_line(run(quote(script.string()) + " --shapes 1:2"), "is not M:N:K");
  expect_one_clear_line(run(quote(script.string()) + " --shapes 4:0:8"), "is not M:N:K");
  expect_one_clear_line(run(quote(script.string()) + " --shapes"), "needs a value");
  if (!gemm_test::have_executables({"fixture_racy"})) return;

  // A stub in place of compute-sanitizer: it runs nothing and reports what STUB_MODE asks for.
  const fs::path dir = build_dir() / "sanitize-stub-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path stub = dir / "compute-sanitizer";
  std::ofstream(stub) << "#!/usr/bin/env bash\n"
                         "# args: --tool T --error-exitcode 99 [filters] BIN --m M --n N --k K --check-only\n"
                         "tool=$2 bin=$(basename \"${@: -8:1}\")\n"
                         "probe=$(basename \"${@: -2:1}\") mode=${@: -1}\n"
                         "if [ \"$probe\" = probe_racecheck_ring ]; then  # the ring probe: its values line, and\n"
                         "  echo \"$mode (offset 0): 256 values right\"  # st reported as on an H100 (every mode in finding)\n"
                         "  if [ $mode = st ] || { [ \"$STUB_MODE\" = finding ] && [ $mode != st ]; }; then\n"
                         "    echo '========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'; exit 99; fi\n"
                         "  exit 0; fi\n"
                         "if [ \"$STUB_MODE\" = honest ] && [ $tool = racecheck ] && [ $bin = fixture_racy ]; then\n"
                         "  echo '========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)'; exit 99; fi\n"
                         "if [ \"$STUB_MODE\" = honest ] && [ $tool = memcheck ] && [ $bin = fixture_oob ]; then\n"
                         "  echo '========= Invalid __global__ read of size 4 bytes'; exit 99; fi\n"
                         "if [ $tool = racecheck ] && [ $bin = 06_vectorized_loads ]; then  # the reference's kernel\n"
                         "  echo '========= Error: Race reported between Read access at nvjet_sm90_tss_x+0x9c0'\n"
                         "  echo '=========     and Write access at nvjet_sm90_tss_x+0x46e0 [7680 hazards]'\n"
                         "  [ \"$STUB_MODE\" = finding ] && echo '========= Error: Race reported between Read access at gemm_vec+0x10'\n"
                         "  echo '06_vectorized_loads fp32 M=67 N=92 K=48: check against cuBLAS PASS (max |err| 0)'\n"
                         "  echo '========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'; exit 99; fi\n"
                         "if [ $tool = initcheck ] && [ $bin = 01_naive ]; then  # inside cuBLAS's split-K reduction\n"
                         "  echo '========= Uninitialized __global__ memory read of size 4 bytes'\n"
                         "  echo '=========     at void cublasLt::splitKreduce_kernel<32, 16>(cublasLt::cublasSplitKParams<float>)+0xc40'\n"
                         "  echo '01_naive fp32 M=67 N=92 K=48: check against cuBLAS PASS (max |err| 0)'; exit 99; fi\n"
                         "if [ \"$STUB_MODE\" = finding ] && [ $tool = initcheck ] && [ $bin = 06_vectorized_loads ]; then\n"
                         "  echo '========= Uninitialized __global__ memory read of size 4 bytes'; exit 99; fi\n"
                         "if [ \"$STUB_MODE\" = hang ] && [ $bin = 06_vectorized_loads ]; then  # a run that never ends\n"
                         "  exec sleep 997; fi\n"
                         "echo '========= ERROR SUMMARY: 0 errors'; exit 0\n";
  fs::permissions(stub, fs::perms::owner_all);
  auto sanitize = [&](const std::string& mode) {
    return run("STUB_MODE=" + mode + " SANITIZE_NO_PROBE=1 COMPUTE_SANITIZER=" + quote(stub.string()) + " OUT=" +
               quote((dir / mode).string()) + " " + quote(script.string()) + " --build " + quote(build_dir().string()) +
               " --steps 01,06");
  };
  const auto honest = sanitize("honest");
  CHECK(honest.status == 0);
  CHECK_THAT(honest.output, Catch::Contains("racecheck  fixture_racy") && Catch::Contains("caught as expected"));
  CHECK(lines_with_prefix(honest.output, "memcheck   06_vectorized_loads").size() == 1);
  const auto init_ref = lines_with_prefix(honest.output, "initcheck  01_naive");
  REQUIRE(init_ref.size() == 1);  // initcheck's reports only inside cuBLAS's kernels pass, and say so
  CHECK_THAT(init_ref.front(), Catch::Contains("PASS") && Catch::Contains("only inside cuBLAS's reference kernels"));
  // Hazards that racecheck places only inside cuBLAS's nvjet kernels (the reference) pass, and say so ...
  const auto ref_races = lines_with_prefix(honest.output, "racecheck  06_vectorized_loads");
  REQUIRE(ref_races.size() == 1);
  CHECK_THAT(ref_races.front(), Catch::Contains("PASS") && Catch::Contains("cuBLAS's reference kernels at 67x92x48"));
  // The ring probe: st32 clean as it must be, st's report named for what it is.
  const auto st32 = lines_with_prefix(honest.output, "racecheck  probe st32");
  REQUIRE(st32.size() == 1);
  CHECK_THAT(st32.front(), Catch::Contains("clean, as it must be"));
  const auto noinc32 = lines_with_prefix(honest.output, "racecheck  probe noinc32");  // step 40's pattern
  REQUIRE(noinc32.size() == 1);
  CHECK_THAT(noinc32.front(), Catch::Contains("clean, as it must be"));
  const auto st = lines_with_prefix(honest.output, "racecheck  probe st ");
  REQUIRE(st.size() == 1);
  CHECK_THAT(st.front(), Catch::Contains("1 hazard(s): racecheck does not follow __syncwarp"));
  // A sanitizer that reports nothing (not wired in) fails the run: both fixtures went unreported.
  const auto blind = sanitize("blind");
  CHECK(blind.status == 1);
  CHECK_THAT(blind.output, Catch::Contains("fixture_racy") && Catch::Contains("NOT reported"));
  CHECK_THAT(blind.output, Catch::Contains("fixture_oob"));
  // A finding on a step fails its line and the run.
  const auto finding = sanitize("finding");
  CHECK(finding.status == 1);
  const auto bad = lines_with_prefix(finding.output, "initcheck  06_vectorized_loads");
  REQUIRE(bad.size() == 1);
  CHECK_THAT(bad.front(), Catch::Contains("FAIL") && Catch::Contains("Uninitialized"));
  // A report on the probe's st32 (each reading lane arrives, as step 40's do) fails its line.
  const auto st32_bad = lines_with_prefix(finding.output, "racecheck  probe st32");
  REQUIRE(st32_bad.size() == 1);
  CHECK_THAT(st32_bad.front(), Catch::Contains("FAIL"));
  const auto noinc32_bad = lines_with_prefix(finding.output, "racecheck  probe noinc32");  // step 40's own pattern
  REQUIRE(noinc32_bad.size() == 1);
  CHECK_THAT(noinc32_bad.front(), Catch::Contains("FAIL"));
  // ... but one more in the step's own kernel fails the line.
  const auto own_race = lines_with_prefix(finding.output, "racecheck  06_vectorized_loads");
  REQUIRE(own_race.size() == 1);
  CHECK_THAT(own_race.front(), Catch::Contains("FAIL") && Catch::Contains("hazard"));
  // A run that hangs is ended at the per-run limit and fails its line, leaving no process behind; so
  // is every run when sanitize.sh itself is stopped (a GPU visit's time limit).
  const std::string hang_env = "STUB_MODE=hang SANITIZE_NO_PROBE=1 COMPUTE_SANITIZER=" + quote(stub.string()) + " OUT=" +
                               quote((dir / "hang").string()) + " ";
  const std::string hang_args = " --build " + quote(build_dir().string()) + " --steps 06 --tools memcheck";
  const auto hung = run(hang_env + "SANITIZER_RUN_TIMEOUT_S=1 " + quote(script.string()) + hang_args);
  CHECK(hung.status == 1);
  const auto hung_line = lines_with_prefix(hung.output, "memcheck   06_vectorized_loads");
  REQUIRE(hung_line.size() == 1);
  CHECK_THAT(hung_line.front(), Catch::Contains("FAIL") && Catch::Contains("timed out after 1 s"));
  const auto stopped = run(hang_env + "timeout 3 " + quote(script.string()) + hang_args);
  CHECK(stopped.status == 124);
  CHECK(run("sleep 1; pgrep -f '[s]leep 997'").status != 0);  // 1: nothing matches ([s]: not this shell)
  fs::remove_all(dir);
}

TEST_CASE("docs: every relative link and image of the Markdown exists, and a broken one fails the check", "[cpu][docs]") {
  if (!gemm_test::have_repo("scripts/check_links.py")) return;
  const fs::path root = repo_dir();
  if (gemm_test::run_command("python3 --version").status != 0) {
    gemm_test::mark_skipped("no python3 on PATH");
    return;
  }
  const auto ok = run("python3 " + quote((root / "scripts/check_links.py").string()) + " --root " + quote(root.string()));
  CHECK(ok.status == 0);
  CHECK_THAT(ok.output, Catch::Contains(", 0 broken"));
  // The twin: a file with a missing image, a missing file, a missing heading and a file named in inline
  // code instead of a link must fail, one line each (a path that names no file stays code).
  const fs::path tmp = fs::temp_directory_path() / ("gemm_links_" + std::to_string(::getpid()));
  fs::create_directories(tmp / "img");
  {
    std::ofstream(tmp / "img/there.png") << "x";
    std::ofstream(tmp / "a.md") << "# Title\n\n## A section\n\n![fine](img/there.png) [fine](a.md#a-section)\n"
                                   "![gone](img/missing.png) [gone](nowhere.md) [bad anchor](a.md#no-such-heading)\n"
                                   "`[in code](not-a-link.md)`\n```\n[in a fence](not-a-link-either.md)\n```\n"
                                   "unlinked: `img/there.png`; linked: [`img/there.png`](img/there.png); no file: `img/none.png`\n";
  }
  const auto bad = run("python3 " + quote((root / "scripts/check_links.py").string()) + " --root " + quote(tmp.string()) +
                       " " + quote((tmp / "a.md").string()));
  fs::remove_all(tmp);
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("broken link img/missing.png") && Catch::Contains("broken link nowhere.md") &&
                             Catch::Contains("no heading #no-such-heading") &&
                             Catch::Contains("`img/there.png` names a file of the repository") && Catch::Contains("4 broken"));
}

TEST_CASE("docs: measured numbers in the machine, Hopper, benchmarking, every-shape and FP8 chapters' tables (profiler tables too), every chapter's quoted TFLOP/s and paired ratios, the walkthroughs and the captions are the committed results'; a changed one fails", "[cpu][docs]") {
  if (!gemm_test::have_repo("scripts/check_numbers.py")) return;
  const fs::path root = repo_dir();
  if (gemm_test::run_command("python3 --version").status != 0) {
    gemm_test::mark_skipped("no python3 on PATH");
    return;
  }
  const std::string tool = "python3 " + quote((root / "scripts/check_numbers.py").string());
  const auto ok = run(tool + " --root " + quote(root.string()));
  CHECK(ok.status == 0);
  CHECK_THAT(ok.output, Catch::Contains(", 0 disagree"));
  // The twin: a copy of the inputs in which the machine chapter's early-steps table quotes step 02 off
  // by 3, a walkthrough quotes a TFLOP/s no result holds, and a kernel header carries a Measured line.
  const fs::path tmp = fs::temp_directory_path() / ("gemm_numbers_" + std::to_string(::getpid()));
  fs::create_directories(tmp / "docs");
  fs::copy(root / "kernels", tmp / "kernels", fs::copy_options::recursive);
  fs::copy(root / "results", tmp / "results", fs::copy_options::recursive);
  fs::copy(root / "sass_annotations", tmp / "sass_annotations", fs::copy_options::recursive);
  fs::copy_file(root / "docs/machine.md", tmp / "docs/machine.md");
  fs::copy_file(root / "docs/hopper_part1.md", tmp / "docs/hopper_part1.md");
  fs::copy_file(root / "docs/benchmarking.md", tmp / "docs/benchmarking.md");
  fs::copy_file(root / "docs/every_shape.md", tmp / "docs/every_shape.md");
  fs::copy_file(root / "docs/hopper_part2.md", tmp / "docs/hopper_part2.md");
  fs::copy_file(root / "docs/fp8.md", tmp / "docs/fp8.md");
  fs::copy(root / "docs/notebook", tmp / "docs/notebook", fs::copy_options::recursive);  // runs a paragraph links
  // Adds `delta` to the first number `pattern` captures in `file`; returns the number as now written.
  auto bump = [](const fs::path& file, const std::regex& pattern, double delta) {
    std::stringstream ss;
    ss << std::ifstream(file).rdbuf();
    std::string text = ss.str();
    std::smatch m;
    REQUIRE(std::regex_search(text, m, pattern));
    const std::string now = fmt::format("{:.1f}", std::stod(m[1].str()) + delta);
    text.replace(size_t(m.position(1)), size_t(m.length(1)), now);
    std::ofstream(file) << text;
    return now;
  };
  const std::string quoted_sol = bump(tmp / "docs/machine.md", std::regex(R"(\| 02 coalescing \| (\d+\.\d) \|)"), 3.0);
  const std::string quoted_ratio = bump(tmp / "docs/hopper_part1.md", std::regex(R"(\| 12 \| [^|]+\| (\d\.\d+) \|)"), 0.2);
  const std::string quoted_range = bump(tmp / "docs/benchmarking.md", std::regex(R"(\| 21 \| 8192³ \| [\d.]+–([\d.]+) \()"), 0.1);
  const std::string quoted_us = bump(tmp / "docs/every_shape.md", std::regex(R"(\| 8200³ \| (\d+) µs)"), 100.0);
  const std::string quoted_cycles = bump(tmp / "docs/hopper_part2.md", std::regex(R"(\| SM cycles \| (2143\.9) k)"), 10.0);
  const std::string quoted_promote = bump(tmp / "docs/fp8.md", std::regex(R"(\| every 64 K \(2 k32\) \| ([\d.]+) \[)"), 0.1);
  std::ofstream(tmp / "sass_annotations/99_twin.md") << "The twin measured 9876.5 TFLOP/s at 4096.\n";
  // A chapter's prose: a paired ratio with its quartiles off by 0.1, a TFLOP/s no result holds, and the
  // same kind of number in a paragraph that says it is a prediction (left out).
  {
    std::stringstream ss;
    ss << std::ifstream(tmp / "docs/every_shape.md").rdbuf();
    std::string text = ss.str();
    const std::string was = "1.009× cuBLAS [1.004–1.013]";
    const size_t at = text.find(was);
    REQUIRE(at != std::string::npos);
    text.replace(at, was.size(), "1.109× cuBLAS [1.004–1.013]");
    // A plausible TFLOP/s that some other shape's row holds: the paragraph names 2050 x 2050 x 2048,
    // so only that shape's rows may speak for it.
    const std::string was_tflops = "ran at 163 TFLOP/s there";
    const size_t at_tflops = text.find(was_tflops);
    REQUIRE(at_tflops != std::string::npos);
    text.replace(at_tflops, was_tflops.size(), "ran at 170 TFLOP/s there");
    std::ofstream(tmp / "docs/every_shape.md") << text
                                                 << "\nThe twin's step ran 8765.4 TFLOP/s.\n\n**The prediction.** About\n"
                                                    "8765.3 TFLOP/s.\n";
  }
  {
    std::stringstream ss;
    ss << std::ifstream(tmp / "kernels/16_tma_store_epilogue.cu").rdbuf();
    std::ofstream(tmp / "kernels/16_tma_store_epilogue.cu") << "// Measured (H200): 697.9 TFLOP/s at 4096.\n" << ss.str();
  }
  const auto bad = run(tool + " --root " + quote(tmp.string()));
  fs::remove_all(tmp);
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("machine.md: step 02 at 4096: tflops " + quoted_sol) &&
                             Catch::Contains("99_twin.md:1: 9876.5 TFLOP/s is in no committed result") &&
                             Catch::Contains("16_tma_store_epilogue.cu: the header quotes a measurement") &&
                             Catch::Contains("hopper_part1.md: part 1's table, step 12: " + quoted_ratio) &&
                             Catch::Contains("five-process row 21 8192³, ratio: " + quoted_range) &&
                             Catch::Contains("8200³, 27_swap_to_m: " + quoted_us) &&
                             Catch::Contains(quoted_cycles + " is in none of the linked profiles") &&
                             Catch::Contains("promotion 'every 64 K (2 k32)' at 4096: " + quoted_promote) &&
                             Catch::Contains("the ratio 1.109 [1.004–1.013] is in no committed result") &&
                             Catch::Contains("8765.4 TFLOP/s is in no committed result") &&
                             Catch::Contains("170 TFLOP/s is in no committed result (results/, at 2050x2050x2048)") &&
                             !Catch::Contains("8765.3") && Catch::Contains("11 disagree"));
}
