// The step registry: every kernels/NN_*.cu registers one Step at static-initialisation time.
// A step executable links exactly one step; the test binary links them all.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemm {

enum class Dtype { fp32, bf16, fp8 };
/// "fp32", "bf16" or "fp8": the spelling used in tables and CSV rows.
const char* dtype_name(Dtype d);

/// fp32 SGEMM problem: C = alpha * A * B + beta * C, all row-major.
/// A is m x k (lda = k), B is k x n (ldb = n), C is m x n (ldc = n). When beta == 0, C is never read.
struct Fp32Gemm {
  int m, n, k;
  float alpha, beta;
  const float* a;
  const float* b;
  float* c;
  void* workspace = nullptr;   ///< the step's workspace (see "The step workspace" below); nullptr: none
  size_t workspace_bytes = 0;  ///< its size in bytes
};

/// bf16 problem (the layout of a linear layer): C = A * B^T with fp32 accumulation.
/// A is m x k row-major (lda = k), B is n x k row-major (ldb = k, "K-major"), C is m x n row-major bf16.
struct Bf16Gemm {
  int m, n, k;
  const __nv_bfloat16* a;
  const __nv_bfloat16* b;
  __nv_bfloat16* c;
  void* workspace = nullptr;   ///< the step's workspace (see "The step workspace" below); nullptr: none
  size_t workspace_bytes = 0;  ///< its size in bytes
};

/// How an FP8 problem's dequantization scales are laid out (Fp8Gemm). Real value = q * scale.
enum class Scaling {
  per_tensor,  ///< one fp32 scale for all of A, one for all of B (cuBLASLt's A_SCALE / B_SCALE pointers)
  block,       ///< 1 x 128 blocks of A (per row, per 128 K), 128 x 128 blocks of B (DeepSeek-V3's recipe)
};
/// "per_tensor" or "block".
const char* scaling_name(Scaling s);

/// What sums an FP8 step's products over K (Step::accumulation; the accumulation column of the results
/// CSVs). fp32 and bf16 steps accumulate in fp32 and say none.
enum class Accumulation {
  none,         ///< not an FP8 step
  /// the wgmma accumulators alone for the whole of K: Hopper's FP8 tensor cores keep about 14 significant
  /// bits (fp8.hpp, kMaxExactKFp8), as cuBLASLt does with CUBLASLT_MATMUL_DESC_FAST_ACCUM (step 30)
  tensor_core,
  /// the tensor cores' partial sums added into fp32 registers every K tile (DeepSeek-V3's promotion; 31 on)
  promoted,
};
/// "" (none), "tensor_core" or "promoted".
const char* accumulation_name(Accumulation a);

/// FP8 problem: C = dequant(A) * dequant(B)^T with fp32 accumulation, the layout of the bf16 steps.
/// A is m x k row-major e4m3 (lda = k), B is n x k row-major e4m3 (ldb = k): both K-major, the only
/// layout FP8 wgmma reads from shared memory (PTX ISA, "wgmma.mma_async": the transpose operands
/// imm-trans-a / imm-trans-b exist only for .f16 and .bf16; 8-bit operands are always K-major).
/// C is m x n row-major bf16 (ldc = n).
/// Dequantization, with q the stored e4m3 value:
///   per_tensor: C[i][j] = scale_a * scale_b * sum_k qa[i][k] * qb[j][k]   (D = scale_a scale_b (A B^T),
///               cuBLASLt's CUBLASLT_MATMUL_DESC_A_SCALE_POINTER / B_SCALE_POINTER convention).
///   block:      C[i][j] = sum_k (qa[i][k] * sfa[k/128][i]) * (qb[j][k] * sfb[j/128][k/128]).
/// sfa is ceil(k/128) x m, row-major (m contiguous): the scales of one K block for consecutive rows of A
/// sit side by side, so the producer of a BM-row tile fetches one K tile's BM scales as one contiguous
/// run (one TMA box or one coalesced load) per K tile, instead of BM loads k/128 floats apart.
/// sfb is ceil(n/128) x ceil(k/128), row-major. All scale pointers are device pointers to fp32; the
/// pointers of the other mode are nullptr.
struct Fp8Gemm {
  int m, n, k;
  const __nv_fp8_e4m3* a;
  const __nv_fp8_e4m3* b;
  __nv_bfloat16* c;
  Scaling scaling = Scaling::per_tensor;
  const float* scale_a = nullptr;  ///< per_tensor: one float (device memory)
  const float* scale_b = nullptr;  ///< per_tensor: one float (device memory)
  const float* sfa = nullptr;      ///< block: ceil(k/128) x m floats, m contiguous
  const float* sfb = nullptr;      ///< block: ceil(n/128) x ceil(k/128) floats, K blocks contiguous
  void* workspace = nullptr;       ///< the step's workspace (see "The step workspace" below); nullptr: none
  size_t workspace_bytes = 0;      ///< its size in bytes
};

/// A launcher enqueues the kernel(s) of one step on `stream` and checks the launch status.
/// It may assume the shape passed the step's `unsupported` predicate.
using Fp32Launcher = void (*)(const Fp32Gemm&, cudaStream_t stream);
using Bf16Launcher = void (*)(const Bf16Gemm&, cudaStream_t stream);
using Fp8Launcher = void (*)(const Fp8Gemm&, cudaStream_t stream);

/// Returns a human-readable reason when the step cannot run shape (m, n, k), std::nullopt when it can.
using ShapePredicate = std::optional<std::string> (*)(int m, int n, int k);

/// The step workspace: scratch device memory a step's launcher needs (e.g. 09b's stream-K partial
/// sums and per-tile counters), declared by the step and owned by the harness.
///   - Size: Step::workspace_bytes(m, n, k) bytes for that shape (0: none). It may query the current
///     device (its SM count, an occupancy) but must not allocate or launch anything.
///   - Allocation: once per problem, outside every timed region, by ProblemBuffers::reserve_workspace
///     (check_step and step_main call it through reserve_workspace(step, buffers)); 256-byte aligned
///     (cudaMalloc); passed to every launch of that problem in Fp32Gemm / Bf16Gemm::workspace.
///   - Contents on entry: zero after allocation; after that, whatever the previous launch on the same
///     buffers left. A step that needs some of it zero at entry (counters) must leave it zero when its
///     kernels finish (09b's last-arriving block resets its tile's counter).
///   - Concurrency: launches that share one workspace must be ordered (one stream, as the harness
///     does); two launches in flight at once need two ProblemBuffers.
///   - A launcher given less than it needs throws gemm::Error naming both sizes.
using WorkspaceBytes = size_t (*)(int m, int n, int k);

/// The tile a step's (main) kernel computes, for the tests and tools that are built around it: each
/// block computes BM x BN of C, walking K in BK-wide slices through STAGES shared-memory buffers
/// (1: one buffer, no pipeline; BK = 1: K is not tiled). All zero for a step without a kernel (00).
struct Tile {
  int bm = 0, bn = 0, bk = 0, stages = 0;
};

/// What a step's launcher does beyond the plain tile loop, for the tests and tools that select steps
/// by what they can do (never by id order).
struct Capabilities {
  bool stream_k = false;    ///< a last partial wave shared out by K tiles, with a fixup (21, 23 on)
  bool swap_ab = false;     ///< small M runs swapped, C^T = B * A^T (24 on)
  bool tile_menu = false;   ///< the tile is picked per shape from a menu (25 on)
  bool split_k = false;     ///< grids under a wave split K into equal segments (26 on)
  bool swap_sized = false;  ///< the swapped tile is sized to M, wgmma N 8..64 (27 on)
  bool pad_pitch = false;   ///< rows that start inside a 32-byte sector are copied to a padded pitch (28 on)
  /// The configuration is picked per shape from measurements (29 on): at a given shape it may run
  /// another tile or split than the hand rules behind the capabilities above say, so tests check its
  /// results at their shapes, not that it took their path there.
  bool measured = false;
};

struct Step {
  std::string id;         ///< "00".."99", or a lettered side step ("09b"): kernels/<id>_<name>.cu
  std::string name;       ///< "naive", "gmem_coalescing", ...
  /// The step this one grows from: its diff against the parent's file is its lesson (`make diff
  /// B=<id>`). "" for a root (00, cuBLAS; 01, the first kernel). The steps form a tree: 16 -> 17 is a
  /// side branch, 21 and 22 both grow from 18.
  std::string parent{};
  std::string technique;  ///< one line for tables: what this step adds
  Dtype dtype;
  Fp32Launcher fp32 = nullptr;  ///< set when dtype == fp32
  Bf16Launcher bf16 = nullptr;  ///< set when dtype == bf16
  Fp8Launcher fp8 = nullptr;    ///< set when dtype == fp8
  Scaling scaling = Scaling::per_tensor;  ///< fp8 only: the scaling the step implements (the harness generates it)
  Accumulation accumulation = Accumulation::none;  ///< fp8: required (what sums its products); others: none
  ShapePredicate unsupported = nullptr;  ///< nullptr: every m, n, k >= 1
  int required_cc = 0;  ///< 0: any GPU; 90: exactly compute capability 9.0 (sm_90a code)
  bool fixture = false; ///< a deliberately broken kernel kept for the tests; never benchmarked
  WorkspaceBytes workspace_bytes = nullptr;  ///< nullptr: the step needs no workspace (see above)
  Tile tile{};      ///< the main kernel's tile (steps with two kernels: the data-parallel one)
  int threads = 0;  ///< threads per block of the main kernel; 0: the step launches no kernel of ours
  bool persistent = false;  ///< one long-lived block per SM loops over the tiles (steps 15 on)
  Capabilities caps{};      ///< what the launcher does beyond the plain tile loop (see Capabilities)
};

/// Adds a step; returns true so a step can register with `static const bool registered = ...`.
/// Throws gemm::Error on a duplicate id, a launcher that does not match the dtype, tile metadata
/// that is partly set (a kernel's tile needs BM, BN, BK, STAGES >= 1 and threads >= 1), or an
/// accumulation that does not fit the dtype (an fp8 step must name one; others none).
bool register_step(const Step& step);

/// All registered steps (and test fixtures), sorted by id ("09b" after "09"). A step executable links
/// one step, so its parent is not among them; the test binary links every step and checks the tree
/// (tests/test_cpu.cpp: every parent registered and earlier than its child).
std::vector<Step> registered_steps();

/// The step with this id; throws gemm::Error naming the known ids when there is none.
Step find_step(const std::string& id);

/// The GPU a step is asked to run on, as far as refusals care: its compute capability and name.
struct Gpu {
  int cc_major = 0, cc_minor = 0;
  std::string name = "this GPU";
};

/// Why `step` cannot run C = A B (m x n x k) on `gpu`, or std::nullopt when it can. The one place a
/// run is refused, in this order: M, N and K >= 1; the step's own `unsupported` predicate (shape
/// limits); then, when `gpu` is given, the compute capability the step is built for (required_cc;
/// Hopper steps: exactly 9.0). Without `gpu` (no device yet, or a CPU test) only the shape is judged.
/// The step executables, the tests and the fuzzer all ask here; the messages name the constraint
/// and the numbers.
std::optional<std::string> refusal(const Step& step, int m, int n, int k, const Gpu* gpu = nullptr);

}  // namespace gemm
