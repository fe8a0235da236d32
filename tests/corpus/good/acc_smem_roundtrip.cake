# acc_smem_roundtrip — accumulator-layout tiles stored into shared memory and read back
# (LOWERING.md §2): a bf16 buffer with the 128B swizzle (what wgmma reads as a B operand) and a
# plain f32 buffer, over two warpgroups splitting the rows. tests/lower/emu.sh runs it on the
# CPU emulator: OutB must be bf16(2 X) and OutC 3 X + 1; Cs the column sums of X over the rows of
# both warpgroups, Cm the column maxima of the unsplit copy, Cv row 37 of the f32 buffer read as a
# column vector (3 X[37, :] + 0.5).
kernel acc_smem_roundtrip target sm_90a
  param X:    global f32[B, 128, 64]
  param OutB: global f32[B, 128, 64]
  param OutC: global f32[B, 128, 64]
  param Cs:   global f32[B, 64]
  param Cm:   global f32[B, 64]
  param Cv:   global f32[B, 64]
  grid (B) as (b)
  role work warps 0..7
  smem sa: bf16[128, 64] swizzle 128B
  smem sc: f32[128, 64]
  frag A: f32[128, 64] in work split m
  frag R: bf16[128, 64] in work           # unsplit: each warpgroup reads the rows the other wrote
  frag C: f32[128, 64] in work
  frag cs: f32[64] in work
  frag cm: f32[64] in work
  frag cv: f32[64] in work
{
  in work {
    load A <- X[b, :, :]
    store sa[:, :] <- bf16(A * 2.0)
    store sc[:, :] <- A * 3.0
    sync
    load R <- sa[:, :]
    load C <- sc[:, :]
    store OutB[b, :, :] <- f32(R)
    store OutC[b, :, :] <- C + 1.0
    cs = colsum(A)
    cm = colmax(C)
    store Cs[b, :] <- cs
    store Cm[b, :] <- cm
    load cv <- sc[37, 0 +: 64]
    store Cv[b, :] <- cv + 0.5
  }
}
