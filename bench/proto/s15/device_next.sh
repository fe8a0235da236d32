#!/bin/bash
# bench/proto/s15/device_next.sh — ready for the next session's device calls (session 15 had no
# GPU lent). Three parts; each fits one call's 600 s (`PART=1`, `PART=2`, `PART=3`):
#   1. compute-sanitizer (memcheck, racecheck, synccheck) over the split prefill's chains: the
#      app's default (the v3b prep of session 13 has not been through it), the transposed state
#      kernels, and the prep with the segmented scan (part 2's candidate); then
#      bench/kda_state_ab.sh: kda_split_state_lb against kda_split_statet_lb (S^T and v'^T as
#      wgmma register operands, no shared-memory round trip per chunk step) on the paper's
#      shapes, T = 32768 H = 32 and the bf16-state pair, alternating, two rounds; then the same
#      with the transposed kernel's ring at 3 stages (bench/proto/s15/statet_3stage.patch, 206 KB
#      of shared memory, 0 spills, emulated) at H = 64 and 96, one sequence and 8 x 1024.
#   2. the prep with `o = cumsum(x, 0, 16)` (bench/proto/s15/prep_segscan.patch: each row's
#      in-block prefix from a segmented scan, a warp's own rows, instead of three row picks
#      through shared memory with two named barriers each) against main, alternating, two
#      rounds, each run checked against the float64 recurrence (the emulator gives main's
#      errors to the third digit on every split case).
#   3. the kda library's checks on the GPU (bench/library.sh check kda: the C smoke over every
#      route against a float64 recurrence, cake_kernels.kda from torch on held-out shapes).
# Logs in $OUT; each part prints its table last.
set -u
PART=${PART:-all}
OUT=${OUT:-/tmp/cake-s15next}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
K=$OUT/kp
rm -rf "$K" && mkdir -p "$K" && cp kernels/kda/*.cake "$K/" && patch -s -d "$K" -p3 < bench/proto/s15/prep_segscan.patch || exit 1
if [ "$PART" = all ] || [ "$PART" = 1 ]; then
	SANITIZE_CASES='kda_split|kda_prefill_split' OUT=$OUT/san timeout 280 bash bench/sanitize.sh | tail -12
	KDA_KERNELS=$K SANITIZE_CASES='kda_split_T200|kda_split_varlen' OUT=$OUT/san_seg timeout 100 bash bench/sanitize.sh | tail -8
	OUT=$OUT/ab ROUNDS=2 ITERS=10 timeout 300 sh bench/kda_state_ab.sh
	K3=$OUT/k3
	rm -rf "$K3" && mkdir -p "$K3" && cp kernels/kda/*.cake "$K3/" && patch -s -d "$K3" -p3 < bench/proto/s15/statet_3stage.patch &&
		F=$K3/kda_prefill_split_lb.cake AB_ONLY='H(64|96)_(1seq|8x1024)$' OUT=$OUT/ab3 ROUNDS=1 ITERS=10 timeout 120 sh bench/kda_state_ab.sh
fi
if [ "$PART" = all ] || [ "$PART" = 2 ]; then
	for r in 1 2; do
		for s in "--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192" "--shape B=8,H=64,T=1024"; do
			for v in main seg; do
				kd=()
				[ $v = seg ] && kd=(--kernels "$K")
				# shellcheck disable=SC2086
				echo "$v $s: $(timeout 120 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
					grep -E 'time|stages|check|FAIL|error' | tr '\n' ' ')"
			done
		done
	done > "$OUT/prep_ab.log" 2>&1
	sed -E 's/ +/ /g' "$OUT/prep_ab.log"
fi
if [ "$PART" = all ] || [ "$PART" = 3 ]; then
	OUT=$OUT/lib timeout 500 bash bench/library.sh check kda 2>&1 | tail -30
fi
