# expect: CK-MEM-001
# KMeans divide for D = 128 writes only the first 64-column panel of each new centroid: the store
# of the second panel (m1) was lost, so columns 64..127 of NewCent keep whatever memory held.
kernel kmeans_divide target sm_90a family kmeans_divide
  const D = 128
  param Sums:    global f32[B, K, D]
  param Counts:  global i32[B, K]
  param Cent:    global bf16[B, K, D]     # old centroids
  param NewCent: global bf16[B, K, D]
  param Cnorm:   global f32[B, K]       # ‖c_new‖², for the next assignment
  param Shift:   global f32[B, K]       # ‖c_new − c_old‖²
  domain K % 64 == 0
  grid (K / 64, B) as (bk, b)
  role load warps 0..3
  role work warps 4..7
  smem s0: f32[64, 64]
  smem s1: f32[64, 64]
  smem c0: bf16[64, 64] swizzle 128B
  smem c1: bf16[64, 64] swizzle 128B
  barrier full producers load consumers work arrivals 1
  frag m0:  f32[64, 64] in work         # sums, then the new centroid
  frag m1:  f32[64, 64] in work
  frag o0:  bf16[64, 64] in work         # old centroid
  frag o1:  bf16[64, 64] in work
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
    m0 = where(rows(nz), f32(bf16(m0 * rows(inv))), f32(o0))
    m1 = where(rows(nz), f32(bf16(m1 * rows(inv))), f32(o1))
    cn = rowsum(m0 * m0) + rowsum(m1 * m1)
    sh = rowsum((m0 - f32(o0)) * (m0 - f32(o0))) + rowsum((m1 - f32(o1)) * (m1 - f32(o1)))
    store NewCent[b, bk * 64 +: 64, 0 +: 64] <- bf16(m0)
    store Cnorm[b, bk * 64 +: 64] <- cn
    store Shift[b, bk * 64 +: 64] <- sh
  }
}
