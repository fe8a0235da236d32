# kmeans/update_segmented — centroid update without atomics.
#
# The points are first grouped by assigned cluster (a counting sort outside this file produces
# Order, the point ids grouped by cluster, and Offsets, the exclusive prefix sum of the cluster
# sizes, with Offsets[K] = N). One CTA owns one cluster: it walks its segment
# [Offsets[c], Offsets[c+1]), adds each member point (one element per thread, f32), and divides
# by the segment length. The result is deterministic (no atomics, a fixed summation order) and a
# heavy cluster costs no contention; the price is the sort. An empty cluster keeps its centroid.
# Shape domain: D == 128, K1 == K + 1 (see README.md).
kernel kmeans_update_segmented target sm_90a family kmeans_segmented
  const D = 128
  param X:       global bf16[N, D]
  param Order:   global i32[N]         # point ids grouped by cluster
  param Offsets: global i32[K1]        # segment starts, K1 = K + 1 entries
  param Cent:    global bf16[K, D]
  domain K1 == K + 1, N >= 1
  grid (K) as (c)
  role work warps 0..3
  frag x:   bf16[128] in work
  frag acc: f32[128] in work
{
  in work {
    let lo = Offsets[c]
    let hi = Offsets[c + 1]
    acc = 0.0
    for t in lo .. hi unroll 4 {
      let p = Order[t]
      load x <- X[p, :]
      acc = acc + f32(x)
    }
    if hi > lo {
      store Cent[c, :] <- bf16(acc / f32(hi - lo))
    }
  }
}
