# expect: CK-DEAD-001
# Ping-pong consumers: each waits for the other to finish its tile before starting its own mainloop,
# so neither ever starts.
kernel gemm_pingpong target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 384
  grid (N / 256, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma0 warps 4..7 regs 232
  role mma1 warps 8..11 regs 232
  pipeline ab stages 4
  smem a0: bf16[64, 64] swizzle 128B ring ab
  smem a1: bf16[64, 64] swizzle 128B ring ab
  smem b:  bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma0, mma1 arrivals 1
  barrier empty ring ab producers mma0, mma1 consumers load arrivals 2
  barrier t0 producers mma0 consumers mma1 arrivals 1
  barrier t1 producers mma1 consumers mma0 arrivals 1
  frag acc0: f32[64, 256] in mma0
  frag acc1: f32[64, 256] in mma1
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a0 <- A[bm * 128 +: 64, k * 64 +: 64] signal full
      tma a1 <- A[bm * 128 + 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
    }
  }
  in mma0 {
    wait t1
    acc0 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc0 += a0 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 64, bn * 256 +: 256] <- bf16(acc0)
    arrive t0
  }
  in mma1 {
    wait t0
    acc1 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc1 += a1 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 + 64 +: 64, bn * 256 +: 256] <- bf16(acc1)
    arrive t1
  }
}
