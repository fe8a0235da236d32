# acc_wgmma — the wgmma operand layouts of the KDA chunked prefill, without TMA (LOWERING.md §1,
# wgmma descriptors): tiles loaded into registers are stored into swizzled shared buffers whose
# rows are wider than one swizzle span (two 64-column panels of the 128B swizzle), then
# multiplied: K-major A and B over K = 128 (the next panel every
# 4 K steps) into an accumulator both warpgroups compute; an N-major B split by columns (each
# warpgroup reads its own panel); a register A with an N-major B; a transposed (M-major) A, 128
# rows per warpgroup from two panels; an N-major B of 128 columns, two atoms in one instruction
# (the descriptor's leading byte offset); and, as the model's own check, the two forms whose
# rows are one swizzle span, which ran correct on an H200 in the GEMMs and attention kernels
# (K-major A and B; a register A with an N-major B). Transposed stores (`store G[..] <- v^T`,
# LANGUAGE.md §5.6) write an accumulator split by columns (O8), a bf16 cast of an expression
# (O9) and tiles inside a rank-4 tensor (O10) swapped. `-=` subtracts a product (imm-scale-a
# = -1), from shared memory and from registers (O11 = W W - P Q^T - W W = -P Q^T). tests/lower/emu.sh runs it on the CPU emulator, whose wgmma
# model reads shared memory by the PTX ISA's canonical layouts (tools/emu/simt_emu.h), against
# float64 products of the bf16 inputs (tests/lower/acc_emu.c); tests/lower/run.sh compiles it.
kernel acc_wgmma target sm_90a
  param P:   global bf16[B, 64, 128]
  param Q:   global bf16[B, 64, 128]
  param R:   global bf16[B, 128, 128]
  param W:   global bf16[B, 64, 64]
  param O1:  global f32[B, 64, 64]
  param O2:  global f32[B, 64, 128]
  param O3:  global f32[B, 64, 128]
  param O4:  global f32[B, 128, 128]
  param O5:  global f32[B, 64, 128]
  param O6:  global f32[B, 64, 64]
  param O7:  global f32[B, 64, 64]
  param O8:  global f32[B, 128, 64]
  param O9:  global bf16[B, 64, 64]
  param O10: global f32[B, 64, 2, 128]
  param O11: global f32[B, 64, 64]
  grid (B) as (b)
  role math warps 0..7
  smem pa: bf16[64, 128] swizzle 128B
  smem qb: bf16[64, 128] swizzle 128B
  smem rb: bf16[128, 128] swizzle 128B
  smem sq: bf16[64, 64] swizzle 128B
  frag t:  bf16[64, 128] in math split n
  frag u:  bf16[128, 128] in math split n
  frag w:  bf16[64, 64] in math
  frag c1: f32[64, 64] in math
  frag c2: f32[64, 128] in math split n
  frag c4: f32[128, 128] in math split n
  frag c5: f32[64, 128] in math
{
  in math {
    load t <- P[b, :, :]
    store pa[:, :] <- t
    load t <- Q[b, :, :]
    store qb[:, :] <- t
    load u <- R[b, :, :]
    store rb[:, :] <- u
    load w <- W[b, :, :]
    store sq[:, :] <- w
    fence proxy_async
    sync math
    wgmma c1 = pa @ qb^T
    wgmma c2 = pa @ rb
    wgmma_wait 0
    store O1[b, :, :] <- c1
    store O2[b, :, :] <- c2
    store O8[b, :, :] <- c2^T
    store O9[b, :, :] <- bf16(c1 * -1.0)^T
    store O10[b, :, 0, 0 +: 64] <- c1^T
    store O10[b, :, 0, 64 +: 64] <- (c1 * 2.0)^T
    store O10[b, :, 1, 0 +: 64] <- (c1 * 3.0)^T
    store O10[b, :, 1, 64 +: 64] <- (c1 * 4.0)^T
    wgmma c2 = w @ qb
    wgmma c4 = pa^T @ qb
    wgmma_wait 0
    store O3[b, :, :] <- c2
    store O4[b, :, :] <- c4
    wgmma c5 = w @ qb
    wgmma_wait 0
    store O5[b, :, :] <- c5
    wgmma c1 = sq @ sq^T
    wgmma_wait 0
    store O6[b, :, :] <- c1
    wgmma c1 = w @ sq
    wgmma_wait 0
    store O7[b, :, :] <- c1
    wgmma c1 -= pa @ qb^T
    wgmma c1 -= w @ sq
    wgmma_wait 0
    store O11[b, :, :] <- c1
  }
}
