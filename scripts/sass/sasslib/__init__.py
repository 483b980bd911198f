"""The PTX/SASS tooling behind scripts/sass/sass.py, one module per job:

  tools      finding and running cuobjdump / nvdisasm
  units      steps and SASS twins, kernel names
  listing    ELF sections, nvdisasm parsing, the clean SASS form and its loops, per-entry PTX
  dump       `dump`: raw and clean SASS, the source-interleaved view, PTX
  diff       the instruction mix and `diff`
  consts     the integer constants of a step's source (`count` and `launch` expressions)
  checks     ptxas reports, expectations (`check`) and quote freshness (`fresh`)
  resources  docs/resources.md
  selftest   the parsers and rules on hand-made input
  page       `html`: the per-step pages (source beside SASS), the diff page, the index
  page_assets the pages' inlined stylesheet and script
  markdown   the little Markdown the walkthrough notes need
  pagecheck  `html-check`: the pages' structure, read back with html.parser
  browser    `html-browser-check` / `html-screenshot`: headless Chromium
  cli        the command line
"""
