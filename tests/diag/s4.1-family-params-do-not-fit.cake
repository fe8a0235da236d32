# s4.1-family-params-do-not-fit.cake
# Checks §4.1: the gemm family binds A, B and C by name; a C of another element type does not fit.
# Expected: CK-SEM-044
kernel gemm_i32 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global i32[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0
  grid (N / 128, M / 128) as (bn, bm)
  role work warps 0..3
  frag c: i32[128, 128] in work
{
  in work {
    c = 0
    store C[bm * 128 +: 128, bn * 128 +: 128] <- c
  }
}
