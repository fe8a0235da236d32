/*
 * test_textdiff.c — the line diff behind `cake diff` (src/harness/textdiff.c).
 *
 * Texts are written compactly: each character of a spec string is one line
 * ("abc" is "a\nb\nc\n"), and a script is rendered as one character pair per
 * op ("-a" deleted, "+x" inserted, " b" common). Every diff is checked twice
 * over: valid (the ' ' and '-' lines spell A, the ' ' and '+' lines spell B,
 * in order, and common lines are equal) and shortest (deletions plus
 * insertions = N + M - 2 * LCS, with the LCS length from a plain dynamic
 * program). Cases: empty inputs, identical inputs, insertions at the start and
 * at the end, Myers' own example, the cases where a greedy "match the next
 * equal line" diff is not shortest, a missing final newline, hunk grouping and
 * headers of the unified form, 3000 random small pairs and one large pair.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "harness/textdiff.h"

/* "abc" -> "a\nb\nc\n" (malloc'd) */
static char *lines_of(const char *spec)
{
	size_t n = strlen(spec);
	char *t = malloc(2 * n + 1);
	for (size_t i = 0; i < n; i++) {
		t[2 * i] = spec[i];
		t[2 * i + 1] = '\n';
	}
	t[2 * n] = 0;
	return t;
}

/* The script of d as op/line pairs: " a-b+x" */
static char *script(const TextDiff *d)
{
	char *s = malloc(2 * (size_t)d->nops + 1), *p = s;
	for (int i = 0; i < d->nops; i++) {
		const TextDiffOp *o = &d->ops[i];
		const TextLine *l = o->op == '+' ? &d->b[o->b] : &d->a[o->a];
		*p++ = o->op;
		*p++ = l->len ? l->s[0] : '?';
	}
	*p = 0;
	return s;
}

/* Length of a longest common subsequence of the lines (two rolling rows). */
static int lcs(const TextDiff *d)
{
	int *prev = calloc((size_t)d->nb + 1, sizeof *prev), *cur = calloc((size_t)d->nb + 1, sizeof *cur);
	for (int i = 1; i <= d->na; i++) {
		for (int j = 1; j <= d->nb; j++) {
			const TextLine *x = &d->a[i - 1], *y = &d->b[j - 1];
			bool same = x->len == y->len && x->eol == y->eol && memcmp(x->s, y->s, x->len) == 0;
			int best = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
			cur[j] = same && prev[j - 1] + 1 > best ? prev[j - 1] + 1 : best;
		}
		int *t = prev;
		prev = cur;
		cur = t;
	}
	int r = prev[d->nb];
	free(prev);
	free(cur);
	return r;
}

/* d is a valid edit script of its texts and a shortest one. */
static void check_diff(const TextDiff *d)
{
	int i = 0, j = 0, ndel = 0, nadd = 0;
	for (int k = 0; k < d->nops; k++) {
		const TextDiffOp *o = &d->ops[k];
		switch (o->op) {
		case ' ':
			assert_int_equal(o->a, i++);
			assert_int_equal(o->b, j++);
			assert_int_equal(d->a[o->a].len, d->b[o->b].len);
			assert_memory_equal(d->a[o->a].s, d->b[o->b].s, d->a[o->a].len);
			assert_int_equal(d->a[o->a].eol, d->b[o->b].eol);
			break;
		case '-':
			assert_int_equal(o->a, i++);
			assert_int_equal(o->b, -1);
			ndel++;
			break;
		case '+':
			assert_int_equal(o->b, j++);
			assert_int_equal(o->a, -1);
			nadd++;
			break;
		default:
			fail_msg("bad op '%c'", o->op);
		}
	}
	assert_int_equal(i, d->na);
	assert_int_equal(j, d->nb);
	assert_int_equal(ndel, d->ndel);
	assert_int_equal(nadd, d->nadd);
	assert_int_equal(ndel + nadd, d->na + d->nb - 2 * lcs(d));
}

/* Diff two specs; check; compare the script (NULL: any) and the unified form (NULL: any). */
static void diff_case(const char *a, const char *b, const char *want_script, const char *want_unified)
{
	char *ta = lines_of(a), *tb = lines_of(b);
	TextDiff d;
	textdiff_run(&d, ta, strlen(ta), tb, strlen(tb));
	check_diff(&d);
	char *s = script(&d);
	if (want_script)
		assert_string_equal(s, want_script);
	StrBuf u = {0};
	textdiff_unified(&u, &d, 3);
	if (want_unified)
		assert_string_equal(sb_str(&u), want_unified);
	sb_free(&u);
	free(s);
	textdiff_free(&d);
	free(ta);
	free(tb);
}

static void test_split(void **state)
{
	TextLine *l;
	assert_int_equal(textdiff_split("", 0, &l), 0);
	assert_null(l);
	assert_int_equal(textdiff_split("a\n\nbc", 5, &l), 3);
	assert_int_equal(l[0].len, 1);
	assert_true(l[0].eol);
	assert_int_equal(l[1].len, 0);
	assert_true(l[1].eol);
	assert_int_equal(l[2].len, 2);
	assert_false(l[2].eol);
	assert_memory_equal(l[2].s, "bc", 2);
	free(l);
	assert_int_equal(textdiff_split("\n", 1, &l), 1);
	assert_int_equal(l[0].len, 0);
	free(l);
}

static void test_empty(void **state)
{
	diff_case("", "", "", "");
	diff_case("", "ab", "+a+b", "@@ -0,0 +1,2 @@\n+a\n+b\n");
	diff_case("ab", "", "-a-b", "@@ -1,2 +0,0 @@\n-a\n-b\n");
	diff_case("", "a", "+a", "@@ -0,0 +1 @@\n+a\n");
}

static void test_identical(void **state)
{
	diff_case("a", "a", " a", "");
	diff_case("abcabc", "abcabc", " a b c a b c", "");
}

static void test_insert_start_end(void **state)
{
	diff_case("bcd", "abcd", "+a b c d", "@@ -1,3 +1,4 @@\n+a\n b\n c\n d\n");
	diff_case("abc", "abcd", " a b c+d", "@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n");
	/* only the context after an insertion at the start, only the one before an append */
	diff_case("bcdefgh", "abcdefgh", "+a b c d e f g h", "@@ -1,3 +1,4 @@\n+a\n b\n c\n d\n");
	diff_case("abcdefg", "abcdefgh", NULL, "@@ -5,3 +5,4 @@\n e\n f\n g\n+h\n");
	/* a replacement: the deletion comes first */
	diff_case("abc", "axc", " a-b+x c", "@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n");
}

static void test_not_greedy(void **state)
{
	/* Myers' example: distance 5 (LCS 4) */
	char *ta = lines_of("abcabba"), *tb = lines_of("cbabac");
	TextDiff d;
	textdiff_run(&d, ta, strlen(ta), tb, strlen(tb));
	check_diff(&d);
	assert_int_equal(d.ndel + d.nadd, 5);
	textdiff_free(&d);
	free(ta);
	free(tb);
	/* A greedy diff matches x with the last line of B and pays 6 edits; one
	 * deletion and one insertion are enough. */
	diff_case("xabc", "abcx", "-x a b c+x", NULL);
	/* greedy matching of the first 'a' loses the long common run */
	diff_case("abbbbc", "bbbbca", "-a b b b b c+a", NULL);
	diff_case("aXbcdef", "bcdefaX", "-a-X b c d e f+a+X", NULL);
}

static void test_no_final_newline(void **state)
{
	TextDiff d;
	textdiff_run(&d, "a\nb", 3, "a\nb\n", 4);
	check_diff(&d);
	assert_int_equal(d.ndel, 1);
	assert_int_equal(d.nadd, 1);
	StrBuf u = {0};
	textdiff_unified(&u, &d, 3);
	assert_string_equal(sb_str(&u), "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
	sb_free(&u);
	textdiff_free(&d);
}

static void test_hunks(void **state)
{
	/* changes at lines 2 and 18 of 20: two hunks; at 5 and 10: one (gap 4 <= 6) */
	diff_case("abcdefghijklmnopqrst", "aBcdefghijklmnopqRst", NULL,
	          "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n"
	          "@@ -15,6 +15,6 @@\n o\n p\n q\n-r\n+R\n s\n t\n");
	diff_case("abcdefghijklmnopqrst", "abcdEfghiJklmnopqrst", NULL,
	          "@@ -2,12 +2,12 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n-j\n+J\n k\n l\n m\n");
	/* context 0: two one-line hunks */
	char *ta = lines_of("abcdefghij"), *tb = lines_of("aBcdefghiJ");
	TextDiff d;
	textdiff_run(&d, ta, strlen(ta), tb, strlen(tb));
	StrBuf u = {0};
	textdiff_unified(&u, &d, 0);
	assert_string_equal(sb_str(&u), "@@ -2 +2 @@\n-b\n+B\n@@ -10 +10 @@\n-j\n+J\n");
	sb_free(&u);
	textdiff_free(&d);
	free(ta);
	free(tb);
}

static void test_random(void **state)
{
	unsigned seed = 12345;
	char a[16], b[16];
	for (int round = 0; round < 3000; round++) {
		int na = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 13;
		int nb = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 13;
		int alpha = 2 + round % 3;
		for (int i = 0; i < na; i++)
			a[i] = (char)('a' + ((seed = seed * 1103515245u + 12345u) >> 16) % alpha);
		for (int i = 0; i < nb; i++)
			b[i] = (char)('a' + ((seed = seed * 1103515245u + 12345u) >> 16) % alpha);
		a[na] = b[nb] = 0;
		diff_case(a, b, NULL, NULL);
	}
}

static void test_large(void **state)
{
	/* 3000 lines, every 7th changed, a block moved: still shortest, and quick */
	StrBuf a = {0}, b = {0};
	for (int i = 0; i < 3000; i++) {
		sb_printf(&a, "line %d\n", i);
		if (i % 7 == 3)
			sb_printf(&b, "changed %d\n", i);
		else if (i < 100)
			continue;
		else
			sb_printf(&b, "line %d\n", i);
	}
	for (int i = 0; i < 100; i++)
		if (i % 7 != 3)
			sb_printf(&b, "line %d\n", i);
	TextDiff d;
	textdiff_run(&d, a.s, a.len, b.s, b.len);
	check_diff(&d);
	textdiff_free(&d);
	sb_free(&a);
	sb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_insert_start_end),
		cmocka_unit_test(test_not_greedy),
		cmocka_unit_test(test_no_final_newline),
		cmocka_unit_test(test_hunks),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
