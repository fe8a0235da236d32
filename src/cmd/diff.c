/*
 * diff.c — `cake diff`: how two candidates differ, in IR and in results.
 *
 *   cake diff A B [--context N] [--store PATH] [--format=text|json]
 *   cake diff A  [...]            (A's parent against A)
 *
 * A and B are full ids or unique prefixes. The IR diff is src/harness/
 * textdiff.c's shortest line diff of the stored canonical texts, from A to B
 * ('-' lines only in A, '+' only in B); with one argument the parent is the
 * old side and A the new one, so a tactic's change reads as '+' lines. Text:
 * a `--- A` / `+++ B` header naming each side's origin and family, the unified
 * hunks (--context lines around each change, default 3, as diff -u), then the
 * two candidates' evaluations side by side: one row per (kernel, shape) that
 * either has, with each side's newest verdict, median and prediction and the
 * ratios B/A of the medians and of the predictions (`cake show` lists every
 * evaluation). JSON: {"schema":"cake-diff/1", "a": A's cake-candidate/1
 * document (candidate and evaluations), "b": B's, "deleted", "inserted",
 * "diff": the whole edit script, every line of both texts once, as
 * [{"op":" "|"-"|"+","line":TEXT}]}.
 *
 * Exit status: 0 shown (also when the texts are the same), 1 a candidate not
 * found or ambiguous, or A has no parent (or its parent is not stored) when
 * B is not given, 2 bad usage or a store that cannot be read.
 */
#include "cmd.h"
#include "../harness/textdiff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Side {
	StoreCandidate c;
	StoreEval *e;
	int n;
} Side;

static StoreStatus load(Store *st, const char *id, Arena *a, Side *s)
{
	StoreStatus r = store_get_candidate(st, id, a, &s->c);
	if (r == STORE_OK)
		r = store_list_evals(st, &(StoreFilter){.cand = s->c.id}, a, &s->e, &s->n);
	return r;
}

static bool same_str(const char *x, const char *y)
{
	return (!x && !y) || (x && y && !strcmp(x, y));
}

/* The newest evaluation of (kernel, shape) in s, or NULL (the list is newest first). */
static const StoreEval *newest(const Side *s, const char *kernel, const char *shape)
{
	for (int i = 0; i < s->n; i++)
		if (same_str(s->e[i].kernel, kernel) && same_str(s->e[i].shape, shape))
			return &s->e[i];
	return NULL;
}

static void cell_us(StrBuf *c, double v)
{
	if (isfinite(v))
		sb_printf(c, "%.1f", v);
	else
		sb_putc(c, '-');
}

static void cell_ratio(StrBuf *c, double b, double a)
{
	if (isfinite(a) && isfinite(b) && a > 0)
		sb_printf(c, "%.2f", b / a);
	else
		sb_putc(c, '-');
}

enum { SB_KERNEL, SB_SHAPE, SB_AV, SB_AMED, SB_APRED, SB_BV, SB_BMED, SB_BPRED, SB_RMED, SB_RPRED, SB_NCOL };

static void row_cells(StrBuf *c, const char *kernel, const char *shape, const StoreEval *x, const StoreEval *y)
{
	sb_puts(&c[SB_KERNEL], kernel && *kernel ? kernel : "-");
	sb_puts(&c[SB_SHAPE], shape && *shape ? shape : "-");
	sb_puts(&c[SB_AV], x ? store_verdict_name(x->verdict) : "-");
	cell_us(&c[SB_AMED], x ? x->median_us : NAN);
	cell_us(&c[SB_APRED], x ? x->predicted_us : NAN);
	sb_puts(&c[SB_BV], y ? store_verdict_name(y->verdict) : "-");
	cell_us(&c[SB_BMED], y ? y->median_us : NAN);
	cell_us(&c[SB_BPRED], y ? y->predicted_us : NAN);
	cell_ratio(&c[SB_RMED], y ? y->median_us : NAN, x ? x->median_us : NAN);
	cell_ratio(&c[SB_RPRED], y ? y->predicted_us : NAN, x ? x->predicted_us : NAN);
}

/* The side-by-side table: A's (kernel, shape) pairs in A's order, then B's others. */
static void side_by_side(StrBuf *out, const Side *a, const Side *b)
{
	static const char *head[SB_NCOL] = {"KERNEL", "SHAPE", "A", "A_MEDIAN_US", "A_PRED_US",
	                                    "B", "B_MEDIAN_US", "B_PRED_US", "B/A_MEDIAN", "B/A_PRED"};
	static const bool right[SB_NCOL] = {false, false, false, true, true, false, true, true, true, true};
	int cap = a->n + b->n + 1, rows = 0;
	StrBuf *cells = xcalloc((size_t)cap * SB_NCOL, sizeof *cells);
	for (int side = 0; side < 2; side++) {
		const Side *s = side ? b : a;
		for (int i = 0; i < s->n; i++) {
			const StoreEval *e = &s->e[i];
			if (newest(s, e->kernel, e->shape) != e || (side && newest(a, e->kernel, e->shape)))
				continue;   /* not the newest of its pair, or already a row of A's */
			row_cells(&cells[rows++ * SB_NCOL], e->kernel, e->shape, newest(a, e->kernel, e->shape),
			          newest(b, e->kernel, e->shape));
		}
	}
	if (!rows) {
		sb_puts(out, "no evaluations of either candidate\n");
		free(cells);
		return;
	}
	size_t w[SB_NCOL];
	for (int k = 0; k < SB_NCOL; k++) {
		w[k] = strlen(head[k]);
		for (int r = 0; r < rows; r++)
			if (cells[r * SB_NCOL + k].len > w[k])
				w[k] = cells[r * SB_NCOL + k].len;
	}
	for (int r = -1; r < rows; r++) {
		for (int k = 0; k < SB_NCOL; k++) {
			const char *s = r < 0 ? head[k] : sb_str(&cells[r * SB_NCOL + k]);
			int pad = (int)(w[k] - strlen(s));
			if (k)
				sb_puts(out, "  ");
			if (right[k])
				sb_printf(out, "%*s%s", pad, "", s);
			else if (k == SB_NCOL - 1)
				sb_puts(out, s);
			else
				sb_printf(out, "%s%*s", s, pad, "");
		}
		sb_putc(out, '\n');
	}
	for (int i = 0; i < rows * SB_NCOL; i++)
		sb_free(&cells[i]);
	free(cells);
}

static void header(StrBuf *out, const char *mark, const StoreCandidate *c)
{
	sb_printf(out, "%s %s (%s, family %s", mark, c->id, c->origin ? c->origin : "-", c->family ? c->family : "-");
	if (c->parent)
		sb_printf(out, ", parent %.12s", c->parent);
	sb_puts(out, ")\n");
}

static void json_side(StrBuf *out, const Side *s)
{
	store_print_candidate(out, &s->c, s->e, s->n, STORE_FMT_JSON);
	while (out->len && out->s[out->len - 1] == '\n')
		out->s[--out->len] = 0;
}

int cmd_diff(int argc, char **argv)
{
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL, *ida = NULL, *idb = NULL;
	int context = 3;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		int r = cmd_format_option("diff", argc, argv, &i, &fmt);
		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--context", &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (!*v || *end || n < 0 || n > 1000000)
				return cmd_usage_error("diff", "--context needs a count of lines (0 or more), got '%s'", v);
			context = (int)n;
		} else if (missing)
			return cmd_usage_error("diff", "option '%s' needs a value", argv[i]);
		else if (argv[i][0] == '-')
			return cmd_usage_error("diff", "unknown option '%s'", argv[i]);
		else if (!ida)
			ida = argv[i];
		else if (!idb)
			idb = argv[i];
		else
			return cmd_usage_error("diff", "two candidates at most (got a third: '%s')", argv[i]);
	}
	if (!ida)
		return cmd_usage_error("diff", "%s", "no candidate: 'cake diff A B', or 'cake diff A' against A's parent");
	Store *st;
	if (cmd_open_store("diff", spath, &st))
		return 2;
	Arena ar;
	arena_init(&ar);
	Side a = {0}, b = {0};
	int status = 0;
	StoreStatus s;
	if (idb) {
		if ((s = load(st, ida, &ar, &a)) != STORE_OK || (s = load(st, idb, &ar, &b)) != STORE_OK)
			status = cmd_store_failed("diff", st, s);
	} else if ((s = load(st, ida, &ar, &b)) != STORE_OK)
		status = cmd_store_failed("diff", st, s);
	else if (!b.c.parent) {
		fprintf(stderr, "cake diff: candidate %s has no parent (origin %s); give a second candidate to diff "
		        "against\n", b.c.id, b.c.origin ? b.c.origin : "-");
		status = 1;
	} else if ((s = load(st, b.c.parent, &ar, &a)) != STORE_OK) {
		if (s == STORE_NOT_FOUND)
			fprintf(stderr, "cake diff: the parent %s of candidate %s is not in the store; give a second "
			        "candidate to diff against\n", b.c.parent, b.c.id);
		status = s == STORE_NOT_FOUND ? 1 : cmd_store_failed("diff", st, s);
	}
	if (status) {
		arena_free(&ar);
		store_close(st);
		return status;
	}
	const char *ta = a.c.text ? a.c.text : "", *tb = b.c.text ? b.c.text : "";
	TextDiff d;
	textdiff_run(&d, ta, strlen(ta), tb, strlen(tb));
	StrBuf out = {0};
	if (fmt == STORE_FMT_JSON) {
		sb_puts(&out, "{\"schema\":\"cake-diff/1\",\"a\":");
		json_side(&out, &a);
		sb_puts(&out, ",\"b\":");
		json_side(&out, &b);
		sb_printf(&out, ",\"deleted\":%d,\"inserted\":%d,\"diff\":[", d.ndel, d.nadd);
		for (int i = 0; i < d.nops; i++) {
			const TextDiffOp *o = &d.ops[i];
			const TextLine *l = o->op == '+' ? &d.b[o->b] : &d.a[o->a];
			sb_printf(&out, "%s{\"op\":\"%c\",\"line\":", i ? "," : "", o->op);
			sb_json_str(&out, arena_strndup(&ar, l->s, l->len));
			sb_putc(&out, '}');
		}
		sb_puts(&out, "]}\n");
	} else {
		header(&out, "---", &a.c);
		header(&out, "+++", &b.c);
		if (d.ndel + d.nadd == 0)
			sb_puts(&out, "(the IR is the same)\n");
		else
			textdiff_unified(&out, &d, context);
		sb_printf(&out, "\n%d line%s deleted, %d inserted; evaluations, newest per kernel and shape "
		          "(A = %.12s, B = %.12s):\n", d.ndel, d.ndel == 1 ? "" : "s", d.nadd, a.c.id, b.c.id);
		side_by_side(&out, &a, &b);
	}
	cmd_emit(stdout, &out);
	sb_free(&out);
	textdiff_free(&d);
	arena_free(&ar);
	store_close(st);
	return 0;
}
