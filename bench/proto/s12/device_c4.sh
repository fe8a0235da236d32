#!/bin/bash
# bench/proto/s12/device_c4.sh — session 12 call 4: the k-means assign kernel on a persistent grid
# (.abbin/kmp/assign.cake: one CTA per SM walks the 256-point tiles; the point tile is a 2-stage
# ring of its own, so the next tile's points load while the current tile's centroid tiles
# stream; the centroid ring 3 stages) against main's one-CTA-per-tile kernel, `cake kmeans
# --iters 10` (per-step CUDA events), alternating, two rounds, at the ANCHORS shapes the app
# takes (K % 128 == 0); then memcheck, racecheck and synccheck on a small fit. Logs in $OUT.
set -u
RET=${OUT:-/tmp/cake-s12c4}
W=/tmp/cake-s12c4-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/c4.tgz" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
for r in 1 2; do
	for s in B=32,N=65536,D=128,K=1024 B=1,N=1048576,D=128,K=1024 B=1,N=4194304,D=128,K=4096 B=32,N=16384,D=128,K=1024; do
		for v in main kmp; do
			kd=(); [ $v != main ] && kd=(--kernels .abbin/kmp)
			timeout 120 bin/cake kmeans --shape $s --iters 10 --format=json "${kd[@]}" > "$W/$v.$s.$r.json" 2> "$W/$v.$s.$r.err"
			python3 - "$W/$v.$s.$r.json" "$v" "$s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[3]:>32} {sys.argv[2]:>5} FAILED ({e})"); sys.exit()
print(f"{sys.argv[3]:>32} {sys.argv[2]:>5} assign {d['assign_us']['median']:9.2f} update {d['update_us']['median']:8.2f} total {d['total_us']:10.2f} us  it {d['iterations']} inertia {d['inertia']:.8e} ok {d['ok']}")
PY
		done
	done
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	timeout 120 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake kmeans --shape B=2,N=2048,D=128,K=512 --iters 2 --kernels .abbin/kmp \
		> "$W/san_$t.log" 2>&1
	echo "sanitize $t: exit $?, $(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W/san_$t.log" | tail -1)"
done
