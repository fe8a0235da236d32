# kda_prefill_chunk_lb — Kimi Delta Attention prefill in chunks of C = 64 tokens on the tensor
# cores, bound to the kda family (src/family/kda.c): tests/corpus/good/kda_prefill_chunk.cake (its
# header has the chunk algebra) with the interface of kda_prefill.cake's kda_prefill_lb: inputs
# Q, K, V, G (g_raw), Beta (logits), Alog, Dtb, states S0/SN V-first [B, H, V, K], the
# lower-bound gate g = lower_bound * sigmoid(exp(A_log) (g_raw + dt_bias)).
# Held V-first, the state fragment is S^T [V, K], each math warpgroup owning 64 V rows
# (`split m`); sb holds S^T as it enters the chunk, read transposed (w S = ka @ sb^T with
# ka = P (k e^G), o = (q e^G) S + A_qk v' = qa @ sb^T + aq @ vb), the update is
# S^T <- S^T Diag(e^G_C) + v'^T (k e^(G_C - G)) (`vb^T @ kb`), and the decay takes G_C, which
# colsum leaves split by the warpgroups' key columns, through shared memory (the relayout of
# cols()). Every inter-chunk factor, e^G, e^(G_C - G), e^G_C, is at most 1.
# Numerics of the intra-chunk matrices: exp(G_i - G_j) is factored against per-16-token
# sub-chunk references R_b = G before sub-chunk b (G of its previous row, 0 for b = 0), as
# FLA's chunk kernels do. The A operands hold k-hat and q-hat times e^(G_i - R_b(i)), each row
# against its own sub-chunk's start (<= 1, >= e^(16 lambda)); A_kk and A_qk are built in four
# rounds, round rb giving the rows of sub-chunk rb from the key operand
# k-hat_j e^(R_rb - G_j) for j < 16 rb + 16, zero after (<= 1 before the sub-chunk, at most
# e^(16 |lambda|) = e^80 in it): every factor is within f32 and bf16 for lambda in [-5, 0), the
# rows of the other sub-chunks are finite and dropped by the round's `where`, and a factor
# underflows only where the true value exp(G_i - G_j) is below ~e^-87.
# The round's key operand goes through vb (v is copied there after the rounds), so the
# update's key tile kb is written while G_C is still live; A_qk (masked) is stored to aq before
# the solve, so it is not held through it. The round products are `split n` [64, 64] tiles
# (m64n32 per warpgroup): 16 registers each instead of 32.
# Registers: the math role at 232 and the load role at 40 (128 x 40 + 256 x 232 = 64512):
# 0 spills there with NVRTC 13 (216 and 224 spilled 8 and 24 bytes before the lowering's
# block-sweep trisolve and MUFU exp of session 7; now they fit too).
# One CTA per (batch, head); a load warpgroup streams q, k, v through a 2-stage TMA ring; the
# ring slot is handed back after the last read of qs and vs (after the rounds).
# `cake kda --mode prefill --lower-bound L` runs it for B sequences of T tokens whenever T is in
# its domain (kda_prefill.cake's per-token kda_prefill_lb otherwise, and for --seqlens).
# Shape domain: T % 64 == 0, T >= 128; K = V = 128; B sequences of T tokens (no varlen).
kernel kda_prefill_chunk_lb target sm_90a family kda
  const DK = 128
  const DV = 128
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
  param lower_bound: f32                   # lambda in [-5, 0)
  domain T % 64 == 0, T >= 128
  grid (H, B) as (h, b)
  role load warps 0..3 regs 40
  role math warps 4..11 regs 232
  pipeline ch stages 2
  smem qs: bf16[64, 128] ring ch            # chunk inputs, read into registers with `load`
  smem ks: bf16[64, 128] ring ch
  smem vs: bf16[64, 128] ring ch
  smem ka: bf16[64, 128] swizzle 128B       # k-hat e^(G - R_b); then k-hat e^G; later w
  smem kb: bf16[64, 128] swizzle 128B       # k-hat e^(G_C - G)
  smem qa: bf16[64, 128] swizzle 128B       # q-hat e^(G - R_b); then q-hat e^G
  smem sb: bf16[128, 128] swizzle 128B      # S^T entering the chunk as bf16, [V, K]
  smem vb: bf16[64, 128] swizzle 128B       # a round's key operand; then v; later v' as bf16
  smem aq: bf16[64, 64] swizzle 128B        # A_qk, masked, as bf16: the A operand of o += A_qk v'
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
  frag S:    f32[128, 128] in math split m  # the state S^T [V, K]; each warpgroup owns 64 V rows
  frag t16:  bf16[64, 128] in math split n  # a chunk tile on its way from memory
  frag x:    f32[64, 128] in math split n   # log-decay g; later w
  frag gs:   f32[64, 128] in math split n   # G = cumsum(g); later u
  frag kn:   f32[64, 128] in math split n   # q-hat, then k-hat; later w S, then v'
  frag o:    f32[64, 128] in math split n   # G - R_b (each row against its sub-chunk's start), then e^(G - R_b); later o
  frag akk:  f32[64, 64] in math split n    # A_kk, then L = I + A_kk
  frag aqk:  f32[64, 64] in math split n    # A_qk
  frag t1:   f32[64, 64] in math split n    # a round's products
  frag t2:   f32[64, 64] in math split n
  frag ai:   f32[64, 64] in math            # L^-1 (trisolve(L): the inverse)
  frag p16:  bf16[64, 64] in math           # P = L^-1 Diag(beta): the register A operand
  frag gc:   f32[128] in math               # G_C per key channel
  frag r:    f32[128] in math               # a sub-chunk's reference R_b per key channel
  frag dtb:  f32[128] in math
  frag bl:   bf16[64] in math
  frag beta: f32[64] in math
{
  in load {
    for c in 0 .. T / 64 pipelined ch {
      wait empty
      tma qs <- Q[b, c * 64 +: 64, h, 0 +: 128] signal full
      tma ks <- K[b, c * 64 +: 64, h, 0 +: 128] signal full
      tma vs <- V[b, c * 64 +: 64, h, 0 +: 128] signal full
    }
  }
  in math {
    let am = exp(Alog[h])

    load S <- S0[b, h, :, :]
    for c in 0 .. T / 64 pipelined ch {
      load dtb <- Dtb[h, :]
      load t16 <- G[b, c * 64 +: 64, h, :]
      x = lower_bound * sigmoid(am * (f32(t16) + cols(dtb)))
      gc = colsum(x)
      gs = cumsum(x, 0)
      o = gs
      for sc in 1 .. 4 {
        r = colsum(where(row_idx() == sc * 16 - 1, gs, 0.0))
        o = where(row_idx() >= sc * 16, gs - cols(r), o)
      }
      store sb[:, :] <- bf16(S)
      S = S * cols(exp(gc))
      o = exp(o)
      wait full
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store qa[:, :] <- bf16(kn * o)
      load t16 <- ks[:, :]
      kn = l2norm(f32(t16))
      store ka[:, :] <- bf16(kn * o)
      store kb[:, :] <- bf16(kn * exp(cols(gc) - gs))
      akk = 0.0
      aqk = 0.0
      for rb in 0 .. 4 {
        r = colsum(where(row_idx() == rb * 16 - 1, gs, 0.0))
        store vb[:, :] <- bf16(where(row_idx() < rb * 16 + 16, kn * exp(cols(r) - gs), 0.0))
        fence proxy_async
        sync math
        wgmma t1 = ka @ vb^T
        wgmma t2 = qa @ vb^T
        wgmma_wait 0
        akk = where(row_idx() / 16 == rb, t1, akk)
        aqk = where(row_idx() / 16 == rb, t2, aqk)
        sync math
      }
      store aq[:, :] <- bf16(where(col_idx() <= row_idx(), aqk, 0.0))
      store ka[:, :] <- bf16(kn * exp(gs))
      load t16 <- vs[:, :]
      store vb[:, :] <- t16
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store qa[:, :] <- bf16(kn * exp(gs))
      fence proxy_async
      arrive empty
      sync math
      load bl <- Beta[b, c * 64 +: 64, h]
      beta = sigmoid(f32(bl))
      akk = where(col_idx() < row_idx(), rows(beta) * akk, 0.0)
      akk = where(col_idx() == row_idx(), 1.0, akk)
      ai = trisolve(akk)
      p16 = bf16(ai * cols(beta))
      wgmma x = p16 @ ka
      wgmma gs = p16 @ vb
      wgmma_wait 0
      sync math
      store ka[:, :] <- bf16(x)
      fence proxy_async
      sync math
      wgmma kn = ka @ sb^T
      wgmma_wait 0
      kn = gs - kn
      store vb[:, :] <- bf16(kn)
      fence proxy_async
      sync math
      wgmma o = qa @ sb^T
      wgmma o += aq @ vb
      wgmma S += vb^T @ kb
      wgmma_wait 0
      store O[b, c * 64 +: 64, h, :] <- bf16(o)
      sync math
    }
    store SN[b, h, :, :] <- S
  }
}
