#!/bin/bash
# One device call: correctness + timing of every prototype variant on every
# shape, cuBLAS (torch) side by side, SASS counts, the hang-diagnosis probe.
# usage (on the device machine, repo root): bash bench/proto/device.sh "variants" "shapes"
#   variants: space-separated name:cluster:persistent[:cubin] (cubins in build/proto; default cubin = name)
#   shapes:   space-separated M,N,K
set -u
B=build/proto
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
VARS=${1:-"v1_np_c1_lag0:1:0 v2_np_c1:1:0 v3_p_c1:1:1 v4_p_c2:2:1 v5_np_c2:2:0"}
SHAPES=${2:-"8192,8192,8192 4096,4096,4096 8192,1024,8192 2048,2048,2048 256,512,64 1024,3072,192"}
ITERS=${ITERS:-50}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee $OUT/gpu.txt
python3 bench/proto/torch_gemm.py $ITERS $SHAPES 2>>$OUT/stderr.txt | tee $OUT/torch.txt
for sh in $SHAPES; do
	IFS=, read M N K <<<"$sh"
	rows=64; [ $M -le 1024 ] && rows=$M
	args=""
	for v in $VARS; do IFS=: read n c p f <<<"$v"; args="$args $n=$B/${f:-$n}.cubin:$c:$p"; done
	timeout 300 $B/bench_gemm $M $N $K $ITERS $rows $args 2>>$OUT/stderr.txt | tee -a $OUT/ours.txt
done
python3 bench/proto/torch_gemm.py $ITERS $SHAPES 2>>$OUT/stderr.txt | tee -a $OUT/torch.txt
best=$(echo $VARS | awk '{print $NF}' | cut -d: -f1)
for v in $VARS; do n=${v%%:*}; [ -f $B/$n.cubin ] || continue; cuobjdump --dump-sass $B/$n.cubin > $OUT/$n.sass 2>&1
	echo "SASS $n HGMMA=$(grep -c HGMMA $OUT/$n.sass) UTMALDG=$(grep -c UTMALDG $OUT/$n.sass) LDL=$(grep -c LDL $OUT/$n.sass) STL=$(grep -c STL $OUT/$n.sass)"; done | tee $OUT/sass.txt
if [ "${HANG:-0}" = 1 ]; then timeout 60 $B/hang_probe $B/hang_c1.cubin 1 3 2>&1 | tee $OUT/hang.txt; fi
tar czf $OUT/sass.tgz -C $OUT $(cd $OUT && ls *.sass) && rm -f $OUT/*.sass
python3 bench/proto/table.py $OUT/ours.txt $OUT/torch.txt | tee $OUT/table.txt
