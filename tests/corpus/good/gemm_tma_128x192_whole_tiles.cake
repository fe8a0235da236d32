# gemm_tma_128x192_whole_tiles.cake — kernels/gemm/gemm_tma.cake's 128x192 tile as it was before
# session 12: N % 192 == 0, every CTA reading and writing whole tiles. `ragged:N` turns it into
# the library's kernel, whose last column of tiles is clipped (tests/unit/test_tactics.c).
kernel gemm_bf16_tma_128x192 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 192 == 0, K % 64 == 0, K >= 64
  grid (N / 192, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[192, 64] swizzle 128B ring ab
  smem cs: bf16[128, 192] swizzle 128B     # the epilogue's staging tile, 3 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 192] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 192 +: 192, k * 64 +: 64] signal full
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
    tma C[bm * 128 +: 128, bn * 192 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 192 + 64 +: 64] <- cs[:, 64 +: 64]
    tma C[bm * 128 +: 128, bn * 192 + 128 +: 64] <- cs[:, 128 +: 64]
  }
}
