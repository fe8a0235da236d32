# kda_prefill_split_lb — the chunked KDA prefill of kda_prefill_chunk_lb.cake split in three
# kernels, run one after the other as one layer (`cake kda --kernel
# kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail`;
# with a bf16 state kda_split_state_bf16_lb takes the state kernel's place):
#
#   kda_split_prep_lb   everything of a 64-token chunk that does not depend on the state: the
#                       gate, its prefix sum G, the L2 norms, A_kk and A_qk in two rounds of
#                       products, each 32-row half against G at its middle (rows 15 and 47:
#                       every factor within e^-80 .. e^75 at lambda = -5; kda_prefill_chunk_lb
#                       takes four rounds against the 16-row blocks' starts), the solve
#                       P = (I + A_kk)^-1 Diag(beta) by halves (trisolve(L, 32), then the
#                       lower-left block -Y11 L10 Y00 from two register-A products), w = P (k-hat
#                       e^G) and u = P v (two rounds and the solve by halves: prep 1206 -> 1014 us
#                       at H = 64, T = 8192 on an H100, bench/RESULTS.md session 17). It
#                       runs chunk-parallel over the tiles (pair of chunk slots, head) on a
#                       persistent grid: one CTA per SM walks them, the chunk's g, q, k and v
#                       arriving through a TMA ring carried from tile to tile, so the next
#                       pair's first chunk loads while the current pair's second one runs (the
#                       load warps at 32 registers, the math warpgroups at 232: at 24 / 240 the
#                       tile loop's state spills 8 bytes; 1-3 % faster than one CTA per tile
#                       on the H200, bench/RESULTS.md session 13 call 3), and
#                       writes a workspace per slot, row and head: W = w, U = u,
#                       QG = q-hat e^G, KD = k-hat e^(G_C - G) (bf16), AQ = A_qk masked to
#                       j <= i (bf16, 64 columns), and per slot GCE = e^(G_C) (f32).
#   kda_split_state_lb  the serial pass over the slots of a sequence, one CTA per (value half,
#                       head, sequence), S^T [64 V rows, 128 K] of its half in registers:
#                       v' = u - w S, o = (q-hat e^G) S + A_qk v', S <- Diag(e^G_C) S +
#                       (k-hat e^(G_C - G))^T v' — seven m64n64 wgmmas (the key channels in
#                       two 64-column halves, a 128B swizzle's span) and three small tile
#                       stores per chunk, the chunk's workspace tiles arriving through a TMA ring ahead
#                       of it. The value rows of the delta rule are independent, so the halves
#                       are exact and double the CTAs (128 at H = 64). The sequences run
#                       longest first (Ord).
#   kda_split_state_bf16_lb  the same with a bf16 initial and final state (FlashKDA's interface).
#   kda_split_statet_lb (and kda_split_statet_bf16_lb) the same pass on the transposed
#                       products: S^T stays in registers and is the A operand itself, so the
#                       three tile stores, fences and named barriers of each chunk step go
#                       (below, before kda_split_tail).
#   kda_split32_state2_lb (and kda_split32_state2_bf16_lb) the 32-token state pass with both
#                       value halves of a (head, sequence) on one CTA's two warpgroups: for
#                       shapes whose 2 H N chains need more than one wave of the SMs (below).
#   kda_split_tail      the valid rows of the partial slots (a sequence's last chunk when its
#                       length is not a multiple of 64), from the state kernel's OP into O.
#
# Chunk slots (src/family/kda.h, kda_slot_tables; the app derives the tables from B and T or
# from cu_seqlens). Slot s is the 64-row window Sl[s, 1] .. Sl[s, 1] + 63 of batch entry
# Sl[s, 0] whose rows Sl[s, 2] .. Sl[s, 3] - 1 are its tokens; sequence n holds slots Cs[n] ..
# Cs[n + 1] - 1. The prep treats the window's other rows as absent (the masks run only when a
# slot is partial, behind a uniform branch): their gate is 0 (no decay)
# and their normalized key 0, so they add nothing to A_kk, A_qk, w, the decay e^(G_C) or the
# state update, and the valid rows' results are those of a chunk of only those tokens (their
# q and v stay: a row's q only reaches its own output row, which is never stored, and its v
# only its own u row, which meets a zero key in the state kernel and a zero column of the
# causal A_qk). So packed sequences of any lengths (varlen through cu_seqlens) and a T that 64
# does not divide run on the same kernels as B sequences of T tokens: a full slot's output
# rows go straight into O, a partial slot's into its entry of OP, and the tail copies the
# valid rows. The workspaces are per slot, so no slot shares rows with another.
#
# The fused kernel runs the state-independent work of each chunk on its serial chain, on one
# CTA per head (64 of 132 SMs at H = 64): session 7's phase ablations on the H200 put about
# two thirds of its time there (bench/RESULTS.md). Here that work is spread over every SM and
# only the state products stay serial. The price is the workspace round trip through HBM:
# about 9 bytes per token, head and channel written and read once (T = 8192, H = 64: ~0.6 GB
# each way, ~0.3 ms at the H200's copy rate).
# Numerics are those of kda_prefill_chunk_lb (its header has the algebra): every factor is at
# most 1 except the in-sub-chunk ones, bounded by e^(16 |lambda|) = e^80, within f32 and bf16
# for lambda in [-5, 0). The state products read S^T as bf16 (sb), as the fused kernel does.
# Shape domain: T >= 64 (a slot's window lies inside T), an even slot count; K = V = 128.
kernel kda_split_prep_lb target sm_90a family kda stage
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
  param U:    global bf16[NS, 64, H, DV]   # u = P v
  param QG:   global bf16[NS, 64, H, DK]   # q-hat e^G
  param KD:   global bf16[NS, 64, H, DK]   # k-hat e^(G_C - G)
  param AQ:   global bf16[NS, 64, H, 64]   # A_qk, zero above the diagonal
  param GCE:  global f32[NS, H, DK]        # e^(G_C) per slot
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
  smem ka: bf16[64, 128] swizzle 128B       # k-hat e^(G - M_b); then k-hat e^G
  smem qa: bf16[64, 128] swizzle 128B       # q-hat e^(G - M_b)
  smem vb: bf16[64, 128] swizzle 128B       # a round's key operand; then v
  smem l1: bf16[64, 64] swizzle 128B        # the solve's lower-left block L10
  smem y1: bf16[64, 64] swizzle 128B        # the diagonal halves' inverses Y
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
  frag t16:  bf16[64, 128] in math split n  # a chunk tile on its way from memory
  frag x:    f32[64, 128] in math split n   # log-decay g; later w
  frag gs:   f32[64, 128] in math split n   # G = cumsum(g); later u
  frag kn:   f32[64, 128] in math split n   # q-hat, then k-hat
  frag o:    f32[64, 128] in math split n   # G - M_b (each row against its half's middle), then e^(G - M_b)
  frag akk:  f32[64, 64] in math split n    # A_kk, then L = I + A_kk
  frag aqk:  f32[64, 64] in math split n    # A_qk
  frag t1:   f32[64, 64] in math split n    # a round's products
  frag t2:   f32[64, 64] in math split n
  frag ai:   f32[64, 64] in math            # the halves' inverses Y, then L^-1
  frag p16:  bf16[64, 64] in math           # P = L^-1 Diag(beta): the register A operand
  frag u1:   f32[64, 64] in math            # the solve's correction of the lower-left block
  frag gc:   f32[128] in math               # G_C per key channel
  frag r:    f32[128] in math               # a half's reference M_b per key channel
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
      gc = colsum(x)
      gs = cumsum(x, 0)
      r = exp(gc)
      store GCE[s, h, :] <- r
      r = colsum(where(row_idx() == 47, gs, 0.0))   # M_1: G at the middle of rows 32 .. 63
      o = gs - cols(r)
      r = colsum(where(row_idx() == 15, gs, 0.0))   # M_0: G at the middle of rows 0 .. 31
      o = where(row_idx() < 32, gs - cols(r), o)
      o = exp(o)   # e^(G - M_b): within e^-80 .. e^75 for lambda >= -5 (16 rows either side of the middle)
      load t16 <- qs[:, :]
      kn = l2norm(f32(t16)) * 0.08838834764831845
      store qa[:, :] <- bf16(kn * o)
      store QG[s, 0 +: 64, h, :] <- bf16(kn * exp(gs))
      load t16 <- ks[:, :]
      kn = l2norm(f32(t16))
      if lo > 0 || hi < 64 {
        kn = where(row_idx() >= lo && row_idx() < hi, kn, 0.0)   # rows outside the slot: no key
      }
      store ka[:, :] <- bf16(kn * o)
      store KD[s, 0 +: 64, h, :] <- bf16(kn * exp(cols(gc) - gs))
      store vb[:, :] <- bf16(where(row_idx() < 32, kn * exp(cols(r) - gs), 0.0))   # round 0 (rows 0 .. 31 of A): keys 0 .. 31 against M_0
      fence proxy_async
      sync math
      wgmma akk = ka @ vb^T
      wgmma aqk = qa @ vb^T
      wgmma_wait 0
      sync math
      r = colsum(where(row_idx() == 47, gs, 0.0))
      store vb[:, :] <- bf16(kn * exp(cols(r) - gs))   # round 1 (rows 32 .. 63): every key against M_1
      fence proxy_async
      sync math
      wgmma t1 = ka @ vb^T
      wgmma t2 = qa @ vb^T
      wgmma_wait 0
      akk = where(row_idx() >= 32, t1, akk)   # a select: the pairs past the diagonal may overflow, and are dropped
      aqk = where(row_idx() >= 32, t2, aqk)
      sync math
      store AQ[s, 0 +: 64, h, :] <- bf16(where(col_idx() <= row_idx(), aqk, 0.0))
      store ka[:, :] <- bf16(kn * exp(gs))
      load t16 <- vs[:, :]
      store vb[:, :] <- t16
      fence proxy_async
      arrive empty
      sync math
      akk = where(col_idx() < row_idx(), rows(beta) * akk, 0.0)
      akk = where(col_idx() == row_idx(), 1.0, akk)
      store l1[:, :] <- bf16(where(row_idx() >= 32 && col_idx() < 32, akk, 0.0))   # L10, the lower-left block
      ai = trisolve(akk, 32)   # Y = the inverses of the two diagonal halves: half the sweep's chain
      store y1[:, :] <- bf16(ai)
      fence proxy_async
      sync math
      p16 = bf16(ai)
      wgmma u1 = p16 @ l1      # Y L10: Y11 L10 in rows 32 .. 63
      wgmma_wait 0
      p16 = bf16(u1)
      wgmma u1 = p16 @ y1      # Y11 L10 Y00
      wgmma_wait 0
      ai = ai - u1             # L^-1: the lower-left block is -Y11 L10 Y00
      p16 = bf16(ai * cols(beta))
      wgmma x = p16 @ ka
      wgmma gs = p16 @ vb
      wgmma_wait 0
      store W[s, 0 +: 64, h, :] <- bf16(x)
      store U[s, 0 +: 64, h, :] <- bf16(gs)
      sync math
    }
  }
}

kernel kda_split_state_lb target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Cs:   global i32[N1]               # sequence n's slots: Cs[n] .. Cs[n + 1] - 1
  param Ord:  global i32[N]                # the sequences, most slots first
  param W:    global bf16[NS, 64, H, DK]
  param U:    global bf16[NS, 64, H, DV]
  param QG:   global bf16[NS, 64, H, DK]
  param KD:   global bf16[NS, 64, H, DK]
  param AQ:   global bf16[NS, 64, H, 64]
  param GCE:  global f32[NS, H, DK]
  param S0:   global f32[N, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem w0: bf16[64, 64] swizzle 128B ring ch    # w, key channels 0..63 (the A operand of w S)
  smem w1: bf16[64, 64] swizzle 128B ring ch    # ... 64..127
  smem q0: bf16[64, 64] swizzle 128B ring ch    # q-hat e^G, the same halves
  smem q1: bf16[64, 64] swizzle 128B ring ch
  smem k0: bf16[64, 64] swizzle 128B ring ch    # k-hat e^(G_C - G), the B operand of the update
  smem k1: bf16[64, 64] swizzle 128B ring ch
  smem us: bf16[64, 64] swizzle 128B ring ch    # u, this CTA's 64 value columns
  smem aq: bf16[64, 64] swizzle 128B ring ch    # A_qk
  smem s0: bf16[64, 64] swizzle 128B            # S^T as it enters the chunk, key channels 0..63
  smem s1: bf16[64, 64] swizzle 128B            # ... 64..127
  smem vb: bf16[64, 64] swizzle 128B            # v' as bf16, [T, V]
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 64] in math                # w S, then v'
  frag o:    f32[64, 64] in math
  frag t16:  bf16[64, 64] in math
  frag ga:   f32[64] in math                    # e^(G_C), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma w0 <- W[c, 0 +: 64, h, 0 +: 64] signal full
      tma w1 <- W[c, 0 +: 64, h, 64 +: 64] signal full
      tma q0 <- QG[c, 0 +: 64, h, 0 +: 64] signal full
      tma q1 <- QG[c, 0 +: 64, h, 64 +: 64] signal full
      tma k0 <- KD[c, 0 +: 64, h, 0 +: 64] signal full
      tma k1 <- KD[c, 0 +: 64, h, 64 +: 64] signal full
      tma us <- U[c, 0 +: 64, h, vh * 64 +: 64] signal full
      tma aq <- AQ[c, 0 +: 64, h, 0 +: 64] signal full
    }
  }
  in math {
    let n = Ord[q]
    load sa <- S0[n, h, vh * 64 +: 64, 0 +: 64]
    load sb <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      load ga <- GCE[c, h, 0 +: 64]
      load gb <- GCE[c, h, 64 +: 64]
      store s0[:, :] <- bf16(sa)
      store s1[:, :] <- bf16(sb)
      fence proxy_async
      sync math
      wait full
      wgmma kn = w0 @ s0^T
      wgmma kn += w1 @ s1^T
      wgmma o = q0 @ s0^T
      wgmma o += q1 @ s1^T
      wgmma_wait 0
      load t16 <- us[:, :]
      kn = f32(t16) - kn
      store vb[:, :] <- bf16(kn)
      fence proxy_async
      sync math
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma o += aq @ vb
      wgmma sa += vb^T @ k0
      wgmma sb += vb^T @ k1
      wgmma_wait 0
      arrive empty
      let pe = Sl[c, 4]
      if pe < 0 {
        store O[Sl[c, 0], Sl[c, 1] +: 64, h, vh * 64 +: 64] <- bf16(o)   # a full slot: its 64 rows are its tokens
      } else {
        store OP[pe, 0 +: 64, h, vh * 64 +: 64] <- bf16(o)   # a partial one: kda_split_tail copies the valid rows
      }
    }
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- sa
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- sb
  }
}

# kda_split_state_bf16_lb — kda_split_state_lb with the state entering and leaving in bf16
# (FlashKDA's interface: `cake kda --mode prefill --state bf16 --lower-bound L`, a like-for-like
# comparison); the state itself stays in f32 registers across the chunks, as in the f32 kernel,
# and is rounded to bf16 once, at the end.
kernel kda_split_state_bf16_lb target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Cs:   global i32[N1]               # sequence n's slots: Cs[n] .. Cs[n + 1] - 1
  param Ord:  global i32[N]                # the sequences, most slots first
  param W:    global bf16[NS, 64, H, DK]
  param U:    global bf16[NS, 64, H, DV]
  param QG:   global bf16[NS, 64, H, DK]
  param KD:   global bf16[NS, 64, H, DK]
  param AQ:   global bf16[NS, 64, H, 64]
  param GCE:  global f32[NS, H, DK]
  param S0:   global bf16[N, H, DV, DK]    # state entering the sequence, V-first, bf16
  param SN:   global bf16[N, H, DV, DK]    # state leaving it, bf16
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem w0: bf16[64, 64] swizzle 128B ring ch    # w, key channels 0..63 (the A operand of w S)
  smem w1: bf16[64, 64] swizzle 128B ring ch    # ... 64..127
  smem q0: bf16[64, 64] swizzle 128B ring ch    # q-hat e^G, the same halves
  smem q1: bf16[64, 64] swizzle 128B ring ch
  smem k0: bf16[64, 64] swizzle 128B ring ch    # k-hat e^(G_C - G), the B operand of the update
  smem k1: bf16[64, 64] swizzle 128B ring ch
  smem us: bf16[64, 64] swizzle 128B ring ch    # u, this CTA's 64 value columns
  smem aq: bf16[64, 64] swizzle 128B ring ch    # A_qk
  smem s0: bf16[64, 64] swizzle 128B            # S^T as it enters the chunk, key channels 0..63
  smem s1: bf16[64, 64] swizzle 128B            # ... 64..127
  smem vb: bf16[64, 64] swizzle 128B            # v' as bf16, [T, V]
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 64] in math                # w S, then v'
  frag o:    f32[64, 64] in math
  frag t16:  bf16[64, 64] in math
  frag ga:   f32[64] in math                    # e^(G_C), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma w0 <- W[c, 0 +: 64, h, 0 +: 64] signal full
      tma w1 <- W[c, 0 +: 64, h, 64 +: 64] signal full
      tma q0 <- QG[c, 0 +: 64, h, 0 +: 64] signal full
      tma q1 <- QG[c, 0 +: 64, h, 64 +: 64] signal full
      tma k0 <- KD[c, 0 +: 64, h, 0 +: 64] signal full
      tma k1 <- KD[c, 0 +: 64, h, 64 +: 64] signal full
      tma us <- U[c, 0 +: 64, h, vh * 64 +: 64] signal full
      tma aq <- AQ[c, 0 +: 64, h, 0 +: 64] signal full
    }
  }
  in math {
    let n = Ord[q]
    load t16 <- S0[n, h, vh * 64 +: 64, 0 +: 64]
    sa = f32(t16)
    load t16 <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    sb = f32(t16)
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      load ga <- GCE[c, h, 0 +: 64]
      load gb <- GCE[c, h, 64 +: 64]
      store s0[:, :] <- bf16(sa)
      store s1[:, :] <- bf16(sb)
      fence proxy_async
      sync math
      wait full
      wgmma kn = w0 @ s0^T
      wgmma kn += w1 @ s1^T
      wgmma o = q0 @ s0^T
      wgmma o += q1 @ s1^T
      wgmma_wait 0
      load t16 <- us[:, :]
      kn = f32(t16) - kn
      store vb[:, :] <- bf16(kn)
      fence proxy_async
      sync math
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma o += aq @ vb
      wgmma sa += vb^T @ k0
      wgmma sb += vb^T @ k1
      wgmma_wait 0
      arrive empty
      let pe = Sl[c, 4]
      if pe < 0 {
        store O[Sl[c, 0], Sl[c, 1] +: 64, h, vh * 64 +: 64] <- bf16(o)   # a full slot: its 64 rows are its tokens
      } else {
        store OP[pe, 0 +: 64, h, vh * 64 +: 64] <- bf16(o)   # a partial one: kda_split_tail copies the valid rows
      }
    }
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- bf16(sa)
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- bf16(sb)
  }
}

# kda_split_statet_lb — kda_split_state_lb's serial pass computed transposed. Every product
# of a chunk step has the state on its left once it is written for S^T (value rows, key
# columns), the layout the state already has in registers:
#   v'^T = u^T - S^T w^T          o^T = S^T (q-hat e^G)^T + v'^T A_qk^T
#   S^T <- S^T Diag(e^G_C) + v'^T (k-hat e^(G_C - G))
# so S^T, rounded to bf16, is wgmma's register A operand (a0, a1: the key halves; `kn -= a0 @
# w0^T` subtracts in the instruction), and so is v'^T: the step stores nothing into shared memory and
# has no fence or named barrier between its two groups of products, where kda_split_state_lb
# stores bf16(S^T) for the first group and v' for the second, each behind a fence and a
# barrier across the warpgroup. u^T enters the accumulator as us^T @ I (the identity tile eye,
# made once; the M-major A of u's ring tile), w, q-hat and A_qk are K-major B operands as they
# arrive, and k-hat an N-major one. o^T is stored transposed (`<- bf16(o)^T`, LANGUAGE.md
# §5.6), the output rows being tokens. Six m64n64 products and the identity one per chunk, the
# same bf16 roundings of S and v' as kda_split_state_lb (so the same results to the rounding
# of the f32 sums; tests/lower/emu.sh runs it in the split chain).
kernel kda_split_statet_lb target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Cs:   global i32[N1]               # sequence n's slots: Cs[n] .. Cs[n + 1] - 1
  param Ord:  global i32[N]                # the sequences, most slots first
  param W:    global bf16[NS, 64, H, DK]
  param U:    global bf16[NS, 64, H, DV]
  param QG:   global bf16[NS, 64, H, DK]
  param KD:   global bf16[NS, 64, H, DK]
  param AQ:   global bf16[NS, 64, H, 64]
  param GCE:  global f32[NS, H, DK]
  param S0:   global f32[N, H, DV, DK]     # state entering the sequence, V-first
  param SN:   global f32[N, H, DV, DK]     # state leaving it
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem w0: bf16[64, 64] swizzle 128B ring ch    # w, key channels 0..63 (B of S^T w^T)
  smem w1: bf16[64, 64] swizzle 128B ring ch    # ... 64..127
  smem q0: bf16[64, 64] swizzle 128B ring ch    # q-hat e^G, the same halves
  smem q1: bf16[64, 64] swizzle 128B ring ch
  smem k0: bf16[64, 64] swizzle 128B ring ch    # k-hat e^(G_C - G), the N-major B of the update
  smem k1: bf16[64, 64] swizzle 128B ring ch
  smem us: bf16[64, 64] swizzle 128B ring ch    # u, this CTA's 64 value columns ([T, V]: M-major A)
  smem aq: bf16[64, 64] swizzle 128B ring ch    # A_qk
  smem eye: bf16[64, 64] swizzle 128B           # the identity: us^T @ eye^T = u^T in the accumulator
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 64] in math                # v'^T = u^T - S^T w^T
  frag o:    f32[64, 64] in math                # o^T
  frag a0:   bf16[64, 64] in math               # S^T (keys 0..63), then v'^T: register A operands
  frag a1:   bf16[64, 64] in math               # S^T (keys 64..127)
  frag ga:   f32[64] in math                    # e^(G_C), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma w0 <- W[c, 0 +: 64, h, 0 +: 64] signal full
      tma w1 <- W[c, 0 +: 64, h, 64 +: 64] signal full
      tma q0 <- QG[c, 0 +: 64, h, 0 +: 64] signal full
      tma q1 <- QG[c, 0 +: 64, h, 64 +: 64] signal full
      tma k0 <- KD[c, 0 +: 64, h, 0 +: 64] signal full
      tma k1 <- KD[c, 0 +: 64, h, 64 +: 64] signal full
      tma us <- U[c, 0 +: 64, h, vh * 64 +: 64] signal full
      tma aq <- AQ[c, 0 +: 64, h, 0 +: 64] signal full
    }
  }
  in math {
    let n = Ord[q]
    kn = where(row_idx() == col_idx(), 1.0, 0.0)
    store eye[:, :] <- bf16(kn)
    fence proxy_async
    sync math
    load sa <- S0[n, h, vh * 64 +: 64, 0 +: 64]
    load sb <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    a0 = bf16(sa)
    a1 = bf16(sb)
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      load ga <- GCE[c, h, 0 +: 64]
      load gb <- GCE[c, h, 64 +: 64]
      wait full
      wgmma kn = us^T @ eye^T
      wgmma kn -= a0 @ w0^T
      wgmma kn -= a1 @ w1^T
      wgmma o = a0 @ q0^T
      wgmma o += a1 @ q1^T
      wgmma_wait 0
      a0 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma o += a0 @ aq^T
      wgmma sa += a0 @ k0
      wgmma sb += a0 @ k1
      wgmma_wait 0
      arrive empty
      a0 = bf16(sa)
      a1 = bf16(sb)
      let pe = Sl[c, 4]
      if pe < 0 {
        store O[Sl[c, 0], Sl[c, 1] +: 64, h, vh * 64 +: 64] <- bf16(o)^T   # a full slot: its 64 rows are its tokens
      } else {
        store OP[pe, 0 +: 64, h, vh * 64 +: 64] <- bf16(o)^T   # a partial one: kda_split_tail copies the valid rows
      }
    }
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- sa
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- sb
  }
}

# kda_split_statet_bf16_lb — kda_split_statet_lb with the state entering and leaving in bf16
# (FlashKDA's interface), like kda_split_state_bf16_lb: loaded through a0 and a1, f32 in
# registers across the chunks, rounded to bf16 once at the end.
kernel kda_split_statet_bf16_lb target sm_90a family kda stage
  const DK = 128
  const DV = 128
  param Sl:   global i32[NS, 8]
  param Cs:   global i32[N1]               # sequence n's slots: Cs[n] .. Cs[n + 1] - 1
  param Ord:  global i32[N]                # the sequences, most slots first
  param W:    global bf16[NS, 64, H, DK]
  param U:    global bf16[NS, 64, H, DV]
  param QG:   global bf16[NS, 64, H, DK]
  param KD:   global bf16[NS, 64, H, DK]
  param AQ:   global bf16[NS, 64, H, 64]
  param GCE:  global f32[NS, H, DK]
  param S0:   global bf16[N, H, DV, DK]    # state entering the sequence, V-first, bf16
  param SN:   global bf16[N, H, DV, DK]    # state leaving it, bf16
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (2, H, N) as (vh, h, q)
  role load warps 0..3 regs 40
  role math warps 4..7 regs 232
  pipeline ch stages 2
  smem w0: bf16[64, 64] swizzle 128B ring ch    # w, key channels 0..63 (B of S^T w^T)
  smem w1: bf16[64, 64] swizzle 128B ring ch    # ... 64..127
  smem q0: bf16[64, 64] swizzle 128B ring ch    # q-hat e^G, the same halves
  smem q1: bf16[64, 64] swizzle 128B ring ch
  smem k0: bf16[64, 64] swizzle 128B ring ch    # k-hat e^(G_C - G), the N-major B of the update
  smem k1: bf16[64, 64] swizzle 128B ring ch
  smem us: bf16[64, 64] swizzle 128B ring ch    # u, this CTA's 64 value columns ([T, V]: M-major A)
  smem aq: bf16[64, 64] swizzle 128B ring ch    # A_qk
  smem eye: bf16[64, 64] swizzle 128B           # the identity: us^T @ eye^T = u^T in the accumulator
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 1
  frag sa:   f32[64, 64] in math                # S^T of this value half, key channels 0..63
  frag sb:   f32[64, 64] in math                # ... 64..127
  frag kn:   f32[64, 64] in math                # v'^T = u^T - S^T w^T
  frag o:    f32[64, 64] in math                # o^T
  frag a0:   bf16[64, 64] in math               # S^T (keys 0..63), then v'^T: register A operands
  frag a1:   bf16[64, 64] in math               # S^T (keys 64..127)
  frag ga:   f32[64] in math                    # e^(G_C), key channels 0..63
  frag gb:   f32[64] in math                    # ... 64..127
{
  in load {
    let n = Ord[q]
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      wait empty
      tma w0 <- W[c, 0 +: 64, h, 0 +: 64] signal full
      tma w1 <- W[c, 0 +: 64, h, 64 +: 64] signal full
      tma q0 <- QG[c, 0 +: 64, h, 0 +: 64] signal full
      tma q1 <- QG[c, 0 +: 64, h, 64 +: 64] signal full
      tma k0 <- KD[c, 0 +: 64, h, 0 +: 64] signal full
      tma k1 <- KD[c, 0 +: 64, h, 64 +: 64] signal full
      tma us <- U[c, 0 +: 64, h, vh * 64 +: 64] signal full
      tma aq <- AQ[c, 0 +: 64, h, 0 +: 64] signal full
    }
  }
  in math {
    let n = Ord[q]
    kn = where(row_idx() == col_idx(), 1.0, 0.0)
    store eye[:, :] <- bf16(kn)
    fence proxy_async
    sync math
    load a0 <- S0[n, h, vh * 64 +: 64, 0 +: 64]   # bf16(S^T) is the operand as it is loaded
    sa = f32(a0)
    load a1 <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    sb = f32(a1)
    for c in Cs[n] .. Cs[n + 1] pipelined ch {
      load ga <- GCE[c, h, 0 +: 64]
      load gb <- GCE[c, h, 64 +: 64]
      wait full
      wgmma kn = us^T @ eye^T
      wgmma kn -= a0 @ w0^T
      wgmma kn -= a1 @ w1^T
      wgmma o = a0 @ q0^T
      wgmma o += a1 @ q1^T
      wgmma_wait 0
      a0 = bf16(kn)
      sa = sa * cols(ga)
      sb = sb * cols(gb)
      wgmma o += a0 @ aq^T
      wgmma sa += a0 @ k0
      wgmma sb += a0 @ k1
      wgmma_wait 0
      arrive empty
      a0 = bf16(sa)
      a1 = bf16(sb)
      let pe = Sl[c, 4]
      if pe < 0 {
        store O[Sl[c, 0], Sl[c, 1] +: 64, h, vh * 64 +: 64] <- bf16(o)^T   # a full slot: its 64 rows are its tokens
      } else {
        store OP[pe, 0 +: 64, h, vh * 64 +: 64] <- bf16(o)^T   # a partial one: kda_split_tail copies the valid rows
      }
    }
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- bf16(sa)
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- bf16(sb)
  }
}

# kda_split32_prep_lb — the prep of the 32-token chain, the app's and the library's default
# (kda_split32_prep_lb + kda_split32_state_lb + kda_split_tail; with a bf16 state
# kda_split32_state_bf16_lb): the same 64-token slots, tiles and TMA ring as kda_split_prep_lb,
# but G restarts every 32 rows, so the slot holds two 32-token chunks of the recurrence. A_kk
# and A_qk need one round of products against each half's middle (rows 15 and 47: every
# factor within e^-80 .. e^75 at lambda = -5) and no lower-left correction, the solve is
# trisolve(L, 32) alone, and u leaves transposed (UT [NS, H, DV, 64], the state pass's
# accumulator layout). GCE holds e^(G_end) per slot and 32-token half. Prep 1021 -> 842 us,
# layer 1405 -> 1191 us at H = 64, T = 8192 on an H100 (bench/RESULTS.md, session 18).
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

# kda_split32_state_lb — the serial pass of the 32-token chain: a state step every 32 tokens
# (two per slot: 256 at T = 8192 where kda_split_state_lb takes 128), computed transposed as
# kda_split_statet_lb is (S^T and v'^T the register A operands, u^T loaded into the
# accumulator, o^T stored transposed); each half's o^T products against S stay in flight
# across its v'^T, and both halves' A_qk products run together at the slot's end.
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


# kda_split32_state_bf16_lb — kda_split32_state_lb with the state entering and leaving in bf16
# (FlashKDA's interface, --state bf16): the state stays in f32 registers across the chunks and
# is rounded to bf16 once, at the end.
kernel kda_split32_state_bf16_lb target sm_90a family kda stage
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
  param S0:   global bf16[N, H, DV, DK]    # state entering the sequence, V-first, bf16
  param SN:   global bf16[N, H, DV, DK]    # state leaving it, bf16
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
    load a0 <- S0[n, h, vh * 64 +: 64, 0 +: 64]
    sa = f32(a0)
    load a1 <- S0[n, h, vh * 64 +: 64, 64 +: 64]
    sb = f32(a1)
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
    store SN[n, h, vh * 64 +: 64, 0 +: 64] <- bf16(sa)
    store SN[n, h, vh * 64 +: 64, 64 +: 64] <- bf16(sb)
  }
}


# kda_split32_state2_lb — kda_split32_state_lb with both value halves of a (head, sequence) in
# one CTA: its two math warpgroups each carry one half's chain (the fragments split m, 64 value
# rows a warpgroup, as the two CTAs of kda_split32_state_lb's grid did) and one ring feeds both,
# so W, QG, KD, A_qk and the decays cross from L2 into shared memory once for the two halves
# (138 KB of ring). H x N CTAs of two chains each: where kda_split32_state_lb's 2 H N CTAs take
# more than one wave of the SMs (H = 96 one sequence: 192 CTAs on 132 SMs), these take half as
# many waves, each chain about 1.4 times as long as alone on an SM (two share its tensor cores
# and issue slots; session 21 on an H100: state 753 -> 528 us at H = 96, 354 -> 488 at H = 64
# one sequence). The app and the library pick it by kda_state_paired (src/family/kda.h).
kernel kda_split32_state2_lb target sm_90a family kda stage
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
  grid (H, N) as (h, q)
  role load warps 0..3 regs 40
  role math warps 4..11 regs 232
  pipeline ch stages 2
  smem wa0: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 0, key channels 0..63
  smem wb0: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa0: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb0: bf16[32, 64] swizzle 128B ring ch
  smem ka0: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb0: bf16[32, 64] swizzle 128B ring ch
  smem ut0: bf16[128, 32] swizzle 64B ring ch   # u^T, the 128 value rows, the sub-chunk's 32 tokens
  smem aq0: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 0
  smem wa1: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 1, key channels 0..63
  smem wb1: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa1: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb1: bf16[32, 64] swizzle 128B ring ch
  smem ka1: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb1: bf16[32, 64] swizzle 128B ring ch
  smem ut1: bf16[128, 32] swizzle 64B ring ch   # u^T, the 128 value rows, the sub-chunk's 32 tokens
  smem aq1: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 1
  smem gce: f32[2, 128] ring ch                   # e^(G_end) per sub-chunk and key channel
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
  frag sa:   f32[128, 64] in math split m        # S^T, key channels 0..63: each warpgroup one value half
  frag sb:   f32[128, 64] in math split m        # ... 64..127
  frag kn:   f32[128, 32] in math split m        # v'^T = u^T - S^T w^T of a sub-chunk
  frag t16:  bf16[128, 32] in math split m       # u^T of a sub-chunk
  frag a0:   bf16[128, 64] in math split m       # S^T (keys 0..63) as the register A operand
  frag a1:   bf16[128, 64] in math split m       # S^T (keys 64..127)
  frag o0:   f32[128, 32] in math split m        # o^T of sub-chunk 0
  frag v0:   bf16[128, 32] in math split m       # v'^T of sub-chunk 0
  frag o1:   f32[128, 32] in math split m        # o^T of sub-chunk 1
  frag v1:   bf16[128, 32] in math split m       # v'^T of sub-chunk 1
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
      tma ut0 <- UT[c, h, 0 +: 128, 0 +: 32] signal full
      tma aq0 <- AQ[c, 0 +: 32, h, 0 +: 32] signal full
      tma wa1 <- W[c, 32 +: 32, h, 0 +: 64] signal full
      tma wb1 <- W[c, 32 +: 32, h, 64 +: 64] signal full
      tma qa1 <- QG[c, 32 +: 32, h, 0 +: 64] signal full
      tma qb1 <- QG[c, 32 +: 32, h, 64 +: 64] signal full
      tma ka1 <- KD[c, 32 +: 32, h, 0 +: 64] signal full
      tma kb1 <- KD[c, 32 +: 32, h, 64 +: 64] signal full
      tma ut1 <- UT[c, h, 0 +: 128, 32 +: 32] signal full
      tma aq1 <- AQ[c, 32 +: 32, h, 32 +: 32] signal full
      tma gce <- GCE[c, 0 +: 2, h, 0 +: 128] signal full
    }
  }
  in math {
    let n = Ord[q]
    load sa <- S0[n, h, :, 0 +: 64]
    load sb <- S0[n, h, :, 64 +: 64]
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
        store O[Sl[c, 0], Sl[c, 1] + 0 +: 32, h, :] <- bf16(o0)^T
        store O[Sl[c, 0], Sl[c, 1] + 32 +: 32, h, :] <- bf16(o1)^T
      } else {   # a partial one: kda_split_tail copies the valid rows
        store OP[pe, 0 +: 32, h, :] <- bf16(o0)^T
        store OP[pe, 32 +: 32, h, :] <- bf16(o1)^T
      }
    }
    store SN[n, h, :, 0 +: 64] <- sa
    store SN[n, h, :, 64 +: 64] <- sb
  }
}


# kda_split32_state2_bf16_lb — kda_split32_state2_lb with the bf16 state of
# kda_split32_state_bf16_lb.
kernel kda_split32_state2_bf16_lb target sm_90a family kda stage
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
  param S0:   global bf16[N, H, DV, DK]    # state entering the sequence, V-first, bf16
  param SN:   global bf16[N, H, DV, DK]    # state leaving it, bf16
  param O:    global bf16[B, T, H, DV]
  param OP:   global bf16[NP, 64, H, DV]   # the output rows of the partial slots
  domain T >= 64, N1 == N + 1
  grid (H, N) as (h, q)
  role load warps 0..3 regs 40
  role math warps 4..11 regs 232
  pipeline ch stages 2
  smem wa0: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 0, key channels 0..63
  smem wb0: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa0: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb0: bf16[32, 64] swizzle 128B ring ch
  smem ka0: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb0: bf16[32, 64] swizzle 128B ring ch
  smem ut0: bf16[128, 32] swizzle 64B ring ch   # u^T, the 128 value rows, the sub-chunk's 32 tokens
  smem aq0: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 0
  smem wa1: bf16[32, 64] swizzle 128B ring ch   # w of sub-chunk 1, key channels 0..63
  smem wb1: bf16[32, 64] swizzle 128B ring ch   # ... 64..127
  smem qa1: bf16[32, 64] swizzle 128B ring ch   # q-hat e^G
  smem qb1: bf16[32, 64] swizzle 128B ring ch
  smem ka1: bf16[32, 64] swizzle 128B ring ch   # k-hat e^(G_end - G)
  smem kb1: bf16[32, 64] swizzle 128B ring ch
  smem ut1: bf16[128, 32] swizzle 64B ring ch   # u^T, the 128 value rows, the sub-chunk's 32 tokens
  smem aq1: bf16[32, 32] swizzle 64B ring ch    # A_qk's diagonal block 1
  smem gce: f32[2, 128] ring ch                   # e^(G_end) per sub-chunk and key channel
  barrier full  ring ch producers load consumers math arrivals 1
  barrier empty ring ch producers math consumers load arrivals 2
  frag sa:   f32[128, 64] in math split m        # S^T, key channels 0..63: each warpgroup one value half
  frag sb:   f32[128, 64] in math split m        # ... 64..127
  frag kn:   f32[128, 32] in math split m        # v'^T = u^T - S^T w^T of a sub-chunk
  frag t16:  bf16[128, 32] in math split m       # u^T of a sub-chunk
  frag a0:   bf16[128, 64] in math split m       # S^T (keys 0..63) as the register A operand
  frag a1:   bf16[128, 64] in math split m       # S^T (keys 64..127)
  frag o0:   f32[128, 32] in math split m        # o^T of sub-chunk 0
  frag v0:   bf16[128, 32] in math split m       # v'^T of sub-chunk 0
  frag o1:   f32[128, 32] in math split m        # o^T of sub-chunk 1
  frag v1:   bf16[128, 32] in math split m       # v'^T of sub-chunk 1
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
      tma ut0 <- UT[c, h, 0 +: 128, 0 +: 32] signal full
      tma aq0 <- AQ[c, 0 +: 32, h, 0 +: 32] signal full
      tma wa1 <- W[c, 32 +: 32, h, 0 +: 64] signal full
      tma wb1 <- W[c, 32 +: 32, h, 64 +: 64] signal full
      tma qa1 <- QG[c, 32 +: 32, h, 0 +: 64] signal full
      tma qb1 <- QG[c, 32 +: 32, h, 64 +: 64] signal full
      tma ka1 <- KD[c, 32 +: 32, h, 0 +: 64] signal full
      tma kb1 <- KD[c, 32 +: 32, h, 64 +: 64] signal full
      tma ut1 <- UT[c, h, 0 +: 128, 32 +: 32] signal full
      tma aq1 <- AQ[c, 32 +: 32, h, 32 +: 32] signal full
      tma gce <- GCE[c, 0 +: 2, h, 0 +: 128] signal full
    }
  }
  in math {
    let n = Ord[q]
    load a0 <- S0[n, h, :, 0 +: 64]
    sa = f32(a0)
    load a1 <- S0[n, h, :, 64 +: 64]
    sb = f32(a1)
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
        store O[Sl[c, 0], Sl[c, 1] + 0 +: 32, h, :] <- bf16(o0)^T
        store O[Sl[c, 0], Sl[c, 1] + 32 +: 32, h, :] <- bf16(o1)^T
      } else {   # a partial one: kda_split_tail copies the valid rows
        store OP[pe, 0 +: 32, h, :] <- bf16(o0)^T
        store OP[pe, 32 +: 32, h, :] <- bf16(o1)^T
      }
    }
    store SN[n, h, :, 0 +: 64] <- bf16(sa)
    store SN[n, h, :, 64 +: 64] <- bf16(sb)
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
