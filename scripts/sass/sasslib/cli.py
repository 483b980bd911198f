"""PTX/SASS tooling for the matmul series: dump, clean, interleave, diff, check, resource table.

Needs no GPU and no CUDA install beyond the objects the build made: cuobjdump and nvdisasm are
taken from PATH, else $CUDA_HOME/bin, else the nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm pip
wheels. The PTX comes from the objects too: -lineinfo makes ptxas embed the PTX it assembled in
the cubin's .nv_debug_ptx_txt section, so `ptx` needs no nvcc either.

  sass.py --build build dump 06        SASS, clean SASS, source-interleaved view, PTX of step 06
  sass.py --build build diff 05 06     unified diff of the clean SASS + instruction-mix table
  sass.py --build build check [06 ...]  enforce sass_annotations/NN_*.expect (all steps by default)
  sass.py --build build fresh           every SASS/PTX line quoted in sass_annotations/*.md exists
  sass.py --build build resources       docs/resources.md (registers, smem, occupancy, waves)
  sass.py --build build constants 14    the constants of step 14's source (`--eval EXPR`: one value)
  sass.py --build build html [06]       build/sass-html/: source beside SASS (--diff 05 06: diff page)
  sass.py --build build lines 23 [--opcode HGMMA]  instructions per source line of step 23's kernels
  sass.py selftest                      the parsers and the checker on hand-made listings

The file formats (clean SASS, expectations) are described in sass_annotations/README.md.
The code is the package scripts/sass/sasslib/ (one module per job; see its __init__.py).
"""
from __future__ import annotations

import argparse
import os
import sys

from .checks import cmd_check, cmd_fresh
from .consts import cmd_constants
from .diff import cmd_diff
from .dump import dump
from .resources import cmd_resources
from .selftest import selftest
from .tools import REPO, ToolError, find_tool, tool_version
from .units import find_unit


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build folder (make's BUILD)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dump", help="dump SASS, clean SASS, interleaved view and PTX of steps or twins")
    p.add_argument("units", nargs="+", help="step numbers, step names or twin:<name>")
    p.add_argument("--quiet", action="store_true")
    p = sub.add_parser("ptx", help="like dump, then print the clean PTX of each kernel function")
    p.add_argument("step")
    p = sub.add_parser("sass", help="like dump, then list the files")
    p.add_argument("step")
    p = sub.add_parser("diff", help="unified diff of clean SASS (or PTX) plus an instruction-mix table")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--what", choices=("sass", "ptx"), default="sass")
    p = sub.add_parser("check", help="enforce the expectations")
    p.add_argument("steps", nargs="*")
    p.add_argument("--twin", help="check tests/sass_twins/<name>.cu instead of steps")
    p.add_argument("--rule", action="append", help="check only this rule (repeatable)")
    p = sub.add_parser("fresh", help="every block quoted in sass_annotations/NN_*.md and docs/*.md is in the current dump")
    p.add_argument("--md", help="check this Markdown file instead (against --step, or every step)")
    p.add_argument("--step", help="with --md: the step whose dump it quotes")
    p = sub.add_parser("resources", help="write the resource table")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "resources.md"))
    p.add_argument("--size", type=int, default=4096)
    p = sub.add_parser("constants", help="the integer constants of a step's source, or the value of one expression")
    p.add_argument("step", nargs="?", help="step number or name (or use --source)")
    p.add_argument("--source", help="read this file instead of a step's kernels/NN_*.cu")
    p.add_argument("--eval", help="print the value of this expression of the constants (exit 2 when refused)")
    p = sub.add_parser("html", help="HTML pages: source beside SASS per step (all steps + index.html by default)")
    p.add_argument("steps", nargs="*", help="step numbers or names (default: every step, an index and the diffs)")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="the diff page of two steps instead")
    p.add_argument("--out", help="the folder (default BUILD/sass-html)")
    p.add_argument("--no-diffs", action="store_true", help="without steps: skip the diff pages (each step against its parent)")
    p = sub.add_parser("html-check", help="check the structure of generated pages (html.parser)")
    p.add_argument("files", nargs="+", help="pages to check; an index.html must link every step")
    p = sub.add_parser("html-browser-check", help="load pages in headless Chromium: no script error, hover works (77: skipped)")
    p.add_argument("pages", nargs="+")
    p = sub.add_parser("html-screenshot", help="a PNG of a page in headless Chromium")
    p.add_argument("page")
    p.add_argument("png")
    p.add_argument("--fragment", default="", help="the #fragment: L84 pins source line 84, k1 selects kernel 1")
    p.add_argument("--size", default="1600,1000", help="window size W,H")
    p = sub.add_parser("lines", help="instructions per source line of a step (innermost line of the step's file)")
    p.add_argument("step")
    p.add_argument("--opcode", help="count only instructions whose opcode starts with this (e.g. HGMMA)")
    sub.add_parser("selftest")
    sub.add_parser("tools", help="print where cuobjdump and nvdisasm were found")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    try:
        if args.cmd == "dump":
            for u in args.units:
                dump(find_unit(args.build, u), quiet=args.quiet)
        elif args.cmd in ("sass", "ptx"):
            unit = find_unit(args.build, args.step)
            written = dump(unit)
            if args.cmd == "ptx":
                for b in written:
                    p = os.path.join(unit.out, b + ".ptx")
                    if os.path.exists(p):
                        print(f"\n==== {p}")
                        sys.stdout.write(open(p).read())
        elif args.cmd == "diff":
            cmd_diff(args)
        elif args.cmd == "check":
            return cmd_check(args)
        elif args.cmd == "fresh":
            return cmd_fresh(args)
        elif args.cmd == "resources":
            cmd_resources(args)
        elif args.cmd == "constants":
            if not args.source and not args.step:
                raise ToolError("constants: name a step or give --source FILE")
            return cmd_constants(args, args.source or find_unit(args.build, args.step).source)
        elif args.cmd == "html":
            from .page import cmd_html
            return cmd_html(args)
        elif args.cmd == "html-check":
            from .pagecheck import cmd_html_check
            return cmd_html_check(args)
        elif args.cmd == "html-browser-check":
            from .browser import cmd_browser_check
            return cmd_browser_check(args)
        elif args.cmd == "html-screenshot":
            from .browser import cmd_screenshot
            return cmd_screenshot(args)
        elif args.cmd == "lines":
            from .page import cmd_lines
            return cmd_lines(args)
        elif args.cmd == "selftest":
            return selftest()
        elif args.cmd == "tools":
            for t in ("cuobjdump", "nvdisasm"):
                p = find_tool(t)
                print(f"{t}: {p} ({tool_version(p)})")
    except ToolError as e:
        print(f"sass.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
