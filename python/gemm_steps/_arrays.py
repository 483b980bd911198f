"""What a GEMM argument is, as the C API needs it: a device pointer to a packed row-major 2-D matrix
of a given element type, read from a torch tensor or from anything with __cuda_array_interface__
(Numba's CUDA Array Interface, version 2 or 3). Every check names the argument."""
import sys
from collections import namedtuple

# One matrix: its pointer, rows, columns, the torch tensor (None for an interface object), the CUDA
# device index (None: unknown, an interface object) and the interface's stream (None: not given).
Matrix = namedtuple("Matrix", "ptr rows cols tensor device stream")

# Element types: the torch dtype's name, the interface type strings accepted, the element size.
# bf16 and e4m3 have no NumPy type: an interface exporter spells them as opaque 2- and 1-byte elements
# ("<V2", "|V1"); one-byte unsigned storage ("|u1") is taken as e4m3 bit patterns too.
KINDS = {
    "fp32": ("float32", ("<f4",), 4),
    "bf16": ("bfloat16", ("<V2", "|V2"), 2),
    "fp8": ("float8_e4m3fn", ("|V1", "<V1", "|u1", "<u1"), 1),
}


def torch_module():
    """torch when the caller imported it (a torch tensor can exist only then); never imports it."""
    return sys.modules.get("torch")


def is_tensor(x):
    torch = torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def matrix(x, name, kind, writable=False):
    """The Matrix of argument `name`, which must hold `kind` elements ("fp32", "bf16", "fp8")."""
    if is_tensor(x):
        return _tensor_matrix(x, name, kind)
    return _interface_matrix(x, name, kind, writable)


def _packed(name, rows, cols, row_stride, col_stride, unit):
    """Row-major and packed: unit steps along a row, one row length between rows (a dimension of
    extent 1 may have any stride). `unit` names what the strides count (elements or bytes)."""
    if (cols > 1 and col_stride != 1) or (rows > 1 and row_stride != cols):
        raise ValueError(f"{name} must be row-major and packed: strides ({cols}, 1) in {unit} for shape "
                         f"({rows}, {cols}), got ({row_stride}, {col_stride}) (pass a contiguous copy, e.g. "
                         f"{name}.contiguous())")


def _aligned(name, ptr):
    """The steps read and write rows with TMA and 16-byte vector accesses (gemm_steps.h)."""
    if ptr % 16:
        raise ValueError(f"{name}'s data pointer {ptr:#x} is not 16-byte aligned (a view whose offset is not a "
                         f"multiple of 16 bytes): the steps move rows with TMA and 16-byte loads; pass a copy")


_want = {}  # kind -> torch dtype (None: this torch has none), read once


def _tensor_matrix(t, name, kind):
    """The common case first, in the fewest torch calls (each costs 0.05-0.4 us, and a GEMM call checks
    three tensors: make bench-torch's per-call table); anything it does not take goes to the checks
    below, which name what is wrong."""
    want = _want.get(kind, False)
    if want is not False and t.is_cuda and t.dtype is want:
        shape = t.shape
        if len(shape) == 2:
            rows, cols = shape
            rs, cs = t.stride()
            ptr = t.data_ptr()
            if (cols <= 1 or cs == 1) and (rows <= 1 or rs == cols) and ptr % 16 == 0:
                return Matrix(ptr, rows, cols, t, t.get_device(), None)
    return _tensor_matrix_checked(t, name, kind)


def _tensor_matrix_checked(t, name, kind):
    torch = torch_module()
    want = _want.setdefault(kind, getattr(torch, KINDS[kind][0], None))
    if want is None:
        raise TypeError(f"{name}: this torch ({torch.__version__}) has no torch.{KINDS[kind][0]}")
    if t.device.type != "cuda":
        raise ValueError(f"{name} is on {t.device}: gemm_steps runs on CUDA tensors (move it with {name}.cuda())")
    if t.dtype != want:
        raise TypeError(f"{name} has dtype {t.dtype}, expected {want}")
    if t.dim() != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(t.shape)}")
    rows, cols = t.shape
    _packed(name, rows, cols, t.stride(0), t.stride(1), "elements")
    ptr = t.data_ptr()
    _aligned(name, ptr)
    return Matrix(ptr, rows, cols, t, t.device.index, None)


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _interface(x, name, hint=""):
    """x.__cuda_array_interface__ checked for what the package reads (v3: shape, typestr, data, optional
    strides, mask, stream), each malformed field a TypeError or ValueError naming the argument:
    (the dict, shape tuple, data pointer, read-only flag, strides tuple or None)."""
    try:
        cai = x.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"{name} is a {type(x).__name__}: expected a torch tensor or an object with "
                        f"__cuda_array_interface__{hint}") from None
    if not isinstance(cai, dict) or "shape" not in cai or "typestr" not in cai or "data" not in cai:
        raise TypeError(f"{name}.__cuda_array_interface__ is not a dict with shape, typestr and data{hint}")
    try:
        shape = tuple(cai["shape"])
    except TypeError:
        raise TypeError(f"{name}.__cuda_array_interface__['shape'] is {cai['shape']!r}: expected a tuple of ints") from None
    if not all(_whole(d) for d in shape):
        raise TypeError(f"{name} has shape {shape}: expected whole numbers{hint}")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name} has shape {shape}: a dimension is negative{hint}")
    data = cai["data"]
    if not (isinstance(data, (tuple, list)) and len(data) == 2 and (data[0] is None or _whole(data[0]))):
        raise TypeError(f"{name}.__cuda_array_interface__['data'] is {data!r}: expected (pointer, read_only)")
    strides = cai.get("strides")
    if strides is not None:
        try:
            strides = tuple(strides)
        except TypeError:
            raise TypeError(f"{name}.__cuda_array_interface__['strides'] is {strides!r}: expected a tuple of ints") from None
        if len(strides) != len(shape) or not all(_whole(v) for v in strides):
            raise ValueError(f"{name} has strides {strides} for shape {shape}: expected one whole number a dimension")
    return cai, shape, data[0], bool(data[1]), strides


def _interface_matrix(x, name, kind, writable):
    cai, shape, ptr, readonly, strides = _interface(x, name)
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {shape}")
    typestr = cai["typestr"]
    if typestr not in KINDS[kind][1]:
        raise TypeError(f"{name} has element type {typestr!r}, expected {kind} "
                        f"({' or '.join(repr(s) for s in KINDS[kind][1])} in __cuda_array_interface__)")
    if cai.get("mask") is not None:
        raise ValueError(f"{name} has a mask: masked arrays are not supported")
    if writable and readonly:
        raise ValueError(f"{name} is read-only: the result is written there")
    rows, cols = shape
    if strides is not None:
        size = KINDS[kind][2]
        if strides[0] % size or strides[1] % size:
            raise ValueError(f"{name} has strides {tuple(strides)} bytes, not whole {size}-byte elements")
        _packed(name, rows, cols, strides[0] // size, strides[1] // size, "elements")
    if rows * cols > 0 and not ptr:
        raise ValueError(f"{name} has a NULL data pointer")
    ptr = int(ptr or 0)
    _aligned(name, ptr)
    return Matrix(ptr, rows, cols, None, None, cai.get("stream"))


def vector(x, name, count_hint):
    """A float32 device array of any shape read as its packed elements (the FP8 scales): (ptr, numel,
    tensor or None, device). `count_hint` names the expected shape, for the messages."""
    if is_tensor(x):
        torch = torch_module()
        if x.device.type != "cuda":
            raise ValueError(f"{name} is on {x.device}: the scales live in device memory (move it with {name}.cuda())")
        if x.dtype != torch.float32:
            raise TypeError(f"{name} has dtype {x.dtype}, expected torch.float32 ({count_hint})")
        if not x.is_contiguous():
            raise ValueError(f"{name} must be contiguous ({count_hint}), got strides {x.stride()}")
        return x.data_ptr(), x.numel(), tuple(x.shape), x, x.device.index
    cai, shape, ptr, _, strides = _interface(x, name, f" ({count_hint})")
    if cai.get("typestr") != "<f4":
        raise TypeError(f"{name} has element type {cai.get('typestr')!r}, expected '<f4' float32 ({count_hint})")
    numel = 1
    for d in shape:
        numel *= d
    if strides is not None:  # C-contiguous: strides of a row-major packed array
        want, acc = [], 4
        for d in reversed(shape):
            want.append(acc)
            acc *= d
        if any(d > 1 and s != w for d, s, w in zip(shape, strides, reversed(want))):
            raise ValueError(f"{name} must be contiguous ({count_hint}), got strides {tuple(strides)} bytes")
    return int(ptr or 0), numel, shape, None, None


def stream_handle(stream):
    """A raw cudaStream_t (an int) from what a caller may pass: None, an int, or a torch.cuda.Stream
    (or anything with a .cuda_stream)."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)
    if isinstance(handle, int):
        return handle
    raise TypeError(f"stream is a {type(stream).__name__}: expected an int cudaStream_t or a torch.cuda.Stream")
