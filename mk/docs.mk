# ---- The book's figures (included by the Makefile) --------------------------------------------------
# Every figure from committed code and data, without a GPU: matplotlib (scripts/docs_deps.sh checks
# it, installs it on Debian as root, or prints the install command), a C++ compiler for the host tools
# that print the kernel library's schedules and swizzle, and the CUDA Toolkit for build/bin/split_dump,
# which links steps 21 and 23's objects (their stream-K rule; a few minutes on 2 cores when not built).
.PHONY: schedule-figures swizzle-figure tile-menu-figure dispatch-figure docs docs-deps
DOCS_GPU   := nvidia_h200
# The waves figure draws the runs of the steps with the role waves-figure (scripts/step_roles.tsv).
WAVES_CSVS  = $(foreach s,$(shell python3 scripts/steps.py role waves-figure),results/$(DOCS_GPU)_waves_$(s).csv)

docs-deps:
	@scripts/docs_deps.sh

# Tile schedules (common/kernel_lib/schedule.hpp) printed as CSV by a host tool and drawn by
# scripts/plot_schedule.py into docs/img/schedule_<order>.png.
$(BUILD)/bin/schedule_dump: scripts/schedule_dump.cpp common/kernel_lib/schedule.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

#> make schedule-figures     docs/img/schedule_*.png from common/kernel_lib/schedule.hpp (no GPU)
schedule-figures: docs-deps $(BUILD)/bin/schedule_dump
	python3 scripts/plot_schedule.py --tool $(BUILD)/bin/schedule_dump

# The TMA swizzle of common/kernel_lib/swizzle.hpp (the function the kernels use), printed by a host
# tool and drawn by scripts/plot_swizzle.py into docs/img/swizzle.png.
$(BUILD)/bin/swizzle_dump: scripts/swizzle_dump.cpp common/kernel_lib/swizzle.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

#> make swizzle-figure       docs/img/swizzle.png from common/kernel_lib/swizzle.hpp (no GPU)
swizzle-figure: docs-deps $(BUILD)/bin/swizzle_dump
	python3 scripts/plot_swizzle.py --tool $(BUILD)/bin/swizzle_dump

# Step 25's tile menu (common/kernel_lib/tile_menu.hpp) over an M x N map, printed by a host tool and
# drawn by scripts/plot_tile_menu.py into docs/img/tile_menu.png.
$(BUILD)/bin/tile_menu_dump: scripts/tile_menu_dump.cpp common/kernel_lib/tile_menu.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

#> make tile-menu-figure     docs/img/tile_menu.png from common/kernel_lib/tile_menu.hpp (no GPU)
tile-menu-figure: docs-deps $(BUILD)/bin/tile_menu_dump
	python3 scripts/plot_tile_menu.py --tool $(BUILD)/bin/tile_menu_dump

# Step 29's measured pick (family/dispatch.hpp over the generated family/tuned_bf16.hpp) beside step 28's
# hand rule over an M x N map, printed by a host tool and drawn by scripts/plot_dispatch.py into
# docs/img/dispatch_map.png.
$(BUILD)/bin/dispatch_dump: scripts/dispatch_dump.cpp common/kernel_lib/family/dispatch.hpp common/kernel_lib/family/tuned_bf16.hpp \
    common/kernel_lib/family/menu.hpp common/kernel_lib/family/config.hpp common/kernel_lib/family/plan.hpp common/kernel_lib/tile_menu.hpp \
    common/kernel_lib/stream_k.hpp common/kernel_lib/host_device.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@

#> make dispatch-figure      docs/img/dispatch_map.png: step 29's measured pick against step 28's hand rule (no GPU)
dispatch-figure: docs-deps $(BUILD)/bin/dispatch_dump
	python3 scripts/plot_dispatch.py --tool $(BUILD)/bin/dispatch_dump

# The stream-K splits of steps 21 and 23 (their own make_split over common/kernel_lib/stream_k.hpp),
# printed as JSON by a host tool for scripts/figures/hopper2.py and shapes.py. It links the two steps'
# objects and the kernel library, not the harness; no GPU is needed to run it.
$(BUILD)/obj/scripts/split_dump.o: scripts/split_dump.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/bin/split_dump: $(BUILD)/obj/scripts/split_dump.o $(BUILD)/obj/kernels/21_stream_k.o \
                         $(BUILD)/obj/kernels/23_pingpong_stream_k.o $(filter $(BUILD)/obj/common/kernel_lib/%,$(COMMON_OBJS))
	@mkdir -p $(dir $@)
	$(NVCC) $^ -o $@ $(LDLIBS)

# scripts/figures/draw.py reads only committed files: the kernels' sources and constants, the family's headers
# (config.hpp, plan.hpp, menu.hpp, the generated tuned_bf16.hpp), results/ (the lab's accumulator output,
# the traces), and the host tools' output built above.
#> make docs                 redraw every figure of the book from committed results and code (no GPU): the concept figures of scripts/figures/, then the data figures
docs: docs-deps schedule-figures swizzle-figure tile-menu-figure dispatch-figure $(BUILD)/bin/split_dump
	python3 scripts/figures/draw.py
	python3 scripts/plot_steps.py results/$(DOCS_GPU).csv
	python3 scripts/plot_sweep.py results/$(DOCS_GPU)_sweep.csv
	@if [ -f results/$(DOCS_GPU)_fp8_lab.csv ]; then python3 scripts/plot_fp8_lab.py results/$(DOCS_GPU)_fp8_lab.csv; fi
	@if [ -n "$(OUTLIERS_CSV)" ]; then \
	  python3 scripts/plot_fp8_outliers.py $(OUTLIERS_CSV); \
	else \
	  echo "docs/img/fp8_outliers.png not drawn (no results/$(DOCS_GPU)_fp8_outliers.csv yet: scripts/gpu_session.sh outliers on a GPU)"; \
	fi
	@if [ -f results/$(DOCS_GPU)_shapes.csv ]; then \
	  python3 scripts/plot_shapes.py results/$(DOCS_GPU)_shapes.csv; \
	else \
	  echo "docs/img/shapes.png not drawn (no results/$(DOCS_GPU)_shapes.csv yet: make bench-shapes on a GPU)"; \
	fi
	@if [ -n "$(TORCH_RESULTS)" ]; then \
	  python3 scripts/plot_torch.py $(TORCH_RESULTS) --out docs/img/torch.png; \
	else \
	  echo "docs/img/torch.png not drawn (no results/$(DOCS_GPU)_torch.csv yet: make bench-torch on a GPU)"; \
	fi
	python3 scripts/plot_waves.py $(WAVES_CSVS)
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
