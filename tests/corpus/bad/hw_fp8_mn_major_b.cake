# expect: CK-HW-005
# FP8 GEMM with B stored [K, N] and used without ^T (MN-major): wgmma supports MN-major only for
# 16-bit types.
kernel gemm_fp8_kn target sm_90a
  param A: global f8e4m3[M, K]
  param B: global f8e4m3[K, N]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 128 == 0, K >= 512
  grid (N / 128, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: f8e4m3[128, 128] swizzle 128B ring ab
  smem b: f8e4m3[128, 128] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 128 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 128 +: 128] signal full
      tma b <- B[k * 128 +: 128, bn * 128 +: 128] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 128 pipelined ab {
      wait full
      wgmma acc += a @ b
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)
  }
}
