# s5.4-tma-panel-loads-advance-by-one-panel.cake
# Checks §5.4: the panel loads of one step fill the whole [64, 128] buffer, so the loop must
# advance the boxes by the buffer's width (128 columns); here they advance by 64, one panel, and
# consecutive steps load overlapping columns of A and B.
# Expected: CK-DATA-003
kernel panels_one_step_short target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 128 == 0, K % 128 == 0, K >= 128
  grid (N / 128, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 4
  smem a: bf16[64, 128] swizzle 128B ring ab
  smem b: bf16[128, 128] swizzle 128B ring ab
  smem cs: bf16[64, 128] swizzle 128B
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 128] in mma split m
{
  in load {
    for k in 0 .. K / 128 pipelined ab {
      wait empty
      tma a[:, 0 +: 64] <- A[bm * 64 +: 64, k * 64 + 0 +: 64] signal full
      tma a[:, 64 +: 64] <- A[bm * 64 +: 64, k * 64 + 64 +: 64] signal full
      tma b[:, 0 +: 64] <- B[bn * 128 +: 128, k * 64 + 0 +: 64] signal full
      tma b[:, 64 +: 64] <- B[bn * 128 +: 128, k * 64 + 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 128 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 64 +: 64, bn * 128 + 0 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 64 +: 64, bn * 128 + 64 +: 64] <- cs[:, 64 +: 64]
  }
}
