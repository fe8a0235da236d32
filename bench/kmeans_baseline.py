#!/usr/bin/env python3
"""bench/kmeans_baseline.py — Flash-KMeans (PyPI `flash-kmeans`, Triton) assign and update
timed separately with CUDA events, on the shapes given, one JSON line per (shape, dtype).

usage: python3 bench/kmeans_baseline.py ITERS DTYPES B,N,D,K [B,N,D,K ...]
   DTYPES: comma list of bf16, f16

The data follows `cake kmeans`: points uniform in [-1, 1], initial centroids the K evenly
spaced points of each batch (index j * (N // K)), ||c||^2 precomputed (Cake's assign also
reads a precomputed norm vector), no L2 flush between calls (both sides run back to back).
Phases:
  assign          euclid_assign_triton(x, c, x_sq, out, c_sq): fused distance + argmin,
                  the H200 heuristic config (use_heuristic=True, no autotuning)
  update_sorted   triton_centroid_update_sorted_euclid: what Flash-KMeans's Lloyd loop
                  (_euclid_iter) calls: sort by cluster, chunked segment sums, divide
  update_atomic   triton_centroid_update_euclid: one program per point, atomic adds
Each is warmed up (Triton compiles on first call), then timed ITERS times; the median and
min in microseconds are printed. The labels of the assign are also checked against a torch
reference (bmm distances in float32 + argmin) on the first batch's first 2048 points:
`assign_agree` is the fraction that agree (near-ties may differ).
"""
import json
import sys

import torch

try:
    from flash_kmeans.assign_euclid_triton import euclid_assign_triton
    from flash_kmeans.centroid_update_triton import (triton_centroid_update_euclid,
                                                     triton_centroid_update_sorted_euclid)
except Exception as e:  # the wheel is not installed: say so in one line, as JSON
    print(json.dumps({"error": f"flash-kmeans not importable: {type(e).__name__}: {e}"}))
    sys.exit(0)


def timeit(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def one(B, N, D, K, dt, iters):
    torch.manual_seed(1)
    dtype = torch.bfloat16 if dt == "bf16" else torch.float16
    x = (torch.rand(B, N, D, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)
    idx = torch.arange(K, device="cuda") * (N // K)
    c = x[:, idx, :].contiguous()
    x_sq = (x.float() ** 2).sum(-1)
    c_sq = (c.float() ** 2).sum(-1)
    out = torch.empty(B, N, device="cuda", dtype=torch.int32)
    r = {"shape": [B, N, D, K], "dtype": dt}
    r["assign_us"], r["assign_min_us"] = timeit(
        lambda: euclid_assign_triton(x, c, x_sq, out=out, c_sq=c_sq, use_heuristic=True), iters)
    ids = out.clone()
    m = min(N, 2048)
    d = c_sq[0][None, :] - 2.0 * (x[0, :m].float() @ c[0].float().T)
    r["assign_agree"] = float((d.argmin(-1).to(torch.int32) == ids[0, :m]).float().mean())
    r["update_sorted_us"], r["update_sorted_min_us"] = timeit(
        lambda: triton_centroid_update_sorted_euclid(x, ids, c), iters)
    r["update_atomic_us"], r["update_atomic_min_us"] = timeit(
        lambda: triton_centroid_update_euclid(x, ids, c), iters)
    del x, c, x_sq, c_sq, out, ids
    torch.cuda.empty_cache()
    return r


def main():
    iters = int(sys.argv[1])
    dtypes = sys.argv[2].split(",")
    for s in sys.argv[3:]:
        B, N, D, K = (int(v) for v in s.split(","))
        for dt in dtypes:
            try:
                r = one(B, N, D, K, dt, iters)
            except Exception as e:  # one shape failing must not hide the others
                r = {"shape": [B, N, D, K], "dtype": dt, "error": f"{type(e).__name__}: {e}"[:300]}
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
