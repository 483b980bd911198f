#!/usr/bin/env bash
# One GPU visit in two halves that fit the 10-minute limit of a remote call; nothing is compiled.
#   scripts/gpu_session.sh checks   GPU tests, make fuzz (3000 shapes) and make sanitize, run side by
#                                   side (none of them times anything), then a summary
#   scripts/gpu_session.sh bench    make bench (alone on the GPU: paired, sustained, stability);
#                                   BENCH_ARGS="--stability 0" leaves the stability runs for a second call:
#   scripts/gpu_session.sh stability  BENCH_IN=DIR: the stability runs added to the results in DIR
#                                   (the first call's results/, carried back), for a bench split in two
#   scripts/gpu_session.sh sweep    make bench-sweep, then ncu profiles of the last bf16 step
#   scripts/gpu_session.sh shapes   make bench-shapes (issue 30's shapes: the last bf16 step and the
#                                   shapes-also steps, alone on the GPU) under SHAPES_TIMEOUT_S (default
#                                   540 s); stopped by it, it leaves its finished runs in build/: a second
#                                   call on the same machine with the same RANDOM_SEED and BENCH_ARGS plus
#                                   --resume in BENCH_ARGS goes on from them (the plan's estimate says
#                                   whether one call is enough); RANDOM_SEED=S runs a held-out draw alone
#                                   (bench.py --random-seed S --shapes-set random, unless BENCH_ARGS names
#                                   a set; rows of family random-S) into a copy of this GPU's committed
#                                   results/<gpu>_shapes.csv, so the file carried back keeps its other rows
#   scripts/gpu_session.sh soak     build/bin/soak for SOAK_MINUTES (default 8): the last bf16 steps back
#                                   to back over rotating shapes, every 10th result checked (SOAK_ARGS add)
#   scripts/gpu_session.sh faults   make bench's fault handling on the GPU, on a copy of results/: a short
#                                   bench (FAULT_STEPS, default 22 23, at 4096^3) killed by SIGINT, SIGTERM
#                                   and SIGKILL at random points (the hashes of the copy before and after),
#                                   --resume, a run while another process holds the GPU, a shape past
#                                   device memory
#   scripts/gpu_session.sh roofline ncu's bytes through L1, L2 and DRAM for every step and cuBLAS at
#                                   ROOFLINE_SIZE^3 (default 4096): profile.py --roofline, the data of
#                                   docs/img/roofline.png
#   scripts/gpu_session.sh tiles    the tile menu's measurements: each of TILE_BINS (default: 24 25 and
#                                   the forced-tile builds variant_25_bn64, variant_25_bn128 of make
#                                   tile-variants) at each of TILE_SHAPES (M:N:K ...; default: the shapes
#                                   where the menu changes something, and
#                                   4096^3), paired with cuBLAS alone (--reps 20) -> $OUT/run/tiles.csv
#                                   and a table of milliseconds and x cuBLAS per binary and shape
#   scripts/gpu_session.sh lab      the FP8 accuracy lab (docs/fp8.md): build/bin/lab_fp8_accumulator (the
#                                   tensor core's accumulator width, from crafted sums), then each FP8 step
#                                   of LAB_STEPS (default: the fp8 steps built) at 256 x 256 x K for K of
#                                   LAB_KS (default 256 ... 65536) with cuBLASLt FP8's two modes, 20 rounds:
#                                   the relative RMS errors against the fp64 oracle -> $OUT/run/lab_errors.csv
#   scripts/gpu_session.sh outliers what block scaling buys (docs/fp8.md): the GPU tests of the llm inputs
#                                   ([dist]: the kept inputs, every fp8 step checked on them, cuBLASLt's
#                                   per-row scales), then, if they passed, build/bin/lab_fp8_outliers: the
#                                   error against the fp64 product of the unquantized inputs per scaling (per
#                                   tensor, per row, per row of A and 128 rows of B, 1x128/128x128 blocks) and
#                                   accumulation (steps 30, 31, 34 and cuBLASLt FP8), at 256 x 256 x K for K of
#                                   OUTLIER_KS (default 256,1024,4096,16384,65536) on N(0,1) and llm inputs,
#                                   then on llm inputs at K = 4096 with outliers up to OUTLIER_MAXES (default
#                                   100,10000,100000) -> $OUT/run/outliers.csv (commit it as
#                                   results/<gpu>_fp8_outliers.csv) and its tables; a few minutes in all
#   scripts/gpu_session.sh promote  the accuracy lab's speed-against-error points: step 31 promoting
#                                   every 1, 2 and 4 k32 wgmmas (variant_31_pe1, _pe2 of make
#                                   promote-variants, and 31 itself) and step 30 (never), each at each of
#                                   PROMOTE_SIZES (default 4096 8192), paired with cuBLASLt FP8 (default
#                                   and fast accumulation), 30 rounds -> $OUT/run/promote.csv (the harness's
#                                   rows plus promote_every: 0 = never) and one line per run
#   scripts/gpu_session.sh family   the family's steps (FAMILY_STEPS, default those that launch through
#                                   common/kernel_lib/family/launch.cuh or menu_launch.cuh) in one
#                                   call: the GPU tests of every Hopper and FP8 step ([hopper],[fp8]), fuzz
#                                   (FUZZ_COUNT, default 800 shapes shared by the steps) on all of them and
#                                   the four sanitizers on FAMILY_SANITIZE (default 28 29 33 34: the bf16
#                                   hand rule's and the menu's configurations, the cooperative FP8 ones), side by side under
#                                   CHECKS_TIMEOUT_S (default 540 s here); then, only if they all passed
#                                   and alone on the GPU, every one of them at 4096^3 and 8192^3
#                                   paired with the references (bench.py --steps, 30 rounds, no sustained or
#                                   stability runs; BENCH_ARGS add) under BENCH_TIMEOUT_S (default 300 s)
#   scripts/gpu_session.sh pitch    why a misaligned row pitch costs: ncu (scripts/profile.py, clocks as found)
#                                   of each of PITCH_STEPS (default 28 29) and cuBLAS at each of PITCH_SHAPES
#                                   (M:N:K ...; default 4096^3, K % 16 == 8 at 4104, a 32-byte but not
#                                   128-byte pitch at 4112, and a small-M long-K one), with L2 requests and
#                                   sectors besides the usual columns -> $OUT/run/pitch_<step>_<shape>.md
#   scripts/gpu_session.sh torch    the C API and the Python package with PyTorch (issue 48), no timing of
#                                   the steps: python/tests/torch_gpu.py (every step through gemm_steps
#                                   against torch.matmul, the FP8 steps against the fp64 oracle and
#                                   torch._scaled_mm; ragged and small-M shapes, a non-default stream,
#                                   views with an offset, workspace reuse; TORCH_ARGS add, e.g. --quick)
#                                   under TORCH_TIMEOUT_S (default 480 s), then examples/mlp_block.py
#                                   (MLP_ARGS add); needs build/lib/libgemmsteps.so (make gpu-carry packs it)
#   scripts/gpu_session.sh bench-torch  make bench-torch's run (scripts/bench_torch.py) under
#                                   BENCH_TORCH_TIMEOUT_S (default 570 s; the script keeps 40 s inside it):
#                                   the Python path's per-call cost, then the last bf16 and FP8 steps paired
#                                   with torch.matmul, torch._scaled_mm and torch.compile (max-autotune,
#                                   Triton templates, a fresh Inductor cache) -> $OUT/run/torch.csv (commit
#                                   it as results/<gpu>_torch.csv); BENCH_TORCH_ARGS add (e.g. --quick)
# CHECKS_ONLY=1 makes family, menu and step stop after their checks (two of them can then share one call).
#   scripts/gpu_session.sh menu     the family's menu (family/menu.hpp, issue 46) in one call: the menu's
#                                   GPU tests ([menu]: every entry on shapes from its own tile, split
#                                   shapes ten times the same bits) and fuzz --menu (FUZZ_COUNT, default
#                                   1000 shapes shared by the entries) side by side under CHECKS_TIMEOUT_S
#                                   (default 300 s); then, only if both passed and alone on the GPU,
#                                   scripts/tune.py (TUNE_ARGS add, e.g. "--grid smoke", or on an H200
#                                   "--entries awaiting-h200" (the entries its table lacks; with TUNE_IN, a
#                                   call at a time, and --m-max 2048 for those timed only there); default the whole
#                                   grid, stopping after TUNE_MINUTES, default 4, and resuming from
#                                   $OUT/run/tuning.csv when TUNE_IN names a CSV carried back; MENU_CHECKED=1
#                                   skips the checks where they passed earlier on the same machine)
#   PROFILE_ENTRIES=E1,E2 PROFILE_SHAPES="MxNxK ..." scripts/gpu_session.sh entries
#                                   ncu (clocks as found, one launch: the tuner's check) of each menu entry at
#                                   each shape, through build/bin/tune, beside its paired ratio over cuBLAS
#                                   (PROFILE_ROUNDS, default 5): time, DRAM bytes, L2 requests, sectors and
#                                   write sectors, tensor pipe -> $OUT/run/entries.md and entries_tune.csv;
#                                   PROFILE_STALLS=1 adds the warps' stall reasons per issued instruction;
#                                   PROFILE_TUNE=build/bin/variant_tune_shared_first runs the load-order variant,
#                                   build/bin/variant_tune_promo128 the 128-byte L2 promotion one;
#                                   PROFILE_SOURCE=1 adds ncu's source page (SASS, per-instruction stall
#                                   samples) of a later launch -> $OUT/run/source_<entry>_<shape>_gemm_kernel.csv
#                                   (PROFILE_SOURCE_CUBLAS=1: cuBLAS's nvjet kernel of the same loop too);
#                                   PROFILE_CUBLAS=1 adds a row per shape for cuBLAS's own kernel in the same
#                                   loop (the same metrics, one launch; its name, which spells its tile)
#   TMAP_SHAPES="MxNxK ..." scripts/gpu_session.sh tmaps
#                                   the TMA tensor maps each library encodes (box, swizzle, L2 promotion,
#                                   out-of-bounds fill: build/lib/libtmap_spy.so, LD_PRELOADed) at each shape:
#                                   build/bin/tune with TMAP_ENTRIES (default co128x256-c2m-s4) beside
#                                   cuBLAS's default, and each step of TMAP_STEPS (ids, default none) with its
#                                   references (cuBLASLt's algorithms too) -> $OUT/run/tmaps.md, one table of
#                                   distinct maps per run with the calls that made each
#   STEP=23 [PREV=22] scripts/gpu_session.sh step
#                                   a new (or candidate) bf16 step in one call: the GPU tests of every
#                                   Hopper step ([hopper]), fuzz (FUZZ_COUNT, default 800) and the four
#                                   sanitizers on STEP, side by side; then, only if they all passed and
#                                   alone on the GPU, STEP and PREV (default: STEP's parent) paired with
#                                   the references at 4096^3 and 8192^3, each also sustained (BENCH_ARGS
#                                   add to that bench.py call)
#   FP8_STEP="30 31 32" scripts/gpu_session.sh fp8
#                                   the FP8 steps (FP8_STEP, default every fp8 step, steps.py ladder fp8) in one
#                                   call: the fp8 GPU tests ([fp8], every fp8 step), fuzz (FUZZ_COUNT,
#                                   default 400 shapes shared by the steps) and the four sanitizers on
#                                   them, side by side under CHECKS_TIMEOUT_S (default 240 s here); then,
#                                   only if they all passed and alone on the GPU, each step at 4096^3 and
#                                   8192^3 (FP8_SIZES; or FP8_SHAPES="M:N:K ..."; then FP8_VARIANTS, binaries of make
#                                   fp8-variants such as variant_35_c2m, at FP8_VARIANT_SHAPES, default the same) paired with cuBLASLt FP8 of its own scaling (per
#                                   tensor: default and fast accumulation; block-scaled steps: the
#                                   block-scaled reference, which has no fast mode), 30 rounds, each run
#                                   under BENCH_TIMEOUT_S (default 45 s), rows to $OUT/run/fp8.csv, each
#                                   run's summary line printed. A run that would end past FP8_BUDGET_S
#                                   (default 540 s from the start) is skipped with a line saying so, so
#                                   the call ends inside the 10-minute limit. FP8_CHECKED=1 skips the checks where
#                                   they passed earlier on the same machine (say so in the note)
#                                   FP8_PROFILE="ID:M:N:K ..." then runs ncu once on each (the step's
#                                   launch and cuBLASLt's of its scaling, clocks as found) with the
#                                   sections that say where a K loop waits: SpeedOfLight,
#                                   ComputeWorkloadAnalysis (the tensor pipe), MemoryWorkloadAnalysis_Tables
#                                   (shared-memory wavefronts and bank conflicts), WarpStateStats (stall
#                                   reasons) -> $OUT/run/ncu_ID_MxNxK_{step,cublaslt}.txt, each under
#                                   PROFILE_TIMEOUT_S (default 120 s) and inside FP8_BUDGET_S
#   HAND_STEPS="29 39" scripts/gpu_session.sh hands
#                                   bf16 steps side by side through the tuner: build/bin/tune with each step
#                                   of HAND_STEPS as its --hand-step (and co128x256-c2m-s4) over HAND_SHAPES
#                                   (MxNxK,...; default the 35 K % 16 == 8 and 7 aligned shapes of step 39's
#                                   A/B), paired with cuBLAS (HAND_ROUNDS, default 5), the steps alternating
#                                   process by process HAND_REPEATS times (default 2), each under HAND_TIMEOUT_S
#                                   (default 150 s) -> $OUT/run/hands_<step>_<i>.csv, then each step's geometric
#                                   mean over cuBLAS per alignment class (processes averaged per shape first)
#                                   -> hands_summary.txt
# Each check runs under CHECKS_TIMEOUT_S (default 300 s), each bench under BENCH_TIMEOUT_S, so that a
# call ends inside the 10-minute limit. Logs and results go to $OUT (default gpu_out/) as one tarball,
# results.tgz (written also when the script is stopped), plus the summary. Exit status: 1 when a check
# failed, 2 for bad arguments, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
# A machine that was handed build/carry/bin.tar.xz (make gpu-carry) and no build/bin: unpack it.
if [ -f build/carry/bin.tar.xz ] && [ ! -x build/bin/tests ]; then
  mkdir -p build && tar xJf build/carry/bin.tar.xz -C build || { echo "cannot unpack build/carry/bin.tar.xz" >&2; exit 2; }
fi
# A comma list of the menu's entry names, as family/menu.hpp's menu::name spells them.
ENTRY_NAME='(pp|co)[0-9]+x[0-9]+(-swap)?(-c2[mn]|-c2x2)?(-stm)?(-psk)?-s[0-9]+'
ENTRY_NAMES="$ENTRY_NAME(,$ENTRY_NAME)*"
case "${1:-}" in
  checks|bench|stability|sweep|shapes|roofline|soak|faults|tiles|lab|promote|pitch|hands) ;;
  torch|bench-torch)
    # A tarball from before the library was packed leaves build/lib out: take it from a newer one.
    if [ ! -f build/lib/libgemmsteps.so ] && [ -f build/carry/bin.tar.xz ]; then
      tar xJf build/carry/bin.tar.xz -C build lib 2>/dev/null
    fi
    [ -f build/lib/libgemmsteps.so ] || { echo "$1: no build/lib/libgemmsteps.so (make lib; make gpu-carry packs it)" >&2; exit 2; }
    ;;
  entries)
    [ -x "${PROFILE_TUNE:-build/bin/tune}" ] || {
      echo "entries: no ${PROFILE_TUNE:-build/bin/tune} (make gpu-carry builds it and build/bin/variant_tune_shared_first)" >&2; exit 2; }
    [ -n "${PROFILE_ENTRIES:-}" ] && [ -n "${PROFILE_SHAPES:-}" ] || {
      echo "entries: set PROFILE_ENTRIES (menu names, comma-separated) and PROFILE_SHAPES (MxNxK, space-separated)" >&2; exit 2; }
    [[ "$PROFILE_ENTRIES" =~ ^$ENTRY_NAMES$ ]] || {
      echo "entries: PROFILE_ENTRIES='$PROFILE_ENTRIES' is not a comma list of menu entries (e.g. co128x256-c2m-s4)" >&2; exit 2; }
    set -f  # words, never file patterns
    for shape in $PROFILE_SHAPES; do
      [[ "$shape" =~ ^[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "entries: shape '$shape' is not MxNxK" >&2; exit 2; }
    done
    set +f
    command -v ncu > /dev/null || { echo "entries: no ncu on this machine" >&2; exit 2; }
    ;;
  tmaps)
    [ -x build/bin/tune ] && [ -f build/lib/libtmap_spy.so ] || {
      echo "tmaps: no build/bin/tune or build/lib/libtmap_spy.so (make gpu-carry builds both)" >&2; exit 2; }
    [ -n "${TMAP_SHAPES:-}" ] || { echo "tmaps: set TMAP_SHAPES (MxNxK, space-separated)" >&2; exit 2; }
    set -f  # the lists below are words, never file patterns
    for shape in $TMAP_SHAPES; do
      [[ "$shape" =~ ^[1-9][0-9]*x[1-9][0-9]*x([1-9][0-9]*)$ ]] && (( BASH_REMATCH[1] % 8 == 0 )) || {
        echo "tmaps: shape '$shape' is not MxNxK with K a multiple of 8" >&2; exit 2; }
    done
    for id in ${TMAP_STEPS:-}; do
      [[ "$id" =~ ^[0-9]+[a-z]?$ ]] && compgen -G "build/bin/${id}_*" > /dev/null || {
        echo "tmaps: no binary build/bin/${id}_* (TMAP_STEPS=\"29 33\")" >&2; exit 2; }
    done
    set +f
    [[ "${TMAP_ENTRIES:-co128x256-c2m-s4}" =~ ^$ENTRY_NAMES$ ]] || {
      echo "tmaps: TMAP_ENTRIES='${TMAP_ENTRIES:-}' is not a comma list of menu entries (e.g. co128x256-c2m-s4,pp128x160-c2x2-s5)" >&2; exit 2; }
    ;;
  menu)
    for b in tests fuzz tune; do
      [ -x "build/bin/$b" ] || { echo "menu: no build/bin/$b (make gpu-carry builds it)" >&2; exit 2; }
    done
    ;;
  family)
    # The steps built from the family (those that launch through common/kernel_lib/family/launch.cuh).
    FAMILY_STEPS=${FAMILY_STEPS:-$(grep -lE 'family/(menu_)?launch.cuh' kernels/*.cu | sed 's|kernels/||; s|_.*||' | tr '\n' ' ')}
    [ -n "${FAMILY_STEPS// /}" ] || { echo "family: no step from 24 on (FAMILY_STEPS=\"24 28\")" >&2; exit 2; }
    for id in $FAMILY_STEPS ${FAMILY_SANITIZE:-28 29 33 34}; do
      compgen -G "build/bin/${id}_*" > /dev/null || { echo "family: no binary build/bin/${id}_*" >&2; exit 2; }
    done
    ;;
  fp8)
    FP8_STEP=${FP8_STEP:-$(python3 scripts/steps.py ladder fp8)}
    FP8_STEP=${FP8_STEP//,/ }
    [ -n "${FP8_STEP// /}" ] || { echo "fp8: FP8_STEP is empty (step ids, e.g. FP8_STEP=\"30 31 32\")" >&2; exit 2; }
    for id in $FP8_STEP; do
      compgen -G "build/bin/${id}_*" > /dev/null || { echo "fp8: no binary build/bin/${id}_* (FP8_STEP=\"30 31 32\")" >&2; exit 2; }
    done
    ;;
  outliers)
    [ -x build/bin/lab_fp8_outliers ] || { echo "outliers: no build/bin/lab_fp8_outliers (make gpu-carry builds it)" >&2; exit 2; }
    ;;
  step)
    [ -n "${STEP:-}" ] || { echo "step: set STEP (and PREV, default its parent; step ids, e.g. STEP=23 PREV=22)" >&2; exit 2; }
    if [ -z "${PREV:-}" ]; then PREV=$(python3 scripts/steps.py parent "$STEP") || exit 2; fi  # an unknown STEP: steps.py says so
    [ -n "$PREV" ] || { echo "step: step $STEP has no parent to compare with: set PREV" >&2; exit 2; }
    for id in "$STEP" "$PREV"; do
      compgen -G "build/bin/${id}_*" > /dev/null || { echo "step: no binary build/bin/${id}_* (ids as in kernels/NN_name.cu)" >&2; exit 2; }
    done
    ;;
  *) echo "usage: scripts/gpu_session.sh checks|bench|stability|sweep|shapes|roofline|soak|faults|tiles|lab|outliers|promote|pitch|step|fp8|family|menu|entries|tmaps|torch|bench-torch" >&2; exit 2 ;;
esac
OUT=${OUT:-gpu_out}
mkdir -p "$OUT/run"
R="$OUT/run"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv > "$R/gpu.txt" 2>&1
summary=()
status=0
trap 'tar czf "$OUT/results.tgz" -C "$OUT" run' EXIT
# Every timed job runs in the background in a process group of its own (timeout makes one), so that a
# stopped session ends them too instead of leaving them on the GPU (bash runs a trap only between
# commands: `guard` waits for its job, and the wait is what a signal interrupts).
jobs_started=()
guard() {
  "$@" &
  local p=$!
  jobs_started+=("$p")
  wait "$p"
}
stop_jobs() {
  local p
  for p in "${jobs_started[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; done
}
trap 'trap "" TERM INT; stop_jobs; exit 124' TERM INT  # ignore the repeats while stopping
# GPU tests, fuzz and the sanitizers side by side (none of them times anything), then their summary
# lines; fails when any of them failed. Arguments: the fuzz shapes (FUZZ_COUNT overrides), a Catch2
# filter for the tests ("" for all), then --steps S for fuzz and sanitize.sh (nothing: every step);
# SAN_STEPS, when set, gives sanitize.sh steps of its own (a comma list).
run_checks() {
  local fuzz_count=${FUZZ_COUNT:-$1} filter=$2
  shift 2
  local start=$SECONDS
  local limit=${CHECKS_TIMEOUT_S:-300}
  timeout "$limit" build/bin/tests ${filter:+"$filter"} > "$R/tests.log" 2>&1 & p_tests=$!
  timeout "$limit" build/bin/fuzz --seed "${FUZZ_SEED:-1}" "$@" --count "$fuzz_count" > "$R/fuzz.log" 2>&1 & p_fuzz=$!
  local san_args=("$@")
  [ -n "${SAN_STEPS:-}" ] && san_args=(--steps "$SAN_STEPS")
  # each sanitizer run's own limit stays inside the script's, so a slow run fails its line, not the script
  local per_run=$((limit > 90 ? limit - 30 : 60))
  OUT="$R" SANITIZER_RUN_TIMEOUT_S=$((per_run < 180 ? per_run : 180)) SANITIZER_RACECHECK_TIMEOUT_S=$per_run \
    timeout "$limit" scripts/sanitize.sh --build build "${san_args[@]}" > "$R/sanitize.log" 2>&1 & p_san=$!
  jobs_started+=("$p_tests" "$p_fuzz" "$p_san")
  wait $p_tests; rc_tests=$?
  wait $p_fuzz; rc_fuzz=$?
  wait $p_san; rc_san=$?
  summary+=("tests${filter:+ $filter} (rc=$rc_tests): $(tail -n 1 "$R/tests.log")"
            "fuzz${*:+ $*} (rc=$rc_fuzz): $(tail -n 1 "$R/fuzz.log")"
            "sanitize ${san_args[*]} (rc=$rc_san): $(tail -n 1 "$R/sanitize.log")"
            "checks wall: $((SECONDS - start)) s")
  grep -E "FAILED|failed|WATCHDOG" "$R/tests.log" | head -20
  grep -E "^FAIL|WATCHDOG" "$R/fuzz.log" | head -10
  grep -E "FAIL|NOT reported" "$R/sanitize.log" | head -10
  [ $rc_tests -eq 0 ] && [ $rc_fuzz -eq 0 ] && [ $rc_san -eq 0 ]
}
case "${1:-}" in
  checks)
    run_checks 3000 "" || status=1
    ;;
  bench)
    start=$SECONDS
    guard timeout "${BENCH_TIMEOUT_S:-560}" python3 scripts/bench.py --build build --out "$R/results" --no-docs ${BENCH_ARGS:-} \
      > "$R/bench.log" 2>&1
    summary+=("bench (rc=$?, $((SECONDS - start)) s)")
    grep -E "^stability" "$R/bench.log"
    ;;
  stability)
    start=$SECONDS
    [ -n "${BENCH_IN:-}" ] && [ -d "$BENCH_IN" ] || { echo "stability: BENCH_IN must name the first call's results/" >&2; exit 2; }
    cp -r "$BENCH_IN" "$R/results"
    guard timeout "${BENCH_TIMEOUT_S:-560}" python3 scripts/bench.py --build build --out "$R/results" --no-docs --stability-only \
      ${BENCH_ARGS:-} > "$R/stability.log" 2>&1
    summary+=("stability (rc=$?, $((SECONDS - start)) s)")
    grep -E "^stability" "$R/stability.log"
    ;;
  step)
    if ! run_checks 800 "[hopper]" --steps "$STEP"; then
      status=1
      summary+=("bench skipped: a check failed")
    elif [ "${CHECKS_ONLY:-0}" = 1 ]; then
      summary+=("bench not run (CHECKS_ONLY=1)")
    else
      start=$SECONDS
      guard timeout "${BENCH_TIMEOUT_S:-240}" python3 scripts/bench.py --build build --out "$R/results" --no-docs \
        --steps "$PREV" "$STEP" --also "$PREV" --stability 0 ${BENCH_ARGS:-} > "$R/bench.log" 2>&1
      summary+=("bench $PREV $STEP (rc=$?, $((SECONDS - start)) s)")
      sed -n '/^GPU:/,$p' "$R/bench.log" | tail -n 40
    fi
    ;;
  family)
    steps_csv=${FAMILY_STEPS// /,}
    steps_csv=${steps_csv%,}
    san=${FAMILY_SANITIZE:-28 29 33 34}
    # The tests of every Hopper and FP8 step take about 5 minutes beside the sanitizers (2026-12-04).
    if ! SAN_STEPS=${san// /,} CHECKS_TIMEOUT_S=${CHECKS_TIMEOUT_S:-540} run_checks 800 "[hopper],[fp8]" --steps "$steps_csv"; then
      status=1
      summary+=("bench skipped: a check failed")
    elif [ "${CHECKS_ONLY:-0}" = 1 ]; then
      summary+=("bench not run (CHECKS_ONLY=1)")
    else
      start=$SECONDS
      guard timeout "${BENCH_TIMEOUT_S:-300}" python3 scripts/bench.py --build build --out "$R/results" --no-docs \
        --steps $FAMILY_STEPS --also --sustained 0 --stability 0 ${BENCH_ARGS:-} > "$R/bench.log" 2>&1
      summary+=("bench $FAMILY_STEPS (rc=$?, $((SECONDS - start)) s)")
      sed -n '/^GPU:/,$p' "$R/bench.log" | tail -n 40
    fi
    ;;
  menu)
    limit=${CHECKS_TIMEOUT_S:-300}
    start=$SECONDS
    rc_tests=0 rc_fuzz=0
    if [ "${MENU_CHECKED:-0}" = 1 ]; then  # the checks passed earlier on this machine (a tune split over two calls)
      summary+=("menu checks not run again (MENU_CHECKED=1)")
    else
      timeout "$limit" build/bin/tests "[menu]" > "$R/tests.log" 2>&1 & p_tests=$!
      timeout "$limit" build/bin/fuzz --seed "${FUZZ_SEED:-1}" --menu --count "${FUZZ_COUNT:-1000}" > "$R/fuzz.log" 2>&1 & p_fuzz=$!
      jobs_started+=("$p_tests" "$p_fuzz")
      wait $p_tests; rc_tests=$?
      wait $p_fuzz; rc_fuzz=$?
      summary+=("tests [menu] (rc=$rc_tests): $(tail -n 1 "$R/tests.log")" "fuzz --menu (rc=$rc_fuzz): $(tail -n 1 "$R/fuzz.log")"
                "checks wall: $((SECONDS - start)) s")
      grep -E "FAILED|failed|WATCHDOG" "$R/tests.log" | head -20
      grep -E "^FAIL|WATCHDOG" "$R/fuzz.log" | head -10
    fi
    if [ $rc_tests -ne 0 ] || [ $rc_fuzz -ne 0 ]; then
      status=1
      summary+=("tune skipped: a check failed")
    elif [ "${CHECKS_ONLY:-0}" = 1 ]; then
      summary+=("tune not run (CHECKS_ONLY=1)")
    else
      [ -n "${TUNE_IN:-}" ] && cp "$TUNE_IN" "$R/tuning.csv"
      start=$SECONDS
      guard python3 scripts/tune.py --build build --out "$R/tuning.csv" --max-minutes "${TUNE_MINUTES:-4}" ${TUNE_ARGS:-} \
        > "$R/tune.log" 2>&1
      summary+=("tune (rc=$?, $((SECONDS - start)) s): $(tail -n 1 "$R/tune.log")")
      grep -E "fastest entry|exit" "$R/tune.log" | tail -n 30
    fi
    ;;
  fp8)
    budget=${FP8_BUDGET_S:-540}
    per_run=${BENCH_TIMEOUT_S:-45}
    if [ "${FP8_CHECKED:-0}" = 1 ]; then  # the checks of these steps passed earlier in this visit (family mode, say)
      summary+=("fp8 checks not run again (FP8_CHECKED=1)")
    fi
    if [ "${FP8_CHECKED:-0}" = 1 ] || CHECKS_TIMEOUT_S=${CHECKS_TIMEOUT_S:-240} run_checks 400 "[fp8]" --steps "${FP8_STEP// /,}"; then
      for id in $FP8_STEP ${FP8_VARIANTS:-}; do
        bin=build/bin/$id  # a variant binary by its name (make fp8-variants), else the step's
        [ -x "$bin" ] || bin=$(compgen -G "build/bin/${id}_*" | head -n 1)
        [ -n "$bin" ] || { summary+=("fp8: no build/bin/$id (make fp8-variants builds the variants)"); status=1; continue; }
        name=$(basename "$bin")
        csv=$R/fp8.csv
        case "$name" in variant_*) csv=$R/fp8_$name.csv ;; esac  # a variant registers its step's id and name: its own file
        shapes=${FP8_SHAPES:-}
        case "$name" in variant_*) shapes=${FP8_VARIANT_SHAPES:-$shapes} ;; esac
        shapes=${shapes:-$(for s in ${FP8_SIZES:-4096 8192}; do printf '%s:%s:%s ' "$s" "$s" "$s"; done)}
        for shape in $shapes; do
          IFS=: read -r m n k <<< "$shape"
          size=${m}x${n}x${k}
          if [ $((SECONDS + per_run)) -gt "$budget" ]; then
            summary+=("$name $size skipped: it could end past FP8_BUDGET_S=$budget s (now $SECONDS s)")
            status=1
            continue
          fi
          start=$SECONDS
          # --refs cublaslt: cuBLASLt FP8 with the step's scaling (the harness picks it from the step).
          guard timeout "$per_run" "$bin" --m "$m" --n "$n" --k "$k" --refs cublaslt --reps 30 \
            --csv "$csv" > "$R/fp8_${id}_$size.log" 2>&1
          rc=$?
          summary+=("$name $size (rc=$rc, $((SECONDS - start)) s): $(grep -E "^$name |paired ratio" "$R/fp8_${id}_$size.log" | tail -n 1)")
          grep -E "check against|relative RMS error|algorithms tried|not run|^error" "$R/fp8_${id}_$size.log"
          [ $rc -eq 0 ] || status=1
        done
      done
    else
      status=1
      summary+=("fp8 runs skipped: a check failed")
    fi
    for spec in ${FP8_PROFILE:-}; do
      IFS=: read -r id m n k <<< "$spec"
      if [ $((SECONDS + 2 * ${PROFILE_TIMEOUT_S:-120})) -gt "$budget" ]; then
        summary+=("ncu $spec skipped: it could end past FP8_BUDGET_S=$budget s (now $SECONDS s)")
        continue
      fi
      bin=$(compgen -G "build/bin/${id}_*" | head -n 1)
      [ -n "$bin" ] || { summary+=("fp8 profile: no build/bin/${id}_*"); status=1; continue; }
      for what in step cublaslt; do
        out=$R/ncu_${id}_${m}x${n}x${k}_$what.txt
        guard timeout "${PROFILE_TIMEOUT_S:-120}" ncu --clock-control none --profile-from-start off \
          --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
          --section WarpStateStats "$bin" --m "$m" --n "$n" --k "$k" --profile-once "$what" > "$out" 2>&1
        summary+=("ncu $id ${m}x${n}x${k} $what (rc=$?)")
      done
    done
    ;;
  torch)
    export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" GEMM_STEPS_LIB="$PWD/build/lib/libgemmsteps.so" PYTHONUNBUFFERED=1
    start=$SECONDS
    guard timeout "${TORCH_TIMEOUT_S:-480}" python3 python/tests/torch_gpu.py --budget $((${TORCH_TIMEOUT_S:-480} - 60)) \
      ${TORCH_ARGS:-} > "$R/torch_tests.log" 2>&1
    rc=$?
    summary+=("torch tests (rc=$rc, $((SECONDS - start)) s): $(tail -n 1 "$R/torch_tests.log")")
    grep -E "^(FAIL|SKIP|#)|Error" "$R/torch_tests.log" | head -60
    [ $rc -eq 0 ] || status=1
    start=$SECONDS
    guard timeout 100 python3 examples/mlp_block.py ${MLP_ARGS:-} > "$R/mlp_block.log" 2>&1
    rc=$?
    summary+=("examples/mlp_block.py (rc=$rc, $((SECONDS - start)) s)")
    cat "$R/mlp_block.log"
    [ $rc -eq 0 ] || status=1
    ;;
  bench-torch)
    export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" GEMM_STEPS_LIB="$PWD/build/lib/libgemmsteps.so" PYTHONUNBUFFERED=1
    export TORCHINDUCTOR_CACHE_DIR="$R/inductor_cache"  # a fresh cache: every compile is timed as a user's first
    start=$SECONDS
    limit=${BENCH_TORCH_TIMEOUT_S:-570}
    guard timeout "$limit" python3 scripts/bench_torch.py --out "$R/torch.csv" --budget-s $((limit - 40)) \
      ${BENCH_TORCH_ARGS:-} > "$R/bench_torch.log" 2>&1
    rc=$?
    rm -rf "$R/inductor_cache"
    summary+=("bench-torch (rc=$rc, $((SECONDS - start)) s): $(tail -n 1 "$R/bench_torch.log")")
    cat "$R/bench_torch.log"
    [ $rc -eq 0 ] || status=1
    ;;
  sweep)
    start=$SECONDS
    guard timeout "${SWEEP_TIMEOUT_S:-420}" python3 scripts/bench.py --build build --out "$R/results" --no-docs --sweep \
      --reps 20 > "$R/sweep.log" 2>&1
    summary+=("sweep (rc=$?, $((SECONDS - start)) s)")
    # the last bf16 step (by dtype: the fp8 steps have higher ids and no cuBLAS reference)
    last=$(python3 scripts/steps.py ladder bf16 | awk '{print $NF}')
    for s in 4096 8192; do
      guard timeout 60 python3 scripts/profile.py "$last" --m $s --n $s --k $s --out "$R/profile_$s.md" \
        > "$R/profile_$s.log" 2>&1
      summary+=("profile $last $s (rc=$?)")
    done
    ;;
  shapes)
    start=$SECONDS
    seed_args=()  # RANDOM_SEED=S: a held-out draw (bench.py --random-seed S) in both calls
    if [ -n "${RANDOM_SEED:-}" ]; then
      seed_args=(--random-seed "$RANDOM_SEED")
      case " ${BENCH_ARGS:-} " in *" --shapes-set "*) ;; *) seed_args+=(--shapes-set random) ;; esac  # the draw alone
      # The committed file of this GPU first, so that the file carried back holds the sweep's and seed 46's
      # rows beside the draw's (bench.py replaces only the rows of the set it runs).
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
      slug=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import bench; print(bench.slug_of(sys.argv[1]))' "$gpu")
      mkdir -p "$R/results"
      [ -f "results/${slug}_shapes.csv" ] && cp "results/${slug}_shapes.csv" "$R/results/"
    fi
    # The plan and its estimate first (no GPU time), then the runs; the log has each process's real time.
    python3 scripts/bench.py --build build --shapes --dry-run "${seed_args[@]}" ${BENCH_ARGS:-} > "$R/shapes_plan.log" 2>&1
    grep -E "^estimated|error:" "$R/shapes_plan.log"
    guard timeout "${SHAPES_TIMEOUT_S:-540}" python3 scripts/bench.py --build build --out "$R/results" --no-docs --shapes \
      "${seed_args[@]}" ${BENCH_ARGS:-} > "$R/shapes.log" 2>&1
    rc=$?
    summary+=("shapes (rc=$rc, $((SECONDS - start)) s): $(grep -cE '^\[[0-9]+/[0-9]+\]' "$R/shapes.log") processes ran")
    grep -E "refused|^FAILED|^wrote|interrupted" "$R/shapes.log" | head -20
    csv=$(ls "$R"/results/*_shapes.csv 2>/dev/null | head -n 1)
    if [ -n "$csv" ]; then  # each step's summary line: geometric mean and worst five shapes
      python3 scripts/shapes_table.py "$csv" > "$R/shapes_table.md" 2>&1 && grep -E '^\*\*step' "$R/shapes_table.md"
    fi
    [ $rc -eq 0 ] || status=1
    ;;
  soak)
    start=$SECONDS
    minutes=${SOAK_MINUTES:-8}
    [[ "$minutes" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "soak: SOAK_MINUTES='$minutes' is not a number of minutes" >&2; exit 2; }
    guard timeout $((${minutes%.*} * 60 + 120)) build/bin/soak --minutes "$minutes" ${SOAK_ARGS:-} > "$R/soak.log" 2>&1
    rc=$?
    summary+=("soak (rc=$rc, $((SECONDS - start)) s): $(tail -n 1 "$R/soak.log")")
    grep -E "^(MISMATCH|BITS|NVML)" "$R/soak.log" | head -20
    [ $rc -eq 0 ] || status=1
    ;;
  faults)
    F="$R/faults"
    cp -r results "$F"
    digest() { (cd "$F" && cat $(ls | grep -E '\.(csv|json)$' | sort)) | sha256sum | cut -c1-16; }
    wellformed() { python3 -c 'import csv,glob,sys; [list(csv.DictReader(open(f))) for f in glob.glob(sys.argv[1]+"/*.csv")]' "$F" \
                   && echo "every CSV parses"; }
    args=(--build build --out "$F" --no-docs --steps ${FAULT_STEPS:-22 23} --sizes 4096 --sustained 0 --stability 0 --reps 20)
    kill_at() {  # $1: signal, $2: extra bench.py arguments; kills the bench at a random point
      local after=$((3 + RANDOM % 12)) was now rc
      was=$(digest)
      python3 scripts/bench.py "${args[@]}" ${2:-} > "$R/faults_$1.log" 2>&1 & local p=$!
      sleep $after; kill -s "$1" $p 2>/dev/null; wait $p; rc=$?
      now=$(digest)
      summary+=("SIG$1 after ${after} s: rc=$rc, results $( [ "$was" = "$now" ] && echo unchanged || echo CHANGED ) ($now); $(tail -n 1 "$R/faults_$1.log")")
    }
    kill_at INT
    guard timeout 200 python3 scripts/bench.py "${args[@]}" --resume > "$R/faults_resume.log" 2>&1
    summary+=("--resume: rc=$?, results now $(digest); $(wellformed)")
    kill_at TERM
    kill_at KILL
    guard timeout 200 python3 scripts/bench.py "${args[@]}" > "$R/faults_after_kill.log" 2>&1
    summary+=("a full run after SIGKILL: rc=$?, results now $(digest); $(wellformed); $(grep -m1 -i 'journal\|recover' "$R/faults_after_kill.log")")
    build/bin/soak --minutes 0.5 > "$R/faults_soak.log" 2>&1 & p=$!
    sleep 5
    was=$(digest)
    python3 scripts/bench.py "${args[@]}" > "$R/faults_busy.log" 2>&1
    summary+=("while another process holds the GPU: rc=$?, results $( [ "$was" = "$(digest)" ] && echo unchanged || echo CHANGED ); $(tail -n 1 "$R/faults_busy.log")")
    kill $p 2>/dev/null; wait $p
    was=$(digest)
    guard timeout 120 python3 scripts/bench.py --build build --out "$F" --no-docs --steps 23 --sizes 150000 --sustained 0 \
      --stability 0 --reps 20 > "$R/faults_oom.log" 2>&1
    summary+=("150000^3 (past device memory): rc=$?; $(grep -m1 -i "refus" "$R/faults_oom.log")")
    grep -h -E "^(error|note|interrupted)" "$R"/faults_*.log | sort | uniq -c | head -20
    ;;
  promote)
    start=$SECONDS
    for pe in 1 2 4 0; do
      case $pe in 1|2) b=variant_31_pe$pe ;; 4) b=$(basename "$(ls build/bin/31_* | head -n 1)") ;; 0) b=$(basename "$(ls build/bin/30_* | head -n 1)") ;; esac
      [ -x "build/bin/$b" ] || { summary+=("promote: no build/bin/$b (make promote-variants builds the variants)"); continue; }
      for size in ${PROMOTE_SIZES:-4096 8192}; do
        timeout "${BENCH_TIMEOUT_S:-45}" "build/bin/$b" --m "$size" --n "$size" --k "$size" --refs cublaslt --reps 30 \
          --energy-s 0 --csv "$R/promote_$pe.csv" > "$R/promote_${pe}_$size.log" 2>&1
        rc=$?
        summary+=("promote every $pe ($b) $size^3 (rc=$rc): $(grep -E 'paired ratio' "$R/promote_${pe}_$size.log" | tail -n 1)")
      done
    done
    python3 - "$R" > "$R/promote.csv" <<'PY'
import csv, glob, os, sys
out = None
for f in sorted(glob.glob(os.path.join(sys.argv[1], "promote_*.csv"))):
    pe = os.path.basename(f)[len("promote_"):-4]
    for r in csv.DictReader(open(f)):
        if out is None:
            out = csv.DictWriter(sys.stdout, fieldnames=["promote_every"] + list(r.keys()), lineterminator="\n")
            out.writeheader()
        out.writerow({"promote_every": pe, **r})
PY
    summary+=("promote: $(($(wc -l < "$R/promote.csv") - 1)) rows in promote.csv ($((SECONDS - start)) s)")
    ;;
  tiles)
    start=$SECONDS
    bins=()
    for b in ${TILE_BINS:-24 25 variant_25_bn64 variant_25_bn128}; do
      f=$(ls build/bin/${b}_* build/bin/$b 2>/dev/null | head -n 1)
      [ -n "$f" ] && bins+=("$f") || echo "tiles: no build/bin/$b (make tile-variants builds the variants)" >&2
    done
    shapes=${TILE_SHAPES:-"256:4096:4096 256:4096:14336 256:6144:4096 128:4096:4096 128:4096:14336 128:14336:4096 \
      1024:1024:65536 2048:2048:32768 4096:256:4096 4096:512:4096 4096:768:4096 4096:1024:4096 4096:1536:4096 \
      4096:2048:4096 512:4096:4096 5000:5000:5000 5000:5000:5056 5056:5056:5056 4096:4096:4096"}
    n=0
    for shape in $shapes; do
      IFS=: read -r m nn k <<< "$shape"
      for f in "${bins[@]}"; do
        timeout 60 "$f" --m "$m" --n "$nn" --k "$k" --refs cublas --reps 20 --energy-s 0 --settle-s 0.2 \
          --csv "$R/tiles_$(basename "$f").csv" > "$R/tiles_$(basename "$f")_$m-$nn-$k.log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || summary+=("tiles: $(basename "$f") at $shape: rc=$rc ($(tail -n 1 "$R/tiles_$(basename "$f")_$m-$nn-$k.log"))")
        n=$((n + 1))
      done
    done
    python3 - "$R" > "$R/tiles_table.txt" <<'PY'
import csv, glob, os, sys
rows, step_us = {}, {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tiles_*.csv"))):
    b = os.path.basename(f)[6:-4]
    for r in csv.DictReader(open(f)):
        key = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["kernel"] == "step" and r["ms"]:
            step_us[(b, key)] = float(r["ms"]) * 1e3
        elif r["kernel"] == "cublas" and r["step_ratio"] and (b, key) in step_us:  # x cuBLAS: the paired ratio
            rows.setdefault(key, {})[b] = (step_us[(b, key)], float(r["step_ratio"]), r["clock_mhz"])
bins = sorted({b for v in rows.values() for b in v})
print("shape".ljust(20) + "".join(b[:24].rjust(26) for b in bins) + "   (us, x cuBLAS)")
for s in sorted(rows):
    print(("%dx%dx%d" % s).ljust(20) + "".join(("%8.1f %5.3f %4s MHz" % rows[s][b] if b in rows[s] else "-").rjust(26) for b in bins))
PY
    cat "$R/tiles_table.txt"
    summary+=("tiles ($n processes, $((SECONDS - start)) s)")
    ;;
  lab)
    start=$SECONDS
    timeout 60 build/bin/lab_fp8_accumulator > "$R/lab_accumulator.log" 2>&1
    rc=$?
    summary+=("lab_fp8_accumulator (rc=$rc): $(grep -c '^kept every' "$R/lab_accumulator.log") placements")
    grep -E "^kept every|^error|^#" "$R/lab_accumulator.log"
    [ $rc -eq 0 ] || status=1
    steps=${LAB_STEPS:-$(python3 scripts/steps.py ladder fp8)}
    for id in $steps; do
      bin=$(compgen -G "build/bin/${id}_*" | head -n 1)
      [ -n "$bin" ] || { summary+=("lab: no build/bin/${id}_*"); status=1; continue; }
      for k in ${LAB_KS:-256 1024 4096 16384 65536}; do
        timeout 60 "$bin" --m 256 --n 256 --k "$k" --refs cublaslt --reps 20 --energy-s 0 --settle-s 0 \
          --csv "$R/lab_errors.csv" > "$R/lab_${id}_$k.log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || { summary+=("lab: $(basename "$bin") K=$k rc=$rc ($(tail -n 1 "$R/lab_${id}_$k.log"))"); status=1; }
      done
    done
    python3 - "$R/lab_errors.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]))) if __import__("os").path.exists(sys.argv[1]) else []
print("step  K       step err    cuBLASLt    cuBLASLt fast")
by = {}
for r in rows:
    by.setdefault((r["step"], int(r["k"])), {})[r["kernel"]] = r["rel_rms_err"]
for (s, k), v in sorted(by.items()):
    print(f"{s:5} {k:<7} {v.get('step', '-'):11} {v.get('cublaslt_best', '-'):11} {v.get('cublaslt_fast', '-')}")
PY
    summary+=("lab ($((SECONDS - start)) s)")
    ;;
  outliers)
    start=$SECONDS
    guard timeout "${CHECKS_TIMEOUT_S:-300}" build/bin/tests "[dist]" > "$R/tests.log" 2>&1
    rc=$?
    summary+=("tests [dist] (rc=$rc): $(tail -n 1 "$R/tests.log")")
    grep -E "FAILED|failed|WATCHDOG|WARN|no algorithm" "$R/tests.log" | head -20
    if [ $rc -ne 0 ]; then
      status=1
      summary+=("outliers sweep skipped: a check failed")
    else
      # Two runs into one CSV: the K sweep (both inputs), then the outlier sizes at one K (llm inputs).
      guard timeout "${BENCH_TIMEOUT_S:-300}" build/bin/lab_fp8_outliers --ks "${OUTLIER_KS:-256,1024,4096,16384,65536}" \
        --csv "$R/outliers.csv" > "$R/outliers_k.log" 2>&1
      rc=$?
      summary+=("outliers over K (rc=$rc): $(tail -n 1 "$R/outliers_k.log")")
      [ $rc -eq 0 ] || status=1
      guard timeout "${BENCH_TIMEOUT_S:-300}" build/bin/lab_fp8_outliers --dists llm --ks 4096 \
        --outlier-maxes "${OUTLIER_MAXES:-100,10000,100000}" --csv "$R/outliers.csv" > "$R/outliers_sizes.log" 2>&1
      rc=$?
      summary+=("outliers over sizes (rc=$rc): $(tail -n 1 "$R/outliers_sizes.log")")
      [ $rc -eq 0 ] || status=1
      grep -hE "^# |not run|^error|FAIL" "$R/outliers_k.log" "$R/outliers_sizes.log" | sort | uniq -c | head -20
      if [ -f "$R/outliers.csv" ]; then
        python3 scripts/plot_fp8_outliers.py "$R/outliers.csv" --table 2>&1
        summary+=("outliers: $(($(wc -l < "$R/outliers.csv") - 1)) rows in outliers.csv ($((SECONDS - start)) s)")
      else
        summary+=("outliers: no outliers.csv written ($((SECONDS - start)) s)")
      fi
    fi
    ;;
  hands)
    shapes=${HAND_SHAPES:-4096x4096x4096,8192x8192x8192,4096x4096x4104,5540x1784x4448,1135x19936x21376,6137x1256x19584,2x28936x2608,552x496x1632,4202x776x3128,3576x496x22184,5x2448x360,14x432x1432,7x448x856,229x1512x9800,4141x592x264,546x304x11000,1948x13672x8744,1x328x29144,2x848x1688,7960x6328x952,17x2128x29720,1x21448x584,199x4832x9256,12x5344x1016,4396x5768x30104,572x23520x3352,751x11736x312,4x4160x984,58x1336x696,98x320x1304,3085x544x17768,6x14720x1704,470x368x24120,7798x1392x1448,1x8784x1640,144x15200x1096,4x16048x14232,319x304x6872,268x1552x3576,2234x3224x632,4307x1432x3480,4801x848x328}
    for i in $(seq 1 "${HAND_REPEATS:-2}"); do
      for id in ${HAND_STEPS:-29 39}; do
        start=$SECONDS
        guard timeout "${HAND_TIMEOUT_S:-150}" build/bin/tune --shapes "$shapes" --entries co128x256-c2m-s4 --hand-step "$id" \
          --rounds "${HAND_ROUNDS:-5}" --csv "$R/hands_${id}_$i.csv" > "$R/hands_${id}_$i.log" 2>&1
        rc=$?
        summary+=("tune --hand-step $id, process $i (rc=$rc, $((SECONDS - start)) s)")
        [ $rc -eq 0 ] || status=1
      done
    done
    python3 - "$R" ${HAND_STEPS:-29 39} <<'PY' | tee "$R/hands_summary.txt"
import csv, glob, math, sys
from collections import defaultdict
# Each shape's ratios over cuBLAS (a row per process) averaged first, so a process cut short leaves its
# shapes out rather than re-weighting them; rows whose check failed are left out and counted.
def gmean(v):
    return math.exp(sum(map(math.log, v)) / len(v))
for step in sys.argv[2:]:
    per_shape, failed = defaultdict(list), 0
    for f in sorted(glob.glob(f"{sys.argv[1]}/hands_{step}_*.csv")):
        for r in csv.DictReader(open(f)):
            if r["contender"] != f"step{step}" or not r["ratio_vs_cublas"]:
                continue
            if not r["check"].startswith(("pass", "not checked")):  # "pass (the fp64 oracle's: ...)" passed too
                failed += 1
                continue
            per_shape[(int(r["m"]), int(r["n"]), int(r["k"]))].append(float(r["ratio_vs_cublas"]))
    classes = defaultdict(list)
    for (m, n, k), v in per_shape.items():
        classes["K % 16 == 8" if k % 16 == 8 else "K % 16 != 8"].append(gmean(v))
    for cls, v in sorted(classes.items()):
        print(f"step {step}, {cls}: {gmean(v):.3f}x cuBLAS (geometric mean over {len(v)} shapes, "
              f"{sum(x >= 0.95 for x in v)} at 0.95x or more)")
    if failed:
        print(f"step {step}: {failed} rows left out, their check failed")
PY
    ;;
  pitch)
    start=$SECONDS
    for shape in ${PITCH_SHAPES:-4096:4096:4096 4096:4096:4104 4096:4096:4112 192:8192:16392}; do
      IFS=: read -r m n k <<< "$shape"
      for id in ${PITCH_STEPS:-28 29}; do
        guard timeout 90 python3 scripts/profile.py "$id" --m "$m" --n "$n" --k "$k" --out "$R/pitch_${id}_${m}x${n}x${k}.md" \
          --metric lts__t_requests.sum --metric lts__t_sectors.sum --metric lts__t_sectors_srcunit_tex_op_read.sum \
          --metric lts__t_requests_srcunit_tex_op_read.sum > "$R/pitch_${id}_${m}x${n}x${k}.log" 2>&1
        rc=$?
        summary+=("pitch $id ${m}x${n}x${k} (rc=$rc)")
        [ $rc -eq 0 ] || status=1
      done
    done
    summary+=("pitch ($((SECONDS - start)) s)")
    ;;
  entries)
    start=$SECONDS
    metrics=(gpu__time_duration.sum dram__bytes.sum lts__t_requests.sum lts__t_sectors.sum lts__t_sectors_op_write.sum
             sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active)
    list=$(IFS=,; echo "${metrics[*]}")
    [ "${PROFILE_STALLS:-0}" = 1 ] && list="$list,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
    metric_cells() {  # one ncu log's value of each metric, as table cells; time and bytes with ncu's unit (us or ms, Mbyte or Gbyte)
      local m cells=""
      for m in "${metrics[@]}"; do
        cells="$cells $(awk -v m="$m" '$1 == m {print (m ~ /^(gpu__time|dram__bytes)/ ? $NF " " $(NF-1) : $NF)}' "$1" | tail -n 1) |"
      done
      echo "$cells"
    }
    { echo "| shape | entry | time | DRAM | L2 requests | L2 sectors | L2 write sectors | tensor pipe (%) |"
      echo "|---|---|---:|---:|---:|---:|---:|---:|"; } > "$R/entries.md"
    for shape in $PROFILE_SHAPES; do
      for e in ${PROFILE_ENTRIES//,/ }; do
        log="$R/entries_${e}_${shape}.log"
        guard timeout 120 ncu --clock-control none -k regex:gemm_kernel -c 1 --metrics "$list" "${PROFILE_TUNE:-build/bin/tune}" --shapes "$shape" \
          --entries "$e" --rounds "${PROFILE_ROUNDS:-5}" --hand-step "" --csv "$R/entries_tune.csv" > "$log" 2>&1
        rc=$?
        echo "| $shape | $e |$(metric_cells "$log")" >> "$R/entries.md"
        summary+=("entries $e $shape (rc=$rc): $(grep -E "^$shape:" "$log" | tail -n 1)")
        [ $rc -eq 0 ] || status=1
        if [ "${PROFILE_SOURCE:-0}" = 1 ]; then  # per-SASS-instruction warp stall samples of the same launch
          kernels=gemm_kernel
          [ "${PROFILE_SOURCE_CUBLAS:-0}" = 1 ] && kernels="$kernels nvjet_sm90"
          for kern in $kernels; do
            rep="$R/source_${e}_${shape}_${kern}"
            guard timeout 150 ncu --clock-control none -k "regex:$kern" -s "${PROFILE_SOURCE_SKIP:-4}" -c 1 --section SourceCounters \
              --section WarpStateStats -f -o "$rep" "${PROFILE_TUNE:-build/bin/tune}" --shapes "$shape" --entries "$e" --rounds 3 --hand-step "" \
              --csv "$rep.tune.csv" > "$rep.log" 2>&1 && ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.csv" 2>> "$rep.log"
            rc=$?
            lines=0
            [ -f "$rep.csv" ] && lines=$(($(wc -l < "$rep.csv") - 1))
            summary+=("source $e $shape $kern (rc=$rc): $lines SASS lines")
            [ $rc -eq 0 ] || status=1
            rm -f "$rep.ncu-rep"
          done
        fi
      done
      if [ "${PROFILE_CUBLAS:-0}" = 1 ]; then  # the reference's kernel in the same loop (nvjet, or an older xmma/gemv)
        e=${PROFILE_ENTRIES%%,*}
        log="$R/entries_cublas_${shape}.log"
        guard timeout 120 ncu --clock-control none -k 'regex:nvjet|xmma|gemv|gemmSN' -c 1 --metrics "$list" "${PROFILE_TUNE:-build/bin/tune}" \
          --shapes "$shape" --entries "$e" --rounds 3 --hand-step "" --csv "$R/entries_cublas_tune.csv" > "$log" 2>&1
        rc=$?
        kname=$(grep -oE '(nvjet|[A-Za-z0-9_]*(xmma|gemv|gemmSN))[A-Za-z0-9_]*' "$log" | head -n 1)
        echo "| $shape | cuBLAS \`${kname:-?}\` |$(metric_cells "$log")" >> "$R/entries.md"
        summary+=("entries cuBLAS $shape (rc=$rc): ${kname:-no reference kernel matched}")
        [ $rc -eq 0 ] || status=1
      fi
    done
    cat "$R/entries.md"
    summary+=("entries ($((SECONDS - start)) s)")
    ;;
  tmaps)
    start=$SECONDS
    spy="$PWD/build/lib/libtmap_spy.so"
    : > "$R/tmaps.md"
    tmap_run() {  # label, then the command; its maps -> one table (the base address left out, calls counted)
      local label=$1 log="$R/tmaps_$(echo "$1" | tr -c 'A-Za-z0-9_.\n' '_').log"
      shift
      rm -f "$log.maps"
      guard timeout 120 env LD_PRELOAD="$spy" TMAP_SPY_LOG="$log.maps" "$@" > "$log" 2>&1
      local rc=$?
      { echo "### $label (rc=$rc)"; echo; echo '```'
        [ -f "$log.maps" ] && sed 's/ base_mod_1024=[0-9]*//' "$log.maps" | sort | uniq -c | sort -rn
        echo '```'; echo; } >> "$R/tmaps.md"
      summary+=("tmaps $label (rc=$rc): $(grep -sc '^tmap ' "$log.maps" || true) maps encoded")
      [ $rc -eq 0 ] || status=1
    }
    for shape in $TMAP_SHAPES; do
      IFS=x read -r m n k <<< "$shape"
      tmap_run "tune $shape ${TMAP_ENTRIES:-co128x256-c2m-s4}" build/bin/tune --shapes "$shape" \
        --entries "${TMAP_ENTRIES:-co128x256-c2m-s4}" --rounds 3 --hand-step "" --csv "$R/tmaps_tune.csv"
      for id in ${TMAP_STEPS:-}; do
        bin=$(compgen -G "build/bin/${id}_*" | head -n 1)
        tmap_run "step $id $shape" "$bin" --m "$m" --n "$n" --k "$k" --reps 20 --settle-s 0
      done
    done
    cat "$R/tmaps.md"
    summary+=("tmaps ($((SECONDS - start)) s)")
    ;;
  roofline)
    start=$SECONDS
    size=${ROOFLINE_SIZE:-4096}
    guard timeout "${ROOFLINE_TIMEOUT_S:-540}" python3 scripts/profile.py --roofline --m "$size" --n "$size" --k "$size" \
      --csv "$R/roofline_$size.csv" > "$R/roofline.log" 2>&1
    rc=$?
    summary+=("roofline $size (rc=$rc, $((SECONDS - start)) s): $(grep -c . "$R/roofline_$size.csv" 2>/dev/null) lines")
    [ $rc -eq 0 ] || status=1
    ;;
esac
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
exit $status
