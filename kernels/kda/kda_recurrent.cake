# kda/kda_recurrent — Kimi Delta Attention prefill as the per-token recurrence (family kda).
#
# The decode step of kda_decode.cake run over every token of a sequence, the state held in
# registers from the first token to the last: one state read, one state write, and per token
# the q, k, g rows of the head (256 bytes each), the CTA's 32 values of v and one beta. Exact
# (the oracle's own order of operations, in f32), any T, but serial over the tokens: the
# baseline a chunked prefill (tensor cores, C = 64) must beat, and the one that runs today.
#   kda_recurrent         B sequences of T tokens ([B, T, H, *] inputs, [B, H, V, K] states)
#   kda_recurrent_varlen  N packed sequences (B = 1) through cu_seqlens Cu [N + 1], states [N, H, V, K]
# Each has a _lb twin with the lower-bound gate. Shape domain: K = V = 128.
kernel kda_recurrent target sm_90a family kda
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
  param S0:   global f32[B, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
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


kernel kda_recurrent_lb target sm_90a family kda
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
  param S0:   global f32[B, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[B, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
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


kernel kda_recurrent_varlen target sm_90a family kda
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
  param S0:   global f32[N, H, DV, DK]     # state entering each sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param Cu:   global i64[N1]             # cu_seqlens: sequence n is tokens Cu[n] .. Cu[n + 1] - 1
  domain B == 1, N1 == N + 1
  grid (DV / VB, H, N) as (vb, h, n)
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
    let bos = Cu[n]
    let eos = Cu[n + 1]
    load S <- S0[n, h, vb * VB +: VB, :]
    for t in bos .. eos {
      let bt = sigmoid(f32(Beta[0, t, h]))
      load x16 <- K[0, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[0, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[0, t, h, :]
      al = exp(am * softplus(f32(x16) + dtb))
      load v16 <- V[0, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[0, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[n, h, vb * VB +: VB, :] <- S
  }
}


kernel kda_recurrent_varlen_lb target sm_90a family kda
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
  param S0:   global f32[N, H, DV, DK]     # state entering each sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
  param Cu:   global i64[N1]             # cu_seqlens: sequence n is tokens Cu[n] .. Cu[n + 1] - 1
  domain B == 1, N1 == N + 1
  grid (DV / VB, H, N) as (vb, h, n)
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
    let bos = Cu[n]
    let eos = Cu[n + 1]
    load S <- S0[n, h, vb * VB +: VB, :]
    for t in bos .. eos {
      let bt = sigmoid(f32(Beta[0, t, h]))
      load x16 <- K[0, t, h, :]
      kn = f32(x16)
      kn = kn * rsqrt(sum(kn * kn) + 1e-06)
      load x16 <- Q[0, t, h, :]
      qn = f32(x16)
      qn = qn * (rsqrt(sum(qn * qn) + 1e-06) * 0.08838834764831845)
      load x16 <- G[0, t, h, :]
      al = exp(lower_bound * sigmoid(am * (f32(x16) + dtb)))
      load v16 <- V[0, t, h, vb * VB +: VB]
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bt * (f32(v16) - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[0, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
    }
    store SN[n, h, vb * VB +: VB, :] <- S
  }
}
