# ---- PTX/SASS tooling (scripts/sass/sass.py + sasslib/; formats in sass_annotations/README.md) -----
# Needs no GPU: cuobjdump and nvdisasm come from PATH, $(CUDA_HOME)/bin or the nvidia-cuda-cuobjdump /
# nvidia-cuda-nvdisasm pip wheels. The PTX is the one ptxas assembled, read back from the cubin
# (-lineinfo embeds it), so no nvcc run is needed either. A diff compares a step with its parent (its
# registration's .parent) unless A= names another step.
SASS_PY     := scripts/sass/sass.py
# The entry point and the package it runs (scripts/sass/sasslib/): a change to either redoes the dumps.
# (The HTML pages' modules are not part of a dump.)
SASS_HTML_PY := $(addprefix scripts/sass/sasslib/,page.py page_assets.py pagecheck.py markdown.py browser.py)
SASS_CODE   := $(SASS_PY) $(filter-out $(SASS_HTML_PY),$(wildcard scripts/sass/sasslib/*.py))
SASS        := python3 $(SASS_PY) --build $(BUILD)
SASS_TWINS  := $(basename $(notdir $(wildcard tests/sass_twins/*.cu)))
SASS_STAMPS := $(STEPS:%=$(BUILD)/sass/%/dump.stamp) $(SASS_TWINS:%=$(BUILD)/sass_twins/%/dump.stamp)
WHAT        ?= sass
# The other side of a diff: A=, else B's parent (asked only when a diff is made).
DIFF_A       = $(or $(A),$(shell python3 scripts/steps.py parent $(B) 2>/dev/null))
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

#> make sass STEP=NN         SASS, clean SASS, source-interleaved view and PTX in build/sass/NN_*/
sass: $(BUILD)/obj/kernels/$(call STEP_OF,$(STEP)).o
	@$(SASS) sass $(STEP)

#> make ptx STEP=NN          the same dump, then the clean PTX of each kernel
ptx: $(BUILD)/obj/kernels/$(call STEP_OF,$(STEP)).o
	@$(SASS) ptx $(STEP)

#> make diff B=NN [A=NN]     the lesson of step B: clean-SASS diff against its parent (or A) and the instruction-mix delta (WHAT=ptx: PTX)
diff: $(if $(filter diff,$(MAKECMDGOALS)),$(BUILD)/sass/$(call STEP_OF,$(DIFF_A))/dump.stamp $(BUILD)/sass/$(call STEP_OF,$(B))/dump.stamp)
	@$(SASS) diff --what $(WHAT) $(DIFF_A) $(B)

#> make sass-check           every step's SASS expectations (sass_annotations/NN_*.expect)
sass-check: sass-dumps
	@$(SASS) check

#> make resources            regenerate docs/resources.md (registers, smem, occupancy, waves on the H200)
resources: $(KERNEL_OBJS)
	@$(SASS) resources

# STEP has a default (01) for `make run`; the pages take it only when it is given.
HTML_STEP   = $(if $(filter file,$(origin STEP)),,$(STEP))
HTML_A      = $(if $(B),$(DIFF_A))
STEP_STAMPS = $(STEPS:%=$(BUILD)/sass/%/dump.stamp)
stamp_of    = $(BUILD)/sass/$(call STEP_OF,$(1))/dump.stamp
#> make sass-html [STEP=NN]  the SASS beside the source in a browser page (B=NN [A=NN]: the diff page; no STEP: every step and each step's diff with its parent)
sass-html: $(if $(filter sass-html,$(MAKECMDGOALS)),$(if $(B),$(call stamp_of,$(HTML_A)) $(call stamp_of,$(B)),$(if $(HTML_STEP),$(call stamp_of,$(HTML_STEP)),$(STEP_STAMPS))))
	@$(SASS) html $(if $(B),--diff $(HTML_A) $(B),$(HTML_STEP))

SCREENSHOT_STEP := 06_vectorized_loads
#> make docs-sass-screenshot docs/img/sass_html.png: step 06's page in headless Chromium
docs-sass-screenshot: $(BUILD)/sass/$(SCREENSHOT_STEP)/dump.stamp
	@$(SASS) html --out $(BUILD)/sass-html $(SCREENSHOT_STEP)
	@$(SASS) html-screenshot --fragment L73 --size 1600,1000 $(BUILD)/sass-html/$(SCREENSHOT_STEP).html docs/img/sass_html.png
