#include <curand.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "problem.hpp"
#include "reference.hpp"

namespace gemm {

// Maps uniform 32-bit integers to the integers -2..2 (exact mode).
__global__ void __launch_bounds__(256) small_integers(const unsigned* bits, float* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = float(int(bits[i] % 5u) - 2);
}

__global__ void __launch_bounds__(256) to_bf16(const float* in, __nv_bfloat16* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void __launch_bounds__(256) bf16_to_fp32(const __nv_bfloat16* in, float* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

__global__ void __launch_bounds__(256) to_e4m3_exact(const float* in, __nv_fp8_storage_t* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __nv_cvt_float_to_fp8(in[i], __NV_SATFINITE, __NV_E4M3);  // -2..2: exact in e4m3
}

__global__ void __launch_bounds__(256) fp8_to_fp32(const __nv_fp8_storage_t* in, float* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = e4m3_value(in[i]);
}

// Exact mode's scales: 2^-first, 2^-(first + 1), 2^-(first + 2), repeating over the blocks.
__global__ void __launch_bounds__(256) power_of_two_scales(float* scales, int64_t count, int first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    scales[i] = ldexpf(1.0f, -(first + int(i % 3)));
}

static unsigned grid_for(int64_t count) { return unsigned(std::clamp<int64_t>((count + 255) / 256, 1, 65536)); }

// Fills scratch[0, count) with exact small integers drawn from `gen` (the exact mode's inputs).
static void exact_integers(curandGenerator_t gen, float* scratch, int64_t count) {
  DeviceBuffer<unsigned> bits(count);
  CURAND_CHECK(curandGenerate(gen, bits.get(), count));
  small_integers<<<grid_for(count), 256>>>(bits.get(), scratch, count);
  CUDA_CHECK_LAUNCH();
}

// Fills `dst` (count elements of the problem's dtype) with N(0, 1) or exact small integers.
static void generate(curandGenerator_t gen, const Problem& p, void* dst, int64_t count) {
  // curandGenerateNormal needs an even count: generate into an even-sized fp32 scratch.
  DeviceBuffer<float> scratch((count + 1) / 2 * 2);
  if (p.exact) {
    exact_integers(gen, scratch.get(), count);
  } else {
    CURAND_CHECK(curandGenerateNormal(gen, scratch.get(), scratch.size(), 0.0f, 1.0f));
  }
  if (p.dtype == Dtype::fp32) {
    CUDA_CHECK(cudaMemcpy(dst, scratch.get(), count * sizeof(float), cudaMemcpyDeviceToDevice));
  } else if (p.dtype == Dtype::fp8) {
    throw Error("generate: fp8 operands are made by draw_fp8_input and generate_fp8_exact");
  } else {
    to_bf16<<<grid_for(count), 256>>>(scratch.get(), static_cast<__nv_bfloat16*>(dst), count);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

// Draws one fp8 operand before quantization, rows x k (A: rows = m; B, `is_b`: rows = n), into an
// even-sized buffer (curandGenerateNormal fills an even count; the last element of an odd one is never
// read): N(0, 1), then for Dist::llm A's outlier channels or B's per-block sigmas (fp8.hpp).
static DeviceBuffer<float> draw_fp8_input(curandGenerator_t gen, const Problem& p, bool is_b, int64_t rows) {
  const int64_t count = rows * p.k;
  DeviceBuffer<float> x((count + 1) / 2 * 2);
  CURAND_CHECK(curandGenerateNormal(gen, x.get(), x.size(), 0.0f, 1.0f));
  if (p.dist == Dist::llm && count > 0) {
    const std::vector<float> table =
        is_b ? llm_block_sigmas(rows, p.k, p.seed, p.llm) : llm_channel_factors(p.k, p.seed, p.llm);
    DeviceBuffer<float> d_table(table.size());
    CUDA_CHECK(cudaMemcpy(d_table.get(), table.data(), d_table.bytes(), cudaMemcpyHostToDevice));
    scale_by_grid_device(x.get(), is_b ? weight_grid_128x128(rows, p.k) : column_grid(rows, p.k), d_table.get());
  }
  return x;
}

// Exact mode's e4m3 operand `q` (rows x k) and its scales (grid.count() floats): integers -2..2 with
// power-of-two scales starting at 2^-first_exp.
static void generate_fp8_exact(curandGenerator_t gen, const ScaleGrid& grid, int first_exp, __nv_fp8_storage_t* q,
                               float* scales) {
  const int64_t count = grid.rows * grid.cols;
  DeviceBuffer<float> scratch((count + 1) / 2 * 2);
  exact_integers(gen, scratch.get(), count);
  to_e4m3_exact<<<grid_for(count), 256>>>(scratch.get(), q, count);
  CUDA_CHECK_LAUNCH();
  power_of_two_scales<<<grid_for(grid.count()), 256>>>(scales, grid.count(), first_exp);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

static Problem checked(const Problem& p) {
  if (p.dtype == Dtype::fp8 && p.exact && p.k > kMaxExactKFp8)
    throw Error("fp8 exact mode needs K <= " + std::to_string(kMaxExactKFp8) +
                " (every partial sum exact in the FP8 tensor cores' accumulator, fp8.hpp); got K=" + std::to_string(p.k));
  if ((p.dist != Dist::normal || p.keep_unquantized) && (p.dtype != Dtype::fp8 || p.exact))
    throw Error(std::string("inputs ") + (p.dist != Dist::normal ? std::string("--dist ") + dist_name(p.dist) : "kept before quantization") +
                " apply to fp8 problems with random inputs only (not " + dtype_name(p.dtype) + (p.exact ? ", exact mode" : "") + ")");
  return p;
}

// The generator of a problem's inputs: cuRAND's Philox, seeded.
using Curand = std::unique_ptr<std::remove_pointer_t<curandGenerator_t>, decltype(&curandDestroyGenerator)>;
static Curand make_curand(uint64_t seed) {
  curandGenerator_t gen = nullptr;
  CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  Curand guard(gen, &curandDestroyGenerator);
  CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
  return guard;
}

Fp8Inputs fp8_inputs(const Problem& p) {
  if (p.dtype != Dtype::fp8 || p.exact) throw Error("fp8_inputs: only an fp8 problem with random inputs has inputs before quantization");
  checked(p);
  Curand gen = make_curand(p.seed);
  Fp8Inputs in;
  in.a = draw_fp8_input(gen.get(), p, false, p.m);
  in.b = draw_fp8_input(gen.get(), p, true, p.n);
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

ProblemBuffers::ProblemBuffers(const Problem& p)
    : p_(checked(p)),
      a_(elems_a() * input_elem_size()),
      b_(elems_b() * input_elem_size()),
      c_((elems_c() + kGuard) * elem_size()),
      ref_(elems_c() * sizeof(float)) {  // fp32 for both dtypes (cublas_reference)
  Curand guard = make_curand(p.seed);
  curandGenerator_t gen = guard.get();
  if (p_.dtype == Dtype::fp8) {
    scales_a_ = DeviceBuffer<float>(size_t(grid_a().count()));
    scales_b_ = DeviceBuffer<float>(size_t(grid_b().count()));
    auto* qa = reinterpret_cast<__nv_fp8_storage_t*>(a_.get());
    auto* qb = reinterpret_cast<__nv_fp8_storage_t*>(b_.get());
    if (p_.exact) {
      generate_fp8_exact(gen, grid_a(), 1, qa, scales_a_.get());
      generate_fp8_exact(gen, grid_b(), 2, qb, scales_b_.get());
      return;
    }
    Fp8Inputs in;
    in.a = draw_fp8_input(gen, p_, false, p_.m);
    quantize_device(in.a.get(), grid_a(), qa, scales_a_.get());
    in.b = draw_fp8_input(gen, p_, true, p_.n);
    quantize_device(in.b.get(), grid_b(), qb, scales_b_.get());
    kept_ = p_.dist != Dist::normal || p_.keep_unquantized;
    if (kept_) unquantized_ = std::move(in);
    return;
  }
  generate(gen, p_, a_.get(), elems_a());
  generate(gen, p_, b_.get(), elems_b());
  if (p_.dtype == Dtype::fp32 && p_.beta != 0) {
    c0_ = DeviceBuffer<char>(elems_c() * elem_size());
    generate(gen, p_, c0_.get(), elems_c());
    c0_host_ = to_host(c0_, elems_c());
  }
}

Fp32Gemm ProblemBuffers::fp32_args() const {
  return {p_.m, p_.n, p_.k, p_.alpha, p_.beta, reinterpret_cast<const float*>(a_.get()),
          reinterpret_cast<const float*>(b_.get()), reinterpret_cast<float*>(c_.get()), workspace_.get(),
          workspace_.bytes()};
}

Bf16Gemm ProblemBuffers::bf16_args() const {
  return {p_.m, p_.n, p_.k, reinterpret_cast<const __nv_bfloat16*>(a_.get()),
          reinterpret_cast<const __nv_bfloat16*>(b_.get()), reinterpret_cast<__nv_bfloat16*>(c_.get()),
          workspace_.get(), workspace_.bytes()};
}

Fp8Gemm ProblemBuffers::fp8_args() const {
  Fp8Gemm g{p_.m, p_.n, p_.k, reinterpret_cast<const __nv_fp8_e4m3*>(a_.get()),
            reinterpret_cast<const __nv_fp8_e4m3*>(b_.get()), reinterpret_cast<__nv_bfloat16*>(c_.get())};
  g.scaling = p_.scaling;
  if (p_.scaling == Scaling::per_tensor) {
    g.scale_a = scales_a_.get();
    g.scale_b = scales_b_.get();
  } else {
    g.sfa = scales_a_.get();
    g.sfb = scales_b_.get();
  }
  g.workspace = workspace_.get();
  g.workspace_bytes = workspace_.bytes();
  return g;
}

std::vector<float> ProblemBuffers::download_scales_a() const {
  std::vector<float> h(scales_a_.size());
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(h.data(), scales_a_.get(), scales_a_.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<float> ProblemBuffers::download_scales_b() const {
  std::vector<float> h(scales_b_.size());
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(h.data(), scales_b_.get(), scales_b_.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

void ProblemBuffers::upload_scales(const std::vector<float>& a, const std::vector<float>& b) {
  if (p_.dtype != Dtype::fp8) throw Error("upload_scales: only an fp8 problem has scales");
  if (a.size() != scales_a_.size() || b.size() != scales_b_.size())
    throw Error("upload_scales: " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                " scales given, the problem has " + std::to_string(scales_a_.size()) + " and " +
                std::to_string(scales_b_.size()));
  CUDA_CHECK(cudaMemcpy(scales_a_.get(), a.data(), scales_a_.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(scales_b_.get(), b.data(), scales_b_.bytes(), cudaMemcpyHostToDevice));
}

std::vector<float> ProblemBuffers::input_to_host(const DeviceBuffer<char>& buf, int64_t count) const {
  if (p_.dtype != Dtype::fp8) return to_host(buf, count);
  std::vector<float> host(count);
  if (count == 0) return host;
  DeviceBuffer<float> tmp(count);
  fp8_to_fp32<<<grid_for(count), 256>>>(reinterpret_cast<const __nv_fp8_storage_t*>(buf.get()), tmp.get(), count);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(host.data(), tmp.get(), count * 4, cudaMemcpyDeviceToHost));
  return host;
}

std::vector<float> ProblemBuffers::fp8_oracle() {
  if (p_.dtype != Dtype::fp8) throw Error("fp8_oracle: the problem is not fp8");
  CUDA_CHECK(cudaMemset(ref_.get(), 0xFF, ref_.bytes()));  // NaN: an element the oracle missed fails
  float* want = reinterpret_cast<float*>(ref_.get());
  oracle_fp8_device(reinterpret_cast<const __nv_fp8_storage_t*>(a_.get()), scales_a_.get(), grid_a(),
                    reinterpret_cast<const __nv_fp8_storage_t*>(b_.get()), scales_b_.get(), grid_b(), p_.m, p_.n,
                    p_.k, want);
  std::vector<float> out(elems_c());
  if (!out.empty()) CUDA_CHECK(cudaMemcpy(out.data(), want, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> ProblemBuffers::unquantized_product() {
  if (!kept_)
    throw Error("unquantized_product: the inputs before quantization were not kept (an fp8 problem with --dist llm or "
                "Problem::keep_unquantized keeps them)");
  CUDA_CHECK(cudaMemset(ref_.get(), 0xFF, ref_.bytes()));  // NaN: an element the oracle missed fails
  float* want = reinterpret_cast<float*>(ref_.get());
  oracle_fp32_device(unquantized_.a.get(), unquantized_.b.get(), p_.m, p_.n, p_.k, want);
  std::vector<float> out(elems_c());
  if (!out.empty()) CUDA_CHECK(cudaMemcpy(out.data(), want, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

void ProblemBuffers::reserve_workspace(size_t bytes) {
  if (bytes <= workspace_.bytes()) return;
  workspace_ = DeviceBuffer<char>();  // free the old one first: peak memory is the new size only
  workspace_ = DeviceBuffer<char>(bytes);
  CUDA_CHECK(cudaMemset(workspace_.get(), 0, bytes));
}

void ProblemBuffers::reset_output(cudaStream_t stream) {
  // All-ones bytes are a NaN in fp32 (0xFFFFFFFF) and in bf16 (0xFFFF).
  CUDA_CHECK(cudaMemsetAsync(c_.get(), 0xFF, c_.bytes(), stream));
  if (c0_.get())
    CUDA_CHECK(cudaMemcpyAsync(c_.get(), c0_.get(), c0_.bytes(), cudaMemcpyDeviceToDevice, stream));
}

std::vector<float> ProblemBuffers::to_host(const DeviceBuffer<char>& buf, int64_t count, int64_t offset) const {
  std::vector<float> host(count);
  if (count == 0) return host;
  if (p_.dtype == Dtype::fp32) {
    CUDA_CHECK(cudaMemcpy(host.data(), buf.get() + offset * 4, count * 4, cudaMemcpyDeviceToHost));
  } else {
    DeviceBuffer<float> tmp(count);
    bf16_to_fp32<<<grid_for(count), 256>>>(
        reinterpret_cast<const __nv_bfloat16*>(buf.get()) + offset, tmp.get(), count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host.data(), tmp.get(), count * 4, cudaMemcpyDeviceToHost));
  }
  return host;
}

std::vector<float> ProblemBuffers::cublas_reference() {
  if (p_.dtype == Dtype::fp8) throw Error("cublas_reference: cuBLAS has no FP8 GEMM; fp8 problems use fp8_oracle()");
  // NaN first, as C is before every step: cuBLAS's kernels may write with TMA stores, which
  // compute-sanitizer's initcheck does not see (tests/probes/initcheck_tma.cu), so without this the
  // copy below read "uninitialized" memory by its count; and an element cuBLAS did not write stays NaN
  // and fails the comparison instead of passing with whatever the allocation held.
  CUDA_CHECK(cudaMemset(ref_.get(), 0xFF, ref_.bytes()));
  if (p_.dtype == Dtype::fp32) {
    Fp32Gemm args = fp32_args();
    args.c = reinterpret_cast<float*>(ref_.get());
    if (c0_.get()) CUDA_CHECK(cudaMemcpy(ref_.get(), c0_.get(), c0_.bytes(), cudaMemcpyDeviceToDevice));
    cublas_sgemm(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    return to_host(ref_, elems_c());
  }
  // bf16: cuBLAS with an fp32 C, rounded to bf16 here, once (see cublas_bf16_gemm_fp32_out).
  cublas_bf16_gemm_fp32_out(bf16_args(), reinterpret_cast<float*>(ref_.get()), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(elems_c());
  if (!out.empty())
    CUDA_CHECK(cudaMemcpy(out.data(), ref_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (float& v : out) v = __bfloat162float(__float2bfloat16_rn(v));
  return out;
}

std::vector<float> ProblemBuffers::cpu_reference() {
  const std::vector<float> a = download_a(), b = download_b();
  if (p_.dtype == Dtype::fp8) {
    const std::vector<double> c = cpu_gemm_dequant(dequantize_host(a, download_scales_a(), grid_a()),
                                                   dequantize_host(b, download_scales_b(), grid_b()), p_.m, p_.n, p_.k);
    std::vector<float> out(c.size());
    for (size_t i = 0; i < c.size(); ++i) out[i] = __bfloat162float(__double2bfloat16(c[i]));
    return out;
  }
  std::vector<double> c = p_.dtype == Dtype::fp32
                              ? cpu_gemm_fp32(a, b, c0_host_, p_.m, p_.n, p_.k, p_.alpha, p_.beta)
                              : cpu_gemm_bf16(a, b, p_.m, p_.n, p_.k);
  std::vector<float> out(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    out[i] = p_.dtype == Dtype::fp32 ? float(c[i]) : __bfloat162float(__double2bfloat16(c[i]));
  return out;
}

std::vector<float> ProblemBuffers::bf16_oracle() {
  if (p_.dtype != Dtype::bf16) throw Error("bf16_oracle: the problem is not bf16");
  DeviceBuffer<float> want(elems_c());
  CUDA_CHECK(cudaMemset(want.get(), 0xFF, want.bytes()));  // NaN: an element the oracle missed fails
  oracle_bf16_device(reinterpret_cast<const __nv_bfloat16*>(a_.get()), reinterpret_cast<const __nv_bfloat16*>(b_.get()),
                     p_.m, p_.n, p_.k, want.get());
  std::vector<float> out(elems_c());
  if (!out.empty()) CUDA_CHECK(cudaMemcpy(out.data(), want.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

CheckReport ProblemBuffers::check_against_reference(const std::vector<float>& want) {
  const CheckReport r = check_against(want);
  if (r.passed || p_.dtype != Dtype::bf16) return r;
  if (bf16_oracle_.empty()) bf16_oracle_ = bf16_oracle();
  const Tolerance tol{p_.dtype, p_.exact, p_.k, p_.alpha, p_.beta};
  const std::vector<float> no_guard;  // cuBLAS's C has no guard band of ours to check
  return judge_reference(r, check_against(bf16_oracle_),
                         compare(want, bf16_oracle_, c0_host_, no_guard, p_.m, p_.n, tol));
}

CheckReport ProblemBuffers::check_against(const std::vector<float>& want) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = to_host(c_, elems_c());
  const std::vector<float> guard = to_host(c_, kGuard, elems_c());
  Tolerance tol{p_.dtype, p_.exact, p_.k, p_.alpha, p_.beta};
  if (p_.dtype == Dtype::fp8 && p_.dist != Dist::normal) tol.sum_rms = rms(want);
  return compare(got, want, c0_host_, guard, p_.m, p_.n, tol);
}

size_t step_workspace_bytes(const Step& step, int m, int n, int k) {
  return step.workspace_bytes ? step.workspace_bytes(m, n, k) : 0;
}

void reserve_workspace(const Step& step, ProblemBuffers& buffers) {
  const Problem& p = buffers.problem();
  buffers.reserve_workspace(step_workspace_bytes(step, p.m, p.n, p.k));
}

void launch_step(const Step& step, const ProblemBuffers& buffers, cudaStream_t stream) {
  const Problem& p = buffers.problem();
  if (step.dtype != p.dtype || (p.dtype == Dtype::fp8 && step.scaling != p.scaling))
    throw Error("step " + step.id + " (" + dtype_name(step.dtype) + ") given a " + dtype_name(p.dtype) +
                " problem" + (p.dtype == Dtype::fp8 ? std::string(" with ") + scaling_name(p.scaling) + " scales" : ""));
  if (step.dtype == Dtype::fp32)
    step.fp32(buffers.fp32_args(), stream);
  else if (step.dtype == Dtype::bf16)
    step.bf16(buffers.bf16_args(), stream);
  else
    step.fp8(buffers.fp8_args(), stream);
}

void launch_cublas(const ProblemBuffers& buffers, cudaStream_t stream) {
  if (buffers.problem().dtype == Dtype::fp8) throw Error("launch_cublas: cuBLAS has no FP8 GEMM (use cuBLASLt)");
  if (buffers.problem().dtype == Dtype::fp32)
    cublas_sgemm(buffers.fp32_args(), stream);
  else
    cublas_bf16_gemm(buffers.bf16_args(), stream);
}

}  // namespace gemm
