#!/bin/bash
# bench/proto/s21/call4.sh — session 21, device call 4: the paired state pass
# (kda_split32_state2_lb, both value halves of a (head, sequence) in one CTA on two warpgroups;
# then a prototype, since moved into kernels/kda/kda_prefill_split_lb.cake, so this now names it
# there) chained after kda_split32_prep_lb and before kda_split_tail, against kda_split32_state_lb's chain,
# alternating, checked against the float64 recurrence (H = 64 and 96: one sequence, 8 x 1024, the
# six mixed lengths; T = 32768 at H = 32); then under compute-sanitizer (memcheck, racecheck,
# synccheck: a partial last slot, packed sequences, many CTAs). Logs under $OUT; tables last.
set -u
OUT=${OUT:-/tmp/cake-s21c4}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-570} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
F=kernels/kda/kda_prefill_split_lb.cake
CH="$F:kda_split32_prep_lb+kda_split32_state2_lb+kda_split_tail"
C1="$F:kda_split32_prep_lb+kda_split32_state_lb+kda_split_tail"   # the app's default now picks per shape
one() {
	v=$1; shift
	kd=(--kernel "$C1")
	[ "$v" = s2 ] && kd=(--kernel "$CH")
	r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error' | tr '\n' ' ')
	echo "$v $*: $r"
}
for round in 1 2; do
	for s in "--shape B=1,H=96,T=8192" "--shape B=8,H=96,T=1024" "--seqlens 1300,547,2048,963,271,3063 --shape H=96" \
	         "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=32,T=32768"; do
		for v in main s2; do
			[ "$(left)" -lt $((round == 1 ? 150 : 260)) ] && break 3
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/ab.log" 2>&1
		done
	done
done
echo "A/B done at $(($(date +%s) - T0)) s" >> "$OUT/ab.log"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in "--shape B=2,H=2,T=200" "--seqlens 65,1,63,64,40 --shape H=2" "--shape B=2,H=40,T=256"; do
	for t in memcheck racecheck synccheck; do
		[ "$(left)" -lt 20 ] && break 2
		# shellcheck disable=SC2086
		timeout 60 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kda --mode prefill $c --iters 1 --lower-bound -5 \
			--kernel "$CH" > "$OUT/san.log" 2>&1
		echo "s2 $t $c: rc $? $(grep -h -o 'ERROR SUMMARY: [0-9]* error\|RACECHECK SUMMARY: .*' "$OUT/san.log" | tr '\n' ' ')" >> "$OUT/san.txt"
	done
done
echo "== A/B (layer us; state stage us)"
sed -E 's/^(\S+) (.*):\s+time:\s+([0-9.]+) us.*kda_split32_state2?_lb ([0-9.]+) us.*o rel err ([0-9.e-]+).*final state ([0-9.e-]+).*/\1 \2 | \3 | state \4 | o \5 st \6/' "$OUT/ab.log"
echo "== sanitizers"; cat "$OUT/san.txt" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
