# acc_smem_panels — accumulator-layout fragments loaded from and stored into one column panel
# of a wider shared buffer (LANGUAGE.md §5.5): `buf[:, c +: n]`, with c a constant or a loop
# variable's multiple. X arrives by TMA in the two 64-column panels of a 128B-swizzled
# [64, 128] buffer; a loop over the panels scales each by its own factor into a second swizzled
# buffer, and constant panel offsets swap the halves into an unswizzled f32 buffer. Both are
# read back whole. tests/lower/emu.sh runs it on the CPU emulator: Out must be exactly 2 X on
# columns 0..63 and 4 X on 64..127, Out2 exactly X with its halves swapped.
kernel acc_smem_panels target sm_90a
  param X:    global bf16[B, 64, 128]
  param Out:  global f32[B, 64, 128]
  param Out2: global f32[B, 64, 128]
  grid (B) as (b)
  role load warps 0..3
  role work warps 4..7
  smem xs: bf16[64, 128] swizzle 128B
  smem ys: bf16[64, 128] swizzle 128B
  smem zs: f32[64, 128]
  barrier full producers load consumers work arrivals 1
  frag t: bf16[64, 64] in work
  frag u: bf16[64, 128] in work
  frag w: f32[64, 128] in work
{
  in load {
    tma xs[:, 0 +: 64] <- X[b, 0 +: 64, 0 +: 64] signal full
    tma xs[:, 64 +: 64] <- X[b, 0 +: 64, 64 +: 64] signal full
  }
  in work {
    wait full
    for p in 0 .. 2 {
      load t <- xs[:, p * 64 +: 64]
      store ys[:, p * 64 +: 64] <- bf16(f32(t) * (2.0 + 2.0 * f32(p)))
    }
    load t <- xs[:, 64 +: 64]
    store zs[:, 0 +: 64] <- f32(t)
    load t <- xs[:, 0 +: 64]
    store zs[:, 64 +: 64] <- f32(t)
    sync work
    load u <- ys[:, :]
    store Out[b, :, :] <- f32(u)
    load w <- zs[:, :]
    store Out2[b, :, :] <- w
  }
}
