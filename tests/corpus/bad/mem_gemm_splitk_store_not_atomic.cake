# expect: CK-MEM-002
# Split-K GEMM whose epilogue stores its partial tile instead of adding it: the four CTAs of one
# (bn, bm) tile along ks all store C[bm * 128 +: 128, bn * 128 +: 128]; the last one wins.
kernel gemm_splitk_atomic target sm_90a family gemm
  const SPLIT = 4
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global f32[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 1024 == 0, K >= 1024
  grid (N / 128, M / 128, SPLIT) as (bn, bm, ks)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in ks * (K / 256) .. (ks + 1) * (K / 256) pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in ks * (K / 256) .. (ks + 1) * (K / 256) pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- acc
  }
}
