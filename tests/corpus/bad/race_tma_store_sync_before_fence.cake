# expect: CK-RACE-005
# TMA-store epilogue with the role's barrier before the proxy fence: the barrier orders the
# threads' generic writes, but not their fenced, async-proxy view, which the TMA store reads.
kernel gemm_tma_store_epilogue target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 256
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a:  bf16[128, 64] swizzle 128B ring ab
  smem b:  bf16[128, 64] swizzle 128B ring ab
  smem cs: bf16[128, 128]
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    sync mma
    fence proxy_async
    tma C[bm * 128 +: 128, bn * 128 +: 128] <- cs
  }
}
