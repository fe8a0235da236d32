/*
 * oracle.h — float64 CPU references and the numeric helpers of the kernel
 * families (src/family/oracle.c).
 *
 * The family modules (gemm.c, kmeans.c, ...) build their checks from these;
 * the runner uses only the seeded generator and the 16-bit conversions (to
 * fill inputs and scalars). Nothing here touches a GPU.
 *
 * Module prefix: oracle_.
 */
#ifndef CAKE_ORACLE_H
#define CAKE_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bf16 <-> float (round to nearest even; NaN preserved). */
uint16_t oracle_f32_to_bf16(float f);
/* bf16 bits -> float (exact). */
float oracle_bf16_to_f32(uint16_t h);

/* Reference for C = A·B^T over the rows listed in rows[0..nrows): A [M,K] and
 * B [N,K] bf16 row-major, result ref[nrows*N] in float64. nthreads > 1 splits
 * the rows over POSIX threads. */
void oracle_gemm_abt_bf16(const uint16_t *A, const uint16_t *B, int M, int N, int K,
                          const int *rows, int nrows, double *ref, int nthreads);

/* Comparison of an output against a reference. */
typedef struct OracleCmp {
	double rel_err;          /* ||out-ref|| / ||ref|| over the compared elements */
	long long n_nan;         /* NaN/inf outputs (poison still there, or produced) */
	long long first_bad;     /* flat index into the full output of the first NaN or
	                            element with |out-ref| > 0.1 + 0.1*|ref|; -1 if none */
	double first_bad_out, first_bad_ref;
} OracleCmp;

/* Compare bf16 output rows `rows` of C[M,N] against ref (as produced above). */
void oracle_compare_bf16_rows(const uint16_t *C, int N, const int *rows, int nrows,
                              const double *ref, OracleCmp *cmp);

/* Check a k-means assignment on the rows listed in rows[]: X [N,D] and
 * C [K,D] bf16, cnorm[K] f32, out[N] i32 the kernel's labels. The float64
 * score of centroid j for point i is cnorm[j] - 2 x_i·c_j; out[i] passes when
 * it is in [0,K) and its score is within tol*(1+|best|) of the best score
 * (near-ties may resolve either way in f32). cmp->rel_err receives the largest
 * normalised gap, first_bad the first failing point (first_bad_out = its
 * label, first_bad_ref = the float64 argmin). Returns the number of failing rows. */
long long oracle_kmeans_assign_check(const uint16_t *X, const uint16_t *C, const float *cnorm, int K, int D,
                                     const int32_t *out, const int *rows, int nrows, double tol, OracleCmp *cmp);

/* f16 <-> float (round to nearest even; NaN, inf and subnormals handled). */
uint16_t oracle_f32_to_f16(float f);
/* f16 bits -> float (exact). */
float oracle_f16_to_f32(uint16_t h);
/* A 16-bit element (f16 when f16, else bf16) -> float, and back. */
float oracle_elt_to_f32(uint16_t h, bool f16);
/* float -> 16-bit element (f16 when f16, else bf16), round to nearest even. */
uint16_t oracle_f32_to_elt(float f, bool f16);

/* Tolerance of the k-means checks for bf16/f16 data: 2^-8, the bf16 unit
 * roundoff (labels: relative gap between two nearest scores; centroids:
 * relative error of an element). */
#define ORACLE_KMEANS_TOL 0x1p-8

/* Outcome of oracle_kmeans_assign. */
typedef struct KmeansAssignCheck {
	long long checked;       /* points compared (finite inputs) */
	long long mismatches;    /* labels that are not the float64 argmin and not within tol of it */
	long long ties_excused;  /* labels != argmin whose score is within tol·scale of the best */
	long long nan_points;    /* points with a NaN/inf coordinate (excluded, reported) */
	long long nan_centroids; /* centroids with a NaN/inf coordinate (never nearest) */
	double max_tie_gap;      /* largest score gap among the excused ties */
	long long first_bad;     /* point index of the first mismatch, -1 if none */
	int first_bad_out, first_bad_ref;  /* its label and the float64 argmin */
	double first_bad_gap;    /* its score minus the best score (inf: label out of range) */
} KmeansAssignCheck;

/* Check k-means labels out[] on the points rows[0..nrows) of X [N,D] against
 * centroids C [K,D] (bf16, or f16 when f16). cnorm NULL: score = ‖x−c‖² in
 * float64; else score = cnorm[j] − 2·x·c_j (the kernel's form). A label must
 * be the argmin (lowest index on exact ties) unless its score is within
 * tol·scale of the best (an excused tie, counted). nthreads > 1 splits the
 * rows over POSIX threads. Returns the number of mismatches, -1 on OOM. */
long long oracle_kmeans_assign(const uint16_t *X, const uint16_t *C, bool f16, const float *cnorm, int K, int D,
                               const int32_t *out, const int *rows, int nrows, double tol, int nthreads,
                               KmeansAssignCheck *res);

/* Float64 centroid update: Cnew[K*D] = mean of the points labelled c, or
 * the old centroid Cold (bf16/f16) when cluster c is empty; counts[K] the
 * cluster sizes; absmean[K*D] (may be NULL) the mean |x| per element, used
 * to size the summation tolerance. Returns the number of labels outside
 * [0,K) (ignored). */
long long oracle_kmeans_update(const uint16_t *X, bool f16, const int32_t *labels, int N, int D, int K,
                               const uint16_t *Cold, double *Cnew, long long *counts, double *absmean);

/* Outcome of oracle_kmeans_update_check. */
typedef struct KmeansUpdateCheck {
	double rel_err;          /* ‖out−ref‖/‖ref‖ over the non-empty clusters (NaN if any NaN) */
	long long bad;           /* elements outside tolerance (incl. NaN and changed empties) */
	long long n_nan;         /* NaN/inf elements of non-empty clusters */
	long long empty;         /* clusters without members */
	long long empty_changed; /* elements of empty clusters that differ from the old centroid */
	long long first_bad;     /* flat index of the first bad element, -1 if none */
	double first_bad_out, first_bad_ref;
	long long norm_bad;      /* oracle_kmeans_divide_check: wrong ‖c‖² entries */
	long long shift_bad;     /* oracle_kmeans_divide_check: wrong ‖c_new − c_old‖² entries */
} KmeansUpdateCheck;

/* Compare new centroids Cout [K,D] (bf16/f16) against oracle_kmeans_update's
 * ref: element error <= tol·(|ref| + absmean·2^-10); empty clusters must hold
 * Cold bit for bit. Returns the number of bad elements. */
long long oracle_kmeans_update_check(const uint16_t *Cout, bool f16, const double *ref, const double *absmean,
                                     const long long *counts, const uint16_t *Cold, int K, int D, double tol,
                                     KmeansUpdateCheck *res);

/* Check the divide step alone: Cout [K,D] must be sums/counts rounded to the
 * 16-bit type where counts > 0 (tolerance as above) and Cold bit for bit
 * where counts <= 0; cnorm[K] must be ‖Cout‖² and shift[K] ‖Cout − Cold‖²
 * (relative 1e-5). Returns the number of bad elements and entries, -1 on OOM. */
long long oracle_kmeans_divide_check(const float *sums, const int32_t *counts, const uint16_t *Cold, bool f16, int K,
                                     int D, const uint16_t *Cout, const float *cnorm, const float *shift, double tol,
                                     KmeansUpdateCheck *res);

/* Inputs of the segmented update (kernels/kmeans/update_segmented.cake): labels
 * uniform over the clusters left non-empty (about one cluster in 8, and at
 * least one when K >= 2, receives no point), order[N] = the point ids grouped
 * by label (a counting sort, ids ascending within a cluster), offsets[K+1] =
 * the exclusive prefix sum of the cluster sizes, offsets[K] = N. labels may
 * be NULL. Reproducible from seed. */
void oracle_kmeans_segments(long long N, int K, uint64_t seed, int32_t *labels, int32_t *order, int32_t *offsets);

/* Check a segmented update: cluster c is the segment order[offsets[c] ..
 * offsets[c+1]); Cout [K,D] (bf16/f16) must be the float64 mean of its
 * points X [N,D] rounded to the 16-bit type (tolerance of
 * oracle_kmeans_update_check) and Cold bit for bit for an empty segment.
 * Returns the number of bad elements, -1 on OOM, -2 when the segments are
 * malformed (offsets not non-decreasing from 0 to N, an id outside [0,N)). */
long long oracle_kmeans_segmented_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                        const int32_t *offsets, const uint16_t *Cold, const uint16_t *Cout, double tol,
                                        KmeansUpdateCheck *res);

/* Check segment sums (kmeans_segsum of kernels/kmeans/update_sorted.cake):
 * cluster c is the segment order[offsets[c] .. offsets[c] + counts[c]); sums
 * [K,D] (f32) must be the float64 sum of its points X [N,D] within the
 * rigorous bound of an f32 running sum, max(n,1)·2⁻²⁴·Σ|x| (+1e-30), and
 * exactly 0 for an empty segment. res->empty counts the empty segments.
 * Returns the number of bad elements, -1 on OOM, -2 when the segments are
 * malformed (a segment outside [0,N), an id outside [0,N)). */
long long oracle_kmeans_segsum_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                     const int32_t *offsets, const int32_t *counts, const float *sums,
                                     KmeansUpdateCheck *res);

/* Deterministic generator (splitmix64). */
uint64_t oracle_splitmix64(uint64_t *state);
/* Fill n bf16 values uniform in [-1,1], never exactly zero. */
void oracle_fill_bf16(uint16_t *dst, size_t n, uint64_t seed);

#endif
