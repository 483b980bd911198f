# ---- The Catch2 suite: its objects and its binary (included by the Makefile) -------------------------
# `make test` (in the Makefile) builds them with everything else and runs scripts/run_tests.py.
TEST_SRCS   := $(wildcard tests/*.cpp) $(wildcard tests/fixtures/*.cu)
TEST_OBJS   := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(TEST_SRCS)))

# A fixture named hopper_* uses sm_90a instructions.
$(BUILD)/obj/tests/fixtures/%.o: tests/fixtures/%.cu $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(if $(filter hopper_%,$*),$(HOPPER_GENCODE),$(FP32_GENCODE)) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.cpp $(HEADERS) $(wildcard tests/*.hpp) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -I/usr/include/catch2 -c $< -o $@

# The test binary links every step (static registration), so it is rebuilt when any step changes.
$(BUILD)/bin/tests: $(TEST_OBJS) $(KERNEL_OBJS) $(COMMON_OBJS) $(MENU_OBJ) $(CUTLASS_OBJS) $(CUTLASS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter %.o,$^) -o $@ $(LDLIBS)
