#!/bin/sh
# usage.sh — the command line itself: help, version, unknown commands and
# options, bad option values. Usage errors exit 2 with one clear line and a
# hint; help exits 0.
. "$(dirname "$0")/lib.inc"

run
expect "no arguments prints usage" 0 out '^usage: cake COMMAND' out 'cake check' out 'cake fmt' out 'cake rules'
run help
expect "help" 0 out '^usage: cake COMMAND'
run --help
expect "--help" 0 out '^usage: cake COMMAND'
run check --help
expect "check --help" 0 out '^usage: cake COMMAND'
run --version
expect "--version" 0 out '^cake 0\.1\.0 \(verifier [^ )]+\)$'
[ "$(wc -l <"$T/out")" -eq 1 ] && ok "--version is one line" || bad "--version is one line" "$(wc -l <"$T/out") lines"

run frobnicate x.cake
expect "unknown subcommand" 2 err "^cake: unknown command 'frobnicate'$" err "Try 'cake help'"
[ ! -s "$T/out" ] && ok "unknown subcommand prints nothing on stdout" || bad "unknown subcommand prints nothing on stdout" "stdout not empty"
run --frobnicate
expect "unknown global option" 2 err "unknown option '--frobnicate'"
run check --format=bogus "$FIX/ok.cake"
expect "check --format=bogus" 2 err "^cake check: unknown format 'bogus' \(expected text, json or sarif\)$" err "Try 'cake help'"
run check --format bogus "$FIX/ok.cake"
expect "check --format bogus (separate value)" 2 err "unknown format 'bogus'"
run check "$FIX/ok.cake" --format
expect "check --format without value" 2 err "option '--format' needs a value"
run check --dump=bogus "$FIX/ok.cake"
expect "check --dump=bogus" 2 err "unknown dump stage 'bogus'"
run check --color=sometimes "$FIX/ok.cake"
expect "check --color=sometimes" 2 err "unknown color mode 'sometimes'"
run check --verbose "$FIX/ok.cake"
expect "check unknown option" 2 err "^cake check: unknown option '--verbose'$"
run check
expect "check without files" 2 err "^cake check: no input files$"
run fmt
expect "fmt without files" 2 err "^cake fmt: no input files$"
run fmt --frob "$FIX/ok.cake"
expect "fmt unknown option" 2 err "unknown option '--frob'"
run fmt -w --check "$FIX/ok.cake"
expect "fmt -w --check together" 2 err "cannot be combined"
run rules --format=yaml
expect "rules --format=yaml" 2 err "unknown format 'yaml' \(expected text, json or markdown\)"
run rules extra
expect "rules with an argument" 2 err "unexpected argument 'extra'"

finish
