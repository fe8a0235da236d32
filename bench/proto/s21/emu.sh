#!/bin/sh
# bench/proto/s21/emu.sh — the prep candidates (prep_reorder.cake: kda_split32_prep_r6 and
# kda_split32_prep_r7; prep_w4.cake: kda_split32_prep_w4) chained with main's kda_split32_state_lb (or its bf16 twin) and
# kda_split_tail on the CPU emulator, checked against the float64 recurrence by
# tests/lower/kda_emu.c: the cases tests/lower/emu.sh runs for main's 32-token chain (lambda = -5,
# -2.5, -0.1, a partial last slot, packed sequences, both state dtypes) and a mutation that must fail.
#   CAKE=bin/cake sh bench/proto/s21/emu.sh      (QUICK=1: one case per candidate; CANDS="w4": those only)
set -u
cd "$(dirname "$0")/../../.." || exit 2
SUITE=emulation TAG=cake-s21emu
. tests/lower/emu.inc
emu_checker kda_emu
F=$TMP/chain.cake
cat kernels/kda/kda_prefill_split_lb.cake bench/proto/s21/prep_reorder.cake bench/proto/s21/prep_w4.cake > "$F"
for v in ${CANDS:-r6 r7 w4}; do
	cand() {
		KDA_SPLIT_FILE=$F KDA_SPLIT_PREP=kda_split32_prep_$v KDA_SPLIT_STATE=kda_split32_state_lb \
			KDA_SPLIT_STATE16=kda_split32_state_bf16_lb KDA_SPLIT_U=UT KDA_SPLIT_NGCE=2 KDA_SPLIT_LABEL=prep_$v split_run "$@"
	}
	cand 1 256 2 -5 50
	[ "${QUICK:-0}" = 1 ] && continue
	cand 2 128 3 -2.5 51
	cand 2 200 2 -5 52
	KDA_EMU_SEQLENS=65,1,63,64,40 cand 1 233 2 -5 53 0 5
	cand 1 256 2 -0.1 54
	cand 2 192 2 -5 55 0 0 1
	KDA_EMU_SEQLENS=65,1,63,64,40 cand 1 233 2 -2.5 56 0 5 1
done
# they must be able to fail: r7's u = P v taking the stage of k (the raw keys) instead of v's;
# w4's u and w products reading every warpgroup's columns at the first warpgroup's
mut() {
	MUTATE=$1 KDA_SPLIT_FILE=$F KDA_SPLIT_PREP=kda_split32_prep_$2 KDA_SPLIT_STATE=kda_split32_state_lb KDA_SPLIT_U=UT \
		KDA_SPLIT_NGCE=2 KDA_SPLIT_LABEL=prep_$2-mutated split_run 1 256 2 -5 $3 1
}
if [ "${QUICK:-0}" != 1 ]; then
	case " ${CANDS:-r7 w4} " in *" r7 "*) mut 's/smem_vs + /smem_ks + /' r7 57 ;; esac
	case " ${CANDS:-r7 w4} " in *" w4 "*) mut 's/const u32 b_base_ = \(smem_[kv][ab]\) + role_wg .*;/const u32 b_base_ = \1;/' w4 58 ;; esac
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
