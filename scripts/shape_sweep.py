"""The shapes of `make bench-shapes` (issue 30's sweep: every shape a transformer runs), the time plan
of the run, and the reading of its CSV that the figure (scripts/plot_shapes.py) and the table
(scripts/shapes_table.py) share: for each step and shape, the step's paired ratio to the best
reference of that process (the fastest of cuBLAS, cuBLASLt's best of 8 and the CUTLASS
configurations, i.e. the reference row with the smallest step speed / reference speed).

Layers of a 4096-wide model with a 14336-wide MLP and grouped-query attention (Llama-3-8B-like):
(N, K) = (4096, 4096) the attention output projection, (14336, 4096) the MLP up (and gate)
projection, (4096, 14336) the MLP down projection, (6144, 4096) the fused QKV projection
(4096 + 2 x 1024). C = A * B^T with A M x K: M is the number of tokens in the batch.

Beside the sweep, issue 46's random set (random_shapes): shapes drawn from a committed seed, that no
rule of a step was tuned on, in three classes of alignment (random_class). Their rows carry the
family "random". Its shapes have since been used to choose rules, so a held-out draw takes the same
generator from another seed S (bench.py --shapes --random-seed S): rows of family "random-S", reported
apart (random_family, is_random_family, random_seed_of)."""
import csv
import math
import pathlib
import random
import sys

NK_LAYERS = [(4096, 4096), (14336, 4096), (4096, 14336), (6144, 4096)]

# (family, shapes (M, N, K)) in the order the run, the figure and the table take them.
FAMILIES = [
    # decode: one new token per sequence, M = the batch (1 to 256); every layer, B (the weights)
    # dominates the bytes, so these are memory-bound up to M of about 128.
    ("decode", [(m, n, k) for m in (1, 4, 32, 128, 256) for n, k in NK_LAYERS]),
    # prefill and training: M = tokens of a prompt or a batch (512 to 16384), the layers but QKV.
    ("prefill", [(m, n, k) for m in (512, 2048, 8192, 16384) for n, k in NK_LAYERS[:3]]),
    # ragged: M and N a few elements past a multiple of every tile (2050, 8200) or of none (5000).
    ("ragged", [(2050, 2050, 2048), (5000, 5000, 5000), (8200, 8200, 8192)]),
    # long K: few output tiles for 132 SMs and a long reduction each (what split-K is for).
    ("long K", [(2048, 2048, 32768), (1024, 1024, 65536)]),
    # short K: many output tiles with a short main loop (prologue and epilogue weigh).
    ("short K", [(8192, 8192, 512)]),
]
SHAPES = [s for _, shapes in FAMILIES for s in shapes]

# Issue 46's validation set: shapes that no rule was tuned on. The rules of steps 24-28 were chosen on the
# sweep above (and a few probes beside it); these are drawn at random from a seed fixed here before any of
# them was measured (46, the number), so every run and every machine draws the same list. Step
# 39's rule was later chosen on this set's K%16==8 class, so for it another seed's draw (random_family)
# is the held-out check.
RANDOM_SEED = 46
RANDOM_COUNT = 102            # 34 shapes per class
RANDOM_M = (1, 16384)         # M log-uniform: decode batches to long prefills
RANDOM_NK = (256, 32768)      # N and K log-uniform
RANDOM_FAMILY = "random"      # the family of RANDOM_SEED's draw; another seed S's is "random-S" (random_family)
# The classes, by the alignment the kernels care about. K % 8 == 0 always (the harness needs 16-byte
# rows of A and B for TMA). "K%16==8": a row of A and B is 2K bytes, 16 past a multiple of 32, so TMA's
# runs start inside a 32-byte sector (step 28's padded pitch is for these). "N%8!=0": C's rows are not
# 16 bytes long, so no TMA store of C (the CUTLASS references refuse such N).
RANDOM_CLASSES = ("aligned", "K%16==8", "N%8!=0")
RANDOM_CLASS_MEANING = {"aligned": "K % 16 == 0 and N % 8 == 0", "K%16==8": "K % 16 == 8, N % 8 == 0",
                        "N%8!=0": "N % 8 != 0, K % 16 == 0"}


def random_class(m, n, k):
    """The class of the random set that (M, N, K) belongs to, from N and K alone (M plays no part; the
    CSV has no class column): 'aligned', 'K%16==8' or 'N%8!=0'; None for a shape in none of them (K not
    a multiple of 8, or K % 16 == 8 with N % 8 != 0)."""
    if k % 8:
        return None
    if n % 8 == 0:
        return "aligned" if k % 16 == 0 else "K%16==8"
    return "N%8!=0" if k % 16 == 0 else None


def _log_uniform_int(rng, lo, hi):
    """An integer in [lo, hi] whose logarithm is uniform (rounded to the nearest integer)."""
    return min(hi, max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))


def _nearest(x, mod, rem, lo, hi):
    """The integer nearest x (the lower one on a tie) that is rem modulo mod and lies in [lo, hi]."""
    below = x - (x - rem) % mod
    v = below if x - below <= below + mod - x else below + mod
    if v < lo:
        v += mod
    if v > hi:
        v -= mod
    return v


def random_shapes(seed=RANDOM_SEED, count=RANDOM_COUNT):
    """Issue 46's random set: `count` shapes (M, N, K, class), a third in each class of RANDOM_CLASSES,
    in the order drawn (the classes take turns). M log-uniform on RANDOM_M, N and K log-uniform on
    RANDOM_NK, then moved to the nearest values of the class within the same range: K to a multiple of
    16 (or to 8 past one), N to a multiple of 8 (or, where it is one, one off it). A shape of the sweep
    or one drawn before is drawn again. Pure: the same seed gives the same list (random.Random, and
    only its random(), whose sequence Python keeps from version to version)."""
    if not isinstance(count, int) or count <= 0 or count % len(RANDOM_CLASSES):
        raise ValueError(f"random_shapes: count must be a positive multiple of {len(RANDOM_CLASSES)} (a third "
                         f"per class), not {count!r}")
    rng = random.Random(seed)
    (lo, hi), taken, out = RANDOM_NK, set(SHAPES), []
    while len(out) < count:
        cls = RANDOM_CLASSES[len(out) % len(RANDOM_CLASSES)]
        m = _log_uniform_int(rng, *RANDOM_M)
        n = _log_uniform_int(rng, lo, hi)
        k = _log_uniform_int(rng, lo, hi)
        k = _nearest(k, 16, 8 if cls == "K%16==8" else 0, lo, hi)
        if cls == "N%8!=0":
            n = n if n % 8 else n + 1 if n < hi else n - 1
        else:
            n = _nearest(n, 8, 0, lo, hi)
        if (m, n, k) in taken:
            continue
        taken.add((m, n, k))
        out.append((m, n, k, cls))
    return out


def random_family(seed=RANDOM_SEED):
    """The family of the rows of random_shapes(seed): "random" (RANDOM_FAMILY) for the committed seed,
    issue 46's set; "random-S" for a held-out draw from another seed S, e.g. "random-4701". Raises
    ValueError for a seed that is not an integer >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"random_family: a seed is an integer >= 0, not {seed!r}")
    return RANDOM_FAMILY if seed == RANDOM_SEED else f"{RANDOM_FAMILY}-{seed}"


def random_seed_of(family):
    """The seed whose draw the rows of `family` are: RANDOM_SEED for "random", S for "random-S"; None for
    any other family (the sweep's, "other", or a name random_family never gives, such as "random-46" or
    "random-x")."""
    prefix = RANDOM_FAMILY + "-"
    if family == RANDOM_FAMILY:
        return RANDOM_SEED
    if isinstance(family, str) and family.startswith(prefix):
        digits = family[len(prefix):]
        if digits.isascii() and digits.isdigit() and random_family(int(digits)) == family:
            return int(digits)
    return None


def is_random_family(family):
    """True for the rows of any random draw: issue 46's set ("random") or a held-out one ("random-S").
    Such rows are kept out of the sweep's summaries and reported per draw."""
    return random_seed_of(family) is not None


def random_family_key(family):
    """The order of the random draws in the table and the figure: the committed seed's first, then the
    held-out ones by seed; (0, 0) for any other family."""
    seed = random_seed_of(family)
    return (0, 0) if seed is None or seed == RANDOM_SEED else (1, seed)


RANDOM_SHAPES = [(m, n, k) for m, n, k, _ in random_shapes()]
_RANDOM_SET = set(RANDOM_SHAPES)
FAMILY_ORDER = [f for f, _ in FAMILIES] + ["other", RANDOM_FAMILY]

# Fewer paired rounds for the biggest shapes: at 1 TFLOP or more per GEMM (over 1.5 ms a launch at the
# power cap) a shape gets the harness's minimum of 20 rounds; every other shape gets --reps (30).
BIG_FLOP = 1e12
MIN_REPS = 20

# The time plan of one step process: an ESTIMATE from assumed constants, not a measurement (the run
# prints each process's real time and the total, against which to correct these).
PROCESS_S = 2.5        # assumed: start, CUDA context, cuBLAS and cuBLASLt handles, inputs, warm-up
HOST_S_PER_C = 12e-9   # assumed: per element of C, copying it to the host and comparing it, ~4 times
SETTLE_S = 0.5         # the harness's --settle-s default: untimed paired rounds
LT_SELECTION = 8 * 11  # cuBLASLt's 8 candidates, 1 warm-up and 10 timed launches each
CONTENDERS = 5         # the step, cuBLAS, cuBLASLt best, two CUTLASS configurations
LAUNCH_GAP_S = 60e-6   # assumed: the L2 flush and the clock probe around every timed launch
PLAN_TFLOPS = 600.0    # assumed bf16 speed of every kernel, for the plan only
PLAN_HBM_TBPS = 4.3    # device-to-device copy on the H200 (docs/machine.md): the plan's memory-bound time
BYTES_BF16 = 2


def family_of(m, n, k):
    """The sweep's family of (M, N, K); "random" for a shape of the committed random set; else "other"."""
    for fam, shapes in FAMILIES:
        if (m, n, k) in shapes:
            return fam
    return RANDOM_FAMILY if (m, n, k) in _RANDOM_SET else "other"


def reps_for(m, n, k, reps):
    return min(reps, MIN_REPS) if 2.0 * m * n * k >= BIG_FLOP else reps


def gemm_bytes(m, n, k):
    """Bytes of A (M x K), B (N x K) and C (M x N) in bf16: what a GEMM must move at least once."""
    return BYTES_BF16 * (m * k + n * k + m * n)


def plan_seconds(m, n, k, reps):
    """Estimated wall time of one step process at this shape (see the constants above)."""
    kernel = max(2.0 * m * n * k / (PLAN_TFLOPS * 1e12), gemm_bytes(m, n, k) / (PLAN_HBM_TBPS * 1e12))
    timed = (3 + reps) * CONTENDERS * (kernel + LAUNCH_GAP_S)
    return PROCESS_S + HOST_S_PER_C * m * n + SETTLE_S + LT_SELECTION * kernel + timed


def label(m, n, k):
    return f"{m}x{n}x{k}"


def book_label(m, n, k):
    """The book's spelling of a shape in its tables: 256 × 4096 × 4096, or 5000³ for a cube."""
    return f"{m}³" if m == n == k else f"{m} × {n} × {k}"


def _num(v):
    try:
        return float(v) if v not in ("", None) else None
    except ValueError:
        return None


def read_rows(csv_path, columns=()):
    """A shapes CSV's burst rows as dicts, m, n and k as integers; exits with one line when it cannot be
    read, lacks one of step, m, n, k, kernel and `columns`, or has a shape that is not three integers."""
    need = ("step", "m", "n", "k", "kernel") + tuple(columns)
    try:
        with open(csv_path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                sys.exit(f"error: {csv_path}: no column {', '.join(missing)} (not a CSV of bench.py --shapes)")
            rows = [r for r in reader if r.get("mode", "burst") == "burst"]
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"error: cannot read {csv_path}: {getattr(e, 'strerror', None) or e}")
    for line, r in enumerate(rows, start=2):
        try:
            r["m"], r["n"], r["k"] = int(r["m"]), int(r["n"]), int(r["k"])
        except (TypeError, ValueError):
            sys.exit(f"error: {csv_path}:{line}: m, n and k must be integers (got {r.get('m')}, {r.get('n')}, "
                     f"{r.get('k')}); a truncated or edited file?")
    return rows


def read_results(csv_path):
    """One dict per (step, shape) of a shapes CSV (any subset of steps and shapes), in step order then
    the sweep's shape order: step, name, family, m, n, k, status ('ok', or the step row's check, e.g.
    'REFUSED (...)', 'FAIL (exit 1)'), tflops, ms, clock (step's SM MHz), ratio, q25, q75 (to the best
    reference; None without one), best (its kernel name), best_clock, refs {kernel: ratio}, untimed_refs
    (references dropped for computing another C than cuBLAS)."""
    groups = {}
    for r in read_rows(csv_path):
        groups.setdefault((r["step"], r["m"], r["n"], r["k"]), []).append(r)
    out = []
    for (sid, m, n, k), group in groups.items():
        me = next((r for r in group if r["kernel"] == "step"), None)
        if me is None:
            continue
        fam = me.get("family") or family_of(m, n, k)
        res = {"step": sid, "name": me.get("name", ""),
               "family": fam if fam in FAMILY_ORDER or is_random_family(fam) else "other",
               "m": m, "n": n, "k": k, "tflops": _num(me.get("tflops")), "ms": _num(me.get("ms")),
               "clock": _num(me.get("clock_mhz")), "ratio": None, "q25": None, "q75": None, "best": "",
               "best_clock": None, "best_ms": None, "refs": {}}
        res["status"] = "ok" if res["tflops"] is not None else (me.get("check") or "no timing")
        refs = [r for r in group if r["kernel"] != "step" and _num(r.get("step_ratio")) is not None]
        res["refs"] = {r["kernel"]: _num(r["step_ratio"]) for r in refs}
        # references that ran but were not timed (a wrong C, dropped by the harness: bench.py's row)
        res["untimed_refs"] = sorted(r["kernel"] for r in group
                                     if r["kernel"] != "step" and (r.get("check") or "").startswith("FAIL (reference"))
        if res["status"] == "ok" and refs:
            best = min(refs, key=lambda r: _num(r["step_ratio"]))
            res.update(ratio=_num(best["step_ratio"]), q25=_num(best.get("step_ratio_q25")),
                       q75=_num(best.get("step_ratio_q75")), best=best["kernel"],
                       best_clock=_num(best.get("clock_mhz")), best_ms=_num(best.get("ms")))
        out.append(res)
    return sorted(out, key=lambda r: (step_key(r["step"]), shape_key(r)))


def step_key(sid):
    digits = "".join(c for c in sid if c.isdigit())
    return (int(digits) if digits else 1 << 30, sid)


def shape_key(r):
    """The order of the table and the figure: by family, the sweep's order within it; the random draws
    after it (the committed seed's, then the held-out ones by seed), each by class, then by shape."""
    shp = (r["m"], r["n"], r["k"])
    rand = is_random_family(r["family"])
    cls = random_class(*shp) if rand else None
    return (FAMILY_ORDER.index(RANDOM_FAMILY if rand else r["family"]), random_family_key(r["family"]),
            SHAPES.index(shp) if shp in SHAPES else len(SHAPES),
            RANDOM_CLASSES.index(cls) if cls in RANDOM_CLASSES else len(RANDOM_CLASSES), shp)


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def pending_commit(csv_path):
    """True when a benchmark killed inside its commit left results/ half moved (scripts/results_io.py)."""
    return (pathlib.Path(csv_path).parent / ".bench-staging" / "COMMIT").exists()
