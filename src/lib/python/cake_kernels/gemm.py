"""cake_kernels.gemm — bf16 GEMM, C = A·Bᵀ (torch's a @ b.T), through libcake_gemm.so.

    import cake_kernels
    c = cake_kernels.gemm(a, b)            # a [..., K], b [N, K], bf16 CUDA -> c [..., N]
    print(cake_kernels.gemm.explain(1000, 4096, 4096))

Every shape with K % 8 == 0 runs (ragged M and N take the padded route); the call is queued
on torch's current stream (or `stream=`) and returns at once.
"""
import ctypes
import sys
import types

from . import _native as nat

ROUTES = ("persistent_128x256", "ws_128x256_s3", "persistent_128x128", "splitk_128x128", "ws_128x192_s4", "ws_64x128_s8",
          "streamk_128x256", "streamk_128x128", "persistent_128x160", "ws_64x96_s8", "padded")
AUTO = -1


def _route_index(route):
    if route is None or route == "auto":
        return AUTO
    if isinstance(route, int):
        return route
    if route in ROUTES:
        return ROUTES.index(route)
    raise nat.arg_error("gemm", f"route {route!r}: use one of {', '.join(ROUTES)} or 'auto'")


_fast = {}   # torch fast path: the bf16 dtype, the stream getter, workspace bytes per shape


def _fast_path(a, b, out, r):
    """gemm for dense, aligned torch bf16 tensors on torch's current stream, with as little
    Python as possible (the per-call host cost is part of every benchmark); None when the
    tensors need the general path."""
    f = _fast
    if not f:
        import torch
        f["bf16"] = torch.bfloat16
        f["empty"] = torch.empty
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        f["stream"] = raw if raw is not None else (lambda i: torch.cuda.current_stream(i).cuda_stream)
        f["lib"] = nat.lib("gemm")
        f["ws"] = {}
        f["ws_buf"] = {}
    bf = f["bf16"]
    if a.dtype is not bf or b.dtype is not bf or not a.is_cuda or b.dim() != 2 or not a.is_contiguous() or \
            not b.is_contiguous():
        return None
    pa, pb = a.data_ptr(), b.data_ptr()
    if (pa | pb) & 15:
        return None
    shape = a.shape
    K = shape[-1]
    N, Kb = b.shape
    if Kb != K or a.device != b.device:
        return None
    M = a.numel() // K if K else 0
    if out is None:
        out = f["empty"]((*shape[:-1], N), dtype=bf, device=a.device)
    elif out.dtype is not bf or not out.is_contiguous() or out.data_ptr() & 15 or out.shape != (*shape[:-1], N):
        return None
    if M == 0 or N == 0:
        return out
    key = (M, N, K, r)
    so = f["lib"]
    ws_bytes = f["ws"].get(key)
    if ws_bytes is None:
        ws_bytes = f["ws"][key] = so.cake_gemm_workspace_size(M, N, K, r)
    stream = f["stream"](a.device.index)
    wp = None
    if ws_bytes:
        wp = _workspace(f, a.device, stream, ws_bytes)
    rc = so.cake_gemm_bf16_ex(pa, pb, out.data_ptr(), M, N, K, r, wp, ws_bytes, stream)
    if rc:
        nat.check("gemm", rc)
    return out


def _workspace(f, device, stream, nbytes):
    """A 256-byte aligned device workspace of at least nbytes for calls on `stream`, kept from one
    call to the next (one per device and stream, grown when a larger one is needed). Reusing it
    is safe because the calls that use it are ordered on that stream; a tensor allocated per call
    would cost the caching allocator's Python path on every split-K call.

    A buffer that is outgrown is retired, never freed: a CUDA graph captured earlier may hold its
    address and write it on every replay, and freed memory would go to other tensors (silent
    corruption) or, from a deleted graph's pool, be unmapped (an illegal address). Growth at least
    doubles, so the retired buffers together stay below the largest one. Graphs captured on one
    stream share its workspace: replay them on one stream at a time, as torch does with cuBLAS's."""
    key = (device.index, stream)
    ws = f["ws_buf"].get(key)
    if ws is None or ws.numel() < nbytes + 256:
        if ws is not None:
            f.setdefault("ws_retired", []).append(ws)
            nbytes = max(nbytes, 2 * ws.numel())
        ws = f["ws_buf"][key] = f["empty"]((nbytes + 256,), dtype=torch_uint8(), device=device)
    wp = ws.data_ptr()
    return wp + (-wp) % 256


def torch_uint8():
    import torch
    return torch.uint8


def gemm(a, b, *, out=None, route=None, stream=None):
    """a @ b.T: a [..., K] and b [N, K] bf16 CUDA tensors -> [..., N] bf16 (f32 accumulation).

    out: an optional [..., N] bf16 tensor to write; route: None/'auto' (the dispatcher) or a
    route name (benchmarking; a direct route whose kernel cannot take the shape raises);
    stream: a CUstream handle or torch stream (default: torch's current stream)."""
    if stream is None and nat.is_torch(a) and nat.is_torch(b) and (out is None or nat.is_torch(out)):
        res = _fast_path(a, b, out, _route_index(route))
        if res is not None:
            return res
    so = nat.lib("gemm")
    A = nat.prepare("gemm", a, "a")
    B = nat.prepare("gemm", b, "b")
    if A.dtype != "bf16" or B.dtype != "bf16":
        raise nat.arg_error("gemm", f"a and b must be bfloat16 (got {A.dtype} and {B.dtype})")
    if len(A.shape) < 1 or len(B.shape) != 2:
        raise nat.arg_error("gemm", f"a must be [..., K] and b [N, K] (got {list(A.shape)} and {list(B.shape)})")
    K = A.shape[-1]
    N, Kb = B.shape
    if Kb != K:
        raise nat.arg_error("gemm", f"a is [..., {K}] but b is [{N}, {Kb}]: the last dims must agree")
    lead = A.shape[:-1]
    M = 1
    for d in lead:
        M *= d
    r = _route_index(route)
    if out is None:
        out = nat.empty(A, (*lead, N), "bf16")
    C = nat.prepare("gemm", out, "out")
    if C.dtype != "bf16" or C.shape != (*lead, N):
        raise nat.arg_error("gemm", f"out must be a bfloat16 {[*lead, N]} tensor (got {C.dtype} {list(C.shape)})")
    if C.owner is not out:
        raise nat.arg_error("gemm", "out must be a dense, 16-byte aligned tensor (it is written in place)")
    if M == 0 or N == 0:
        return out
    ws_bytes = so.cake_gemm_workspace_size(M, N, K, r)
    ws = None
    if ws_bytes and nat.is_torch(A.owner) and stream is None:   # torch's allocator, on the stream we run on
        ws = nat.empty(A, (ws_bytes + 256,), "u8")
        wp = ws.data_ptr()
        wp += (-wp) % 256
    else:
        wp, ws_bytes = None, 0
    rc = so.cake_gemm_bf16_ex(A.ptr, B.ptr, C.ptr, M, N, K, r, wp, ws_bytes, nat.stream_of([A, B, C], stream))
    nat.check("gemm", rc)
    return out


def explain(M, N, K):
    """Why shape M, N, K takes its route: the domain, each guard in order, the padding cost."""
    so = nat.lib("gemm")
    buf = ctypes.create_string_buffer(16384)
    so.cake_gemm_explain(M, N, K, buf, len(buf))
    return buf.value.decode()


def route(M, N, K):
    """The name of the route shape M, N, K takes (CakeShapeError outside the domain)."""
    so = nat.lib("gemm")
    r = so.cake_gemm_route(M, N, K)
    if r < 0:
        nat.check("gemm", r)
    return so.cake_gemm_route_name(r).decode()


def version():
    return nat.lib("gemm").cake_gemm_version().decode()


class _CallableModule(types.ModuleType):
    """`cake_kernels.gemm(a, b)` calls gemm(); `cake_kernels.gemm.explain(...)` still works."""

    def __call__(self, a, b, **kw):
        return gemm(a, b, **kw)


sys.modules[__name__].__class__ = _CallableModule
