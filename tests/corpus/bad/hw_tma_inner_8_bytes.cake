# expect: CK-HW-007
# Bias vector loaded two f32 at a time through TMA: an 8-byte inner box is not a multiple of 16
# bytes.
kernel bias_add target sm_90a
  param X:    global f32[M, N]
  param Bias: global f32[N]
  param Y:    global f32[M, N]
  domain M % 128 == 0, N % 2 == 0, N >= 2
  grid (N / 2, M / 128) as (bn, bm)
  role load warps 0..0
  role math warps 4..7
  smem bs: f32[2]
  barrier bfull producers load consumers math arrivals 1
  frag x: f32[128, 2] in math
  frag bv: f32[2] in math
{
  in load {
    tma bs <- Bias[bn * 2 +: 2] signal bfull
  }
  in math {
    load x <- X[bm * 128 +: 128, bn * 2 +: 2]
    wait bfull
    load bv <- bs[:]
    store Y[bm * 128 +: 128, bn * 2 +: 2] <- x + cols(bv)
  }
}
