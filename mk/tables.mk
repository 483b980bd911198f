# ---- Generated tables (included by the Makefile) ----------------------------------------------------
# The tables that list the steps, rewritten from the registrations and the committed CSVs: the README's
# step tree and results rows, docs/results.md, the book's measured blocks; `make test` fails while one
# is stale.
.PHONY: tables steps-table steps-json results-tables

# The registry as JSON (scripts/registry_json.cpp): every kernel object linked, as in build/bin/tests.
$(BUILD)/obj/scripts/registry_json.o: scripts/registry_json.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/bin/registry_json: $(BUILD)/obj/scripts/registry_json.o $(KERNEL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

#> make steps-json           rewrite kernels/steps.json from the steps' registrations (builds every step; make test fails while it is stale)
steps-json: $(BUILD)/bin/registry_json
	@$(BUILD)/bin/registry_json > $(STEPS_JSON).tmp && mv $(STEPS_JSON).tmp $(STEPS_JSON)
	@echo "wrote $(STEPS_JSON) ($$(grep -c '"id":' $(STEPS_JSON)) steps)"

#> make steps-table          rewrite the README's step tree from kernels/steps.json (no build)
steps-table:
	python3 scripts/steps.py readme

# The FP8 outliers lab and make bench-torch: the H200's run when committed, else another GPU's (the lab's
# accuracy is the same on every sm_90 tensor core; a torch table names its GPU).
OUTLIERS_CSV  := $(firstword $(wildcard results/$(DOCS_GPU)_fp8_outliers.csv) $(wildcard results/*_fp8_outliers.csv))
TORCH_RESULTS := $(firstword $(wildcard results/$(DOCS_GPU)_torch.csv) $(wildcard results/*_torch.csv))

#> make results-tables       rewrite README.md's results rows, docs/results.md (with the shapes table when results/<gpu>_shapes.csv exists), the book's measured blocks, the FP8 outliers and the PyTorch tables from the committed CSVs (no GPU)
# After steps-table: both rewrite README.md, and make runs in parallel here (a race lost the results row).
results-tables: steps-table
	python3 scripts/results_table.py results/$(DOCS_GPU).csv --readme README.md --full docs/results.md > /dev/null
	python3 scripts/book_numbers.py --csv results/$(DOCS_GPU).csv
	@if [ -n "$(OUTLIERS_CSV)" ]; then \
	  python3 scripts/plot_fp8_outliers.py $(OUTLIERS_CSV) --book docs/fp8.md; \
	else \
	  echo "docs/fp8.md: the outliers tables left as they are (no results/$(DOCS_GPU)_fp8_outliers.csv yet: scripts/gpu_session.sh outliers on a GPU)"; \
	fi
	@if [ -f results/nvidia_h200_fp8_shapes.csv ]; then \
	  for s in 35 36 37; do python3 scripts/fp8_table.py results/nvidia_h200_fp8_shapes.csv --step $$s --book docs/fp8.md --block fp8_$$s || exit 1; done; \
	fi
	@if [ -f results/nvidia_h200.csv ]; then \
	  for s in 30 31 32 33 34; do python3 scripts/fp8_table.py results/nvidia_h200.csv --step $$s --book docs/fp8.md --block fp8_$$s --sol || exit 1; done; \
	fi
	@if [ -f results/nvidia_h100_80gb_hbm3_shapes.csv ]; then \
	  python3 scripts/shapes_table.py results/nvidia_h100_80gb_hbm3_shapes.csv --book docs/every_shape.md --block shapes_h100 --steps 29,28 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h100_80gb_hbm3_shapes.csv --book docs/every_shape.md --block pickers_h100 --pickers 29,28 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h100_80gb_hbm3_shapes.csv --book docs/every_shape.md --block shapes_39_h100 --steps 39,29 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h100_80gb_hbm3_shapes.csv --book docs/every_shape.md --block decode_h100 --decode 29 || exit 1; \
	fi
	@if [ -f results/nvidia_h200_shapes.csv ]; then \
	  python3 scripts/shapes_table.py results/nvidia_h200_shapes.csv --book docs/every_shape.md --block pair_24_25 --pair 24,25 --shapes 256:4096:4096,256:4096:14336,128:4096:4096,128:6144:4096,1024:1024:65536,128:4096:14336 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h200_shapes.csv --book docs/every_shape.md --block pair_25_26 --pair 25,26 --shapes 128:4096:14336,1024:1024:65536 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h200_shapes.csv --book docs/every_shape.md --block pair_26_27 --pair 26,27 --shapes 1:4096:4096,1:4096:14336,1:14336:4096,4:6144:4096,32:4096:4096,32:4096:14336,32:14336:4096 || exit 1; \
	  python3 scripts/shapes_table.py results/nvidia_h200_shapes.csv --book docs/every_shape.md --block pair_27_28 --pair 27,28 --shapes 5000:5000:5000 || exit 1; \
	fi
	@if [ -n "$(TORCH_RESULTS)" ]; then \
	  python3 scripts/plot_torch.py $(TORCH_RESULTS) --book docs/pytorch.md; \
	else \
	  echo "docs/pytorch.md: the torch tables left as they are (no results/$(DOCS_GPU)_torch.csv yet: make bench-torch on a GPU)"; \
	fi
	@if [ -f results/$(DOCS_GPU)_shapes.csv ]; then \
	  python3 scripts/shapes_table.py results/$(DOCS_GPU)_shapes.csv --full docs/results.md; \
	else \
	  echo "docs/results.md: shapes table left as it is (no results/$(DOCS_GPU)_shapes.csv yet: make bench-shapes on a GPU)"; \
	fi

#> make tables               every generated table that lists the steps: the README's tree and results rows, docs/results.md, docs/resources.md
tables: steps-table results-tables resources
