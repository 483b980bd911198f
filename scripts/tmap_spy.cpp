// build/lib/libtmap_spy.so: an LD_PRELOAD library that logs every TMA tensor map a process encodes on the
// host (cuTensorMapEncodeTiled), cuBLAS's and cuBLASLt's for their own kernels as well as the steps'.
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
// cuGetProcAddress, which swap cuTensorMapEncodeTiled for a logging one.
// A caller that links libcuda's symbol directly is caught by the cuTensorMapEncodeTiled defined here.
// One line per call: the calling library (dladdr of the return address), then the arguments as the CUDA
// driver API documents them (cuda.h, "Tensor Map Object Management"): dimensions innermost first, strides
// in bytes from dimension 1 on. Nothing is changed: the real function encodes the same map.
// A caller's own dlsym(RTLD_NEXT, ...) is answered as if asked from this library (not seen in cudart or
// cuBLAS). Refuses nothing; if it cannot find the real dlsym or cuGetProcAddress it logs that line and the
// process goes on without the spy (the call then fails as it would without libcuda).
#include <cuda.h>
#include <dlfcn.h>

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
EncodeFn g_encode = nullptr;
ProcV2Fn g_proc_v2 = nullptr;
ProcV1Fn g_proc_v1 = nullptr;

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
  const bool ok_rank = rank >= 1 && rank <= 5;
  log_line("tmap caller=" + caller + " type=" + type_name(type) +
           " rank=" + std::to_string(rank) + " dims=" + (ok_rank ? joined(dims, rank) : "?") +
           " strides=" + (ok_rank ? joined(strides, rank - 1) : "?") + " box=" + (ok_rank ? joined(box, rank) : "?") +
           " elem_strides=" + (ok_rank ? joined(elem_strides, rank) : "?") +
           " interleave=" + std::to_string(static_cast<int>(interleave)) + " swizzle=" + swizzle_name(swizzle) +
           " l2_promotion=" + promotion_name(promotion) + " oob_fill=" + (oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ? "zero" : "nan") +
           " base_mod_1024=" + std::to_string(reinterpret_cast<unsigned long long>(addr) % 1024));
  if (g_encode == nullptr) return CUDA_ERROR_NOT_FOUND;
  return g_encode(map, type, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, promotion, oob);
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

/// Swaps the pointer cuGetProcAddress (either version) returned for one of the functions the spy wraps.
void substitute(const char* symbol, int version, void** pfn) {
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr) return;
  if (std::getenv("TMAP_SPY_DEBUG") != nullptr) log_line(std::string("tmap_spy: cuGetProcAddress ") + symbol + " " + std::to_string(version));
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && *pfn != reinterpret_cast<void*>(&spy_encode)) {
    g_encode = reinterpret_cast<EncodeFn>(*pfn);
    *pfn = reinterpret_cast<void*>(&spy_encode);
  }
  // The runtime asks cuGetProcAddress for cuGetProcAddress itself and uses what it gets from then on:
  // from CUDA 12.0 the version with the query result (5 arguments), before it the 4-argument one.
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    if (version >= 12000 && *pfn != reinterpret_cast<void*>(&spy_proc_v2)) {
      g_proc_v2 = reinterpret_cast<ProcV2Fn>(*pfn);
      *pfn = reinterpret_cast<void*>(&spy_proc_v2);
    } else if (version < 12000 && *pfn != reinterpret_cast<void*>(&spy_proc_v1)) {
      g_proc_v1 = reinterpret_cast<ProcV1Fn>(*pfn);
      *pfn = reinterpret_cast<void*>(&spy_proc_v1);
    }
  }
}

CUresult spy_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  if (g_proc_v2 == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult r = g_proc_v2(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS) substitute(symbol, version, pfn);
  return r;
}

CUresult spy_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (g_proc_v1 == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult r = g_proc_v1(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS) substitute(symbol, version, pfn);
  return r;
}

}  // namespace

extern "C" {

/// The process's dlsym, with three lookups answered by the spy's wrappers (the real ones kept for them).
void* dlsym(void* handle, const char* symbol) {
  const DlsymFn real = real_dlsym();
  if (real == nullptr) {
    log_line("tmap_spy: glibc's dlsym not found; the spy is off");
    return nullptr;
  }
  void* p = real(handle, symbol);
  if (std::getenv("TMAP_SPY_DEBUG") != nullptr) log_line(std::string("tmap_spy: dlsym ") + symbol + (p ? "" : " (none)"));
  if (p == nullptr) return p;
  if (std::strcmp(symbol, "cuGetProcAddress_v2") == 0 && p != reinterpret_cast<void*>(&spy_proc_v2)) {
    g_proc_v2 = reinterpret_cast<ProcV2Fn>(p);
    return reinterpret_cast<void*>(&spy_proc_v2);
  }
  if (std::strcmp(symbol, "cuGetProcAddress") == 0 && p != reinterpret_cast<void*>(&spy_proc_v1)) {
    g_proc_v1 = reinterpret_cast<ProcV1Fn>(p);
    return reinterpret_cast<void*>(&spy_proc_v1);
  }
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && p != reinterpret_cast<void*>(&spy_encode)) {
    g_encode = reinterpret_cast<EncodeFn>(p);
    return reinterpret_cast<void*>(&spy_encode);
  }
  return p;
}

/// For a caller linked against libcuda's symbol: log, then the real function (found past this library).
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* addr,
                                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                const cuuint32_t* elem_strides, CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
                                CUtensorMapFloatOOBfill oob) {
  if (g_encode == nullptr && real_dlsym() != nullptr)
    g_encode = reinterpret_cast<EncodeFn>(real_dlsym()(RTLD_NEXT, "cuTensorMapEncodeTiled"));
  return encode_logged(caller_of(__builtin_return_address(0)), map, type, rank, addr, dims, strides, box,
                       elem_strides, interleave, swizzle, promotion, oob);
}

}  // extern "C"
