"""The project's Markdown as the docs checkers walk it (scripts/check_links.py, check_numbers.py,
check_quotes.py): the front page, the book with its notebook, and the SASS walkthroughs.

  markdown(root)      README.md (where there is one), the book and the walkthroughs, sorted
  book(root)          docs/*.md and docs/notebook/*.md, sorted
  walkthroughs(root)  sass_annotations/*.md, sorted
  where(md, root)     md as messages name it: relative to root, or as given when it lies outside
"""
import pathlib


def book(root):
    return sorted(list((root / "docs").glob("*.md")) + list((root / "docs").glob("notebook/*.md")))


def walkthroughs(root):
    return sorted((root / "sass_annotations").glob("*.md"))


def markdown(root):
    return sorted([p for p in [root / "README.md"] if p.exists()] + book(root) + walkthroughs(root))


def where(md, root):
    md = pathlib.Path(md)
    return md.relative_to(root) if md.is_relative_to(root) else md
