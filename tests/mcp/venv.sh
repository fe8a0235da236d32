#!/bin/sh
# venv.sh — create the Python virtual environment the MCP client tests use.
#
#   sh tests/mcp/venv.sh [DIR]        (default build/venv)
#
# Debian 12's python3 is "externally managed" (PEP 668), so the SDK goes into
# a venv (apt package python3-venv), never into the system. Installs the
# pinned SDK of tests/mcp/requirements.txt with pip, then checks that it
# imports. Idempotent: an existing venv that already has the pinned version
# is left alone. Exits non-zero, with one line saying why, when the venv
# cannot be created or the SDK cannot be installed.
set -u
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-build/venv}
PY=${PYTHON:-python3}
REQ=tests/mcp/requirements.txt
want=$(sed -n 's/^mcp==\([^ ]*\).*/\1/p' "$REQ")
if [ -x "$DIR/bin/python" ] &&
	[ "$("$DIR/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" = "$want" ]; then
	exit 0
fi
mkdir -p "$(dirname "$DIR")" || exit 1
if ! "$PY" -m venv "$DIR" >"$DIR.log" 2>&1; then
	echo "venv.sh: cannot create a virtual environment with '$PY -m venv' (install python3-venv): $(tail -n 1 "$DIR.log")"
	exit 1
fi
if ! "$DIR/bin/python" -m pip install --disable-pip-version-check --retries 2 --timeout 30 -q -r "$REQ" >>"$DIR.log" 2>&1; then
	echo "venv.sh: pip could not install $(grep '^mcp' "$REQ") into $DIR: $(tail -n 1 "$DIR.log")"
	exit 1
fi
if ! "$DIR/bin/python" -c 'import mcp, jsonschema' >>"$DIR.log" 2>&1; then
	echo "venv.sh: the SDK installed into $DIR does not import: $(tail -n 1 "$DIR.log")"
	exit 1
fi
rm -f "$DIR.log"
exit 0
