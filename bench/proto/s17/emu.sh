#!/bin/sh
# bench/proto/s17/emu.sh — the 16-token-chunk candidate chain (kda_prefill_split16_lb.cake:
# kda_split16_prep_lb + kda_split16_state_lb + kda_split_tail; with CHUNK=32 the 32-token one,
# kda_prefill_split32_lb.cake) on the CPU emulator, checked
# against the float64 recurrence by tests/lower/kda_emu.c, as tests/lower/emu.sh checks main's
# split chain (the same cases: lambda = -5 and -2.5, a partial last slot, packed sequences, the
# weak gate lambda = -0.1 where the state outlives a chunk), and a mutation that must fail.
#   CAKE=bin/cake sh bench/proto/s17/emu.sh
set -u
cd "$(dirname "$0")/../../.." || exit 2
SUITE=emulation TAG=cake-s17emu
. tests/lower/emu.inc
emu_checker kda_emu
CH=${CHUNK:-16}   # CHUNK=32: kda_prefill_split32_lb.cake, the 32-token chunks
F=bench/proto/s17/kda_prefill_split${CH}_lb.cake
PK=kda_split${CH}_prep_lb SK=kda_split${CH}_state_lb
chain_drivers() {
	cf=$1 cdir=$2 cl=$3
	shift 3
	for k in "$@"; do
		if ! "$CAKE" build "$cf" --kernel "$k" --emit=cuda -o "$cdir/$k.cu" 2>"$cdir/err" ||
		   ! "$CAKE" build "$cf" --kernel "$k" --emit=plan -o "$cdir/$k.plan" 2>>"$cdir/err"; then
			bad "$cl: cake build $k failed"; grep error "$cdir/err" | head -5; return 1
		fi
		[ -n "${MUTATE:-}" ] && sed -i "$MUTATE" "$cdir/$k.cu"
		if ! python3 tools/emu/mkdriver.py "$cdir/$k.cu" "$cdir/$k.cpp" --plan "$cdir/$k.plan" 2>"$cdir/err" ||
		   ! g++ -std=c++17 -O1 -Itools/emu -o "$cdir/$k" "$cdir/$k.cpp" 2>"$cdir/err"; then
			bad "$cl: the emulator driver of $k does not build"; sed 's/^/    /' "$cdir/err" | head -10; return 1
		fi
	done
}
# split16 B T H LAMBDA SEED [WANT [N]]
split16() {
	B=$1 T=$2 H=$3 lb=$4 seed=$5 want=${6:-0} N=${7:-0}
	vl=0
	[ "$N" -gt 0 ] && vl=1
	[ "$N" -gt 0 ] || N=$B
	label="split$CH B=$B T=$T H=$H lb=$lb${KDA_EMU_SEQLENS:+ seqlens=$KDA_EMU_SEQLENS}"
	d=$TMP/s16.$seed
	mkdir -p "$d"
	chain_drivers "$F" "$d" "$label" $PK $SK kda_split_tail || return
	"$TMP/kda_emu" gen "$d" "$B" "$T" "$H" "$N" "$vl" "$lb" 0 "$seed" 0 || { bad "$label: gen"; return; }
	read -r NS NP < "$d/slots.txt" || { bad "$label: no slot tables"; return; }
	dims="B=$B T=$T H=$H N=$N N1=$((N + 1)) NS=$NS NP=$NP"
	n=$((NS * 64 * H * 128))
	for w in W UT QG KD; do head -c $((2 * n)) /dev/zero | tr '\0' '\377' > "$d/$w.bin"; done
	head -c $((n)) /dev/zero | tr '\0' '\377' > "$d/AQ.bin"
	head -c $((4 * (64 / CH) * NS * H * 128)) /dev/zero | tr '\0' '\377' > "$d/GCE.bin"
	head -c $((2 * NP * 64 * H * 128)) /dev/zero | tr '\0' '\377' > "$d/OP.bin"
	# shellcheck disable=SC2086
	if ! "$d/$PK" "$d" $dims lower_bound="$lb" >"$d/run" 2>&1; then
		bad "$label: the emulated prep kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	for w in W UT QG KD AQ GCE; do mv "$d/$w.out" "$d/$w.bin"; done
	# shellcheck disable=SC2086
	if ! "$d/$SK" "$d" $dims >"$d/run" 2>&1; then
		bad "$label: the emulated state kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	mv "$d/OP.out" "$d/OP.bin"
	mv "$d/O.out" "$d/O.bin"
	# shellcheck disable=SC2086
	if ! "$d/kda_split_tail" "$d" $dims >"$d/run" 2>&1; then
		bad "$label: the emulated tail kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	"$TMP/kda_emu" check "$d" "$B" "$T" "$H" "$N" "$vl" "$lb" 0 "$seed" 0 >"$d/chk" 2>&1
	rc=$?
	if [ "$want" -eq 0 ] && [ $rc -eq 0 ]; then ok "$label: $(cat "$d/chk")"
	elif [ "$want" -eq 1 ] && [ $rc -eq 1 ]; then ok "$label (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$label: check exited $rc (wanted $want): $(cat "$d/chk")"; fi
	rm -rf "$d"
}
split16 1 128 1 -5 32
[ "${QUICK:-0}" = 1 ] && { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit; }
split16 2 128 3 -2.5 33
split16 2 200 2 -5 36
KDA_EMU_SEQLENS=65,1,63,64,40 split16 1 233 2 -5 37 0 5
split16 1 256 2 -0.1 44
# the state's decay between sub-chunks dropped: must fail where the state outlives a chunk
MUTATE='s/sa\[a_\] = (sa\[a_\] \* ga\[/sa[a_] = (sa[a_] + 0.0f * ga[/' split16 1 256 2 -0.1 45 1
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
