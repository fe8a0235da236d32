#!/bin/bash
# bench/proto/s7/device_solve.sh — session 7's second call: the chunked KDA prefill with the
# lane-quad trisolve (src/lower/sm90_acc.c), checked against the float64 recurrence and timed
# at the paper's fixed-length shapes (lambda = -5), then the phase ablations again
# (bench/proto/s7/kda_phases.py) to see what now sets the time. Logs under $OUT; a table last.
set -u
OUT=${OUT:-/tmp/cake-s7}
mkdir -p "$OUT/sh" "$OUT/ph"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
SP=${SPILLS:---allow-spills}
for s in B=1,H=64,T=8192 B=1,H=96,T=8192 B=8,H=64,T=1024 B=8,H=96,T=1024 B=1,H=32,T=32768; do
	bin/cake kda --mode prefill --shape $s --lower-bound -5 $SP --iters 10 --check-heads 16 --format=json \
		> "$OUT/sh/$s.json" 2> "$OUT/sh/$s.err"
done
mkdir -p "$OUT/dec"
for k in kda_decode kda_decode_lb; do
	lb=; [ $k = kda_decode_lb ] && lb="--lower-bound -5"
	for s in B=8,H=32,T=1 B=64,H=64,T=4; do
		bin/cake kda --mode decode --shape $s $lb --format=json > "$OUT/dec/$k.$s.json" 2> "$OUT/dec/$k.$s.err"
	done
done
bin/cake kda --mode prefill --shape B=2,H=8,T=300 --format=json > "$OUT/dec/prefill_softplus.json" 2> "$OUT/dec/prefill_softplus.err"
vs=$(python3 bench/proto/s7/kda_phases.py "$OUT/ph")
for v in $vs; do
	bin/cake kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound -5 --kernel "$OUT/ph/$v.cake" --no-check --allow-spills \
		--iters 10 --format=json > "$OUT/ph/$v.json" 2> "$OUT/ph/$v.err"
done
python3 - "$OUT" $vs <<'PY'
import json, os, sys
out = sys.argv[1]
print('%-18s %10s %8s %10s %10s' % ('shape', 'time_us', 'ok', 'o_rel', 'state_rel'))
for sub, w in (('sh', 18), ('dec', 34)):
    for f in sorted(os.listdir(out + '/' + sub)):
        if not f.endswith('.json'):
            continue
        try:
            j = json.load(open('%s/%s/%s' % (out, sub, f))); c = j.get('check', {})
            print('%-*s %10.2f %8s %10.2e %10.2e' % (w, f[:-5], j['time_us']['median'], j['ok'], c.get('o_rel_err') or -1, c.get('state_rel_err') or -1))
        except Exception:
            print(f, 'failed', open('%s/%s/%s.err' % (out, sub, f[:-5])).read()[:300])
for v in sys.argv[2:]:
    try:
        print('%-18s %10.1f' % (v, json.load(open('%s/ph/%s.json' % (out, v)))['time_us']['median']))
    except Exception:
        print(v, 'failed', open('%s/ph/%s.err' % (out, v)).read()[:300])
PY
