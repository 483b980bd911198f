"""The integer constants of a step's source (BM, BN, BK, TM, ...), as `scripts/sass/sass.py constants
NN` evaluates them: the figures that draw a step's tiles read them from here rather than restating
them. Used by plot_tilemaps.py, plot_streamk.py and plot_smem_layouts.py."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def constants(step):
    """{name: int} for step `step` (e.g. "08"); names whose value is not an integer are left out."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "sass" / "sass.py"), "constants", step],
                         check=True, capture_output=True, text=True).stdout
    values = {}
    for line in out.splitlines():
        name, sep, value = line.partition(" = ")
        if sep and value.strip().lstrip("-").isdigit():
            values[name.strip()] = int(value)
    return values
