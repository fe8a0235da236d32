# fix: CK-BAR-003 CK-DEAD-003
# A one-warpgroup GEMM without its release and with 'arrivals 2' on empty: the fix inserts
# `arrive empty` and declares the one arrival a one-warpgroup role gives.
kernel gemm_64x128_s2_1wg target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 128 == 0, K % 64 == 0, K >= 128
  grid (N / 128, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 2
  smem a: bf16[64, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[64, 128] in mma
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
    }
    store C[bm * 64 +: 64, bn * 128 +: 128] <- bf16(acc)
  }
}
