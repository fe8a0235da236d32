#!/bin/sh
# tests/lower/emu.sh — the SIMT kernels of kernels/kda/, the accumulator-layout corpus
# kernels, the chunked KDA prefill sketch, the GEMM library's tiles and the k-means assign
# kernels executed on the CPU emulator.
#
#   CAKE=bin/cake sh tests/lower/emu.sh
#
# For each case: `cake build --emit=cuda` lowers one kernel, tools/emu/mkdriver.py
# wraps the generated CUDA in a C++ driver over tools/emu/simt_emu.h (threads as
# coroutines, shuffles and named barriers emulated), tests/lower/kda_emu.c writes
# seeded inputs (NaN-poisoned outputs), the driver runs the grid, and kda_emu
# checks O and the final states against the float64 recurrence with the family's
# tolerance (and tests/corpus/good/tile_ops.cake against tests/lower/tile_emu.c,
# tests/corpus/good/acc_global_loads.cake against tests/lower/acc_emu.c, and the other
# accumulator-layout corpus kernels acc_*.cake the same way: scans, row values across
# warpgroups, trisolve, and wgmma through the emulator's model of the instruction).
# So the thread-tile layouts, shuffle trees and index arithmetic of the
# generated code are executed and checked, not just compiled. A deliberately
# broken kernel (the decay dropped) must fail. Skipped with a note when g++ is
# missing. The last line is "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
SUITE=emulation TAG=cake-emu
. tests/lower/emu.inc
for t in kda_emu tile_emu acc_emu; do emu_checker "$t"; done

# run FILE KERNEL DECODE B T H N VARLEN LB BF16 SEED [EXPECT]: EXPECT 0 pass (default), 1 must fail
run() {
	f=$1 k=$2 dec=$3 B=$4 T=$5 H=$6 N=$7 vl=$8 lb=$9 b16=${10} seed=${11} want=${12:-0}
	d=$TMP/$k.$seed
	mkdir -p "$d"
	label="$k B=$B T=$T H=$H N=$N"; [ "$lb" != 0 ] && label="$label lb=$lb"
	if ! "$CAKE" build "$f" --kernel "$k" --emit=cuda -o "$d/k.cu" 2>"$d/err"; then
		bad "$label: cake build failed"; sed 's/^/    /' "$d/err" | head -10; return
	fi
	[ -n "${MUTATE:-}" ] && sed -i "$MUTATE" "$d/k.cu"
	if ! python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" 2>"$d/err" ||
	   ! g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" 2>"$d/err"; then
		bad "$label: the emulator driver does not build"; sed 's/^/    /' "$d/err" | head -10; return
	fi
	"$TMP/kda_emu" gen "$d" "$B" "$T" "$H" "$N" "$vl" "$lb" "$b16" "$seed" || { bad "$label: gen"; return; }
	if ! "$d/drv" "$d" B="$B" T="$T" H="$H" N="$N" N1=$((N + 1)) lower_bound="$lb" >"$d/run" 2>&1; then
		bad "$label: the emulated kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	"$TMP/kda_emu" check "$d" "$B" "$T" "$H" "$N" "$vl" "$lb" "$b16" "$seed" "$dec" >"$d/chk" 2>&1
	rc=$?
	if [ "$want" -eq 0 ] && [ $rc -eq 0 ]; then ok "$label: $(cat "$d/chk")"
	elif [ "$want" -eq 1 ] && [ $rc -eq 1 ]; then ok "$label (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$label: check exited $rc (wanted $want): $(cat "$d/chk")"; fi
	rm -rf "$d"
}

D=kernels/kda
run $D/kda_decode.cake kda_decode 1 3 1 2 3 0 0 0 1
run $D/kda_decode.cake kda_decode 1 2 5 3 2 0 0 0 2            # a speculative window of 5 tokens
run $D/kda_decode.cake kda_decode_lb 1 2 2 2 2 0 -5 0 3
run $D/kda_decode.cake kda_decode_v16 1 2 3 2 2 0 0 0 19
run $D/kda_decode_bf16.cake kda_decode_bf16 1 2 3 2 2 0 0 1 4
run $D/kda_decode_bf16.cake kda_decode_bf16_lb 1 1 1 3 1 0 -2.5 1 5
run $D/kda_recurrent.cake kda_recurrent 0 2 40 1 2 0 0 0 6
run $D/kda_recurrent.cake kda_recurrent_lb 0 1 33 2 1 0 -3 0 7
run $D/kda_recurrent.cake kda_recurrent_varlen 0 1 60 2 4 1 0 0 8
run $D/kda_recurrent.cake kda_recurrent_varlen_lb 0 1 45 1 3 1 -4 0 9
run $D/kda_prefill.cake kda_prefill 0 2 37 2 2 0 0 0 13
run $D/kda_prefill.cake kda_prefill 0 1 1 1 1 0 0 0 14            # one token: the clamped next index
run $D/kda_prefill.cake kda_prefill_lb 0 1 29 1 1 0 -5 0 15
run $D/kda_prefill.cake kda_prefill_varlen 0 1 70 2 5 1 0 0 16
run $D/kda_prefill.cake kda_prefill_varlen_lb 0 1 40 1 4 1 -2 0 17
run $D/kda_prefill.cake kda_prefill_v16 0 2 23 2 2 0 0 0 18
# the generic thread-tile primitives (colsum, sum of row vectors and tiles, row_idx/col_idx)
d=$TMP/tile_ops
mkdir -p "$d"
if "$CAKE" build tests/corpus/good/tile_ops.cake --emit=cuda -o "$d/k.cu" 2>"$d/err" && python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" &&
   g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" && "$TMP/tile_emu" gen "$d" 64 3 && "$d/drv" "$d" N=64 NB=2 >"$d/run" 2>&1 &&
   "$TMP/tile_emu" check "$d" 64 3 >"$d/chk" 2>&1; then
	ok "tile_ops N=64: $(cat "$d/chk")"
else
	bad "tile_ops N=64: $(cat "$d/err" "$d/run" "$d/chk" 2>/dev/null | head -5)"
fi
# global loads into accumulator-layout fragments (split n, strided rows, a replicated row vector)
d=$TMP/acc_loads
mkdir -p "$d"
if "$CAKE" build tests/corpus/good/acc_global_loads.cake --emit=cuda -o "$d/k.cu" 2>"$d/err" && python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" &&
   g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" && "$TMP/acc_emu" gen "$d" 2 3 7 && "$d/drv" "$d" B=2 H=3 >"$d/run" 2>&1 &&
   "$TMP/acc_emu" check "$d" 2 3 7 >"$d/chk" 2>&1; then
	ok "acc_global_loads B=2 H=3: $(cat "$d/chk")"
else
	bad "acc_global_loads B=2 H=3: $(cat "$d/err" "$d/run" "$d/chk" 2>/dev/null | head -5)"
fi
# accumulator-layout tiles through shared memory (a swizzled bf16 buffer, a plain f32 one)
d=$TMP/acc_smem
mkdir -p "$d"
if "$CAKE" build tests/corpus/good/acc_smem_roundtrip.cake --emit=cuda -o "$d/k.cu" 2>"$d/err" && python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" &&
   g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" && "$TMP/acc_emu" gen-smem "$d" 2 5 && "$d/drv" "$d" B=2 >"$d/run" 2>&1 &&
   "$TMP/acc_emu" check-smem "$d" 2 5 >"$d/chk" 2>&1; then
	ok "acc_smem_roundtrip B=2: $(cat "$d/chk")"
else
	bad "acc_smem_roundtrip B=2: $(cat "$d/err" "$d/run" "$d/chk" 2>/dev/null | head -5)"
fi
# acc_case NAME FILE MODE B SEED VARS...: an accumulator-layout corpus kernel (KERNEL=name picks
# one of the file's kernels) against tests/lower/acc_emu.c (acc_emu gen-MODE / check-MODE DIR B
# SEED; the driver gets B and VARS)
acc_case() {
	nm=$1 f=$2 mode=$3 B=$4 seed=$5
	shift 5
	d=$TMP/$nm
	mkdir -p "$d"
	[ -n "${MUTATE:-}" ] && mut=1 || mut=0
	if "$CAKE" build "$f" ${KERNEL:+--kernel "$KERNEL"} --emit=cuda -o "$d/k.cu" 2>"$d/err" && { [ $mut -eq 0 ] || sed -i "$MUTATE" "$d/k.cu"; } &&
	   "$CAKE" build "$f" ${KERNEL:+--kernel "$KERNEL"} --emit=plan -o "$d/plan" 2>>"$d/err" &&
	   python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" --plan "$d/plan" && g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" 2>>"$d/err" &&
	   "$TMP/acc_emu" "gen-$mode" "$d" "$B" "$seed" && "$d/drv" "$d" B="$B" "$@" >"$d/run" 2>&1; then
		"$TMP/acc_emu" "check-$mode" "$d" "$B" "$seed" >"$d/chk" 2>&1
		rc=$?
	else
		rc=2
	fi
	if [ $mut -eq 0 ] && [ $rc -eq 0 ]; then ok "$nm B=$B: $(cat "$d/chk")"
	elif [ $mut -eq 1 ] && [ $rc -eq 1 ]; then ok "$nm B=$B (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$nm B=$B: $(cat "$d/err" "$d/run" "$d/chk" 2>/dev/null | head -5)"; fi
	rm -rf "$d"
}
# TMA loads into the two column panels of a 128B-swizzled [64, 128] buffer, read back in the
# accumulator layout split by columns (tests/corpus/good/tma_panels.cake)
acc_case tma_panels tests/corpus/good/tma_panels.cake panels 2 45
# ... and it must be able to fail: the second box lands on the first panel
MUTATE='s|smem_xs + 8192u /\* panel 1 \*/|smem_xs + 0u|' acc_case tma_panels tests/corpus/good/tma_panels.cake panels 1 46
# accumulator-layout loads and stores of one column panel of a wider shared buffer (a loop
# variable's multiple and constant offsets; tests/corpus/good/acc_smem_panels.cake), and a
# mutation that must fail: the loop's panel offset dropped
acc_case acc_smem_panels tests/corpus/good/acc_smem_panels.cake cpanels 2 47
MUTATE='s/(int)((p \* 64)) + //' acc_case acc_smem_panels tests/corpus/good/acc_smem_panels.cake cpanels 1 48
# cumsum(x, 0) over accumulator-layout tiles: split m (blocks across warpgroups), split n, unsplit, i32
acc_case acc_scan tests/corpus/good/acc_scan.cake scan 2 11
# ... and it must be able to fail: the second row half no longer adds the first half's total
MUTATE='s/v_\[a_\] += __shfl_sync(0xffffffffu, v_\[a_ - 2\]/v_[a_] += 0.0f * __shfl_sync(0xffffffffu, v_[a_ - 2]/' acc_case acc_scan tests/corpus/good/acc_scan.cake scan 1 12
# ... and a segmented scan (S = 32) that adds the blocks above it in other segments too
MUTATE='s/if (b_ < blk_ \&\& b_ >= blk_ \/ 2 \* 2)/if (b_ < blk_)/' acc_case acc_scan tests/corpus/good/acc_scan.cake scan 1 53
# row values across warpgroups: l2norm, split-n row reductions, split-n column vectors, relayouts
acc_case acc_rows tests/corpus/good/acc_rows.cake rows 2 13
# ... and it must be able to fail: the other warpgroup's partial row results ignored
MUTATE='s/const float x_ = rw\([0-9]*\)_\[w_\]/const float x_ = 0.0f * rw\1_[w_]/' acc_case acc_rows tests/corpus/good/acc_rows.cake rows 1 14
# trisolve: forward substitution through the lowering's shared scratch (unit and non-unit diagonals)
KERNEL=acc_trisolve acc_case acc_trisolve tests/corpus/good/acc_trisolve.cake tri 2 15
# ... and it must be able to fail: the diagonal no longer divides
KERNEL=acc_trisolve MUTATE='s|rd_\[m_\] = __fdividef(1.0f, |rd_[m_] = 1.0f + 0.0f * (|' acc_case acc_trisolve tests/corpus/good/acc_trisolve.cake tri 1 16
KERNEL=acc_trisolve EMU_DEFS=-DCAKE_COMPACT=1 MUTATE='s|const float ri_ = __fdividef(1.0f, |const float ri_ = 1.0f + 0.0f * (|' acc_case acc_trisolve tests/corpus/good/acc_trisolve.cake tri 1 16
# the same in passes (the scratch that fits next to a 200 KB buffer)
KERNEL=acc_trisolve_passes acc_case acc_trisolve_passes tests/corpus/good/acc_trisolve.cake tri 2 19
# the register-lean sweep (a loop, not unrolled) that the JIT stage compiles with -DCAKE_COMPACT=1
# when the default one spills, in both kernels
KERNEL=acc_trisolve EMU_DEFS=-DCAKE_COMPACT=1 acc_case acc_trisolve_compact tests/corpus/good/acc_trisolve.cake tri 2 15
KERNEL=acc_trisolve_passes EMU_DEFS=-DCAKE_COMPACT=1 acc_case acc_trisolve_passes_compact tests/corpus/good/acc_trisolve.cake tri 2 19
# trisolve(L) = L^-1: B the identity, the blocks above each warp's first column skipped, the
# zeros above the diagonal written by the read-back; the role at warp 4; in passes too
KERNEL=acc_triinv acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 2 47
KERNEL=acc_triinv_passes acc_case acc_triinv_passes tests/corpus/good/acc_trisolve.cake inv 2 48
KERNEL=acc_triinv EMU_DEFS=-DCAKE_COMPACT=1 acc_case acc_triinv_compact tests/corpus/good/acc_trisolve.cake inv 2 47
KERNEL=acc_triinv_passes EMU_DEFS=-DCAKE_COMPACT=1 acc_case acc_triinv_passes_compact tests/corpus/good/acc_trisolve.cake inv 2 48
# ... and it must be able to fail: a warp that skips one block too many (the compact form's loop starts at bs_)
KERNEL=acc_triinv EMU_DEFS=-DCAKE_COMPACT=1 MUTATE='s|) / 4);   /\* the warp|) / 4 + 1);   /* the warp|' acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 1 49
# ... and the unrolled form's second sweep (warps whose columns start in the lower half) too
KERNEL=acc_triinv MUTATE='s|for (int b_ = 8; b_ < 16; ++b_) {|for (int b_ = 9; b_ < 16; ++b_) {|' acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 1 50
# ... and trisolve(L, 32)'s upper-half columns sweeping one block short of the middle
KERNEL=acc_triinv MUTATE='s|for (int b_ = 0; b_ < 8; ++b_) {|for (int b_ = 0; b_ < 7; ++b_) {|' acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 1 54
# ... and trisolve(L, 16)'s third block sweeping one row block short (the unrolled form), or
# the last row block of every diagonal block left without the earlier blocks' updates (the
# compact form; a sweep that merely ends early would read back the scratch's values from the
# earlier inverses, which agree on the diagonal blocks)
KERNEL=acc_triinv MUTATE='s|for (int b_ = 8; b_ < 12; ++b_) {|for (int b_ = 8; b_ < 11; ++b_) {|' acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 1 55
KERNEL=acc_triinv EMU_DEFS=-DCAKE_COMPACT=1 MUTATE='s|if (b_ + m_ < be_) {|if (b_ + m_ < be_ - 1) {|' acc_case acc_triinv tests/corpus/good/acc_trisolve.cake inv 1 56
# wgmma operands: 128-wide panels, K-major over two panels, N-major split by panels, M-major A,
# an N-major B of two atoms in one instruction (LBO), and the one-span forms run on an H200
acc_case acc_wgmma tests/corpus/good/acc_wgmma.cake wgmma 2 17
# ... and it must be able to fail: the K steps no longer move to the second panel
MUTATE='s|kk_ / 4 \* 8192u + kk_ % 4 \* 32u|kk_ * 32u|' acc_case acc_wgmma tests/corpus/good/acc_wgmma.cake wgmma 1 18
# ... and a transposed store's second element of a pair written one column over instead of one row
MUTATE='s|o_\[(256)\] = (v_\[1\]);|o_[1] = (v_[1]);|' acc_case acc_wgmma tests/corpus/good/acc_wgmma.cake wgmma 1 51
# ... and `-=` from registers calling the adding wrapper instead of the subtracting one
MUTATE='s|bf16_rs_tb_n(c1 + |bf16_rs_tb(c1 + |' acc_case acc_wgmma tests/corpus/good/acc_wgmma.cake wgmma 1 52
# an N-major B read from inside a swizzle atom: four warpgroups of 32 columns over 64-column
# atoms (tests/corpus/good/acc_wgmma_nsub.cake; the layout ran correct on an H100, session 21)
acc_case acc_wgmma_nsub tests/corpus/good/acc_wgmma_nsub.cake nsub 2 65
# ... and it must be able to fail: the odd warpgroups start at their atom's first column
MUTATE='s| + role_wg % 2u \* 64u;| + 0u;|' acc_case acc_wgmma_nsub tests/corpus/good/acc_wgmma_nsub.cake nsub 1 66
# the emulator's TMA, mbarrier and wgmma models on a GEMM that ran correct on an H200 (a 6-stage
# TMA ring, K-major wgmma, two consumer warpgroups)
acc_case gemm_128x128_s6 tests/corpus/good/gemm_128x128_s6.cake gemm 256 31 M=256 N=256 K=384
# the library's 128x192 tiles: m64n192 wgmma, a 192-row B box, N = 384 (two tiles)
acc_case gemm_128x192 kernels/gemm/gemm_ws_128x192_s5.cake gemm384 256 36 M=256 N=384 K=384
# ... and it must be able to fail: the stores stop after 128 of the tile's 192 columns
MUTATE='s|j_ < 24; ++j_|j_ < 16; ++j_|' acc_case gemm_128x192 kernels/gemm/gemm_ws_128x192_s5.cake gemm384 128 37 M=128 N=384 K=384
# the library's 64x128 tiles: one consumer warpgroup, an 8-stage ring
acc_case gemm_64x128 kernels/gemm/gemm_ws_64x128_s8.cake gemm 192 38 M=192 N=256 K=384
# ... and it must be able to fail: the stores stop after 64 of the tile's 128 columns
MUTATE='s|j_ < 16; ++j_|j_ < 8; ++j_|' acc_case gemm_64x128 kernels/gemm/gemm_ws_64x128_s8.cake gemm 64 39 M=64 N=256 K=384
# the library's tiles with the epilogue through shared memory and TMA stores (kernels/gemm/gemm_tma.cake):
# persistent grids on 3 emulated SMs, so each CTA stores several tiles through one staging buffer
# and the derived wait for a store's read runs between them
F=kernels/gemm/gemm_tma.cake
KERNEL=gemm_bf16_tma_p128x256 acc_case gemm_tma_p128x256 $F gemm 640 41 M=640 N=256 K=384
KERNEL=gemm_bf16_tma_128x256 acc_case gemm_tma_128x256 $F gemm 256 42 M=256 N=256 K=384
KERNEL=gemm_bf16_tma_p128x128 acc_case gemm_tma_p128x128 $F gemm 512 43 M=512 N=256 K=384
KERNEL=gemm_bf16_tma_128x192 acc_case gemm_tma_128x192 $F gemm384 256 44 M=256 N=384 K=384
KERNEL=gemm_bf16_tma_64x128 acc_case gemm_tma_64x128 $F gemm 192 47 M=192 N=256 K=384
# 128x192 tiles over an N that 192 does not divide: the last column of CTAs reads B and writes C
# through clipped boxes (`clip`): zero rows of B past N, the columns of C past N dropped (N = 200:
# the second CTA has 8 valid columns and its third store panel is wholly outside C; N = 1000)
GEMM_N=200 KERNEL=gemm_bf16_tma_128x192 acc_case gemm_tma_128x192_clip $F gemm 256 58 M=256 N=200 K=384
GEMM_N=1000 GEMM_K=128 KERNEL=gemm_bf16_tma_128x192 acc_case gemm_tma_128x192_clip $F gemm 128 59 M=128 N=1000 K=128
# persistent 128x160 tiles: five 32-column store panels of a 64B-swizzled staging tile
GEMM_N=320 KERNEL=gemm_bf16_tma_p128x160 acc_case gemm_tma_p128x160 $F gemm 384 60 M=384 N=320 K=384
# the k-means assign on a persistent grid (3 emulated SMs walk 2 batches x 4 point tiles): the
# point tile in a 2-stage ring of its own, read by the wgmmas of the inner loop over centroid
# tiles (the lowering's nested pipelined loops), labels against the float64 argmin
ASSIGN_N=1024 ASSIGN_K=512 KERNEL=kmeans_assign acc_case kmeans_assign kernels/kmeans/assign.cake assign 2 62 B=2 N=1024 K=512
ASSIGN_F16=1 ASSIGN_N=384 ASSIGN_K=640 KERNEL=kmeans_assign_f16 acc_case kmeans_assign_f16 kernels/kmeans/assign_f16.cake assign 1 63 B=1 N=384 K=640
# ... and it must be able to fail: the consumers read the point stage of the previous tile
MUTATE='s|smem_x0 + 32768u \* xp_stage + role_wg|smem_x0 + 32768u * (xp_stage ^ 1u) + role_wg|' ASSIGN_N=1024 ASSIGN_K=512 KERNEL=kmeans_assign \
	acc_case kmeans_assign kernels/kmeans/assign.cake assign 2 64 B=2 N=1024 K=512
# 64x96 tiles: three 32-column store panels, one consumer warpgroup
KERNEL=gemm_bf16_tma_64x96 acc_case gemm_tma_64x96 $F gemm384 192 61 M=192 N=384 K=384
# ... and it must be able to fail: without the derived wait before the staging buffer is
# rewritten, a tile's TMA stores read the next tile's values (the emulator reads a store's
# source only when its thread waits for it, the latest moment the hardware allows)
KERNEL=gemm_bf16_tma_p128x256 MUTATE='/issued before have read it before it is rewritten/{n;n;s|bulk_wait_read<0>();|(void)0;|}' \
	acc_case gemm_tma_p128x256 $F gemm 640 48 M=640 N=256 K=384
# ... and without the wait at the end of the role, the CTA exits with a store still reading
# shared memory, which the emulator reports as an error of the run
d=$TMP/gemm_tma_exit
mkdir -p "$d"
if "$CAKE" build $F --kernel gemm_bf16_tma_128x256 --emit=cuda -o "$d/k.cu" 2>"$d/err" &&
   sed -i '/before the CTA exits/{n;n;s|bulk_wait_read<0>();|(void)0;|}' "$d/k.cu" &&
   "$CAKE" build $F --kernel gemm_bf16_tma_128x256 --emit=plan -o "$d/plan" 2>>"$d/err" &&
   python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" --plan "$d/plan" &&
   g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" 2>>"$d/err" &&
   "$TMP/acc_emu" gen-gemm "$d" 256 49; then
	if "$d/drv" "$d" B=256 M=256 N=256 K=384 >"$d/run" 2>&1; then
		bad "gemm_tma_128x256 without the exit wait: the emulated run succeeded"
	elif grep -q 'never waited for' "$d/run"; then
		ok "gemm_tma_128x256 without the exit wait (broken on purpose) fails: $(grep -o 'exits with a TMA store.*' "$d/run" | head -1)"
	else
		bad "gemm_tma_128x256 without the exit wait failed otherwise: $(head -3 "$d/run")"
	fi
else
	bad "gemm_tma_128x256 exit-wait case does not build: $(head -5 "$d/err")"
fi
rm -rf "$d"
# ... and with the second panel's box stored from the first panel
KERNEL=gemm_bf16_tma_128x256 MUTATE='s|smem_cs + 16384u /\* panel 1 \*/|smem_cs + 0u|' acc_case gemm_tma_128x256 $F gemm 128 50 M=128 N=256 K=384
# the split-K route of the GEMM library: uneven slices of K into f32 partials, then their sum
KERNEL=gemm_bf16_splitk acc_case gemm_splitk kernels/gemm/gemm_splitk.cake splitk 256 33 M=256 N=256 K=1088 S=2
KERNEL=gemm_splitk_reduce acc_case gemm_splitk_reduce kernels/gemm/gemm_splitk.cake reduce 256 34 M=256 N=256 S=3
# ... and it must be able to fail: a slice that stops one K step early
KERNEL=gemm_bf16_splitk MUTATE='s|k < ((ks + 1) \* (K / 64) / S)|k < ((ks + 1) * (K / 64) / S - 1)|g' acc_case gemm_splitk kernels/gemm/gemm_splitk.cake splitk 128 35 M=128 N=256 K=1088 S=2
# the stream-K route (kernels/gemm/gemm_streamk.cake): gemm_bf16_streamk shares the K steps of
# the 256-wide column blocks out evenly, IPC per CTA, storing whole tiles into C and the pieces
# of cut tiles into P; gemm_streamk_fixup sums the pieces into C. Two drivers over one
# directory (the first one's C and P renamed to the second one's inputs), checked against
# float64 products. streamk_run M N K IPC SEED [WANT]
# With SK_W=128 it runs the 128x128 pair of kernels/gemm/gemm_streamk_128x128.cake (dims NGN, IPCN).
streamk_run() {
	M=$1 N=$2 K=$3 ipc=$4 seed=$5 want=${6:-0}
	w=${SK_W:-256}
	if [ "$w" = 128 ]; then skf=kernels/gemm/gemm_streamk_128x128.cake skk=gemm_bf16_streamk128 skx=gemm_streamk128_fixup sfx=N
	else skf=kernels/gemm/gemm_streamk.cake skk=gemm_bf16_streamk skx=gemm_streamk_fixup sfx=; fi
	ng=$(( (N / w * (K / 64) + ipc - 1) / ipc ))
	label="$(basename $skf .cake) M=$M N=$N K=$K IPC=$ipc NG=$ng"
	d=$TMP/streamk.$seed
	mkdir -p "$d"
	chain_drivers $skf "$d" "$label" $skk $skx || return
	"$TMP/acc_emu" gen-streamk "$d" "$M" "$N" "$K" "$ng" "$seed" || { bad "$label: gen"; return; }
	if ! "$d/$skk" "$d" M="$M" N="$N" K="$K" NG$sfx="$ng" IPC$sfx="$ipc" >"$d/run" 2>&1; then
		bad "$label: the emulated stream-K kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	mv "$d/C.out" "$d/C.bin"
	mv "$d/P.out" "$d/P.bin"
	if ! "$d/$skx" "$d" M="$M" N="$N" NG$sfx="$ng" IPC$sfx="$ipc" KS=$((K / 64)) >"$d/run" 2>&1; then
		bad "$label: the emulated fixup kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	"$TMP/acc_emu" check-streamk "$d" "$M" "$N" "$K" "$ng" "$seed" >"$d/chk" 2>&1
	rc=$?
	if [ "$want" -eq 0 ] && [ $rc -eq 0 ]; then ok "$label: $(cat "$d/chk")"
	elif [ "$want" -eq 1 ] && [ $rc -eq 1 ]; then ok "$label (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$label: check exited $rc (wanted $want): $(cat "$d/chk")"; fi
	rm -rf "$d"
}
# every tile cut in two (a CTA's last piece in slot 1, the next CTA's first in slot 0)
streamk_run 128 512 640 7 41
# tiles cut in three, CTAs inside one tile, two row blocks
streamk_run 256 512 640 4 42
# whole tiles stored directly beside cut ones, and a last CTA with fewer steps
streamk_run 128 768 256 5 43
# ... and it must be able to fail: the fixup drops the last piece of every cut tile
MUTATE='s|gg < (gb + 1)|gg < gb|' streamk_run 128 512 640 7 44 1
# the 128x128 pair: tiles cut in two and in three, whole tiles beside cut ones, two row blocks
SK_W=128 streamk_run 256 384 640 7 51
SK_W=128 streamk_run 128 512 384 4 52
SK_W=128 streamk_run 256 640 256 6 53
SK_W=128 MUTATE='s|gg < (gb + 1)|gg < gb|' streamk_run 128 512 384 4 54 1
# the chunked KDA prefill sketch, whole: TMA and mbarriers (the emulator's models), the ring,
# every primitive above, against the float64 recurrence with the kda family's tolerance
# (tests/lower/kda_emu.c with `kv`: the sketch's parameter names, K-first states)
# chunk_run FILE B T H LB SEED [WANT]: LB "-" is the K-first sketch (kda_emu's `kv` names, the
# softplus gate), else the lower bound of the family-bound kernel
chunk_run() {
	f=$1 B=$2 T=$3 H=$4 lb=$5 seed=$6 want=${7:-0}
	if [ "$lb" = - ]; then gl=0 kv=kv drvlb= label="$(basename "$f" .cake) B=$B T=$T H=$H"
	else gl=$lb kv= drvlb="lower_bound=$lb" label="$(basename "$f" .cake) B=$B T=$T H=$H lb=$lb"; fi
	label="$label${EMU_DEFS:+ ($EMU_DEFS)}"
	d=$TMP/chunk.$seed
	mkdir -p "$d"
	if ! "$CAKE" build "$f" --emit=cuda -o "$d/k.cu" 2>"$d/err" || ! "$CAKE" build "$f" --emit=plan -o "$d/plan" 2>>"$d/err"; then
		bad "$label: cake build failed"; grep error "$d/err" | head -5; return
	fi
	[ -n "${MUTATE:-}" ] && sed -i "$MUTATE" "$d/k.cu"
	if ! python3 tools/emu/mkdriver.py "$d/k.cu" "$d/drv.cpp" --plan "$d/plan" 2>"$d/err" ||
	   ! g++ -std=c++17 -O1 ${EMU_DEFS:-} -Itools/emu -o "$d/drv" "$d/drv.cpp" 2>"$d/err"; then
		bad "$label: the emulator driver does not build"; sed 's/^/    /' "$d/err" | head -10; return
	fi
	"$TMP/kda_emu" gen "$d" "$B" "$T" "$H" "$B" 0 "$gl" 0 "$seed" 0 $kv || { bad "$label: gen"; return; }
	if ! "$d/drv" "$d" B="$B" T="$T" H="$H" $drvlb >"$d/run" 2>&1; then
		bad "$label: the emulated kernel failed"; sed 's/^/    /' "$d/run" | head -10; return
	fi
	"$TMP/kda_emu" check "$d" "$B" "$T" "$H" "$B" 0 "$gl" 0 "$seed" 0 $kv >"$d/chk" 2>&1
	rc=$?
	if [ "$want" -eq 0 ] && [ $rc -eq 0 ]; then ok "$label: $(cat "$d/chk")"
	elif [ "$want" -eq 1 ] && [ $rc -eq 1 ]; then ok "$label (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$label: check exited $rc (wanted $want): $(cat "$d/chk")"; fi
	rm -rf "$d"
}
chunk() { chunk_run tests/corpus/good/kda_prefill_chunk.cake "$1" "$2" "$3" - "$4" "${5:-0}"; }
chunk 2 256 2 22
chunk 1 128 3 24
# ... and it must be able to fail: the state no longer decays between chunks
MUTATE='s/S\[a_\] = (rl\([0-9]*\)_\[mt_ \* 2 + h_\] \* S\[a_\]);/S[a_] = (S[a_]);/' chunk 1 192 1 25 1
# the same bound to the kda family's interface (kernels/kda/kda_prefill_chunk_lb.cake:
# Q ... Beta, V-first states S^T split by rows, the lower-bound gate), checked by kda_emu with
# the family's names; its per-16-token sub-chunk references keep every factor within e^80
# for lambda in [-5, 0), so lambda = -5 (the paper's and FlashKDA's setting) runs as well as
# -1 and -2.5; the decay S^T Diag(e^G_C) goes through the cols() relayout of a split column
# vector, which the mutation drops
chunk_lb() { chunk_run kernels/kda/kda_prefill_chunk_lb.cake "$@"; }
chunk_lb 1 192 2 -1 26
chunk_lb 2 256 2 -2.5 27
chunk_lb 1 256 2 -5 30
chunk_lb 2 192 3 -5 31
# ptxas spills the default form of this kernel, so on the GPU it runs the compact one
EMU_DEFS=-DCAKE_COMPACT=1 chunk_lb 1 256 2 -5 30
MUTATE='s/S\[a_\] = (S\[a_\] \* cl\([0-9]*\)_\[2 \* j_ + e_\]);/S[a_] = (S[a_]);/' chunk_lb 1 192 1 -1 28 1
# the chunked prefill split in three kernels over chunk slots (kernels/kda/kda_prefill_split_lb.cake):
# split_run in tests/lower/emu.inc
split_run 1 256 2 -5 32
split_run 2 128 3 -2.5 33
# T that 64 does not divide: each sequence's last slot is partial, its window moved down to
# end at T (rows lo .. hi - 1), its rows placed by the tail
split_run 2 200 2 -5 36
# packed sequences (cu_seqlens): lengths of 1, 63, 64 and 65 tokens, sequences ending inside
# a chunk, the last window moved down into the previous sequence's tokens
KDA_EMU_SEQLENS=65,1,63,64,40 split_run 1 233 2 -5 37 0 5
split_run 1 300 2 -2.5 38 0 3
# the bf16-state twin of the state kernel (FlashKDA's interface), fixed-length and packed
split_run 2 192 2 -5 40 0 0 1
KDA_EMU_SEQLENS=65,1,63,64,40 split_run 1 233 2 -5 41 0 5 1
# the transposed state kernels (S^T and v'^T as register A operands, o^T stored transposed):
# fixed-length with a partial last slot, packed sequences, the bf16-state twin
KDA_SPLIT_STATE=kda_split_statet_lb split_run 2 200 2 -5 42
KDA_SPLIT_STATE=kda_split_statet_lb KDA_EMU_SEQLENS=65,1,63,64,40 split_run 1 233 2 -5 43 0 5
KDA_SPLIT_STATE16=kda_split_statet_bf16_lb split_run 2 192 2 -2.5 44 0 0 1
# a weak gate (lambda = -0.1): the state outlives a chunk (at lambda = -1 .. -5 it decays by
# about e^-32 .. e^-160 across 64 tokens, so a wrong cross-chunk term moves only each chunk's
# first outputs), for both state kernels
split_run 1 256 2 -0.1 47
KDA_SPLIT_STATE=kda_split_statet_lb split_run 1 256 2 -0.1 47
# ... and they must be able to fail: S^T w^T added to u^T instead of subtracted (`kn -= a0 @ w0^T`
# calling the adding wrapper)
KDA_SPLIT_STATE=kda_split_statet_lb MUTATE='s/wgmma_m64n64k16_bf16_rs_n(kn /wgmma_m64n64k16_bf16_rs(kn /' split_run 1 256 1 -0.1 48 1
# ... and it must be able to fail: the state kernel without the decay of its first key half
MUTATE='s/sa\[a_\] = (sa\[a_\] \* [a-z0-9_]*\[[^]]*\]);/sa[a_] = (sa[a_]);/' split_run 1 256 1 -1 34 1
# ... and the row picks must carry the sub-chunk references: with every pick read as 0 (the
# chunk's start as the reference) the factors overflow at lambda = -5
MUTATE='s/? rp\([0-9]*\)_\[/? 0.0f * rp\1_[/' split_run 1 256 2 -5 35 1
# ... and the slot masks must hold: with the rows outside a slot kept (the mask's upper bound
# read as 64) a partial slot takes the next sequence's tokens into its chunk
MUTATE='s/ < hi)/ < 64)/g' KDA_EMU_SEQLENS=65,1,63,64,40 split_run 1 233 2 -5 39 1 5
# the default chain: 32-token chunks in the same slots (kda_split32_prep_lb, u^T in UT, e^(G_end)
# per 32-token half, kda_split32_state_lb stepping every 32 tokens, its bf16-state twin):
# lambda = -5 and -2.5, a partial last slot, packed sequences, the weak gate where the state
# outlives a chunk, both state dtypes
split32() {
	KDA_SPLIT_PREP=kda_split32_prep_lb KDA_SPLIT_STATE=kda_split32_state_lb KDA_SPLIT_STATE16=kda_split32_state_bf16_lb \
		KDA_SPLIT_U=UT KDA_SPLIT_NGCE=2 KDA_SPLIT_LABEL=kda_split32 split_run "$@"
}
split32 1 256 2 -5 50
split32 2 128 3 -2.5 51
split32 2 200 2 -5 52
KDA_EMU_SEQLENS=65,1,63,64,40 split32 1 233 2 -5 53 0 5
split32 1 256 2 -0.1 54
split32 2 192 2 -5 55 0 0 1
KDA_EMU_SEQLENS=65,1,63,64,40 split32 1 233 2 -2.5 56 0 5 1
# ... and it must be able to fail: the state's decay between the two halves of a slot dropped
MUTATE='s/sa\[a_\] = (sa\[a_\] \* ga\[/sa[a_] = (sa[a_] + 0.0f * ga[/' split32 1 256 2 -0.1 57 1
# the paired state pass (kda_split32_state2_lb and its bf16 twin: both value halves of a
# (head, sequence) on one CTA's two warpgroups, split m) after the same prep: a partial last
# slot, packed sequences, the weak gate, the bf16 state
split32p() {
	KDA_SPLIT_PREP=kda_split32_prep_lb KDA_SPLIT_STATE=kda_split32_state2_lb KDA_SPLIT_STATE16=kda_split32_state2_bf16_lb \
		KDA_SPLIT_U=UT KDA_SPLIT_NGCE=2 KDA_SPLIT_LABEL=kda_split32_paired split_run "$@"
}
split32p 2 200 2 -5 60
KDA_EMU_SEQLENS=65,1,63,64,40 split32p 1 233 2 -5 61 0 5
split32p 1 256 2 -0.1 62
KDA_EMU_SEQLENS=65,1,63,64,40 split32p 1 233 2 -2.5 63 0 5 1
# ... and it must be able to fail: the second warpgroup reading the first one's value rows of
# the initial state and of u^T
MUTATE='s/const int row0_ = (int)role_wg \* 64 + /const int row0_ = /' split32p 1 256 2 -0.1 64 1
# the test must be able to fail: a kernel without the decay of the state
MUTATE='s/S\[a_\] = ((S\[a_\] \* al\[j_\]) + /S[a_] = ((S[a_]) + /' run $D/kda_decode.cake kda_decode 1 2 2 2 2 0 0 0 10 1
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
