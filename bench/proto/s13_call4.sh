#!/bin/bash
# bench/proto/s13_call4.sh — session 13 call 4: (1) the KDA prep with trisolve(L), the one-argument
# inverse (B the identity, each warp's sweep starting at its first column), against the prep of
# commit b840886 (.abbin/kbase: trisolve(akk, ai) against an identity tile), alternating, two
# rounds, every run checked against the float64 recurrence; (2) compute-sanitizer memcheck,
# racecheck and synccheck on the split chain (the persistent prep with the inverse) at small
# shapes, one of them with CTAs that walk two prep tiles. Logs in $OUT.
set -u
OUT=${OUT:-/tmp/s13c4}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache
t0=$(date +%s)
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192" "--shape B=1,H=32,T=32768"; do
		for v in base inv; do
			kd=(); [ $v = base ] && kd=(--kernels .abbin/kbase)
			# shellcheck disable=SC2086
			echo "$v $s: $(timeout 120 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 | grep -E 'time|check|FAIL|error' | tr '\n' ' ')"
		done
	done
done > "$OUT/ab.log" 2>&1
echo "A/B: $(( $(date +%s) - t0 )) s"
OUT=$OUT/san SANITIZE_CASES='kda_split|kda_prefill_split' timeout $(( 560 - ($(date +%s) - t0) )) bash bench/sanitize.sh > "$OUT/san.log" 2>&1
echo "sanitize: exit $?, $(( $(date +%s) - t0 )) s"
sed -E 's/ +/ /g' "$OUT/ab.log" | sed -E 's/(base|inv) (.*): time: ([0-9.]+) us.*kda_split_prep_lb ([0-9.]+) us.*o rel err ([0-9.e+-]+).*final state ([0-9.e+-]+).*/\1 \2: layer \3 prep \4 o \5 state \6/'
cat "$OUT/san/sanitize.tsv" 2>/dev/null
