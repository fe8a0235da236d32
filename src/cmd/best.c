/*
 * best.c — `cake best`: the fastest correct candidate for a family and shape,
 * or the frontier of every (family, kernel, shape).
 *
 *   cake best FAMILY --shape S [--kernel K] [--campaign C] [--gpu G] [--harness KEY]
 *             [--store PATH] [--format=text|json]
 *   cake best --frontier [FAMILY] [--shape S] [--kernel K] [...same filters]
 *
 * Only timed `ok` evaluations compete (store_best, store_frontier): the
 * smallest median wins, ties go to the earliest. Text: one summary line
 * (candidate, kernel, median, prediction) and the evaluation's row; JSON:
 * {"schema":"cake-best/1","family","kernel","shape","best":EVAL}. The
 * frontier prints store_print_evals' table or cake-evals/1 document.
 *
 * When nothing competes, the answer says what the store does hold for the
 * query, so that an empty result is not a mystery: the verdict counts of the
 * matching evaluations (with a hint when they are dry runs or untimed ok
 * runs), or, when none match, which shapes the family was evaluated at, or
 * which families the store has.
 *
 * Exit status: 0 found, 1 no timed ok evaluation matches, 2 bad usage or a
 * store that cannot be read.
 */
#include "cmd.h"

#include <math.h>
#include <string.h>

/* Append to msg the distinct values (family or shape) of e, at most 6. */
static void distinct(StrBuf *msg, const StoreEval *e, int n, bool shapes)
{
	int shown = 0;
	for (int i = 0; i < n; i++) {
		const char *v = shapes ? e[i].shape : e[i].family;
		bool seen = false;
		for (int j = 0; j < i && !seen; j++) {
			const char *w = shapes ? e[j].shape : e[j].family;
			seen = (v && w && !strcmp(v, w)) || (!v && !w);
		}
		if (seen)
			continue;
		if (shown++ == 6) {
			sb_puts(msg, ", ...");
			return;
		}
		sb_printf(msg, "%s%s", shown > 1 ? ", " : "", v ? (*v ? v : "(no dims)") : "(no family)");
	}
}

/* Why nothing competes for f: what the store holds instead, appended to msg. */
static StoreStatus explain(Store *st, const StoreFilter *f, StrBuf *msg)
{
	bool all = !f->family && !f->kernel && !f->shape && !f->campaign && !f->gpu && !f->harness;
	Arena a;
	arena_init(&a);
	StoreEval *e;
	int n;
	StoreStatus s = store_list_evals(st, f, &a, &e, &n);
	if (s == STORE_OK && n > 0) {
		int count[STORE_NVERDICT] = {0}, untimed = 0;
		for (int i = 0; i < n; i++) {
			count[e[i].verdict < STORE_NVERDICT ? e[i].verdict : 0]++;
			untimed += e[i].verdict == STORE_V_OK && isnan(e[i].median_us);
		}
		sb_printf(msg, "; the store has %d evaluation%s%s:", n, n == 1 ? "" : "s", all ? "" : " of it");
		int k = 0;
		for (int v = 1; v < STORE_NVERDICT; v++)
			if (count[v])
				sb_printf(msg, "%s %d %s", k++ ? "," : "", count[v], store_verdict_name((StoreVerdict)v));
		if (count[STORE_V_DRY_RUN])
			sb_puts(msg, " (a dry run is checked and predicted, not timed: run 'cake eval' without --dry-run on a GPU)");
		if (untimed)
			sb_printf(msg, " (%d ok but untimed: evaluated with --no-time)", untimed);
	} else if (s == STORE_OK && f->family) {
		StoreFilter fam = {.family = f->family};
		s = store_list_evals(st, &fam, &a, &e, &n);
		if (s == STORE_OK && n > 0) {
			sb_printf(msg, "; the store has no evaluation of it; family %s was evaluated at: ", f->family);
			distinct(msg, e, n, true);
		} else if (s == STORE_OK) {
			StoreFilter all = {0};
			s = store_list_evals(st, &all, &a, &e, &n);
			if (s == STORE_OK && n > 0) {
				sb_printf(msg, "; the store has no evaluation of family '%s' (its families: ", f->family);
				distinct(msg, e, n, false);
				sb_putc(msg, ')');
			} else if (s == STORE_OK)
				sb_puts(msg, "; the store has no evaluations at all");
		}
	} else if (s == STORE_OK)
		sb_puts(msg, all ? "; the store has no evaluations at all" : "; the store has no evaluation that matches");
	arena_free(&a);
	return s;
}

/* "of family gemm, kernel K, shape S" for the query f, or "in the store" when f has no filter */
static void describe(StrBuf *b, const StoreFilter *f, const char *shape)
{
	sb_puts(b, f->family || f->kernel || shape || f->campaign || f->gpu || f->harness ? "of " : "in the store");
	int k = 0;
	if (f->family)
		sb_printf(b, "%sfamily %s", k++ ? ", " : "", f->family);
	if (f->kernel)
		sb_printf(b, "%skernel %s", k++ ? ", " : "", f->kernel);
	if (shape)
		sb_printf(b, "%sshape %s", k++ ? ", " : "", *shape ? shape : "(no dims)");
	if (f->campaign)
		sb_printf(b, "%scampaign %s", k++ ? ", " : "", f->campaign);
	if (f->gpu)
		sb_printf(b, "%sgpu %s", k++ ? ", " : "", f->gpu);
	if (f->harness)
		sb_printf(b, "%sharness %s", k++ ? ", " : "", f->harness);
}

static void json_strn(StrBuf *b, const char *s)
{
	if (s)
		sb_json_str(b, s);
	else
		sb_puts(b, "null");
}

int cmd_best(int argc, char **argv)
{
	StoreFilter f = {0};
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL;
	bool frontier = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		int r;
		if ((r = cmd_format_option("best", argc, argv, &i, &fmt))) {
			if (r == 2)
				return 2;
		} else if (!strncmp(a, "--family", 8))
			return cmd_usage_error("best", "give FAMILY as an argument, not as '%s'", a);
		else if (!strncmp(a, "--verdict", 9) || !strncmp(a, "--limit", 7) || !strncmp(a, "--candidate", 11))
			return cmd_usage_error("best", "'%s' does not apply: only timed ok evaluations compete, and the "
			                       "answer is one per (family, kernel, shape)", a);
		else if ((r = cmd_filter_option("best", argc, argv, &i, &f))) {
			if (r == 2)
				return 2;
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if (missing)
			return cmd_usage_error("best", "option '%s' needs a value", a);
		else if (!strcmp(a, "--frontier"))
			frontier = true;
		else if (a[0] == '-')
			return cmd_usage_error("best", "unknown option '%s'", a);
		else if (f.family)
			return cmd_usage_error("best", "one FAMILY at a time (got a second: '%s')", a);
		else
			f.family = a;
	}
	if (!frontier && !f.family)
		return cmd_usage_error("best", "%s", "no FAMILY (e.g. 'cake best gemm --shape M=4096,N=4096,K=4096'; "
		                       "'cake families' lists them; --frontier lists the best of each)");
	if (!frontier && !f.shape)
		return cmd_usage_error("best", "%s", "--shape NAME=VALUE,... is required (or --frontier for every shape)");
	StrBuf shape = {0};
	if (f.shape)
		store_shape_canon(f.shape, &shape);   /* checked by cmd_filter_option */
	Store *st;
	if (cmd_open_store("best", spath, &st)) {
		sb_free(&shape);
		return 2;
	}
	Arena a;
	arena_init(&a);
	StrBuf b = {0};
	int status = 0;
	StoreStatus s;
	StoreEval *e = NULL, one;
	int n = 0;
	if (frontier)
		s = store_frontier(st, &f, &a, &e, &n);
	else {
		s = store_best(st, &f, &a, &one);
		e = &one;
		n = s == STORE_OK;
		if (s == STORE_NOT_FOUND)
			s = STORE_OK;
	}
	if (s != STORE_OK) {
		status = cmd_store_failed("best", st, s);
	} else if (n == 0) {
		StrBuf msg = {0};
		sb_printf(&msg, "cake best%s: no timed ok evaluation ", frontier ? " --frontier" : "");
		describe(&msg, &f, f.shape ? sb_str(&shape) : NULL);
		s = explain(st, &f, &msg);
		if (s != STORE_OK) {
			status = cmd_store_failed("best", st, s);
		} else {
			fprintf(stderr, "%s\n", sb_str(&msg));
			status = 1;
		}
		sb_free(&msg);
	} else if (frontier) {
		store_print_evals(&b, e, n, fmt);
	} else if (fmt == STORE_FMT_JSON) {
		sb_puts(&b, "{\"schema\":\"cake-best/1\",\"family\":");
		json_strn(&b, f.family);
		sb_puts(&b, ",\"kernel\":");
		json_strn(&b, f.kernel);
		sb_puts(&b, ",\"shape\":");
		sb_json_str(&b, sb_str(&shape));
		sb_puts(&b, ",\"best\":");
		store_eval_json(&b, e);
		sb_puts(&b, "}\n");
	} else {
		sb_printf(&b, "best of family %s at shape %s: candidate %s, kernel %s, median %.1f us", f.family,
		          *sb_str(&shape) ? sb_str(&shape) : "(no dims)", e->cand, e->kernel ? e->kernel : "-", e->median_us);
		if (isfinite(e->predicted_us))
			sb_printf(&b, " (predicted %.1f us)", e->predicted_us);
		sb_puts(&b, "\n");
		store_print_evals(&b, e, 1, fmt);
	}
	cmd_emit(stdout, &b);
	sb_free(&b);
	sb_free(&shape);
	arena_free(&a);
	store_close(st);
	return status;
}
