#!/bin/bash
# Final device call: GPU unit tests, k-means assignment through `cake run`, SASS of the
# Cake GEMM cubin, and bench/gemm.sh over every Cake GEMM (cuBLAS side by side).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export XDG_CACHE_HOME=/tmp/cake-cache
CR=${CAKE:-build/proto/cake-run}
{
echo "== unit tests"
LD_LIBRARY_PATH=build/proto build/proto/test_gpu 2>&1 | grep -E "PASSED|FAILED|ERROR|SKIPPED"
echo "== kmeans assign"
for nk in "65536 1024" "1048576 1024" "2097152 1024"; do set -- $nk
	$CR run kernels/kmeans/assign.cake N=$1 K=$2 --time --timeout 20; echo "exit $?"; done
echo "== SASS of the Cake GEMM"
$CR run kernels/gemm/gemm_ws_128x256_s4.cake M=256 N=256 K=256 > /dev/null 2>&1
for f in $XDG_CACHE_HOME/cake/*.cubin; do
	python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(); n=struct.unpack_from('<Q',d,24)[0]; open('/tmp/k.cubin','wb').write(d[56:56+n])" "$f"; n=$(cuobjdump --dump-sass /tmp/k.cubin 2>/dev/null | grep -c HGMMA)
	t=$(cuobjdump --dump-sass /tmp/k.cubin 2>/dev/null | grep -c UTMALDG); echo "$(basename $f) HGMMA=$n UTMALDG=$t"; done
} > $OUT/final_tests.txt 2>&1
OUT=$OUT CAKE=$CR ITERS=${ITERS:-50} SHAPES=${SHAPES:-"8192,8192,8192 4096,4096,4096 8192,1024,8192 2048,2048,2048"} \
	bash bench/gemm.sh > $OUT/gemm_table.txt 2>&1
cat $OUT/final_tests.txt $OUT/gemm_table.txt
