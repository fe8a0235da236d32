# s4.1-family-stage-without-chains.cake
# Checks §4.1: `family F stage` marks one kernel of a chain; a family that runs no chains (gemm)
# refuses it, naming the clause.
# Expected: CK-SEM-044
kernel gemm_part target sm_90a family gemm stage
  param A: global f32[M, K]
  param C: global f32[M, K]
  domain M % 128 == 0, K % 128 == 0
  grid (K / 128, M / 128) as (bn, bm)
  role work warps 0..3
  frag c: f32[128, 128] in work
{
  in work {
    load c <- A[bm * 128 +: 128, bn * 128 +: 128]
    store C[bm * 128 +: 128, bn * 128 +: 128] <- c
  }
}
