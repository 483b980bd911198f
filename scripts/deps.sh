#!/usr/bin/env bash
# Checks (and on Debian, as root, installs) what building the series needs besides the CUDA Toolkit:
#   Catch2 (v2, header-only; Debian package catch2), fmt (libfmt-dev, used header-only),
#   CLI11 (libcli11-dev, header-only command-line parser); and for the SASS tooling (make test, make
#   sass), cuobjdump and nvdisasm: from the CUDA Toolkit when it has them, else the pinned PyPI wheels
#   nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (13.2.86 is the oldest 13.x pair that reads nvcc
#   13.0's sm_90/sm_90a code; PyPI has no 13.0 wheel); and for the CUTLASS reference GEMMs of the
#   benchmark (common/harness/cutlass/), the CUTLASS C++ headers of the PyPI wheel nvidia-cutlass, pinned,
#   installed with --no-deps (only its headers are used; the Makefile finds them through python3 and
#   builds without the CUTLASS configurations when they are missing); nvml.h (PyPI nvidia-nvml-dev) for
#   the clock/power telemetry; optionally headless Chromium (below).
# Usage: scripts/deps.sh            check, install what is missing when possible, else say what to run
#        scripts/deps.sh --check    only check (exit 1 and print the install command when missing)
set -euo pipefail
check_only=0
[ "${1:-}" = "--check" ] && check_only=1

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "error: nvcc not found at $CUDA_HOME/bin/nvcc: install the CUDA Toolkit (13.0 is what the project is tested with; it needs cuBLAS and cuRAND) or set CUDA_HOME" >&2
  exit 1
fi

declare -A header_of=([catch2]=/usr/include/catch2/catch.hpp [libfmt-dev]=/usr/include/fmt/core.h [libcli11-dev]=/usr/include/CLI/CLI.hpp)
missing=()
for pkg in "${!header_of[@]}"; do
  [ -f "${header_of[$pkg]}" ] || missing+=("$pkg")
done

wheels="nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86"
need_tools=0
python3 "$(dirname "$0")/sass/sass.py" tools >/dev/null 2>&1 || need_tools=1
cutlass_wheel="nvidia-cutlass==4.2.0.0"
# The pinned version, with its headers (not only the Python package).
have_cutlass() {
  python3 - <<'PY' 2>/dev/null
import importlib.metadata as md, importlib.util as u, os, sys
s = u.find_spec("cutlass_library")
ok = (s is not None and md.version("nvidia-cutlass") == "4.2.0.0" and
      os.path.isfile(os.path.join(s.submodule_search_locations[0], "source/include/cutlass/version.h")))
sys.exit(0 if ok else 1)
PY
}
need_cutlass=0
have_cutlass || need_cutlass=1
# A wheel to install needs pip, which Debian ships separately (python3-pip).
if [ $((need_tools + need_cutlass)) -gt 0 ] && ! python3 -m pip --version >/dev/null 2>&1; then
  missing+=(python3-pip)
fi

status=0
if [ ${#missing[@]} -gt 0 ]; then
  if [ $check_only -eq 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing ${missing[*]} (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "error: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
    status=1
  fi
fi

# As root, Debian's system Python is "externally managed" (PEP 668) and pip refuses to install into
# it unless told to; older pips ignore the variable.
if [ "$(id -u)" = 0 ]; then export PIP_BREAK_SYSTEM_PACKAGES=1; fi
if [ $need_tools -eq 1 ]; then
  if [ $check_only -eq 0 ]; then
    echo "installing cuobjdump and nvdisasm (PyPI wheels: $wheels)"
    python3 -m pip install -q $wheels
  else
    echo "error: cuobjdump/nvdisasm not found; install them with: python3 -m pip install $wheels" >&2
    status=1
  fi
fi
if [ $need_cutlass -eq 1 ]; then
  if [ $check_only -eq 0 ]; then
    echo "installing the CUTLASS headers (PyPI wheel $cutlass_wheel, --no-deps)"
    python3 -m pip install -q --no-deps $cutlass_wheel
  else
    echo "error: CUTLASS $cutlass_wheel headers not found; install them with: python3 -m pip install --no-deps $cutlass_wheel" >&2
    status=1
  fi
fi
# nvml.h for the clock/power telemetry (common/harness/telemetry.cpp loads libnvidia-ml.so.1 at run time; the
# toolkit ships no nvml.h). Without it the harness still builds and prints "no NVML".
nvml_wheel="nvidia-nvml-dev==13.5.37"
if ! python3 -c 'import nvidia, os, sys; sys.exit(not any(os.path.exists(os.path.join(d, "cu13", "include", "nvml.h")) for d in nvidia.__path__))' 2>/dev/null; then
  if [ $check_only -eq 0 ]; then
    echo "installing nvml.h (PyPI wheel: $nvml_wheel)"
    python3 -m pip install -q --no-deps "$nvml_wheel"
  else
    echo "error: nvml.h not found; install it with: python3 -m pip install --no-deps $nvml_wheel" >&2
    status=1
  fi
fi
# Optional: headless Chromium (Debian package chromium, about 80 MB; a minute to install) for the browser
# test of the HTML pages (make test skips it, saying why, when there is none) and make docs-sass-screenshot.
# Installed when apt-get and root are there; its absence is never an error.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
  if [ $check_only -eq 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing chromium (Debian package, optional: the browser test of make sass-html's pages)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } ||
      echo "note: chromium could not be installed; the browser test of the HTML pages will be skipped"
  else
    echo "note: no chromium: the browser test of the HTML pages is skipped (install: sudo apt-get install chromium)"
  fi
fi
exit $status
