#!/bin/bash
# bench/screen_s6.sh — session 6's screening call on the GPU host (repository root, bin/cake and
# .whl carried). Four parts, each logged under $OUT, a short table last:
#   gemm     bench/library.sh gemm: the GEMM sweep with the dispatcher (split-K slices of 16+ K
#            steps, interleaved timing) against cuBLAS;
#   decode   the KDA decode step over a grid of value rows per CTA (8, 16, 32) x warps (1..8)
#            (bench/proto/s6/kda_decode_grid.cake) next to kda_decode and kda_decode_v16, at
#            B = 8, H = 32 and 64, each checked against the float64 recurrence and then
#            compared with FLA's fused_recurrent_kda on the same inputs (bench/kda_fla.py);
#   g4wg     the evolved 256x128 four-consumer persistent GEMM (bench/proto/s6/gemm_p4wg.cake,
#            from data/measure/h200-calib3-*) against gemm_persistent at short and long K;
#   kmeans   `cake kmeans` per-step times at the ANCHORS shapes (where a fit's time goes);
#   split    bench/library.sh gemm on the shapes of at most 66 128x128 tiles, where a forced
#            split route runs with 2 or 3 slices (does a shallower split pay?);
#   kprof    bench/kmeans_profile.py: every kernel of a fit, Cake's and Flash-KMeans', by GPU time;
#   chunk    the chunked KDA prefill (kernels/kda/kda_prefill_chunk_lb.cake) checked and
#            timed next to the per-token kda_prefill_lb, and under the three sanitizers.
# usage: OUT=DIR bash bench/screen_s6.sh [gemm] [decode] [g4wg] [kmeans] [split] [kprof] [chunk]
#        (default: the first four)
set -u
OUT=${OUT:-/tmp/cake-screen}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
export FLA_FLASH_KDA=0
parts=${*:-gemm decode g4wg kmeans}
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

if has gemm; then
	OUT=$OUT/library bash bench/library.sh gemm > "$OUT/gemm.log" 2>&1
fi

if has decode; then
	if ! python3 -c 'import fla' 2>/dev/null && ls .whl/fla_core-*.whl >/dev/null 2>&1; then
		python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cake-fla-site .whl/fla_core-*.whl
		export PYTHONPATH=/tmp/cake-fla-site${PYTHONPATH:+:$PYTHONPATH}
	fi
	D=$OUT/decode
	mkdir -p "$D"
	dirs=""
	for H in 64 32; do
		for B in 8; do
			for k in kernels/kda/kda_decode.cake:kda_decode kernels/kda/kda_decode.cake:kda_decode_v16 \
				$(grep '^kernel' bench/proto/s6/kda_decode_grid.cake | awk '{print "bench/proto/s6/kda_decode_grid.cake:" $2}'); do
				n=${k##*:}_B${B}_H${H}
				mkdir -p "$D/$n"
				bin/cake kda --mode decode --shape B=$B,H=$H,T=1 --kernel "$k" --format=json --dump "$D/$n" \
					> "$D/$n/cake.json" 2> "$D/$n/cake.err" || echo "$n: cake kda failed: $(head -2 "$D/$n/cake.err")"
				[ -f "$D/$n/meta.json" ] && dirs="$dirs $D/$n"
			done
		done
	done
	# shellcheck disable=SC2086
	python3 bench/kda_fla.py --clean $dirs > "$D/fla.txt" 2>&1
fi

if has g4wg; then
	G=$OUT/g4wg.txt
	: > "$G"
	for s in "M=16384 N=768 K=768" "M=8192 N=3072 K=768" "M=4096 N=768 K=3072" "M=16384 N=3072 K=3072" \
		"M=8192 N=2048 K=2048" "M=4096 N=4096 K=4096" "M=1024 N=14336 K=4096" "M=8192 N=8192 K=8192"; do
		for round in 1 2; do
			for k in kernels/gemm/gemm_persistent.cake:gemm_bf16_persistent bench/proto/s6/gemm_p4wg.cake:gemm_p4wg \
				bench/proto/s6/gemm_p4wg.cake:gemm_p4wg_g16; do
				# shellcheck disable=SC2086
				t=$(bin/cake run "${k%%:*}" --kernel "${k##*:}" $s --time --iters 20 --format=json 2>/dev/null |
					python3 -c 'import json,sys; d=json.load(sys.stdin); t=d.get("time_us"); print(d.get("verdict"), t.get("median") if isinstance(t, dict) else t)' 2>&1)
				echo "g4wg $s round $round ${k##*:}: $t" >> "$G"
			done
		done
	done
fi

if has kmeans; then
	K=$OUT/kmeans.txt
	: > "$K"
	for s in B=32,N=65536,D=128,K=1024 B=32,N=16384,D=128,K=1000 B=32,N=75600,D=128,K=1000 B=1,N=1048576,D=128,K=1024 \
		B=8,N=65536,D=64,K=256 B=1,N=4194304,D=128,K=4096 B=32,N=65536,D=128,K=100 B=1,N=1048576,D=128,K=100; do
		echo "== cake kmeans --shape $s --iters 10" >> "$K"
		bin/cake kmeans --shape "$s" --iters 10 2>&1 | grep -E "time|update|route|kernel" | head -8 >> "$K"
	done
fi

if has split; then
	GEMM_SHAPES="256,3072,3072 256,4096,4096 256,4096,14336 256,768,3072 256,1024,4096 256,2048,8192" \
		OUT=$OUT/split bash bench/library.sh gemm > "$OUT/split.log" 2>&1
fi

if has kprof; then
	ls .whl/flash_kmeans-*.whl >/dev/null 2>&1 &&
		python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/flash_kmeans-*.whl > /dev/null 2>&1
	PYTHONPATH=$OUT/split/site-cake:$OUT/library/site-cake:/tmp/site${PYTHONPATH:+:$PYTHONPATH} python3 bench/kmeans_profile.py \
		"32,65536,128,100 32,65536,128,1024 1,1048576,128,1024 1,4194304,128,4096" > "$OUT/kprof.txt" 2>&1
fi

if has chunk; then
	C=$OUT/chunk.txt
	: > "$C"
	for lb in -1 -5; do
		for k in kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb kernels/kda/kda_prefill.cake:kda_prefill_lb; do
			echo "== lower_bound $lb $k" >> "$C"
			bin/cake kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound $lb --iters 5 --check-heads 16 --kernel "$k" 2>&1 |
				tail -5 >> "$C"
		done
	done
	echo "== T=32768 H=32" >> "$C"
	bin/cake kda --mode prefill --shape B=1,H=32,T=32768 --lower-bound -1 --iters 3 --check-heads 8 \
		--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | tail -4 >> "$C"
	san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	for t in memcheck racecheck synccheck; do
		"$san" --tool $t --target-processes all bin/cake kda --mode prefill --shape B=1,H=2,T=192 --lower-bound -1 --iters 1 \
			--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | grep -E "SUMMARY|check" | tail -3 |
			sed "s/^/$t: /" >> "$C"
	done
fi

echo "== summary"
has gemm && grep -E "^gemm:|worst:|picks|geomean" "$OUT/gemm.log" | head -12
has decode && tail -52 "$OUT/decode/fla.txt" | awk 'NF > 5 {print $1, $3, $4, $5, $NF}'
has g4wg && cat "$OUT/g4wg.txt"
has kmeans && grep -E "==|time" "$OUT/kmeans.txt"
has split && grep "^gemm " "$OUT/split.log"
has kprof && cat "$OUT/kprof.txt"
has chunk && cat "$OUT/chunk.txt"
exit 0
