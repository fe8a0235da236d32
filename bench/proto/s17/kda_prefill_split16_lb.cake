# bench/proto/s17/kda_prefill_split16_lb.cake — a candidate of kernels/kda/kda_prefill_split_lb.cake
# with 16-token chunks (FlashKDA's chunk size) inside the 64-token slots:
#
#   kda_split16_prep_lb   the prep of one 64-token slot as four independent 16-token chunks.
#                         G is the gate's prefix sum restarting every 16 rows (cumsum(x, 0, 16):
#                         a warp's own rows, no shared memory), so every factor e^G, e^(G_end - G)
#                         is at most 1 and only the key operand of A_kk and A_qk, k-hat e^-G, grows
#                         (to e^80 at lambda = -5, inside bf16). One round of products instead of
#                         four (the off-diagonal blocks are dropped by the masks), no row picks for
#                         the references, and the solve of the block-diagonal L. W, U, QG and KD keep
#                         main's layout; AQ holds A_qk's four 16 x 16 diagonal blocks (zero
#                         elsewhere) and GCE e^(G_end) per sub-chunk, [NS, 4, H, DK].
#   kda_split16_state_lb  the serial pass with a state step every 16 tokens (four per slot):
#                         kda_split_statet_lb's transposed products (S^T and v'^T as register A
#                         operands) on the sub-chunk's rows, each sub-chunk's tiles a buffer of
#                         their own in the ring (16-row TMA boxes). A step's chain is two groups
#                         of narrow products (N = 16 for v'^T and o^T, K = 16 for the update),
#                         where the 64-token step has two groups of m64n64 ones over 64 tokens; the
#                         A_qk term of the output is off the chain (after the four steps).
#   kda_split_tail        main's, unchanged.
#
# Not on main until timed on the H200: bench/proto/s17/README.md says how it is checked and timed.

kernel kda_split16_prep_lb target sm_90a family kda stage
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
  param AQ:   global bf16[NS, 64, H, 64]   # A_qk, its four 16 x 16 diagonal blocks (zero elsewhere)
  param GCE:  global f32[NS, 4, H, DK]     # e^(G_end) per slot and 16-token sub-chunk
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
  frag o:    f32[64, 128] in math split n   # G_end of each row's sub-chunk
  frag akk:  f32[64, 64] in math split n    # A_kk, then L = I + A_kk
  frag aqk:  f32[64, 64] in math split n    # A_qk
  frag ai:   f32[64, 64] in math            # the inverses of L's 16 x 16 diagonal blocks
  frag p16:  bf16[64, 64] in math           # P = L^-1 Diag(beta): the register A operand
  frag r:    f32[128] in math               # a sub-chunk's G_end per key channel
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
      gs = cumsum(x, 0, 16)
      o = gs
      for sc in 0 .. 4 {
        r = colsum(where(row_idx() == sc * 16 + 15, gs, 0.0))
        store GCE[s, sc, h, :] <- exp(r)
        o = where(row_idx() / 16 == sc, cols(r), o)
      }
      x = exp(gs)
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store qa[:, :] <- bf16(kn * x)
      store QG[s, 0 +: 64, h, :] <- bf16(kn * x)
      load t16 <- ks[:, :]
      kn = l2norm(f32(t16))
      if lo > 0 || hi < 64 {
        kn = where(row_idx() >= lo && row_idx() < hi, kn, 0.0)   # rows outside the slot: no key
      }
      store ka[:, :] <- bf16(kn * x)
      store KD[s, 0 +: 64, h, :] <- bf16(kn * exp(o - gs))
      store vb[:, :] <- bf16(kn * exp(gs * -1.0))   # up to e^80 at lambda = -5: bf16 holds it
      fence proxy_async
      sync math
      wgmma akk = ka @ vb^T
      wgmma aqk = qa @ vb^T
      wgmma_wait 0
      sync math
      store AQ[s, 0 +: 64, h, :] <- bf16(where(col_idx() <= row_idx() && col_idx() / 16 == row_idx() / 16, aqk, 0.0))
      load t16 <- vs[:, :]
      store vb[:, :] <- t16
      fence proxy_async
      arrive empty
      sync math
      akk = where(col_idx() < row_idx() && col_idx() / 16 == row_idx() / 16, rows(beta) * akk, 0.0)
      akk = where(col_idx() == row_idx(), 1.0, akk)
      ai = trisolve(akk, 16)   # the four sub-chunks' 16 x 16 blocks: a chain of 4 row blocks, not 16
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

# kda_split16_state_lb — the serial pass over the slots of a sequence, a state step every 16
# tokens: per sub-chunk b of a slot (rows 16 b .. 16 b + 15),
#   v'_b^T = u_b^T - S^T w_b^T       o_b^T = S^T (q-hat e^G)_b^T (+ v'_b^T A_qk,b^T after the four steps)
#   S^T <- S^T Diag(e^G_end,b) + v'_b^T (k-hat e^(G_end - G))_b
# S^T (this CTA's 64 value rows, both key halves) is in f32 registers and, rounded to bf16, the
# register A operand of the next step (a0, a1), as in kda_split_statet_lb; v'_b^T is the A
# operand of the update (K = the sub-chunk's 16 tokens). Every sub-chunk's tiles are buffers
# of their own in the ring (16-row TMA boxes: the wgmma operands are whole buffers), the
# per-sub-chunk decays e^(G_end) arrive in the ring too (gce, f32 [4, 128]).
kernel kda_split16_state_lb target sm_90a family kda stage
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
  param GCE:  global f32[NS, 4, H, DK]
  param S0:   global f32[N, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem wa0: bf16[16, 64] swizzle 128B ring ch   # w of sub-chunk 0, key channels 0..63 (B of S^T w^T)
  smem wb0: bf16[16, 64] swizzle 128B ring ch   # ... 64..127
  smem qa0: bf16[16, 64] swizzle 128B ring ch   # q-hat e^G, the same halves
  smem qb0: bf16[16, 64] swizzle 128B ring ch
  smem ka0: bf16[16, 64] swizzle 128B ring ch   # k-hat e^(G_end - G): the N-major B of the update
  smem kb0: bf16[16, 64] swizzle 128B ring ch
  smem ut0: bf16[64, 16] swizzle 32B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 16 tokens
  smem aq0: bf16[16, 16] swizzle 32B ring ch    # A_qk's diagonal block 0
  smem wa1: bf16[16, 64] swizzle 128B ring ch   # w of sub-chunk 1, key channels 0..63 (B of S^T w^T)
  smem wb1: bf16[16, 64] swizzle 128B ring ch   # ... 64..127
  smem qa1: bf16[16, 64] swizzle 128B ring ch   # q-hat e^G, the same halves
  smem qb1: bf16[16, 64] swizzle 128B ring ch
  smem ka1: bf16[16, 64] swizzle 128B ring ch   # k-hat e^(G_end - G): the N-major B of the update
  smem kb1: bf16[16, 64] swizzle 128B ring ch
  smem ut1: bf16[64, 16] swizzle 32B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 16 tokens
  smem aq1: bf16[16, 16] swizzle 32B ring ch    # A_qk's diagonal block 1
  smem wa2: bf16[16, 64] swizzle 128B ring ch   # w of sub-chunk 2, key channels 0..63 (B of S^T w^T)
  smem wb2: bf16[16, 64] swizzle 128B ring ch   # ... 64..127
  smem qa2: bf16[16, 64] swizzle 128B ring ch   # q-hat e^G, the same halves
  smem qb2: bf16[16, 64] swizzle 128B ring ch
  smem ka2: bf16[16, 64] swizzle 128B ring ch   # k-hat e^(G_end - G): the N-major B of the update
  smem kb2: bf16[16, 64] swizzle 128B ring ch
  smem ut2: bf16[64, 16] swizzle 32B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 16 tokens
  smem aq2: bf16[16, 16] swizzle 32B ring ch    # A_qk's diagonal block 2
  smem wa3: bf16[16, 64] swizzle 128B ring ch   # w of sub-chunk 3, key channels 0..63 (B of S^T w^T)
  smem wb3: bf16[16, 64] swizzle 128B ring ch   # ... 64..127
  smem qa3: bf16[16, 64] swizzle 128B ring ch   # q-hat e^G, the same halves
  smem qb3: bf16[16, 64] swizzle 128B ring ch
  smem ka3: bf16[16, 64] swizzle 128B ring ch   # k-hat e^(G_end - G): the N-major B of the update
  smem kb3: bf16[16, 64] swizzle 128B ring ch
  smem ut3: bf16[64, 16] swizzle 32B ring ch    # u^T, this CTA's 64 value rows, the sub-chunk's 16 tokens
  smem aq3: bf16[16, 16] swizzle 32B ring ch    # A_qk's diagonal block 3
  smem gce: f32[4, 128] ring ch                   # e^(G_end) per sub-chunk and key channel
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 16] in math                # v'^T = u^T - S^T w^T of a sub-chunk
  frag t16:  bf16[64, 16] in math               # u^T of a sub-chunk
  frag a0:   bf16[64, 64] in math               # S^T (keys 0..63) as the register A operand
  frag a1:   bf16[64, 64] in math               # S^T (keys 64..127)
  frag o0:   f32[64, 16] in math                # o^T of sub-chunk 0
  frag v0:   bf16[64, 16] in math               # v'^T of sub-chunk 0
  frag o1:   f32[64, 16] in math                # o^T of sub-chunk 1
  frag v1:   bf16[64, 16] in math               # v'^T of sub-chunk 1
  frag o2:   f32[64, 16] in math                # o^T of sub-chunk 2
  frag v2:   bf16[64, 16] in math               # v'^T of sub-chunk 2
  frag o3:   f32[64, 16] in math                # o^T of sub-chunk 3
  frag v3:   bf16[64, 16] in math               # v'^T of sub-chunk 3
  frag ga:   f32[64] in math                    # e^(G_end), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma wa0 <- W[c, 0 +: 16, h, 0 +: 64] signal full
      tma wb0 <- W[c, 0 +: 16, h, 64 +: 64] signal full
      tma qa0 <- QG[c, 0 +: 16, h, 0 +: 64] signal full
      tma qb0 <- QG[c, 0 +: 16, h, 64 +: 64] signal full
      tma ka0 <- KD[c, 0 +: 16, h, 0 +: 64] signal full
      tma kb0 <- KD[c, 0 +: 16, h, 64 +: 64] signal full
      tma ut0 <- UT[c, h, vh * 64 +: 64, 0 +: 16] signal full
      tma aq0 <- AQ[c, 0 +: 16, h, 0 +: 16] signal full
      tma wa1 <- W[c, 16 +: 16, h, 0 +: 64] signal full
      tma wb1 <- W[c, 16 +: 16, h, 64 +: 64] signal full
      tma qa1 <- QG[c, 16 +: 16, h, 0 +: 64] signal full
      tma qb1 <- QG[c, 16 +: 16, h, 64 +: 64] signal full
      tma ka1 <- KD[c, 16 +: 16, h, 0 +: 64] signal full
      tma kb1 <- KD[c, 16 +: 16, h, 64 +: 64] signal full
      tma ut1 <- UT[c, h, vh * 64 +: 64, 16 +: 16] signal full
      tma aq1 <- AQ[c, 16 +: 16, h, 16 +: 16] signal full
      tma wa2 <- W[c, 32 +: 16, h, 0 +: 64] signal full
      tma wb2 <- W[c, 32 +: 16, h, 64 +: 64] signal full
      tma qa2 <- QG[c, 32 +: 16, h, 0 +: 64] signal full
      tma qb2 <- QG[c, 32 +: 16, h, 64 +: 64] signal full
      tma ka2 <- KD[c, 32 +: 16, h, 0 +: 64] signal full
      tma kb2 <- KD[c, 32 +: 16, h, 64 +: 64] signal full
      tma ut2 <- UT[c, h, vh * 64 +: 64, 32 +: 16] signal full
      tma aq2 <- AQ[c, 32 +: 16, h, 32 +: 16] signal full
      tma wa3 <- W[c, 48 +: 16, h, 0 +: 64] signal full
      tma wb3 <- W[c, 48 +: 16, h, 64 +: 64] signal full
      tma qa3 <- QG[c, 48 +: 16, h, 0 +: 64] signal full
      tma qb3 <- QG[c, 48 +: 16, h, 64 +: 64] signal full
      tma ka3 <- KD[c, 48 +: 16, h, 0 +: 64] signal full
      tma kb3 <- KD[c, 48 +: 16, h, 64 +: 64] signal full
      tma ut3 <- UT[c, h, vh * 64 +: 64, 48 +: 16] signal full
      tma aq3 <- AQ[c, 48 +: 16, h, 48 +: 16] signal full
      tma gce <- GCE[c, 0 +: 4, h, 0 +: 128] signal full
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
      wgmma_wait 2   # v'^T's two products done; o^T's may still run (they read a0 and a1, rewritten only after the update's wait)
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
      wgmma_wait 2   # v'^T's two products done; o^T's may still run (they read a0 and a1, rewritten only after the update's wait)
      v1 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma sa += v1 @ ka1
      wgmma sb += v1 @ kb1
      wgmma_wait 0
      a0 = bf16(sa)
      a1 = bf16(sb)
      load ga <- gce[2, 0 +: 64]
      load gb <- gce[2, 64 +: 64]
      load t16 <- ut2[:, :]
      kn = f32(t16)
      wgmma kn -= a0 @ wa2^T
      wgmma kn -= a1 @ wb2^T
      wgmma o2 = a0 @ qa2^T
      wgmma o2 += a1 @ qb2^T
      wgmma_wait 2   # v'^T's two products done; o^T's may still run (they read a0 and a1, rewritten only after the update's wait)
      v2 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma sa += v2 @ ka2
      wgmma sb += v2 @ kb2
      wgmma_wait 0
      a0 = bf16(sa)
      a1 = bf16(sb)
      load ga <- gce[3, 0 +: 64]
      load gb <- gce[3, 64 +: 64]
      load t16 <- ut3[:, :]
      kn = f32(t16)
      wgmma kn -= a0 @ wa3^T
      wgmma kn -= a1 @ wb3^T
      wgmma o3 = a0 @ qa3^T
      wgmma o3 += a1 @ qb3^T
      wgmma_wait 2   # v'^T's two products done; o^T's may still run (they read a0 and a1, rewritten only after the update's wait)
      v3 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma sa += v3 @ ka3
      wgmma sb += v3 @ kb3
      wgmma_wait 0
      a0 = bf16(sa)
      a1 = bf16(sb)
      wgmma o0 += v0 @ aq0^T
      wgmma o1 += v1 @ aq1^T
      wgmma o2 += v2 @ aq2^T
      wgmma o3 += v3 @ aq3^T
      wgmma_wait 0
      arrive empty
      let pe = Sl[c, 4]
      if pe < 0 {   # a full slot: its 64 rows are its tokens
        store O[Sl[c, 0], Sl[c, 1] + 0 +: 16, h, vh * 64 +: 64] <- bf16(o0)^T
        store O[Sl[c, 0], Sl[c, 1] + 16 +: 16, h, vh * 64 +: 64] <- bf16(o1)^T
        store O[Sl[c, 0], Sl[c, 1] + 32 +: 16, h, vh * 64 +: 64] <- bf16(o2)^T
        store O[Sl[c, 0], Sl[c, 1] + 48 +: 16, h, vh * 64 +: 64] <- bf16(o3)^T
      } else {   # a partial one: kda_split_tail copies the valid rows
        store OP[pe, 0 +: 16, h, vh * 64 +: 64] <- bf16(o0)^T
        store OP[pe, 16 +: 16, h, vh * 64 +: 64] <- bf16(o1)^T
        store OP[pe, 32 +: 16, h, vh * 64 +: 64] <- bf16(o2)^T
        store OP[pe, 48 +: 16, h, vh * 64 +: 64] <- bf16(o3)^T
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
