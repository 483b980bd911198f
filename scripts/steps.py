#!/usr/bin/env python3
"""The steps as the scripts see them: kernels/steps.json, the registry's own dump (every kernels/NN_name.cu's
`gemm::register_step({...})` as build/bin/registry_json prints it; `make steps-json` rewrites it and `make
test` fails while it is stale), the tree its parent fields make, and the one table of roles the benchmark
and the sanitizers give some steps (scripts/step_roles.tsv). Every script that needs a list of steps asks
here instead of spelling step numbers or reading the C++; the Makefile asks here which steps build for
sm_90a, before anything is built.

  scripts/steps.py list                  id, parent, dtype, Hopper, persistent, workspace, roles (TSV)
  scripts/steps.py tree                  the step tree, one step a line
  scripts/steps.py parent ID             the parent's id (empty for a root); exit 2 for no such step
  scripts/steps.py role ROLE             the ids with that role in scripts/step_roles.tsv
  scripts/steps.py hopper                the ids built for sm_90a (required_cc 90)
  scripts/steps.py ladder DTYPE          the ids of one ladder (fp32, bf16, fp8) in step order
  scripts/steps.py files [--hopper]      the steps' sources, kernels/NN_name.cu (only the sm_90a ones)
  scripts/steps.py sanitize-shapes NAME  the M:N:K shapes scripts/sanitize.sh runs for step executable NAME
  scripts/steps.py initcheck-shapes NAME the (smaller) shapes it runs initcheck at
  scripts/steps.py readme [--check]      rewrite (or check) the README's step tree between its markers
  scripts/steps.py chapters [--check]    each step chapter of the book and its steps; --check: its title and
                                         its entry in the book's index (docs/README.md) name that range
"""
import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEPS_JSON = pathlib.Path("kernels") / "steps.json"
ROLES_FILE = ROOT / "scripts" / "step_roles.tsv"
ROLES = {"bench-also": "sustained and stability runs in make bench, beside the last step of each ladder",
         "sweep-also": "swept by make bench-sweep, beside the last step of each ladder",
         "shapes-also": "run by make bench-shapes (issue 30's shapes), beside the last bf16 step",
         "power": "drawn in the power figure beside the last bf16 step",
         "waves-figure": "its results/<gpu>_waves_<id>.csv is drawn in docs/img/waves.png"}
CAPS = ("stream_k", "swap_ab", "tile_menu", "split_k", "swap_sized", "pad_pitch", "measured")  # gemm::Capabilities
README_BEGIN, README_END = "<!-- steps:begin -->", "<!-- steps:end -->"
# The book's step chapters: (file, ladder, first step, last step). A last step of None is the ladder's
# last, so a new step at the end of a ladder lengthens its chapter, and `chapters --check` (make test)
# fails until the chapter's title and its entry in the index say so.
CHAPTERS = (("docs/fp32_ladder.md", "fp32", "01", None), ("docs/hopper_part1.md", "bf16", "10", "14"),
            ("docs/hopper_part2.md", "bf16", "15", "23"), ("docs/every_shape.md", "bf16", "24", None),
            ("docs/fp8.md", "fp8", "30", None))
BOOK_INDEX = pathlib.Path("docs") / "README.md"


class Step:
    """One step of kernels/steps.json (gemm::Step's fields as common/harness/steps_json.cpp writes them)."""

    def __init__(self, fields):
        self.id = fields["id"]
        self.name = fields["name"]
        self.parent = fields["parent"]
        self.technique = fields["technique"]
        self.dtype = fields["dtype"]  # "fp32", "bf16" or "fp8"
        self.scaling = fields["scaling"]  # "per_tensor" or "block" (meaningful for fp8 only)
        self.accumulation = fields["accumulation"]  # fp8: "tensor_core" or "promoted"; "" for the others
        self.required_cc = fields["required_cc"]
        self.hopper = self.required_cc == 90
        self.persistent = fields["persistent"]
        self.workspace = fields["workspace"]
        self.threads = fields["threads"]
        t = fields["tile"]
        # (BM, BN, BK, STAGES); None: no kernel of ours (00)
        self.tile = (t["bm"], t["bn"], t["bk"], t["stages"]) if self.threads else None
        self.caps = {c: fields["caps"][c] for c in CAPS}
        self.roles, self.shapes = [], []

    @property
    def file(self):
        return f"{self.id}_{self.name}"


def sort_key(sid):
    """'09b' after '09' and before '10'."""
    m = re.match(r"(\d+)([a-z]?)$", sid)
    return (int(m.group(1)), m.group(2)) if m else (1 << 30, sid)


def load(root=ROOT):
    """Every step of root/kernels/steps.json, in step order, with its roles from scripts/step_roles.tsv."""
    path = root / STEPS_JSON
    if not (root / "kernels").is_dir():
        sys.exit(f"error: {root}/kernels is not a folder: --root must be the repository")
    try:
        data = json.loads(path.read_text())
        steps = [Step(f) for f in data["steps"]]
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e.strerror} (`git checkout {STEPS_JSON}` restores the committed "
                 "one, which `make steps-json` then rewrites from the registry)")
    except (ValueError, KeyError, TypeError) as e:
        sys.exit(f"error: {path} is not the registry's JSON ({type(e).__name__}: {e}): `git checkout {STEPS_JSON}` "
                 "restores the committed one, which `make steps-json` then rewrites from the registry")
    if not steps:
        sys.exit(f"error: {path} lists no step")
    steps.sort(key=lambda s: sort_key(s.id))
    by_id = {s.id: s for s in steps}
    for s in steps:
        if s.parent and (s.parent not in by_id or sort_key(s.parent) >= sort_key(s.id)):
            sys.exit(f"error: step {s.id}: parent '{s.parent}' is not an earlier registered step")
    roles_file = root / "scripts" / "step_roles.tsv"
    if roles_file.exists():
        try:
            text = roles_file.read_text()
        except (OSError, UnicodeDecodeError) as e:
            sys.exit(f"error: cannot read {roles_file}: {e}")
        seen = set()
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            sid, roles = cols[0].strip(), cols[1].split() if len(cols) > 1 else []
            if sid not in by_id:
                if list((root / "kernels").glob(f"{sid}_*.cu")):  # a new step, not registered in the JSON yet
                    print(f"warning: {roles_file}:{n}: step '{sid}' is not in {STEPS_JSON} yet (make steps-json); "
                          f"its roles wait until it is", file=sys.stderr)
                    continue
                sys.exit(f"error: {roles_file}:{n}: no step '{sid}'")
            if sid in seen:
                sys.exit(f"error: {roles_file}:{n}: a second row for step {sid} (one row a step)")
            seen.add(sid)
            if len(cols) > 3:
                sys.exit(f"error: {roles_file}:{n}: {len(cols)} tab-separated columns; a row is step, roles, shapes")
            bad_shape = next((x for x in (cols[2].split() if len(cols) > 2 else [])
                              if not re.fullmatch(r"[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*", x)), None)
            if bad_shape:
                sys.exit(f"error: {roles_file}:{n}: shape '{bad_shape}' is not M:N:K with positive integers")
            bad = [r for r in roles if r not in ROLES]
            if bad:
                sys.exit(f"error: {roles_file}:{n}: unknown role {bad[0]} (roles: {', '.join(ROLES)})")
            by_id[sid].roles = roles
            by_id[sid].shapes = cols[2].split() if len(cols) > 2 else []
    return steps


def by_id(steps):
    return {s.id: s for s in steps}


def ladder(steps, dtype):
    """The steps of one ladder in step order: "fp32" (without 00, cuBLAS itself, which runs no kernel of
    ours), "bf16" or "fp8"."""
    return [s for s in steps if s.dtype == dtype and s.tile is not None]


def last_of(steps, dtype):
    """The last step (highest id) of a ladder, or None."""
    lad = ladder(steps, dtype)
    return lad[-1] if lad else None


def with_role(steps, role):
    return [s for s in steps if role in s.roles]


def children(steps, sid):
    return [s for s in steps if s.parent == sid]


def subtree_last(steps, s):
    """The highest step id in s's subtree (s included)."""
    kids = children(steps, s.id)
    return max([sort_key(s.id)] + [subtree_last(steps, c) for c in kids])


def tree_rows(steps):
    """(prefix, step) in reading order: the tree as text. Each step's main child, the one of its own
    dtype whose subtree holds the highest id (where the ladder goes on; a child of another dtype only
    where none shares it), continues in the step's own column; its other
    children are side branches, drawn first, one column in ("├─ "), with "│" marking the main line
    passing them."""
    rows = []

    def walk(s, prefix, head):
        rows.append((prefix + head, s))
        kids = children(steps, s.id)
        if not kids:
            return
        main = max(kids, key=lambda c: (c.dtype == s.dtype, subtree_last(steps, c)))
        for c in kids:
            if c is not main:
                walk_branch(c, prefix)
        walk(main, prefix, "")

    def walk_branch(c, prefix):
        # the branch's first step is marked ├─, the rest of the branch hangs under it behind a │
        rows.append((prefix + "├─ ", c))
        kids = children(steps, c.id)
        if kids:
            main = max(kids, key=lambda k: (k.dtype == c.dtype, subtree_last(steps, k)))
            for k in kids:
                if k is not main:
                    walk_branch(k, prefix + "│  ")
            walk(main, prefix + "│  ", "")

    for r in [s for s in steps if not s.parent]:
        walk(r, "", "")
    return rows


def initcheck_shapes(steps, name):
    """The shapes initcheck runs a step at (it tracks every byte, so they are small): 67x92x48, and for a
    step with a tile a multi-tile ragged one built from it: 2 BM + 37 rows, 2 BN + 40 columns (a
    multiple of 8: the TMA epilogue's path) and 3 BK + 8 of K (a K tail), so 3 x 3 blocks, the last row
    and column of them partial, and 4 K tiles."""
    sid = name.split("_")[0]
    s = by_id(steps).get(sid)
    shapes = ["67:92:48"]
    if s is not None and s.tile:
        bm, bn, bk = s.tile[:3]
        shapes.append(f"{2 * bm + 37}:{2 * bn + 40}:{3 * bk + 8}")
    return fp8_k(s, shapes)


def fp8_k(s, shapes):
    """An fp8 step's shapes with K rounded up to a multiple of 16 (its TMA row pitch of one-byte
    elements, K % 16 == 0): a K tail of 8 becomes one of 16. Other steps' shapes unchanged."""
    if s is None or s.dtype != "fp8":
        return shapes
    out = []
    for x in shapes:
        m, n, k = x.split(":")
        out.append(f"{m}:{n}:{(int(k) + 15) // 16 * 16}")
    return out


def _prev(steps, s):
    """The step printed just before s in the tree (the id a reader would take for its parent)."""
    rows = tree_rows(steps)
    i = next(i for i, (_, x) in enumerate(rows) if x is s)
    return rows[i - 1][1].id if i > 0 else ""


def sanitize_shapes(steps, name):
    """The shapes compute-sanitizer runs a step at, from what its registration says it does: every step
    67x92x48 (every block an edge block); the fp32 block-tiled steps (a tile of at least 64 x 64)
    264x520x56 (whole interior blocks and ragged ones, K tiles plus a tail); the steps with a stream-K
    workspace and the Hopper steps 1445x2856x72 (more tiles than 132 SMs, ragged last tiles, a K tail);
    the fp32 stream-K step 900x4868x72 (its stream-K kernel and fixup); persistent steps 1500x4100x136
    (blocks take a second tile and wrap their ring); persistent steps with stream-K 1536x3072x2304 (the
    fixup runs); plus the step's own shapes from scripts/step_roles.tsv. An fp8 step's K is rounded up
    to a multiple of 16 (fp8_k)."""
    sid = name.split("_")[0]
    s = by_id(steps).get(sid)
    if s is None:
        return ["67:92:48"]  # not a step (a fixture): the small ragged shape only
    shapes = ["67:92:48"]
    if s.workspace or s.hopper:
        shapes.append("1445:2856:72")
    if s.dtype == "fp32" and s.tile and s.tile[0] >= 64 and s.tile[1] >= 64:
        shapes.append("264:520:56")
    if s.dtype == "fp32" and s.workspace:
        shapes.append("900:4868:72")
    if s.persistent:
        shapes.append("1500:4100:136")
    if s.persistent and s.workspace:
        shapes.append("1536:3072:2304")
    shapes = fp8_k(s, shapes)
    return shapes + [x for x in s.shapes if x not in shapes]


def tree_text(steps):
    """The step tree as lines: each step under its parent (tree_rows), with "(from NN)" where the
    parent is not the line just above."""
    width = max(len(p) + len(s.id) + 1 + len(s.name) for p, s in tree_rows(steps))
    lines = []
    for prefix, s in tree_rows(steps):
        note = f"   (from {s.parent})" if s.parent and s.parent != _prev(steps, s) else ""
        lines.append((f"{prefix}{s.id} {s.name}".ljust(width) + note).rstrip())
    return lines


def readme_block(steps):
    """The README's step tree, as text (tree_text) between its markers."""
    lines = [README_BEGIN,
             "<!-- generated by `python3 scripts/steps.py readme` from the steps' registrations: do not edit by hand -->",
             "```text"]
    lines += tree_text(steps)
    lines += ["```", README_END]
    return "\n".join(lines)


def rewrite_readme(steps, readme, check):
    try:
        text = readme.read_text()
    except OSError as e:
        sys.exit(f"error: cannot read {readme}: {e.strerror}")
    if README_BEGIN not in text or README_END not in text:
        sys.exit(f"error: {readme} has no {README_BEGIN} ... {README_END} markers")
    a, b = text.index(README_BEGIN), text.index(README_END) + len(README_END)
    new = text[:a] + readme_block(steps) + text[b:]
    if check:
        if new != text:
            print(f"{readme}: the step table is not what the registrations say: run `make tables` "
                  "(or `python3 scripts/steps.py readme` for the tree alone)")
            return 1
        print(f"{readme}: step table up to date ({len(steps)} steps)")
        return 0
    if new != text:
        readme.write_text(new)
        print(f"rewrote the step table of {readme} ({len(steps)} steps)")
    return 0


def chapter_ranges(steps):
    """[(chapter file, first id, last id)] of CHAPTERS, the open ends filled from the ladders."""
    out = []
    for path, dtype, first, last in CHAPTERS:
        ids = [s.id for s in ladder(steps, dtype)]
        last = last or (ids[-1] if ids else None)
        if first not in ids or last not in ids or sort_key(first) > sort_key(last):
            sys.exit(f"error: steps.py's CHAPTERS gives {path} the {dtype} steps {first}-{last}, which the {dtype} "
                     f"ladder ({' '.join(ids)}) does not hold")
        out.append((path, first, last))
    return out


def chapter_steps_text(steps, dtype, first, last):
    """How a chapter names its steps: "steps FIRST–LAST" (an en dash), or, where another ladder's steps sit
    between (step 39 after the fp8 steps 30-38), its runs of adjacent steps joined by ", " ("steps 24–29, 39")."""
    order = [s.id for s in steps]
    ids = [s.id for s in ladder(steps, dtype) if sort_key(first) <= sort_key(s.id) <= sort_key(last)]
    runs = []
    for sid in ids:
        if runs and order.index(sid) == order.index(runs[-1][-1]) + 1:
            runs[-1].append(sid)
        else:
            runs.append([sid])
    return "steps " + ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def check_chapters(steps, root):
    """Problems with the chapters' titles and index entries (empty: none). Each must name its steps as
    chapter_steps_text says ("steps FIRST–LAST", an en dash, or its runs where another ladder's steps sit
    between): the title on its first line, the index in the numbered entry that links the chapter."""
    problems = []
    index = (root / BOOK_INDEX).read_text().splitlines()
    dtypes = {path: dtype for path, dtype, _, _ in CHAPTERS}
    for path, first, last in chapter_ranges(steps):
        want = chapter_steps_text(steps, dtypes[path], first, last)
        text = (root / path).read_text().splitlines()
        title = text[0] if text else ""
        if not re.search(rf"\b{re.escape(want)}\b", title):
            problems.append(f"{path}: the title `{title}` does not name the chapter's steps, `{want}`")
        link = f"]({pathlib.Path(path).name})"
        entry = next((i for i, line in enumerate(index) if re.match(r"\d+\. ", line) and link in line), None)
        if entry is None:
            problems.append(f"{BOOK_INDEX}: no numbered entry links {path}")
            continue
        lines = [index[entry]] + [line for line in index[entry + 1:entry + 3] if line.startswith("   ")]
        if not re.search(rf"\b{re.escape(want)}\b", " ".join(lines)):
            problems.append(f"{BOOK_INDEX}:{entry + 1}: the entry of {path} does not name its steps, `{want}`")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(ROOT), help="the repository (default: this script's)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    sub.add_parser("tree")
    sub.add_parser("hopper")
    sub.add_parser("files").add_argument("--hopper", action="store_true", help="only the steps built for sm_90a")
    sub.add_parser("ladder").add_argument("dtype", choices=["fp32", "bf16", "fp8"])
    sub.add_parser("parent").add_argument("id")
    sub.add_parser("role").add_argument("role", choices=sorted(ROLES))
    sub.add_parser("sanitize-shapes").add_argument("name")
    sub.add_parser("initcheck-shapes").add_argument("name")
    r = sub.add_parser("readme")
    r.add_argument("--check", action="store_true", help="exit 1 when the table differs, write nothing")
    r.add_argument("--file", default=None, help="the README (default: README.md of --root)")
    c = sub.add_parser("chapters")
    c.add_argument("--check", action="store_true", help="exit 1 when a title or index entry names other steps")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    steps = load(root)
    if args.cmd == "list":
        print("id\tparent\tname\tdtype\thopper\tpersistent\tworkspace\troles")
        for s in steps:
            print(f"{s.id}\t{s.parent}\t{s.name}\t{s.dtype}\t{int(s.hopper)}\t{int(s.persistent)}\t{int(s.workspace)}\t"
                  f"{' '.join(s.roles)}")
    elif args.cmd == "tree":
        print("\n".join(tree_text(steps)))
    elif args.cmd == "hopper":
        print(" ".join(s.id for s in steps if s.hopper))
    elif args.cmd == "files":
        print(" ".join(f"kernels/{s.file}.cu" for s in steps if s.hopper or not args.hopper))
    elif args.cmd == "ladder":
        print(" ".join(s.id for s in ladder(steps, args.dtype)))
    elif args.cmd == "parent":
        s = by_id(steps).get(args.id)
        if s is None:
            print(f"error: no step '{args.id}' (steps: {' '.join(x.id for x in steps)})", file=sys.stderr)
            return 2
        print(s.parent)
    elif args.cmd == "role":
        print(" ".join(s.id for s in with_role(steps, args.role)))
    elif args.cmd == "sanitize-shapes":
        print("\n".join(sanitize_shapes(steps, args.name)))
    elif args.cmd == "initcheck-shapes":
        print("\n".join(initcheck_shapes(steps, args.name)))
    elif args.cmd == "chapters":
        if not args.check:
            for path, first, last in chapter_ranges(steps):
                print(f"{path}\t{first}\t{last}")
            return 0
        problems = check_chapters(steps, root)
        for msg in problems:
            print(msg)
        if problems:
            print("name each chapter's steps in its title and in its entry of the book's index (and say what the "
                  "new steps teach there)")
            return 1
        print(f"chapters: {len(CHAPTERS)} titles and index entries name their steps")
        return 0
    elif args.cmd == "readme":
        return rewrite_readme(steps, pathlib.Path(args.file) if args.file else root / "README.md", args.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
