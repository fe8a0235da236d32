# s5.9-trisolve-row-mismatch.cake
# Checks §6.5: trisolve(L [C,C], B [C,D]) needs B with C rows.
# Expected: CK-SEM-030
kernel ew target sm_90a
  param X: global f32[R, C]
  param V: global f32[R]
  param Y: global bf16[R, C]
  domain R % 64 == 0, C % 128 == 0
  grid (C / 128, R / 64) as (bc, br)
  role work warps 0..3
  frag x: f32[64, 128] in work
  frag v: f32[64] in work
  frag l: f32[128, 128] in work
{
  in work {
    load x <- X[br * 64 +: 64, bc * 128 +: 128]
    load v <- V[br * 64 +: 64]
    x = trisolve(l, x)
    store Y[br * 64 +: 64, bc * 128 +: 128] <- bf16(x)
  }
}
