#!/bin/bash
# bench/proto/s21/call2.sh — session 21, device call 2: (1) the reordered prep candidates
# (prep_reorder.cake: kda_split32_prep_r6, kda_split32_prep_r7) against main's kda_split32_prep_lb,
# alternating, each chained with main's kda_split32_state_lb and kda_split_tail and checked
# against the float64 recurrence on 4 heads (H = 64 one sequence and 8 x 1024, H = 96 one
# sequence); (2) r7 under compute-sanitizer (memcheck, racecheck, synccheck: a partial last slot,
# packed sequences); (3) where the prep's time goes: ncu --set full over one launch of main's prep
# and of r7's (B = 1, H = 64, T = 1024) with line info, the SASS samples summed per Cake statement
# (bench/proto/s13_prep_lines.py). Logs under $OUT; tables last. Carry bin.
set -u
OUT=${OUT:-/tmp/cake-s21c2}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-570} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
F=/tmp/chain21.cake
cat kernels/kda/kda_prefill_split_lb.cake bench/proto/s21/prep_reorder.cake > "$F"
one() {
	v=$1; shift
	kd=()
	[ "$v" != main ] && kd=(--kernel "$F:kda_split32_prep_$v+kda_split32_state_lb+kda_split_tail")
	r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error' | tr '\n' ' ')
	echo "$v $*: $r"
}
for round in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--shape B=1,H=96,T=8192"; do
		for v in main r6 r7; do
			[ "$(left)" -lt $((round == 1 ? 300 : 420)) ] && break 3
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/ab.log" 2>&1
		done
	done
done
echo "A/B done at $(($(date +%s) - T0)) s" >> "$OUT/ab.log"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in "--shape B=2,H=2,T=200" "--seqlens 65,1,63,64,40 --shape H=2"; do
	for t in memcheck racecheck synccheck; do
		[ "$(left)" -lt 200 ] && break 2
		# shellcheck disable=SC2086
		timeout 60 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kda --mode prefill $c --iters 1 --lower-bound -5 \
			--kernel "$F:kda_split32_prep_r7+kda_split32_state_lb+kda_split_tail" > "$OUT/san.log" 2>&1
		echo "r7 $t $c: rc $? $(grep -h -o 'ERROR SUMMARY: [0-9]* error\|RACECHECK SUMMARY: .*' "$OUT/san.log" | tr '\n' ' ') $(grep -h -o 'check: [a-z]*' "$OUT/san.log" | head -1)" >> "$OUT/san.txt"
	done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
NVD=$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)
for k in kda_split32_prep_lb kda_split32_prep_r7; do
	[ "$(left)" -lt 80 ] && break
	d=$OUT/ncu_$k
	mkdir -p "$d"
	XDG_CACHE_HOME=/tmp/cake-cache-li CAKE_NVRTC_LINEINFO=1 bin/cake build "$F" --kernel $k --emit=cubin -o "$d/prep.cubin" > "$d/cubin.log" 2>&1
	bin/cake build "$F" --kernel $k --emit=cuda -o "$d/prep.cu" >> "$d/cubin.log" 2>&1
	"$NVD" -g -c "$d/prep.cubin" > "$d/prep.dis" 2>&1
	kd=()
	[ $k != kda_split32_prep_lb ] && kd=(--kernel "$F:$k+kda_split32_state_lb+kda_split_tail")
	XDG_CACHE_HOME=/tmp/cake-cache-li CAKE_NVRTC_LINEINFO=1 timeout 120 "$NCU" --launch-count 1 -k "regex:$k" --set full --import-source yes -o "$d/prep" -f \
		bin/cake kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --no-check --iters 1 --warmup 0 "${kd[@]}" > "$d/ncu_run.txt" 2>&1
	"$NCU" --import "$d/prep.ncu-rep" --page details > "$d/details.txt" 2>&1
	"$NCU" --import "$d/prep.ncu-rep" --page source --csv --print-source sass > "$d/sass.csv" 2>&1
	rm -f "$d/prep.ncu-rep"
	python3 bench/proto/s13_prep_lines.py "$d" 30 > "$d/lines.txt" 2>&1
	gzip -f "$d/sass.csv" "$d/prep.dis"
done
echo "== A/B"; cat "$OUT/ab.log"
echo "== sanitizers"; cat "$OUT/san.txt" 2>/dev/null
for k in kda_split32_prep_lb kda_split32_prep_r7; do
	d=$OUT/ncu_$k
	[ -f "$d/details.txt" ] || continue
	echo "== ncu $k"
	grep -E "^ +Duration|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Registers Per" "$d/details.txt" | head -12
	head -14 "$d/lines.txt"
done
echo "total $(($(date +%s) - T0)) s"
