# acc_global_loads — loads from global memory into accumulator-layout fragments (LOWERING.md §2):
# a whole f32 tile split over two warpgroups by columns, a bf16 tile whose rows are tokens of
# one head of a [B, T, H, D] tensor (row stride H * D), a row vector with the same stride
# (Z[b, 0 +: 64, h], replicated in both warpgroups), and the stores back, tiles too with a row
# stride (OutY[b, :, 0, :]). tests/lower/emu.sh
# runs it on the CPU emulator against tests/lower/acc_emu.c.
kernel acc_global_loads target sm_90a
  param X:    global f32[B, 128, 128]
  param Y:    global bf16[B, 64, H, 128]
  param Z:    global bf16[B, 64, H]
  param OutA: global f32[B, 128, 128]
  param OutT: global f32[B, 64, 128]
  param OutZ: global f32[B, 64]
  param OutY: global f32[B, 64, 2, 128]   # tiles stored with a row stride of 2 * 128
  domain H >= 2
  grid (B) as (b)
  role work warps 0..7
  frag A: f32[128, 128] in work split n
  frag t: bf16[64, 128] in work split n
  frag z: bf16[64] in work
{
  in work {
    load A <- X[b, :, :]
    load t <- Y[b, 0 +: 64, 1, :]
    load z <- Z[b, 0 +: 64, 1]
    store OutA[b, :, :] <- A * 2.0
    store OutT[b, :, :] <- f32(t) + rows(f32(z))
    store OutZ[b, 0 +: 64] <- f32(z) * 3.0
    store OutY[b, :, 0, :] <- f32(t)
    store OutY[b, 0 +: 64, 1, :] <- f32(t) * 2.0
  }
}
