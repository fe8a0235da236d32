# s6.4-wrong-slice-count.cake
# Checks §6.4: one slice per dimension.
# Expected: CK-SEM-026
kernel ew target sm_90a
  param X: global f32[R, C]
  param V: global f32[R]
  param Y: global bf16[R, C]
  domain R % 64 == 0, C % 128 == 0
  grid (C / 128, R / 64) as (bc, br)
  role work warps 0..3
  frag x: f32[64, 128] in work
  frag v: f32[64] in work
{
  in work {
    load x <- X[br * 64 +: 64, bc * 128 +: 128]
    load v <- V[br * 64 +: 64, 0]
    x = x * rows(v)
    store Y[br * 64 +: 64, bc * 128 +: 128] <- bf16(x)
  }
}
