#!/usr/bin/env bash
# compute-sanitizer over every built step (make sanitize; scripts/gpu_visit.sh sanitizer):
#   scripts/sanitize.sh [--build DIR] [--tools memcheck,racecheck,initcheck,synccheck] [--steps 06,14]
#                       [--shapes M:N:K,...]   (these shapes for every step and tool instead of the chosen ones)
# memcheck, racecheck and synccheck run each step executable with --check-only on small ragged
# shapes; initcheck, which tracks every byte and ran past 200 s per step on the larger ones, runs 67x92x48
# and a multi-tile ragged shape built from the step's tile (3 x 3 blocks, partial last ones, a K tail:
# `python3 scripts/steps.py initcheck-shapes NAME`). Which shapes a
# step gets follows from its registration (`python3 scripts/steps.py sanitize-shapes NAME` prints them;
# scripts/steps.py, sanitize_shapes, says why each): 67x92x48 for every step (every block an edge
# block); more tiles than SMs with ragged last tiles for the Hopper and stream-K steps; whole interior
# blocks for the block-tiled fp32 steps; a second tile per block for the persistent steps; the fixup's
# shapes for the stream-K steps; and a step's own shapes from scripts/step_roles.tsv.
# Then the proof that the tools are wired in: build/bin/fixture_racy (a missing __syncthreads) must
# be reported by racecheck, build/bin/fixture_oob (a read past A) by memcheck; if either is NOT
# reported, that is a failure. And what initcheck cannot see: build/bin/probe_initcheck_tma writes a
# buffer with plain stores (st: must be clean) and with one TMA store (tma: its line says whether
# initcheck reported the copy as uninitialized; the harness NaN-fills every buffer a TMA store writes,
# C and cuBLAS's reference alike, so the steps' runs stay meaningful either way). And what racecheck
# sees of a shared-memory ring ordered by mbarriers: build/bin/probe_racecheck_ring's consumer warp frees
# each stage with every lane's own arrive, the stage filled by plain stores (st32) or by cp.async whose
# arrive fires as the copies land (noinc32, as step 40 fills and frees its stages' scales): both must be
# clean; and with __syncwarp then lane 0's arrive (st: its line says whether racecheck follows that chain).
# Prints one line per step and tool, then a summary. Logs: $OUT/sanitize/ (or sanitize_out/).
# Environment: COMPUTE_SANITIZER (the binary), SANITIZER_JOBS (runs at once, default 4), SANITIZER_RUN_TIMEOUT_S (per run, default 180),
# SANITIZER_RACECHECK_TIMEOUT_S (per racecheck run, default twice the other).
# Exit 0: no finding, both fixtures caught and the probes as they must be; 1: a finding, a failed run,
# a fixture not caught, or a probe that copied wrong values or (st32, noinc32) was reported;
# 2: bad arguments, no compute-sanitizer, no binaries or no CUDA device; 124: stopped (SIGTERM,
# SIGINT), every run ended with it.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
TOOLS=memcheck,racecheck,initcheck,synccheck
STEPS=
SHAPES=
while [ $# -gt 0 ]; do
  case "$1" in
    --build|--tools|--steps|--shapes)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: sanitize.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;
  esac
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --shapes) SHAPES=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 { if (!/^#/) exit; print }' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: sanitize.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$SHAPES" ] && ! [[ "$SHAPES" =~ ^[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*(,[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*)*$ ]]; then
  echo "error: sanitize.sh: --shapes '$SHAPES' is not M:N:K[,M:N:K...] with positive integers" >&2; exit 2
fi
IFS=, read -r -a tools <<< "$TOOLS"
for t in "${tools[@]}"; do
  case "$t" in memcheck|racecheck|initcheck|synccheck) ;; *) echo "error: sanitize.sh: unknown tool '$t'" >&2; exit 2 ;; esac
done
LOGS=${OUT:-sanitize_out}/sanitize
# One run's limit: on the H200 a whole clean pass (258 runs, 4 at a time) took 122 s; a run past this
# is taken for a hang (reported as "timed out", a failure), and must not outlive a time-limited visit.
PER_RUN_S=${SANITIZER_RUN_TIMEOUT_S:-180}
[[ "$PER_RUN_S" =~ ^[1-9][0-9]*$ ]] || { echo "error: sanitize.sh: SANITIZER_RUN_TIMEOUT_S='$PER_RUN_S' is not a positive number of seconds" >&2; exit 2; }
# Racecheck follows every shared-memory access: step 40's racecheck at 1536 x 3072 x 2304 ran past 180 s
# twice with three other runs on the GPU (H100, 2026-12-07) where step 41's identical kernel passed.
RACE_RUN_S=${SANITIZER_RACECHECK_TIMEOUT_S:-$((2 * PER_RUN_S))}
[[ "$RACE_RUN_S" =~ ^[1-9][0-9]*$ ]] || { echo "error: sanitize.sh: SANITIZER_RACECHECK_TIMEOUT_S='$RACE_RUN_S' is not a positive number of seconds" >&2; exit 2; }
[[ "${SANITIZER_JOBS:-4}" =~ ^[1-9][0-9]*$ ]] || { echo "error: sanitize.sh: SANITIZER_JOBS='${SANITIZER_JOBS}' is not a positive number of runs" >&2; exit 2; }

# COMPUTE_SANITIZER names another binary (the CPU test of this script passes a stub).
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$SAN" ] && [ -x "$c" ] && SAN=$c
done
[ -z "$SAN" ] && { echo "error: sanitize.sh: no compute-sanitizer on PATH or in /usr/local/cuda/bin" >&2; exit 2; }
mkdir -p "$LOGS"
# Stopped (a visit's time limit, Ctrl-C): stop every sanitizer run and its step too, so none is left
# holding the GPU (bash runs a trap only between commands: the runs are waited for in the background).
kill_tree() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$c"; done
  kill -TERM "$1" 2>/dev/null
}
stop_runs() {
  local f
  for f in "$LOGS"/*.log.pid; do [ -f "$f" ] && kill -TERM -- "-$(cat "$f")" 2>/dev/null; rm -f "$f"; done
  for f in $(ps -o pid= --ppid $$ 2>/dev/null); do kill_tree "$f"; done
}
trap 'trap "" TERM INT; stop_runs; exit 124' TERM INT  # ignore the repeats (timeout signals its whole group too)

bins=()
for b in "$BUILD"/bin/[0-9][0-9]_* "$BUILD"/bin/[0-9][0-9][a-z]_*; do
  [ -x "$b" ] || continue
  id=$(basename "$b"); id=${id%%_*}
  if [ -n "$STEPS" ] && [[ ",$STEPS," != *",$id,"* ]]; then continue; fi
  bins+=("$b")
done
[ ${#bins[@]} -eq 0 ] && { echo "error: sanitize.sh: no step executables in $BUILD/bin (make first)" >&2; exit 2; }
if [ -n "$STEPS" ]; then  # every id asked for must be a built step (a typo must not shrink the run silently)
  IFS=, read -r -a asked <<< "$STEPS"
  for id in "${asked[@]}"; do
    compgen -G "$BUILD/bin/${id}_*" > /dev/null || { echo "error: sanitize.sh: --steps: no step executable $BUILD/bin/${id}_* (ids as in kernels/NN_name.cu)" >&2; exit 2; }
  done
fi
for f in fixture_racy fixture_oob probe_initcheck_tma probe_racecheck_ring; do
  [ -x "$BUILD/bin/$f" ] || { echo "error: sanitize.sh: $BUILD/bin/$f is missing (make fixtures)" >&2; exit 2; }
done
# Without a GPU every run would "fail" the same way: say so once instead (SANITIZE_NO_PROBE=1 skips
# this, for the CPU test that runs the script against a stub sanitizer).
if [ -z "${SANITIZE_NO_PROBE:-}" ]; then
  probe=$("${bins[0]}" --m 8 --n 8 --k 16 --check-only 2>&1); probe_rc=$?  # K = 16: a shape every step takes (fp8: K % 16)
  if [ $probe_rc -eq 2 ] && grep -q "no CUDA device" <<< "$probe"; then
    echo "error: sanitize.sh: no CUDA device" >&2; exit 2
  fi
fi

# The shapes of one step executable, M:N:K each (scripts/steps.py reads the step's registration).
shapes_of() {
  python3 scripts/steps.py sanitize-shapes "$(basename "$1")"
}
# The shapes of one tool and executable: initcheck's are smaller.
tool_shapes() {
  if [ -n "$SHAPES" ]; then tr ',' '\n' <<< "$SHAPES"; return; fi
  if [ "$1" = initcheck ]; then python3 scripts/steps.py initcheck-shapes "$(basename "$2")"; else shapes_of "$2"; fi
}

# Runs one tool on one executable and shape, writing LOG and LOG.rc; 0: clean, else a finding (99),
# a failed run or a timeout (124).
run_one() {
  local tool=$1 bin=$2 m=$3 n=$4 k=$5 log=$6
  # The step's check launches cuBLAS's kernels too (its reference); racecheck's reports on those are
  # sorted out by cublas_only_races below.
  run_logged "$log" "$SAN" --tool "$tool" --error-exitcode 99 "$bin" --m "$m" --n "$n" --k "$k" --check-only
  local rc=$?
  echo "$rc" > "$log.rc"
  return $rc
}
# Runs a command under the per-run limit with its output in LOG. timeout runs it in a process group of
# its own (its pid): written to LOG.pid while it runs, so that a stopped sanitize.sh can end the group
# even when the shells between are gone.
run_logged() {
  local log=$1 limit=$PER_RUN_S
  shift
  [[ " $* " == *" --tool racecheck "* ]] && limit=$RACE_RUN_S
  timeout -k 10 "$limit" "$@" > "$log" 2>&1 &
  local group=$!
  echo "$group" > "$log.pid"
  wait "$group"
  local rc=$?
  rm -f "$log.pid"
  return $rc
}
export -f run_one run_logged
export SAN PER_RUN_S RACE_RUN_S

# Every (tool, step, shape) run, SANITIZER_JOBS at a time (default 4: they share the GPU).
jobs_file="$LOGS/jobs.txt"
: > "$jobs_file"
rm -f "$LOGS"/*.log "$LOGS"/*.log.rc "$LOGS"/*.log.pid
for tool in "${tools[@]}"; do
  for bin in "${bins[@]}"; do
    for shape in $(tool_shapes "$tool" "$bin"); do
      IFS=: read -r m n k <<< "$shape"
      echo "$tool $bin $m $n $k $LOGS/${tool}_$(basename "$bin")_${m}x${n}x${k}.log" >> "$jobs_file"
    done
  done
done
# The largest products first (M N K, racecheck's counted twice), so the longest runs do not start last.
awk '{ w = $3 * $4 * $5 * ($1 == "racecheck" ? 2 : 1); printf "%.0f %s\n", w, $0 }' "$jobs_file" | sort -s -k1,1 -n -r | cut -d' ' -f2- > "$jobs_file.sorted"
mv "$jobs_file.sorted" "$jobs_file"
echo "sanitize: $(wc -l < "$jobs_file") runs, ${SANITIZER_JOBS:-4} at a time, largest first; logs in $LOGS"
xargs -P "${SANITIZER_JOBS:-4}" -L 1 bash -c 'run_one "$@"' _ < "$jobs_file" &
wait $!

# Racecheck also instruments the step's reference, cuBLAS, and reported hazards inside its nvjet
# kernels on the H200 (2026-12-01): nvjet_sm90_tss_64x32_64x16_2x4_h_bz_splitK_TNT at 128 x 512 x 4096,
# nvjet_sm90_tss_192x192_64x4_2x1_v_bz_coopB_TNN at 1536 x 3072 x 2304, with the step's check passing.
# Leaving them out (--kernel-name-exclude kns=nvjet) broke racecheck itself ("failed to handle a
# hardware exception" at 1445 x 2856 x 72 for steps 10-21). So a run whose every reported access lies
# in an nvjet kernel, and whose check passed, is not the step's finding: 0 here (said on its line).
# Step 00 is cuBLAS itself and gets no such allowance.
cublas_only_races() {
  local log=$1 name=$2
  case "$name" in 00_*|fixture_*) return 1 ;; esac
  grep -q "Race reported" "$log" || return 1
  grep -qE "check against .* PASS" "$log" || return 1
  grep -q "Target application returned an error" "$log" && return 1
  ! grep -E "access at " "$log" | grep -qv "access at nvjet_"
}

# initcheck also watches cuBLAS, the check's reference: at 128 x 128 x 16384 (H200, 2026-12-02) it
# reported 180,224 uninitialized 4-byte reads, every one inside cuBLAS's own split-K reduction
# (cublasLt::splitKreduce_kernel reading the partial sums its split-K GEMM kernel wrote, by a path
# initcheck does not see). A run whose every report lies in a cuBLAS kernel, with no host-side report
# and a passing check, is not the step's finding (said on its line). Step 00 gets no such allowance.
cublas_only_uninit() {
  local log=$1 name=$2
  case "$name" in 00_*|fixture_*|probe_*) return 1 ;; esac
  grep -qE "check against .* PASS" "$log" || return 1
  grep -q "Host API" "$log" && return 1
  local reports cublas
  reports=$(grep -c "Uninitialized __global__ memory read" "$log")
  cublas=$(grep -cE "^=+ +at (void )?(cublasLt::|nvjet_)" "$log")
  [ "$reports" -gt 0 ] && [ "$reports" -eq "$cublas" ]
}

failures=0 lines=()
for tool in "${tools[@]}"; do
  for bin in "${bins[@]}"; do
    name=$(basename "$bin") bad=() ran=0 cublas=()
    for shape in $(tool_shapes "$tool" "$bin"); do
      IFS=: read -r m n k <<< "$shape"
      log="$LOGS/${tool}_${name}_${m}x${n}x${k}.log"
      ran=$((ran + 1))
      rc=$(cat "$log.rc" 2>/dev/null || echo "never ran")
      if [ "$rc" = 99 ] && [ "$tool" = racecheck ] && cublas_only_races "$log" "$name"; then
        cublas+=("${m}x${n}x${k}")
      elif [ "$rc" = 99 ] && [ "$tool" = initcheck ] && cublas_only_uninit "$log" "$name"; then
        cublas+=("${m}x${n}x${k}")
      elif [ "$rc" != 0 ]; then
        why="exit $rc"
        [ "$rc" = 99 ] && why=$(grep -m1 -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|Invalid|Uninitialized|Barrier" "$log" | sed 's/^=* *//')
        [ "$rc" = 124 ] && why="timed out after $([ "$tool" = racecheck ] && echo "$RACE_RUN_S" || echo "$PER_RUN_S") s"
        bad+=("${m}x${n}x${k}: $why")
      fi
    done
    if [ ${#bad[@]} -eq 0 ]; then
      line=$(printf "%-10s %-28s PASS (%d shapes)" "$tool" "$name" "$ran")
      [ ${#cublas[@]} -gt 0 ] && line+=" (reports only inside cuBLAS's reference kernels at $(IFS=,; echo "${cublas[*]}"))"
    else
      failures=$((failures + 1))
      line=$(printf "%-10s %-28s FAIL %s (logs: %s/%s_%s_*.log)" "$tool" "$name" "$(IFS=';'; echo "${bad[*]}")" "$LOGS" "$tool" "$name")
    fi
    echo "$line"
    lines+=("$line")
  done
done

# The tools must catch the deliberately broken fixtures (exit 99 from the sanitizer and its report).
expect_caught() {
  local tool=$1 fixture=$2 pattern=$3
  local log="$LOGS/${tool}_${fixture}_expected_finding.log"
  run_one "$tool" "$BUILD/bin/$fixture" 64 64 64 "$log"
  local rc=$?
  if [ $rc -eq 99 ] && grep -qE "$pattern" "$log"; then
    line=$(printf "%-10s %-28s caught as expected (%s)" "$tool" "$fixture" "$(grep -m1 -oE "$pattern" "$log")")
  else
    failures=$((failures + 1))
    line=$(printf "%-10s %-28s FAIL: NOT reported (exit %d; want exit 99 and /%s/; log %s): the tool is not wired in" \
      "$tool" "$fixture" "$rc" "$pattern" "$log")
  fi
  echo "$line"
  lines+=("$line")
}
# What initcheck sees of plain stores and of a TMA store (tests/probes/initcheck_tma.cu).
if [[ ",$TOOLS," == *",initcheck,"* ]]; then
  for mode in st tma; do
    log="$LOGS/initcheck_probe_$mode.log"
    run_logged "$log" "$SAN" --tool initcheck --error-exitcode 99 "$BUILD/bin/probe_initcheck_tma" "$mode"
    rc=$?
    reports=$(grep -c "Uninitialized access" "$log")
    if [ "$mode" = st ]; then
      if [ $rc -eq 0 ]; then line=$(printf "%-10s %-28s clean, as it must be (plain stores)" initcheck "probe st")
      else failures=$((failures + 1)); line=$(printf "%-10s %-28s FAIL: exit %d on plain stores (log %s)" initcheck "probe st" "$rc" "$log"); fi
    elif [ $rc -eq 99 ]; then
      line=$(printf "%-10s %-28s %d report(s): initcheck does not see a TMA store's writes (the harness NaN-fills what TMA writes)" initcheck "probe tma" "$reports")
    elif [ $rc -eq 0 ]; then
      line=$(printf "%-10s %-28s clean: this initcheck sees TMA stores" initcheck "probe tma")
    else
      failures=$((failures + 1)); line=$(printf "%-10s %-28s FAIL: exit %d (log %s)" initcheck "probe tma" "$rc" "$log")
    fi
    echo "$line"
    lines+=("$line")
  done
fi
# What racecheck sees of a ring one warp fills and another reads (tests/probes/racecheck_ring.cu).
if [[ ",$TOOLS," == *",racecheck,"* ]]; then
  for mode in st32 noinc32 st; do
    log="$LOGS/racecheck_probe_$mode.log"
    run_logged "$log" "$SAN" --tool racecheck --error-exitcode 99 "$BUILD/bin/probe_racecheck_ring" "$mode"
    rc=$?
    hazards=$(grep -m1 -oE "RACECHECK SUMMARY: [0-9]+ hazard" "$log" | grep -oE "[0-9]+")
    if ! grep -q "values right" "$log"; then  # racecheck's exit code would hide the probe's own failure
      failures=$((failures + 1)); line=$(printf "%-10s %-28s FAIL: the probe did not copy the right values (exit %d; log %s)" racecheck "probe $mode" "$rc" "$log")
    elif [ $rc -eq 0 ] && [ "$mode" != st ]; then
      line=$(printf "%-10s %-28s clean, as it must be (each reading lane arrives on the empty barrier)" racecheck "probe $mode")
    elif [ $rc -eq 0 ]; then
      line=$(printf "%-10s %-28s clean: this racecheck follows __syncwarp then lane 0's arrive" racecheck "probe $mode")
    elif [ $rc -eq 99 ] && [ "$mode" = st ]; then
      line=$(printf "%-10s %-28s %s hazard(s): racecheck does not follow __syncwarp then lane 0's arrive (why step 40's lanes each arrive)" racecheck "probe $mode" "${hazards:-?}")
    else
      failures=$((failures + 1)); line=$(printf "%-10s %-28s FAIL: exit %d (log %s)" racecheck "probe $mode" "$rc" "$log")
    fi
    echo "$line"
    lines+=("$line")
  done
fi
expect_caught racecheck fixture_racy "RACECHECK SUMMARY: [1-9][0-9]* hazard|Race reported|[Hh]azard"
expect_caught memcheck fixture_oob "Invalid __global__ read"

echo
echo "==== compute-sanitizer summary ($(IFS=,; echo "${tools[*]}"); logs in $LOGS) ===="
printf '%s\n' "${lines[@]}" > "$LOGS/summary.txt"
if [ $failures -eq 0 ]; then
  echo "sanitize: PASS: ${#bins[@]} steps x ${#tools[@]} tools clean; both fixtures caught ($SECONDS s)"
  exit 0
fi
echo "sanitize: FAIL: $failures line(s) failed (see above) ($SECONDS s)"
exit 1
