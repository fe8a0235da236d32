/*
 * test_run_inputs.c — the runner's seeded input generator (run_fill_input).
 *
 * Inputs must never hide bugs: no zeros (they hide unwritten outputs), no NaN
 * or infinity (they poison every comparison), the same bytes for the same
 * seed. The f16 case once turned values below 2^-14 into NaN/infinity bit
 * patterns (an unsigned exponent underflow); 4M draws make such a value
 * certain to appear if the bug returns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "front/ast.h"
#include "gpu/run.h"

static void test_f16_finite_nonzero(void **state)
{
	(void)state;
	size_t n = 1u << 22;
	uint16_t *h = malloc(n * sizeof *h), *g = malloc(n * sizeof *g);
	assert_non_null(h);
	assert_non_null(g);
	run_fill_input(h, DT_F16, n, 12345);
	size_t tiny = 0;
	for (size_t i = 0; i < n; i++) {
		float f = oracle_f16_to_f32(h[i]);
		assert_true(isfinite(f));
		assert_true(f != 0.0f);
		assert_true(fabsf(f) <= 1.0f);
		tiny += fabsf(f) < 0x1p-13f;
	}
	assert_true(tiny > 0);   /* the clamped range was exercised */
	run_fill_input(g, DT_F16, n, 12345);
	assert_memory_equal(h, g, n * sizeof *h);
	free(h);
	free(g);
}

static void test_bf16_f32_finite_nonzero(void **state)
{
	(void)state;
	size_t n = 1u << 16;
	uint16_t *b = malloc(n * sizeof *b);
	float *f = malloc(n * sizeof *f);
	assert_non_null(b);
	assert_non_null(f);
	run_fill_input(b, DT_BF16, n, 7);
	run_fill_input(f, DT_F32, n, 7);
	for (size_t i = 0; i < n; i++) {
		float x = oracle_bf16_to_f32(b[i]);
		assert_true(isfinite(x) && x != 0.0f && fabsf(x) <= 1.0f);
		assert_true(isfinite(f[i]) && f[i] != 0.0f && fabsf(f[i]) <= 1.0f);
	}
	free(b);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_finite_nonzero),
		cmocka_unit_test(test_bf16_f32_finite_nonzero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
