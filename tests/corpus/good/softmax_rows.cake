# softmax_rows — row softmax over rows of 2048 f32 values (row max, exp2 in log2 units, row
# sum), four rows per CTA.
kernel softmax_rows target sm_90a
  const C = 2048
  param X: global f32[R, C]
  param Y: global f32[R, C]
  domain R % 4 == 0
  grid (R / 4) as (br)
  role work warps 0..3
  frag x:  f32[4, 2048] in work
  frag mx: f32[4] in work
  frag sm: f32[4] in work
{
  in work {
    load x <- X[br * 4 +: 4, :]
    mx = rowmax(x)
    x = exp2((x - rows(mx)) * 1.4426950408889634)
    sm = rowsum(x)
    store Y[br * 4 +: 4, :] <- x / rows(sm)
  }
}
