# kda/kda_prefill — Kimi Delta Attention prefill as a software-pipelined recurrence (family kda).
#
# The per-token recurrence of kda_recurrent.cake with the serial chain cut to what must be
# serial. Only the state update depends on the previous token; each token's loads (q, k, g,
# v, beta), its L2 norms and its decay do not. So iteration t first issues the loads of token
# t + 1, then runs token t's state step (two row dot products over the decayed state, the
# rank-1 update, o with the correction term), then prepares token t + 1 (norms, gate) while
# the stores drain: the loads' latency and the preprocessing overlap the chain, which is left
# with one row reduction (5 shuffles) and the element-wise update per token. The state of the
# CTA's 32 value rows stays in registers from the first token to the last (one read, one
# write); the value split gives 4 CTAs per head. The next token's index is clamped
# (min(t + 1, last)), so the loop has no branch: the last iteration reloads its own token.
#   kda_prefill         B sequences of T tokens ([B, T, H, *], states [B, H, V, K])
#   kda_prefill_varlen  N packed sequences (B = 1) through cu_seqlens Cu [N + 1]
#   kda_prefill_v16     kda_prefill with 16 value rows per CTA (8 CTAs per head)
# The first two have _lb twins with the lower-bound gate. Shape domain: K = V = 128.
kernel kda_prefill target sm_90a family kda
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
  param S0:   global f32[B, H, DV, DK]   # state entering the sequence, V-first
  param SN:   global f32[B, H, DV, DK]   # state leaving it
  param O:    global bf16[B, T, H, DV]
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[32] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[32] in upd                 # this token's values and beta (per row)
  frag bv:  f32[32] in upd
  frag bv1: f32[32] in upd                 # the next token's beta
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    load kx <- K[b, 0, h, :]
    load qx <- Q[b, 0, h, :]
    load gx <- G[b, 0, h, :]
    load vx <- V[b, 0, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[b, 0, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(am * softplus(f32(gx) + dtb))
    for t in 0 .. T {
      let tn = min(t + 1, T - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[b, tn, h, :]
      load qx <- Q[b, tn, h, :]
      load gx <- G[b, tn, h, :]
      load vx <- V[b, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[b, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(am * softplus(f32(gx) + dtb))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_prefill_lb target sm_90a family kda
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
  param S0:   global f32[B, H, DV, DK]   # state entering the sequence, V-first
  param SN:   global f32[B, H, DV, DK]   # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[32] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[32] in upd                 # this token's values and beta (per row)
  frag bv:  f32[32] in upd
  frag bv1: f32[32] in upd                 # the next token's beta
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    load kx <- K[b, 0, h, :]
    load qx <- Q[b, 0, h, :]
    load gx <- G[b, 0, h, :]
    load vx <- V[b, 0, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[b, 0, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    for t in 0 .. T {
      let tn = min(t + 1, T - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[b, tn, h, :]
      load qx <- Q[b, tn, h, :]
      load gx <- G[b, tn, h, :]
      load vx <- V[b, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[b, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_prefill_varlen target sm_90a family kda
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
  param S0:   global f32[N, H, DV, DK]   # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]   # state leaving it
  param O:    global bf16[B, T, H, DV]
  param Cu:   global i64[N1]             # cu_seqlens: sequence n is tokens Cu[n] .. Cu[n + 1] - 1
  domain B == 1, N1 == N + 1
  grid (DV / VB, H, N) as (vb, h, n)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[32] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[32] in upd                 # this token's values and beta (per row)
  frag bv:  f32[32] in upd
  frag bv1: f32[32] in upd                 # the next token's beta
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
    load kx <- K[0, bos, h, :]
    load qx <- Q[0, bos, h, :]
    load gx <- G[0, bos, h, :]
    load vx <- V[0, bos, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[0, bos, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(am * softplus(f32(gx) + dtb))
    for t in bos .. eos {
      let tn = min(t + 1, eos - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[0, tn, h, :]
      load qx <- Q[0, tn, h, :]
      load gx <- G[0, tn, h, :]
      load vx <- V[0, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[0, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[0, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(am * softplus(f32(gx) + dtb))
    }
    store SN[n, h, vb * VB +: VB, :] <- S
  }
}

kernel kda_prefill_varlen_lb target sm_90a family kda
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
  param S0:   global f32[N, H, DV, DK]   # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]   # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
  param Cu:   global i64[N1]             # cu_seqlens: sequence n is tokens Cu[n] .. Cu[n + 1] - 1
  domain B == 1, N1 == N + 1
  grid (DV / VB, H, N) as (vb, h, n)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 32   # this CTA's 32 value rows of the state
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[32] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[32] in upd                 # this token's values and beta (per row)
  frag bv:  f32[32] in upd
  frag bv1: f32[32] in upd                 # the next token's beta
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
    load kx <- K[0, bos, h, :]
    load qx <- Q[0, bos, h, :]
    load gx <- G[0, bos, h, :]
    load vx <- V[0, bos, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[0, bos, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    for t in bos .. eos {
      let tn = min(t + 1, eos - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[0, tn, h, :]
      load qx <- Q[0, tn, h, :]
      load gx <- G[0, tn, h, :]
      load vx <- V[0, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[0, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[0, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    }
    store SN[n, h, vb * VB +: VB, :] <- S
  }
}

# kda_prefill_v16: 16 value rows per CTA, 8 CTAs per head: twice the CTAs (more of them per SM
# to hide the loads' latency), half the rows per thread. bench/kda.sh times it beside kda_prefill.
kernel kda_prefill_v16 target sm_90a family kda
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
  param S0:   global f32[B, H, DV, DK]   # state entering the sequence, V-first
  param SN:   global f32[B, H, DV, DK]   # state leaving it
  param O:    global bf16[B, T, H, DV]
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[16, 128] in upd lanes 32   # this CTA's 16 value rows of the state
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[16] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[16] in upd                 # this token's values and beta (per row)
  frag bv:  f32[16] in upd
  frag bv1: f32[16] in upd                 # the next token's beta
  frag sk:  f32[16] in upd
  frag sq:  f32[16] in upd
  frag d:   f32[16] in upd
{
  in upd {
    let am = -exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S <- S0[b, h, vb * VB +: VB, :]
    load kx <- K[b, 0, h, :]
    load qx <- Q[b, 0, h, :]
    load gx <- G[b, 0, h, :]
    load vx <- V[b, 0, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[b, 0, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(am * softplus(f32(gx) + dtb))
    for t in 0 .. T {
      let tn = min(t + 1, T - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[b, tn, h, :]
      load qx <- Q[b, tn, h, :]
      load gx <- G[b, tn, h, :]
      load vx <- V[b, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[b, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(am * softplus(f32(gx) + dtb))
    }
    store SN[b, h, vb * VB +: VB, :] <- S
  }
}

# kda_prefill_bf16_lb — kda_prefill_lb with the state entering and leaving in bf16 (S0/SN
# [B, H, V, K] bf16), the layout and precision FlashKDA's interface uses, so the two are timed
# on the same state traffic. Inside the sequence the state stays an f32 register tile (read
# once as bf16 into S16 and widened, rounded back to bf16 once at the end), so the recurrence
# itself keeps f32 precision; `lanes 16` makes a 128-element bf16 row one 16-byte access per
# lane, as in kda_decode_bf16.
kernel kda_prefill_bf16_lb target sm_90a family kda
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
  param S0:   global bf16[B, H, DV, DK]  # state entering the sequence, V-first (bf16, as FlashKDA keeps it)
  param SN:   global bf16[B, H, DV, DK]  # state leaving it
  param O:    global bf16[B, T, H, DV]
  param lower_bound: f32                 # lambda in [-5, 0)
  grid (DV / VB, H, B) as (vb, h, b)
  role upd warps 0..3
  frag S:   f32[32, 128] in upd lanes 16   # this CTA's 32 value rows of the state
  frag S16: bf16[32, 128] in upd lanes 16  # the same rows as stored
  frag kx:  bf16[128] in upd               # the next token's k, q, g and v as loaded
  frag qx:  bf16[128] in upd
  frag gx:  bf16[128] in upd
  frag vx:  bf16[32] in upd
  frag dtb: f32[128] in upd
  frag kn:  f32[128] in upd                # this token: k^, q^, the decay a
  frag qn:  f32[128] in upd
  frag al:  f32[128] in upd
  frag kn1: f32[128] in upd                # the next token, prepared during this one
  frag qn1: f32[128] in upd
  frag al1: f32[128] in upd
  frag vv:  f32[32] in upd                 # this token's values and beta (per row)
  frag bv:  f32[32] in upd
  frag bv1: f32[32] in upd                 # the next token's beta
  frag sk:  f32[32] in upd
  frag sq:  f32[32] in upd
  frag d:   f32[32] in upd
{
  in upd {
    let am = exp(Alog[h])
    load dtb <- Dtb[h, :]
    load S16 <- S0[b, h, vb * VB +: VB, :]
    S = f32(S16)
    load kx <- K[b, 0, h, :]
    load qx <- Q[b, 0, h, :]
    load gx <- G[b, 0, h, :]
    load vx <- V[b, 0, h, vb * VB +: VB]
    bv1 = sigmoid(f32(Beta[b, 0, h]))
    kn1 = f32(kx)
    kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
    qn1 = f32(qx)
    qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
    al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    for t in 0 .. T {
      let tn = min(t + 1, T - 1)
      kn = kn1
      qn = qn1
      al = al1
      vv = f32(vx)
      bv = bv1
      load kx <- K[b, tn, h, :]
      load qx <- Q[b, tn, h, :]
      load gx <- G[b, tn, h, :]
      load vx <- V[b, tn, h, vb * VB +: VB]
      bv1 = sigmoid(f32(Beta[b, tn, h]))
      sk = rowsum(S * cols(al * kn))
      sq = rowsum(S * cols(al * qn))
      d = bv * (vv - sk)
      S = S * cols(al) + rows(d) * cols(kn)
      store O[b, t, h, vb * VB +: VB] <- bf16(sq + d * sum(kn * qn))
      kn1 = f32(kx)
      kn1 = kn1 * rsqrt(sum(kn1 * kn1) + 1e-06)
      qn1 = f32(qx)
      qn1 = qn1 * (rsqrt(sum(qn1 * qn1) + 1e-06) * 0.08838834764831845)
      al1 = exp(lower_bound * sigmoid(am * (f32(gx) + dtb)))
    }
    store SN[b, h, vb * VB +: VB, :] <- bf16(S)
  }
}
