// The registry as JSON: every registered step's metadata, the one file (kernels/steps.json) the
// Makefile, the scripts and the figures read instead of the C++ (`make steps-json` writes it with
// build/bin/registry_json; tests/test_steps.cpp fails when the committed file is not what this prints).
#pragma once
#include <string>
#include <vector>

#include "../kernel_lib/registry.hpp"

namespace gemm {

/// {"generated_by": ..., "steps": [...]}: one object per step, in the order given, each with its id,
/// name, parent, technique, dtype, scaling, required_cc, persistent, workspace (a workspace_bytes
/// function is set), fixture, tile {bm, bn, bk, stages}, threads and caps; two-space indent, one field
/// a line (tile and caps on one line each), ending in a newline.
std::string steps_json(const std::vector<Step>& steps);

}  // namespace gemm
