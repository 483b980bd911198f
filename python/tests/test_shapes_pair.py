"""CPU tests of scripts/shapes_table.py --pair (issue 49): a step against its parent at chosen shapes,
generated from a shapes CSV into a chapter's block. A synthetic CSV checks the table and its refusals;
the committed H200 CSV checks that docs/every_shape.md's four blocks are current. run_cpu.py runs them
with the package's tests; no GPU needed."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/shapes_table.py"
H200 = ROOT / "results/nvidia_h200_shapes.csv"
BOOK = ROOT / "docs/every_shape.md"

# The chapter's blocks: (block, PARENT,STEP, shapes); mk/tables.mk's results-tables rule writes the same.
BOOK_PAIRS = [
    ("pair_24_25", "24,25", "256:4096:4096,256:4096:14336,128:4096:4096,128:6144:4096,1024:1024:65536,128:4096:14336"),
    ("pair_25_26", "25,26", "128:4096:14336,1024:1024:65536"),
    ("pair_26_27", "26,27", "1:4096:4096,1:4096:14336,1:14336:4096,4:6144:4096,32:4096:4096,32:4096:14336,"
                            "32:14336:4096"),
    ("pair_27_28", "27,28", "5000:5000:5000"),
]


def run(*args):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))


FIELDS = ["step", "name", "m", "n", "k", "mode", "kernel", "ms", "tflops", "step_ratio", "step_ratio_q25",
          "step_ratio_q75", "clock_mhz", "check", "family"]


def synthetic_csv(path):
    """Steps 1 and 2 at 64 × 128 × 256 and 512³, each paired with cuBLAS and cuBLASLt in its own process;
    step 2 did not run 512³'s check (refused)."""
    rows = []

    def proc(step, m, n, k, ms, clock, ratios, check="pass"):
        timed = check == "pass"
        rows.append(dict(step=step, name=f"s{step}", m=m, n=n, k=k, mode="burst", kernel="step",
                         ms=f"{ms:.5f}" if timed else "", tflops="1.0" if timed else "", step_ratio="1.0",
                         step_ratio_q25="1.0", step_ratio_q75="1.0", clock_mhz=clock, check=check, family="other"))
        for kernel, (r, q25, q75) in ratios.items():
            rows.append(dict(step=step, name=f"s{step}", m=m, n=n, k=k, mode="burst", kernel=kernel, ms="0.01",
                             tflops="1.0", step_ratio=r, step_ratio_q25=q25, step_ratio_q75=q75, clock_mhz=clock,
                             check="pass", family="other"))

    proc("1", 64, 128, 256, 0.0200, 1980, {"cublas": (0.900, 0.890, 0.910), "cublaslt_best": (0.800, 0.790, 0.810)})
    proc("2", 64, 128, 256, 0.0150, 1970, {"cublas": (1.100, 1.050, 1.150), "cublaslt_best": (1.200, 1.100, 1.300)})
    proc("1", 512, 512, 512, 0.3000, 1700, {"cublas": (0.500, 0.490, 0.510)})
    proc("2", 512, 512, 512, 0, 1700, {"cublas": (0.600, 0.590, 0.610)}, check="REFUSED (test)")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


class ShapesPair(unittest.TestCase):
    def test_the_chapter_blocks_are_what_the_committed_csv_says(self):
        if not H200.exists():
            self.skipTest("no results/nvidia_h200_shapes.csv")
        for block, pair, shapes in BOOK_PAIRS:
            with self.subTest(block=block):
                r = run(SCRIPT, H200, "--book", BOOK, "--block", block, "--pair", pair, "--shapes", shapes, "--check")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_stale_block_fails_the_check_and_is_rewritten(self):
        with tempfile.TemporaryDirectory() as d:
            data, book = Path(d) / "shapes.csv", Path(d) / "book.md"
            synthetic_csv(data)
            book.write_text("# t\n<!-- p:table -->\n| 64 × 128 × 256 | 9.999 |\n<!-- /p -->\ntail\n")
            args = (SCRIPT, data, "--book", book, "--block", "p", "--pair", "1,2", "--shapes", "64:128:256")
            r = run(*args, "--check")
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("not what the CSV says", r.stdout)
            self.assertIn("9.999", book.read_text())  # --check writes nothing
            self.assertEqual(run(*args).returncode, 0)
            text = book.read_text()
            self.assertNotIn("9.999", text)
            # the best reference of each process is the smallest step / reference ratio: cuBLASLt for both
            self.assertIn("| 64 × 128 × 256 | 20.0 µs at 1980 MHz | 15.0 µs at 1970 MHz | 0.75 | "
                          "0.800 [0.790–0.810] | 1.100 [1.050–1.150] |", text)
            self.assertIn("| shape | step 1 | step 2 | time 2 / 1 | step 1 × best [IQR] | step 2 × best [IQR] |", text)
            self.assertTrue(text.endswith("<!-- /p -->\ntail\n"))
            self.assertEqual(run(*args, "--check").returncode, 0)

    def test_a_cube_and_a_step_not_timed(self):
        with tempfile.TemporaryDirectory() as d:
            data, book = Path(d) / "shapes.csv", Path(d) / "book.md"
            synthetic_csv(data)
            book.write_text("<!-- p:table -->\n<!-- /p -->\n")
            r = run(SCRIPT, data, "--book", book, "--block", "p", "--pair", "1,2", "--shapes", "512:512:512")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("| 512³ | 300.0 µs at 1700 MHz | not timed (REFUSED (test)) |  | 0.500 [0.490–0.510] |  |",
                          book.read_text())

    def test_unknown_step_missing_shape_and_bad_shapes_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            data, book = Path(d) / "shapes.csv", Path(d) / "book.md"
            synthetic_csv(data)
            book.write_text("<!-- p:table -->\n<!-- /p -->\n")
            base = (SCRIPT, data, "--book", book, "--block", "p")
            r = run(*base, "--pair", "1,99", "--shapes", "64:128:256")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no rows of step 99", r.stderr)
            r = run(*base, "--pair", "1,2", "--shapes", "64:128:512")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("step 1 has no row at 64x128x512", r.stderr)
            r = run(*base, "--pair", "1,2", "--shapes", "64:128")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("is not M:N:K", r.stderr)
            r = run(*base, "--pair", "1")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--pair PARENT,STEP needs", r.stderr)
            self.assertEqual(book.read_text(), "<!-- p:table -->\n<!-- /p -->\n")  # nothing written


if __name__ == "__main__":
    unittest.main()
