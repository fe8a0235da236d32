# s6.5-trisolve-inverse-of-non-square.cake
# Checks §6.5: trisolve(L) with one argument is L's inverse, so L must be square.
# Expected: CK-SEM-035
kernel ew target sm_90a
  param X: global f32[R, C]
  param Y: global bf16[R, C]
  domain R % 64 == 0, C % 128 == 0
  grid (C / 128, R / 64) as (bc, br)
  role work warps 0..3
  frag x: f32[64, 128] in work
{
  in work {
    load x <- X[br * 64 +: 64, bc * 128 +: 128]
    x = trisolve(x)
    store Y[br * 64 +: 64, bc * 128 +: 128] <- bf16(x)
  }
}
