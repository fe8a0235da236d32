# s5.4-tma-panel-unaligned.cake
# Checks §5.4: a TMA load into part of a buffer names one whole column panel of a swizzled
# buffer (here the panels of xs are columns 0..63 and 64..127; 32 +: 64 straddles them).
# Expected: CK-SEM-027
kernel tma_panel_unaligned target sm_90a
  param X:   global bf16[B, 64, 128]
  param Out: global f32[B, 64, 128]
  grid (B) as (b)
  role load warps 0..3
  role work warps 4..11
  smem xs: bf16[64, 128] swizzle 128B
  barrier full producers load consumers work arrivals 1
  frag t: bf16[64, 128] in work split n
{
  in load {
    tma xs[:, 0 +: 64] <- X[b, 0 +: 64, 0 +: 64] signal full
    tma xs[:, 32 +: 64] <- X[b, 0 +: 64, 64 +: 64] signal full
  }
  in work {
    wait full
    load t <- xs[:, :]
    store Out[b, :, :] <- f32(t) * 2.0
  }
}
