/*
 * frontier.c — `cake library --store S`: the store's winners in the library.
 *
 * A library is built from the family's corpus kernels (kernels/FAMILY). With a
 * store, each kernel of the family that has a kernel family of its own (the
 * assign, the GEMM tiles; not the helper kernels of the update) may be
 * replaced by a candidate the search found, when the store proves that the
 * candidate is faster and that it is the same kernel to the dispatcher:
 *
 *   measured  the corpus kernel, printed alone in canonical form, has the
 *             candidate id `cake evolve --baseline` records it under; the
 *             store must hold ok timings of it and of the candidate at the
 *             same shapes (the same GPU kind: a store is one GPU kind, see
 *             STORE.md). Over those shapes the candidate must be faster by
 *             the geometric mean of the time ratios by at least --min-gain
 *             (default 3 %, about twice the run-to-run noise of one timing),
 *             and slower at none of them.
 *   the same  its `const`, `param` and `domain` lines are those of the corpus
 *             kernel, word for word in canonical form: the dispatcher's
 *             guards evaluate the kernel's own domain, so an identical domain
 *             keeps every guard, route and domain test as it was, and the
 *             launch layer takes the grid and the tensor maps from its Plan.
 *   sound     it passes today's verifier and lowers (the library compiles it
 *             to a cubin with the rest, spills refused as for any kernel).
 *
 * The candidate's text is renamed to the corpus kernel's name (the routes
 * and the public functions name kernels), and lib_load_with compiles it in
 * place of the file. Of the candidates that qualify, the largest mean gain
 * wins. Every kernel gets a line in the report: the candidate taken, with
 * its timings and provenance, or why the corpus kernel stays.
 */
#include "lib.h"
#include "../harness/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The lines of canonical text t that start with "  const ", "  param " or
 * "  domain ", in order: what a substitute must share. */
static void interface_lines(const char *t, StrBuf *out)
{
	for (const char *p = t; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if ((n > 8 && !strncmp(p, "  const ", 8)) || (n > 8 && !strncmp(p, "  param ", 8)) ||
		    (n > 9 && !strncmp(p, "  domain ", 9))) {
			sb_putn(out, p, n);
			sb_putc(out, '\n');
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* text with the kernel header's name replaced by name (malloc'd), or NULL
 * when text does not start with "kernel NAME ". */
static char *renamed(const char *text, const char *name)
{
	if (strncmp(text, "kernel ", 7))
		return NULL;
	const char *e = text + 7 + strcspn(text + 7, " \n");
	StrBuf b = {0};
	sb_printf(&b, "kernel %s", name);
	sb_puts(&b, e);
	char *r = xstrdup(sb_str(&b));
	sb_free(&b);
	return r;
}

typedef struct Meas {
	const char *cand, *kernel, *shape;
	double us;
} Meas;

/* Whether candidate text (kernel kname) passes today's verifier and lowers; why otherwise. */
static bool lowers(const char *text, const char *kname, char *why, size_t n)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeOptions o = cake_options(CAKE_LOWER);
	o.kernel = kname;
	CakeUnit u;
	cake_compile_text(&u, &ss, &dl, "<store candidate>", text, strlen(text), &o);
	bool ok = u.failed == CAKE_STAGE_NONE && dl.nerr == 0 && u.nkernels == 1;
	if (!ok) {
		const char *first = NULL;
		for (int i = 0; i < dl.n && !first; i++)
			if (dl.items[i]->sev == SEV_ERROR)
				first = dl.items[i]->rule;
		snprintf(why, n, "it no longer %s (%.120s)", u.reached < CAKE_VERIFY ? "checks" : "passes the verifier or lowers",
		         first ? first : u.error[0] ? u.error : "no kernel");
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

int lib_frontier(const LibSet *ls, Store *st, double min_gain, LibOverrides *ov, StrBuf *report, char *err,
                 size_t errlen)
{
	memset(ov, 0, sizeof *ov);
	const LibFamily *fam = ls->fam;
	StrBuf untimed = {0};   /* kernels the store never timed */
	for (int i = 0; i < fam->nkernels; i++) {
		const Kernel *k = ls->kern[i];
		const char *kf = k->family && k->family->name ? k->family->name : NULL;
		if (!kf)
			continue;   /* a helper kernel (no family, no oracle): never replaced */
		const CakeUnit *u = &ls->units[ls->unit_of[i]];
		int ki = cake_kernel_index(u, k->name);
		char *ctext = cake_kernel_text(u, ki);
		char cid[STORE_ID_LEN + 1];
		store_hash_text(ctext, cid);
		StrBuf cif = {0};
		interface_lines(ctext, &cif);
		Arena a;
		arena_init(&a);
		StoreFilter f = {.family = kf, .verdict = "ok"};
		StoreEval *ev = NULL;
		int ne = 0;
		if (store_list_evals(st, &f, &a, &ev, &ne) != STORE_OK) {
			snprintf(err, errlen, "reading the store: %s", store_errmsg(st));
			arena_free(&a);
			sb_free(&cif);
			free(ctext);
			sb_free(&untimed);
			return 1;
		}
		/* the corpus kernel's best time per shape */
		Meas *base = xcalloc((size_t)ne + 1, sizeof *base);
		int nb = 0;
		for (int e = 0; e < ne; e++) {
			if (strcmp(ev[e].cand, cid) || strcmp(ev[e].kernel, k->name) || isnan(ev[e].median_us))
				continue;
			int b = 0;
			while (b < nb && strcmp(base[b].shape, ev[e].shape))
				b++;
			if (b == nb)
				base[nb++] = (Meas){cid, k->name, ev[e].shape, ev[e].median_us};
			else if (ev[e].median_us < base[b].us)
				base[b].us = ev[e].median_us;
		}
		if (!nb) {
			sb_printf(&untimed, "%s%s", untimed.len ? ", " : "", k->name);
			goto next;
		}
		sb_printf(report, "  %-22s ", k->name);
		/* every other candidate's gain over the shapes both were timed at */
		{
			const char *best = NULL, *best_kernel = NULL, *why_not = NULL;
			double best_gain = 0, near_gain = 0;
			int best_common = 0;
			const char *near = NULL;
			char whybuf[256] = "";
			/* each other candidate's evaluations, grouped by work item (sorted once) */
			qsort(ev, (size_t)ne, sizeof *ev, store_eval_cmp_item);
			for (int e = 0, g; e < ne; e = g) {
				const char *c = ev[e].cand;
				for (g = e + 1; g < ne && !strcmp(ev[g].cand, c) && !strcmp(ev[g].kernel, ev[e].kernel); g++)
					;
				if (!strcmp(c, cid))
					continue;
				double lg = 0, worst = INFINITY;
				int common = 0;
				for (int b = 0; b < nb; b++) {
					double m = NAN;
					for (int q = e; q < g; q++)
						if (!strcmp(ev[q].shape, base[b].shape) && !isnan(ev[q].median_us) &&
						    (isnan(m) || ev[q].median_us < m))
							m = ev[q].median_us;
					if (isnan(m))
						continue;
					common++;
					lg += log(base[b].us / m);
					worst = fmin(worst, base[b].us / m);
				}
				if (!common)
					continue;
				double gain = exp(lg / common);
				if (gain > near_gain) {
					near_gain = gain;
					near = c;
				}
				if (gain < 1 + min_gain || worst < 1 || gain <= best_gain)
					continue;
				StoreCandidate sc;
				if (store_get_candidate(st, c, &a, &sc) != STORE_OK)
					continue;
				StrBuf qif = {0};
				interface_lines(sc.text, &qif);
				bool same = !strcmp(sb_str(&qif), sb_str(&cif));
				sb_free(&qif);
				if (!same) {
					why_not = "its const, param or domain lines differ from the corpus kernel's";
					continue;
				}
				if (!lowers(sc.text, ev[e].kernel, whybuf, sizeof whybuf)) {
					why_not = whybuf;
					continue;
				}
				best = c;
				best_kernel = ev[e].kernel;
				best_gain = gain;
				best_common = common;
			}
			if (!best) {
				if (near && near_gain >= 1 + min_gain && why_not)
					sb_printf(report, "corpus kernel kept: the fastest store candidate (%.12s, %.3fx) is not usable: %s\n",
					          near, near_gain, why_not);
				else if (near)
					sb_printf(report, "corpus kernel kept: the best store candidate (%.12s) is %.3fx over %d shape%s, below "
					          "the required %.3fx (--min-gain %g)\n", near, near_gain, nb, nb == 1 ? "" : "s",
					          1 + min_gain, min_gain);
				else
					sb_printf(report, "corpus kernel kept: no other candidate of family %s was timed at its shapes\n", kf);
				goto next;
			}
			StoreCandidate sc;
			store_get_candidate(st, best, &a, &sc);
			ov->text[i] = renamed(sc.text, k->name);
			if (!ov->text[i]) {
				sb_printf(report, "corpus kernel kept: candidate %.12s does not start with a kernel header\n", best);
				goto next;
			}
			snprintf(ov->id[i], sizeof ov->id[i], "%s", best);
			snprintf(ov->note[i], sizeof ov->note[i],
			         "store candidate %.12s (kernel %s, origin %s): %.3fx the corpus kernel over %d shape%s", best,
			         best_kernel, sc.origin ? sc.origin : "?", best_gain, best_common, best_common == 1 ? "" : "s");
			sb_printf(report, "%s\n", ov->note[i]);
			for (int b = 0; b < nb; b++)
				for (int q = 0; q < ne; q++)
					if (!strcmp(ev[q].cand, best) && !strcmp(ev[q].shape, base[b].shape) && !isnan(ev[q].median_us)) {
						sb_printf(report, "  %-22s   at %s: %.1f us against %.1f us (%s)\n", "", base[b].shape,
						          ev[q].median_us, base[b].us, ev[q].gpu ? ev[q].gpu : "GPU not recorded");
						break;
					}
		}
	next:
		free(base);
		arena_free(&a);
		sb_free(&cif);
		free(ctext);
	}
	if (untimed.len)
		sb_printf(report, "  corpus kernels kept, the store has no ok timing of them (`cake evolve --baseline FILE` "
		          "records one): %s\n", sb_str(&untimed));
	sb_free(&untimed);
	return 0;
}

void lib_overrides_free(LibOverrides *ov)
{
	for (int i = 0; i < LIB_MAX_KERNELS; i++)
		free(ov->text[i]);
	memset(ov, 0, sizeof *ov);
}
