# s4.1-family-unknown.cake
# Checks §4.1: a `family` clause must name a registered family; a typo is an error with a hint.
# Expected: CK-SEM-043
kernel scale target sm_90a family gemn
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 128 == 0
  grid (N / 128, M / 128) as (bn, bm)
  role work warps 0..3
  frag c: bf16[128, 128] in work
{
  in work {
    load c <- A[bm * 128 +: 128, 0 +: 128]
    store C[bm * 128 +: 128, bn * 128 +: 128] <- c
  }
}
