#!/bin/bash
# bench/proto/s12/device_c1.sh — session 12 call 1: the small-M GEMM candidates of
# gen_smallm.py (128-wide K stages, two consumer warpgroups on 64-row tiles, 64x96 tiles, a
# persistent 128x160 tile, 128x192 at a proxy N = 11136 for 11008) beside the library's 64x128
# tile and cuBLAS in the same call (bench/gemm.sh: `cake run --time`, every run checked against
# the float64 oracle), at the sweep's M = 256 shapes and 1024x5120x5120; then memcheck,
# racecheck and synccheck on two candidates. Logs in $OUT (c1.tgz).
set -u
RET=${OUT:-/tmp/cake-s12c1}
W=/tmp/cake-s12c1-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/c1.tgz" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
python3 bench/proto/s12/gen_smallm.py "$W/k" > "$W/variants.txt" || exit 1
S="256,4096,4096 256,3072,3072 256,11008,4096 256,11136,4096 256,1024,4096 256,4096,14336 256,13824,5120 256,8192,2048 256,8192,28672 1024,5120,5120"
SHAPES="$S" TIME_SHAPES="$S" ITERS=${ITERS:-30} OUT="$W/ab" timeout 450 bash bench/gemm.sh "$W"/k/*.cake > "$W/ab_table.txt" 2>&1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	for k in s12_64x128_bk128_s4 s12_p128x160_s4; do
		timeout 60 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake run "$W/k/$k.cake" M=640 N=640 K=512 \
			> "$W/san_${t}_$k.log" 2>&1
		echo "sanitize $t $k: exit $?, $(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W/san_${t}_$k.log" | tail -1)"
	done
done
cat "$W/ab_table.txt"
