/*
 * oracle.c — CPU references the runner checks GPU outputs against.
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
#include "gpu.h"

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

void oracle_gemm_abt_bf16(const uint16_t *A, const uint16_t *B, int M, int N, int K,
                          const int *rows, int nrows, double *ref, int nthreads)
{
	(void)M;
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 64)
		nthreads = 64;
	if (nthreads > nrows)
		nthreads = nrows > 0 ? nrows : 1;
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
