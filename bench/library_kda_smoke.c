/*
 * library_kda_smoke.c — libcake_kda.so from C alone (no torch): every route of the KDA library
 * on small shapes against a float64 per-token recurrence, so a broken runtime, slot table or
 * binding shows before the Python benchmark. bench/library.sh builds and runs it:
 *
 *   cc -O2 -I$PKG/include bench/library_kda_smoke.c -L$PKG/lib -Wl,-rpath,$PKG/lib -lcake_kda -ldl -lm
 *
 * Each case draws seeded inputs (q, k, v, g_raw, beta logits uniform in [-1, 1], bf16; A_log in
 * [-3, 0] and dt_bias in [-4, 0], f32; the initial state uniform in [-1, 1] when the case has
 * one), fills o and the final state with NaN bytes, calls cake_kda_prefill or cake_kda_decode
 * and compares every (sequence, head) pair with the recurrence of src/family/kda.h in double:
 * the relative L2 error of o and of the final state within the family's tolerance (prefill 8e-3;
 * decode 4e-3 on o, 1e-4 on an f32 state, 4e-3 on a bf16 one) and no NaN anywhere. The cases
 * cover every route (cake_kda_route names it): the split chain at T = 64, 100, 200 and packed
 * ragged sequences, its paired state pass at H = 96 (fixed and packed: more half chains than a
 * 132-SM GPU runs in a wave), T < 64 for the per-token fallbacks (B sequences, packed, bf16 per
 * sequence), the softplus gate, decode T = 1 and 5 in both state dtypes, with and without an
 * initial state, the final state in place, a caller's workspace.
 * --launch-only runs every call without reading results: tests/cli/library.sh runs it on the
 * stand-in driver (tests/cli/fake_cuda.c), where every call must still succeed (the
 * dispatcher, the slot tables' upload, the workspace, tensor maps and launch arguments).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cake_kda.h"

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

static int failures, launch_only;
enum { DK = 128, DV = 128 };

static void ck(CUresult r, const char *what)
{
	if (r) {
		fprintf(stderr, "kda smoke: %s failed (%d)\n", what, r);
		exit(2);
	}
}

static uint64_t dalloc(size_t n)
{
	uint64_t p = 0;
	ck(cuMemAlloc(&p, n ? n : 16), "cuMemAlloc");
	return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
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

typedef struct Case {
	int decode, bf16, lb, init, final_inplace, own_ws;
	long long B, T, H;
	int nseq;
	int lens[8];   /* packed sequences (nseq > 0) */
	float lambda;
} Case;

/* The recurrence of one (sequence, head) in double: o [len, DV] and S [DV, DK] (V-first). */
static void reference(const Case *c, const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *g,
                      const uint16_t *beta, const float *alog, const float *dtb, const double *s0, long long T, long long b,
                      long long t0, long long len, long long h, double *o, double *S)
{
	long long H = c->H;
	memcpy(S, s0, sizeof *S * DK * DV);
	double qn[DK], kn[DK], a[DK];
	for (long long t = 0; t < len; t++) {
		size_t row = (size_t)(((b * T + t0 + t) * H + h) * DK);
		double sq = 0, sk = 0;
		for (int i = 0; i < DK; i++) {
			qn[i] = bf2f(q[row + i]), kn[i] = bf2f(k[row + i]);
			sq += qn[i] * qn[i], sk += kn[i] * kn[i];
		}
		double rq = 1 / sqrt(sq + 1e-6) / sqrt((double)DK), rk = 1 / sqrt(sk + 1e-6);
		for (int i = 0; i < DK; i++) {
			qn[i] *= rq, kn[i] *= rk;
			double x = bf2f(g[row + i]) + dtb[h * DK + i], e = exp(alog[h]);
			double gg = c->lb ? c->lambda / (1 + exp(-e * x)) : -e * (x > 20 ? x : log1p(exp(x)));
			a[i] = exp(gg);
		}
		double bt = 1 / (1 + exp(-(double)bf2f(beta[(b * T + t0 + t) * H + h])));
		for (int r = 0; r < DV; r++) {
			double *s = S + r * DK, d = 0, vr = bf2f(v[row + r]);
			for (int i = 0; i < DK; i++)
				s[i] *= a[i], d += s[i] * kn[i];
			d = bt * (vr - d);
			double out = 0;
			for (int i = 0; i < DK; i++)
				s[i] += d * kn[i], out += s[i] * qn[i];
			o[t * DV + r] = out;
		}
	}
}

static double rel(const double *ref, const double *got, size_t n, int *nan)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(got[i] == got[i]) || isinf(got[i]))
			(*nan)++;
		num += (got[i] - ref[i]) * (got[i] - ref[i]), den += ref[i] * ref[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void run_case(const Case *c)
{
	long long B = c->nseq ? 1 : c->B, T = c->T, H = c->H, N = c->nseq ? c->nseq : B;
	int32_t cu[9] = {0};
	if (c->nseq) {
		for (int i = 0; i < c->nseq; i++)
			cu[i + 1] = cu[i] + c->lens[i];
		T = cu[c->nseq];
	}
	size_t ntok = (size_t)(B * T * H), nx = ntok * DK, ns = (size_t)(N * H) * DK * DV, es = c->bf16 ? 2 : 4;
	uint16_t *q = malloc(nx * 2), *k = malloc(nx * 2), *v = malloc(nx * 2), *g = malloc(nx * 2), *beta = malloc(ntok * 2),
	         *o = malloc(nx * 2);
	float *alog = malloc(sizeof(float) * (size_t)H), *dtb = malloc(sizeof(float) * (size_t)H * DK);
	void *s0 = malloc(ns * es), *sn = malloc(ns * es);
	double *s0d = calloc(ns, sizeof(double));
	for (size_t i = 0; i < nx; i++) {
		q[i] = f2bf((float)(urand() * 2 - 1)), k[i] = f2bf((float)(urand() * 2 - 1));
		v[i] = f2bf((float)(urand() * 2 - 1)), g[i] = f2bf((float)(urand() * 2 - 1));
	}
	for (size_t i = 0; i < ntok; i++)
		beta[i] = f2bf((float)(urand() * 2 - 1));
	for (long long h = 0; h < H; h++)
		alog[h] = (float)(-3 * urand());
	for (long long i = 0; i < H * DK; i++)
		dtb[i] = (float)(-4 * urand());
	for (size_t i = 0; c->init && i < ns; i++) {
		float x = (float)(urand() * 2 - 1);
		if (c->bf16) {
			((uint16_t *)s0)[i] = f2bf(x);
			s0d[i] = bf2f(f2bf(x));
		} else {
			((float *)s0)[i] = x;
			s0d[i] = x;
		}
	}
	uint64_t dq = dalloc(nx * 2), dk = dalloc(nx * 2), dv = dalloc(nx * 2), dg = dalloc(nx * 2), db = dalloc(ntok * 2),
	         dO = dalloc(nx * 2), da = dalloc(sizeof(float) * (size_t)H), dd = dalloc(sizeof(float) * (size_t)H * DK),
	         ds0 = dalloc(ns * es), dsn = c->final_inplace ? ds0 : dalloc(ns * es), dws = 0;
	ck(cuMemcpyHtoD(dq, q, nx * 2), "HtoD"), ck(cuMemcpyHtoD(dk, k, nx * 2), "HtoD");
	ck(cuMemcpyHtoD(dv, v, nx * 2), "HtoD"), ck(cuMemcpyHtoD(dg, g, nx * 2), "HtoD");
	ck(cuMemcpyHtoD(db, beta, ntok * 2), "HtoD"), ck(cuMemcpyHtoD(da, alog, sizeof(float) * (size_t)H), "HtoD");
	ck(cuMemcpyHtoD(dd, dtb, sizeof(float) * (size_t)H * DK), "HtoD");
	if (c->init)
		ck(cuMemcpyHtoD(ds0, s0, ns * es), "HtoD");
	ck(cuMemsetD8(dO, 0xff, nx * 2), "memset");
	if (!c->final_inplace)
		ck(cuMemsetD8(dsn, 0xff, ns * es), "memset");
	int dt = c->bf16 ? CAKE_KDA_BF16 : CAKE_KDA_F32, gate = c->lb ? CAKE_KDA_GATE_LOWER_BOUND : CAKE_KDA_GATE_SOFTPLUS;
	const int32_t *cup = c->nseq ? cu : NULL;
	size_t wsb = 0;
	if (c->own_ws) {
		wsb = c->decode ? cake_kda_decode_workspace_size(B, T, H, DK, DV, dt, gate, c->init, 1)
		                : cake_kda_prefill_workspace_size(B, T, H, DK, DV, cup, N, dt, gate, c->init, 1);
		dws = dalloc(wsb + 256);
		dws = (dws + 255) & ~(uint64_t)255;
	}
	int route = cake_kda_route(c->decode, B, T, H, DK, DV, cup, N, dt, gate);
	void *S0 = c->init ? (void *)(uintptr_t)ds0 : NULL, *SN = (void *)(uintptr_t)dsn;
	int rc = c->decode
	       ? cake_kda_decode((void *)(uintptr_t)dq, (void *)(uintptr_t)dk, (void *)(uintptr_t)dv, (void *)(uintptr_t)dg,
	                         (void *)(uintptr_t)db, (void *)(uintptr_t)da, (void *)(uintptr_t)dd, S0, SN,
	                         (void *)(uintptr_t)dO, B, T, H, DK, DV, dt, gate, c->lambda, (void *)(uintptr_t)dws, wsb, NULL)
	       : cake_kda_prefill((void *)(uintptr_t)dq, (void *)(uintptr_t)dk, (void *)(uintptr_t)dv, (void *)(uintptr_t)dg,
	                          (void *)(uintptr_t)db, (void *)(uintptr_t)da, (void *)(uintptr_t)dd, S0, SN,
	                          (void *)(uintptr_t)dO, B, T, H, DK, DV, cup, N, dt, gate, c->lambda, (void *)(uintptr_t)dws,
	                          wsb, NULL);
	char what[256];
	int off = snprintf(what, sizeof what, "kda %s B=%lld T=%lld H=%lld", c->decode ? "decode" : "prefill", B, T, H);
	for (int i = 0; i < c->nseq; i++)
		off += snprintf(what + off, sizeof what - (size_t)off, "%s%d", i ? ":" : " seqlens=", c->lens[i]);
	snprintf(what + off, sizeof what - (size_t)off, " %s %s%s%s%s route %s", c->bf16 ? "bf16" : "f32", c->lb ? "lb" : "softplus",
	         c->init ? " init" : "", c->final_inplace ? " in-place" : "", c->own_ws ? " ws" : "", cake_kda_route_name(route));
	if (rc) {
		printf("FAIL %s: rc=%d %s\n", what, rc, cake_kda_last_error());
		failures++;
	} else if (launch_only) {
		printf("ok   %s\n", what);
	} else {
		ck(cuCtxSynchronize(), "sync");
		ck(cuMemcpyDtoH(o, dO, nx * 2), "DtoH");
		ck(cuMemcpyDtoH(sn, dsn, ns * es), "DtoH");
		double *ro = malloc(sizeof(double) * (size_t)T * DV), *rs = malloc(sizeof(double) * DK * DV),
		       *go = malloc(sizeof(double) * (size_t)T * DV), *gs = malloc(sizeof(double) * DK * DV);
		double worst_o = 0, worst_s = 0;
		int nan = 0;
		for (long long n = 0; n < N; n++)
			for (long long h = 0; h < H; h++) {
				long long b = c->nseq ? 0 : n, t0 = c->nseq ? cu[n] : 0, len = c->nseq ? cu[n + 1] - cu[n] : T;
				reference(c, q, k, v, g, beta, alog, dtb, s0d + (size_t)(n * H + h) * DK * DV, T, b, t0, len, h, ro, rs);
				for (long long t = 0; t < len; t++)
					for (int r = 0; r < DV; r++)
						go[t * DV + r] = bf2f(o[(size_t)(((b * T + t0 + t) * H + h) * DV + r)]);
				for (int i = 0; i < DK * DV; i++) {
					size_t at = (size_t)(n * H + h) * DK * DV + (size_t)i;
					gs[i] = c->bf16 ? bf2f(((uint16_t *)sn)[at]) : ((float *)sn)[at];
				}
				double eo = rel(ro, go, (size_t)(len * DV), &nan), es2 = rel(rs, gs, DK * DV, &nan);
				worst_o = eo > worst_o ? eo : worst_o;
				worst_s = es2 > worst_s ? es2 : worst_s;
			}
		double tol_o = c->decode ? 4e-3 : 8e-3, tol_s = c->decode ? (c->bf16 ? 4e-3 : 1e-4) : 8e-3;
		int ok = !nan && worst_o <= tol_o && worst_s <= tol_s;
		printf("%s %s: o rel %.2e (tol %.0e), state rel %.2e (tol %.0e), %d NaN\n", ok ? "ok  " : "FAIL", what, worst_o,
		       tol_o, worst_s, tol_s, nan);
		failures += !ok;
		free(ro), free(rs), free(go), free(gs);
	}
	uint64_t bufs[] = {dq, dk, dv, dg, db, dO, da, dd, ds0};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		cuMemFree(bufs[i]);
	if (!c->final_inplace)
		cuMemFree(dsn);
	free(q), free(k), free(v), free(g), free(beta), free(o), free(alog), free(dtb), free(s0), free(sn), free(s0d);
}

int main(int argc, char **argv)
{
	launch_only = argc > 1 && !strcmp(argv[1], "--launch-only");
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "kda smoke: no libcuda.so.1\n");
		return 2;
	}
#define S(f, n) *(void **)&f = dlsym(lib, n)
	S(cuInit, "cuInit"), S(cuDeviceGet, "cuDeviceGet"), S(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	S(cuCtxSetCurrent, "cuCtxSetCurrent"), S(cuMemAlloc, "cuMemAlloc_v2"), S(cuMemFree, "cuMemFree_v2");
	S(cuMemcpyHtoD, "cuMemcpyHtoD_v2"), S(cuMemcpyDtoH, "cuMemcpyDtoH_v2"), S(cuMemsetD8, "cuMemsetD8_v2");
	S(cuCtxSynchronize, "cuCtxSynchronize");
#undef S
	int dev;
	void *ctx;
	ck(cuInit(0), "cuInit"), ck(cuDeviceGet(&dev, 0), "cuDeviceGet");
	ck(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"), ck(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	static const Case cases[] = {
		/* decode, bf16, lb, init, in place, ws; B, T, H; nseq, lens; lambda */
		{0, 0, 1, 1, 0, 0, 1, 64, 2, 0, {0}, -5.0f},          /* split, one full slot pair */
		{0, 0, 1, 1, 0, 1, 2, 100, 2, 0, {0}, -5.0f},         /* split, partial slots, caller's workspace */
		{0, 0, 1, 0, 0, 0, 1, 200, 1, 0, {0}, -1.0f},         /* split, no initial state */
		{0, 1, 1, 1, 1, 0, 2, 130, 1, 0, {0}, -5.0f},         /* split_bf16 in place */
		{0, 0, 1, 1, 0, 0, 1, 0, 2, 4, {70, 1, 64, 9}, -5.0f},   /* split over ragged packed sequences */
		{0, 1, 1, 1, 0, 1, 1, 0, 1, 3, {100, 5, 40}, -2.0f},  /* split_bf16 packed */
		{0, 0, 1, 1, 0, 0, 3, 100, 96, 0, {0}, -5.0f},        /* split_paired: 576 half chains > 132 SMs */
		{0, 1, 1, 1, 0, 1, 1, 0, 96, 3, {100, 5, 40}, -3.0f}, /* split_bf16_paired packed */
		{0, 0, 1, 1, 0, 0, 3, 17, 2, 0, {0}, -5.0f},          /* prefill_lb (T < 64) */
		{0, 0, 1, 1, 0, 0, 1, 0, 2, 3, {20, 1, 30}, -5.0f},   /* prefill_varlen_lb */
		{0, 1, 1, 1, 0, 0, 2, 33, 1, 0, {0}, -5.0f},          /* prefill_bf16_lb */
		{0, 1, 1, 1, 0, 0, 1, 0, 2, 3, {7, 1, 40}, -5.0f},    /* prefill_bf16_lb per sequence */
		{0, 0, 0, 1, 0, 0, 2, 80, 2, 0, {0}, 0.0f},           /* prefill (softplus) */
		{0, 0, 0, 0, 0, 0, 1, 0, 1, 2, {50, 31}, 0.0f},       /* prefill_varlen (softplus) */
		{1, 0, 0, 1, 0, 0, 3, 1, 2, 0, {0}, 0.0f},            /* decode */
		{1, 0, 1, 1, 1, 0, 2, 5, 2, 0, {0}, -5.0f},           /* decode_lb in place */
		{1, 1, 0, 1, 0, 1, 2, 1, 1, 0, {0}, 0.0f},            /* decode_bf16, caller's workspace */
		{1, 1, 1, 0, 0, 0, 1, 16, 3, 0, {0}, -3.0f},          /* decode_bf16_lb, T = 16, zero state */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
	printf("kda smoke: %s (%d failure%s)\n", failures ? "FAILED" : "all ok", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
