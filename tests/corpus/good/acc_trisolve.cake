# acc_trisolve — trisolve(L, B) over accumulator-layout tiles (LOWERING.md §2): the chunk solve
# of the KDA prefill, L = I + a strictly lower part held by both warpgroups, B and X split by
# columns (w = L^-1 x), and a second solve with a non-unit diagonal, a row-scaled right-hand
# side and an upper triangle of 1e30 that must never be read (u = L2^-1 (beta * x)).
# acc_trisolve_passes is the same with 200 KB of shared memory taken by a buffer, so the
# lowering's scratch has room for 64 of the 128 columns only and the solve runs in 2 passes.
# tests/lower/emu.sh runs both on the CPU emulator against a float64 forward substitution
# (tests/lower/acc_emu.c).
kernel acc_trisolve target sm_90a
  param Lm:   global f32[B, 64, 64]
  param Bm:   global f32[B, 64, 128]
  param Bt:   global f32[B, 64]
  param OutW: global f32[B, 64, 128]
  param OutU: global f32[B, 64, 128]
  grid (B) as (b)
  role work warps 0..7
  frag l:    f32[64, 64] in work
  frag akk:  f32[64, 64] in work
  frag x:    f32[64, 128] in work split n
  frag w:    f32[64, 128] in work split n
  frag beta: f32[64] in work
{
  in work {
    load l <- Lm[b, :, :]
    load x <- Bm[b, :, :]
    load beta <- Bt[b, :]
    akk = where(col_idx() < row_idx(), l * 0.25, 0.0)
    akk = where(col_idx() == row_idx(), 1.0, akk)
    w = trisolve(akk, x)
    store OutW[b, :, :] <- w
    akk = where(col_idx() > row_idx(), 1e30, where(col_idx() == row_idx(), 1.5 + abs(l), l * 0.25))
    w = trisolve(akk, rows(beta) * x)
    store OutU[b, :, :] <- w
  }
}

kernel acc_trisolve_passes target sm_90a
  param Lm:   global f32[B, 64, 64]
  param Bm:   global f32[B, 64, 128]
  param Bt:   global f32[B, 64]
  param OutW: global f32[B, 64, 128]
  param OutU: global f32[B, 64, 128]
  grid (B) as (b)
  role work warps 0..7
  smem pad: f32[200, 256]           # unused (CK-SCHED-002 says so): it only takes the room
  frag l:    f32[64, 64] in work
  frag akk:  f32[64, 64] in work
  frag x:    f32[64, 128] in work split n
  frag w:    f32[64, 128] in work split n
  frag beta: f32[64] in work
{
  in work {
    load l <- Lm[b, :, :]
    load x <- Bm[b, :, :]
    load beta <- Bt[b, :]
    akk = where(col_idx() < row_idx(), l * 0.25, 0.0)
    akk = where(col_idx() == row_idx(), 1.0, akk)
    w = trisolve(akk, x)
    store OutW[b, :, :] <- w
    akk = where(col_idx() > row_idx(), 1e30, where(col_idx() == row_idx(), 1.5 + abs(l), l * 0.25))
    w = trisolve(akk, rows(beta) * x)
    store OutU[b, :, :] <- w
  }
}

# acc_triinv — trisolve(L) with one argument, L^-1 (B the identity, never written to the scratch;
# each warp starts its sweep at the block of its first column, X being lower triangular): the
# KDA prep's P = (I + A_kk)^-1 with a unit diagonal into an unsplit tile, and a non-unit diagonal
# with an upper triangle of 1e30 that must never be read into a `split n` tile. The solving role
# starts at warp 4, as the prep's math role does; trisolve(L, 32) and trisolve(L, 16), the
# inverses of the diagonal halves and of the four 16 x 16 blocks (OutK, OutQ). acc_triinv_passes
# is the same with a buffer taking the room of half the columns' scratch: two passes of 32 columns.
kernel acc_triinv target sm_90a
  param Lm:   global f32[B, 64, 64]
  param OutI: global f32[B, 64, 64]
  param OutJ: global f32[B, 64, 64]
  param OutK: global f32[B, 64, 64]
  param OutQ: global f32[B, 64, 64]
  grid (B) as (b)
  role lead warps 0..3
  role work warps 4..11
  frag l:    f32[64, 64] in work
  frag akk:  f32[64, 64] in work
  frag ai:   f32[64, 64] in work
  frag aj:   f32[64, 64] in work split n
  frag z:    f32[64] in lead
{
  in lead {
    load z <- Lm[b, 0, :]
  }
  in work {
    load l <- Lm[b, :, :]
    akk = where(col_idx() < row_idx(), l * 0.25, 0.0)
    akk = where(col_idx() == row_idx(), 1.0, akk)
    ai = trisolve(akk)
    store OutI[b, :, :] <- ai
    ai = trisolve(akk, 32)   # the two diagonal halves' inverses: the lower-left block ignored
    store OutK[b, :, :] <- ai
    ai = trisolve(akk, 16)   # the four 16 x 16 diagonal blocks' inverses
    store OutQ[b, :, :] <- ai
    akk = where(col_idx() > row_idx(), 1e30, where(col_idx() == row_idx(), 1.5 + abs(l), l * 0.25))
    aj = trisolve(akk)
    store OutJ[b, :, :] <- aj
  }
}

kernel acc_triinv_passes target sm_90a
  param Lm:   global f32[B, 64, 64]
  param OutI: global f32[B, 64, 64]
  param OutJ: global f32[B, 64, 64]
  param OutK: global f32[B, 64, 64]
  param OutQ: global f32[B, 64, 64]
  grid (B) as (b)
  role work warps 0..7
  smem pad: f32[200, 265]           # unused: it leaves room for the scratch of 32 columns, not 64
  frag l:    f32[64, 64] in work
  frag akk:  f32[64, 64] in work
  frag ai:   f32[64, 64] in work
  frag aj:   f32[64, 64] in work split n
{
  in work {
    load l <- Lm[b, :, :]
    akk = where(col_idx() < row_idx(), l * 0.25, 0.0)
    akk = where(col_idx() == row_idx(), 1.0, akk)
    ai = trisolve(akk)
    store OutI[b, :, :] <- ai
    ai = trisolve(akk, 32)
    store OutK[b, :, :] <- ai
    ai = trisolve(akk, 16)
    store OutQ[b, :, :] <- ai
    akk = where(col_idx() > row_idx(), 1e30, where(col_idx() == row_idx(), 1.5 + abs(l), l * 0.25))
    aj = trisolve(akk)
    store OutJ[b, :, :] <- aj
  }
}
