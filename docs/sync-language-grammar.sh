#!/bin/sh
# sync-language-grammar.sh — copy docs/grammar.ebnf into §3 of docs/LANGUAGE.md,
# and every §10 family sketch file into the code block under its heading.
#
# LANGUAGE.md §3 quotes the normative grammar verbatim inside its one ```ebnf
# block, and each "### §10.x ... — `path`" heading is followed by a ``` block
# holding that file; tests/unit/test_language_doc.c fails when a copy differs.
# After editing docs/grammar.ebnf or a sketch file, run from the repository root:
#
#     sh docs/sync-language-grammar.sh
#
# Everything outside those code blocks is left untouched.
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
	# a §10 sketch heading names its file between backquotes
	/^### §10/ && index($0, "`") { split($0, q, "`"); sketch = q[2]; print; next }
	sketch != "" && $0 == "```" && !insk { print; while ((getline line < sketch) > 0) print line; close(sketch); insk = 1; next }
	insk { if ($0 == "```") { print; insk = 0; sketch = "" } ; next }
	{ print }
' "$doc" >"$tmp"
cat "$tmp" >"$doc"
