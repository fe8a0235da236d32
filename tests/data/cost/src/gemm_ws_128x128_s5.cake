# gemm_ws_128x128_s5 — C = A · Bᵀ, bf16 in/out, f32 accumulation, 128x128 output tile.
# One TMA producer warpgroup and two wgmma consumer warpgroups (64 rows of the tile each);
# a 5-stage ring of 128x64 A and B tiles (32 KiB per stage, 160 KiB in all). The deeper ring
# hides more load latency than the s4 kernel at the same shared-memory budget.
# Shape domain: M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64.
kernel gemm_bf16_128x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64
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
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
