#!/bin/bash
# bench/proto/s10/device_next.sh — ready for the next session's first device call (not run in
# session 10: its device time was spent). An A/B of the split prefill's prep with its input
# rings swizzled (bench/proto/s10/swizzled_rings.patch: gr, qs, ks and vs with the 128B swizzle,
# each filled by two TMA boxes into its column panels, the language piece of session 10), which
# the emulator runs bit-identical to main: session 10's ncu profile put 4-way bank conflicts on
# 41 % of the prep's shared-load wavefronts, most of them these rings' accumulator-layout reads
# of unswizzled 256-byte rows; and the same with beta's global load moved to the top of the
# chunk (early_beta.patch). Two rounds at four shapes, main and the two patched kernel sets
# alternating (`cake kda --kernels DIR`), each checked against the float64 recurrence; then
# memcheck, racecheck and synccheck on the fully patched chain (partial slots, packed
# sequences); then ncu's shared-memory bank conflicts of one prep launch for each. Logs in
# next.tgz.
set -u
RET=${OUT:-/tmp/cake-s10n}
W=/tmp/cake-s10n-work
mkdir -p "$W/kswz" "$W/kswzb" "$W/ab" "$RET"
trap 'tar czf "$RET/next.tgz" --exclude="*.ncu-rep" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
# swz: the swizzled rings; swzb: the same with beta loaded at the top of the chunk
# (early_beta.patch, on top: its global load's latency under the gate and the rounds
# instead of just before the solve)
cp kernels/kda/*.cake "$W/kswz/" && patch -s -d "$W/kswz" -p3 < bench/proto/s10/swizzled_rings.patch || exit 1
cp "$W"/kswz/*.cake "$W/kswzb/" && patch -s -d "$W/kswzb" -p3 < bench/proto/s10/early_beta.patch || exit 1
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64"; do
		n=$(echo "$s" | tr -c 'A-Za-z0-9=' '_')
		for v in main swz swzb; do
			kd=(); [ $v != main ] && kd=(--kernels "$W/k$v")
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
			--kernels "$W/kswzb" > "$W/san_${t}_$(echo "$s" | tr -c 'A-Za-z0-9=' '_').log" 2>&1
		echo "sanitize $t $s: exit $?, $(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W"/san_${t}_*.log | tail -1)"
	done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in main swz swzb; do
	kd=(); [ $v != main ] && kd=(--kernels "$W/k$v")
	timeout 120 "$NCU" --launch-count 1 -k regex:split_prep --metrics gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__warps_issue_stalled_short_scoreboard_per_warp_active.pct \
		bin/cake kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --no-check --iters 1 --warmup 0 "${kd[@]}" > "$W/ncu_$v.txt" 2>&1
done
for f in "$W"/ab/*.json; do
	python3 - "$f" <<'PY' 2>/dev/null || echo "$f FAIL: $(head -c 300 "${f%.json}.err")"
import json, sys
d = json.load(open(sys.argv[1])); c = d.get('check', {})
st = ' '.join('%.1f' % v for v in d.get('stage_us', {}).values())
print('%-60s %9.2f us  [%s]  %s o %s st %s' % (sys.argv[1].split('/')[-1][:-5], d['time_us']['median'], st,
      'ok' if d['ok'] else 'MISMATCH', c.get('o_rel_err'), c.get('state_rel_err')))
PY
done
grep -hE 'kda_split_prep|duration|bank|wavefronts|scoreboard' "$W"/ncu_*.txt | head -20
