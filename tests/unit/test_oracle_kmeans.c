/*
 * test_oracle_kmeans.c — the float64 k-means oracles (CPU only).
 *
 * f16 conversion at its edges (max, overflow, subnormals, NaN); the
 * assignment check accepting exact argmin labels in both score forms
 * (‖x−c‖² and cnorm − 2x·c), catching a wrong or out-of-range label,
 * excusing (and counting) a tie between two identical centroids while still
 * refusing a label whose centroid is clearly farther, reporting NaN points
 * instead of checking them, and giving the same answer on several threads;
 * the update oracle keeping empty clusters bit for bit, and its check
 * catching a changed empty cluster, a wrong element and a NaN; the divide
 * check (means, empty clusters, norms and shifts) on its own; the segmented
 * update's inputs (a valid grouping by label with empty clusters) and its
 * check (segment means, empty clusters kept, wrong members, NaN, malformed
 * segments refused).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "family/oracle.h"

enum { N = 96, K = 12, D = 16 };

static void test_f16_edges(void **state)
{
	(void)state;
	assert_int_equal(oracle_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(oracle_f32_to_f16(-2.0f), 0xc000);
	assert_int_equal(oracle_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(oracle_f32_to_f16(65520.0f), 0x7c00);          /* rounds up to inf */
	assert_int_equal(oracle_f32_to_f16(0x1p-24f), 0x0001);          /* smallest subnormal */
	assert_int_equal(oracle_f32_to_f16(0x1p-25f), 0x0000);          /* tie to even: zero */
	assert_int_equal(oracle_f32_to_f16(0x1.8p-24f), 0x0002);        /* tie to even: up */
	assert_int_equal(oracle_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);   /* halfway, even stays */
	assert_int_equal(oracle_f32_to_f16(1.0f + 0x1.8p-10f), 0x3c02); /* halfway, odd rounds up */
	assert_true(isnan(oracle_f16_to_f32(oracle_f32_to_f16(NAN))));
	for (uint32_t h = 0; h < 0x7c00; h += 7) {                     /* every finite class round-trips */
		assert_int_equal(oracle_f32_to_f16(oracle_f16_to_f32((uint16_t)h)), h);
		assert_int_equal(oracle_f32_to_elt(oracle_elt_to_f32((uint16_t)h, true), true), h);
	}
	assert_true(oracle_elt_to_f32(0x3f80, false) == 1.0f);           /* bf16 path */
}

/* Labels by brute force over ‖x−c‖² (strict <: ties to the lower index). */
static void brute_labels(const uint16_t *X, const uint16_t *C, int32_t *lab, bool f16)
{
	for (int i = 0; i < N; i++) {
		double best = INFINITY;
		for (int j = 0; j < K; j++) {
			double dist = 0;
			for (int d = 0; d < D; d++) {
				double e = (double)oracle_elt_to_f32(X[i * D + d], f16) - oracle_elt_to_f32(C[j * D + d], f16);
				dist += e * e;
			}
			if (dist < best)
				best = dist, lab[i] = j;
		}
	}
}

/* Random points and centroids, their norms and brute-force labels. */
static void setup(uint16_t *X, uint16_t *C, float *cn, int32_t *lab, int *rows, bool f16)
{
	oracle_fill_bf16(X, (size_t)N * D, 11);
	oracle_fill_bf16(C, (size_t)K * D, 12);
	if (f16)
		for (int i = 0; i < N * D || i < K * D; i++) {
			if (i < N * D)
				X[i] = oracle_f32_to_f16(oracle_bf16_to_f32(X[i]));
			if (i < K * D)
				C[i] = oracle_f32_to_f16(oracle_bf16_to_f32(C[i]));
		}
	for (int j = 0; j < K; j++) {
		double s = 0;
		for (int d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(C[j * D + d], f16);
			s += v * v;
		}
		cn[j] = (float)s;
	}
	for (int i = 0; i < N; i++)
		rows[i] = i;
	brute_labels(X, C, lab, f16);
}

static void test_assign_exact_and_wrong(void **state)
{
	(void)state;
	static uint16_t X[N * D], C[K * D];
	static float cn[K];
	static int32_t lab[N];
	static int rows[N];
	for (int f16 = 0; f16 < 2; f16++) {
		setup(X, C, cn, lab, rows, f16);
		KmeansAssignCheck r;
		assert_int_equal(oracle_kmeans_assign(X, C, f16, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 1, &r), 0);
		assert_int_equal(r.checked, N);
		assert_int_equal(r.first_bad, -1);
		assert_int_equal(oracle_kmeans_assign(X, C, f16, cn, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 3, &r), 0);
		/* the farthest centroid of point 5 is never within tolerance */
		int far = 0;
		double worst = -1;
		for (int j = 0; j < K; j++) {
			double dist = 0;
			for (int d = 0; d < D; d++) {
				double e = (double)oracle_elt_to_f32(X[5 * D + d], f16) - oracle_elt_to_f32(C[j * D + d], f16);
				dist += e * e;
			}
			if (dist > worst)
				worst = dist, far = j;
		}
		int32_t keep = lab[5];
		lab[5] = far;
		assert_int_equal(oracle_kmeans_assign(X, C, f16, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 4, &r), 1);
		assert_int_equal(r.first_bad, 5);
		assert_int_equal(r.first_bad_out, far);
		assert_int_equal(r.first_bad_ref, keep);
		assert_true(r.first_bad_gap > 0);
		lab[5] = -1;   /* out of range */
		assert_int_equal(oracle_kmeans_assign(X, C, f16, cn, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 1, &r), 1);
		assert_true(isinf(r.first_bad_gap));
		lab[5] = keep;
	}
}

static void test_assign_ties_and_nan(void **state)
{
	(void)state;
	static uint16_t X[N * D], C[K * D];
	static float cn[K];
	static int32_t lab[N];
	static int rows[N];
	setup(X, C, cn, lab, rows, false);
	/* centroid T becomes a copy of the centroid of point 0: an exact tie */
	int c0 = lab[0], T = lab[0] == 9 ? 10 : 9, lo = c0 < T ? c0 : T, hi = c0 < T ? T : c0;
	memcpy(&C[T * D], &C[c0 * D], sizeof(uint16_t) * D);
	cn[T] = cn[c0];
	brute_labels(X, C, lab, false);   /* ties go to the lower index */
	assert_int_equal(lab[0], lo);
	KmeansAssignCheck r;
	assert_int_equal(oracle_kmeans_assign(X, C, false, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 2, &r), 0);
	assert_int_equal(r.ties_excused, 0);
	lab[0] = hi;                  /* the higher index of the tie: excused and counted */
	assert_int_equal(oracle_kmeans_assign(X, C, false, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 2, &r), 0);
	assert_int_equal(r.ties_excused, 1);
	assert_true(r.max_tie_gap == 0);
	/* with no tolerance a non-argmin label of an exact tie is still a tie (gap 0 <= 0) */
	assert_int_equal(oracle_kmeans_assign(X, C, false, NULL, K, D, lab, rows, N, 0, 1, &r), 0);
	assert_int_equal(r.ties_excused, 1);
	lab[0] = lo;
	/* a NaN coordinate: the point is reported, not checked */
	X[7 * D + 3] = 0x7fc0;
	lab[7] = 0;
	assert_int_equal(oracle_kmeans_assign(X, C, false, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 1, &r), 0);
	assert_int_equal(r.nan_points, 1);
	assert_int_equal(r.checked, N - 1);
	/* a NaN centroid is never nearest, and is counted */
	C[2 * D] = 0x7fc0;
	KmeansAssignCheck r2;
	oracle_kmeans_assign(X, C, false, NULL, K, D, lab, rows, N, ORACLE_KMEANS_TOL, 1, &r2);
	assert_int_equal(r2.nan_centroids, 1);
}

static void test_update(void **state)
{
	(void)state;
	static uint16_t X[N * D], C[K * D], out[K * D];
	static float cn[K];
	static int32_t lab[N];
	static int rows[N];
	static double ref[K * D], am[K * D];
	static long long cnt[K];
	setup(X, C, cn, lab, rows, false);
	for (int i = 0; i < N; i++)   /* cluster 3 empty */
		if (lab[i] == 3)
			lab[i] = 4;
	assert_int_equal(oracle_kmeans_update(X, false, lab, N, D, K, C, ref, cnt, am), 0);
	assert_int_equal(cnt[3], 0);
	long long tot = 0;
	for (int c = 0; c < K; c++)
		tot += cnt[c];
	assert_int_equal(tot, N);
	/* the mean of cluster 4, by hand, for one element */
	double s = 0;
	for (int i = 0; i < N; i++)
		if (lab[i] == 4)
			s += oracle_bf16_to_f32(X[i * D + 1]);
	assert_true(fabs(ref[4 * D + 1] - s / (double)cnt[4]) < 1e-12);
	for (int e = 0; e < K * D; e++)
		out[e] = oracle_f32_to_bf16((float)ref[e]);
	KmeansUpdateCheck u;
	assert_int_equal(oracle_kmeans_update_check(out, false, ref, am, cnt, C, K, D, ORACLE_KMEANS_TOL, &u), 0);
	assert_int_equal(u.empty, 1);
	assert_true(u.rel_err < ORACLE_KMEANS_TOL);
	for (int d = 0; d < D; d++)   /* the empty cluster kept its centroid, bit for bit */
		assert_int_equal(out[3 * D + d], C[3 * D + d]);
	out[3 * D + 2] ^= 1;          /* an empty cluster changed */
	assert_int_equal(oracle_kmeans_update_check(out, false, ref, am, cnt, C, K, D, ORACLE_KMEANS_TOL, &u), 1);
	assert_int_equal(u.empty_changed, 1);
	assert_int_equal(u.first_bad, 3 * D + 2);
	out[3 * D + 2] ^= 1;
	out[5 * D + 7] = oracle_f32_to_bf16((float)(ref[5 * D + 7] * 1.1 + 0.05));   /* wrong by 10 % */
	assert_int_equal(oracle_kmeans_update_check(out, false, ref, am, cnt, C, K, D, ORACLE_KMEANS_TOL, &u), 1);
	assert_int_equal(u.first_bad, 5 * D + 7);
	out[6 * D] = 0x7fc0;          /* NaN */
	assert_int_equal(oracle_kmeans_update_check(out, false, ref, am, cnt, C, K, D, ORACLE_KMEANS_TOL, &u), 2);
	assert_int_equal(u.n_nan, 1);
	assert_true(isnan(u.rel_err));
	lab[0] = K;                   /* a label out of range is counted and ignored */
	assert_int_equal(oracle_kmeans_update(X, false, lab, N, D, K, C, ref, cnt, NULL), 1);
}

/* The divide step alone, computed here the way the kernel does (f32, then rounded). */
static void test_divide(void **state)
{
	(void)state;
	static float sums[K * D], cn[K], sh[K];
	static int32_t cnt[K];
	static uint16_t Cold[K * D], out[K * D];
	oracle_fill_bf16(Cold, (size_t)K * D, 21);
	uint64_t st = 5;
	for (int c = 0; c < K; c++)
		cnt[c] = c % 4 == 1 ? 0 : (int32_t)(oracle_splitmix64(&st) % 50) + 1;   /* clusters 1, 5, 9 empty */
	for (int e = 0; e < K * D; e++)
		sums[e] = (float)((double)(oracle_splitmix64(&st) >> 40) / (double)(1u << 24) * 8.0 - 4.0);
	for (int c = 0; c < K; c++) {
		float inv = 1.0f / (float)(cnt[c] > 1 ? cnt[c] : 1);
		double nn = 0, s2 = 0;
		for (int d = 0; d < D; d++) {
			int e = c * D + d;
			out[e] = cnt[c] > 0 ? oracle_f32_to_bf16(sums[e] * inv) : Cold[e];
			double v = oracle_bf16_to_f32(out[e]), w = oracle_bf16_to_f32(Cold[e]);
			nn += v * v;
			s2 += (v - w) * (v - w);
		}
		cn[c] = (float)nn;
		sh[c] = (float)s2;
	}
	KmeansUpdateCheck u;
	assert_int_equal(oracle_kmeans_divide_check(sums, cnt, Cold, false, K, D, out, cn, sh, ORACLE_KMEANS_TOL, &u), 0);
	assert_int_equal(u.empty, 3);
	cn[4] *= 1.01f;               /* a norm that does not describe the centroid written */
	assert_int_equal(oracle_kmeans_divide_check(sums, cnt, Cold, false, K, D, out, cn, sh, ORACLE_KMEANS_TOL, &u), 1);
	assert_int_equal(u.norm_bad, 1);
	cn[4] /= 1.01f;
	sh[2] += 0.5f;
	assert_int_equal(oracle_kmeans_divide_check(sums, cnt, Cold, false, K, D, out, cn, sh, ORACLE_KMEANS_TOL, &u), 1);
	assert_int_equal(u.shift_bad, 1);
	sh[2] -= 0.5f;
	out[5 * D + 1] ^= 0x0001;     /* an empty cluster changed (its norm and shift change too) */
	assert_true(oracle_kmeans_divide_check(sums, cnt, Cold, false, K, D, out, cn, sh, ORACLE_KMEANS_TOL, &u) >= 1);
	assert_int_equal(u.empty_changed, 1);
	out[5 * D + 1] ^= 0x0001;
	out[0] = oracle_f32_to_bf16(oracle_bf16_to_f32(out[0]) * 1.5f);   /* wrong mean */
	assert_true(oracle_kmeans_divide_check(sums, cnt, Cold, false, K, D, out, cn, sh, ORACLE_KMEANS_TOL, &u) >= 1);
	assert_int_equal(u.first_bad, 0);
}

/* Segmented update inputs: a valid grouping (a permutation, grouped by label,
 * ids ascending inside a cluster, offsets an exclusive prefix sum ending at N)
 * with at least one empty cluster; reproducible from the seed. */
static void test_segments(void **state)
{
	(void)state;
	static int32_t lab[N], order[N], off[K + 1], order2[N], off2[K + 1];
	static bool seen[N];
	for (uint64_t seed = 1; seed <= 20; seed++) {
		oracle_kmeans_segments(N, K, seed, lab, order, off);
		assert_int_equal(off[0], 0);
		assert_int_equal(off[K], N);
		int empty = 0;
		memset(seen, 0, sizeof seen);
		for (int c = 0; c < K; c++) {
			assert_true(off[c + 1] >= off[c]);
			empty += off[c + 1] == off[c];
			for (int t = off[c]; t < off[c + 1]; t++) {
				assert_true(order[t] >= 0 && order[t] < N);
				assert_false(seen[order[t]]);
				seen[order[t]] = true;
				assert_int_equal(lab[order[t]], c);          /* grouped by label */
				if (t > off[c])
					assert_true(order[t] > order[t - 1]);    /* ascending ids in a cluster */
			}
		}
		assert_true(empty >= 1);
		assert_true(empty < K);
		oracle_kmeans_segments(N, K, seed, NULL, order2, off2);   /* same seed, same grouping */
		assert_memory_equal(order, order2, sizeof order);
		assert_memory_equal(off, off2, sizeof off);
	}
	/* one cluster: everything in it */
	int32_t o1[N], f1[2];
	oracle_kmeans_segments(N, 1, 3, NULL, o1, f1);
	assert_int_equal(f1[0], 0);
	assert_int_equal(f1[1], N);
}

/* The segmented update computed here the way the kernel does it (f32 sums in
 * segment order, one division, rounded to the 16-bit type; empty segments keep
 * the old centroid), then the oracle's verdicts on good and broken outputs. */
static void segmented_kernel(const uint16_t *X, bool f16, const int32_t *order, const int32_t *off, const uint16_t *Cold,
                             uint16_t *out)
{
	for (int c = 0; c < K; c++)
		for (int d = 0; d < D; d++) {
			if (off[c + 1] == off[c]) {
				out[c * D + d] = Cold[c * D + d];
				continue;
			}
			float acc = 0;
			for (int t = off[c]; t < off[c + 1]; t++)
				acc += oracle_elt_to_f32(X[order[t] * D + d], f16);
			out[c * D + d] = oracle_f32_to_elt(acc / (float)(off[c + 1] - off[c]), f16);
		}
}

static void test_segmented_check(void **state)
{
	(void)state;
	static uint16_t X[N * D], Cold[K * D], out[K * D], C[K * D];
	static int32_t order[N], off[K + 1], lab[N];
	static float cn[K];
	static int rows[N];
	for (int f16 = 0; f16 < 2; f16++) {
		setup(X, C, cn, lab, rows, f16);
		oracle_fill_bf16(Cold, (size_t)K * D, 31);
		if (f16)
			for (int e = 0; e < K * D; e++)
				Cold[e] = oracle_f32_to_f16(oracle_bf16_to_f32(Cold[e]));
		oracle_kmeans_segments(N, K, 7, NULL, order, off);
		int empty = 0, e0 = -1, full = -1;
		for (int c = 0; c < K; c++) {
			if (off[c + 1] == off[c])
				empty++, e0 = e0 < 0 ? c : e0;
			else if (full < 0)
				full = c;
		}
		assert_true(empty >= 1 && full >= 0);
		segmented_kernel(X, f16, order, off, Cold, out);
		KmeansUpdateCheck u;
		assert_int_equal(oracle_kmeans_segmented_check(X, f16, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), 0);
		assert_int_equal(u.empty, empty);
		assert_true(u.rel_err < ORACLE_KMEANS_TOL);
		/* the segment oracle agrees with the label oracle on the same grouping */
		static double ref[K * D], am[K * D];
		static long long cnt[K];
		for (int c = 0; c < K; c++)
			for (int t = off[c]; t < off[c + 1]; t++)
				lab[order[t]] = c;
		assert_int_equal(oracle_kmeans_update(X, f16, lab, N, D, K, Cold, ref, cnt, am), 0);
		KmeansUpdateCheck u2;
		assert_int_equal(oracle_kmeans_update_check(out, f16, ref, am, cnt, Cold, K, D, ORACLE_KMEANS_TOL, &u2), 0);
		/* an empty cluster overwritten (even with a plausible value) is caught */
		out[e0 * D + 3] ^= 0x0001;
		assert_int_equal(oracle_kmeans_segmented_check(X, f16, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), 1);
		assert_int_equal(u.empty_changed, 1);
		assert_int_equal(u.first_bad, e0 * D + 3);
		out[e0 * D + 3] ^= 0x0001;
		/* a mean over the wrong members (one point missing) is caught */
		uint16_t keep = out[full * D + 5];
		float wrong = 0;
		for (int t = off[full]; t < off[full + 1] - 1; t++)
			wrong += oracle_elt_to_f32(X[order[t] * D + 5], f16);
		out[full * D + 5] = oracle_f32_to_elt(wrong / (float)(off[full + 1] - off[full]) + 0.25f, f16);
		assert_int_equal(oracle_kmeans_segmented_check(X, f16, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), 1);
		assert_int_equal(u.first_bad, full * D + 5);
		out[full * D + 5] = keep;
		out[full * D] = f16 ? 0x7e00 : 0x7fc0;   /* NaN */
		assert_int_equal(oracle_kmeans_segmented_check(X, f16, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), 1);
		assert_int_equal(u.n_nan, 1);
		assert_true(isnan(u.rel_err));
	}
	/* malformed segments are refused, not checked */
	KmeansUpdateCheck u;
	off[K] = N - 1;
	assert_int_equal(oracle_kmeans_segmented_check(X, false, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), -2);
	off[K] = N;
	int32_t keep = order[0];
	order[0] = N;
	assert_int_equal(oracle_kmeans_segmented_check(X, false, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), -2);
	order[0] = keep;
	int32_t a = off[1], b = off[2];
	off[1] = b + 1, off[2] = b;   /* decreasing */
	assert_int_equal(oracle_kmeans_segmented_check(X, false, N, D, K, order, off, Cold, out, ORACLE_KMEANS_TOL, &u), -2);
	off[1] = a;
}

/* The segment-sum oracle (kmeans_segsum): a float running sum in segment order
 * passes (the bound is rigorous for it), a sum missing one point, a nonzero
 * empty segment, a NaN and malformed segments are caught. */
static void test_segsum_check(void **state)
{
	(void)state;
	static uint16_t X[N * D], C[K * D];
	static int32_t order[N], off[K + 1], lab[N], start[K], cnt[K];
	static float cn[K], sums[K * D];
	static int rows[N];
	for (int f16 = 0; f16 < 2; f16++) {
		setup(X, C, cn, lab, rows, f16);
		oracle_kmeans_segments(N, K, 11, NULL, order, off);
		int empty = 0, e0 = -1, full = -1;
		for (int c = 0; c < K; c++) {
			start[c] = off[c], cnt[c] = off[c + 1] - off[c];
			if (!cnt[c])
				empty++, e0 = e0 < 0 ? c : e0;
			else if (full < 0 || cnt[c] > cnt[full])
				full = c;
			for (int d = 0; d < D; d++) {   /* what the kernel does: f32, in segment order */
				float a = 0;
				for (int t = start[c]; t < start[c] + cnt[c]; t++)
					a += oracle_elt_to_f32(X[order[t] * D + d], f16);
				sums[c * D + d] = a;
			}
		}
		assert_true(empty >= 1 && full >= 0 && cnt[full] >= 2);
		KmeansUpdateCheck u;
		assert_int_equal(oracle_kmeans_segsum_check(X, f16, N, D, K, order, start, cnt, sums, &u), 0);
		assert_int_equal(u.empty, empty);
		assert_true(u.rel_err < 1e-6);
		float keep = sums[full * D + 2];
		sums[full * D + 2] -= oracle_elt_to_f32(X[order[start[full]] * D + 2], f16);   /* one member missing */
		assert_int_equal(oracle_kmeans_segsum_check(X, f16, N, D, K, order, start, cnt, sums, &u), 1);
		assert_int_equal(u.first_bad, full * D + 2);
		sums[full * D + 2] = keep;
		sums[e0 * D] = 1e-20f;   /* an empty segment must sum to exactly 0 */
		assert_int_equal(oracle_kmeans_segsum_check(X, f16, N, D, K, order, start, cnt, sums, &u), 1);
		sums[e0 * D] = 0;
		keep = sums[full * D];
		sums[full * D] = NAN;
		assert_int_equal(oracle_kmeans_segsum_check(X, f16, N, D, K, order, start, cnt, sums, &u), 1);
		assert_int_equal(u.n_nan, 1);
		sums[full * D] = keep;
	}
	KmeansUpdateCheck u;
	cnt[0] = N + 1;   /* a segment past the end */
	assert_int_equal(oracle_kmeans_segsum_check(X, false, N, D, K, order, start, cnt, sums, &u), -2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_edges),
		cmocka_unit_test(test_assign_exact_and_wrong),
		cmocka_unit_test(test_assign_ties_and_nan),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_divide),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_segmented_check),
		cmocka_unit_test(test_segsum_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
