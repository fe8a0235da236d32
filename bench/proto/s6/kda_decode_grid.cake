kernel kda_dec_v8w1 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 8                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..0
  frag S:   f32[8, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[8] in upd                # this CTA's 16 values of v
  frag sk:  f32[8] in upd
  frag sq:  f32[8] in upd
  frag d:   f32[8] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v8w2 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 8                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..1
  frag S:   f32[8, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[8] in upd                # this CTA's 16 values of v
  frag sk:  f32[8] in upd
  frag sq:  f32[8] in upd
  frag d:   f32[8] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v8w4 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 8                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[8, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[8] in upd                # this CTA's 16 values of v
  frag sk:  f32[8] in upd
  frag sq:  f32[8] in upd
  frag d:   f32[8] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v8w8 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 8                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..7
  frag S:   f32[8, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[8] in upd                # this CTA's 16 values of v
  frag sk:  f32[8] in upd
  frag sq:  f32[8] in upd
  frag d:   f32[8] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v16w1 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 16                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..0
  frag S:   f32[16, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[16] in upd                # this CTA's 16 values of v
  frag sk:  f32[16] in upd
  frag sq:  f32[16] in upd
  frag d:   f32[16] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v16w2 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 16                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..1
  frag S:   f32[16, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[16] in upd                # this CTA's 16 values of v
  frag sk:  f32[16] in upd
  frag sq:  f32[16] in upd
  frag d:   f32[16] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v16w4 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 16                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[16, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[16] in upd                # this CTA's 16 values of v
  frag sk:  f32[16] in upd
  frag sq:  f32[16] in upd
  frag d:   f32[16] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v16w8 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 16                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..7
  frag S:   f32[16, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[16] in upd                # this CTA's 16 values of v
  frag sk:  f32[16] in upd
  frag sq:  f32[16] in upd
  frag d:   f32[16] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v32w1 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 32                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..0
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 16 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v32w2 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 32                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..1
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 16 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v32w4 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 32                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 16 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_dec_v32w8 target sm_90a family kda_decode
  const DK = 128
  const DV = 128
  const VB = 32                           # value rows per CTA
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DV, DK]     # state entering the step, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..7
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 16 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

