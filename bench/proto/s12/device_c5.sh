#!/bin/bash
# bench/proto/s12/device_c5.sh — session 12 call 5: (1) the f16 assign on a persistent grid
# (.abbin/kmp/assign_f16.cake: the point tile a 2-stage ring, as kernels/kmeans/assign.cake's
# bf16 kernel since this session) against main's, `cake kmeans --dtype f16 --iters 10`,
# alternating, two rounds, then memcheck/racecheck/synccheck on it; (2) the libraries with the
# persistent bf16 assign: `bash bench/library.sh check kmeans` (the Python checks on held-out
# shapes, then k-means fit against Flash-KMeans' batch_kmeans_Euclid on the ANCHORS shapes and
# arbitrary K). Logs in $OUT.
set -u
RET=${OUT:-/tmp/cake-s12c5}
W=/tmp/cake-s12c5-work
mkdir -p "$W" "$RET/lib"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
for r in 1 2; do
	for s in B=32,N=65536,D=128,K=1024 B=1,N=1048576,D=128,K=1024; do
		for v in main kmp; do
			kd=(); [ $v != main ] && kd=(--kernels .abbin/kmp)
			timeout 120 bin/cake kmeans --dtype f16 --shape $s --iters 10 --format=json "${kd[@]}" > "$W/$v.$s.$r.json" 2> "$W/$v.$s.$r.err"
			python3 - "$W/$v.$s.$r.json" "$v" "$s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[3]:>32} {sys.argv[2]:>5} FAILED ({e})"); sys.exit()
print(f"f16 {sys.argv[3]:>32} {sys.argv[2]:>5} assign {d['assign_us']['median']:9.2f} update {d['update_us']['median']:8.2f} total {d['total_us']:10.2f} us  it {d['iterations']} inertia {d['inertia']:.8e} ok {d['ok']}")
PY
		done
	done
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	timeout 100 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kmeans --dtype f16 --shape B=2,N=2048,D=128,K=512 --iters 2 --kernels .abbin/kmp \
		> "$W/san_$t.log" 2>&1
	echo "sanitize f16 $t: exit $?, $(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W/san_$t.log" | tail -1)"
done
OUT="$RET/lib" timeout 400 bash bench/library.sh check kmeans > "$RET/lib/lib_stdout.txt" 2>&1
echo "library.sh exit $?"
grep -E "FAIL" "$RET/lib/lib_stdout.txt" | head
grep -E "^kmeans|fit" "$RET/lib/lib_stdout.txt" | tail -30
sed -n '/== summary/,$p' "$RET/lib/lib_stdout.txt"
rm -rf "$RET/lib/pkg" "$RET/lib/site-cake" "$RET/lib/smoke"
