# s4.11-fragment-over-thread-registers.cake
# Checks §4.11: a fragment is held in its role's registers; spread over the threads that hold it, it
# must fit what one thread can have (CK-RES-011). Here a 256x256 f32 accumulator on a single
# warpgroup: 512 registers per thread, over the 255 of sm_90a (split m over two warpgroups it
# would still be 256; over four, 128).
# Expected: CK-RES-011 (once)
kernel frag_ceiling target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 256 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid (N / 256, M / 256) as (bn, bm)
  role mma warps 0..3
  pipeline ab stages 1
  smem a: bf16[256, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full ring ab producers mma consumers mma arrivals 1
  frag acc: f32[256, 256] in mma
{
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      tma a <- A[bm * 256 +: 256, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
    }
    store C[bm * 256 +: 256, bn * 256 +: 256] <- bf16(acc)
  }
}
