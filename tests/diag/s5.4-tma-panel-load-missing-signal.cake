# s5.4-tma-panel-load-missing-signal.cake
# Checks §5.4: a TMA load into a column panel completes on a barrier; without `signal` the
# statement would be a store, and the error says which form the buffer on the left needs.
# Expected: CK-SEM-027
kernel tma_store_part target sm_90a
  param X:   global bf16[B, 64, 128]
  param Out: global bf16[B, 64, 128]
  grid (B) as (b)
  role load warps 0..3
  role work warps 4..11
  smem xs: bf16[64, 128] swizzle 128B
  barrier full producers load consumers work arrivals 1
  frag t: bf16[64, 128] in work split n
{
  in load {
    tma xs[:, 0 +: 64] <- X[b, 0 +: 64, 0 +: 64] signal full
    tma xs[:, 64 +: 64] <- X[b, 0 +: 64, 64 +: 64]
  }
  in work {
    wait full
    load t <- xs[:, :]
    store Out[b, :, :] <- t
  }
}
