#!/bin/bash
# bench/final_s5.sh — session 5's last device call: the lowering change of the KDA work
# (lane_id(), the write-only first wgmma step) A/B against the binary before it on the main
# kernels, the chunked KDA prefill checked and timed next to the per-token recurrence, and the
# bf16-state prefill. Writes $OUT/ab.txt and $OUT/kda_chunk.txt. Needs .abbin/cake-pre (the
# previous build) carried, and bin/cake.
set -u
OUT=${OUT:-/tmp/cake-final}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
{
for c in "kernels/gemm/gemm_persistent.cake M=8192 N=8192 K=8192" "kernels/gemm/gemm_ws_128x128_s5.cake M=1024 N=5120 K=5120" \
         "kernels/kmeans/assign.cake --kernel kmeans_assign B=32 N=65536 K=1024" "kernels/kmeans/update_sorted.cake --kernel kmeans_segsum B=32 N=65536 K=1024"; do
	for round in 1 2; do
		for b in .abbin/cake-pre bin/cake; do
			# shellcheck disable=SC2086
			t=$("$b" run $c --time --iters 10 --format=json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("verdict"), d.get("time_us",{}).get("median") if isinstance(d.get("time_us"),dict) else d.get("median_us"))' 2>&1)
			echo "ab round $round $(basename "$b") $c: $t"
		done
	done
done
for b in .abbin/cake-pre bin/cake; do
	t=$("$b" kda --mode decode --shape B=64,H=32,T=1 --format=json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["time_us"]["median"], d["check"]["ok"])' 2>&1)
	echo "ab kda_decode B=64,H=32 $(basename "$b"): $t"
done
} > "$OUT/ab.txt" 2>&1
{
for lb in -1 -2.5; do
	bin/cake kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound $lb --iters 5 --check-heads 16 \
		--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | tail -6
	bin/cake kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound $lb --iters 5 --check-heads 16 \
		--kernel kernels/kda/kda_prefill.cake:kda_prefill_lb 2>&1 | tail -4
done
bin/cake kda --mode prefill --shape B=1,H=32,T=32768 --lower-bound -1 --iters 3 --check-heads 8 \
	--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | tail -4
bin/cake kda --mode prefill --shape B=1,H=64,T=8192 --lower-bound -5 --iters 3 --check-heads 16 \
	--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | tail -3
bin/cake kda --mode prefill --state bf16 --shape B=1,H=64,T=8192 --lower-bound -5 --iters 5 --check-heads 16 2>&1 | tail -4
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck synccheck; do
	"$san" --tool $t --target-processes all bin/cake kda --mode prefill --shape B=1,H=2,T=192 --lower-bound -1 --iters 1 \
		--kernel kernels/kda/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb 2>&1 | grep -E "SUMMARY|verdict" | tail -3 | sed "s/^/$t: /"
done
} > "$OUT/kda_chunk.txt" 2>&1
cat "$OUT/ab.txt" "$OUT/kda_chunk.txt"
