// CPU tests of the results CSVs' last columns (issue 47): every fp8 row names its scaling and what
// accumulated its sums (results.hpp, fp8_columns), an fp8 run paired with the per-tensor stand-in where
// cuBLASLt has no block-scaled algorithm, the harness's refusal of an older file naming the migration,
// and the migration itself (scripts/results_columns.py) on synthetic files and on the committed ones.
// No GPU needed.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/harness/cublaslt.hpp"
#include "../common/harness/results.hpp"
#include "../common/kernel_lib/check.hpp"
#include "support.hpp"

using namespace gemm;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

Row burst(const std::string& kernel, double ratio) {
  Row r("burst", kernel, kernel == "step" ? "35_fp8_shapes" : "lt#1 (algo 66, tile id 1, stages id 2, split-k 1)",
        make_timing({1.0, 1.1, 0.9}));
  r.ratio = {ratio, ratio, ratio, ratio, ratio};
  return r;
}

// The harness's columns before rel_rms_err, scaling and accumulation (results of 2026-11 and earlier).
constexpr const char* kOldHeader =
    "step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
    "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
    "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date";

// One row of kOldHeader: step, name, dtype, kernel, the rest fixed.
std::string old_row(const std::string& step, const std::string& name, const std::string& dtype, const std::string& kernel) {
  return fmt::format("{},{},\"t, with a comma\",{},4096,4096,4096,burst,{},d,1.0,1.0,1.0,1000,1.0,1.0,1.0,30,1800,"
                     "probe,,,,,,pass,NVIDIA H200,132,60,1980,700,13.0,13.0,13.1.0,2026-12-03",
                     step, name, dtype, kernel);
}

}  // namespace

TEST_CASE("results: every fp8 step registers its accumulation; the fp8 columns of each kernel", "[cpu][results][fp8]") {
  int fp8 = 0;
  for (const Step& s : registered_steps()) {
    if (s.fixture) continue;
    INFO("step " << s.id);
    CHECK((s.dtype == Dtype::fp8) == (s.accumulation != Accumulation::none));
    fp8 += s.dtype == Dtype::fp8;
  }
  CHECK(fp8 >= 6);
  // 30 leaves the sums in the tensor cores (cuBLASLt's fast accumulation); 31 on promote every K tile.
  CHECK(find_step("30").accumulation == Accumulation::tensor_core);
  CHECK(find_step("31").accumulation == Accumulation::promoted);
  CHECK(std::string(accumulation_name(Accumulation::none)).empty());

  const Step s30 = find_step("30"), s35 = find_step("35");
  auto cols = [](const Step& s, Scaling sc, const char* kernel) {
    const Fp8Columns c = fp8_columns(s, s.dtype, sc, kernel);
    return c.scaling + "/" + c.accumulation;
  };
  CHECK(cols(s30, Scaling::per_tensor, "step") == "per_tensor/tensor_core");
  CHECK(cols(s30, Scaling::per_tensor, kLtBest) == "per_tensor/default");
  CHECK(cols(s30, Scaling::per_tensor, kLtFast) == "per_tensor/fast");
  CHECK(cols(s35, Scaling::block, "step") == "block/promoted");
  CHECK(cols(s35, Scaling::block, kLtBest) == "block/default");
  CHECK(cols(s35, Scaling::block, kLtStandIn) == "per_tensor/default");
  CHECK(cols(find_step("23"), Scaling::per_tensor, "cublas") == "/");  // bf16: both empty
  CHECK_THROWS_WITH(fp8_columns(s35, Dtype::fp8, Scaling::block, "cublas"), Catch::Contains("'cublas'"));
  // A registration that leaves an fp8 step's accumulation out, or gives a bf16 step one, is refused.
  Step bad = s30;
  bad.id = "zz_acc";
  bad.accumulation = Accumulation::none;
  CHECK_THROWS_WITH(register_step(bad), Catch::Contains(".accumulation"));
  Step bad16 = find_step("23");
  bad16.id = "zz_acc16";
  bad16.accumulation = Accumulation::promoted;
  CHECK_THROWS_WITH(register_step(bad16), Catch::Contains("fp8 steps only"));
}

TEST_CASE("results: the stand-in is the per-tensor problem on the same data, and the ratio's fallback", "[cpu][results][fp8]") {
  float sfa = 0, sfb = 0;
  Fp8Gemm p{1, 7168, 16384, reinterpret_cast<const __nv_fp8_e4m3*>(8), reinterpret_cast<const __nv_fp8_e4m3*>(16),
            reinterpret_cast<__nv_bfloat16*>(24)};
  p.scaling = Scaling::block;
  p.sfa = &sfa;
  p.sfb = &sfb;
  const Fp8Gemm s = per_tensor_stand_in(p);
  CHECK(s.scaling == Scaling::per_tensor);
  CHECK((s.a == p.a && s.b == p.b && s.c == p.c && s.m == 1 && s.n == 7168 && s.k == 16384));
  CHECK((s.sfa == nullptr && s.sfb == nullptr));
  CHECK((s.scale_a == nullptr && s.scale_b == nullptr));  // cuBLASLt: no scale pointer is a scale of 1

  CHECK(fp8_ratio_reference({burst("step", 1)}) == nullptr);
  const std::vector<Row> stand_in{burst("step", 1), burst(kLtStandIn, 1.02)};
  REQUIRE(fp8_ratio_reference(stand_in) != nullptr);
  CHECK(fp8_ratio_reference(stand_in)->kernel == kLtStandIn);
  const std::vector<Row> both{burst("step", 1), burst(kLtStandIn, 1.02), burst(kLtBest, 0.95)};
  CHECK(fp8_ratio_reference(both)->kernel == kLtBest);
  std::vector<Row> sustained_only{burst("step", 1), burst(kLtBest, 0.95)};
  sustained_only[1].mode = "sustained";
  CHECK(fp8_ratio_reference(sustained_only) == nullptr);
}

TEST_CASE("results CSV: the scaling and accumulation columns; an older file is refused with its migration, which then lets the harness append", "[cpu][results]") {
  const std::string header = csv_header();
  CHECK(ends_with(header, ",date,rel_rms_err,scaling,accumulation"));
  const fs::path dir = gemm_test::binary_dir().parent_path() / "results-columns-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Step step = find_step("35");
  const Problem p{Dtype::fp8, 1, 7168, 16384, 1, 0, 2026, false, Scaling::block};
  DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.sm_count = 132;
  const RunInfo run{step, p, dev, "35_fp8_shapes", "pass"};
  std::vector<Row> rows{burst("step", 1), burst(kLtStandIn, 1.02)};
  rows[0].rel_rms_err = 0.0012;

  const fs::path fresh = dir / "fresh.csv";
  append_csv_rows(fresh.string(), run, rows);
  const auto got = lines_of(slurp(fresh));
  REQUIRE(got.size() == 3);
  CHECK(got[0] == header);
  CHECK(ends_with(got[1], ",0.0012,block,promoted"));
  CHECK_THAT(got[2], Catch::Contains(",cublaslt_stand_in,"));
  CHECK(ends_with(got[2], ",,per_tensor,default"));  // no error: the stand-in is never checked

  // A file of the columns before these: refused, untouched, and the message names the migration.
  const fs::path old = dir / "old.csv";
  const std::string old_text = std::string(kOldHeader) + "\n" + old_row("23", "pingpong_stream_k", "bf16", "step") + "\n";
  std::ofstream(old) << old_text;
  CHECK_THROWS_WITH(append_csv_rows(old.string(), run, rows),
                    Catch::Contains("scripts/results_columns.py migrate " + old.string()) &&
                        Catch::Contains("other columns than this harness writes"));
  CHECK(slurp(old) == old_text);
  if (!gemm_test::have_repo("scripts/results_columns.py")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::string py = "python3 " + quote(repo / "scripts/results_columns.py");
  const auto cols = gemm_test::run_command(py + " header");
  CHECK(cols.output == header + "\n");  // the script knows the harness's columns
  const auto migrated = gemm_test::run_command(py + " migrate " + quote(old));
  INFO(migrated.output);
  REQUIRE(migrated.status == 0);
  append_csv_rows(old.string(), run, rows);  // now in the current columns
  const auto after = lines_of(slurp(old));
  REQUIRE(after.size() == 4);
  CHECK(after[0] == header);
  CHECK(ends_with(after[1], ",2026-12-03,,,"));  // bf16: rel_rms_err, scaling and accumulation empty
  CHECK(ends_with(after[3], ",,per_tensor,default"));
  fs::remove_all(dir);
}

TEST_CASE("scripts/results_columns.py migrate: fills what the rows and the registry say, keeps other files, runs again without change; the committed CSVs are current", "[cpu][results]") {
  if (!gemm_test::have_repo("scripts/results_columns.py and kernels/steps.json")) return;
  const fs::path repo = gemm_test::repo_dir();
  const std::string py = "python3 " + quote(repo / "scripts/results_columns.py");
  const fs::path root = gemm_test::binary_dir().parent_path() / "results-migrate-test";
  fs::remove_all(root);
  fs::create_directories(root / "kernels");
  fs::create_directories(root / "results" / "tuning");
  fs::create_directories(root / "scripts");
  fs::copy_file(repo / "kernels/steps.json", root / "kernels/steps.json");
  fs::copy_file(repo / "scripts/step_roles.tsv", root / "scripts/step_roles.tsv");
  // A bench file of the old columns (\r\n line ends, as early bench.py wrote them): fp8 rows of 30 and
  // 32 and their cuBLASLt rows, a row whose step has another name now (not derived), a bf16 row.
  const std::string bench = std::string(kOldHeader) + "\r\n" + old_row("30", "fp8_wgmma", "fp8", "step") + "\r\n" +
                            old_row("30", "fp8_wgmma", "fp8", "cublaslt_best") + "\r\n" +
                            old_row("30", "fp8_wgmma", "fp8", "cublaslt_fast") + "\r\n" +
                            old_row("32", "fp8_block_scaled", "fp8", "step") + "\r\n" +
                            old_row("32", "fp8_block_scaled", "fp8", "cublaslt_best") + "\r\n" +
                            old_row("33", "fp8_renamed", "fp8", "step") + "\r\n" +
                            old_row("23", "pingpong_stream_k", "bf16", "step") + "\r\n";
  std::ofstream(root / "results/x.csv", std::ios::binary) << bench;
  // A script's own column before the harness's (gpu_session.sh's promote_every) and one after (family).
  std::ofstream(root / "results/x_promote.csv") << "promote_every," << kOldHeader << ",rel_rms_err\n1,"
                                                << old_row("31", "fp8_promotion", "fp8", "cublaslt_fast") << ",0.001\n";
  std::ofstream(root / "results/x_shapes.csv") << kOldHeader << ",family\n"
                                               << old_row("23", "pingpong_stream_k", "bf16", "step") << ",decode\n";
  const std::string other = "step,size,process,ratio\n23,4096,1,1.01\n";  // not the harness's: left alone
  std::ofstream(root / "results/x_stability.csv") << other;
  std::ofstream(root / "results/tuning/t.csv") << other;

  const std::string cmd = py + " migrate --root " + quote(root);
  const auto check = gemm_test::run_command(cmd + " --check");
  INFO(check.output);
  CHECK(check.status == 1);
  CHECK_THAT(check.output, Catch::Contains("results/x.csv: not in the current columns"));
  CHECK(slurp(root / "results/x.csv") == bench);  // --check writes nothing
  const auto run = gemm_test::run_command(cmd);
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("results/x.csv: migrated (7 rows") &&
                             Catch::Contains("derived for 5 fp8 rows"));
  const auto x = lines_of(slurp(root / "results/x.csv"));
  REQUIRE(x.size() == 8);
  CHECK(x[0] == std::string(csv_header()) + "\r");  // the file's own line ends
  CHECK(ends_with(x[1], ",2026-12-03,,per_tensor,tensor_core\r"));
  CHECK(ends_with(x[2], ",,per_tensor,default\r"));
  CHECK(ends_with(x[3], ",,per_tensor,fast\r"));
  CHECK(ends_with(x[4], ",,block,promoted\r"));
  CHECK(ends_with(x[5], ",,block,default\r"));
  CHECK(ends_with(x[6], ",2026-12-03,,,\r"));  // 33 is not "fp8_renamed": nothing derived
  CHECK(ends_with(x[7], ",2026-12-03,,,\r"));  // bf16
  CHECK_THAT(x[1], Catch::StartsWith("30,fp8_wgmma,\"t, with a comma\",fp8,"));
  const auto promote = lines_of(slurp(root / "results/x_promote.csv"));
  REQUIRE(promote.size() == 2);
  CHECK(promote[0] == "promote_every," + std::string(csv_header()));
  CHECK(ends_with(promote[1], ",0.001,per_tensor,fast"));
  const auto shapes = lines_of(slurp(root / "results/x_shapes.csv"));
  REQUIRE(shapes.size() == 2);
  CHECK(shapes[0] == std::string(csv_header()) + ",family");
  CHECK(ends_with(shapes[1], ",,,,decode"));
  CHECK(slurp(root / "results/x_stability.csv") == other);
  CHECK(slurp(root / "results/tuning/t.csv") == other);
  // Again: nothing changes, and --check passes.
  const std::string once = slurp(root / "results/x.csv");
  const auto again = gemm_test::run_command(cmd);
  CHECK(again.status == 0);
  CHECK_THAT(again.output, Catch::Contains("results/x.csv: current (7 rows)"));
  CHECK(slurp(root / "results/x.csv") == once);
  CHECK(gemm_test::run_command(cmd + " --check").status == 0);
  fs::remove_all(root);

  // The committed results are in the current columns.
  const auto committed = gemm_test::run_command(py + " migrate --check --root " + quote(repo));
  INFO(committed.output);
  CHECK(committed.status == 0);
}

TEST_CASE("scripts/results_table.py: an fp8 ratio against the per-tensor stand-in says so; fp8 references name their scaling and accumulation", "[cpu][results]") {
  if (!gemm_test::have_repo("scripts/results_table.py")) return;
  const fs::path repo = gemm_test::repo_dir();
  const fs::path dir = gemm_test::binary_dir().parent_path() / "results-table-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Step 35 at 4096^3 paired with the stand-in only, step 30 with cuBLASLt default and fast: rows as the
  // harness writes them (its header, its columns).
  const Step s35 = find_step("35"), s30 = find_step("30");
  DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.sm_count = 132;
  const Problem p35{Dtype::fp8, 4096, 4096, 4096, 1, 0, 2026, false, Scaling::block};
  const Problem p30{Dtype::fp8, 4096, 4096, 4096, 1, 0, 2026, false, Scaling::per_tensor};
  const fs::path csv = dir / "r.csv";
  append_csv_rows(csv.string(), RunInfo{s30, p30, dev, "30_fp8_wgmma", "pass"},
                  {burst("step", 1), burst(kLtBest, 0.97), burst(kLtFast, 0.91)});
  append_csv_rows(csv.string(), RunInfo{s35, p35, dev, "35_fp8_shapes", "pass"},
                  {burst("step", 1), burst(kLtStandIn, 1.021)});
  std::ofstream(dir / "README.md") << "<!-- results:begin -->\n<!-- results:end -->\n";
  const auto r = gemm_test::run_command("python3 " + quote(repo / "scripts/results_table.py") + " " + quote(csv) +
                                        " --readme " + quote(dir / "README.md"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("| 1.021 (per-tensor stand-in) |") &&
                           Catch::Contains("| cublaslt_stand_in (35) | fp8 |") &&
                           Catch::Contains("per_tensor, default accumulation: lt#1"));
  const std::string readme = slurp(dir / "README.md");
  // 30 against fast accumulation (its own), 35 against the stand-in, marked.
  CHECK_THAT(readme, Catch::Contains("| 0.910 [0.910–0.910] |") &&
                         Catch::Contains("| 1.021 [1.021–1.021] (per-tensor stand-in) |"));
  fs::remove_all(dir);
}
