/*
 * test_gpu.c — oracles, the runner's refusals, and (with a GPU) a GEMM end to end.
 *
 * CPU part (always runs): bf16 conversion, the seeded generator never yields
 * zero, the float64 GEMM oracle against a naive loop on a tiny problem (with
 * several threads and a row sample), the comparison catching NaN/poison and
 * a wrong element, the --debug-hang story built from a hand-made flight
 * recorder, and `cake run` refusing an impossible shape (domain constraint
 * false) and bad usage before any GPU work.
 *
 * GPU part: when libcuda.so.1 cannot be loaded the tests print one line
 * saying so and skip; otherwise the contract GEMM (kernels/gemm) runs through
 * lower + NVRTC + the isolated runner and must pass the oracle, and a timed
 * run must succeed too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <dlfcn.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu/run.h"
#include "cmd/cmd.h"
#include "lower/lower.h"
#include "testlib.h"

static const char *GEMM_FILE = "kernels/gemm/gemm_ws_128x256_s4.cake";

/* The contract GEMM; `wait empty` is on line 18, `wait full` on line 26. */
static const char GEMM[] = TL_GEMM_SRC("");

static int run(int n, ...)
{
	char *argv[32];
	va_list ap;
	va_start(ap, n);
	argv[0] = "run";
	for (int i = 0; i < n && i < 30; i++)
		argv[i + 1] = va_arg(ap, char *);
	va_end(ap);
	argv[n + 1] = NULL;
	fflush(stdout);
	return cmd_run(n + 1, argv);
}

static void test_bf16_roundtrip(void **state)
{
	(void)state;
	assert_int_equal(oracle_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(oracle_f32_to_bf16(-2.0f), 0xc000);
	assert_true(oracle_bf16_to_f32(0x3f80) == 1.0f);
	/* round to nearest even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> 1 */
	assert_int_equal(oracle_f32_to_bf16(1.0f + 1.0f / 256.0f), 0x3f80);
	assert_int_equal(oracle_f32_to_bf16(1.0f + 3.0f / 256.0f), 0x3f82);
	assert_true(isnan(oracle_bf16_to_f32(0xFFFF)));   /* the poison pattern is NaN */
	assert_true(isnan(oracle_bf16_to_f32(oracle_f32_to_bf16(NAN))));
}

static void test_fill_never_zero(void **state)
{
	(void)state;
	size_t n = 1 << 16;
	uint16_t *a = malloc(n * 2), *b = malloc(n * 2);
	oracle_fill_bf16(a, n, 42);
	oracle_fill_bf16(b, n, 42);
	assert_memory_equal(a, b, n * 2);   /* reproducible from the seed */
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		float f = oracle_bf16_to_f32(a[i]);
		assert_true(f != 0.0f);
		assert_true(f >= -1.0f && f <= 1.0f);
		sum += f;
	}
	assert_true(fabs(sum / (double)n) < 0.02);   /* centred */
	oracle_fill_bf16(b, n, 43);
	assert_memory_not_equal(a, b, n * 2);
	free(a);
	free(b);
}

static void test_gemm_oracle_small(void **state)
{
	(void)state;
	enum { M = 5, N = 7, K = 9 };
	uint16_t A[M * K], B[N * K];
	oracle_fill_bf16(A, M * K, 1);
	oracle_fill_bf16(B, N * K, 2);
	int rows[M] = {0, 1, 2, 3, 4};
	double ref[M * N];
	oracle_gemm_abt_bf16(A, B, M, N, K, rows, M, ref, 3);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)oracle_bf16_to_f32(A[m * K + k]) * (double)oracle_bf16_to_f32(B[n * K + k]);
			assert_true(fabs(s - ref[m * N + n]) < 1e-12);
		}
	/* sampled rows (out of order), one thread */
	int some[2] = {3, 1};
	double ref2[2 * N];
	oracle_gemm_abt_bf16(A, B, M, N, K, some, 2, ref2, 1);
	for (int n = 0; n < N; n++) {
		assert_true(ref2[n] == ref[3 * N + n]);
		assert_true(ref2[N + n] == ref[1 * N + n]);
	}

	/* comparison: exact bf16 output passes with a small error */
	uint16_t C[M * N];
	for (int i = 0; i < M * N; i++)
		C[i] = oracle_f32_to_bf16((float)ref[i]);
	OracleCmp c;
	oracle_compare_bf16_rows(C, N, rows, M, ref, &c);
	assert_true(c.rel_err < 1e-2);
	assert_int_equal(c.n_nan, 0);
	assert_int_equal(c.first_bad, -1);
	/* one poisoned (unwritten) element */
	C[2 * N + 4] = 0xFFFF;
	oracle_compare_bf16_rows(C, N, rows, M, ref, &c);
	assert_int_equal(c.n_nan, 1);
	assert_int_equal(c.first_bad, 2 * N + 4);
	assert_true(isnan(c.rel_err));
	/* one wrong element */
	C[2 * N + 4] = oracle_f32_to_bf16((float)ref[2 * N + 4] + 5.0f);
	oracle_compare_bf16_rows(C, N, rows, M, ref, &c);
	assert_int_equal(c.n_nan, 0);
	assert_int_equal(c.first_bad, 2 * N + 4);
	assert_true(c.rel_err > 1e-2);
}

static void test_kmeans_oracle(void **state)
{
	(void)state;
	enum { N = 6, K = 9, D = 16 };
	uint16_t X[N * D], C[K * D];
	float cn[K];
	oracle_fill_bf16(X, N * D, 3);
	oracle_fill_bf16(C, K * D, 4);
	int32_t lab[N];
	int rows[N];
	for (int j = 0; j < K; j++) {
		double n2 = 0;
		for (int d = 0; d < D; d++)
			n2 += (double)oracle_bf16_to_f32(C[j * D + d]) * oracle_bf16_to_f32(C[j * D + d]);
		cn[j] = (float)n2;
	}
	/* brute force labels by true squared distance */
	for (int i = 0; i < N; i++) {
		rows[i] = i;
		double best = 1e300;
		for (int j = 0; j < K; j++) {
			double dist = 0;
			for (int d = 0; d < D; d++) {
				double e = (double)oracle_bf16_to_f32(X[i * D + d]) - oracle_bf16_to_f32(C[j * D + d]);
				dist += e * e;
			}
			if (dist < best) {
				best = dist;
				lab[i] = j;
			}
		}
	}
	OracleCmp c;
	assert_int_equal(oracle_kmeans_assign_check(X, C, cn, K, D, lab, rows, N, 1e-3, &c), 0);
	assert_int_equal(c.first_bad, -1);
	assert_true(c.rel_err < 1e-6);
	int32_t wrong = lab[4];
	lab[4] = (wrong + 1) % K;   /* some other centroid: strictly farther for random data */
	assert_int_equal(oracle_kmeans_assign_check(X, C, cn, K, D, lab, rows, N, 1e-3, &c), 1);
	assert_int_equal(c.first_bad, 4);
	assert_true(c.first_bad_ref == wrong);
	lab[4] = K;                 /* out of range */
	assert_int_equal(oracle_kmeans_assign_check(X, C, cn, K, D, lab, rows, N, 1e-3, &c), 1);
	lab[4] = wrong;
}

/* The hang story from a hand-made flight recorder: CTA 0 finished, CTA 1 stuck. */
static void test_hang_story(void **state)
{
	(void)state;
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	ctx_init(&c, &ss, &dl);
	int fi = src_add(&ss, "gemm.cake", GEMM, strlen(GEMM));
	Program *prog = parse_file(&c, fi);
	assert_true(sema_program(&c, prog));
	Kernel *k = prog->kernels[0];
	Plan *p = derive_plan(&c, k);
	assert_non_null(p);
	assert_int_equal(p->nwarpgroups, 3);
	int load = plan_role_index(p, "load"), mma = plan_role_index(p, "mma");
	int full = plan_barrier_index(p, "full"), empty = plan_barrier_index(p, "empty");
	CakeHangRecord rec[2 * 3];
	memset(rec, 0, sizeof rec);
	for (int s = 0; s < 3; s++) {
		rec[s] = (CakeHangRecord){.magic = CAKE_HANG_MAGIC, .role = (uint32_t)(s ? mma : load),
		                          .barrier = 0xffffffffu, .state = CAKE_HANG_DONE};
	}
	rec[3] = (CakeHangRecord){.magic = CAKE_HANG_MAGIC, .role = (uint32_t)load, .barrier = (uint32_t)empty,
	                          .stage = 2, .phase = 0, .iter = 6, .state = CAKE_HANG_WAITING, .line = 18};
	rec[4] = (CakeHangRecord){.magic = CAKE_HANG_MAGIC, .role = (uint32_t)mma, .barrier = (uint32_t)full,
	                          .stage = 2, .phase = 1, .iter = 6, .state = CAKE_HANG_WAITING, .line = 26};
	/* slot 5 never written (magic 0): left out of the story */
	StrBuf out = {0};
	run_hang_story(p, k, rec, 2, &out);
	const char *t = sb_str(&out);
	assert_non_null(strstr(t, "role load (warpgroup 0) stuck waiting on empty[2] phase 0 at k=6 (line 18)"));
	assert_non_null(strstr(t, "; role mma (warpgroup 1) stuck waiting on full[2] phase 1 at k=6 (line 26)"));
	assert_null(strstr(t, "warpgroup 2"));
	assert_non_null(strstr(t, "[CTA 1; 1 of 2 CTAs stuck]"));
	sb_free(&out);
	/* nothing pending: says so instead of inventing a story */
	StrBuf none = {0};
	run_hang_story(p, k, rec, 1, &none);
	assert_non_null(strstr(sb_str(&none), "no role recorded a pending wait"));
	sb_free(&none);
	diag_free(&dl);
	ctx_free(&c);
	src_free(&ss);
}

static bool have_file(void)
{
	if (access(GEMM_FILE, R_OK) == 0)
		return true;
	printf("skipping: %s not found (run from the repository root)\n", GEMM_FILE);
	return false;
}

static void test_run_refusals(void **state)
{
	(void)state;
	if (!have_file()) {
		skip();
		return;
	}
	/* domain constraint N % 256 == 0 is false: refused before any GPU work (exit 1) */
	assert_int_equal(run(5, GEMM_FILE, "M=256", "N=500", "K=256", "--format=json"), 1);
	assert_int_equal(run(4, GEMM_FILE, "M=256", "N=512", "K=300"), 1);
	/* usage problems: exit 2 */
	assert_int_equal(run(3, GEMM_FILE, "M=256", "N=512"), 2);             /* K unbound */
	assert_int_equal(run(5, GEMM_FILE, "M=256", "N=512", "K=128", "--bogus"), 2);
	assert_int_equal(run(5, GEMM_FILE, "M=256", "N=512", "K=128", "Q=3"), 2); /* no such dim */
	assert_int_equal(run(4, GEMM_FILE, "M=256", "N=512", "K=x"), 2);
	assert_int_equal(run(1, "/nonexistent/file.cake"), 2);
	assert_int_equal(run(0), 2);
	assert_int_equal(run(5, GEMM_FILE, "M=256", "N=512", "K=128", "--timeout=-1"), 2);
}

/* Only dlopen here: initialising CUDA in this process (cuInit) would make
 * the runner's forked child fail its own cuInit. */
static bool have_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("skipping GPU tests: no CUDA driver (libcuda.so.1) on this machine\n");
		return false;
	}
	return true;
}

static void test_run_gemm_end_to_end(void **state)
{
	(void)state;
	if (!have_file()) {
		skip();
		return;
	}
	if (!have_driver()) {
		/* without a GPU, a valid shape is answered "no GPU" with its exit code */
		int rc = run(5, GEMM_FILE, "M=256", "N=512", "K=256", "--seed=7");
		assert_int_equal(rc, GPU_EXIT_NO_DRIVER);
		skip();
		return;
	}
	assert_int_equal(run(6, GEMM_FILE, "M=256", "N=512", "K=256", "--seed=7", "--format=json"), 0);
	assert_int_equal(run(5, GEMM_FILE, "M=1024", "N=3072", "K=320", "--check-rows=1024"), 0);
	assert_int_equal(run(7, GEMM_FILE, "M=2048", "N=2048", "K=2048", "--time", "--iters=5", "--warmup=1"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16_roundtrip),
		cmocka_unit_test(test_fill_never_zero),
		cmocka_unit_test(test_gemm_oracle_small),
		cmocka_unit_test(test_kmeans_oracle),
		cmocka_unit_test(test_hang_story),
		cmocka_unit_test(test_run_refusals),
		cmocka_unit_test(test_run_gemm_end_to_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
