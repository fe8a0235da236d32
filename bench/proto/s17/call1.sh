#!/bin/bash
# bench/proto/s17/call1.sh — session 17, device call 1 (H200): the 16-token-chunk chain
# (bench/proto/s17/kda_prefill_split16_lb.cake) against main's split chain, alternating, on the
# paper's H = 64 and H = 96 shapes (checked against the float64 recurrence on 4 heads), then
# session 16's prep A/B (bench/proto/s16/call1.sh's candidates) while the deadline allows;
# FlashKDA built in the background ($OUT/fkda-site.tgz). Logs under $OUT; tables last.
set -u
OUT=${OUT:-/tmp/cake-s17c1}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-570} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
W=/tmp/s17w
rm -rf $W && mkdir -p $W
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
( cd .baselines && MAX_JOBS=8 NVCC_THREADS=1 bash build_flashkda.sh flashkda /tmp/fkda-site > $W/fkda_build.log 2>&1 &&
	tar -C /tmp -czf "$OUT/fkda-site.tgz" fkda-site && echo built >> $W/fkda_build.log ) &
BG=$!
C16=bench/proto/s17/kda_prefill_split16_lb.cake:kda_split16_prep_lb+kda_split16_state_lb+kda_split_tail
one() {   # one VARIANT SHAPE-ARGS...
	v=$1; shift
	kd=()
	[ "$v" = s16 ] && kd=(--kernel "$C16")
	case $v in seg|2r|bs|2rbs) kd=(--kernels "$W/$v") ;; esac
	t1=$(date +%s)
	r=$(timeout 120 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error|rel' | tr '\n' ' ')
	echo "$v $*: $r [$(($(date +%s) - t1)) s]"
}
SHAPES=("--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192")
for round in 1 2; do
	for s in "${SHAPES[@]}"; do
		for v in main s16; do
			[ "$(left)" -lt 60 ] && break 3
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/s16_ab.log" 2>&1
		done
	done
done
echo "split16 A/B done at $(($(date +%s) - T0)) s"
# the 16-token chain at T = 32768, H = 32 and the bf16-free small cases, once
[ "$(left)" -gt 100 ] && one s16 --shape B=1,H=32,T=32768 >> "$OUT/s16_ab.log" 2>&1 && one main --shape B=1,H=32,T=32768 >> "$OUT/s16_ab.log" 2>&1
# session 16's prep candidates, one round, while time allows
mkdir -p $W/seg $W/2r $W/bs $W/2rbs
for v in seg 2r bs 2rbs; do cp kernels/kda/*.cake $W/$v/; done
patch -s -d $W/seg -p3 < bench/proto/s15/prep_segscan.patch
patch -s -d $W/2r -p3 < bench/proto/s15/prep_2rounds.patch
patch -s -d $W/bs -p3 < bench/proto/s15/prep_blocksolve.patch
patch -s -d $W/2rbs -p3 < bench/proto/s15/prep_2rounds.patch && patch -s -d $W/2rbs -p3 < bench/proto/s15/prep_blocksolve.patch
for v in 2rbs 2r seg bs; do
	[ "$(left)" -lt 50 ] && break
	one $v --shape B=1,H=64,T=8192 >> "$OUT/prep_ab.log" 2>&1
done
while kill -0 $BG 2>/dev/null && [ "$(left)" -gt 12 ]; do sleep 2; done
tail -3 $W/fkda_build.log
echo "== split16 A/B"; sed -E 's/ +/ /g' "$OUT/s16_ab.log"
echo "== prep A/B"; sed -E 's/ +/ /g' "$OUT/prep_ab.log" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
