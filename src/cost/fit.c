/*
 * fit.c — calibration arithmetic: the held-out split, the coefficient fit
 * and the ranking metrics (cost.h).
 *
 * Split. By candidate (the default): a candidate is held out when the
 * xxh3-64 hash of its id is 0 modulo `every`, at every shape it was
 * measured at, so the held-out candidates of a (family, shape) group are
 * ranked by a model that never saw them. By group: whole (family, shape)
 * groups are held out (the hash of the group's key), so that a held-out
 * ranking is at a shape the fit never saw; a family with two or more groups
 * and none held out gives up the group with the smallest hash. No
 * randomness: the same data always splits the same.
 *
 * Fit. The objective is the mean squared log error of the training samples,
 * (ln predicted - ln measured)^2, plus rank_weight times the mean pairwise
 * ranking loss over the training pairs of one group whose measured times
 * differ by more than 1 % (t ln(1 + exp((ln p_fast - ln p_slow) / t)),
 * t = 0.02: about the log error of a pair in the wrong order, about 0 for
 * one in the right order), plus lambda times the squared distance of each
 * coefficient from the prior in units of its range (a weak pull that keeps
 * coefficients the data does not constrain where the prior put them). The
 * search ranks candidates, so the time's scale alone is not the target.
 * Coordinate search: each coefficient in turn tries +-step (times its
 * range, clamped to its bounds) and keeps the better value; sweeps repeat
 * until none improves, then the step halves, from 1/4 down to 1/4096 (the
 * coefficients of the newest structure version in a second search of
 * their own, from the first's result: cost_fit). The
 * result is rounded to 6 significant digits, the precision a model file
 * holds, so the fitted model and the file it is written to are the same.
 *
 * Metrics (on one side of the split, per family or all):
 *   Kendall tau  tau-b over the pairs of samples in the same group:
 *                (concordant - discordant) / sqrt((pairs - tied in the
 *                prediction) (pairs - tied in the measurement)), so that two
 *                candidates the model cannot tell apart and the GPU could
 *                not either do not count against it; and the same over the
 *                pairs measured at least 3 % apart (tau3: about twice the
 *                run-to-run noise, so the pairs whose order is real);
 *   MAPE         the median of |predicted - measured| / measured;
 *   top-3        groups of two or more whose measured best is among the
 *                model's three fastest predictions (groups of 3 or fewer
 *                always hit and are counted as trivial).
 */
#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

static uint64_t group_hash(const char *g)
{
	return XXH3_64bits(g ? g : "", g ? strlen(g) : 0);
}

void cost_split(CostSample *s, int n, int every, bool by_group)
{
	if (every < 1)
		every = 1;
	if (!by_group) {
		for (int i = 0; i < n; i++)
			s[i].heldout = group_hash(s[i].cand) % (uint64_t)every == 0;
		return;
	}
	for (int i = 0; i < n; i++)
		s[i].heldout = group_hash(s[i].group) % (uint64_t)every == 0;
	/* a family with >= 2 groups and none held out gives up its smallest-hash group */
	for (int i = 0; i < n; i++) {
		bool seen = false, any = false, multi = false;
		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(s[j].family, s[i].family);
		if (seen)
			continue;
		const char *g0 = NULL, *gmin = NULL;
		uint64_t hmin = UINT64_MAX;
		for (int j = i; j < n; j++) {
			if (strcmp(s[j].family, s[i].family))
				continue;
			any |= s[j].heldout;
			if (!g0)
				g0 = s[j].group;
			else if (strcmp(g0, s[j].group))
				multi = true;
			uint64_t h = group_hash(s[j].group);
			if (h < hmin || (h == hmin && gmin && strcmp(s[j].group, gmin) < 0))
				hmin = h, gmin = s[j].group;
		}
		if (any || !multi)
			continue;
		for (int j = i; j < n; j++)
			if (!strcmp(s[j].family, s[i].family) && !strcmp(s[j].group, gmin))
				s[j].heldout = true;
	}
}

static double round6(double x)
{
	if (x == 0 || !isfinite(x))
		return x;
	char buf[32];
	snprintf(buf, sizeof buf, "%.6g", x);
	return strtod(buf, NULL);
}

typedef struct Pairs {
	int (*ij)[2];               /* training pairs of one group: [0] measured faster */
	int n;
	double *lp;                 /* ln predicted, per sample */
} Pairs;

static void make_pairs(CostSample *s, int n, Pairs *pp)
{
	int cap = 0;
	pp->ij = NULL;
	pp->n = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n && pp->n < 400000; j++) {
			if (s[i].heldout || s[j].heldout || !(s[i].meas_us > 0) || !(s[j].meas_us > 0) ||
			    strcmp(s[i].group, s[j].group) || fabs(log(s[i].meas_us / s[j].meas_us)) < 0.01)
				continue;
			if (pp->n == cap) {
				cap = cap ? 2 * cap : 1024;
				pp->ij = xrealloc(pp->ij, (size_t)cap * sizeof *pp->ij);
			}
			bool ifast = s[i].meas_us < s[j].meas_us;
			pp->ij[pp->n][0] = ifast ? i : j;
			pp->ij[pp->n][1] = ifast ? j : i;
			pp->n++;
		}
	pp->lp = xcalloc((size_t)n + 1, sizeof *pp->lp);
}

static double objective(CostSample *s, int n, const GpuInfo *g, const CostModel *m, const CostModel *prior,
                        double lambda, double rank_weight, Pairs *pp)
{
	double sum = 0;
	int cnt = 0;
	for (int i = 0; i < n; i++) {
		if (s[i].heldout || !(s[i].meas_us > 0))
			continue;
		double p = cost_predict_us(&s[i].c, &s[i].w, g, m);
		pp->lp[i] = log(p > 1e-9 ? p : 1e-9);
		double d = pp->lp[i] - log(s[i].meas_us);
		sum += d * d;
		cnt++;
	}
	double obj = cnt ? sum / cnt : 0;
	if (rank_weight > 0 && pp->n > 0) {
		const double t = 0.02;
		double r = 0;
		for (int q = 0; q < pp->n; q++) {
			double x = (pp->lp[pp->ij[q][0]] - pp->lp[pp->ij[q][1]]) / t;
			r += t * (x > 30 ? x : log1p(exp(x)));
		}
		obj += rank_weight * r / pp->n;
	}
	for (int j = 0; j < CC_NCOEF; j++) {
		double lo, hi;
		cost_coef_bounds(j, &lo, &hi);
		double d = hi > lo ? (m->c[j] - prior->c[j]) / (hi - lo) : 0;
		obj += lambda * d * d;
	}
	return obj;
}

double cost_fit(CostSample *s, int n, const GpuInfo *g, const CostModel *prior, double lambda, double rank_weight,
                CostModel *m)
{
	/* The coefficients of the newest structure version are fitted last and
	 * alone: first the older ones, with the new at their neutral value
	 * (which is the older structure's fit, the same minimum), then only the
	 * new, the older held there. A new term is judged as a refinement of
	 * the fitted older structure; searching every coefficient again from
	 * coarse steps lands in another minimum of the rough objective and mixes
	 * the optimizer's luck into the new term's effect. */
	int newest = 1, oldest = 1 << 30;
	for (int j = 0; j < CC_NCOEF; j++) {
		int v = cost_coef_since(j);
		newest = v > newest ? v : newest;
		oldest = v < oldest ? v : oldest;
	}
	if (newest == oldest)
		return cost_fit_some(s, n, g, prior, lambda, rank_weight, NULL, m);
	bool older[CC_NCOEF], newer[CC_NCOEF];
	for (int j = 0; j < CC_NCOEF; j++) {
		older[j] = cost_coef_since(j) < newest;
		newer[j] = !older[j];
		if (newer[j])
			m->c[j] = cost_coef_neutral(j);
	}
	cost_fit_some(s, n, g, prior, lambda, rank_weight, older, m);
	return cost_fit_some(s, n, g, prior, lambda, rank_weight, newer, m);
}

double cost_fit_some(CostSample *s, int n, const GpuInfo *g, const CostModel *prior, double lambda, double rank_weight,
                     const bool *fit, CostModel *m)
{
	Pairs pp;
	make_pairs(s, n, &pp);
	double best = objective(s, n, g, m, prior, lambda, rank_weight, &pp);
	for (double step = 0.25; step >= 1.0 / 4096; step /= 2) {
		for (int sweep = 0; sweep < 200; sweep++) {
			bool improved = false;
			for (int j = 0; j < CC_NCOEF; j++) {
				if (fit && !fit[j])
					continue;
				double lo, hi;
				cost_coef_bounds(j, &lo, &hi);
				double x0 = m->c[j], bx = x0;
				for (int dir = -1; dir <= 1; dir += 2) {
					double x = x0 + dir * step * (hi - lo);
					x = x < lo ? lo : x > hi ? hi : x;
					if (x == x0)
						continue;
					m->c[j] = x;
					double o = objective(s, n, g, m, prior, lambda, rank_weight, &pp);
					if (o < best - 1e-12) {
						best = o;
						bx = x;
						improved = true;
					}
					m->c[j] = x0;
				}
				m->c[j] = bx;
			}
			if (!improved)
				break;
		}
	}
	for (int j = 0; j < CC_NCOEF; j++) {
		double lo, hi;
		cost_coef_bounds(j, &lo, &hi);
		double x = round6(m->c[j]);
		m->c[j] = x < lo ? lo : x > hi ? hi : x;
	}
	double o = objective(s, n, g, m, prior, lambda, rank_weight, &pp);
	free(pp.ij);
	free(pp.lp);
	return o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void cost_metrics(CostSample *s, int n, const GpuInfo *g, const CostModel *m, bool which, const char *family,
                  CostMetrics *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++)
		s[i].pred_us = cost_predict_us(&s[i].c, &s[i].w, g, m);
	int *idx = xcalloc((size_t)n + 1, sizeof *idx);
	double *ape = xcalloc((size_t)n + 1, sizeof *ape);
	int k = 0;
	for (int i = 0; i < n; i++)
		if (s[i].heldout == which && (!family || !strcmp(s[i].family, family)) && s[i].meas_us > 0)
			idx[k++] = i;
	out->n = k;
	for (int a = 0; a < k; a++)
		ape[a] = fabs(s[idx[a]].pred_us - s[idx[a]].meas_us) / s[idx[a]].meas_us;
	qsort(ape, (size_t)k, sizeof *ape, cmp_double);
	out->mape = k == 0 ? NAN : k % 2 ? ape[k / 2] : (ape[k / 2 - 1] + ape[k / 2]) / 2;
	long conc = 0, disc = 0, tie_p = 0, tie_m = 0, c3 = 0, d3 = 0, t3 = 0;
	bool *done = xcalloc((size_t)k + 1, sizeof *done);
	for (int a = 0; a < k; a++) {
		if (done[a])
			continue;
		/* the group of a */
		int mem[4096], nm = 0;
		for (int b = a; b < k && nm < 4096; b++)
			if (!done[b] && !strcmp(s[idx[b]].group, s[idx[a]].group)) {
				done[b] = true;
				mem[nm++] = idx[b];
			}
		if (nm < 2)
			continue;
		out->groups++;
		for (int x = 0; x < nm; x++)
			for (int y = x + 1; y < nm; y++) {
				double dp = s[mem[x]].pred_us - s[mem[y]].pred_us, dm = s[mem[x]].meas_us - s[mem[y]].meas_us;
				out->pairs++;
				if (dp * dm > 0)
					conc++;
				else if (dp * dm < 0)
					disc++;
				tie_p += dp == 0;
				tie_m += dm == 0;
				if (fabs(log(s[mem[x]].meas_us / s[mem[y]].meas_us)) >= log(1.03)) {
					out->pairs3++;
					c3 += dp * dm > 0;
					d3 += dp * dm < 0;
					t3 += dp == 0;
				}
			}
		int best = mem[0];
		for (int x = 1; x < nm; x++)
			if (s[mem[x]].meas_us < s[best].meas_us)
				best = mem[x];
		int ahead = 0;
		for (int x = 0; x < nm; x++)
			ahead += s[mem[x]].pred_us < s[best].pred_us;
		out->top3_groups++;
		out->top3_hits += ahead < 3;
		out->top3_trivial += nm <= 3;
	}
	double den = sqrt((double)(out->pairs - tie_p) * (double)(out->pairs - tie_m));
	out->tau = den > 0 ? (double)(conc - disc) / den : NAN;
	double den3 = sqrt((double)(out->pairs3 - t3) * (double)out->pairs3);
	out->tau3 = den3 > 0 ? (double)(c3 - d3) / den3 : NAN;
	free(done);
	free(idx);
	free(ape);
}
