# kmeans/update_atomic — centroid update by atomic scatter-add, then a divide kernel.
#
# kmeans_zero clears the per-cluster sums and counts; kmeans_scatter walks 128 points per CTA
# and adds each point (as f32) into the row of its assigned cluster with `atomic_add` (one
# element per thread), and counts it; kmeans_divide turns sums into means. A cluster that received no point keeps its old centroid.
# The scatter is simple and fast when clusters are many and balanced; with few, heavy clusters
# the atomics on one row serialise, which is what update_segmented.cake avoids.
# Shape domain: N % 128 == 0, K % 64 == 0, D == 128 (see README.md).
kernel kmeans_zero target sm_90a
  const D = 128
  param Sums:   global f32[K, D]
  param Counts: global i32[K]
  domain K % 64 == 0
  grid (K / 64) as (bk)
  role work warps 0..3
{
  in work {
    store Sums[bk * 64 +: 64, :] <- 0.0
    store Counts[bk * 64 +: 64] <- 0
  }
}

kernel kmeans_scatter target sm_90a
  const D = 128
  param X:      global bf16[N, D]
  param Assign: global i32[N]
  param Sums:   global f32[K, D]
  param Counts: global i32[K]
  domain N % 128 == 0, K >= 1
  grid (N / 128) as (bp)
  role work warps 0..3
  frag x: bf16[128] in work
{
  in work {
    for i in bp * 128 .. bp * 128 + 128 unroll 4 {
      let c = Assign[i]                  # the point's cluster: one uniform scalar read
      load x <- X[i, :]                  # one point, 128 values: one per thread
      atomic_add Sums[c, :] <- f32(x)
      atomic_add Counts[c] <- 1
    }
  }
}

kernel kmeans_divide target sm_90a
  const D = 128
  param Sums:   global f32[K, D]
  param Counts: global i32[K]
  param Cent:   global bf16[K, D]
  domain K % 64 == 0
  grid (K / 64) as (bk)
  role work warps 0..3
  frag s:   f32[64, 128] in work
  frag old: bf16[64, 128] in work
  frag n:   i32[64] in work
  frag inv: f32[64] in work
  frag nz:  bool[64] in work
{
  in work {
    load s <- Sums[bk * 64 +: 64, :]
    load n <- Counts[bk * 64 +: 64]
    load old <- Cent[bk * 64 +: 64, :]
    inv = 1.0 / f32(max(n, 1))
    nz = n > 0
    store Cent[bk * 64 +: 64, :] <- where(rows(nz), bf16(s * rows(inv)), old)
  }
}
