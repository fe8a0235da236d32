/*
 * test_kda.c — the Kimi Delta Attention families (src/family/kda.c).
 *
 * 1. The float64 recurrence on cases small enough to write the state by
 *    hand: T = 1 and T = 2 with K = V = 2, both gate forms, an initial state,
 *    both state layouts.
 * 2. The float32 chunked evaluation agrees with the recurrence (3e-7 without
 *    bf16 rounding: the chunk algebra of docs/KDA.md is right), and with
 *    bf16 matrix operands stays inside the prefill tolerance: the numbers the
 *    tolerance is set from (test_tolerance_measured prints them).
 * 3. kda_check passes correct outputs and fails wrong ones: a missing decay,
 *    a wrong beta, a transposed state, one corrupted token, NaN poison.
 * 4. Refusals: cu_seqlens not starting at 0, not monotone, with a
 *    zero-length sequence, not ending at T; T = 0; a head dimension other
 *    than the kernel's; cu_seqlens with B != 1; a lower bound out of range;
 *    a NaN input (reported); mismatched dtypes (CK-SEM-044) and shapes (the
 *    family's refuse hook).
 * 5. The chunk-slot tables, and the state pass's layout (kda_state_paired).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cake.h"
#include "family/kda.h"

static uint16_t B16(float f)
{
	return oracle_f32_to_bf16(f);
}

/* A seeded random problem (the app's generator, in miniature). */
typedef struct Rand {
	KdaProblem p;
	uint16_t *q, *k, *v, *g, *beta;
	float *alog, *dtb, *s0;
	int64_t *cu;
} Rand;

static void rand_make(Rand *r, long long B, long long T, long long H, long long N, bool packed, int gate, uint64_t seed)
{
	memset(r, 0, sizeof *r);
	long long K = 128, V = 128;
	size_t nk = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V);
	r->q = malloc(2 * nk), r->k = malloc(2 * nk), r->g = malloc(2 * nk), r->v = malloc(2 * nv);
	r->beta = malloc(2 * (size_t)(B * T * H));
	r->alog = malloc(4 * (size_t)H), r->dtb = malloc(4 * (size_t)(H * K)), r->s0 = malloc(4 * (size_t)(N * H * K * V));
	oracle_fill_bf16(r->q, nk, seed);
	oracle_fill_bf16(r->k, nk, seed + 1);
	oracle_fill_bf16(r->g, nk, seed + 2);
	oracle_fill_bf16(r->v, nv, seed + 3);
	oracle_fill_bf16(r->beta, (size_t)(B * T * H), seed + 4);
	kda_fill_gate_params(r->alog, r->dtb, H, K, seed + 5);
	uint64_t st = seed + 6;
	for (long long i = 0; i < N * H * K * V; i++)
		r->s0[i] = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
	if (packed) {
		r->cu = malloc(sizeof(int64_t) * (size_t)(N + 1));
		kda_segments(N, T, seed + 7, r->cu);
	}
	r->p = (KdaProblem){.B = B, .T = T, .H = H, .K = K, .V = V, .N = N, .cu = r->cu, .packed = packed, .gate = gate,
	                    .lower_bound = -5, .q = r->q, .k = r->k, .v = r->v, .g = r->g, .beta = r->beta, .alog = r->alog,
	                    .dtb = r->dtb, .s0 = r->s0};
}

static void rand_free(Rand *r)
{
	free(r->q), free(r->k), free(r->g), free(r->v), free(r->beta), free(r->alog), free(r->dtb), free(r->s0), free(r->cu);
}

/* ---- 1. hand-computed cases ---- */

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

/* One delta step on a 2 x 2 state S[k][v], by hand. */
static void step2(double S[2][2], const double q[2], const double k[2], const double v[2], double alpha[2], double beta, double o[2])
{
	for (int a = 0; a < 2; a++)
		for (int c = 0; c < 2; c++)
			S[a][c] *= alpha[a];
	double u0 = S[0][0] * k[0] + S[1][0] * k[1], u1 = S[0][1] * k[0] + S[1][1] * k[1];
	double d0 = beta * (v[0] - u0), d1 = beta * (v[1] - u1);
	S[0][0] += k[0] * d0, S[0][1] += k[0] * d1;
	S[1][0] += k[1] * d0, S[1][1] += k[1] * d1;
	o[0] = S[0][0] * q[0] + S[1][0] * q[1];
	o[1] = S[0][1] * q[0] + S[1][1] * q[1];
}

static void test_recurrence_by_hand(void **state)
{
	(void)state;
	/* K = V = 2, one sequence, one head, T = 2 tokens (bf16-exact values) */
	uint16_t q[4] = {B16(1), B16(0), B16(0.5f), B16(0.5f)};
	uint16_t k[4] = {B16(0), B16(2), B16(1), B16(-1)};
	uint16_t v[4] = {B16(1), B16(-1), B16(0.25f), B16(2)};
	uint16_t g[4] = {B16(0), B16(0), B16(1), B16(-1)};
	uint16_t be[2] = {B16(0), B16(1)};
	float alog[1] = {0}, dtb[2] = {0, 0};
	/* S[k][v] = [[1, 2], [3, 4]]; V-first memory [v][k] = 1 3 2 4 */
	float s0_vk[4] = {1, 3, 2, 4}, s0_kv[4] = {1, 2, 3, 4};
	for (int lay = 0; lay < 2; lay++)
		for (int gate = 0; gate < 2; gate++) {
			KdaProblem p = {.B = 1, .T = 2, .H = 1, .K = 2, .V = 2, .N = 1, .gate = gate, .lower_bound = -2, .state_kv = lay == 1,
			                .q = q, .k = k, .v = v, .g = g, .beta = be, .alog = alog, .dtb = dtb, .s0 = lay ? s0_kv : s0_vk};
			double o[4], S[4];
			assert_int_equal(kda_ref_head(&p, 0, 0, o, S), 0);
			double H[2][2] = {{1, 2}, {3, 4}}, oh[2];
			for (int t = 0; t < 2; t++) {
				double qq[2] = {oracle_bf16_to_f32(q[2 * t]), oracle_bf16_to_f32(q[2 * t + 1])};
				double kk[2] = {oracle_bf16_to_f32(k[2 * t]), oracle_bf16_to_f32(k[2 * t + 1])};
				double nq = 1 / sqrt(qq[0] * qq[0] + qq[1] * qq[1] + 1e-6) / sqrt(2.0), nk = 1 / sqrt(kk[0] * kk[0] + kk[1] * kk[1] + 1e-6);
				double qh[2] = {qq[0] * nq, qq[1] * nq}, kh[2] = {kk[0] * nk, kk[1] * nk};
				double vv[2] = {oracle_bf16_to_f32(v[2 * t]), oracle_bf16_to_f32(v[2 * t + 1])};
				double al[2];
				for (int d = 0; d < 2; d++) {
					double x = oracle_bf16_to_f32(g[2 * t + d]);   /* A_log = 0, dt_bias = 0 */
					al[d] = exp(gate ? -2 * sig(x) : -log1p(exp(x)));
				}
				step2(H, qh, kh, vv, al, sig(oracle_bf16_to_f32(be[t])), oh);
				assert_true(fabs(o[2 * t] - oh[0]) < 1e-12 && fabs(o[2 * t + 1] - oh[1]) < 1e-12);
				if (t == 0 && gate == 0) {
					/* token 1 written out: alpha = 1/2, beta = 1/2, k^ = (0, 2/sqrt(4 + 1e-6)),
					 * q^ = (1/sqrt(1 + 1e-6)/sqrt(2), 0): S = [[0.5, 1], [1.5 + c d0, 2 + c d1]],
					 * d = 0.5 ((1, -1) - c (1.5, 2)), o = q^_0 (0.5, 1) */
					double c = 2 / sqrt(4 + 1e-6), d0 = 0.5 * (1 - 1.5 * c), d1 = 0.5 * (-1 - 2 * c);
					double q0 = 1 / sqrt(1 + 1e-6) / sqrt(2.0);
					assert_true(fabs(H[0][0] - 0.5) < 1e-15 && fabs(H[0][1] - 1) < 1e-15);
					assert_true(fabs(H[1][0] - (1.5 + c * d0)) < 1e-12 && fabs(H[1][1] - (2 + c * d1)) < 1e-12);
					assert_true(fabs(oh[0] - 0.5 * q0) < 1e-12 && fabs(oh[1] - q0) < 1e-12);
				}
			}
			for (int a = 0; a < 2; a++)
				for (int c = 0; c < 2; c++)
					assert_true(fabs(S[a * 2 + c] - H[a][c]) < 1e-12);
		}
	/* T = 1 without an initial state: S = beta k^ v^T, o = S^T q^ */
	KdaProblem p = {.B = 1, .T = 1, .H = 1, .K = 2, .V = 2, .N = 1, .q = q, .k = k, .v = v, .g = g, .beta = be, .alog = alog,
	                .dtb = dtb};
	double o[2], S[4];
	assert_int_equal(kda_ref_head(&p, 0, 0, o, S), 0);
	double c = 2 / sqrt(4 + 1e-6);
	assert_true(fabs(S[0]) < 1e-15 && fabs(S[1]) < 1e-15);   /* k^_0 = 0: row 0 stays empty */
	assert_true(fabs(S[2] - 0.5 * c) < 1e-12 && fabs(S[3] + 0.5 * c) < 1e-12);
	assert_true(fabs(o[0]) < 1e-15 && fabs(o[1]) < 1e-15);  /* q^ = (q0, 0) sees only row 0 */
	assert_int_equal(kda_ref_head(&p, 1, 0, o, S), -1);
}

/* ---- 2. the chunked evaluation and the measured tolerance ---- */

/* Relative L2 error of a float array (rounded to bf16 when r16) against a double one. */
static double rel(const float *x, const double *r, long long n, bool r16)
{
	double a = 0, b = 0;
	for (long long i = 0; i < n; i++) {
		double v = r16 ? oracle_bf16_to_f32(oracle_f32_to_bf16(x[i])) : x[i];
		a += (v - r[i]) * (v - r[i]);
		b += r[i] * r[i];
	}
	return sqrt(a / b);
}

static void test_chunked_matches_recurrence(void **state)
{
	(void)state;
	Rand r;
	rand_make(&r, 1, 200, 1, 3, true, KDA_GATE_SOFTPLUS, 11);   /* three packed sequences, ragged chunks */
	double *o = malloc(sizeof(double) * 200 * 128), *S = malloc(sizeof(double) * 128 * 128);
	float *of = malloc(sizeof(float) * 200 * 128), *Sf = malloc(sizeof(float) * 128 * 128);
	for (long long n = 0; n < 3; n++) {
		long long t0, b, len = kda_seq(&r.p, n, &t0, &b);
		assert_true(len >= 1);
		assert_int_equal(kda_ref_head(&r.p, n, 0, o, S), 0);
		for (int C = 16; C <= 64; C *= 2) {
			assert_int_equal(kda_chunked_f32_head(&r.p, n, 0, C, false, of, Sf), 0);
			assert_true(rel(of, o, len * 128, false) < 1e-5);
			assert_true(rel(Sf, S, 128 * 128, false) < 1e-5);
		}
	}
	free(o), free(S), free(of), free(Sf);
	rand_free(&r);
}

static void test_tolerance_measured(void **state)
{
	(void)state;
	long long T = 512;
	double *o = malloc(sizeof(double) * (size_t)T * 128), *S = malloc(sizeof(double) * 128 * 128);
	float *of = malloc(sizeof(float) * (size_t)T * 128), *Sf = malloc(sizeof(float) * 128 * 128);
	double w_o = 0, w_s = 0, w_round = 0;
	for (int gate = 0; gate < 2; gate++)
		for (uint64_t seed = 1; seed <= 2; seed++) {
			Rand r;
			rand_make(&r, 1, T, 2, 1, false, gate, 100 * seed);
			for (long long h = 0; h < 2; h++) {
				kda_ref_head(&r.p, 0, h, o, S);
				kda_chunked_f32_head(&r.p, 0, h, 64, true, of, Sf);
				double eo = rel(of, o, T * 128, true), es = rel(Sf, S, 128 * 128, false);
				float *ro = malloc(sizeof(float) * (size_t)T * 128);
				for (long long i = 0; i < T * 128; i++)
					ro[i] = (float)o[i];
				double er = rel(ro, o, T * 128, true);
				free(ro);
				w_o = eo > w_o ? eo : w_o;
				w_s = es > w_s ? es : w_s;
				w_round = er > w_round ? er : w_round;
			}
			rand_free(&r);
		}
	print_message("  kda tolerance: f32 chunked (C = 64, bf16 operands) vs f64 recurrence, T = %lld, 8 heads: "
	              "o %.2e, state %.2e; bf16 rounding of o alone %.2e; tolerance o %.0e, state %.0e\n",
	              T, w_o, w_s, w_round, KDA_TOL_PREFILL.o, KDA_TOL_PREFILL.state);
	assert_true(w_o < KDA_TOL_PREFILL.o / 1.5 && w_s < KDA_TOL_PREFILL.state / 1.5);
	assert_true(w_round < KDA_TOL_DECODE.o / 1.5);   /* a per-token f32 kernel fits decode's tolerance */
	assert_true(w_s > KDA_TOL_DECODE.state);          /* ... and a chunked bf16 one would not */
	free(o), free(S), free(of), free(Sf);
}

/* ---- 3. the check ---- */

/* o (bf16) and the final states (f32) of r from the recurrence. */
static void outputs(const KdaProblem *p, uint16_t *o, float *sn)
{
	double *oh = malloc(sizeof(double) * (size_t)(p->T * p->V)), *S = malloc(sizeof(double) * (size_t)(p->K * p->V));
	for (long long n = 0; n < p->N; n++)
		for (long long h = 0; h < p->H; h++) {
			long long t0, b, len = kda_seq(p, n, &t0, &b);
			kda_ref_head(p, n, h, oh, S);
			for (long long t = 0; t < len; t++)
				for (long long v = 0; v < p->V; v++)
					o[(((b * p->T) + t0 + t) * p->H + h) * p->V + v] = B16((float)oh[t * p->V + v]);
			for (long long k = 0; k < p->K; k++)
				for (long long v = 0; v < p->V; v++)
					sn[((n * p->H + h) * p->V + v) * p->K + k] = (float)S[k * p->V + v];
		}
	free(oh), free(S);
}

static int run_check(const KdaProblem *p, const uint16_t *o, const float *sn, KdaCheck *c)
{
	int np;
	long long *pairs = kda_sample_pairs(p, 1000, 1e12, 3, &np);
	int rc = kda_check(p, o, sn, pairs, np, &KDA_TOL_DECODE, 2, c);
	free(pairs);
	return rc;
}

static void test_check_catches_wrong_outputs(void **state)
{
	(void)state;
	Rand r;
	rand_make(&r, 2, 4, 3, 2, false, KDA_GATE_SOFTPLUS, 21);
	size_t no = 2 * 4 * 3 * 128, ns = 2 * 3 * 128 * 128;
	uint16_t *o = malloc(2 * no), *o2 = malloc(2 * no);
	float *sn = malloc(4 * ns), *sn2 = malloc(4 * ns);
	outputs(&r.p, o, sn);
	KdaCheck c;
	assert_int_equal(run_check(&r.p, o, sn, &c), 0);
	assert_int_equal(c.heads, 6);
	assert_true(c.o_rel < 2.5e-3 && c.s_rel < 1e-6);
	/* a missing decay: the outputs of a problem whose gate is zero */
	Rand z;
	rand_make(&z, 2, 4, 3, 2, false, KDA_GATE_LOWER_BOUND, 21);
	z.p.lower_bound = -1e-30;   /* exp(g) = 1 */
	outputs(&z.p, o2, sn2);
	assert_int_equal(run_check(&r.p, o2, sn2, &c), 1);
	assert_true(c.o_rel > 1e-2);
	rand_free(&z);
	/* a wrong beta (beta = 1) */
	uint16_t *b1 = malloc(2 * 2 * 4 * 3);
	for (int i = 0; i < 24; i++)
		b1[i] = B16(30);
	KdaProblem pb = r.p;
	pb.beta = b1;
	outputs(&pb, o2, sn2);
	assert_int_equal(run_check(&r.p, o2, sn2, &c), 1);
	free(b1);
	/* a transposed state */
	memcpy(sn2, sn, 4 * ns);
	for (long long q = 0; q < 6; q++)
		for (int a = 0; a < 128; a++)
			for (int b = 0; b < 128; b++)
				sn2[q * 16384 + a * 128 + b] = sn[q * 16384 + b * 128 + a];
	assert_int_equal(run_check(&r.p, o, sn2, &c), 1);
	assert_true(c.s_rel > 1e-2);
	/* one corrupted token of one head: past the element bound */
	memcpy(o2, o, 2 * no);
	for (int v = 0; v < 128; v++)
		o2[((1 * 4 + 2) * 3 + 1) * 128 + v] = B16(oracle_bf16_to_f32(o[((1 * 4 + 2) * 3 + 1) * 128 + v]) * 1.5f);
	assert_int_equal(run_check(&r.p, o2, sn, &c), 1);
	assert_true(c.bad > 0 && !c.first_bad_state);
	assert_int_equal(c.worst_n, 1);
	assert_int_equal(c.worst_h, 1);
	/* NaN poison left in an output that no checked pair covers still fails */
	memcpy(o2, o, 2 * no);
	o2[no - 1] = 0xffff;
	assert_int_equal(run_check(&r.p, o2, sn, &c), 1);
	assert_int_equal(c.o_nan, 1);
	free(o), free(o2), free(sn), free(sn2);
	rand_free(&r);
	/* packed sequences: the same check through cu_seqlens */
	rand_make(&r, 1, 40, 2, 5, true, KDA_GATE_LOWER_BOUND, 31);
	o = malloc(2 * 40 * 2 * 128);
	sn = malloc(4 * 5 * 2 * 128 * 128);
	outputs(&r.p, o, sn);
	assert_int_equal(run_check(&r.p, o, sn, &c), 0);
	assert_int_equal(c.heads, 10);
	free(o), free(sn);
	rand_free(&r);
}

/* ---- 4. refusals ---- */

static void test_refusals(void **state)
{
	(void)state;
	char buf[256];
	int64_t ok[] = {0, 3, 7, 10}, start[] = {1, 3, 10}, mono[] = {0, 5, 3, 10}, zero[] = {0, 3, 3, 10}, end[] = {0, 3, 9};
	assert_null(kda_refuse_seqlens(ok, 4, 10, buf, sizeof buf));
	assert_non_null(strstr(kda_refuse_seqlens(start, 3, 10, buf, sizeof buf), "start at token 0"));
	assert_non_null(strstr(kda_refuse_seqlens(mono, 4, 10, buf, sizeof buf), "not monotone"));
	assert_non_null(strstr(kda_refuse_seqlens(zero, 4, 10, buf, sizeof buf), "zero length"));
	assert_non_null(strstr(kda_refuse_seqlens(end, 3, 10, buf, sizeof buf), "ends at 9"));
	assert_non_null(kda_refuse_seqlens(ok, 1, 10, buf, sizeof buf));
	KdaProblem p = {.B = 1, .T = 10, .H = 4, .K = 128, .V = 128, .N = 3, .cu = ok};
	assert_null(kda_refuse_shape(&p, 128, 128, buf, sizeof buf));
	KdaProblem t0 = p;
	t0.T = 0;
	assert_non_null(strstr(kda_refuse_shape(&t0, 128, 128, buf, sizeof buf), "T = 0"));
	KdaProblem hd = p;
	hd.K = 64;
	assert_non_null(strstr(kda_refuse_shape(&hd, 128, 128, buf, sizeof buf), "K = 64"));
	hd = p, hd.V = 256;
	assert_non_null(strstr(kda_refuse_shape(&hd, 128, 128, buf, sizeof buf), "V = 256"));
	KdaProblem b2 = p;
	b2.B = 2;
	assert_non_null(strstr(kda_refuse_shape(&b2, 128, 128, buf, sizeof buf), "B must be 1"));
	KdaProblem many = p;
	many.N = 11;
	assert_non_null(strstr(kda_refuse_shape(&many, 128, 128, buf, sizeof buf), "cannot fit"));
	KdaProblem lb = p;
	lb.gate = KDA_GATE_LOWER_BOUND, lb.lower_bound = -6;
	assert_non_null(strstr(kda_refuse_gate(&lb, buf, sizeof buf), "[-5, 0)"));
	lb.lower_bound = 0;
	assert_non_null(kda_refuse_gate(&lb, buf, sizeof buf));
	lb.lower_bound = -5;
	assert_null(kda_refuse_gate(&lb, buf, sizeof buf));
	/* a NaN input is found and named */
	Rand r;
	rand_make(&r, 1, 8, 2, 1, false, KDA_GATE_SOFTPLUS, 41);
	assert_int_equal(kda_nonfinite(&r.p, buf, sizeof buf), 0);
	r.v[77] = 0x7fc0;
	r.dtb[5] = NAN;
	assert_int_equal(kda_nonfinite(&r.p, buf, sizeof buf), 2);
	assert_non_null(strstr(buf, "input V"));
	assert_non_null(strstr(buf, "77"));
	rand_free(&r);
}

/* A kernel naming family FAM with the given state and gate dtypes (sema only). */
#define KDA_KERNEL(FAM, S0DT, SNDT, EXTRA) \
	"kernel kda_k target sm_90a family " FAM "\n" \
	"  const DK = 128\n  const DV = 128\n" \
	"  param Q: global bf16[B, T, H, DK]\n  param K: global bf16[B, T, H, DK]\n" \
	"  param V: global bf16[B, T, H, DV]\n  param G: global bf16[B, T, H, DK]\n" \
	"  param Beta: global bf16[B, T, H]\n  param Alog: global f32[H]\n  param Dtb: global f32[H, DK]\n" \
	"  param S0: global " S0DT "[N, H, DV, DK]\n  param SN: global " SNDT "[N, H, DV, DK]\n" \
	"  param O: global bf16[B, T, H, DV]\n" EXTRA \
	"  grid (H, N) as (h, n)\n  role work warps 0..3\n  frag x: f32[128] in work\n" \
	"{\n  in work {\n    load x <- Alog[0 +: 128]\n    store O[0, 0, h, :] <- bf16(x)\n  }\n}\n"

static bool sema_rule(const char *text, const char *rule)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_SEMA);
	cake_compile_text(&u, &ss, &dl, "kda.cake", text, strlen(text), &o);
	bool found = false, any = dl.nerr > 0;
	for (int i = 0; i < dl.n; i++)
		found |= rule && !strcmp(dl.items[i]->rule, rule);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return rule ? found : !any;
}

/* The chunk-slot tables of the split prefill (kda.h), by hand. Packed lengths 65, 1, 63, 64, 40
 * (T = 233): sequence 0 takes slots 0 (tokens 0..63) and 1 (token 64, partial); 1 slot 2
 * (token 65); 2 slot 3 (66..128); 3 slot 4 (129..192, full); 4 slot 5 (193..232), whose window
 * 193 + 64 > 233 moves down to 169..232 with the tokens at rows 24..63. Six slots (even), four
 * partial entries; most slots first: 0, then 1, 2, 3, 4. B sequences of T = 200: four slots
 * each, the last (192..199) moved down to 136..199, rows 56..63. */
static void test_slot_tables(void **state)
{
	(void)state;
	int64_t cu[] = {0, 65, 66, 129, 193, 233};
	KdaProblem p = {.B = 1, .T = 233, .H = 1, .K = 128, .V = 128, .N = 5, .cu = cu, .packed = true};
	KdaSlots s;
	assert_true(kda_slot_tables(&p, &s));
	assert_int_equal(s.ns, 6);
	assert_int_equal(s.np, 4);
	static const int32_t want[6][5] = {{0, 0, 0, 64, -1}, {0, 64, 0, 1, 0}, {0, 65, 0, 1, 1}, {0, 66, 0, 63, 2},
	                                   {0, 129, 0, 64, -1}, {0, 169, 24, 64, 3}};
	for (int i = 0; i < 6; i++)
		for (int f = 0; f < 5; f++)
			assert_int_equal(s.sl[i * KDA_SLOT_FIELDS + f], want[i][f]);
	static const int32_t cs[] = {0, 2, 3, 4, 5, 6}, ord[] = {0, 1, 2, 3, 4}, ps[] = {1, 2, 3, 5};
	for (int i = 0; i < 6; i++)
		assert_int_equal(s.cs[i], cs[i]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(s.ord[i], ord[i]);
	for (int i = 0; i < 4; i++)
		assert_int_equal(s.ps[i], ps[i]);
	size_t ne;
	assert_ptr_equal(kda_slot_table(&s, "Sl", &ne), s.sl), assert_int_equal(ne, 6 * KDA_SLOT_FIELDS);
	assert_ptr_equal(kda_slot_table(&s, "Cs", &ne), s.cs), assert_int_equal(ne, 6);
	assert_ptr_equal(kda_slot_table(&s, "Ord", &ne), s.ord), assert_int_equal(ne, 5);
	assert_ptr_equal(kda_slot_table(&s, "Ps", &ne), s.ps), assert_int_equal(ne, 4);
	assert_null(kda_slot_table(&s, "Cu", &ne)), assert_int_equal(ne, 0);
	kda_slots_free(&s);
	assert_null(kda_slot_table(&s, "Sl", &ne));
	/* longest first: lengths 10, 300, 70 -> slot counts 1, 5, 2; an odd total (8) stays even */
	int64_t cu2[] = {0, 10, 310, 380};
	KdaProblem p2 = {.B = 1, .T = 380, .N = 3, .cu = cu2, .packed = true};
	assert_true(kda_slot_tables(&p2, &s));
	assert_int_equal(s.ns, 8);
	assert_int_equal(s.ord[0], 1), assert_int_equal(s.ord[1], 2), assert_int_equal(s.ord[2], 0);
	kda_slots_free(&s);
	KdaProblem q = {.B = 3, .T = 200, .H = 1, .N = 3};
	assert_true(kda_slot_tables(&q, &s));
	assert_int_equal(s.ns, 12);
	assert_int_equal(s.np, 3);
	for (int b = 0; b < 3; b++) {
		const int32_t *e = s.sl + (b * 4 + 3) * KDA_SLOT_FIELDS;
		assert_int_equal(e[0], b), assert_int_equal(e[1], 136), assert_int_equal(e[2], 56), assert_int_equal(e[3], 64);
		assert_int_equal(e[4], b);
		assert_int_equal(s.sl[(b * 4) * KDA_SLOT_FIELDS + 4], -1);
		assert_int_equal(s.cs[b], b * 4);
	}
	kda_slots_free(&s);
	/* B sequences of a multiple of 64: every slot full, one padding entry of -1 */
	KdaProblem f = {.B = 2, .T = 128, .N = 2};
	assert_true(kda_slot_tables(&f, &s));
	assert_int_equal(s.ns, 4), assert_int_equal(s.np, 1), assert_int_equal(s.ps[0], -1);
	kda_slots_free(&s);
	/* no window of 64 rows fits: no tables */
	KdaProblem t = {.B = 1, .T = 63, .N = 1};
	long long np;
	assert_int_equal(kda_slot_count(&t, &np), 0);
	assert_false(kda_slot_tables(&t, &s));
}

/* The state pass's layout (kda_state_paired): paired where main's 2 H N CTAs take more than
 * one wave of the SMs and no long sequence dominates; the cases session 21 timed on an H100
 * (132 SMs) pick the faster layout of that call: paired at H = 96 (one sequence, 8 x 1024, six
 * mixed lengths) and H = 64 (8 x 1024, six mixed), not at H = 64 one sequence or T = 32768 at
 * H = 32. */
static void test_state_paired(void **state)
{
	(void)state;
	KdaProblem p = {.B = 1, .T = 8192, .H = 64, .N = 1};
	assert_false(kda_state_paired(&p, 132));   /* 128 CTAs: one wave */
	p.H = 66;
	assert_false(kda_state_paired(&p, 132));   /* 132: still one */
	p.H = 67;
	assert_true(kda_state_paired(&p, 132));    /* 134: a second wave of 2 CTAs takes a whole chain */
	p.H = 96;
	assert_true(kda_state_paired(&p, 132));
	assert_false(kda_state_paired(&p, 192));   /* a GPU with 192 SMs fits them in one */
	KdaProblem b8 = {.B = 8, .T = 1024, .H = 64, .N = 8};
	assert_true(kda_state_paired(&b8, 132));
	b8.H = 96;
	assert_true(kda_state_paired(&b8, 132));
	KdaProblem lg = {.B = 1, .T = 32768, .H = 32, .N = 1};
	assert_false(kda_state_paired(&lg, 132));
	int64_t mix[] = {0, 1300, 1847, 3895, 4858, 5129, 8192};
	KdaProblem m = {.B = 1, .T = 8192, .H = 64, .N = 6, .cu = mix, .packed = true};
	assert_true(kda_state_paired(&m, 132));
	m.H = 96;
	assert_true(kda_state_paired(&m, 132));
	/* one long sequence and five short ones: the long chain decides, and pairing stretches it */
	int64_t one[] = {0, 8000, 8030, 8060, 8090, 8120, 8150};
	KdaProblem d = {.B = 1, .T = 8150, .H = 64, .N = 6, .cu = one, .packed = true};
	assert_false(kda_state_paired(&d, 132));
	/* past the simulated sizes the bounds decide: many equal sequences pair, and a dominant one does not */
	KdaProblem big = {.B = 1024, .T = 1024, .H = 64, .N = 1024};
	assert_true(kda_state_paired(&big, 132));
	int64_t *cu = malloc(sizeof *cu * 1002);
	assert_non_null(cu);
	cu[0] = 0, cu[1] = 1 << 20;
	for (int i = 2; i <= 1001; i++)
		cu[i] = cu[i - 1] + 64;
	KdaProblem dom = {.B = 1, .T = cu[1001], .H = 64, .N = 1001, .cu = cu, .packed = true};
	assert_false(kda_state_paired(&dom, 132));
	free(cu);
	KdaProblem none = {.B = 1, .T = 8192, .H = 64, .N = 0};
	assert_false(kda_state_paired(&none, 132));
	assert_false(kda_state_paired(&p, 0));
}

static void test_family_contract(void **state)
{
	(void)state;
	assert_true(sema_rule(KDA_KERNEL("kda", "f32", "f32", ""), NULL));
	assert_true(sema_rule(KDA_KERNEL("kda_decode", "bf16", "bf16", ""), NULL));
	assert_true(sema_rule(KDA_KERNEL("kda", "f32", "f32", "  param Cu: global i64[N1]\n  param lower_bound: f32\n"), NULL));
	/* mismatched state dtypes, a cu_seqlens of the wrong type, Cu on a decode kernel */
	assert_true(sema_rule(KDA_KERNEL("kda", "f32", "bf16", ""), "CK-SEM-044"));
	assert_true(sema_rule(KDA_KERNEL("kda", "f32", "f32", "  param Cu: global i32[N1]\n"), "CK-SEM-044"));
	assert_true(sema_rule(KDA_KERNEL("kda_decode", "f32", "f32", "  param Cu: global i64[N1]\n"), "CK-SEM-044"));
	assert_true(sema_rule(KDA_KERNEL("kda", "f32", "f32", "  param lower_bound: i32\n"), "CK-SEM-044"));
	FamilyTable t = family_builtin();
	assert_non_null(family_find(t, "kda"));
	assert_non_null(family_find(t, "kda_decode"));
	/* a run that binds no scalar (the gate, the search) gets lower_bound = -5, not 0 (refused) */
	const char *text = KDA_KERNEL("kda", "f32", "f32", "  param lower_bound: f32\n");
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_SEMA);
	assert_int_equal(cake_compile_text(&u, &ss, &dl, "kda.cake", text, strlen(text), &o), 0);
	double *v = family_scalars(family_find(t, "kda"), u.kernels[0]);
	int lb = -1;
	for (int i = 0; i < u.kernels[0]->nparams; i++)
		if (!strcmp(u.kernels[0]->params[i]->name, "lower_bound"))
			lb = i;
	assert_true(lb >= 0 && v[lb] == -5.0);
	free(v);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

/* The refuse hook on hand-made buffers: shapes that disagree. */
static void test_family_refuse_hook(void **state)
{
	(void)state;
	const char *text = KDA_KERNEL("kda_decode", "f32", "f32", "");
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_SEMA);
	assert_int_equal(cake_compile_text(&u, &ss, &dl, "kda.cake", text, strlen(text), &o), 0);
	const Kernel *k = u.kernels[0];
	const Family *f = family_find(family_builtin(), "kda_decode");
	FamBuf b[16];
	memset(b, 0, sizeof b);
	long long B = 4, T = 2, H = 8;
	for (int i = 0; i < k->nparams; i++) {
		const char *n = k->params[i]->name;
		b[i].decl = k->params[i];
		b[i].rank = k->params[i]->rank;
		long long *d = b[i].dims;
		if (!strcmp(n, "Beta"))
			d[0] = B, d[1] = T, d[2] = H;
		else if (!strcmp(n, "Alog"))
			d[0] = H;
		else if (!strcmp(n, "Dtb"))
			d[0] = H, d[1] = 128;
		else if (n[0] == 'S')
			d[0] = B, d[1] = H, d[2] = 128, d[3] = 128;
		else
			d[0] = B, d[1] = T, d[2] = H, d[3] = 128;
	}
	FamRun r = {k, NULL, b, 1, 16, 1, NULL, NULL};
	char why[256];
	assert_false(f->refuse(&r, why, sizeof why));
	b[fam_param(k, "V")].dims[1] = 3;   /* V disagrees with Q on T */
	assert_true(f->refuse(&r, why, sizeof why));
	assert_non_null(strstr(why, "'V'"));
	b[fam_param(k, "V")].dims[1] = T;
	b[fam_param(k, "SN")].dims[2] = 64;  /* a state of the wrong value dimension */
	assert_true(f->refuse(&r, why, sizeof why));
	assert_non_null(strstr(why, "'SN'"));
	b[fam_param(k, "SN")].dims[2] = 128;
	b[fam_param(k, "S0")].dims[0] = b[fam_param(k, "SN")].dims[0] = 3;   /* states for 3 of 4 sequences */
	assert_true(f->refuse(&r, why, sizeof why));
	assert_non_null(strstr(why, "B = 4"));
	b[fam_param(k, "S0")].dims[0] = b[fam_param(k, "SN")].dims[0] = B;
	for (int i = 0; i < k->nparams; i++)   /* a 32-token window is not decode */
		if (b[i].rank >= 3 && k->params[i]->name[0] != 'S')
			b[i].dims[1] = 32;
	assert_true(f->refuse(&r, why, sizeof why));
	assert_non_null(strstr(why, "1 .. 16 tokens"));
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recurrence_by_hand),
		cmocka_unit_test(test_chunked_matches_recurrence),
		cmocka_unit_test(test_tolerance_measured),
		cmocka_unit_test(test_check_catches_wrong_outputs),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_slot_tables),
		cmocka_unit_test(test_state_paired),
		cmocka_unit_test(test_family_contract),
		cmocka_unit_test(test_family_refuse_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
