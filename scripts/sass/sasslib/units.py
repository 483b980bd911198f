"""Units (a step kernels/NN_name.cu or a SASS twin tests/sass_twins/name.cu) and kernel names."""
from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import subprocess

from .tools import REPO, ToolError

# ----------------------------------------------------------------------------------------------
# Units: a step (kernels/NN_name.cu) or a SASS twin (tests/sass_twins/name.cu)
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Unit:
    name: str      # 06_vectorized_loads, or twin_scalar_loads
    step: str      # "06", or "" for a twin
    source: str    # path of the .cu
    obj: str       # the object the build made
    ptxas: str     # the ptxas -v report
    out: str       # the dump folder


def find_unit(build, ident):
    """ident: a step number ("06"), a step name ("06_vectorized_loads") or "twin:<name>"."""
    if ident.startswith("twin:"):
        name = ident[5:]
        return Unit("twin_" + name, "", os.path.join(REPO, "tests", "sass_twins", name + ".cu"),
                    os.path.join(build, "obj", "tests", "sass_twins", name + ".o"),
                    os.path.join(build, "ptxas", "sass_twins", name + ".txt"),
                    os.path.join(build, "sass_twins", name))
    num = ident.split("_")[0]
    matches = sorted(glob.glob(os.path.join(REPO, "kernels", num + "_*.cu")))
    if ident != num:
        matches = [m for m in matches if os.path.basename(m) == ident + ".cu"]
    if len(matches) != 1:
        known = " ".join(os.path.basename(k).split("_")[0] for k in sorted(glob.glob(os.path.join(REPO, "kernels", "*.cu"))))
        raise ToolError(f"no single kernels/{ident}_*.cu (steps: {known})")
    name = os.path.basename(matches[0])[:-3]
    return Unit(name, num, matches[0], os.path.join(build, "obj", "kernels", name + ".o"),
                os.path.join(build, "ptxas", name + ".txt"), os.path.join(build, "sass", name))


def all_steps(build):
    return [find_unit(build, os.path.basename(k)[:-3]) for k in sorted(glob.glob(os.path.join(REPO, "kernels", "*.cu")))]


def all_twins(build):
    return [find_unit(build, "twin:" + os.path.basename(k)[:-3])
            for k in sorted(glob.glob(os.path.join(REPO, "tests", "sass_twins", "*.cu")))]


# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------

def display_name(short, demangled):
    """The short name with its template arguments when the function is a template instantiation
    (step 24: gemm_pingpong_stream_k<true>), so that two instantiations read apart in tables."""
    m = re.search(re.escape(short) + r"(<[^()]*>)\(", demangled or "")
    return short + (m.group(1) if m else "")


def short_name(mangled):
    """Last identifier of an Itanium nested name: _ZN6step0111sgemm_naiveE... -> sgemm_naive."""
    m = re.match(r"_ZN?(L?)(.*)", mangled)
    if not m or not mangled.startswith("_Z"):
        return mangled
    rest, last = m.group(2), mangled
    while True:
        d = re.match(r"(\d+)", rest)
        if not d:
            break
        n = int(d.group(1))
        ident = rest[len(d.group(1)):len(d.group(1)) + n]
        last, rest = ident, rest[len(d.group(1)) + n:]
    return last


def demangle(names):
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt or not names:
        return {n: n for n in names}
    out = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


_REGISTRY = None


def step_registry():
    """{id: step} from the steps' registrations (kernels/steps.json through scripts/steps.py: parent,
    technique, ...), read once."""
    global _REGISTRY
    if _REGISTRY is None:
        import sys
        sys.path.insert(0, os.path.join(REPO, "scripts"))
        import steps  # noqa: E402  (scripts/steps.py, which reads kernels/steps.json)
        _REGISTRY = steps.by_id(steps.load())
    return _REGISTRY
