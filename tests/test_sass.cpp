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

// The build folder is the one this binary sits in (BUILD/bin/tests); the repository is
// gemm_test::repo_dir() (empty when the binary was copied elsewhere).
const Paths& paths() {
  static const Paths p = [] {
    Paths q;
    q.build = gemm_test::binary_dir().parent_path();
    q.repo = gemm_test::repo_dir();
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
  if (!gemm_test::have_repo("scripts/sass and the sources")) return false;
  if (fs::exists(paths().build / "obj" / "kernels")) return true;
  gemm_test::mark_skipped("no kernel objects next to this binary: the SASS checks run where the build happened "
                          "(make test)");
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
  // The checks did run: every step with a rule file (sass_annotations/NN_name.expect) contributes
  // PASS lines (a step whose dump held no function used to pass every rule without one).
  int with_rules = 0;
  for (const auto& e : fs::directory_iterator(paths().repo / "sass_annotations")) {
    const std::string step = e.path().stem().string();
    if (e.path().extension() != ".expect" || step == "all") continue;
    if (!fs::exists(paths().repo / "kernels" / (step + ".cu"))) continue;
    ++with_rules;
    INFO(step);
    CHECK(r.out.find("PASS " + step + " ") != std::string::npos);
  }
  CHECK(with_rules >= 4);
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

TEST_CASE("sass twin partial_scalar_a: step 06's exact rules flag A alone read by 32-bit loads", "[sass]") {
  check_twin("partial_scalar_a");
}

TEST_CASE("sass twin no_kernel: a unit whose dump holds no kernel function fails instead of passing every rule", "[sass]") {
  check_twin("no_kernel");
}

TEST_CASE("sass twin ptxas_warning: the all-steps rule `ptxas lacks warning` flags a ptxas warning", "[sass]") {
  check_twin("ptxas_warning");
}

TEST_CASE("sass twin hopper_setmaxnreg_ignored: step 14's ptxas rule flags 'setmaxnreg' ignored (C7508)", "[sass]") {
  check_twin("hopper_setmaxnreg_ignored");
}

TEST_CASE("sass annotations: a quoted block must be in order, contiguous and in one function", "[sass]") {
  if (!have_objects_or_skip()) return;
  // Four consecutive instruction lines of step 06's kernel (from its first FFMA on), quoted five ways.
  std::vector<std::string> lines;
  for (const auto& e : fs::directory_iterator(paths().build / "sass" / "06_vectorized_loads")) {
    const std::string n = e.path().filename().string();
    if (e.path().extension() != ".sass" || n.find(".cuobjdump.") != std::string::npos || n.find(".nvdisasm.") != std::string::npos) continue;
    std::ifstream in(e.path());
    bool started = false;
    for (std::string l; std::getline(in, l) && lines.size() < 6;) {
      if (l.empty() || l.rfind("//", 0) == 0) continue;
      started |= l.find("FFMA") != std::string::npos;
      if (!started) continue;
      if (l.rfind("        ", 0) != 0) break;  // a label: stop at a run of plain instructions
      lines.push_back(l.substr(8));
    }
  }
  REQUIRE(lines.size() >= 6);
  auto fresh = [&](const std::vector<std::string>& quote) {
    const fs::path md = paths().build / "fresh-twin.md";
    {
      std::ofstream out(md);
      out << "A walkthrough.\n\n```sass\n";
      for (const auto& q : quote) out << q << "\n";
      out << "```\n";
    }
    const Run r = sass_py("fresh --md " + shell_quote(md.string()) + " --step 06");
    fs::remove(md);
    return r;
  };
  const std::vector<std::string> run4(lines.begin() + 2, lines.begin() + 6);
  CHECK(fresh(run4).status == 0);                                      // as in the dump
  CHECK(fresh({run4[0], run4[1], "...", run4[3]}).status == 0);        // a marked elision
  const Run gap = fresh({run4[0], run4[1], run4[3]});                  // a line dropped silently
  INFO(gap.out);
  CHECK(gap.status == 1);
  CHECK(gap.out.find("not in this order and contiguous") != std::string::npos);
  const Run swapped = fresh({run4[1], run4[0], run4[2], run4[3]});     // out of order
  CHECK(swapped.status == 1);
  const Run foreign = fresh({run4[0], "FFMA R999, R998, R997, R996 ;"});  // not in the dump at all
  CHECK(foreign.status == 1);
  CHECK(foreign.out.find("is in no function") != std::string::npos);
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

// The constant reader evaluates initialisers as C++ integer arithmetic (it once took the first number
// of a declaration: 14's THREADS read as 128) and refuses, by name, what it cannot evaluate.
TEST_CASE("sass constants: step 14's THREADS = 128 * (1 + CONSUMERS) reads as 384; a call is refused by name", "[sass]") {
  if (!have_objects_or_skip()) return;
  if (fs::exists(paths().repo / "kernels/14_two_consumers.cu")) {
    const Run r = sass_py("constants 14 --eval THREADS");
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.out == "384\n");
    const Run all = sass_py("constants 14");
    INFO(all.out);
    CHECK(all.out.find("THREADS = 384\n") != std::string::npos);
    CHECK(all.out.find("CONSUMER_WARPS = 8\n") != std::string::npos);
    CHECK(all.out.find("STAGE_BYTES = 49152\n") != std::string::npos);  // (BM + BN) * BK * sizeof(__nv_bfloat16)
  }
  const fs::path src = paths().build / "constants_refusal.cu";
  {
    std::ofstream out(src);
    out << "constexpr int GOOD = 2 * (3 + 4);\nconstexpr int BAD = foo(3);\nconstexpr int AFTER = BAD + 1;\n";
  }
  const Run good = sass_py("constants --source " + shell_quote(src.string()) + " --eval 'GOOD % 5'");
  INFO(good.out);
  CHECK(good.status == 0);
  CHECK(good.out == "4\n");
  const Run bad = sass_py("constants --source " + shell_quote(src.string()) + " --eval 'BAD * 2'");
  INFO(bad.out);
  CHECK(bad.status == 2);
  CHECK(bad.out.find("BAD = `foo(3)`") != std::string::npos);
  CHECK(bad.out.find("cannot be evaluated") != std::string::npos);
  const Run list = sass_py("constants --source " + shell_quote(src.string()));
  INFO(list.out);
  CHECK(list.out.find("GOOD = 14\n") != std::string::npos);
  CHECK(list.out.find("BAD refused: ") != std::string::npos);
  CHECK(list.out.find("AFTER refused: ") != std::string::npos);
  fs::remove(src);
}

// ---- HTML pages (make sass-html): structure read back with Python's html.parser, then a real browser.

namespace {

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The .html files of a folder, quoted for the shell, in name order.
std::string html_args(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".html") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::string a;
  for (const auto& f : files) {
    a += ' ';
    a += shell_quote(f);  // not " " + ...: GCC 12 warns (-Wrestrict) on that operator+ when inlined
  }
  return a;
}

}  // namespace

TEST_CASE("sass html: every step's page, the step diffs and index.html parse; data-line pairs match; nothing external", "[sass][html]") {
  if (!have_objects_or_skip()) return;
  const fs::path out = paths().build / "sass-html-test";
  fs::remove_all(out);
  const Run gen = sass_py("html --out " + shell_quote(out.string()));
  INFO(gen.out);
  REQUIRE(gen.status == 0);
  for (const auto& k : fs::directory_iterator(paths().repo / "kernels")) {
    if (k.path().extension() != ".cu") continue;  // kernels/steps.json is no step
    INFO(k.path().stem().string());
    CHECK(fs::exists(out / (k.path().stem().string() + ".html")));
  }
  REQUIRE(fs::exists(out / "index.html"));
  const Run chk = sass_py("html-check" + html_args(out));
  INFO(chk.out);
  for (const auto& l : lines_starting(chk.out, "PROBLEM ")) FAIL_CHECK(l);
  CHECK(chk.status == 0);
  CHECK(chk.out.find("html-check: 0 problem(s)") != std::string::npos);
  CHECK(chk.out.find("OK " + (out / "index.html").string()) != std::string::npos);
  // Pages of steps with walkthroughs carry notes, and every step with rules carries its badges.
  if (fs::exists(out / "06_vectorized_loads.html")) {
    const std::string page = slurp_file(out / "06_vectorized_loads.html");
    CHECK(page.find("<tr class=note data-note=") != std::string::npos);
    CHECK(page.find("class='badge pass'") != std::string::npos);
    CHECK(page.find("hottest loop: instructions") != std::string::npos);
    CHECK(page.find("sgemm_vectorized") != std::string::npos);

    // The checker can fail: a source line claiming SASS in a kernel that has none, and a script
    // fetched from the network, are both reported.
    std::string broken = page;
    const auto at = broken.find("data-kernels='0'");
    REQUIRE(at != std::string::npos);
    broken.replace(at, 16, "data-kernels='7'");
    broken.insert(broken.find("</body>"), "<script src=\"https://example.com/x.js\"></script>");
    const fs::path bad = paths().build / "sass-html-broken.html";
    std::ofstream(bad) << broken;
    const Run b = sass_py("html-check " + shell_quote(bad.string()));
    INFO(b.out);
    CHECK(b.status == 1);
    CHECK(b.out.find("claims SASS in kernel 7") != std::string::npos);
    CHECK(b.out.find("fetches from outside the page") != std::string::npos);
    fs::remove(bad);
  }
}

TEST_CASE("sass html: the diff page of 05 and 06 shows the source diff, the SASS diff and the mix delta", "[sass][html]") {
  if (!have_objects_or_skip()) return;
  if (!fs::exists(paths().repo / "kernels/05_2d_blocktiling.cu") || !fs::exists(paths().repo / "kernels/06_vectorized_loads.cu")) return;
  const fs::path out = paths().build / "sass-html-test-diff";
  fs::remove_all(out);
  const Run gen = sass_py("html --diff 05 06 --out " + shell_quote(out.string()));
  INFO(gen.out);
  REQUIRE(gen.status == 0);
  const fs::path page = out / "diff_05_06.html";
  REQUIRE(fs::exists(page));
  const std::string html = slurp_file(page);
  CHECK(html.find("id=srcdiff") != std::string::npos);
  CHECK(html.find("id=sassdiff") != std::string::npos);
  CHECK(html.find("+++ kernels/06_vectorized_loads.cu") != std::string::npos);
  CHECK(html.find("+++ 06_vectorized_loads/sgemm_vectorized_loads.sass") != std::string::npos);
  CHECK(html.find("<td>LDG.128</td><td>0</td><td>20</td>") != std::string::npos);  // the mix delta row
  const Run chk = sass_py("html-check " + shell_quote(page.string()));
  INFO(chk.out);
  CHECK(chk.status == 0);
}

TEST_CASE("sass html in headless Chromium: no script error, hovering a source line highlights its SASS", "[sass][html][browser]") {
  if (!have_objects_or_skip()) return;
  const fs::path out = paths().build / "sass-html-test-browser";
  fs::remove_all(out);
  // A step without device code, one with two kernels, and a Hopper step, when the series has them.
  std::string steps;
  int n = 0;
  for (const std::string s : {"00", "09", "14"})
    for (const auto& k : fs::directory_iterator(paths().repo / "kernels"))
      if (k.path().filename().string().rfind(s + "_", 0) == 0) {
        steps += " " + s;
        ++n;
      }
  REQUIRE(n > 0);
  const Run gen = sass_py("html --out " + shell_quote(out.string()) + steps);
  INFO(gen.out);
  REQUIRE(gen.status == 0);
  const Run r = sass_py("html-browser-check" + html_args(out));
  INFO(r.out);
  if (r.status == 77) {
    std::string why = r.out.substr(0, r.out.find('\n'));
    if (why.rfind("skipped: ", 0) == 0) why = why.substr(9);
    gemm_test::mark_skipped(why.c_str());
    return;
  }
  for (const auto& l : lines_starting(r.out, "FAIL ")) FAIL_CHECK(l);
  CHECK(r.status == 0);
  CHECK(lines_starting(r.out, "OK ").size() == size_t(n));
}

TEST_CASE("every step has its .expect, its place in the README's tree and results rows, and docs/resources.md", "[cpu][steps]") {
  if (!gemm_test::have_repo("README.md and sass_annotations/")) return;
  const fs::path repo = paths().repo;
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
    INFO("step " << file << " (a missing row: run `make tables`, which rewrites the README's tree and table "
                       "and docs/resources.md)");
    // The README's tree (scripts/steps.py readme) and its results rows (scripts/results_table.py --readme):
    // "09b stream_k" and "| [09b](kernels/09b_stream_k.cu) | 09 | ...".
    CHECK((readme.find(step.id + " " + step.name + "\n") != std::string::npos ||
           readme.find(step.id + " " + step.name + " ") != std::string::npos));
    CHECK(readme.find("| [" + step.id + "](kernels/" + file + ".cu) | " + (step.parent.empty() ? "—" : step.parent) +
                      " | ") != std::string::npos);
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

TEST_CASE("sass lines: an inlined instruction belongs to its innermost line of the step (step 23's HGMMAs to the wgmma call)", "[sass][html]") {
  if (!have_objects_or_skip()) return;
  // nvdisasm prints one //## line per inlining level; the attribution must take the innermost level that
  // lies in the step's file (the wgmma call inside the consumer's lambda), not the outermost (the lambda's
  // call sites, which once owned about 80 % of the kernel).
  const Run hgmma = sass_py("lines 23 --opcode HGMMA");
  INFO(hgmma.out);
  REQUIRE(hgmma.status == 0);
  const auto rows = lines_starting(hgmma.out.substr(hgmma.out.find('\n') + 1), " ");
  REQUIRE(!rows.empty());
  CHECK_THAT(rows.front(), Catch::Contains("ptx::wgmma_m64n128k16_bf16("));
  const Run all = sass_py("lines 23");
  REQUIRE(all.status == 0);
  const std::string head = all.out.substr(0, all.out.find('\n'));
  const long total = std::stol(head.substr(head.find(": ") + 2));
  long in_calls = 0;
  std::istringstream in(all.out);
  for (std::string l; std::getline(in, l);)
    if (l.find("compute(") != std::string::npos) in_calls += std::stol(l);
  INFO("instructions on the compute(...) call lines: " << in_calls << " of " << total);
  CHECK(total > 1000);
  CHECK(in_calls * 20 < total);  // under 5 %
}
