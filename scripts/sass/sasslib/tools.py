"""Finding cuobjdump and nvdisasm (PATH, $CUDA_HOME/bin, the pinned PyPI wheels) and running them."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

# The repository root: scripts/sass/sasslib/tools.py -> ../../..
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# The disassembler wheels pinned for machines without a CUDA install (.ci/run installs them).
# No 13.0 wheel exists on PyPI; 13.2 disassembles the sm_90/sm_90a cubins nvcc 13.0 writes.
WHEEL_VERSION = "13.2.86"
PIP_HINT = (f"python3 -m pip install nvidia-cuda-cuobjdump=={WHEEL_VERSION} "
            f"nvidia-cuda-nvdisasm=={WHEEL_VERSION}")


class ToolError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# Finding the tools
# ----------------------------------------------------------------------------------------------

def wheel_bin_dirs():
    """bin/ folders of installed nvidia-* wheels (layouts nvidia/cu13/bin and nvidia/<pkg>/bin)."""
    roots = list(sys.path)
    try:
        import site
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except Exception:  # site may be restricted in embedded interpreters
        pass
    seen, dirs = set(), []
    for root in roots:
        for d in sorted(glob.glob(os.path.join(root or ".", "nvidia", "*", "bin"))):
            if d not in seen:
                seen.add(d)
                dirs.append(d)
    return dirs


def find_tool(name):
    on_path = shutil.which(name)
    if on_path:
        return on_path
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(cuda_home, "bin", name)
    if os.access(candidate, os.X_OK):
        return candidate
    for d in wheel_bin_dirs():
        candidate = os.path.join(d, name)
        if os.access(candidate, os.X_OK):
            return candidate
    raise ToolError(f"{name} not found on PATH, in {cuda_home}/bin, or in an installed "
                    f"nvidia-cuda-{name} wheel. Install both disassemblers with:\n  {PIP_HINT}")


def run_tool(args, cwd=None):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def tool_version(path):
    out = run_tool([path, "--version"])
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1]
