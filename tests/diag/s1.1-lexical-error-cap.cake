# s1.1-lexical-error-cap.cake
# Checks §1.1: after 50 lexical errors the rest are suppressed with one note.
# Expected: CK-LEX-007
kernel gemm_bf16 target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 256
  grid (N / 256, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  $ 0
  $ 1
  $ 2
  $ 3
  $ 4
  $ 5
  $ 6
  $ 7
  $ 8
  $ 9
  $ 10
  $ 11
  $ 12
  $ 13
  $ 14
  $ 15
  $ 16
  $ 17
  $ 18
  $ 19
  $ 20
  $ 21
  $ 22
  $ 23
  $ 24
  $ 25
  $ 26
  $ 27
  $ 28
  $ 29
  $ 30
  $ 31
  $ 32
  $ 33
  $ 34
  $ 35
  $ 36
  $ 37
  $ 38
  $ 39
  $ 40
  $ 41
  $ 42
  $ 43
  $ 44
  $ 45
  $ 46
  $ 47
  $ 48
  $ 49
  $ 50
  $ 51
  $ 52
  $ 53
  $ 54
  $ 55
  $ 56
  $ 57
  $ 58
  $ 59
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
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
    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)
  }
}
