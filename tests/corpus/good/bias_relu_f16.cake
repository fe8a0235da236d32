# bias_relu_f16 — element-wise epilogue kernel: y = f16(max(x + bias, 0)) with the bias vector
# broadcast down the columns; f32 in, f16 out.
kernel bias_relu_f16 target sm_90a
  param X:    global f32[R, C]
  param Bias: global f32[C]
  param Y:    global f16[R, C]
  domain R % 16 == 0, C % 256 == 0
  grid (C / 256, R / 16) as (bc, br)
  role work warps 0..3
  frag x: f32[16, 256] in work
  frag b: f32[256] in work
{
  in work {
    load x <- X[br * 16 +: 16, bc * 256 +: 256]
    load b <- Bias[bc * 256 +: 256]
    store Y[br * 16 +: 16, bc * 256 +: 256] <- f16(max(x + cols(b), 0.0))
  }
}
