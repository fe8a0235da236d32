#!/bin/sh
# mcp.sh — `cake mcp`, the Model Context Protocol server.
#
# 1. The command line: options, a bad root, end of input at once.
# 2. tests/mcp/raw_client.py (python3 standard library only): raw JSON-RPC
#    lines for everything an SDK would never send (malformed and oversize
#    lines, batches, bad ids, notifications, version mismatches, unknown
#    tools, bad arguments, '..' and symlink escapes, a FIFO) and the store
#    tools on a real store.
# 3. tests/mcp/sdk_client.py through the official MCP Python SDK (pinned in
#    tests/mcp/requirements.txt) in its virtual environment (CAKE_VENV,
#    default build/venv, created by tests/mcp/venv.sh when missing): one
#    session at 2026-07-28 (server/discover) and one with the 2025-11-25
#    initialize handshake. Skipped, with the reason on one line, only when
#    that environment cannot be created (no python3-venv, no network for
#    pip); .ci/run creates it first, so CI never skips it.
. "$(dirname "$0")/lib.inc"

run mcp --bogus
expect "mcp: unknown option" 2 err "unknown option '--bogus'"
run mcp --root "$T/nowhere"
expect "mcp: a root that does not exist" 2 err "root '.*nowhere' is not a directory"
run mcp --max-request 10
expect "mcp: --max-request below 64" 2 err 'max-request takes a byte count'
run mcp --root
expect "mcp: --root without a value" 2 err "needs a value"
run mcp
expect "mcp: end of input at once: exit 0, nothing on stdout" 0 err 'serving MCP on stdio'
[ -s "$T/out" ] && bad "mcp: stdout stays empty without requests" "$(head -c 300 "$T/out")" ||
	ok "mcp: stdout stays empty without requests"
run mcp --quiet
expect "mcp --quiet: no log lines" 0
[ -s "$T/err" ] && bad "mcp --quiet logs nothing" "$(cat "$T/err")" || ok "mcp --quiet logs nothing"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' >"$T/ping"
run_stdin "$T/ping" mcp --max-request 64
expect "mcp --max-request 64 serves a 40-byte request" 0 out '"id":1,"result":\{\}'
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"xxxxxxxxxxxxxxxxxxxxxxxxx"}}' >"$T/long"
run_stdin "$T/long" mcp --max-request 64
expect "mcp --max-request 64 refuses an 80-byte request" 0 out '"code":-32600' out 'exceeds the limit of 64 bytes'

# counted NAME FILE: add the "ok ..." / "FAIL ..." lines of a client's output
counted() {
	while IFS= read -r line; do
		case "$line" in
		"ok   "*) ok "$1: ${line#ok   }" ;;
		FAIL*) FAILED=$((FAILED + 1)); echo "FAIL $1: ${line#FAIL }" ;;
		*) FAILED=$((FAILED + 1)); echo "FAIL $1 (unexpected output): $line" ;;
		esac
	done <"$2"
}

mkdir -p "$T/raw"
timeout 600 python3 tests/mcp/raw_client.py "$CAKE" "$T/raw" >"$T/raw.out" 2>"$T/raw.err"
rc=$?
counted raw "$T/raw.out"
[ "$rc" -eq 0 ] && ok "raw client exits 0" || bad "raw client exits 0" "status $rc: $(tail -c 2000 "$T/raw.err")"

VENV=${CAKE_VENV:-build/venv}
if why=$(sh tests/mcp/venv.sh "$VENV"); then
	timeout 600 "$VENV/bin/python" tests/mcp/sdk_client.py "$CAKE" >"$T/sdk.out" 2>"$T/sdk.err"
	rc=$?
	counted sdk "$T/sdk.out"
	[ "$rc" -eq 0 ] && ok "sdk client exits 0" || bad "sdk client exits 0" "status $rc: $(tail -c 2000 "$T/sdk.err")"
	if grep -q -e 'Sanitizer' -e 'runtime error:' "$T/sdk.err"; then
		bad "no sanitizer report under the SDK client" "$(grep -m 5 -e Sanitizer -e 'runtime error:' "$T/sdk.err")"
	else
		ok "no sanitizer report under the SDK client"
	fi
else
	echo "skip sdk client (official MCP SDK): $why"
fi

finish
