# kmeans_scatter_f32 — KMeans centroid-sum scatter for f32 points with f32 counts: 64 points
# per CTA, each point's row added into Sums[assign] and 1.0 into Counts[assign] with atomics
# (Sums and Counts are zeroed by the caller), two points per loop trip.
kernel kmeans_scatter_f32 target sm_90a
  const D = 64
  param X:      global f32[N, D]
  param Assign: global i32[N]
  param Sums:   global f32[K, D]
  param Counts: global f32[K]
  domain N % 64 == 0, K >= 1
  grid (N / 64) as (bp)
  role work warps 0..1
  frag x0: f32[64] in work
  frag x1: f32[64] in work
{
  in work {
    for i in 0 .. 64 step 2 {
      let p = bp * 64 + i
      let c0 = Assign[p]
      let c1 = Assign[p + 1]
      load x0 <- X[p, :]
      load x1 <- X[p + 1, :]
      atomic_add Sums[c0, :] <- x0
      atomic_add Sums[c1, :] <- x1
      atomic_add Counts[c0] <- 1.0
      atomic_add Counts[c1] <- 1.0
    }
  }
}
