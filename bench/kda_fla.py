#!/usr/bin/env python3
"""kda_fla.py - FLA's KDA kernels on the inputs `cake kda --dump` wrote, side by side with Cake.

    FLA_FLASH_KDA=0 python3 bench/kda_fla.py [--clean] CASE_DIR...

Each CASE_DIR holds what `cake kda --format=json --dump CASE_DIR` wrote: every tensor as
NAME.bin, meta.json (shapes, dtypes, the gate, Cake's time) and cake.json (Cake's report,
saved by bench/kda.sh). For each case this runs FLA on exactly those inputs:
fused_recurrent_kda for a decode case, chunk_kda (FLA's own Triton path: FLA_FLASH_KDA=0)
for a prefill case, with the gate, the L2 norms and the beta sigmoid fused
(use_gate_in_kernel, use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel) and the state
V-first (state_v_first=True, Cake's layout), times it the way Cake timed its kernel (decode:
a CUDA graph of 20 calls, median of 50 replays, per call; prefill: CUDA events, median of 10
calls after 3 warm-up calls; for decode FLA is timed with its default [K, V] state too and
the faster of the two is its time), and compares Cake's o and final state with FLA's: the largest
per-(sequence, head) relative L2 error, against the tolerance of Cake's family (kda_decode:
o 4e-3, f32 state 1e-4, bf16 state 4e-3; kda: 8e-3; src/family/kda.c). Prints one JSON line
per case, then the table. --clean deletes each case's tensors once compared (they are big).

FlashKDA (MoonshotAI's CUTLASS kernel, the CAKE paper's baseline), when `flash_kda` is
importable (built on the GPU host by bench/kda.sh from .baselines/flashkda), is timed on the
same inputs for every prefill case with a lower-bound gate (the only gate form it has), with
CUDA events like chunk_kda, its state in the dtype of Cake's (f32 or bf16, [N, H, V, K]),
scale 1/sqrt(K) as Cake's; its o is compared with Cake's within the same tolerance.
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

os.environ.setdefault("FLA_FLASH_KDA", "0")
from fla.ops.kda import chunk_kda, fused_recurrent_kda  # noqa: E402

try:
    import flash_kda  # noqa: E402
except ImportError:
    flash_kda = None

TOL = {"kda_decode": {"o": 4e-3, "f32": 1e-4, "bf16": 4e-3}, "kda": {"o": 8e-3, "f32": 8e-3, "bf16": 8e-3}}
NP = {"bf16": np.int16, "f32": np.float32, "i64": np.int64, "i32": np.int32}


def tensor(d, meta, name):
    t = meta["tensors"][name]
    raw = np.fromfile(os.path.join(d, name + ".bin"), dtype=NP[t["dtype"]]).reshape(t["shape"])
    x = torch.from_numpy(raw)
    if t["dtype"] == "bf16":
        x = x.view(torch.bfloat16)
    return x.cuda()


def rel_per_head(a, b, seqs, heads):
    """largest ||a - b|| / ||b|| over (sequence, head) pairs; a, b [seqs, heads, ...] float64"""
    a = a.double().reshape(seqs, heads, -1)
    b = b.double().reshape(seqs, heads, -1)
    num = (a - b).norm(dim=-1)
    den = b.norm(dim=-1).clamp_min(1e-30)
    return float((num / den).max())


def o_per_seq_head(o, meta, cu):
    """o [1 or B, T, H, V] -> [N, H, tokens * V] per sequence (padded by splitting)"""
    H, V = meta["H"], meta["V"]
    if cu is None:
        return o.permute(0, 2, 1, 3).reshape(meta["B"], H, -1)
    parts = []
    for n in range(meta["N"]):
        s, e = int(cu[n]), int(cu[n + 1])
        parts.append(o[0, s:e].permute(1, 0, 2).reshape(H, -1))
    return parts


def o_rel(o_cake, o_ref, meta, cu):
    a, b = o_per_seq_head(o_cake, meta, cu), o_per_seq_head(o_ref, meta, cu)
    if cu is None:
        return rel_per_head(a, b, meta["B"], meta["H"])
    worst = 0.0
    for x, y in zip(a, b):
        worst = max(worst, rel_per_head(x.unsqueeze(0), y.unsqueeze(0), 1, meta["H"]))
    return worst


def time_graph(fn, calls=20, replays=50):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / calls)
    ts.sort()
    return ts[len(ts) // 2]


def time_events(fn, iters=10, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def run_case(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    cake = json.load(open(os.path.join(d, "cake.json")))
    q, k, v, g, beta = (tensor(d, meta, n) for n in ("Q", "K", "V", "G", "Beta"))
    alog, dtb = tensor(d, meta, "Alog"), tensor(d, meta, "Dtb").reshape(-1)
    s0 = tensor(d, meta, "S0")
    sdt = meta["tensors"]["S0"]["dtype"]
    s0f = s0.float().contiguous()
    cu = tensor(d, meta, "Cu") if "Cu" in meta["tensors"] else None
    o_cake, sn_cake = tensor(d, meta, "O"), tensor(d, meta, "SN")
    lb = meta["lower_bound"]
    decode = meta["family"] == "kda_decode"
    kw = dict(initial_state=s0f, output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
              use_beta_sigmoid_in_kernel=True, state_v_first=True, cu_seqlens=cu, A_log=alog, dt_bias=dtb)
    if lb is not None:
        kw["lower_bound"] = lb
    if decode:
        def fn():
            return fused_recurrent_kda(q, k, v, g, beta, **kw)
    else:
        if lb is not None:
            kw["safe_gate"] = True

        def fn():
            return chunk_kda(q, k, v, g, beta, **kw)
    with torch.inference_mode():
        o_fla, ht_fla = fn()
        torch.cuda.synchronize()
        t_fla = time_graph(fn) if decode else time_events(fn)
        t_fla_kv = None
        if decode:   # FLA's default [K, V] state layout too (ANCHORS.md's numbers), in case it is faster
            kv = dict(kw, initial_state=s0f.transpose(-1, -2).contiguous(), state_v_first=False)
            t_fla_kv = time_graph(lambda: fused_recurrent_kda(q, k, v, g, beta, **kv))
    t_fkda = e_fkda = None
    if flash_kda is not None and not decode and lb is not None:
        with torch.inference_mode():
            out = torch.empty_like(v)
            fin = torch.empty_like(s0)
            a32, d32 = alog.float().contiguous(), dtb.float().reshape(meta["H"], meta["K"]).contiguous()
            cu64 = cu.long() if cu is not None else None

            def fk():
                flash_kda.fwd(q, k, v, g, beta, 1.0 / math.sqrt(meta["K"]), out, a32, d32, float(lb),
                              initial_state=s0.contiguous(), final_state=fin, cu_seqlens=cu64)
            fk()
            torch.cuda.synchronize()
            e_fkda = o_rel(o_cake, out, meta, cu)
            t_fkda = time_events(fk)
    tol = TOL[meta["family"]]
    e_o = o_rel(o_cake, o_fla, meta, cu)
    e_s = rel_per_head(sn_cake.float(), ht_fla.float(), meta["N"], meta["H"])
    ok_cmp = e_o <= tol["o"] and e_s <= tol[sdt]
    state_bytes = 2 * meta["N"] * meta["H"] * meta["K"] * meta["V"] * (2 if sdt == "bf16" else 4)
    res = {
        "case": os.path.basename(d.rstrip("/")), "mode": meta["mode"], "kernel": meta["kernel"], "B": meta["B"], "T": meta["T"],
        "H": meta["H"], "N": meta["N"], "state": sdt, "cake_us": meta["time_us"], "fla_us": t_fla,
        "fla_kv_us": t_fla_kv,
        "speedup": min(t_fla, t_fla_kv or t_fla) / meta["time_us"] if meta["time_us"] > 0 else None,
        "cake_state_tb_s": state_bytes / (meta["time_us"] * 1e-6) / 1e12 if decode else None,
        "fla_state_tb_s": state_bytes / (t_fla * 1e-6) / 1e12 if decode else None,
        "cake_check_ok": bool(cake.get("check", {}).get("ok", False)), "cake_vs_fla_o": e_o, "cake_vs_fla_state": e_s,
        "tol_o": tol["o"], "tol_state": tol[sdt], "cake_vs_fla_ok": ok_cmp,
        "flashkda_us": t_fkda, "cake_vs_flashkda_o": e_fkda,
        "speedup_flashkda": t_fkda / meta["time_us"] if t_fkda and meta["time_us"] > 0 else None,
    }
    return res


def main():
    args = sys.argv[1:]
    clean = "--clean" in args
    dirs = [a for a in args if a != "--clean"]
    rows = []
    for d in dirs:
        try:
            r = run_case(d)
        except Exception as exc:  # a case that cannot run still gets its row
            r = {"case": os.path.basename(d.rstrip("/")), "error": "%s: %s" % (type(exc).__name__, exc)}
        print(json.dumps(r), flush=True)
        rows.append(r)
        if clean:
            for f in os.listdir(d):
                if f.endswith(".bin"):
                    os.remove(os.path.join(d, f))
        torch.cuda.empty_cache()
    print()
    print("%-26s %-10s %11s %11s %8s %10s %10s %11s %8s %s" % ("case", "state", "Cake us", "FLA us", "FLA/Cake", "o err",
                                                              "state err", "FlashKDA us", "FK/Cake", "check"))
    for r in rows:
        if "error" in r:
            print("%-26s %s" % (r["case"], r["error"][:100]))
            continue
        chk = ("ok" if r["cake_check_ok"] else "ORACLE-MISMATCH") + (", =FLA" if r["cake_vs_fla_ok"] else ", !=FLA")
        fla = min(r["fla_us"], r["fla_kv_us"] or r["fla_us"])
        fk = "%11.2f %8.2f" % (r["flashkda_us"], r["speedup_flashkda"]) if r.get("flashkda_us") else "%11s %8s" % ("-", "-")
        print("%-26s %-10s %11.2f %11.2f %8.2f %10.2e %10.2e %s %s" % (r["case"], r["state"], r["cake_us"], fla,
                                                                        r["speedup"] or 0, r["cake_vs_fla_o"],
                                                                        r["cake_vs_fla_state"], fk, chk))
    bad = [r for r in rows if "error" in r or not (r["cake_check_ok"] and r["cake_vs_fla_ok"])]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
