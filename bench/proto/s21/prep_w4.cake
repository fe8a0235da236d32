# bench/proto/s21/prep_w4.cake — main's 32-token KDA prep (kda_split32_prep_lb) on four math
# warpgroups instead of two (README.md here). Each warpgroup holds 32 of a chunk tile's 128
# columns, so an f32 tile takes 16 registers a thread instead of 32 and the role fits in
# 112 registers (0 spills): 16 math warps in flight on an SM instead of 8, for a prep that
# ncu finds latency-bound (IPC 1.3, 8.8 of 12 warps active, 67 % of cycles with no eligible
# warp; bench/RESULTS.md session 21). The u and w products read each warpgroup's 32 columns
# of ka and vb from inside a 128B swizzle atom (the sm_90a lowering's N-major B at a sub-atom
# start, added with this candidate). The statements are main's.
kernel kda_split32_prep_w4 target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Q:    global bf16[B, T, H, DK]
  param K:    global bf16[B, T, H, DK]
  param V:    global bf16[B, T, H, DV]
  param G:    global bf16[B, T, H, DK]     # gate before activation (g_raw)
  param Beta: global bf16[B, T, H]         # beta logits
  param Alog: global f32[H]
  param Dtb:  global f32[H, DK]            # dt_bias
  param Sl:   global i32[NS, 8]            # slot s: batch entry, first row's token, valid rows lo .. hi - 1, partial entry
  param W:    global bf16[NS, 64, H, DK]   # w = P (k-hat e^G)
  param UT:   global bf16[NS, H, DV, 64]   # u^T = (P v)^T: value rows, token columns (the state pass's accumulator layout)
  param QG:   global bf16[NS, 64, H, DK]   # q-hat e^G (G within the sub-chunk)
  param KD:   global bf16[NS, 64, H, DK]   # k-hat e^(G_C - G)
  param AQ:   global bf16[NS, 64, H, 64]   # A_qk, its two 32 x 32 diagonal blocks (zero elsewhere)
  param GCE:  global f32[NS, 2, H, DK]     # e^(G_end) per slot and 32-token sub-chunk
  param lower_bound: f32                   # lambda in [-5, 0)
  domain T >= 64, NS % 2 == 0, NS >= 2
  grid persistent (NS / 2, H) as (cp, h)
  role load warps 0..3 regs 24
  role math warps 4..19 regs 112
  pipeline ch stages 2
  smem gr: bf16[64, 128] swizzle 128B ring ch   # chunk inputs, read into registers with `load`: g_raw,
  smem qs: bf16[64, 128] swizzle 128B ring ch   # q, k and v; swizzled, so the eight rows of a warp's
  smem ks: bf16[64, 128] swizzle 128B ring ch   # accumulator-layout read meet eight different banks
  smem vs: bf16[64, 128] swizzle 128B ring ch   # (two TMA boxes each, one per 64-column panel)
  smem ka: bf16[64, 128] swizzle 128B       # k-hat e^(G - R_b); then k-hat e^G
  smem qa: bf16[64, 128] swizzle 128B       # q-hat e^(G - R_b)
  smem vb: bf16[64, 128] swizzle 128B       # a round's key operand; then v
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 4
  frag t16:  bf16[64, 128] in math split n  # a chunk tile on its way from memory
  frag x:    f32[64, 128] in math split n   # log-decay g; then e^G; later w
  frag gs:   f32[64, 128] in math split n   # G = cumsum(g, 0, 16); later u
  frag kn:   f32[64, 128] in math split n   # q-hat, then k-hat
  frag o:    f32[64, 128] in math split n   # G - M (each row against its half's middle), then G_end of its half
  frag akk:  f32[64, 64] in math split n    # A_kk, then L = I + A_kk
  frag aqk:  f32[64, 64] in math split n    # A_qk
  frag ai:   f32[64, 64] in math            # the inverses of L's 32 x 32 diagonal blocks
  frag p16:  bf16[64, 64] in math           # P = L^-1 Diag(beta): the register A operand
  frag r:    f32[128] in math               # a half's middle M or end G_end per key channel
  frag dtb:  f32[128] in math
  frag bl:   bf16[64] in math
  frag beta: f32[64] in math
{
  in load {
    for c in 0 .. 2 pipelined ch {
      let sb = Sl[cp * 2 + c, 0]
      let st = Sl[cp * 2 + c, 1]
      wait empty
      tma gr[:, 0 +: 64] <- G[sb, st +: 64, h, 0 +: 64] signal full
      tma gr[:, 64 +: 64] <- G[sb, st +: 64, h, 64 +: 64] signal full
      tma qs[:, 0 +: 64] <- Q[sb, st +: 64, h, 0 +: 64] signal full
      tma qs[:, 64 +: 64] <- Q[sb, st +: 64, h, 64 +: 64] signal full
      tma ks[:, 0 +: 64] <- K[sb, st +: 64, h, 0 +: 64] signal full
      tma ks[:, 64 +: 64] <- K[sb, st +: 64, h, 64 +: 64] signal full
      tma vs[:, 0 +: 64] <- V[sb, st +: 64, h, 0 +: 64] signal full
      tma vs[:, 64 +: 64] <- V[sb, st +: 64, h, 64 +: 64] signal full
    }
  }
  in math {
    let am = exp(Alog[h])

    for c in 0 .. 2 pipelined ch {
      let s = cp * 2 + c
      let sb = Sl[s, 0]
      let st = Sl[s, 1]
      let lo = Sl[s, 2]
      let hi = Sl[s, 3]
      load dtb <- Dtb[h, :]
      load bl <- Beta[sb, st +: 64, h]   # early: its latency under the gate and the rounds, not before the solve
      beta = sigmoid(f32(bl))
      wait full
      load t16 <- gr[:, :]
      x = lower_bound * sigmoid(am * (f32(t16) + cols(dtb)))
      if lo > 0 || hi < 64 {   # a partial slot (a full one skips the masks: 8 % of the prep on an H200)
        x = where(row_idx() >= lo && row_idx() < hi, x, 0.0)   # rows outside the slot: no decay
      }
      gs = cumsum(x, 0, 32)   # G within each 32-token sub-chunk
      r = colsum(where(row_idx() == 47, gs, 0.0))   # M_1: G at the middle of rows 32 .. 63
      o = gs - cols(r)
      r = colsum(where(row_idx() == 15, gs, 0.0))   # M_0: G at the middle of rows 0 .. 31
      o = where(row_idx() < 32, gs - cols(r), o)   # G - M: within -80 .. 75 at lambda = -5
      x = exp(gs)
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store QG[s, 0 +: 64, h, :] <- bf16(kn * x)
      store qa[:, :] <- bf16(kn * exp(o))
      load t16 <- ks[:, :]
      kn = l2norm(f32(t16))
      if lo > 0 || hi < 64 {
        kn = where(row_idx() >= lo && row_idx() < hi, kn, 0.0)   # rows outside the slot: no key
      }
      store ka[:, :] <- bf16(kn * exp(o))
      store vb[:, :] <- bf16(kn * exp(o * -1.0))
      fence proxy_async
      sync math
      wgmma akk = ka @ vb^T   # the diagonal 32 x 32 blocks are A_kk's; the others are dropped (they may overflow)
      wgmma aqk = qa @ vb^T
      wgmma_wait 0
      sync math
      store AQ[s, 0 +: 64, h, :] <- bf16(where(col_idx() <= row_idx() && col_idx() / 32 == row_idx() / 32, aqk, 0.0))
      store ka[:, :] <- bf16(kn * x)
      o = gs
      for sc in 0 .. 2 {
        r = colsum(where(row_idx() == sc * 32 + 31, gs, 0.0))
        store GCE[s, sc, h, :] <- exp(r)
        o = where(row_idx() / 32 == sc, cols(r), o)
      }
      store KD[s, 0 +: 64, h, :] <- bf16(kn * exp(o - gs))
      load t16 <- vs[:, :]
      store vb[:, :] <- t16
      fence proxy_async
      arrive empty
      sync math
      akk = where(col_idx() < row_idx() && col_idx() / 32 == row_idx() / 32, rows(beta) * akk, 0.0)
      akk = where(col_idx() == row_idx(), 1.0, akk)
      ai = trisolve(akk, 32)   # the two sub-chunks' 32 x 32 blocks
      p16 = bf16(ai * cols(beta))
      wgmma x = p16 @ ka
      wgmma gs = p16 @ vb
      wgmma_wait 0
      store W[s, 0 +: 64, h, :] <- bf16(x)
      store UT[s, h, :, 0 +: 64] <- bf16(gs)^T
      sync math
    }
  }
}
