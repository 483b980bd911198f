"""Loading build/lib/libgemmsteps.so (the C API, common/capi/gemm_steps.h) and turning its codes into
exceptions. Pure ctypes: nothing here imports torch or needs a GPU."""
import ctypes
import os
import threading
from pathlib import Path

ENV_VAR = "GEMM_STEPS_LIB"
ABI_VERSION = 1  # GEMM_STEPS_ABI_VERSION of the header this package speaks

# Return codes (gemm_steps.h).
OK, INVALID_ARGUMENT, UNKNOWN_STEP, REFUSED, WORKSPACE, NO_DEVICE, LAUNCH, OUT_OF_MEMORY, INTERNAL = range(9)
FP32, BF16, FP8 = 0, 1, 2
PER_TENSOR, BLOCK = 0, 1
DTYPES = {"fp32": FP32, "bf16": BF16, "fp8": FP8}
SCALINGS = {"per_tensor": PER_TENSOR, "block": BLOCK}
CAPS = ("stream_k", "swap_ab", "tile_menu", "split_k", "swap_sized", "pad_pitch", "measured")  # bit 0, 1, ...


class GemmStepsError(RuntimeError):
    """A failure the library reported (``code`` is its GEMM_STEPS_ERR_* value), or no library."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class LibraryNotFoundError(GemmStepsError):
    """libgemmsteps.so could not be found or loaded (or speaks another ABI version)."""


class NoDeviceError(GemmStepsError):
    """No CUDA device or driver in this process."""


class RefusedError(GemmStepsError, ValueError):
    """The step refuses this shape (its limits) or this GPU (its compute capability)."""


class InvalidArgumentError(GemmStepsError, ValueError):
    """The library refused an argument (a step of another dtype, a misaligned pointer...)."""


class UnknownStepError(GemmStepsError, ValueError):
    """No registered step has this id."""


class WorkspaceError(GemmStepsError):
    """The workspace is missing, too small or misaligned."""


class LaunchError(GemmStepsError):
    """The launch failed: a CUDA error or a check of the step's launcher (the message says which)."""


class DeviceOutOfMemoryError(GemmStepsError, MemoryError):
    """A workspace allocation did not fit in device memory."""


_ERRORS = {INVALID_ARGUMENT: InvalidArgumentError, UNKNOWN_STEP: UnknownStepError, REFUSED: RefusedError,
           WORKSPACE: WorkspaceError, NO_DEVICE: NoDeviceError, LAUNCH: LaunchError,
           OUT_OF_MEMORY: DeviceOutOfMemoryError}


class Info(ctypes.Structure):
    """gemm_steps_info, field by field."""
    _fields_ = [("id", ctypes.c_char_p), ("name", ctypes.c_char_p), ("parent", ctypes.c_char_p),
                ("technique", ctypes.c_char_p), ("dtype", ctypes.c_int), ("scaling", ctypes.c_int),
                ("required_cc", ctypes.c_int), ("uses_workspace", ctypes.c_int), ("persistent", ctypes.c_int),
                ("tile_bm", ctypes.c_int), ("tile_bn", ctypes.c_int), ("tile_bk", ctypes.c_int),
                ("stages", ctypes.c_int), ("threads", ctypes.c_int), ("caps", ctypes.c_uint)]


def candidates():
    """Where the library is looked for, in order: $GEMM_STEPS_LIB alone when it is set; else next to
    this package (a copy placed there), then the repository's build/lib/ (`make lib`), which is where
    an editable install (`pip install -e python/`) or PYTHONPATH=python finds it."""
    env = os.environ.get(ENV_VAR)
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    return [here / "libgemmsteps.so", here.parent.parent / "build" / "lib" / "libgemmsteps.so"]


_c = ctypes
_SIGNATURES = {
    "gemm_steps_abi_version": ([], _c.c_int),
    "gemm_steps_last_error": ([], _c.c_char_p),
    "gemm_steps_device_count": ([_c.POINTER(_c.c_int)], _c.c_int),
    "gemm_steps_count": ([_c.POINTER(_c.c_int)], _c.c_int),
    "gemm_steps_get_info": ([_c.c_int, _c.POINTER(Info)], _c.c_int),
    "gemm_steps_last": ([_c.c_int, _c.c_int, _c.POINTER(_c.c_char_p)], _c.c_int),
    "gemm_steps_refusal": ([_c.c_char_p, _c.c_int, _c.c_int, _c.c_int], _c.c_int),
    "gemm_steps_workspace_bytes": ([_c.c_char_p, _c.c_int, _c.c_int, _c.c_int, _c.c_int, _c.POINTER(_c.c_size_t)], _c.c_int),
    "gemm_steps_workspace_alloc": ([_c.c_size_t, _c.c_int, _c.POINTER(_c.c_void_p)], _c.c_int),
    "gemm_steps_workspace_free": ([_c.c_void_p, _c.c_int], _c.c_int),
    "gemm_steps_workspace_clear": ([_c.c_void_p, _c.c_size_t, _c.c_int, _c.c_void_p], _c.c_int),
    "gemm_steps_fp32": ([_c.c_char_p, _c.c_int, _c.c_int, _c.c_int, _c.c_float, _c.c_void_p, _c.c_void_p, _c.c_float,
                         _c.c_void_p, _c.c_void_p, _c.c_size_t, _c.c_int, _c.c_void_p], _c.c_int),
    "gemm_steps_bf16": ([_c.c_char_p, _c.c_int, _c.c_int, _c.c_int, _c.c_void_p, _c.c_void_p, _c.c_void_p,
                         _c.c_void_p, _c.c_size_t, _c.c_int, _c.c_void_p], _c.c_int),
    "gemm_steps_fp8": ([_c.c_char_p, _c.c_int, _c.c_int, _c.c_int, _c.c_int, _c.c_void_p, _c.c_void_p, _c.c_void_p,
                        _c.c_void_p, _c.c_void_p, _c.c_void_p, _c.c_size_t, _c.c_int, _c.c_void_p], _c.c_int),
}

_lock = threading.Lock()
_lib = None
_path = None


def load(path=None):
    """The loaded library (loaded once; `path` forces a (re)load from that file). Raises
    LibraryNotFoundError naming every place it looked; a call after a failure looks again."""
    global _lib, _path
    if _lib is not None and path is None:
        return _lib
    with _lock:
        if _lib is not None and path is None:
            return _lib
        # A failure is not cached: after `make lib` (or a new $GEMM_STEPS_LIB) the next call finds the library.
        tried = []
        for p in ([Path(path)] if path is not None else candidates()):
            if not p.is_file():
                tried.append(f"{p} (no such file)")
                continue
            try:
                lib = ctypes.CDLL(str(p))
            except OSError as e:
                tried.append(f"{p} ({e})")
                continue
            for name, (args, res) in _SIGNATURES.items():
                try:
                    fn = getattr(lib, name)
                except AttributeError:
                    tried.append(f"{p} (no {name}: an older library? rebuild it with `make lib`)")
                    break
                fn.argtypes, fn.restype = args, res
            else:
                abi = lib.gemm_steps_abi_version()
                if abi != ABI_VERSION:
                    tried.append(f"{p} (ABI version {abi}, this package speaks {ABI_VERSION}: rebuild it with `make lib`)")
                    continue
                _lib, _path = lib, p.resolve()
                return lib
        env = os.environ.get(ENV_VAR)
        raise LibraryNotFoundError("gemm_steps cannot load libgemmsteps.so: tried " + "; ".join(tried) +
                                   (f" (from ${ENV_VAR})" if env else
                                    f". Build it with `make lib` in the repository, or set ${ENV_VAR} to its path"))


def path():
    """The file the library was loaded from (None before a successful load)."""
    return _path


def reset():
    """Forgets the loaded library, so the next call looks again (tests; $GEMM_STEPS_LIB changed)."""
    global _lib, _path
    with _lock:
        _lib, _path = None, None


def check(code, lib=None):
    """Raises the exception for a GEMM_STEPS_ERR_* code, with the library's message for this thread."""
    if code == OK:
        return
    message = (lib or _lib).gemm_steps_last_error().decode("utf-8", "replace")
    if code == NO_DEVICE:
        message = "gemm_steps needs an NVIDIA GPU (the bf16 and fp8 steps: compute capability 9.0): " + message
    raise _ERRORS.get(code, GemmStepsError)(message, code)
