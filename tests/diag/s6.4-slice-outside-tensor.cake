# s6.4-slice-outside-tensor.cake
# Checks §6.4: a slice `e +: n` must stay inside the tensor's dimension for every CTA and iteration the domain allows.
# Expected: CK-MEM-003
# The domain only promises R % 64 == 0 but every CTA takes 128 rows on a rounded-up grid: at
# R = 64 the load of X and the store of Y reach 64 rows past the end.
kernel rowsum_ragged target sm_90a
  param X: global f32[R, C]
  param Y: global f32[R]
  domain R % 64 == 0, C % 128 == 0
  grid ((R + 127) / 128) as (br)
  role work warps 0..3
  frag x: f32[128, 128] in work
  frag s: f32[128] in work
{
  in work {
    s = 0.0
    for c in 0 .. C / 128 {
      load x <- X[br * 128 +: 128, c * 128 +: 128]
      s = s + rowsum(x)
    }
    store Y[br * 128 +: 128] <- s
  }
}
