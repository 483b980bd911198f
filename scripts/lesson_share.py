#!/usr/bin/env python3
"""How much of a chapter is lesson and how much is log (issue 49: at least 85 % lesson).

Counted: the non-blank lines outside code fences (``` or ~~~) and outside generated blocks (from
`<!-- name -->`, `<!-- name:begin|table -->` to `<!-- /name -->` or `<!-- name:end -->`, markers
included: scripts write those). Headings, table rows, list items and captions count like prose.

Log, by one rule: the text is cut into blocks (a paragraph, a list item with its indented lines, a
table row, a heading) and blocks into sentences (split after . ! or ? before a capital, a bracket,
`*`, a backquote or "cuBLAS"). A sentence that matches PROVENANCE (an exit status `rc=`, a test or
fuzz summary, a sanitizer report, a GPU "visit" or the machine "lent" to it, a re-run or "measured
again", a first run/build/version/try, an old or earlier build, "the same machine/call") makes every
line it touches a log line; so does a block that opens with **Run log.**, **Provenance.**,
**Checks.** or **History.**. Dates are not log (a measurement names its GPU and date). The rule reads
words, not meaning: provenance without these words counts as lesson (the share is an upper bound).

Usage: scripts/lesson_share.py [--show] FILE.md ...   (--show: print each log line)"""
import argparse
import re

PROVENANCE = [r"\brc=\d", r"\b\d+ passed, \d+ failed", r"\bsanitiz(er|ers|e)\b", r"\b\d+ fuzzed\b",
              r"\bfuzz --", r"\bvisit\b", r"\blent\b", r"\bre-?run\b", r"\bre-?measured\b",
              r"\bmeasured again\b", r"\bfirst (run|runs|measured|passed|build|version|try)\b",
              r"\b(old|older|earlier) (build|version)\b", r"\bsame (machine|call)\b"]
LOG = re.compile("|".join(PROVENANCE), re.I)
MARKER = re.compile(r"^\*\*(Run log|Provenance|Checks|History)\.\*\*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[*`]|cuBLAS)")
OPEN = re.compile(r"^<!--\s*([\w-]+)(:begin|:table)?\s*-->$")
NEW_BLOCK = re.compile(r"^(\||#|[-*] |\d+\. |!\[|\*Figure)")


def counted_lines(text):
    """(line number, text) per line; None for a blank, fenced or generated line (a block's end)."""
    lines, out, i, fence = text.splitlines(), [], 0, False
    while i < len(lines):
        s = lines[i].strip()
        fence ^= bool(re.match(r"^(```|~~~)", s))
        if not fence and OPEN.match(s):
            name = re.escape(OPEN.match(s).group(1))
            close = re.compile(rf"^<!--\s*(/{name}|{name}:end)\s*-->$")
            i = next((j for j in range(i + 1, len(lines)) if close.match(lines[j].strip())), i)
        counted = s and not fence and not s.startswith(("<!--", "```", "~~~"))
        out.append((i + 1, lines[i]) if counted else None)
        i += 1
    return out


def blocks(lines):
    block = []
    for item in lines + [None]:
        if block and (item is None or NEW_BLOCK.match(item[1])):
            yield block
            block = []
        block += [item] if item else []


def log_lines(lines):
    log = set()
    for block in blocks(lines):
        text, spans = "", []
        for n, line in block:
            spans.append((len(text), len(text) + len(line.strip()) + 1, n))
            text += line.strip() + " "
        cuts = [0] + [m.end() for m in SENTENCE_END.finditer(text)] + [len(text)]
        cuts = [0, len(text)] if MARKER.match(text) else cuts  # a marked block is one log sentence
        for start, end in zip(cuts, cuts[1:]):
            if MARKER.match(text) or LOG.search(text[start:end]):
                log.update(n for a, b, n in spans if a < end and b > start)
    return log


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        lines = counted_lines(open(path, encoding="utf-8").read())
        counted, log = [c for c in lines if c], log_lines(lines)
        share = 1 - len(log) / len(counted) if counted else 1.0
        print(f"{path}: {len(counted)} lines counted, {len(log)} log, lesson share {100 * share:.1f} %")
        for n, line in (c for c in counted if args.show and c[0] in log):
            print(f"  {n}: {line.strip()}")


if __name__ == "__main__":
    main()
