# The matmul series: every kernels/NN_name.cu becomes build/bin/NN_name.
#   make            build every step          make 06           build one step
#   make run STEP=06 M=4096 N=4096 K=4096      run one step (check against cuBLAS, then time)
#   make bench      every step at 4096 and 8192 -> results/<gpu>.csv, docs/img/steps.png, README table
#   make test       Catch2 suite (CPU, SASS and, when a GPU is present, GPU tests)
#   make schedule-figures   draw the tile orders of common/schedule.hpp into docs/img/schedule_*.png
#   make clean
# ARCH sets the fp32 steps' target (default sm_90); steps 10 and up are Hopper-only (sm_90a).

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CXX       ?= g++
ARCH      ?= 90
BUILD     ?= build

FP32_GENCODE   := -gencode arch=compute_$(ARCH),code=sm_$(ARCH)
HOPPER_GENCODE := -gencode arch=compute_90a,code=sm_90a

COMMON_FLAGS := -O3 -std=c++20 -DFMT_HEADER_ONLY -I$(CUDA_HOME)/include
CXXFLAGS     := $(COMMON_FLAGS) -Wall -Wextra
# nvcc's front end rejects fmt 9's consteval format strings, so .cu files never include fmt:
# their messages are built by functions in .cpp files (common/check.cpp).
NVCCFLAGS    := $(COMMON_FLAGS) -lineinfo -Xcompiler -Wall,-Wextra --expt-relaxed-constexpr
LDLIBS       := -cudart static -lcublas -lcurand

KERNELS  := $(sort $(wildcard kernels/*.cu))
STEPS    := $(basename $(notdir $(KERNELS)))
BINS     := $(addprefix $(BUILD)/bin/,$(STEPS))
COMMON_SRCS := $(filter-out common/main.cpp,$(wildcard common/*.cpp)) $(wildcard common/*.cu)
COMMON_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(COMMON_SRCS)))
KERNEL_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(KERNELS)))
TEST_SRCS   := $(wildcard tests/*.cpp) $(wildcard tests/fixtures/*.cu)
TEST_OBJS   := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(TEST_SRCS)))
HEADERS     := $(wildcard common/*.hpp common/*.cuh)

# Hopper steps are 10 and up: every kernels/NN_*.cu whose number does not start with 0.
gencode_for = $(if $(filter-out 0%,$(notdir $(1))),$(HOPPER_GENCODE),$(FP32_GENCODE))

STEP_IDS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
.PHONY: all test test-run bench bench-run run clean $(STEP_IDS)
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BINS)

# `make 06` builds build/bin/06_vectorized_loads.
$(foreach s,$(STEPS),$(eval $(firstword $(subst _, ,$(s))): $(BUILD)/bin/$(s)))

# Catch2, fmt and CLI11 are checked (and installed on Debian as root) once, before the first compile;
# a GPU machine that only runs carried binaries never needs them.
$(BUILD)/.deps-ok:
	@mkdir -p $(BUILD)
	scripts/deps.sh
	@touch $@

$(BUILD)/obj/common/%.o: common/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/obj/common/%.o: common/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(FP32_GENCODE) -c $< -o $@

# Every kernel object keeps its ptxas report (registers, shared memory, stack, spills) in build/ptxas/.
$(BUILD)/obj/kernels/%.o: kernels/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@) $(BUILD)/ptxas
	@echo "$(NVCC) ... $(call gencode_for,$<) -Xptxas -v -c $< -o $@"
	@$(NVCC) $(NVCCFLAGS) $(call gencode_for,$<) -Xptxas -v -c $< -o $@ 2> $(BUILD)/ptxas/$*.txt \
	  || { cat $(BUILD)/ptxas/$*.txt >&2; exit 1; }
	@grep -iE "warning|error" $(BUILD)/ptxas/$*.txt >&2 || true

# A fixture named hopper_* uses sm_90a instructions.
$(BUILD)/obj/tests/fixtures/%.o: tests/fixtures/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(if $(filter hopper_%,$*),$(HOPPER_GENCODE),$(FP32_GENCODE)) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.cpp $(HEADERS) $(wildcard tests/*.hpp) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -I/usr/include/catch2 -c $< -o $@

$(BUILD)/bin/%: $(BUILD)/obj/kernels/%.o $(BUILD)/obj/common/main.o $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

$(BUILD)/bin/tests: $(TEST_OBJS) $(KERNEL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

# The test binary links every step (static registration), so it is rebuilt when any step changes.
test: all $(BUILD)/bin/tests
	@$(MAKE) --no-print-directory test-run

# Runs the already-built suite (what the GPU machine runs: it has no Catch2 or fmt headers).
test-run:
	@$(BUILD)/bin/tests

STEP ?= 01
M ?= 4096
N ?= 4096
K ?= 4096
RUN_STEP = $(filter $(STEP)_%,$(STEPS))
run: $(BUILD)/bin/$(RUN_STEP)
	$(BUILD)/bin/$(RUN_STEP) --m $(M) --n $(N) --k $(K) $(ARGS)

bench: all
	@$(MAKE) --no-print-directory bench-run

# Runs the already-built steps (what the GPU machine runs).
bench-run:
	python3 scripts/bench.py --build $(BUILD)

# ---- PTX/SASS tooling (scripts/sass/sass.py; formats in sass_annotations/README.md) ----------------
# Needs no GPU: cuobjdump and nvdisasm come from PATH, $(CUDA_HOME)/bin or the nvidia-cuda-cuobjdump /
# nvidia-cuda-nvdisasm pip wheels. The PTX is the one ptxas assembled, read back from the cubin
# (-lineinfo embeds it), so no nvcc run is needed either.
#   make sass STEP=06          dump SASS, clean SASS, source-interleaved view and PTX into build/sass/06_*/
#   make ptx STEP=06           the same dump, then print the clean PTX of each kernel
#   make diff A=05 B=06        unified diff of the clean SASS (WHAT=ptx: of the PTX) + instruction-mix table
#   make sass-check            the per-step SASS expectations (sass_annotations/NN_*.expect)
#   make resources             regenerate docs/resources.md (registers, smem, occupancy, waves on the H200)
SASS_PY     := scripts/sass/sass.py
SASS        := python3 $(SASS_PY) --build $(BUILD)
SASS_TWINS  := $(basename $(notdir $(wildcard tests/sass_twins/*.cu)))
SASS_STAMPS := $(STEPS:%=$(BUILD)/sass/%/dump.stamp) $(SASS_TWINS:%=$(BUILD)/sass_twins/%/dump.stamp)
STEP_OF      = $(filter $(1)_%,$(STEPS))
WHAT        ?= sass
.PHONY: sass ptx diff sass-dumps sass-check resources

$(BUILD)/sass/%/dump.stamp: $(BUILD)/obj/kernels/%.o $(SASS_PY)
	@$(SASS) dump --quiet $*

# Deliberately bad twins of real steps (never linked, never registered): the SASS tests prove each
# check can fail on them. A twin named hopper_* builds for sm_90a.
$(BUILD)/obj/tests/sass_twins/%.o: tests/sass_twins/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@) $(BUILD)/ptxas/sass_twins
	@echo "$(NVCC) ... -Xptxas -v -c $< -o $@"
	@$(NVCC) $(NVCCFLAGS) $(if $(filter hopper_%,$*),$(HOPPER_GENCODE),$(FP32_GENCODE)) -Xptxas -v -c $< -o $@ \
	  2> $(BUILD)/ptxas/sass_twins/$*.txt || { cat $(BUILD)/ptxas/sass_twins/$*.txt >&2; exit 1; }

$(BUILD)/sass_twins/%/dump.stamp: $(BUILD)/obj/tests/sass_twins/%.o $(SASS_PY)
	@$(SASS) dump --quiet twin:$*

# `make test` checks the dumps of every step and twin (tests/test_sass.cpp), so it makes them first.
sass-dumps: $(SASS_STAMPS)
test: sass-dumps

sass: $(BUILD)/obj/kernels/$(call STEP_OF,$(STEP)).o
	@$(SASS) sass $(STEP)

ptx: $(BUILD)/obj/kernels/$(call STEP_OF,$(STEP)).o
	@$(SASS) ptx $(STEP)

diff: $(BUILD)/sass/$(call STEP_OF,$(A))/dump.stamp $(BUILD)/sass/$(call STEP_OF,$(B))/dump.stamp
	@$(SASS) diff --what $(WHAT) $(A) $(B)

sass-check: sass-dumps
	@$(SASS) check

resources: $(KERNEL_OBJS)
	@$(SASS) resources


# Tile schedules (common/schedule.hpp) printed as CSV by a host tool and drawn by
# scripts/plot_schedule.py into docs/img/schedule_<order>.png (no GPU needed).
$(BUILD)/bin/schedule_dump: scripts/schedule_dump.cpp common/schedule.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

.PHONY: schedule-figures
schedule-figures: $(BUILD)/bin/schedule_dump
	python3 scripts/plot_schedule.py --tool $(BUILD)/bin/schedule_dump

clean:
	rm -rf $(BUILD)

# Step ids named on the command line must exist: say so before make goes looking for a file that
# cannot exist (build/bin/, build/obj/kernels/.o).
check_step_id = $(if $(call STEP_OF,$(1)),,$(error no step '$(1)' (steps: $(STEP_IDS))))
ifneq ($(filter run sass ptx,$(MAKECMDGOALS)),)
  $(call check_step_id,$(STEP))
endif
ifneq ($(filter diff,$(MAKECMDGOALS)),)
  $(call check_step_id,$(A))
  $(call check_step_id,$(B))
endif
