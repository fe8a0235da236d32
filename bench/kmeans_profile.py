#!/usr/bin/env python3
"""bench/kmeans_profile.py — where a k-means fit's GPU time goes, Cake's and Flash-KMeans' side by
side: torch.profiler (CUPTI) records every kernel either side launches during one fit (after a
warm-up fit), and the table lists the GPU time per kernel name, summed over the fit, largest
first. On the GPU host, with the cake_kernels package and flash_kmeans importable (bench/library.sh
installs both; PYTHONPATH as it sets it):

    python3 bench/kmeans_profile.py "B,N,D,K ..." [ITERS]

ITERS: Lloyd iterations per fit (10, tol 0, the same initial centroids on both sides).
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from cake_kernels import kmeans as ckm

try:
    from flash_kmeans import batch_kmeans_Euclid
except Exception as e:  # Cake alone
    print(f"flash_kmeans not importable ({type(e).__name__}: {e}): Cake alone")
    batch_kmeans_Euclid = None

shapes = [tuple(int(v) for v in s.split(",")) for s in sys.argv[1].split()]
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 10
dev = torch.device("cuda")


def table(fn, label):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None)
        if t is None:
            t = getattr(ev, "cuda_time_total", 0)
        if t > 0:
            rows.append((t, ev.count, ev.key))
    rows.sort(reverse=True)
    tot = sum(r[0] for r in rows)
    print(f"  {label}: GPU time {tot / 1e3:.3f} ms in {sum(r[1] for r in rows)} launches")
    for t, n, k in rows[:8]:
        print(f"    {t / 1e3:9.3f} ms  {100 * t / max(tot, 1):5.1f} %  x{n:<5d} {k[:90]}")


for (B, N, D, K) in shapes:
    g = torch.Generator(device=dev).manual_seed(1)
    x = (torch.rand((B, N, D), device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
    idx = torch.randint(0, N, (B, K), device=dev, generator=torch.Generator(device=dev).manual_seed(2))
    init = torch.gather(x, 1, idx[..., None].expand(-1, -1, D)).contiguous()
    print(f"== B={B} N={N} D={D} K={K}, {iters} iterations, route {ckm.route(B, N, D, K, dtype='bf16')}")
    table(lambda: ckm.fit(x, K, max_iters=iters, tol=0.0, init_centroids=init), "cake")
    if batch_kmeans_Euclid is not None:
        table(lambda: batch_kmeans_Euclid(x, K, max_iters=iters, tol=0.0, init_centroids=init.clone()), "flash")
    del x, init
    torch.cuda.empty_cache()
