#!/bin/bash
# bench/proto/s16/call1.sh — session 16, device call 1 (H200): the prep and state A/Bs of
# bench/proto/s15/device_next.sh in one 600 s call, with FlashKDA built in the background
# (8 of the 16 cores; the package comes back as $OUT/fkda-site.tgz so later calls skip the build).
#   prep: main / seg / 2r / bs / 2rbs on 4 paper shapes, round 1, then the state A/B (1 round),
#         then prep round 2 and the 3-stage state ring while the deadline allows.
# Logs: $OUT/prep_ab.log, $OUT/state_ab.txt, $OUT/state3_ab.txt, $OUT/logs.tgz; tables last.
set -u
OUT=${OUT:-/tmp/cake-s16c1}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-570} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
W=/tmp/s16w
rm -rf $W && mkdir -p $W
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
# FlashKDA in the background
( cd .baselines && MAX_JOBS=8 NVCC_THREADS=1 bash build_flashkda.sh flashkda /tmp/fkda-site > $W/fkda_build.log 2>&1 &&
	tar -C /tmp -czf "$OUT/fkda-site.tgz" fkda-site && echo built >> $W/fkda_build.log ) &
BG=$!
mkdir -p $W/seg $W/2r $W/bs $W/2rbs
for v in seg 2r bs 2rbs; do cp kernels/kda/*.cake $W/$v/; done
patch -s -d $W/seg -p3 < bench/proto/s15/prep_segscan.patch || exit 1
patch -s -d $W/2r -p3 < bench/proto/s15/prep_2rounds.patch || exit 1
patch -s -d $W/bs -p3 < bench/proto/s15/prep_blocksolve.patch || exit 1
patch -s -d $W/2rbs -p3 < bench/proto/s15/prep_2rounds.patch && patch -s -d $W/2rbs -p3 < bench/proto/s15/prep_blocksolve.patch || exit 1
prep_round() {
	for s in "--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192" "--shape B=8,H=64,T=1024"; do
		for v in main seg 2r bs 2rbs; do
			[ "$(left)" -lt 40 ] && return
			kd=()
			[ $v != main ] && kd=(--kernels "$W/$v")
			t1=$(date +%s)
			# shellcheck disable=SC2086
			r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
				grep -E 'time|stages|check|FAIL|error' | tr '\n' ' ')
			echo "r$1 $v $s: $r [$(($(date +%s) - t1)) s]"
		done
	done
}
prep_round 1 >> "$OUT/prep_ab.log" 2>&1
echo "prep round 1 done at $(($(date +%s) - T0)) s"
[ "$(left)" -gt 150 ] && OUT=$W/ab ROUNDS=1 ITERS=10 timeout $(($(left) - 100)) sh bench/kda_state_ab.sh > "$OUT/state_ab.txt" 2>&1
echo "state A/B done at $(($(date +%s) - T0)) s"
prep_round 2 >> "$OUT/prep_ab.log" 2>&1
echo "prep round 2 done at $(($(date +%s) - T0)) s"
if [ "$(left)" -gt 90 ]; then
	mkdir -p $W/k3 && cp kernels/kda/*.cake $W/k3/ && patch -s -d $W/k3 -p3 < bench/proto/s15/statet_3stage.patch &&
		F=$W/k3/kda_prefill_split_lb.cake AB_ONLY='H(64|96)_(1seq|8x1024)$' OUT=$W/ab3 ROUNDS=1 ITERS=10 timeout $(($(left) - 20)) sh bench/kda_state_ab.sh > "$OUT/state3_ab.txt" 2>&1
fi
while kill -0 $BG 2>/dev/null && [ "$(left)" -gt 12 ]; do sleep 2; done
tail -3 $W/fkda_build.log
tar -C $W --exclude='*.cake' -czf "$OUT/logs.tgz" . 2>/dev/null
echo "== prep A/B"; sed -E 's/ +/ /g' "$OUT/prep_ab.log"
echo "== state A/B"; tail -8 "$OUT/state_ab.txt"
echo "== state 3-stage"; tail -5 "$OUT/state3_ab.txt" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
