# A tactic output of the k-means clean-start campaign (run C2, bench/RESULTS.md) that verifies
# but spills registers on sm_90a (CK-LOW-014): the isolated runner's child refuses it.
kernel kmeans_assign_seed_naive target sm_90a family kmeans_assign
  const D = 128
  param X: global bf16[B, N, D]
  param Cent: global bf16[B, K, D]
  param Cnorm: global f32[B, K]
  param Out: global i32[B, N]
  domain N % 128 == 0, K % 256 == 0, K >= 512
  grid (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 2
  smem x0: bf16[128, 64] swizzle 128B
  smem x1: bf16[128, 64] swizzle 128B
  smem c0: bf16[256, 64] swizzle 128B ring cr
  smem c1: bf16[256, 64] swizzle 128B ring cr
  barrier xfull producers load consumers dist arrivals 1
  barrier full ring cr producers load consumers dist arrivals 1
  barrier empty ring cr producers dist consumers load arrivals 2
  frag s: f32[128, 256] in dist split m
  frag cn: f32[256] in dist
  frag tmin: f32[128] in dist split m
  frag targ: i32[128] in dist split m
  frag best_d: f32[128] in dist split m
  frag best_i: i32[128] in dist split m
{
  in load {
    tma x0 <- X[b, bm * 128 +: 128, 0 +: 64] signal xfull
    tma x1 <- X[b, bm * 128 +: 128, 64 +: 64] signal xfull
    for j in 0 .. K / 256 pipelined cr unroll 2 {
      wait empty
      tma c0 <- Cent[b, j * 256 +: 256, 0 +: 64] signal full
      tma c1 <- Cent[b, j * 256 +: 256, 64 +: 64] signal full
    }
  }
  in dist {
    best_d = inf
    best_i = 0
    wait xfull
    for j in 0 .. K / 256 pipelined cr unroll 2 {
      load cn <- Cnorm[b, j * 256 +: 256]
      wait full
      wgmma s = x0 @ c0^T
      wgmma s += x1 @ c1^T
      wgmma_wait 0
      arrive empty
      s = 0.5 * cols(cn) - s
      tmin, targ = rowargmin(s)
      best_i = where(tmin < best_d, targ + j * 256, best_i)
      best_d = min(best_d, tmin)
    }
    store Out[b, bm * 128 +: 128] <- best_i
  }
}
