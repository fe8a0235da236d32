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
#
# Any K (the library generator, `cake library kmeans`, docs/LIBRARY.md): kmeans_scan scans a
# runtime K in 1024-wide chunks with a carry, and kmeans_hist_global / kmeans_fill_global count
# and place points with one global atomic per point (no shared count array, so no K bound).
# Labels outside [0, K) (the library writes -1 for padding points) are skipped by every kernel
# here: a scatter index out of range adds, reserves and stores nothing.
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

# kmeans_scan — Offsets = exclusive prefix sum of Counts, for any K (a runtime dim): one CTA of
# 1024 threads per batch walks K in 1024-wide chunks. Each chunk is read with `fetch_add(Counts[b,
# idx], 0)`, the bounds-checked gather of the IR (an index past K yields -1, clamped to 0), so
# the ragged last chunk needs no load past the end of a row (CK-DATA-004 would rightly refuse a
# plain 1024-wide load there); the stores are scatter stores, skipped past K. The carry into the
# next chunk is this chunk's last inclusive sum, broadcast to every thread without a scalar
# shared read: `tot` holds the inclusive sums followed by 1024 zeros, so the window
# tot[1023 +: 1024] is (last, 0, 0, ...) and its cumsum is `last` everywhere. Two block scans
# per chunk: about 1 µs, so K = 65536 costs some 64 µs per batch (batches run in parallel).
kernel kmeans_scan target sm_90a
  param Counts:  global i32[B, K]
  param Offsets: global i32[B, K]
  param Cursor:  global i32[B, K]
  grid (B) as (b)
  role work warps 0..31
  smem tot: i32[2048]                 # inclusive sums of the chunk, then 1024 zeros
  frag cnt:   i32[1024] in work
  frag incl:  i32[1024] in work
  frag idx:   i32[1024] in work
  frag w:     i32[1024] in work
  frag carry: i32[1024] in work
{
  in work {
    carry = 0
    w = 0
    store tot[1024 +: 1024] <- w
    for j in 0 .. (K + 1023) / 1024 {
      idx = j * 1024 + row_idx()
      cnt = fetch_add(Counts[b, idx], 0)
      cnt = max(cnt, 0)
      incl = cumsum(cnt, 0)
      incl = incl + carry
      store Offsets[b, idx] <- incl - cnt
      store Cursor[b, idx] <- incl - cnt
      store tot[0 +: 1024] <- incl
      sync work
      load w <- tot[1023 +: 1024]
      carry = cumsum(w, 0)
      sync work
    }
  }
}

# kmeans_hist_global — Counts[b, c] = number of points labelled c, for any K: one global atomic
# add per point (1024 points per CTA). Used when K is too large for kmeans_hist's shared count
# array; with many clusters the adds rarely collide.
kernel kmeans_hist_global target sm_90a
  param Assign: global i32[B, N]
  param Counts: global i32[B, K]
  domain N % 1024 == 0
  grid (N / 1024, B) as (bp, b)
  role work warps 0..31
  frag lab: i32[1024] in work
{
  in work {
    load lab <- Assign[b, bp * 1024 +: 1024]
    atomic_add Counts[b, lab] <- 1
  }
}

# kmeans_fill_global — Order[b, :] = the point ids grouped by cluster, for any K: every point
# takes its slot with one global `fetch_add(Cursor[b, lab], 1)` and scatters its id there.
kernel kmeans_fill_global target sm_90a
  param Assign: global i32[B, N]
  param Cursor: global i32[B, K]
  param Order:  global i32[B, N]
  domain N % 1024 == 0
  grid (N / 1024, B) as (bp, b)
  role work warps 0..31
  frag lab:  i32[1024] in work
  frag slot: i32[1024] in work
{
  in work {
    load lab <- Assign[b, bp * 1024 +: 1024]
    slot = fetch_add(Cursor[b, lab], 1)
    store Order[b, slot] <- bp * 1024 + row_idx()
  }
}

# kmeans_fill indexes its 4096-entry shared count array with the label, so a label in [K, 4096)
# is in range there: it is counted in shared memory, and its reservation yields -1 (no
# segment), so the second pass maps such labels to -1 before taking slots; otherwise they
# would take the slots -1, 0, 1, ... and overwrite the first entries of Order (found on the
# CPU emulator, tests/lower/kmeans_emu.sh). kmeans_hist drops them at the global add.
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
        lab = where(lab < K, lab, -1)   # a label in [K, 4096) has a count in hs but no segment
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

# kmeans_segsum_split — the segment sums with every segment cut into SPLIT = 16 slices, one warp
# each, that add their partial sums into Sums with f32 atomics (Sums cleared by the host first).
# kmeans_segsum has one warp per (cluster, batch): at B = 1 and K = 100 that is 100 warps
# for a million points (under one warp per SM scheduler, and each walks 10 000 rows in a chain);
# the split gives 16 times the warps, each walking a sixteenth, for 16 atomic adds per element of
# a cluster instead of one store. The dispatcher takes it when B x K is too small to fill the GPU
# with one warp per segment (docs/LIBRARY.md); the summation order inside a slice is fixed, the
# order of the 16 adds is not.

kernel kmeans_segsum_split target sm_90a family kmeans_segsum
  const D = 128
  const SPLIT = 16
  param X:       global bf16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B, SPLIT) as (c, b, s)
  role work warps 0..0
  frag x:   bf16[128] in work
  frag acc: f32[128] in work
{
  in work {
    let n = Counts[b, c]
    let lo = Offsets[b, c] + s * n / SPLIT
    let hi = Offsets[b, c] + (s + 1) * n / SPLIT
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    atomic_add Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_split_f16 target sm_90a family kmeans_segsum
  const D = 128
  const SPLIT = 16
  param X:       global f16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B, SPLIT) as (c, b, s)
  role work warps 0..0
  frag x:   f16[128] in work
  frag acc: f32[128] in work
{
  in work {
    let n = Counts[b, c]
    let lo = Offsets[b, c] + s * n / SPLIT
    let hi = Offsets[b, c] + (s + 1) * n / SPLIT
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    atomic_add Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_split_d64 target sm_90a family kmeans_segsum
  const D = 64
  const SPLIT = 16
  param X:       global bf16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B, SPLIT) as (c, b, s)
  role work warps 0..0
  frag x:   bf16[64] in work
  frag acc: f32[64] in work
{
  in work {
    let n = Counts[b, c]
    let lo = Offsets[b, c] + s * n / SPLIT
    let hi = Offsets[b, c] + (s + 1) * n / SPLIT
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    atomic_add Sums[b, c, :] <- acc
  }
}

kernel kmeans_segsum_split_d64_f16 target sm_90a family kmeans_segsum
  const D = 64
  const SPLIT = 16
  param X:       global f16[B, N, D]
  param Order:   global i32[B, N]
  param Offsets: global i32[B, K]
  param Counts:  global i32[B, K]
  param Sums:    global f32[B, K, D]
  grid (K, B, SPLIT) as (c, b, s)
  role work warps 0..0
  frag x:   f16[64] in work
  frag acc: f32[64] in work
{
  in work {
    let n = Counts[b, c]
    let lo = Offsets[b, c] + s * n / SPLIT
    let hi = Offsets[b, c] + (s + 1) * n / SPLIT
    acc = 0.0
    for t in lo .. hi unroll 8 {
      let p = Order[b, t]
      load x <- X[b, p, :]
      acc = acc + f32(x)
    }
    atomic_add Sums[b, c, :] <- acc
  }
}
