# expect: CK-MEM-001
# The grid was halved for 256-wide output tiles (N / 256 CTAs along bn) but the epilogue still
# stores 128-wide tiles at bn * 128: the right half of every 256-column block of C is never written.
kernel gemm_bf16_128x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 320
  grid (N / 256, M / 128) as (bn, bm)
  role load warps 0..3 regs 56
  role mma  warps 4..11 regs 224
  pipeline ab stages 5
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab unroll 1 {
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
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
