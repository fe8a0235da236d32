/*
 * kmeans.c — the k-means families: the assignment, the divide step, the
 * segmented update and the segment sums of the sorted update (the kernels of
 * kernels/kmeans/). The Lloyd loop that chains them is the app
 * src/app/kmeans.c; these descriptors are what `cake run` needs to check one
 * kernel on its own.
 *
 * Every kernel may be batched: a leading dim B on every tensor (X [B, N, D]
 * and so on), one launch for all batches. The oracles then check the first
 * and the last batch.
 *
 *   kmeans_assign     X, Cent bf16|f16 [B?, N|K, D], Cnorm f32 [B?, K], Out i32 [B?, N].
 *                     Oracle: the float64 argmin of ‖c‖² − 2 x·c on sampled points;
 *                     a label that is not the argmin passes only as a near-tie within
 *                     2^-8 of the score scale (counted: ties_excused).
 *   kmeans_divide     Sums f32, Counts i32, Cent, NewCent, Cnorm, Shift: new
 *                     centroids sums/counts rounded to 16 bits, an empty cluster keeps
 *                     its old centroid bit for bit, ‖c‖² and the squared shift.
 *   kmeans_segmented  X [N, D], Order i32 [N], Offsets i32 [K+1], Cent [K, D] updated in
 *                     place: valid segments are generated (some clusters empty).
 *   kmeans_segsum     X [B, N, D], Order [B, N], Offsets and Counts [B, K], Sums f32
 *                     [B, K, D]: each segment's f32 sum within n·2^-24·Σ|x|.
 *
 * Refusals (before any GPU work): K > N (a cluster that can never receive a
 * point), D not a multiple of 8 (16-byte rows for TMA and wgmma k-steps), and
 * N >= 2^31 where i32 point ids index the points.
 */
#include "family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const DType h16[] = {DT_BF16, DT_F16}, f32[] = {DT_F32}, i32[] = {DT_I32};

/* Leading batch dims of parameter `name` given its unbatched rank. */
static int lead(const Kernel *k, const char *name, int base)
{
	int i = fam_param(k, name);
	return i < 0 ? 0 : k->params[i]->rank - base;
}

/* Every listed parameter has the same number of leading batch dims (0 or 1). */
static bool same_batch(const Kernel *k, const char *const *names, const int *base, int n, char *why, size_t wn)
{
	int bo = lead(k, names[0], base[0]);
	for (int i = 1; i < n; i++)
		if (lead(k, names[i], base[i]) != bo) {
			snprintf(why, wn, "parameters '%s' and '%s' disagree on the leading batch dim", names[0], names[i]);
			return false;
		}
	return true;
}

static bool same_dt(const Kernel *k, const char *a, const char *b, char *why, size_t n)
{
	if (k->params[fam_param(k, a)]->dt == k->params[fam_param(k, b)]->dt)
		return true;
	snprintf(why, n, "parameters '%s' and '%s' must have the same element type", a, b);
	return false;
}

/* Batches of a run: the leading dim of `name` when it is batched, else 1. */
static long long batches(const FamRun *r, const char *name, int base)
{
	FamBuf *b = fam_buf(r, name);
	return b->rank > base ? b->dims[0] : 1;
}

/* ---- the assignment ---- */

static bool assign_fits(const Kernel *k, char *why, size_t n)
{
	static const char *const names[] = {"X", "Cent", "Cnorm", "Out"};
	static const int base[] = {2, 2, 1, 1};
	return fam_need(k, "X", h16, 2, 2, 3, why, n) && fam_need(k, "Cent", h16, 2, 2, 3, why, n) &&
	       fam_need(k, "Cnorm", f32, 1, 1, 2, why, n) && fam_need(k, "Out", i32, 1, 1, 2, why, n) &&
	       same_dt(k, "X", "Cent", why, n) && same_batch(k, names, base, 4, why, n);
}

/* N, K, D of a run (the last two extents of X and Cent). */
static void nkd(const FamRun *r, const char *x, const char *c, long long *N, long long *K, long long *D)
{
	FamBuf *X = fam_buf(r, x), *C = fam_buf(r, c);
	*N = X->dims[X->rank - 2];
	*D = X->dims[X->rank - 1];
	*K = C->dims[C->rank - 2];
}

static bool refuse_kd(long long N, long long K, long long D, char *why, size_t n)
{
	if (K > N) {
		snprintf(why, n, "k-means with K = %lld clusters > N = %lld points: some clusters could never receive a point; use K <= N",
		         K, N);
		return true;
	}
	if (D % 8) {
		snprintf(why, n, "k-means with D = %lld: D must be a multiple of 8 (16-byte rows for TMA and wgmma k-steps); pad the "
		         "points and centroids with zero columns", D);
		return true;
	}
	return false;
}

static bool assign_refuse(const FamRun *r, char *why, size_t n)
{
	long long N, K, D;
	nkd(r, "X", "Cent", &N, &K, &D);
	return refuse_kd(N, K, D, why, n);
}

static int assign_check(FamRun *r, FamReport *rep)
{
	long long N, K, D, B = batches(r, "X", 2);
	nkd(r, "X", "Cent", &N, &K, &D);
	FamBuf *X = fam_buf(r, "X"), *C = fam_buf(r, "Cent"), *Cn = fam_buf(r, "Cnorm"), *Out = fam_buf(r, "Out");
	bool f16 = X->decl->dt == DT_F16;
	int nrows;
	int *rows = fam_sample_rows(N, r->check_rows, r->seed ^ 0x5151u, &nrows);
	long long nbat = B > 1 ? 2 : 1, bat[2] = {0, B - 1}, nbad = 0, nb = 0, ties = 0;
	KmeansAssignCheck c, first = {.first_bad = -1};
	rep->tol = ORACLE_KMEANS_TOL;
	for (long long bi = 0; bi < nbat; bi++) {
		size_t b = (size_t)bat[bi];
		nb = oracle_kmeans_assign((const uint16_t *)X->host + b * (size_t)(N * D), (const uint16_t *)C->host + b * (size_t)(K * D),
		                          f16, (const float *)Cn->host + b * (size_t)K, (int)K, (int)D,
		                          (const int32_t *)Out->host + b * (size_t)N, rows, nrows, rep->tol, r->nthreads, &c);
		if (nb < 0)
			break;
		if (nb && !nbad)
			first = c, first.first_bad += (long long)b * N;   /* flat index into Out */
		nbad += nb;
		rep->rel_err = c.max_tie_gap > rep->rel_err ? c.max_tie_gap : rep->rel_err;
		ties += c.ties_excused;
		rep->n_nan += c.nan_points;
	}
	free(rows);
	if (nb < 0) {
		snprintf(rep->error, sizeof rep->error, "host out of memory for the k-means oracle (K=%lld, D=%lld)", K, D);
		return -1;
	}
	snprintf(rep->oracle, sizeof rep->oracle, "kmeans_assign_f64");
	rep->rows = nrows * nbat;
	fam_field(rep, "ties_excused", ties);
	if (nbad) {
		snprintf(rep->error, sizeof rep->error,
		         "%lld of %lld checked points are not labelled with their float64 nearest centroid (and are no near-tie within "
		         "%.1e); first: point %lld (flat) labelled %d, nearest is %d (score gap %.3e); %lld near-ties excused",
		         nbad, rep->rows, rep->tol, first.first_bad, first.first_bad_out, first.first_bad_ref, first.first_bad_gap, ties);
		rep->first_bad = first.first_bad;
		return 1;
	}
	snprintf(rep->summary, sizeof rep->summary,
	         "float64 k-means assignment oracle on %lld points: every label exact except %lld near-ties excused (score gap <= "
	         "%.1e x scale; largest %.3e)", rep->rows, ties, rep->tol, rep->rel_err);
	return 0;
}

static void assign_rates(const FamRun *r, double *flops, double *bytes)
{
	long long N, K, D, B = batches(r, "X", 2);
	nkd(r, "X", "Cent", &N, &K, &D);
	int es = dtype_size(fam_buf(r, "X")->decl->dt);
	*flops = 2.0 * N * (double)K * D * (double)B;
	*bytes = (double)B * ((double)N * D * es + (double)K * D * es + K * 4.0 + N * 4.0);
}

const Family family_kmeans_assign = {
	.name = "kmeans_assign",
	.module = "kmeans.c",
	.summary = "k-means assignment: labels = argmin_c ‖c‖² − 2 x·c (batched or not)",
	.params = "X: bf16|f16[B?, N, D], Cent: same[B?, K, D], Cnorm: f32[B?, K], Out: i32[B?, N]",
	.tolerance = "labels exact against the float64 argmin, except near-ties within 2^-8 of the score scale (counted)",
	.fits = assign_fits,
	.refuse = assign_refuse,
	.check = assign_check,
	.rates = assign_rates,
};

/* ---- the divide step ---- */

static bool divide_fits(const Kernel *k, char *why, size_t n)
{
	static const char *const names[] = {"Sums", "Counts", "Cent", "NewCent", "Cnorm", "Shift"};
	static const int base[] = {2, 1, 2, 2, 1, 1};
	return fam_need(k, "Sums", f32, 1, 2, 3, why, n) && fam_need(k, "Counts", i32, 1, 1, 2, why, n) &&
	       fam_need(k, "Cent", h16, 2, 2, 3, why, n) && fam_need(k, "NewCent", h16, 2, 2, 3, why, n) &&
	       fam_need(k, "Cnorm", f32, 1, 1, 2, why, n) && fam_need(k, "Shift", f32, 1, 1, 2, why, n) &&
	       same_dt(k, "Cent", "NewCent", why, n) && same_batch(k, names, base, 6, why, n);
}

static int divide_check(FamRun *r, FamReport *rep)
{
	FamBuf *S = fam_buf(r, "Sums"), *Cnt = fam_buf(r, "Counts"), *C = fam_buf(r, "Cent"), *NC = fam_buf(r, "NewCent");
	FamBuf *Cn = fam_buf(r, "Cnorm"), *Sh = fam_buf(r, "Shift");
	long long B = batches(r, "Sums", 2), K = S->dims[S->rank - 2], D = S->dims[S->rank - 1];
	long long nbat = B > 1 ? 2 : 1, bat[2] = {0, B - 1}, nbad = 0, nb = 0, empty = 0;
	KmeansUpdateCheck c, first = {.first_bad = -1};
	rep->tol = ORACLE_KMEANS_TOL;
	for (long long bi = 0; bi < nbat; bi++) {
		size_t b = (size_t)bat[bi], kd = b * (size_t)(K * D), kk = b * (size_t)K;
		nb = oracle_kmeans_divide_check((const float *)S->host + kd, (const int32_t *)Cnt->host + kk,
		                                (const uint16_t *)C->host + kd, C->decl->dt == DT_F16, (int)K, (int)D,
		                                (const uint16_t *)NC->host + kd, (const float *)Cn->host + kk,
		                                (const float *)Sh->host + kk, rep->tol, &c);
		if (nb < 0)
			break;
		if (nb && !nbad)
			first = c, first.first_bad += (long long)kd;
		nbad += nb;
		rep->rel_err = c.rel_err > rep->rel_err ? c.rel_err : rep->rel_err;
		rep->n_nan += c.n_nan;
		empty += c.empty;
	}
	if (nb < 0) {
		snprintf(rep->error, sizeof rep->error, "host out of memory for the k-means divide oracle (K=%lld, D=%lld)", K, D);
		return -1;
	}
	snprintf(rep->oracle, sizeof rep->oracle, "kmeans_divide_f64");
	rep->rows = K * nbat;
	fam_field(rep, "empty_clusters", empty);
	if (nbad) {
		snprintf(rep->error, sizeof rep->error,
		         "k-means divide: %lld bad centroid elements (%lld NaN, %lld changed in empty clusters; first at flat index %lld: "
		         "got %g, expected %g), %lld bad norms, %lld bad shifts",
		         first.bad, first.n_nan, first.empty_changed, first.first_bad, first.first_bad_out, first.first_bad_ref,
		         first.norm_bad, first.shift_bad);
		rep->first_bad = first.first_bad;
		return 1;
	}
	snprintf(rep->summary, sizeof rep->summary,
	         "float64 k-means divide oracle on %lld centroids: rel err %.3e (tolerance %.1e), %lld empty clusters kept bit for "
	         "bit, norms and shifts match", rep->rows, rep->rel_err, rep->tol, empty);
	return 0;
}

static void divide_rates(const FamRun *r, double *flops, double *bytes)
{
	FamBuf *S = fam_buf(r, "Sums");
	double B = (double)batches(r, "Sums", 2), K = (double)S->dims[S->rank - 2], D = (double)S->dims[S->rank - 1];
	int es = dtype_size(fam_buf(r, "Cent")->decl->dt);
	*flops = 4 * B * K * D;
	*bytes = B * (K * D * (4.0 + 2 * es) + K * 12.0);
}

const Family family_kmeans_divide = {
	.name = "kmeans_divide",
	.module = "kmeans.c",
	.summary = "k-means divide: new centroids sums/counts (empty clusters keep theirs), their ‖c‖² and squared shifts",
	.params = "Sums: f32[B?, K, D], Counts: i32[B?, K], Cent, NewCent: bf16|f16[B?, K, D], Cnorm, Shift: f32[B?, K]",
	.tolerance = "element error <= 2^-8 (|ref| + mean|x| 2^-10); empty clusters bit for bit; norms and shifts relative 1e-5",
	.fits = divide_fits,
	.check = divide_check,
	.rates = divide_rates,
};

/* ---- the segmented update (Cent updated in place) ---- */

static const char *const segmented_inout[] = {"Cent", NULL};

static bool segmented_fits(const Kernel *k, char *why, size_t n)
{
	return fam_need(k, "X", h16, 2, 2, 2, why, n) && fam_need(k, "Order", i32, 1, 1, 1, why, n) &&
	       fam_need(k, "Offsets", i32, 1, 1, 1, why, n) && fam_need(k, "Cent", h16, 2, 2, 2, why, n) &&
	       same_dt(k, "X", "Cent", why, n);
}

static bool segmented_refuse(const FamRun *r, char *why, size_t n)
{
	long long N = fam_buf(r, "X")->dims[0], K = fam_buf(r, "Cent")->dims[0];
	if (N > 0x7fffffffLL) {
		snprintf(why, n, "segmented k-means with N = %lld points: Order and Offsets hold i32 point ids, so N must be below 2^31",
		         N);
		return true;
	}
	if (fam_buf(r, "Offsets")->dims[0] != K + 1) {
		snprintf(why, n, "segmented k-means: Offsets holds %lld entries; it needs K + 1 = %lld (segment starts and the end)",
		         fam_buf(r, "Offsets")->dims[0], K + 1);
		return true;
	}
	return false;
}

static bool segmented_inputs(FamRun *r, char *err, size_t n)
{
	FamBuf *C = fam_buf(r, "Cent");
	oracle_kmeans_segments(fam_buf(r, "X")->dims[0], (int)C->dims[0], r->seed ^ 0x5e9u, NULL, fam_buf(r, "Order")->host,
	                       fam_buf(r, "Offsets")->host);
	r->state = malloc(C->bytes);   /* the centroids before the launch, for the oracle */
	if (!r->state) {
		snprintf(err, n, "host out of memory for the old centroids (%zu bytes)", C->bytes);
		return false;
	}
	memcpy(r->state, C->host, C->bytes);
	return true;
}

static int segmented_check(FamRun *r, FamReport *rep)
{
	FamBuf *X = fam_buf(r, "X"), *C = fam_buf(r, "Cent");
	long long N = X->dims[0], D = X->dims[1], K = C->dims[0];
	KmeansUpdateCheck c;
	rep->tol = ORACLE_KMEANS_TOL;
	long long nbad = oracle_kmeans_segmented_check(X->host, X->decl->dt == DT_F16, N, (int)D, (int)K, fam_buf(r, "Order")->host,
	                                               fam_buf(r, "Offsets")->host, r->state, C->host, rep->tol, &c);
	if (nbad < 0) {
		snprintf(rep->error, sizeof rep->error, nbad == -1 ? "host out of memory for the segmented k-means oracle (K=%lld, D=%lld)"
		         : "segmented k-means: the generated segments are malformed (K=%lld, D=%lld)", K, D);
		return -1;
	}
	snprintf(rep->oracle, sizeof rep->oracle, "kmeans_segmented_f64");
	rep->rows = K;
	rep->rel_err = c.rel_err;
	rep->n_nan = c.n_nan;
	fam_field(rep, "empty_clusters", c.empty);
	if (nbad) {
		snprintf(rep->error, sizeof rep->error,
		         "segmented k-means update: %lld bad centroid elements (%lld NaN, %lld changed in empty clusters; first at flat "
		         "index %lld: got %g, expected %g)", c.bad, c.n_nan, c.empty_changed, c.first_bad, c.first_bad_out,
		         c.first_bad_ref);
		rep->first_bad = c.first_bad;
		return 1;
	}
	snprintf(rep->summary, sizeof rep->summary,
	         "float64 segmented k-means update oracle on %lld centroids (the mean of each segment of Order): rel err %.3e "
	         "(tolerance %.1e), %lld empty clusters kept bit for bit", K, c.rel_err, rep->tol, c.empty);
	return 0;
}

static void free_state(FamRun *r)
{
	free(r->state);
	r->state = NULL;
}

static void segmented_rates(const FamRun *r, double *flops, double *bytes)
{
	FamBuf *X = fam_buf(r, "X"), *C = fam_buf(r, "Cent");
	double N = (double)X->dims[0], D = (double)X->dims[1], K = (double)C->dims[0];
	int es = dtype_size(X->decl->dt);
	*flops = N * D;
	*bytes = N * D * es + N * 4 + (K + 1) * 4 + K * D * es;
}

const Family family_kmeans_segmented = {
	.name = "kmeans_segmented",
	.module = "kmeans.c",
	.summary = "segmented k-means update: each centroid the mean of its segment of Order (empty: unchanged)",
	.params = "X: bf16|f16[N, D], Order: i32[N], Offsets: i32[K + 1], Cent: same as X [K, D] (in place)",
	.tolerance = "element error <= 2^-8 (|ref| + mean|x| 2^-10) against the float64 mean; empty clusters bit for bit",
	.inout = segmented_inout,
	.fits = segmented_fits,
	.refuse = segmented_refuse,
	.inputs = segmented_inputs,
	.check = segmented_check,
	.release = free_state,
	.rates = segmented_rates,
};

/* ---- segment sums (the sorted update) ---- */

static bool segsum_fits(const Kernel *k, char *why, size_t n)
{
	return fam_need(k, "X", h16, 2, 3, 3, why, n) && fam_need(k, "Order", i32, 1, 2, 2, why, n) &&
	       fam_need(k, "Offsets", i32, 1, 2, 2, why, n) && fam_need(k, "Counts", i32, 1, 2, 2, why, n) &&
	       fam_need(k, "Sums", f32, 1, 3, 3, why, n);
}

static bool segsum_refuse(const FamRun *r, char *why, size_t n)
{
	if (fam_buf(r, "X")->dims[1] > 0x7fffffffLL) {
		snprintf(why, n, "segment sums with N = %lld points: Order holds i32 point ids, so N must be below 2^31",
		         fam_buf(r, "X")->dims[1]);
		return true;
	}
	return false;
}

static bool segsum_inputs(FamRun *r, char *err, size_t n)
{
	FamBuf *X = fam_buf(r, "X"), *S = fam_buf(r, "Sums");
	long long B = X->dims[0], N = X->dims[1];
	int K = (int)S->dims[1];
	int32_t *tmp = malloc(sizeof(int32_t) * (size_t)(K + 1));
	if (!tmp) {
		snprintf(err, n, "host out of memory for the segments (K=%d)", K);
		return false;
	}
	for (long long b = 0; b < B; b++) {
		int32_t *off = (int32_t *)fam_buf(r, "Offsets")->host + b * K, *cnt = (int32_t *)fam_buf(r, "Counts")->host + b * K;
		oracle_kmeans_segments(N, K, (r->seed ^ 0x5e9u) + (uint64_t)b, NULL, (int32_t *)fam_buf(r, "Order")->host + b * N, tmp);
		for (int c = 0; c < K; c++)
			off[c] = tmp[c], cnt[c] = tmp[c + 1] - tmp[c];
	}
	free(tmp);
	return true;
}

static int segsum_check(FamRun *r, FamReport *rep)
{
	FamBuf *X = fam_buf(r, "X"), *S = fam_buf(r, "Sums");
	long long B = X->dims[0], N = X->dims[1], D = X->dims[2], K = S->dims[1];
	long long nbat = B > 1 ? 2 : 1, bat[2] = {0, B - 1}, nbad = 0, nb = 0, empty = 0;
	KmeansUpdateCheck c, first = {.first_bad = -1};
	rep->tol = ldexp(1.0, -24);   /* per point of the segment, times Σ|x| */
	for (long long bi = 0; bi < nbat; bi++) {
		size_t b = (size_t)bat[bi];
		nb = oracle_kmeans_segsum_check((const uint16_t *)X->host + b * (size_t)(N * D), X->decl->dt == DT_F16, N, (int)D, (int)K,
		                                (const int32_t *)fam_buf(r, "Order")->host + b * (size_t)N,
		                                (const int32_t *)fam_buf(r, "Offsets")->host + b * (size_t)K,
		                                (const int32_t *)fam_buf(r, "Counts")->host + b * (size_t)K,
		                                (const float *)S->host + b * (size_t)(K * D), &c);
		if (nb < 0)
			break;
		if (nb && !nbad)
			first = c, first.first_bad += (long long)(b * (size_t)(K * D));
		nbad += nb;
		rep->rel_err = c.rel_err > rep->rel_err || isnan(c.rel_err) ? c.rel_err : rep->rel_err;
		rep->n_nan += c.n_nan;
		empty += c.empty;
	}
	if (nb < 0) {
		snprintf(rep->error, sizeof rep->error, nb == -1 ? "host out of memory for the segment-sum oracle (K=%lld, D=%lld)"
		         : "segment sums: the generated segments are malformed (K=%lld, D=%lld)", K, D);
		return -1;
	}
	snprintf(rep->oracle, sizeof rep->oracle, "kmeans_segsum_f64");
	rep->rows = K * nbat;
	fam_field(rep, "empty_clusters", empty);
	if (nbad) {
		snprintf(rep->error, sizeof rep->error,
		         "segment sums: %lld bad elements (%lld NaN; first at flat index %lld: got %g, expected %g)", nbad, first.n_nan,
		         first.first_bad, first.first_bad_out, first.first_bad_ref);
		rep->first_bad = first.first_bad;
		return 1;
	}
	snprintf(rep->summary, sizeof rep->summary,
	         "float64 segment-sum oracle on %lld clusters (the sum of each segment of Order, within n x 2^-24 x sum|x| of an "
	         "f32 running sum): rel err %.3e, %lld empty segments summed to 0", rep->rows, rep->rel_err, empty);
	return 0;
}

static void segsum_rates(const FamRun *r, double *flops, double *bytes)
{
	FamBuf *X = fam_buf(r, "X"), *S = fam_buf(r, "Sums");
	double B = (double)X->dims[0], N = (double)X->dims[1], D = (double)X->dims[2], K = (double)S->dims[1];
	*flops = B * N * D;
	*bytes = B * (N * D * dtype_size(X->decl->dt) + N * 4 + K * 8 + K * D * 4);
}

const Family family_kmeans_segsum = {
	.name = "kmeans_segsum",
	.module = "kmeans.c",
	.summary = "segment sums of the sorted k-means update: Sums[b, c] = Σ X[b, Order[b, i]] over cluster c's segment",
	.params = "X: bf16|f16[B, N, D], Order: i32[B, N], Offsets, Counts: i32[B, K], Sums: f32[B, K, D]",
	.tolerance = "each element within n·2^-24·Σ|x| (an f32 running sum's rigorous bound) of the float64 sum; empty segments 0",
	.fits = segsum_fits,
	.refuse = segsum_refuse,
	.inputs = segsum_inputs,
	.check = segsum_check,
	.rates = segsum_rates,
};
