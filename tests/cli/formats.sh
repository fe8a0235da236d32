#!/bin/sh
# formats.sh — `cake check` output formats and exit statuses: text, JSON and
# SARIF must each be one valid document for any mix of clean and broken
# files; exit 0 when clean, 1 when an error was found.
. "$(dirname "$0")/lib.inc"

py_field() { # FILE EXPR: print a Python expression over the parsed document d
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); print(eval(sys.argv[2]))' "$1" "$2"
}

run check "$FIX/ok.cake"
expect "clean kernel: text, exit 0" 0
run check --format=json "$FIX/ok.cake"
expect "clean kernel: json, exit 0" 0 out '"schema": "cake-diagnostics/1"'
if json_valid x "$T/out" && [ "$(py_field "$T/out" 'd["summary"]["errors"]')" = 0 ]; then
	ok "clean kernel: json valid, 0 errors"
else
	bad "clean kernel: json valid, 0 errors" "$(cat "$T/pyerr")"
fi
run check --format=sarif "$FIX/ok.cake"
expect "clean kernel: sarif, exit 0" 0 out '"version": "2.1.0"'
json_valid x "$T/out" && ok "clean kernel: sarif is valid JSON" || bad "clean kernel: sarif is valid JSON" "$(cat "$T/pyerr")"

run check "$FIX/syntax_error.cake"
expect "syntax errors: text, exit 1" 1 \
	out '^tests/cli/fixtures/syntax_error.cake:[0-9]+:[0-9]+: error: .* \[CK-[A-Z]+-[0-9]+\]$' \
	out '^ *\^~*$' out '^[0-9]+ errors?, [0-9]+ warnings?'
grep -q $(printf '\033') "$T/out" && bad "no colour when piped" "escape codes in piped output" || ok "no colour when piped"
run check --color=always "$FIX/syntax_error.cake"
expect "--color=always colours" 1
grep -q "$(printf '\033')\[1;31merror:" "$T/out" && ok "--color=always uses red for error" || bad "--color=always uses red for error" "no escape"

run check --format=json "$FIX/syntax_error.cake" "$FIX/ok.cake"
expect "two files: json, exit 1" 1
if json_valid x "$T/out" && [ "$(py_field "$T/out" 'len(d["files"])')" = 2 ] \
   && [ "$(py_field "$T/out" 'd["summary"]["errors"] >= 1 and d["diagnostics"][0]["location"]["file"].endswith("syntax_error.cake")')" = True ]; then
	ok "two files: one json document, both files listed"
else
	bad "two files: one json document, both files listed" "$(cat "$T/pyerr")"
fi
run check --format=sarif "$FIX/syntax_error.cake"
expect "syntax errors: sarif, exit 1" 1
if json_valid x "$T/out" && [ "$(py_field "$T/out" 'd["runs"][0]["results"][0]["level"]')" = error ] \
   && [ "$(py_field "$T/out" 'all(r["ruleId"] in [x["id"] for x in d["runs"][0]["tool"]["driver"]["rules"]] for r in d["runs"][0]["results"])')" = True ]; then
	ok "syntax errors: sarif results reference declared rules"
else
	bad "syntax errors: sarif results reference declared rules" "$(cat "$T/pyerr")"
fi

run check --no-verify "$FIX/ok.cake"
expect "--no-verify on a clean kernel" 0
run check --dump=tokens "$FIX/ok.cake"
expect "--dump=tokens goes to stderr" 0 err "ok.cake:3:1: .*'kernel'"
[ ! -s "$T/out" ] && ok "--dump keeps stdout clean" || bad "--dump keeps stdout clean" "stdout not empty"
run check --dump=ast "$FIX/ok.cake"
expect "--dump=ast (= --dump-after=parse)" 0 err '^# --dump-after=parse$' err 'kernel gemm_bf16'
run check --dump=sema "$FIX/ok.cake"
expect "--dump=sema (= --dump-after=sema)" 0 err '^# --dump-after=sema$' err 'kernel gemm_bf16'
run check --dump=ast "$FIX/syntax_error.cake"
expect "--dump=ast on broken input still dumps and reports" 1 err '^# --dump-after=parse$' out 'error: '
run check --dump-after=verify "$FIX/ok.cake"
expect "--dump-after=verify shows the findings so far" 0 err '^# --dump-after=verify$'
run check --dump-after=lower "$FIX/ok.cake"
expect "check --dump-after=lower is refused (build dumps later stages)" 2 err "unknown stage 'lower' for check"
run build --dump-after=derive "$FIX/ok.cake"
expect "build --dump-after=derive prints the plan to stderr" 0 err '^# --dump-after=derive$' err 'plan of kernel gemm_bf16' out '__global__'
run build --dump-after=bogus "$FIX/ok.cake"
expect "build --dump-after=bogus" 2 err "unknown stage 'bogus'"

# exit status and summary agree with the findings, for every corpus file
# (clean, warnings-only and broken alike); one python run checks them all
nfiles=0
: >"$T/statuses"
for f in $(find kernels tests/diag tests/corpus -name '*.cake' | sort); do
	run check --format=json "$f"
	sane "json for $f" || continue
	nfiles=$((nfiles + 1))
	cp "$T/out" "$T/doc$nfiles.json"
	echo "$T/doc$nfiles.json $RC $f" >>"$T/statuses"
done
inconsistent=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    path, rc, name = line.split()
    try:
        d = json.load(open(path, encoding="utf-8"))
    except ValueError:
        print(name); continue
    s = d["summary"]
    n = {"error": 0, "warning": 0, "note": 0}
    for x in d["diagnostics"]:
        n[x["severity"]] += 1
    ok = s["dropped"] > 0 or (n["error"], n["warning"], n["note"]) == (s["errors"], s["warnings"], s["notes"])
    if not ok or int(rc) != (1 if s["errors"] > 0 else 0):
        print(name)' "$T/statuses" 2>&1)
[ -z "$inconsistent" ] && ok "exit status and summary match the findings ($nfiles files)" ||
	bad "exit status and summary match the findings" "inconsistent: $inconsistent"

finish
