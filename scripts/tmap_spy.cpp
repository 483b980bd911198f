// build/lib/libtmap_spy.so: an LD_PRELOAD library that logs the tiled TMA tensor maps a process encodes on
// the host through the driver's entry points (cuTensorMapEncodeTiled; im2col maps are not logged): the
// steps', CUTLASS's, and any other library's that asks the driver for the function at run time.
// A tensor map is opaque once encoded (128 bytes passed to the kernel); the call that encodes it is not:
// the box, swizzle, L2 promotion and out-of-bounds fill a library chose for a shape are its arguments.
//
//   LD_PRELOAD=$PWD/build/lib/libtmap_spy.so TMAP_SPY_LOG=maps.log build/bin/tune --shapes 4096x4096x4104 ...
//   scripts/gpu_session.sh tmaps      (the same over TMAP_SHAPES, one table of distinct maps per shape)
//
// How it gets in: the CUDA runtime (static in our binaries and inside cuBLAS) opens libcuda.so.1 and looks
// up cuGetProcAddress_v2 with dlsym, asks it for cuGetProcAddress (versions 11030 and 12000) and takes
// every other driver entry point from that (cudaGetDriverEntryPoint, which tma.cpp uses, included; seen
// with TMAP_SPY_DEBUG=1 on CUDA 13.0). This library defines dlsym, so both lookups return wrappers of
// cuGetProcAddress, which swap cuTensorMapEncodeTiled for a logging one; a dlsym of
// cuTensorMapEncodeTiled itself gets the logging one too. It exports no driver symbol, so a caller
// linked against libcuda's symbol directly is not seen (cuBLAS 13 encodes the maps of its own kernels
// without any of these calls: docs/notebook/hopper.md, "The H200's table completed").
// One line per call: the calling library (dladdr of the return address), then the arguments as the CUDA
// driver API documents them (cuda.h, "Tensor Map Object Management"): dimensions innermost first, strides
// in bytes from dimension 1 on. Nothing is changed: the real function encodes the same map.
// Only pointers into libcuda (an object named libcuda.so*) are wrapped, and each real pointer is kept
// once, so a wrapper library between the caller and the driver is never looped through. Every other
// dlsym, and every dlsym(RTLD_NEXT, ...), ends in a tail call of glibc's (a jump at -O2, which the
// Makefile builds with), so glibc sees the caller's return address and answers as without the spy
// (python/tests/test_scripts.py's TmapSpy runs an RTLD_NEXT wrapper beside it). TMAP_SPY_DEBUG=1 also
// logs every lookup of a wrapped name it sees. Refuses nothing; if glibc's dlsym cannot be found
// (dlvsym by version GLIBC_2.34 or GLIBC_2.2.5, x86-64), every dlsym returns null and the spy logs why.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

using EncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using ProcV2Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using ProcV1Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
using DlsymFn = void* (*)(void*, const char*);

std::mutex g_mutex;
// The real functions, set by whichever thread looks them up first (the same pointer each time).
std::atomic<EncodeFn> g_encode{nullptr};
std::atomic<ProcV2Fn> g_proc_v2{nullptr};
std::atomic<ProcV1Fn> g_proc_v1{nullptr};

DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");  // glibc 2.34 moved dlsym into libc
    if (p == nullptr) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<DlsymFn>(p);
  }();
  return fn;
}

void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* path = std::getenv("TMAP_SPY_LOG");
  FILE* f = path != nullptr ? std::fopen(path, "a") : stderr;
  if (f == nullptr) f = stderr;
  std::fprintf(f, "%s\n", line.c_str());
  if (f != stderr) std::fclose(f);
}

const char* type_name(CUtensorMapDataType t) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return "UINT8";
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: return "UINT16";
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: return "UINT32";
    case CU_TENSOR_MAP_DATA_TYPE_INT32: return "INT32";
    case CU_TENSOR_MAP_DATA_TYPE_UINT64: return "UINT64";
    case CU_TENSOR_MAP_DATA_TYPE_INT64: return "INT64";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: return "FLOAT16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: return "FLOAT32";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return "FLOAT64";
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return "BFLOAT16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: return "FLOAT32_FTZ";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: return "TFLOAT32";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return "TFLOAT32_FTZ";
    default: return "other";
  }
}

const char* swizzle_name(CUtensorMapSwizzle s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return "none";
    case CU_TENSOR_MAP_SWIZZLE_32B: return "32B";
    case CU_TENSOR_MAP_SWIZZLE_64B: return "64B";
    case CU_TENSOR_MAP_SWIZZLE_128B: return "128B";
    default: return "other";
  }
}

const char* promotion_name(CUtensorMapL2promotion p) {
  switch (p) {
    case CU_TENSOR_MAP_L2_PROMOTION_NONE: return "none";
    case CU_TENSOR_MAP_L2_PROMOTION_L2_64B: return "64B";
    case CU_TENSOR_MAP_L2_PROMOTION_L2_128B: return "128B";
    case CU_TENSOR_MAP_L2_PROMOTION_L2_256B: return "256B";
    default: return "other";
  }
}

template <typename T>
std::string joined(const T* v, cuuint32_t n) {
  std::string s;
  for (cuuint32_t i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(static_cast<unsigned long long>(v[i]));
  return s.empty() ? "-" : s;
}

std::string caller_of(const void* ret) {
  Dl_info info{};
  if (ret == nullptr || dladdr(ret, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash != nullptr ? slash + 1 : info.dli_fname;
}

CUresult encode_logged(const std::string& caller, CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* addr,
                       const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                       const cuuint32_t* elem_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                       CUtensorMapL2promotion promotion, CUtensorMapFloatOOBfill oob) {
  const bool ok_rank = rank >= 1 && rank <= 5 && dims != nullptr && box != nullptr && elem_strides != nullptr &&
                       (rank == 1 || strides != nullptr);  // else the driver refuses it: log "?" and pass it on
  log_line("tmap caller=" + caller + " type=" + type_name(type) +
           " rank=" + std::to_string(rank) + " dims=" + (ok_rank ? joined(dims, rank) : "?") +
           " strides=" + (ok_rank ? joined(strides, rank - 1) : "?") + " box=" + (ok_rank ? joined(box, rank) : "?") +
           " elem_strides=" + (ok_rank ? joined(elem_strides, rank) : "?") +
           " interleave=" + std::to_string(static_cast<int>(interleave)) + " swizzle=" + swizzle_name(swizzle) +
           " l2_promotion=" + promotion_name(promotion) + " oob_fill=" + (oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ? "zero" : "nan") +
           " base_mod_1024=" + std::to_string(reinterpret_cast<unsigned long long>(addr) % 1024));
  const EncodeFn real = g_encode.load();
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  return real(map, type, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, promotion, oob);
}

CUresult spy_encode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* addr, const cuuint64_t* dims,
                    const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* elem_strides,
                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
                    CUtensorMapFloatOOBfill oob) {
  return encode_logged(caller_of(__builtin_return_address(0)), map, type, rank, addr, dims, strides, box,
                       elem_strides, interleave, swizzle, promotion, oob);
}

CUresult spy_proc_v2(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
CUresult spy_proc_v1(const char*, void**, int, cuuint64_t);

/// The three driver functions the spy wraps.
bool wrapped_name(const char* symbol) {
  return symbol != nullptr && (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0 ||
                               std::strcmp(symbol, "cuGetProcAddress") == 0 || std::strcmp(symbol, "cuGetProcAddress_v2") == 0);
}

/// True where p lies in the driver's library (libcuda.so*): only those pointers are wrapped, so the spy
/// never keeps one of its own wrappers (or another library's) as the real function.
bool in_driver(const void* p) {
  Dl_info info{};
  if (dladdr(p, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return std::strncmp(slash != nullptr ? slash + 1 : info.dli_fname, "libcuda.so", 10) == 0;
}

/// Keeps the first real pointer seen for a wrapped function (the driver answers the same each time).
template <class Fn>
void keep(std::atomic<Fn>& slot, void* p) {
  Fn none = nullptr;
  slot.compare_exchange_strong(none, reinterpret_cast<Fn>(p));
}

/// The pointer to hand back for a driver function `symbol` whose real address is p: the spy's wrapper
/// for the three it wraps (the real one kept for it), p for everything else. `version` tells the two
/// cuGetProcAddress apart: from CUDA 12.0 the one with the query result (5 arguments), before it 4.
void* wrap(const char* symbol, int version, void* p) {
  if (!wrapped_name(symbol) || p == nullptr || !in_driver(p)) return p;
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
    keep(g_encode, p);
    return reinterpret_cast<void*>(&spy_encode);
  }
  if (std::strcmp(symbol, "cuGetProcAddress_v2") == 0 || version >= 12000) {
    keep(g_proc_v2, p);
    return reinterpret_cast<void*>(&spy_proc_v2);
  }
  keep(g_proc_v1, p);
  return reinterpret_cast<void*>(&spy_proc_v1);
}

bool debugging() {
  static const bool on = std::getenv("TMAP_SPY_DEBUG") != nullptr;
  return on;
}

void debug(const std::string& what, const char* symbol) { log_line("tmap_spy: " + what + " " + (symbol ? symbol : "(null)")); }

CUresult spy_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  const ProcV2Fn real = g_proc_v2.load();
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (debugging()) debug("cuGetProcAddress " + std::to_string(version), symbol);
  if (r == CUDA_SUCCESS && pfn != nullptr) *pfn = wrap(symbol, version, *pfn);
  return r;
}

CUresult spy_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const ProcV1Fn real = g_proc_v1.load();
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult r = real(symbol, pfn, version, flags);
  if (debugging()) debug("cuGetProcAddress " + std::to_string(version), symbol);
  if (r == CUDA_SUCCESS && pfn != nullptr) *pfn = wrap(symbol, version, *pfn);
  return r;
}

}  // namespace

extern "C" {

/// The process's dlsym: glibc's, with the three driver functions the spy wraps answered by its wrappers
/// (the real ones kept for them) where the lookup found them in libcuda.
void* dlsym(void* handle, const char* symbol) {
  const DlsymFn real = real_dlsym();
  if (real == nullptr) {
    log_line("tmap_spy: glibc's dlsym not found (by version GLIBC_2.34 or GLIBC_2.2.5): every dlsym returns null");
    return nullptr;
  }
  if (handle == RTLD_NEXT || !wrapped_name(symbol)) return real(handle, symbol);  // a tail call: glibc sees our caller
  void* p = real(handle, symbol);
  if (debugging()) debug(std::string("dlsym") + (p ? "" : " (none)"), symbol);
  return wrap(symbol, 0, p);
}

}  // extern "C"
