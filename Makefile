# The matmul series: every kernels/NN_name.cu becomes build/bin/NN_name.
#   make            build every step          make 06           build one step
#   make run STEP=06 M=4096 N=4096 K=4096      run one step (check against cuBLAS, then time)
#   make bench      every step at 4096 and 8192 -> results/<gpu>.csv, docs/img/steps.png, README table
#   make test       Catch2 suite (CPU, SASS and, when a GPU is present, GPU tests)
#   make fuzz       every step on 3000 random seeded shapes (FUZZ_SEED, FUZZ_COUNT, FUZZ_STEPS=06,14)
#   make sanitize   compute-sanitizer memcheck, racecheck, initcheck, synccheck over every step
#   make schedule-figures   draw the tile orders of common/kernel_lib/schedule.hpp into docs/img/schedule_*.png
#   make clean
# ARCH sets the fp32 steps' target: the compute capability nvidia-smi reports for GPU 0 when a GPU
# answers (e.g. 90, 89, 80), else 90; `make ARCH=80` overrides it. Steps 10 and up are Hopper-only
# (sm_90a) whatever ARCH is.

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

# nvml.h (types only: libnvidia-ml.so.1 is loaded at run time) from PyPI's nvidia-nvml-dev, which
# scripts/deps.sh installs; without it the harness builds and says "no NVML" for clock and power.
NVML_INC := $(shell python3 -c 'import nvidia, os; [print(p) for p in (os.path.join(d, "cu13", "include") for d in nvidia.__path__) if os.path.exists(os.path.join(p, "nvml.h"))]' 2>/dev/null | head -n 1)
NVML_FLAGS := $(if $(NVML_INC),-isystem $(NVML_INC),-DGEMM_NO_NVML_HEADER)

COMMON_FLAGS := -O3 -std=c++20 -DFMT_HEADER_ONLY -I$(CUDA_HOME)/include
CXXFLAGS     := $(COMMON_FLAGS) -Wall -Wextra
# nvcc's front end rejects fmt 9's consteval format strings, so .cu files never include fmt:
# their messages are built by functions in .cpp files (common/kernel_lib/check.cpp).
NVCCFLAGS    := $(COMMON_FLAGS) -lineinfo -Xcompiler -Wall,-Wextra --expt-relaxed-constexpr
LDLIBS       := -cudart static -lcublas -lcublasLt -lcurand -ldl

KERNELS  := $(sort $(wildcard kernels/*.cu))
STEPS    := $(basename $(notdir $(KERNELS)))
BINS     := $(addprefix $(BUILD)/bin/,$(STEPS))
COMMON_SRCS := $(filter-out common/harness/main.cpp,$(wildcard common/kernel_lib/*.cpp common/harness/*.cpp)) \
               $(wildcard common/harness/*.cu)
COMMON_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(COMMON_SRCS)))
KERNEL_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(KERNELS)))
TEST_SRCS   := $(wildcard tests/*.cpp) $(wildcard tests/fixtures/*.cu)
TEST_OBJS   := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(TEST_SRCS)))
HEADERS     := $(wildcard common/kernel_lib/*.hpp common/kernel_lib/*.cuh common/kernel_lib/ptx/*.cuh \
                           common/harness/*.hpp common/harness/cutlass/*.hpp)

# Hopper steps are 10 and up: every kernels/NN_*.cu whose number does not start with 0.
gencode_for = $(if $(filter-out 0%,$(notdir $(1))),$(HOPPER_GENCODE),$(FP32_GENCODE))
BF16_BINS   := $(addprefix $(BUILD)/bin/,$(filter-out 0%,$(STEPS)))

# Goals that build something (every goal but these) first run scripts/deps.sh (see .deps-ok below).
BUILD_GOALS := $(filter-out clean help test-run bench-run docs schedule-figures swizzle-figure,$(or $(MAKECMDGOALS),all))

# ---- CUTLASS reference GEMMs (common/harness/cutlass/*.cu; a reference for the benchmark, never a step) -------
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

STEP_IDS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
.PHONY: bench-waves all test test-run bench bench-run bench-sweep profile help run clean $(STEP_IDS)
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BINS)

# `make 06` builds build/bin/06_vectorized_loads.
$(foreach s,$(STEPS),$(eval $(firstword $(subst _, ,$(s))): $(BUILD)/bin/$(s)))

# Catch2, fmt, CLI11 (installed on Debian as root) and the CUTLASS headers (pip) are checked once, and
# again when scripts/deps.sh changes, before the first compile; a GPU machine that only runs carried
# binaries never needs them. The stamp is an
# (empty) included makefile so that make re-reads this Makefile after deps.sh ran: the CUTLASS headers
# it may just have installed are then found by the same run.
ifneq ($(BUILD_GOALS),)
  -include $(BUILD)/.deps-ok
endif
$(BUILD)/.deps-ok: scripts/deps.sh
	@mkdir -p $(BUILD)
	scripts/deps.sh
	@touch $@

$(BUILD)/obj/common/%.o: common/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(if $(filter %telemetry,$*),$(NVML_FLAGS)) -c $< -o $@

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

# CUTLASS configurations: sm_90a, no -Xptxas -v, no -lineinfo (not steps: no SASS walkthrough).
# They include only these of our headers (kernel and PTX headers changing does not recompile them).
CUTLASS_OUR_HEADERS := common/harness/cutlass/sm90_gemm.cuh common/harness/cutlass/config.hpp \
                       common/kernel_lib/registry.hpp common/kernel_lib/check.hpp
$(BUILD)/obj/common/harness/cutlass/%.o: common/harness/cutlass/%.cu $(CUTLASS_OUR_HEADERS) \
    $(if $(CUTLASS_INCLUDE),$(CUTLASS_INCLUDE)/cutlass/version.h) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(CUTLASS_FLAGS) -c $< -o $@

# A fixture named hopper_* uses sm_90a instructions.
$(BUILD)/obj/tests/fixtures/%.o: tests/fixtures/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(if $(filter hopper_%,$*),$(HOPPER_GENCODE),$(FP32_GENCODE)) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.cpp $(HEADERS) $(wildcard tests/*.hpp) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -I/usr/include/catch2 -c $< -o $@

# The CUTLASS test knows how many configurations this build links.
$(BUILD)/obj/tests/test_cutlass_ref.o: CXXFLAGS += -DGEMM_CUTLASS_CONFIGS=$(words $(CUTLASS_SRCS))
$(BUILD)/obj/tests/test_cutlass_ref.o: $(CUTLASS_STAMP)

# Links only the objects ($^ also holds the CUTLASS stamp).
$(BUILD)/bin/%: $(BUILD)/obj/kernels/%.o $(BUILD)/obj/common/harness/main.o $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

# The bf16 steps link the CUTLASS configurations (the benchmark's reference); the fp32 steps do not.
$(BF16_BINS): $(CUTLASS_OBJS) $(CUTLASS_STAMP)

$(BUILD)/bin/tests: $(TEST_OBJS) $(KERNEL_OBJS) $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

# The test binary links every step (static registration), so it is rebuilt when any step changes;
# the SASS tests check the dumps of every step and twin (tests/test_sass.cpp), so they are made first.
test: all $(BUILD)/bin/tests sass-dumps
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

# The last step of each ladder and the references over square and transformer-layer shapes.
bench-sweep: all
	python3 scripts/bench.py --build $(BUILD) --sweep

# Wave quantization: the last bf16 step and cuBLAS at M = K = 4096 over N = 256 .. 8192 (one tile column a step).
bench-waves: all
	python3 scripts/bench.py --build $(BUILD) --waves

# Nsight Compute, clocks left as found: the step beside cuBLAS (time, SM clock, issue, pipes, L2, DRAM).
profile: $(BUILD)/bin/$(RUN_STEP)
	python3 scripts/profile.py $(STEP) --m $(M) --n $(N) --k $(K) --build $(BUILD)

help:
	@echo "Targets (parallel by default; STEP=NN, A=NN B=NN, M/N/K as shown):"
	@echo "  make                      build every step (build/bin/NN_name)"
	@echo "  make NN                   build one step"
	@echo "  make run STEP=NN M= N= K= check one step against cuBLAS, then time it paired with the references"
	@echo "  make test                 the Catch2 suite (CPU, SASS, and GPU tests when a GPU is present)"
	@echo "  make bench                every step at 4096 and 8192, paired; sustained and stability -> results/"
	@echo "  make bench-sweep          last step of each ladder over square and transformer shapes -> results/"
	@echo "  make bench-waves          last bf16 step vs cuBLAS over N at M = K = 4096 (wave quantization) -> results/"
	@echo "  make profile STEP=NN      ncu: the step beside cuBLAS (M= N= K=, default 4096)"
	@echo "  make sass STEP=NN         SASS, clean SASS, source-interleaved view and PTX in build/sass/"
	@echo "  make ptx STEP=NN          the same dump, then the clean PTX"
	@echo "  make diff A=NN B=NN       clean-SASS diff and instruction-mix delta (WHAT=ptx for PTX)"
	@echo "  make sass-check           every step's SASS expectations (sass_annotations/NN_*.expect)"
	@echo "  make sass-html [STEP=NN]  the SASS beside the source in a browser page (A=NN B=NN: diff page)"
	@echo "  make resources            regenerate docs/resources.md"
	@echo "  make docs                 redraw the booklet's figures from committed results and code (no GPU)"
	@echo "  make schedule-figures     docs/img/schedule_*.png from common/kernel_lib/schedule.hpp (no GPU)"
	@echo "  make swizzle-figure       docs/img/swizzle.png from common/kernel_lib/swizzle.hpp (no GPU)"
	@echo "  make trace STEP=13 M= N= K=  traced build of the step: Chrome-trace JSON + timeline under build/trace/"
	@echo "  make docs-sass-screenshot docs/img/sass_html.png: step 14's page in headless Chromium"
	@echo "  make fuzz                 random seeded shapes on every step (FUZZ_SEED= FUZZ_COUNT= FUZZ_STEPS=)"
	@echo "  make sanitize             compute-sanitizer on every step and the broken fixtures"
	@echo "  make fixtures             build/bin/fixture_NAME: the deliberately broken steps"
	@echo "  make test-run, bench-run, fuzz-run, sanitize-run   the same, already built (no compiling)"
	@echo "  make clean"

# ---- PTX/SASS tooling (scripts/sass/sass.py + sasslib/; formats in sass_annotations/README.md) -----
# Needs no GPU: cuobjdump and nvdisasm come from PATH, $(CUDA_HOME)/bin or the nvidia-cuda-cuobjdump /
# nvidia-cuda-nvdisasm pip wheels. The PTX is the one ptxas assembled, read back from the cubin
# (-lineinfo embeds it), so no nvcc run is needed either.
#   make sass STEP=06          dump SASS, clean SASS, source-interleaved view and PTX into build/sass/06_*/
#   make ptx STEP=06           the same dump, then print the clean PTX of each kernel
#   make diff A=05 B=06        unified diff of the clean SASS (WHAT=ptx: of the PTX) + instruction-mix table
#   make sass-check            the per-step SASS expectations (sass_annotations/NN_*.expect)
#   make resources             regenerate docs/resources.md (registers, smem, occupancy, waves on the H200)
#   make sass-html             build/sass-html/: every step's page (source beside SASS), the diffs of consecutive
#                              steps and index.html; STEP=06: one step's page; A=05 B=06: the diff page
#   make docs-sass-screenshot  docs/img/sass_html.png: step 14's page in headless Chromium
SASS_PY     := scripts/sass/sass.py
# The entry point and the package it runs (scripts/sass/sasslib/): a change to either redoes the dumps.
# (The HTML pages' modules are not part of a dump.)
SASS_HTML_PY := $(addprefix scripts/sass/sasslib/,page.py page_assets.py pagecheck.py markdown.py browser.py)
SASS_CODE   := $(SASS_PY) $(filter-out $(SASS_HTML_PY),$(wildcard scripts/sass/sasslib/*.py))
SASS        := python3 $(SASS_PY) --build $(BUILD)
SASS_TWINS  := $(basename $(notdir $(wildcard tests/sass_twins/*.cu)))
SASS_STAMPS := $(STEPS:%=$(BUILD)/sass/%/dump.stamp) $(SASS_TWINS:%=$(BUILD)/sass_twins/%/dump.stamp)
STEP_OF      = $(filter $(1)_%,$(STEPS))
WHAT        ?= sass
.PHONY: sass ptx diff sass-dumps sass-check resources sass-html docs-sass-screenshot

$(BUILD)/sass/%/dump.stamp: $(BUILD)/obj/kernels/%.o $(SASS_CODE)
	@$(SASS) dump --quiet $*

# Deliberately bad twins of real steps (never linked, never registered): the SASS tests prove each
# check can fail on them. A twin named hopper_* builds for sm_90a.
$(BUILD)/obj/tests/sass_twins/%.o: tests/sass_twins/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@) $(BUILD)/ptxas/sass_twins
	@echo "$(NVCC) ... -Xptxas -v -c $< -o $@"
	@$(NVCC) $(NVCCFLAGS) $(if $(filter hopper_%,$*),$(HOPPER_GENCODE),$(FP32_GENCODE)) -Xptxas -v -c $< -o $@ \
	  2> $(BUILD)/ptxas/sass_twins/$*.txt || { cat $(BUILD)/ptxas/sass_twins/$*.txt >&2; exit 1; }

$(BUILD)/sass_twins/%/dump.stamp: $(BUILD)/obj/tests/sass_twins/%.o $(SASS_CODE)
	@$(SASS) dump --quiet twin:$*

sass-dumps: $(SASS_STAMPS)

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

# STEP has a default (01) for `make run`; the pages take it only when it is given.
HTML_STEP   = $(if $(filter file,$(origin STEP)),,$(STEP))
STEP_STAMPS = $(STEPS:%=$(BUILD)/sass/%/dump.stamp)
stamp_of    = $(BUILD)/sass/$(call STEP_OF,$(1))/dump.stamp
sass-html: $(if $(A),$(call stamp_of,$(A)) $(call stamp_of,$(B)),$(if $(HTML_STEP),$(call stamp_of,$(HTML_STEP)),$(STEP_STAMPS)))
	@$(SASS) html $(if $(A),--diff $(A) $(B),$(HTML_STEP))

SCREENSHOT_STEP := 14_two_consumers
docs-sass-screenshot: $(BUILD)/sass/$(SCREENSHOT_STEP)/dump.stamp
	@$(SASS) html --out $(BUILD)/sass-html $(SCREENSHOT_STEP)
	@$(SASS) html-screenshot --fragment L87 --size 1600,1000 $(BUILD)/sass-html/$(SCREENSHOT_STEP).html docs/img/sass_html.png


# Tile schedules (common/kernel_lib/schedule.hpp) printed as CSV by a host tool and drawn by
# scripts/plot_schedule.py into docs/img/schedule_<order>.png (no GPU needed).
$(BUILD)/bin/schedule_dump: scripts/schedule_dump.cpp common/kernel_lib/schedule.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

.PHONY: schedule-figures swizzle-figure docs docs-deps
# The figures need matplotlib and nothing else of deps.sh (no CUDA Toolkit, no Catch2): say how to get it.
docs-deps:
	@python3 -c 'import matplotlib' 2>/dev/null || { echo "error: make docs needs matplotlib: python3 -m pip install matplotlib" >&2; exit 1; }
schedule-figures: docs-deps $(BUILD)/bin/schedule_dump
	python3 scripts/plot_schedule.py --tool $(BUILD)/bin/schedule_dump

# The TMA swizzle of common/kernel_lib/swizzle.hpp (the function the kernels use), printed by a host tool and
# drawn by scripts/plot_swizzle.py into docs/img/swizzle.png.
$(BUILD)/bin/swizzle_dump: scripts/swizzle_dump.cpp common/kernel_lib/swizzle.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

swizzle-figure: docs-deps $(BUILD)/bin/swizzle_dump
	python3 scripts/plot_swizzle.py --tool $(BUILD)/bin/swizzle_dump

# Every figure of the booklet from committed code and data, without a GPU (matplotlib): the steps,
# the sweep and the sustained clock/power from results/, and the tile orders from common/kernel_lib/schedule.hpp.
DOCS_GPU := nvidia_h200
docs: docs-deps schedule-figures swizzle-figure
	python3 scripts/plot_steps.py results/$(DOCS_GPU).csv
	python3 scripts/plot_sweep.py results/$(DOCS_GPU)_sweep.csv
	python3 scripts/plot_waves.py results/$(DOCS_GPU)_waves_20.csv results/$(DOCS_GPU)_waves_21.csv results/$(DOCS_GPU)_waves_23.csv
	python3 scripts/plot_power.py results/$(DOCS_GPU)_series.csv
	python3 scripts/plot_roofline.py results/$(DOCS_GPU).csv
	python3 scripts/plot_tilemaps.py
	python3 scripts/plot_streamk.py
	python3 scripts/plot_smem_layouts.py
	python3 scripts/plot_trace.py results/traces/$(DOCS_GPU)_trace_12_8192.json.gz \
	  results/traces/$(DOCS_GPU)_trace_13_8192.json.gz --out docs/img/trace_12_13_8192.png
	python3 scripts/plot_trace.py results/traces/$(DOCS_GPU)_trace_11_8192.json.gz \
	  results/traces/$(DOCS_GPU)_trace_14_8192.json.gz results/traces/$(DOCS_GPU)_trace_18_8192.json.gz \
	  --out docs/img/trace_11_14_18_8192.png

# ---- Pipeline traces (opt-in; common/kernel_lib/trace.hpp): the steps whose kernels include common/kernel_lib/ptx/trace.cuh,
# rebuilt with -DGEMM_TRACE_BUILD under build/trace/ (the timed binaries of build/bin/ contain no trace code).
#   make trace STEP=13 M=8192 N=8192 K=8192   build/trace/13_..._8192.json (chrome://tracing, Perfetto)
#                                              and its timeline, build/trace/13_..._8192.png
TRACE_DIR    := $(BUILD)/trace
TRACED_STEPS := $(basename $(notdir $(shell grep -l 'ptx/trace.cuh' kernels/*.cu)))
$(TRACE_DIR)/obj/%.o: kernels/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -DGEMM_TRACE_BUILD $(HOPPER_GENCODE) -c $< -o $@
$(TRACE_DIR)/bin/%: $(TRACE_DIR)/obj/%.o $(BUILD)/obj/common/harness/main.o $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)
.PHONY: trace trace-bins
trace-bins: $(addprefix $(TRACE_DIR)/bin/,$(TRACED_STEPS))
trace: $(if $(filter $(RUN_STEP),$(TRACED_STEPS)),$(TRACE_DIR)/bin/$(RUN_STEP))
	@$(if $(filter $(RUN_STEP),$(TRACED_STEPS)),true,echo "error: step $(STEP) has no trace points (traced: $(TRACED_STEPS))" >&2; exit 2)
	$(TRACE_DIR)/bin/$(RUN_STEP) --m $(M) --n $(N) --k $(K) --trace $(TRACE_DIR)/$(RUN_STEP)_$(M)x$(N)x$(K).json
	python3 scripts/plot_trace.py $(TRACE_DIR)/$(RUN_STEP)_$(M)x$(N)x$(K).json

clean:
	rm -rf $(BUILD)

# ---- Reliability: fuzzer, fixture executables, sanitizers (GPU runs; building needs no GPU) --------
# build/bin/fuzz links every step like build/bin/tests (static registration), and no fixture.
$(BUILD)/obj/fuzz/%.o: fuzz/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/bin/fuzz: $(BUILD)/obj/fuzz/fuzz.o $(KERNEL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

FUZZ_SEED  ?= 1
FUZZ_COUNT ?= 3000
.PHONY: fuzz fuzz-run sanitize sanitize-run fixtures
fuzz: $(BUILD)/bin/fuzz
	@$(MAKE) --no-print-directory fuzz-run

# Runs the already-built fuzzer (what the GPU machine runs).
fuzz-run:
	$(BUILD)/bin/fuzz --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) $(if $(FUZZ_STEPS),--steps $(FUZZ_STEPS))

# Every tests/fixtures/fixture_NAME.cu registers exactly one broken step and also becomes an
# executable, build/bin/fixture_NAME (the step harness's main): what compute-sanitizer and the
# exit-code tests run. Fixtures are never benchmarked (bench.py runs build/bin/[0-9]*).
FIXTURE_EXES := $(patsubst tests/fixtures/fixture_%.cu,$(BUILD)/bin/fixture_%,$(wildcard tests/fixtures/fixture_*.cu))
$(BUILD)/bin/fixture_%: $(BUILD)/obj/tests/fixtures/fixture_%.o $(BUILD)/obj/common/harness/main.o $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)
fixtures: $(FIXTURE_EXES)
test: $(FIXTURE_EXES) $(BUILD)/bin/fuzz

sanitize: all $(FIXTURE_EXES)
	@$(MAKE) --no-print-directory sanitize-run

# Runs the sanitizers on the already-built steps and fixtures (what the GPU machine runs).
sanitize-run:
	scripts/sanitize.sh --build $(BUILD)

# Step ids named on the command line must exist: say so before make goes looking for a file that
# cannot exist (build/bin/, build/obj/kernels/.o).
check_step_id = $(if $(1),$(if $(call STEP_OF,$(1)),,$(error no step '$(1)' (steps: $(STEP_IDS)))),$(error $(2) (steps: $(STEP_IDS))))
# A goal that starts with a digit names a step (`make 06`): an unknown one is one clear line.
$(foreach g,$(filter-out $(STEP_IDS),$(filter 0% 1% 2% 3% 4% 5% 6% 7% 8% 9%,$(MAKECMDGOALS))),$(call check_step_id,$(g),no step))
ifneq ($(filter run sass ptx profile,$(MAKECMDGOALS)),)
  $(call check_step_id,$(STEP),STEP=NN names no step)
endif
ifneq ($(filter diff,$(MAKECMDGOALS)),)
  $(call check_step_id,$(A),make diff needs A=NN and B=NN)
  $(call check_step_id,$(B),make diff needs A=NN and B=NN)
endif
ifneq ($(filter sass-html,$(MAKECMDGOALS)),)
  ifneq ($(A)$(B),)
    $(call check_step_id,$(A),make sass-html A=NN needs B=NN too)
    $(call check_step_id,$(B),make sass-html A=NN needs B=NN too)
  else ifneq ($(HTML_STEP),)
    $(call check_step_id,$(HTML_STEP),STEP=NN names no step)
  endif
endif
