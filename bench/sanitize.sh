#!/bin/bash
# bench/sanitize.sh — compute-sanitizer (memcheck, racecheck, synccheck) over the kernels that
# have not been through it yet, on the GPU host, at small shapes. The sanitizer follows
# `cake run`'s and `cake kda`'s isolated child process, where the kernel launches.
#
#   OUT=DIR [CAKE=bin/cake] [TOOLS="memcheck racecheck synccheck"] [SANITIZE_CASES=REGEX] [KDA_KERNELS=DIR] bash bench/sanitize.sh
#
# Each case runs once per tool (one correctness launch, no timing loop); its log goes to
# $OUT/san_<case>_<tool>.log. The table printed last has, per case and tool, the sanitizer's
# error count and the exit status of cake (0: the oracle check passed). Exit status 1 when
# any case reports an error or fails its check.
set -u
CAKE=${CAKE:-bin/cake}
OUT=${OUT:-/tmp/cake-sanitize}
TOOLS=${TOOLS:-"memcheck racecheck synccheck"}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
SAN=${SAN:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
mkdir -p "$OUT"
: > "$OUT/sanitize.tsv"
bad=0
case_() {   # case_ NAME CAKE-ARGS...
	local name=$1
	shift
	# SANITIZE_CASES=REGEX runs only the cases whose names match (all by default)
	[ -n "${SANITIZE_CASES:-}" ] && ! printf '%s\n' "$name" | grep -Eq "$SANITIZE_CASES" && return
	for t in $TOOLS; do
		local log="$OUT/san_${name}_$t.log"
		timeout 240 "$SAN" --tool "$t" --target-processes all --error-exitcode 99 "$CAKE" "$@" > "$log" 2>&1
		local rc=$?
		local errs
		# memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
		# "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
		errs=$( { grep -o 'ERROR SUMMARY: [0-9]* error' "$log" | awk '{print $3}'
			grep -o 'RACECHECK SUMMARY: .*([0-9]* error' "$log" | sed 's/.*(//' | awk '{print $1}'; } |
			awk '{s += $1} END {print s + 0}')
		local sums
		sums=$(grep -c 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log")
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$t" "$errs" "$sums" "$rc" >> "$OUT/sanitize.tsv"
		{ [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ] || [ "$sums" -eq 0 ]; } && bad=1
	done
}
K=${KDA_KERNELS:-kernels/kda}   # KDA_KERNELS=DIR: a candidate set of the kda kernels (the split cases below use it too)
case_ gemm_seed_naive run kernels/gemm/seed_naive.cake M=256 N=256 K=128 --timeout 120
case_ kmeans_seed_naive run kernels/kmeans/seed_naive.cake B=2 N=1024 K=512 --timeout 120
case_ kmeans_fit kmeans --shape B=2,N=4096,D=128,K=1024 --iters 2
case_ kmeans_segsum_split run kernels/kmeans/update_sorted.cake --kernel kmeans_segsum_split B=1 N=65536 K=100 --timeout 120
case_ kmeans_segsum_split_d64_f16 run kernels/kmeans/update_sorted.cake --kernel kmeans_segsum_split_d64_f16 B=2 N=8192 K=300 --timeout 120
case_ kda_decode kda --mode decode --shape B=2,H=2,T=1 --iters 1 --no-graph --kernel $K/kda_decode.cake:kda_decode
case_ kda_decode_T4 kda --mode decode --shape B=2,H=2,T=4 --iters 1 --no-graph --kernel $K/kda_decode.cake:kda_decode
case_ kda_decode_lb kda --mode decode --shape B=2,H=2,T=1 --iters 1 --no-graph --lower-bound -5 --kernel $K/kda_decode.cake:kda_decode_lb
case_ kda_decode_v16 kda --mode decode --shape B=2,H=2,T=1 --iters 1 --no-graph --kernel $K/kda_decode.cake:kda_decode_v16
case_ kda_decode_bf16 kda --mode decode --state bf16 --shape B=2,H=2,T=1 --iters 1 --no-graph --kernel $K/kda_decode_bf16.cake:kda_decode_bf16
case_ kda_prefill kda --mode prefill --shape B=1,H=2,T=96 --iters 1 --kernel $K/kda_prefill.cake:kda_prefill
case_ kda_prefill_lb kda --mode prefill --shape B=1,H=2,T=96 --iters 1 --lower-bound -5 --kernel $K/kda_prefill.cake:kda_prefill_lb
case_ kda_prefill_bf16_lb kda --mode prefill --state bf16 --shape B=1,H=2,T=96 --iters 1 --lower-bound -5 --kernel $K/kda_prefill.cake:kda_prefill_bf16_lb
case_ kda_prefill_varlen kda --mode prefill --seqlens 40,7,49 --shape H=2 --iters 1 --kernel $K/kda_prefill.cake:kda_prefill_varlen
case_ kda_prefill_v16 kda --mode prefill --shape B=1,H=2,T=96 --iters 1 --kernel $K/kda_prefill.cake:kda_prefill_v16
case_ kda_recurrent kda --mode prefill --shape B=1,H=2,T=64 --iters 1 --kernel $K/kda_recurrent.cake:kda_recurrent
case_ kda_prefill_chunk_lb kda --mode prefill --shape B=2,H=2,T=192 --iters 1 --lower-bound -5 --kernel $K/kda_prefill_chunk_lb.cake:kda_prefill_chunk_lb
case_ kda_prefill_split_lb kda --mode prefill --shape B=2,H=2,T=256 --iters 1 --lower-bound -5 --kernel $K/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail
case_ kda_split_T200 kda --mode prefill --shape B=2,H=2,T=200 --iters 1 --kernels $K --lower-bound -5   # the default: partial slots, the tail
case_ kda_split_varlen kda --mode prefill --seqlens 65,1,63,64,40 --shape H=2 --iters 1 --kernels $K --lower-bound -5   # packed: the default
case_ kda_split_persistent kda --mode prefill --shape B=2,H=40,T=256 --iters 1 --kernels $K --lower-bound -5   # 160 prep tiles on 132 CTAs: some walk two
case_ kda_split_bf16 kda --mode prefill --state bf16 --seqlens 65,1,63,64,40 --shape H=2 --iters 1 --kernels $K --lower-bound -5   # the bf16-state twin
# the transposed state kernels (register A operands, the transposed output store)
case_ kda_split_statet kda --mode prefill --seqlens 65,1,63,64,40 --shape H=2 --iters 1 --lower-bound -5 --kernel $K/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_statet_lb+kda_split_tail
case_ kda_split_statet_bf16 kda --mode prefill --state bf16 --shape B=2,H=2,T=200 --iters 1 --lower-bound -5 --kernel $K/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_statet_bf16_lb+kda_split_tail
printf '%-22s %-10s %6s %6s %4s\n' case tool errors sums rc
while IFS="$(printf '\t')" read -r c t e s r; do printf '%-22s %-10s %6s %6s %4s\n' "$c" "$t" "$e" "$s" "$r"; done < "$OUT/sanitize.tsv"
echo "sanitize: $([ $bad -eq 0 ] && echo 'clean' || echo 'FINDINGS (see the logs)')"
exit $bad
