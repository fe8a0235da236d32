#!/bin/sh
# tests/lower/kmeans_emu.sh — the k-means centroid update of `cake library kmeans`, every route,
# executed kernel by kernel on the CPU emulator and checked stage by stage.
#
#   CAKE=bin/cake sh tests/lower/kmeans_emu.sh
#
# The kernels of the update (kernels/kmeans/update_sorted.cake, update_atomic*.cake: the
# histograms, the scans, the fills, the segment sums, the scatter, the divides) are lowered with
# `cake build --emit=cuda` (and --emit=plan, for their tensor maps), wrapped by
# tools/emu/mkdriver.py --unit, compiled once and linked into tests/lower/kmeans_run.cpp. For
# each shape, `cake library kmeans --explain` — the dispatcher the generated library runs —
# names the padded N and K and the route's kernels in launch order; tests/lower/kmeans_emu.c
# writes the padded, NaN-poisoned buffers the library would hold (seeded labels with a heavy
# cluster, empty clusters and labels outside [0, K)), kmeans_run launches the route's kernels
# over them binding buffers by name, and kmeans_emu checks every stage against CPU references
# and the final centroids against the float64 update. The shapes take every route and its
# edges (K = 1, 2, 100, 255..257, 1000, 1024, 2048, 3900, 4095..4097, 5000, 65536; ragged N; D =
# 64 and 128; bf16 and f16; the atomic update too; SIMT_EMU_SHUFFLE reorders CTAs and threads
# in some). Three broken kernels (the chunked scan's carry read one slot early; the fill's
# slot reservation dropped; the divide reading its TMA tiles without waiting) must fail.
# Skipped with a note when g++ or python3 is missing. The last line is "N passed, N
# failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
SUITE="k-means emulation" TAG=cake-kmemu
. tests/lower/emu.inc
emu_checker kmeans_emu
NJOBS=$(nproc 2>/dev/null || echo 2)
KM=kernels/kmeans

# unit NAME DIR [SED]: lower kernel NAME (found in kernels/kmeans/*.cake) into DIR/NAME.o,
# optionally with the generated CUDA edited by SED (a deliberately broken kernel)
unit() {
	n=$1 d=$2 mut=${3:-}
	f=$(grep -l "^kernel $n target" $KM/*.cake | head -1)
	[ -n "$f" ] || { echo "no kernel $n in $KM" >"$d/$n.err"; return 1; }
	"$CAKE" build "$f" --kernel "$n" --emit=cuda -o "$d/$n.cu" 2>"$d/$n.err" &&
		"$CAKE" build "$f" --kernel "$n" --emit=plan -o "$d/$n.plan" 2>>"$d/$n.err" || return 1
	if [ -n "$mut" ]; then
		cp "$d/$n.cu" "$d/$n.orig.cu"
		sed -i "$mut" "$d/$n.cu"
		cmp -s "$d/$n.cu" "$d/$n.orig.cu" && { echo "the mutation '$mut' changed nothing" >>"$d/$n.err"; return 1; }
	fi
	python3 tools/emu/mkdriver.py --unit "$d/$n.cu" "$d/$n.cpp" --plan "$d/$n.plan" 2>>"$d/$n.err" &&
		g++ -std=c++17 -O1 -Itools/emu -c -o "$d/$n.o" "$d/$n.cpp" 2>>"$d/$n.err"
}

KERNELS="kmeans_hist kmeans_fill kmeans_hist_global kmeans_fill_global kmeans_scan_k256 kmeans_scan_k1024
kmeans_scan_k4096 kmeans_scan kmeans_segsum kmeans_segsum_f16 kmeans_segsum_d64 kmeans_segsum_d64_f16
kmeans_segsum_split kmeans_segsum_split_f16 kmeans_segsum_split_d64 kmeans_segsum_split_d64_f16
kmeans_divide kmeans_divide_d64 kmeans_divide_f16 kmeans_divide_d64_f16 kmeans_scatter kmeans_scatter_d64
kmeans_scatter_f16 kmeans_scatter_d64_f16"
U=$TMP/units
mkdir -p "$U"
g++ -std=c++17 -O1 -Itools/emu -c -o "$U/main.o" tests/lower/kmeans_run.cpp 2>"$U/main.err" &
jobs_=1
for n in $KERNELS; do
	(unit "$n" "$U" || echo "$n" >>"$U/failed") &
	jobs_=$((jobs_ + 1))
	if [ "$jobs_" -ge "$NJOBS" ]; then wait; jobs_=0; fi
done
wait
if [ -s "$U/failed" ] || [ ! -f "$U/main.o" ]; then
	for n in $(cat "$U/failed" 2>/dev/null); do bad "kernel $n does not lower or build for the emulator"; sed 's/^/    /' "$U/$n.err" | head -10; done
	[ -f "$U/main.o" ] || { bad "tests/lower/kmeans_run.cpp does not build"; sed 's/^/    /' "$U/main.err" | head -10; }
	echo "$PASS passed, $FAIL failed"
	exit 1
fi
g++ -o "$TMP/kmeans_run" "$U"/*.o || { bad "kmeans_run does not link"; echo "$PASS passed, $FAIL failed"; exit 1; }

# case RUNNER B N D K DTYPE SEED UPDATE SHUFFLE [EXPECT [LAST]]: one update of the route the
# dispatcher picks; EXPECT 0 pass (default), 1 must fail the check. LAST ends the route after
# that kernel (a broken kernel's successors may rightly fault on what it wrote).
case_() {
	run=$1 B=$2 N=$3 D=$4 K=$5 dt=$6 seed=$7 upd=$8 shuf=$9 want=${10:-0} last=${11:-}
	f16=0; [ "$dt" = f16 ] && f16=1
	label="B=$B N=$N D=$D K=$K $dt"; [ "$upd" = atomic ] && label="$label update=atomic"
	[ "$shuf" != 0 ] && label="$label shuffled"
	d=$TMP/case.$seed
	rm -rf "$d"; mkdir -p "$d"
	if ! "$CAKE" library kmeans --explain "B=$B,N=$N,D=$D,K=$K,dtype=$dt,update=$upd" >"$d/explain" 2>&1; then
		bad "$label: cake library kmeans --explain failed"; sed 's/^/    /' "$d/explain" | head -5; return
	fi
	Np=$(sed -n 's/^padding: N [0-9]* -> \([0-9]*\).*/\1/p' "$d/explain")
	Kp=$(sed -n 's/.*; K [0-9]* -> \([0-9]*\).*/\1/p' "$d/explain")
	route=$(sed -n 's/^       update \([a-z0-9_]*\) .*/\1/p' "$d/explain")
	kerns=$(sed -n 's/^kernels per iteration: kmeans_assign[a-z0-9_]*, //p' "$d/explain" | tr -d ',')
	if [ -z "$Np" ] || [ -z "$Kp" ] || [ -z "$route" ] || [ -z "$kerns" ]; then
		bad "$label: cannot read the route from the explanation"; sed 's/^/    /' "$d/explain" | head -20; return
	fi
	label="$label [$route]"
	if [ -n "$last" ]; then
		kerns=$(echo "$kerns" | sed "s/\\($last\\).*/\\1/")
		label="$label up to $last"
	fi
	gupd=$upd   # the split segment sums add into Sums, which the library clears first
	case " $kerns " in *" kmeans_segsum_split"*) gupd=split label="$label, split sums" ;; esac
	"$TMP/kmeans_emu" gen "$d" "$B" "$N" "$D" "$K" "$f16" "$seed" "$Np" "$Kp" "$gupd" || { bad "$label: gen"; return; }
	if ! SIMT_EMU_SHUFFLE=$shuf "$run" "$d" "B=$B" "N=$Np" "K=$Kp" -- $kerns >"$d/run" 2>&1; then
		bad "$label: the emulated route failed"; sed 's/^/    /' "$d/run" | tail -10
		rm -rf "$d"; return
	fi
	"$TMP/kmeans_emu" check "$d" "$B" "$N" "$D" "$K" "$f16" "$seed" "$Np" "$Kp" "$upd" $kerns >"$d/chk" 2>&1
	rc=$?
	secs=$(awk '{s += $2} END {printf "%.1f", s}' "$d/run")
	if [ "$want" -eq 0 ] && [ $rc -eq 0 ]; then ok "$label: $(cat "$d/chk") (${secs} s emulated)"
	elif [ "$want" -eq 1 ] && [ $rc -eq 1 ]; then ok "$label (broken on purpose) fails the check: $(cat "$d/chk")"
	else bad "$label: check exited $rc (wanted $want): $(cat "$d/chk")"; sed 's/^/    /' "$d/run" | tail -5; fi
	rm -rf "$d"
}

R=$TMP/kmeans_run
#      B  N      D   K      dtype seed update shuffle
case_ $R 1 1000   64  1     bf16  1    sorted 0      # Kp = 256: sorted_scan_k256, one cluster
case_ $R 2 3001   64  2     bf16  2    sorted 5      # two clusters, one of them empty
case_ $R 1 2500   64  100   f16   3    sorted 0
case_ $R 1 2049   64  255   bf16  4    sorted 0
case_ $R 1 2048   64  256   bf16  5    sorted 0      # Kp = K = 256, N unpadded
case_ $R 2 3000   64  257   bf16  6    sorted 7      # Kp = 384: sorted_scan_any_k, one chunk
case_ $R 1 1500   128 100   bf16  7    sorted 0      # D = 128: Kp = 512, sorted_scan_any_k
case_ $R 1 17000  128 1000  bf16  8    sorted 9      # Kp = 1024: sorted_scan_k1024, two hist CTAs
case_ $R 1 5000   64  1024  f16   9    sorted 0
case_ $R 1 6000   128 2048  bf16  10   sorted 0      # sorted_scan_any_k, two chunks
case_ $R 1 9000   64  4095  bf16  11   sorted 0      # Kp = 4096: sorted_scan_k4096
case_ $R 1 8193   128 4096  f16   12   sorted 11
case_ $R 1 9000   64  4097  bf16  13   sorted 0      # Kp = 4224: sorted_global, five chunks
case_ $R 2 7001   128 5000  bf16  14   sorted 13
case_ $R 1 66000  64  65536 bf16  15   sorted 0      # sorted_global, 64 chunks
case_ $R 1 65600  128 65536 f16   18   sorted 19
case_ $R 1 7000   64  3900  bf16  19   sorted 0      # Kp = 3968: sorted_scan_any_k, ragged fourth chunk
case_ $R 1 3000   128 257   bf16  16   atomic 0      # the atomic update: scatter + divide
case_ $R 1 2100   64  300   f16   17   atomic 17
case_ $R 2 2000   64  256   bf16  20   atomic 0
case_ $R 1 1100   128 600   f16   21   atomic 0

# the tests must be able to fail: a scan whose carry reads the chunk's second-to-last sum,
# and a fill that never reserves its CTA's slots in the segments (every CTA starts at the segment's start)
mkdir -p "$TMP/mut1" "$TMP/mut2"
if unit kmeans_scan "$TMP/mut1" 's/(u32)((1023) + ((int)threadIdx.x/(u32)((1022) + ((int)threadIdx.x/' &&
   g++ -o "$TMP/run_mut1" "$TMP/mut1/kmeans_scan.o" $(ls "$U"/*.o | grep -v '/kmeans_scan\.o$'); then
	case_ "$TMP/run_mut1" 1 6000 128 2048 bf16 10 sorted 0 1 kmeans_scan
else
	bad "the broken kmeans_scan does not build"; sed 's/^/    /' "$TMP/mut1/kmeans_scan.err" | head -5
fi
if unit kmeans_fill "$TMP/mut2" 's/atomicAdd(base_ + row_, (int)(z\[v_\]))/ld_global_nc_b32(base_ + row_)/' &&
   g++ -o "$TMP/run_mut2" "$TMP/mut2/kmeans_fill.o" $(ls "$U"/*.o | grep -v '/kmeans_fill\.o$'); then
	case_ "$TMP/run_mut2" 1 17000 128 1000 bf16 8 sorted 0 1 kmeans_fill
else
	bad "the broken kmeans_fill does not build"; sed 's/^/    /' "$TMP/mut2/kmeans_fill.err" | head -5
fi
# and a divide that reads its TMA tiles without waiting for them (the emulated TMA lands late,
# as the hardware's does, so the tiles are still the previous CTA's)
mkdir -p "$TMP/mut3"
if unit kmeans_divide_d64 "$TMP/mut3" 's/^\t\tmbar_wait(bar_full, full_phase);$//' &&
   g++ -o "$TMP/run_mut3" "$TMP/mut3/kmeans_divide_d64.o" $(ls "$U"/*.o | grep -v '/kmeans_divide_d64\.o$'); then
	case_ "$TMP/run_mut3" 1 2500 64 300 bf16 22 sorted 0 1
else
	bad "the broken kmeans_divide_d64 does not build"; sed 's/^/    /' "$TMP/mut3/kmeans_divide_d64.err" | head -5
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
