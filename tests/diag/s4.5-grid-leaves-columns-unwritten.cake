# s4.5-grid-leaves-columns-unwritten.cake
# Checks §4.5: the grid's CTAs, each storing the tile its block coordinates select, must together write every element of an output.
# Expected: CK-MEM-001
# N / 256 CTAs along bn each store a 128-column tile at bn * 128: columns 128..255 of every
# 256-column block of Y are never written (the grid was sized for 256-wide tiles).
kernel scale_rows target sm_90a
  param X: global f32[R, N]
  param Y: global f32[R, N]
  domain R % 4 == 0, N % 256 == 0
  grid (N / 256, R / 4) as (bn, br)
  role work warps 0..3
  frag x: f32[4, 128] in work
{
  in work {
    load x <- X[br * 4 +: 4, bn * 128 +: 128]
    store Y[br * 4 +: 4, bn * 128 +: 128] <- 2.0 * x
  }
}
