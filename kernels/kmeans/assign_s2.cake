# kmeans/assign_s2 — the assign kernels for 256 and 384 centroids (2 and 3 tiles of 128): the
# schedules of kmeans_assign (assign.cake: 256 points per CTA over four consumer warpgroups) and
# kmeans_assign_f16 (assign_f16.cake: 128 points over two) with a 2-stage ring instead of 4, so
# the library pads a small K to 256 instead of to the 4-stage kernels' smallest K, 512 (K = 100
# did 5.1x the tensor work it needs, and its assign took 597 of 880 us per iteration on an H200,
# bench/RESULTS.md 2026-12-01). Everything else — the half-score epilogue, the running
# (distance, index) pair, ties to the lower index — is as in those files' headers.
# Shape domains: kmeans_assign_s2 N % 256 == 0, K % 128 == 0, K >= 256; kmeans_assign_f16_s2
# N % 128 == 0, K % 128 == 0, K >= 256; D == 128.
kernel kmeans_assign_s2 target sm_90a family kmeans_assign
  const D = 128
  param X:     global bf16[B, N, D]       # points
  param Cent:  global bf16[B, K, D]       # centroids
  param Cnorm: global f32[B, K]         # ‖c‖² per centroid
  param Out:   global i32[B, N]         # nearest centroid per point
  domain N % 256 == 0, K % 128 == 0, K >= 256
  grid (N / 256, B) as (bm, b)
  role load warps 0..3 regs 24
  role dist warps 4..19 regs 112       # four consumer warpgroups, 64 points each
  pipeline cr stages 2
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

kernel kmeans_assign_f16_s2 target sm_90a family kmeans_assign
  const D = 128
  param X:     global f16[B, N, D]       # points
  param Cent:  global f16[B, K, D]       # centroids
  param Cnorm: global f32[B, K]         # ‖c‖² per centroid
  param Out:   global i32[B, N]         # nearest centroid per point
  domain N % 128 == 0, K % 128 == 0, K >= 256
  grid (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232        # two consumer warpgroups, 64 points each
  pipeline cr stages 2
  smem x0: f16[128, 64] swizzle 128B
  smem x1: f16[128, 64] swizzle 128B
  smem c0: f16[128, 64] swizzle 128B ring cr
  smem c1: f16[128, 64] swizzle 128B ring cr
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
    tma x1 <- X[b, bm * 128 +: 128, 64 +: 64] signal xfull
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
    store Out[b, bm * 128 +: 128] <- best_i
  }
}
