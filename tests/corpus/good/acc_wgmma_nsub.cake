# acc_wgmma_nsub — an N-major B read from inside a swizzle atom (LOWERING.md §1, wgmma
# descriptors): four warpgroups split a [64, 128] accumulator by columns, 32 each, so each
# warpgroup's wgmma reads 32 columns of a 128B-swizzled buffer whose atoms are 64 columns wide;
# the second and fourth start 64 bytes into an atom's rows. O = W Q with a register A (W) and
# an N-major B (qb), as the KDA prep's u = P v on four warpgroups (bench/proto/s21/prep_w4.cake,
# correct on an H100 in session 21). tests/lower/emu.sh runs it on the CPU emulator against
# float64 products (tests/lower/acc_emu.c, check-nsub); tests/lower/run.sh compiles it.
kernel acc_wgmma_nsub target sm_90a
  param Q: global bf16[B, 64, 128]
  param W: global bf16[B, 64, 64]
  param O: global f32[B, 64, 128]
  grid (B) as (b)
  role math warps 0..15
  smem qb: bf16[64, 128] swizzle 128B
  frag t:  bf16[64, 128] in math split n
  frag w:  bf16[64, 64] in math
  frag c:  f32[64, 128] in math split n
{
  in math {
    load t <- Q[b, :, :]
    store qb[:, :] <- t
    load w <- W[b, :, :]
    fence proxy_async
    sync math
    wgmma c = w @ qb
    wgmma_wait 0
    store O[b, :, :] <- c
  }
}
