// SASS twin whose compilation draws a ptxas warning: __launch_bounds__(1024, 4) asks for 4 blocks of
// 1024 threads per SM, over the 2048 threads an sm_90 SM holds, so ptxas says "Value of threads per
// SM ... is out of range. .minnctapersm will be ignored" and compiles on without the occupancy hint.
// The Makefile's kernel rule only echoes ptxas warnings (`|| true`); the all-steps rule
// `ptxas lacks (?i)\bwarning\b` turns one into a failure, and this twin proves that rule can fail.
// Never linked or registered: tests/test_sass.cpp checks the verdict.
// twin-of: all
// must-fail: ptxas lacks (?i)\bwarning\b
// must-pass: kernel lacks LDL.*|STL.*
namespace sass_twin {

__global__ void __launch_bounds__(1024, 4) ptxas_warning(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = float(threadIdx.x);
}

}  // namespace sass_twin
