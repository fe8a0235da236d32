# rmsnorm_rows — RMSNorm over rows of 1024 (a row reduction): y = x · rsqrt(mean(x²) + eps) · w,
# four rows per CTA, vectorised plain loads and stores, f32 math on bf16 data.
kernel rmsnorm_rows target sm_90a
  const D = 1024
  param X: global bf16[R, D]
  param W: global bf16[D]
  param Y: global bf16[R, D]
  domain R % 4 == 0
  grid (R / 4) as (br)
  role work warps 0..3
  frag xb: bf16[4, 1024] in work
  frag w:  bf16[1024] in work
  frag r:  f32[4] in work
{
  in work {
    load xb <- X[br * 4 +: 4, :]
    load w <- W[:]
    r = rsqrt(rowsum(f32(xb) * f32(xb)) / 1024.0 + 0.000001)
    store Y[br * 4 +: 4, :] <- bf16(f32(xb) * rows(r) * cols(f32(w)))
  }
}
