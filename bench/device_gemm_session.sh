#!/bin/bash
# bench/device_gemm_session.sh — one device call for the GEMM issue: correctness of every
# GEMM kernel on six shapes, cuBLAS side by side on four, SASS instruction check of the
# lowered cubins, and a --debug-hang story for a schedule with a missing `arrive`.
# usage (on the GPU machine, repo root): CAKE=build/dev/cake OUT=$OUT bash bench/device_gemm_session.sh
set -u
CAKE=${CAKE:-bin/cake}
OUT=${OUT:-/tmp/cake-gemm}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "== debug-hang story (missing arrive; verifier bypassed with --no-verify)" > "$OUT/hang.txt"
$CAKE run bench/proto/hang_missing_arrive.cake M=1024 N=1024 K=1024 --no-verify --debug-hang --timeout 5 >> "$OUT/hang.txt" 2>&1
echo "exit $?" >> "$OUT/hang.txt"
echo "== SASS" > "$OUT/sass.txt"
for c in build/dev/*.cubin; do
	cuobjdump --dump-sass "$c" > "$OUT/$(basename "$c" .cubin).sass" 2>&1
	printf '%s HGMMA=%s UTMALDG=%s LDL/STL=%s\n' "$(basename "$c")" \
		"$(grep -c HGMMA "$OUT/$(basename "$c" .cubin).sass")" \
		"$(grep -c UTMALDG "$OUT/$(basename "$c" .cubin).sass")" \
		"$(grep -cE '\b(LDL|STL)\b' "$OUT/$(basename "$c" .cubin).sass")" >> "$OUT/sass.txt"
done
rm -f "$OUT"/*.sass
OUT=$OUT CAKE=$CAKE ITERS=${ITERS:-50} bash bench/gemm.sh > "$OUT/gemm_table.txt" 2>&1
cat "$OUT/gpu.txt" "$OUT/hang.txt" "$OUT/sass.txt" "$OUT/gemm_table.txt"
