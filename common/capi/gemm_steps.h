/* The steps behind a C API: build/lib/libgemmsteps.so (`make lib`), every registered step of kernels/
 * (common/kernel_lib/registry.hpp) run on the caller's device pointers and stream. Plain C (C99 or
 * C++), no CUDA header needed: a stream is a cudaStream_t, passed as gemm_steps_stream.
 *
 * Problems, as the steps compute them (registry.hpp's Fp32Gemm, Bf16Gemm, Fp8Gemm). Every matrix is
 * row-major and packed: row i starts i * (row length) elements after the first (no leading dimension).
 *   fp32  C = alpha * A * B + beta * C: A m x k, B k x n, C m x n, float; when beta == 0, C is not read.
 *   bf16  C = A * B^T (a linear layer): A m x k, B n x k ("K-major"), C m x n, all __nv_bfloat16,
 *         fp32 accumulation.
 *   fp8   C = dequant(A) * dequant(B)^T: A m x k and B n x k e4m3 (__nv_fp8_e4m3, one byte each),
 *         C m x n bf16, fp32 accumulation; real value = stored e4m3 value * scale, with
 *         GEMM_STEPS_PER_TENSOR: scale_a, scale_b each point at one float (device memory);
 *         GEMM_STEPS_BLOCK:      1 x 128 blocks of A, 128 x 128 blocks of B (DeepSeek-V3's recipe):
 *                                scale_a = sfa, ceil(k/128) x m floats, row-major (m contiguous);
 *                                scale_b = sfb, ceil(n/128) x ceil(k/128) floats, row-major.
 * Pointers are device pointers on `device` (scales 4-byte aligned, A, B, C and the workspace 16-byte
 * aligned: the steps read rows with TMA and 16-byte vector loads; cudaMalloc gives 256). Each step
 * adds its own shape limits (e.g. K % 8 == 0 for the Hopper bf16 steps): gemm_steps_refusal says
 * which, without a GPU. Bf16 and fp8 steps from 10 on run on compute capability 9.0 only (sm_90a).
 *
 * Status: every function returns GEMM_STEPS_OK (0) or one of the codes below, and then
 * gemm_steps_last_error() holds one line naming the cause (the step's own refusal message, the CUDA
 * error, the argument). Nothing here prints, exits or aborts; every C++ exception stops at this API.
 * A launch is asynchronous, as any kernel launch: a fault inside a kernel shows up at a later call on
 * the stream (cudaStreamSynchronize), as CUDA reports it.
 *
 * The workspace: scratch device memory some steps need (stream-K and split-K partial sums and their
 * counters, step 28's padded copies of A and B). gemm_steps_workspace_bytes gives its size for a
 * step and shape on a device (0: none; then workspace may be NULL). It must be 16-byte aligned and
 * zero on first use (gemm_steps_workspace_alloc gives such a buffer); a launch leaves its counters
 * zero again, but not the rest, so zero it again (gemm_steps_workspace_clear) before using it for
 * another step or shape than the previous launch that used it, and after a launch that failed.
 * Launches that share one workspace must be ordered (one stream); two in flight at once need two.
 *
 * The steps: a step is named by its id ("06", "09b", "29"); NULL names the last step of the call's
 * dtype (and, for fp8, of its scaling): the highest id of that kind, as gemm_steps_last says. The
 * last bf16 step (29) is the family's measured dispatch: it picks a configuration per shape. */
#ifndef GEMM_STEPS_H
#define GEMM_STEPS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a declaration here changes; the Python package checks it. */
#define GEMM_STEPS_ABI_VERSION 1

/* Return codes. */
enum {
  GEMM_STEPS_OK = 0,
  GEMM_STEPS_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a misaligned one, an unknown enum value, a step
                                          of another dtype or scaling than the call's */
  GEMM_STEPS_ERR_UNKNOWN_STEP = 2,     /* no registered step has this id */
  GEMM_STEPS_ERR_REFUSED = 3,          /* the step refuses this shape (its limits) or this GPU (its
                                          compute capability); the message is the step's */
  GEMM_STEPS_ERR_WORKSPACE = 4,        /* the workspace is NULL, smaller than the step needs, or misaligned */
  GEMM_STEPS_ERR_NO_DEVICE = 5,        /* no CUDA device or driver (or `device` out of range) */
  GEMM_STEPS_ERR_LAUNCH = 6,           /* the launch failed: a CUDA error (the message names it) or a
                                          check of the step's launcher */
  GEMM_STEPS_ERR_OUT_OF_MEMORY = 7,    /* gemm_steps_workspace_alloc: the device has not that much free */
  GEMM_STEPS_ERR_INTERNAL = 8          /* anything else (a bug: please report the message) */
};

/* Element types (a step's dtype) and FP8 scalings. */
enum { GEMM_STEPS_FP32 = 0, GEMM_STEPS_BF16 = 1, GEMM_STEPS_FP8 = 2 };
enum { GEMM_STEPS_PER_TENSOR = 0, GEMM_STEPS_BLOCK = 1 };

/* Capability bits (registry.hpp's Capabilities: what a launcher does beyond the plain tile loop). */
enum {
  GEMM_STEPS_CAP_STREAM_K = 1 << 0,   /* the last partial wave shared out by K tiles, with a fixup */
  GEMM_STEPS_CAP_SWAP_AB = 1 << 1,    /* small M runs swapped, C^T = B * A^T */
  GEMM_STEPS_CAP_TILE_MENU = 1 << 2,  /* the tile is picked per shape from a menu */
  GEMM_STEPS_CAP_SPLIT_K = 1 << 3,    /* grids under a wave split K into equal segments */
  GEMM_STEPS_CAP_SWAP_SIZED = 1 << 4, /* the swapped tile is sized to M */
  GEMM_STEPS_CAP_PAD_PITCH = 1 << 5,  /* rows starting inside a 32-byte sector copied to a padded pitch */
  GEMM_STEPS_CAP_MEASURED = 1 << 6    /* the configuration is picked per shape from measurements */
};

/* A cudaStream_t (the same type: a pointer to the runtime's opaque CUstream_st). NULL: the default
 * stream; (gemm_steps_stream)1 and 2: cudaStreamLegacy and cudaStreamPerThread. */
typedef struct CUstream_st* gemm_steps_stream;

/* One registered step, as its registration says. The strings live as long as the library. */
typedef struct gemm_steps_info {
  const char* id;        /* "00" .. "35", "09b": kernels/<id>_<name>.cu */
  const char* name;      /* "measured_dispatch" */
  const char* parent;    /* the step it grows from ("" for a root) */
  const char* technique; /* one line: what this step adds */
  int dtype;             /* GEMM_STEPS_FP32, _BF16 or _FP8 */
  int scaling;           /* fp8: GEMM_STEPS_PER_TENSOR or _BLOCK; GEMM_STEPS_PER_TENSOR otherwise */
  int required_cc;       /* 0: any GPU; 90: compute capability 9.0 only */
  int uses_workspace;    /* 1 when the step may need a workspace (gemm_steps_workspace_bytes says how much) */
  int persistent;        /* 1: one block per SM loops over the tiles */
  int tile_bm, tile_bn, tile_bk, stages, threads; /* the main kernel's tile; all 0 for step 00 (cuBLAS) */
  unsigned caps;         /* GEMM_STEPS_CAP_* bits */
} gemm_steps_info;

/* GEMM_STEPS_ABI_VERSION of the library (compare with the header's). */
int gemm_steps_abi_version(void);

/* The message of the last call on this thread that failed, one line; "" after a call that succeeded.
 * Valid until the next call on this thread. */
const char* gemm_steps_last_error(void);

/* *count CUDA devices this process sees (0 without a driver or a GPU: never an error). */
int gemm_steps_device_count(int* count);

/* The registered steps, sorted by id ("09b" after "09"): *count of them; then index 0 .. count - 1. */
int gemm_steps_count(int* count);
int gemm_steps_get_info(int index, gemm_steps_info* info);

/* The id of the last step of `dtype` (for GEMM_STEPS_FP8, of `scaling`; ignored otherwise): the highest
 * registered id, e.g. "29" for bf16, "35" for block-scaled fp8. */
int gemm_steps_last(int dtype, int scaling, const char** id);

/* GEMM_STEPS_OK when `step` can run an m x n x k problem as far as its shape is concerned, else
 * GEMM_STEPS_ERR_REFUSED with its reason (e.g. "K=100 must be a multiple of 8 ..."). Needs no GPU;
 * the run functions also check the GPU's compute capability. */
int gemm_steps_refusal(const char* step, int m, int n, int k);

/* *bytes of workspace `step` needs for m x n x k on `device` (-1: the calling thread's current one).
 * It may depend on the device's SM count, so it needs the device. Refused shapes: GEMM_STEPS_ERR_REFUSED. */
int gemm_steps_workspace_bytes(const char* step, int m, int n, int k, int device, size_t* bytes);

/* A workspace: cudaMalloc(bytes) on `device`, zeroed (cudaMemset, synchronous); *ptr = NULL for 0 bytes.
 * Free it with gemm_steps_workspace_free. */
int gemm_steps_workspace_alloc(size_t bytes, int device, void** ptr);
int gemm_steps_workspace_free(void* ptr, int device);
/* Zeroes `bytes` of a workspace on `stream` (cudaMemsetAsync), for its reuse (see above). */
int gemm_steps_workspace_clear(void* ptr, size_t bytes, int device, gemm_steps_stream stream);

/* Enqueue one GEMM of `step` (NULL: the last step of the dtype) on `stream` on `device` (-1: the
 * current device; another device is made current for the call and the previous one restored).
 * Checked before anything is launched, in this order: the step (exists, has this dtype and scaling),
 * its shape limits, the pointers, the device and its compute capability, the workspace. */
int gemm_steps_fp32(const char* step, int m, int n, int k, float alpha, const void* a, const void* b, float beta,
                    void* c, void* workspace, size_t workspace_bytes, int device, gemm_steps_stream stream);
int gemm_steps_bf16(const char* step, int m, int n, int k, const void* a, const void* b, void* c, void* workspace,
                    size_t workspace_bytes, int device, gemm_steps_stream stream);
int gemm_steps_fp8(const char* step, int scaling, int m, int n, int k, const void* a, const void* b,
                   const float* scale_a, const float* scale_b, void* c, void* workspace, size_t workspace_bytes,
                   int device, gemm_steps_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* GEMM_STEPS_H */
