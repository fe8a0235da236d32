#!/bin/sh
# tests/lower/run.sh — the sm_90a lowering over the kernel corpus.
#
#   CAKE=bin/cake sh tests/lower/run.sh            check
#   CAKE=bin/cake sh tests/lower/run.sh --update   rewrite the golden files
#
# For every kernels/**/*.cake:
#   - `cake build F --emit=cuda` either succeeds, or fails with CK-LOW-* errors
#     only (a clear refusal of what is not lowered yet; never a crash, never a
#     silent success with other errors);
#   - every file that lowers has tests/lower/<name>.cu.golden and the generated
#     CUDA must match it byte for byte (and <name>.plan.golden, where present,
#     the `--emit=plan` table); <name> is the file's base name, prefixed with its
#     directory's (gemm_seed_naive) when two directories hold that name;
#   - every file that lowers must compile through NVRTC to an sm_90a cubin with
#     zero spills (`cake build --emit=cubin` fails with CK-LOW-014 on a spill);
#     skipped with a note when NVRTC is not installed (exit status 69);
#   - the --debug-hang variant must compile too (its flight recorder adds live values, so it
#     may spill where the real build does not: it is built with --allow-spills and a spill
#     there is printed as a note, never hidden).
# Then every tests/corpus/good/*.cake that lowers (most of them are refused, which is
# fine there) must compile through NVRTC with zero spills as well: the corpus kernels
# that only the CPU emulator or no machine here executes (the accumulator-layout
# primitives, the wgmma operand layouts) are at least compiled for sm_90a, and must fit
# the block's shared memory with the static shared memory ptxas adds (CK-LOW-015 fails
# the build).
# The last line is "N passed, N failed" (tests/run_all.sh adds it in).
set -u
cd "$(dirname "$0")/../.." || exit 2
CAKE=${CAKE:-bin/cake}
UPDATE=0
[ "${1:-}" = "--update" ] && UPDATE=1
G=tests/lower
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cake-lower.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }

# base names that occur in more than one directory (kernels/gemm/seed_naive.cake, kernels/kmeans/seed_naive.cake)
DUPS=" $(find kernels -name '*.cake' | sed 's,.*/,,' | sort | uniq -d | tr '\n' ' ') "
for f in $(find kernels -name '*.cake' | sort); do
	n=$(basename "$f" .cake)
	case "$DUPS" in *" $n.cake "*) n=$(basename "$(dirname "$f")")_$n ;; esac
	if "$CAKE" build "$f" --emit=cuda -o "$TMP/$n.cu" 2>"$TMP/$n.err"; then
		ok
	else
		rc=$?
		if [ $rc -eq 1 ] && grep -q 'CK-LOW-' "$TMP/$n.err" && ! grep -E 'error: .*\[CK-' "$TMP/$n.err" | grep -qv '\[CK-LOW-'; then
			ok   # refused with lowering errors only: not lowered yet
			echo "note: $f is not lowered yet ($(grep -c 'error: .*\[CK-LOW-' "$TMP/$n.err") CK-LOW errors)"
			continue
		fi
		bad "$f: cake build --emit=cuda exited $rc"
		sed 's/^/    /' "$TMP/$n.err" | head -20
		continue
	fi
	want_cu=1   # every kernel that lowers has a CUDA golden
	for kind in cu plan; do
		gold=$G/$n.$kind.golden
		if [ ! -f "$gold" ]; then
			# a lowered kernel must have a CUDA golden (--update creates it); plan goldens are optional
			[ "$kind" = cu ] && [ $want_cu -eq 1 ] || continue
			[ $UPDATE -eq 1 ] || { bad "$f: missing $gold (run tests/lower/run.sh --update)"; continue; }
		fi
		if [ "$kind" = plan ]; then
			"$CAKE" build "$f" --emit=plan -o "$TMP/$n.plan" 2>/dev/null || { bad "$f: --emit=plan failed"; continue; }
			out=$TMP/$n.plan
		else
			out=$TMP/$n.cu
		fi
		if [ $UPDATE -eq 1 ]; then
			cp "$out" "$gold"
			echo "updated $gold"
			ok
		elif cmp -s "$out" "$gold"; then
			ok
		else
			bad "$f: generated $kind differs from $gold"
			diff -u "$gold" "$out" | head -30
		fi
	done
	for dbg in "" --debug-hang; do
		"$CAKE" build "$f" --emit=cubin $dbg ${dbg:+--allow-spills} -o "$TMP/$n.cubin" 2>"$TMP/$n.jit"
		rc=$?
		if [ $rc -eq 69 ]; then
			echo "note: NVRTC not available; $f not compiled"
			break
		elif [ $rc -eq 0 ] && grep -q ' 0 bytes spill stores, 0 bytes spill loads' "$TMP/$n.jit"; then
			ok
		elif [ $rc -eq 0 ] && [ -n "$dbg" ]; then
			echo "note: $f ($dbg) spills: $(grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads' "$TMP/$n.jit" | head -1)"
			ok
		else
			bad "$f: NVRTC sm_90a build${dbg:+ ($dbg)} failed or spilled (exit $rc)"
			sed 's/^/    /' "$TMP/$n.jit" | head -20
		fi
	done
done
# Every corpus kernel that lowers must build with 0 spills (a spill is CK-LOW-014) and fit the
# block's shared memory, dynamic plus static (CK-LOW-015: the chunked KDA prefills were over it
# until the lowering's exchange arrays moved into its dynamic scratch, sm90.c).
for f in tests/corpus/good/*.cake; do
	b=$(basename "$f" .cake)
	n=corpus_$b
	"$CAKE" build "$f" --emit=cuda -o "$TMP/$n.cu" 2>/dev/null || continue   # not lowered yet
	"$CAKE" build "$f" --emit=cubin -o "$TMP/$n.cubin" 2>"$TMP/$n.jit"
	rc=$?
	if [ $rc -eq 69 ]; then
		echo "note: NVRTC not available; the corpus is not compiled"
		break
	fi
	zero=0
	grep -q ' 0 bytes spill stores, 0 bytes spill loads' "$TMP/$n.jit" && zero=1
	if [ $rc -eq 0 ] && [ $zero -eq 1 ]; then
		ok
	else
		bad "$f: NVRTC sm_90a build failed, spilled or is over the shared memory (exit $rc)"
		sed 's/^/    /' "$TMP/$n.jit" | head -20
	fi
done
echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
