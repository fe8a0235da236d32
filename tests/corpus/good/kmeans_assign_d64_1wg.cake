# kmeans_assign_d64_1wg — KMeans assignment for D = 64 with one consumer warpgroup: 64 points
# per CTA against centroid tiles of 256 (one 64x256 wgmma per tile), 3-stage ring, running
# argmin in registers, ties to the lower centroid index.
kernel kmeans_assign_d64_1wg target sm_90a family kmeans_assign
  const D = 64
  param X:     global bf16[N, D]
  param Cent:  global bf16[K, D]
  param Cnorm: global f32[K]
  param Out:   global i32[N]
  domain N % 64 == 0, K % 256 == 0, K >= 768
  grid (N / 64) as (bm)
  role load warps 0..3 regs 40
  role dist warps 4..7 regs 232
  pipeline cr stages 3
  smem xs: bf16[64, 64] swizzle 128B
  smem cs: bf16[256, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full  ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 1
  frag s:      f32[64, 256] in dist
  frag cn:     f32[256] in dist
  frag tmin:   f32[64] in dist
  frag targ:   i32[64] in dist
  frag best_d: f32[64] in dist
  frag best_i: i32[64] in dist
{
  in load {
    tma xs <- X[bm * 64 +: 64, 0 +: 64] signal xfull
    for j in 0 .. K / 256 pipelined cr {
      wait empty
      tma cs <- Cent[j * 256 +: 256, 0 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    wait xfull
    for j in 0 .. K / 256 pipelined cr {
      load cn <- Cnorm[j * 256 +: 256]
      wait full
      wgmma s = xs @ cs^T
      wgmma_wait 0
      arrive empty
      s = cols(cn) - 2.0 * s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 256, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[bm * 64 +: 64] <- best_i
  }
}
