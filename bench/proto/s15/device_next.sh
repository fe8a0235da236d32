#!/bin/bash
# bench/proto/s15/device_next.sh — ready for the next session's device calls (session 15 had no
# GPU lent). Four parts; each fits one call's 600 s (`PART=state`, `PART=prep`, `PART=san`,
# `PART=lib`; the first two decide what to adopt, so run them first):
#   san. compute-sanitizer (memcheck, racecheck, synccheck) over the split prefill's chains: the
#      app's default (the v3b prep of session 13 has not been through it), the transposed state
#      kernels, and both prep candidates of part prep.
#   state. bench/kda_state_ab.sh: kda_split_state_lb against kda_split_statet_lb (S^T and v'^T as
#      wgmma register operands, no shared-memory round trip per chunk step) on the paper's
#      shapes, T = 32768 H = 32 and the bf16-state pair, alternating, two rounds; then the same
#      with the transposed kernel's ring at 3 stages (bench/proto/s15/statet_3stage.patch, 206 KB
#      of shared memory, 0 spills, emulated) at H = 64 and 96, one sequence and 8 x 1024.
#   prep. three prep candidates and one combination against main, alternating, two rounds, each run checked against the
#      float64 recurrence:
#      seg: `o = cumsum(x, 0, 16)` (bench/proto/s15/prep_segscan.patch: each row's in-block
#           prefix from a segmented scan, a warp's own rows, instead of three row picks through
#           shared memory with two named barriers each; the emulator gives main's errors to the
#           third digit on every split case);
#      2r:  two rounds of A_kk / A_qk instead of four (bench/proto/s15/prep_2rounds.patch): the
#           references in the middle of each 32-row half, G at rows 15 and 47, keep every factor
#           within e^-80 .. e^80 for lambda >= -5 as the four 16-row starts did; the pairs past
#           the diagonal may overflow and are dropped by the selects. 3 row picks instead of 6,
#           2 rounds of products instead of 4, 256 fewer SASS instructions; 0 spills; on the
#           emulator o rel err 4.08e-3 .. 4.50e-3 at lambda = -5 (main 4.07e-3 .. 4.30e-3),
#           every split case within tolerance; the cost model predicts the prep 1167 -> 791 us
#           at H = 64, T = 8192 (it counts issued operations; the GPU decides). Watch the
#           errors at the paper shapes against the 8e-3 tolerance (main: 5.9-6.2e-3 against FLA).
#      bs:  the solve by halves (bench/proto/s15/prep_blocksolve.patch): `trisolve(akk, 32)`, the
#           inverses of the two diagonal 32-row blocks (each column's sweep stops at its half: the
#           upper half's chain of 16 four-row blocks becomes 8), then the lower-left block from two
#           register-A products, X10 = -Y11 L10 Y00, through two 8 KB tiles (223 KB of shared
#           memory, 0 spills). The solve was 20 % of the prep's samples (session 13 call 6). On the
#           emulator main's errors at lambda = -5 to the fourth digit, and every split case passes;
#           without the correction the weak-gate case fails (state rel err 0.11).
#      2rbs: both (the two patches in turn; emulated: the 2r errors, every split case passes).
#   lib. the kda library's checks on the GPU (bench/library.sh check kda: the C smoke over every
#      route against a float64 recurrence, cake_kernels.kda from torch on held-out shapes).
# Logs in $OUT; each part prints its table last.
set -u
PART=${PART:-all}
OUT=${OUT:-/tmp/cake-s15next}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
K=$OUT/kp
rm -rf "$K" && mkdir -p "$K" && cp kernels/kda/*.cake "$K/" && patch -s -d "$K" -p3 < bench/proto/s15/prep_segscan.patch || exit 1
K2=$OUT/k2r
rm -rf "$K2" && mkdir -p "$K2" && cp kernels/kda/*.cake "$K2/" && patch -s -d "$K2" -p3 < bench/proto/s15/prep_2rounds.patch || exit 1
KB=$OUT/kbs
rm -rf "$KB" && mkdir -p "$KB" && cp kernels/kda/*.cake "$KB/" && patch -s -d "$KB" -p3 < bench/proto/s15/prep_blocksolve.patch || exit 1
KC=$OUT/k2rbs
rm -rf "$KC" && mkdir -p "$KC" && cp kernels/kda/*.cake "$KC/" && patch -s -d "$KC" -p3 < bench/proto/s15/prep_2rounds.patch &&
	patch -s -d "$KC" -p3 < bench/proto/s15/prep_blocksolve.patch || exit 1
if [ "$PART" = all ] || [ "$PART" = san ]; then
	SANITIZE_CASES='kda_split|kda_prefill_split' OUT=$OUT/san timeout 280 bash bench/sanitize.sh | tail -12
	KDA_KERNELS=$K SANITIZE_CASES='kda_split_T200|kda_split_varlen' OUT=$OUT/san_seg timeout 100 bash bench/sanitize.sh | tail -8
	KDA_KERNELS=$K2 SANITIZE_CASES='kda_split_T200|kda_split_varlen' OUT=$OUT/san_2r timeout 100 bash bench/sanitize.sh | tail -8
	KDA_KERNELS=$KB SANITIZE_CASES='kda_split_T200|kda_split_varlen' OUT=$OUT/san_bs timeout 100 bash bench/sanitize.sh | tail -8
fi
if [ "$PART" = all ] || [ "$PART" = state ]; then
	OUT=$OUT/ab ROUNDS=2 ITERS=10 timeout 300 sh bench/kda_state_ab.sh
	K3=$OUT/k3
	rm -rf "$K3" && mkdir -p "$K3" && cp kernels/kda/*.cake "$K3/" && patch -s -d "$K3" -p3 < bench/proto/s15/statet_3stage.patch &&
		F=$K3/kda_prefill_split_lb.cake AB_ONLY='H(64|96)_(1seq|8x1024)$' OUT=$OUT/ab3 ROUNDS=1 ITERS=10 timeout 120 sh bench/kda_state_ab.sh
fi
if [ "$PART" = all ] || [ "$PART" = prep ]; then
	for r in 1 2; do
		for s in "--shape B=1,H=64,T=8192" "--seqlens 1300,547,2048,963,271,3063 --shape H=64" "--shape B=1,H=96,T=8192" "--shape B=8,H=64,T=1024"; do
			for v in main seg 2r bs 2rbs; do
				kd=()
				[ $v = seg ] && kd=(--kernels "$K")
				[ $v = 2r ] && kd=(--kernels "$K2")
				[ $v = bs ] && kd=(--kernels "$KB")
				[ $v = 2rbs ] && kd=(--kernels "$KC")
				# shellcheck disable=SC2086
				echo "$v $s: $(timeout 120 bin/cake kda --mode prefill --lower-bound -5 $s --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
					grep -E 'time|stages|check|FAIL|error' | tr '\n' ' ')"
			done
		done
	done > "$OUT/prep_ab.log" 2>&1
	sed -E 's/ +/ /g' "$OUT/prep_ab.log"
fi
if [ "$PART" = all ] || [ "$PART" = lib ]; then
	OUT=$OUT/lib timeout 500 bash bench/library.sh check kda 2>&1 | tail -30
fi
