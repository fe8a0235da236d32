/*
 * textdiff.h — a minimal line diff of two texts, and its unified rendering.
 *
 * `cake diff` shows how one candidate's IR differs from another's; this is
 * the algorithm behind it, kept in the harness so that the command stays a
 * thin printer and other users (the MCP server, reports) can share it.
 *
 * The diff is Myers' O(ND) algorithm in its linear-space form (the middle
 * snake, "An O(ND) Difference Algorithm and Its Variations", 1986, §4b): it
 * finds a shortest edit script, i.e. the fewest deleted plus inserted lines,
 * equivalently a longest common subsequence of lines. Time is O((N+M)·D) for
 * N and M lines and D edits, memory O(N+M); a common prefix and suffix are
 * stripped first, so near-identical texts cost little.
 *
 * Lines. A text is split at '\n'; a line's bytes include its '\n', so a last
 * line without one differs from the same line with one (the unified output
 * marks it "\ No newline at end of file", as diff(1) does). An empty text has
 * no lines. Lines point into the caller's texts, which must outlive the diff.
 *
 * The edit script lists every line of both texts once, in order: ' ' (in
 * both), '-' (only in A), '+' (only in B); within a change the deletions come
 * before the insertions. textdiff_unified() renders it as a unified diff with
 * `@@ -A,N +B,M @@` hunks and a given number of context lines (diff -u: 3).
 *
 * Module prefix: textdiff_.
 */
#ifndef CAKE_TEXTDIFF_H
#define CAKE_TEXTDIFF_H

#include "../base/base.h"

typedef struct TextLine {
	const char *s;      /* the line's first byte (in the caller's text) */
	size_t len;         /* bytes, without the '\n' */
	bool eol;           /* whether a '\n' ends it (false only for a last line) */
} TextLine;

typedef struct TextDiffOp {
	char op;            /* ' ', '-' or '+' */
	int a, b;           /* 0-based line in A / in B; -1 where the line is not in that text */
} TextDiffOp;

typedef struct TextDiff {
	TextLine *a, *b;    /* the lines of A and of B */
	int na, nb;
	TextDiffOp *ops;    /* the edit script: na + nb - nsame entries */
	int nops;
	int ndel, nadd;     /* '-' and '+' entries; ndel + nadd is the edit distance */
} TextDiff;

/* Split text (len bytes) into *out (malloc'd; NULL when empty) and return the line count. */
int textdiff_split(const char *text, size_t len, TextLine **out);
/* Diff text a against text b into *d (a shortest edit script; free with textdiff_free). */
void textdiff_run(TextDiff *d, const char *a, size_t alen, const char *b, size_t blen);
/* Release what textdiff_run allocated; d is zeroed. */
void textdiff_free(TextDiff *d);
/* Append d as a unified diff (no ---/+++ header) with context lines around each
 * change to out; nothing when the texts are equal. */
void textdiff_unified(StrBuf *out, const TextDiff *d, int context);

#endif
