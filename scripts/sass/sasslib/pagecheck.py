"""`html-check`: the structure of generated pages, read back with html.parser (run by make test):
every source line with SASS and every instruction tied to a source line carry matching data-line
attributes on both sides, every note quotes some instruction, nothing is fetched from outside the page,
and an index links every step's page."""
from __future__ import annotations

import glob
import os
import re
from html.parser import HTMLParser

from .tools import REPO

URL_ATTRS = ("href", "src", "action", "poster", "data", "srcset", "formaction", "background")


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []              # (tag, attrs) of the open elements that matter
        self.src_rows = {}           # line -> set of kernel ids (source side)
        self.sass_rows = set()       # (kernel, line) (SASS side)
        self.notes = {}              # (kernel, note id) -> number of quoting rows
        self.note_rows = set()       # (kernel, note id)
        self.kernels = set()
        self.tabs = set()
        self.links = []
        self.external = []
        self.scripts = 0
        self.in_style = False
        self.styles = []
        self.badges = 0

    def _in(self, key, value=None):
        for tag, attrs in reversed(self.stack):
            if key in attrs and (value is None or attrs[key] == value):
                return attrs[key]
        return None

    def handle_starttag(self, tag, attrs_list):
        attrs = {k: (v or "") for k, v in attrs_list}
        for k, v in attrs.items():
            if k in URL_ATTRS and (re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", v, re.I) and not v.startswith("#")):
                self.external.append(f"<{tag} {k}={v!r}>")
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag == "script":
            self.scripts += 1
            if "src" in attrs:
                self.external.append(f"<script src={attrs['src']!r}>")
        if tag == "link":
            self.external.append(f"<link {attrs}>")
        if tag == "style":
            self.in_style = True
        if tag == "button" and "data-k" in attrs:
            self.tabs.add(attrs["data-k"])
        if tag == "span" and "badge" in attrs.get("class", ""):
            self.badges += 1
        if tag == "table" and "data-kernel" in attrs:
            self.kernels.add(attrs["data-kernel"])
        if tag == "tr":
            kernel = self._in("data-kernel")
            in_src = self._in("id", "src") is not None
            if "data-line" in attrs:
                if in_src:
                    self.src_rows[attrs["data-line"]] = set(attrs.get("data-kernels", "").split())
                elif kernel is not None:
                    self.sass_rows.add((kernel, attrs["data-line"]))
            if kernel is not None and "class" in attrs and attrs["class"] == "note":
                self.note_rows.add((kernel, attrs.get("data-note")))
            if kernel is not None and "data-notes" in attrs:
                for n in attrs["data-notes"].split():
                    self.notes[(kernel, n)] = self.notes.get((kernel, n), 0) + 1
        if tag not in ("br", "img", "meta", "input", "link", "hr", "col"):
            self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self.in_style:
            self.styles.append(data)


def check_page(path):
    """(problems, summary) of one page."""
    p = PageParser()
    p.feed(open(path, encoding="utf-8").read())
    p.close()
    problems = [f"{path}: fetches from outside the page: {e}" for e in p.external]
    style = "".join(p.styles)
    if re.search(r"@import|url\(", style):
        problems.append(f"{path}: the stylesheet imports or loads a URL")
    name = os.path.basename(path)
    if name == "index.html":
        steps = sorted(os.path.basename(k)[:-3] for k in glob.glob(os.path.join(REPO, "kernels", "*.cu")))
        for s in steps:
            if s + ".html" not in p.links:
                problems.append(f"{path}: no link to step {s} ({s}.html)")
        for link in p.links:
            if not os.path.exists(os.path.join(os.path.dirname(path), link.split("#")[0])):
                problems.append(f"{path}: link to a missing page {link}")
        return problems, f"{len(p.links)} links, {len(steps)} steps"
    if name.startswith("diff_"):
        return problems, "diff page"
    for line, ks in p.src_rows.items():
        if not ks:
            problems.append(f"{path}: source line {line} has data-line but no data-kernels")
        for k in ks:
            if (k, line) not in p.sass_rows:
                problems.append(f"{path}: source line {line} claims SASS in kernel {k}, which has no row data-line={line}")
    for k, line in sorted(p.sass_rows):
        if k not in p.src_rows.get(line, set()):
            problems.append(f"{path}: kernel {k} has SASS for line {line}, the source side has no matching data-line")
    if p.kernels != p.tabs:
        problems.append(f"{path}: kernel tables {sorted(p.kernels)} and tabs {sorted(p.tabs)} differ")
    for kn in sorted(p.note_rows):
        if not p.notes.get(kn):
            problems.append(f"{path}: note {kn[1]} of kernel {kn[0]} quotes no instruction")
    if p.kernels and not p.scripts:
        problems.append(f"{path}: no script")
    return problems, (f"{len(p.src_rows)} source lines with SASS, {len(p.sass_rows)} (kernel, line) pairs, "
                      f"{len(p.kernels)} kernel(s), {len(p.note_rows)} note(s), {p.badges} rule badge(s)")


def cmd_html_check(args):
    total = 0
    for f in args.files:
        problems, summary = check_page(f)
        total += len(problems)
        for pr in problems:
            print("PROBLEM", pr)
        print(f"{'OK' if not problems else 'BAD'} {f}: {summary}")
    print(f"html-check: {total} problem(s)")
    return 1 if total else 0
