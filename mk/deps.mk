# What the build needs besides the CUDA Toolkit (included by the Makefile).
# Catch2, fmt, CLI11 (installed on Debian as root) and the CUTLASS headers (pip) are checked once, and
# again when scripts/deps.sh changes, before the first compile; a GPU machine that only runs carried
# binaries never needs them. The stamp is an (empty) included makefile so that make re-reads the
# makefiles after deps.sh ran: the CUTLASS headers it may just have installed are then found by the
# same run.
ifneq ($(BUILD_GOALS),)
  -include $(BUILD)/.deps-ok
endif
$(BUILD)/.deps-ok: scripts/deps.sh
	@mkdir -p $(BUILD)
	scripts/deps.sh
	@touch $@

# nvml.h (types only: libnvidia-ml.so.1 is loaded at run time) from PyPI's nvidia-nvml-dev, which
# scripts/deps.sh installs; without it the harness builds and says "no NVML" for clock and power.
NVML_INC := $(shell python3 -c 'import nvidia, os; [print(p) for p in (os.path.join(d, "cu13", "include") for d in nvidia.__path__) if os.path.exists(os.path.join(p, "nvml.h"))]' 2>/dev/null | head -n 1)
NVML_FLAGS := $(if $(NVML_INC),-isystem $(NVML_INC),-DGEMM_NO_NVML_HEADER)
