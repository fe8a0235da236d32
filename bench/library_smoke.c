/*
 * library_smoke.c — the generated libraries on a GPU from C alone (no torch): small shapes of
 * every route against CPU references, so a broken runtime shows before the Python benchmark.
 * bench/library.sh builds and runs it first:
 *
 *   cc -O2 -I$PKG/include bench/library_smoke.c -L$PKG/lib -Wl,-rpath,$PKG/lib -lcake_gemm -lcake_kmeans -ldl -lm
 *
 * GEMM: random bf16 A, B; C = A·Bᵀ through cake_gemm_bf16 (the dispatcher) and every forced
 * route whose kernel takes the shape; checked on sampled rows against a double product
 * (rel. Frobenius error <= 1e-2, every element of the sampled rows written and finite).
 * k-means: init_even, then one iteration of fit (labels of the initial centroids, then their
 * means) against a CPU Lloyd step in double (a label may differ only on a near-tie, within
 * 2^-8 of the score scale; centroids within 1e-2 relative per cluster, empty ones bit for bit);
 * assign and update on their own; fit with tol = 1e30 stops after one iteration.
 * The device is reached through dlopen("libcuda.so.1") for allocation and copies.
 * --launch-only runs every call without reading results: tests/cli/library.sh runs it on the
 * stand-in driver (tests/cli/fake_cuda.c), where every call must still succeed (the
 * dispatcher, workspace, tensor-map and launch arguments of every route and shape).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cake_gemm.h"
#include "cake_kmeans.h"

typedef int CUresult;
static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(int *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(void **, int);
static CUresult (*cuCtxSetCurrent)(void *);
static CUresult (*cuMemAlloc)(uint64_t *, size_t);
static CUresult (*cuMemFree)(uint64_t);
static CUresult (*cuMemcpyHtoD)(uint64_t, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, uint64_t, size_t);
static CUresult (*cuMemsetD8)(uint64_t, unsigned char, size_t);
static CUresult (*cuCtxSynchronize)(void);

static int failures;
static int launch_only;   /* --launch-only: every call must succeed; results are not read (a stand-in driver) */

static void ck(CUresult r, const char *what)
{
	if (r) {
		fprintf(stderr, "smoke: %s failed (%d)\n", what, r);
		exit(2);
	}
}

static uint64_t dalloc(size_t n)
{
	uint64_t p = 0;
	ck(cuMemAlloc(&p, n ? n : 16), "cuMemAlloc");
	return p;
}

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static float bf2f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static float h2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
	return (h & 0x8000) ? -v : v;
}

static uint16_t f2h(float f)
{   /* values here are in [-1, 1]: normal or subnormal, round to nearest even */
	uint16_t s = f < 0 ? 0x8000 : 0;
	float a = fabsf(f);
	if (a < ldexpf(1, -14)) {
		int m = (int)nearbyintf(ldexpf(a, 24));
		return (uint16_t)(s | m);
	}
	int e;
	float fr = frexpf(a, &e);   /* a = fr * 2^e, fr in [0.5, 1) */
	int m = (int)nearbyintf(ldexpf(fr, 11));   /* 11 bits incl. the implicit one */
	if (m == 2048)
		m = 1024, e++;
	return (uint16_t)(s | (uint16_t)((e + 14) << 10) | (uint16_t)(m - 1024));
}

static float elt(uint16_t v, int f16)
{
	return f16 ? h2f(v) : bf2f(v);
}

static void smoke_gemm(long long M, long long N, long long K)
{
	size_t na = (size_t)(M * K), nb = (size_t)(N * K), nc = (size_t)(M * N);
	uint16_t *A = malloc(na * 2), *B = malloc(nb * 2), *C = malloc(nc * 2);
	for (size_t i = 0; i < na; i++)
		A[i] = f2bf((float)(urand() * 2 - 1));
	for (size_t i = 0; i < nb; i++)
		B[i] = f2bf((float)(urand() * 2 - 1));
	uint64_t dA = dalloc(na * 2), dB = dalloc(nb * 2), dC = dalloc(nc * 2);
	ck(cuMemcpyHtoD(dA, A, na * 2), "HtoD");
	ck(cuMemcpyHtoD(dB, B, nb * 2), "HtoD");
	int rows[64], nr = M < 64 ? (int)M : 64;
	for (int i = 0; i < nr; i++)
		rows[i] = M <= 64 ? i : i == 0 ? 0 : i == 1 ? (int)M - 1 : (int)(urand() * (double)M);
	for (int route = -1; route < cake_gemm_route_count(); route++) {
		ck(cuMemsetD8(dC, 0xff, nc * 2), "memset");   /* NaN everywhere: an unwritten element shows */
		int rc = cake_gemm_bf16_ex((void *)(uintptr_t)dA, (void *)(uintptr_t)dB, (void *)(uintptr_t)dC, M, N, K, route,
		                           NULL, 0, NULL);
		if (rc == CAKE_GEMM_E_ROUTE)
			continue;   /* a forced route whose kernel does not take this shape */
		CUresult sr = cuCtxSynchronize();
		if (rc || sr) {
			printf("FAIL gemm %lldx%lldx%lld route %s: rc %d (%s), sync %d\n", M, N, K,
			       route < 0 ? "auto" : cake_gemm_route_name(route), rc, cake_gemm_last_error(), sr);
			failures++;
			if (sr)
				exit(1);
			continue;
		}
		if (launch_only) {
			printf("ok   gemm %lldx%lldx%lld route %-18s (auto: %s) launched\n", M, N, K,
			       route < 0 ? "auto" : cake_gemm_route_name(route), cake_gemm_route_name(cake_gemm_route(M, N, K)));
			continue;
		}
		ck(cuMemcpyDtoH(C, dC, nc * 2), "DtoH");
		double num = 0, den = 0;
		long long bad = 0;
		for (int i = 0; i < nr; i++)
			for (long long j = 0; j < N; j++) {
				double s = 0;
				for (long long k = 0; k < K; k++)
					s += (double)bf2f(A[rows[i] * K + k]) * bf2f(B[j * K + k]);
				float got = bf2f(C[(size_t)rows[i] * (size_t)N + (size_t)j]);
				if (!isfinite(got))
					bad++;
				num += (got - s) * (got - s);
				den += s * s;
			}
		double rel = sqrt(num / (den > 0 ? den : 1));
		int ok = bad == 0 && rel <= 1e-2;
		failures += !ok;
		printf("%s gemm %lldx%lldx%lld route %-18s (auto: %s) rel err %.2e, %lld unwritten/non-finite\n", ok ? "ok  " : "FAIL",
		       M, N, K, route < 0 ? "auto" : cake_gemm_route_name(route), cake_gemm_route_name(cake_gemm_route(M, N, K)),
		       rel, bad);
	}
	cuMemFree(dA), cuMemFree(dB), cuMemFree(dC);
	free(A), free(B), free(C);
}

/* CPU Lloyd step: labels of cent (near-ties: lab_ok[i] lists an alternative), then means. */
static void smoke_kmeans(long long B, long long N, long long D, long long K, int f16, int update)
{
	size_t nx = (size_t)(B * N * D), nc = (size_t)(B * K * D);
	uint16_t *X = malloc(nx * 2), *C0 = malloc(nc * 2), *C1 = malloc(nc * 2);
	int32_t *L = malloc(sizeof(int32_t) * (size_t)(B * N)), *L2 = malloc(sizeof(int32_t) * (size_t)(B * N));
	int32_t *cnt = malloc(sizeof(int32_t) * (size_t)(B * K));
	for (size_t i = 0; i < nx; i++) {
		float v = (float)(urand() * 2 - 1);
		X[i] = f16 ? f2h(v) : f2bf(v);
	}
	uint64_t dX = dalloc(nx * 2), dC = dalloc(nc * 2), dC2 = dalloc(nc * 2), dL = dalloc((size_t)(B * N) * 4),
	         dL2 = dalloc((size_t)(B * N) * 4), dN = dalloc((size_t)(B * K) * 4);
	ck(cuMemcpyHtoD(dX, X, nx * 2), "HtoD");
	int dt = f16 ? CAKE_KMEANS_F16 : CAKE_KMEANS_BF16;
	void *x = (void *)(uintptr_t)dX, *c = (void *)(uintptr_t)dC;
	int rc = cake_kmeans_init_even(x, c, B, N, D, K, dt, NULL);
	int it = 0;
	double sh = 0;
	if (!rc) {
		ck(cuCtxSynchronize(), "sync");
		ck(cuMemcpyDtoH(C0, dC, nc * 2), "DtoH");
		rc = cake_kmeans_fit(x, c, (void *)(uintptr_t)dL, B, N, D, K, dt, 1, 0.0, update, NULL, 0, &it, &sh, NULL);
	}
	if (!rc)
		rc = cake_kmeans_assign(x, c, (void *)(uintptr_t)dL2, B, N, D, K, dt, NULL, 0, NULL);
	CUresult sr = cuCtxSynchronize();
	char what[160];
	snprintf(what, sizeof what, "kmeans B=%lld N=%lld D=%lld K=%lld %s %s", B, N, D, K, f16 ? "f16" : "bf16",
	         update ? "atomic" : "sorted");
	if (rc || sr) {
		printf("FAIL %s: rc %d (%s), sync %d\n", what, rc, cake_kmeans_last_error(), sr);
		failures++;
		if (sr)
			exit(1);
		return;
	}
	if (launch_only) {
		rc = cake_kmeans_update(x, (void *)(uintptr_t)dL, (void *)(uintptr_t)dC2, (void *)(uintptr_t)dC2,
		                        (void *)(uintptr_t)dN, B, N, D, K, dt, update, NULL, 0, NULL);
		printf("%s %s: init, fit, assign and update %s\n", rc ? "FAIL" : "ok  ", what, rc ? cake_kmeans_last_error() : "launched");
		failures += rc != 0;
		goto done;
	}
	ck(cuMemcpyDtoH(C1, dC, nc * 2), "DtoH");
	ck(cuMemcpyDtoH(L, dL, (size_t)(B * N) * 4), "DtoH");
	/* even init: centroid j = point j * (N / K) */
	long long init_bad = 0;
	for (long long b = 0; b < B; b++)
		for (long long j = 0; j < K; j++)
			init_bad += memcmp(&C0[(size_t)((b * K + j) * D)], &X[(size_t)((b * N + j * (N / K)) * D)], (size_t)D * 2) != 0;
	/* labels of the initial centroids */
	long long mism = 0, ties = 0, range = 0;
	double *score = malloc(sizeof(double) * (size_t)K), *cn = malloc(sizeof(double) * (size_t)K);
	double *sum = calloc((size_t)(K * D), sizeof(double)), *ref = malloc(sizeof(double) * nc);
	long long *n = calloc((size_t)K, sizeof(long long));
	double uerr = 0;
	long long empty_bad = 0;
	for (long long b = 0; b < B; b++) {
		for (long long j = 0; j < K; j++) {
			double s = 0;
			for (long long d = 0; d < D; d++) {
				double v = elt(C0[(size_t)((b * K + j) * D + d)], f16);
				s += v * v;
			}
			cn[j] = s;
		}
		memset(sum, 0, sizeof(double) * (size_t)(K * D));
		memset(n, 0, sizeof(long long) * (size_t)K);
		for (long long i = 0; i < N; i++) {
			const uint16_t *xi = &X[(size_t)((b * N + i) * D)];
			double best = INFINITY, xx = 0;
			int bi = 0;
			for (long long j = 0; j < K; j++) {
				double dot = 0;
				for (long long d = 0; d < D; d++)
					dot += (double)elt(xi[d], f16) * elt(C0[(size_t)((b * K + j) * D + d)], f16);
				score[j] = cn[j] - 2 * dot;
				if (score[j] < best)
					best = score[j], bi = (int)j;
			}
			for (long long d = 0; d < D; d++)
				xx += (double)elt(xi[d], f16) * elt(xi[d], f16);
			int got = L[b * N + i];
			if (got < 0 || got >= K) {
				range++;
				continue;
			}
			if (got != bi) {
				if (score[got] - best <= ldexp(1, -8) * (xx + cn[got] + cn[bi]))
					ties++;
				else
					mism++;
			}
			n[got]++;
			for (long long d = 0; d < D; d++)
				sum[got * D + d] += elt(xi[d], f16);
		}
		for (long long j = 0; j < K; j++) {
			double e = 0, r = 0;
			for (long long d = 0; d < D; d++) {
				double want = n[j] ? sum[j * D + d] / (double)n[j] : elt(C0[(size_t)((b * K + j) * D + d)], f16);
				ref[(size_t)((b * K + j) * D + d)] = want;
				double got = elt(C1[(size_t)((b * K + j) * D + d)], f16);
				e += (got - want) * (got - want);
				r += want * want;
			}
			if (!n[j])
				empty_bad += memcmp(&C1[(size_t)((b * K + j) * D)], &C0[(size_t)((b * K + j) * D)], (size_t)D * 2) != 0;
			else if (sqrt(e / (r > 0 ? r : 1)) > uerr)
				uerr = sqrt(e / (r > 0 ? r : 1));
		}
	}
	/* assign on its own with the final centroids, update on its own from the fit's labels */
	ck(cuMemcpyDtoH(L2, dL2, (size_t)(B * N) * 4), "DtoH");
	long long arange = 0;
	for (long long i = 0; i < B * N; i++)
		arange += L2[i] < 0 || L2[i] >= K;
	ck(cuMemcpyHtoD(dC2, C0, nc * 2), "HtoD");
	/* centroids in and out through the same buffer: the library copies them in before it writes */
	rc = cake_kmeans_update(x, (void *)(uintptr_t)dL, (void *)(uintptr_t)dC2, (void *)(uintptr_t)dC2, (void *)(uintptr_t)dN,
	                        B, N, D, K, dt, update, NULL, 0, NULL);
	long long cnt_bad = 0;
	double uerr2 = 1;
	if (!rc && !cuCtxSynchronize()) {
		uint16_t *C3 = malloc(nc * 2);
		ck(cuMemcpyDtoH(C3, dC2, nc * 2), "DtoH");
		ck(cuMemcpyDtoH(cnt, dN, (size_t)(B * K) * 4), "DtoH");
		uerr2 = 0;
		for (long long j = 0; j < B * K; j++) {
			double e = 0, r = 0;
			for (long long d = 0; d < D; d++) {
				double got = elt(C3[(size_t)(j * D + d)], f16), want = ref[(size_t)(j * D + d)];
				e += (got - want) * (got - want);
				r += want * want;
			}
			if (sqrt(e / (r > 0 ? r : 1)) > uerr2)
				uerr2 = sqrt(e / (r > 0 ? r : 1));
		}
		long long tot = 0;
		for (long long i = 0; i < B * K; i++)
			tot += cnt[i];
		cnt_bad = tot != B * N;
		free(C3);
	}
	int it2 = 0;
	rc = cake_kmeans_fit(x, c, (void *)(uintptr_t)dL, B, N, D, K, dt, 50, 1e30, update, NULL, 0, &it2, NULL, NULL);
	int ok = !init_bad && !mism && !range && uerr <= 1e-2 && !empty_bad && !arange && it == 1 && !rc && it2 == 1 &&
	         !cnt_bad && uerr2 <= 1e-2;
	failures += !ok;
	printf("%s %s: init %lld bad, %lld mismatches (%lld ties), %lld out of range, update rel err %.2e, %lld empty changed, "
	       "assign %lld out of range, update alone rel err %.2e, counts %s, iterations %d/%d (rc %d)\n", ok ? "ok  " : "FAIL",
	       what, init_bad, mism, ties, range, uerr, empty_bad, arange, uerr2, cnt_bad ? "BAD" : "ok", it, it2, rc);
	free(score), free(cn), free(sum), free(n), free(ref);
done:
	free(X), free(C0), free(C1), free(L), free(L2), free(cnt);
	cuMemFree(dX), cuMemFree(dC), cuMemFree(dC2), cuMemFree(dL), cuMemFree(dL2), cuMemFree(dN);
}

int main(int argc, char **argv)
{
	launch_only = argc > 1 && !strcmp(argv[1], "--launch-only");
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		printf("smoke: no libcuda.so.1\n");
		return 69;
	}
#define S(f, n) *(void **)&f = dlsym(lib, n)
	S(cuInit, "cuInit");
	S(cuDeviceGet, "cuDeviceGet");
	S(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	S(cuCtxSetCurrent, "cuCtxSetCurrent");
	S(cuMemAlloc, "cuMemAlloc_v2");
	S(cuMemFree, "cuMemFree_v2");
	S(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
	S(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	S(cuMemsetD8, "cuMemsetD8_v2");
	S(cuCtxSynchronize, "cuCtxSynchronize");
	int dev;
	void *ctx;
	ck(cuInit(0), "cuInit");
	ck(cuDeviceGet(&dev, 0), "cuDeviceGet");
	ck(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	ck(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	printf("smoke: %s; %s\n", cake_gemm_version(), cake_kmeans_version());
	static const long long gs[][3] = {{1, 1, 8},      {7, 300, 72},    {128, 256, 64},  {129, 257, 136}, {256, 384, 64},
	                                  {1000, 512, 256}, {1024, 4096, 72}, {2048, 4352, 64}, {333, 5120, 1024}, {16384, 256, 64},
	                                  {256, 1024, 4096}, {256, 512, 4160}, {200, 1000, 4096},   /* split-K: even, uneven slices, padded */
	                                  {4096, 768, 128}, {4000, 768, 200},                      /* 128x192 tiles: direct, padded */
	                                  {256, 3072, 128}, {200, 3000, 200},                      /* 64x128 tiles: direct, padded */
	                                  {256, 11008, 4096}, {1024, 5120, 640}, {1000, 5120, 5120}, /* stream-K forced, direct and under padded */
	                                  {128, 8, 64}, {384, 200, 128},                           /* 128x192 clipped: N under one tile, past two */
	                                  {1280, 320, 64}};                                        /* persistent 128x160 */
	/* argv "gemm M N K": that shape alone (every route), for the sanitizers' slower tools */
	if (argc == 5 && !strcmp(argv[1], "gemm")) {
		smoke_gemm(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]));
		printf("smoke: %s (%d failures)\n", failures ? "FAILED" : "all ok", failures);
		return failures ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++)
		smoke_gemm(gs[i][0], gs[i][1], gs[i][2]);
	/* B, N, D, K, f16, also the atomic update */
	static const long long ks[][6] = {
		{1, 2000, 128, 100, 0, 1}, {2, 3000, 64, 1000, 1, 1}, {1, 4200, 128, 2048, 0, 0}, {1, 5000, 64, 4500, 0, 0},
		{3, 1025, 128, 256, 1, 1},  {1, 4096, 128, 1024, 0, 1}, {2, 4200, 64, 4096, 0, 0}, {1, 1, 128, 1, 0, 1},
		{2, 1500, 64, 200, 0, 1}};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
		for (int upd = 0; upd <= (int)ks[i][5]; upd++)
			smoke_kmeans(ks[i][0], ks[i][1], ks[i][2], ks[i][3], (int)ks[i][4], upd);
	printf("smoke: %s (%d failures)\n", failures ? "FAILED" : "all ok", failures);
	return failures ? 1 : 0;
}
