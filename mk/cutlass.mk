# The CUTLASS reference GEMMs (included by the Makefile): common/harness/cutlass/*.cu, a reference for
# the benchmark, never a step.
# The headers come from PyPI's nvidia-cutlass wheel (pinned in scripts/deps.sh), located through
# python3 without importing the package. Each common/harness/cutlass/*.cu is one configuration (about two
# minutes and 3.4 GB of host memory to compile), linked only into the bf16 steps and the test binary,
# kept out of the ptxas reports and the SASS tooling. Without the headers the objects are left out and
# gemm::cutlass_ref::config_count() is 0: common/harness/cutlass_ref.cpp is the same either way (the
# configurations register themselves at start-up).
CUTLASS_PY_DIR  := $(shell python3 -c 'import importlib.util as u; s = u.find_spec("cutlass_library"); print(s.submodule_search_locations[0] if s else "")' 2>/dev/null)
CUTLASS_INCLUDE := $(if $(CUTLASS_PY_DIR),$(wildcard $(CUTLASS_PY_DIR)/source/include))
CUTLASS_SRCS    := $(if $(CUTLASS_INCLUDE),$(sort $(wildcard common/harness/cutlass/*.cu)))
CUTLASS_OBJS    := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(CUTLASS_SRCS)))
# CUTLASS is tested with C++17; its headers are -isystem so that our -Wall -Wextra covers our code only.
CUTLASS_FLAGS   := -O3 -std=c++17 -DNDEBUG -I$(CUDA_HOME)/include -isystem $(CUTLASS_INCLUDE) \
                   -isystem $(CUTLASS_PY_DIR)/source/tools/util/include -Xcompiler -Wall,-Wextra \
                   --expt-relaxed-constexpr $(HOPPER_GENCODE)
# What was found, rewritten only when it changes: binaries relink (with or without the objects) and
# the test that counts the configurations recompiles when CUTLASS appears or goes away.
CUTLASS_STAMP   := $(BUILD)/cutlass.stamp
CUTLASS_STATE   := $(or $(CUTLASS_INCLUDE),none) $(CUTLASS_SRCS)
ifneq ($(BUILD_GOALS),)
  ifneq ($(file < $(CUTLASS_STAMP)),$(CUTLASS_STATE))
    $(shell mkdir -p $(BUILD))
    $(file > $(CUTLASS_STAMP),$(CUTLASS_STATE))
  endif
endif
$(CUTLASS_STAMP):  # when a `make clean` in the same run removed it
	@mkdir -p $(dir $@)
	@echo '$(CUTLASS_STATE)' > $@

# CUTLASS configurations: sm_90a, no -Xptxas -v, no -lineinfo (not steps: no SASS walkthrough).
# They include only these of our headers (kernel and PTX headers changing does not recompile them).
CUTLASS_OUR_HEADERS := common/harness/cutlass/sm90_gemm.cuh common/harness/cutlass/config.hpp \
                       common/kernel_lib/registry.hpp common/kernel_lib/check.hpp
$(BUILD)/obj/common/harness/cutlass/%.o: common/harness/cutlass/%.cu $(CUTLASS_OUR_HEADERS) \
    $(if $(CUTLASS_INCLUDE),$(CUTLASS_INCLUDE)/cutlass/version.h) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(CUTLASS_FLAGS) -c $< -o $@

# The CUTLASS test knows how many configurations this build links.
$(BUILD)/obj/tests/test_cutlass_ref.o: CXXFLAGS += -DGEMM_CUTLASS_CONFIGS=$(words $(CUTLASS_SRCS))
$(BUILD)/obj/tests/test_cutlass_ref.o: $(CUTLASS_STAMP)
