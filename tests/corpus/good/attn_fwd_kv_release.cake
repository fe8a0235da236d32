# attn_fwd_kv_release — attention forward (d = 64) that gives K and V back separately: `arrive
# kempty` right after the QKᵀ wgmma retires lets the producer refill ks while the consumer still
# reads vs for P·V, which only `arrive vempty` releases. The producer's refill of vs waits on
# both barriers, so reading vs after `arrive kempty` is not a use after release (CK-MEM-004
# follows which barriers gate each buffer's refill).
kernel attn_fwd_kv_release target sm_90a
  const D = 64
  param Q:  global bf16[BH, S, D]
  param Kx: global bf16[BH, S, D]
  param V:  global bf16[BH, S, D]
  param O:  global bf16[BH, S, D]
  domain S % 128 == 0, S >= 256
  grid (S / 128, BH) as (bm, bh)
  role load warps 0..3 regs 40
  role attn warps 4..11 regs 232
  pipeline kv stages 2
  smem qs: bf16[128, 64] swizzle 128B
  smem ks: bf16[128, 64] swizzle 128B ring kv
  smem vs: bf16[128, 64] swizzle 128B ring kv
  barrier qfull producers load consumers attn arrivals 1
  barrier kfull ring kv producers load consumers attn arrivals 1
  barrier vfull ring kv producers load consumers attn arrivals 1
  barrier kempty ring kv producers attn consumers load arrivals 2
  barrier vempty ring kv producers attn consumers load arrivals 2
  frag s:     f32[128, 128] in attn split m
  frag p:     bf16[128, 128] in attn split m
  frag o:     f32[128, 64] in attn split m
  frag m:     f32[128] in attn split m
  frag mnew:  f32[128] in attn split m
  frag l:     f32[128] in attn split m
  frag alpha: f32[128] in attn split m
{
  in load {
    tma qs <- Q[bh, bm * 128 +: 128, 0 +: 64] signal qfull
    for j in 0 .. S / 128 pipelined kv {
      wait kempty
      tma ks <- Kx[bh, j * 128 +: 128, 0 +: 64] signal kfull
      wait vempty
      tma vs <- V[bh, j * 128 +: 128, 0 +: 64] signal vfull
    }
  }
  in attn {
    m = -inf
    l = 0.0
    o = 0.0
    wait qfull
    for j in 0 .. S / 128 pipelined kv {
      wait kfull
      wgmma s = qs @ ks^T
      wgmma_wait 0
      arrive kempty
      s = s * 0.18033688011112042          # 1/sqrt(64) * log2(e)
      mnew = max(m, rowmax(s))
      p = bf16(exp2(s - rows(mnew)))
      alpha = exp2(m - mnew)
      l = l * alpha + rowsum(f32(p))
      o = o * rows(alpha)
      m = mnew
      wait vfull
      wgmma o += p @ vs
      wgmma_wait 0
      arrive vempty
    }
    store O[bh, bm * 128 +: 128, :] <- bf16(o / rows(l))
  }
}
