#!/bin/sh
# bench/proto/s17/emu.sh — the 16-token-chunk candidate chain (kda_prefill_split_cand_lb.cake:
# kda_split16_prep_lb + kda_split16_state_lb + kda_split_tail; the 32-token one, on main since
# session 18, is in tests/lower/emu.sh) on the CPU emulator, checked
# against the float64 recurrence by tests/lower/kda_emu.c, as tests/lower/emu.sh checks main's
# split chain (the same cases: lambda = -5 and -2.5, a partial last slot, packed sequences, the
# weak gate lambda = -0.1 where the state outlives a chunk), and a mutation that must fail.
#   CAKE=bin/cake sh bench/proto/s17/emu.sh
set -u
cd "$(dirname "$0")/../../.." || exit 2
SUITE=emulation TAG=cake-s17emu
. tests/lower/emu.inc
emu_checker kda_emu
CH=16
F=bench/proto/s17/kda_prefill_split16_lb.cake
PK=kda_split${CH}_prep_lb SK=kda_split${CH}_state_lb
# split_cand B T H LAMBDA SEED [WANT [N]]: tests/lower/emu.inc's split_run on the candidate's kernels
split_cand() {
	KDA_SPLIT_FILE=$F KDA_SPLIT_PREP=$PK KDA_SPLIT_STATE=$SK KDA_SPLIT_U=UT KDA_SPLIT_NGCE=$((64 / CH)) \
		KDA_SPLIT_LABEL=split$CH split_run "$@"
}
split_cand 1 128 1 -5 32
[ "${QUICK:-0}" = 1 ] && { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit; }
split_cand 2 128 3 -2.5 33
split_cand 2 200 2 -5 36
KDA_EMU_SEQLENS=65,1,63,64,40 split_cand 1 233 2 -5 37 0 5
split_cand 1 256 2 -0.1 44
# the state's decay between sub-chunks dropped: must fail where the state outlives a chunk
MUTATE='s/sa\[a_\] = (sa\[a_\] \* ga\[/sa[a_] = (sa[a_] + 0.0f * ga[/' split_cand 1 256 2 -0.1 45 1
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
