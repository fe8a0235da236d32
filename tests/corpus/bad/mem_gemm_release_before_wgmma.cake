# expect: CK-MEM-004
# The consumer releases the stage (arrive empty) right after waiting for it and only then issues
# the wgmma that reads a and b: the producer may already be refilling the stage under it.
kernel gemm_bf16_128x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 320
  grid (N / 128, M / 128) as (bn, bm)
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
      arrive empty
      wgmma acc += a @ b^T
      wgmma_wait 0
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
