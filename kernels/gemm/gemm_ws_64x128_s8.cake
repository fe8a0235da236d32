# gemm_ws_64x128_s8 — C = A · Bᵀ, bf16 in/out, f32 accumulation, 64x128 output tiles, for small-M
# shapes whose 128x128 tiles leave most SMs idle and whose K is too short to split (M = 256: two
# rows of 128x128 tiles, 48 CTAs at N = 3072; 96 of these). One TMA producer warpgroup and one
# wgmma consumer warpgroup owning the whole tile (m64n128k16), an 8-stage ring of 64x64 A and
# 128x64 B tiles (24 KiB per stage, 192 KiB in all) to keep its loads ahead.
# Shape domain: M % 64 == 0, N % 128 == 0, K % 64 == 0, K >= 64.
kernel gemm_bf16_64x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid (N / 128, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 8
  smem a: bf16[64, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
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
    store C[bm * 64 +: 64, bn * 128 +: 128] <- bf16(acc)
  }
}
