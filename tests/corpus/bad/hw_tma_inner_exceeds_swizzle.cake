# expect: CK-HW-007
# K tile widened to 128 bf16 (256 B rows) under a 128B swizzle: the inner TMA box may span at most
# 128 bytes.
kernel gemm_bf16 target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 128 == 0, K >= 512
  grid (N / 256, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 2
  smem a: bf16[128, 128] swizzle 128B ring ab
  smem b: bf16[256, 128] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 128 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 128 +: 128] signal full
      tma b <- B[bn * 256 +: 256, k * 128 +: 128] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 128 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)
  }
}
