#!/bin/bash
# bench/device_edge.sh — bad-input and failure verdicts on the GPU machine, one call:
# an out-of-memory shape, a shape outside the domain, a corrupted cubin cache, and the
# f16 k-means divide check. Each line shows the command and the verdict it printed.
# usage (GPU machine, repo root): CAKE=build/dev/cake bash bench/device_edge.sh
set -u
CAKE=${CAKE:-bin/cake}
export XDG_CACHE_HOME=/tmp/cake-edge-cache
rm -rf "$XDG_CACHE_HOME"
G=kernels/gemm/gemm_ws_128x256_s4.cake
show() { echo "\$ cake $*"; $CAKE "$@" 2>&1 | grep -E '^(verdict|cake|  check|  hang|  time)' ; echo "  (exit ${PIPESTATUS[0]})"; }
show run $G M=262144 N=262144 K=65536            # needs ~206 GB: out of memory
show run $G M=8192 N=8000 K=8192                 # N % 256 != 0: refused before launch
show run $G M=256 N=512 K=64                     # fills the cache
for f in $(find "$XDG_CACHE_HOME" -type f -name '*.cubin' 2>/dev/null) $(find "$XDG_CACHE_HOME" -type f ! -name '*.cubin' 2>/dev/null | head -3); do
	head -c 512 /dev/urandom > "$f"; done
echo "(cache files overwritten with random bytes)"
show run $G M=256 N=512 K=64                     # must detect the corrupt entry, rebuild, run ok
show run kernels/kmeans/update_atomic_f16.cake --kernel kmeans_divide_f16 K=4096
show run kernels/kmeans/update_atomic.cake --kernel kmeans_divide K=4096
