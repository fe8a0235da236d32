#!/usr/bin/env python3
"""kda_phases.py - phase-ablation variants of kernels/kda/kda_prefill_chunk_lb.cake.

    python3 bench/proto/s7/kda_phases.py OUTDIR

Writes OUTDIR/NAME.cake for each variant. Each drops or shrinks one phase of the chunk loop, so
the results are wrong (time them with `cake kda --no-check`); the time a variant saves against
`full` is what that phase costs on the serial chain. Session 7 used them to decide how to split
the prefill into a chunk-parallel prep kernel and a short serial state kernel.
"""
import os
import sys

SRC = 'kernels/kda/kda_prefill_chunk_lb.cake'
src = open(SRC).read()


def sub(s, old, new, count=1):
    if s.count(old) < count:
        sys.exit('kda_phases: %r not found in %s' % (old, SRC))
    return s.replace(old, new)


V = {'full': src}
V['no_trisolve'] = sub(src, '      ai = trisolve(akk, ai)\n', '')
V['one_round'] = sub(src, '      for rb in 0 .. 4 {', '      for rb in 0 .. 1 {')
V['no_subref'] = sub(src, '      for sc in 1 .. 4 {', '      for sc in 1 .. 1 {')
V['no_l2norm'] = src.replace('l2norm(f32(t16))', 'f32(t16)')
V['no_gate'] = sub(src, '      x = lower_bound * sigmoid(am * (f32(t16) + cols(dtb)))\n', '      x = f32(t16) * lower_bound\n')
# the state part: w S, v', o and the update (one wgmma group instead of three)
i = src.index('      store ka[:, :] <- bf16(x)\n')
j = src.index('      store O[b, c * 64 +: 64, h, :] <- bf16(o)\n')
V['no_state'] = src[:i] + '      o = x + gs\n' + src[j:]
# the prep part: everything between the wait and the state part, except the loads
a = src.index('      wait full\n')
V['state_only'] = (src[:a] + '      wait full\n      load t16 <- ks[:, :]\n      kn = f32(t16)\n      store ka[:, :] <- t16\n'
                   '      store kb[:, :] <- t16\n      load t16 <- vs[:, :]\n      store vb[:, :] <- t16\n      load t16 <- qs[:, :]\n'
                   '      store qa[:, :] <- t16\n      store aq[:, :] <- bf16(where(col_idx() <= row_idx(), akk, 0.0))\n'
                   '      fence proxy_async\n      arrive empty\n      sync math\n      x = kn\n      gs = kn\n' + src[i:])
V['state_only'] = V['state_only'].replace('      wait full\n', '      akk = 0.0\n      wait full\n', 1)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for n, s in V.items():
    open(os.path.join(out, n + '.cake'), 'w').write(s)
print(' '.join(V))
