# expect: CK-MEM-003
# KMeans scatter with the domain relaxed to N % 64 == 0 and a rounded-up grid, while every CTA
# still takes 128 points: at N = 64 the last CTA's label load and its TMA loads of X read 64
# points past the end of the batch.
kernel kmeans_scatter target sm_90a
  const D = 128
  param X:      global bf16[B, N, D]
  param Assign: global i32[B, N]
  param Sums:   global f32[B, K, D]
  param Counts: global i32[B, K]
  domain N % 64 == 0, K >= 1
  grid ((N + 127) / 128, B) as (bp, b)
  role load warps 0..3
  role work warps 4..7
  smem x0: bf16[128, 64] swizzle 128B
  smem x1: bf16[128, 64] swizzle 128B
  barrier xfull producers load consumers work arrivals 1
  frag lab: i32[128] in work
  frag v0:  bf16[128, 64] in work
  frag v1:  bf16[128, 64] in work
{
  in load {
    tma x0 <- X[b, bp * 128 +: 128, 0 +: 64] signal xfull
    tma x1 <- X[b, bp * 128 +: 128, 64 +: 64] signal xfull
  }
  in work {
    load lab <- Assign[b, bp * 128 +: 128]
    wait xfull
    load v0 <- x0[:, :]
    load v1 <- x1[:, :]
    atomic_add Sums[b, lab, 0 +: 64] <- f32(v0)
    atomic_add Sums[b, lab, 64 +: 64] <- f32(v1)
    atomic_add Counts[b, lab] <- 1
  }
}
