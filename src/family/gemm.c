/*
 * gemm.c — the `gemm` family: C = A · Bᵀ with both operands K-major.
 *
 * Contract: A bf16[M, K], B bf16[N, K], C bf16 or f32 [M, N], bound by
 * name, with C's extents named like A's rows and B's rows and A and B
 * sharing K. Inputs are the runner's seeded values in [-1, 1] (never zero);
 * C is an output (poisoned before a launch, or zeroed when the kernel only
 * accumulates into it with atomic_add, as a split-K schedule does).
 *
 * Oracle: float64 dot products of the exact bf16 inputs on sampled rows
 * (every row when M <= --check-rows; else the first, the last and seeded
 * random others; every column of each). Tolerance ‖out−ref‖/‖ref‖ <= 1e-2
 * for a bf16 output (its rounding alone is 2^-9 relative) and 1e-5 for an
 * f32 output (f32 accumulation over K terms of magnitude <= 1); any NaN or
 * an element off by more than 0.1 + 0.1|ref| (1e-3 + 1e-3|ref| for f32)
 * fails. Rates: 2·M·N·K FLOP; bytes (M·K + N·K)·2 + M·N·sizeof(C).
 */
#include "family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *dim_name(const Expr *e)
{
	return e && e->kind == E_IDENT ? e->name : NULL;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static bool gemm_fits(const Kernel *k, char *why, size_t n)
{
	static const DType ab[] = {DT_BF16}, c[] = {DT_BF16, DT_F32};
	if (!fam_need(k, "A", ab, 1, 2, 2, why, n) || !fam_need(k, "B", ab, 1, 2, 2, why, n) ||
	    !fam_need(k, "C", c, 2, 2, 2, why, n))
		return false;
	const Decl *A = k->params[fam_param(k, "A")], *B = k->params[fam_param(k, "B")], *C = k->params[fam_param(k, "C")];
	if (!same(dim_name(A->shape[1]), dim_name(B->shape[1])) || !same(dim_name(C->shape[0]), dim_name(A->shape[0])) ||
	    !same(dim_name(C->shape[1]), dim_name(B->shape[0]))) {
		snprintf(why, n, "the extents must read A[M, K], B[N, K], C[M, N] with the same dim names");
		return false;
	}
	return true;
}

static int gemm_check(FamRun *r, FamReport *rep)
{
	FamBuf *A = fam_buf(r, "A"), *B = fam_buf(r, "B"), *C = fam_buf(r, "C");
	int M = (int)C->dims[0], N = (int)C->dims[1], K = (int)A->dims[1];
	int nrows;
	int *rows = fam_sample_rows(M, r->check_rows, r->seed ^ 0x5151u, &nrows);
	double *ref = malloc(sizeof(double) * (size_t)nrows * (size_t)N);
	if (!ref) {
		free(rows);
		snprintf(rep->error, sizeof rep->error, "host out of memory for the oracle (%d rows x %d)", nrows, N);
		return -1;
	}
	oracle_gemm_abt_bf16(A->host, B->host, M, N, K, rows, nrows, ref, r->nthreads);
	OracleCmp c;
	if (C->decl->dt == DT_BF16) {
		oracle_compare_bf16_rows(C->host, N, rows, nrows, ref, &c);
		rep->tol = 1e-2;
	} else {
		double num = 0, den = 0;
		memset(&c, 0, sizeof c);
		c.first_bad = -1;
		for (int ri = 0; ri < nrows; ri++)
			for (int j = 0; j < N; j++) {
				double ov = ((const float *)C->host)[(size_t)rows[ri] * N + j], rv = ref[(size_t)ri * N + j];
				if (!isfinite(ov)) {
					c.n_nan++;
					if (c.first_bad < 0)
						c.first_bad = (long long)rows[ri] * N + j, c.first_bad_out = ov, c.first_bad_ref = rv;
					continue;
				}
				num += (ov - rv) * (ov - rv);
				den += rv * rv;
				if (fabs(ov - rv) > 1e-3 + 1e-3 * fabs(rv) && c.first_bad < 0)
					c.first_bad = (long long)rows[ri] * N + j, c.first_bad_out = ov, c.first_bad_ref = rv;
			}
		c.rel_err = c.n_nan ? NAN : den > 0 ? sqrt(num / den) : 0;
		rep->tol = 1e-5;
	}
	snprintf(rep->oracle, sizeof rep->oracle, "gemm_abt_f64");
	rep->rows = nrows;
	rep->rel_err = c.rel_err;
	rep->n_nan = c.n_nan;
	rep->first_bad = c.first_bad;
	rep->bad_out = c.first_bad_out;
	rep->bad_ref = c.first_bad_ref;
	free(ref);
	free(rows);
	bool bad = c.n_nan || !(c.rel_err <= rep->tol) || c.first_bad >= 0;
	if (bad && c.n_nan)
		snprintf(rep->error, sizeof rep->error, "%lld NaN/inf outputs in the checked rows; first at flat index %lld", c.n_nan,
		         c.first_bad);
	else if (bad)
		snprintf(rep->error, sizeof rep->error,
		         "rel err %.3e exceeds %.0e; first bad element at flat index %lld: got %g, expected %g", c.rel_err, rep->tol,
		         c.first_bad, c.first_bad_out, c.first_bad_ref);
	else
		snprintf(rep->summary, sizeof rep->summary, "float64 GEMM oracle on %d rows: rel err %.3e (tolerance %.0e), %lld NaN",
		         nrows, c.rel_err, rep->tol, c.n_nan);
	return bad ? 1 : 0;
}

static void gemm_rates(const FamRun *r, double *flops, double *bytes)
{
	const FamBuf *A = fam_buf(r, "A"), *C = fam_buf(r, "C");
	double M = (double)C->dims[0], N = (double)C->dims[1], K = (double)A->dims[1];
	*flops = 2 * M * N * K;
	*bytes = (M * K + N * K) * 2 + M * N * dtype_size(C->decl->dt);
}

const Family family_gemm = {
	.name = "gemm",
	.module = "gemm.c",
	.summary = "C = A · Bᵀ (both operands K-major), bf16 inputs, bf16 or f32 output",
	.params = "A: bf16[M, K], B: bf16[N, K], C: bf16|f32[M, N]",
	.tolerance = "rel err <= 1e-2 (bf16 C) or 1e-5 (f32 C) against float64 on sampled rows; NaN fails",
	.fits = gemm_fits,
	.check = gemm_check,
	.rates = gemm_rates,
};
