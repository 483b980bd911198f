// The main of every step executable: build/bin/NN_name links this, the harness and one step.
#include "runner.hpp"

int main(int argc, char** argv) { return gemm::step_main(argc, argv); }
