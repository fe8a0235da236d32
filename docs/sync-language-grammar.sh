#!/bin/sh
# sync-language-grammar.sh — copy docs/grammar.ebnf into §3 of docs/LANGUAGE.md.
#
# LANGUAGE.md §3 quotes the normative grammar verbatim inside its one ```ebnf
# block; tests/unit/test_language_doc.c fails when the two differ. After
# editing docs/grammar.ebnf, run from the repository root:
#
#     sh docs/sync-language-grammar.sh
#
# Everything outside the ```ebnf ... ``` block is left untouched.
set -eu
cd "$(dirname "$0")/.."
doc=docs/LANGUAGE.md
gram=docs/grammar.ebnf
[ -f "$doc" ] && [ -f "$gram" ] || { echo "sync-language-grammar: $doc or $gram missing" >&2; exit 2; }
grep -q '^```ebnf$' "$doc" || { echo "sync-language-grammar: no \`\`\`ebnf block in $doc" >&2; exit 2; }
tmp=$(mktemp "${TMPDIR:-/tmp}/language.XXXXXX")
trap 'rm -f "$tmp"' EXIT INT TERM
awk -v gram="$gram" '
	state == 0 && $0 == "```ebnf" { print; while ((getline line < gram) > 0) print line; state = 1; next }
	state == 1 { if ($0 == "```") { print; state = 2 } ; next }
	{ print }
' "$doc" >"$tmp"
cat "$tmp" >"$doc"
