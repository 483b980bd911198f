"""The preamble of every figure script (scripts/plot_*.py and scripts/figures/draw.py): matplotlib with
its file-only backend (Agg), or one line naming scripts/docs_deps.sh when this python3 cannot import it;
the repository (ROOT); and scripts/ and scripts/figures/ on the import path (steps, step_constants,
style, ...). A script imports it first, before anything else of matplotlib:

    from plot_setup import ROOT, plt  # noqa: E402
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
for _path in (ROOT / "scripts" / "figures", ROOT / "scripts"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

try:
    import matplotlib
except ImportError:
    sys.exit(f"error: {pathlib.Path(sys.argv[0]).name} needs matplotlib (scripts/docs_deps.sh says how to install it)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["ROOT", "plt"]
