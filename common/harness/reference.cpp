#include "reference.hpp"

namespace gemm {

std::vector<double> cpu_gemm_fp32(const std::vector<float>& a, const std::vector<float>& b,
                                  const std::vector<float>& c0, int m, int n, int k, double alpha,
                                  double beta) {
  std::vector<double> c(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[size_t(i) * k + p]) * double(b[size_t(p) * n + j]);
      double v = alpha * acc;
      if (beta != 0) v += beta * double(c0[size_t(i) * n + j]);
      c[size_t(i) * n + j] = v;
    }
  return c;
}

std::vector<double> cpu_gemm_bf16(const std::vector<float>& a, const std::vector<float>& b, int m,
                                  int n, int k) {
  std::vector<double> c(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[size_t(i) * k + p]) * double(b[size_t(j) * k + p]);
      c[size_t(i) * n + j] = acc;
    }
  return c;
}

std::vector<double> cpu_gemm_dequant(const std::vector<double>& a, const std::vector<double>& b, int m, int n, int k) {
  std::vector<double> c(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += a[size_t(i) * k + p] * b[size_t(j) * k + p];
      c[size_t(i) * n + j] = acc;
    }
  return c;
}

}  // namespace gemm
