/*
 * oracle.c — CPU references the kernel families check GPU outputs against.
 *
 * A GPU result is only as trustworthy as the reference it is compared with,
 * so the references are deliberately simple: float64 accumulation over the
 * exact bf16 inputs the GPU saw. Large problems are checked on a sample of
 * rows (every column of each sampled row), which catches wrong tiles, wrong
 * swizzles, missing K-steps and unwritten outputs while keeping an 8192^3
 * check to a fraction of a second on a multi-core host (rows are split over
 * POSIX threads).
 *
 * Inputs come from splitmix64: reproducible from a printed seed, uniform in
 * [-1, 1] and never exactly zero (zeros hide unwritten outputs and can run
 * faster than real data).
 */
#include "oracle.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

uint16_t oracle_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);   /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1u);             /* round to nearest even */
	return (uint16_t)(u >> 16);
}

float oracle_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

uint64_t oracle_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void oracle_fill_bf16(uint16_t *dst, size_t n, uint64_t seed)
{
	uint64_t st = seed;
	for (size_t i = 0; i < n; i++) {
		uint16_t h;
		do {
			/* 24 random bits -> (-1, 1) */
			double u = (double)(oracle_splitmix64(&st) >> 40) / (double)(1ull << 24);
			h = oracle_f32_to_bf16((float)(2.0 * u - 1.0));
		} while ((h & 0x7fffu) == 0);
		dst[i] = h;
	}
}

typedef struct GemmJob {
	const uint16_t *A, *B;
	const float *Bf;     /* B converted once, [N*K] floats (may be NULL) */
	int N, K;
	const int *rows;
	int r0, r1;          /* this thread's slice of rows[] */
	double *ref;
} GemmJob;

static void *gemm_worker(void *p)
{
	GemmJob *j = p;
	int K = j->K, N = j->N;
	double *arow = malloc(sizeof(double) * (size_t)K);
	if (!arow)
		return NULL;
	for (int ri = j->r0; ri < j->r1; ri++) {
		const uint16_t *a = j->A + (size_t)j->rows[ri] * K;
		for (int k = 0; k < K; k++)
			arow[k] = oracle_bf16_to_f32(a[k]);
		double *out = j->ref + (size_t)ri * N;
		for (int n = 0; n < N; n++) {
			double acc = 0;
			if (j->Bf) {
				const float *b = j->Bf + (size_t)n * K;
				for (int k = 0; k < K; k++)
					acc += arow[k] * (double)b[k];
			} else {
				const uint16_t *b = j->B + (size_t)n * K;
				for (int k = 0; k < K; k++)
					acc += arow[k] * (double)oracle_bf16_to_f32(b[k]);
			}
			out[n] = acc;
		}
	}
	free(arow);
	return NULL;
}

/* Worker threads for an oracle over nrows rows: the request clamped to 1..64
 * and to at most one row per worker. */
static int worker_count(int nthreads, int nrows)
{
	if (nthreads > 64)
		nthreads = 64;
	if (nthreads > nrows)
		nthreads = nrows;
	return nthreads < 1 ? 1 : nthreads;
}

void oracle_gemm_abt_bf16(const uint16_t *A, const uint16_t *B, int M, int N, int K,
                          const int *rows, int nrows, double *ref, int nthreads)
{
	(void)M;
	nthreads = worker_count(nthreads, nrows);
	/* Convert B once when it is reused by several rows. */
	float *Bf = NULL;
	if (nrows > 1)
		Bf = malloc(sizeof(float) * (size_t)N * (size_t)K);
	if (Bf)
		for (size_t i = 0; i < (size_t)N * (size_t)K; i++)
			Bf[i] = oracle_bf16_to_f32(B[i]);
	GemmJob jobs[64];
	pthread_t th[64];
	int started[64] = {0};
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (GemmJob){A, B, Bf, N, K, rows, (int)((long)nrows * t / nthreads),
		                    (int)((long)nrows * (t + 1) / nthreads), ref};
		if (nthreads > 1 && pthread_create(&th[t], NULL, gemm_worker, &jobs[t]) == 0)
			started[t] = 1;
		else
			gemm_worker(&jobs[t]);
	}
	for (int t = 0; t < nthreads; t++)
		if (started[t])
			pthread_join(th[t], NULL);
	free(Bf);
}

void oracle_compare_bf16_rows(const uint16_t *C, int N, const int *rows, int nrows,
                              const double *ref, OracleCmp *cmp)
{
	double num = 0, den = 0;
	memset(cmp, 0, sizeof *cmp);
	cmp->first_bad = -1;
	for (int ri = 0; ri < nrows; ri++) {
		const uint16_t *c = C + (size_t)rows[ri] * N;
		const double *r = ref + (size_t)ri * N;
		for (int n = 0; n < N; n++) {
			double o = oracle_bf16_to_f32(c[n]);
			bool bad = !isfinite(o);
			if (bad)
				cmp->n_nan++;
			else {
				double e = o - r[n];
				num += e * e;
				bad = fabs(e) > 0.1 + 0.1 * fabs(r[n]);
			}
			den += r[n] * r[n];
			if (bad && cmp->first_bad < 0) {
				cmp->first_bad = (long long)rows[ri] * N + n;
				cmp->first_bad_out = o;
				cmp->first_bad_ref = r[n];
			}
		}
	}
	cmp->rel_err = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
	if (cmp->n_nan)
		cmp->rel_err = NAN;
}

long long oracle_kmeans_assign_check(const uint16_t *X, const uint16_t *C, const float *cnorm, int K, int D,
                                     const int32_t *out, const int *rows, int nrows, double tol, OracleCmp *cmp)
{
	memset(cmp, 0, sizeof *cmp);
	cmp->first_bad = -1;
	long long nbad = 0;
	double *x = malloc(sizeof(double) * (size_t)D);
	if (!x)
		return -1;
	for (int ri = 0; ri < nrows; ri++) {
		int i = rows[ri];
		for (int d = 0; d < D; d++)
			x[d] = oracle_bf16_to_f32(X[(size_t)i * D + d]);
		double best = INFINITY, mine = NAN;
		int arg = -1, lab = out[i];
		for (int j = 0; j < K; j++) {
			const uint16_t *c = C + (size_t)j * D;
			double dot = 0;
			for (int d = 0; d < D; d++)
				dot += x[d] * (double)oracle_bf16_to_f32(c[d]);
			double sc = (double)cnorm[j] - 2.0 * dot;
			if (sc < best) {
				best = sc;
				arg = j;
			}
			if (j == lab)
				mine = sc;
		}
		double gap = (lab >= 0 && lab < K) ? (mine - best) / (1.0 + fabs(best)) : INFINITY;
		if (gap > cmp->rel_err)
			cmp->rel_err = gap;
		if (!(gap <= tol)) {
			nbad++;
			if (cmp->first_bad < 0) {
				cmp->first_bad = i;
				cmp->first_bad_out = lab;
				cmp->first_bad_ref = arg;
			}
		}
	}
	free(x);
	return nbad;
}

/* ---- k-means (float64) -------------------------------------------------
 *
 * Assignment. The score of centroid j for point x is ‖x − c_j‖² in float64,
 * or cnorm[j] − 2·x·c_j when the kernel takes a precomputed ‖c‖² vector (the
 * two differ by ‖x‖², the same for every j, so the argmin is the same). The
 * GPU sums exact bf16/f16 products in f32, so its scores carry rounding; a
 * label is accepted when it is the float64 argmin (lowest index on an exact
 * tie), or when its score lies within tol·scale of the best one, where scale
 * is the magnitude of the terms of the best score (|cnorm| + 2·Σ|x_d·c_d|
 * (+ ‖x‖²)). Such points are counted as excused ties, never silently: every
 * point whose two nearest centroids are further apart than that must match
 * exactly. Points with a non-finite coordinate are counted and excluded;
 * centroids with one are skipped (they can never be nearest).
 *
 * Update. New centroid = float64 mean of its members; a cluster without
 * members keeps its old centroid bit for bit. */

uint16_t oracle_f32_to_f16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);              /* NaN */
	if (a >= 0x477ff000u)                              /* rounds to >= 65520: inf */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) {                             /* subnormal half (or zero) */
		float af;
		memcpy(&af, &a, 4);
		/* value / 2^-24, rounded to nearest even by the FPU */
		float q = af * 16777216.0f;
		uint32_t m = (uint32_t)q;
		float fr = q - (float)m;
		if (fr > 0.5f || (fr == 0.5f && (m & 1u)))
			m++;
		return (uint16_t)(sign | m);
	}
	uint32_t e = ((a >> 23) - 112u) << 10, m = (a >> 13) & 0x3ffu, rest = a & 0x1fffu;
	uint32_t h = e | m;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
		h++;                                           /* carries into the exponent correctly */
	return (uint16_t)(sign | h);
}

float oracle_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
	if (e == 0) {
		float f = (float)m * 0x1p-24f;
		return sign ? -f : f;
	}
	if (e == 31)
		u = sign | 0x7f800000u | (m << 13);
	else
		u = sign | ((e + 112u) << 23) | (m << 13);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

float oracle_elt_to_f32(uint16_t h, bool f16)
{
	return f16 ? oracle_f16_to_f32(h) : oracle_bf16_to_f32(h);
}

uint16_t oracle_f32_to_elt(float f, bool f16)
{
	return f16 ? oracle_f32_to_f16(f) : oracle_f32_to_bf16(f);
}

typedef struct AssignJob {
	const uint16_t *X;
	const double *C;        /* centroids in double, [K*D]; NaN rows flagged in cbad */
	const unsigned char *cbad;
	const double *cn;       /* per-centroid norm term (cnorm[] or ‖c‖²) */
	bool f16, full;
	int K, D;
	const int32_t *out;
	const int *rows;
	int r0, r1;
	double tol;
	KmeansAssignCheck res;  /* this slice's counts */
} AssignJob;

static void assign_note_bad(KmeansAssignCheck *r, int i, int lab, int arg, double gap)
{
	r->mismatches++;
	if (r->first_bad < 0) {
		r->first_bad = i;
		r->first_bad_out = lab;
		r->first_bad_ref = arg;
		r->first_bad_gap = gap;
	}
}

static void *assign_worker(void *p)
{
	AssignJob *j = p;
	KmeansAssignCheck *r = &j->res;
	int K = j->K, D = j->D;
	double *x = malloc(sizeof(double) * (size_t)D);
	if (!x)
		return NULL;
	for (int ri = j->r0; ri < j->r1; ri++) {
		int i = j->rows[ri], lab = j->out[i];
		bool finite = true;
		double xx = 0;
		for (int d = 0; d < D; d++) {
			x[d] = oracle_elt_to_f32(j->X[(size_t)i * D + d], j->f16);
			finite &= isfinite(x[d]) != 0;
			xx += x[d] * x[d];
		}
		if (!finite) {
			r->nan_points++;
			continue;
		}
		r->checked++;
		double best = INFINITY, best_scale = 0, mine = NAN;
		int arg = -1;
		for (int c = 0; c < K; c++) {
			if (j->cbad[c])
				continue;
			const double *cv = j->C + (size_t)c * D;
			double dot = 0, adot = 0;
			for (int d = 0; d < D; d++) {
				double t = x[d] * cv[d];
				dot += t;
				adot += fabs(t);
			}
			double sc = j->cn[c] - 2.0 * dot + (j->full ? xx : 0.0);
			if (sc < best) {
				best = sc;
				arg = c;
				best_scale = fabs(j->cn[c]) + 2.0 * adot + (j->full ? xx : 0.0);
			}
			if (c == lab)
				mine = sc;
		}
		if (lab == arg)
			continue;
		if (lab < 0 || lab >= K || !isfinite(mine)) {
			assign_note_bad(r, i, lab, arg, INFINITY);
			continue;
		}
		double gap = mine - best;
		if (gap <= j->tol * best_scale) {
			r->ties_excused++;
			if (gap > r->max_tie_gap)
				r->max_tie_gap = gap;
		} else
			assign_note_bad(r, i, lab, arg, gap);
	}
	free(x);
	return NULL;
}

long long oracle_kmeans_assign(const uint16_t *X, const uint16_t *C, bool f16, const float *cnorm, int K, int D,
                               const int32_t *out, const int *rows, int nrows, double tol, int nthreads,
                               KmeansAssignCheck *res)
{
	memset(res, 0, sizeof *res);
	res->first_bad = -1;
	double *Cd = malloc(sizeof(double) * (size_t)K * (size_t)D + 1);
	double *cn = malloc(sizeof(double) * (size_t)K + 1);
	unsigned char *cbad = calloc((size_t)K + 1, 1);
	if (!Cd || !cn || !cbad) {
		free(Cd);
		free(cn);
		free(cbad);
		return -1;
	}
	for (int c = 0; c < K; c++) {
		double nn = 0;
		for (int d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(C[(size_t)c * D + d], f16);
			Cd[(size_t)c * D + d] = v;
			nn += v * v;
		}
		cn[c] = cnorm ? (double)cnorm[c] : nn;
		if (!isfinite(nn) || !isfinite(cn[c])) {
			cbad[c] = 1;
			res->nan_centroids++;
		}
	}
	nthreads = worker_count(nthreads, nrows);
	AssignJob jobs[64];
	pthread_t th[64];
	int started[64] = {0};
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (AssignJob){X, Cd, cbad, cn, f16, cnorm == NULL, K, D, out, rows,
		                      (int)((long)nrows * t / nthreads), (int)((long)nrows * (t + 1) / nthreads), tol,
		                      {0}};
		jobs[t].res.first_bad = -1;
		if (nthreads > 1 && pthread_create(&th[t], NULL, assign_worker, &jobs[t]) == 0)
			started[t] = 1;
		else
			assign_worker(&jobs[t]);
	}
	for (int t = 0; t < nthreads; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		KmeansAssignCheck *r = &jobs[t].res;
		res->checked += r->checked;
		res->mismatches += r->mismatches;
		res->ties_excused += r->ties_excused;
		res->nan_points += r->nan_points;
		if (r->max_tie_gap > res->max_tie_gap)
			res->max_tie_gap = r->max_tie_gap;
		if (r->first_bad >= 0 && res->first_bad < 0) {   /* slices are in rows[] order */
			res->first_bad = r->first_bad;
			res->first_bad_out = r->first_bad_out;
			res->first_bad_ref = r->first_bad_ref;
			res->first_bad_gap = r->first_bad_gap;
		}
	}
	free(Cd);
	free(cn);
	free(cbad);
	return res->mismatches;
}

long long oracle_kmeans_update(const uint16_t *X, bool f16, const int32_t *labels, int N, int D, int K,
                               const uint16_t *Cold, double *Cnew, long long *counts, double *absmean)
{
	long long bad = 0;
	memset(Cnew, 0, sizeof(double) * (size_t)K * (size_t)D);
	memset(counts, 0, sizeof(long long) * (size_t)K);
	if (absmean)
		memset(absmean, 0, sizeof(double) * (size_t)K * (size_t)D);
	for (int i = 0; i < N; i++) {
		int c = labels[i];
		if (c < 0 || c >= K) {
			bad++;
			continue;
		}
		counts[c]++;
		for (int d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(X[(size_t)i * D + d], f16);
			Cnew[(size_t)c * D + d] += v;
			if (absmean)
				absmean[(size_t)c * D + d] += fabs(v);
		}
	}
	for (int c = 0; c < K; c++)
		for (int d = 0; d < D; d++) {
			size_t e = (size_t)c * D + d;
			if (counts[c]) {
				Cnew[e] /= (double)counts[c];
				if (absmean)
					absmean[e] /= (double)counts[c];
			} else
				Cnew[e] = oracle_elt_to_f32(Cold[e], f16);
		}
	return bad;
}

long long oracle_kmeans_update_check(const uint16_t *Cout, bool f16, const double *ref, const double *absmean,
                                     const long long *counts, const uint16_t *Cold, int K, int D, double tol,
                                     KmeansUpdateCheck *res)
{
	double num = 0, den = 0;
	memset(res, 0, sizeof *res);
	res->first_bad = -1;
	for (int c = 0; c < K; c++) {
		if (!counts[c])
			res->empty++;
		for (int d = 0; d < D; d++) {
			size_t e = (size_t)c * D + d;
			double o = oracle_elt_to_f32(Cout[e], f16), rf = ref[e];
			bool bad;
			if (!counts[c]) {
				bad = Cout[e] != Cold[e];
				if (bad)
					res->empty_changed++;
			} else if (!isfinite(o)) {
				res->n_nan++;
				bad = true;
			} else {
				/* output rounding (tol·|ref|) plus f32 summation noise on the members' magnitudes */
				double allow = tol * (fabs(rf) + (absmean ? absmean[e] : 0) * 0x1p-10);
				/* below the output format's normal range the spacing is absolute:
				 * half the f16 subnormal quantum (2^-24) is a correct rounding */
				if (f16)
					allow += 0x1p-25;
				num += (o - rf) * (o - rf);
				den += rf * rf;
				bad = fabs(o - rf) > allow;
			}
			if (bad) {
				res->bad++;
				if (res->first_bad < 0) {
					res->first_bad = (long long)e;
					res->first_bad_out = o;
					res->first_bad_ref = rf;
				}
			}
		}
	}
	res->rel_err = res->n_nan ? NAN : den > 0 ? sqrt(num / den) : 0;
	return res->bad;
}

long long oracle_kmeans_divide_check(const float *sums, const int32_t *counts, const uint16_t *Cold, bool f16, int K,
                                     int D, const uint16_t *Cout, const float *cnorm, const float *shift, double tol,
                                     KmeansUpdateCheck *res)
{
	double *ref = calloc((size_t)K * (size_t)D + 1, sizeof(double)), *am = calloc((size_t)K * (size_t)D + 1, sizeof(double));
	long long *cnt = calloc((size_t)K + 1, sizeof(long long));
	if (!ref || !am || !cnt) {
		free(ref), free(am), free(cnt);
		return -1;
	}
	for (int c = 0; c < K; c++) {
		cnt[c] = counts[c] > 0 ? counts[c] : 0;
		for (int d = 0; d < D; d++) {
			size_t e = (size_t)c * D + d;
			ref[e] = cnt[c] ? (double)sums[e] / (double)cnt[c] : oracle_elt_to_f32(Cold[e], f16);
			am[e] = fabs(ref[e]);
		}
	}
	long long bad = oracle_kmeans_update_check(Cout, f16, ref, am, cnt, Cold, K, D, tol, res);
	/* the norms and shifts must describe the centroids actually written */
	for (int c = 0; c < K; c++) {
		/* The kernel may form the norm and shift from its f32 centroid before or after
		 * rounding it to the output format; either is right. h bounds that rounding per
		 * element with a factor of two to spare (one ulp: 2^-8 relative for bf16, 2^-11
		 * for f16, plus half the f16 subnormal quantum), and dn/ds bound its effect on
		 * the sums of squares. */
		double nn = 0, sh = 0, dn = 0, ds = 0;
		for (int d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(Cout[(size_t)c * D + d], f16), w = oracle_elt_to_f32(Cold[(size_t)c * D + d], f16);
			double h = fabs(v) * (f16 ? 0x1p-11 : 0x1p-8) + (f16 ? 0x1p-25 : 0);
			nn += v * v;
			sh += (v - w) * (v - w);
			dn += 2 * fabs(v) * h + h * h;
			ds += 2 * fabs(v - w) * h + h * h;
		}
		bool b1 = !(fabs(cnorm[c] - nn) <= 1e-5 * (1 + nn) + dn), b2 = !(fabs(shift[c] - sh) <= 1e-5 * (1 + sh) + ds);
		res->norm_bad += b1;
		res->shift_bad += b2;
		bad += b1 + b2;
	}
	free(ref), free(am), free(cnt);
	return bad;
}

void oracle_kmeans_segments(long long N, int K, uint64_t seed, int32_t *labels, int32_t *order, int32_t *offsets)
{
	uint64_t st = seed ^ 0x5e6d3a7bull;
	/* which clusters stay empty: about one in 8, and at least one when K >= 2 */
	int *live = malloc(sizeof(int) * (size_t)(K > 0 ? K : 1));
	int nlive = 0;
	int forced = K >= 2 ? (int)(oracle_splitmix64(&st) % (uint64_t)K) : -1;
	for (int c = 0; c < K; c++)
		if (c != forced && oracle_splitmix64(&st) % 8 != 0 && live)
			live[nlive++] = c;
	for (int c = 0; c <= K; c++)
		offsets[c] = 0;
	/* labels, counted per cluster (offsets[c + 1] holds the size of c for now) */
	int32_t *lab = labels ? labels : malloc(sizeof(int32_t) * (size_t)(N > 0 ? N : 1));
	for (long long i = 0; i < N; i++) {
		int c = nlive ? live[oracle_splitmix64(&st) % (uint64_t)nlive] : 0;
		if (lab)
			lab[i] = c;
		offsets[c + 1]++;
	}
	for (int c = 0; c < K; c++)   /* exclusive prefix sum: offsets[c] = first slot of c */
		offsets[c + 1] += offsets[c];
	/* counting sort: ids ascending within each cluster */
	int32_t *next = malloc(sizeof(int32_t) * (size_t)(K > 0 ? K : 1));
	if (lab && next) {
		memcpy(next, offsets, sizeof(int32_t) * (size_t)K);
		for (long long i = 0; i < N; i++)
			order[next[lab[i]]++] = (int32_t)i;
	} else {
		for (long long i = 0; i < N; i++)   /* out of memory: every point in cluster 0's run */
			order[i] = (int32_t)i;
		for (int c = 1; c <= K; c++)
			offsets[c] = (int32_t)N;
	}
	free(next);
	if (!labels)
		free(lab);
	free(live);
}

long long oracle_kmeans_segmented_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                        const int32_t *offsets, const uint16_t *Cold, const uint16_t *Cout, double tol,
                                        KmeansUpdateCheck *res)
{
	memset(res, 0, sizeof *res);
	res->first_bad = -1;
	if (offsets[0] != 0 || offsets[K] != N)
		return -2;
	for (int c = 0; c < K; c++)
		if (offsets[c + 1] < offsets[c])
			return -2;
	for (long long i = 0; i < N; i++)
		if (order[i] < 0 || order[i] >= N)
			return -2;
	size_t n = (size_t)K * (size_t)D + 1;
	double *ref = calloc(n, sizeof(double)), *am = calloc(n, sizeof(double));
	long long *cnt = calloc((size_t)K + 1, sizeof(long long));
	if (!ref || !am || !cnt) {
		free(ref), free(am), free(cnt);
		return -1;
	}
	for (int c = 0; c < K; c++) {
		cnt[c] = offsets[c + 1] - offsets[c];
		for (long long t = offsets[c]; t < offsets[c + 1]; t++) {
			const uint16_t *x = X + (size_t)order[t] * (size_t)D;
			for (int d = 0; d < D; d++) {
				double v = oracle_elt_to_f32(x[d], f16);
				ref[(size_t)c * D + d] += v;
				am[(size_t)c * D + d] += fabs(v);
			}
		}
		for (int d = 0; d < D; d++) {
			size_t e = (size_t)c * D + d;
			if (cnt[c]) {
				ref[e] /= (double)cnt[c];
				am[e] /= (double)cnt[c];
			} else {
				ref[e] = oracle_elt_to_f32(Cold[e], f16);
			}
		}
	}
	long long bad = oracle_kmeans_update_check(Cout, f16, ref, am, cnt, Cold, K, D, tol, res);
	free(ref), free(am), free(cnt);
	return bad;
}

long long oracle_kmeans_segsum_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                     const int32_t *offsets, const int32_t *counts, const float *sums,
                                     KmeansUpdateCheck *res)
{
	memset(res, 0, sizeof *res);
	res->first_bad = -1;
	for (int c = 0; c < K; c++)
		if (offsets[c] < 0 || counts[c] < 0 || (long long)offsets[c] + counts[c] > N)
			return -2;
	double *ref = calloc((size_t)D, sizeof(double)), *am = calloc((size_t)D, sizeof(double));
	if (!ref || !am) {
		free(ref), free(am);
		return -1;
	}
	double num = 0, den = 0;
	long long bad = 0;
	for (int c = 0; c < K && bad >= 0; c++) {
		memset(ref, 0, sizeof(double) * (size_t)D);
		memset(am, 0, sizeof(double) * (size_t)D);
		for (long long t = offsets[c]; t < (long long)offsets[c] + counts[c]; t++) {
			if (order[t] < 0 || order[t] >= N) {
				bad = -2;
				break;
			}
			const uint16_t *x = X + (size_t)order[t] * (size_t)D;
			for (int d = 0; d < D; d++) {
				double v = oracle_elt_to_f32(x[d], f16);
				ref[d] += v;
				am[d] += fabs(v);
			}
		}
		if (bad < 0)
			break;
		res->empty += counts[c] == 0;
		double bound_n = (double)(counts[c] > 1 ? counts[c] : 1) * ldexp(1.0, -24);
		for (int d = 0; d < D; d++) {
			size_t e = (size_t)c * (size_t)D + (size_t)d;
			double out = sums[e], diff = out - ref[d];
			bool ok = isfinite(out) && fabs(diff) <= bound_n * am[d] + 1e-30;
			res->n_nan += !isfinite(out);
			num += diff * diff;
			den += ref[d] * ref[d];
			if (!ok) {
				if (res->first_bad < 0) {
					res->first_bad = (long long)e;
					res->first_bad_out = out;
					res->first_bad_ref = ref[d];
				}
				bad++;
			}
		}
	}
	free(ref), free(am);
	if (bad < 0)
		return bad;
	res->bad = bad;
	res->rel_err = res->n_nan ? NAN : den > 0 ? sqrt(num / den) : 0;
	return bad;
}
