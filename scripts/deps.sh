#!/usr/bin/env bash
# Checks (and on Debian, as root, installs) what building the series needs besides the CUDA Toolkit:
#   Catch2 (v2, header-only; Debian package catch2), fmt (libfmt-dev, used header-only),
#   CLI11 (libcli11-dev, header-only command-line parser).
# Usage: scripts/deps.sh            check, install what is missing when possible, else say what to run
#        scripts/deps.sh --check    only check (exit 1 and print the install command when missing)
set -euo pipefail
check_only=0
[ "${1:-}" = "--check" ] && check_only=1

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "error: nvcc not found at $CUDA_HOME/bin/nvcc: install the CUDA Toolkit (12.4 or newer, with cuBLAS and cuRAND) or set CUDA_HOME" >&2
  exit 1
fi

declare -A header_of=([catch2]=/usr/include/catch2/catch.hpp [libfmt-dev]=/usr/include/fmt/core.h [libcli11-dev]=/usr/include/CLI/CLI.hpp)
missing=()
for pkg in "${!header_of[@]}"; do
  [ -f "${header_of[$pkg]}" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y ${missing[*]}"
if [ $check_only -eq 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "installing ${missing[*]} (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "error: missing ${missing[*]}; install them with: sudo $cmd" >&2
exit 1
