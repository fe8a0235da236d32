kernel dl target sm_90a
  param A: global bf16[M, K]
  grid (M / 128) as (bm)
  role load warps 0..3 regs 40
  role mma warps 4..7 regs 232
  pipeline ab stages 2
  smem a: bf16[128, 64] swizzle 128B ring ab
  barrier full ring ab producers load consumers mma arrivals 1
  barrier empty ring ab producers mma consumers load arrivals 1
  frag acc: f32[128, 64] in mma
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait full
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      wgmma acc += a @ a^T
      wgmma_wait 0
      arrive empty
    }
  }
}
