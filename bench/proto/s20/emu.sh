#!/bin/sh
# bench/proto/s20/emu.sh — the two-role prep candidate (kda_prep2wg.cake: kda_split32_prep2_lb)
# chained with main's kda_split32_state_lb (or its bf16 twin) and kda_split_tail on the CPU
# emulator, checked against the float64 recurrence by tests/lower/kda_emu.c: the cases
# tests/lower/emu.sh runs for main's 32-token chain (lambda = -5, -2.5, -0.1, a partial last
# slot, packed sequences, both state dtypes) and a mutation of the candidate that must fail.
#   CAKE=bin/cake sh bench/proto/s20/emu.sh      (QUICK=1: one case)
set -u
cd "$(dirname "$0")/../../.." || exit 2
SUITE=emulation TAG=cake-s20emu
. tests/lower/emu.inc
emu_checker kda_emu
sh bench/proto/s20/gen.sh || exit 2
F=$TMP/chain.cake
cat kernels/kda/kda_prefill_split_lb.cake bench/proto/s20/kda_prep2wg.cake > "$F"
cand() {
	KDA_SPLIT_FILE=$F KDA_SPLIT_PREP=kda_split32_prep2_lb KDA_SPLIT_STATE=kda_split32_state_lb \
		KDA_SPLIT_STATE16=kda_split32_state_bf16_lb KDA_SPLIT_U=UT KDA_SPLIT_NGCE=2 KDA_SPLIT_LABEL=prep2wg split_run "$@"
}
cand 1 256 2 -5 50
[ "${QUICK:-0}" = 1 ] && { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit; }
cand 2 128 3 -2.5 51
cand 2 200 2 -5 52
KDA_EMU_SEQLENS=65,1,63,64,40 cand 1 233 2 -5 53 0 5
cand 1 256 2 -0.1 54
cand 2 192 2 -5 55 0 0 1
KDA_EMU_SEQLENS=65,1,63,64,40 cand 1 233 2 -2.5 56 0 5 1
# it must be able to fail: the second panel of q's rewrite left at the first panel's columns
MUTATE='s/(int)((p \* 64)) + /(int)(0) + /' cand 1 256 2 -5 57 1
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
