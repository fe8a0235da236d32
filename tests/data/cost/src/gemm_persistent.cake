# gemm_persistent — C = A · Bᵀ, bf16, 128x256 tiles, persistent grid.
# `grid persistent` launches one CTA per SM (at most the number of tiles); each CTA walks the
# tile space (bn, bm) and runs every role program once per tile. The ring's stage and phase
# carry over from one tile to the next, so the producer starts loading the next tile's first
# stages while the consumers are still in the epilogue of the current one.
# Raster: `group 16` visits the tiles 16 rows of bm at a time (bm fastest), so the CTAs in
# flight share A and B tiles in L2 (bench/proto/NOTES.md run 4: +4-8% at 8192^3).
# Shape domain: M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64.
kernel gemm_bf16_persistent target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 256, M / 128) as (bn, bm) group 16
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
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
    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)
  }
}
