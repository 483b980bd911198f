# ---- Reliability: fuzzer, fixture executables, sanitizers (included by the Makefile) ----------------
# GPU runs; building needs no GPU. build/bin/fuzz links every step like build/bin/tests (static
# registration), and no fixture.
$(BUILD)/obj/fuzz/%.o: fuzz/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/bin/fuzz: $(BUILD)/obj/fuzz/fuzz.o $(KERNEL_OBJS) $(COMMON_OBJS) $(MENU_OBJ)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

# build/bin/soak: the last bf16 steps back to back for minutes (fuzz/soak.cpp).
$(BUILD)/bin/soak: $(BUILD)/obj/fuzz/soak.o $(KERNEL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

MINUTES ?= 10
# STEP=NN[,MM] when given on the command line; else the soak's default steps.
SOAK_STEPS = $(if $(filter command line,$(origin STEP)),--steps $(STEP))
.PHONY: soak soak-run
#> make soak [STEP=23] [MINUTES=10]  the last bf16 steps back to back over rotating shapes, every 10th result checked and compared bit for bit
soak: $(BUILD)/bin/soak
	@$(MAKE) --no-print-directory soak-run

#> make soak-run             the same, already built (what the GPU machine runs)
soak-run:
	$(BUILD)/bin/soak --minutes $(MINUTES) $(SOAK_STEPS)

FUZZ_SEED  ?= 1
FUZZ_COUNT ?= 3000
.PHONY: fuzz fuzz-run sanitize sanitize-run fixtures
#> make fuzz                 random seeded shapes on every step (FUZZ_SEED= FUZZ_COUNT= FUZZ_STEPS=06,14; FUZZ_MENU=1: the family's menu entries instead)
fuzz: $(BUILD)/bin/fuzz
	@$(MAKE) --no-print-directory fuzz-run

#> make fuzz-run             the same, already built (what the GPU machine runs)
fuzz-run:
	$(BUILD)/bin/fuzz --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) $(if $(FUZZ_STEPS),--steps $(FUZZ_STEPS)) $(if $(FUZZ_MENU),--menu)

# Every tests/fixtures/fixture_NAME.cu registers exactly one broken step and also becomes an
# executable, build/bin/fixture_NAME (the step harness's main): what compute-sanitizer and the
# exit-code tests run. Fixtures are never benchmarked (bench.py runs the registered steps only).
FIXTURE_EXES := $(patsubst tests/fixtures/fixture_%.cu,$(BUILD)/bin/fixture_%,$(wildcard tests/fixtures/fixture_*.cu))
$(BUILD)/bin/fixture_%: $(BUILD)/obj/tests/fixtures/fixture_%.o $(MAIN_OBJ) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)
# lab/NAME.cu: the accuracy lab's programs (docs/fp8.md): standalone sm_90a measurements of the
# hardware itself, not steps (no harness, no registration); build/bin/lab_NAME.
LAB_EXES := $(patsubst lab/%.cu,$(BUILD)/bin/lab_%,$(wildcard lab/*.cu))
$(BUILD)/bin/lab_%: lab/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) $< -o $@

# lab/NAME.cpp: the lab's drivers, which run registered steps and references through the harness
# (every step linked, as in build/bin/fuzz); build/bin/lab_NAME.
LAB_DRIVERS := $(patsubst lab/%.cpp,$(BUILD)/bin/lab_%,$(wildcard lab/*.cpp))
$(BUILD)/obj/lab/%.o: lab/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@
$(LAB_DRIVERS): $(BUILD)/bin/lab_%: $(BUILD)/obj/lab/%.o $(KERNEL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)
LAB_EXES += $(LAB_DRIVERS)  # all the lab's programs: make lab-fp8 and make gpu-carry build them

#> make lab-fp8              build/bin/lab_fp8_accumulator (the FP8 tensor core's accumulator width) and lab_fp8_outliers (error against the unquantized product per scaling) (docs/fp8.md; a Hopper GPU runs them)
.PHONY: lab-fp8
lab-fp8: $(LAB_EXES)

# tests/probes/NAME.cu: small programs the sanitizer runs to show what a tool sees (sm_90a, with the
# kernel library's tensor maps).
PROBE_EXES := $(patsubst tests/probes/%.cu,$(BUILD)/bin/probe_%,$(wildcard tests/probes/*.cu))
$(BUILD)/bin/probe_%: tests/probes/%.cu $(HEADERS) $(BUILD)/obj/common/kernel_lib/tma.o $(BUILD)/obj/common/kernel_lib/check.o | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) $< $(BUILD)/obj/common/kernel_lib/tma.o $(BUILD)/obj/common/kernel_lib/check.o -o $@ $(LDLIBS)

#> make fixtures             build/bin/fixture_NAME: the deliberately broken steps; build/bin/probe_NAME: the sanitizer's probes
fixtures: $(FIXTURE_EXES) $(PROBE_EXES)

#> make sanitize             compute-sanitizer on every step and the broken fixtures
sanitize: all $(FIXTURE_EXES) $(PROBE_EXES)
	@$(MAKE) --no-print-directory sanitize-run

#> make sanitize-run         the same, already built (what the GPU machine runs)
sanitize-run:
	scripts/sanitize.sh --build $(BUILD)

# ---- A GPU machine with no compiler (scripts/gpu_session.sh) ----------------------------------------
# Every measurement build below is one step's object compiled with a switch (its own rule, the switch
# in it), linked as the step's binary is: build/bin/variant_<step>_<what>.
$(BUILD)/bin/variant_%: $(BUILD)/obj/variants/%.o $(MAIN_OBJ) $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)
# The tile-menu step (25) built with its tile forced (STEP25_FORCE_BN), so that each menu tile can be
# measured on every shape beside the menu's pick (scripts/gpu_session.sh tiles): variant_25_bn64 and
# variant_25_bn128. They are measuring tools, not steps: no registration of their own, never benchmarked.
TILE_VARIANTS := $(BUILD)/bin/variant_25_bn64 $(BUILD)/bin/variant_25_bn128
$(BUILD)/obj/variants/25_bn%.o: kernels/25_tile_menu.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP25_FORCE_BN=$* -c $< -o $@
#> make tile-variants        step 25 with each menu tile forced (build/bin/variant_25_bn64, _bn128), for gpu_session.sh tiles
.PHONY: tile-variants
tile-variants: $(TILE_VARIANTS)

# Step 28 copying A and B wherever K % 16 != 0 (STEP28_ALWAYS_REPACK), to measure where
# tile_menu::repack_pitch's copy pays (TILE_BINS="27 28 variant_28_always" scripts/gpu_session.sh tiles).
REPACK_VARIANTS := $(BUILD)/bin/variant_28_always
$(BUILD)/obj/variants/28_always.o: kernels/28_pad_pitch.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP28_ALWAYS_REPACK=1 -c $< -o $@

PROMOTE_VARIANTS := $(BUILD)/bin/variant_31_pe1 $(BUILD)/bin/variant_31_pe2
$(BUILD)/obj/variants/31_pe%.o: kernels/31_fp8_promotion.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP31_PROMOTE_EVERY=$* -c $< -o $@
#> make promote-variants     step 31 promoting every 1 and 2 k32 wgmmas (build/bin/variant_31_pe1, _pe2), for gpu_session.sh promote
.PHONY: promote-variants
promote-variants: $(PROMOTE_VARIANTS)

# Step 35 with 34's tile in cluster pairs along M sharing B by multicast (STEP35_CLUSTER_M=2), to
# measure whether step 17's multicast pays on the FP8 line (FP8_STEP="35 variant_35_c2m" gpu_session.sh fp8).
FP8_VARIANTS := $(BUILD)/bin/variant_35_c2m
$(BUILD)/obj/variants/35_c2m.o: kernels/35_fp8_shapes.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP35_CLUSTER_M=2 -c $< -o $@
# Steps 41 and 38 swapped up to M = 128 (two 64-wide tile columns of C^T), and 38 with 41's fixup price,
# to measure whether cuBLASLt's M = 128 tiles pay on the FP8 lines: variant_41_swap128, variant_38_bytes
# (STEP38_FIXUP_BY_BYTES=1) and variant_38_swap128 (both switches).
FP8_VARIANTS += $(BUILD)/bin/variant_41_swap128 $(BUILD)/bin/variant_38_bytes $(BUILD)/bin/variant_38_swap128
$(BUILD)/obj/variants/41_swap128.o: kernels/41_fp8_decode_every_sm.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP41_SWAP_MAX_M=128 -c $< -o $@
$(BUILD)/obj/variants/38_bytes.o: kernels/38_fp8_small_m_swap.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP38_FIXUP_BY_BYTES=1 -c $< -o $@
$(BUILD)/obj/variants/38_swap128.o: kernels/38_fp8_small_m_swap.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP38_FIXUP_BY_BYTES=1 -DSTEP38_SWAP_MAX_M=128 -c $< -o $@
# Step 42 without its ring scales, at its 5 stages: 41's scale loads, to tell the ring from the stage it costs.
FP8_VARIANTS += $(BUILD)/bin/variant_42_noring
$(BUILD)/obj/variants/42_noring.o: kernels/42_fp8_block_scales_in_ring.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DSTEP42_RING_SCALES=false -c $< -o $@
#> make fp8-variants         measurement builds of steps 35, 38, 41 and 42 (build/bin/variant_*), for gpu_session.sh fp8
.PHONY: fp8-variants
fp8-variants: $(FP8_VARIANTS)

# build/lib/libtmap_spy.so: logs the TMA tensor maps a process encodes (cuBLAS's too), for gpu_session.sh tmaps
TMAP_SPY := $(BUILD)/lib/libtmap_spy.so
$(TMAP_SPY): scripts/tmap_spy.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -shared -fPIC -I$(CUDA_HOME)/include $< -o $@ -ldl
#> make tmap-spy             build/lib/libtmap_spy.so: LD_PRELOAD it to log every tensor map a process encodes (cuBLAS's included)
.PHONY: tmap-spy
tmap-spy: $(TMAP_SPY)

#> make gpu-carry            build/carry/bin.tar.xz: every executable, build/lib/libgemmsteps.so and libtmap_spy.so, stripped and compressed, for a GPU machine with no compiler; scripts/gpu_session.sh unpacks it into build/bin and build/lib
.PHONY: gpu-carry
gpu-carry: all $(BUILD)/bin/tests $(BUILD)/bin/fuzz $(BUILD)/bin/tune $(BUILD)/bin/soak $(FIXTURE_EXES) $(PROBE_EXES) $(TILE_VARIANTS) $(REPACK_VARIANTS) $(PROMOTE_VARIANTS) $(FP8_VARIANTS) $(LAB_EXES) $(LIB_SO) $(TMAP_SPY) \
           $(BUILD)/bin/variant_tune_shared_first $(BUILD)/bin/variant_tune_promo128
	@rm -rf $(BUILD)/carry && mkdir -p $(BUILD)/carry/bin $(BUILD)/carry/lib
	cp $(BUILD)/bin/* $(BUILD)/carry/bin/ && strip $(BUILD)/carry/bin/*
	cp $(LIB_SO) $(TMAP_SPY) $(BUILD)/carry/lib/ && strip --strip-unneeded $(BUILD)/carry/lib/*
	tar cJf $(BUILD)/carry/bin.tar.xz -C $(BUILD)/carry bin lib && rm -rf $(BUILD)/carry/bin $(BUILD)/carry/lib
	@ls -l $(BUILD)/carry/bin.tar.xz
