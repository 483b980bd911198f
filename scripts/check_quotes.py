#!/usr/bin/env python3
"""Checks that the code the book quotes is the code in the repository. A fenced block whose first line
names a source file,

    ```cuda
    // kernels/11_wgmma_tma.cu
    ptx::mbarrier_arrive_expect_tx(&full, STAGE_BYTES);
    // ...
    ptx::tma_load_2d(sA, &tmap_a, kt * BK, m0, &full);
    ```

must hold, after that line, lines that appear in that file in the same order, each run of lines
between `// ...` elisions as consecutive lines of the file (leading and trailing spaces ignored, so a
quote may be re-indented). Blocks without such a first line are not checked. Covers README.md,
docs/*.md, docs/notebook/*.md and sass_annotations/*.md. Prints one line per quote that is not in its
file and exits 1 if there is any.

Usage: scripts/check_quotes.py [--root DIR] [FILE.md ...]"""
import argparse
import pathlib
import re
import sys

import docs_walk

FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
NAMES = re.compile(r"^\s*//\s*((?:kernels|common|tests|scripts|fuzz)/[\w./-]+\.(?:cu|cuh|hpp|cpp|h|py))\s*$")
ELISION = re.compile(r"^\s*(//|#)\s*(\.\.\.|…)\s*$")


def blocks(md):
    """(line number of the fence, [lines]) of every fenced block of `md`."""
    lines = md.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start, body = m.group(2), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        yield start, body
        i += 1


def segments(body):
    """The quoted lines split at elisions, each stripped; empty segments dropped."""
    out, cur = [], []
    for line in body:
        if ELISION.match(line):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(line.strip())
    if cur:
        out.append(cur)
    return [[l for l in seg] for seg in out if any(seg)]


def find(source, seg, start):
    """The index of the first line at or after `start` where `seg` begins as consecutive lines, or -1.
    Blank quoted lines match blank source lines."""
    n = len(seg)
    for i in range(start, len(source) - n + 1):
        if all(source[i + j] == seg[j] for j in range(n)):
            return i
    return -1


def check(md, root):
    bad = []
    for start, body in blocks(md):
        if not body:
            continue
        m = NAMES.match(body[0])
        if not m:
            continue
        src = root / m.group(1)
        where = f"{docs_walk.where(md, root)}:{start}"
        if not src.exists():
            bad.append(f"{where}: quotes {m.group(1)}, which does not exist")
            continue
        source = [l.strip() for l in src.read_text().splitlines()]
        pos = 0
        for seg in segments(body[1:]):
            i = find(source, seg, pos)
            if i < 0:
                first = next((l for l in seg if l), "")
                bad.append(f"{where}: not in {m.group(1)} (in this order, consecutive): {first[:80]}")
                break
            pos = i + len(seg)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    files = [pathlib.Path(f) for f in args.files] or docs_walk.markdown(root)
    bad, quotes = [], 0
    for md in files:
        quotes += sum(1 for _, body in blocks(md) if body and NAMES.match(body[0]))
        bad += check(md, root)
    for b in bad:
        print(b)
    print(f"code quotes: {quotes} checked in {len(files)} files, {len(bad)} not in their source")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
