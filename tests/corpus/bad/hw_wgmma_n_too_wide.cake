# expect: CK-HW-002
# Widened one consumer warpgroup tile to N = 512 (two 256-row B boxes): a single wgmma covers at
# most N = 256.
kernel gemm_wide target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 512 == 0, K % 64 == 0, K >= 384
  grid (N / 512, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 2
  smem a:  bf16[64, 64] swizzle 128B ring ab
  smem b:  bf16[512, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 512] in mma
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 512 +: 512, k * 64 +: 64] signal full
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
    store C[bm * 64 +: 64, bn * 512 +: 512] <- bf16(acc)
  }
}
