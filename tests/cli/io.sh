#!/bin/sh
# io.sh — files that cannot be read, empty input, several files, stdin.
# I/O problems exit 2 with "cake: cannot read 'PATH': REASON" on stderr.
. "$(dirname "$0")/lib.inc"

run check tests/cli/fixtures/no-such-file.cake
expect "missing file" 2 err "^cake: cannot read 'tests/cli/fixtures/no-such-file.cake': No such file or directory$"
run check tests/cli/fixtures
expect "directory as file" 2 err "^cake: cannot read 'tests/cli/fixtures': Is a directory$"
run check "$FIX/syntax_error.cake" tests/cli/fixtures/no-such-file.cake
expect "missing file among others: status 2, other file still checked" 2 \
	err "cannot read 'tests/cli/fixtures/no-such-file.cake'" out "syntax_error.cake:[0-9]+:[0-9]+: error: "
run fmt tests/cli/fixtures/no-such-file.cake
expect "fmt missing file" 2 err "^cake: cannot read 'tests/cli/fixtures/no-such-file.cake': No such file or directory$"

: >"$T/empty.cake"
run check "$T/empty.cake"
expect "empty file is an error" 1 out "empty.cake:1:1: error: "
printf '\n\n   # only a comment\n' >"$T/blank.cake"
run check "$T/blank.cake"
expect "blank file is an error" 1 out "blank.cake:[0-9]+:[0-9]+: error: "

run_stdin "$FIX/ok.cake" check -
expect "check - reads stdin (clean)" 0
run_stdin "$FIX/syntax_error.cake" check -
expect "check - reads stdin (errors name <stdin>)" 1 out "^<stdin>:[0-9]+:[0-9]+: error: "

run check "$FIX/ok.cake" "$FIX/ok.cake"
expect "the same clean file twice" 0
[ ! -s "$T/out" ] && ok "a clean check prints nothing" || bad "a clean check prints nothing" "stdout not empty"

if [ "$(id -u)" -ne 0 ]; then
	cp "$FIX/ok.cake" "$T/noperm.cake"
	chmod 000 "$T/noperm.cake"
	run check "$T/noperm.cake"
	expect "unreadable file" 2 err "cannot read '.*noperm.cake': Permission denied"
fi

finish
