# ---- The family's menu and its tuner (issue 46; included by the Makefile) ---------------------------
# The family's menu (common/kernel_lib/family/menu.cu): one kernel per entry, linked into the tests,
# the fuzzer and the tuner only; its ptxas report (spills) is checked by tests/test_family.cpp.
$(MENU_OBJ): common/kernel_lib/family/menu.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@) $(BUILD)/ptxas
	@echo "$(NVCC) ... $(HOPPER_GENCODE) -Xptxas -v -c $< -o $@"
	@$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -Xptxas -v -c $< -o $@ 2> $(BUILD)/ptxas/family_menu.txt \
	  || { cat $(BUILD)/ptxas/family_menu.txt >&2; exit 1; }
	@grep -iE "warning|error" $(BUILD)/ptxas/family_menu.txt >&2 || true

# build/bin/tune (scripts/tune.cpp): the menu's kernels and every step (for --hand-step), linked as in
# build/bin/tests. `make tune` runs scripts/tune.py on the GPU: the shape grid in batches, one process
# each, rows to results/tuning/<gpu>_bf16.csv.
$(BUILD)/obj/scripts/tune.o: scripts/tune.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/bin/tune: $(BUILD)/obj/scripts/tune.o $(MENU_OBJ) $(KERNEL_OBJS) $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

.PHONY: tune tune-run
#> make tune                 the family's menu timed paired with cuBLAS over a grid of shapes (GPU; scripts/tune.py --help)
tune: $(BUILD)/bin/tune
	@$(MAKE) --no-print-directory tune-run

#> make tune-run             the same, already built (what the GPU machine runs; TUNE_ARGS= passes options)
tune-run:
	python3 scripts/tune.py --build $(BUILD) $(TUNE_ARGS)

# build/bin/variant_tune_shared_first: the tuner with the menu built with GEMM_FAMILY_SHARED_HALF_FIRST=1
# (family/producer.cuh: a pair along M issues B's multicast half before its own A box), for a paired
# A/B of the load order against build/bin/tune (PROFILE_TUNE= in gpu_session.sh entries). No step is
# linked in: step 29's object instantiates the same kernels in the default order, and the linker would
# keep one of the two copies (so this tuner has no --hand-step).
$(BUILD)/obj/variants/menu_shared_first.o: common/kernel_lib/family/menu.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DGEMM_FAMILY_SHARED_HALF_FIRST=1 -c $< -o $@

$(BUILD)/bin/variant_tune_shared_first: $(BUILD)/obj/scripts/tune.o $(BUILD)/obj/variants/menu_shared_first.o $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

# build/bin/variant_tune_promo128: the tuner (menu and steps) with every tensor map of ours asking L2 for
# 128-byte promotion instead of 256 (common/kernel_lib/tma.cpp's GEMM_TMA_L2_PROMOTION), for the same A/B.
$(BUILD)/obj/variants/tma_promo128.o: common/kernel_lib/tma.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DGEMM_TMA_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION_L2_128B -c $< -o $@

$(BUILD)/bin/variant_tune_promo128: $(BUILD)/obj/scripts/tune.o $(BUILD)/obj/variants/tma_promo128.o $(MENU_OBJ) $(KERNEL_OBJS) \
    $(filter-out $(BUILD)/obj/common/kernel_lib/tma.o,$(COMMON_OBJS)) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

.PHONY: promotion-variant
#> make promotion-variant    build/bin/variant_tune_promo128: the tuner with our tensor maps asking for 128-byte L2 promotion
promotion-variant: $(BUILD)/bin/variant_tune_promo128

.PHONY: order-variant
#> make order-variant        build/bin/variant_tune_shared_first: the tuner with a cluster pair along M loading its multicast half first
order-variant: $(BUILD)/bin/variant_tune_shared_first

# build/bin/variant_tune_coop_waves: the tuner with the menu's cooperative entries taking stream-K from
# one full wave (GEMM_FAMILY_COOP_MIN_WAVES=1, family/menu.hpp) instead of four, for a paired A/B against
# build/bin/tune at the same shapes. Plans are made on the host in tune.o and in the menu's launchers,
# so both are built with the switch; no step is linked in (step 29's object makes the same plans with
# the default, and the linker would keep one of the two copies), so it has no --hand-step.
$(BUILD)/obj/variants/tune_coop_waves.o: scripts/tune.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DGEMM_FAMILY_COOP_MIN_WAVES=1 -c $< -o $@
$(BUILD)/obj/variants/menu_coop_waves.o: common/kernel_lib/family/menu.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(HOPPER_GENCODE) -DGEMM_FAMILY_COOP_MIN_WAVES=1 -c $< -o $@
$(BUILD)/bin/variant_tune_coop_waves: $(BUILD)/obj/variants/tune_coop_waves.o $(BUILD)/obj/variants/menu_coop_waves.o $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)

.PHONY: coop-waves-variant
#> make coop-waves-variant   build/bin/variant_tune_coop_waves: the tuner with cooperative entries taking stream-K from one full wave
coop-waves-variant: $(BUILD)/bin/variant_tune_coop_waves
