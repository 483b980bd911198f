// The shape of the project, checked on the CPU: the steps form a tree (each registers its parent),
// kernels/steps.json is what the registry prints (the file the Makefile and the scripts read), the
// scripts read it as the harness sees the registrations (scripts/steps.py), the README's step tree is
// the registrations', each step chapter of the book names its steps in its title and in the book's
// index (scripts/steps.py chapters), the kernel library never includes the harness and common/ has no include circle,
// and scripts/docs_deps.sh gives the install advice that fits the python3 it finds.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "../common/harness/steps_json.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using gemm::Step;

namespace {

std::vector<Step> real_steps() {
  std::vector<Step> out;
  for (const Step& s : gemm::registered_steps())
    if (!s.fixture) out.push_back(s);
  return out;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.push_back("");
  return out;
}

}  // namespace

TEST_CASE("the steps form a tree: every parent is registered and comes before its child", "[cpu][steps]") {
  const std::vector<Step> steps = real_steps();
  std::map<std::string, size_t> order;  // registered_steps() is in step order
  for (size_t i = 0; i < steps.size(); ++i) order[steps[i].id] = i;
  int roots = 0;
  for (const Step& s : steps) {
    INFO("step " << s.id << ", parent '" << s.parent << "'");
    if (s.parent.empty()) {
      ++roots;
      continue;
    }
    REQUIRE(order.count(s.parent) == 1);
    CHECK(order[s.parent] < order[s.id]);
  }
  // Two roots: cuBLAS (no kernel of ours) and the first kernel; the bf16 ladder grows from the fp32 one.
  CHECK(roots == 2);
  int kernel_roots = 0;
  for (const Step& s : steps) kernel_roots += s.parent.empty() && s.threads > 0;
  CHECK(kernel_roots == 1);
}

TEST_CASE("capabilities agree with the rest of a registration", "[cpu][steps]") {
  int with_caps = 0;
  for (const Step& s : real_steps()) {
    const gemm::Capabilities& c = s.caps;
    INFO("step " << s.id);
    with_caps += c.stream_k || c.swap_ab || c.tile_menu || c.split_k || c.swap_sized || c.pad_pitch || c.measured;
    // The fixup's partials and counters, and the padded copies, live in the step's workspace.
    if (c.stream_k || c.split_k || c.pad_pitch) CHECK(s.workspace_bytes != nullptr);
    if (c.swap_sized) CHECK(c.swap_ab);  // only a swapped tile is sized to M
  }
  CHECK(with_caps >= 1);
}

TEST_CASE("kernels/steps.json is what the registry prints (make steps-json)", "[cpu][steps]") {
  if (!gemm_test::have_repo("kernels/steps.json")) return;
  const fs::path file = gemm_test::repo_dir() / "kernels/steps.json";
  const std::string want = gemm::steps_json(real_steps());
  const std::string got = fs::exists(file) ? slurp(file) : "";
  if (got == want) return;
  // The first line that differs, so the message says what changed (a new step, a changed field).
  std::istringstream g(got), w(want);
  std::string gl, wl;
  int line = 1;
  for (; std::getline(w, wl); ++line)
    if (!std::getline(g, gl) || gl != wl) break;
  FAIL(fmt::format("kernels/steps.json is not what the steps' registrations say (line {}: the registry has `{}`, "
                   "the file `{}`): run `make steps-json` and commit kernels/steps.json",
                   line, wl, gl));
}

TEST_CASE("scripts/steps.py reads the registry the harness builds", "[cpu][steps]") {
  if (!gemm_test::have_repo("scripts/steps.py")) return;
  const fs::path repo = gemm_test::repo_dir();
  const auto r = gemm_test::run_command("python3 " + quote((repo / "scripts/steps.py").string()) + " list");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::istringstream in(r.output);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "id\tparent\tname\tdtype\thopper\tpersistent\tworkspace\troles");
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    const auto c = split(line, '\t');
    REQUIRE(c.size() == 8);
    INFO(line);
    const Step s = gemm::find_step(c[0]);
    seen.insert(c[0]);
    CHECK(c[1] == s.parent);
    CHECK(c[2] == s.name);
    CHECK(c[3] == gemm::dtype_name(s.dtype));
    CHECK(c[4] == (s.required_cc == 90 ? "1" : "0"));
    CHECK(c[5] == (s.persistent ? "1" : "0"));
    CHECK(c[6] == (s.workspace_bytes ? "1" : "0"));
  }
  CHECK(seen.size() == real_steps().size());
  // The README's step tree and table are what the registrations say.
  const auto readme = gemm_test::run_command("python3 " + quote((repo / "scripts/steps.py").string()) + " readme --check");
  INFO(readme.output);
  CHECK(readme.status == 0);
}

TEST_CASE("scripts/steps.py: the sanitizer shapes follow the registrations; a bad roles table is refused", "[cpu][steps]") {
  if (!gemm_test::have_repo("scripts/steps.py")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::string py = "python3 " + quote((repo / "scripts/steps.py").string());
  auto shapes = [&](const std::string& name) { return gemm_test::run_command(py + " sanitize-shapes " + name).output; };
  for (const Step& s : real_steps()) {
    INFO("step " << s.id);
    const std::string got = shapes(s.id + "_" + s.name);
    CHECK_THAT(got, Catch::StartsWith("67:92:48\n"));  // every step: every block an edge block
    // a block's second tile (fp8 steps: K rounded up to a multiple of 16, steps.py's fp8_k)
    const std::string second_tile = s.dtype == gemm::Dtype::fp8 ? "1500:4100:144" : "1500:4100:136";
    CHECK((got.find(second_tile) != std::string::npos) == s.persistent);
    if (s.dtype == gemm::Dtype::fp8) CHECK(got.find(":72\n") == std::string::npos);  // 1445x2856x72 became x80
    if (s.persistent && s.workspace_bytes) CHECK_THAT(got, Catch::Contains("1536:3072:2304"));  // the fixup runs
  }
  CHECK(shapes("fixture_oob") == "67:92:48\n");
  // A roles table naming no step, or an unknown role, stops the scripts with the line it is on.
  const fs::path tmp = gemm_test::binary_dir().parent_path() / "steps-py-test";
  fs::remove_all(tmp);
  fs::create_directories(tmp / "scripts");
  fs::copy(repo / "kernels", tmp / "kernels", fs::copy_options::recursive);
  std::ofstream(tmp / "scripts/step_roles.tsv") << "# comment\n97\tbench-also\n";
  auto bad = gemm_test::run_command(py + " --root " + quote(tmp.string()) + " list");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("step_roles.tsv:2: no step '97'"));
  std::ofstream(tmp / "scripts/step_roles.tsv") << "23\tfastest\n";
  bad = gemm_test::run_command(py + " --root " + quote(tmp.string()) + " list");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("unknown role fastest"));
  // A parent that is not an earlier step is refused too.
  std::ofstream(tmp / "scripts/step_roles.tsv") << "";
  const fs::path f = tmp / "kernels/steps.json";
  std::string text = slurp(f);
  const size_t at = text.find("\"parent\": \"11\"");
  REQUIRE(at != std::string::npos);  // step 12's
  text.replace(at, 14, "\"parent\": \"13\"");
  std::ofstream(f) << text;
  bad = gemm_test::run_command(py + " --root " + quote(tmp.string()) + " tree");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("step 12: parent '13' is not an earlier registered step"));
  fs::remove_all(tmp);
}

TEST_CASE("scripts/steps.py chapters: each step chapter's title and index entry name its steps, the open ends from the ladders", "[cpu][steps][docs]") {
  if (!gemm_test::have_repo("scripts/steps.py and docs/")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::string py = "python3 " + quote((repo / "scripts/steps.py").string());
  // The FP8 chapter runs to the fp8 ladder's last step, the every-shape chapter to the bf16 ladder's.
  const auto listed = gemm_test::run_command(py + " chapters");
  INFO(listed.output);
  REQUIRE(listed.status == 0);
  std::string last_fp8, last_bf16;
  for (const Step& s : real_steps()) {
    if (s.dtype == gemm::Dtype::fp8 && s.id > last_fp8) last_fp8 = s.id;  // two-digit ids: string order
    if (s.dtype == gemm::Dtype::bf16 && s.id > last_bf16) last_bf16 = s.id;
  }
  CHECK_THAT(listed.output, Catch::Contains("docs/fp8.md\t30\t" + last_fp8 + "\n") &&
                                Catch::Contains("docs/every_shape.md\t24\t" + last_bf16 + "\n"));
  const auto ok = gemm_test::run_command(py + " chapters --check");
  INFO(ok.output);
  CHECK(ok.status == 0);
  // A title that stops a step short, and an index entry that does, are each named.
  const fs::path tmp = gemm_test::binary_dir().parent_path() / "steps-chapters-test";
  fs::remove_all(tmp);
  fs::create_directories(tmp / "docs");
  fs::copy(repo / "kernels", tmp / "kernels", fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(repo / "docs"))
    if (e.path().extension() == ".md") fs::copy(e.path(), tmp / "docs" / e.path().filename());
  // How the FP8 chapter names its steps (steps.py's chapter_steps_text): runs of steps adjacent in the
  // registry's order, "steps 30–38, 40" where bf16's 39 sits between.
  std::vector<std::string> order;
  for (const Step& s : real_steps()) order.push_back(s.id);
  std::sort(order.begin(), order.end());  // two-digit ids: string order
  std::vector<std::vector<std::string>> runs;
  for (size_t i = 0; i < order.size(); ++i) {
    const Step s = gemm::find_step(order[i]);
    if (s.dtype != gemm::Dtype::fp8 || order[i] < "30") continue;
    if (!runs.empty() && i > 0 && order[i - 1] == runs.back().back()) runs.back().push_back(order[i]);
    else runs.push_back({order[i]});
  }
  std::string range = "steps ";
  for (size_t r = 0; r < runs.size(); ++r)
    range += (r ? ", " : "") + (runs[r].size() == 1 ? runs[r][0] : runs[r].front() + "–" + runs[r].back());
  const std::string short_range = "steps 30–35";
  auto replace_in = [&](const fs::path& f, const std::string& from, const std::string& to) {
    std::string text = slurp(f);
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    std::ofstream(f) << text.replace(at, from.size(), to);
  };
  replace_in(tmp / "docs/fp8.md", range, short_range);
  auto bad = gemm_test::run_command(py + " --root " + quote(tmp.string()) + " chapters --check");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("docs/fp8.md: the title") && Catch::Contains("`" + range + "`") &&
                             !Catch::Contains("docs/README.md:"));
  replace_in(tmp / "docs/fp8.md", short_range, range);
  replace_in(tmp / "docs/README.md", range, short_range);
  bad = gemm_test::run_command(py + " --root " + quote(tmp.string()) + " chapters --check");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("the entry of docs/fp8.md does not name its steps") &&
                             !Catch::Contains("docs/fp8.md: the title"));
  fs::remove_all(tmp);
}

TEST_CASE("two rooms: nothing in kernels/ or common/kernel_lib/ includes the harness; no include circle in common/", "[cpu][steps]") {
  if (!gemm_test::have_repo("kernels/ and common/")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::regex include_re(R"re(#include "([^"]+)")re");
  std::map<std::string, std::vector<std::string>> edges;  // repository path -> included repository paths
  auto scan = [&](const fs::path& dir) {
    for (const auto& e : fs::recursive_directory_iterator(repo / dir)) {
      if (!e.is_regular_file()) continue;
      const std::string ext = e.path().extension().string();
      if (ext != ".cu" && ext != ".cuh" && ext != ".hpp" && ext != ".cpp") continue;
      const std::string from = fs::relative(e.path(), repo).generic_string();
      const std::string text = slurp(e.path());
      for (std::sregex_iterator it(text.begin(), text.end(), include_re), end; it != end; ++it) {
        const fs::path target = (e.path().parent_path() / (*it)[1].str()).lexically_normal();
        if (fs::exists(target)) edges[from].push_back(fs::relative(target, repo).generic_string());
      }
    }
  };
  scan("kernels");
  scan("common");
  REQUIRE(edges.size() > 30);
  for (const auto& [from, tos] : edges) {
    if (from.rfind("kernels/", 0) != 0 && from.rfind("common/kernel_lib/", 0) != 0) continue;
    for (const std::string& to : tos) {
      INFO(from << " includes " << to);
      CHECK(to.rfind("common/harness/", 0) != 0);
    }
  }
  // Depth-first search for a back edge among common/'s files.
  std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::string circle;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    stack.push_back(f);
    for (const std::string& to : edges[f]) {
      if (to.rfind("common/", 0) != 0 || !circle.empty()) continue;
      if (state[to] == 1) {
        for (auto it = std::find(stack.begin(), stack.end(), to); it != stack.end(); ++it) circle += *it + " -> ";
        circle += to;
      } else if (state[to] == 0) {
        visit(to);
      }
    }
    stack.pop_back();
    state[f] = 2;
  };
  for (const auto& [f, _] : edges)
    if (f.rfind("common/", 0) == 0 && state[f] == 0) visit(f);
  INFO("include circle: " << circle);
  CHECK(circle.empty());
}

TEST_CASE("scripts/docs_deps.sh: the matplotlib advice fits the python3 it finds", "[cpu][steps][docs]") {
  if (!gemm_test::have_repo("scripts/docs_deps.sh")) return;
  const fs::path script = gemm_test::repo_dir() / "scripts/docs_deps.sh";
  const fs::path dir = gemm_test::binary_dir().parent_path() / "docs-deps-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A stand-in python3 without matplotlib: MANAGED=1 says its stdlib has an EXTERNALLY-MANAGED marker
  // (PEP 668, as Debian's system Python), MANAGED=0 that pip may install into it.
  const fs::path stub = dir / "python3";
  std::ofstream(stub) << "#!/bin/sh\n"
                         "case \"$*\" in *'import matplotlib'*) exit 1 ;; *EXTERNALLY-MANAGED*) echo \"$MANAGED\" ;; esac\n";
  fs::permissions(stub, fs::perms::owner_all);
  auto run = [&](const std::string& managed) {
    return gemm_test::run_command("MANAGED=" + managed + " PYTHON3=" + quote(stub.string()) + " " +
                                  quote(script.string()) + " --check");
  };
  const auto managed = run("1");
  INFO(managed.output);
  CHECK(managed.status == 1);
  CHECK_THAT(managed.output, Catch::Contains("externally managed") && Catch::Contains("python3 -m venv") &&
                                 Catch::Contains("pip install matplotlib"));
  CHECK_THAT(managed.output, !Catch::Contains(stub.string() + " -m pip install"));  // pip would refuse there
  const auto open = run("0");
  INFO(open.output);
  CHECK(open.status == 1);
  CHECK_THAT(open.output, Catch::Contains(stub.string() + " -m pip install matplotlib"));
  // With matplotlib importable there is nothing to say.
  std::ofstream(stub) << "#!/bin/sh\nexit 0\n";
  fs::permissions(stub, fs::perms::owner_all);
  const auto ok = run("0");
  CHECK(ok.status == 0);
  CHECK(ok.output.empty());
  fs::remove_all(dir);
}

TEST_CASE("the wgmma wrappers are what scripts/gen_wgmma.py writes (one per N, 8 .. 256)", "[cpu][steps]") {
  if (!gemm_test::have_repo("scripts/gen_wgmma.py")) return;
  const fs::path repo = gemm_test::repo_dir();
  const auto r = gemm_test::run_command("python3 " + quote((repo / "scripts/gen_wgmma.py").string()) + " --check");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("up to date (32 N per kind)"));
}

TEST_CASE("the book's measured blocks are what the committed CSV says (scripts/book_numbers.py)", "[cpu][steps][docs]") {
  if (!gemm_test::have_repo("scripts/book_numbers.py and docs/")) return;
  const fs::path repo = gemm_test::repo_dir();
  const auto r = gemm_test::run_command("python3 " + quote((repo / "scripts/book_numbers.py").string()) + " --root " +
                                        quote(repo.string()) + " --check");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains(", 0 stale"));
  // A stale block fails: a copy of the CSV with one step's TFLOP/s changed.
  const fs::path tmp = gemm_test::binary_dir().parent_path() / "book-numbers-test";
  fs::remove_all(tmp);
  fs::create_directories(tmp / "docs");
  fs::create_directories(tmp / "results");
  fs::create_directories(tmp / "scripts");
  fs::copy(repo / "kernels", tmp / "kernels", fs::copy_options::recursive);
  std::ofstream(tmp / "docs/t.md") << "<!-- measured:14 -->\nold\n<!-- /measured -->\n";
  fs::copy_file(repo / "results/nvidia_h200.csv", tmp / "results/nvidia_h200.csv");
  const std::string py = "python3 " + quote((repo / "scripts/book_numbers.py").string()) + " --root " + quote(tmp.string());
  auto stale = gemm_test::run_command(py + " --check");
  CHECK(stale.status == 1);
  CHECK_THAT(stale.output, Catch::Contains("docs/t.md: measured:14"));
  CHECK(gemm_test::run_command(py).status == 0);
  const auto fresh = gemm_test::run_command(py + " --check");
  CHECK(fresh.status == 0);
  CHECK_THAT(slurp(tmp / "docs/t.md"), Catch::Contains("TFLOP/s at 4096³") && Catch::Contains("(its parent 13: "));
  fs::remove_all(tmp);
}

TEST_CASE("the code the book quotes is in the named file, in order (scripts/check_quotes.py)", "[cpu][steps][docs]") {
  if (!gemm_test::have_repo("scripts/check_quotes.py and docs/")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::string tool = "python3 " + quote((repo / "scripts/check_quotes.py").string());
  const auto r = gemm_test::run_command(tool + " --root " + quote(repo.string()));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains(", 0 not in their source"));
  // The twin: a quote of step 11 whose lines are all in the file, once in order and once not.
  const fs::path tmp = gemm_test::binary_dir().parent_path() / "check-quotes-test";
  fs::remove_all(tmp);
  fs::create_directories(tmp / "docs");
  fs::create_directories(tmp / "kernels");
  fs::copy_file(repo / "kernels/11_wgmma_tma.cu", tmp / "kernels/11_wgmma_tma.cu");
  std::ofstream(tmp / "docs/t.md")
      << "```cuda\n// kernels/11_wgmma_tma.cu\n  ptx::mbarrier_arrive_expect_tx(&s.full, TILE_BYTES);\n// ...\n"
         "ptx::tma_load_2d(s.b, &tmap_b, kt * BK, n0, &s.full);\n```\n\n"
         "```cuda\n// kernels/11_wgmma_tma.cu\nptx::tma_load_2d(s.b, &tmap_b, kt * BK, n0, &s.full);\n// ...\n"
         "ptx::mbarrier_arrive_expect_tx(&s.full, TILE_BYTES);\n```\n";
  const auto twin = gemm_test::run_command(tool + " --root " + quote(tmp.string()));
  INFO(twin.output);
  CHECK(twin.status == 1);
  CHECK_THAT(twin.output, Catch::Contains("docs/t.md:8: not in kernels/11_wgmma_tma.cu") &&
                              Catch::Contains("2 checked in 1 files, 1 not in their source"));
  fs::remove_all(tmp);
}
