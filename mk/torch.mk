# ---- From PyTorch (issue 48; included by the Makefile) -------------------------------------------------
# make bench-torch: the last bf16 and FP8 steps through the Python package (python/gemm_steps over
# build/lib/libgemmsteps.so) beside torch.matmul, torch._scaled_mm and torch.compile(mode="max-autotune"),
# paired as the harness pairs, plus the Python path's per-call cost (scripts/bench_torch.py says how).
# Needs a Hopper GPU and PyTorch; inside one 10-minute budget (BENCH_TORCH_ARGS="--budget-s 300" etc.).
TORCH_CSV := $(BUILD)/bench_torch.csv

#> make bench-torch          the last steps from PyTorch against torch.matmul, torch._scaled_mm and torch.compile (max-autotune), paired, and the per-call cost of the Python path -> build/bench_torch.csv (commit as results/<gpu>_torch.csv), then `make docs` draws it (GPU and PyTorch; at most 10 min)
.PHONY: bench-torch
bench-torch: $(LIB_SO)
	PYTHONPATH=python python3 scripts/bench_torch.py --out $(TORCH_CSV) $(BENCH_TORCH_ARGS)
