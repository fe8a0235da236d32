# bench/proto/s17/kda_prefill_split32_lb.cake — kda_prefill_split16_lb.cake with 32-token chunks
# (two per 64-token slot): the prep's G restarts every 32 rows and A_kk, A_qk take one round of
# products against each half's middle (every factor within e^-80 .. e^75 at lambda = -5, as in
# main's two rounds, whose second round and lower-left correction it does not need), the solve
# is trisolve(L, 32); the state pass steps every 32 tokens (256 steps at T = 8192 where main
# has 128 and the 16-token candidate 512). Checked by bench/proto/s17/emu.sh (CHUNK=32).

kernel kda_split32_prep_lb target sm_90a family kda stage
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
  role load warps 0..3 regs 32
  role math warps 4..11 regs 232
  pipeline ch stages 2
  smem gr: bf16[64, 128] swizzle 128B ring ch   # chunk inputs, read into registers with `load`: g_raw,
  smem qs: bf16[64, 128] swizzle 128B ring ch   # q, k and v; swizzled, so the eight rows of a warp's
  smem ks: bf16[64, 128] swizzle 128B ring ch   # accumulator-layout read meet eight different banks
  smem vs: bf16[64, 128] swizzle 128B ring ch   # (two TMA boxes each, one per 64-column panel)
  smem ka: bf16[64, 128] swizzle 128B       # k-hat e^(G - R_b); then k-hat e^G
  smem qa: bf16[64, 128] swizzle 128B       # q-hat e^(G - R_b)
  smem vb: bf16[64, 128] swizzle 128B       # a round's key operand; then v
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
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

# kda_split32_state_lb — kda_split16_state_lb with a state step every 32 tokens (two per slot).
kernel kda_split32_state_lb target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Cs:   global i32[N1]               # sequence n's slots: Cs[n] .. Cs[n + 1] - 1
  param Ord:  global i32[N]                # the sequences, most slots first
  param W:    global bf16[NS, 64, H, DK]
  param UT:   global bf16[NS, H, DV, 64]
  param QG:   global bf16[NS, 64, H, DK]
  param KD:   global bf16[NS, 64, H, DK]
  param AQ:   global bf16[NS, 64, H, 64]
  param GCE:  global f32[NS, 2, H, DK]
  param S0:   global f32[N, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem wa0: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 0, key channels 0..63
  smem wb0: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa0: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb0: bf16[32, 64] swizzle 128B ring ch
  smem ka0: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb0: bf16[32, 64] swizzle 128B ring ch
  smem ut0: bf16[64, 32] swizzle 64B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 32 tokens
  smem aq0: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 0
  smem wa1: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 1, key channels 0..63
  smem wb1: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa1: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb1: bf16[32, 64] swizzle 128B ring ch
  smem ka1: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb1: bf16[32, 64] swizzle 128B ring ch
  smem ut1: bf16[64, 32] swizzle 64B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 32 tokens
  smem aq1: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 1
  smem gce: f32[2, 128] ring ch                   # e^(G_end) per sub-chunk and key channel
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 32] in math                # v'^T = u^T - S^T w^T of a sub-chunk
  frag t16:  bf16[64, 32] in math               # u^T of a sub-chunk
  frag a0:   bf16[64, 64] in math               # S^T (keys 0..63) as the register A operand
  frag a1:   bf16[64, 64] in math               # S^T (keys 64..127)
  frag o0:   f32[64, 32] in math                # o^T of sub-chunk 0
  frag v0:   bf16[64, 32] in math               # v'^T of sub-chunk 0
  frag o1:   f32[64, 32] in math                # o^T of sub-chunk 1
  frag v1:   bf16[64, 32] in math               # v'^T of sub-chunk 1
  frag ga:   f32[64] in math                    # e^(G_end), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma wa0 <- W[c, 0 +: 32, h, 0 +: 64] signal full
      tma wb0 <- W[c, 0 +: 32, h, 64 +: 64] signal full
      tma qa0 <- QG[c, 0 +: 32, h, 0 +: 64] signal full
      tma qb0 <- QG[c, 0 +: 32, h, 64 +: 64] signal full
      tma ka0 <- KD[c, 0 +: 32, h, 0 +: 64] signal full
      tma kb0 <- KD[c, 0 +: 32, h, 64 +: 64] signal full
      tma ut0 <- UT[c, h, vh * 64 +: 64, 0 +: 32] signal full
      tma aq0 <- AQ[c, 0 +: 32, h, 0 +: 32] signal full
      tma wa1 <- W[c, 32 +: 32, h, 0 +: 64] signal full
      tma wb1 <- W[c, 32 +: 32, h, 64 +: 64] signal full
      tma qa1 <- QG[c, 32 +: 32, h, 0 +: 64] signal full
      tma qb1 <- QG[c, 32 +: 32, h, 64 +: 64] signal full
      tma ka1 <- KD[c, 32 +: 32, h, 0 +: 64] signal full
      tma kb1 <- KD[c, 32 +: 32, h, 64 +: 64] signal full
      tma ut1 <- UT[c, h, vh * 64 +: 64, 32 +: 32] signal full
      tma aq1 <- AQ[c, 32 +: 32, h, 32 +: 32] signal full
      tma gce <- GCE[c, 0 +: 2, h, 0 +: 128] signal full
    }
  }
  in math {
    let n = Ord[q]
    load sa <- S0[n, h, vh * 64 +: 64, 0 +: 64]
    load sb <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    a0 = bf16(sa)
    a1 = bf16(sb)
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait full
      load ga <- gce[0, 0 +: 64]
      load gb <- gce[0, 64 +: 64]
      load t16 <- ut0[:, :]
      kn = f32(t16)
      wgmma kn -= a0 @ wa0^T
      wgmma kn -= a1 @ wb0^T
      wgmma o0 = a0 @ qa0^T
      wgmma o0 += a1 @ qb0^T
      wgmma_wait 2   # v'^T's two products done; o^T's may still run
      v0 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma sa += v0 @ ka0
      wgmma sb += v0 @ kb0
      wgmma_wait 0
      a0 = bf16(sa)
      a1 = bf16(sb)
      load ga <- gce[1, 0 +: 64]
      load gb <- gce[1, 64 +: 64]
      load t16 <- ut1[:, :]
      kn = f32(t16)
      wgmma kn -= a0 @ wa1^T
      wgmma kn -= a1 @ wb1^T
      wgmma o1 = a0 @ qa1^T
      wgmma o1 += a1 @ qb1^T
      wgmma_wait 2   # v'^T's two products done; o^T's may still run
      v1 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma sa += v1 @ ka1
      wgmma sb += v1 @ kb1
      wgmma_wait 0
      a0 = bf16(sa)
      a1 = bf16(sb)
      wgmma o0 += v0 @ aq0^T
      wgmma o1 += v1 @ aq1^T
      wgmma_wait 0
      arrive empty
      let pe = Sl[c, 4]
      if pe < 0 {   # a full slot: its 64 rows are its tokens
        store O[Sl[c, 0], Sl[c, 1] + 0 +: 32, h, vh * 64 +: 64] <- bf16(o0)^T
        store O[Sl[c, 0], Sl[c, 1] + 32 +: 32, h, vh * 64 +: 64] <- bf16(o1)^T
      } else {   # a partial one: kda_split_tail copies the valid rows
        store OP[pe, 0 +: 32, h, vh * 64 +: 64] <- bf16(o0)^T
        store OP[pe, 32 +: 32, h, vh * 64 +: 64] <- bf16(o1)^T
      }
    }
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- sa
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- sb
  }
}

# kda_split_tail — the valid rows of every partial slot, from OP into O: one warp per (entry,
# head), one 128-channel row per step. Entries of -1 (the padding of an empty list) copy nothing.
kernel kda_split_tail target sm_90a family kda stage
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Ps:   global i32[NP]               # the slot of partial entry j (-1: none)
  param OP:   global bf16[NP, 64, H, DV]
  param O:    global bf16[B, T, H, DV]
  grid (NP, H) as (j, h)
  role work warps 0..0
  frag x: bf16[128] in work
{
  in work {
    let s = Ps[j]
    if s >= 0 {
      let sb = Sl[s, 0]
      let st = Sl[s, 1]
      for r in Sl[s, 2] .. Sl[s, 3] {
        load x <- OP[j, r, h, :]
        store O[sb, st + r, h, :] <- x
      }
    }
  }
}
