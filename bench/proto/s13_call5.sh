#!/bin/bash
# bench/proto/s13_call5.sh — session 13 call 5: the KDA prep's inverse, three lowerings of the same
# kernels against the prep of commit b840886 (.abbin/kbase: trisolve(akk, ai), an identity tile
# through the scratch): v1 (bin/cake: trisolve(L) with the identity made in registers, the
# unrolled sweep over every block), v2 (.abbin/cake-v2: the same plus a second unrolled sweep
# from the middle block for warps whose columns start in the lower half). Call 4 timed a per-block
# uniform skip: 1-2 % slower than base. Alternating, two rounds, every run checked.
set -u
OUT=${OUT:-/tmp/s13c5}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192"; do
		for v in base v1 v2; do
			c=bin/cake kd=()
			[ $v = base ] && kd=(--kernels .abbin/kbase)
			[ $v = v2 ] && c=.abbin/cake-v2
			# shellcheck disable=SC2086
			echo "$v $s: $(timeout 120 $c kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 | grep -E 'time|check|FAIL|error' | tr '\n' ' ')"
		done
	done
done > "$OUT/ab.log" 2>&1
sed -E 's/ +/ /g' "$OUT/ab.log" | sed -E 's/(base|v1|v2) (.*): time: ([0-9.]+) us.*kda_split_prep_lb ([0-9.]+) us.*o rel err ([0-9.e+-]+).*final state ([0-9.e+-]+).*/\1 \2: layer \3 prep \4 o \5 state \6/'
