# expect: CK-RES-011
# A candidate of a GEMM campaign on an H200 (tactics from the naive seed): the whole 256x256 f32
# accumulator on one warpgroup is 512 registers per thread; ptxas spilled it by 10 KB.
kernel gemm_seed_naive target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 256 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid (N / 256, M / 256) as (bn, bm) group 32
  role mma warps 0..3
  pipeline ab stages 1
  smem a: bf16[256, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full ring ab producers mma consumers mma arrivals 1
  frag acc: f32[256, 256] in mma
{
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab unroll 1 {
      tma a <- A[bm * 256 +: 256, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
    }
    store C[bm * 256 +: 256, bn * 256 +: 256] <- bf16(acc)
  }
}
