# knn_topk — exact k-nearest-neighbour search (squared L2, k = 16) with a running top-k merge.
#
# Each CTA owns 128 queries (loaded once, two 64-column panels of D = 128); base tiles of 128
# vectors stream through a 4-stage ring. Per tile: s = 2 q·yᵀ − ‖y‖² (larger is nearer), the
# tile's 16 best columns come from `topk`, and they are merged into the running best list
# (bd, bi) kept in register fragments: each candidate, best first, replaces the worst entry of
# the running list when it beats it. After the last tile the list is written out nearest first
# as (index, squared distance = ‖q‖² − score). Ties keep the earlier (lower-index) base vector.
# Shape domain: Q % 128 == 0, NB % 128 == 0, NB >= 512, D == 128.
kernel knn_topk16 target sm_90a
  const D = 128
  param Xq:    global bf16[Q, D]
  param Base:  global bf16[NB, D]
  param Bnorm: global f32[NB]          # ‖y‖² per base vector
  param OutI:  global i32[Q, 16]
  param OutD:  global f32[Q, 16]
  domain Q % 128 == 0, NB % 128 == 0, NB >= 512
  grid (Q / 128) as (bm)
  role load   warps 0..3 regs 40
  role search warps 4..11 regs 232
  pipeline yr stages 4
  smem x0: bf16[128, 64] swizzle 128B
  smem x1: bf16[128, 64] swizzle 128B
  smem y0: bf16[128, 64] swizzle 128B ring yr
  smem y1: bf16[128, 64] swizzle 128B ring yr
  barrier xfull producers load consumers search arrivals 1
  barrier full  ring yr producers load consumers search arrivals 1
  barrier empty ring yr producers search consumers load arrivals 2
  frag s:     f32[128, 128] in search split m
  frag yn:    f32[128] in search
  frag xa:    bf16[128, 64] in search split m
  frag xn:    f32[128] in search split m
  frag tv:    f32[128, 16] in search split m
  frag ti:    i32[128, 16] in search split m
  frag bd:    f32[128, 16] in search split m
  frag bi:    i32[128, 16] in search split m
  frag colid: i32[128, 16] in search split m
  frag take:  bool[128, 16] in search split m
  frag cv:    f32[128] in search split m
  frag ci:    i32[128] in search split m
  frag mv:    f32[128] in search split m
  frag mi:    i32[128] in search split m
{
  in load {
    tma x0 <- Xq[bm * 128 +: 128, 0 +: 64] signal xfull
    tma x1 <- Xq[bm * 128 +: 128, 64 +: 64] signal xfull
    for j in 0 .. NB / 128 pipelined yr {
      wait empty
      tma y0 <- Base[j * 128 +: 128, 0 +: 64] signal full
      tma y1 <- Base[j * 128 +: 128, 64 +: 64] signal full
    }
  }
  in search {
    bd = -inf
    bi = -1
    colid = col_idx()
    wait xfull
    load xa <- x0[:, :]
    xn = rowsum(f32(xa) * f32(xa))
    load xa <- x1[:, :]
    xn = xn + rowsum(f32(xa) * f32(xa))
    for j in 0 .. NB / 128 pipelined yr {
      load yn <- Bnorm[j * 128 +: 128]
      wait full
      wgmma s = x0 @ y0^T
      wgmma s += x1 @ y1^T
      wgmma_wait 0
      arrive empty
      s = 2.0 * s - cols(yn)
      tv, ti = topk(s, 16)
      for r in 0 .. 16 unroll 16 {
        cv = rowmax(where(colid == r, tv, -inf))
        ci = rowmax(where(colid == r, ti, -1))
        mv, mi = rowargmin(bd)
        take = rows(cv > mv) && colid == rows(mi)
        bd = where(take, rows(cv), bd)
        bi = where(take, rows(ci + j * 128), bi)
      }
    }
    for r in 0 .. 16 unroll 16 {
      mv, mi = rowargmax(bd)
      ci = rowmax(where(colid == rows(mi), bi, -1))
      store OutI[bm * 128 +: 128, r] <- ci
      store OutD[bm * 128 +: 128, r] <- xn - mv
      bd = where(colid == rows(mi), -inf, bd)
    }
  }
}
