"""Just enough Markdown for the walkthroughs of sass_annotations/NN_*.md on the HTML pages: headings,
paragraphs, lists, tables, fenced code and the inline `code`, **bold**, *emphasis* and [links](url).
Everything is escaped first; a link that leaves the page (http...) is shown as text, never fetched."""
from __future__ import annotations

import html
import re


def inline(text):
    out, pos = [], 0
    for m in re.finditer(r"``(.+?)``|`([^`]+)`", text):
        out.append(_spans(text[pos:m.start()]))
        out.append(f"<code>{html.escape(m.group(1) or m.group(2))}</code>")
        pos = m.end()
    out.append(_spans(text[pos:]))
    return "".join(out)


def _spans(text):
    t = html.escape(text, quote=False)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    t = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<i>\1</i>", t)
    # Links: relative ones keep their text only (the page is read away from the repository).
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1", t)


def _table(rows):
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    head, body = cells[0], [r for r in cells[2:]]
    out = ["<table class=md><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body]
    return "".join(out) + "</table>"


def render(md):
    """HTML of a Markdown fragment."""
    lines, out, i = md.splitlines(), [], 0
    para = []

    def flush():
        if para:
            out.append("<p>" + inline(" ".join(para)) + "</p>")
            para.clear()
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("```"):
            flush()
            lang, code = s[3:].strip(), []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            out.append(f"<pre class='md {html.escape(lang)}'>" + html.escape("\n".join(code)) + "</pre>")
        elif re.match(r"#{1,6} ", s):
            flush()
            level = min(len(s) - len(s.lstrip("#")) + 2, 6)
            out.append(f"<h{level}>{inline(s.lstrip('#').strip())}</h{level}>")
        elif s.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip()):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out.append(_table(rows))
            continue
        elif re.match(r"([-*]|\d+\.) ", s):
            flush()
            items = []
            while i < len(lines) and lines[i].strip():
                t = lines[i].strip()
                if re.match(r"([-*]|\d+\.) ", t):
                    items.append(re.sub(r"^([-*]|\d+\.) ", "", t))
                elif items:
                    items[-1] += " " + t
                i += 1
            out.append("<ul>" + "".join(f"<li>{inline(t)}</li>" for t in items) + "</ul>")
            continue
        elif not s:
            flush()
        else:
            para.append(s)
        i += 1
    flush()
    return "\n".join(out)
