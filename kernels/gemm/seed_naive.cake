# seed_naive — C = A · Bᵀ, bf16 in/out, f32 accumulation: a deliberately NAIVE starting point
# for `cake evolve`, not a benchmark (the corpus kernels next to it are the ones to measure).
# One role of one warpgroup does everything: it issues the TMA loads of each K step into a
# ring of ONE stage, waits for them, multiplies and goes on, so every step waits for its own
# loads and nothing overlaps. Small 128x128 tile, K step 64, one CTA per tile, natural raster,
# no register budget. The search reaches the warp-specialized kernels from here through
# tactics (docs/TACTICS.md: warp_specialize, stages, consumers, tile_n, raster_group).
# Shape domain: M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64.
kernel gemm_seed_naive target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid (N / 128, M / 128) as (bn, bm)
  role mma warps 0..3
  pipeline ab stages 1
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full ring ab producers mma consumers mma arrivals 1
  frag acc: f32[128, 128] in mma
{
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
