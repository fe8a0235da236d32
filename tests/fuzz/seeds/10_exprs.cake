kernel exprs target sm_90a
  param X: global f32[N, D]
  param eps: f32
  domain N % 128 == 0 && D <= 256 || D == 64, (N >> 7) << 7 == N
  grid (N / 128) as (b)
  role r warps 0..3 regs 128
  frag x: f32[128, 64] in r
  frag m: f32[128] in r
  frag i: i32[128] in r
{
  in r {
    load x <- X[b * 128 +: 128, 0 +: 64]
    let s = 1.0 / sqrt(64.0)
    x = x * s - rows(rowmax(x)) + 1e-6
    x = where(x > -inf, exp2(x), 0.0)
    m, i = rowargmin(x)
    if b == 0 { x = -x } else if b % 2 != 0 { x = !(x < 0) } else { x = tril(x) }
    store X[b * 128 +: 128, 0 +: 64] <- x / rows(rowsum(x) + eps)
  }
}
