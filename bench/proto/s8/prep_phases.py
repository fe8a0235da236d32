#!/usr/bin/env python3
"""prep_phases.py - phase-ablation variants of the split prefill's prep kernel.

    python3 bench/proto/s8/prep_phases.py OUTDIR

Writes OUTDIR/NAME.cake, each a copy of kernels/kda/kda_prefill_split_lb.cake whose prep kernel
(kda_split_prep_lb) drops or shrinks one phase; the state and tail kernels are unchanged. Except
`full` the results are wrong: time them with `cake kda --no-check --allow-spills --kernel
OUTDIR/NAME.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail` and read the prep stage's
time (stage_us): what a variant saves against `full` is what that phase costs.
  io_only   the prep's loads and workspace stores only: its memory floor
(Session 8 wrote it for the two-kernel chain over the T axis, with a `c4` variant of four chunks
per CTA, which gained nothing; session 9 moved it to the chunk slots.)
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
# io_only: the chunk loop reads its tiles and writes every workspace, nothing else
a = prep.index('    for c in 0 .. 2 pipelined ch {\n      let s = cp * 2 + c\n')
io = ('    for c in 0 .. 2 pipelined ch {\n'
      '      let s = cp * 2 + c\n'
      '      let sb = Sl[s, 0]\n'
      '      let st = Sl[s, 1]\n'
      '      wait full\n'
      '      load t16 <- gr[:, :]\n'
      '      x = f32(t16)\n'
      '      gc = colsum(x)\n'
      '      store GCE[s, h, :] <- gc\n'
      '      load t16 <- qs[:, :]\n'
      '      store QG[s, 0 +: 64, h, :] <- t16\n'
      '      load t16 <- ks[:, :]\n'
      '      store KD[s, 0 +: 64, h, :] <- t16\n'
      '      store W[s, 0 +: 64, h, :] <- t16\n'
      '      store AQ[s, 0 +: 64, h, :] <- bf16(akk)\n'
      '      load t16 <- vs[:, :]\n'
      '      store U[s, 0 +: 64, h, :] <- t16\n'
      '      load bl <- Beta[sb, st +: 64, h]\n'
      '      arrive empty\n'
      '    }\n  }\n}\n\n')
io_head = prep[:a].replace('    let am = exp(Alog[h])\n', '    akk = 0.0\n')
V['io_only'] = io_head + io
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for n, p in V.items():
    open(os.path.join(out, n + '.cake'), 'w').write(p + state)
print(' '.join(V))
