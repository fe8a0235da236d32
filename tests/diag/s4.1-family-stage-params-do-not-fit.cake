# s4.1-family-stage-params-do-not-fit.cake
# Checks §4.1: a stage of a kda chain is held to the family tensors it names (the others are the
# other stages'); a Q of the wrong element type still does not fit.
# Expected: CK-SEM-044
kernel kda_part target sm_90a family kda stage
  param Q:  global f32[B, T, H, 128]
  param Wk: global f32[B, T, H, 128]
  domain T % 64 == 0
  grid (T / 64, H, B) as (c, h, b)
  role work warps 0..3
  frag t: f32[64, 128] in work
{
  in work {
    load t <- Q[b, c * 64 +: 64, h, :]
    store Wk[b, c * 64 +: 64, h, :] <- t
  }
}
