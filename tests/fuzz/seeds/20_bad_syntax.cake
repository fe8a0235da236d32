kernel bad target sm_90a
  param A: global bf16[M, K
  role load warps 0 3
  smem a: bf16[128, 64] swizzle 16B ring
{
  in load {
    tma a x
    wait
    store C[0] <-
    x += 1
  }
