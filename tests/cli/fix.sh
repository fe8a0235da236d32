#!/bin/sh
# fix.sh — machine-applicable fixes and `cake check --fix`.
#
# 1. The command: --fix refuses standard input, rewrites a file in place and
#    says so, then prints (and exits with the status of) what remains.
# 2. Every fix is tested (tests/fix/props.py sweep): each file of
#    tests/corpus/bad, tests/diag and tests/fix that has a fixable finding is
#    copied, fixed and checked again; the fixed findings must be gone and no
#    rule may gain a finding. tests/fix/*.cake are cases written for rules
#    the corpus does not exercise (a missing `arrive`, a misnamed barrier).
# 3. Deleting any one `arrive` line of a clean kernel (tests/corpus/good,
#    kernels/) and applying the fix it gets leaves nothing the kernel did not
#    already have (props.py delete).
# 4. Every rule that attaches a fix is exercised by (2): the list below must
#    match the rules whose fixes the sweep applied.
. "$(dirname "$0")/lib.inc"

FIXABLE="CK-BAR-001 CK-BAR-003 CK-DEAD-003 CK-RES-001 CK-RES-002 CK-RES-003 CK-SEM-002 CK-SEM-003 CK-SEM-033 CK-SEM-043"

run_stdin tests/fix/arrive_after_wgmma_wait.cake check --fix -
expect "--fix refuses standard input" 2 err 'cannot rewrite standard input'

run check --fix "$T/missing.cake"
expect "--fix on a missing file" 2 err 'cannot read'

cp tests/fix/arrive_after_wgmma_wait.cake "$T/a.cake"
run check "$T/a.cake"
expect "before --fix: the missing arrive is reported with a fix" 1 out 'CK-BAR-003' out '= fix: insert `arrive empty`'
run check --fix "$T/a.cake"
expect "--fix repairs the file and prints what remains (nothing)" 0 err 'a.cake: applied 2 fixes'
if [ -s "$T/out" ]; then bad "--fix on a file it repairs prints nothing on stdout" "stdout not empty"; else ok "--fix on a file it repairs prints nothing on stdout"; fi
if grep -q '^      arrive empty$' "$T/a.cake" && [ "$(grep -c '^ *arrive empty' "$T/a.cake")" -eq 1 ]; then
	ok "the arrive is inserted once (two findings proposed the same edit)"
else
	bad "the arrive is inserted once (two findings proposed the same edit)" "$(grep -n arrive "$T/a.cake")"
fi
if [ "$(grep -v '^#' "$T/a.cake")" = "$(grep -v '^#' tests/corpus/good/gemm_128x256_s2.cake)" ]; then
	ok "the repaired GEMM is the corpus kernel it was made from"
else
	bad "the repaired GEMM is the corpus kernel it was made from" "$(grep -v '^#' "$T/a.cake" | diff - tests/corpus/good/gemm_128x256_s2.cake)"
fi
run check --fix "$T/a.cake"
expect "--fix on a clean file changes nothing" 0
if grep -q applied "$T/err"; then bad "--fix on a clean file says nothing" "$(cat "$T/err")"; else ok "--fix on a clean file says nothing"; fi

cp tests/corpus/bad/res_setmaxnreg_above_256.cake "$T/b.cake"
run check --fix --format=json "$T/b.cake"
expect "--fix --format=json prints the findings that remain" 0 out '"schema": "cake-diagnostics/1"' err 'applied 1 fix$'
if json_valid "json" "$T/out"; then ok "--fix --format=json is valid JSON"; else bad "--fix --format=json is valid JSON" "$(cat "$T/pyerr")"; fi

# the same fix in SARIF
run check --format=sarif tests/fix/arrive_and_recount.cake
expect "SARIF carries the fix as artifactChanges/replacements" 1 out '"fixes": \[\{"description": \{"text": "insert' out '"deletedRegion"' out '"insertedContent": \{"text": "      arrive empty\\n"\}'

# (2) every fix, (4) every fixable rule exercised
python3 tests/fix/props.py sweep "$CAKE" "$T" tests/corpus/bad/*.cake tests/diag/*.cake tests/fix/*.cake >"$T/sweep" 2>&1
while IFS= read -r line; do
	case "$line" in
	"ok   "*) ok "fix: ${line#ok   }" ;;
	FAIL*) FAILED=$((FAILED + 1)); echo "$line" ;;
	exercised:*) ex=${line#exercised: } ;;
	*) FAILED=$((FAILED + 1)); echo "FAIL props.py: $line" ;;
	esac
done <"$T/sweep"
for r in $FIXABLE; do
	case " ${ex:-} " in
	*" $r "*) ok "the fix of $r is exercised" ;;
	*) bad "the fix of $r is exercised" "no case in tests/corpus/bad, tests/diag or tests/fix applies it" ;;
	esac
done
for r in ${ex:-}; do
	case " $FIXABLE " in
	*" $r "*) ;;
	*) bad "fixable rule $r is listed in tests/cli/fix.sh" "add it to FIXABLE (and docs/VERIFIER.md#fixes)" ;;
	esac
done

# (3) deleted arrives
python3 tests/fix/props.py delete "$CAKE" "$T" tests/corpus/good/*.cake kernels/*/*.cake >"$T/del" 2>&1
n=0
while IFS= read -r line; do
	case "$line" in
	"ok   "*) n=$((n + 1)) ;;
	FAIL*) FAILED=$((FAILED + 1)); echo "$line" ;;
	*) FAILED=$((FAILED + 1)); echo "FAIL props.py: $line" ;;
	esac
done <"$T/del"
if [ "$n" -ge 20 ]; then ok "a deleted arrive is repaired in $n clean kernels"; else bad "a deleted arrive is repaired in at least 20 clean kernels" "only $n"; fi

finish
