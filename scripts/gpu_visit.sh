#!/usr/bin/env bash
# One visit to a GPU machine: everything is already built here (carry build/), nothing is compiled.
#   scripts/gpu_visit.sh [tests] [fuzz] [bench] [sanitizer] [quick]   (default: tests fuzz sanitizer bench)
# Logs and CSVs go to $OUT (or gpu_out/); the last lines printed are a short summary table.
# Exit status: 0 when every part run passed, 1 when tests, fuzz, sanitizer or bench failed.
# Never touches clocks, power or the GPU's settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(tests fuzz sanitizer bench)
has() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
summary=()
failed_parts=()

if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
    --format=csv > "$OUT/gpu.txt" 2>&1
else
  echo "no nvidia-smi on PATH: no GPU driver here" > "$OUT/gpu.txt"
fi
cat "$OUT/gpu.txt"

if has tests; then
  build/bin/tests > "$OUT/tests.log" 2>&1
  rc=$?
  grep -E "^(skipped|.*FAILED|.*failed)" "$OUT/tests.log" | head -20
  [ $rc -ne 0 ] && failed_parts+=("tests")
  summary+=("tests (rc=$rc): $(tail -n 1 "$OUT/tests.log")")
fi

if has sanitizer; then
  # compute-sanitizer memcheck, racecheck, initcheck and synccheck on small ragged shapes of every
  # step, and the proof that racecheck and memcheck catch the broken fixtures: scripts/sanitize.sh.
  OUT="$OUT" scripts/sanitize.sh --build build > "$OUT/sanitizer.log" 2>&1
  rc=$?
  grep -E "FAIL|NOT reported|error" "$OUT/sanitizer.log" | head -20
  [ $rc -ne 0 ] && failed_parts+=("sanitizer")
  summary+=("sanitizer (rc=$rc): $(tail -n 1 "$OUT/sanitizer.log")")
fi

if has fuzz; then
  # Every step on FUZZ_COUNT (default 3000) random seeded shapes against cuBLAS; failures print the
  # command that reproduces them.
  build/bin/fuzz --seed "${FUZZ_SEED:-1}" --count "${FUZZ_COUNT:-3000}" > "$OUT/fuzz.log" 2>&1
  rc=$?
  grep -E "^(FAIL|WATCHDOG|  reproduce|  or:)|: (PASS|FAIL) " "$OUT/fuzz.log" | head -40
  [ $rc -ne 0 ] && failed_parts+=("fuzz")
  summary+=("fuzz (rc=$rc): $(tail -n 1 "$OUT/fuzz.log")")
fi

if has bench; then
  python3 scripts/bench.py --out "$OUT" > "$OUT/bench.log" 2>&1
  rc=$?
  python3 scripts/plot_steps.py "$OUT"/*.csv --out "$OUT/steps.png" >> "$OUT/bench.log" 2>&1
  [ $rc -ne 0 ] && failed_parts+=("bench")
  summary+=("bench rc=$rc")
  sed -n '/^GPU:/,$p' "$OUT/bench.log"
fi

if has quick; then
  # Every step once at 4096^3 (check, then timing), one line each; a step that exits non-zero fails the part.
  : > "$OUT/quick.log"
  quick_failed=0
  for b in build/bin/[0-9]*; do
    "$b" --m 4096 --n 4096 --k 4096 > "$OUT/quick_one.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && quick_failed=$((quick_failed + 1))
    echo "$(basename "$b") (rc=$rc): $(tail -n 1 "$OUT/quick_one.log")" | tee -a "$OUT/quick.log"
  done
  rm -f "$OUT/quick_one.log"
  [ $quick_failed -gt 0 ] && failed_parts+=("quick")
  summary+=("quick: $quick_failed step(s) failed")
fi

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
if [ ${#failed_parts[@]} -gt 0 ]; then
  echo "gpu_visit: FAILED: ${failed_parts[*]}"
  exit 1
fi
echo "gpu_visit: all parts passed"
