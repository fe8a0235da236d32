# tile_ops — the thread-tile primitives in one kernel (LANGUAGE.md 4.11, 6.5): a 32 x 128 tile
# over 4 warps with one row per warp at a time, its row vector (rowsum), its column vector
# (colsum across the warps), sum() of a column vector, of a row vector and of a tile, rows()/cols()
# broadcasts of expressions, row_idx()/col_idx(), and the stores of each layout. tests/lower/emu.sh
# runs it on the CPU emulator against a float64 evaluation of the same formulas.
kernel tile_ops target sm_90a
  param X: global f32[N, 128]
  param Y: global f32[N]
  param Z: global f32[N, 128]
  param C: global f32[NB, 128]          # one column vector per CTA
  domain N % 32 == 0, N == NB * 32
  grid (N / 32) as (b)
  role work warps 0..3
  frag S:  f32[32, 128] in work lanes 32
  frag k:  f32[128] in work
  frag d:  f32[32] in work
  frag cs: f32[128] in work
{
  in work {
    load S <- X[b * 32 +: 32, :]
    load k <- X[0, :]
    d = rowsum(S * cols(k * 0.5)) + sum(k * k)
    cs = colsum(S * rows(d))
    S = S - rows(d) * cols(cs) * 0.001 + f32(row_idx() * 128 + col_idx()) * 0.0001
    store Y[b * 32 +: 32] <- d + sum(d) + sum(S)
    store Z[b * 32 +: 32, :] <- S
    store C[b, :] <- cs
  }
}
