# gemm_streamk — C = A · Bᵀ, bf16 in/out, for shapes whose 128x256 tiles make a partial wave
# (stream-K). The K steps of the output are shared out evenly instead of whole tiles: a
# tile-per-CTA grid of 160 tiles on 132 SMs runs two rounds, the second with 28 SMs busy; here
# every CTA runs the same number of K steps, 1.2 tiles' worth, and the tiles cut between two
# CTAs are summed afterwards.
#
# The work. The output's 256-wide column blocks bn = 0 .. N / 256 - 1, each of K / 64 steps of
# 64, are laid end to end: step x is step x % (K / 64) of column block x / (K / 64). CTA (g, bm)
# runs steps g * IPC .. g * IPC + IPC - 1 (the last CTA fewer) for the 128-row block bm, so the
# M / 128 CTAs of one g read the same B tiles at about the same time and share them in L2 (the
# row blocks of A are small at the M this route is for). A CTA's steps cover the end of one
# tile, then whole tiles, then the start of another; its pipeline carries on from tile to tile
# (the producer loads the next tile's first stages during the epilogue of the current one).
#   - a whole tile (its steps 0 .. K / 64 - 1 all in this CTA) is stored into C in bf16;
#   - a piece that starts inside a tile (only the CTA's first) goes in f32 to P[g, 0, rows, :];
#   - a piece that starts at a tile's first step and ends inside it (only the CTA's last) to
#     P[g, 1, rows, :].
# gemm_streamk_fixup then sums each cut tile's pieces in a fixed order (the first CTA's piece
# from slot 1, the others' from slot 0, by increasing g) and writes it into C. No atomics, no
# waiting on another CTA: the result does not depend on the order the CTAs ran in.
#
# IPC (K steps per CTA) is a runtime scalar chosen by the library (src/lib/rt/gemm_dispatch.inc,
# gemm_streamk_plan: NG groups of M / 128 CTAs fill the SMs, IPC = ceil(columns * K/64 / NG),
# NG then trimmed so that no CTA is empty). Because the pieces follow from a runtime value, the
# verifier does not judge what the pair writes (CK-MEM-001/002/003 leave out writes that depend
# on a runtime scalar); tests/lower/emu.sh runs both kernels on the CPU emulator against the
# float64 product at uneven splits, including a CTA inside one tile and a tile cut in three.
# Shape domain: M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64; IPC >= 1 and
# NG * IPC >= N / 256 * (K / 64) (the library's plan).
kernel gemm_bf16_streamk target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  param P: global f32[NG, 2, M, 256]     # the f32 pieces of cut tiles: slot 0 a CTA's first, 1 its last
  param IPC: i32                         # K steps per CTA
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64, NG >= 1, N / 256 * (K / 64) <= 1073741824
  grid (NG, M / 128) as (g, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    let lo = min(g * IPC, N / 256 * (K / 64))
    let hi = min(lo + IPC, N / 256 * (K / 64))
    for bn in lo / (K / 64) .. (hi + K / 64 - 1) / (K / 64) {
      for k in max(lo - bn * (K / 64), 0) .. min(hi - bn * (K / 64), K / 64) pipelined ab {
        wait empty
        tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
        tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
      }
    }
  }
  in mma {
    let lo = min(g * IPC, N / 256 * (K / 64))
    let hi = min(lo + IPC, N / 256 * (K / 64))
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
        store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)
      } else if k0 > 0 {
        store P[g, 0, bm * 128 +: 128, :] <- acc
      } else {
        store P[g, 1, bm * 128 +: 128, :] <- acc
      }
    }
  }
}

# gemm_streamk_fixup — the cut tiles of gemm_bf16_streamk: tile (bm, bn) covers steps
# bn * KS .. bn * KS + KS - 1 (KS = K / 64, a runtime scalar here: the kernel has no K), run by CTAs ga = first / IPC .. gb = last / IPC of row block
# bm. When ga == gb one CTA ran it whole and stored it; otherwise C = bf16(P[ga, 1] + P[ga + 1, 0]
# + ... + P[gb, 0]), summed in that order in f32. One CTA per 32 rows of a tile, 8 warps, a row
# of 256 f32 per warp at a time (8 contiguous values per lane).
kernel gemm_streamk_fixup target sm_90a
  param P: global f32[NG, 2, M, 256]
  param C: global bf16[M, N]
  param IPC: i32
  param KS: i32                          # K / 64, the steps of a tile
  domain M % 128 == 0, N % 256 == 0, NG >= 1
  grid (4, M / 128, N / 256) as (q, bm, bn)
  role work warps 0..7
  frag x:   f32[32, 256] in work lanes 32
  frag acc: f32[32, 256] in work lanes 32
{
  in work {
    let ga = bn * KS / IPC
    let gb = (bn * KS + KS - 1) / IPC
    if ga < gb {
      load acc <- P[ga, 1, bm * 128 + q * 32 +: 32, :]
      for gg in ga + 1 .. gb + 1 {
        load x <- P[gg, 0, bm * 128 + q * 32 +: 32, :]
        acc = acc + x
      }
      store C[bm * 128 + q * 32 +: 32, bn * 256 +: 256] <- bf16(acc)
    }
  }
}
