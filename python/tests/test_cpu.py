"""The package's CPU tests: argument checks, a missing library, refused shapes and the C API's codes,
with fake arrays that expose __cuda_array_interface__ and point nowhere. Nothing here launches a
kernel: every call stops at a check before the GPU (a test that would reach the GPU is skipped where
one is present). Run: python3 python/tests/run_cpu.py (make test does, with the library it built)."""
import ctypes
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import gemm_steps  # noqa: E402
from gemm_steps import _lib  # noqa: E402

BASE = 0x7F0000000000  # a 16-byte aligned address that is never dereferenced


class Fake:
    """A device array as __cuda_array_interface__ (v3) describes one; its memory does not exist."""
    _next = BASE

    def __init__(self, shape, typestr, ptr=None, strides=None, readonly=False, stream=None):
        if ptr is None:
            ptr = Fake._next
            Fake._next += 1 << 30
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3, "stream": stream}


def bf16(*shape, **kw):
    return Fake(shape, "<V2", **kw)


def fp8(*shape, **kw):
    return Fake(shape, "|V1", **kw)


def f32(*shape, **kw):
    return Fake(shape, "<f4", **kw)


def have_library():
    try:
        gemm_steps.library_path()
        return True
    except gemm_steps.LibraryNotFoundError:
        return False


def gpu_count():
    return gemm_steps.device_count() if have_library() else 0


needs_library = unittest.skipUnless(have_library(), "no libgemmsteps.so (make lib, or set GEMM_STEPS_LIB)")


class ArgumentChecks(unittest.TestCase):
    """Bad arguments are TypeError / ValueError naming the argument, before the library is needed."""

    def assert_names(self, exc_type, name, fn, *args, **kw):
        with self.assertRaises(exc_type) as cm:
            fn(*args, **kw)
        self.assertIn(name, str(cm.exception))
        return str(cm.exception)

    def test_not_an_array(self):
        self.assert_names(TypeError, "a is a list", gemm_steps.linear, [[1.0]], bf16(4, 8), out=bf16(1, 4))
        self.assert_names(TypeError, "b is a int", gemm_steps.linear, bf16(4, 8), 3, out=bf16(4, 4))

    def test_dtype(self):
        msg = self.assert_names(TypeError, "b has element type '<f4'", gemm_steps.linear, bf16(4, 8), f32(4, 8), out=bf16(4, 4))
        self.assertIn("bf16", msg)
        self.assert_names(TypeError, "out has element type '|V1'", gemm_steps.linear, bf16(4, 8), bf16(4, 8), out=fp8(4, 4))
        self.assert_names(TypeError, "a has element type '<V2'", gemm_steps.linear_fp8, bf16(4, 128), fp8(4, 128),
                          f32(1), f32(1), out=bf16(4, 4))
        self.assert_names(TypeError, "a has element type '<V2'", gemm_steps.sgemm, bf16(4, 8), f32(8, 4), out=f32(4, 4))

    def test_rank(self):
        self.assert_names(ValueError, "a must be a 2-D matrix", gemm_steps.linear, bf16(2, 4, 8), bf16(4, 8), out=bf16(8, 4))

    def test_strides(self):
        # A transposed view (column-major) and a column slice: not packed row-major.
        msg = self.assert_names(ValueError, "a must be row-major and packed", gemm_steps.linear,
                                bf16(16, 32, strides=(2, 32)), bf16(8, 32), out=bf16(16, 8))
        self.assertIn("contiguous", msg)
        self.assert_names(ValueError, "b must be row-major and packed", gemm_steps.linear,
                          bf16(16, 32), bf16(8, 32, strides=(128, 2)), out=bf16(16, 8))
        self.assert_names(ValueError, "out must be row-major", gemm_steps.linear, bf16(16, 32), bf16(8, 32),
                          out=bf16(16, 8, strides=(32, 2)))
        # Explicit packed strides, a single row with any row stride, a single column: all packed.
        from gemm_steps import _arrays
        for a in (bf16(16, 32, strides=(64, 2)), bf16(1, 32, strides=(4096, 2)), bf16(16, 1, strides=(2, 8))):
            m = _arrays.matrix(a, "a", "bf16")
            self.assertEqual((m.rows, m.cols), a.__cuda_array_interface__["shape"])

    def test_alignment(self):
        # A view whose pointer is off a 16-byte boundary: named before anything runs.
        self.assert_names(ValueError, "a's data pointer", gemm_steps.linear, bf16(16, 32, ptr=BASE + 2), bf16(8, 32),
                          out=bf16(16, 8))
        self.assert_names(ValueError, "out's data pointer", gemm_steps.linear, bf16(16, 32), bf16(8, 32),
                          out=bf16(16, 8, ptr=BASE + 8))

    def test_shapes(self):
        msg = self.assert_names(ValueError, "b has 48 columns and a has 32", gemm_steps.linear, bf16(16, 32), bf16(8, 48),
                                out=bf16(16, 8))
        self.assertIn("N x K", msg)
        self.assert_names(ValueError, "out has shape (8, 16), expected (16, 8)", gemm_steps.linear, bf16(16, 32),
                          bf16(8, 32), out=bf16(8, 16))
        self.assert_names(ValueError, "b has 16 rows and a has 32 columns", gemm_steps.sgemm, f32(8, 32), f32(16, 8),
                          out=f32(8, 8))

    def test_out(self):
        self.assert_names(TypeError, "out is needed", gemm_steps.linear, bf16(16, 32), bf16(8, 32))
        self.assert_names(ValueError, "out is read-only", gemm_steps.linear, bf16(16, 32), bf16(8, 32),
                          out=bf16(16, 8, readonly=True))
        self.assert_names(ValueError, "out is required when beta != 0", gemm_steps.sgemm, f32(8, 32), f32(32, 8), beta=1.0)

    def test_fp8_scales(self):
        a, b, out = fp8(256, 384), fp8(200, 384), bf16(256, 200)
        self.assert_names(TypeError, "scale_a has element type '<V2'", gemm_steps.linear_fp8, a, b, bf16(1, 1), f32(1), out=out)
        self.assert_names(TypeError, "scale_b is a float", gemm_steps.linear_fp8, a, b, f32(1), 1.0, out=out)
        # Neither per-tensor (1, 1) nor block (3 x 256, 2 x 3): the message gives both.
        msg = self.assert_names(ValueError, "scale_a has 5 elements", gemm_steps.linear_fp8, a, b, f32(5), f32(1), out=out)
        self.assertIn("768 and 6 (block scales)", msg)
        msg = self.assert_names(ValueError, "scale_b has shape (1,)", gemm_steps.linear_fp8, a, b, f32(3, 256), f32(1),
                                out=out, scaling="block")
        self.assertIn("ceil(N/128) x ceil(K/128)", msg)
        self.assert_names(ValueError, "scale_a must be contiguous", gemm_steps.linear_fp8, a, b,
                          Fake((3, 256), "<f4", strides=(4, 12)), f32(2, 3), out=out)
        self.assert_names(ValueError, "scaling is 'row'", gemm_steps.linear_fp8, a, b, f32(1), f32(1), out=out, scaling="row")

    def test_stream_and_step_types(self):
        self.assert_names(TypeError, "stream is a str", gemm_steps.linear, bf16(16, 32), bf16(8, 32), out=bf16(16, 8),
                          stream="default")

    def test_malformed_interfaces(self):
        """Each malformed field of __cuda_array_interface__ is an error that names the argument."""
        def raw(**cai):
            return type("Raw", (), {"__cuda_array_interface__": cai})()
        good = {"shape": (16, 32), "typestr": "<V2", "data": (BASE, False), "version": 3}
        out = bf16(16, 8)
        for exc, cai in ((ValueError, dict(good, strides=(64,))), (TypeError, dict(good, data=BASE)),
                         (ValueError, dict(good, shape=(-16, 32))), (TypeError, dict(good, shape=(16.0, 32))),
                         (TypeError, dict(good, shape=7))):
            self.assert_names(exc, "a", gemm_steps.linear, raw(**cai), bf16(8, 32), out=out)
        sa = raw(shape=(1,), typestr="<f4", data=(BASE, False))
        for bad in (raw(), type("NotDict", (), {"__cuda_array_interface__": [1]})(),
                    raw(typestr="<f4", data=(BASE, False))):
            self.assert_names(TypeError, "scale_b", gemm_steps.linear_fp8, fp8(16, 32), fp8(8, 32), sa, bad, out=out)

    def test_torch_cpu_tensor(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch here (the GPU machine's torch tests cover tensors)")
        x = torch.zeros(16, 32, dtype=torch.bfloat16)
        self.assert_names(ValueError, "a is on cpu", gemm_steps.linear, x, x)
        self.assert_names(ValueError, "a is on cpu", gemm_steps.linear_fp8, x, x, x, x)


class MissingLibrary(unittest.TestCase):
    """Without the library the package imports; the first call names where it looked and what to do."""

    def test_in_process(self):
        old = os.environ.get(_lib.ENV_VAR)
        os.environ[_lib.ENV_VAR] = "/nonexistent/libgemmsteps.so"
        _lib.reset()
        try:
            with self.assertRaises(gemm_steps.LibraryNotFoundError) as cm:
                gemm_steps.linear(bf16(16, 32), bf16(8, 32), out=bf16(16, 8))
            msg = str(cm.exception)
            self.assertIn("/nonexistent/libgemmsteps.so (no such file)", msg)
            self.assertIn("$GEMM_STEPS_LIB", msg)
            with self.assertRaises(gemm_steps.LibraryNotFoundError):
                gemm_steps.steps()
            # Argument errors still come first, without a library.
            with self.assertRaises(TypeError):
                gemm_steps.linear(bf16(16, 32), f32(8, 32), out=bf16(16, 8))
        finally:
            if old is None:
                del os.environ[_lib.ENV_VAR]
            else:
                os.environ[_lib.ENV_VAR] = old
            _lib.reset()

    def test_a_failure_is_not_remembered(self):
        """After a failed load, a library that appears (make lib, or a new $GEMM_STEPS_LIB) is found."""
        if not have_library():
            self.skipTest("no libgemmsteps.so to find afterwards")
        real = str(gemm_steps.library_path())
        old = os.environ.get(_lib.ENV_VAR)
        try:
            os.environ[_lib.ENV_VAR] = "/nonexistent/libgemmsteps.so"
            _lib.reset()
            with self.assertRaises(gemm_steps.LibraryNotFoundError):
                gemm_steps.steps()
            os.environ[_lib.ENV_VAR] = real
            self.assertTrue(gemm_steps.steps())
        finally:
            if old is None:
                os.environ.pop(_lib.ENV_VAR, None)
            else:
                os.environ[_lib.ENV_VAR] = old
            _lib.reset()

    def test_fresh_import(self):
        env = dict(os.environ, GEMM_STEPS_LIB=str(HERE / "no_such_dir" / "libgemmsteps.so"),
                   PYTHONPATH=str(HERE.parent))
        code = ("import gemm_steps\n"
                "try:\n    gemm_steps.last_step()\nexcept gemm_steps.LibraryNotFoundError as e:\n    print('missing:', e)\n")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("missing: gemm_steps cannot load libgemmsteps.so", r.stdout)
        self.assertEqual(r.stderr, "")

    def test_not_a_library(self):
        bogus = HERE / "test_cpu.py"  # a file, but no shared object
        with self.assertRaises(gemm_steps.LibraryNotFoundError) as cm:
            _lib.load(bogus)
        self.assertIn(str(bogus), str(cm.exception))
        _lib.reset()


@needs_library
class Library(unittest.TestCase):
    """The C API behind the package, without a GPU: the registry, refusals, codes and messages."""

    def test_steps(self):
        steps = gemm_steps.steps()
        ids = [s.id for s in steps]
        self.assertEqual(ids, sorted(ids))
        by_id = {s.id: s for s in steps}
        for sid in ("01", "09b", "10", "29", "35"):
            self.assertIn(sid, by_id)
        self.assertEqual(by_id["29"].dtype, "bf16")
        self.assertIn("measured", by_id["29"].caps)
        self.assertEqual(by_id["35"].scaling, "block")
        self.assertEqual(by_id["29"].required_cc, 90)
        for dtype, scaling in (("bf16", None), ("fp32", None), ("fp8", "per_tensor"), ("fp8", "block")):
            last = max((s for s in steps if s.dtype == dtype and s.scaling == scaling), key=lambda s: s.id)
            self.assertEqual(gemm_steps.last_step(dtype, scaling or "per_tensor"), last.id)

    def test_refusal(self):
        self.assertIsNone(gemm_steps.refusal("29", 64, 64, 128))
        why = gemm_steps.refusal("29", 64, 64, 100)
        self.assertIn("K % 8 == 0", why)
        self.assertIn("step 29 refuses M=64 N=64 K=100", why)
        self.assertIn("must be >= 1", gemm_steps.refusal("29", 0, 64, 64))

    def test_refused_shape_is_raised(self):
        with self.assertRaises(gemm_steps.RefusedError) as cm:
            gemm_steps.linear(bf16(64, 100), bf16(64, 100), out=bf16(64, 64), step="29")
        self.assertIn("K % 8 == 0", str(cm.exception))
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.code, _lib.REFUSED)
        # The last step too (None), and an fp8 step (block scales, K % 16 for e4m3).
        with self.assertRaises(gemm_steps.RefusedError):
            gemm_steps.linear(bf16(64, 100), bf16(64, 100), out=bf16(64, 64))
        a, b = fp8(64, 136), fp8(64, 136)
        with self.assertRaises(gemm_steps.RefusedError) as cm:
            gemm_steps.linear_fp8(a, b, f32(2, 64), f32(1, 2), out=bf16(64, 64))
        self.assertIn(f"step {gemm_steps.last_step('fp8', 'block')} refuses", str(cm.exception))  # the last block-scaled step

    def test_wrong_step(self):
        with self.assertRaises(gemm_steps.UnknownStepError) as cm:
            gemm_steps.linear(bf16(64, 128), bf16(64, 128), out=bf16(64, 64), step="99")
        self.assertIn("no step '99'", str(cm.exception))
        with self.assertRaises(gemm_steps.InvalidArgumentError) as cm:
            gemm_steps.linear(bf16(64, 128), bf16(64, 128), out=bf16(64, 64), step="35")
        self.assertIn("step 35 computes in fp8: call gemm_steps.linear_fp8", str(cm.exception))
        with self.assertRaises(gemm_steps.InvalidArgumentError) as cm:
            gemm_steps.linear_fp8(fp8(64, 128), fp8(64, 128), f32(1), f32(1), out=bf16(64, 64), step="35")
        self.assertIn("step 35 takes block scales, not per_tensor", str(cm.exception))
        with self.assertRaises(TypeError):
            gemm_steps.linear(bf16(64, 128), bf16(64, 128), out=bf16(64, 64), step=29)

    def test_no_device(self):
        if gpu_count() > 0:
            self.skipTest("a CUDA device is present (this test would launch on fake pointers)")
        for call in (lambda: gemm_steps.linear(bf16(64, 128), bf16(64, 128), out=bf16(64, 64)),
                     lambda: gemm_steps.linear(bf16(64, 128), bf16(64, 128), out=bf16(64, 64), step="12"),
                     lambda: gemm_steps.sgemm(f32(64, 128), f32(128, 64), out=f32(64, 64), step="06"),
                     lambda: gemm_steps.workspace_bytes("29", 64, 64, 128)):
            with self.assertRaises(gemm_steps.NoDeviceError) as cm:
                call()
            self.assertIn("needs an NVIDIA GPU", str(cm.exception))
            self.assertIn("no CUDA device", str(cm.exception))

    def test_c_codes(self):
        lib = _lib.load()
        self.assertEqual(lib.gemm_steps_abi_version(), _lib.ABI_VERSION)
        n = ctypes.c_int()
        self.assertEqual(lib.gemm_steps_count(ctypes.byref(n)), _lib.OK)
        self.assertEqual(lib.gemm_steps_last_error(), b"")
        self.assertEqual(lib.gemm_steps_get_info(n.value, ctypes.byref(_lib.Info())), _lib.INVALID_ARGUMENT)
        self.assertIn(b"is outside 0..", lib.gemm_steps_last_error())
        self.assertEqual(lib.gemm_steps_count(None), _lib.INVALID_ARGUMENT)
        self.assertEqual(lib.gemm_steps_last(7, 0, ctypes.byref(ctypes.c_char_p())), _lib.INVALID_ARGUMENT)
        self.assertIn(b"dtype 7", lib.gemm_steps_last_error())
        self.assertEqual(lib.gemm_steps_refusal(None, 1, 1, 1), _lib.INVALID_ARGUMENT)
        # NULL and misaligned pointers, named, before the GPU.
        self.assertEqual(lib.gemm_steps_bf16(b"29", 64, 64, 128, None, BASE, BASE, None, 0, -1, None), _lib.INVALID_ARGUMENT)
        self.assertEqual(lib.gemm_steps_last_error(), b"a is NULL")
        self.assertEqual(lib.gemm_steps_bf16(b"29", 64, 64, 128, BASE, BASE + 4, BASE, None, 0, -1, None), _lib.INVALID_ARGUMENT)
        self.assertIn(b"b (0x7f0000000004) is not 16-byte aligned", lib.gemm_steps_last_error())
        self.assertEqual(lib.gemm_steps_fp8(b"35", 5, 64, 64, 128, BASE, BASE, BASE, BASE, BASE, None, 0, -1, None),
                         _lib.INVALID_ARGUMENT)
        self.assertIn(b"scaling 5", lib.gemm_steps_last_error())
        self.assertEqual(lib.gemm_steps_fp8(b"35", _lib.BLOCK, 64, 64, 128, BASE, BASE, None, BASE, BASE, None, 0, -1, None),
                         _lib.INVALID_ARGUMENT)
        self.assertEqual(lib.gemm_steps_last_error(), b"scale_a (sfa) is NULL")
        self.assertEqual(lib.gemm_steps_fp32(b"29", 64, 64, 128, 1.0, BASE, BASE, 0.0, BASE, None, 0, -1, None),
                         _lib.INVALID_ARGUMENT)
        self.assertIn(b"call gemm_steps_bf16, not gemm_steps_fp32", lib.gemm_steps_last_error())
        # Shape before device: a refused shape is REFUSED without a GPU.
        self.assertEqual(lib.gemm_steps_bf16(b"11", 64, 64, 100, BASE, BASE, BASE, None, 0, -1, None), _lib.REFUSED)
        self.assertEqual(lib.gemm_steps_workspace_alloc(0, -1, ctypes.byref(ctypes.c_void_p())), _lib.OK)
        self.assertEqual(lib.gemm_steps_workspace_free(None, -1), _lib.OK)
        self.assertEqual(lib.gemm_steps_workspace_clear(None, 16, -1, None), _lib.INVALID_ARGUMENT)

    def test_silent(self):
        # Nothing in the library or the package writes to stdout or stderr, even while refusing.
        code = ("import sys; sys.path.insert(0, %r)\n"
                "import gemm_steps, test_cpu as t\n"
                "for f in (lambda: gemm_steps.linear(t.bf16(64, 100), t.bf16(64, 100), out=t.bf16(64, 64)),\n"
                "          lambda: gemm_steps.linear(t.bf16(64, 128), t.bf16(64, 128), out=t.bf16(64, 64), step='99'),\n"
                "          lambda: gemm_steps.workspace_bytes('29', 0, 1, 1)):\n"
                "    try: f()\n"
                "    except gemm_steps.GemmStepsError: pass\n"
                "gemm_steps.steps()\n") % str(HERE)
        env = dict(os.environ, PYTHONPATH=str(HERE.parent), GEMM_STEPS_LIB=gemm_steps.library_path())
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, cwd=HERE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((r.stdout, r.stderr), ("", ""))

    def test_exports(self):
        nm = shutil.which("nm")
        if nm is None:
            self.skipTest("no nm on PATH")
        out = subprocess.run([nm, "-D", "--defined-only", gemm_steps.library_path()], capture_output=True, text=True,
                             check=True).stdout
        names = {line.split()[-1] for line in out.splitlines() if line.strip()}
        self.assertTrue(names, "no dynamic symbols")
        self.assertEqual({n for n in names if not n.startswith("gemm_steps_")}, set())
        self.assertIn("gemm_steps_bf16", names)


if __name__ == "__main__":
    unittest.main()
