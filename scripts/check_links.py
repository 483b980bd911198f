#!/usr/bin/env python3
"""Checks the links and images of the project's Markdown: every relative [text](target) and
![alt](image) in README.md, docs/*.md and sass_annotations/*.md must name a file or directory that
exists (relative to the Markdown file), and a #fragment must match a heading of the target file
(GitHub's anchor rule: lower case, punctuation dropped, spaces to hyphens). External links (http,
https, mailto) are not fetched. A file reference written as inline code, `docs/img/sweep.png`, that
names a file or directory of the repository (tracked by git; without git, one that exists under the
root outside build/) must be a link instead. Prints one line per broken link or unlinked reference
and exits 1 if there is any.

Usage: scripts/check_links.py [--root DIR] [FILE.md ...]"""
import argparse
import pathlib
import re
import subprocess
import sys

import docs_walk

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
# Inline code that looks like a path (has a slash, no spaces) and is not the text of a link.
CODE_PATH = re.compile(r"(?<!\[)`([A-Za-z0-9_.][^`\s]*/[^`\s]*)`(?!\]\()")


def repo_paths(root):
    """The repository's files and directories, relative to root: git's tracked files where root is a
    work tree, else what exists under root outside build/ (None: ask the file system)."""
    r = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout:
        return None
    paths = set()
    for f in r.stdout.split():
        p = pathlib.PurePosixPath(f)
        paths.add(str(p))
        paths.update(str(d) for d in p.parents if str(d) != ".")
    return paths


def is_repo_path(root, known, text):
    if any(c in text for c in "*<>{}"):
        return False
    rel = text.rstrip("/")
    if known is not None:
        return rel in known
    return not rel.startswith("build/") and (root / rel).exists()


def prose_lines(md):
    """(line number, line) of every line of `md` outside fenced code blocks."""
    in_code = False
    for no, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            in_code = not in_code
        elif not in_code:
            yield no, line


def code_paths(md):
    for no, line in prose_lines(md):
        for m in CODE_PATH.finditer(line):
            yield no, m.group(1)


def heading_slug(heading):
    """The anchor GitHub gives a heading's text (before the -1, -2 of repeats)."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda x: x.group(1) or "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text, flags=re.UNICODE).replace(" ", "-")


def anchors(md):
    out = set()
    seen = {}
    for _, line in prose_lines(md):
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if not m:
            continue
        slug = heading_slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(md):
    for no, line in prose_lines(md):
        stripped = re.sub(r"`[^`]*`", "", line)  # a link inside inline code is text, not a link
        for m in LINK.finditer(stripped):
            yield no, m.group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    files = [pathlib.Path(f) for f in args.files] or docs_walk.markdown(root)
    bad = checked = 0
    known = repo_paths(root)
    for md in files:
        if not md.exists():
            print(f"{md}: no such file")
            bad += 1
            continue
        for no, target in links(md):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            path, _, frag = target.partition("#")
            dest = md if not path else (md.parent / path)
            if not dest.exists():
                print(f"{docs_walk.where(md, root)}:{no}: broken link {target}")
                bad += 1
            elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                print(f"{docs_walk.where(md, root)}:{no}: no heading #{frag} in {dest.name}")
                bad += 1
        for no, text in code_paths(md):
            if is_repo_path(root, known, text):
                print(f"{docs_walk.where(md, root)}:{no}: `{text}` names a file of the "
                      f"repository: make it a link")
                bad += 1
    print(f"links: {checked} checked in {len(files)} files, {bad} broken")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
