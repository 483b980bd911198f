// SASS twin with device code in the source but no kernel function in the object: the kernel is a
// template that nothing instantiates (a launcher dropped in a refactoring would do the same to a
// step). Before, every rule skipped a unit without functions and it passed silently; now the check
// fails it ("no kernel function in the dump"), for every rule asked.
// Never linked or registered: tests/test_sass.cpp checks that the all-steps rule flags it.
// twin-of: all
// must-fail: kernel lacks LDL.*|STL.*
namespace sass_twin {

template <int N>
__global__ void never_instantiated(float* out) {
  out[threadIdx.x] = float(N);
}

}  // namespace sass_twin
