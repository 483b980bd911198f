// Result rows: what one measured kernel (the step or a reference, burst or sustained) reports, and
// where it goes: the printed table, the CSV rows of results/<gpu>*.csv and the one summary line that
// scripts and people grep for.
#pragma once
#include <string>
#include <vector>

#include "../kernel_lib/registry.hpp"
#include "device_info.hpp"
#include "problem.hpp"
#include "timing.hpp"

namespace gemm {

/// One kernel in one mode ("burst": the paired loop; "sustained": back to back alone).
struct Row {
  std::string mode, kernel, detail;  ///< kernel: "step" or a reference's name
  Timing t;
  RatioStats ratio;  ///< the step's speed over this kernel's; in burst mode the paired median and quartiles
  double clock_mhz = 0;
  std::string clock_source;  ///< "probe" (the %clock64 probe after each launch) or "nvml"
  double power_w = 0, joules = 0;  ///< 0: not measured
  std::string reasons;             ///< NVML clock reasons ("sw_power_cap", ...)
  int rounds = 0;                  ///< paired rounds, or launches in the settled part
  double rel_rms_err = -1;         ///< relative RMS error against the check's oracle (fp8 runs); < 0: not measured
  Row(std::string mode_, std::string kernel_, std::string detail_, Timing timing)
      : mode(std::move(mode_)), kernel(std::move(kernel_)), detail(std::move(detail_)), t(std::move(timing)) {}
};

/// What every row of one run shares: the step, the problem, the device and the check's verdict.
struct RunInfo {
  const Step& step;
  const Problem& problem;
  const DeviceInfo& device;
  std::string program;  ///< "NN_name"
  std::string check;    ///< "pass" (or CheckReport::check_column()'s "pass (the fp64 oracle's: ...)"), "exact" or "skipped"
};

/// Prints the table of `rows` (ms, TFLOP/s, ratio with its IQR, SM clock, fraction of the speed of
/// light at that clock, power, TFLOP/J); rows[0] is the step's burst row.
void print_table(const RunInfo& run, const std::vector<Row>& rows);
/// Prints the line scripts and people grep for, `NN_name dtype M N K  ms  TFLOP/s  cuBLAS TFLOP/s
/// paired ratio R [IQR a-b]  check`, when `rows` hold cuBLAS's burst row. fp8 runs are paired with
/// cuBLASLt FP8 instead: `NN_name fp8 M N K  ms  TFLOP/s  cuBLASLt TFLOP/s paired ratio R [IQR a-b]
/// fast-accum TFLOP/s ratio R [IQR a-b]  rel RMS err E (cuBLASLt E')  check`, when `rows` hold the
/// burst row fp8_ratio_reference picks (the fast-accumulation part when its row is there too). Against
/// the stand-in, `cuBLASLt` reads `cuBLASLt per-tensor stand-in` and the line says why after the ratio.
void print_summary_line(const RunInfo& run, const std::vector<Row>& rows);

/// The kernel names of the cuBLASLt FP8 references (measure.cpp), as the rows and the CSVs carry them:
/// the step's scaling with default accumulation; per-tensor with fast accumulation; and per-tensor with
/// default accumulation timed in place of the first where cuBLASLt has no block-scaled algorithm for
/// the shape (at M = 1 on Hopper): on the same e4m3 data, but another product than the step's.
inline constexpr char kLtBest[] = "cublaslt_best", kLtFast[] = "cublaslt_fast", kLtStandIn[] = "cublaslt_stand_in";

/// The burst row an fp8 run's paired ratio is reported against: cuBLASLt with the step's scaling
/// (kLtBest), else the per-tensor stand-in (kLtStandIn); nullptr when `rows` hold neither.
const Row* fp8_ratio_reference(const std::vector<Row>& rows);

/// The last two CSV columns of one row: `scaling` ("per_tensor" or "block") and `accumulation` (what
/// summed the row's products over K). fp8 only; both "" for fp32 and bf16 (`dtype`). The step's row:
/// its registered scaling and accumulation (registry.hpp: "tensor_core" or "promoted"). cuBLASLt's:
/// kLtBest the problem's scaling (`scaling`, the step's) and "default"; kLtFast "per_tensor" and
/// "fast"; kLtStandIn "per_tensor" and "default" ("default" and "fast": cuBLASLt's
/// CUBLASLT_MATMUL_DESC_FAST_ACCUM off or on; cublasLt.h: with it on, "intermediate results will not
/// periodically be promoted to a higher precision"). Throws gemm::Error for another kernel of an fp8 run.
struct Fp8Columns {
  std::string scaling, accumulation;
};
Fp8Columns fp8_columns(const Step& step, Dtype dtype, Scaling scaling, const std::string& kernel);

/// The header line of the results CSVs: scripts/results_columns.py knows the same columns (its
/// `header` command prints them; make test compares) and migrates a CSV written before the last ones.
const char* csv_header();

/// Appends one CSV row per entry of `rows` to `path` (the header first when the file is new or
/// empty). Throws gemm::Error when the file cannot be written, or when it holds other columns than
/// csv_header() (the message names the migration that brings an older file to these columns).
void append_csv_rows(const std::string& path, const RunInfo& run, const std::vector<Row>& rows);

/// Dense FLOP per SM clock cycle of the whole GPU for the dtype: bf16 on the tensor cores
/// 4096 per SM (132 SMs: 540,672; H100/H200 datasheet 989 TFLOP/s dense at 1.83 GHz boost is
/// 540,672 x 1.83e9), FP8 twice that, 8192 per SM (datasheet 1979 TFLOP/s dense), fp32 FFMA on the
/// CUDA cores 2 x 128 lanes per SM.
double flop_per_clock(Dtype dtype, int sm_count);

/// Today's date in UTC, "YYYY-MM-DD": the date column of the results CSVs.
std::string today();

}  // namespace gemm
