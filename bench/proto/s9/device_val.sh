#!/bin/bash
# bench/proto/s9/device_val.sh — session 9, one device call: (1) an A/B of the split prefill's
# prep across three builds at B=1 H=64 T=8192 and 8 x 1024, two rounds: .abbin/cake-s8 (session
# 8's main, with its kernels in .abbin/kda_s8), .abbin/cake-slots (the chunk slots, __expf) and
# bin/cake (the chunk slots and the ex2.approx.ftz exp); (2) the decode kernels with the new exp,
# checked and timed at four shapes; (3) bench/kda.sh KDA_CASES=paper: the paper's six shapes and
# T = 32768 with the app's default against FLA's chunk_kda (FLA_FLASH_KDA=0: Cake's o and final
# state compared with FLA's) and FlashKDA (built from .baselines when carried), side by side.
# Logs in s9v.tgz; tables last.
set -u
RET=${OUT:-/tmp/cake-s9v}
W=/tmp/cake-s9v-work
mkdir -p "$W/ab" "$W/dec" "$RET"
trap 'tar czf "$RET/s9v.tgz" --exclude="*.bin" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
for r in 1 2; do
	for s in B=1,H=64,T=8192 B=8,H=64,T=1024; do
		timeout 60 .abbin/cake-s8 kda --mode prefill --lower-bound -5 --shape $s --kernels .abbin/kda_s8 --iters 10 --check-heads 4 \
			--format=json > "$W/ab/s8_${s}_$r.json" 2> "$W/ab/s8_${s}_$r.err"
		timeout 60 .abbin/cake-slots kda --mode prefill --lower-bound -5 --shape $s --iters 10 --check-heads 4 \
			--format=json > "$W/ab/slots_${s}_$r.json" 2> "$W/ab/slots_${s}_$r.err"
		timeout 60 bin/cake kda --mode prefill --lower-bound -5 --shape $s --iters 10 --check-heads 4 \
			--format=json > "$W/ab/main_${s}_$r.json" 2> "$W/ab/main_${s}_$r.err"
	done
done
for s in B=1,H=32,T=1 B=8,H=32,T=1 B=64,H=32,T=1 B=256,H=64,T=1; do
	timeout 60 bin/cake kda --mode decode --shape $s --format=json > "$W/dec/$s.json" 2> "$W/dec/$s.err"
done
timeout 60 bin/cake kda --mode decode --shape B=64,H=32,T=4 --format=json > "$W/dec/spec4.json" 2> "$W/dec/spec4.err"
timeout 60 bin/cake kda --mode decode --state bf16 --shape B=64,H=32,T=1 --format=json > "$W/dec/bf16.json" 2> "$W/dec/bf16.err"
KDA_CASES=paper KDA_BENCH_DIR="$W/kda" timeout -s INT -k 20 "${KDA_LIMIT:-470}" sh bench/kda.sh > "$W/kda.txt" 2>&1
echo "kda.sh exit $?" >> "$W/kda.txt"
for f in "$W"/ab/*.json "$W"/dec/*.json; do
	python3 - "$f" <<'PY' 2>/dev/null || echo "$f FAIL: $(head -c 300 "${f%.json}.err")"
import json, sys
d = json.load(open(sys.argv[1])); c = d.get('check', {})
st = ' '.join('%.1f' % v for v in d.get('stage_us', {}).values())
print('%-40s %9.2f us  [%s]  %s o %s st %s' % ('/'.join(sys.argv[1].split('/')[-2:])[:-5], d['time_us']['median'], st,
      'ok' if d['ok'] else 'MISMATCH', c.get('o_rel_err'), c.get('state_rel_err')))
PY
done
tail -40 "$W/kda.txt"
