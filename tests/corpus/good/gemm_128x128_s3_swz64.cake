# gemm_128x128_s3_swz64 — bf16 GEMM with a K tile of 32 (64-byte rows), so the tiles use the 64B swizzle; 3 stages, two consumer warpgroups.
kernel gemm_128x128_s3_swz64 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 32 == 0, K >= 96
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 3
  smem a: bf16[128, 32] swizzle 64B ring ab
  smem b: bf16[128, 32] swizzle 64B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 32 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 32 +: 32] signal full
      tma b <- B[bn * 128 +: 128, k * 32 +: 32] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 32 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
