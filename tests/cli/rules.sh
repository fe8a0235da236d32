#!/bin/sh
# rules.sh — `cake rules` in its three formats, and registry completeness:
# every rule ID that appears in a golden expectation must be registered.
. "$(dirname "$0")/lib.inc"

run rules
expect "rules (text)" 0 out 'CK-[A-Z0-9]+-[0-9]+'
cp "$T/out" "$T/rules.txt"
run rules --format=text
expect "rules --format=text" 0 out 'CK-[A-Z0-9]+-[0-9]+'
run rules --format=json
expect "rules --format=json" 0 out 'CK-[A-Z0-9]+-[0-9]+'
if json_valid "rules json" "$T/out"; then ok "rules --format=json is valid JSON"; else bad "rules --format=json is valid JSON" "$(cat "$T/pyerr")"; fi
run rules --format=markdown
expect "rules --format=markdown" 0 out 'CK-[A-Z0-9]+-[0-9]+'

# registered ID list: every rule ID at the start of a word in `cake rules`
grep -o 'CK-[A-Z0-9]*-[0-9]*' "$T/rules.txt" | sort -u >"$T/registered"

# unregistered FILE...: rule IDs "[CK-...]" in the files that are not registered
unregistered() {
	cat "$@" 2>/dev/null | grep -o '\[CK-[A-Z0-9]*-[0-9]*\]' | tr -d '[]' | sort -u |
		comm -23 - "$T/registered" | tr '\n' ' '
}

m=$(unregistered tests/diag/*.err)
[ -z "$m" ] && ok "every rule ID in tests/diag/*.err is registered" ||
	bad "every rule ID in tests/diag/*.err is registered" "unregistered: $m"

# what the front end says about broken input must be registered too
for f in "$FIX/syntax_error.cake" "$FIX/garbage.bin"; do
	"$CAKE" check "$f" >>"$T/emitted" 2>/dev/null
done
m=$(unregistered "$T/emitted")
[ -z "$m" ] && ok "every rule ID emitted on the broken fixtures is registered" ||
	bad "every rule ID emitted on the broken fixtures is registered" "unregistered: $m"

finish
