# gemm_persistent_grouped_tma_store — the TMA-store epilogue GEMM on a persistent grid with a
# grouped raster (group 4): every CTA walks many tiles in raster order and stores each one
# through cs with a TMA store. The tile space is the same as a plain grid's, so C is written
# exactly once (CK-MEM-001/002) though no CTA owns a fixed tile.
kernel gemm_persistent_grouped_tma_store target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 256
  grid persistent (N / 128, M / 128) as (bn, bm) group 4
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a:  bf16[128, 64] swizzle 128B ring ab
  smem b:  bf16[128, 64] swizzle 128B ring ab
  smem cs: bf16[128, 128]
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
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 128 +: 128] <- cs
  }
}
