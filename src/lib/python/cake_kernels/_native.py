"""cake_kernels._native — the ctypes layer: loading the generated libraries, reading tensors,
raising errors.

The shared libraries (libcake_gemm.so, libcake_kmeans.so, libcake_kda.so) sit next to this file; each is
loaded on first use, so the package imports without them, without a GPU and without torch.

Tensors are read, in this order, as
  * torch tensors (data_ptr, shape, strides, dtype; torch is imported only when one is given),
  * objects with __cuda_array_interface__ (CuPy, Numba, ...),
  * objects with __dlpack__ (any DLPack producer; the capsule is kept alive for the call).
Only dense row-major CUDA tensors are accepted by the C functions; the Python functions
make a contiguous, 16-byte aligned copy of a torch tensor that is not (other producers must
pass dense tensors).

Errors: every failure is a CakeError carrying the library's code, its fixed description and
the detailed message of the call (cake_*_last_error), raised as the subclass that says what
to do about it: CakeShapeError (outside the domain), CakeArgumentError, CakeDeviceError
(no driver, no GPU, not an H100/H200), CakeCudaError (a driver call failed, out of memory),
CakeLibraryNotBuilt (the .so of that family is not in the package).
"""
import ctypes
import os

OK, E_ARG, E_SHAPE, E_ROUTE, E_WORKSPACE, E_NO_DRIVER, E_NO_DEVICE, E_ARCH, E_CUDA, E_NOMEM, E_INTERNAL = range(11)


class CakeError(RuntimeError):
    """A Cake library call failed: .code (CAKE_*_E_*), .reason (fixed text), .detail (this call)."""

    def __init__(self, family, code, reason, detail):
        self.family, self.code, self.reason, self.detail = family, code, reason, detail
        super().__init__(f"cake_{family}: {reason}" + (f": {detail}" if detail else ""))


class CakeShapeError(CakeError, ValueError):
    """The shape is outside the library's declared domain (the message names the clause)."""


class CakeArgumentError(CakeError, ValueError):
    """A tensor has the wrong dtype, rank, device or layout, or an option is unknown."""


class CakeDeviceError(CakeError):
    """No CUDA driver, no CUDA device, or a GPU that is not sm_90 (H100/H200)."""


class CakeCudaError(CakeError):
    """A CUDA driver call failed, or the device is out of memory."""


class CakeLibraryNotBuilt(CakeError, ImportError):
    """The package has no libcake_FAMILY.so (run `cake library FAMILY -o DIR` into it)."""


_CLASS = {E_ARG: CakeArgumentError, E_SHAPE: CakeShapeError, E_ROUTE: CakeArgumentError,
          E_WORKSPACE: CakeArgumentError, E_NO_DRIVER: CakeDeviceError, E_NO_DEVICE: CakeDeviceError,
          E_ARCH: CakeDeviceError, E_CUDA: CakeCudaError, E_NOMEM: CakeCudaError}

_HERE = os.path.dirname(os.path.abspath(__file__))
_libs = {}

c_i64, c_int, c_size, c_vp, c_char_p, c_double = (ctypes.c_int64, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p,
                                                  ctypes.c_char_p, ctypes.c_double)

_PROTOS = {
    "gemm": {
        "cake_gemm_bf16": (c_int, [c_vp, c_vp, c_vp, c_i64, c_i64, c_i64, c_vp]),
        "cake_gemm_bf16_ex": (c_int, [c_vp, c_vp, c_vp, c_i64, c_i64, c_i64, c_int, c_vp, c_size, c_vp]),
        "cake_gemm_workspace_size": (c_size, [c_i64, c_i64, c_i64, c_int]),
        "cake_gemm_route": (c_int, [c_i64, c_i64, c_i64]),
        "cake_gemm_explain": (c_int, [c_i64, c_i64, c_i64, c_char_p, c_size]),
        "cake_gemm_route_count": (c_int, []),
        "cake_gemm_route_name": (c_char_p, [c_int]),
        "cake_gemm_strerror": (c_char_p, [c_int]),
        "cake_gemm_last_error": (c_char_p, []),
        "cake_gemm_version": (c_char_p, []),
    },
    "kmeans": {
        "cake_kmeans_fit": (c_int, [c_vp, c_vp, c_vp, c_i64, c_i64, c_i64, c_i64, c_int, c_int, c_double, c_int, c_vp,
                                    c_size, ctypes.POINTER(c_int), ctypes.POINTER(c_double), c_vp]),
        "cake_kmeans_assign": (c_int, [c_vp, c_vp, c_vp, c_i64, c_i64, c_i64, c_i64, c_int, c_vp, c_size, c_vp]),
        "cake_kmeans_update": (c_int, [c_vp, c_vp, c_vp, c_vp, c_vp, c_i64, c_i64, c_i64, c_i64, c_int, c_int, c_vp,
                                       c_size, c_vp]),
        "cake_kmeans_init_even": (c_int, [c_vp, c_vp, c_i64, c_i64, c_i64, c_i64, c_int, c_vp]),
        "cake_kmeans_workspace_size": (c_size, [c_i64, c_i64, c_i64, c_i64, c_int, c_int, c_int]),
        "cake_kmeans_route": (c_int, [c_i64, c_i64, c_i64, c_i64, c_int, c_int, ctypes.POINTER(c_int),
                                      ctypes.POINTER(c_int), ctypes.POINTER(c_i64), ctypes.POINTER(c_i64)]),
        "cake_kmeans_explain": (c_int, [c_i64, c_i64, c_i64, c_i64, c_int, c_int, c_char_p, c_size]),
        "cake_kmeans_assign_route_name": (c_char_p, [c_int]),
        "cake_kmeans_update_route_name": (c_char_p, [c_int]),
        "cake_kmeans_strerror": (c_char_p, [c_int]),
        "cake_kmeans_last_error": (c_char_p, []),
        "cake_kmeans_version": (c_char_p, []),
    },
    "kda": {
        "cake_kda_prefill": (c_int, [c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_i64, c_i64, c_i64,
                                     c_i64, c_i64, ctypes.POINTER(ctypes.c_int32), c_i64, c_int, c_int, ctypes.c_float,
                                     c_vp, c_size, c_vp]),
        "cake_kda_decode": (c_int, [c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_vp, c_i64, c_i64, c_i64,
                                    c_i64, c_i64, c_int, c_int, ctypes.c_float, c_vp, c_size, c_vp]),
        "cake_kda_prefill_workspace_size": (c_size, [c_i64, c_i64, c_i64, c_i64, c_i64, ctypes.POINTER(ctypes.c_int32),
                                                     c_i64, c_int, c_int, c_int, c_int]),
        "cake_kda_decode_workspace_size": (c_size, [c_i64, c_i64, c_i64, c_i64, c_i64, c_int, c_int, c_int, c_int]),
        "cake_kda_route": (c_int, [c_int, c_i64, c_i64, c_i64, c_i64, c_i64, ctypes.POINTER(ctypes.c_int32), c_i64, c_int,
                                   c_int]),
        "cake_kda_explain": (c_int, [c_int, c_i64, c_i64, c_i64, c_i64, c_i64, ctypes.POINTER(ctypes.c_int32), c_i64,
                                     c_int, c_int, c_char_p, c_size]),
        "cake_kda_route_count": (c_int, []),
        "cake_kda_route_name": (c_char_p, [c_int]),
        "cake_kda_strerror": (c_char_p, [c_int]),
        "cake_kda_last_error": (c_char_p, []),
        "cake_kda_version": (c_char_p, []),
    },
}


def library_path(family):
    """Where libcake_FAMILY.so is expected (next to this file, or $CAKE_KERNELS_LIB_DIR)."""
    d = os.environ.get("CAKE_KERNELS_LIB_DIR") or _HERE
    return os.path.join(d, f"libcake_{family}.so")


def lib(family):
    """The loaded libcake_FAMILY.so with its prototypes (loaded once)."""
    if family in _libs:
        return _libs[family]
    path = library_path(family)
    if not os.path.exists(path):
        raise CakeLibraryNotBuilt(family, -1, "library not built",
                                  f"{path} does not exist: generate it with `cake library {family} -o DIR` "
                                  f"and install DIR (pip install DIR)")
    try:
        so = ctypes.CDLL(path)
    except OSError as e:
        raise CakeLibraryNotBuilt(family, -1, "library cannot be loaded", f"{path}: {e}") from e
    for name, (res, args) in _PROTOS[family].items():
        f = getattr(so, name)
        f.restype, f.argtypes = res, args
    _libs[family] = so
    return so


def check(family, rc):
    """Raise the CakeError of result code rc (nothing for 0)."""
    if rc == OK:
        return
    so = lib(family)
    code = -rc if rc < 0 else rc
    reason = getattr(so, f"cake_{family}_strerror")(code).decode()
    detail = getattr(so, f"cake_{family}_last_error")().decode()
    raise _CLASS.get(code, CakeError)(family, code, reason, detail)


def arg_error(family, msg):
    return CakeArgumentError(family, E_ARG, "bad argument", msg)


# ---------------------------------------------------------------- tensors ----

def _torch():
    import torch  # only when a torch tensor was passed, or an output must be allocated
    return torch


def torch_available():
    """Whether torch can be imported (without importing it twice)."""
    try:
        _torch()
        return True
    except ImportError:
        return False


def is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


class Array:
    """A dense CUDA tensor as the C functions see it: ptr, shape, dtype name, device, owner."""

    def __init__(self, ptr, shape, dtype, device, owner, contiguous=True):
        self.ptr, self.shape, self.dtype, self.device, self.owner = ptr, tuple(shape), dtype, device, owner
        self.contiguous = contiguous


_TORCH_DT = {"torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32", "torch.int32": "i32",
             "torch.int64": "i64", "torch.uint8": "u8"}
_TYPESTR = {"<f2": "f16", "<f4": "f32", "<i4": "i32", "<i8": "i64", "|u1": "u8", "<V2": "bf16"}
_DLPACK = {(0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (2, 16): "f16", (2, 32): "f32", (4, 16): "bf16"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


def _dense(shape, strides):
    """Whether element strides describe a row-major dense layout (None: dense)."""
    if strides is None:
        return True
    want = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != want:
            return False
        want *= n
    return True


def as_array(family, x, name):
    """Read tensor x (argument `name`) as an Array, or raise CakeArgumentError."""
    if is_torch(x):
        if not x.is_cuda:
            raise arg_error(family, f"{name} is on {x.device}; pass a CUDA tensor")
        dt = _TORCH_DT.get(str(x.dtype))
        return Array(x.data_ptr(), x.shape, dt or str(x.dtype), x.device.index, x, x.is_contiguous())
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(cai["shape"])
        ts = cai["typestr"]
        dt = _TYPESTR.get(ts, ts)
        if ts == "<V2" and getattr(getattr(x, "dtype", None), "name", "") not in ("bfloat16", ""):
            dt = ts
        item = int(ts[2:]) if ts[2:].isdigit() else 1
        strides = cai.get("strides")
        est = None if strides is None else tuple(s // item for s in strides)
        return Array(int(cai["data"][0] or 0), shape, dt, None, x, _dense(shape, est))
    if hasattr(x, "__dlpack__"):
        cap = x.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        t = _DLTensor.from_address(get(cap, b"dltensor"))
        if t.device.device_type not in (2, 13):   # kDLCUDA, kDLCUDAManaged
            raise arg_error(family, f"{name} is not a CUDA tensor (DLPack device type {t.device.device_type})")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        dt = _DLPACK.get((t.dtype.code, t.dtype.bits), f"dlpack({t.dtype.code},{t.dtype.bits})")
        return Array((t.data or 0) + t.byte_offset, shape, dt, t.device.device_id, (x, cap), _dense(shape, strides))
    raise arg_error(family, f"{name} is a {type(x).__name__}: pass a torch CUDA tensor, or an object with "
                    "__cuda_array_interface__ or __dlpack__")


def prepare(family, x, name):
    """as_array, after making a torch tensor dense and 16-byte aligned (a copy if it is not)."""
    if is_torch(x) and x.is_cuda and (not x.is_contiguous() or x.data_ptr() % 16):
        x = x.contiguous() if not x.is_contiguous() else x.clone()
    a = as_array(family, x, name)
    if not a.contiguous:
        raise arg_error(family, f"{name} is not dense row-major: pass a contiguous tensor")
    if a.ptr % 16:
        raise arg_error(family, f"{name} is not 16-byte aligned: pass a fresh (or cloned) tensor")
    return a


def stream_of(arrays, stream):
    """The CUstream handle for a call: the given one, else torch's current stream when the
    tensors are torch tensors, else 0 (the legacy default stream)."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream))
    for a in arrays:
        if is_torch(a.owner):
            torch = _torch()
            return torch.cuda.current_stream(a.owner.device).cuda_stream
    return 0


def empty(like, shape, dtype, family="kernels"):
    """A new CUDA tensor (torch) on like's device, or CakeArgumentError without torch."""
    if not is_torch(like.owner) and not torch_available():
        raise arg_error(family, "outputs are allocated with torch, which is not installed: pass out= tensors")
    torch = _torch()
    dev = like.owner.device if is_torch(like.owner) else torch.device("cuda", like.device or 0)
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "i32": torch.int32,
           "u8": torch.uint8}[dtype]
    return torch.empty(tuple(shape), dtype=tdt, device=dev)
