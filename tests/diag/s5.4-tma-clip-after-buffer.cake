# s5.4-tma-clip-after-buffer.cake
# Checks §5.4: `clip` relaxes the bounds of the global box of a TMA copy, so it follows the
# global reference; after the shared buffer (here the store's source) it is refused, and the
# hint writes the store with `clip` where it belongs.
# Expected: CK-SEM-027
kernel tma_clip_buffer target sm_90a
  param A: global bf16[M, 64]
  param C: global bf16[M, 64]
  domain M % 8 == 0
  grid ((M + 63) / 64) as (bm)
  role load warps 0..3
  role work warps 4..7
  smem xs: bf16[64, 64] swizzle 128B
  barrier full producers load consumers work arrivals 1
{
  in load {
    tma xs <- A[bm * 64 +: 64, 0 +: 64] clip signal full
  }
  in work {
    wait full
    tma C[bm * 64 +: 64, 0 +: 64] <- xs clip
  }
}
