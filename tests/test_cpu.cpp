// CPU tests: tolerance model, NaN-aware comparison, command line, registry and shape predicates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "../common/harness/compare.hpp"
#include "../common/harness/options.hpp"
#include "../common/harness/problem.hpp"
#include "../common/harness/reference.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/swizzle.hpp"

using namespace gemm;

TEST_CASE("fp32 tolerance grows with sqrt(K) relative to the sqrt(K)-sized result", "[cpu][tolerance]") {
  Tolerance t1{Dtype::fp32, false, 1024, 1.0, 0.0}, t4{Dtype::fp32, false, 4096, 1.0, 0.0};
  // Expected magnitude of an output is sqrt(K); the ratio tol / sqrt(K) must double from 1024 to 4096.
  const double r1 = t1.at(0, 0) / std::sqrt(1024.0), r4 = t4.at(0, 0) / std::sqrt(4096.0);
  CHECK(r4 == Approx(2 * r1));
  CHECK(t1.at(0, 0) == Approx(16.0 * kUnitRoundoffFp32 * 1024));
  // alpha scales the accumulation term, beta adds one rounding of beta * c0.
  Tolerance ab{Dtype::fp32, false, 1024, 2.0, 3.0};
  CHECK(ab.at(0, 10.0) == Approx(2 * t1.at(0, 0) + 4 * kUnitRoundoffFp32 * 30.0));
}

TEST_CASE("bf16 tolerance allows one bf16 ulp of the reference", "[cpu][tolerance]") {
  Tolerance t{Dtype::bf16, false, 64, 1.0, 0.0};
  CHECK(t.at(256.0, 0) >= 2.0);  // bf16 ulp at 256 is 2
  CHECK(t.at(256.0, 0) < 4.0);
}

TEST_CASE("exact mode has zero tolerance", "[cpu][tolerance]") {
  Tolerance t{Dtype::fp32, true, 4096, 1.0, 0.0};
  CHECK(t.at(100.0, 0) == 0.0);
}

TEST_CASE("judge_reference: where the step and cuBLAS disagree, the fp64 oracle decides", "[cpu][compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> oracle{1, 2, 3, 4, 5, 6}, guard_ok(4, nan);
  std::vector<float> cublas_off = oracle, step_off = oracle, cublas_nan = oracle;
  cublas_off[1] = 2.5f, cublas_off[4] = 7.0f;  // cuBLAS wrong at two elements
  step_off[3] = -4.0f;                         // the step wrong at one
  cublas_nan[5] = nan;                         // an element cuBLAS did not write
  const Tolerance exact{Dtype::bf16, true, 1, 1, 0};
  const auto check = [&](const std::vector<float>& got, const std::vector<float>& want) {
    return compare(got, want, {}, guard_ok, 2, 3, exact);
  };
  // What check_against_reference asks of a step's C and cuBLAS's C: the three checks, then the judgement.
  const auto judge = [&](const std::vector<float>& step_c, const std::vector<float>& cublas_c) {
    return judge_reference(check(step_c, cublas_c), check(step_c, oracle), check(cublas_c, oracle));
  };
  SECTION("the step right, cuBLAS wrong: the oracle's pass, with cuBLAS's count") {
    const CheckReport r = judge(oracle, cublas_off);
    CHECK(r.passed);
    CHECK(r.against_oracle);
    CHECK(r.reference_mismatches == 2);
    CHECK(r.summary().rfind("PASS against the fp64 oracle", 0) == 0);
    CHECK(r.summary().find("cuBLAS's own C has 2 elements") != std::string::npos);
    CHECK(r.check_column() == "pass (the fp64 oracle's: cuBLAS's C outside its tolerance)");
    CHECK(r.check_column().find(',') == std::string::npos);  // the harness's CSV writes it unquoted
  }
  SECTION("cuBLAS's C with an unwritten (NaN) element: the step right passes against the oracle") {
    const CheckReport r = judge(oracle, cublas_nan);
    CHECK(r.passed);
    CHECK(r.reference_mismatches == 1);
  }
  SECTION("both inside the oracle's tolerance but apart: the step passes, cuBLAS counted right") {
    const Tolerance loose{Dtype::bf16, false, 1, 1, 0};  // about one bf16 ulp of each value
    const std::vector<float> up{1.0078125f, 2, 3, 4, 5, 6}, down{0.9921875f, 2, 3, 4, 5, 6};
    const auto near = [&](const std::vector<float>& got, const std::vector<float>& want) {
      return compare(got, want, {}, guard_ok, 2, 3, loose);
    };
    REQUIRE(near(up, oracle).passed);
    REQUIRE(near(down, oracle).passed);
    REQUIRE_FALSE(near(up, down).passed);
    const CheckReport r = judge_reference(near(up, down), near(up, oracle), near(down, oracle));
    CHECK(r.passed);
    CHECK(r.against_oracle);
    CHECK(r.reference_mismatches == 0);
    CHECK(r.check_column().find("cuBLAS's C inside it") != std::string::npos);
    CHECK(r.check_column().find(',') == std::string::npos);  // the harness's CSV writes it unquoted
  }
  SECTION("the step wrong, cuBLAS right: cuBLAS's failure stands") {
    const CheckReport r = judge(step_off, oracle);
    CHECK_FALSE(r.passed);
    CHECK_FALSE(r.against_oracle);
    CHECK(r.summary().rfind("FAIL", 0) == 0);
    CHECK(r.check_column() == "FAIL");
  }
  SECTION("both wrong: the step's failure against cuBLAS stands") {
    const CheckReport r = judge(step_off, cublas_off);
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches == 3);
  }
  SECTION("a pass against cuBLAS is returned as it is") {
    const CheckReport r = judge(oracle, oracle);
    CHECK(r.passed);
    CHECK_FALSE(r.against_oracle);
    CHECK(r.summary().rfind("PASS (", 0) == 0);
    CHECK(r.check_column() == "pass");
  }
}

TEST_CASE("compare is NaN-aware and reports the first mismatches", "[cpu][compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> want{1, 2, 3, 4, 5, 6};
  const std::vector<float> guard_ok(4, nan);
  Tolerance exact{Dtype::fp32, true, 1, 1, 0};

  SECTION("identical passes") {
    auto r = compare(want, want, {}, guard_ok, 2, 3, exact);
    CHECK(r.passed);
    CHECK(r.summary().rfind("PASS", 0) == 0);
  }
  SECTION("an unwritten (NaN) element fails") {
    auto got = want;
    got[4] = nan;
    auto r = compare(got, want, {}, guard_ok, 2, 3, exact);
    CHECK_FALSE(r.passed);
    REQUIRE(r.first.size() == 1);
    CHECK(r.first[0].row == 1);
    CHECK(r.first[0].col == 1);
  }
  SECTION("a NaN reference fails too") {
    auto bad_want = want;
    bad_want[0] = nan;
    CHECK_FALSE(compare(want, bad_want, {}, guard_ok, 2, 3, exact).passed);
  }
  SECTION("infinities fail") {
    auto got = want;
    got[2] = std::numeric_limits<float>::infinity();
    Tolerance loose{Dtype::fp32, false, 1 << 20, 1, 0};
    CHECK_FALSE(compare(got, want, {}, guard_ok, 2, 3, loose).passed);
  }
  SECTION("a write into the guard band fails") {
    auto guard = guard_ok;
    guard[1] = 0.0f;
    auto r = compare(want, want, {}, guard, 2, 3, exact);
    CHECK_FALSE(r.passed);
    CHECK(r.guard_writes == 1);
    CHECK(r.summary().find("guard band") != std::string::npos);
  }
  SECTION("an error just inside tolerance passes, just outside fails") {
    Tolerance t{Dtype::fp32, false, 4096, 1, 0};
    const double tol = t.at(0, 0);
    auto got = want;
    got[0] = float(want[0] + 0.5 * tol);
    CHECK(compare(got, want, {}, guard_ok, 2, 3, t).passed);
    got[0] = float(want[0] + 2.0 * tol);
    CHECK_FALSE(compare(got, want, {}, guard_ok, 2, 3, t).passed);
  }
}

TEST_CASE("the CPU fp64 reference computes row-major alpha*A*B + beta*C and A*B^T", "[cpu][reference]") {
  // A 2x3, B 3x2 (fp32 layout), hand-computed.
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{7, 8, 9, 10, 11, 12}, c0{1, 1, 1, 1};
  auto c = cpu_gemm_fp32(a, b, c0, 2, 2, 3, 2.0, 0.5);
  CHECK(c == std::vector<double>{2 * 58 + 0.5, 2 * 64 + 0.5, 2 * 139 + 0.5, 2 * 154 + 0.5});
  // bf16 layout: B is n x k (2 x 3): rows (7, 9, 11) and (8, 10, 12) give the same product.
  const std::vector<float> bt{7, 9, 11, 8, 10, 12};
  CHECK(cpu_gemm_bf16(a, bt, 2, 2, 3) == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("command line: defaults, values and refusals", "[cpu][cli]") {
  SECTION("defaults") {
    Options o = parse_options_or_throw({});
    CHECK(o.m == 4096);
    CHECK(o.n == 4096);
    CHECK(o.k == 4096);
    CHECK(o.reps >= 20);
    CHECK_FALSE(o.exact);
  }
  SECTION("values") {
    Options o = parse_options_or_throw({"--m", "17", "--n", "5", "--k", "3", "--alpha", "2", "--beta",
                                        "-1", "--exact", "--seed", "9", "--csv", "x.csv", "--check-only"});
    CHECK(o.m == 17);
    CHECK(o.n == 5);
    CHECK(o.k == 3);
    CHECK(o.alpha == 2.0f);
    CHECK(o.beta == -1.0f);
    CHECK(o.exact);
    CHECK(o.seed == 9);
    CHECK(o.csv == "x.csv");
    CHECK(o.check_only);
  }
  SECTION("refusals") {
    CHECK_THROWS_AS(parse_options_or_throw({"--bogus"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--m", "abc"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--m", "0"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--n", "-5"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--k", "99999999999"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--reps", "5"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--check-only", "--no-check"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--exact", "--alpha", "0.3"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--exact", "--k", std::to_string(kMaxExactK + 1)}), Error);
    CHECK_NOTHROW(parse_options_or_throw({"--exact", "--k", std::to_string(kMaxExactK)}));
    CHECK_THROWS_AS(parse_options_or_throw({"--alpha", "nan"}), Error);
    CHECK_THROWS_AS(parse_options_or_throw({"--m"}), Error);
  }
}

TEST_CASE("registry: every step is registered once, in order, with a launcher of its dtype", "[cpu][registry]") {
  const auto steps = registered_steps();
  REQUIRE(steps.size() >= 4);
  CHECK(find_step("00").name == "cublas");
  CHECK(find_step("01").name == "naive");
  CHECK_THROWS_AS(find_step("zz"), Error);
  for (size_t i = 1; i < steps.size(); ++i) CHECK(steps[i - 1].id < steps[i].id);
  for (const Step& s : steps) {
    CAPTURE(s.id);
    CHECK((s.dtype == Dtype::fp32 ? s.fp32 != nullptr : s.dtype == Dtype::bf16 ? s.bf16 != nullptr : s.fp8 != nullptr));
    CHECK_FALSE(s.technique.empty());
  }
  CHECK_THROWS_AS(register_step(find_step("00")), Error);  // duplicate id
  // Step 09b comes between 09 and 10 in the registry's order (the order of every table and run): a
  // lettered side step keeps the steps after it in place.
  std::vector<std::string> ids;
  for (const Step& s : steps) ids.push_back(s.id);
  const auto at = [&](const char* id) { return std::find(ids.begin(), ids.end(), id) - ids.begin(); };
  CHECK(at("09") + 1 == at("09b"));
  CHECK(at("09b") + 1 == at("10"));
}

TEST_CASE("registry: tile metadata is all set or all absent, and the step workspace is declared", "[cpu][registry]") {
  Step s = find_step("01");
  s.id = "zz_partial_tile";
  s.tile = {128, 128, 0, 1};  // BK missing
  CHECK_THROWS_WITH(register_step(s), Catch::Contains("set all of them"));
  s.tile = {128, 128, 8, 1};
  s.threads = 0;  // a tile without a block size
  CHECK_THROWS_WITH(register_step(s), Catch::Contains("set all of them"));
  CHECK_THROWS_AS(find_step("zz_partial_tile"), Error);  // neither was added
  // 09b declares its stream-K scratch; 09 (the same pipeline without stream-K) needs none, and a step
  // that declares none is launched with a null workspace of 0 bytes.
  CHECK(find_step("09b").workspace_bytes != nullptr);
  CHECK(find_step("09").workspace_bytes == nullptr);
  const Fp32Gemm args{};
  CHECK(args.workspace == nullptr);
  CHECK(args.workspace_bytes == 0);
}

TEST_CASE("shape predicates: sizes below 1 and grids over the limit are refused with a reason", "[cpu][registry]") {
  for (const Step& s : registered_steps()) {
    CAPTURE(s.id);
    auto why = refusal(s, 0, 16, 16);
    REQUIRE(why.has_value());
    CHECK(why->find("M, N and K must be >= 1") != std::string::npos);
    CHECK(refusal(s, 16, 16, -1).has_value());
  }
  // Step 01 maps N to grid y (at most 65535 blocks of 32), step 02 and 03 map M there.
  CHECK(refusal(find_step("01"), 1, 65535 * 32, 1) == std::nullopt);
  auto why = refusal(find_step("01"), 1, 65535 * 32 + 1, 1);
  REQUIRE(why.has_value());
  CHECK(why->find("grid axis y") != std::string::npos);
  CHECK(refusal(find_step("01"), 3'000'000, 1, 1) == std::nullopt);  // tall: M on grid x
  CHECK(refusal(find_step("02"), 3'000'000, 1, 1).has_value());
  CHECK(refusal(find_step("03"), 3'000'000, 1, 1).has_value());
  CHECK(refusal(find_step("02"), 1, 3'000'000, 1) == std::nullopt);
}

TEST_CASE("the TMA swizzle map: a permutation of 16-byte chunks within each 8-row group, chunk c of row r at c ^ (r % 8) under 128B", "[cpu][swizzle]") {
  // 128B: the pattern of the CUDA Programming Guide's table, row by row.
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t c = 0; c < 8; ++c)
      for (uint32_t b = 0; b < 16; b += 4)
        CHECK(swizzle::byte_offset<128>(r * 128 + c * 16 + b) == r * 128 + ((c ^ (r % 8)) * 16) + b);
  // Every span: a bijection on each 1024-byte atom that keeps 16-byte chunks whole and rows in place.
  auto check_span = [](auto span_tag) {
    constexpr uint32_t S = decltype(span_tag)::value;
    std::vector<int> hit(2048, 0);
    for (uint32_t x = 0; x < 2048; ++x) {
      const uint32_t y = swizzle::byte_offset<S>(x);
      REQUIRE(y < 2048);
      CHECK(y / 128 == x / 128);  // same 128-byte row
      CHECK(y % 16 == x % 16);    // same byte within its chunk
      CHECK(((y / 16) ^ (x / 16)) < S / 16);  // the chunk moves only within its S-byte span
      ++hit[y];
    }
    CHECK(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; }));
  };
  check_span(std::integral_constant<uint32_t, 32>{});
  check_span(std::integral_constant<uint32_t, 64>{});
  check_span(std::integral_constant<uint32_t, 128>{});
  // A twin that must fail: the identity is not the 128B map (row 1's chunk 0 moves to chunk 1).
  CHECK(swizzle::byte_offset<128>(128) != 128);
}
