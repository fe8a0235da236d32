# acc_rows — row values across the warpgroups of accumulator-layout tiles (LOWERING.md §2):
# l2norm of a `split n` tile (each row's sum of squares gathered from both warpgroups) and of a
# `split m` one inside a store, row reductions of a `split n` tile (rowsum, a nested rowmax, a
# rowargmin whose tie spans the two warpgroups), column vectors split like the tile they meet
# (a colsum, a loaded bias, both broadcast with cols() and stored), and vectors broadcast in
# the other orientation through shared memory (rows() of a column vector, cols() of a row
# vector). tests/lower/emu.sh runs it on the CPU emulator against tests/lower/acc_emu.c.
kernel acc_rows target sm_90a
  param X:     global f32[B, 64, 128]
  param S0:    global f32[B, 128, 128]
  param V:     global f32[B, 128]
  param Y:     global bf16[B, 64, 128]
  param OutL:  global f32[B, 64, 128]
  param OutL2: global f32[B, 128, 128]
  param OutR:  global f32[B, 64]
  param OutMx: global f32[B, 64, 128]
  param OutA:  global i32[B, 64]
  param OutC:  global f32[B, 128]
  param OutV:  global f32[B, 64, 128]
  param OutS:  global f32[B, 128, 128]
  grid (B) as (b)
  role work warps 0..7
  frag x:  f32[64, 128] in work split n
  frag y:  bf16[64, 128] in work split n
  frag kn: f32[64, 128] in work split n
  frag s:  f32[128, 128] in work split n
  frag sm: f32[128, 128] in work split m
  frag v:  f32[128] in work
  frag cs: f32[128] in work
  frag r:  f32[64] in work
  frag mv: f32[64] in work
  frag ai: i32[64] in work
  frag rs: f32[128] in work
{
  in work {
    load x <- X[b, :, :]
    load y <- Y[b, :, :]
    kn = l2norm(f32(y))
    store OutL[b, :, :] <- kn
    load sm <- S0[b, :, :]
    store OutL2[b, :, :] <- l2norm(sm) * 0.5
    r = rowsum(x)
    store OutR[b, :] <- r
    kn = x - rows(rowmax(x))
    store OutMx[b, :, :] <- kn
    mv, ai = rowargmin(where(col_idx() % 64 == 5, -9.0, x))
    store OutA[b, :] <- ai
    cs = colsum(x)
    store OutC[b, :] <- cs
    load v <- V[b, :]
    store OutV[b, :, :] <- x + cols(v) - cols(cs)
    load s <- S0[b, :, :]
    rs = rowsum(s)
    store OutS[b, :, :] <- rows(exp(cs * 0.1)) * s + cols(rs)
  }
}
