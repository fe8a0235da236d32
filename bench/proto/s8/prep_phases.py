#!/usr/bin/env python3
"""prep_phases.py - phase-ablation variants of the split prefill's prep kernel.

    python3 bench/proto/s8/prep_phases.py OUTDIR

Writes OUTDIR/NAME.cake, each a copy of kernels/kda/kda_prefill_split_lb.cake whose prep kernel
(kda_split_prep_lb) drops or shrinks one phase; the state kernel is unchanged. Except `full` and
`c4` the results are wrong: time them with `cake kda --no-check --allow-spills --kernel
OUTDIR/NAME.cake:kda_split_prep_lb+kda_split_state_lb` and read the prep stage's time
(stage_us): what a variant saves against `full` is what that phase costs.
  c4        four chunks per CTA instead of two (T % 256 == 0): the ring's fill and drain amortized
  io_only   the prep's loads and workspace stores only: its memory floor
"""
import os
import sys

SRC = 'kernels/kda/kda_prefill_split_lb.cake'
src = open(SRC).read()
cut = src.index('kernel kda_split_state_lb')
prep, state = src[:cut], src[cut:]


def sub(s, old, new):
    if old not in s:
        sys.exit('prep_phases: %r not found in %s' % (old, SRC))
    return s.replace(old, new)


V = {'full': prep}
V['no_trisolve'] = sub(prep, '      ai = trisolve(akk, ai)\n', '')
V['no_rounds'] = sub(prep, '      for rb in 1 .. 4 {', '      for rb in 1 .. 1 {')
V['no_subref'] = sub(prep, '      for sc in 1 .. 4 {', '      for sc in 1 .. 1 {')
V['no_l2norm'] = prep.replace('l2norm(f32(t16))', 'f32(t16)')
V['no_gate'] = sub(prep, '      x = lower_bound * sigmoid(am * (f32(t16) + cols(dtb)))\n', '      x = f32(t16) * lower_bound\n')
V['no_wu'] = sub(prep, '      wgmma x = p16 @ ka\n      wgmma gs = p16 @ vb\n      wgmma_wait 0\n', '')
c4 = sub(prep, 'grid (T / 128, H, B)', 'grid (T / 256, H, B)')
c4 = sub(c4, 'domain T % 128 == 0, T >= 128\n  grid (T / 256', 'domain T % 256 == 0, T >= 256\n  grid (T / 256')
c4 = c4.replace('for c in 0 .. 2 pipelined ch', 'for c in 0 .. 4 pipelined ch').replace('cp * 2 + c', 'cp * 4 + c')
V['c4'] = c4
# io_only: the chunk loop reads its tiles and writes every workspace, nothing else
a = prep.index('    for c in 0 .. 2 pipelined ch {\n      load dtb')
io = ('    for c in 0 .. 2 pipelined ch {\n'
      '      wait full\n'
      '      load t16 <- gr[:, :]\n'
      '      x = f32(t16)\n'
      '      gc = colsum(x)\n'
      '      store GCE[b, cp * 2 + c, h, :] <- gc\n'
      '      load t16 <- qs[:, :]\n'
      '      store QG[b, (cp * 2 + c) * 64 +: 64, h, :] <- t16\n'
      '      load t16 <- ks[:, :]\n'
      '      store KD[b, (cp * 2 + c) * 64 +: 64, h, :] <- t16\n'
      '      store W[b, (cp * 2 + c) * 64 +: 64, h, :] <- t16\n'
      '      store AQ[b, (cp * 2 + c) * 64 +: 64, h, :] <- bf16(akk)\n'
      '      load t16 <- vs[:, :]\n'
      '      store U[b, (cp * 2 + c) * 64 +: 64, h, :] <- t16\n'
      '      load bl <- Beta[b, (cp * 2 + c) * 64 +: 64, h]\n'
      '      arrive empty\n'
      '    }\n  }\n}\n\n')
io_head = prep[:a].replace('    let am = exp(Alog[h])\n', '    akk = 0.0\n')
V['io_only'] = io_head + io
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for n, p in V.items():
    open(os.path.join(out, n + '.cake'), 'w').write(p + state)
print(' '.join(V))
