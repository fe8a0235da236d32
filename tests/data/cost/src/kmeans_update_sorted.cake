# kmeans/update_sorted — centroid update by a device counting sort and segment sums: no float
# atomics, no contention on heavy clusters.
#
# One update is five launches over all B batches (Counts cleared by the host first):
#   kmeans_hist    Counts[b, c] = number of points labelled c. A CTA of 1024 threads takes 16384
#                  points of one batch, counts them per cluster in shared memory (`atomic_add
#                  hs[lab] <- 1`, a shared-memory reduction), then adds its K counts to Counts:
#                  16 times fewer global atomics than one per point;
#   kmeans_scan_k<K>  Offsets[b, :] = exclusive prefix sum of Counts[b, :] (a block-wide cumsum),
#                  and Cursor = Offsets, the next free slot of each cluster; written for
#                  K = 256, 1024 and 4096 (a thread vector has a constant length);
#   kmeans_fill    Order[b, :] = the point ids grouped by cluster. The same CTAs count their
#                  points again, reserve a range of each cluster's segment with one
#                  `fetch_add(Cursor[b, kid], count)` per cluster, then hand out slots inside it
#                  with `slot = fetch_add(hs[lab], 1)` on shared memory and scatter the ids
#                  (`store Order[b, slot] <- id`); the order inside a segment is whatever the
#                  atomics give;
#   kmeans_segsum  one warp per (cluster, batch) walks its segment of Order and adds the member
#                  rows (8-byte loads, 8 rows in flight), writing the f32 sum row, zeros when empty
#                  (bf16/f16, D = 128 or 64: kmeans_segsum[_d64][_f16]);
#   kmeans_divide  (update_atomic.cake) means, ‖c‖² and shifts from Sums and Counts.
# Shape domain: N % 1024 == 0 (labels are read 1024 at a time), K <= 4096 (the shared count
# array), K one of the scans' (K = 1000 shapes are padded to 1024); elsewhere cake kmeans uses
# the atomic update.
kernel kmeans_hist target sm_90a
  param Assign: global i32[B, N]
  param Counts: global i32[B, K]
  domain N % 1024 == 0, K <= 4096
  grid ((N + 16383) / 16384, B) as (bp, b)
  role work warps 0..31
  smem hs: i32[4096]                  # this CTA's count per cluster
  frag lab: i32[1024] in work
  frag z:   i32[4096] in work
  frag kid: i32[4096] in work
{
  in work {
    z = 0
    store hs[0 +: 4096] <- z
    sync work
    for i in 0 .. 16 unroll 4 {
      if bp * 16384 + i * 1024 < N {
        load lab <- Assign[b, bp * 16384 + i * 1024 +: 1024]
        atomic_add hs[lab] <- 1
      }
    }
    sync work
    load z <- hs[0 +: 4096]
    kid = row_idx()
    atomic_add Counts[b, kid] <- z
  }
}

kernel kmeans_scan_k256 target sm_90a
  const KC = 256
  param Counts:  global i32[B, K]
  param Offsets: global i32[B, K]
  param Cursor:  global i32[B, K]
  domain K == KC
  grid (B) as (b)
  role work warps 0..7
  frag cnt:  i32[256] in work
  frag incl: i32[256] in work
{
  in work {
    load cnt <- Counts[b, 0 +: KC]
    incl = cumsum(cnt, 0)
    store Offsets[b, 0 +: KC] <- incl - cnt
    store Cursor[b, 0 +: KC] <- incl - cnt
  }
}

kernel kmeans_scan_k1024 target sm_90a
  const KC = 1024
  param Counts:  global i32[B, K]
  param Offsets: global i32[B, K]
  param Cursor:  global i32[B, K]
  domain K == KC
  grid (B) as (b)
  role work warps 0..31
  frag cnt:  i32[1024] in work
  frag incl: i32[1024] in work
{
  in work {
    load cnt <- Counts[b, 0 +: KC]
    incl = cumsum(cnt, 0)
    store Offsets[b, 0 +: KC] <- incl - cnt
    store Cursor[b, 0 +: KC] <- incl - cnt
  }
}

kernel kmeans_scan_k4096 target sm_90a
  const KC = 4096
  param Counts:  global i32[B, K]
  param Offsets: global i32[B, K]
  param Cursor:  global i32[B, K]
  domain K == KC
  grid (B) as (b)
  role work warps 0..31
  frag cnt:  i32[4096] in work
  frag incl: i32[4096] in work
{
  in work {
    load cnt <- Counts[b, 0 +: KC]
    incl = cumsum(cnt, 0)
    store Offsets[b, 0 +: KC] <- incl - cnt
    store Cursor[b, 0 +: KC] <- incl - cnt
  }
}

kernel kmeans_fill target sm_90a
  param Assign: global i32[B, N]
  param Cursor: global i32[B, K]
  param Order:  global i32[B, N]
  domain N % 1024 == 0, K <= 4096
  grid ((N + 16383) / 16384, B) as (bp, b)
  role work warps 0..31
  smem hs: i32[4096]                  # counts, then this CTA's next slot per cluster
  frag lab:  i32[1024] in work
  frag slot: i32[1024] in work
  frag z:    i32[4096] in work
  frag kid:  i32[4096] in work
{
  in work {
    z = 0
    store hs[0 +: 4096] <- z
    sync work
    for i in 0 .. 16 unroll 4 {
      if bp * 16384 + i * 1024 < N {
        load lab <- Assign[b, bp * 16384 + i * 1024 +: 1024]
        atomic_add hs[lab] <- 1
      }
    }
    sync work
    load z <- hs[0 +: 4096]
    kid = row_idx()
    z = fetch_add(Cursor[b, kid], z)
    store hs[0 +: 4096] <- z
    sync work
    for i in 0 .. 16 unroll 4 {
      if bp * 16384 + i * 1024 < N {
        load lab <- Assign[b, bp * 16384 + i * 1024 +: 1024]
        slot = fetch_add(hs[lab], 1)
        store Order[b, slot] <- bp * 16384 + i * 1024 + row_idx()
      }
    }
  }
}

kernel kmeans_segsum target sm_90a family kmeans_segsum
  const D = 128
  param X:       global bf16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B) as (c, b)
  role work warps 0..0
  frag x:   bf16[128] in work
  frag acc: f32[128] in work
{
  in work {
    let lo = Offsets[b, c]
    let hi = lo + Counts[b, c]
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    store Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_f16 target sm_90a family kmeans_segsum
  const D = 128
  param X:       global f16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B) as (c, b)
  role work warps 0..0
  frag x:   f16[128] in work
  frag acc: f32[128] in work
{
  in work {
    let lo = Offsets[b, c]
    let hi = lo + Counts[b, c]
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    store Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_d64 target sm_90a family kmeans_segsum
  const D = 64
  param X:       global bf16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B) as (c, b)
  role work warps 0..0
  frag x:   bf16[64] in work
  frag acc: f32[64] in work
{
  in work {
    let lo = Offsets[b, c]
    let hi = lo + Counts[b, c]
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    store Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_d64_f16 target sm_90a family kmeans_segsum
  const D = 64
  param X:       global f16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B) as (c, b)
  role work warps 0..0
  frag x:   f16[64] in work
  frag acc: f32[64] in work
{
  in work {
    let lo = Offsets[b, c]
    let hi = lo + Counts[b, c]
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    store Sums[b, c, :] <- acc
  }
}
