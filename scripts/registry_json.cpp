// Prints every step of kernels/*.cu as its registration says (gemm::register_step), as JSON: the
// source of the step metadata the Makefile, scripts/steps.py, the benchmark and the figures read.
// It links every kernel object, as build/bin/tests does (static registration), and no fixture.
//   build/bin/registry_json            the JSON (common/harness/steps_json.hpp) on stdout
// `make steps-json` writes it to kernels/steps.json; tests/test_steps.cpp checks that file against it.
#include <cstdio>
#include <exception>

#include "../common/harness/steps_json.hpp"

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s (no arguments): prints the registered steps as JSON\n", argv[0]);
    return 2;
  }
  try {
    std::fputs(gemm::steps_json(gemm::registered_steps()).c_str(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
