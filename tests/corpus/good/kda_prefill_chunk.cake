# kda_prefill_chunk — chunked Kimi Delta Attention prefill (KDA.md), chunk C = 64, K = V = 128.
#
# One CTA per (batch, head). A load warpgroup streams the chunk's q, k, v tiles through a
# 2-stage ring; two math warpgroups run the chunk algebra and keep the state S (K x V, f32) in
# registers across the whole chunk loop, the V columns split between them. Per chunk:
#   g   = -exp(A_log) softplus(g_raw + dt_bias)       per token and key channel (log-decay)
#   G   = cumsum(g) down the chunk, G_C = its last row = colsum(g)
#   S'  = Diag(e^G_C) S, the decayed state, first (sb holds it as bf16 for the products)
#   A_kk[i,j] = beta_i sum_d k_i k_j exp(G_i - G_j), j < i     (two factors through smem)
#   L   = I + A_kk;  P = L^-1 Diag(beta)   (one trisolve(L), the inverse, per chunk)
#   w   = P (e^(G - G_C) k);  u = P v       (register-A wgmmas of P against ka and vb)
#   A_qk[i,j] = sum_d q_i k_j exp(G_i - G_j), j <= i
#   v'  = u - w S';   o = (q e^(G - G_C)) S' + A_qk v';   S <- S' + (e^(G_C - G) k)^T v'
# (the same as w = L^-1 (beta e^G k), v' = u - w S, o = (q e^G) S + A_qk v' with S undecayed,
# but every factor stays at most 1 and G, q-hat and k-hat die before the solve).
# q and k are L2-normalised in the kernel, q scaled by K^-1/2, beta = sigmoid(beta_logit).
# exp(G_i - G_j) is split as exp(G_i - G_C) exp(G_C - G_j): both factors stay bounded when the
# gate has a lower bound (see KDA.md, Numerics). Every matrix product is a wgmma: register A
# operands where the value is born in registers, shared B operands written by `store` and
# published with `fence proxy_async` + `sync math`.
# Registers: dt_bias and beta are loaded per chunk where they are used (not held across the
# loop), the frags are reused by phase (x, G, kn, akk below), and the math role asks for 216
# registers: ptxas fits the chunk in them with 0 spills (232 left it 4 bytes of spill of a
# loop-invariant; KDA.md).
# Tensors are token-major ([B, T, H, K], FLA's default layout): one chunk of one head is a
# [1, 64, 1, 128] TMA box, whose unit dimensions drop to the [64, 128] buffer shape.
# Shape domain: T % 64 == 0, T >= 128; K = V = 128.
kernel kda_prefill_chunk target sm_90a
  const DK = 128
  const DV = 128
  param Qin:  global bf16[B, T, H, DK]
  param Kin:  global bf16[B, T, H, DK]
  param Vin:  global bf16[B, T, H, DV]
  param Gin:  global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Bin:  global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param S0:   global f32[B, H, DK, DV]     # state entering the sequence, [K, V]
  param SN:   global f32[B, H, DK, DV]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  domain T % 64 == 0, T >= 128
  grid (H, B) as (h, b)
  role load warps 0..3 regs 40
  role math warps 4..11 regs 216
  pipeline ch stages 2
  smem qs: bf16[64, 128] ring ch            # chunk inputs, read into registers with `load`
  smem ks: bf16[64, 128] ring ch
  smem vs: bf16[64, 128] ring ch
  smem ka: bf16[64, 128] swizzle 128B       # k e^(G - G_C); later w
  smem kb: bf16[64, 128] swizzle 128B       # k e^(G_C - G)
  smem qa: bf16[64, 128] swizzle 128B       # q K^-1/2 e^(G - G_C)
  smem sb: bf16[128, 128] swizzle 128B      # S' = Diag(e^G_C) S as bf16
  smem vb: bf16[64, 128] swizzle 128B       # v; later v' as bf16
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
  frag S:    f32[128, 128] in math split n  # the state; each warpgroup owns 64 V columns
  frag t16:  bf16[64, 128] in math split n  # a chunk tile on its way from memory
  frag x:    f32[64, 128] in math split n   # log-decay g; later w
  frag G:    f32[64, 128] in math split n   # G = cumsum(g); later u
  frag kn:   f32[64, 128] in math split n   # k-hat, then scaled q-hat; later w S', then v'
  frag akk:  f32[64, 64] in math            # A_kk, then L = I + A_kk (both warpgroups); later A_qk
  frag ai:   f32[64, 64] in math            # L^-1 (trisolve(L): the inverse)
  frag p16:  bf16[64, 64] in math           # P = L^-1 Diag(beta), later A_qk: register A operands
  frag o:    f32[64, 128] in math split n
  frag gc:   f32[128] in math               # G_C per key channel
  frag dtb:  f32[128] in math
  frag bl:   bf16[64] in math
  frag beta: f32[64] in math
{
  in load {
    for c in 0 .. T / 64 pipelined ch {
      wait empty
      tma qs <- Qin[b, c * 64 +: 64, h, 0 +: 128] signal full
      tma ks <- Kin[b, c * 64 +: 64, h, 0 +: 128] signal full
      tma vs <- Vin[b, c * 64 +: 64, h, 0 +: 128] signal full
    }
  }
  in math {
    let alpha = -exp(Alog[h])

    load S <- S0[b, h, :, :]
    for c in 0 .. T / 64 pipelined ch {
      load dtb <- Dtb[h, :]
      load t16 <- Gin[b, c * 64 +: 64, h, :]
      x = alpha * softplus(f32(t16) + cols(dtb))
      gc = colsum(x)
      G = cumsum(x, 0)
      S = rows(exp(gc)) * S
      store sb[:, :] <- bf16(S)
      wait full
      load t16 <- ks[:, :]
      kn = l2norm(f32(t16))
      store ka[:, :] <- bf16(kn * exp(G - cols(gc)))
      store kb[:, :] <- bf16(kn * exp(cols(gc) - G))
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store qa[:, :] <- bf16(kn * exp(G - cols(gc)))
      load t16 <- vs[:, :]
      store vb[:, :] <- t16
      fence proxy_async
      arrive empty
      sync math
      load bl <- Bin[b, c * 64 +: 64, h]
      wgmma akk = ka @ kb^T
      beta = sigmoid(f32(bl))
      wgmma_wait 0
      akk = where(col_idx() < row_idx(), rows(beta) * akk, 0.0)
      akk = where(col_idx() == row_idx(), 1.0, akk)
      ai = trisolve(akk)
      p16 = bf16(ai * cols(beta))
      wgmma x = p16 @ ka
      wgmma G = p16 @ vb
      wgmma_wait 0
      sync math
      store ka[:, :] <- bf16(x)
      fence proxy_async
      sync math
      wgmma kn = ka @ sb
      wgmma akk = qa @ kb^T
      wgmma_wait 0
      kn = G - kn
      store vb[:, :] <- bf16(kn)
      akk = where(col_idx() <= row_idx(), akk, 0.0)
      p16 = bf16(akk)
      fence proxy_async
      sync math
      wgmma o = qa @ sb
      wgmma o += p16 @ vb
      wgmma S += kb^T @ vb
      wgmma_wait 0
      store O[b, c * 64 +: 64, h, :] <- bf16(o)
      sync math
    }
    store SN[b, h, :, :] <- S
  }
}
