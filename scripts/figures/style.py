"""The book's concept figures share this: the palette, the figure registry and the writer.

A figure module in scripts/figures/ defines functions decorated with @figure("name", "caption"); the
function draws one matplotlib figure and returns it, and draw.py saves it as docs/img/<name>.png. The
caption is what the book's Markdown puts under the image (docs/README.md lists every figure with it).
Figures take their numbers from the kernels' own constants (step_constants.constants("NN")), the
schedulers and swizzle of common/kernel_lib (via the host tools), or the committed results, so a changed
constant redraws its picture."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"
sys.path.insert(0, str(ROOT / "scripts"))

# Paul Tol's "bright" (colour-blind safe) and its greys; name the role, not the hue, where you can.
BLUE, RED, GREEN, YELLOW, CYAN, PURPLE, GREY = "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"
PALETTE = [BLUE, RED, GREEN, YELLOW, CYAN, PURPLE, GREY]
A_COLOR, B_COLOR, C_COLOR = BLUE, RED, GREEN  # operands A, B and the output C, in every figure
DPI = 110

FIGURES = {}  # name -> (function, caption, module)


def figure(name, caption):
    """Registers the decorated function as docs/img/<name>.png with its caption."""
    def wrap(fn):
        if name in FIGURES:
            raise ValueError(f"figure {name} registered twice ({FIGURES[name][2]} and {fn.__module__})")
        FIGURES[name] = (fn, caption, fn.__module__)
        return fn
    return wrap


def save(fig, name):
    import matplotlib.pyplot as plt
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / f"{name}.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path
