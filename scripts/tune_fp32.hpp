// Registry of the tuning sweep's configurations. scripts/tune_fp32.py generates one .cu per step
// that includes the step's kernels/NN_*.cu and adds one Config per instantiated template.
#pragma once
#include <vector>

#include "../common/kernel_lib/registry.hpp"

namespace tune {

struct Config {
  const char* step;      ///< "05" .. "09"
  const char* params;    ///< "BM=128 BN=128 BK=8 TM=8 TN=8"
  gemm::Fp32Launcher launch;  ///< the step's launch_tiles<...> for these parameters
  const void* kernel;    ///< the __global__ function, for cudaFuncGetAttributes (registers, local memory)
  int threads;           ///< block size
  int dyn_smem;          ///< dynamic shared memory per block (step 09), bytes
};

/// A configuration the generator refused before compiling (it would break a static_assert, or
/// falls outside the sweep's range), kept so that the CSV lists every point of the grid.
struct Pruned {
  const char* step;
  const char* params;
  const char* reason;
};

bool add(const Config& c);
bool add_pruned(const Pruned& p);
const std::vector<Config>& configs();
const std::vector<Pruned>& pruned();

}  // namespace tune
