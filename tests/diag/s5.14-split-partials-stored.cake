# s5.14-split-partials-stored.cake
# Checks §5.14: several CTAs combining into one element need atomic_add; a plain store from each of them writes the element twice.
# Expected: CK-MEM-002
# Split-K row sums: the two CTAs along ks each sum half of a row block's columns and then
# store their partial sum to the same Out[br * 128 +: 128]; only one partial survives.
kernel rowsum_splitk target sm_90a
  const SPLIT = 2
  param X:   global f32[R, K]
  param Out: global f32[R]
  domain R % 128 == 0, K % 256 == 0
  grid (R / 128, SPLIT) as (br, ks)
  role work warps 0..3
  frag x: f32[128, 128] in work
  frag s: f32[128] in work
{
  in work {
    s = 0.0
    for k in ks * (K / 256) .. (ks + 1) * (K / 256) {
      load x <- X[br * 128 +: 128, k * 128 +: 128]
      s = s + rowsum(x)
    }
    store Out[br * 128 +: 128] <- s
  }
}
