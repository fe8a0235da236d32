# expect: CK-DATA-002
# KMeans centroid norms declared `split m`, then broadcast along the columns with cols(): each
# warpgroup holds only half of the norms.
kernel kmeans_assign target sm_90a
  const D = 128
  param X:     global bf16[N, D]
  param Cent:  global bf16[K, D]
  param Cnorm: global f32[K]
  param Out:   global i32[N]
  domain N % 128 == 0, K % 128 == 0, K >= 128
  grid (N / 128) as (bm)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 4
  smem x0: bf16[128, 64] swizzle 128B
  smem x1: bf16[128, 64] swizzle 128B
  smem c0: bf16[128, 64] swizzle 128B ring cr
  smem c1: bf16[128, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full  ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 2
  frag s:      f32[128, 128] in dist split m
  frag cn:     f32[128] in dist split m
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
  }
}
