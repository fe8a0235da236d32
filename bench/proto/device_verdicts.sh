#!/bin/bash
# One device call: GPU unit tests in full, every runner verdict on planted kernels
# (fault, mismatch, hang with and without a persistent grid), then bench/gemm.sh on the
# two 128x256 Cake GEMMs.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export XDG_CACHE_HOME=/tmp/cake-cache
CR=${CAKE:-build/proto/cake-run}
S="M=1024 N=1024 K=1024"
{
echo "== unit tests on the GPU machine"
LD_LIBRARY_PATH=build/proto build/proto/test_jit 2>&1 | grep -v "^\[ RUN\|^\[       OK"
LD_LIBRARY_PATH=build/proto build/proto/test_gpu 2>&1 | grep -v "^\[ RUN\|^\[       OK"
echo "== fault";    $CR run bench/proto/fault_gemm.cake $S --no-verify; echo "exit $?"
echo "== mismatch"; $CR run bench/proto/mismatch_gemm.cake $S --no-verify --format=json; echo "exit $?"
echo "== hang (persistent)"; $CR run bench/proto/hang_persistent.cake M=8192 N=8192 K=1024 --no-verify --debug-hang --timeout 3; echo "exit $?"
echo "== refused"; $CR run kernels/gemm/gemm_persistent.cake M=8192 N=8000 K=1024; echo "exit $?"
} > $OUT/verdicts.txt 2>&1
OUT=$OUT CAKE=$CR ITERS=${ITERS:-50} SHAPES=${SHAPES:-"8192,8192,8192 4096,4096,4096 8192,1024,8192 2048,2048,2048"} \
	bash bench/gemm.sh kernels/gemm/gemm_ws_128x256_s4.cake kernels/gemm/gemm_persistent.cake > $OUT/gemm_table.txt 2>&1
cat $OUT/verdicts.txt $OUT/gemm_table.txt
