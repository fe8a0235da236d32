# gemm_ws_128x256_s4 — C = A · Bᵀ in bf16 with f32 accumulation (the syntax-contract example).
# Warp-specialized: one TMA producer warpgroup, two wgmma consumer warpgroups (64 rows each),
# a 4-stage ring of 128x64 A tiles and 256x64 B tiles (48 KiB per stage, 192 KiB in all).
# Raster: `group 16` visits the tiles 16 rows of bm at a time (bm fastest), so the CTAs in
# flight share A and B tiles in L2 (bench/proto/NOTES.md run 4: +4-8% at 8192^3).
# Shape domain: M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64 (see README.md).
kernel gemm_bf16 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid (N / 256, M / 128) as (bn, bm) group 16
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232            # two consumer warpgroups
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
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
    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)
  }
}
