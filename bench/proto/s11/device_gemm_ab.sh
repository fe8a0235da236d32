#!/bin/bash
# bench/proto/s11/device_gemm_ab.sh — session 11's GEMM epilogue A/B on the H200: every library
# route kernel (kernels/gemm) beside its twin whose epilogue goes through shared memory and TMA
# stores (bench/proto/s11/gen_tma_variants.py), at the sweep's worst shapes and a few large ones,
# with cuBLAS in the same call (bench/gemm.sh: `cake run --time`, every run checked against the
# float64 oracle); then memcheck, racecheck and synccheck on two of the TMA-store variants.
# Logs in $OUT (gemm_ab.tgz).
set -u
RET=${OUT:-/tmp/cake-s11g}
W=/tmp/cake-s11g-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/gemm_ab.tgz" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
python3 bench/proto/s11/gen_tma_variants.py "$W/k" > "$W/variants.txt" || exit 1
REFS="kernels/gemm/gemm_persistent.cake kernels/gemm/gemm_ws_128x256_s4.cake kernels/gemm/gemm_ws_128x128_s5.cake kernels/gemm/gemm_ws_128x192_s5.cake kernels/gemm/gemm_ws_64x128_s8.cake"
S="8192,3072,768 16384,768,768 4096,8192,2048 256,8192,2048 256,3072,3072 16384,3072,768 4096,768,3072 1024,3072,768 4096,4096,4096 8192,1024,8192 8192,8192,8192"
SHAPES="$S" TIME_SHAPES="$S" ITERS=${ITERS:-30} OUT="$W/ab" timeout 420 bash bench/gemm.sh $REFS "$W"/k/*.cake > "$W/ab_table.txt" 2>&1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	for k in t_p256_s3 t_ws128_s5; do
		timeout 120 "$SAN" --tool $t --target-processes all --error-exitcode 99 bin/cake run "$W/k/$k.cake" M=512 N=768 K=256 \
			> "$W/san_${t}_$k.log" 2>&1
		echo "sanitize $t $k: exit $?, $(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$W/san_${t}_$k.log" | tail -1), $(grep -c 'ok' "$W/san_${t}_$k.log") ok lines"
	done
done
cat "$W/ab_table.txt"
