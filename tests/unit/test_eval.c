/*
 * test_eval.c — the one integer evaluator (src/front/eval.h).
 *
 * The operators are tested directly (eval_binop, eval_unop): every overflow,
 * division by zero and out-of-range shift is "not computable", never a
 * wrapped value. Whole trees are built by hand and evaluated with a small
 * lookup (names x = 7, big = 2^62, anything else unbound) to check name
 * resolution, short-circuit && / ||, the calls and the casts. The last test
 * runs sema on a kernel whose const overflows and checks that the overflow
 * is not folded into a wrapped constant (CK-SEM-004) while division by zero
 * keeps its own diagnostic (CK-SEM-005).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "front/front.h"
#include "front/eval.h"

/* ---- hand-built trees ---- */

typedef struct Pool {
	Expr e[64];
	Expr *args[64][2];
	int n;
} Pool;

static Expr *lit(Pool *p, long long v)
{
	Expr *e = &p->e[p->n++];
	e->kind = E_INT;
	e->ival = v;
	return e;
}

static Expr *id(Pool *p, const char *name)
{
	Expr *e = &p->e[p->n++];
	e->kind = E_IDENT;
	e->name = name;
	return e;
}

static Expr *bin(Pool *p, int op, Expr *a, Expr *b)
{
	Expr *e = &p->e[p->n++];
	e->kind = E_BINARY;
	e->op = op;
	e->lhs = a;
	e->rhs = b;
	return e;
}

static Expr *call(Pool *p, const char *name, Expr *a, Expr *b)
{
	int i = p->n;
	Expr *e = &p->e[p->n++];
	e->kind = E_CALL;
	e->name = name;
	p->args[i][0] = a;
	p->args[i][1] = b;
	e->args = p->args[i];
	e->nargs = b ? 2 : 1;
	return e;
}

static bool look(const void *env, const Expr *ident, int depth, long long *out)
{
	(void)env;
	(void)depth;
	if (strcmp(ident->name, "x") == 0) {
		*out = 7;
		return true;
	}
	if (strcmp(ident->name, "big") == 0) {
		*out = 1LL << 62;
		return true;
	}
	return false;
}

/* ---- operators ---- */

static void test_binop_overflow(void **state)
{
	(void)state;
	long long r = 0;
	assert_true(eval_binop('+', 2, 3, &r) && r == 5);
	assert_false(eval_binop('+', INT64_MAX, 1, &r));
	assert_false(eval_binop('-', INT64_MIN, 1, &r));
	assert_false(eval_binop('*', 1LL << 32, 1LL << 32, &r));
	assert_true(eval_binop('*', -3, 4, &r) && r == -12);
	assert_false(eval_binop('/', 1, 0, &r));
	assert_false(eval_binop('%', 1, 0, &r));
	assert_false(eval_binop('/', INT64_MIN, -1, &r));
	assert_true(eval_binop('%', INT64_MIN, -1, &r) && r == 0);
	assert_true(eval_binop('/', -7, 2, &r) && r == -3);
	assert_true(eval_binop('%', -7, 2, &r) && r == -1);
	assert_true(eval_binop(OP_SHL, 1, 62, &r) && r == 1LL << 62);
	assert_false(eval_binop(OP_SHL, 2, 62, &r));
	assert_false(eval_binop(OP_SHL, 1, 63, &r));
	assert_false(eval_binop(OP_SHL, 1, -1, &r));
	assert_true(eval_binop(OP_SHL, -1, 3, &r) && r == -8);
	assert_true(eval_binop(OP_SHR, -8, 1, &r) && r == -4);
	assert_false(eval_binop(OP_SHR, 1, 64, &r));
	assert_true(eval_binop(OP_LE, 3, 3, &r) && r == 1);
	assert_true(eval_binop(OP_AND, 3, 0, &r) && r == 0);
	assert_false(eval_binop('@', 1, 1, &r));
	assert_false(eval_unop('-', INT64_MIN, &r));
	assert_true(eval_unop('-', 5, &r) && r == -5);
	assert_true(eval_unop('!', 0, &r) && r == 1);
}

/* ---- trees ---- */

static void test_trees(void **state)
{
	(void)state;
	Pool *p = calloc(1, sizeof *p);
	long long r = 0;
	/* x * 3 + 1 = 22 */
	assert_true(eval_int(bin(p, '+', bin(p, '*', id(p, "x"), lit(p, 3)), lit(p, 1)), look, NULL, &r));
	assert_int_equal(r, 22);
	/* unbound names and no lookup are not computable */
	assert_false(eval_int(id(p, "y"), look, NULL, &r));
	assert_false(eval_int(id(p, "x"), NULL, NULL, &r));
	/* big * 2 overflows */
	assert_false(eval_int(bin(p, '*', id(p, "big"), lit(p, 2)), look, NULL, &r));
	/* short-circuit: 0 && y is 0, 1 || y is 1, 1 && y is not computable */
	assert_true(eval_int(bin(p, OP_AND, lit(p, 0), id(p, "y")), look, NULL, &r) && r == 0);
	assert_true(eval_int(bin(p, OP_OR, lit(p, 1), id(p, "y")), look, NULL, &r) && r == 1);
	assert_false(eval_int(bin(p, OP_AND, lit(p, 1), id(p, "y")), look, NULL, &r));
	/* calls */
	assert_true(eval_int(call(p, "min", id(p, "x"), lit(p, 3)), look, NULL, &r) && r == 3);
	assert_true(eval_int(call(p, "max", id(p, "x"), lit(p, 3)), look, NULL, &r) && r == 7);
	assert_true(eval_int(call(p, "cdiv", id(p, "x"), lit(p, 2)), look, NULL, &r) && r == 4);
	assert_false(eval_int(call(p, "cdiv", id(p, "x"), lit(p, 0)), look, NULL, &r));
	assert_true(eval_int(call(p, "i32", id(p, "x"), NULL), look, NULL, &r) && r == 7);
	assert_false(eval_int(call(p, "i32", id(p, "big"), NULL), look, NULL, &r));
	assert_true(eval_int(call(p, "i64", id(p, "big"), NULL), look, NULL, &r) && r == 1LL << 62);
	assert_false(eval_int(call(p, "u32", lit(p, -1), NULL), look, NULL, &r));
	assert_false(eval_int(call(p, "sqrt", lit(p, 4), NULL), look, NULL, &r));
	/* out may be NULL: only computability is asked */
	assert_true(eval_int(lit(p, 1), NULL, NULL, NULL));
	free(p);
}

/* ---- sema folds with the same rule ---- */

static int count_rule(const DiagList *dl, const char *rule)
{
	int n = 0;
	for (int i = 0; i < dl->n; i++)
		if (strcmp(dl->items[i]->rule, rule) == 0)
			n++;
	return n;
}

static int sema_rule_count(const char *src, const char *rule)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	int fid = src_add(&ss, "t.cake", src, strlen(src));
	ctx_init(&c, &ss, &dl);
	Program *prog = parse_file(&c, fid);
	assert_int_equal(dl.nerr, 0);
	sema_program(&c, prog);
	int n = count_rule(&dl, rule);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	return n;
}

static void test_sema_folds_checked(void **state)
{
	(void)state;
	const char *overflow =
		"kernel k target sm_90a\n"
		"  const BIG = 4611686018427387904\n"
		"  const X = BIG * 4\n"
		"  smem a: f32[X]\n"
		"{\n"
		"}\n";
	assert_true(sema_rule_count(overflow, "CK-SEM-004") >= 1);
	const char *divzero =
		"kernel k target sm_90a\n"
		"  const X = 4 / 0\n"
		"  smem a: f32[X]\n"
		"{\n"
		"}\n";
	assert_int_equal(sema_rule_count(divzero, "CK-SEM-005"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binop_overflow),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_sema_folds_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
