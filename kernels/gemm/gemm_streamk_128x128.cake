# gemm_streamk_128x128 — C = A · Bᵀ, bf16 in/out, stream-K over 128x128 tiles: the schedule of
# gemm_streamk.cake (its header has the scheme) with tiles half as wide. It is for the shapes with
# few row blocks whose tiles leave SMs idle or make a partial wave and whose 128x256 stream-K pays
# too much for its pieces: at M = 256, N = 11008, K = 4096 the 86 tiles of 128x256 fill 86 of 132
# SMs for a whole tile each, while stream-K hands every CTA 84 steps of 64 (1.3 tiles of 128x128)
# and writes the pieces of the cut tiles in f32 (66 groups x 2 slots x 256 x 128 x 4 bytes,
# 17 MB, half of the 128x256 pieces).
#
# The work. The 128-wide column blocks bn, each of K / 64 steps, are laid end to end: step x is
# step x % (K / 64) of block x / (K / 64). CTA (g, bm) runs steps g * IPCN .. g * IPCN + IPCN - 1 of
# the 128-row block bm, so the M / 128 CTAs of one g read the same B tiles together and share them
# in L2. A whole tile goes to C in bf16; a cut tile's piece to P in f32, slot 0 for the CTA's
# first piece, slot 1 for its last. gemm_streamk128_fixup adds each cut tile's pieces in a fixed
# order (the first CTA's slot 1, then slot 0 of each later one) and writes C: no atomics.
# NGN (the CTA groups) and IPCN (steps per CTA) come from the library's plan
# (gemm_streamk_plan with 128-wide blocks, src/lib/rt/gemm_dispatch.inc): NGN * IPCN covers every
# step and no CTA is empty. The verifier cannot judge which tiles a runtime IPCN cuts
# (CK-MEM-001/002 leave such writes out): tests/lower/emu.sh runs the pair on the CPU emulator
# against float64 products at uneven splits.
# Shape domain: M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64, NGN >= 1.
kernel gemm_bf16_streamk128 target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  param P: global f32[NGN, 2, M, 128]   # the f32 pieces of cut tiles: slot 0 a CTA's first, 1 its last
  param IPCN: i32                       # K steps per CTA
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64, NGN >= 1, N / 128 * (K / 64) <= 1073741824
  grid (NGN, M / 128) as (g, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 6
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    let lo = min(g * IPCN, N / 128 * (K / 64))
    let hi = min(lo + IPCN, N / 128 * (K / 64))
    for bn in lo / (K / 64) .. (hi + K / 64 - 1) / (K / 64) {
      for k in max(lo - bn * (K / 64), 0) .. min(hi - bn * (K / 64), K / 64) pipelined ab {
        wait empty
        tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
        tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
      }
    }
  }
  in mma {
    let lo = min(g * IPCN, N / 128 * (K / 64))
    let hi = min(lo + IPCN, N / 128 * (K / 64))
    for bn in lo / (K / 64) .. (hi + K / 64 - 1) / (K / 64) {
      let k0 = max(lo - bn * (K / 64), 0)
      let k1 = min(hi - bn * (K / 64), K / 64)
      acc = 0
      for k in k0 .. k1 pipelined ab {
        wait full
        wgmma acc += a @ b^T
        wgmma_wait 0
        arrive empty
      }
      if k0 == 0 && k1 == K / 64 {
        store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
      } else if k0 > 0 {
        store P[g, 0, bm * 128 +: 128, :] <- acc
      } else {
        store P[g, 1, bm * 128 +: 128, :] <- acc
      }
    }
  }
}

# The pieces' sum: one CTA of 8 warps per quarter (32 rows) of a 128x128 tile, each warp 4 rows of
# 128 f32 (4 per lane). Tile bn's steps run from bn * KS to bn * KS + KS - 1 (KS = K / 64); CTA
# groups ga .. gb hold them; a tile inside one group (ga == gb) went to C whole and is skipped.
kernel gemm_streamk128_fixup target sm_90a
  param P: global f32[NGN, 2, M, 128]
  param C: global bf16[M, N]
  param IPCN: i32
  param KS: i32                          # K / 64, the steps of a tile
  domain M % 128 == 0, N % 128 == 0, NGN >= 1
  grid (4, M / 128, N / 128) as (q, bm, bn)
  role work warps 0..7
  frag x:   f32[32, 128] in work lanes 32
  frag acc: f32[32, 128] in work lanes 32
{
  in work {
    let ga = bn * KS / IPCN
    let gb = (bn * KS + KS - 1) / IPCN
    if ga < gb {
      load acc <- P[ga, 1, bm * 128 + q * 32 +: 32, :]
      for gg in ga + 1 .. gb + 1 {
        load x <- P[gg, 0, bm * 128 + q * 32 +: 32, :]
        acc = acc + x
      }
      store C[bm * 128 + q * 32 +: 32, bn * 128 +: 128] <- bf16(acc)
    }
  }
}
