# gemm_ws_128x192_s5 — C = A · Bᵀ, bf16 in/out, f32 accumulation, 128x192 output tiles, for the
# shapes whose 128x256 tiles leave a quarter of the SMs idle (N = 768: 4096x768 is 96 wide tiles
# on 132 SMs, 128 of these). One TMA producer warpgroup, two wgmma consumer warpgroups of 64
# rows (m64n192k16), a 5-stage ring of 128x64 A and 192x64 B tiles (40 KiB per stage, 200 KiB).
# No grouped raster: the route runs at most one wave, so every tile is in flight at once.
# Shape domain: M % 128 == 0, N % 192 == 0, K % 64 == 0, K >= 64.
kernel gemm_bf16_128x192 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 192 == 0, K % 64 == 0, K >= 64
  grid (N / 192, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 5
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[192, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 192] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 192 +: 192, k * 64 +: 64] signal full
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
    store C[bm * 128 +: 128, bn * 192 +: 192] <- bf16(acc)
  }
}
