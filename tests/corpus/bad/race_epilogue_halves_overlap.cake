# expect: CK-RACE-004
# Two consumer warpgroups stage their halves of the output tile in one buffer, but the second half
# starts at row 32 instead of 64: the rows overlap and nothing orders the writes.
kernel gemm_halves target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 384
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma0 warps 4..7 regs 232
  role mma1 warps 8..11 regs 232
  pipeline ab stages 4
  smem a0: bf16[64, 64] swizzle 128B ring ab
  smem a1: bf16[64, 64] swizzle 128B ring ab
  smem b:  bf16[128, 64] swizzle 128B ring ab
  smem cs: bf16[128, 128]
  barrier full  ring ab producers load consumers mma0, mma1 arrivals 1
  barrier empty ring ab producers mma0, mma1 consumers load arrivals 2
  frag acc0: f32[64, 128] in mma0
  frag acc1: f32[64, 128] in mma1
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a0 <- A[bm * 128 +: 64, k * 64 +: 64] signal full
      tma a1 <- A[bm * 128 + 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma0 {
    acc0 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc0 += a0 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[0 +: 64, :] <- bf16(acc0)
  }
  in mma1 {
    acc1 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc1 += a1 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[32 +: 64, :] <- bf16(acc1)
  }
}
