#!/bin/bash
# One device call for the Cake-side GPU path: unit tests with a GPU, `cake run`
# hang diagnosis on a planted deadlock, then bench/gemm.sh (Cake kernels through
# `cake run --time` and cuBLAS side by side). Uses build/proto/cake-run until
# bin/cake has the `run` subcommand.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export XDG_CACHE_HOME=/tmp/cake-cache
CR=${CAKE:-build/proto/cake-run}
{
echo "== unit tests on the GPU machine"
LD_LIBRARY_PATH=build/proto build/proto/test_jit 2>&1 | tail -3
LD_LIBRARY_PATH=build/proto build/proto/test_gpu 2>&1 | tail -4
echo "== planted hang, --debug-hang"
$CR run bench/proto/hang_gemm.cake M=1024 N=1024 K=1024 --no-verify --debug-hang --timeout 3; echo "exit $?"
$CR run bench/proto/hang_gemm.cake M=1024 N=1024 K=1024 --no-verify --debug-hang --timeout 3 --format=json; echo "exit $?"
echo "== planted hang, no recorder"
$CR run bench/proto/hang_gemm.cake M=1024 N=1024 K=1024 --no-verify --timeout 2; echo "exit $?"
echo "== after the hangs the GPU still works"
$CR run kernels/gemm/gemm_ws_128x256_s4.cake M=2048 N=2048 K=2048 --time --iters 10; echo "exit $?"
} 2>&1 | tee $OUT/cake_tests.txt
OUT=$OUT CAKE=$CR ITERS=${ITERS:-50} bash bench/gemm.sh "$@" 2>&1 | tee $OUT/gemm_table.txt
