"""Time cuBLAS (torch.matmul, bf16, C = A @ B.T with both operands K-major)
the same way bench_gemm.c times our kernel: CUDA events around each call, a
256 MB L2-flush write between calls, median of ITERS after warm-up.
usage: python3 torch_gemm.py ITERS M,N,K [M,N,K ...]   -> lines 'TORCH M N K median min max tflops'"""
import sys
import torch

iters = int(sys.argv[1])
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for spec in sys.argv[2:]:
    M, N, K = (int(x) for x in spec.split(","))
    g = torch.Generator(device="cuda").manual_seed(1234)
    A = (torch.rand(M, K, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    B = (torch.rand(N, K, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    for _ in range(3):
        C = A @ B.t()
    torch.cuda.synchronize()
    ts = []
    for i in range(iters):
        flush.fill_(i & 255)
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        C = A @ B.t()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    ts.sort()
    med = ts[len(ts) // 2]
    print(f"TORCH {M} {N} {K} median_us={med:.1f} min_us={ts[0]:.1f} max_us={ts[-1]:.1f} "
          f"tflops={2*M*N*K/med/1e6:.1f}", flush=True)
