# expect: CK-MEM-003
# 256-row GEMM tiles over a ragged grid: the domain only promises M % 128 == 0 and the grid rounds
# M / 256 up, so at M = 128 (or 384) the last CTA's A tiles and its C tile reach 128 rows past M.
kernel gemm_256x128_s3 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 192
  grid (N / 128, (M + 255) / 256) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 3
  smem a: bf16[256, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[256, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 256 +: 256, k * 64 +: 64] signal full
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
    store C[bm * 256 +: 256, bn * 128 +: 128] <- bf16(acc)
  }
}
