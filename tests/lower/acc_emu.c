/*
 * acc_emu.c — inputs for, and the check of, tests/corpus/good/acc_global_loads.cake on the
 * CPU emulator (tests/lower/emu.sh): global loads into accumulator-layout fragments.
 *
 *   acc_emu gen   DIR B H SEED     write X, Y, Z and NaN-poisoned outputs
 *   acc_emu check DIR B H SEED     compare OutA = 2 X, OutT = Y[:, :, 1] + Z[:, :, 1], OutZ = 3 Z[:, :, 1],
 *                                  OutY[:, :, 0] = Y[:, :, 1], OutY[:, :, 1] = 2 Y[:, :, 1]
 *   acc_emu gen-smem DIR B SEED    acc_smem_roundtrip.cake: X [B, 128, 64]
 *   acc_emu check-smem DIR B SEED  OutB = bf16(2 X), OutC = 3 X + 1, Cs = column sums of X,
 *                                  Cm = column maxima of 3 X
 *   acc_emu gen-scan DIR B SEED    acc_scan.cake: X [B, 128, 128]
 *   acc_emu check-scan DIR B SEED  the inclusive prefix sums down the rows, in float64: OutM of
 *                                  2 X - 1, OutN of rows 32..95 of X, OutU of columns 64..127,
 *                                  OutI of 3 r - c + b (exact)
 *   acc_emu gen-rows DIR B SEED    acc_rows.cake: X [B, 64, 128], S0 [B, 128, 128], V [B, 128] (f32),
 *                                  Y [B, 64, 128] (bf16)
 *   acc_emu check-rows DIR B SEED  in float64: the l2norms (y / sqrt(sum y^2 + 1e-6), and of S0 / 2),
 *                                  row sums, x - rowmax, the rowargmin (lowest column on ties),
 *                                  column sums, x + v - colsum, exp(0.1 colsum[r]) S0 + rowsum(S0)[c]
 *   acc_emu gen-tri DIR B SEED     acc_trisolve.cake: Lm [B, 64, 64], Bm [B, 64, 128], Bt [B, 64]
 *   acc_emu check-tri DIR B SEED   float64 forward substitution with the kernel's two L (unit
 *                                  diagonal; 1.5 + |l| on it) against OutW and OutU, per column
 *                                  relative to the column's largest |x|
 *   acc_emu gen-inv DIR B SEED     acc_trisolve.cake's acc_triinv*: Lm [B, 64, 64], OutI and OutJ poisoned
 *   acc_emu check-inv DIR B SEED   L^-1 in float64 (forward substitution against the identity) with the
 *                                  kernel's two L against OutI and OutJ; the zeros above the diagonal included
 *   acc_emu gen-nsub DIR B SEED    acc_wgmma_nsub.cake: Q [B, 64, 128], W [B, 64, 64] (bf16, as gen-wgmma's)
 *   acc_emu check-nsub DIR B SEED  O = W Q against float64 products
 *   acc_emu gen-wgmma DIR B SEED   acc_wgmma.cake: P, Q [B, 64, 128], R [B, 128, 128], W [B, 64, 64] (bf16)
 *   acc_emu check-wgmma DIR B SEED float64 products: O1 = P Q^T, O2 = P R, O3 = O5 = W Q, O4 = P^T Q,
 *                                  O6 = W W^T, O7 = W W
 *   acc_emu gen-assign DIR B SEED  kernels/kmeans/assign.cake: X [B, N, 128], Cent [B, K, 128] (bf16;
 *                                  f16 with ASSIGN_F16=1), Cnorm = ‖c‖², Out poisoned (ASSIGN_N, ASSIGN_K)
 *   acc_emu check-assign DIR B SEED  the labels against the float64 argmin of ½‖c‖² − x·c
 *   acc_emu gen-gemm DIR M SEED    a corpus GEMM (C = A B^T, bf16; N = 256, K = 384): A [M, K], B [N, K]
 *                                  (gen-gemm384 / check-gemm384: N = 384, for 128x192 tiles; the
 *                                  environment's GEMM_N and GEMM_K, when set, replace N and K)
 *   acc_emu check-gemm DIR M SEED  C against float64 products, within bf16 rounding of the result
 *   acc_emu gen-splitk DIR M SEED  kernels/gemm/gemm_splitk.cake's slices (N = 256, K = 1088, S = 2:
 *                                  17 K steps in slices of 8 and 9): A, B and NaN partials P [S, M, N]
 *   acc_emu check-splitk DIR M SEED  each P[s] against the float64 product over slice s of K
 *   acc_emu gen-reduce DIR M SEED  gemm_splitk_reduce: P [3, M, 256] f32, NaN C [M, 256] bf16
 *   acc_emu check-reduce DIR M SEED  C = bf16(P[0] + P[1] + P[2]), summed in that order in f32
 *   acc_emu gen-panels DIR B SEED  tests/corpus/good/tma_panels.cake: X [B, 64, 128] bf16, NaN Out
 *   acc_emu check-panels DIR B SEED  Out == 2 X exactly (two TMA boxes into the panels of one
 *                                  swizzled buffer, read back in the accumulator layout)
 *   acc_emu gen-cpanels DIR B SEED  tests/corpus/good/acc_smem_panels.cake: X [B, 64, 128] bf16, NaN Out, Out2
 *   acc_emu check-cpanels DIR B SEED  Out == 2 X on columns 0..63 and 4 X on 64..127, Out2 == X with
 *                                  its 64-column halves swapped, exactly (column panels of shared
 *                                  buffers loaded and stored in the accumulator layout)
 *   acc_emu gen-streamk DIR M N K NG SEED  kernels/gemm/gemm_streamk.cake: A [M, K], B [N, K], NaN C
 *                                  [M, N] and NaN pieces P [NG, 2, M, 256]
 *   acc_emu check-streamk DIR M N K NG SEED  C (after gemm_bf16_streamk and gemm_streamk_fixup)
 *                                  against float64 products, within bf16 rounding of the result
 *
 * Every output is poisoned with NaN before the run, so an element never written fails.
 */
#include <math.h>
#include "family/oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void wr(const char *dir, const char *n, const void *p, size_t b)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.bin", dir, n);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, b, f) != b)
		exit(2);
	fclose(f);
}

static float *rd(const char *dir, const char *n, size_t cnt)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.out", dir, n);
	FILE *f = fopen(path, "rb");
	float *p = malloc(cnt * 4);
	if (!f || !p || fread(p, 4, cnt, f) != cnt)
		exit(2);
	fclose(f);
	return p;
}

static int smem_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t st = strtoull(argv[4], NULL, 10);
	size_t n = (size_t)(B * 128 * 64);
	float *X = malloc(4 * n);
	for (size_t i = 0; i < n; i++)
		X[i] = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
	int bad = 0;
	if (!strcmp(argv[1], "gen-smem")) {
		wr(dir, "X", X, 4 * n);
		float *nan = malloc(4 * n);
		memset(nan, 0xff, 4 * n);
		wr(dir, "OutB", nan, 4 * n), wr(dir, "OutC", nan, 4 * n);
		wr(dir, "Cs", nan, 4 * (size_t)(B * 64)), wr(dir, "Cm", nan, 4 * (size_t)(B * 64)), wr(dir, "Cv", nan, 4 * (size_t)(B * 64));
		free(nan);
	} else {
		float *Ob = rd(dir, "OutB", n), *Oc = rd(dir, "OutC", n);
		for (size_t i = 0; i < n; i++)
			bad += Ob[i] != oracle_bf16_to_f32(oracle_f32_to_bf16(2 * X[i])) || Oc[i] != 3 * X[i] + 1;
		float *Cs = rd(dir, "Cs", (size_t)(B * 64)), *Cm = rd(dir, "Cm", (size_t)(B * 64)), *Cv = rd(dir, "Cv", (size_t)(B * 64));
		for (long long b = 0; b < B; b++)
			for (int c = 0; c < 64; c++) {
				double sum = 0, abs = 0, mx = -INFINITY;
				for (int r = 0; r < 128; r++) {
					double x = X[(b * 128 + r) * 64 + c];
					sum += x, abs += fabs(x);
					mx = fmax(mx, (double)(3 * X[(b * 128 + r) * 64 + c]));
				}
				bad += !(fabs(Cs[b * 64 + c] - sum) <= 1e-5 * abs) || Cm[b * 64 + c] != (float)mx;
				bad += Cv[b * 64 + c] != 3 * X[(b * 128 + 37) * 64 + c] + 0.5f;   /* row 37 of sc as a column vector */
			}
		printf("acc_smem_roundtrip: %d bad elements%s\n", bad, bad ? " FAIL" : "");
		free(Ob), free(Oc), free(Cs), free(Cm), free(Cv);
	}
	free(X);
	return bad ? 1 : 0;
}

/* |out - ref| within the rounding of an f32 sum of the same terms (abs = the sum of |terms|). */
static int near(float out, double ref, double abs)
{
	return fabs((double)out - ref) <= 2e-6 * abs + 1e-6;
}

static int scan_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t st = strtoull(argv[4], NULL, 10);
	size_t n = (size_t)(B * 128 * 128), nh = (size_t)(B * 64 * 128), nq = (size_t)(B * 64 * 64);
	float *X = malloc(4 * n);
	for (size_t i = 0; i < n; i++)
		X[i] = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
	if (!strcmp(argv[1], "gen-scan")) {
		wr(dir, "X", X, 4 * n);
		float *nan = malloc(4 * n);
		memset(nan, 0xff, 4 * n);
		wr(dir, "OutM", nan, 4 * n), wr(dir, "OutN", nan, 4 * nh), wr(dir, "OutU", nan, 4 * nh), wr(dir, "OutI", nan, 4 * nq);
		wr(dir, "S16", nan, 4 * n), wr(dir, "S8", nan, 4 * nh), wr(dir, "S32", nan, 4 * n), wr(dir, "S64", nan, 4 * nh);
		free(nan), free(X);
		return 0;
	}
	float *M = rd(dir, "OutM", n), *N = rd(dir, "OutN", nh), *U = rd(dir, "OutU", nh), *I = rd(dir, "OutI", nq);
	float *S16 = rd(dir, "S16", n), *S8 = rd(dir, "S8", nh), *S32 = rd(dir, "S32", n), *S64 = rd(dir, "S64", nh);
	int bad = 0, sbad = 0;
	for (long long b = 0; b < B; b++) {
		const float *x = X + b * 128 * 128;
		for (int c = 0; c < 128; c++) {
			double sm = 0, am = 0, sn = 0, an = 0;
			for (int r = 0; r < 128; r++) {
				double t = 2.0 * x[r * 128 + c] - 1.0;
				sm += t, am += fabs(t);
				bad += !near(M[(b * 128 + r) * 128 + c], sm, am);
				if (r < 64) {
					double y = x[(32 + r) * 128 + c];
					sn += y, an += fabs(y);
					bad += !near(N[(b * 64 + r) * 128 + c], sn, an);
				}
			}
		}
		for (int c = 0; c < 64; c++) {
			double su = 0, au = 0;
			long long si = 0;
			for (int r = 0; r < 128; r++) {
				double y = x[r * 128 + 64 + c];
				su += y, au += fabs(y);
				bad += !near(U[(b * 128 + r) * 64 + c], su, au);
				if (r < 64) {
					si += 3 * r - c + b;
					bad += I[(b * 64 + r) * 64 + c] != (float)si;
				}
			}
		}
	}
	/* the segmented scans: each restarts at a multiple of its segment length */
	for (long long b = 0; b < B; b++) {
		const float *x = X + b * 128 * 128;
		for (int c = 0; c < 128; c++) {
			double s16 = 0, a16 = 0, s8 = 0, a8 = 0, s32 = 0, a32 = 0, s64 = 0, a64 = 0;
			for (int r = 0; r < 128; r++) {
				if (r % 16 == 0)
					s16 = a16 = 0;
				if (r % 32 == 0)
					s32 = a32 = 0;
				if (r % 64 == 0)
					s64 = a64 = 0;
				double y = x[r * 128 + c], t = 2.0 * y - 1.0;
				s16 += y, a16 += fabs(y), s32 += t, a32 += fabs(t);
				sbad += !near(S16[(b * 128 + r) * 128 + c], s16, a16);
				sbad += !near(S32[(b * 128 + r) * 128 + c], s32, a32);
				if (c < 64) {
					double z = x[r * 128 + 64 + c];
					s64 += z, a64 += fabs(z);
					sbad += !near(S64[(b * 128 + r) * 64 + c], s64, a64);
				}
				if (r < 64) {
					if (r % 8 == 0)
						s8 = a8 = 0;
					double w = x[(32 + r) * 128 + c];
					s8 += w, a8 += fabs(w);
					sbad += !near(S8[(b * 64 + r) * 128 + c], s8, a8);
				}
			}
		}
	}
	printf("acc_scan: %d bad elements, %d in the segmented scans%s\n", bad, sbad, bad + sbad ? " FAIL" : "");
	free(M), free(N), free(U), free(I), free(X), free(S16), free(S8), free(S32), free(S64);
	return bad + sbad ? 1 : 0;
}

/* A 16-bit output DIR/NAME.out of cnt elements (bf16 bits). */
static uint16_t *rd16(const char *dir, const char *n, size_t cnt)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.out", dir, n);
	FILE *f = fopen(path, "rb");
	uint16_t *p = malloc(2 * cnt);
	if (!f || !p || fread(p, 2, cnt, f) != cnt)
		exit(2);
	fclose(f);
	return p;
}

static float *nanbuf(size_t n)
{
	float *p = malloc(4 * n);
	memset(p, 0xff, 4 * n);
	return p;
}

static void unif(float *p, size_t n, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)((double)(oracle_splitmix64(st) >> 11) / (double)(1ull << 53) * 2 - 1);
}

static int rows_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10), st = seed;
	size_t nx = (size_t)(B * 64 * 128), ns = (size_t)(B * 128 * 128), nv = (size_t)(B * 128), nr = (size_t)(B * 64);
	float *X = malloc(4 * nx), *S = malloc(4 * ns), *V = malloc(4 * nv);
	uint16_t *Y = malloc(2 * nx);
	unif(X, nx, &st), unif(S, ns, &st), unif(V, nv, &st);
	oracle_fill_bf16(Y, nx, seed + 1);
	if (!strcmp(argv[1], "gen-rows")) {
		wr(dir, "X", X, 4 * nx), wr(dir, "S0", S, 4 * ns), wr(dir, "V", V, 4 * nv), wr(dir, "Y", Y, 2 * nx);
		float *a = nanbuf(ns);
		wr(dir, "OutL", a, 4 * nx), wr(dir, "OutL2", a, 4 * ns), wr(dir, "OutR", a, 4 * nr), wr(dir, "OutMx", a, 4 * nx);
		wr(dir, "OutA", a, 4 * nr), wr(dir, "OutC", a, 4 * nv), wr(dir, "OutV", a, 4 * nx), wr(dir, "OutS", a, 4 * ns);
		free(a), free(X), free(S), free(V), free(Y);
		return 0;
	}
	float *L = rd(dir, "OutL", nx), *L2 = rd(dir, "OutL2", ns), *R = rd(dir, "OutR", nr), *Mx = rd(dir, "OutMx", nx);
	float *C = rd(dir, "OutC", nv), *Vo = rd(dir, "OutV", nx), *So = rd(dir, "OutS", ns);
	int32_t *A = (int32_t *)rd(dir, "OutA", nr);
	int bad = 0;
	for (long long b = 0; b < B; b++) {
		const float *x = X + b * 64 * 128, *s = S + b * 128 * 128, *v = V + b * 128;
		const uint16_t *y = Y + b * 64 * 128;
		double cs[128], ca[128], rs[128], ra[128];
		for (int c = 0; c < 128; c++) {
			cs[c] = ca[c] = 0;
			for (int r = 0; r < 64; r++)
				cs[c] += x[r * 128 + c], ca[c] += fabs(x[r * 128 + c]);
			bad += !near(C[b * 128 + c], cs[c], ca[c]);
		}
		for (int r = 0; r < 128; r++) {
			double q = 0;
			rs[r] = ra[r] = 0;
			for (int c = 0; c < 128; c++)
				q += (double)s[r * 128 + c] * s[r * 128 + c], rs[r] += s[r * 128 + c], ra[r] += fabs(s[r * 128 + c]);
			for (int c = 0; c < 128; c++) {
				double ref = 0.5 * s[r * 128 + c] / sqrt(q + 1e-6);
				bad += !(fabs(L2[(b * 128 + r) * 128 + c] - ref) <= 1e-5 * fabs(ref) + 1e-6);
			}
		}
		for (int r = 0; r < 64; r++) {
			double q = 0, sum = 0, abs = 0, best = INFINITY;
			float mx = -INFINITY;
			int bi = -1;
			for (int c = 0; c < 128; c++) {
				double t = oracle_bf16_to_f32(y[r * 128 + c]);
				q += t * t;
				sum += x[r * 128 + c], abs += fabs(x[r * 128 + c]);
				mx = fmaxf(mx, x[r * 128 + c]);
				double w = c % 64 == 5 ? -9.0 : x[r * 128 + c];
				if (w < best)
					best = w, bi = c;
			}
			bad += !near(R[b * 64 + r], sum, abs) || A[b * 64 + r] != bi;
			for (int c = 0; c < 128; c++) {
				size_t i = (size_t)((b * 64 + r) * 128 + c);
				double ref = oracle_bf16_to_f32(y[r * 128 + c]) / sqrt(q + 1e-6);
				bad += !(fabs(L[i] - ref) <= 1e-5 * fabs(ref) + 1e-6);
				bad += Mx[i] != x[r * 128 + c] - mx;
				double vr = x[r * 128 + c] + v[c] - cs[c];
				bad += !near(Vo[i], vr, fabs(x[r * 128 + c]) + fabs(v[c]) + ca[c]);
			}
		}
		for (int r = 0; r < 128; r++)
			for (int c = 0; c < 128; c++) {
				double g = exp(0.1 * cs[r]), ref = g * s[r * 128 + c] + rs[c];
				double tol = 1e-5 * (g * (fabs(s[r * 128 + c]) + 0.1 * ca[r]) + ra[c]) + 1e-6;
				bad += !(fabs(So[(b * 128 + r) * 128 + c] - ref) <= tol);
			}
	}
	printf("acc_rows: %d bad elements%s\n", bad, bad ? " FAIL" : "");
	free(L), free(L2), free(R), free(Mx), free(C), free(Vo), free(So), free(A), free(X), free(S), free(V), free(Y);
	return bad ? 1 : 0;
}

/* Solve L x = rhs (L row-major n x n, lower part) in float64; the worst error of out against
 * it, relative to the largest |x| of each column. */
static double fsub_err(const double *L, const double *rhs, const float *out, int n, int ncol)
{
	double worst = 0;
	double *x = malloc(sizeof(double) * (size_t)n);
	for (int c = 0; c < ncol; c++) {
		double mx = 0;
		for (int i = 0; i < n; i++) {
			double a = rhs[i * ncol + c];
			for (int j = 0; j < i; j++)
				a -= L[i * n + j] * x[j];
			x[i] = a / L[i * n + i];
			mx = fmax(mx, fabs(x[i]));
		}
		for (int i = 0; i < n; i++) {
			double d = fabs((double)out[i * ncol + c] - x[i]) / (mx > 0 ? mx : 1);
			worst = isnan(out[i * ncol + c]) ? INFINITY : fmax(worst, d);
		}
	}
	free(x);
	return worst;
}

/* trisolve(L) = L^-1 (acc_triinv, acc_triinv_passes): the same two L as tri_case, the identity
 * for the right-hand side. */
static int inv_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t st = strtoull(argv[4], NULL, 10);
	size_t nl = (size_t)(B * 64 * 64);
	float *Lm = malloc(4 * nl);
	unif(Lm, nl, &st);
	if (!strcmp(argv[1], "gen-inv")) {
		wr(dir, "Lm", Lm, 4 * nl);
		float *a = nanbuf(nl);
		wr(dir, "OutI", a, 4 * nl), wr(dir, "OutJ", a, 4 * nl), wr(dir, "OutK", a, 4 * nl), wr(dir, "OutQ", a, 4 * nl);
		free(a), free(Lm);
		return 0;
	}
	float *I = rd(dir, "OutI", nl), *J = rd(dir, "OutJ", nl), *K = rd(dir, "OutK", nl), *Q = rd(dir, "OutQ", nl);
	double *L1 = malloc(sizeof(double) * 64 * 64), *L2 = malloc(sizeof(double) * 64 * 64), *id = malloc(sizeof(double) * 64 * 64);
	double *L3 = malloc(sizeof(double) * 64 * 64), *L4 = malloc(sizeof(double) * 64 * 64);
	for (int i = 0; i < 64 * 64; i++)
		id[i] = i / 64 == i % 64;
	double worst = 0;
	for (long long b = 0; b < B; b++) {
		const float *l = Lm + b * 64 * 64;
		for (int i = 0; i < 64; i++)
			for (int j = 0; j < 64; j++) {
				float lo = l[i * 64 + j] * 0.25f;
				L1[i * 64 + j] = j < i ? lo : j == i ? 1.0 : 0.0;
				L2[i * 64 + j] = j < i ? lo : j == i ? (double)(1.5f + fabsf(l[i * 64 + j])) : 0.0;
				L3[i * 64 + j] = i >= 32 && j < 32 ? 0.0 : L1[i * 64 + j];   /* trisolve(L, 32): the halves alone */
				L4[i * 64 + j] = i / 16 != j / 16 ? 0.0 : L1[i * 64 + j];   /* trisolve(L, 16): the 16 x 16 blocks alone */
			}
		worst = fmax(worst, fsub_err(L1, id, I + b * 64 * 64, 64, 64));
		worst = fmax(worst, fsub_err(L3, id, K + b * 64 * 64, 64, 64));
		worst = fmax(worst, fsub_err(L4, id, Q + b * 64 * 64, 64, 64));
		worst = fmax(worst, fsub_err(L2, id, J + b * 64 * 64, 64, 64));
	}
	int bad = !(worst <= 1e-5);
	printf("acc_triinv: worst error %.2e of the column's largest |x| (tol 1e-5)%s\n", worst, bad ? " FAIL" : "");
	free(I), free(J), free(K), free(Q), free(L1), free(L2), free(L3), free(L4), free(id), free(Lm);
	return bad;
}

static int tri_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t st = strtoull(argv[4], NULL, 10);
	size_t nl = (size_t)(B * 64 * 64), nb = (size_t)(B * 64 * 128), nt = (size_t)(B * 64);
	float *Lm = malloc(4 * nl), *Bm = malloc(4 * nb), *Bt = malloc(4 * nt);
	unif(Lm, nl, &st), unif(Bm, nb, &st), unif(Bt, nt, &st);
	if (!strcmp(argv[1], "gen-tri")) {
		wr(dir, "Lm", Lm, 4 * nl), wr(dir, "Bm", Bm, 4 * nb), wr(dir, "Bt", Bt, 4 * nt);
		float *a = nanbuf(nb);
		wr(dir, "OutW", a, 4 * nb), wr(dir, "OutU", a, 4 * nb);
		free(a), free(Lm), free(Bm), free(Bt);
		return 0;
	}
	float *W = rd(dir, "OutW", nb), *U = rd(dir, "OutU", nb);
	double *L1 = malloc(sizeof(double) * 64 * 64), *L2 = malloc(sizeof(double) * 64 * 64);
	double *r1 = malloc(sizeof(double) * 64 * 128), *r2 = malloc(sizeof(double) * 64 * 128);
	double worst = 0;
	for (long long b = 0; b < B; b++) {
		const float *l = Lm + b * 64 * 64, *x = Bm + b * 64 * 128, *bt = Bt + b * 64;
		for (int i = 0; i < 64; i++)
			for (int j = 0; j < 64; j++) {
				float lo = l[i * 64 + j] * 0.25f;   /* the kernel's f32 product */
				L1[i * 64 + j] = j < i ? lo : j == i ? 1.0 : 0.0;
				L2[i * 64 + j] = j < i ? lo : j == i ? (double)(1.5f + fabsf(l[i * 64 + j])) : 0.0;
			}
		for (int i = 0; i < 64 * 128; i++) {
			r1[i] = x[i];
			r2[i] = (double)(bt[i / 128] * x[i]);
		}
		worst = fmax(worst, fsub_err(L1, r1, W + b * 64 * 128, 64, 128));
		worst = fmax(worst, fsub_err(L2, r2, U + b * 64 * 128, 64, 128));
	}
	int bad = !(worst <= 1e-5);
	printf("acc_trisolve: worst error %.2e of the column's largest |x| (tol 1e-5)%s\n", worst, bad ? " FAIL" : "");
	free(W), free(U), free(L1), free(L2), free(r1), free(r2), free(Lm), free(Bm), free(Bt);
	return bad;
}

/* out [M, N] against sum_k a(i, k) b(k, j), a and b bf16 with strides: element (i, k) of a at
 * a[i * ai + k * ak], (k, j) of b at b[k * bk + j * bj]. Returns the elements off by more than
 * the rounding of an f32 sum of the same products. */
static int mm_bad(const float *out, int M, int N, int K, const uint16_t *a, int ai, int ak, const uint16_t *b, int bk, int bj)
{
	int bad = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double sum = 0, abs = 0;
			for (int k = 0; k < K; k++) {
				double t = (double)oracle_bf16_to_f32(a[i * ai + k * ak]) * oracle_bf16_to_f32(b[k * bk + j * bj]);
				sum += t, abs += fabs(t);
			}
			bad += !(fabs(out[i * N + j] - sum) <= 4e-6 * abs + 1e-6);
		}
	return bad;
}

static int wgmma_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10);
	size_t np = (size_t)(B * 64 * 128), nr = (size_t)(B * 128 * 128), nw = (size_t)(B * 64 * 64);
	uint16_t *P = malloc(2 * np), *Q = malloc(2 * np), *R = malloc(2 * nr), *W = malloc(2 * nw);
	oracle_fill_bf16(P, np, seed), oracle_fill_bf16(Q, np, seed + 1), oracle_fill_bf16(R, nr, seed + 2), oracle_fill_bf16(W, nw, seed + 3);
	if (strstr(argv[1], "-nsub")) {   /* acc_wgmma_nsub.cake: O = W Q over four warpgroups of 32 columns */
		int bad = 0;
		if (!strcmp(argv[1], "gen-nsub")) {
			wr(dir, "Q", Q, 2 * np), wr(dir, "W", W, 2 * nw);
			float *a = nanbuf(np);
			wr(dir, "O", a, 4 * np);
			free(a);
		} else {
			float *O = rd(dir, "O", np);
			for (long long b = 0; b < B; b++)
				bad += mm_bad(O + b * 64 * 128, 64, 128, 64, W + b * 64 * 64, 64, 1, Q + b * 64 * 128, 128, 1);
			printf("acc_wgmma_nsub: W Q, %d of %zu elements bad%s\n", bad, np, bad ? " FAIL" : "");
			free(O);
		}
		free(P), free(Q), free(R), free(W);
		return bad ? 1 : 0;
	}
	if (!strcmp(argv[1], "gen-wgmma")) {
		wr(dir, "P", P, 2 * np), wr(dir, "Q", Q, 2 * np), wr(dir, "R", R, 2 * nr), wr(dir, "W", W, 2 * nw);
		float *a = nanbuf(nr);
		wr(dir, "O1", a, 4 * nw), wr(dir, "O2", a, 4 * np), wr(dir, "O3", a, 4 * np), wr(dir, "O4", a, 4 * nr), wr(dir, "O5", a, 4 * np);
		wr(dir, "O6", a, 4 * nw), wr(dir, "O7", a, 4 * nw);
		wr(dir, "O8", a, 4 * np), wr(dir, "O9", a, 2 * nw), wr(dir, "O10", a, 4 * 2 * np), wr(dir, "O11", a, 4 * nw);
		free(a), free(P), free(Q), free(R), free(W);
		return 0;
	}
	float *O1 = rd(dir, "O1", nw), *O2 = rd(dir, "O2", np), *O3 = rd(dir, "O3", np), *O4 = rd(dir, "O4", nr), *O5 = rd(dir, "O5", np);
	float *O6 = rd(dir, "O6", nw), *O7 = rd(dir, "O7", nw), *O8 = rd(dir, "O8", np), *O10 = rd(dir, "O10", 2 * np), *O11 = rd(dir, "O11", nw);
	uint16_t *O9 = (uint16_t *)rd(dir, "O9", nw / 2);
	int b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0, b7 = 0, b8 = 0;
	for (long long b = 0; b < B; b++) {
		const uint16_t *p = P + b * 64 * 128, *q = Q + b * 64 * 128, *r = R + b * 128 * 128, *w = W + b * 64 * 64;
		b1 += mm_bad(O1 + b * 64 * 64, 64, 64, 128, p, 128, 1, q, 1, 128);     /* P Q^T */
		b2 += mm_bad(O2 + b * 64 * 128, 64, 128, 128, p, 128, 1, r, 128, 1);   /* P R */
		b3 += mm_bad(O3 + b * 64 * 128, 64, 128, 64, w, 64, 1, q, 128, 1);     /* W Q */
		b4 += mm_bad(O4 + b * 128 * 128, 128, 128, 64, p, 1, 128, q, 128, 1);  /* P^T Q */
		b5 += mm_bad(O5 + b * 64 * 128, 64, 128, 64, w, 64, 1, q, 128, 1);     /* W Q, N = 128 per warpgroup */
		b6 += mm_bad(O6 + b * 64 * 64, 64, 64, 64, w, 64, 1, w, 1, 64);        /* W W^T: one-span K-major A and B */
		b6 += mm_bad(O7 + b * 64 * 64, 64, 64, 64, w, 64, 1, w, 64, 1);        /* W W: register A, one-span N-major B */
		/* `-=`: O11 = O7 - P Q^T - W W (the two subtracted products, in that order, from the
		 * accumulator holding W W): -P Q^T within the f32 sums' rounding */
		for (int t = 0; t < 64 * 64; t++) {
			const float want = -O1[b * 64 * 64 + t], got = O11[b * 64 * 64 + t];
			b8 += !(fabsf(got - want) <= 1e-5f * (fabsf(want) + fabsf(O7[b * 64 * 64 + t])) + 1e-6f);
		}
		/* the transposed stores: O8 = (P R)^T, O9 = bf16(-(P Q^T))^T, the four tiles of O10 (k P Q^T)^T, k = 1..4 */
		const float *o2 = O2 + b * 64 * 128, *o1 = O1 + b * 64 * 64, *o8 = O8 + b * 128 * 64, *o10 = O10 + b * 64 * 2 * 128;
		const uint16_t *o9 = O9 + b * 64 * 64;
		for (int i = 0; i < 64; i++)
			for (int j = 0; j < 128; j++) {
				b7 += !(o8[j * 64 + i] == o2[i * 128 + j]);
				if (j < 64) {
					for (int q = 0; q < 4; q++)   /* O10[j, q / 2, 64 (q % 2) + i] = (q + 1) (P Q^T)[i, j] */
						b7 += !(o10[j * 256 + q * 64 + i] == (float)(q + 1) * o1[i * 64 + j]);
					b7 += !(o9[j * 64 + i] == oracle_f32_to_bf16(-o1[i * 64 + j]));
				}
			}
	}
	int bad = b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8;
	printf("acc_wgmma: bad elements P Q^T %d, P R %d, W Q %d, P^T Q %d, W Q (N 128) %d, one-span forms %d, transposed stores %d, -= %d%s\n", b1, b2,
	       b3, b4, b5, b6, b7, b8, bad ? " FAIL" : "");
	free(O1), free(O2), free(O3), free(O4), free(O5), free(O6), free(O7), free(O8), free(O9), free(O10), free(O11), free(P), free(Q), free(R), free(W);
	return bad ? 1 : 0;
}

/* Elements of C [M, N] (bf16) off the float64 product A Bᵀ by more than the bf16 rounding of
 * the result (A [M, K], B [N, K] bf16). */
static int gemm_bad(const uint16_t *A, const uint16_t *Bm, const uint16_t *C, long long M, long long N, long long K)
{
	int bad = 0;
	for (long long i = 0; i < M; i++)
		for (long long j = 0; j < N; j++) {
			double sum = 0, abs = 0;
			for (long long k = 0; k < K; k++) {
				double t = (double)oracle_bf16_to_f32(A[i * K + k]) * oracle_bf16_to_f32(Bm[j * K + k]);
				sum += t, abs += fabs(t);
			}
			double c = oracle_bf16_to_f32(C[i * N + j]);
			bad += !(fabs(c - sum) <= fabs(sum) / 256 + 4e-6 * abs + 1e-6);   /* bf16 rounding of the result */
		}
	return bad;
}

static int gemm_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long M = atoll(argv[3]), N = strstr(argv[1], "gemm384") ? 384 : 256, K = 384;
	if (getenv("GEMM_N"))   /* other tile widths: N and K from the environment */
		N = atoll(getenv("GEMM_N"));
	if (getenv("GEMM_K"))
		K = atoll(getenv("GEMM_K"));
	if (M < 1 || N < 1 || K < 1)
		return 2;
	uint64_t seed = strtoull(argv[4], NULL, 10);
	uint16_t *A = malloc(2 * (size_t)(M * K)), *Bm = malloc(2 * (size_t)(N * K));
	oracle_fill_bf16(A, (size_t)(M * K), seed), oracle_fill_bf16(Bm, (size_t)(N * K), seed + 1);
	if (!strncmp(argv[1], "gen-", 4)) {
		wr(dir, "A", A, 2 * (size_t)(M * K)), wr(dir, "B", Bm, 2 * (size_t)(N * K));
		float *a = nanbuf((size_t)(M * N));
		wr(dir, "C", a, 2 * (size_t)(M * N));
		free(a), free(A), free(Bm);
		return 0;
	}
	uint16_t *C = rd16(dir, "C", (size_t)(M * N));
	int bad = gemm_bad(A, Bm, C, M, N, K);
	printf("gemm: %d bad elements of %lld%s\n", bad, M * N, bad ? " FAIL" : "");
	free(C), free(A), free(Bm);
	return bad ? 1 : 0;
}

/* kernels/gemm/gemm_splitk.cake: the slices of gemm_bf16_splitk and the sum of gemm_splitk_reduce */
static int splitk_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long M = atoll(argv[3]), N = 256, K = 1088, S = 2;
	uint64_t seed = strtoull(argv[4], NULL, 10);
	int reduce = strstr(argv[1], "-reduce") != NULL, gen = !strncmp(argv[1], "gen-", 4);
	if (reduce) {
		S = 3;
		float *P = malloc(4 * (size_t)(S * M * N));
		uint64_t st = seed;
		unif(P, (size_t)(S * M * N), &st);
		if (gen) {
			wr(dir, "P", P, 4 * (size_t)(S * M * N));
			float *c = nanbuf((size_t)(M * N));
			wr(dir, "C", c, 2 * (size_t)(M * N));
			free(c), free(P);
			return 0;
		}
		uint16_t *C = rd16(dir, "C", (size_t)(M * N));
		int bad = 0;
		for (long long i = 0; i < M * N; i++) {
			float sum = 0;
			for (long long q = 0; q < S; q++)
				sum += P[q * M * N + i];
			bad += C[i] != oracle_f32_to_bf16(sum);
		}
		printf("splitk reduce: %d of %lld elements differ from bf16(P0 + P1 + P2)%s\n", bad, M * N, bad ? " FAIL" : "");
		free(C), free(P);
		return bad ? 1 : 0;
	}
	uint16_t *A = malloc(2 * (size_t)(M * K)), *Bm = malloc(2 * (size_t)(N * K));
	oracle_fill_bf16(A, (size_t)(M * K), seed), oracle_fill_bf16(Bm, (size_t)(N * K), seed + 1);
	if (gen) {
		wr(dir, "A", A, 2 * (size_t)(M * K)), wr(dir, "B", Bm, 2 * (size_t)(N * K));
		float *p = nanbuf((size_t)(S * M * N));
		wr(dir, "P", p, 4 * (size_t)(S * M * N));
		free(p), free(A), free(Bm);
		return 0;
	}
	float *P = rd(dir, "P", (size_t)(S * M * N));
	int bad = 0;
	long long steps = K / 64;
	for (long long q = 0; q < S; q++) {
		long long lo = q * steps / S * 64, hi = (q + 1) * steps / S * 64;
		for (long long i = 0; i < M; i++)
			for (long long j = 0; j < N; j++) {
				double sum = 0, abs = 0;
				for (long long k = lo; k < hi; k++) {
					double t = (double)oracle_bf16_to_f32(A[i * K + k]) * oracle_bf16_to_f32(Bm[j * K + k]);
					sum += t, abs += fabs(t);
				}
				double got = P[(q * M + i) * N + j];
				bad += !(fabs(got - sum) <= 1e-5 * abs + 1e-6);   /* f32 accumulation of the slice */
			}
	}
	printf("splitk slices: %d bad partial elements of %lld (S = 2 slices of 8 and 9 K steps)%s\n", bad, S * M * N,
	       bad ? " FAIL" : "");
	free(P), free(A), free(Bm);
	return bad ? 1 : 0;
}

/* tests/corpus/good/tma_panels.cake: TMA boxes into the column panels of a swizzled buffer */
static int panels_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]), n = B * 64 * 128;
	uint64_t seed = strtoull(argv[4], NULL, 10);
	uint16_t *X = malloc(2 * (size_t)n);
	oracle_fill_bf16(X, (size_t)n, seed);
	bool cp = strstr(argv[1], "cpanels") != NULL;
	if (!strncmp(argv[1], "gen-", 4)) {
		wr(dir, "X", X, 2 * (size_t)n);
		float *o = nanbuf((size_t)n);
		wr(dir, "Out", o, 4 * (size_t)n);
		if (cp)
			wr(dir, "Out2", o, 4 * (size_t)n);
		free(o), free(X);
		return 0;
	}
	float *O = rd(dir, "Out", (size_t)n), *O2 = cp ? rd(dir, "Out2", (size_t)n) : NULL;
	long long bad = 0;
	for (long long i = 0; i < n; i++) {
		long long c = i % 128;
		float x = oracle_bf16_to_f32(X[i]);
		bad += !(O[i] == (cp && c >= 64 ? 4.0f : 2.0f) * x);
		if (cp)   /* Out2[r, c] = X[r, c ^ 64]: the halves swapped */
			bad += !(O2[i] == oracle_bf16_to_f32(X[i - c + (c ^ 64)]));
	}
	if (cp)
		printf("column panels: %lld of %lld elements differ from 2 X | 4 X and the swapped X%s\n", bad, 2 * n, bad ? " FAIL" : "");
	else
		printf("tma panels: %lld of %lld elements differ from 2 X%s\n", bad, n, bad ? " FAIL" : "");
	free(O), free(O2), free(X);
	return bad ? 1 : 0;
}

/* kernels/gemm/gemm_streamk.cake: the stream-K pair, run one after the other over one directory */
static int streamk_case(int argc, char **argv)
{
	if (argc < 8)
		return 2;
	const char *dir = argv[2];
	long long M = atoll(argv[3]), N = atoll(argv[4]), K = atoll(argv[5]), NG = atoll(argv[6]);
	uint64_t seed = strtoull(argv[7], NULL, 10);
	uint16_t *A = malloc(2 * (size_t)(M * K)), *Bm = malloc(2 * (size_t)(N * K));
	oracle_fill_bf16(A, (size_t)(M * K), seed), oracle_fill_bf16(Bm, (size_t)(N * K), seed + 1);
	if (!strncmp(argv[1], "gen-", 4)) {
		wr(dir, "A", A, 2 * (size_t)(M * K)), wr(dir, "B", Bm, 2 * (size_t)(N * K));
		float *c = nanbuf((size_t)(M * N)), *p = nanbuf((size_t)(NG * 2 * M * 256));
		wr(dir, "C", c, 2 * (size_t)(M * N));
		wr(dir, "P", p, 4 * (size_t)(NG * 2 * M * 256));
		free(p), free(c), free(A), free(Bm);
		return 0;
	}
	uint16_t *C = rd16(dir, "C", (size_t)(M * N));
	int bad = gemm_bad(A, Bm, C, M, N, K);
	printf("streamk: %d bad elements of %lld (M %lld, N %lld, K %lld, %lld CTA groups)%s\n", bad, M * N, M, N, K, NG,
	       bad ? " FAIL" : "");
	free(C), free(A), free(Bm);
	return bad ? 1 : 0;
}

/* kernels/kmeans/assign.cake's kmeans_assign (and the f16 twin with ASSIGN_F16=1): B batches of
 * N points (env ASSIGN_N, default 512) against K centroids (ASSIGN_K, default 512), D = 128;
 * Cnorm is the centroids' ‖c‖² in f32, Out poisoned with -1; the labels are checked against the
 * float64 argmin of the kernel's score (oracle_kmeans_assign, ties within 2^-8 excused) */
static int assign_case(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]), N = getenv("ASSIGN_N") ? atoll(getenv("ASSIGN_N")) : 512,
	          K = getenv("ASSIGN_K") ? atoll(getenv("ASSIGN_K")) : 512, D = 128;
	bool f16 = getenv("ASSIGN_F16") && atoi(getenv("ASSIGN_F16"));
	uint64_t seed = strtoull(argv[4], NULL, 10), st = seed;
	if (B < 1 || N < 1 || K < 1)
		return 2;
	size_t nx = (size_t)(B * N * D), nc = (size_t)(B * K * D);
	uint16_t *X = malloc(2 * nx), *C = malloc(2 * nc);
	float *cn = malloc(4 * (size_t)(B * K)), *tmp = malloc(4 * (nx > nc ? nx : nc));
	unif(tmp, nx, &st);
	for (size_t i = 0; i < nx; i++)
		X[i] = oracle_f32_to_elt(tmp[i], f16);
	unif(tmp, nc, &st);
	for (size_t i = 0; i < nc; i++)
		C[i] = oracle_f32_to_elt(tmp[i], f16);
	for (long long r = 0; r < B * K; r++) {
		float a = 0;
		for (long long d = 0; d < D; d++) {
			float v = oracle_elt_to_f32(C[r * D + d], f16);
			a += v * v;
		}
		cn[r] = a;
	}
	int bad = 0;
	if (!strncmp(argv[1], "gen-", 4)) {
		wr(dir, "X", X, 2 * nx), wr(dir, "Cent", C, 2 * nc), wr(dir, "Cnorm", cn, 4 * (size_t)(B * K));
		float *o = nanbuf((size_t)(B * N));
		wr(dir, "Out", o, 4 * (size_t)(B * N));
		free(o);
	} else {
		float *raw = rd(dir, "Out", (size_t)(B * N));
		int32_t *out = malloc(4 * (size_t)(B * N));
		memcpy(out, raw, 4 * (size_t)(B * N));
		long long mism = 0, ties = 0;
		int *rows = malloc(sizeof(int) * (size_t)N);
		for (long long i = 0; i < N; i++)
			rows[i] = (int)i;
		for (long long b = 0; b < B; b++) {
			KmeansAssignCheck res;
			long long m = oracle_kmeans_assign(X + b * N * D, C + b * K * D, f16, cn + b * K, (int)K, (int)D,
			                                   out + b * N, rows, (int)N, ORACLE_KMEANS_TOL, 1, &res);
			mism += m < 0 ? N : m;
			ties += res.ties_excused;
		}
		bad = mism != 0;
		printf("assign: %lld of %lld labels wrong (%lld near-ties excused)%s\n", mism, B * N, ties, bad ? " FAIL" : "");
		free(raw), free(out), free(rows);
	}
	free(X), free(C), free(cn), free(tmp);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strstr(argv[1], "-assign"))
		return assign_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-streamk"))
		return streamk_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "panels"))
		return panels_case(argc, argv);
	if (argc >= 2 && (strstr(argv[1], "-splitk") || strstr(argv[1], "-reduce")))
		return splitk_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-gemm"))
		return gemm_case(argc, argv);
	if (argc >= 2 && (strstr(argv[1], "-wgmma") || strstr(argv[1], "-nsub")))
		return wgmma_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-tri"))
		return tri_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-inv"))
		return inv_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-rows"))
		return rows_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-scan"))
		return scan_case(argc, argv);
	if (argc >= 2 && strstr(argv[1], "-smem"))
		return smem_case(argc, argv);
	if (argc < 6)
		return 2;
	const char *dir = argv[2];
	long long B = atoll(argv[3]), H = atoll(argv[4]);
	uint64_t seed = strtoull(argv[5], NULL, 10), st = seed;
	size_t nx = (size_t)(B * 128 * 128), ny = (size_t)(B * 64 * H * 128), nz = (size_t)(B * 64 * H);
	float *X = malloc(4 * nx);
	uint16_t *Y = malloc(2 * ny), *Z = malloc(2 * nz);
	for (size_t i = 0; i < nx; i++)
		X[i] = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
	oracle_fill_bf16(Y, ny, seed + 1);
	oracle_fill_bf16(Z, nz, seed + 2);
	int bad = 0;
	if (!strcmp(argv[1], "gen")) {
		wr(dir, "X", X, 4 * nx), wr(dir, "Y", Y, 2 * ny), wr(dir, "Z", Z, 2 * nz);
		float *nan = malloc(4 * nx);
		memset(nan, 0xff, 4 * nx);
		wr(dir, "OutA", nan, 4 * nx), wr(dir, "OutT", nan, 4 * (size_t)(B * 64 * 128)), wr(dir, "OutZ", nan, 4 * (size_t)(B * 64));
		wr(dir, "OutY", nan, 4 * (size_t)(B * 64 * 2 * 128));
		free(nan);
	} else {
		float *A = rd(dir, "OutA", nx), *T = rd(dir, "OutT", (size_t)(B * 64 * 128)), *Zo = rd(dir, "OutZ", (size_t)(B * 64));
		float *Yo = rd(dir, "OutY", (size_t)(B * 64 * 2 * 128));
		for (size_t i = 0; i < nx; i++)
			bad += A[i] != 2 * X[i];
		for (long long b = 0; b < B; b++)
			for (int r = 0; r < 64; r++) {
				float z = oracle_bf16_to_f32(Z[(b * 64 + r) * H + 1]);
				bad += Zo[b * 64 + r] != 3 * z;
				for (int c = 0; c < 128; c++) {
					float y = oracle_bf16_to_f32(Y[((b * 64 + r) * H + 1) * 128 + c]);
					bad += T[(b * 64 + r) * 128 + c] != y + z;
					bad += Yo[((b * 64 + r) * 2 + 0) * 128 + c] != y || Yo[((b * 64 + r) * 2 + 1) * 128 + c] != 2 * y;
				}
			}
		printf("acc_global_loads: %d bad elements%s\n", bad, bad ? " FAIL" : "");
		free(A), free(T), free(Zo), free(Yo);
	}
	free(X), free(Y), free(Z);
	return bad ? 1 : 0;
}
