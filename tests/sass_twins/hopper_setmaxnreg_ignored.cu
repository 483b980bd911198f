// SASS twin of step 14 whose register reallocation ptxas drops: the kernel has no __launch_bounds__,
// so ptxas cannot tell how many registers a thread holds at entry and ignores setmaxnreg with
// "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at
// entry" (an info line, not a warning: nothing else would notice). Step 14 relies on the
// reallocation to give its consumers 232 registers.
// Never linked or registered: tests/test_sass.cpp checks that step 14's rule flags it.
// twin-of: 14
// must-fail: ptxas lacks C7508|(?i:setmaxnreg\W*ignored)
// must-pass: ptxas spill_stores == 0
namespace sass_twin {

__global__ void setmaxnreg_without_launch_bounds(float* out) {  // no __launch_bounds__: the bug
  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");  // producer
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");  // consumers
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = float(threadIdx.x);
}

}  // namespace sass_twin
