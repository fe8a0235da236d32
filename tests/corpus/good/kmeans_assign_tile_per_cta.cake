# kmeans_assign_tile_per_cta.cake — kernels/kmeans/assign.cake as it was before session 12: the
# bf16 assign kernel with one CTA per 256-point tile and a 4-stage centroid ring (the corpus
# kernel is now persistent, its point tile a 2-stage ring of its own; LOWERING.md, nested
# pipelined loops). Kept as the target of the tactic tests (tests/unit/test_tactics.c,
# tests/cli/tactics.sh): the naive seed's tactic chain reproduces this kernel exactly, and the
# tactics have no move yet that turns a once-per-tile operand into a ring across tiles.
#
# kmeans/assign — Flash-KMeans assignment step: for every point, the index of its nearest
# centroid (squared L2), written as i32. Ties go to the lower centroid index.
#
# argmin_c ‖x − c‖² = argmin_c (½‖c‖² − x·c), because ‖x‖² is the same for every c of a row
# (halving is exact in f32, so the argmin and its ties are those of ‖c‖² − 2 x·c; written this
# way the epilogue is one FMA per element instead of two adds).
# Each CTA owns 256 points, 64 per consumer warpgroup: four of them keep the tensor cores busy
# while others run the argmin (two warpgroups: 1175 µs, four: 1029 µs at the paper shape, run S).
# Its x tile (256 × 128 bf16, 64 KiB) is loaded once; centroid tiles of
# 128 rows stream through a 4-stage ring. A 128B swizzle spans 64 bf16, so every 128-wide tile is
# held as two 64-column panels (x0/x1, c0/c1) and the distance tile s = x · cᵀ is two wgmmas
# over the two halves of D. The epilogue
# forms ½‖c‖² − s with the ‖c‖² vector (precomputed, one f32 per centroid) down the columns, takes the per-row
# argmin of the tile and merges it into a running (best distance, best index) pair kept in
# register fragments. Strict `<` in the merge keeps the earlier tile on ties, and rowargmin
# returns the lowest column on ties inside a tile, so ties resolve to the lower index.
# B independent batches (grid axis 1, one launch for all of them).
# Shape domain: N % 256 == 0, K % 128 == 0, K >= 512, D == 128 (see README.md).
kernel kmeans_assign target sm_90a family kmeans_assign
  const D = 128
  param X:     global bf16[B, N, D]       # points
  param Cent:  global bf16[B, K, D]       # centroids
  param Cnorm: global f32[B, K]         # ‖c‖² per centroid
  param Out:   global i32[B, N]         # nearest centroid per point
  domain N % 256 == 0, K % 128 == 0, K >= 512
  grid (N / 256, B) as (bm, b)
  role load warps 0..3 regs 24
  role dist warps 4..19 regs 112       # four consumer warpgroups, 64 points each
  pipeline cr stages 4
  smem x0: bf16[256, 64] swizzle 128B
  smem x1: bf16[256, 64] swizzle 128B
  smem c0: bf16[128, 64] swizzle 128B ring cr
  smem c1: bf16[128, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full  ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 4
  frag s:      f32[256, 128] in dist split m
  frag cn:     f32[128] in dist
  frag tmin:   f32[256] in dist split m
  frag targ:   i32[256] in dist split m
  frag best_d: f32[256] in dist split m
  frag best_i: i32[256] in dist split m
{
  in load {
    tma x0 <- X[b, bm * 256 +: 256, 0 +: 64] signal xfull
    tma x1 <- X[b, bm * 256 +: 256, 64 +: 64] signal xfull
    for j in 0 .. K / 128 pipelined cr {
      wait empty
      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full
      tma c1 <- Cent[b, j * 128 +: 128, 64 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      load cn <- Cnorm[b, j * 128 +: 128]
      wait full
      wgmma s = x0 @ c0^T
      wgmma s += x1 @ c1^T
      wgmma_wait 0
      arrive empty
      s = 0.5 * cols(cn) - s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 128, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[b, bm * 256 +: 256] <- best_i
  }
}

# kmeans_assign_d64: the same schedule for D = 64 points: one 64-column panel per tile (a
# 128B swizzle spans exactly 64 bf16), so the distance tile is a single wgmma, and centroid tiles
# stream through a 2-stage ring (K = 256 is only two tiles). Shape domain: N % 128 == 0,
# K % 128 == 0, K >= 256, D == 64.
kernel kmeans_assign_d64 target sm_90a family kmeans_assign
  const D = 64
  param X:     global bf16[B, N, D]
  param Cent:  global bf16[B, K, D]
  param Cnorm: global f32[B, K]
  param Out:   global i32[B, N]
  domain N % 128 == 0, K % 128 == 0, K >= 256
  grid (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 2
  smem x0: bf16[128, 64] swizzle 128B
  smem c0: bf16[128, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full  ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 2
  frag s:      f32[128, 128] in dist split m
  frag cn:     f32[128] in dist
  frag tmin:   f32[128] in dist split m
  frag targ:   i32[128] in dist split m
  frag best_d: f32[128] in dist split m
  frag best_i: i32[128] in dist split m
{
  in load {
    tma x0 <- X[b, bm * 128 +: 128, 0 +: 64] signal xfull
    for j in 0 .. K / 128 pipelined cr {
      wait empty
      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      load cn <- Cnorm[b, j * 128 +: 128]
      wait full
      wgmma s = x0 @ c0^T
      wgmma_wait 0
      arrive empty
      s = 0.5 * cols(cn) - s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 128, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[b, bm * 128 +: 128] <- best_i
  }
}
