# kda/kda_decode_bf16 — the KDA decode step with a bf16 state (S0/SN [B, H, V, K] bf16), the
# math in f32 (kda_decode.cake has the derivation). A row of 128 bf16 is 256 bytes: with
# `lanes 16` each lane holds 8 contiguous elements, so the state moves in 16-byte accesses,
# a warp covers two rows per access and a row dot product is 4 shuffles. The state is read
# as bf16 into S16, widened to the f32 tile S once, and rounded back to bf16 once at the end.
# Shape domain: K = V = 128, T <= 16.
kernel kda_decode_bf16 target sm_90a family kda_decode
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
  param S0:   global bf16[B, H, DV, DK]    # state entering the step, V-first
  param SN:   global bf16[B, H, DV, DK]    # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 16   # this CTA's 32 value rows of the state
  frag S16: bf16[32, 128] in upd lanes 16  # the same rows as stored
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 32 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S16 <- S0[b, h, vb * VB +: VB, :]
    S = f32(S16)
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
    store SN[b, h, vb * VB +: VB, :] <- bf16(S)
  }
}

# kda_decode_bf16_lb: the lower-bound gate.
kernel kda_decode_bf16_lb target sm_90a family kda_decode
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
  param S0:   global bf16[B, H, DV, DK]    # state entering the step, V-first
  param SN:   global bf16[B, H, DV, DK]    # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 16   # this CTA's 32 value rows of the state
  frag S16: bf16[32, 128] in upd lanes 16  # the same rows as stored
  frag x16: bf16[128] in upd               # a q, k or g vector on its way from memory
  frag kn:  f32[128] in upd                # k^, then a k^
  frag qn:  f32[128] in upd                # q^, then a q^
  frag al:  f32[128] in upd                # the decay a = exp(g)
  frag dtb: f32[128] in upd
  frag v16: bf16[32] in upd                # this CTA's 32 values of v
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S16 <- S0[b, h, vb * VB +: VB, :]
    S = f32(S16)
    for t in 0 .. T {
      let bt = sigmoid(f32(Beta[b, t, h]))
      load x16 <- K[b, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[b, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[b, t, h, :]
      al = exp(lower_bound * sigmoid(am * (f32(x16) + dtb)))
      load v16 <- V[b, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[b, h, vb * VB +: VB, :] <- bf16(S)
  }
}
