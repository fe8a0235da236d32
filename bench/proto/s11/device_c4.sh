#!/bin/bash
# bench/proto/s11/device_c4.sh — session 11 call 4. (1) An A/B of the split KDA prefill's prep with
# its workspace stores through shared memory and TMA (QG, KD, W and U staged in two 128B-swizzled
# [64, 128] buffers, one TMA store per 64-column panel; AQ stays a direct store: the staging
# buffer for it does not fit beside the trisolve scratch) against main: two rounds at four shapes,
# `cake kda --kernels DIR`, every case checked against the float64 recurrence; memcheck, racecheck
# and synccheck on the patched chain. (2) `bash bench/library.sh gemm`: the GEMM sweep with the
# dispatcher re-fitted on call 3's timings. KTMA: the patched kernel folder (default .abbin/ktma).
set -u
RET=${OUT:-/tmp/cake-s11c4}
W=/tmp/cake-s11c4-work
mkdir -p "$W/ab" "$RET"
trap 'tar czf "$RET/c4.tgz" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
KTMA=${KTMA:-.abbin/ktma}
PARTS=${PARTS:-"kda lib"}
case " $PARTS " in *" kda "*)
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64"; do
		n=$(echo "$s" | tr -c 'A-Za-z0-9=' '_')
		for v in main tma; do
			kd=(); [ $v = tma ] && kd=(--kernels "$KTMA")
			# shellcheck disable=SC2086
			timeout 90 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" --format=json \
				> "$W/ab/${v}_${n}_$r.json" 2> "$W/ab/${v}_${n}_$r.err"
		done
	done
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	for s in "--shape B=2,H=2,T=200" "--seqlens 65,1,63,64,40 --shape H=2"; do
		# shellcheck disable=SC2086
		timeout 200 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kda --mode prefill --lower-bound -5 $s --iters 1 \
			--kernels "$KTMA" > "$W/san_${t}_$(echo "$s" | tr -c 'A-Za-z0-9=' '_').log" 2>&1
		echo "sanitize $t $s: exit $?"
	done
done
grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W"/san_*.log | sort | uniq -c
for f in "$W"/ab/*.json; do
	python3 - "$f" <<'PY' 2>/dev/null || echo "$f FAIL: $(head -c 300 "${f%.json}.err")"
import json, sys
d = json.load(open(sys.argv[1])); c = d.get('check', {})
st = ' '.join('%.1f' % v for v in d.get('stage_us', {}).values())
print('%-60s %9.2f us  [%s]  %s o %s st %s' % (sys.argv[1].split('/')[-1][:-5], d['time_us']['median'], st,
      'ok' if d['ok'] else 'MISMATCH', c.get('o_rel_err'), c.get('state_rel_err')))
PY
done
;; esac
case " $PARTS " in *" lib "*)
OUT="$W/lib" timeout 330 bash bench/library.sh gemm > "$W/lib_stdout.txt" 2>&1
echo "library.sh gemm: exit $?"
cp "$W/lib/gemm.jsonl" "$RET/gemm.jsonl" 2>/dev/null
grep -A12 '^gemm: ' "$W/lib_stdout.txt" | head -14
;; esac
