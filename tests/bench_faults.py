#!/usr/bin/env python3
"""Fault injection on the benchmark's writes (run by make test: tests/test_bench.cpp). The benchmark
(scripts/bench.py) runs here against stand-in step executables (this file, run as a step: they answer
the harness's command line and append rows as the real ones do) and a stand-in nvidia-smi, in a
scratch copy of results/; the faults are real signals, a full disk (injected), another process on the
GPU, a shape the GPU cannot hold, and a kill in the middle of the commit. After each, every file of
results/ must be whole and all from one run (each run stamps its own tag into its rows and, through
the stand-in nvidia-smi, its .meta.json). The twin (BENCH_UNSAFE_WRITES=1: each file written in place,
as the benchmark once did) must show the damage the same kill does then; if it did not, this test
could not tell.

  tests/bench_faults.py --repo DIR --scratch DIR     prints one line per case and "N passed, N failed"
"""
import argparse
import csv
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

STEPS = ["01_naive", "14_two_consumers", "23_pingpong_stream_k"]
HEADER = ("step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
          "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
          "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date")


def standin_step(argv):
    """A step executable: --check-only passes; a run appends its step and cuBLAS rows to --csv, tagged
    STANDIN_RUN, after STANDIN_SLEEP seconds; M = STANDIN_OOM_M is refused as out of memory (exit 2)."""
    a = {argv[i]: argv[i + 1] for i in range(1, len(argv) - 1) if argv[i].startswith("--")}
    name = pathlib.Path(argv[0]).name
    sid = name.split("_")[0]
    if "--check-only" in argv:
        return 0
    m, n, k = a.get("--m"), a.get("--n"), a.get("--k")
    if m == os.environ.get("STANDIN_OOM_M"):
        print(f"error: {name} refuses M={m} N={n} K={k}: out of device memory: 96 GiB needed, 80 GiB free",
              file=sys.stderr)
        return 2
    time.sleep(float(os.environ.get("STANDIN_SLEEP", "0")))
    tag = os.environ.get("STANDIN_RUN", "run")
    path = pathlib.Path(a["--csv"])
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a") as f:
        if new:
            f.write(HEADER + "\n")
        for kernel, ratio in (("step", "1.0"), ("cublas", "0.9")):
            f.write(f"{sid},{name[len(sid) + 1:]},\"stand-in\",bf16,{m},{n},{k},burst,{kernel},{tag},1.0,1.0,1.0,1.0,"
                    f"{ratio},{ratio},{ratio},20,1500,probe,,,,,,pass,Stand-in GPU,132,60,1980,700,13.0,13.0,13.1.0,"
                    f"2026-12-02\n")
    return 0


def standin_smi(argv):
    """nvidia-smi: the queries bench.py makes; STANDIN_BUSY lists a compute process."""
    q = next((x for x in argv if x.startswith("--query")), "")
    if q.startswith("--query-compute-apps"):
        if os.environ.get("STANDIN_BUSY"):
            print("4242, python3")
        return 0
    if "driver_version" in q:
        print(os.environ.get("STANDIN_RUN", "run"))
    elif "name" in q:
        print("Stand-in GPU")
    else:
        print("1")
    return 0


class Case:
    def __init__(self, repo, scratch):
        self.repo, self.root = pathlib.Path(repo), pathlib.Path(scratch)
        self.build, self.out, self.smi = self.root / "build", self.root / "results", self.root / "smi"
        shutil.rmtree(self.root, ignore_errors=True)
        (self.build / "bin").mkdir(parents=True)
        self.smi.mkdir()
        for s in STEPS:
            self.link(self.build / "bin" / s)
        self.link(self.smi / "nvidia-smi")

    def link(self, path):
        path.write_text(f"#!/bin/sh\nexec {sys.executable} {pathlib.Path(__file__).resolve()} \"$0\" \"$@\"\n")
        path.chmod(0o755)

    def env(self, **kv):
        e = dict(os.environ, PATH=f"{self.smi}:{os.environ['PATH']}")
        for k in ("BENCH_FAULT", "BENCH_UNSAFE_WRITES", "STANDIN_BUSY", "STANDIN_OOM_M", "STANDIN_SLEEP"):
            e.pop(k, None)
        e.update({k: str(v) for k, v in kv.items()})
        return e

    def cmd(self, *extra):
        return [sys.executable, str(self.repo / "scripts/bench.py"), "--build", str(self.build), "--out", str(self.out),
                "--sizes", "256", "512", "--sustained", "0", "--stability", "2", "--reps", "20", "--no-docs", *extra]

    def run(self, *extra, **env):
        return subprocess.run(self.cmd(*extra), env=self.env(**env), capture_output=True, text=True)

    def start(self, *extra, **env):
        return subprocess.Popen(self.cmd(*extra), env=self.env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def snapshot(self):
        return {p.name: p.read_bytes() for p in sorted(self.out.glob("*")) if p.is_file()}

    def state(self):
        """(run tag of every result file, or the problem found): whole and from one run, or not."""
        tags = set()
        files = sorted(p for p in self.out.glob("*") if p.is_file())
        if not files:
            return "empty"
        for p in files:
            if p.suffix == ".json":
                try:
                    tags.add(json.loads(p.read_text())["driver_version"])
                except (ValueError, KeyError) as e:
                    return f"{p.name} is damaged ({e.__class__.__name__})"
                continue
            rows = list(csv.DictReader(open(p)))
            if p.name.endswith("_stability.csv"):
                want = len(STEPS[1:]) * 2 * 2  # bf16 steps x sizes x processes
                if len(rows) != want:
                    return f"{p.name} has {len(rows)} rows, not {want}"
                continue
            if len(rows) != len(STEPS) * 2 * 2 or any(None in r.values() or r.get("date") != "2026-12-02" for r in rows):
                return f"{p.name} is truncated ({len(rows)} rows)"
            tags |= {r["detail"] for r in rows}
        return f"one run: {tags.pop()}" if len(tags) == 1 else f"mixed runs: {sorted(tags)}"

    def pending(self):
        return (self.out / ".bench-staging").exists()


def wait_rows(case, n, proc, tag, limit=60):
    """Waits until `n` step rows of the running bench (run `tag`) are in its rows file."""
    rows = case.build / "bench_rows.csv"
    t0 = time.time()
    while time.time() - t0 < limit and proc.poll() is None:
        if rows.exists() and sum(1 for l in rows.read_text().splitlines() if f",step,{tag}," in l) >= n:
            return True
        time.sleep(0.05)
    return False


def main():
    if len(sys.argv) > 1 and not sys.argv[1].startswith("--"):  # called as a stand-in
        name = pathlib.Path(sys.argv[1]).name
        return (standin_smi if name == "nvidia-smi" else standin_step)(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--scratch", required=True)
    args = ap.parse_args()
    results = []

    def case(name, ok, detail=""):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    c = Case(args.repo, args.scratch)
    r = c.run(STANDIN_RUN="A")
    case("a whole run commits every file", r.returncode == 0 and c.state() == "one run: A" and not c.pending(),
         f"exit {r.returncode}, {c.state()}")
    before = c.snapshot()

    for sig in (signal.SIGINT, signal.SIGTERM):
        tag = f"B{sig.value}"  # a tag of its own: the rows file still holds the last run's rows at first
        p = c.start(STANDIN_RUN=tag, STANDIN_SLEEP="0.3")
        wait_rows(c, 2, p, tag)
        os.killpg(p.pid, sig)
        out, err = p.communicate(timeout=60)
        case(f"{sig.name} mid-run leaves results/ as it was and says how to resume",
             c.snapshot() == before and not c.pending() and p.returncode == 130 and "--resume" in err
             and "runs: results/ is unchanged" in err, f"exit {p.returncode}, {c.state()}, said: {err.strip()[-160:]}")

    p = c.start(STANDIN_RUN="B", STANDIN_SLEEP="0.3")
    wait_rows(c, 2, p, "B")
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    case("SIGKILL mid-run leaves results/ as it was", c.snapshot() == before, c.state())
    r = c.run("--resume", STANDIN_RUN="B")
    kept = r.returncode == 0 and "resuming:" in r.stdout
    case("--resume goes on from the finished runs and commits one whole run",
         kept and not c.pending() and c.state() == "one run: B", f"exit {r.returncode}, {c.state()}")
    c.run(STANDIN_RUN="A")
    before = c.snapshot()

    r = c.run(STANDIN_RUN="C", BENCH_FAULT="enospc-in-stage")
    case("a full disk while staging leaves results/ as it was", r.returncode == 1 and c.snapshot() == before
         and not c.pending() and "No space left on device" in r.stderr, f"exit {r.returncode}, {c.state()}")

    r = c.run(STANDIN_RUN="C", BENCH_FAULT="kill-in-commit")
    killed = r.returncode == -signal.SIGKILL
    journal = (c.out / ".bench-staging" / "COMMIT").exists()
    r2 = c.run(STANDIN_RUN="D")
    case("a kill inside the commit leaves a journal that the next run finishes first",
         killed and journal and "finished the commit of a run killed while committing" in r2.stdout
         and c.state() == "one run: D", f"killed={killed}, journal={journal}, then {c.state()}")
    before = c.snapshot()

    r = c.run(STANDIN_RUN="E", STANDIN_BUSY="1")
    case("another process on the GPU: refused before anything is written",
         r.returncode != 0 and "other processes are computing on the GPU" in r.stderr and c.snapshot() == before,
         f"exit {r.returncode}")
    r = c.run("--allow-busy-gpu", STANDIN_RUN="E", STANDIN_BUSY="1")
    case("--allow-busy-gpu runs anyway", r.returncode == 0 and c.state() == "one run: E", c.state())

    r = c.run(STANDIN_RUN="F", STANDIN_OOM_M="512")
    rows = list(csv.DictReader(open(c.out / "stand_in_gpu.csv")))
    refused = [x for x in rows if x["check"].startswith("REFUSED")]
    case("a shape past device memory is a REFUSED row and a note, not a failure",
         r.returncode == 0 and len(refused) == len(STEPS) and "out of device memory" in refused[0]["check"]
         and "refused 512x512x512" in (c.out / "stand_in_gpu.meta.json").read_text(), f"exit {r.returncode}")

    # The twin: the same kill inside the commit with the files written in place, as before the staging.
    c.run(STANDIN_RUN="A")
    r = c.run(STANDIN_RUN="G", BENCH_FAULT="kill-in-commit", BENCH_UNSAFE_WRITES="1")
    damaged = c.state()
    case("twin: written in place, the same kill leaves a damaged file (this check can fail)",
         r.returncode == -signal.SIGKILL and "truncated" in damaged, damaged)

    shutil.rmtree(args.scratch, ignore_errors=True)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
