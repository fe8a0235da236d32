#!/bin/bash
# bench/proto/s10/device_c2.sh — session 10, device call 2: the GEMM library with the stream-K
# route (kernels/gemm/gemm_streamk.cake): C smoke (every route, the stream-K shapes included),
# the same under memcheck, racecheck and synccheck on two stream-K shapes, the Python checks
# on held-out shapes with every route forced, then the interleaved sweep over the 55 LLM
# shapes (dispatcher, cuBLAS and every forced route, round by round). Logs in c2.tgz.
set -u
RET=${OUT:-/tmp/cake-s10c2}
W=/tmp/cake-s10c2-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/c2.tgz" --exclude=pkg --exclude=site-cake --exclude=smoke -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
SANITIZE=1 OUT="$W/lib" timeout -k 10 ${LIB_LIMIT:-540} bash bench/library.sh check gemm > "$W/library.txt" 2>&1
echo "library.sh exit $?" >> "$W/library.txt"
grep -E 'FAIL|under|smoke:' "$W/library.txt" | head -20
grep -E 'FAILED' "$W/library.txt" | head
tail -30 "$W/library.txt"
