# expect: CK-BAR-005
# Split A and B into two pipelines but the single K loop is pipelined on `pa` and waits on fullb, a
# ring barrier of `pb`.
kernel gemm_two_rings target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 384
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline pa stages 4
  pipeline pb stages 4
  smem a: bf16[128, 64] swizzle 128B ring pa
  smem b: bf16[128, 64] swizzle 128B ring pb
  barrier fulla ring pa producers load consumers mma arrivals 1
  barrier fullb ring pb producers load consumers mma arrivals 1
  barrier empty ring pa producers mma consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined pa {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal fulla
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal fullb
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined pa {
      wait fulla
      wait fullb
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
