# s4.11-split-n-rank1.cake
# Checks §4.11: `split n` needs a rank-2 fragment.
# Expected: CK-SEM-009
kernel ew target sm_90a
  param X: global f32[R, C]
  param V: global f32[R]
  param Y: global bf16[R, C]
  domain R % 64 == 0, C % 128 == 0
  grid (C / 128, R / 64) as (bc, br)
  role work warps 0..3
  frag x: f32[64, 128] in work
  frag v: f32[64] in work split n
{
  in work {
    load x <- X[br * 64 +: 64, bc * 128 +: 128]
    load v <- V[br * 64 +: 64]
    x = x * rows(v)
    store Y[br * 64 +: 64, bc * 128 +: 128] <- bf16(x)
  }
}
