# kmeans_assign_f16_s3 — KMeans assignment, f16 points and centroids, D = 128 (two 64-column
# panels), 128 points per CTA, 3-stage centroid ring, two consumer warpgroups. Also writes the
# squared distance to the chosen centroid (‖x‖² + best), which Flash-KMeans uses for the
# inertia and for empty-cluster reseeding.
kernel kmeans_assign_f16_s3 target sm_90a family kmeans_assign
  const D = 128
  param X:     global f16[N, D]
  param Cent:  global f16[K, D]
  param Cnorm: global f32[K]
  param Out:   global i32[N]
  param Dist:  global f32[N]
  domain N % 128 == 0, K % 128 == 0, K >= 384
  grid (N / 128) as (bm)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 3
  smem x0: f16[128, 64] swizzle 128B
  smem x1: f16[128, 64] swizzle 128B
  smem c0: f16[128, 64] swizzle 128B ring cr
  smem c1: f16[128, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full  ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 2
  frag s:      f32[128, 128] in dist split m
  frag xa:     f16[128, 64] in dist split m
  frag xn:     f32[128] in dist split m
  frag cn:     f32[128] in dist
  frag tmin:   f32[128] in dist split m
  frag targ:   i32[128] in dist split m
  frag best_d: f32[128] in dist split m
  frag best_i: i32[128] in dist split m
{
  in load {
    tma x0 <- X[bm * 128 +: 128, 0 +: 64] signal xfull
    tma x1 <- X[bm * 128 +: 128, 64 +: 64] signal xfull
    for j in 0 .. K / 128 pipelined cr {
      wait empty
      tma c0 <- Cent[j * 128 +: 128, 0 +: 64] signal full
      tma c1 <- Cent[j * 128 +: 128, 64 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    wait xfull
    load xa <- x0[:, :]
    xn = rowsum(f32(xa) * f32(xa))
    load xa <- x1[:, :]
    xn = xn + rowsum(f32(xa) * f32(xa))
    for j in 0 .. K / 128 pipelined cr {
      load cn <- Cnorm[j * 128 +: 128]
      wait full
      wgmma s = x0 @ c0^T
      wgmma s += x1 @ c1^T
      wgmma_wait 0
      arrive empty
      s = cols(cn) - 2.0 * s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 128, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[bm * 128 +: 128] <- best_i
    store Dist[bm * 128 +: 128] <- max(xn + best_d, 0.0)
  }
}
