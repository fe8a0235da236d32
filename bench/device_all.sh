#!/bin/bash
# bench/device_all.sh — one device call that runs several GPU steps in order, each under its
# own time limit, and brings everything back in one archive (the device tool returns at most
# eight files from $OUT).
#
#   OUT=$OUT bash bench/device_all.sh STEP[:SECONDS]...      (on the GPU host, repository root)
#
# Steps (default limit in seconds):
#   sanitize (240)  bench/sanitize.sh: compute-sanitizer over the KDA kernels and the seeds
#   calib    (420)  bench/calib_campaigns.sh: evolve at three more shapes per family (store back)
#   ncu      (240)  bench/ncu_bottleneck.sh: the cost model's bottleneck against ncu
#   library  (400)  bench/library.sh: the generated libraries, checked and timed (cuBLAS, Flash-KMeans)
#   kda      (400)  bench/kda.sh: the KDA kernels against FLA (fla-core wheel in .whl)
#   outer    (150)  bench/outer_example.sh: the CK-RES-002 history replayed on the GPU
# Needs the carried bin/cake (build it here: `make`) and, for library and kda, the wheels in
# .whl (flash-kmeans, fla-core). The GPU and driver are recorded first. After every step the
# work folder is packed into $OUT/results.tgz (without the tensor dumps, *.bin), so a step
# that overruns the call still leaves the earlier ones; $OUT/summary.txt has each step's exit
# status, time and last lines.
set -u
OUT=${OUT:-/tmp/cake-device}
W=${WORK:-/tmp/cake-device-work}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$W"
: > "$OUT/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; bin/cake --version; date -u; } \
	> "$W/gpu.txt" 2>&1
cat "$W/gpu.txt" >> "$OUT/summary.txt"
pack() { tar czf "$OUT/results.tgz.tmp" --exclude='*.bin' -C "$W" . && mv "$OUT/results.tgz.tmp" "$OUT/results.tgz"; }   # tensor dumps stay behind
step() {   # step NAME LIMIT COMMAND...
	local name=$1 lim=$2
	shift 2
	local t0
	t0=$(date +%s)
	mkdir -p "$W/$name"
	timeout -s INT -k 20 "$lim" "$@" > "$W/$name/log.txt" 2>&1
	local rc=$?
	{
		echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s (limit $lim)"
		tail -25 "$W/$name/log.txt"
	} >> "$OUT/summary.txt"
	pack
}
[ $# -gt 0 ] || set -- sanitize calib ncu
for s in "$@"; do
	name=${s%%:*}
	lim=${s#*:}
	[ "$lim" = "$s" ] && lim=""
	case $name in
	sanitize) step sanitize "${lim:-240}" env OUT="$W/sanitize" bash bench/sanitize.sh ;;
	calib) step calib "${lim:-420}" env OUT="$W/calib" bash bench/calib_campaigns.sh ;;
	ncu) step ncu "${lim:-240}" env OUT="$W/ncu" bash bench/ncu_bottleneck.sh ;;
	library) step library "${lim:-400}" env OUT="$W/library" bash bench/library.sh ;;
	kda) step kda "${lim:-400}" env KDA_BENCH_DIR="$W/kda/cases" sh bench/kda.sh ;;   # every case's cake.json and FLA's table come back
	outer) step outer "${lim:-150}" env OUT="$W/outer" bash bench/outer_example.sh ;;
	*) echo "device_all: unknown step '$name' (sanitize calib ncu library kda outer)" | tee -a "$OUT/summary.txt"; exit 2 ;;
	esac
done
cat "$OUT/summary.txt"
