# expect: CK-MEM-002
# Ping-pong KMeans assignment whose second consumer role stores its 64 labels over the first
# role's (a copy-pasted offset): roles da and db both write Out[b, bm * 128 +: 64], and the
# other 64 points of every block are left unwritten.
kernel kmeans_assign_pp target sm_90a family kmeans_assign
  const D = 128
  param X:     global bf16[B, N, D]
  param Cent:  global bf16[B, K, D]
  param Cnorm: global f32[B, K]
  param Out:   global i32[B, N]
  domain N % 128 == 0, K % 128 == 0, K >= 512
  grid (N / 128, B) as (bm, b)
  role load warps 0..3 regs 40
  role da warps 4..7 regs 232
  role db warps 8..11 regs 232
  pipeline cr stages 4
  smem xa0: bf16[64, 64] swizzle 128B
  smem xa1: bf16[64, 64] swizzle 128B
  smem xb0: bf16[64, 64] swizzle 128B
  smem xb1: bf16[64, 64] swizzle 128B
  smem c0: bf16[128, 64] swizzle 128B ring cr
  smem c1: bf16[128, 64] swizzle 128B ring cr
  barrier xfull producers load consumers da, db arrivals 1
  barrier full  ring cr producers load consumers da, db arrivals 1
  barrier empty ring cr producers da, db consumers load arrivals 2
  barrier ta producers da consumers db arrivals 1
  barrier tb producers db consumers da arrivals 1
  frag sa:  f32[64, 128] in da
  frag cna: f32[128] in da
  frag mna: f32[64] in da
  frag aga: i32[64] in da
  frag bda: f32[64] in da
  frag bia: i32[64] in da
  frag sb:  f32[64, 128] in db
  frag cnb: f32[128] in db
  frag mnb: f32[64] in db
  frag agb: i32[64] in db
  frag bdb: f32[64] in db
  frag bib: i32[64] in db
{
  in load {
    tma xa0 <- X[b, bm * 128 +: 64, 0 +: 64] signal xfull
    tma xa1 <- X[b, bm * 128 +: 64, 64 +: 64] signal xfull
    tma xb0 <- X[b, bm * 128 + 64 +: 64, 0 +: 64] signal xfull
    tma xb1 <- X[b, bm * 128 + 64 +: 64, 64 +: 64] signal xfull
    for j in 0 .. K / 128 pipelined cr {
      wait empty
      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full
      tma c1 <- Cent[b, j * 128 +: 128, 64 +: 64] signal full
    }
  }
  in da {
    bda = inf
    bia = 0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      load cna <- Cnorm[b, j * 128 +: 128]
      wait full
      if j > 0 {
        wait tb
      }
      wgmma sa = xa0 @ c0^T
      wgmma sa += xa1 @ c1^T
      arrive ta
      wgmma_wait 0
      arrive empty
      sa = 0.5 * cols(cna) - sa
      mna, aga = rowargmin(sa)
      bia = where(mna < bda, aga + j * 128, bia)
      bda = min(bda, mna)
    }
    store Out[b, bm * 128 +: 64] <- bia
  }
  in db {
    bdb = inf
    bib = 0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      load cnb <- Cnorm[b, j * 128 +: 128]
      wait full
      wait ta
      wgmma sb = xb0 @ c0^T
      wgmma sb += xb1 @ c1^T
      arrive tb
      wgmma_wait 0
      arrive empty
      sb = 0.5 * cols(cnb) - sb
      mnb, agb = rowargmin(sb)
      bib = where(mnb < bdb, agb + j * 128, bib)
      bdb = min(bdb, mnb)
    }
    store Out[b, bm * 128 +: 64] <- bib
  }
}
