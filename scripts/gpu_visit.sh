#!/usr/bin/env bash
# One visit to a GPU machine: everything is already built here (carry build/), nothing is compiled.
#   scripts/gpu_visit.sh [tests] [bench] [sanitizer] [quick]   (default: tests bench sanitizer)
# Logs and CSVs go to $OUT (or gpu_out/); the last lines printed are a short summary table.
# Never touches clocks, power or the GPU's settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(tests bench sanitizer)
has() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
summary=()

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

if has tests; then
  build/bin/tests > "$OUT/tests.log" 2>&1
  rc=$?
  grep -E "^(skipped|.*FAILED|.*failed)" "$OUT/tests.log" | head -20
  summary+=("tests (rc=$rc): $(tail -n 1 "$OUT/tests.log")")
fi

if has sanitizer; then
  # memcheck, racecheck and synccheck on a small ragged shape of every step: out-of-bounds accesses and
  # shared-memory races that a lucky comparison could miss.
  # 67 x 92 x 48: M ragged for every tile; N and K multiples of 4 and K of 8 (the vector and TMA
  # steps' row-alignment requirements), so no step refuses it. Every block of it is an edge block,
  # so the fp32 steps 04-09b also run 264 x 520 x 56: two whole 128 x 256 blocks in each direction
  # plus a ragged one, and 3 whole K tiles of 16 plus a tail, which takes steps 09 and 09b's unpredicated
  # interior copy path as well as its zero-filling one.
  # Stops starting new runs after SANITIZER_BUDGET_S seconds (default 240) and says how far it got.
  : > "$OUT/sanitizer.log"
  san_fail=0 san_runs=0 san_start=$SECONDS
  runs=()
  for b in build/bin/[0-9]*; do runs+=("$b:67:92:48"); done
  for b in build/bin/0[4-9]*_*; do runs+=("$b:264:520:56"); done
  # Step 09b's stream-K kernel and its fixup run only where the tiles make more than one wave:
  # 900 x 4868 x 72 is 8 x 20 = 160 tiles of 128 x 256, on 132 SMs one wave plus 28, so all 160
  # go to stream-K (5 K tiles each, the last a tail): 132 blocks of 6 or 7 K tiles, most tiles split
  # between two blocks.
  for b in build/bin/09b_*; do runs+=("$b:900:4868:72"); done
  # The persistent steps (15 on) loop over tiles with their ring of stages carried across tiles:
  # 1500 x 4100 x 136 is 12 x 17 = 204 tiles of 128 x 256 (72 blocks of 132 take a second tile) and 3 K
  # tiles each (the last a tail of 8), so a two-tile block wraps its 4-stage ring inside its second tile.
  for b in build/bin/1[5-9]_*; do runs+=("$b:1500:4100:136"); done
  for tool in memcheck racecheck synccheck; do
    for run in "${runs[@]}"; do
      IFS=: read -r b m n k <<< "$run"
      if [ $((SECONDS - san_start)) -gt "${SANITIZER_BUDGET_S:-240}" ]; then
        echo "sanitizer: time budget spent before $tool on $b ${m}x${n}x${k}" | tee -a "$OUT/sanitizer.log"
        break 2
      fi
      san_runs=$((san_runs + 1))
      echo "== $tool $b ${m}x${n}x${k}" >> "$OUT/sanitizer.log"
      compute-sanitizer --tool $tool --error-exitcode 99 "$b" --m "$m" --n "$n" --k "$k" --check-only \
        >> "$OUT/sanitizer.log" 2>&1 || { san_fail=$((san_fail + 1)); echo "sanitizer $tool FAILED on $b ${m}x${n}x${k}"; }
    done
  done
  summary+=("compute-sanitizer (memcheck, racecheck, synccheck), 67x92x48, (04-09b) 264x520x56, (09b) 900x4868x72, (15 on) 1500x4100x136: $san_runs runs, $san_fail failures")
fi

if has bench; then
  python3 scripts/bench.py --out "$OUT" > "$OUT/bench.log" 2>&1
  rc=$?
  python3 scripts/plot_steps.py "$OUT"/*.csv --out "$OUT/steps.png" >> "$OUT/bench.log" 2>&1
  summary+=("bench rc=$rc")
  sed -n '/^GPU:/,$p' "$OUT/bench.log"
fi

if has quick; then
  for b in build/bin/[0-9]*; do "$b" --m 4096 --n 4096 --k 4096 2>&1 | tail -n 1; done | tee "$OUT/quick.log"
fi

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
