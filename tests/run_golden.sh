#!/bin/sh
# run_golden.sh — golden diagnostics and the clean-corpus check.
#
#   CAKE=build/asan/cake sh tests/run_golden.sh          compare
#   UPDATE=1 CAKE=bin/cake sh tests/run_golden.sh        rewrite expectations
#
# 1. Golden diagnostics. For each tests/diag/NAME.cake (named after the rule
#    or clause it checks, cproc style):
#      - `cake check tests/diag/NAME.cake` stdout must equal NAME.err byte
#        for byte, and the exit status must equal NAME.exit when that file
#        exists, otherwise 1 when NAME.err has an "error:" line and 0 when not;
#      - when NAME.json exists, `--format=json` stdout must equal it; when
#        NAME.sarif exists, `--format=sarif` stdout must equal it. The
#        verifier version and tool version strings are masked on both sides,
#        so adding a rule does not invalidate every expectation.
#    UPDATE=1 rewrites NAME.err (and NAME.json / NAME.sarif when they exist;
#    create an empty one to opt a case in), and writes NAME.exit only when
#    the status differs from the one derived from NAME.err.
# 2. Clean corpus. Every kernels/**/*.cake and tests/corpus/good/*.cake must
#    check with exit status 0 and no "error:" line. (tests/corpus/bad is the
#    verifier's own test.)
# Every run also fails on a crash (status > 128), a hang (120 s; status 124)
# or a sanitizer report.
# Paths are repo-relative: the script runs from the repository root.
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u

cd "$(dirname "$0")/.." || exit 2
CAKE=${CAKE:-build/asan/cake}
case "$CAKE" in /*) ;; *) CAKE="$(pwd)/$CAKE" ;; esac
UPDATE=${UPDATE:-0}
if [ ! -x "$CAKE" ]; then
	echo "run_golden: $CAKE is not an executable (build it first)"
	echo "0 passed, 1 failed"
	exit 1
fi

PASSED=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cake-golden.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM

pass() { PASSED=$((PASSED + 1)); }
fail() {
	FAILED=$((FAILED + 1))
	echo "FAIL $1"
}

# mask FILE: hide version strings that change whenever the registry does
mask() {
	sed -e 's/"verifier": "[^"]*"/"verifier": "*"/' \
	    -e 's/"verifierVersion": "[^"]*"/"verifierVersion": "*"/' \
	    -e 's/^\(          "version": \)"[^"]*"/\1"*"/' "$1"
}

# sane NAME RC ERRFILE: no crash and no sanitizer report; prints why not
sane() {
	if [ "$2" -eq 124 ]; then
		fail "$1: timed out after 120 s"
		return 1
	fi
	if [ "$2" -gt 128 ]; then
		fail "$1: crashed (exit status $2)"
		sed 's/^/    | /' "$3" | head -n 40
		return 1
	fi
	if grep -q -e 'Sanitizer' -e 'runtime error:' "$3"; then
		fail "$1: sanitizer report"
		sed 's/^/    | /' "$3" | head -n 60
		return 1
	fi
	return 0
}

# golden_format CASE FORMAT EXPECTED: compare one extra output format
golden_format() {
	timeout 120 "$CAKE" check --format="$2" "$1" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sane "$1 --format=$2" "$rc" "$TMP/err" || return
	if [ "$UPDATE" = 1 ]; then
		cp "$TMP/out" "$3"
		pass
		return
	fi
	mask "$3" >"$TMP/want"
	mask "$TMP/out" >"$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then
		pass
	else
		fail "$1 --format=$2: output differs from $3"
		diff -u "$TMP/want" "$TMP/got" | head -n 60
	fi
}

for f in tests/diag/*.cake; do
	[ -f "$f" ] || continue
	base=${f%.cake}
	timeout 120 "$CAKE" check "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if sane "$f" "$rc" "$TMP/err"; then
		if [ "$UPDATE" = 1 ]; then
			cp "$TMP/out" "$base.err"
			derived=0
			grep -q ': error: ' "$base.err" && derived=1
			if [ "$rc" -ne "$derived" ]; then
				echo "$rc" >"$base.exit"
			else
				rm -f "$base.exit"
			fi
			echo "updated $base.err"
			pass
		elif [ ! -f "$base.err" ]; then
			fail "$f: no expectation $base.err (run UPDATE=1 sh tests/run_golden.sh)"
		else
			want_rc=0
			grep -q ': error: ' "$base.err" && want_rc=1
			[ -f "$base.exit" ] && want_rc=$(cat "$base.exit")
			if ! cmp -s "$base.err" "$TMP/out"; then
				fail "$f: output differs from $base.err"
				diff -u "$base.err" "$TMP/out" | head -n 60
			elif [ "$rc" -ne "$want_rc" ]; then
				fail "$f: exit status $rc, expected $want_rc"
			else
				pass
			fi
		fi
	fi
	[ -f "$base.json" ] && golden_format "$f" json "$base.json"
	[ -f "$base.sarif" ] && golden_format "$f" sarif "$base.sarif"
done

for f in $(find kernels tests/corpus/good -name '*.cake' 2>/dev/null | sort); do
	timeout 120 "$CAKE" check "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sane "$f" "$rc" "$TMP/err" || continue
	if [ "$rc" -ne 0 ] || grep -q ': error: ' "$TMP/out"; then
		fail "$f: a corpus kernel must check clean (exit status $rc)"
		sed 's/^/    | /' "$TMP/out" "$TMP/err" | head -n 40
	else
		pass
	fi
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
