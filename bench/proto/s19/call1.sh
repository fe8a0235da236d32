#!/bin/bash
# bench/proto/s19/call1.sh — session 19, device call 1: main's new default prefill chain (the
# 32-token chunks: kda_split32_prep_lb + kda_split32_state_lb + kda_split_tail) (1) under
# compute-sanitizer (memcheck, racecheck, synccheck: the split cases of bench/sanitize.sh, which
# take the app's default chain: a partial last slot, packed sequences, a persistent grid walking
# two tiles, the bf16-state twin), (2) the kda library's GPU checks (`bench/library.sh kda`:
# every route of the generated libcake_kda.so against a float64 recurrence, from C and from
# torch), (3) against the 64-token chain it replaces, alternating (H = 64 one sequence and
# 8 x 1024, H = 96 one sequence; checked against the float64 recurrence on 4 heads), (4) one
# Nsight Compute profile of each of its two main kernels at H = 64, T = 8192, (5) with the time
# left, the paper table's long sequence (T = 32768, H = 32: Cake, FLA's Triton path, FlashKDA on
# the same inputs). FlashKDA is built in the background ($OUT/fkda-site.tgz, for call 2's paper
# table too). Logs under $OUT; tables last.
set -u
OUT=${OUT:-/tmp/cake-s19c1}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-560} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
( cd .baselines && MAX_JOBS=6 NVCC_THREADS=1 bash build_flashkda.sh flashkda /tmp/fkda-site > "$OUT/fkda_build.log" 2>&1 &&
	tar -C /tmp -czf "$OUT/fkda-site.tgz" fkda-site && echo built >> "$OUT/fkda_build.log" ) &
BG=$!
# (1) sanitizers
OUT=$OUT/san SANITIZE_CASES='^kda_split_(T200|varlen|persistent|bf16)$' timeout 200 bash bench/sanitize.sh > "$OUT/sanitize.txt" 2>&1
echo "sanitize rc $? at $(($(date +%s) - T0)) s" >> "$OUT/sanitize.txt"
# (2) the library
OUT=$OUT/lib timeout 150 bash bench/library.sh kda > "$OUT/library.txt" 2>&1
echo "library rc $? at $(($(date +%s) - T0)) s" >> "$OUT/library.txt"
# (3) A/B against the 64-token chain
C64=kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail
one() {
	v=$1; shift
	kd=()
	[ "$v" = c64 ] && kd=(--kernel "$C64")
	r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error' | tr '\n' ' ')
	echo "$v $*: $r"
}
for round in $(seq 1 "${ROUNDS:-1}"); do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192"; do
		for v in main c64; do
			[ "$(left)" -lt 110 ] && break 3
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/ab.log" 2>&1
		done
	done
done
echo "A/B done at $(($(date +%s) - T0)) s"
# (4) ncu: the first launch of each of the chain's two kernels (the checked one)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in kda_split32_prep_lb kda_split32_state_lb; do
	[ "$(left)" -lt 50 ] && break
	timeout 60 "$NCU" --target-processes all --kernel-name "$k" --launch-count 1 --clock-control none \
		--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis \
		bin/cake kda --mode prefill --lower-bound -5 --shape B=1,H=64,T=8192 --iters 1 --check-heads 1 > "$OUT/ncu_$k.txt" 2>&1
	echo "ncu $k rc $? at $(($(date +%s) - T0)) s" >> "$OUT/ncu_$k.txt"
done
wait $BG
# (5) the long single sequence, FlashKDA from the package just built
if [ "$(left)" -gt 150 ]; then
	PYTHONPATH=/tmp/fkda-site KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY=T32768 timeout $(($(left) - 10)) sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
	echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
	grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
fi
echo "== sanitize"; tail -8 "$OUT/sanitize.txt"
echo "== library"; tail -12 "$OUT/library.txt"
echo "== A/B"; sed -E 's/ +/ /g; s/\(medians, timed apart\)//; s/CUDA events, median of 10 launches//' "$OUT/ab.log"
echo "== ncu"
for k in kda_split32_prep_lb kda_split32_state_lb; do
	echo "-- $k"; grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|Stall|rc ' "$OUT/ncu_$k.txt" | sed -E 's/ +/ /g' | head -24
done
echo "== fkda: $(tail -1 "$OUT/fkda_build.log")"
echo "== paper"; [ -s "$OUT/fla.jsonl" ] && python3 bench/proto/s19/paper_table.py "$OUT/fla.jsonl"
tail -2 "$OUT/kda_paper.txt" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
