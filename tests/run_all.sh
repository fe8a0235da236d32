#!/bin/sh
# run_all.sh — every CPU-side test suite, one summary line at the end.
#
#   CAKE=build/asan/cake sh tests/run_all.sh build/asan/tests/test_*   (what `make test` runs)
#
# Runs, in order: each cmocka unit-test binary given as an argument, then
# tests/run_golden.sh (diagnostic golden files and the clean-corpus check),
# then tests/lower/run.sh (generated-CUDA goldens; every corpus kernel that
# lowers compiles to an sm_90a cubin through NVRTC with zero spills), then
# tests/lower/emu.sh (the SIMT KDA kernels executed on the CPU emulator and
# checked against the float64 oracle), then tests/lower/kmeans_emu.sh (every
# route of the k-means library's centroid update executed on the emulator and
# checked stage by stage), then every tests/cli/*.sh (command-line behaviour
# and robustness).
#
# Counting is honest: cmocka's own "[  PASSED  ] N test(s)" and
# "[  FAILED  ] N test(s)" lines give the per-test counts; a binary that
# exits non-zero without reporting a failed test (a crash, an ASan leak report
# after the last test) adds one failure; so does one that runs longer than
# UNIT_TIMEOUT seconds (default 300), which is killed. Script suites end
# with their own "N passed, N failed" line, which is added in; a script that exits
# non-zero without such a line counts as one failure.
#
# The last line is exactly "N passed, N failed"; the exit status is non-zero
# when anything failed.
set -u

cd "$(dirname "$0")/.." || exit 2
CAKE=${CAKE:-build/asan/cake}
case "$CAKE" in /*) ;; *) CAKE="$(pwd)/$CAKE" ;; esac
export CAKE
# leaks are bugs; sanitizer reports must be loud and distinguishable
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=223}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=224}
export ASAN_OPTIONS UBSAN_OPTIONS

# a unit binary that hangs is a failure, not a stuck CI job
UNIT_TIMEOUT=${UNIT_TIMEOUT:-300}

PASSED=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cake-test.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM

# count_line FILE: the last "N passed, N failed" line of FILE as "P F", or nothing
count_line() {
	sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*$/\1 \2/p' "$1" | tail -n 1
}

run_unit() {
	bin=$1
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		echo "FAIL unit $name: not built ($bin)"
		FAILED=$((FAILED + 1))
		return
	fi
	timeout "$UNIT_TIMEOUT" "$bin" >"$TMP/unit.out" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*$/\1/p' "$TMP/unit.out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*$/\1/p' "$TMP/unit.out" | tail -n 1)
	p=${p:-0}
	f=${f:-0}
	note=""
	if [ "$rc" -eq 124 ]; then
		f=$((f + 1))
		note=" (timed out after $UNIT_TIMEOUT s)"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		note=" (exit status $rc: crash or sanitizer report)"
	fi
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	if [ "$f" -ne 0 ]; then
		echo "FAIL unit $name: $p passed, $f failed$note"
		sed 's/^/    | /' "$TMP/unit.out" | tail -n 60
	else
		echo "ok   unit $name: $p passed, $f failed"
	fi
}

run_script() {
	label=$1
	shift
	sh "$@" >"$TMP/script.out" 2>&1
	rc=$?
	counts=$(count_line "$TMP/script.out")
	if [ -z "$counts" ]; then
		p=0
		f=1
	else
		p=${counts% *}
		f=${counts#* }
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
		fi
	fi
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	if [ "$f" -ne 0 ]; then
		echo "FAIL $label: $p passed, $f failed (exit status $rc)"
		sed 's/^/    | /' "$TMP/script.out" | tail -n 80
	else
		echo "ok   $label: $p passed, $f failed"
	fi
}

for bin in "$@"; do
	run_unit "$bin"
done

if [ ! -x "$CAKE" ]; then
	echo "FAIL driver: $CAKE is not built"
	FAILED=$((FAILED + 1))
else
	run_script "golden" tests/run_golden.sh
	run_script "lowering" tests/lower/run.sh
	run_script "emulation" tests/lower/emu.sh
	run_script "kmeans emulation" tests/lower/kmeans_emu.sh
	for t in tests/cli/*.sh; do
		[ -f "$t" ] || continue
		run_script "cli $(basename "$t" .sh)" "$t"
	done
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
