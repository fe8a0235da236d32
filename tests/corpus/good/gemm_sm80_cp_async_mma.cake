# gemm_sm80_cp_async_mma — Ampere-style bf16 GEMM (sm_80): one warpgroup copies A and B tiles
# into a 3-stage ring with cp.async and arrives on `full` (the arrival completes when its copies
# land); two warpgroups compute with mma.sync (fragments loaded from shared memory by the
# compiler) and release the stage on `empty`. No TMA, no wgmma, no register reallocation.
kernel gemm_sm80_cp_async_mma target sm_80 family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 32 == 0, K >= 96
  grid (N / 128, M / 128) as (bn, bm)
  role mma  warps 0..7
  role load warps 8..11
  pipeline ab stages 3
  smem a: bf16[128, 32] swizzle 64B ring ab
  smem b: bf16[128, 32] swizzle 64B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 32 pipelined ab {
      wait empty
      cp_async a <- A[bm * 128 +: 128, k * 32 +: 32]
      cp_async b <- B[bn * 128 +: 128, k * 32 +: 32]
      arrive full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 32 pipelined ab {
      wait full
      mma acc += a @ b^T
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
