# gemm_64x256_s3_1wg — bf16 GEMM, one consumer warpgroup owning a 64x256 accumulator (128 f32 registers per thread), 3-stage ring.
kernel gemm_64x256_s3_1wg target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 256 == 0, K % 64 == 0, K >= 192
  grid (N / 256, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 3
  smem a: bf16[64, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 256] in mma
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
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
    store C[bm * 64 +: 64, bn * 256 +: 256] <- bf16(acc)
  }
}
