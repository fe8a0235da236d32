#!/bin/sh
# fmt.sh — `cake fmt`: canonical output is stable, -w rewrites only files
# that parsed cleanly (never a file with syntax errors), --check lists files
# that are not canonical.
. "$(dirname "$0")/lib.inc"

run fmt "$FIX/ok.cake"
expect "fmt prints canonical text" 0 out '^kernel gemm_bf16 target sm_90a'
cp "$T/out" "$T/canon.cake"
run fmt "$T/canon.cake"
expect "fmt of canonical text" 0
cmp -s "$T/out" "$T/canon.cake" && ok "fmt is idempotent" || bad "fmt is idempotent" "fmt(fmt(x)) != fmt(x)"
run check "$T/canon.cake"
expect "canonical text still checks clean" 0
run fmt --check "$T/canon.cake"
expect "fmt --check on canonical file" 0
[ ! -s "$T/out" ] && ok "fmt --check lists nothing when canonical" || bad "fmt --check lists nothing when canonical" "listed"

# a non-canonical spelling of the same kernel: extra blanks and a blank line
sed -e '/#/!s/ /  /g' -e '1s/^/\n/' "$FIX/ok.cake" >"$T/messy.cake"
run fmt --check "$T/messy.cake"
expect "fmt --check lists a non-canonical file" 1 out "^$T/messy.cake\$"
run fmt -w "$T/messy.cake"
expect "fmt -w rewrites it" 0
cmp -s "$T/messy.cake" "$T/canon.cake" && ok "fmt -w result is canonical" || bad "fmt -w result is canonical" "differs"
run fmt --check "$T/messy.cake"
expect "fmt --check after -w" 0

cp "$FIX/syntax_error.cake" "$T/broken.cake"
run fmt -w "$T/broken.cake"
expect "fmt -w on syntax errors exits 1" 1 err "broken.cake:[0-9]+:[0-9]+: error: " err "has syntax errors; left unchanged"
cmp -s "$T/broken.cake" "$FIX/syntax_error.cake" && ok "fmt -w leaves a broken file byte-identical" || bad "fmt -w leaves a broken file byte-identical" "file changed"
ls "$T"/broken.cake.tmp.* >/dev/null 2>&1 && bad "fmt -w leaves no temp file" "temp file left" || ok "fmt -w leaves no temp file"
run fmt "$T/broken.cake"
expect "fmt on syntax errors prints no text" 1
[ ! -s "$T/out" ] && ok "fmt prints nothing for a broken file" || bad "fmt prints nothing for a broken file" "stdout not empty"
run fmt --check "$T/broken.cake"
expect "fmt --check on syntax errors" 1 err "error: "

run_stdin "$FIX/ok.cake" fmt -
expect "fmt - reads stdin" 0
cmp -s "$T/out" "$T/canon.cake" && ok "fmt - matches fmt FILE" || bad "fmt - matches fmt FILE" "differs"
run fmt -w -
expect "fmt -w - is refused" 2 err "cannot rewrite standard input"

finish
