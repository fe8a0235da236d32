# kda/kda_decode — one Kimi Delta Attention decode step per sequence (KDA.md "Decode"), f32 state.
#
# The state of a head is kept V-first, S0/SN [B, H, V, K]: row v holds the K = 128 weights of
# value channel v, so the delta rule's two products with the state are row dot products and
# every value row is independent (the "value split": a CTA owns 32 of the 128 rows of one
# head, four CTAs per head). The role's 4 warps hold the 32 x 128 tile as a thread tile: one
# row per warp at a time, 4 contiguous f32 per lane, so the state is read once and written
# once in 16-byte accesses and a row dot product is 5 shuffles.
#
# Per token (T = 1 for decode; up to 16 for a speculative window, the step repeated with the
# state in registers, still one read and one write):
#   k^ = k (sum k^2 + 1e-6)^-1/2, q^ = q (sum q^2 + 1e-6)^-1/2 K^-1/2,  beta = sigmoid(b)
#   a  = exp(-exp(A_log) softplus(g + dt_bias))                      the decay per key channel
#   sk = S (a k^), sq = S (a q^)       both products in one sweep over the decayed state
#   d  = beta (v - sk);  S <- S Diag(a) + d k^T;  o = sq + d (k^ . q^)
# The correction term d (k^ . q^) is what makes one sweep enough: o = S_new q^ expands to the
# decayed product plus d times k^ . q^.
# Shape domain: K = V = 128, T <= 16 (kda_decode), one sequence per batch entry.
kernel kda_decode target sm_90a family kda_decode
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
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
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

# kda_decode_lb: the same step with the lower-bound gate, a = exp(lambda sigmoid(exp(A_log) (g + dt_bias))).
kernel kda_decode_lb target sm_90a family kda_decode
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
  param lower_bound: f32                 # lambda in [-5, 0)
  domain T <= 16
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
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
      al = exp(lower_bound * sigmoid(am * (f32(x16) + dtb)))
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

# kda_decode_v16: 16 value rows per CTA (8 CTAs per head): twice the CTAs and half the rows per
# thread, for small batches where the step is latency-bound. bench/kda.sh times it beside kda_decode.
kernel kda_decode_v16 target sm_90a family kda_decode
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
