/*
 * fit.c — calibration arithmetic: the held-out split, the coefficient fit
 * and the ranking metrics (cost.h).
 *
 * Split. The search loop ranks candidates of one family at one shape, so
 * the unit of generalisation is a (family, shape) group: whole groups are
 * held out, so that a held-out ranking was never seen by the fit. A group
 * is held out when the xxh3-64 hash of its key is 0 modulo `every`; a
 * family with two or more groups and none held out gives up the group with
 * the smallest hash. No randomness: the same data always splits the same.
 *
 * Fit. The objective is the mean squared log error of the training samples,
 * (ln predicted - ln measured)^2, plus lambda times the squared distance of
 * each coefficient from the prior in units of its range (a weak pull that
 * keeps coefficients the data does not constrain where the prior put them).
 * Coordinate search: each coefficient in turn tries +-step (times its
 * range, clamped to its bounds) and keeps the better value; sweeps repeat
 * until none improves, then the step halves, from 1/4 down to 1/4096. The
 * result is rounded to 6 significant digits, the precision a model file
 * holds, so the fitted model and the file it is written to are the same.
 *
 * Metrics (on one side of the split, per family or all):
 *   Kendall tau  tau-b over the pairs of samples in the same group:
 *                (concordant - discordant) / sqrt((pairs - tied in the
 *                prediction) (pairs - tied in the measurement)), so that two
 *                candidates the model cannot tell apart and the GPU could
 *                not either do not count against it;
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

void cost_split(CostSample *s, int n, int every)
{
	if (every < 1)
		every = 1;
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

static double objective(CostSample *s, int n, const GpuInfo *g, const CostModel *m, const CostModel *prior,
                        double lambda)
{
	double sum = 0;
	int cnt = 0;
	for (int i = 0; i < n; i++) {
		if (s[i].heldout || !(s[i].meas_us > 0))
			continue;
		double p = cost_predict_us(&s[i].c, &s[i].w, g, m);
		double d = log(p > 1e-9 ? p : 1e-9) - log(s[i].meas_us);
		sum += d * d;
		cnt++;
	}
	double obj = cnt ? sum / cnt : 0;
	for (int j = 0; j < CC_NCOEF; j++) {
		double lo, hi;
		cost_coef_bounds(j, &lo, &hi);
		double d = (m->c[j] - prior->c[j]) / (hi - lo);
		obj += lambda * d * d;
	}
	return obj;
}

double cost_fit(CostSample *s, int n, const GpuInfo *g, const CostModel *prior, double lambda, CostModel *m)
{
	double best = objective(s, n, g, m, prior, lambda);
	for (double step = 0.25; step >= 1.0 / 4096; step /= 2) {
		for (int sweep = 0; sweep < 200; sweep++) {
			bool improved = false;
			for (int j = 0; j < CC_NCOEF; j++) {
				double lo, hi;
				cost_coef_bounds(j, &lo, &hi);
				double x0 = m->c[j], bx = x0;
				for (int dir = -1; dir <= 1; dir += 2) {
					double x = x0 + dir * step * (hi - lo);
					x = x < lo ? lo : x > hi ? hi : x;
					if (x == x0)
						continue;
					m->c[j] = x;
					double o = objective(s, n, g, m, prior, lambda);
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
	return objective(s, n, g, m, prior, lambda);
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
	long conc = 0, disc = 0, tie_p = 0, tie_m = 0;
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
	free(done);
	free(idx);
	free(ape);
}
