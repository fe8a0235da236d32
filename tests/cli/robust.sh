#!/bin/sh
# robust.sh — hostile input. Each case must be refused cleanly: exit status
# 1 or 2 with a diagnostic, never a crash (status > 128), a hang (120 s
# limit) or a sanitizer report. Large inputs are generated at test time
# into $TMPDIR; the binary fixture is committed (fixtures/garbage.bin: 4096
# bytes from Python's random.Random(20261129).getrandbits(8), so it is the
# same on every machine).
. "$(dirname "$0")/lib.inc"

run check "$FIX/garbage.bin"
expect_reject "binary garbage"
run check --format=json "$FIX/garbage.bin"
expect_reject "binary garbage (json)"
json_valid x "$T/out" && ok "binary garbage: json stays valid" || bad "binary garbage: json stays valid" "$(cat "$T/pyerr")"
run check --format=sarif "$FIX/garbage.bin"
json_valid x "$T/out" && ok "binary garbage: sarif stays valid" || bad "binary garbage: sarif stays valid" "$(cat "$T/pyerr")"
run fmt "$FIX/garbage.bin"
expect_reject "fmt binary garbage"

printf 'kernel k target sm_90a\n  param A: global bf16[M, K]\n  role \377\376 warps 0..3\n{ }\n' >"$T/badutf8.cake"
run check "$T/badutf8.cake"
expect_reject "invalid UTF-8 outside a comment"
printf '# caf\303 \377 broken utf-8 in a comment\nkernel k target sm_90a\n{ }\n' >"$T/badutf8c.cake"
run check "$T/badutf8c.cake"
expect_reject "invalid UTF-8 inside a comment"
printf 'kernel k target sm_90a\n  role load warps 0..3\n{\n  in load { wait \000 full }\n}\n' >"$T/nul.cake"
run check "$T/nul.cake"
expect_reject "NUL byte in the source"

printf 'kernel k target sm_90a\n  role load warps 0..3\n/* never closed\n{\n  in load { }\n}\n' >"$T/comment.cake"
run check "$T/comment.cake"
expect_reject "unterminated block comment"
printf 'kernel k target sm_90a\n  role load warps 0..3\n{\n  in load {\n    for k in 0 .. 4 {\n' >"$T/block.cake"
run check "$T/block.cake"
expect_reject "unterminated block"
printf 'kernel k target sm_90a\n  role load warps 0..3\n{\n  in load { let x = (1 + }\n}\n' >"$T/paren.cake"
run check "$T/paren.cake"
expect_reject "unbalanced parenthesis"

# 10,000-deep nesting of blocks and of parentheses
awk 'BEGIN {
	printf "kernel deep target sm_90a\n  role load warps 0..3\n{\n  in load {\n"
	for (i = 0; i < 10000; i++) printf "if 1 == 1 {\n"
	for (i = 0; i < 10000; i++) printf "}\n"
	printf "  }\n}\n"
}' >"$T/deep_blocks.cake"
run check "$T/deep_blocks.cake"
expect_reject "10,000 nested blocks"
awk 'BEGIN {
	printf "kernel deep target sm_90a\n  role load warps 0..3\n{\n  in load {\n    let x = "
	for (i = 0; i < 10000; i++) printf "("
	printf "1"
	for (i = 0; i < 10000; i++) printf ")"
	printf "\n  }\n}\n"
}' >"$T/deep_parens.cake"
run check "$T/deep_parens.cake"
expect_reject "10,000 nested parentheses"
awk 'BEGIN {
	printf "kernel deep target sm_90a\n  role load warps 0..3\n{\n  in load {\n    let x = "
	for (i = 0; i < 10000; i++) printf "-"
	printf "1\n  }\n}\n"
}' >"$T/deep_unary.cake"
run check "$T/deep_unary.cake"
sane "10,000 nested unary minus" && { [ "$RC" -le 2 ] && ok "10,000 nested unary minus" || bad "10,000 nested unary minus" "status $RC"; }
run fmt "$T/deep_blocks.cake"
expect_reject "fmt of 10,000 nested blocks"

# 10 MB: one valid kernel buried in comments, and 10 MB of junk tokens
awk 'BEGIN { for (i = 0; i < 160000; i++) printf "# padding line %06d of a ten megabyte file ....\n", i }' >"$T/big_comments.cake"
cat "$FIX/syntax_error.cake" >>"$T/big_comments.cake"
run check "$T/big_comments.cake"
expect_reject "10 MB of comments then a broken kernel"
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "x%d ] ", i % 10 }' >"$T/big_junk.cake"
run check "$T/big_junk.cake"
expect_reject "10 MB of junk tokens"
run check --format=json "$T/big_junk.cake"
expect_reject "10 MB of junk tokens (json)"
json_valid x "$T/out" && ok "10 MB junk: json stays valid" || bad "10 MB junk: json stays valid" "$(cat "$T/pyerr")"
awk 'BEGIN { printf "kernel k target sm_90a\n  param A: global bf16[M, "; for (i = 0; i < 2000000; i++) printf "K, "; printf "K]\n{ }\n" }' >"$T/big_line.cake"
run check "$T/big_line.cake"
expect_reject "one 6 MB line"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/out")" -lt 1000 ] \
	&& ok "a huge line is shown as a window" || bad "a huge line is shown as a window" "output line too long"

finish
