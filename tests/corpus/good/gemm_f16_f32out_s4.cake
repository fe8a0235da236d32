# gemm_f16_f32out_s4 — f16 GEMM with f32 output: C = A·Bᵀ stored straight from the f32
# accumulator (no cast), 128x128 tile, 4 stages, two consumer warpgroups.
kernel gemm_f16_f32out_s4 target sm_90a
  param A: global f16[M, K]
  param B: global f16[N, K]
  param C: global f32[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 256
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: f16[128, 64] swizzle 128B ring ab
  smem b: f16[128, 64] swizzle 128B ring ab
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
    store C[bm * 128 +: 128, bn * 128 +: 128] <- acc
  }
}
