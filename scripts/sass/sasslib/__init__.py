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
  cli        the command line
"""
