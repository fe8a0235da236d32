#!/bin/bash
# bench/proto/s8/device_prep.sh — session 8's calls 2-4: where the split prefill's prep kernel
# spends its time. Each variant of bench/proto/s8/prep_phases.py runs as the chain
# prep+state at B=1 H=64 T=8192 (lambda = -5, --no-check: the ablations are wrong on purpose)
# and the prep stage's median (stage_us) is read; the real split (the app's default) is
# checked at five shapes with its stage times, the fused kda_prefill_chunk_lb at four; ncu
# profiles one prep launch (warp stalls, SASS hot spots, with -lineinfo) and the cubin comes
# back for the SASS-to-line map (SASS samples per Cake statement: nvdisasm -g on it, then the
# `// FILE.cake:N:` comments of `cake build --emit=cuda`). Logs in s8.tgz; a table last.
set -u
CAKE=${CAKE:-bin/cake}     # the binary under test (another build for an A/B: CAKE=.abbin/cake-x)
RET=${OUT:-/tmp/cake-s8}   # what comes back: s8.tgz (everything but the ncu report), prep.ncu-rep when small
OUT=/tmp/cake-s8-work
mkdir -p "$OUT/pv" "$RET"
trap 'tar czf "$RET/s8.tgz" --exclude=prep.ncu-rep -C "$OUT" . ; [ -f "$OUT/prep.ncu-rep" ] && [ $(stat -c %s "$OUT/prep.ncu-rep") -lt 15000000 ] && cp "$OUT/prep.ncu-rep" "$RET/"' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
vs=$(python3 bench/proto/s8/prep_phases.py "$OUT/pv")
ST=kda_split_prep_lb+kda_split_state_lb+kda_split_tail   # since session 9: the chunk-slot chain
for v in $vs; do
	"$CAKE" kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound -5 --kernel "$OUT/pv/$v.cake:$ST" --no-check --allow-spills \
		--iters 10 --format=json > "$OUT/pv/$v.json" 2> "$OUT/pv/$v.err"
done
SPLIT=kernels/kda/kda_prefill_split_lb.cake:$ST
for s in B=1,H=64,T=8192 B=8,H=64,T=1024 B=1,H=32,T=32768 B=1,H=96,T=8192 B=8,H=96,T=1024; do
	"$CAKE" kda --mode prefill --shape $s --lower-bound -5 --kernel $SPLIT --iters 5 --check-heads 8 --format=json \
		> "$OUT/split_$s.json" 2> "$OUT/split_$s.err"
done
for s in B=1,H=64,T=8192 B=8,H=64,T=1024 B=1,H=96,T=8192 B=8,H=96,T=1024; do   # the fused kernel
	"$CAKE" kda --mode prefill --shape $s --lower-bound -5 --iters 5 --check-heads 8 --format=json --kernel kernels/kda/kda_prefill_chunk_lb.cake \
		> "$OUT/fused_$s.json" 2> "$OUT/fused_$s.err"
done
"$CAKE" kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound -5 --kernel "$OUT/pv/c4.cake:$ST" --iters 5 --check-heads 8 \
	--format=json > "$OUT/c4_checked.json" 2> "$OUT/c4_checked.err"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
export CAKE_NVRTC_LINEINFO=1
"$CAKE" build kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --emit=cubin -o "$OUT/prep_lineinfo.cubin" > "$OUT/cubin.log" 2>&1
timeout 200 "$NCU" --launch-count 1 -k regex:split_prep --set full --import-source yes -o "$OUT/prep" -f \
	"$CAKE" kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --kernel $SPLIT --no-check --iters 1 --warmup 0 \
	> "$OUT/ncu_run.txt" 2>&1
"$NCU" --import "$OUT/prep.ncu-rep" --page details > "$OUT/ncu_details.txt" 2>&1
"$NCU" --import "$OUT/prep.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu_sass.csv" 2>&1
unset CAKE_NVRTC_LINEINFO
printf '%-12s %10s %10s %10s\n' variant total_us prep_us state_us
for v in $vs; do
	python3 - "$OUT/pv/$v.json" "$v" <<'PY' 2>/dev/null || echo "$v fail: $(head -c 300 $OUT/pv/$v.err)"
import json, sys
d = json.load(open(sys.argv[1])); s = list(d['stage_us'].values())
print('%-12s %10.1f %10.1f %10.1f' % (sys.argv[2], d['time_us']['median'], s[0], s[1]))
PY
done
for f in "$OUT"/split_*.json "$OUT"/fused_*.json "$OUT/c4_checked.json"; do
	python3 - "$f" <<'PY' 2>/dev/null || echo "$f fail: $(head -c 300 ${f%.json}.err)"
import json, sys
d = json.load(open(sys.argv[1])); c = d.get('check', {})
print(sys.argv[1].split('/')[-1], d['time_us']['median'], d.get('stage_us', ''), 'ok' if d['ok'] else 'MISMATCH', c.get('o_rel_err'), c.get('state_rel_err'))
PY
done
grep -E "Duration|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Theoretical Occ|L1/TEX Hit|Memory Throughput|Compute \(SM\) Th" "$OUT/ncu_details.txt" | head -30
head -c 600 "$OUT/ncu_sass.csv"; echo; wc -l "$OUT/ncu_sass.csv"
