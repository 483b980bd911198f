# ---- Pipeline traces (opt-in; common/kernel_lib/trace.hpp; included by the Makefile) ----------------
# The steps whose kernels include common/kernel_lib/ptx/trace.cuh, rebuilt with -DGEMM_TRACE_BUILD
# under build/trace/ (the timed binaries of build/bin/ contain no trace code).
TRACE_DIR    := $(BUILD)/trace
TRACED_STEPS := $(basename $(notdir $(shell grep -l 'ptx/trace.cuh' kernels/*.cu)))
$(TRACE_DIR)/obj/%.o: kernels/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -DGEMM_TRACE_BUILD $(HOPPER_GENCODE) -c $< -o $@
$(TRACE_DIR)/bin/%: $(TRACE_DIR)/obj/%.o $(MAIN_OBJ) $(COMMON_OBJS) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)
.PHONY: trace trace-bins
trace-bins: $(addprefix $(TRACE_DIR)/bin/,$(TRACED_STEPS))
#> make trace STEP=13 M= N= K=  traced build of the step: Chrome-trace JSON + timeline under build/trace/
trace: $(if $(filter $(RUN_STEP),$(TRACED_STEPS)),$(TRACE_DIR)/bin/$(RUN_STEP))
	@$(if $(filter $(RUN_STEP),$(TRACED_STEPS)),true,echo "error: step $(STEP) has no trace points (traced: $(TRACED_STEPS))" >&2; exit 2)
	$(TRACE_DIR)/bin/$(RUN_STEP) --m $(M) --n $(N) --k $(K) --trace $(TRACE_DIR)/$(RUN_STEP)_$(M)x$(N)x$(K).json
	python3 scripts/plot_trace.py $(TRACE_DIR)/$(RUN_STEP)_$(M)x$(N)x$(K).json
