// The C API (gemm_steps.h) over the step registry: resolves a step, admits the call as the harness
// does (registry.hpp's refusal(), then the workspace the step declares), and calls the step's launcher
// on the caller's pointers and stream. Every failure becomes a return code and a thread-local line;
// no exception leaves this file (the library's version script exports only the gemm_steps_* symbols).
#include "gemm_steps.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "../kernel_lib/check.hpp"
#include "../kernel_lib/registry.hpp"

namespace {

thread_local std::string t_error;

/// A refusal of this API: the code to return and its line.
struct Failure {
  int code;
  std::string message;
};

[[noreturn]] void fail(int code, std::string message) { throw Failure{code, std::move(message)}; }

/// Runs f, turning every exception into a code and the thread's message (one line).
template <class F>
int guarded(F&& f) noexcept {
  int code = GEMM_STEPS_OK;
  std::string message;
  try {
    f();
  } catch (const Failure& e) {
    code = e.code, message = e.message;
  } catch (const gemm::OutOfMemory& e) {
    code = GEMM_STEPS_ERR_OUT_OF_MEMORY, message = e.what();
  } catch (const gemm::Error& e) {  // a launcher's check or a CUDA / driver / cuBLAS status (check.hpp)
    code = GEMM_STEPS_ERR_LAUNCH, message = e.what();
  } catch (const std::bad_alloc&) {
    code = GEMM_STEPS_ERR_INTERNAL, message = "out of host memory";
  } catch (const std::exception& e) {
    code = GEMM_STEPS_ERR_INTERNAL, message = std::string("internal error: ") + e.what();
  } catch (...) {
    code = GEMM_STEPS_ERR_INTERNAL, message = "internal error: an unknown exception";
  }
  try {
    for (char& ch : message)
      if (ch == '\n' || ch == '\r') ch = ' ';
    t_error = std::move(message);
  } catch (...) {  // no memory for the message: the code still says what happened
    t_error.clear();
  }
  return code;
}

/// The registered steps (fixtures are not linked into the library; skipped all the same), sorted by id.
/// Read on first use, after every step object's static registration ran (the library is loaded).
const std::vector<gemm::Step>& steps() {
  static const std::vector<gemm::Step> all = [] {
    std::vector<gemm::Step> v;
    for (const gemm::Step& s : gemm::registered_steps())
      if (!s.fixture) v.push_back(s);
    return v;
  }();
  return all;
}

const char* dtype_word(gemm::Dtype d) { return gemm::dtype_name(d); }

gemm::Dtype to_dtype(int dtype) {
  switch (dtype) {
    case GEMM_STEPS_FP32: return gemm::Dtype::fp32;
    case GEMM_STEPS_BF16: return gemm::Dtype::bf16;
    case GEMM_STEPS_FP8: return gemm::Dtype::fp8;
  }
  fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "dtype " + std::to_string(dtype) + " is none of GEMM_STEPS_FP32, _BF16, _FP8");
}

gemm::Scaling to_scaling(int scaling) {
  if (scaling == GEMM_STEPS_PER_TENSOR) return gemm::Scaling::per_tensor;
  if (scaling == GEMM_STEPS_BLOCK) return gemm::Scaling::block;
  fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "scaling " + std::to_string(scaling) + " is neither GEMM_STEPS_PER_TENSOR nor _BLOCK");
}

/// The last step of a dtype (and an fp8 scaling): the highest id.
const gemm::Step& last_step(gemm::Dtype dtype, gemm::Scaling scaling) {
  const gemm::Step* last = nullptr;
  for (const gemm::Step& s : steps())
    if (s.dtype == dtype && (dtype != gemm::Dtype::fp8 || s.scaling == scaling)) last = &s;
  if (!last)
    fail(GEMM_STEPS_ERR_UNKNOWN_STEP, std::string("no ") + dtype_word(dtype) +
                                          (dtype == gemm::Dtype::fp8 ? std::string(" ") + gemm::scaling_name(scaling) : "") +
                                          " step is registered");
  return *last;
}

const gemm::Step& find(const char* id) {
  if (!id) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "step is NULL: name a step id (gemm_steps_last gives the last one's)");
  for (const gemm::Step& s : steps())
    if (s.id == id) return s;
  std::string known;
  for (const gemm::Step& s : steps()) known += (known.empty() ? "" : " ") + s.id;
  fail(GEMM_STEPS_ERR_UNKNOWN_STEP, std::string("no step '") + id + "' (registered: " + known + ")");
}

/// The step a run call names (NULL: the last of its dtype and scaling), checked against the call.
const gemm::Step& resolve(const char* id, gemm::Dtype dtype, gemm::Scaling scaling) {
  const gemm::Step& s = id ? find(id) : last_step(dtype, scaling);
  static const char* const call[] = {"gemm_steps_fp32", "gemm_steps_bf16", "gemm_steps_fp8"};
  if (s.dtype != dtype)
    fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "step " + s.id + " computes in " + dtype_word(s.dtype) + ": call " +
                                              call[int(s.dtype)] + ", not " + call[int(dtype)]);
  if (dtype == gemm::Dtype::fp8 && s.scaling != scaling)
    fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "step " + s.id + " takes " + gemm::scaling_name(s.scaling) + " scales, not " +
                                              gemm::scaling_name(scaling));
  return s;
}

std::string shape(int m, int n, int k) {
  return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
}

/// The step's shape limits (registry.hpp's refusal() without a GPU).
void admit_shape(const gemm::Step& s, int m, int n, int k) {
  if (auto why = gemm::refusal(s, m, n, k)) fail(GEMM_STEPS_ERR_REFUSED, "step " + s.id + " refuses " + shape(m, n, k) + ": " + *why);
}

std::string hex(const void* p) {
  char buf[2 + 16 + 1];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

void check_pointer(const void* p, const char* what, unsigned alignment) {
  if (!p) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0)
    fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, std::string(what) + " (" + hex(p) + ") is not " + std::to_string(alignment) +
                                              "-byte aligned");
}

/// Makes `device` current for the scope (-1: leaves the current one), restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    int count = 0;
    const cudaError_t st = cudaGetDeviceCount(&count);
    if (st != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      fail(GEMM_STEPS_ERR_NO_DEVICE, std::string("no CUDA device: ") +
                                         (st != cudaSuccess ? cudaGetErrorString(st) : "cudaGetDeviceCount found none"));
    }
    if (device < -1 || device >= count)
      fail(GEMM_STEPS_ERR_NO_DEVICE, "device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                                         " CUDA device(s); -1 for the current one)");
    CUDA_CHECK(cudaGetDevice(&current_));
    if (device >= 0 && device != current_) {
      CUDA_CHECK(cudaSetDevice(device));
      previous_ = current_;
      current_ = device;
    }
  }
  ~DeviceScope() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  int device() const { return current_; }

 private:
  int current_ = 0, previous_ = -1;
};

/// The device as refusal() sees it (compute capability and name), once per device.
gemm::Gpu gpu_of(int device) {
  static std::mutex mu;
  static std::map<int, gemm::Gpu> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return cache[device] = gemm::Gpu{prop.major, prop.minor, prop.name};
}

/// The compute capability (after the shape: a refused shape is said without a GPU), then the workspace.
void admit_launch(const gemm::Step& s, int m, int n, int k, const DeviceScope& dev, const void* workspace,
                  size_t workspace_bytes) {
  const gemm::Gpu gpu = gpu_of(dev.device());
  if (auto why = gemm::refusal(s, m, n, k, &gpu)) fail(GEMM_STEPS_ERR_REFUSED, "step " + s.id + " refuses " + shape(m, n, k) + ": " + *why);
  const size_t need = s.workspace_bytes ? s.workspace_bytes(m, n, k) : 0;
  if (need > 0 && (!workspace || workspace_bytes < need))
    fail(GEMM_STEPS_ERR_WORKSPACE, "step " + s.id + " needs a workspace of " + std::to_string(need) + " bytes for " +
                                       shape(m, n, k) + " (got " + std::to_string(workspace ? workspace_bytes : 0) +
                                       "): gemm_steps_workspace_bytes says how much");
  if (workspace && reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
    fail(GEMM_STEPS_ERR_WORKSPACE, "the workspace (" + hex(workspace) + ") is not 16-byte aligned");
}

cudaStream_t to_stream(gemm_steps_stream s) { return reinterpret_cast<cudaStream_t>(s); }

}  // namespace

extern "C" {

int gemm_steps_abi_version(void) { return GEMM_STEPS_ABI_VERSION; }

const char* gemm_steps_last_error(void) { return t_error.c_str(); }

int gemm_steps_device_count(int* count) {
  return guarded([&] {
    if (!count) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "count is NULL");
    *count = 0;
    if (cudaGetDeviceCount(count) != cudaSuccess) {  // no driver, or no device: none
      (void)cudaGetLastError();
      *count = 0;
    }
  });
}

int gemm_steps_count(int* count) {
  return guarded([&] {
    if (!count) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "count is NULL");
    *count = int(steps().size());
  });
}

int gemm_steps_get_info(int index, gemm_steps_info* info) {
  return guarded([&] {
    if (!info) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "info is NULL");
    if (index < 0 || size_t(index) >= steps().size())
      fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "index " + std::to_string(index) + " is outside 0.." + std::to_string(steps().size() - 1));
    const gemm::Step& s = steps()[size_t(index)];
    const gemm::Capabilities& c = s.caps;
    *info = gemm_steps_info{
        s.id.c_str(), s.name.c_str(), s.parent.c_str(), s.technique.c_str(),
        s.dtype == gemm::Dtype::fp32 ? GEMM_STEPS_FP32 : s.dtype == gemm::Dtype::bf16 ? GEMM_STEPS_BF16 : GEMM_STEPS_FP8,
        s.scaling == gemm::Scaling::block ? GEMM_STEPS_BLOCK : GEMM_STEPS_PER_TENSOR,
        s.required_cc, s.workspace_bytes != nullptr, s.persistent,
        s.tile.bm, s.tile.bn, s.tile.bk, s.tile.stages, s.threads,
        (c.stream_k ? unsigned(GEMM_STEPS_CAP_STREAM_K) : 0u) | (c.swap_ab ? unsigned(GEMM_STEPS_CAP_SWAP_AB) : 0u) |
            (c.tile_menu ? unsigned(GEMM_STEPS_CAP_TILE_MENU) : 0u) | (c.split_k ? unsigned(GEMM_STEPS_CAP_SPLIT_K) : 0u) |
            (c.swap_sized ? unsigned(GEMM_STEPS_CAP_SWAP_SIZED) : 0u) | (c.pad_pitch ? unsigned(GEMM_STEPS_CAP_PAD_PITCH) : 0u) |
            (c.measured ? unsigned(GEMM_STEPS_CAP_MEASURED) : 0u)};
  });
}

int gemm_steps_last(int dtype, int scaling, const char** id) {
  return guarded([&] {
    if (!id) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "id is NULL");
    const gemm::Dtype d = to_dtype(dtype);
    *id = last_step(d, d == gemm::Dtype::fp8 ? to_scaling(scaling) : gemm::Scaling::per_tensor).id.c_str();
  });
}

int gemm_steps_refusal(const char* step, int m, int n, int k) {
  return guarded([&] { admit_shape(find(step), m, n, k); });
}

int gemm_steps_workspace_bytes(const char* step, int m, int n, int k, int device, size_t* bytes) {
  return guarded([&] {
    if (!bytes) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "bytes is NULL");
    const gemm::Step& s = find(step);
    admit_shape(s, m, n, k);
    DeviceScope dev(device);
    *bytes = s.workspace_bytes ? s.workspace_bytes(m, n, k) : 0;
  });
}

int gemm_steps_workspace_alloc(size_t bytes, int device, void** ptr) {
  return guarded([&] {
    if (!ptr) fail(GEMM_STEPS_ERR_INVALID_ARGUMENT, "ptr is NULL");
    *ptr = nullptr;
    if (bytes == 0) return;
    DeviceScope dev(device);
    void* p = nullptr;
    const cudaError_t st = cudaMalloc(&p, bytes);
    if (st == cudaErrorMemoryAllocation) gemm::throw_allocation_error(bytes);
    if (st != cudaSuccess) gemm::throw_cuda(st, "cudaMalloc(&p, bytes)", __FILE__, __LINE__);
    const cudaError_t zero = cudaMemset(p, 0, bytes);
    if (zero != cudaSuccess) {
      cudaFree(p);
      gemm::throw_cuda(zero, "cudaMemset(p, 0, bytes)", __FILE__, __LINE__);
    }
    *ptr = p;
  });
}

int gemm_steps_workspace_free(void* ptr, int device) {
  return guarded([&] {
    if (!ptr) return;
    DeviceScope dev(device);
    CUDA_CHECK(cudaFree(ptr));
  });
}

int gemm_steps_workspace_clear(void* ptr, size_t bytes, int device, gemm_steps_stream stream) {
  return guarded([&] {
    if (bytes == 0) return;
    check_pointer(ptr, "the workspace", 1);
    DeviceScope dev(device);
    CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, to_stream(stream)));
  });
}

int gemm_steps_fp32(const char* step, int m, int n, int k, float alpha, const void* a, const void* b, float beta,
                    void* c, void* workspace, size_t workspace_bytes, int device, gemm_steps_stream stream) {
  return guarded([&] {
    const gemm::Step& s = resolve(step, gemm::Dtype::fp32, gemm::Scaling::per_tensor);
    admit_shape(s, m, n, k);
    check_pointer(a, "a", 16), check_pointer(b, "b", 16), check_pointer(c, "c", 16);
    DeviceScope dev(device);
    admit_launch(s, m, n, k, dev, workspace, workspace_bytes);
    gemm::Fp32Gemm p{m, n, k, alpha, beta, static_cast<const float*>(a), static_cast<const float*>(b),
                     static_cast<float*>(c), workspace, workspace ? workspace_bytes : 0};
    s.fp32(p, to_stream(stream));
  });
}

int gemm_steps_bf16(const char* step, int m, int n, int k, const void* a, const void* b, void* c, void* workspace,
                    size_t workspace_bytes, int device, gemm_steps_stream stream) {
  return guarded([&] {
    const gemm::Step& s = resolve(step, gemm::Dtype::bf16, gemm::Scaling::per_tensor);
    admit_shape(s, m, n, k);
    check_pointer(a, "a", 16), check_pointer(b, "b", 16), check_pointer(c, "c", 16);
    DeviceScope dev(device);
    admit_launch(s, m, n, k, dev, workspace, workspace_bytes);
    gemm::Bf16Gemm p{m, n, k, static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                     static_cast<__nv_bfloat16*>(c), workspace, workspace ? workspace_bytes : 0};
    s.bf16(p, to_stream(stream));
  });
}

int gemm_steps_fp8(const char* step, int scaling, int m, int n, int k, const void* a, const void* b,
                   const float* scale_a, const float* scale_b, void* c, void* workspace, size_t workspace_bytes,
                   int device, gemm_steps_stream stream) {
  return guarded([&] {
    const gemm::Scaling sc = to_scaling(scaling);
    const gemm::Step& s = resolve(step, gemm::Dtype::fp8, sc);
    admit_shape(s, m, n, k);
    check_pointer(a, "a", 16), check_pointer(b, "b", 16), check_pointer(c, "c", 16);
    const bool block = sc == gemm::Scaling::block;
    check_pointer(scale_a, block ? "scale_a (sfa)" : "scale_a", 4), check_pointer(scale_b, block ? "scale_b (sfb)" : "scale_b", 4);
    DeviceScope dev(device);
    admit_launch(s, m, n, k, dev, workspace, workspace_bytes);
    gemm::Fp8Gemm p{m, n, k, static_cast<const __nv_fp8_e4m3*>(a), static_cast<const __nv_fp8_e4m3*>(b),
                    static_cast<__nv_bfloat16*>(c)};
    p.scaling = sc;
    (block ? p.sfa : p.scale_a) = scale_a;
    (block ? p.sfb : p.scale_b) = scale_b;
    p.workspace = workspace;
    p.workspace_bytes = workspace ? workspace_bytes : 0;
    s.fp8(p, to_stream(stream));
  });
}

}  // extern "C"
