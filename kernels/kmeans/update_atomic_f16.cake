# kmeans/update_atomic_f16 — the f16 twin of update_atomic.cake (same schedule, f16 points and centroids).
#
# kmeans_scatter: each CTA takes 128 points. A TMA brings the 128 x 128 tile of points into shared
# memory (two 64-column panels: a 128B swizzle spans 64 f16); the consumer warpgroup loads its
# labels as a row vector and the tile into accumulator-layout registers, then adds every element
# into the row of its cluster with `atomic_add Sums[b, lab, ...] <- x` (lab is a scatter index: row r
# of x goes to row lab[r] of Sums) and counts each point once with `atomic_add Counts[b, lab] <- 1`.
# Sums and Counts must be zero before the launch (`cake kmeans` clears them).
# kmeans_divide: new centroid = Sums / Counts, rounded to f16; a cluster that received no point
# keeps its old centroid. It also writes ‖c‖² of the new (rounded) centroid for the next
# assignment and the squared shift ‖c_new − c_old‖² per centroid for the convergence check.
# The scatter is fast when clusters are many and balanced; with few heavy clusters the atomics on
# one row serialise, which is what update_segmented.cake avoids.
# B independent batches (the last grid axis): one launch for all of them.
# Shape domain: N % 128 == 0, K % 64 == 0, D == 128 (see README.md).
kernel kmeans_scatter_f16 target sm_90a
  const D = 128
  param X:      global f16[B, N, D]
  param Assign: global i32[B, N]
  param Sums:   global f32[B, K, D]
  param Counts: global i32[B, K]
  domain N % 128 == 0, K >= 1
  grid (N / 128, B) as (bp, b)
  role load warps 0..3
  role work warps 4..7
  smem x0: f16[128, 64] swizzle 128B
  smem x1: f16[128, 64] swizzle 128B
  barrier xfull producers load consumers work arrivals 1
  frag lab: i32[128] in work
  frag v0:  f16[128, 64] in work
  frag v1:  f16[128, 64] in work
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

kernel kmeans_divide_f16 target sm_90a family kmeans_divide
  const D = 128
  param Sums:    global f32[B, K, D]
  param Counts:  global i32[B, K]
  param Cent:    global f16[B, K, D]     # old centroids
  param NewCent: global f16[B, K, D]
  param Cnorm:   global f32[B, K]       # ‖c_new‖², for the next assignment
  param Shift:   global f32[B, K]       # ‖c_new − c_old‖²
  domain K % 64 == 0
  grid (K / 64, B) as (bk, b)
  role load warps 0..3
  role work warps 4..7
  smem s0: f32[64, 64]
  smem s1: f32[64, 64]
  smem c0: f16[64, 64] swizzle 128B
  smem c1: f16[64, 64] swizzle 128B
  barrier full producers load consumers work arrivals 1
  frag m0:  f32[64, 64] in work         # sums, then the new centroid
  frag m1:  f32[64, 64] in work
  frag o0:  f16[64, 64] in work         # old centroid
  frag o1:  f16[64, 64] in work
  frag n:   i32[64] in work
  frag inv: f32[64] in work
  frag nz:  bool[64] in work
  frag cn:  f32[64] in work
  frag sh:  f32[64] in work
{
  in load {
    tma s0 <- Sums[b, bk * 64 +: 64, 0 +: 64] signal full
    tma s1 <- Sums[b, bk * 64 +: 64, 64 +: 64] signal full
    tma c0 <- Cent[b, bk * 64 +: 64, 0 +: 64] signal full
    tma c1 <- Cent[b, bk * 64 +: 64, 64 +: 64] signal full
  }
  in work {
    load n <- Counts[b, bk * 64 +: 64]
    inv = 1.0 / f32(max(n, 1))
    nz = n > 0
    wait full
    load m0 <- s0[:, :]
    load m1 <- s1[:, :]
    load o0 <- c0[:, :]
    load o1 <- c1[:, :]
    m0 = where(rows(nz), f32(f16(m0 * rows(inv))), f32(o0))
    m1 = where(rows(nz), f32(f16(m1 * rows(inv))), f32(o1))
    cn = rowsum(m0 * m0) + rowsum(m1 * m1)
    sh = rowsum((m0 - f32(o0)) * (m0 - f32(o0))) + rowsum((m1 - f32(o1)) * (m1 - f32(o1)))
    store NewCent[b, bk * 64 +: 64, 0 +: 64] <- f16(m0)
    store NewCent[b, bk * 64 +: 64, 64 +: 64] <- f16(m1)
    store Cnorm[b, bk * 64 +: 64] <- cn
    store Shift[b, bk * 64 +: 64] <- sh
  }
}

# The D = 64 pair: one 64-column panel per tile, otherwise the same schedules.
kernel kmeans_scatter_d64_f16 target sm_90a
  const D = 64
  param X:      global f16[B, N, D]
  param Assign: global i32[B, N]
  param Sums:   global f32[B, K, D]
  param Counts: global i32[B, K]
  domain N % 128 == 0, K >= 1
  grid (N / 128, B) as (bp, b)
  role load warps 0..3
  role work warps 4..7
  smem x0: f16[128, 64] swizzle 128B
  barrier xfull producers load consumers work arrivals 1
  frag lab: i32[128] in work
  frag v0:  f16[128, 64] in work
{
  in load {
    tma x0 <- X[b, bp * 128 +: 128, 0 +: 64] signal xfull
  }
  in work {
    load lab <- Assign[b, bp * 128 +: 128]
    wait xfull
    load v0 <- x0[:, :]
    atomic_add Sums[b, lab, 0 +: 64] <- f32(v0)
    atomic_add Counts[b, lab] <- 1
  }
}

kernel kmeans_divide_d64_f16 target sm_90a family kmeans_divide
  const D = 64
  param Sums:    global f32[B, K, D]
  param Counts:  global i32[B, K]
  param Cent:    global f16[B, K, D]
  param NewCent: global f16[B, K, D]
  param Cnorm:   global f32[B, K]
  param Shift:   global f32[B, K]
  domain K % 64 == 0
  grid (K / 64, B) as (bk, b)
  role load warps 0..3
  role work warps 4..7
  smem s0: f32[64, 64]
  smem c0: f16[64, 64] swizzle 128B
  barrier full producers load consumers work arrivals 1
  frag m0:  f32[64, 64] in work
  frag o0:  f16[64, 64] in work
  frag n:   i32[64] in work
  frag inv: f32[64] in work
  frag nz:  bool[64] in work
  frag cn:  f32[64] in work
  frag sh:  f32[64] in work
{
  in load {
    tma s0 <- Sums[b, bk * 64 +: 64, 0 +: 64] signal full
    tma c0 <- Cent[b, bk * 64 +: 64, 0 +: 64] signal full
  }
  in work {
    load n <- Counts[b, bk * 64 +: 64]
    inv = 1.0 / f32(max(n, 1))
    nz = n > 0
    wait full
    load m0 <- s0[:, :]
    load o0 <- c0[:, :]
    m0 = where(rows(nz), f32(f16(m0 * rows(inv))), f32(o0))
    cn = rowsum(m0 * m0)
    sh = rowsum((m0 - f32(o0)) * (m0 - f32(o0)))
    store NewCent[b, bk * 64 +: 64, 0 +: 64] <- f16(m0)
    store Cnorm[b, bk * 64 +: 64] <- cn
    store Shift[b, bk * 64 +: 64] <- sh
  }
}
