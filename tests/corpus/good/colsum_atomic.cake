# colsum_atomic — column sums of an f32 matrix (e.g. a bias gradient): each CTA reduces a
# 64x128 tile down its columns and adds the 128 partial sums into Out with atomics.
kernel colsum_atomic target sm_90a
  param X:   global f32[R, C]
  param Out: global f32[C]
  domain R % 64 == 0, C % 128 == 0
  grid (C / 128, R / 64) as (bc, br)
  role work warps 0..3
  frag x: f32[64, 128] in work
{
  in work {
    load x <- X[br * 64 +: 64, bc * 128 +: 128]
    atomic_add Out[bc * 128 +: 128] <- colsum(x)
  }
}
