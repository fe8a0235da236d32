"""cake_kernels.kda — Kimi Delta Attention forward through libcake_kda.so.

    from cake_kernels import kda
    o, ht = kda.chunk_kda(q, k, v, g, beta, A_log, dt_bias, lower_bound=-5.0,
                          initial_state=h0, output_final_state=True, cu_seqlens=cu)
    o, ht = kda.fused_recurrent_kda(q, k, v, g, beta, A_log, dt_bias, initial_state=h0,
                                    output_final_state=True)          # 1 .. 16 tokens
    print(kda.explain(B=1, T=8192, H=64)); kda.route(B=1, T=8192, H=64)

The arguments and layouts mirror FLA's fla.ops.kda (chunk_kda, fused_recurrent_kda) as far as
the kernels allow: q, k, g [B, T, H, 128] and v [B, T, H, 128], beta [B, T, H], all bfloat16 and
CUDA; A_log [H] and dt_bias [H * 128] (or [H, 128]) float32; cu_seqlens (N + 1 offsets, B = 1)
packs N sequences along T; initial_state / the final state [N, H, K, V] (FLA's default layout;
state_v_first=True: [N, H, V, K], Cake's own, which spares two transposes) in float32 or
bfloat16. The kernels fuse what FLA does in-kernel on request: the q/k L2 norms, the beta
sigmoid and the gate from the raw g (use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel,
use_gate_in_kernel must stay True, their defaults here), with the scale 1/sqrt(128). The gate
is FLA's: lower_bound=None the softplus gate -exp(A_log) softplus(g + dt_bias), a lower bound
lambda in [-5, 0) the lower-bound gate lambda sigmoid(exp(A_log) (g + dt_bias)). Forward only
(no autograd). One difference in the call: after beta, the positional arguments are A_log,
dt_bias, lower_bound, initial_state, output_final_state, cu_seqlens, state_dtype (FLA's sixth
is scale); FLA's keyword names are all taken, so a call written with keywords is the same.

chunk_kda routes by the library's dispatcher (`cake library kda --explain`): the chunked split
chain for the lower-bound gate from 64 tokens, the per-token kernels otherwise.
fused_recurrent_kda runs the decode kernels: 1 .. 16 tokens per sequence (a step or a
speculative window); with cu_seqlens every sequence must have the same length.

cu_seqlens is read on the host (the library builds its chunk tables there): a CUDA cu_seqlens
is copied to the host once per call, one synchronisation, as FLA's varlen path also does; pass
a CPU tensor or a list to avoid it. A prefill call is therefore not capturable in a CUDA graph;
fused_recurrent_kda is.

Bad shapes, dtypes and options raise ValueError (CakeShapeError / CakeArgumentError, both
ValueErrors) naming the problem before the library is called; a call without a GPU raises
CakeDeviceError. NaN or inf in the inputs is not looked for (it spreads through the state):
that check is the caller's. Calls run on torch's current stream (or stream=).
"""
import ctypes
import math

from . import _native as nat

F32, BF16 = 0, 1
SOFTPLUS, LOWER_BOUND = 0, 1
PREFILL, DECODE = 0, 1
HEAD = 128


def _err(msg):
    return nat.arg_error("kda", msg)


def _shape_err(msg):
    return nat.CakeShapeError("kda", nat.E_SHAPE, "shape outside the library's domain", msg)


def _meta(x, name):
    """(shape, dtype name, on CUDA) of a tensor, without requiring CUDA for a torch tensor."""
    if x is None:
        raise _err(f"{name} is required")
    if nat.is_torch(x):
        return tuple(x.shape), nat._TORCH_DT.get(str(x.dtype), str(x.dtype)), bool(x.is_cuda)
    a = nat.as_array("kda", x, name)
    return tuple(a.shape), a.dtype, True


def _state_code(state_dtype, initial_state):
    if state_dtype is None:
        if initial_state is None:
            return F32
        dt = _meta(initial_state, "initial_state")[1]
    else:
        dt = {"torch.float32": "f32", "torch.bfloat16": "bf16", "float32": "f32", "bfloat16": "bf16", "f32": "f32",
              "bf16": "bf16"}.get(str(state_dtype))
        if dt is None:
            raise _err(f"state_dtype {state_dtype!r}: the state is float32 or bfloat16")
    if dt not in ("f32", "bf16"):
        raise _err(f"the state is float32 or bfloat16 (got {dt})")
    return F32 if dt == "f32" else BF16


def _gate(lower_bound):
    if lower_bound is None:
        return SOFTPLUS, 0.0
    lb = float(lower_bound)
    if not (-5.0 <= lb < 0.0):
        raise _err(f"lower_bound {lb}: the lower-bound gate takes lambda in [-5, 0)")
    return LOWER_BOUND, lb


def _host_offsets(cu_seqlens):
    """cu_seqlens as a list of ints (a CUDA tensor is copied to the host: one synchronisation)."""
    if nat.is_torch(cu_seqlens):
        if cu_seqlens.dim() != 1 or cu_seqlens.dtype.is_floating_point:
            raise _err(f"cu_seqlens must be a 1-D integer tensor (got {list(cu_seqlens.shape)} {cu_seqlens.dtype})")
        return [int(x) for x in cu_seqlens.tolist()]
    if hasattr(cu_seqlens, "__cuda_array_interface__") or hasattr(cu_seqlens, "__dlpack__"):
        raise _err("cu_seqlens must be a torch tensor, a list or a tuple of ints")
    try:
        return [int(x) for x in cu_seqlens]
    except (TypeError, ValueError) as e:
        raise _err(f"cu_seqlens must be integers: {e}") from e


def _check_offsets(cu, T):
    if len(cu) < 2:
        raise _shape_err(f"cu_seqlens holds {len(cu)} offsets: it needs at least two (one sequence)")
    if cu[0] != 0:
        raise _shape_err(f"cu_seqlens[0] = {cu[0]}: cu_seqlens starts at 0")
    for i in range(len(cu) - 1):
        if cu[i + 1] < cu[i]:
            raise _shape_err(f"cu_seqlens[{i}] = {cu[i]} > cu_seqlens[{i + 1}] = {cu[i + 1]}: cu_seqlens is not monotone")
        if cu[i + 1] == cu[i]:
            raise _shape_err(f"cu_seqlens[{i}] = cu_seqlens[{i + 1}] = {cu[i]}: sequence {i} has no token (drop "
                             "zero-length sequences)")
    if cu[-1] != T:
        raise _shape_err(f"cu_seqlens ends at {cu[-1]}, not at T = {T}: cu_seqlens must end at T")
    if len(cu) - 1 > 65535 or T > 2 ** 31 - 1:
        raise _shape_err("at most 65535 packed sequences and 2^31 - 1 tokens")


def _validate(q, k, v, g, beta, A_log, dt_bias, scale, flags, state_v_first, initial_state, sdt):
    """Shapes and dtypes of a call (ValueErrors naming the problem); returns B, T, H."""
    l2, gate_in, beta_in = flags
    if not (l2 and gate_in and beta_in):
        raise _err("use_qk_l2norm_in_kernel, use_gate_in_kernel and use_beta_sigmoid_in_kernel must be True: the "
                   "kernels fuse the q/k L2 norms, the gate from the raw g and the beta sigmoid")
    sq, dq, cq = _meta(q, "q")
    if len(sq) != 4:
        raise _err(f"q must be [B, T, H, K] (got {list(sq)})")
    B, T, H, K = sq
    for name, x in (("k", k), ("g", g)):
        s = _meta(x, name)[0]
        if s != sq:
            raise _err(f"{name} must have q's shape {list(sq)} (got {list(s)})")
    sv = _meta(v, "v")[0]
    if len(sv) != 4 or sv[:3] != sq[:3]:
        raise _err(f"v must be [B, T, H, V] = [{B}, {T}, {H}, V] (got {list(sv)})")
    V = sv[3]
    sb = _meta(beta, "beta")[0]
    if sb != (B, T, H):
        raise _err(f"beta must be [B, T, H] = [{B}, {T}, {H}] (got {list(sb)})")
    for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("beta", beta)):
        dt = _meta(x, name)[1]
        if dt != "bf16":
            raise _err(f"{name} must be bfloat16 (got {dt})")
    if K != HEAD or V != HEAD:
        raise _shape_err(f"head dimensions K = {K}, V = {V}: the kernels are written for K = V = 128")
    if T == 0:
        raise _shape_err("T = 0: at least one token")
    if B == 0 or H == 0:
        raise _shape_err(f"B = {B}, H = {H}: at least one batch entry and one head")
    if A_log is None:
        raise _err("A_log is required (the kernels compute the gate from the raw g)")
    sa, da, _ = _meta(A_log, "A_log")
    if math.prod(sa) != H:
        raise _err(f"A_log must hold H = {H} values (got shape {list(sa)})")
    if dt_bias is not None:
        sd = _meta(dt_bias, "dt_bias")[0]
        if math.prod(sd) != H * K:
            raise _err(f"dt_bias must hold H * K = {H * K} values ([H * K] or [H, K]; got shape {list(sd)})")
    if scale is not None and abs(float(scale) * math.sqrt(K) - 1) > 1e-6:
        raise _err(f"scale {scale}: the kernels apply 1/sqrt(K) = {1 / math.sqrt(K):.6g} to q")
    if initial_state is not None:
        s0, d0, _ = _meta(initial_state, "initial_state")
        if d0 != ("f32" if sdt == F32 else "bf16"):
            raise _err(f"initial_state is {d0}; the state dtype is {'float32' if sdt == F32 else 'bfloat16'}")
        return B, T, H, s0
    return B, T, H, None


def _f32(x, name):
    """A dense float32 CUDA tensor (A_log, dt_bias), converting a floating torch tensor."""
    if nat.is_torch(x):
        if not x.dtype.is_floating_point:
            raise _err(f"{name} must be floating point (got {x.dtype})")
        return nat.prepare("kda", x.reshape(-1).to(dtype=nat._torch().float32), name)
    a = nat.prepare("kda", x, name)
    if a.dtype != "f32":
        raise _err(f"{name} must be float32 (got {a.dtype})")
    return a


def _cuda_check(*xs):
    """A torch tensor not on CUDA: CakeDeviceError without a CUDA device, else an argument error."""
    for name, x in xs:
        if x is not None and nat.is_torch(x) and not x.is_cuda:
            torch = nat._torch()
            if not torch.cuda.is_available():
                raise nat.CakeDeviceError("kda", nat.E_NO_DEVICE, "no CUDA device",
                                          f"{name} is on {x.device} and torch sees no CUDA device: the KDA kernels "
                                          "need an H100/H200")
            raise _err(f"{name} is on {x.device}; pass CUDA tensors")


def _run(mode, q, k, v, g, beta, A_log, dt_bias, lower_bound, scale, initial_state, output_final_state, cu_seqlens,
         state_dtype, state_v_first, flags, out, final_state_out, inplace, stream):
    sdt = _state_code(state_dtype, initial_state)
    gate, lb = _gate(lower_bound)
    B, T, H, s0shape = _validate(q, k, v, g, beta, A_log, dt_bias, scale, flags, state_v_first, initial_state, sdt)
    cu = None
    N = B
    if cu_seqlens is not None:
        cu = _host_offsets(cu_seqlens)
        if B != 1:
            raise _shape_err(f"cu_seqlens packs the sequences along T, so B must be 1 (got B = {B})")
        _check_offsets(cu, T)
        N = len(cu) - 1
    if mode == DECODE and cu is not None:   # packed sequences of one length L <= 16: B = N, T = L
        lens = {cu[i + 1] - cu[i] for i in range(N)}
        if len(lens) != 1:
            raise _shape_err(f"fused_recurrent_kda runs sequences of one length (1 .. 16 tokens) per call; "
                             f"cu_seqlens has lengths {sorted(lens)[:8]}: use chunk_kda")
        B, T, cu = N, lens.pop(), None
    if mode == DECODE and T > 16:
        raise _shape_err(f"fused_recurrent_kda runs 1 .. 16 tokens per sequence (a decode step or a speculative "
                         f"window), not T = {T}: use chunk_kda")
    if mode == PREFILL and gate == SOFTPLUS and sdt == BF16:
        raise _shape_err("a bfloat16 state in chunk_kda needs the lower-bound gate (lower_bound=...): no softplus-gate "
                         "prefill kernel takes a bfloat16 state")
    if s0shape is not None and tuple(s0shape) != (N, H, HEAD, HEAD):
        raise _err(f"initial_state must be [N, H, K, V] = [{N}, {H}, 128, 128] (got {list(s0shape)})")
    _cuda_check(("q", q), ("k", k), ("v", v), ("g", g), ("beta", beta), ("A_log", A_log), ("dt_bias", dt_bias),
                ("initial_state", initial_state))
    so = nat.lib("kda")
    cu_arr = (ctypes.c_int32 * len(cu))(*cu) if cu is not None else None
    r = so.cake_kda_route(mode, B, T, H, HEAD, HEAD, cu_arr, N, sdt, gate)   # a route number, or minus a code
    if r < 0:
        nat.check("kda", r)
    Q, Kt, Vt, Gt, Bt = (nat.prepare("kda", x, n) for n, x in (("q", q), ("k", k), ("v", v), ("g", g), ("beta", beta)))
    A = _f32(A_log, "A_log")
    if dt_bias is None:
        zeros = nat.empty(Q, (H * HEAD,), "f32", "kda")
        zeros.zero_()
        D = nat.prepare("kda", zeros, "dt_bias")
    else:
        D = _f32(dt_bias, "dt_bias")
    st_name = "f32" if sdt == F32 else "bf16"
    S0 = None
    if initial_state is not None:
        s0 = initial_state
        if not state_v_first:
            if not nat.is_torch(s0):
                raise _err("initial_state in FLA's [N, H, K, V] layout is transposed with torch: pass a torch tensor "
                           "or state_v_first=True")
            s0 = s0.transpose(-1, -2).contiguous()
        S0 = nat.prepare("kda", s0, "initial_state")
    o = out if out is not None else nat.empty(Q, (Q.shape[0], Q.shape[1], H, HEAD), "bf16", "kda")
    O = nat.prepare("kda", o, "out")
    if O.owner is not o or tuple(O.shape) != tuple(Q.shape) or O.dtype != "bf16":
        raise _err(f"out must be a dense bfloat16 tensor of q's shape {list(Q.shape)}")
    SN = ht = None
    if output_final_state or inplace:
        if inplace and state_v_first and S0 is not None and S0.owner is initial_state:
            SN, ht = S0, initial_state
        else:
            ht = final_state_out if (final_state_out is not None and state_v_first) else \
                nat.empty(Q, (N, H, HEAD, HEAD), st_name, "kda")
            SN = nat.prepare("kda", ht, "final_state_out")
            if SN.owner is not ht or tuple(SN.shape) != (N, H, HEAD, HEAD) or SN.dtype != st_name:
                raise _err(f"final_state_out must be a dense {st_name} [{N}, {H}, 128, 128] tensor")
    st = nat.stream_of([Q], stream)
    ws = wp = None
    wn = 0
    if nat.is_torch(Q.owner) and stream is None:   # the workspace from torch's allocator, on its stream
        n = (so.cake_kda_decode_workspace_size(B, T, H, HEAD, HEAD, sdt, gate, S0 is not None, SN is not None)
             if mode == DECODE else
             so.cake_kda_prefill_workspace_size(B, T, H, HEAD, HEAD, cu_arr, N, sdt, gate, S0 is not None,
                                                SN is not None))
        if n:
            ws = nat.empty(Q, (n + 256,), "u8", "kda")
            p = ws.data_ptr()
            wp, wn = p + (-p) % 256, n
    if mode == DECODE:
        rc = so.cake_kda_decode(Q.ptr, Kt.ptr, Vt.ptr, Gt.ptr, Bt.ptr, A.ptr, D.ptr, S0.ptr if S0 else None,
                                SN.ptr if SN else None, O.ptr, B, T, H, HEAD, HEAD, sdt, gate, lb, wp, wn, st)
    else:
        rc = so.cake_kda_prefill(Q.ptr, Kt.ptr, Vt.ptr, Gt.ptr, Bt.ptr, A.ptr, D.ptr, S0.ptr if S0 else None,
                                 SN.ptr if SN else None, O.ptr, B, T, H, HEAD, HEAD, cu_arr, N, sdt, gate, lb, wp, wn, st)
    nat.check("kda", rc)
    if ht is not None:
        if not state_v_first:
            ht = ht.transpose(-1, -2).contiguous()
        if inplace and ht is not initial_state:
            initial_state.copy_(ht)
            ht = initial_state
        elif not inplace and final_state_out is not None and ht is not final_state_out:
            final_state_out.copy_(ht)
            ht = final_state_out
    return o, (ht if output_final_state or inplace else None)


def chunk_kda(q, k, v, g, beta, A_log=None, dt_bias=None, lower_bound=None, initial_state=None,
              output_final_state=False, cu_seqlens=None, state_dtype=None, *, scale=None,
              use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
              state_v_first=False, safe_gate=None, out=None, final_state_out=None, stream=None):
    """KDA prefill: (o [B, T, H, 128] bf16, final state [N, H, K, V] or None).

    As FLA's chunk_kda with the gate, the L2 norms and the beta sigmoid in the kernel.
    lower_bound=None is the softplus gate; a lambda in [-5, 0) the lower-bound gate (FLA's
    safe_gate is implied and accepted). state_dtype: float32 (default) or bfloat16, or the
    initial state's. cu_seqlens: N + 1 offsets (B = 1), read on the host."""
    del safe_gate   # the lower-bound gate is always evaluated in the safe form
    return _run(PREFILL, q, k, v, g, beta, A_log, dt_bias, lower_bound, scale, initial_state, output_final_state,
                cu_seqlens, state_dtype, state_v_first, (use_qk_l2norm_in_kernel, use_gate_in_kernel,
                use_beta_sigmoid_in_kernel), out, final_state_out, False, stream)


def fused_recurrent_kda(q, k, v, g, beta, A_log=None, dt_bias=None, lower_bound=None, initial_state=None,
                        output_final_state=False, cu_seqlens=None, state_dtype=None, *, scale=None,
                        inplace_final_state=False, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                        use_beta_sigmoid_in_kernel=True, state_v_first=False, out=None, final_state_out=None,
                        stream=None):
    """KDA decode: 1 .. 16 tokens per sequence; (o, final state or None) as chunk_kda.
    inplace_final_state=True writes the final state over initial_state (and returns it)."""
    if inplace_final_state and initial_state is None:
        raise _err("inplace_final_state needs an initial_state to update")
    return _run(DECODE, q, k, v, g, beta, A_log, dt_bias, lower_bound, scale, initial_state, output_final_state,
                cu_seqlens, state_dtype, state_v_first, (use_qk_l2norm_in_kernel, use_gate_in_kernel,
                use_beta_sigmoid_in_kernel), out, final_state_out, inplace_final_state, stream)


def _route_args(B, T, H, mode, state, gate, seqlens):
    sdt = _state_code(state, None)
    m = {"prefill": PREFILL, "decode": DECODE}.get(mode)
    if m is None:
        raise _err(f"mode {mode!r}: use 'prefill' or 'decode'")
    gt = {"lb": LOWER_BOUND, "lower_bound": LOWER_BOUND, "softplus": SOFTPLUS}.get(gate)
    if gt is None:
        raise _err(f"gate {gate!r}: use 'lb' or 'softplus'")
    cu = None
    N = B
    if T is None and seqlens is None:
        raise _err("give T (tokens per sequence) or seqlens (the packed sequences' lengths)")
    if seqlens is not None:
        offs = [0]
        for n in seqlens:
            offs.append(offs[-1] + int(n))
        cu = (ctypes.c_int32 * len(offs))(*offs)
        N = len(offs) - 1
        B = 1
        T = offs[-1] if T is None else T
    return m, B, T, H, cu, N, sdt, gt


def route(B=1, T=None, H=1, mode="prefill", state="f32", gate="lb", seqlens=None):
    """The route name of a shape (no GPU needed); CakeShapeError outside the domain."""
    so = nat.lib("kda")
    m, B, T, H, cu, N, sdt, gt = _route_args(B, T, H, mode, state, gate, seqlens)
    r = so.cake_kda_route(m, B, T, H, HEAD, HEAD, cu, N, sdt, gt)
    nat.check("kda", r if r < 0 else 0)
    return so.cake_kda_route_name(r).decode()


def explain(B=1, T=None, H=1, mode="prefill", state="f32", gate="lb", seqlens=None):
    """The dispatcher's explanation of a shape (as `cake library kda --explain`)."""
    so = nat.lib("kda")
    m, B, T, H, cu, N, sdt, gt = _route_args(B, T, H, mode, state, gate, seqlens)
    buf = ctypes.create_string_buffer(16384)
    so.cake_kda_explain(m, B, T, H, HEAD, HEAD, cu, N, sdt, gt, buf, len(buf))
    return buf.value.decode()
