# kmeans/assign_f16 — the f16 twin of assign.cake, with f16 points and centroids, still on the
# two-warpgroup schedule that run N measured: the four-warpgroup form of assign.cake was
# measured on the GPU for bf16 only (run S) before the device time ran out.
# Flash-KMeans assignment: for every point, the index of its nearest centroid (squared L2), as i32.
# Ties go to the lower centroid index.
#
# argmin_c ‖x − c‖² = argmin_c (½‖c‖² − x·c), because ‖x‖² is the same for every c of a row
# (halving is exact in f32, so the argmin and its ties are those of ‖c‖² − 2 x·c; written this
# way the epilogue is one FMA per element instead of two adds).
# Each tile is 128 points. The grid is persistent, as assign.cake's bf16 kernel: one CTA per SM
# walks the (point tile, batch) space and the point tile (128 × 128 f16, 32 KiB) is a 2-stage
# ring of its own (pipeline xp, one step per tile), loaded while the previous tile's centroids
# stream; the consumers release it (xempty) after the tile's last wgmma. On an H200
# (bench/RESULTS.md, session 12 call 5, `cake kmeans --dtype f16 --iters 10`) the assign step
# took 1087-1090 µs instead of 1223-1224 at B=32, N=65536, K=1024 and 548-551 instead of
# 599-602 at B=1, N=1048576, K=1024. Centroid tiles of 128 rows stream through a 4-stage ring. A 128B swizzle spans 64 f16, so every 128-wide tile is
# held as two 64-column panels (x0/x1, c0/c1) and the distance tile s = x · cᵀ is two wgmmas
# over the two halves of D. The epilogue
# forms ½‖c‖² − s with the ‖c‖² vector (precomputed, one f32 per centroid) down the columns, takes the per-row
# argmin of the tile and merges it into a running (best distance, best index) pair kept in
# register fragments. Strict `<` in the merge keeps the earlier tile on ties, and rowargmin
# returns the lowest column on ties inside a tile, so ties resolve to the lower index.
# B independent batches (the grid's second coordinate).
# Shape domain: N % 128 == 0, K % 128 == 0, K >= 512, D == 128 (see README.md).
kernel kmeans_assign_f16 target sm_90a family kmeans_assign
  const D = 128
  param X:     global f16[B, N, D]       # points
  param Cent:  global f16[B, K, D]       # centroids
  param Cnorm: global f32[B, K]         # ‖c‖² per centroid
  param Out:   global i32[B, N]         # nearest centroid per point
  domain N % 128 == 0, K % 128 == 0, K >= 512
  grid persistent (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232        # two consumer warpgroups, 64 points each
  pipeline xp stages 2
  pipeline cr stages 4
  smem x0: f16[128, 64] swizzle 128B ring xp
  smem x1: f16[128, 64] swizzle 128B ring xp
  smem c0: f16[128, 64] swizzle 128B ring cr
  smem c1: f16[128, 64] swizzle 128B ring cr
  barrier xfull  ring xp producers load consumers dist arrivals 1
  barrier xempty ring xp producers dist consumers load arrivals 2
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
    for i in 0 .. 1 pipelined xp {
      wait xempty
      tma x0 <- X[b, bm * 128 +: 128, 0 +: 64] signal xfull
      tma x1 <- X[b, bm * 128 +: 128, 64 +: 64] signal xfull
    }
    for j in 0 .. K / 128 pipelined cr {
      wait empty
      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full
      tma c1 <- Cent[b, j * 128 +: 128, 64 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    for i in 0 .. 1 pipelined xp {
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
      arrive xempty
    }
    store Out[b, bm * 128 +: 128] <- best_i
  }
}

# kmeans_assign_d64_f16: the same schedule for D = 64 points: one 64-column panel per tile (a
# 128B swizzle spans exactly 64 f16), so the distance tile is a single wgmma, and centroid tiles
# stream through a 2-stage ring (K = 256 is only two tiles). Shape domain: N % 128 == 0,
# K % 128 == 0, K >= 256, D == 64.
kernel kmeans_assign_d64_f16 target sm_90a family kmeans_assign
  const D = 64
  param X:     global f16[B, N, D]
  param Cent:  global f16[B, K, D]
  param Cnorm: global f32[B, K]
  param Out:   global i32[B, N]
  domain N % 128 == 0, K % 128 == 0, K >= 256
  grid (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 2
  smem x0: f16[128, 64] swizzle 128B
  smem c0: f16[128, 64] swizzle 128B ring cr
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
