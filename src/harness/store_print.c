/*
 * store_print.c — text and JSON renderings of store records, and the JSON
 * lines export of measurement sets.
 *
 * Everything here works on the records of store.h alone (no SQL), so the
 * query commands (`cake log`, `show`, `best`, `diff`) stay thin and a second
 * backend would share these printers unchanged.
 *
 * Conventions. Times are printed in UTC as ISO 8601 with milliseconds
 * ("2026-05-01T12:34:56.789Z"); JSON carries time_ms as well. A double
 * that is NaN (the store's NULL) or infinite prints as "-" in text and null
 * in JSON; finite doubles print in the shortest form that reads back to the
 * same value. JSON documents carry a "schema" name with a version; the
 * export's lines carry "format": "cake-measure/1". Field lists are in
 * docs/STORE.md; adding a field is compatible, renaming one is a new version.
 */
#include "store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- scalars ---- */

/* Shortest %g form of v that strtod reads back exactly. */
static void put_dbl(StrBuf *b, double v)
{
	char buf[40];
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	sb_puts(b, buf);
}

static void json_dbl(StrBuf *b, double v)
{
	if (isnan(v) || isinf(v))
		sb_puts(b, "null");
	else
		put_dbl(b, v);
}

static void json_strn(StrBuf *b, const char *s)
{
	if (s)
		sb_json_str(b, s);
	else
		sb_puts(b, "null");
}

void store_print_time(StrBuf *b, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000);
	if (frac < 0) {
		frac += 1000;
		secs -= 1;
	}
	struct tm tm;
	gmtime_r(&secs, &tm);
	sb_printf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	          tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

/* Text cell: s with control characters shown as spaces; "-" when empty. */
static void text_cell(StrBuf *b, const char *s)
{
	if (!s || !*s) {
		sb_putc(b, '-');
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		sb_putc(b, *p < 0x20 ? ' ' : (char)*p);
}

/* ---- evaluations ---- */

/* The fields of an evaluation's JSON object, without the braces. */
static void eval_fields(StrBuf *b, const StoreEval *e)
{
	sb_printf(b, "\"id\":%lld,\"candidate\":", (long long)e->id);
	json_strn(b, e->cand);
	sb_puts(b, ",\"family\":");
	json_strn(b, e->family);
	sb_puts(b, ",\"kernel\":");
	json_strn(b, e->kernel);
	sb_puts(b, ",\"shape\":");
	json_strn(b, e->shape);
	sb_printf(b, ",\"seed\":%llu,\"target\":", (unsigned long long)e->seed);
	json_strn(b, e->target);
	sb_puts(b, ",\"gpu\":");
	json_strn(b, e->gpu);
	sb_puts(b, ",\"driver\":");
	json_strn(b, e->driver);
	sb_puts(b, ",\"compiler\":");
	json_strn(b, e->harness.compiler);
	sb_puts(b, ",\"verifier\":");
	json_strn(b, e->harness.verifier);
	sb_puts(b, ",\"cost_model\":");
	json_strn(b, e->harness.cost_model);
	sb_puts(b, ",\"tactics\":");
	json_strn(b, e->harness.tactics);
	sb_puts(b, ",\"harness\":");
	json_strn(b, e->harness_key);
	sb_puts(b, ",\"verdict\":");
	sb_json_str(b, store_verdict_name(e->verdict));
	sb_puts(b, ",\"message\":");
	json_strn(b, e->message);
	sb_puts(b, ",\"predicted_us\":");
	json_dbl(b, e->predicted_us);
	sb_puts(b, ",\"median_us\":");
	json_dbl(b, e->median_us);
	sb_puts(b, ",\"min_us\":");
	json_dbl(b, e->min_us);
	sb_puts(b, ",\"max_us\":");
	json_dbl(b, e->max_us);
	sb_puts(b, ",\"rel_err\":");
	json_dbl(b, e->rel_err);
	sb_puts(b, ",\"gpu_s\":");
	json_dbl(b, e->gpu_s);
	sb_puts(b, ",\"time\":\"");
	store_print_time(b, e->time_ms);
	sb_printf(b, "\",\"time_ms\":%lld,\"campaign\":", (long long)e->time_ms);
	json_strn(b, e->campaign);
	sb_puts(b, ",\"worker\":");
	json_strn(b, e->worker);
}

void store_eval_json(StrBuf *out, const StoreEval *e)
{
	sb_putc(out, '{');
	eval_fields(out, e);
	sb_putc(out, '}');
}

enum { COL_ID, COL_TIME, COL_CAND, COL_FAMILY, COL_KERNEL, COL_SHAPE, COL_VERDICT, COL_MEDIAN, COL_PRED,
       COL_RATIO, COL_CAMPAIGN, NCOL };

/* The text cells of one evaluation row. */
static void eval_cells(const StoreEval *e, StrBuf c[NCOL])
{
	sb_printf(&c[COL_ID], "%lld", (long long)e->id);
	store_print_time(&c[COL_TIME], e->time_ms);
	sb_printf(&c[COL_CAND], "%.12s", e->cand ? e->cand : "-");
	text_cell(&c[COL_FAMILY], e->family);
	text_cell(&c[COL_KERNEL], e->kernel);
	text_cell(&c[COL_SHAPE], e->shape);
	sb_puts(&c[COL_VERDICT], store_verdict_name(e->verdict));
	if (isfinite(e->median_us))
		sb_printf(&c[COL_MEDIAN], "%.1f", e->median_us);
	else
		sb_putc(&c[COL_MEDIAN], '-');
	if (isfinite(e->predicted_us))
		sb_printf(&c[COL_PRED], "%.1f", e->predicted_us);
	else
		sb_putc(&c[COL_PRED], '-');
	/* predicted over measured: > 1 when the model is pessimistic */
	if (isfinite(e->predicted_us) && isfinite(e->median_us) && e->median_us > 0)
		sb_printf(&c[COL_RATIO], "%.2f", e->predicted_us / e->median_us);
	else
		sb_putc(&c[COL_RATIO], '-');
	text_cell(&c[COL_CAMPAIGN], e->campaign);
}

static void print_eval_table(StrBuf *out, const StoreEval *e, int n)
{
	static const char *head[NCOL] = {"ID", "TIME", "CANDIDATE", "FAMILY", "KERNEL", "SHAPE", "VERDICT",
	                                 "MEDIAN_US", "PRED_US", "PRED/MEAS", "CAMPAIGN"};
	static const bool right[NCOL] = {true, false, false, false, false, false, false, true, true, true, false};
	size_t w[NCOL];
	for (int k = 0; k < NCOL; k++)
		w[k] = strlen(head[k]);
	StrBuf *cells = xcalloc((size_t)(n ? n : 1) * NCOL, sizeof *cells);
	for (int i = 0; i < n; i++) {
		eval_cells(&e[i], &cells[i * NCOL]);
		for (int k = 0; k < NCOL; k++)
			if (cells[i * NCOL + k].len > w[k])
				w[k] = cells[i * NCOL + k].len;
	}
	for (int i = -1; i < n; i++) {
		StrBuf line = {0};
		for (int k = 0; k < NCOL; k++) {
			const char *s = i < 0 ? head[k] : sb_str(&cells[i * NCOL + k]);
			int pad = (int)(w[k] - strlen(s));
			if (k)
				sb_puts(&line, "  ");
			if (right[k])
				sb_printf(&line, "%*s%s", pad, "", s);
			else if (k == NCOL - 1)
				sb_puts(&line, s);
			else
				sb_printf(&line, "%s%*s", s, pad, "");
		}
		sb_puts(out, sb_str(&line));
		sb_putc(out, '\n');
		sb_free(&line);
		if (i >= 0 && e[i].message && *e[i].message) {
			sb_puts(out, "    ");
			text_cell(out, e[i].message);
			sb_putc(out, '\n');
		}
	}
	for (int i = 0; i < n * NCOL; i++)
		sb_free(&cells[i]);
	free(cells);
}

static void json_eval_array(StrBuf *out, const StoreEval *e, int n)
{
	sb_putc(out, '[');
	for (int i = 0; i < n; i++) {
		if (i)
			sb_putc(out, ',');
		store_eval_json(out, &e[i]);
	}
	sb_putc(out, ']');
}

void store_print_evals(StrBuf *out, const StoreEval *e, int n, StoreFormat fmt)
{
	if (fmt == STORE_FMT_JSON) {
		sb_printf(out, "{\"schema\":\"cake-evals/1\",\"count\":%d,\"evaluations\":", n);
		json_eval_array(out, e, n);
		sb_puts(out, "}\n");
		return;
	}
	if (n == 0) {
		sb_puts(out, "no evaluations\n");
		return;
	}
	print_eval_table(out, e, n);
}

/* ---- candidates ---- */

void store_print_candidate(StrBuf *out, const StoreCandidate *c, const StoreEval *e, int n,
                           StoreFormat fmt)
{
	if (fmt == STORE_FMT_JSON) {
		sb_puts(out, "{\"schema\":\"cake-candidate/1\",\"candidate\":{\"id\":");
		sb_json_str(out, c->id);
		sb_puts(out, ",\"family\":");
		json_strn(out, c->family);
		sb_puts(out, ",\"parent\":");
		json_strn(out, c->parent);
		sb_puts(out, ",\"origin\":");
		json_strn(out, c->origin);
		sb_puts(out, ",\"created\":\"");
		store_print_time(out, c->created_ms);
		sb_printf(out, "\",\"created_ms\":%lld,\"text\":", (long long)c->created_ms);
		json_strn(out, c->text);
		sb_printf(out, "},\"count\":%d,\"evaluations\":", n);
		json_eval_array(out, e, n);
		sb_puts(out, "}\n");
		return;
	}
	sb_printf(out, "candidate %s\n", c->id);
	sb_puts(out, "family    ");
	text_cell(out, c->family);
	sb_puts(out, "\norigin    ");
	text_cell(out, c->origin);
	sb_puts(out, "\nparent    ");
	text_cell(out, c->parent);
	sb_puts(out, "\ncreated   ");
	store_print_time(out, c->created_ms);
	sb_printf(out, "\n\n%s", c->text ? c->text : "");
	if (c->text && *c->text && c->text[strlen(c->text) - 1] != '\n')
		sb_putc(out, '\n');
	sb_printf(out, "\n%d evaluation%s\n", n, n == 1 ? "" : "s");
	if (n)
		print_eval_table(out, e, n);
}

/* ---- diagnostics ---- */

void store_print_diags(StrBuf *out, const StoreDiag *d, int n, StoreFormat fmt)
{
	if (fmt == STORE_FMT_JSON) {
		sb_printf(out, "{\"schema\":\"cake-store-diags/1\",\"count\":%d,\"diagnostics\":[", n);
		for (int i = 0; i < n; i++) {
			const StoreDiag *x = &d[i];
			sb_printf(out, "%s{\"seq\":%d,\"rule\":", i ? "," : "", x->seq);
			json_strn(out, x->rule);
			sb_printf(out, ",\"severity\":\"%s\",\"message\":", sev_name(x->sev));
			json_strn(out, x->msg);
			sb_puts(out, ",\"file\":");
			json_strn(out, x->file);
			sb_printf(out, ",\"line\":%d,\"col\":%d,\"len\":%d,\"role\":", x->line, x->col, x->len);
			json_strn(out, x->role);
			sb_puts(out, ",\"resource\":");
			json_strn(out, x->resource);
			sb_puts(out, ",\"barrier\":");
			json_strn(out, x->barrier);
			sb_puts(out, ",\"pipeline\":");
			json_strn(out, x->pipeline);
			sb_puts(out, ",\"stage\":");
			if (x->stage >= 0)
				sb_printf(out, "%d", x->stage);
			else
				sb_puts(out, "null");
			sb_puts(out, ",\"phase\":");
			if (x->phase >= 0)
				sb_printf(out, "%d", x->phase);
			else
				sb_puts(out, "null");
			sb_puts(out, ",\"iter\":");
			json_strn(out, x->iter);
			sb_puts(out, ",\"condition\":");
			json_strn(out, x->condition);
			sb_puts(out, ",\"hint\":");
			json_strn(out, x->hint);
			sb_puts(out, ",\"related\":");
			if (x->rel_file || x->rel_msg) {
				sb_puts(out, "{\"file\":");
				json_strn(out, x->rel_file);
				sb_printf(out, ",\"line\":%d,\"col\":%d,\"message\":", x->rel_line, x->rel_col);
				json_strn(out, x->rel_msg);
				sb_putc(out, '}');
			} else
				sb_puts(out, "null");
			sb_putc(out, '}');
		}
		sb_puts(out, "]}\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		const StoreDiag *x = &d[i];
		if (x->file)
			sb_printf(out, "%s:%d:%d: ", x->file, x->line, x->col);
		sb_printf(out, "%s: ", sev_name(x->sev));
		text_cell(out, x->msg);
		sb_printf(out, " [%s]\n", x->rule ? x->rule : "?");
		StrBuf where = {0};
		const char *names[4] = {"role", "resource", "barrier", "pipeline"};
		const char *vals[4] = {x->role, x->resource, x->barrier, x->pipeline};
		for (int k = 0; k < 4; k++)
			if (vals[k])
				sb_printf(&where, "%s%s %s", where.len ? ", " : "", names[k], vals[k]);
		if (x->stage >= 0)
			sb_printf(&where, "%sstage %d", where.len ? ", " : "", x->stage);
		if (x->phase >= 0)
			sb_printf(&where, "%sphase %d", where.len ? ", " : "", x->phase);
		if (x->iter)
			sb_printf(&where, "%sat %s", where.len ? ", " : "", x->iter);
		if (where.len) {
			sb_puts(out, "  where: ");
			text_cell(out, sb_str(&where));
			sb_putc(out, '\n');
		}
		sb_free(&where);
		if (x->condition) {
			sb_puts(out, "  condition: ");
			text_cell(out, x->condition);
			sb_putc(out, '\n');
		}
		if (x->hint) {
			sb_puts(out, "  hint: ");
			text_cell(out, x->hint);
			sb_putc(out, '\n');
		}
		if (x->rel_msg) {
			sb_puts(out, "  ");
			if (x->rel_file)
				sb_printf(out, "%s:%d:%d: ", x->rel_file, x->rel_line, x->rel_col);
			sb_puts(out, "note: ");
			text_cell(out, x->rel_msg);
			sb_putc(out, '\n');
		}
	}
}

/* ---- counts ---- */

void store_print_counts(StrBuf *out, const StoreCounts *c, int n, StoreFormat fmt)
{
	if (fmt == STORE_FMT_JSON) {
		sb_puts(out, "{\"schema\":\"cake-counts/1\",\"campaigns\":[");
		for (int i = 0; i < n; i++) {
			sb_puts(out, i ? ",{\"campaign\":" : "{\"campaign\":");
			json_strn(out, c[i].campaign);
			sb_printf(out, ",\"total\":%d,\"gpu_s\":", c[i].total);
			json_dbl(out, c[i].gpu_s);
			sb_puts(out, ",\"verdicts\":{");
			for (int v = 1; v < STORE_NVERDICT; v++)
				sb_printf(out, "%s\"%s\":%d", v > 1 ? "," : "", store_verdict_name((StoreVerdict)v),
				          c[i].n[v]);
			sb_puts(out, "}}");
		}
		sb_puts(out, "]}\n");
		return;
	}
	if (n == 0) {
		sb_puts(out, "no evaluations\n");
		return;
	}
	/* columns: campaign, total, each verdict that occurs, gpu seconds */
	bool used[STORE_NVERDICT] = {0};
	size_t wc = strlen("CAMPAIGN");
	for (int i = 0; i < n; i++) {
		for (int v = 1; v < STORE_NVERDICT; v++)
			used[v] = used[v] || c[i].n[v];
		size_t l = c[i].campaign ? strlen(c[i].campaign) : 1;
		if (l > wc)
			wc = l;
	}
	sb_printf(out, "%-*s  %7s", (int)wc, "CAMPAIGN", "TOTAL");
	for (int v = 1; v < STORE_NVERDICT; v++)
		if (used[v])
			sb_printf(out, "  %s", store_verdict_name((StoreVerdict)v));
	sb_puts(out, "  GPU_S\n");
	for (int i = 0; i < n; i++) {
		StrBuf name = {0};
		text_cell(&name, c[i].campaign);
		sb_printf(out, "%-*s  %7d", (int)wc, sb_str(&name), c[i].total);
		sb_free(&name);
		for (int v = 1; v < STORE_NVERDICT; v++)
			if (used[v])
				sb_printf(out, "  %*d", (int)strlen(store_verdict_name((StoreVerdict)v)), c[i].n[v]);
		sb_printf(out, "  %.1f\n", c[i].gpu_s);
	}
}

/* ---- export ---- */

StoreStatus store_export_jsonl(Store *st, const StoreFilter *f, StrBuf *out, int *n)
{
	Arena a;
	arena_init(&a);
	StoreEval *e = NULL;
	int ne = 0;
	StoreStatus s = store_list_evals(st, f, &a, &e, &ne);
	if (s == STORE_OK)
		for (int i = ne - 1; i >= 0; i--) {   /* newest first -> oldest first */
			sb_puts(out, "{\"format\":\"cake-measure/1\",");
			eval_fields(out, &e[i]);
			sb_puts(out, "}\n");
		}
	if (n)
		*n = s == STORE_OK ? ne : 0;
	arena_free(&a);
	return s;
}
