#!/bin/bash
# bench/proto/s13_call7.sh — session 13 call 7: trisolve's unrolled sweep, three lowerings of the
# same kernels (main's kernels, `ai = trisolve(akk)`): v2 (.abbin/cake-v2, call 5's: each block's
# finished rows stored into the scratch inside the sweep), v3 (.abbin/cake-v3: the stores after the
# sweep, so ptxas may issue the next block's reads of L early; call 6's profile put 5 % of the
# prep's samples on the first use of those reads), v3b (.abbin/cake-v3b: v3 plus every 1 / L_ii
# taken before the sweep). Alternating, two rounds, every run checked against the float64 recurrence.
set -u
OUT=${OUT:-/tmp/s13c7}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192"; do
		for v in v2 v3 v3b; do
			# shellcheck disable=SC2086
			echo "$v $s: $(timeout 120 .abbin/cake-$v kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 2>&1 | grep -E 'time|check|FAIL|error' | tr '\n' ' ')"
		done
	done
done > "$OUT/ab.log" 2>&1
sed -E 's/ +/ /g' "$OUT/ab.log" | sed -E 's/(v2|v3|v3b) (.*): time: ([0-9.]+) us.*kda_split_prep_lb ([0-9.]+) us.*o rel err ([0-9.e+-]+).*final state ([0-9.e+-]+).*/\1 \2: layer \3 prep \4 o \5 state \6/'
