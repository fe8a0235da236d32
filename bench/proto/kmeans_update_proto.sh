#!/bin/bash
# Build and run the k-means centroid-update microbenchmark (bench/proto/kmeans_update_proto.cu).
# usage (repo root, on the H200 machine): bash bench/proto/kmeans_update_proto.sh
# Writes the binary and a log to ${OUT:-/tmp}.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv || true
nvcc -O3 -arch=sm_90a -o "$OUT/kup" bench/proto/kmeans_update_proto.cu
set +e
"$OUT/kup" 2>&1 | tee "$OUT/kup.log"
rc=${PIPESTATUS[0]}
echo "kup exit code $rc (0 = all variants ok, 2 = some check FAILed)"
exit $rc
