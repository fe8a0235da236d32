#!/bin/bash
# bench/proto/s7/device_phases.sh — session 7's first call: where the chunked KDA prefill's time
# goes. Each ablation of bench/proto/s7/kda_phases.py is timed with `cake kda --no-check` at
# B=1 H=64 T=8192 (lambda = -5), then ncu profiles the full kernel once (warp stalls,
# instruction mix). Logs under $OUT; a table last.
set -u
OUT=${OUT:-/tmp/cake-s7}
mkdir -p "$OUT/ph"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
vs=$(python3 bench/proto/s7/kda_phases.py "$OUT/ph")
SHAPE=${SHAPE:-B=1,H=64,T=8192}
for v in $vs; do
	bin/cake kda --mode prefill --shape "$SHAPE" --lower-bound -5 --kernel "$OUT/ph/$v.cake" --no-check --allow-spills \
		--iters 10 --format=json > "$OUT/ph/$v.json" 2> "$OUT/ph/$v.err"
done
if [ -n "${NCU:-1}" ] && command -v ncu >/dev/null; then
	timeout 240 ncu --launch-count 1 --section WarpStateStats --section InstructionStats --section SchedulerStats \
		--section ComputeWorkloadAnalysis --section SpeedOfLight --section SourceCounters \
		bin/cake kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --no-check --iters 1 --warmup 0 \
		> "$OUT/ncu_chunk.txt" 2>&1
fi
printf '%-14s %10s\n' variant time_us
for v in $vs; do
	t=$(python3 -c "import json,sys; print(json.load(open('$OUT/ph/$v.json'))['time_us']['median'])" 2>/dev/null || echo "fail: $(head -c 200 $OUT/ph/$v.err)")
	printf '%-14s %10s\n' "$v" "$t"
done
grep -E "Stall|Warp Cycles|Issue Slot|Executed Ipc|Eligible|No Eligible|Duration" "$OUT/ncu_chunk.txt" | head -40
