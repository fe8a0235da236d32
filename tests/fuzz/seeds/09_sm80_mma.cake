# sm_80 path: cp.async into smem, mma.sync, plain store
kernel gemm_sm80 target sm_80
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global f32[M, N]
  const BK = 32
  domain M % 64 == 0, N % 64 == 0, K % BK == 0
  grid (N / 64, M / 64) as (bn, bm)
  role w warps 0..3
  smem a: bf16[64, BK]
  smem b: bf16[64, BK]
  frag acc: f32[64, 64] in w
{
  in w {
    acc = 0
    for k in 0 .. K / BK step 1 unroll 2 {
      cp_async a <- A[bm * 64 +: 64, k * BK +: BK]
      cp_async b[0 +: 64, :] <- B[bn * 64 +: 64, k * BK +: BK]
      sync w
      mma acc += a @ b^T
      sync
    }
    store C[bm * 64 +: 64, bn * 64 +: 64] <- acc
  }
}
