#!/usr/bin/env bash
# What `make docs` needs besides the CUDA Toolkit (which builds its host tools; no GPU): matplotlib
# for the python3 on PATH.
#   scripts/docs_deps.sh            check; install it when that can be done safely, else say how
#   scripts/docs_deps.sh --check    only check (exit 1 and print how to install it when missing)
# Installs only on Debian, as root, when python3 is the system one (/usr/bin/python3): the Debian
# package python3-matplotlib. Otherwise it prints the command that fits this python3: Debian's
# system Python refuses `pip install` (PEP 668, "externally managed"), so there it names
# `apt-get install python3-matplotlib` or a virtual environment; elsewhere `python3 -m pip install`.
# Exit 0: matplotlib imports; 1: missing (with the advice on stderr).
set -uo pipefail
check_only=0
[ "${1:-}" = "--check" ] && check_only=1
PY=${PYTHON3:-python3}

"$PY" -c 'import matplotlib' 2>/dev/null && exit 0

py_path=$(command -v "$PY" || echo "$PY")
real_py=$(readlink -f "$py_path" 2>/dev/null || echo "$py_path")
managed=$("$PY" -c 'import os, sysconfig; print(int(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))' 2>/dev/null || echo 0)
debian=0
[ -f /etc/debian_version ] && command -v apt-get >/dev/null && debian=1
system_py=0
case "$py_path" in /usr/bin/python3*) system_py=1 ;; esac

if [ $check_only -eq 0 ] && [ $debian -eq 1 ] && [ $system_py -eq 1 ] && [ "$(id -u)" = 0 ]; then
  echo "installing python3-matplotlib (Debian package) for $py_path"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq python3-matplotlib >/dev/null && "$PY" -c 'import matplotlib'; then
    exit 0
  fi
  echo "error: apt-get install python3-matplotlib did not make matplotlib importable for $py_path" >&2
  exit 1
fi

{
  echo "error: make docs needs matplotlib, which $py_path ($real_py) cannot import. Install it with:"
  if [ "$managed" = 1 ] || { [ $debian -eq 1 ] && [ $system_py -eq 1 ]; }; then
    if [ $debian -eq 1 ] && [ $system_py -eq 1 ]; then
      echo "  sudo apt-get install -y python3-matplotlib        # Debian/Ubuntu: this python3 is the system one"
    fi
    echo "  or a virtual environment (this python3 refuses pip install: PEP 668, externally managed):"
    echo "    python3 -m venv ~/.venvs/matmul && ~/.venvs/matmul/bin/pip install matplotlib"
    echo "    PATH=~/.venvs/matmul/bin:\$PATH make docs          # (Debian needs python3-venv for the venv)"
  else
    echo "  $PY -m pip install matplotlib"
  fi
} >&2
exit 1
