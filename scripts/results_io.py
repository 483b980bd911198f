"""How the benchmark writes results/ so that no fault leaves it damaged: every file a run produces is
staged in results/.bench-staging/ while the run goes on, and only a finished run commits them. The
commit writes a journal (COMMIT, the list of files) and then moves each staged file into place with
os.replace, which is atomic per file on one file system; the journal goes last. A run killed before
the journal leaves results/ as it was (the next run throws the stage away and says so); one killed
during the moves leaves the journal, and the next run finishes those moves before it starts. So a
reader of results/ sees every file of one run or every file of the other, never a truncated file,
and the tables and figures are redrawn only after a commit.

Fault injection, for the tests (tests/bench_faults.py): BENCH_FAULT=kill-in-commit kills the process
(SIGKILL) after the first staged file was moved; BENCH_FAULT=enospc-in-stage makes staging fail as a
full disk would. BENCH_UNSAFE_WRITES=1 writes each file straight into results/ instead (what the
benchmark did before), so that the tests can show the damage the staging prevents."""
import csv
import errno
import io
import os
import pathlib
import signal

STAGING = ".bench-staging"
JOURNAL = "COMMIT"


def fault(point):
    """The fault the tests asked for at `point`, if any."""
    if os.environ.get("BENCH_FAULT") != point:
        return
    if point == "enospc-in-stage":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    os.kill(os.getpid(), signal.SIGKILL)


def csv_text(rows):
    """A CSV of dict rows: the columns of the first row, then any new ones in order of appearance."""
    if not rows:
        return ""
    fields = list(rows[0].keys())
    for r in rows:
        fields += [k for k in r if k not in fields]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _write_synced(path, text):
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def recover(out):
    """Before a run: finishes a commit a killed run left half done, or throws away the stage of a run
    that never reached its commit. Returns what it did, one line, or ""."""
    stage = pathlib.Path(out) / STAGING
    if not stage.is_dir():
        return ""
    journal = stage / JOURNAL
    if journal.exists():
        names = [n for n in journal.read_text().split("\n") if n]
        moved = []
        for n in names:
            if (stage / n).exists():
                os.replace(stage / n, pathlib.Path(out) / n)
                moved.append(n)
        journal.unlink()
        _clear(stage)
        return (f"finished the commit of a run killed while committing: moved {', '.join(moved) or 'nothing'} "
                f"({len(names) - len(moved)} of its {len(names)} files were already in place)")
    left = sorted(p.name for p in stage.iterdir())
    _clear(stage)
    return f"threw away the staged files of a run that did not finish ({', '.join(left) or 'none'}); results/ unchanged"


def _clear(stage):
    for p in stage.iterdir():
        p.unlink()
    stage.rmdir()


class Stage:
    """The files of one run, written to results/.bench-staging/ until commit() moves them into results/."""

    def __init__(self, out):
        self.out = pathlib.Path(out)
        self.unsafe = os.environ.get("BENCH_UNSAFE_WRITES") == "1"
        self.dir = self.out if self.unsafe else self.out / STAGING
        self.names = []
        self.dir.mkdir(parents=True, exist_ok=True)

    def text(self, name, text):
        """Stages one file (in unsafe mode: writes it in place, half, then the rest)."""
        fault("enospc-in-stage")
        if self.unsafe:
            with open(self.out / name, "w") as f:  # the old way: a kill in between leaves half a file
                f.write(text[: len(text) // 2])
                f.flush()
                os.fsync(f.fileno())
                if not self.names:
                    fault("kill-in-commit")
                f.write(text[len(text) // 2:])
        else:
            _write_synced(self.dir / name, text)
        self.names.append(name)

    def csv(self, name, rows):
        self.text(name, csv_text(rows))

    def commit(self):
        """Moves every staged file into results/ (journal first, then the files, the journal last)."""
        if self.unsafe:
            return list(self.names)
        _write_synced(self.dir / JOURNAL, "\n".join(self.names) + "\n")
        for i, n in enumerate(self.names):
            os.replace(self.dir / n, self.out / n)
            if i == 0:
                fault("kill-in-commit")
        (self.dir / JOURNAL).unlink()
        _clear(self.dir)
        return list(self.names)

    def abandon(self):
        """Throws the stage away (an interrupted or failed run): results/ stays as it was."""
        if not self.unsafe and self.dir.is_dir():
            _clear(self.dir)


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3 or sys.argv[1] != "--recover":
        sys.exit("usage: scripts/results_io.py --recover RESULTS_DIR   (finish or throw away a run's stage)")
    print(recover(sys.argv[2]) or "nothing to recover")
