/*
 * report.c — the campaign report (report.h): one static HTML page, inline
 * SVG charts, no JavaScript.
 *
 * Everything comes from the store through store.h: the evaluations in time
 * order (curves, scatter, verdict mix), the frontier, the candidates and
 * their parents (diffs through textdiff.h), and the latest gate run's
 * impact rows. The page is built as one string; every text from the store
 * is HTML-escaped (candidate IR holds '<' in `<-`), and every number that a
 * reader or a test looks for is printed once, in a cell with a stable id.
 *
 * Charts are drawn in a fixed 1000 x 320 viewBox (width 100% of the page
 * column), axes with "nice" ticks (1, 2 or 5 times a power of ten), the
 * scatter on log-log axes with decade ticks. Colours: one palette for
 * curves, one fixed colour per verdict, so that a hang is always red.
 */
#include "report.h"
#include "textdiff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ReportOptions report_options(void)
{
	ReportOptions o;
	memset(&o, 0, sizeof o);
	o.title = "Cake campaign report";
	return o;
}

static const char *const PALETTE[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
static const char *const VCOLOR[STORE_NVERDICT] = {
	"#999999", "#2ca02c", "#ff7f0e", "#d62728", "#8c1a1a", "#9467bd",
	"#e377c2", "#7f7f7f", "#1f77b4", "#bcbd22", "#000000", "#c7c7c7",
};

/* ---- HTML helpers ---- */

static void esc(StrBuf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': sb_puts(b, "&amp;"); break;
		case '<': sb_puts(b, "&lt;"); break;
		case '>': sb_puts(b, "&gt;"); break;
		case '"': sb_puts(b, "&quot;"); break;
		case '\'': sb_puts(b, "&#39;"); break;
		default: sb_putc(b, *s); break;
		}
	}
}

static void escn(StrBuf *b, const char *s, size_t n)
{
	StrBuf x = {0};
	sb_putn(&x, s, n);
	esc(b, sb_str(&x));
	sb_free(&x);
}

static void num(StrBuf *b, double v, int prec)
{
	if (isnan(v) || isinf(v))
		sb_puts(b, "&ndash;");
	else
		sb_printf(b, "%.*f", prec, v);
}

static void short_id(StrBuf *b, const char *id)
{
	sb_printf(b, "%.12s", id ? id : "");
}

static void cand_link(StrBuf *b, const char *id)
{
	sb_printf(b, "<a href=\"#cand-%s\"><code>", id);
	short_id(b, id);
	sb_puts(b, "</code></a>");
}

/* ---- data ---- */

typedef struct Curve {
	const char *key;           /* campaign \x1f family \x1f shape */
	const char *label;
	double *x, *y;             /* GPU minutes, best speedup so far */
	int n, cap;
	double gpu_s, base, best;
	double ref_us;             /* the best measured reference (a campaign's baseline), NaN when none */
	const char *ref_kernel;
	int runs;
} Curve;

static void curve_add(Curve *c, double x, double y)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->x = xrealloc(c->x, (size_t)c->cap * sizeof *c->x);
		c->y = xrealloc(c->y, (size_t)c->cap * sizeof *c->y);
	}
	c->x[c->n] = x;
	c->y[c->n++] = y;
}

static bool measured_ok(const StoreEval *e)
{
	return e->verdict == STORE_V_OK && !isnan(e->median_us) && e->median_us > 0;
}

/* family (or kernel when none) \x1f shape: what a speedup is relative to */
static const char *base_key(Arena *a, const StoreEval *e)
{
	return arena_printf(a, "%s\x1f%s", e->family ? e->family : e->kernel, e->shape);
}

/* ---- SVG ---- */

enum { W = 1000, H = 320, X0 = 70, Y0 = 20, PW = W - 100, PH = H - 70 };

static double nice_step(double range, int ticks)
{
	if (range <= 0)
		return 1;
	double raw = range / ticks, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

typedef struct Axes {
	double xmin, xmax, ymin, ymax;
	bool logx, logy;
} Axes;

static double px(const Axes *ax, double x)
{
	return X0 + (x - ax->xmin) / (ax->xmax - ax->xmin) * PW;
}

static double py(const Axes *ax, double y)
{
	return Y0 + PH - (y - ax->ymin) / (ax->ymax - ax->ymin) * PH;
}

static void tick_label(StrBuf *b, double v, bool log)
{
	if (log) {
		double p = pow(10, v);
		if (p >= 1)
			sb_printf(b, "%.0f", p);
		else
			sb_printf(b, "%g", p);
	} else {
		double a = fabs(v);
		sb_printf(b, a >= 100 || v == floor(v) ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
	}
}

static void svg_open(StrBuf *b, const char *label)
{
	sb_printf(b, "<svg viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" aria-label=\"", W, H);
	esc(b, label);
	sb_puts(b, "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"13\">\n");
	sb_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
}

static void svg_axes(StrBuf *b, const Axes *ax, const char *xlabel, const char *ylabel)
{
	sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#444\"/>\n", X0, Y0, PW,
	          PH);
	for (int axis = 0; axis < 2; axis++) {
		bool log = axis ? ax->logy : ax->logx;
		double lo = axis ? ax->ymin : ax->xmin, hi = axis ? ax->ymax : ax->xmax;
		double step = log ? 1 : nice_step(hi - lo, 6);
		for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-6; t += step) {
			StrBuf l = {0};
			tick_label(&l, fabs(t) < step * 1e-9 ? 0 : t, log);
			if (axis) {
				double y = py(ax, t);
				sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				             "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				          X0, y, X0 + PW, y, X0 - 6, y + 4, sb_str(&l));
			} else {
				double x = px(ax, t);
				sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
				             "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
				          x, Y0, x, Y0 + PH, x, Y0 + PH + 18, sb_str(&l));
			}
			sb_free(&l);
		}
	}
	sb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", X0 + PW / 2, H - 12);
	esc(b, xlabel);
	sb_printf(b, "</text>\n<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">", Y0 + PH / 2,
	          Y0 + PH / 2);
	esc(b, ylabel);
	sb_puts(b, "</text>\n");
}

/* ---- sections ---- */

static void section_curves(StrBuf *b, Curve *cv, int ncv)
{
	sb_puts(b, "<h2 id=\"curve\">Evolution: best speedup against GPU minutes</h2>\n");
	int shown = 0;
	double xmax = 0, ymax = 1, ymin = 1;
	for (int i = 0; i < ncv; i++) {
		if (!cv[i].n)
			continue;
		shown++;
		xmax = fmax(xmax, cv[i].gpu_s / 60);
		for (int k = 0; k < cv[i].n; k++) {
			ymax = fmax(ymax, cv[i].y[k]);
			ymin = fmin(ymin, cv[i].y[k]);
		}
		if (!isnan(cv[i].ref_us)) {
			ymax = fmax(ymax, cv[i].base / cv[i].ref_us);
			ymin = fmin(ymin, cv[i].base / cv[i].ref_us);
		}
	}
	if (!shown) {
		sb_puts(b, "<p class=\"none\">No measured <code>ok</code> run yet: the curve needs GPU runs.</p>\n");
		return;
	}
	sb_puts(b, "<p>Per campaign, family and shape: the best median time so far against the first measured "
	           "<code>ok</code> run of the group, as the group's GPU time accumulates (every evaluation's GPU "
	           "seconds, failures included). A campaign's baseline (a root candidate that nothing was derived "
	           "from, such as <code>cake evolve --baseline</code>) is not part of the search: it is drawn as a "
	           "dashed line at its speedup over the same first run.</p>\n");
	Axes ax = {0, xmax > 0 ? xmax * 1.05 : 1, 0, 0, false, false};
	double pad = (ymax - ymin) * 0.1 + 0.05;
	ax.ymin = fmax(0, ymin - pad);
	ax.ymax = ymax + pad;
	svg_open(b, "best speedup against GPU minutes");
	svg_axes(b, &ax, "GPU minutes spent", "best speedup (x)");
	int c = 0;
	for (int i = 0; i < ncv; i++) {
		if (!cv[i].n)
			continue;
		const char *col = PALETTE[c % NELEM(PALETTE)];
		sb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" points=\"", col);
		for (int k = 0; k < cv[i].n; k++) {
			if (k)
				sb_printf(b, " %.1f,%.1f", px(&ax, cv[i].x[k]), py(&ax, cv[i].y[k - 1]));
			sb_printf(b, " %.1f,%.1f", px(&ax, cv[i].x[k]), py(&ax, cv[i].y[k]));
		}
		sb_printf(b, " %.1f,%.1f\"/>\n", px(&ax, cv[i].gpu_s / 60), py(&ax, cv[i].y[cv[i].n - 1]));
		for (int k = 0; k < cv[i].n; k++) {
			sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>", px(&ax, cv[i].x[k]),
			          py(&ax, cv[i].y[k]), col);
			esc(b, cv[i].label);
			sb_printf(b, ": %.2fx after %.2f GPU min</title></circle>\n", cv[i].y[k], cv[i].x[k]);
		}
		sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", X0 + 12,
		          Y0 + 14 + 18 * c, col, X0 + 32, Y0 + 19 + 18 * c);
		esc(b, cv[i].label);
		sb_printf(b, " (%.2fx)</text>\n", cv[i].y[cv[i].n - 1]);
		c++;
		if (!isnan(cv[i].ref_us)) {
			double y = py(&ax, cv[i].base / cv[i].ref_us);
			sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
			             "stroke-dasharray=\"8 5\"/>\n", X0, y, X0 + PW, y, col);
			sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"2\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">baseline ",
			          X0 + 12, Y0 + 15 + 18 * c, col, X0 + 32, Y0 + 19 + 18 * c);
			esc(b, cv[i].ref_kernel);
			sb_printf(b, " (%.2fx)</text>\n", cv[i].base / cv[i].ref_us);
			c++;
		}
	}
	sb_puts(b, "</svg>\n<table><tr><th>campaign &middot; family &middot; shape</th><th>GPU runs</th>"
	           "<th>GPU minutes</th><th>first ok (&micro;s)</th><th>best (&micro;s)</th><th>speedup</th>"
	           "<th>baseline (&micro;s)</th><th>baseline / best</th></tr>\n");
	for (int i = 0; i < ncv; i++) {
		if (!cv[i].n)
			continue;
		sb_puts(b, "<tr><td>");
		esc(b, cv[i].label);
		sb_printf(b, "</td><td class=\"n\">%d</td><td class=\"n\">", cv[i].runs);
		num(b, cv[i].gpu_s / 60, 2);
		sb_puts(b, "</td><td class=\"n\">");
		num(b, cv[i].base, 1);
		sb_puts(b, "</td><td class=\"n\">");
		num(b, cv[i].best, 1);
		sb_puts(b, "</td><td class=\"n\">");
		num(b, cv[i].base / cv[i].best, 2);
		sb_printf(b, "x</td><td class=\"n\" id=\"curve-%d-baseline\">", i);
		num(b, cv[i].ref_us, 1);
		sb_printf(b, "</td><td class=\"n\" id=\"curve-%d-vs-baseline\">", i);
		num(b, cv[i].ref_us / cv[i].best, 3);
		sb_puts(b, isnan(cv[i].ref_us) ? "</td></tr>\n" : "x</td></tr>\n");
	}
	sb_puts(b, "</table>\n");
}

static void section_scatter(StrBuf *b, const StoreEval *ev, int ne)
{
	sb_puts(b, "<h2 id=\"scatter\">Predicted against measured time</h2>\n");
	int n = 0;
	double lo = INFINITY, hi = -INFINITY;
	double *ratio = xcalloc((size_t)(ne ? ne : 1), sizeof *ratio);
	for (int i = 0; i < ne; i++) {
		const StoreEval *e = &ev[i];
		if (!measured_ok(e) || isnan(e->predicted_us) || e->predicted_us <= 0)
			continue;
		lo = fmin(lo, fmin(log10(e->median_us), log10(e->predicted_us)));
		hi = fmax(hi, fmax(log10(e->median_us), log10(e->predicted_us)));
		ratio[n++] = e->predicted_us / e->median_us;
	}
	if (!n) {
		sb_puts(b, "<p class=\"none\">No <code>ok</code> run has both a prediction and a measurement.</p>\n");
		free(ratio);
		return;
	}
	for (int i = 1; i < n; i++)   /* insertion sort for the median */
		for (int j = i; j > 0 && ratio[j] < ratio[j - 1]; j--) {
			double t = ratio[j];
			ratio[j] = ratio[j - 1];
			ratio[j - 1] = t;
		}
	double med = n % 2 ? ratio[n / 2] : (ratio[n / 2 - 1] + ratio[n / 2]) / 2;
	free(ratio);
	sb_printf(b, "<p><span id=\"scatter-n\">%d</span> ok runs with both; median predicted / measured = "
	             "<span id=\"scatter-ratio\">%.2f</span> (points on the diagonal are exact; above it the model "
	             "predicted slower than measured). Each prediction is the one recorded with its evaluation, by the "
	             "cost model of that harness: <span id=\"scatter-models\">", n, med);
	int nm = 0;
	for (int i = 0; i < ne; i++) {   /* the distinct cost-model versions, in first-use order */
		const char *m = ev[i].harness.cost_model;
		if (!measured_ok(&ev[i]) || isnan(ev[i].predicted_us) || !m)
			continue;
		bool seen = false;
		for (int j = 0; j < i && !seen; j++)
			seen = measured_ok(&ev[j]) && !isnan(ev[j].predicted_us) && ev[j].harness.cost_model &&
			       !strcmp(ev[j].harness.cost_model, m);
		if (!seen) {
			sb_puts(b, nm++ ? ", " : "");
			sb_puts(b, "<code>");
			esc(b, m);
			sb_puts(b, "</code>");
		}
	}
	sb_puts(b, nm ? "</span>.</p>\n" : "unknown</span>.</p>\n");
	Axes ax = {floor(lo), ceil(hi), floor(lo), ceil(hi), true, true};
	if (ax.xmax - ax.xmin < 1)
		ax.xmax = ax.ymax = ax.xmin + 1;
	svg_open(b, "predicted against measured time");
	svg_axes(b, &ax, "measured median (microseconds, log)", "predicted (microseconds, log)");
	sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"6 4\"/>\n",
	          px(&ax, ax.xmin), py(&ax, ax.ymin), px(&ax, ax.xmax), py(&ax, ax.ymax));
	for (int i = 0; i < ne; i++) {
		const StoreEval *e = &ev[i];
		if (!measured_ok(e) || isnan(e->predicted_us) || e->predicted_us <= 0)
			continue;
		sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#1f77b4\" fill-opacity=\"0.7\"><title>",
		          px(&ax, log10(e->median_us)), py(&ax, log10(e->predicted_us)));
		short_id(b, e->cand);
		sb_printf(b, " %s: measured %.1f us, predicted %.1f us</title></circle>\n", e->shape, e->median_us, e->predicted_us);
	}
	sb_puts(b, "</svg>\n");
}

static bool gpu_ran(const StoreEval *e)
{
	switch (e->verdict) {
	case STORE_V_OK: case STORE_V_MISMATCH: case STORE_V_HANG: case STORE_V_FAULT: case STORE_V_LAUNCH_ERROR:
		return true;
	default:
		return e->gpu_s > 0;
	}
}

static void section_verdicts(StrBuf *b, const StoreEval *ev, int ne)
{
	int cnt[STORE_NVERDICT] = {0}, runs = 0, maxc = 1;
	double gpu_s = 0;
	for (int i = 0; i < ne; i++) {
		int v = ev[i].verdict > STORE_V_NONE && ev[i].verdict < STORE_NVERDICT ? ev[i].verdict : 0;
		cnt[v]++;
		if (gpu_ran(&ev[i])) {
			runs++;
			gpu_s += ev[i].gpu_s;
		}
	}
	for (int v = 0; v < STORE_NVERDICT; v++)
		maxc = cnt[v] > maxc ? cnt[v] : maxc;
	int saved = cnt[STORE_V_REJECTED] + cnt[STORE_V_REFUSED];
	double mean = runs ? gpu_s / runs : NAN;
	sb_puts(b, "<h2 id=\"verdicts\">Verdicts, and the GPU runs the verifier saved</h2>\n");
	sb_printf(b, "<p><b id=\"saved-runs\">%d</b> evaluations never reached the GPU (<span id=\"saved-rejected\">%d"
	             "</span> rejected by the verifier, %d refused by the lowering or the shape); at the mean GPU cost of "
	             "the %d runs that did (", saved, cnt[STORE_V_REJECTED], cnt[STORE_V_REFUSED], runs);
	num(b, mean, 2);
	sb_puts(b, " s), that is <b id=\"saved-gpu-s\">");
	num(b, isnan(mean) ? NAN : mean * saved, 1);
	sb_printf(b, "</b> GPU seconds saved, and every rejected hang is a watchdog timeout avoided.</p>\n");
	int nbar = 0;
	for (int v = 1; v < STORE_NVERDICT; v++)
		nbar += cnt[v] > 0;
	int bh = 26, h = 20 + bh * (nbar ? nbar : 1);
	sb_printf(b, "<svg viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" aria-label=\"verdict mix\" "
	             "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"13\">\n", W, h);
	int row = 0;
	for (int v = 1; v < STORE_NVERDICT; v++) {
		if (!cnt[v])
			continue;
		double w = (double)cnt[v] / maxc * (W - 260);
		int y = 10 + bh * row++;
		sb_printf(b, "<text x=\"140\" y=\"%d\" text-anchor=\"end\">%s</text><rect x=\"150\" y=\"%d\" width=\"%.1f\" "
		             "height=\"%d\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">%d</text>\n",
		          y + 17, store_verdict_name((StoreVerdict)v), y + 3, w, bh - 6, VCOLOR[v], 150 + w + 6, y + 17, cnt[v]);
	}
	sb_puts(b, "</svg>\n<table><tr>");
	for (int v = 1; v < STORE_NVERDICT; v++)
		if (cnt[v])
			sb_printf(b, "<th>%s</th>", store_verdict_name((StoreVerdict)v));
	sb_puts(b, "<th>total</th></tr>\n<tr>");
	for (int v = 1; v < STORE_NVERDICT; v++)
		if (cnt[v])
			sb_printf(b, "<td class=\"n\" id=\"verdict-%s\">%d</td>", store_verdict_name((StoreVerdict)v), cnt[v]);
	sb_printf(b, "<td class=\"n\" id=\"total-evals\">%d</td></tr></table>\n", ne);
}

/* the first ok median per base key, in time order */
typedef struct Base {
	const char *key;
	double us;
} Base;

static double base_of(const Base *bs, int nb, const char *key)
{
	for (int i = 0; i < nb; i++)
		if (!strcmp(bs[i].key, key))
			return bs[i].us;
	return NAN;
}

typedef struct Ids {
	const char **v;
	int n, cap;
} Ids;

static void ids_add(Ids *s, const char *id)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], id))
			return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
	}
	s->v[s->n++] = id;
}

/* Add id and its stored ancestors (at most 16 generations) to ids, so that
 * every parent link of a frontier candidate's chain resolves in the page. */
static void ids_add_chain(Ids *ids, Store *st, Arena *a, const char *id)
{
	for (int k = 0; id && k < 16; k++) {
		ids_add(ids, id);
		StoreCandidate c;
		if (store_get_candidate(st, id, a, &c) != STORE_OK)
			return;
		id = c.parent;
	}
}

static void section_frontier(StrBuf *b, Store *st, const StoreEval *fr, int nf, const Base *bs, int nb, Arena *a,
                             Ids *ids)
{
	sb_puts(b, "<h2 id=\"frontier\">Frontier</h2>\n");
	if (!nf) {
		sb_puts(b, "<p class=\"none\">No timed <code>ok</code> run yet.</p>\n");
		return;
	}
	sb_puts(b, "<p>The best <code>ok</code> run per family, kernel and shape. Each candidate links to its section "
	           "below: its evaluations and its IR diff from its parent, whose section follows too, back to the "
	           "root.</p>\n<table><tr><th>family</th><th>kernel</th><th>shape</th>"
	           "<th>candidate</th><th>median (&micro;s)</th><th>predicted (&micro;s)</th><th>vs first ok</th>"
	           "<th>GPU</th></tr>\n");
	for (int i = 0; i < nf; i++) {
		const StoreEval *e = &fr[i];
		ids_add_chain(ids, st, a, e->cand);
		sb_puts(b, "<tr><td>");
		esc(b, e->family ? e->family : "-");
		sb_puts(b, "</td><td>");
		esc(b, e->kernel);
		sb_puts(b, "</td><td><code>");
		esc(b, e->shape);
		sb_puts(b, "</code></td><td>");
		cand_link(b, e->cand);
		sb_printf(b, "</td><td class=\"n\" id=\"frontier-%d-median\">", i + 1);
		num(b, e->median_us, 1);
		sb_puts(b, "</td><td class=\"n\">");
		num(b, e->predicted_us, 1);
		sb_puts(b, "</td><td class=\"n\">");
		num(b, base_of(bs, nb, base_key(a, e)) / e->median_us, 2);
		sb_puts(b, "x</td><td>");
		esc(b, e->gpu ? e->gpu : "-");
		sb_puts(b, "</td></tr>\n");
	}
	sb_puts(b, "</table>\n");
}

static const char *verifier_of(Arena *a, const char *key)
{
	const char *v = key ? strstr(key, "verifier=") : NULL;
	return v ? arena_strndup(a, v + 9, strcspn(v + 9, ";")) : "?";
}

static void section_impact(StrBuf *b, Store *st, Arena *a, Ids *ids)
{
	sb_puts(b, "<h2 id=\"impact\">Rule impact (the latest gate run)</h2>\n");
	StoreGateRun *runs = NULL;
	int nr = 0;
	if (store_list_gate_runs(st, 1, a, &runs, &nr) != STORE_OK || !nr) {
		sb_puts(b, "<p class=\"none\">No gate run recorded yet: <code>cake gate --store PATH</code> re-judges every "
		           "stored candidate with the current harness and records the changes.</p>\n");
		return;
	}
	StoreImpact *im = NULL;
	int ni = 0;
	if (store_list_impact(st, NULL, runs[0].id, a, &im, &ni) != STORE_OK)
		ni = 0;
	sb_printf(b, "<p>Gate run %lld at ", (long long)runs[0].id);
	store_print_time(b, runs[0].time_ms);
	sb_puts(b, " re-judged ");
	sb_printf(b, "<span id=\"impact-items\">%d</span> work items with verifier <code>", runs[0].items);
	esc(b, runs[0].harness.verifier);
	sb_printf(b, "</code>; <span id=\"impact-changed\">%d</span> changed outcome. TP: newly rejected, it had failed "
	             "on the GPU; FP: newly rejected, it had run <code>ok</code>.</p>\n", ni);
	/* per rule */
	const char *rules[64];
	int tp[64] = {0}, fp[64] = {0}, un[64] = {0}, ac[64] = {0}, ch[64] = {0}, nru = 0;
	for (int i = 0; i < ni; i++) {
		const char *r = im[i].rule ? im[i].rule : "(shape)";
		int k = 0;
		while (k < nru && strcmp(rules[k], r))
			k++;
		if (k == nru) {
			if (nru == 64)
				continue;
			rules[nru++] = r;
		}
		switch (im[i].impact) {
		case STORE_IMP_TRUE_POSITIVE: tp[k]++; break;
		case STORE_IMP_FALSE_POSITIVE: fp[k]++; break;
		case STORE_IMP_UNRUN: un[k]++; break;
		case STORE_IMP_NEWLY_ACCEPTED: ac[k]++; break;
		default: ch[k]++; break;
		}
	}
	if (nru) {
		sb_puts(b, "<table><tr><th>rule</th><th>true positives</th><th>false positives</th><th>newly rejected, never "
		           "run</th><th>newly accepted</th><th>rule changed</th></tr>\n");
		for (int k = 0; k < nru; k++) {
			sb_puts(b, "<tr><td><code>");
			esc(b, rules[k]);
			sb_printf(b, "</code></td><td class=\"n\" id=\"impact-%s-tp\">%d</td><td class=\"n\" id=\"impact-%s-fp\">%d"
			             "</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td></tr>\n",
			          rules[k], tp[k], rules[k], fp[k], un[k], ac[k], ch[k]);
		}
		sb_puts(b, "</table>\n<table><tr><th>impact</th><th>candidate</th><th>kernel</th><th>shape</th><th>before"
		           "</th><th>now</th><th>GPU verdict</th></tr>\n");
		for (int i = 0; i < ni; i++) {
			const StoreImpact *r = &im[i];
			ids_add(ids, r->cand);
			sb_printf(b, "<tr class=\"%s\"><td>%s</td><td>", store_impact_name(r->impact), store_impact_name(r->impact));
			cand_link(b, r->cand);
			sb_puts(b, "</td><td>");
			esc(b, r->kernel);
			sb_puts(b, "</td><td><code>");
			esc(b, r->shape);
			sb_printf(b, "</code></td><td>%s", store_outcome_name(r->old_outcome));
			if (r->old_rule) {
				sb_puts(b, " by ");
				esc(b, r->old_rule);
			}
			sb_puts(b, " <small>(verifier ");
			esc(b, verifier_of(a, r->old_harness));
			sb_printf(b, ")</small></td><td>%s", store_outcome_name(r->new_outcome));
			if (r->new_rule) {
				sb_puts(b, " by ");
				esc(b, r->new_rule);
			}
			sb_printf(b, "</td><td>%s</td></tr>\n", r->gpu_verdict ? store_verdict_name(r->gpu_verdict) : "never run");
		}
		sb_puts(b, "</table>\n");
	}
}

static void section_candidates(StrBuf *b, Store *st, Arena *a, const Ids *ids)
{
	if (!ids->n)
		return;
	sb_puts(b, "<h2 id=\"candidates\">Candidates</h2>\n");
	for (int i = 0; i < ids->n; i++) {
		StoreCandidate c, p;
		if (store_get_candidate(st, ids->v[i], a, &c) != STORE_OK)
			continue;
		bool hp = c.parent && store_get_candidate(st, c.parent, a, &p) == STORE_OK;
		sb_printf(b, "<section class=\"cand\" id=\"cand-%s\"><h3><code>%s</code></h3>\n<p>family ", c.id, c.id);
		esc(b, c.family ? c.family : "-");
		sb_puts(b, ", origin <code>");
		esc(b, c.origin);
		sb_puts(b, "</code>, created ");
		store_print_time(b, c.created_ms);
		if (c.parent) {
			sb_puts(b, ", parent ");
			bool linked = false;
			for (int k = 0; k < ids->n && !linked; k++)
				linked = !strcmp(ids->v[k], c.parent);
			if (linked)
				cand_link(b, c.parent);
			else {
				sb_puts(b, "<code>");
				short_id(b, c.parent);
				sb_puts(b, "</code>");
			}
		}
		sb_puts(b, "</p>\n");
		StoreFilter f = {.cand = c.id};
		StoreEval *ev = NULL;
		int ne = 0;
		if (store_list_evals(st, &f, a, &ev, &ne) == STORE_OK && ne) {
			sb_puts(b, "<table><tr><th>evaluation</th><th>kernel</th><th>shape</th><th>verifier</th><th>verdict</th>"
			           "<th>median (&micro;s)</th></tr>\n");
			for (int k = ne - 1; k >= 0; k--) {
				sb_printf(b, "<tr><td class=\"n\">%lld</td><td>", (long long)ev[k].id);
				esc(b, ev[k].kernel);
				sb_puts(b, "</td><td><code>");
				esc(b, ev[k].shape);
				sb_puts(b, "</code></td><td><code>");
				esc(b, ev[k].harness.verifier);
				sb_printf(b, "</code></td><td class=\"v-%s\">%s</td><td class=\"n\">", store_verdict_name(ev[k].verdict),
				          store_verdict_name(ev[k].verdict));
				num(b, ev[k].median_us, 1);
				sb_puts(b, "</td></tr>\n");
			}
			sb_puts(b, "</table>\n");
		}
		if (hp) {
			TextDiff d;
			textdiff_run(&d, p.text, strlen(p.text), c.text, strlen(c.text));
			StrBuf u = {0};
			textdiff_unified(&u, &d, 3);
			sb_printf(b, "<p>IR diff from its parent (%d line%s removed, %d added):</p>\n<pre class=\"diff\">", d.ndel,
			          d.ndel == 1 ? "" : "s", d.nadd);
			const char *s = sb_str(&u);
			while (*s) {
				size_t n = strcspn(s, "\n");
				const char *cls = s[0] == '+' ? "add" : s[0] == '-' ? "del" : s[0] == '@' ? "hunk" : "ctx";
				sb_printf(b, "<span class=\"%s\">", cls);
				escn(b, s, n);
				sb_puts(b, "</span>");   /* display:block: one line each */
				s += n + (s[n] == '\n');
			}
			if (!u.len)
				sb_puts(b, "(the same text)");
			sb_puts(b, "</pre>\n");
			sb_free(&u);
			textdiff_free(&d);
		} else {
			int lines = 0;
			for (const char *s = c.text; *s; s++)
				lines += *s == '\n';
			sb_printf(b, "<details><summary>%s: its IR (%d lines)</summary><pre>", c.parent ? "parent not stored" : "a root",
			          lines);
			esc(b, c.text);
			sb_puts(b, "</pre></details>\n");
		}
		sb_puts(b, "</section>\n");
	}
}

static const char CSS[] =
	"body{font-family:sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#222;line-height:1.4}"
	"h1{font-size:26px;margin-bottom:4px}h2{font-size:20px;margin-top:32px;border-bottom:2px solid #ddd}"
	"h3{font-size:15px;margin:18px 0 4px}table{border-collapse:collapse;margin:10px 0;font-size:14px}"
	"th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f0f0f0}td.n{text-align:right}"
	"code{font-size:13px}pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px;line-height:1.3}"
	"pre.diff span{display:block}.add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}"
	".hunk{color:#0550ae}.none{color:#777;font-style:italic}tr.true_positive td:first-child{color:#116329;"
	"font-weight:bold}tr.false_positive td:first-child{color:#b00;font-weight:bold}.v-hang,.v-fault{color:#b00;"
	"font-weight:bold}.v-ok{color:#116329}.summary td{font-size:15px}nav a{margin-right:14px}";

/* Which evaluations are of a campaign's reference rather than its search: a
 * root candidate (no parent) that no stored candidate was derived from, in a
 * campaign that searched (it evaluated a derived candidate, or a seed that has
 * descendants). `cake evolve --baseline` records its baseline so; it never
 * expands it. */
static bool *references(Store *st, Arena *a, const StoreEval *ev, int ne, const Ids *cands)
{
	const char **parent = xcalloc((size_t)(cands->n ? cands->n : 1), sizeof *parent);
	for (int i = 0; i < cands->n; i++) {
		StoreCandidate c;
		if (store_get_candidate(st, cands->v[i], a, &c) == STORE_OK)
			parent[i] = c.parent;
	}
	bool *has_child = xcalloc((size_t)(cands->n ? cands->n : 1), sizeof *has_child);
	for (int i = 0; i < cands->n; i++)
		for (int j = 0; parent[i] && j < cands->n; j++)
			if (!strcmp(parent[i], cands->v[j]))
				has_child[j] = true;
	int *ci = xcalloc((size_t)(ne ? ne : 1), sizeof *ci);
	for (int i = 0; i < ne; i++)
		while (ci[i] < cands->n && strcmp(cands->v[ci[i]], ev[i].cand))
			ci[i]++;
	/* seeded[i]: evaluation i's campaign searched: it evaluated a derived
	 * candidate or a root with descendants (its seed) */
	bool *seeded = xcalloc((size_t)(ne ? ne : 1), sizeof *seeded);
	for (int j = 0; j < ne; j++) {
		if (!ev[j].campaign || ci[j] == cands->n || (!parent[ci[j]] && !has_child[ci[j]]))
			continue;
		for (int i = 0; i < ne; i++)
			if (!seeded[i] && ev[i].campaign && !strcmp(ev[i].campaign, ev[j].campaign))
				seeded[i] = true;
	}
	bool *ref = xcalloc((size_t)(ne ? ne : 1), sizeof *ref);
	for (int i = 0; i < ne; i++)
		ref[i] = seeded[i] && ci[i] < cands->n && !parent[ci[i]] && !has_child[ci[i]];
	free(ci);
	free(seeded);
	free(parent);
	free(has_child);
	return ref;
}

int report_html(Store *st, const ReportOptions *o, StrBuf *out, char *err, size_t n)
{
	ReportOptions def = report_options();
	if (!o)
		o = &def;
	Arena a;
	arena_init(&a);
	StoreEval *ev = NULL, *fr = NULL;
	int ne = 0, nf = 0;
	StoreFilter f = o->filter;
	f.limit = 0;
	if (store_list_evals(st, &f, &a, &ev, &ne) != STORE_OK || store_frontier(st, &f, &a, &fr, &nf) != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		arena_free(&a);
		return 2;
	}
	/* oldest first */
	for (int i = 0, j = ne - 1; i < j; i++, j--) {
		StoreEval t = ev[i];
		ev[i] = ev[j];
		ev[j] = t;
	}
	/* curves and first-ok baselines */
	Curve *cv = NULL;
	Base *bs = NULL;
	int ncv = 0, ccap = 0, nb = 0, bcap = 0;
	double total_gpu = 0;
	int gpu_runs = 0, ncand = 0;
	Ids cands = {0};
	for (int i = 0; i < ne; i++)
		ids_add(&cands, ev[i].cand);
	bool *ref = references(st, &a, ev, ne, &cands);
	for (int i = 0; i < ne; i++) {
		const StoreEval *e = &ev[i];
		total_gpu += e->gpu_s;
		gpu_runs += gpu_ran(e);
		const char *key = arena_printf(&a, "%s\x1f%s\x1f%s", e->campaign ? e->campaign : "",
		                               e->family ? e->family : e->kernel, e->shape);
		int k = 0;
		while (k < ncv && strcmp(cv[k].key, key))
			k++;
		if (k == ncv) {
			if (ncv == ccap) {
				ccap = ccap ? ccap * 2 : 8;
				cv = xrealloc(cv, (size_t)ccap * sizeof *cv);
			}
			memset(&cv[ncv], 0, sizeof *cv);
			cv[ncv].key = key;
			cv[ncv].label = arena_printf(&a, "%s \xc2\xb7 %s \xc2\xb7 %s", e->campaign ? e->campaign : "(no campaign)",
			                             e->family ? e->family : e->kernel, e->shape);
			cv[ncv].base = cv[ncv].best = cv[ncv].ref_us = NAN;
			ncv++;
		}
		Curve *c = &cv[k];
		if (ref[i]) {   /* a baseline: drawn as a reference, not part of the search's curve */
			if (measured_ok(e) && !(e->median_us >= c->ref_us)) {
				c->ref_us = e->median_us;
				c->ref_kernel = e->kernel;
			}
			continue;
		}
		c->gpu_s += e->gpu_s;
		c->runs += gpu_ran(e);
		if (measured_ok(e)) {
			if (isnan(c->base))
				c->base = c->best = e->median_us;
			c->best = fmin(c->best, e->median_us);
			curve_add(c, c->gpu_s / 60, c->base / c->best);
			const char *bk = base_key(&a, e);
			if (isnan(base_of(bs, nb, bk))) {
				if (nb == bcap) {
					bcap = bcap ? bcap * 2 : 8;
					bs = xrealloc(bs, (size_t)bcap * sizeof *bs);
				}
				bs[nb++] = (Base){bk, e->median_us};
			}
		}
	}
	ncand = cands.n;
	free(cands.v);
	free(ref);
	sb_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	esc(out, o->title);
	sb_printf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>", CSS);
	esc(out, o->title);
	sb_puts(out, "</h1>\n<p>Store <code>");
	esc(out, store_path(st));
	sb_printf(out, "</code>, schema v%d. Generated by cake " CAKE_VERSION ".</p>\n", store_schema_version(st));
	sb_puts(out, "<nav><a href=\"#curve\">evolution</a><a href=\"#scatter\">predicted vs measured</a>"
	             "<a href=\"#verdicts\">verdicts</a><a href=\"#frontier\">frontier</a><a href=\"#impact\">rule impact"
	             "</a><a href=\"#candidates\">candidates</a></nav>\n");
	sb_printf(out, "<table class=\"summary\"><tr><th>candidates</th><th>evaluations</th><th>GPU runs</th>"
	               "<th>GPU minutes</th><th>frontier entries</th></tr><tr><td class=\"n\" id=\"total-cands\">%d</td>"
	               "<td class=\"n\">%d</td><td class=\"n\" id=\"total-gpu-runs\">%d</td><td class=\"n\" "
	               "id=\"total-gpu-min\">", ncand, ne, gpu_runs);
	num(out, total_gpu / 60, 2);
	sb_printf(out, "</td><td class=\"n\">%d</td></tr></table>\n", nf);
	section_curves(out, cv, ncv);
	section_scatter(out, ev, ne);
	section_verdicts(out, ev, ne);
	Ids ids = {0};
	section_frontier(out, st, fr, nf, bs, nb, &a, &ids);
	section_impact(out, st, &a, &ids);
	section_candidates(out, st, &a, &ids);
	sb_puts(out, "</body></html>\n");
	free(ids.v);
	for (int i = 0; i < ncv; i++) {
		free(cv[i].x);
		free(cv[i].y);
	}
	free(cv);
	free(bs);
	arena_free(&a);
	return 0;
}
