# tma_panels — TMA loads into the column panels of a swizzled buffer (LANGUAGE.md §5.4). A
# [64, 128] bf16 buffer with the 128B swizzle is held as two panels of 64 columns (128 bytes of
# each row, the span); a box may be at most one span wide, so each panel gets its own box, both
# completing on one barrier (2 x 8 KB per phase). Two warpgroups read the tile back into an
# accumulator-layout fragment split by columns (each warpgroup one panel, its reads free of
# bank conflicts: the swizzle puts the eight rows a warp reads at once in eight different
# 16-byte chunks) and store 2 X. tests/lower/emu.sh runs it on the CPU emulator (its TMA model
# writes the swizzled boxes): Out must be exactly 2 X.
kernel tma_panels target sm_90a
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
    tma xs[:, 64 +: 64] <- X[b, 0 +: 64, 64 +: 64] signal full
  }
  in work {
    wait full
    load t <- xs[:, :]
    store Out[b, :, :] <- f32(t) * 2.0
  }
}
