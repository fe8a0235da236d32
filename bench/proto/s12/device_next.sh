#!/bin/bash
# bench/proto/s12/device_next.sh — ready for the next session's first device call (not run in
# session 12: its device time was spent). Session 12 call 6 timed the GEMM dispatcher and cuBLAS
# from CUDA graphs as well and found cuBLAS's M = 256 kernels 11-35 % faster than ours with the
# host taken out (256x768x3072 0.65, 256x4096x4096 0.75, 256x3072x3072 0.78, 256x1024x4096
# 0.81), which the host-inclusive ratio hides. This call times every forced route from graphs
# too (GRAPH_ROUTES=1) at the small-M shapes, so the dispatcher's split-K and tile thresholds
# can be read in GPU time: whether the split-K route (GEMM_SPLIT: S >= 4, or 2-3 slices with
# K >= 4096 S) pays at K <= 4096 once the host is out of the picture, and how far each tile
# route is from cuBLAS. Logs and gemm.jsonl (graph_routes_us per shape) in $OUT. Part 2 (below)
# is a KDA A/B; the two together may need more than one call's 600 s: `PART=1` or `PART=2` runs one.
set -u
PART=${PART:-all}
export GEMM_SHAPES="256,768,3072 256,768,768 256,3072,3072 256,4096,4096 256,1024,4096 256,1024,8192 256,4096,14336 256,11008,4096 256,8192,2048 512,4096,4096 512,3072,3072 1024,2048,2048"
[ "$PART" = 2 ] || OUT=${OUT:-/tmp/cake-s12next} GRAPH_ROUTES=1 timeout 500 bash bench/library.sh gemm
[ "$PART" = 1 ] && exit 0

# Part 2: the KDA prep kernel on a persistent grid (bench/proto/s12/kda_prep_persistent.patch:
# `grid persistent (NS / 2, H)`, its chunk ring carried from tile to tile, so the next pair's
# first chunk loads during the current pair's second; the producer at 32 registers, the math
# warpgroups at 232, where 24 / 240 spilled 8 bytes). On the CPU emulator it gives main's
# errors on every split case (fixed length, T = 200, packed 65,1,63,64,40, bf16 state). Main
# and the patched set alternating, two rounds, each checked against the float64 recurrence.
K=/tmp/cake-s12next-kpers
rm -rf "$K" && mkdir -p "$K" && cp kernels/kda/*.cake "$K/" && patch -s -d "$K" -p3 < bench/proto/s12/kda_prep_persistent.patch || exit 1
for r in 1 2; do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024" "--seqlens 1300,547,2048,963,271,3063 --shape H=64"; do
		for v in main pers; do
			kd=(); [ $v = pers ] && kd=(--kernels "$K")
			# shellcheck disable=SC2086
			echo "$v $s: $(timeout 120 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 | grep -E 'time|check|FAIL' | tr '\n' ' ')"
		done
	done
done
