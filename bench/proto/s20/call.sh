#!/bin/bash
# bench/proto/s20/call.sh — session 20's device call: (1) main's default prefill chain (the
# 32-token chunks: kda_split32_prep_lb + kda_split32_state_lb + kda_split_tail, adopted in
# session 19 on H100 timings) under compute-sanitizer (memcheck, racecheck, synccheck: the split
# cases of bench/sanitize.sh — a partial last slot, packed sequences, a persistent grid walking
# two tiles, the bf16-state twin); (2) the two-role prep candidate (bench/proto/s20, README
# there) against main, alternating, checked against the float64 recurrence on 4 heads;
# (3) the kda library's GPU checks (`bench/library.sh kda`); (4) the candidate under the three
# sanitizers; (5) one Nsight Compute profile of main's prep and of the candidate's at H = 64,
# T = 8192; (6) with the time left, the paper table's T = 32768 case (Cake, FLA's Triton path,
# FlashKDA, same inputs). FlashKDA builds in the background ($OUT/fkda-site.tgz). Logs under
# $OUT; tables last. Carry bin, .whl, .baselines.
set -u
OUT=${OUT:-/tmp/cake-s20}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-560} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
BG=
if [ "${DEADLINE:-560}" -ge 450 ]; then   # FlashKDA only for a call long enough to reach (6)
	( cd .baselines && MAX_JOBS=6 NVCC_THREADS=1 bash build_flashkda.sh flashkda /tmp/fkda-site > "$OUT/fkda_build.log" 2>&1 &&
		tar -C /tmp -czf "$OUT/fkda-site.tgz" fkda-site && echo built >> "$OUT/fkda_build.log" ) &
	BG=$!
fi
C2=/tmp/chain2wg.cake
cat kernels/kda/kda_prefill_split_lb.cake bench/proto/s20/kda_prep2wg.cake > "$C2"
CAND="$C2:kda_split32_prep2_lb+kda_split32_state_lb+kda_split_tail"
# (2) A/B
one() {
	v=$1; shift
	kd=()
	[ "$v" = cand ] && kd=(--kernel "$CAND")
	r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error' | tr '\n' ' ')
	echo "$v $*: $r"
}
ab_round() {   # ab_round MIN-LEFT SHAPES...: main and the candidate alternating, while MIN-LEFT seconds remain
	m=$1; shift
	for s in "$@"; do
		for v in main cand; do
			[ "$(left)" -lt "$m" ] && return
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/ab.log" 2>&1
		done
	done
}
ab_round 120 "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192"
echo "A/B round 1 done at $(($(date +%s) - T0)) s" >> "$OUT/ab.log"
# (1) sanitizers on main's default chain (the bf16-state twin has not run on a GPU before)
SC='^kda_split_(T200|bf16)$'
[ "$(left)" -gt 300 ] && SC='^kda_split_(T200|varlen|persistent|bf16)$'
OUT=$OUT/san SANITIZE_CASES=$SC timeout $(( $(left) > 300 ? 200 : 110 )) bash bench/sanitize.sh > "$OUT/sanitize.txt" 2>&1
echo "sanitize rc $? at $(($(date +%s) - T0)) s" >> "$OUT/sanitize.txt"
ab_round 330 "--shape H=64,T=8192 --seqlens 1300,547,2048,963,271,3063" "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192"
echo "A/B done at $(($(date +%s) - T0)) s" >> "$OUT/ab.log"
# (3) the library
[ "$(left)" -gt 100 ] && OUT=$OUT/lib timeout $(( $(left) > 250 ? 150 : 80 )) bash bench/library.sh kda > "$OUT/library.txt" 2>&1
echo "library rc $? at $(($(date +%s) - T0)) s" >> "$OUT/library.txt"
# (4) the candidate under the sanitizers
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in "--shape B=2,H=2,T=200" "--seqlens 65,1,63,64,40 --shape H=2" "--shape B=2,H=40,T=256"; do
	for t in memcheck racecheck synccheck; do
		[ "$(left)" -lt 150 ] && break 2
		# shellcheck disable=SC2086
		timeout 60 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kda --mode prefill $c --iters 1 --lower-bound -5 \
			--kernel "$CAND" > "$OUT/cand_san.log" 2>&1
		echo "cand $t $c: rc $? $(grep -h -o 'ERROR SUMMARY: [0-9]* error\|RACECHECK SUMMARY: .*' "$OUT/cand_san.log" | tr '\n' ' ') $(grep -h -o 'check: [a-z]*' "$OUT/cand_san.log" | head -1)" >> "$OUT/cand_san.txt"
	done
done
# (5) ncu of the two preps (the first, checked launch)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in kda_split32_prep_lb kda_split32_prep2_lb; do
	[ "$(left)" -lt 70 ] && break
	kd=()
	[ $k = kda_split32_prep2_lb ] && kd=(--kernel "$CAND")
	timeout 60 "$NCU" --target-processes all --kernel-name "$k" --launch-count 1 --clock-control none \
		--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis \
		bin/cake kda --mode prefill --lower-bound -5 --shape B=1,H=64,T=8192 --iters 1 --check-heads 1 "${kd[@]}" > "$OUT/ncu_$k.txt" 2>&1
	echo "ncu $k rc $? at $(($(date +%s) - T0)) s" >> "$OUT/ncu_$k.txt"
done
[ -n "$BG" ] && wait "$BG"
# (6) the long single sequence
if [ -n "$BG" ] && [ "$(left)" -gt 150 ]; then
	PYTHONPATH=/tmp/fkda-site KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY=T32768 timeout $(($(left) - 10)) sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
	echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
	grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
fi
echo "== sanitize"; cat "$OUT/san/sanitize.tsv" 2>/dev/null; tail -2 "$OUT/sanitize.txt"
echo "== A/B"; sed -E 's/ +/ /g; s/\(medians, timed apart\)//; s/CUDA events, median of 10 launches//' "$OUT/ab.log"
echo "== library"; tail -6 "$OUT/library.txt"
echo "== cand sanitizers"; cat "$OUT/cand_san.txt" 2>/dev/null
echo "== ncu"
for k in kda_split32_prep_lb kda_split32_prep2_lb; do
	echo "-- $k"; grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|No Eligible|rc ' "$OUT/ncu_$k.txt" | sed -E 's/ +/ /g' | head -14
done
echo "== fkda: $(tail -1 "$OUT/fkda_build.log" 2>/dev/null)"
echo "== paper"; [ -s "$OUT/fla.jsonl" ] && python3 bench/proto/s19/paper_table.py "$OUT/fla.jsonl"
tail -2 "$OUT/kda_paper.txt" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
