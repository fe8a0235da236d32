/*
 * textdiff.c — Myers' shortest edit script on lines, in linear space, and the
 * unified-diff printer (contracts in textdiff.h).
 *
 * How it works. Lines are hashed once (FNV-1a, 64 bits); two lines are equal
 * when hash, length and bytes agree. diff_range() strips the common prefix and
 * suffix of its range; what is left is either all deletions, all insertions,
 * or split in two by bisect(), which runs the forward and the reverse Myers
 * searches towards each other, one edit step at a time, until their furthest
 * reaching paths overlap on a diagonal. The overlap point lies on a shortest
 * path, so shortest scripts of the two halves join into a shortest script of
 * the whole. Each half is solved the same way (the first by recursion, the
 * second by looping); the depth is logarithmic in the edit count, and every
 * step allocates two vectors of O(N+M) ints that it frees before recursing.
 *
 * Instead of building the script while recursing, diff_range() marks the
 * deleted lines of A and the inserted lines of B (as GNU diff does); the
 * unmarked lines of the two texts pair up in order and are equal, so one walk
 * over both marks yields the script, with a change's deletions first.
 *
 * When the two searches meet nowhere within (N+M+1)/2 steps, the range has
 * no line in common (a shortest script of length D < N+M meets by step
 * ceil(D/2)), and deleting all of A and inserting all of B is the shortest
 * script. A split that makes no progress cannot happen for a correct bisect;
 * it is treated the same way, so that a bug here could lengthen a diff but
 * never hang `cake diff`.
 */
#include "textdiff.h"

#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
	const TextLine *a, *b;
	const uint64_t *ha, *hb;    /* line hashes */
	bool *dela, *addb;          /* marks: A line deleted, B line inserted */
} Ctx;

int textdiff_split(const char *text, size_t len, TextLine **out)
{
	*out = NULL;
	int n = 0, cap = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = xrealloc(*out, (size_t)cap * sizeof **out);
		}
		(*out)[n++] = (TextLine){.s = text + i, .len = e - i, .eol = nl != NULL};
		i = nl ? e + 1 : len;
	}
	return n;
}

static uint64_t line_hash(const TextLine *l)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < l->len; i++)
		h = (h ^ (unsigned char)l->s[i]) * 1099511628211ull;
	return (h ^ (uint64_t)l->eol) * 1099511628211ull;
}

static bool eq(const Ctx *c, int i, int j)
{
	const TextLine *x = &c->a[i], *y = &c->b[j];
	return c->ha[i] == c->hb[j] && x->len == y->len && x->eol == y->eol && memcmp(x->s, y->s, x->len) == 0;
}

/* The split point (*sx, *sy) of a shortest path through A[a0,a1) x B[b0,b1),
 * both non-empty; false when the ranges have no line in common. */
static bool bisect(const Ctx *c, int a0, int a1, int b0, int b1, int *sx, int *sy)
{
	int n = a1 - a0, m = b1 - b0;
	int max = (n + m + 1) / 2, off = max, len = 2 * max + 2;
	int *v1 = xmalloc((size_t)len * sizeof *v1), *v2 = xmalloc((size_t)len * sizeof *v2);
	for (int i = 0; i < len; i++)
		v1[i] = v2[i] = -1;
	v1[off + 1] = v2[off + 1] = 0;
	int delta = n - m;
	bool front = delta % 2 != 0;  /* odd: the forward search detects the overlap */
	int k1lo = 0, k1hi = 0, k2lo = 0, k2hi = 0;  /* diagonals that ran off the grid */
	bool found = false;
	for (int d = 0; d < max && !found; d++) {
		/* forward: v1[off+k] = furthest x on diagonal k = x - y from (0,0) */
		for (int k = -d + k1lo; k <= d - k1hi && !found; k += 2) {
			int ko = off + k;
			int x = k == -d || (k != d && v1[ko - 1] < v1[ko + 1]) ? v1[ko + 1] : v1[ko - 1] + 1;
			int y = x - k;
			while (x < n && y < m && eq(c, a0 + x, b0 + y))
				x++, y++;
			v1[ko] = x;
			if (x > n)
				k1hi += 2;
			else if (y > m)
				k1lo += 2;
			else if (front) {
				int k2o = off + delta - k;
				if (k2o >= 0 && k2o < len && v2[k2o] != -1 && x >= n - v2[k2o]) {
					*sx = a0 + x;
					*sy = b0 + y;
					found = true;
				}
			}
		}
		/* reverse: v2[off+k] = furthest x counted back from (n,m) */
		for (int k = -d + k2lo; k <= d - k2hi && !found; k += 2) {
			int ko = off + k;
			int x = k == -d || (k != d && v2[ko - 1] < v2[ko + 1]) ? v2[ko + 1] : v2[ko - 1] + 1;
			int y = x - k;
			while (x < n && y < m && eq(c, a0 + n - x - 1, b0 + m - y - 1))
				x++, y++;
			v2[ko] = x;
			if (x > n)
				k2hi += 2;
			else if (y > m)
				k2lo += 2;
			else if (!front) {
				int k1o = off + delta - k;
				if (k1o >= 0 && k1o < len && v1[k1o] != -1) {
					int x1 = v1[k1o], y1 = off + x1 - k1o;
					if (x1 >= n - x) {
						*sx = a0 + x1;
						*sy = b0 + y1;
						found = true;
					}
				}
			}
		}
	}
	free(v1);
	free(v2);
	return found;
}

static void mark_all(const Ctx *c, int a0, int a1, int b0, int b1)
{
	for (int i = a0; i < a1; i++)
		c->dela[i] = true;
	for (int j = b0; j < b1; j++)
		c->addb[j] = true;
}

/* Mark a shortest edit script of A[a0,a1) against B[b0,b1). */
static void diff_range(const Ctx *c, int a0, int a1, int b0, int b1)
{
	for (;;) {
		while (a0 < a1 && b0 < b1 && eq(c, a0, b0))
			a0++, b0++;
		while (a0 < a1 && b0 < b1 && eq(c, a1 - 1, b1 - 1))
			a1--, b1--;
		if (a0 == a1 || b0 == b1) {
			mark_all(c, a0, a1, b0, b1);
			return;
		}
		int x, y;
		if (!bisect(c, a0, a1, b0, b1, &x, &y) || (x == a0 && y == b0) || (x == a1 && y == b1)) {
			mark_all(c, a0, a1, b0, b1);
			return;
		}
		diff_range(c, a0, x, b0, y);
		a0 = x;
		b0 = y;
	}
}

void textdiff_run(TextDiff *d, const char *a, size_t alen, const char *b, size_t blen)
{
	memset(d, 0, sizeof *d);
	d->na = textdiff_split(a, alen, &d->a);
	d->nb = textdiff_split(b, blen, &d->b);
	uint64_t *ha = xmalloc((size_t)(d->na + 1) * sizeof *ha), *hb = xmalloc((size_t)(d->nb + 1) * sizeof *hb);
	for (int i = 0; i < d->na; i++)
		ha[i] = line_hash(&d->a[i]);
	for (int j = 0; j < d->nb; j++)
		hb[j] = line_hash(&d->b[j]);
	Ctx c = {.a = d->a, .b = d->b, .ha = ha, .hb = hb,
	         .dela = xcalloc((size_t)d->na + 1, 1), .addb = xcalloc((size_t)d->nb + 1, 1)};
	diff_range(&c, 0, d->na, 0, d->nb);
	d->ops = xmalloc((size_t)(d->na + d->nb + 1) * sizeof *d->ops);
	int i = 0, j = 0;
	while (i < d->na || j < d->nb) {
		TextDiffOp *o = &d->ops[d->nops++];
		if (i < d->na && (c.dela[i] || j == d->nb)) {
			*o = (TextDiffOp){'-', i++, -1};
			d->ndel++;
		} else if (j < d->nb && (c.addb[j] || i == d->na)) {
			*o = (TextDiffOp){'+', -1, j++};
			d->nadd++;
		} else
			*o = (TextDiffOp){' ', i++, j++};
	}
	free(ha);
	free(hb);
	free(c.dela);
	free(c.addb);
}

void textdiff_free(TextDiff *d)
{
	free(d->a);
	free(d->b);
	free(d->ops);
	memset(d, 0, sizeof *d);
}

/* "-START,COUNT" as diff -u writes it: ",1" is left out, and an empty range
 * starts at the line before it. */
static void range(StrBuf *out, char sign, int pos, int count)
{
	sb_printf(out, "%c%d", sign, count ? pos + 1 : pos);
	if (count != 1)
		sb_printf(out, ",%d", count);
}

void textdiff_unified(StrBuf *out, const TextDiff *d, int context)
{
	if (context < 0)
		context = 0;
	int k = 0, pa = 0, pb = 0;   /* pa, pb: A and B lines before ops[k] */
	while (k < d->nops) {
		int first = k;
		while (first < d->nops && d->ops[first].op == ' ')
			first++;
		if (first == d->nops)
			break;
		/* extend over changes separated by at most 2*context common lines */
		int last = first, p = first + 1;
		while (p < d->nops) {
			if (d->ops[p].op != ' ') {
				last = p++;
				continue;
			}
			int q = p;
			while (q < d->nops && d->ops[q].op == ' ')
				q++;
			if (q == d->nops || q - p > 2 * context)
				break;
			p = q;
		}
		int start = first - context > k ? first - context : k;
		int end = last + 1 + context < d->nops ? last + 1 + context : d->nops;
		for (int i = k; i < start; i++) {   /* skipped common lines */
			pa++;
			pb++;
		}
		int ca = 0, cb = 0;
		for (int i = start; i < end; i++) {
			ca += d->ops[i].op != '+';
			cb += d->ops[i].op != '-';
		}
		sb_puts(out, "@@ ");
		range(out, '-', pa, ca);
		sb_putc(out, ' ');
		range(out, '+', pb, cb);
		sb_puts(out, " @@\n");
		for (int i = start; i < end; i++) {
			const TextDiffOp *o = &d->ops[i];
			const TextLine *l = o->op == '+' ? &d->b[o->b] : &d->a[o->a];
			sb_putc(out, o->op);
			sb_putn(out, l->s, l->len);
			sb_putc(out, '\n');
			if (!l->eol)
				sb_puts(out, "\\ No newline at end of file\n");
		}
		pa += ca;
		pb += cb;
		k = end;
	}
}
