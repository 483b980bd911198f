// The references every step is checked against: cuBLAS (the oracle of every check and the yardstick
// of every timing; its calls live in common/kernel_lib/cublas.hpp, since step 00 runs them as its
// kernel) and an fp64 CPU loop (the oracle of the cuBLAS wrapper itself, on small shapes).
#pragma once
#include <vector>

#include "../kernel_lib/cublas.hpp"

namespace gemm {

/// C = alpha * A * B + beta * C0 in fp64 on the CPU (row-major, A m x k, B k x n), and
/// C = A * B^T for bf16 (B n x k). Small shapes only (O(m n k) on one core).
std::vector<double> cpu_gemm_fp32(const std::vector<float>& a, const std::vector<float>& b,
                                  const std::vector<float>& c0, int m, int n, int k, double alpha,
                                  double beta);
std::vector<double> cpu_gemm_bf16(const std::vector<float>& a, const std::vector<float>& b, int m,
                                  int n, int k);
/// C = A * B^T in fp64 of operands already dequantized to fp64 (fp8: double(q) * double(scale),
/// fp8.hpp's dequantize_host); A m x k, B n x k row-major. Small shapes only.
std::vector<double> cpu_gemm_dequant(const std::vector<double>& a, const std::vector<double>& b, int m, int n, int k);

}  // namespace gemm
