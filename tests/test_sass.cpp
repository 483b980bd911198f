// SASS tests (no GPU needed): run scripts/sass/sass.py on the dumps `make test` made of every step and
// of the bad twins in tests/sass_twins/, and assert the verdicts:
//   - every step meets sass_annotations/all.expect and its own NN_*.expect;
//   - every twin fails the step rules its header lists as must-fail (so each check is proven able to
//     fail), passes its must-pass rules (so it fails for the intended reason), and the real step
//     passes the same must-fail rules;
//   - every SASS/PTX line quoted in sass_annotations/NN_*.md is in the current dump.
// The checker itself is Python (the parsers, loop finder and rules live there once); these tests
// run it and fail on its verdict, its exit status or its absence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

namespace fs = std::filesystem;

namespace {

struct Paths {
  fs::path repo, build;
};

// The build folder is the one this binary sits in (BUILD/bin/tests); the repository is the current
// directory when it has the tooling (make runs from the root), else the build folder's parent.
const Paths& paths() {
  static const Paths p = [] {
    Paths q;
    q.build = gemm_test::binary_dir().parent_path();
    q.repo = fs::exists("scripts/sass/sass.py") ? fs::current_path() : q.build.parent_path();
    return q;
  }();
  return p;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  int status = -1;
  std::string out;
};

// Runs sass.py with `args` (already quoted), stdout and stderr together.
Run sass_py(const std::string& args) {
  const gemm_test::CommandResult r = gemm_test::run_command(
      "python3 " + shell_quote((paths().repo / "scripts/sass/sass.py").string()) + " --build " +
      shell_quote(paths().build.string()) + " " + args);
  return {r.status, r.output};
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

// The SASS checks read the objects next to this binary; a machine that was only handed the binary
// (the GPU machine) has none, and the cases count as skipped there, never as passed.
bool have_objects_or_skip() {
  if (fs::exists(paths().build / "obj" / "kernels") && fs::exists(paths().repo / "scripts/sass/sass.py")) return true;
  gemm_test::mark_skipped("no kernel objects or scripts/sass next to this binary: the SASS checks run where "
                          "the build happened (make test)");
  return false;
}

struct Twin {
  std::string step;  // "06", or "all"
  std::vector<std::string> must_fail, must_pass;
};

Twin read_twin(const std::string& name) {
  Twin t;
  std::ifstream in(paths().repo / "tests/sass_twins" / (name + ".cu"));
  REQUIRE(in.good());
  const std::regex field(R"(^// (twin-of|must-fail|must-pass): (.+?)\s*$)");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, field)) continue;
    if (m[1] == "twin-of") t.step = m[2];
    else (m[1] == "must-fail" ? t.must_fail : t.must_pass).push_back(m[2]);
  }
  return t;
}

// The rules (one per line, comments and `function`/`launch` lines dropped) of the expectation files
// that apply to `step`: all.expect, plus NN_*.expect unless step is "all".
std::vector<std::string> step_rules(const std::string& step) {
  std::vector<fs::path> files{paths().repo / "sass_annotations/all.expect"};
  if (step != "all")
    for (const auto& e : fs::directory_iterator(paths().repo / "sass_annotations")) {
      const std::string n = e.path().filename().string();
      if (n.rfind(step + "_", 0) == 0 && e.path().extension() == ".expect") files.push_back(e.path());
    }
  std::vector<std::string> rules;
  for (const auto& f : files) {
    std::ifstream in(f);
    for (std::string l; std::getline(in, l);) {
      if (l.empty() || l[0] == '#') continue;
      if (const auto c = l.find(" #"); c != std::string::npos) l.resize(c);
      while (!l.empty() && l.back() == ' ') l.pop_back();
      rules.push_back(l);
    }
  }
  return rules;
}

std::string rule_args(const std::vector<std::string>& rules) {
  std::string a;
  for (const auto& r : rules) a += " --rule " + shell_quote(r);
  return a;
}

// The twin fails every must-fail rule (each a real rule of its step), passes its must-pass rules,
// and the real step passes the must-fail rules.
void check_twin(const std::string& name) {
  if (!have_objects_or_skip()) return;
  const Twin t = read_twin(name);
  REQUIRE(!t.step.empty());
  REQUIRE(!t.must_fail.empty());
  const auto rules = step_rules(t.step);
  for (const auto& r : t.must_fail) {
    INFO("must-fail rule of twin " << name << ": " << r);
    CHECK(std::find(rules.begin(), rules.end(), r) != rules.end());  // a rule the step really has
  }
  const Run fail = sass_py("check --twin " + name + rule_args(t.must_fail));
  INFO(fail.out);
  CHECK(fail.status == 1);
  CHECK(lines_starting(fail.out, "FAIL ").size() == t.must_fail.size());
  CHECK(lines_starting(fail.out, "PASS ").empty());
  if (!t.must_pass.empty()) {
    const Run pass = sass_py("check --twin " + name + rule_args(t.must_pass));
    INFO(pass.out);
    CHECK(pass.status == 0);
    CHECK(lines_starting(pass.out, "PASS ").size() == t.must_pass.size());
  }
  if (t.step != "all") {
    const Run real = sass_py("check " + t.step + rule_args(t.must_fail));
    INFO(real.out);
    CHECK(real.status == 0);
    CHECK(lines_starting(real.out, "PASS ").size() >= t.must_fail.size());
  }
}

}  // namespace

TEST_CASE("sass tooling: parsers, loop finder and rules on hand-made listings", "[sass]") {
  if (!have_objects_or_skip()) return;
  const Run r = sass_py("selftest");
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("selftest: 0 failure(s)") != std::string::npos);
}

TEST_CASE("sass: every step meets all.expect and its NN_*.expect", "[sass]") {
  if (!have_objects_or_skip()) return;
  const Run r = sass_py("check");
  INFO(r.out);
  for (const auto& l : lines_starting(r.out, "FAIL ")) FAIL_CHECK(l);
  CHECK(r.status == 0);
  // The checks did run: the fp32 steps with a rule file each contribute PASS lines.
  for (const char* step : {"01_naive", "05_2d_blocktiling", "06_vectorized_loads", "08_warptiling"}) {
    if (!fs::exists(paths().repo / "kernels" / (std::string(step) + ".cu"))) continue;
    INFO(step);
    CHECK(r.out.find("PASS " + std::string(step) + " ") != std::string::npos);
  }
}

TEST_CASE("sass twin scalar_loads: step 06's 128-bit global load rule flags scalar loads", "[sass]") {
  check_twin("scalar_loads");
}

TEST_CASE("sass twin rolled_inner_loop: step 05's unrolled-body rules flag a runtime-count kk loop", "[sass]") {
  check_twin("rolled_inner_loop");
}

TEST_CASE("sass twin local_array: the no-LDL/STL and zero-stack rules flag a runtime-indexed array", "[sass]") {
  check_twin("local_array");
}

TEST_CASE("sass twin hopper_serialized_wgmma: the no-serialized-wgmma rule flags ptxas's C7515", "[sass]") {
  check_twin("hopper_serialized_wgmma");
}

TEST_CASE("sass annotations: every quoted SASS/PTX line is in the current dump", "[sass]") {
  if (!have_objects_or_skip()) return;
  const Run r = sass_py("fresh");
  INFO(r.out);
  for (const auto& l : lines_starting(r.out, "STALE ")) FAIL_CHECK(l);
  CHECK(r.status == 0);
}

TEST_CASE("docs/resources.md is the table the current build generates", "[sass]") {
  if (!have_objects_or_skip()) return;
  const fs::path fresh = paths().build / "resources.generated.md";
  const Run r = sass_py("resources --out " + shell_quote(fresh.string()));
  INFO(r.out);
  REQUIRE(r.status == 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  INFO("regenerate it with `make resources` and commit it");
  CHECK(slurp(fresh) == slurp(paths().repo / "docs/resources.md"));
}

TEST_CASE("every step has its .expect, a row in the README step table and in docs/resources.md", "[cpu][steps]") {
  const fs::path repo = paths().repo;
  if (!fs::exists(repo / "README.md") || !fs::exists(repo / "sass_annotations")) {
    gemm_test::mark_skipped("no repository (README.md, sass_annotations/) next to this binary");
    return;
  }
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string readme = slurp(repo / "README.md"), resources = slurp(repo / "docs/resources.md");
  int steps = 0;
  for (const gemm::Step& step : gemm::registered_steps()) {
    if (step.fixture) continue;
    ++steps;
    const std::string file = step.id + "_" + step.name;
    INFO("step " << file);
    // The step table of the README: "| 09b | `kernels/09b_stream_k.cu` | ...".
    CHECK(readme.find("| " + step.id + " | `kernels/" + file + ".cu` |") != std::string::npos);
    // Only step 00 (cuBLAS) launches no kernel of ours, and so has no SASS to expect or resources.
    if (step.id == "00") {
      CHECK(step.threads == 0);
      continue;
    }
    CHECK(step.threads > 0);  // registered with its tile and block size
    bool expect = false;
    for (const auto& e : fs::directory_iterator(repo / "sass_annotations")) {
      const std::string n = e.path().filename().string();
      expect |= n.rfind(step.id + "_", 0) == 0 && e.path().extension() == ".expect";
    }
    CHECK(expect);  // sass_annotations/NN_name.expect
    CHECK(resources.find("\n| " + step.id + " | `") != std::string::npos);  // make resources
  }
  CHECK(steps >= 16);  // 00-14 and 09b
}
