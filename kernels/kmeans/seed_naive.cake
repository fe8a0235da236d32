# seed_naive — k-means assignment (nearest centroid per point, squared L2, i32 labels; ties to
# the lower index): a deliberately NAIVE starting point for `cake evolve`, not a benchmark
# (assign.cake's kmeans_assign is the kernel to measure).
# One role of one warpgroup does everything: it TMA-loads its 64 points once (two 64-column
# panels, x0/x1), then for each tile of 128 centroids issues the tile's loads into a ring of ONE
# stage, waits for them, computes s = x · cᵀ with two wgmmas, forms ½‖c‖² − s and merges the
# tile's row argmin into the running (best distance, best index) pair, exactly as
# kmeans_assign does, but with every step waiting for its own loads and nothing overlapped.
# No register budget, one CTA per 64 points. The search reaches the warp-specialized kernel
# from here through tactics (docs/TACTICS.md: warp_specialize, stages, tile_m, consumers, regs).
# Shape domain: N % 64 == 0, K % 128 == 0, K >= 512, D == 128.
kernel kmeans_assign_seed_naive target sm_90a family kmeans_assign
  const D = 128
  param X:     global bf16[B, N, D]       # points
  param Cent:  global bf16[B, K, D]       # centroids
  param Cnorm: global f32[B, K]           # ‖c‖² per centroid
  param Out:   global i32[B, N]           # nearest centroid per point
  domain N % 64 == 0, K % 128 == 0, K >= 512
  grid (N / 64, B) as (bm, b)
  role dist warps 0..3
  pipeline cr stages 1
  smem x0: bf16[64, 64] swizzle 128B
  smem x1: bf16[64, 64] swizzle 128B
  smem c0: bf16[128, 64] swizzle 128B ring cr
  smem c1: bf16[128, 64] swizzle 128B ring cr
  barrier xfull producers dist consumers dist arrivals 1
  barrier full  ring cr producers dist consumers dist arrivals 1
  frag s:      f32[64, 128] in dist
  frag cn:     f32[128] in dist
  frag tmin:   f32[64] in dist
  frag targ:   i32[64] in dist
  frag best_d: f32[64] in dist
  frag best_i: i32[64] in dist
{
  in dist {
    tma x0 <- X[b, bm * 64 +: 64, 0 +: 64] signal xfull
    tma x1 <- X[b, bm * 64 +: 64, 64 +: 64] signal xfull
    best_d = inf
    best_i = 0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      load cn <- Cnorm[b, j * 128 +: 128]
      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full
      tma c1 <- Cent[b, j * 128 +: 128, 64 +: 64] signal full
      wait full
      wgmma s = x0 @ c0^T
      wgmma s += x1 @ c1^T
      wgmma_wait 0
      s = 0.5 * cols(cn) - s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 128, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[b, bm * 64 +: 64] <- best_i
  }
}
