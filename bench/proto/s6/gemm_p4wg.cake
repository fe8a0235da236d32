kernel gemm_p4wg target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 256 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 128, M / 256) as (bn, bm)
  role load warps 0..3 regs 40
  role mma warps 4..19 regs 104
  pipeline ab stages 4
  smem a: bf16[256, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full ring ab producers load consumers mma arrivals 1
  barrier empty ring ab producers mma consumers load arrivals 4
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

kernel gemm_p4wg_g16 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 256 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 128, M / 256) as (bn, bm) group 16
  role load warps 0..3 regs 40
  role mma warps 4..19 regs 104
  pipeline ab stages 4
  smem a: bf16[256, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full ring ab producers load consumers mma arrivals 1
  barrier empty ring ab producers mma consumers load arrivals 4
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
