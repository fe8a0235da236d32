# s5.4-tma-clip-store-overlaps-next-tile.cake
# Checks §5.4: a clipped box writes only its part inside the tensor, but that part must still be
# the CTA's own. Tiles are 176 columns wide and the staging tile leaves in three 64-column
# panels, so the third panel (columns 128..191 of the tile) reaches 16 columns into the next
# CTA's tile. At the smallest domain points there is one CTA along N and nothing meets; the
# memory rules also run at the middle and largest sampled points when a kernel clips, and
# there two CTAs store the same 16 columns.
# Expected: CK-MEM-002
kernel clip_overlap target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 8 == 0, K % 64 == 0, K >= 64
  grid ((N + 175) / 176, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 2
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[176, 64] swizzle 128B ring ab
  smem cs: bf16[128, 192] swizzle 128B
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 176] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 176 +: 176, k * 64 +: 64] clip signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, 0 +: 176] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 176 +: 64] clip <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 176 + 64 +: 64] clip <- cs[:, 64 +: 64]
    tma C[bm * 128 +: 128, bn * 176 + 128 +: 64] clip <- cs[:, 128 +: 64]
  }
}
