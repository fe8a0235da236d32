#!/bin/sh
# check_speed.sh — how fast is `cake check`? (a benchmark, never a CI gate)
#
#   sh bench/check_speed.sh            (or: make bench)
#   CAKE=build/asan/cake RUNS=20 sh bench/check_speed.sh
#
# 1. Generates a ~500-line valid kernel (bench/gen_kernel.py) and times
#    `cake check` on it. Goal: median < 20 ms.
# 2. Times `cake check` on every kernels/**/*.cake. Goal: median < 50 ms each.
# Uses hyperfine when it is installed (--warmup 3, RUNS runs, median from its
# JSON export); otherwise a loop of RUNS runs timed with `date +%s%N`, which
# includes the fork/exec cost of `date` itself (about a millisecond), so the
# fallback slightly over-reports. Always exits 0: the numbers are for people.
set -u
cd "$(dirname "$0")/.." || exit 0
CAKE=${CAKE:-bin/cake}
RUNS=${RUNS:-50}
if [ ! -x "$CAKE" ]; then
	echo "check_speed: $CAKE is not built (run make)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cake-bench.XXXXXX") || exit 0
trap 'rm -rf "$TMP"' EXIT INT TERM

# median_ms FILE: print the median of a file holding one number (ms) per line
median_ms() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f\n", m }'
}

# time_check FILE: print the median wall time of `cake check FILE` in ms
time_check() {
	if command -v hyperfine >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
		hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json "$TMP/hf.json" \
			"$CAKE check $1" >/dev/null 2>&1 &&
		python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$TMP/hf.json" &&
		return
	fi
	: >"$TMP/times"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(date +%s%N)
		"$CAKE" check "$1" >/dev/null 2>&1
		t1=$(date +%s%N)
		echo "$(( (t1 - t0) / 1000 ))" | awk '{ printf "%.3f\n", $1 / 1000 }' >>"$TMP/times"
		i=$((i + 1))
	done
	median_ms "$TMP/times"
}

# verdict MS GOAL
verdict() {
	awk -v m="$1" -v g="$2" 'BEGIN { print (m + 0 < g + 0) ? "ok" : "SLOW" }'
}

tool="date loop"
command -v hyperfine >/dev/null 2>&1 && tool="hyperfine"
echo "cake check speed ($CAKE, $RUNS runs each, timed with $tool)"

python3 bench/gen_kernel.py 500 >"$TMP/big.cake"
lines=$(wc -l <"$TMP/big.cake")
"$CAKE" check "$TMP/big.cake" >"$TMP/big.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || [ -s "$TMP/big.out" ]; then
	echo "note: the generated kernel does not check clean (exit $rc); timing it anyway:"
	head -n 8 "$TMP/big.out" | sed 's/^/    | /'
fi
m=$(time_check "$TMP/big.cake")
printf '%-44s %8s ms  (goal < 20 ms)  %s\n' "generated kernel ($lines lines)" "$m" "$(verdict "$m" 20)"

for f in $(find kernels -name '*.cake' | sort); do
	m=$(time_check "$f")
	printf '%-44s %8s ms  (goal < 50 ms)  %s\n' "$f" "$m" "$(verdict "$m" 50)"
done
exit 0
