# ---- Goals refused before anything is built (included last by the Makefile) -------------------------
# Checked while the makefiles are read, so that a bad goal is one clear line, not a failed compile.
# A benchmark needs a GPU: say so before compiling for minutes (the GPU machine runs bench-run).
need_gpu = $(if $(shell nvidia-smi -L 2>/dev/null | grep '^GPU'),,$(error make $(1) needs an NVIDIA GPU and \
  nvidia-smi finds none here; nothing was built or written (`make` builds the steps; `make bench-run` runs built ones)))
ifneq ($(filter bench bench-sweep bench-waves bench-shapes tune,$(MAKECMDGOALS)),)
  $(foreach g,$(filter bench bench-sweep bench-waves bench-shapes tune,$(MAKECMDGOALS)),$(call need_gpu,$(g)))
endif

# Step ids named on the command line must exist: say so before make goes looking for a file that
# cannot exist (build/bin/, build/obj/kernels/.o).
check_step_id = $(if $(1),$(if $(call STEP_OF,$(1)),,$(error no step '$(1)' (steps: $(STEP_IDS)))),$(error $(2) (steps: $(STEP_IDS))))
# A goal that starts with a digit names a step (`make 06`): an unknown one is one clear line.
$(foreach g,$(filter-out $(STEP_IDS),$(filter 0% 1% 2% 3% 4% 5% 6% 7% 8% 9%,$(MAKECMDGOALS))),$(call check_step_id,$(g),no step))
ifneq ($(filter run sass ptx profile trace,$(MAKECMDGOALS)),)
  $(call check_step_id,$(STEP),STEP=NN names no step)
endif
ifneq ($(filter diff,$(MAKECMDGOALS)),)
  $(call check_step_id,$(B),make diff needs B=NN (A=NN defaults to B's parent))
  ifneq ($(A),)
    $(call check_step_id,$(A),make diff A=NN names no step)
  else ifeq ($(DIFF_A),)
    $(error step $(B) is a root of the step tree (it has no parent): make diff A=NN B=$(B))
  endif
endif
ifneq ($(filter sass-html,$(MAKECMDGOALS)),)
  ifneq ($(A)$(B),)
    $(call check_step_id,$(B),make sass-html A=NN needs B=NN too)
    $(call check_step_id,$(HTML_A),step $(B) is a root of the step tree: make sass-html A=NN B=$(B))
  else ifneq ($(HTML_STEP),)
    $(call check_step_id,$(HTML_STEP),STEP=NN names no step)
  endif
endif
