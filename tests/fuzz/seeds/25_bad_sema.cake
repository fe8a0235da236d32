kernel s target sm_90a
  param A: global bf16[M, K]
  role load warps 0..3
  role mma warps 4..7
  pipeline ab stages 2
  smem a: bf16[128, 64] swizzle 128B ring ab
  barrier full ring ab producers load consumers mma arrivals 1
  frag acc: f32[128, 64] in mma
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[0 +: 128, k * 64 +: 64] signal nope
    }
  }
  in mma {
    wgmma acc += a @ zz^T
    store A[0 +: 128, 0 +: 64] <- bf16(acc)
  }
}
