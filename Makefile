# The matmul series: every kernels/NN_name.cu becomes build/bin/NN_name. This file holds the build and
# the targets a user types; the rest lives in mk/*.mk (dependencies, the CUTLASS references, the C API
# library, the generated tables, the menu's tuner, the test binary, the PTX/SASS tooling, the book's
# figures, pipeline traces, fuzzing and sanitizers, and the goals refused up front). `make help` lists
# every target: it prints the `#>` line above each one, in every file, in order.
# ARCH sets the fp32 steps' target: the compute capability nvidia-smi reports for GPU 0 when a GPU
# answers (e.g. 90, 89, 80), else 90; `make ARCH=80` overrides it. The Hopper steps (those registered
# with .required_cc = 90, as kernels/steps.json records it) build for sm_90a whatever ARCH is.

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CXX       ?= g++
ifeq ($(origin ARCH),undefined)
  # Evaluated once (:=); no nvidia-smi, no GPU or an answer that is not a number leaves the default.
  DETECTED_ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
                     | head -n 1 | tr -d ' .\r' | grep -E '^[0-9]{2,3}$$')
  ARCH := $(or $(DETECTED_ARCH),90)
endif
BUILD     ?= build

FP32_GENCODE   := -gencode arch=compute_$(ARCH),code=sm_$(ARCH)
HOPPER_GENCODE := -gencode arch=compute_90a,code=sm_90a

# Parallel by default (a serial build of everything takes minutes); `make -j1` still works.
# (Only at the top level: a recursive make inherits the jobserver.)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

COMMON_FLAGS := -O3 -std=c++20 -DFMT_HEADER_ONLY -I$(CUDA_HOME)/include
CXXFLAGS     := $(COMMON_FLAGS) -Wall -Wextra
# Position-independent host code for the objects build/lib/libgemmsteps.so links (every step and both
# rooms of common/), so that the executables and the shared library link the same objects. Host code
# only: the cubins nvcc embeds are byte-identical with and without it (make sass-check reads them).
# $(BUILD)/flags records it; a change (or a tree built before it) rebuilds those objects once.
PIC          := -fPIC
# nvcc's front end rejects fmt 9's consteval format strings, so .cu files never include fmt:
# their messages are built by functions in .cpp files (common/kernel_lib/check.cpp).
NVCCFLAGS    := $(COMMON_FLAGS) -lineinfo -Xcompiler -Wall,-Wextra --expt-relaxed-constexpr
LDLIBS       := -cudart static -lcublas -lcublasLt -lcurand -ldl

# The steps, and the two rooms of common/: the kernel library (what kernels include) and the harness
# (what runs them). A step executable links its kernel, the harness's main and both rooms.
KERNELS  := $(sort $(wildcard kernels/*.cu))
STEPS    := $(basename $(notdir $(KERNELS)))
STEP_IDS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
BINS     := $(addprefix $(BUILD)/bin/,$(STEPS))
# Hopper steps: those registered with .required_cc = 90, built for sm_90a. Chosen before anything is
# built, so from the committed kernels/steps.json (the registry's own dump: `make steps-json`), through
# scripts/steps.py. A kernels/*.cu the JSON does not list yet (a new step) falls back to sm_90a, which
# compiles any step (an fp32 one then runs on Hopper only), with a warning; tests/test_steps.cpp fails
# until `make steps-json` records it, and its object is rebuilt when its gencode then changes.
STEPS_JSON     := kernels/steps.json
LISTED_KERNELS := $(shell python3 scripts/steps.py files || echo STEPS_JSON_UNREADABLE)
ifneq ($(filter STEPS_JSON_UNREADABLE,$(LISTED_KERNELS)),)
  $(error scripts/steps.py cannot read $(STEPS_JSON) (its message is above))
endif
HOPPER_KERNELS := $(shell python3 scripts/steps.py files --hopper)
UNLISTED_KERNELS := $(filter-out $(LISTED_KERNELS),$(KERNELS))
ifneq ($(UNLISTED_KERNELS),)
  $(warning $(UNLISTED_KERNELS): not in $(STEPS_JSON) yet, built for sm_90a; run `make steps-json` once it builds)
  HOPPER_KERNELS += $(UNLISTED_KERNELS)
endif
gencode_for     = $(if $(filter $(1),$(HOPPER_KERNELS)),$(HOPPER_GENCODE),$(FP32_GENCODE))
BF16_BINS      := $(addprefix $(BUILD)/bin/,$(basename $(notdir $(HOPPER_KERNELS))))
COMMON_SRCS := $(filter-out common/harness/main.cpp,$(wildcard common/kernel_lib/*.cpp common/harness/*.cpp)) \
               $(wildcard common/harness/*.cu)
COMMON_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(COMMON_SRCS)))
MAIN_OBJ    := $(BUILD)/obj/common/harness/main.o
KERNEL_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(KERNELS)))
MENU_OBJ    := $(BUILD)/obj/family/menu.o
HEADERS     := $(wildcard common/kernel_lib/*.hpp common/kernel_lib/*.cuh common/kernel_lib/ptx/*.cuh common/kernel_lib/family/*.hpp common/kernel_lib/family/*.cuh \
                           common/harness/*.hpp common/harness/cutlass/*.hpp)

# The step the run/profile/sass/trace targets take (STEP=NN) and the shape (M, N, K).
STEP ?= 01
M ?= 4096
N ?= 4096
K ?= 4096
RUN_STEP = $(filter $(STEP)_%,$(STEPS))
STEP_OF  = $(filter $(1)_%,$(STEPS))

# Goals that build something (every goal but these) first run scripts/deps.sh (mk/deps.mk).
BUILD_GOALS := $(filter-out clean help test-run bench-run docs docs-deps schedule-figures swizzle-figure steps-table results-tables,\
                 $(or $(MAKECMDGOALS),all))

.PHONY: FORCE all test test-run bench bench-run bench-sweep bench-waves bench-shapes profile help run clean $(STEP_IDS)
.DEFAULT_GOAL := all
.SECONDARY:

include mk/deps.mk
include mk/cutlass.mk
include mk/capi.mk
include mk/tables.mk
include mk/tune.mk
include mk/tests.mk
include mk/sass.mk
include mk/docs.mk
include mk/trace.mk
include mk/reliability.mk
include mk/torch.mk
include mk/goals.mk

# ---- Build -----------------------------------------------------------------------------------------
#> make                      build every step (build/bin/NN_name)
all: $(BINS) $(LIB_SO)

#> make NN                   build one step (make 06: build/bin/06_vectorized_loads)
$(foreach s,$(STEPS),$(eval $(firstword $(subst _, ,$(s))): $(BUILD)/bin/$(s)))

$(BUILD)/obj/common/%.o: common/%.cpp $(HEADERS) $(BUILD)/flags | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(PIC) $(if $(filter %telemetry,$*),$(NVML_FLAGS)) -c $< -o $@

$(BUILD)/obj/common/%.o: common/%.cu $(HEADERS) $(BUILD)/flags | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Xcompiler $(PIC) $(FP32_GENCODE) -c $< -o $@

# The host flags the objects above and the kernels' are built with, rewritten only when they change.
$(BUILD)/flags: FORCE
	@mkdir -p $(dir $@)
	@echo 'pic: $(PIC)' | cmp -s - $@ || echo 'pic: $(PIC)' > $@

# The gencode a kernel is built with, rewritten only when it changes (ARCH=, or the step's required_cc
# in kernels/steps.json), so that a change rebuilds the objects it concerns and nothing else.
$(BUILD)/gencode/%: FORCE
	@mkdir -p $(dir $@)
	@echo '$(call gencode_for,kernels/$*.cu)' | cmp -s - $@ || echo '$(call gencode_for,kernels/$*.cu)' > $@

# Every kernel object keeps its ptxas report (registers, shared memory, stack, spills) in build/ptxas/.
$(BUILD)/obj/kernels/%.o: kernels/%.cu $(BUILD)/gencode/% $(HEADERS) $(BUILD)/flags | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@) $(BUILD)/ptxas
	@echo "$(NVCC) ... $(call gencode_for,$<) -Xcompiler $(PIC) -Xptxas -v -c $< -o $@"
	@$(NVCC) $(NVCCFLAGS) -Xcompiler $(PIC) $(call gencode_for,$<) -Xptxas -v -c $< -o $@ 2> $(BUILD)/ptxas/$*.txt \
	  || { cat $(BUILD)/ptxas/$*.txt >&2; exit 1; }
	@grep -iE "warning|error" $(BUILD)/ptxas/$*.txt >&2 || true

# Links only the objects ($^ also holds the CUTLASS stamp).
$(BUILD)/bin/%: $(BUILD)/obj/kernels/%.o $(MAIN_OBJ) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

# The bf16 steps link the CUTLASS configurations (the benchmark's reference); the fp32 steps do not.
$(BF16_BINS): $(CUTLASS_OBJS) $(CUTLASS_STAMP)

#> make clean                remove build/
clean:
	rm -rf $(BUILD)

# ---- Test ------------------------------------------------------------------------------------------
#> make test                 build everything, then the Catch2 suite (CPU, SASS, and GPU tests with a GPU; ~25 min on 2 cores from scratch) and the Python package's CPU tests
# The SASS tests check the dumps of every step and twin (tests/test_sass.cpp), so they are made first.
test: all $(BUILD)/bin/tests sass-dumps $(FIXTURE_EXES) $(PROBE_EXES) $(BUILD)/bin/fuzz $(BUILD)/bin/soak \
      $(BUILD)/bin/registry_json $(BUILD)/bin/split_dump $(BUILD)/bin/dispatch_dump $(LAB_DRIVERS) $(TMAP_SPY)
	@$(MAKE) --no-print-directory test-run

#> make test-run             the suites, already built (what the GPU machine runs: it has no Catch2 or fmt); the last line adds up both
test-run:
	@python3 scripts/run_tests.py --build $(BUILD)

# ---- Run and measure -------------------------------------------------------------------------------
#> make run STEP=NN M= N= K=  check one step against cuBLAS, then time it paired with the references (ARGS= more flags)
run: $(BUILD)/bin/$(RUN_STEP)
	$(BUILD)/bin/$(RUN_STEP) --m $(M) --n $(N) --k $(K) $(ARGS)

#> make bench                every step at 4096^3 and 8192^3, paired; sustained and stability -> results/, README table, figure
bench: all
	@$(MAKE) --no-print-directory bench-run

#> make bench-run            the same, already built (what the GPU machine runs)
bench-run:
	python3 scripts/bench.py --build $(BUILD)

#> make bench-sweep          the last step of each ladder (and the sweep-also steps) over square and transformer shapes -> results/
bench-sweep: all
	python3 scripts/bench.py --build $(BUILD) --sweep

#> make bench-waves          the last bf16 step and cuBLAS at M = K = 4096 over N (wave quantization) -> results/
bench-waves: all
	python3 scripts/bench.py --build $(BUILD) --waves

#> make bench-shapes         the last bf16 step (and the shapes-also steps) over issue 30's shapes: decode M = 1-256, prefill, ragged, long and short K, then issue 46's random set (102 shapes from a committed seed, family=random, reported per class) -> results/<gpu>_shapes.csv, docs/results.md's table, docs/img/shapes.png (about 2 + 5 min a step, estimated; `python3 scripts/bench.py --shapes --dry-run` prints the plan; `bench.py --shapes --shapes-set sweep|random` runs one set; `--random-seed S` a held-out draw, family=random-S)
bench-shapes: all
	python3 scripts/bench.py --build $(BUILD) --shapes

#> make profile STEP=NN      ncu, clocks left as found: the step beside cuBLAS, an fp8 step beside cuBLASLt FP8 of its scaling (M= N= K=, default 4096)
profile: $(BUILD)/bin/$(RUN_STEP)
	python3 scripts/profile.py $(STEP) --m $(M) --n $(N) --k $(K) --build $(BUILD)

#> make help                 this list
help:
	@echo "Targets (parallel by default; STEP=NN, A=NN B=NN, M/N/K as shown):"
	@sed -n 's/^#> /  /p' $(MAKEFILE_LIST)
