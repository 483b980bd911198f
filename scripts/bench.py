#!/usr/bin/env python3
"""Runs every built step at 4096^3 and 8192^3 (each step times cuBLAS in the same process), writes
results/<gpu>.csv and results/<gpu>.meta.json, prints the table, and redraws the figure and the
README table when matplotlib is present.

Usage: scripts/bench.py [--build build] [--sizes 4096 8192] [--steps 01 02 ...] [--out results]
A step that fails its check gets a FAIL row with no timing and makes the script exit 1.
Step 01 is skipped at a size where its launch would take over --max-launch-s seconds (estimated
from the previous size, time ~ n^3), and the table says so."""
import argparse
import csv
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def step_id(name):
    """The step id of a binary or kernel name: the part before the first '_' ("09b_stream_k" -> "09b")."""
    return name.split("_", 1)[0]


def steps_in(build):
    bins = sorted(p for p in (build / "bin").iterdir() if re.match(r"\d\d[a-z]?_", p.name) and os.access(p, os.X_OK))
    return bins


def nvidia_smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
        return out.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "results"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--steps", nargs="*", help="step ids (default: all built)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-launch-s", type=float, default=1.0)
    args = ap.parse_args()

    if args.reps < 20:
        ap.error("--reps must be at least 20 (the harness reports a median of at least 20 launches)")
    build = pathlib.Path(args.build)
    if not (build / "bin").is_dir():
        sys.exit(f"error: {build}/bin does not exist: run `make` first (or pass --build)")
    bins = [b for b in steps_in(build) if not args.steps or step_id(b.name) in args.steps]
    if not bins:
        sys.exit(f"no step binaries under {build}/bin: run `make` first")
    tmp = build / "bench_rows.csv"
    tmp.unlink(missing_ok=True)
    failures, notes, last_ms = [], [], {}
    for size in args.sizes:
        for b in bins:
            prev = last_ms.get(b.name)
            if prev is not None and prev[1] * (size / prev[0]) ** 3 / 1e3 > args.max_launch_s:
                notes.append(f"{b.name} skipped at {size}: one launch would take about "
                             f"{prev[1] * (size / prev[0]) ** 3 / 1e3:.1f} s (from {prev[1]:.0f} ms at {prev[0]})")
                print(notes[-1], flush=True)
                continue
            cmd = [str(b), "--m", str(size), "--n", str(size), "--k", str(size), "--reps", str(args.reps),
                   "--csv", str(tmp)]
            print("$", " ".join(cmd), flush=True)
            r = subprocess.run(cmd, capture_output=True, text=True)
            sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
            if r.returncode != 0:
                failures.append(f"{b.name} at {size}: exit {r.returncode}")
                continue
            with open(tmp) as f:
                rows = list(csv.DictReader(f))
            last_ms[b.name] = (size, float(rows[-1]["ms"]))

    rows = []
    if tmp.exists():
        with open(tmp) as f:
            rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("no step produced a result")
    gpu = rows[0]["gpu"]
    slug = "".join(c.lower() if c.isalnum() else "_" for c in gpu).strip("_")
    while "__" in slug:
        slug = slug.replace("__", "_")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = list(rows[0].keys())
    for fail in failures:  # a failed step has a row without timing
        name, size = fail.split(" at ")[0], int(fail.split(" at ")[1].split(":")[0])
        rows.append({**{k: "" for k in fields}, "step": step_id(name), "name": name.split("_", 1)[1], "m": size, "n": size,
                     "k": size, "check": "FAIL", "gpu": gpu})
    rows.sort(key=lambda r: (r["step"], int(r["m"])))
    csv_path = out / f"{slug}.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    meta = {
        "gpu": gpu,
        "driver_version": nvidia_smi("driver_version"),
        "max_sm_clock_mhz": nvidia_smi("clocks.max.sm"),
        "sm_clock_at_end_mhz": nvidia_smi("clocks.sm"),
        "power_limit": nvidia_smi("power.limit"),
        "date": datetime.date.today().isoformat(),
        "clocks": "left as found (never locked or changed)",
        "notes": notes,
        "failures": failures,
    }
    (out / f"{slug}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"\nwrote {csv_path} and {out / (slug + '.meta.json')}")

    subprocess.run([sys.executable, str(ROOT / "scripts" / "results_table.py"), str(csv_path), "--readme",
                    str(ROOT / "README.md")], check=False)
    try:
        import matplotlib  # noqa: F401
        subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_steps.py"), str(csv_path)], check=False)
    except ImportError:
        print("matplotlib not installed: docs/img/steps.png not redrawn (python3 -m pip install matplotlib)")
    if failures:
        print("FAILED:", "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
