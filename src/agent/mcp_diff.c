/*
 * mcp_diff.c — the unified line diff of the `diff` tool.
 *
 * Two candidates of a search are usually one tactic apart, so their texts
 * share almost every line. The diff strips the common prefix and suffix,
 * then takes a longest common subsequence of the middle by dynamic
 * programming when the middle is small (at most 4M cells, 16 MB); a larger
 * middle is shown as deleted then inserted, which is still a correct diff,
 * only not a minimal one. Hunks carry 3 lines of context and the usual
 * "@@ -a,n +b,m @@" headers; a last line without a newline gets
 * "\ No newline at end of file", as diff(1) prints it.
 */
#include "mcp_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT 3
#define MAX_CELLS (4u << 20)

typedef struct Lines {
	const char **p;
	int *len;
	int n;
	bool last_incomplete;   /* the text does not end in '\n' */
} Lines;

static Lines split(const char *s)
{
	Lines l = {0};
	size_t n = strlen(s);
	int cap = 16;
	l.p = xmalloc(sizeof(char *) * (size_t)cap);
	l.len = xmalloc(sizeof(int) * (size_t)cap);
	for (size_t i = 0; i < n;) {
		const char *e = memchr(s + i, '\n', n - i);
		size_t end = e ? (size_t)(e - s) : n;
		if (l.n == cap) {
			cap *= 2;
			l.p = xrealloc(l.p, sizeof(char *) * (size_t)cap);
			l.len = xrealloc(l.len, sizeof(int) * (size_t)cap);
		}
		l.p[l.n] = s + i;
		l.len[l.n] = (int)(end - i);
		l.n++;
		if (!e)
			l.last_incomplete = true;
		i = end + 1;
	}
	return l;
}

/* Equal lines: the same bytes, and both or neither the unterminated last line. */
static bool same(const Lines *a, int i, const Lines *b, int j)
{
	bool ia = i == a->n - 1 && a->last_incomplete, ib = j == b->n - 1 && b->last_incomplete;
	return ia == ib && a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], (size_t)a->len[i]);
}

/* One step of the edit script: ' ' keeps a[ai] (= b[bi]), '-' deletes a[ai], '+' inserts b[bi]. */
typedef struct Op {
	char kind;
	int ai, bi;
} Op;

static void push(Op **ops, int *n, int *cap, char kind, int ai, int bi)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*ops = xrealloc(*ops, sizeof(Op) * (size_t)*cap);
	}
	(*ops)[(*n)++] = (Op){kind, ai, bi};
}

/* The edit script of a[lo_a..hi_a) against b[lo_b..hi_b). */
static void middle(const Lines *a, int la, int ha, const Lines *b, int lb, int hb, Op **ops, int *n, int *cap)
{
	int na = ha - la, nb = hb - lb;
	if ((uint64_t)(na + 1) * (uint64_t)(nb + 1) > MAX_CELLS) {
		for (int i = la; i < ha; i++)
			push(ops, n, cap, '-', i, lb);
		for (int j = lb; j < hb; j++)
			push(ops, n, cap, '+', ha, j);
		return;
	}
	/* L[i][j] = LCS length of a[la+i..) and b[lb+j..) */
	int w = nb + 1;
	int32_t *L = xcalloc((size_t)(na + 1) * (size_t)w, sizeof(int32_t));
	for (int i = na - 1; i >= 0; i--)
		for (int j = nb - 1; j >= 0; j--)
			L[i * w + j] = same(a, la + i, b, lb + j) ? L[(i + 1) * w + j + 1] + 1
			             : L[(i + 1) * w + j] >= L[i * w + j + 1] ? L[(i + 1) * w + j] : L[i * w + j + 1];
	int i = 0, j = 0;
	while (i < na || j < nb) {
		if (i < na && j < nb && same(a, la + i, b, lb + j)) {
			push(ops, n, cap, ' ', la + i, lb + j);
			i++, j++;
		} else if (i < na && (j == nb || L[(i + 1) * w + j] >= L[i * w + j + 1])) {
			push(ops, n, cap, '-', la + i, lb + j);   /* deletions first, as diff(1) */
			i++;
		} else {
			push(ops, n, cap, '+', la + i, lb + j);
			j++;
		}
	}
	free(L);
}

static void put_line(StrBuf *out, char mark, const Lines *l, int i)
{
	sb_putc(out, mark);
	sb_putn(out, l->p[i], (size_t)l->len[i]);
	sb_putc(out, '\n');
	if (i == l->n - 1 && l->last_incomplete)
		sb_puts(out, "\\ No newline at end of file\n");
}

/* "start,count" of a hunk side in diff(1)'s convention (start 0 for an empty side). */
static void range(StrBuf *out, int start, int count)
{
	if (count == 0)
		sb_printf(out, "%d,0", start);
	else if (count == 1)
		sb_printf(out, "%d", start + 1);
	else
		sb_printf(out, "%d,%d", start + 1, count);
}

bool mcp_diff(const char *ta, const char *name_a, const char *tb, const char *name_b, StrBuf *out)
{
	Lines a = split(ta ? ta : ""), b = split(tb ? tb : "");
	int pre = 0;
	while (pre < a.n && pre < b.n && same(&a, pre, &b, pre))
		pre++;
	int suf = 0;
	while (suf < a.n - pre && suf < b.n - pre && same(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	Op *ops = NULL;
	int n = 0, cap = 0;
	for (int i = 0; i < pre; i++)
		push(&ops, &n, &cap, ' ', i, i);
	middle(&a, pre, a.n - suf, &b, pre, b.n - suf, &ops, &n, &cap);
	for (int k = suf; k > 0; k--)
		push(&ops, &n, &cap, ' ', a.n - k, b.n - k);

	bool any = false;
	for (int k = 0; k < n; k++)
		if (ops[k].kind != ' ')
			any = true;
	if (any)
		sb_printf(out, "--- %s\n+++ %s\n", name_a, name_b);
	for (int k = 0; k < n;) {
		if (ops[k].kind == ' ') {
			k++;
			continue;
		}
		/* a hunk: from CONTEXT lines before this change to CONTEXT after the
		 * last change that is at most 2*CONTEXT unchanged lines further on */
		int s = k - CONTEXT < 0 ? 0 : k - CONTEXT;
		int e = k;
		for (int q = k; q < n; q++) {
			if (ops[q].kind != ' ') {
				e = q;
				continue;
			}
			if (q - e > 2 * CONTEXT)
				break;
		}
		int end = e + CONTEXT + 1 > n ? n : e + CONTEXT + 1;
		int a0 = ops[s].ai, b0 = ops[s].bi, ac = 0, bc = 0;
		for (int q = s; q < end; q++) {
			if (ops[q].kind != '+')
				ac++;
			if (ops[q].kind != '-')
				bc++;
		}
		sb_puts(out, "@@ -");
		range(out, a0, ac);
		sb_puts(out, " +");
		range(out, b0, bc);
		sb_puts(out, " @@\n");
		for (int q = s; q < end; q++) {
			if (ops[q].kind == '+')
				put_line(out, '+', &b, ops[q].bi);
			else
				put_line(out, ops[q].kind, &a, ops[q].ai);
		}
		k = end;
	}
	free(ops);
	free(a.p);
	free(a.len);
	free(b.p);
	free(b.len);
	return any;
}
