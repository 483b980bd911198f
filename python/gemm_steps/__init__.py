"""The matmul series' steps, called from Python: a thin ctypes layer over build/lib/libgemmsteps.so
(the C API, common/capi/gemm_steps.h). No build step and no dependency: it takes torch tensors, or
anything with __cuda_array_interface__, and runs on the caller's current CUDA stream.

    import torch, gemm_steps
    y = gemm_steps.linear(x, w)              # bf16: y = x @ w.T (x M x K, w N x K), the last bf16 step
    y = gemm_steps.linear(x, w, step="22")   # any registered bf16 step
    y = gemm_steps.linear_fp8(xq, wq, sx, sw)  # e4m3 in, bf16 out; per-tensor or block scales

Layouts are the steps' (registry.hpp): every matrix row-major and packed (a view with an offset is
fine, a transposed or sliced-column view is not), C = A @ B.T for bf16 and fp8, C = alpha A @ B + beta C
for fp32. No autograd: the results carry no gradient.

The library is found through $GEMM_STEPS_LIB, else next to this package, else in the repository's
build/lib/ (`make lib`); importing never needs it, nor a GPU: the first call says what is missing."""
import threading
import weakref
from dataclasses import dataclass

from . import _arrays, _lib
from ._lib import (DeviceOutOfMemoryError, GemmStepsError, InvalidArgumentError, LaunchError, LibraryNotFoundError,
                   NoDeviceError, RefusedError, UnknownStepError, WorkspaceError)

__all__ = ["linear", "linear_fp8", "sgemm", "steps", "last_step", "refusal", "workspace_bytes", "device_count",
           "library_path", "clear_workspaces", "StepInfo", "GemmStepsError", "LibraryNotFoundError", "NoDeviceError",
           "RefusedError", "InvalidArgumentError", "UnknownStepError", "WorkspaceError", "LaunchError",
           "DeviceOutOfMemoryError"]
__version__ = "0.1.0"

_c = _lib.ctypes


@dataclass(frozen=True)
class StepInfo:
    """One registered step, as its registration says (registry.hpp's Step)."""
    id: str
    name: str
    parent: str
    technique: str
    dtype: str            # "fp32", "bf16" or "fp8"
    scaling: str          # fp8: "per_tensor" or "block"; None otherwise
    required_cc: int      # 0: any GPU; 90: compute capability 9.0 only
    uses_workspace: bool
    persistent: bool
    tile: tuple           # (BM, BN, BK, STAGES) of the main kernel; zeros for step 00 (cuBLAS)
    threads: int
    caps: frozenset       # what its launcher does beyond the tile loop: "stream_k", "swap_ab", ...


def library_path():
    """The path of the loaded library (loads it; LibraryNotFoundError when it is nowhere)."""
    _lib.load()
    return str(_lib.path())


def device_count():
    """CUDA devices this process sees through the library (0 without a GPU or a driver)."""
    lib = _lib.load()
    n = _c.c_int()
    _lib.check(lib.gemm_steps_device_count(_c.byref(n)), lib)
    return n.value


def steps():
    """Every registered step, sorted by id."""
    lib = _lib.load()
    n = _c.c_int()
    _lib.check(lib.gemm_steps_count(_c.byref(n)), lib)
    out = []
    names = {v: k for k, v in _lib.DTYPES.items()}
    for i in range(n.value):
        info = _lib.Info()
        _lib.check(lib.gemm_steps_get_info(i, _c.byref(info)), lib)
        dtype = names[info.dtype]
        out.append(StepInfo(
            info.id.decode(), info.name.decode(), info.parent.decode(), info.technique.decode(), dtype,
            ("block" if info.scaling == _lib.BLOCK else "per_tensor") if dtype == "fp8" else None,
            info.required_cc, bool(info.uses_workspace), bool(info.persistent),
            (info.tile_bm, info.tile_bn, info.tile_bk, info.stages), info.threads,
            frozenset(c for bit, c in enumerate(_lib.CAPS) if info.caps >> bit & 1)))
    return out


def _dtype_code(dtype):
    if dtype not in _lib.DTYPES:
        raise ValueError(f"dtype is {dtype!r}: expected one of {', '.join(map(repr, _lib.DTYPES))}")
    return _lib.DTYPES[dtype]


def _scaling_code(scaling):
    if scaling not in _lib.SCALINGS:
        raise ValueError(f"scaling is {scaling!r}: expected 'per_tensor' or 'block'")
    return _lib.SCALINGS[scaling]


_last = {}


def last_step(dtype="bf16", scaling="per_tensor"):
    """The id of the last step of `dtype` (fp8: of `scaling`): the highest registered id."""
    key = (dtype, scaling if dtype == "fp8" else None)
    if key not in _last:
        lib = _lib.load()
        out = _c.c_char_p()
        _lib.check(lib.gemm_steps_last(_dtype_code(dtype), _scaling_code(scaling) if dtype == "fp8" else 0,
                                       _c.byref(out)), lib)
        _last[key] = out.value.decode()
    return _last[key]


def _step_bytes(step):
    if not isinstance(step, str):
        raise TypeError(f"step is a {type(step).__name__}: expected a step id such as '29' or '09b'")
    return step.encode()


def refusal(step, m, n, k):
    """Why `step` cannot run an m x n x k problem (its shape limits), or None when it can. No GPU needed."""
    lib = _lib.load()
    code = lib.gemm_steps_refusal(_step_bytes(step), int(m), int(n), int(k))
    if code == _lib.REFUSED:
        return lib.gemm_steps_last_error().decode()
    _lib.check(code, lib)
    return None


_need_cache = {}


def workspace_bytes(step, m, n, k, device=None):
    """Bytes of workspace `step` needs for m x n x k on `device` (None: the current one). Needs the GPU."""
    key = (step, m, n, k, -1 if device is None else device)
    got = _need_cache.get(key)
    if got is None:
        lib = _lib.load()
        out = _c.c_size_t()
        _lib.check(lib.gemm_steps_workspace_bytes(_step_bytes(step), int(m), int(n), int(k), key[4], _c.byref(out)), lib)
        if len(_need_cache) > 4096:  # a bound, for callers that sweep shapes
            _need_cache.clear()
        got = _need_cache[key] = out.value
    return got


# ---- The workspace --------------------------------------------------------------------------------
class _Workspace:
    """One cached workspace of a (device, stream): a zeroed buffer, and how much of it the last launch
    may have left non-zero (`dirty` bytes, for `key`). A launch leaves its split counters zero but not
    its partials or step 28's padded copies, so the buffer is zeroed again (on the stream) before
    another step or shape uses it (gemm_steps.h, "The workspace")."""
    __slots__ = ("ptr", "size", "owner", "key", "dirty", "__weakref__")

    def __init__(self, ptr, size, owner):
        self.ptr, self.size, self.owner, self.key, self.dirty = ptr, size, owner, None, 0


_ws_lock = threading.Lock()
_workspaces = {}


def clear_workspaces():
    """Drops the cached workspaces (they are freed once no launch can use them: torch's allocator
    orders that; a library allocation is freed with cudaFree, which waits for the device)."""
    with _ws_lock:
        _workspaces.clear()


def _allocate(need, device, stream, torch_like):
    size = max(need, 1 << 20)
    size = (size + (1 << 20) - 1) & ~((1 << 20) - 1)  # whole MiB: fewer regrowths
    if torch_like:
        torch = _arrays.torch_module()
        dev = torch.device("cuda", device if device is not None else torch.cuda.current_device())
        if stream == torch.cuda.current_stream(dev).cuda_stream:
            buf = torch.zeros(size, dtype=torch.uint8, device=dev)
        else:  # allocated and zeroed on the stream it serves, so the allocator orders its reuse there
            with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=dev)):
                buf = torch.zeros(size, dtype=torch.uint8, device=dev)
        return _Workspace(buf.data_ptr(), size, buf)
    lib = _lib.load()
    ptr = _c.c_void_p()
    dev = -1 if device is None else device
    _lib.check(lib.gemm_steps_workspace_alloc(size, dev, _c.byref(ptr)), lib)
    ws = _Workspace(ptr.value, size, None)
    weakref.finalize(ws, lib.gemm_steps_workspace_free, ptr.value, dev)
    return ws


def _workspace_for(key, need, device, stream, torch_like):
    """(pointer, bytes) of a cached workspace that holds `need` bytes, zero where `key`'s launch needs it."""
    if need == 0:
        return None, 0
    with _ws_lock:
        ws = _workspaces.get((device, stream, torch_like))
        if ws is None or ws.size < need:
            ws = _workspaces[(device, stream, torch_like)] = _allocate(need, device, stream, torch_like)
        elif ws.dirty and ws.key != key:
            lib = _lib.load()
            _lib.check(lib.gemm_steps_workspace_clear(ws.ptr, ws.dirty, -1 if device is None else device, stream), lib)
            ws.dirty = 0
        ws.key = key
        ws.dirty = max(ws.dirty, need)  # set before the launch: a failed launch leaves it to be cleared
        return ws.ptr, ws.size


def _given_workspace(workspace):
    """A caller's own workspace: a torch uint8/int8 tensor or an interface object (contents are the
    caller's to keep as gemm_steps.h says)."""
    if _arrays.is_tensor(workspace):
        if workspace.device.type != "cuda":
            raise ValueError(f"workspace is on {workspace.device}: it must be device memory")
        return workspace.data_ptr(), workspace.numel() * workspace.element_size()
    try:
        cai = workspace.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"workspace is a {type(workspace).__name__}: expected a torch tensor or an object with "
                        "__cuda_array_interface__") from None
    n = int(cai["typestr"][2:])
    for d in cai["shape"]:
        n *= d
    return int(cai["data"][0]), n


# ---- The calls ------------------------------------------------------------------------------------
def _current_stream(device):
    torch = _arrays.torch_module()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device if device is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream


def _placement(mats, stream):
    """(device, stream, torch_like) of a call: the tensors' device (all the same), the stream passed,
    else torch's current stream on that device when a tensor is among the arguments, else the first
    interface object's stream (v3; None: the default stream)."""
    devices = {m.device for m in mats if m.tensor is not None}
    if len(devices) > 1:
        raise ValueError(f"the tensors are on different devices (cuda:{', cuda:'.join(str(d) for d in sorted(devices))})")
    torch_like = bool(devices)
    device = devices.pop() if devices else None
    handle = _arrays.stream_handle(stream)
    if handle is None:
        if torch_like:
            handle = _current_stream(device)
        else:
            handle = next((m.stream for m in mats if m.stream is not None), 0)
    return device, handle, torch_like


def _output(out, rows, cols, kind, like, name="out"):
    if out is None:
        if like.tensor is None:
            raise TypeError(f"{name} is needed when the inputs are not torch tensors (an interface object of "
                            f"shape ({rows}, {cols}))")
        torch = _arrays.torch_module()
        t = torch.empty((rows, cols), dtype=getattr(torch, _arrays.KINDS[kind][0]), device=like.tensor.device)
        return t, _arrays.Matrix(t.data_ptr(), rows, cols, t, t.device.index, None)
    o = _arrays.matrix(out, name, kind, writable=True)
    if (o.rows, o.cols) != (rows, cols):
        raise ValueError(f"{name} has shape ({o.rows}, {o.cols}), expected ({rows}, {cols})")
    return out, o


_table = {}


def _step_info(step, dtype, scaling):
    """The StepInfo of `step` (None: the last of dtype and scaling), checked against the call's dtype."""
    if not _table:
        _table.update((s.id, s) for s in steps())
    if step is None:
        step = last_step(dtype, scaling or "per_tensor")
    info = _table.get(step) if isinstance(step, str) else None
    if info is None:
        _step_bytes(step)  # a TypeError for a step that is not a string
        raise UnknownStepError(f"no step {step!r} (registered: {' '.join(_table)})", _lib.UNKNOWN_STEP)
    if info.dtype != dtype:
        call = {"fp32": "sgemm", "bf16": "linear", "fp8": "linear_fp8"}
        raise InvalidArgumentError(f"step {step} computes in {info.dtype}: call gemm_steps.{call[info.dtype]}, "
                                   f"not {call[dtype]}", _lib.INVALID_ARGUMENT)
    if dtype == "fp8" and info.scaling != scaling:
        raise InvalidArgumentError(f"step {step} takes {info.scaling} scales, not {scaling}", _lib.INVALID_ARGUMENT)
    return info


def _run(fn_name, step, dtype, scaling, m, n, k, mats, stream, workspace, args):
    device, handle, torch_like = _placement(mats, stream)
    lib = _lib.load()
    info = _step_info(step, dtype, scaling)
    sb = info.id.encode()
    dev = -1 if device is None else device
    if workspace is not None:
        ws_ptr, ws_bytes = _given_workspace(workspace)
    elif info.uses_workspace:  # its size says a refused shape first (before the GPU is asked)
        need = workspace_bytes(info.id, m, n, k, device)
        ws_ptr, ws_bytes = _workspace_for((info.id, m, n, k), need, device, handle, torch_like)
    else:
        ws_ptr, ws_bytes = None, 0
    _lib.check(getattr(lib, fn_name)(sb, *args(ws_ptr, ws_bytes), dev, handle), lib)


def linear(a, b, out=None, *, step=None, stream=None, workspace=None):
    """C = A @ B.T in bf16 with fp32 accumulation (torch.nn.functional.linear without a bias).

    a: M x K bf16, b: N x K bf16 (a weight as nn.Linear stores it), out: M x N bf16 (allocated when
    None and a is a torch tensor). Each row-major and packed, 16-byte aligned, on one CUDA device.
    step: a bf16 step id ("10".."29"); None runs the last one (29, the measured dispatch).
    stream: a cudaStream_t (int) or torch.cuda.Stream; None: torch's current stream (interface objects:
    the stream of a's interface, else the default stream). workspace: your own device buffer of
    workspace_bytes(step, M, N, K) bytes, zero as gemm_steps.h says; None: a cached one per stream.
    Returns out. Raises TypeError / ValueError naming a bad argument, RefusedError for a shape or GPU
    the step refuses, NoDeviceError without a GPU, LaunchError for a CUDA error."""
    A = _arrays.matrix(a, "a", "bf16")
    B = _arrays.matrix(b, "b", "bf16")
    if B.cols != A.cols:
        raise ValueError(f"b has {B.cols} columns and a has {A.cols}: b must be N x K for a (M x K), C = a @ b.T")
    m, n, k = A.rows, B.rows, A.cols
    out, C = _output(out, m, n, "bf16", A)
    _run("gemm_steps_bf16", step, "bf16", None, m, n, k, (A, B, C), stream, workspace,
         lambda ws, wsb: (m, n, k, A.ptr, B.ptr, C.ptr, ws, wsb))
    return out


def _ceil128(x):
    return (x + 127) // 128


def linear_fp8(a, b, scale_a, scale_b, out=None, *, scaling=None, step=None, stream=None, workspace=None):
    """C = dequant(A) @ dequant(B).T, e4m3 in, bf16 out, fp32 accumulation (real value = stored * scale).

    a: M x K e4m3 (torch.float8_e4m3fn), b: N x K e4m3, out: M x N bf16.
    scaling "per_tensor": scale_a, scale_b one float32 each (device tensors of one element);
            "block": scale_a = sfa, ceil(K/128) x M float32 (the scale of rows i of K block kb at
            [kb, i]: M contiguous), scale_b = sfb, ceil(N/128) x ceil(K/128) float32, both contiguous.
    None: per_tensor when both scales hold one element and block shapes do not also match, else block.
    step: an fp8 step of that scaling; None runs the last one (38 per-tensor, 41 block: gemm_steps.last_step says).
    The rest as linear()."""
    A = _arrays.matrix(a, "a", "fp8")
    B = _arrays.matrix(b, "b", "fp8")
    if B.cols != A.cols:
        raise ValueError(f"b has {B.cols} columns and a has {A.cols}: b must be N x K for a (M x K), C = a @ b.T")
    m, n, k = A.rows, B.rows, A.cols
    sfa_shape, sfb_shape = (_ceil128(k), m), (_ceil128(n), _ceil128(k))
    hint_a = f"per-tensor: 1 element; block: {sfa_shape[0]} x {sfa_shape[1]} (ceil(K/128) x M)"
    hint_b = f"per-tensor: 1 element; block: {sfb_shape[0]} x {sfb_shape[1]} (ceil(N/128) x ceil(K/128))"
    sa = _arrays.vector(scale_a, "scale_a", hint_a)
    sb = _arrays.vector(scale_b, "scale_b", hint_b)
    if scaling is None:
        block_fits = sa[1] == sfa_shape[0] * sfa_shape[1] and sb[1] == sfb_shape[0] * sfb_shape[1]
        scaling = "per_tensor" if sa[1] == 1 and sb[1] == 1 else "block" if block_fits else None
        if scaling is None:
            raise ValueError(f"scale_a has {sa[1]} elements and scale_b {sb[1]}: expected 1 and 1 (per-tensor) or "
                             f"{sfa_shape[0] * sfa_shape[1]} and {sfb_shape[0] * sfb_shape[1]} (block scales)")
    code = _scaling_code(scaling)
    want = (1, 1) if scaling == "per_tensor" else (sfa_shape[0] * sfa_shape[1], sfb_shape[0] * sfb_shape[1])
    for (ptr, numel, shape, _, _), name, w, hint in ((sa, "scale_a", want[0], hint_a), (sb, "scale_b", want[1], hint_b)):
        if numel != w:
            raise ValueError(f"{name} has shape {shape} ({numel} elements), expected {w} for {scaling} scales ({hint})")
    scale_mats = [_arrays.Matrix(s[0], 1, s[1], s[3], s[4], None) for s in (sa, sb)]
    out, C = _output(out, m, n, "bf16", A)
    _run("gemm_steps_fp8", step, "fp8", scaling, m, n, k, (A, B, C, *scale_mats), stream, workspace,
         lambda ws, wsb: (code, m, n, k, A.ptr, B.ptr, sa[0], sb[0], C.ptr, ws, wsb))
    return out


def sgemm(a, b, out=None, *, alpha=1.0, beta=0.0, step=None, stream=None, workspace=None):
    """C = alpha * A @ B + beta * C in fp32 (the fp32 steps 00-09b: SGEMM, no TF32).

    a: M x K float32, b: K x N float32 (not transposed: the fp32 steps' layout), out: M x N float32
    (read when beta != 0, so it is required then). step: None runs the last fp32 step (09b).
    The rest as linear()."""
    A = _arrays.matrix(a, "a", "fp32")
    B = _arrays.matrix(b, "b", "fp32")
    if B.rows != A.cols:
        raise ValueError(f"b has {B.rows} rows and a has {A.cols} columns: b must be K x N for a (M x K), C = a @ b")
    if beta != 0 and out is None:
        raise ValueError("out is required when beta != 0 (C is read)")
    m, n, k = A.rows, B.cols, A.cols
    out, C = _output(out, m, n, "fp32", A)
    _run("gemm_steps_fp32", step, "fp32", None, m, n, k, (A, B, C), stream, workspace,
         lambda ws, wsb: (m, n, k, float(alpha), A.ptr, B.ptr, float(beta), C.ptr, ws, wsb))
    return out
