# silu_mul — SwiGLU activation, element-wise: out = silu(gate) · up, bf16 in and out, f32 math,
# 8x512 elements per CTA (32 per thread, four 16-byte vector loads per operand).
kernel silu_mul target sm_90a
  param Gate: global bf16[R, F]
  param Up:   global bf16[R, F]
  param Out:  global bf16[R, F]
  domain R % 8 == 0, F % 512 == 0
  grid (F / 512, R / 8) as (bf, br)
  role work warps 0..3
  frag g: bf16[8, 512] in work
  frag u: bf16[8, 512] in work
{
  in work {
    load g <- Gate[br * 8 +: 8, bf * 512 +: 512]
    load u <- Up[br * 8 +: 8, bf * 512 +: 512]
    store Out[br * 8 +: 8, bf * 512 +: 512] <- bf16(silu(f32(g)) * f32(u))
  }
}
