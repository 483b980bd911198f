# ---- The C API (common/capi/gemm_steps.h) and the Python package over it (included by the Makefile) ---
# build/lib/libgemmsteps.so: every step and the kernel library (position-independent objects, see PIC
# in the Makefile) behind the C API, which python/ loads; the CUDA runtime linked statically, as in the
# executables; only gemm_steps_* exported (gemm_steps.map). -z defs: every symbol resolved at link
# time; -z text: no text relocations (an object built without -fPIC fails here, not when Python loads
# the library).
LIB_SO      := $(BUILD)/lib/libgemmsteps.so
CAPI_OBJ    := $(BUILD)/obj/common/capi/gemm_steps.o
LIB_OBJS    := $(CAPI_OBJ) $(KERNEL_OBJS) $(filter $(BUILD)/obj/common/kernel_lib/%,$(COMMON_OBJS))
$(CAPI_OBJ): common/capi/gemm_steps.h

#> make lib                  build/lib/libgemmsteps.so: the C API over every step (common/capi/gemm_steps.h; python/ uses it)
.PHONY: lib
lib: $(LIB_SO)

$(LIB_SO): $(LIB_OBJS) common/capi/gemm_steps.map
	@mkdir -p $(dir $@)
	$(NVCC) -shared $(LIB_OBJS) -o $@ -cudart static -lcublas -ldl \
	  -Xlinker --version-script=common/capi/gemm_steps.map -Xlinker -z,defs -Xlinker -z,text
