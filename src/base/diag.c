/*
 * diag.c — collecting findings and rendering them as text, JSON and SARIF.
 *
 * Collecting. diag_add appends a malloc-backed Diag to a DiagList and bumps
 * the per-severity counter. Nothing ever stops at the first finding, but a
 * pathological input (10 MB of garbage) must not make the list grow without
 * bound, so past the list's cap (dl->max, 10000 by default) findings are
 * still counted (nerr/nwarn/nnote and `dropped`) but no longer stored: the
 * caller gets a scratch Diag (dl->spill) whose fields are wiped on every
 * reuse, so code that fills in localisation after diag_add keeps working.
 *
 * Ordering. diag_sort is a stable merge sort by (file, line, col, rule ID):
 * two findings at the same place keep the order in which passes reported
 * them, so output is deterministic and golden tests are stable.
 *
 * Text. gcc style, which editors and CI log scrapers already understand:
 *
 *   kernels/gemm/gemm.cake:12:7: error: barrier 'full' is never waited on [CK-BAR-002]
 *     barrier full ring ab producers load consumers mma arrivals 1
 *             ^~~~
 *   = role: mma, barrier: full, stage: 2, phase: 1, iteration: k=6
 *   = condition: ...
 *   = hint: ...
 *   kernels/gemm/gemm.cake:30:7: note: the producer signals it here
 *   <source line>
 *   <caret>
 *
 * The source line is printed as is, except that control bytes and invalid
 * UTF-8 are shown as '?', so a binary file cannot garble a terminal. Caret
 * padding copies tabs from the source line so the caret lands under the
 * right character whatever the tab width, and counts one column per UTF-8
 * character. Lines longer than a screen are shown as a window around the
 * column, with "..." on the cut sides; at most 4 KiB either side of the
 * column is ever scanned, so 10,000 findings on a 10 MB one-line file print
 * in linear time (SARIF's code-point columns use a cursor for the same
 * reason). The list ends with a summary
 * ("2 errors, 1 warning", plus ", N notes" when there are notes) only when
 * there was at least one finding: a clean run prints nothing at all.
 *
 * JSON and SARIF are built by hand with StrBuf. Strings go through
 * json_str, which replaces invalid UTF-8 with U+FFFD so the document is
 * always valid JSON even when a message quotes bytes of a binary file. The
 * JSON schema is documented in docs/DIAGNOSTICS.md; SARIF follows 2.1.0 with
 * columns counted in Unicode code points (run.columnKind says so).
 *
 * The rule registry (registry.h, beside this file) describes the rules in
 * the SARIF tool.driver.rules table.
 */
#include "diag.h"
#include "registry.h"

#include <stdlib.h>
#include <string.h>

#define DIAG_DEFAULT_MAX 10000
#define LINE_WINDOW 240       /* bytes of a long line shown around the column */
#define LINE_MAX_SHOWN 300    /* lines up to this long are shown whole */
#define LINE_SCAN 4096        /* bytes searched either way for a line's ends */

/* SARIF tool.driver.informationUri: the method this tool implements. */
#define CAKE_INFO_URI "https://arxiv.org/abs/2608.12629"
#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

/* ---- collecting ---- */

const char *sev_name(Severity s)
{
	switch (s) {
	case SEV_ERROR: return "error";
	case SEV_WARNING: return "warning";
	case SEV_NOTE: return "note";
	}
	return "error";
}

int diag_cap(const DiagList *dl)
{
	return dl->max > 0 ? dl->max : DIAG_DEFAULT_MAX;
}

static char *xvprintf(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	char *s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

static void fix_free(DiagFix *f)
{
	for (int i = 0; i < f->nedits; i++)
		free(f->edits[i].text);
	free(f->edits);
	free(f->desc);
	free(f);
}

/* Release the strings a Diag owns (not the Diag itself). */
static void diag_clear(Diag *d)
{
	for (int i = 0; i < d->nfixes; i++)
		fix_free(d->fixes[i]);
	free(d->fixes);
	free(d->msg);
	free(d->role);
	free(d->resource);
	free(d->barrier);
	free(d->pipeline);
	free(d->iter);
	free(d->condition);
	free(d->hint);
	free(d->related_msg);
	memset(d, 0, sizeof *d);
}

static void diag_reset(Diag *d, const char *rule, Severity sev, Span span)
{
	d->rule = rule;
	d->sev = sev;
	d->span = span;
	d->stage = d->phase = -1;
	d->related = NOSPAN;
}

Diag *diag_add(DiagList *dl, const char *rule, Severity sev, Span span,
               const char *fmt, ...)
{
	switch (sev) {
	case SEV_ERROR: dl->nerr++; break;
	case SEV_WARNING: dl->nwarn++; break;
	case SEV_NOTE: dl->nnote++; break;
	}
	Diag *d;
	if (dl->n >= diag_cap(dl)) {
		dl->dropped++;
		if (!dl->spill)
			dl->spill = xcalloc(1, sizeof(Diag));
		d = dl->spill;
		diag_clear(d);
	} else {
		if (dl->n == dl->cap) {
			dl->cap = dl->cap ? dl->cap * 2 : 16;
			dl->items = xrealloc(dl->items, sizeof(Diag *) * (size_t)dl->cap);
		}
		d = xcalloc(1, sizeof(Diag));
		dl->items[dl->n++] = d;
	}
	diag_reset(d, rule, sev, span);
	va_list ap;
	va_start(ap, fmt);
	d->msg = xvprintf(fmt, ap);
	va_end(ap);
	return d;
}

void diag_set(char **field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvprintf(fmt, ap);
	va_end(ap);
	free(*field);
	*field = s;
}

void diag_related(Diag *d, Span s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvprintf(fmt, ap);
	va_end(ap);
	free(d->related_msg);
	d->related_msg = m;
	d->related = s;
}

DiagFix *diag_fix(Diag *d, const char *fmt, ...)
{
	DiagFix *f = xcalloc(1, sizeof *f);
	va_list ap;
	va_start(ap, fmt);
	f->desc = xvprintf(fmt, ap);
	va_end(ap);
	d->fixes = xrealloc(d->fixes, sizeof(DiagFix *) * (size_t)(d->nfixes + 1));
	d->fixes[d->nfixes++] = f;
	return f;
}

void diag_fix_edit(DiagFix *f, Span s, const char *text)
{
	f->edits = xrealloc(f->edits, sizeof(DiagEdit) * (size_t)(f->nedits + 1));
	f->edits[f->nedits++] = (DiagEdit){s, xstrdup(text ? text : "")};
}

Span diag_span_at(const SourceSet *ss, int file, int off, int len)
{
	if (!ss || file < 0 || file >= ss->n || off < 0 || len < 0 || (size_t)off + (size_t)len > ss->files[file].len)
		return NOSPAN;
	const char *t = ss->files[file].text;
	int line = 1, ls = 0;
	for (int i = 0; i < off; i++)
		if (t[i] == '\n')
			line++, ls = i + 1;
	return (Span){file, line, off - ls + 1, off, len};
}

/* One edit taken for application, in file order. */
typedef struct Taken {
	int off, len;
	const char *text;
} Taken;

static int taken_cmp(const void *a, const void *b)
{
	const Taken *x = a, *y = b;
	return x->off != y->off ? (x->off < y->off ? -1 : 1) : (x->len < y->len ? -1 : x->len > y->len);
}

/* Whether [a, a+al) and [b, b+bl) conflict: they overlap, or two edits touch
 * the same point (two insertions there, or an insertion at either end of a
 * replacement), where the order of application would matter. */
static bool edits_clash(int a, int al, int b, int bl)
{
	if (al == 0 || bl == 0)
		return al == 0 && bl == 0 ? a == b : (al == 0 ? a >= b && a <= b + bl : b >= a && b <= a + al);
	return a < b + bl && b < a + al;
}

int diag_apply_fixes(const SourceSet *ss, const DiagList *dl, int file, StrBuf *out)
{
	const Source *f = &ss->files[file];
	Taken *tk = NULL;
	int nt = 0, applied = 0;
	for (int i = 0; i < dl->n; i++) {
		const Diag *d = dl->items[i];
		if (!d->nfixes)
			continue;
		const DiagFix *fx = d->fixes[0];
		bool ok = fx->nedits > 0;
		bool *same = xcalloc((size_t)fx->nedits + 1, sizeof(bool));
		for (int e = 0; ok && e < fx->nedits; e++) {
			const DiagEdit *ed = &fx->edits[e];
			if (ed->span.file != file || ed->span.off < 0 || ed->span.len < 0 ||
			    (size_t)ed->span.off + (size_t)ed->span.len > f->len) {
				ok = false;
				break;
			}
			for (int k = 0; k < nt; k++) {
				if (tk[k].off == ed->span.off && tk[k].len == ed->span.len && !strcmp(tk[k].text, ed->text))
					same[e] = true;
				else if (edits_clash(tk[k].off, tk[k].len, ed->span.off, ed->span.len))
					ok = false;
			}
			/* nor may the edits of one fix clash with each other */
			for (int g = e + 1; g < fx->nedits; g++)
				if (edits_clash(ed->span.off, ed->span.len, fx->edits[g].span.off, fx->edits[g].span.len))
					ok = false;
		}
		if (ok) {
			applied++;
			tk = xrealloc(tk, sizeof(Taken) * (size_t)(nt + fx->nedits));
			for (int e = 0; e < fx->nedits; e++)
				if (!same[e])   /* an identical edit of an earlier fix is made once */
					tk[nt++] = (Taken){fx->edits[e].span.off, fx->edits[e].span.len, fx->edits[e].text};
		}
		free(same);
	}
	if (nt > 1)
		qsort(tk, (size_t)nt, sizeof(Taken), taken_cmp);
	size_t at = 0;
	for (int k = 0; k < nt; k++) {
		sb_putn(out, f->text + at, (size_t)tk[k].off - at);
		sb_puts(out, tk[k].text);
		at = (size_t)tk[k].off + (size_t)tk[k].len;
	}
	sb_putn(out, f->text + at, f->len - at);
	free(tk);
	return applied;
}

void diag_free(DiagList *dl)
{
	for (int i = 0; i < dl->n; i++) {
		diag_clear(dl->items[i]);
		free(dl->items[i]);
	}
	free(dl->items);
	if (dl->spill) {
		diag_clear(dl->spill);
		free(dl->spill);
	}
	int max = dl->max;
	memset(dl, 0, sizeof *dl);
	dl->max = max;
}

static int diag_cmp(const Diag *a, const Diag *b)
{
	if (a->span.file != b->span.file)
		return a->span.file < b->span.file ? -1 : 1;
	if (a->span.line != b->span.line)
		return a->span.line < b->span.line ? -1 : 1;
	if (a->span.col != b->span.col)
		return a->span.col < b->span.col ? -1 : 1;
	return strcmp(a->rule ? a->rule : "", b->rule ? b->rule : "");
}

int diag_remove_rules(DiagList *dl, int from, const char *const *rules)
{
	int k = from < 0 ? 0 : from, removed = 0;
	for (int i = k; i < dl->n; i++) {
		Diag *d = dl->items[i];
		bool hit = false;
		for (int r = 0; rules && rules[r] && !hit; r++)
			hit = d->rule && strcmp(d->rule, rules[r]) == 0;
		if (!hit) {
			dl->items[k++] = d;
			continue;
		}
		switch (d->sev) {
		case SEV_ERROR: dl->nerr--; break;
		case SEV_WARNING: dl->nwarn--; break;
		case SEV_NOTE: dl->nnote--; break;
		}
		diag_clear(d);
		free(d);
		removed++;
	}
	dl->n = k > dl->n ? dl->n : k;
	return removed;
}

void diag_sort(DiagList *dl)
{
	int n = dl->n;
	if (n < 2)
		return;
	/* bottom-up merge sort: stable, O(n log n), no recursion */
	Diag **src = dl->items, **tmp = xmalloc(sizeof(Diag *) * (size_t)n);
	Diag **dst = tmp;
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n;
			int hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = diag_cmp(src[j], src[i]) < 0 ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		Diag **t = src;
		src = dst;
		dst = t;
	}
	if (src != dl->items)
		memcpy(dl->items, src, sizeof(Diag *) * (size_t)n);
	free(src == dl->items ? dst : src);
}

/* ---- UTF-8 helpers ---- */


/* Append s as a JSON string, replacing invalid UTF-8 with U+FFFD. NULL -> null. */
static void json_str(StrBuf *b, const char *s)
{
	if (!s) {
		sb_puts(b, "null");
		return;
	}
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	bool ok = true;
	for (const unsigned char *q = p; q < end;) {
		int n = utf8_seq_len(q, end);
		if (!n) {
			ok = false;
			break;
		}
		q += n;
	}
	if (ok) {
		sb_json_str(b, s);
		return;
	}
	StrBuf t = {0};
	while (p < end) {
		int n = utf8_seq_len(p, end);
		if (n) {
			sb_putn(&t, (const char *)p, (size_t)n);
			p += n;
		} else {
			sb_puts(&t, "\xef\xbf\xbd");
			p++;
		}
	}
	sb_json_str(b, sb_str(&t));
	sb_free(&t);
}

/* Number of display characters in bytes [p, end): one per UTF-8 character,
 * one per invalid byte. */
static int utf8_count(const unsigned char *p, const unsigned char *end)
{
	int n = 0;
	while (p < end) {
		int k = utf8_seq_len(p, end);
		p += k ? k : 1;
		n++;
	}
	return n;
}

static bool span_ok(const SourceSet *ss, Span s)
{
	return ss && s.file >= 0 && s.file < ss->n;
}

static const char *span_path(const SourceSet *ss, Span s)
{
	return span_ok(ss, s) ? ss->files[s.file].path : NULL;
}

/* ---- text ---- */

#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN "\033[1;36m"
#define C_GREEN "\033[1;32m"
#define C_RESET "\033[0m"

static const char *sev_color(Severity s)
{
	return s == SEV_ERROR ? C_RED : s == SEV_WARNING ? C_MAGENTA : C_CYAN;
}

/* Print the source line holding span s and a caret line under the span. */
static void text_snippet(StrBuf *out, const SourceSet *ss, Span s, bool color)
{
	if (!span_ok(ss, s))
		return;
	const Source *f = &ss->files[s.file];
	size_t off = s.off < 0 ? 0 : (size_t)s.off <= f->len ? (size_t)s.off : f->len;
	/* find the line around off, looking at most LINE_SCAN bytes either way:
	 * a finding on a 10 MB one-line file must not cost a 10 MB scan. A line
	 * cut short here is longer than LINE_MAX_SHOWN, so it gets the window. */
	size_t b = off, lim = off > LINE_SCAN ? off - LINE_SCAN : 0;
	while (b > lim && f->text[b - 1] != '\n')
		b--;
	size_t e = off, elim = f->len - off > LINE_SCAN ? off + LINE_SCAN : f->len;
	while (e < elim && f->text[e] != '\n')
		e++;
	const char *line = f->text + b;
	const unsigned char *L = (const unsigned char *)line;
	int linelen = (int)(e - b);
	int col0 = (int)(off - b);                        /* 0-based byte column */
	if (linelen > 0 && line[linelen - 1] == '\r')
		linelen--;
	if (col0 > linelen)
		col0 = linelen;
	int spanend = col0 + (s.len > 0 ? s.len : 0);
	if (spanend > linelen)
		spanend = linelen;

	/* choose the window of the line to show */
	int ws = 0, we = linelen;
	if (linelen > LINE_MAX_SHOWN) {
		ws = col0 > LINE_WINDOW / 4 ? col0 - LINE_WINDOW / 4 : 0;
		while (ws > 0 && (L[ws] & 0xc0) == 0x80)
			ws--;
		we = ws + LINE_WINDOW < linelen ? ws + LINE_WINDOW : linelen;
		while (we < linelen && (L[we] & 0xc0) == 0x80)
			we++;
		if (spanend > we)
			spanend = we;
	}

	/* the line itself, sanitised */
	if (ws > 0)
		sb_puts(out, "...");
	for (int i = ws; i < we;) {
		int n = utf8_seq_len(L + i, L + we);
		if (L[i] == '\t')
			sb_putc(out, '\t');
		else if (L[i] < 0x20 || L[i] == 0x7f || !n)
			sb_putc(out, '?');
		else
			sb_putn(out, line + i, (size_t)n);
		i += n ? n : 1;
	}
	if (we < linelen)
		sb_puts(out, "...");
	sb_putc(out, '\n');

	/* the caret line: padding mirrors tabs, one column per character */
	if (ws > 0)
		sb_puts(out, "   ");
	for (int i = ws; i < col0;) {
		int n = utf8_seq_len(L + i, L + col0);
		sb_putc(out, L[i] == '\t' ? '\t' : ' ');
		i += n ? n : 1;
	}
	if (color)
		sb_puts(out, C_GREEN);
	sb_putc(out, '^');
	int width = utf8_count(L + col0, L + spanend);
	for (int i = 1; i < width; i++)
		sb_putc(out, '~');
	if (color)
		sb_puts(out, C_RESET);
	sb_putc(out, '\n');
}

/* "path:line:col: sev: " or "cake: sev: " when there is no location. */
static void text_head(StrBuf *out, const SourceSet *ss, Span s, Severity sev, bool color)
{
	if (color)
		sb_puts(out, C_BOLD);
	if (span_ok(ss, s))
		sb_printf(out, "%s:%d:%d: ", ss->files[s.file].path, s.line, s.col);
	else
		sb_puts(out, "cake: ");
	if (color)
		sb_printf(out, C_RESET "%s%s:" C_RESET " ", sev_color(sev), sev_name(sev));
	else
		sb_printf(out, "%s: ", sev_name(sev));
}

static void text_field(StrBuf *out, bool *first, const char *name, const char *val)
{
	sb_puts(out, *first ? "  = " : ", ");
	sb_printf(out, "%s: %s", name, val);
	*first = false;
}

static void text_one(StrBuf *out, const SourceSet *ss, const Diag *d, bool color)
{
	text_head(out, ss, d->span, d->sev, color);
	sb_puts(out, d->msg ? d->msg : "");
	if (d->rule) {
		if (color)
			sb_printf(out, " [" C_BOLD "%s" C_RESET "]", d->rule);
		else
			sb_printf(out, " [%s]", d->rule);
	}
	sb_putc(out, '\n');
	text_snippet(out, ss, d->span, color);

	bool first = true;
	char num[32];
	if (d->role)
		text_field(out, &first, "role", d->role);
	if (d->resource)
		text_field(out, &first, "resource", d->resource);
	if (d->barrier)
		text_field(out, &first, "barrier", d->barrier);
	if (d->pipeline)
		text_field(out, &first, "pipeline", d->pipeline);
	if (d->stage >= 0) {
		snprintf(num, sizeof num, "%d", d->stage);
		text_field(out, &first, "stage", num);
	}
	if (d->phase >= 0) {
		snprintf(num, sizeof num, "%d", d->phase);
		text_field(out, &first, "phase", num);
	}
	if (d->iter)
		text_field(out, &first, "iteration", d->iter);
	if (!first)
		sb_putc(out, '\n');
	if (d->condition)
		sb_printf(out, "  = condition: %s\n", d->condition);
	if (d->hint)
		sb_printf(out, "  = hint: %s\n", d->hint);
	for (int i = 0; i < d->nfixes; i++)
		sb_printf(out, "  = fix: %s\n", d->fixes[i]->desc);
	if (span_ok(ss, d->related)) {
		text_head(out, ss, d->related, SEV_NOTE, color);
		sb_printf(out, "%s\n", d->related_msg ? d->related_msg : "related location");
		text_snippet(out, ss, d->related, color);
	} else if (d->related_msg) {
		sb_printf(out, "  = note: %s\n", d->related_msg);
	}
}

static void plural(StrBuf *out, int n, const char *word)
{
	sb_printf(out, "%d %s%s", n, word, n == 1 ? "" : "s");
}

void diag_print_text(StrBuf *out, const SourceSet *ss, const DiagList *dl, bool color)
{
	for (int i = 0; i < dl->n; i++)
		text_one(out, ss, dl->items[i], color);
	if (dl->dropped > 0)
		sb_printf(out, "cake: note: %d further finding%s not shown (limit %d)\n",
		          dl->dropped, dl->dropped == 1 ? "" : "s", diag_cap(dl));
	if (dl->nerr + dl->nwarn + dl->nnote == 0)
		return;
	plural(out, dl->nerr, "error");
	sb_puts(out, ", ");
	plural(out, dl->nwarn, "warning");
	if (dl->nnote > 0) {
		sb_puts(out, ", ");
		plural(out, dl->nnote, "note");
	}
	sb_putc(out, '\n');
}

/* ---- JSON ---- */

static void json_kv_str(StrBuf *out, const char *key, const char *val)
{
	sb_printf(out, ", \"%s\": ", key);
	json_str(out, val);
}

static void json_kv_int(StrBuf *out, const char *key, int val)
{
	if (val >= 0)
		sb_printf(out, ", \"%s\": %d", key, val);
	else
		sb_printf(out, ", \"%s\": null", key);
}

static void json_location(StrBuf *out, const SourceSet *ss, Span s, const char *msg,
                          bool with_msg)
{
	sb_puts(out, "{\"file\": ");
	json_str(out, span_path(ss, s));
	sb_printf(out, ", \"line\": %d, \"col\": %d, \"offset\": %d, \"length\": %d",
	          s.line, s.col, s.off, s.len);
	if (with_msg)
		json_kv_str(out, "message", msg);
	sb_putc(out, '}');
}

/* ", \"fixes\": [...]": each fix's description and edits (file, offset,
 * length, line, col of the start, replacement). */
static void json_fixes(StrBuf *out, const SourceSet *ss, const Diag *d)
{
	sb_puts(out, ", \"fixes\": [");
	for (int i = 0; i < d->nfixes; i++) {
		const DiagFix *f = d->fixes[i];
		sb_puts(out, i ? ", {\"description\": " : "{\"description\": ");
		json_str(out, f->desc);
		sb_puts(out, ", \"edits\": [");
		for (int e = 0; e < f->nedits; e++) {
			const DiagEdit *ed = &f->edits[e];
			sb_puts(out, e ? ", {\"file\": " : "{\"file\": ");
			json_str(out, span_path(ss, ed->span));
			sb_printf(out, ", \"offset\": %d, \"length\": %d, \"line\": %d, \"col\": %d, \"replacement\": ",
			          ed->span.off, ed->span.len, ed->span.line, ed->span.col);
			json_str(out, ed->text);
			sb_putc(out, '}');
		}
		sb_puts(out, "]}");
	}
	sb_putc(out, ']');
}

void diag_print_json(StrBuf *out, const SourceSet *ss, const DiagList *dl,
                     const char *verifier_version)
{
	sb_puts(out, "{\n  \"schema\": \"cake-diagnostics/1\",\n  \"verifier\": ");
	json_str(out, verifier_version);
	sb_puts(out, ",\n  \"files\": [");
	for (int i = 0; ss && i < ss->n; i++) {
		if (i)
			sb_puts(out, ", ");
		json_str(out, ss->files[i].path);
	}
	sb_puts(out, "],\n  \"diagnostics\": [");
	for (int i = 0; i < dl->n; i++) {
		const Diag *d = dl->items[i];
		sb_puts(out, i ? ",\n    " : "\n    ");
		sb_puts(out, "{\"rule\": ");
		json_str(out, d->rule);
		json_kv_str(out, "severity", sev_name(d->sev));
		json_kv_str(out, "message", d->msg ? d->msg : "");
		sb_puts(out, ", \"location\": ");
		if (span_ok(ss, d->span))
			json_location(out, ss, d->span, NULL, false);
		else
			sb_puts(out, "null");
		json_kv_str(out, "role", d->role);
		json_kv_str(out, "resource", d->resource);
		json_kv_str(out, "barrier", d->barrier);
		json_kv_str(out, "pipeline", d->pipeline);
		json_kv_int(out, "stage", d->stage);
		json_kv_int(out, "phase", d->phase);
		json_kv_str(out, "iteration", d->iter);
		json_kv_str(out, "condition", d->condition);
		json_kv_str(out, "hint", d->hint);
		sb_puts(out, ", \"related\": ");
		if (span_ok(ss, d->related))
			json_location(out, ss, d->related, d->related_msg, true);
		else
			sb_puts(out, "null");
		json_fixes(out, ss, d);
		sb_putc(out, '}');
	}
	sb_puts(out, dl->n ? "\n  ],\n" : "],\n");
	sb_printf(out, "  \"summary\": {\"errors\": %d, \"warnings\": %d, \"notes\": %d, "
	          "\"dropped\": %d}\n}\n", dl->nerr, dl->nwarn, dl->nnote, dl->dropped);
}

/* ---- SARIF 2.1.0 ---- */

/* Append path as a URI reference: relative paths stay relative, absolute
 * ones become file:// URIs; bytes outside the unreserved set and '/' are
 * percent-encoded. */
static void sarif_uri(StrBuf *out, const char *path)
{
	StrBuf u = {0};
	if (path[0] == '/')
		sb_puts(&u, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			sb_putc(&u, (char)*p);
		else
			sb_printf(&u, "%%%02X", *p);
	}
	json_str(out, sb_str(&u));
	sb_free(&u);
}

/* Remembers the last column computed, so that findings sorted by position
 * (the usual case) cost a scan from the previous one, not from the start of
 * a possibly very long line. */
typedef struct ColCache {
	const Source *f;
	size_t off, ls;   /* last offset asked, start of its line */
	int cp;           /* code points between ls and off */
} ColCache;

/* 1-based code-point column of byte offset off within its line. */
static int cp_col(ColCache *cc, const Source *f, size_t off)
{
	const unsigned char *t = (const unsigned char *)f->text;
	/* incremental only from a character boundary, so that counting in two
	 * pieces gives what one scan from the line start would */
	if (cc->f == f && off >= cc->off && (t[cc->off] & 0xc0) != 0x80) {
		size_t p = off;
		while (p > cc->off && t[p - 1] != '\n')
			p--;
		if (p > cc->off) {
			cc->ls = p;   /* a newline lies between: a new line starts at p */
			cc->cp = utf8_count(t + p, t + off);
		} else {
			cc->cp += utf8_count(t + cc->off, t + off);
		}
	} else {
		size_t b = off;
		while (b > 0 && t[b - 1] != '\n')
			b--;
		cc->f = f;
		cc->ls = b;
		cc->cp = utf8_count(t + b, t + off);
	}
	cc->off = off;
	return cc->cp + 1;
}

static void sarif_physical(StrBuf *out, const SourceSet *ss, Span s, ColCache *cc)
{
	const Source *f = &ss->files[s.file];
	size_t off = (size_t)s.off <= f->len ? (size_t)s.off : f->len;
	size_t end = off + (size_t)(s.len > 0 ? s.len : 0);
	if (end > f->len)
		end = f->len;
	int endline = s.line;
	for (size_t i = off; i < end; i++)
		if (f->text[i] == '\n')
			endline++;
	int line = s.line > 0 ? s.line : 1;
	if (endline < line)
		endline = line;
	int startcol = cp_col(cc, f, off);
	int endcol = cp_col(cc, f, end);
	if (endline == line && endcol <= startcol)
		endcol = startcol + 1;  /* empty span (e.g. at EOF): one column */
	sb_puts(out, "{\"artifactLocation\": {\"uri\": ");
	sarif_uri(out, f->path);
	sb_printf(out, ", \"index\": %d}, \"region\": {\"startLine\": %d, \"startColumn\": %d, "
	          "\"endLine\": %d, \"endColumn\": %d, \"byteOffset\": %zu, \"byteLength\": %zu}}",
	          s.file, line, startcol, endline, endcol, off, end - off);
}

/* A replacement's deletedRegion: exact (an insertion is the empty region at
 * its point, startColumn == endColumn), code-point columns as the run says. */
static void sarif_deleted(StrBuf *out, const SourceSet *ss, Span s, ColCache *cc)
{
	const Source *f = &ss->files[s.file];
	size_t off = (size_t)s.off <= f->len ? (size_t)s.off : f->len;
	size_t end = off + (size_t)(s.len > 0 ? s.len : 0);
	if (end > f->len)
		end = f->len;
	int endline = s.line > 0 ? s.line : 1;
	for (size_t i = off; i < end; i++)
		if (f->text[i] == '\n')
			endline++;
	int startcol = cp_col(cc, f, off);
	int endcol = cp_col(cc, f, end);
	sb_printf(out, "{\"startLine\": %d, \"startColumn\": %d, \"endLine\": %d, \"endColumn\": %d, "
	          "\"byteOffset\": %zu, \"byteLength\": %zu}", s.line > 0 ? s.line : 1, startcol, endline, endcol, off,
	          end - off);
}

/* ", \"fixes\": [...]" of a result (SARIF 2.1.0 §3.55): one fix per Diag fix,
 * one artifactChange per run of edits to the same file, one replacement per
 * edit. Nothing when the finding has no fix. */
static void sarif_fixes(StrBuf *out, const SourceSet *ss, const Diag *d)
{
	if (!d->nfixes)
		return;
	sb_puts(out, ", \"fixes\": [");
	for (int i = 0; i < d->nfixes; i++) {
		const DiagFix *f = d->fixes[i];
		sb_puts(out, i ? ", {\"description\": {\"text\": " : "{\"description\": {\"text\": ");
		json_str(out, f->desc);
		sb_puts(out, "}, \"artifactChanges\": [");
		int nchange = 0;
		for (int e = 0; e < f->nedits;) {
			Span s0 = f->edits[e].span;
			if (!span_ok(ss, s0)) {
				e++;
				continue;
			}
			sb_puts(out, nchange++ ? ", {\"artifactLocation\": {\"uri\": " : "{\"artifactLocation\": {\"uri\": ");
			sarif_uri(out, ss->files[s0.file].path);
			sb_printf(out, ", \"index\": %d}, \"replacements\": [", s0.file);
			int k = e;
			for (; k < f->nedits && f->edits[k].span.file == s0.file; k++) {
				sb_puts(out, k > e ? ", {\"deletedRegion\": " : "{\"deletedRegion\": ");
				ColCache cc = {0};   /* edits are few: a fresh scan each */
				sarif_deleted(out, ss, f->edits[k].span, &cc);
				sb_puts(out, ", \"insertedContent\": {\"text\": ");
				json_str(out, f->edits[k].text);
				sb_puts(out, "}}");
			}
			sb_puts(out, "]}");
			e = k;
		}
		sb_puts(out, "]}");
	}
	sb_putc(out, ']');
}

/* Append "key": "val" to a properties bag when val is set (absent fields are omitted). */
static void sarif_prop(StrBuf *out, bool *first, const char *key, const char *val)
{
	if (!val)
		return;
	sb_printf(out, "%s\"%s\": ", *first ? "" : ", ", key);
	json_str(out, val);
	*first = false;
}

static const char *sarif_level(Severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

/* Index of rule id in ids[0..n), appending it when absent. */
static int rule_slot(const char **ids, int *n, const char *id)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(ids[i], id) == 0)
			return i;
	ids[*n] = id;
	return (*n)++;
}

void diag_print_sarif(StrBuf *out, const SourceSet *ss, const DiagList *dl,
                      const char *verifier_version)
{
	/* distinct rule IDs in order of first appearance */
	const char **ids = xmalloc(sizeof(char *) * (size_t)(dl->n + 1));
	Severity *idsev = xmalloc(sizeof(Severity) * (size_t)(dl->n + 1));
	int nids = 0;
	for (int i = 0; i < dl->n; i++) {
		const char *r = dl->items[i]->rule ? dl->items[i]->rule : "CK-UNKNOWN";
		int before = nids;
		int k = rule_slot(ids, &nids, r);
		if (k == before)
			idsev[k] = dl->items[i]->sev;
	}

	sb_puts(out, "{\n  \"$schema\": \"" SARIF_SCHEMA "\",\n  \"version\": \"2.1.0\",\n"
	        "  \"runs\": [\n    {\n      \"tool\": {\n        \"driver\": {\n"
	        "          \"name\": \"cake\",\n          \"version\": \"" CAKE_VERSION "\",\n"
	        "          \"informationUri\": \"" CAKE_INFO_URI "\",\n          \"rules\": [");
	for (int i = 0; i < nids; i++) {
		const Rule *r = rule_find(ids[i]);
		sb_puts(out, i ? ",\n            " : "\n            ");
		sb_puts(out, "{\"id\": ");
		json_str(out, ids[i]);
		if (r) {
			sb_puts(out, ", \"name\": ");
			json_str(out, r->title);
			sb_puts(out, ", \"shortDescription\": {\"text\": ");
			json_str(out, r->title ? r->title : ids[i]);
			sb_puts(out, "}, \"fullDescription\": {\"text\": ");
			json_str(out, r->rationale ? r->rationale : (r->title ? r->title : ids[i]));
			sb_printf(out, "}, \"defaultConfiguration\": {\"level\": \"%s\"}",
			          sarif_level(r->sev));
			sb_printf(out, ", \"properties\": {\"category\": ");
			json_str(out, rule_cat_name(r->cat));
			sb_printf(out, ", \"ruleVersion\": %d}", r->version);
		} else {
			sb_puts(out, ", \"shortDescription\": {\"text\": \"unregistered rule\"}");
			sb_printf(out, ", \"defaultConfiguration\": {\"level\": \"%s\"}",
			          sarif_level(idsev[i]));
		}
		sb_putc(out, '}');
	}
	sb_puts(out, nids ? "\n          ]\n" : "]\n");
	sb_puts(out, "        }\n      },\n      \"artifacts\": [");
	for (int i = 0; ss && i < ss->n; i++) {
		sb_puts(out, i ? ", " : "");
		sb_puts(out, "{\"location\": {\"uri\": ");
		sarif_uri(out, ss->files[i].path);
		sb_puts(out, "}}");
	}
	sb_puts(out, "],\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [");
	ColCache primary = {0}, related = {0};
	for (int i = 0; i < dl->n; i++) {
		const Diag *d = dl->items[i];
		const char *r = d->rule ? d->rule : "CK-UNKNOWN";
		sb_puts(out, i ? ",\n        " : "\n        ");
		sb_puts(out, "{\"ruleId\": ");
		json_str(out, r);
		sb_printf(out, ", \"ruleIndex\": %d, \"level\": \"%s\", \"message\": {\"text\": ",
		          rule_slot(ids, &nids, r), sarif_level(d->sev));
		json_str(out, d->msg ? d->msg : "");
		sb_puts(out, "}, \"locations\": [");
		if (span_ok(ss, d->span)) {
			sb_puts(out, "{\"physicalLocation\": ");
			sarif_physical(out, ss, d->span, &primary);
			sb_putc(out, '}');
		}
		sb_putc(out, ']');
		if (span_ok(ss, d->related)) {
			sb_puts(out, ", \"relatedLocations\": [{\"id\": 0, \"physicalLocation\": ");
			sarif_physical(out, ss, d->related, &related);
			sb_puts(out, ", \"message\": {\"text\": ");
			json_str(out, d->related_msg ? d->related_msg : "related location");
			sb_puts(out, "}}]");
		}
		sarif_fixes(out, ss, d);
		sb_puts(out, ", \"properties\": {");
		bool first = true;
		sarif_prop(out, &first, "role", d->role);
		sarif_prop(out, &first, "resource", d->resource);
		sarif_prop(out, &first, "barrier", d->barrier);
		sarif_prop(out, &first, "pipeline", d->pipeline);
		if (d->stage >= 0)
			sb_printf(out, "%s\"stage\": %d", first ? "" : ", ", d->stage), first = false;
		if (d->phase >= 0)
			sb_printf(out, "%s\"phase\": %d", first ? "" : ", ", d->phase), first = false;
		sarif_prop(out, &first, "iteration", d->iter);
		sarif_prop(out, &first, "condition", d->condition);
		sarif_prop(out, &first, "hint", d->hint);
		sb_puts(out, "}}");
	}
	sb_puts(out, dl->n ? "\n      ],\n" : "],\n");
	sb_puts(out, "      \"properties\": {\"verifierVersion\": ");
	json_str(out, verifier_version);
	sb_printf(out, ", \"errors\": %d, \"warnings\": %d, \"notes\": %d, \"dropped\": %d}\n"
	          "    }\n  ]\n}\n", dl->nerr, dl->nwarn, dl->nnote, dl->dropped);
	free(ids);
	free(idsev);
}
