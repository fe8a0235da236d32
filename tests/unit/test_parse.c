/*
 * test_parse.c — lexer and parser unit tests.
 *
 * Positive parses check the tree fields ast.h documents for every construct
 * (declarations, statements, expressions, slices) and their spans. Negative
 * cases check the rule ID, the location and that recovery reports every
 * independent mistake. Robustness cases (10,000-deep nesting, binary garbage,
 * invalid UTF-8, a 10 MB file) run under ASan+UBSan in `make test`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front/front.h"
#include "testlib.h"

typedef struct T {
	SourceSet ss;
	DiagList dl;
	Ctx c;
	Program *p;
	int file;
} T;

static T *parse_n(const char *src, size_t len)
{
	T *t = calloc(1, sizeof *t);
	t->file = src_add(&t->ss, "t.cake", src, len);
	ctx_init(&t->c, &t->ss, &t->dl);
	t->p = parse_file(&t->c, t->file);
	assert_non_null(t->p);
	return t;
}

static T *parse(const char *src)
{
	return parse_n(src, strlen(src));
}

static void done(T *t)
{
	ctx_free(&t->c);
	diag_free(&t->dl);
	src_free(&t->ss);
	free(t);
}

static int count_rule(const T *t, const char *rule)
{
	int n = 0;
	for (int i = 0; i < t->dl.n; i++)
		if (strcmp(t->dl.items[i]->rule, rule) == 0)
			n++;
	return n;
}

static const Diag *find_rule(const T *t, const char *rule)
{
	for (int i = 0; i < t->dl.n; i++)
		if (strcmp(t->dl.items[i]->rule, rule) == 0)
			return t->dl.items[i];
	return NULL;
}

/* Print the diagnostics when a test expects none, to make failures readable. */
static void expect_clean(T *t)
{
	if (t->dl.n) {
		StrBuf b = {0};
		diag_print_text(&b, &t->ss, &t->dl, false);
		fprintf(stderr, "%s", sb_str(&b));
		sb_free(&b);
	}
	assert_int_equal(t->dl.n, 0);
}

static const char *GEMM = TL_GEMM_SRC("            # two consumer warpgroups");

static void check_ident(const Expr *e, const char *name)
{
	assert_non_null(e);
	assert_int_equal(e->kind, E_IDENT);
	assert_string_equal(e->name, name);
}

static void check_int(const Expr *e, long long v)
{
	assert_non_null(e);
	assert_int_equal(e->kind, E_INT);
	assert_int_equal(e->ival, v);
}

/* A macro so that a failure reports the caller's line. */
#define check_span(s, line_, col_, len_)                                                \
	do {                                                                            \
		Span s_ = (s);                                                          \
		assert_int_equal(s_.line, (line_));                                     \
		assert_int_equal(s_.col, (col_));                                       \
		assert_int_equal(s_.len, (len_));                                       \
	} while (0)

static void test_gemm_example(void **state)
{
	T *t = parse(GEMM);
	expect_clean(t);
	assert_int_equal(t->p->nkernels, 1);
	Kernel *k = t->p->kernels[0];
	assert_string_equal(k->name, "gemm_bf16");
	check_span(k->name_span, 1, 8, 9);
	assert_int_equal(k->target, TGT_SM90A);
	check_span(k->target_span, 1, 25, 6);
	assert_int_equal(k->ndecls, 13);

	Decl *d = k->decls[0];
	assert_int_equal(d->kind, D_PARAM);
	assert_string_equal(d->name, "A");
	assert_int_equal(d->space, SP_GLOBAL);
	assert_int_equal(d->dt, DT_BF16);
	assert_int_equal(d->rank, 2);
	check_ident(d->shape[0], "M");
	check_ident(d->shape[1], "K");
	check_span(d->span, 2, 3, 26);
	check_span(d->name_span, 2, 9, 1);

	d = k->decls[3];
	assert_int_equal(d->kind, D_DOMAIN);
	assert_int_equal(d->nexprs, 4);
	assert_int_equal(d->exprs[0]->kind, E_BINARY);
	assert_int_equal(d->exprs[0]->op, OP_EQ);
	assert_int_equal(d->exprs[0]->lhs->op, '%');
	assert_int_equal(d->exprs[3]->op, OP_GE);

	d = k->decls[4];
	assert_int_equal(d->kind, D_GRID);
	assert_false(d->persistent);
	assert_int_equal(d->nexprs, 2);
	assert_string_equal(d->grid_vars[0], "bn");
	assert_string_equal(d->grid_vars[1], "bm");
	check_span(d->grid_var_spans[1], 6, 35, 2);

	d = k->decls[6];
	assert_int_equal(d->kind, D_ROLE);
	assert_string_equal(d->name, "mma");
	assert_int_equal(d->warp_lo, 4);
	assert_int_equal(d->warp_hi, 11);
	assert_int_equal(d->regs, 232);

	d = k->decls[7];
	assert_int_equal(d->kind, D_PIPELINE);
	assert_int_equal(d->stages, 4);

	d = k->decls[8];
	assert_int_equal(d->kind, D_SMEM);
	assert_int_equal(d->space, SP_SMEM);
	assert_int_equal(d->swizzle, SWZ_128B);
	assert_string_equal(d->ring, "ab");
	check_int(d->shape[0], 128);

	d = k->decls[11];
	assert_int_equal(d->kind, D_BARRIER);
	assert_string_equal(d->name, "empty");
	assert_string_equal(d->ring, "ab");
	assert_int_equal(d->nproducers, 1);
	assert_string_equal(d->producers[0], "mma");
	assert_int_equal(d->nconsumers, 1);
	assert_string_equal(d->consumers[0], "load");
	check_span(d->consumer_spans[0], 13, 50, 4);
	assert_int_equal(d->arrivals, 2);

	d = k->decls[12];
	assert_int_equal(d->kind, D_FRAG);
	assert_int_equal(d->space, SP_FRAG);
	assert_int_equal(d->dt, DT_F32);
	assert_string_equal(d->owner, "mma");
	assert_int_equal(d->split, SPLIT_M);

	assert_int_equal(k->nbody, 2);
	Stmt *in = k->body[0];
	assert_int_equal(in->kind, S_IN);
	assert_string_equal(in->name, "load");
	assert_int_equal(in->nbody, 1);
	Stmt *f = in->body[0];
	assert_int_equal(f->kind, S_FOR);
	assert_string_equal(f->name, "k");
	check_int(f->lo, 0);
	assert_int_equal(f->hi->kind, E_BINARY);
	assert_int_equal(f->hi->op, '/');
	assert_null(f->step);
	assert_string_equal(f->pipe, "ab");
	assert_int_equal(f->unroll, 0);
	assert_int_equal(f->nbody, 3);
	check_span(f->span, 17, 5, (int)(strstr(GEMM, "    }\n  }\n  in mma") + 5 - strstr(GEMM, "for k")));

	Stmt *w = f->body[0];
	assert_int_equal(w->kind, S_WAIT);
	assert_string_equal(w->name, "empty");
	Stmt *tma = f->body[1];
	assert_int_equal(tma->kind, S_TMA_LOAD);
	check_span(tma->span, 19, 7, 53);
	check_ident(tma->dst, "a");
	assert_string_equal(tma->name, "full");
	Expr *src = tma->src;
	assert_int_equal(src->kind, E_INDEX);
	check_ident(src->base, "A");
	assert_int_equal(src->nslices, 2);
	assert_int_equal(src->slices[0].kind, SL_RANGE);
	assert_int_equal(src->slices[0].start->op, '*');
	check_int(src->slices[0].len, 128);
	check_span(src->slices[1].span, 19, 35, 12);

	Stmt *mm = k->body[1];
	assert_int_equal(mm->nbody, 3);
	Stmt *as = mm->body[0];
	assert_int_equal(as->kind, S_ASSIGN);
	assert_int_equal(as->nlhs, 1);
	check_ident(as->lhs[0], "acc");
	check_int(as->src, 0);
	Stmt *wg = mm->body[1]->body[1];
	assert_int_equal(wg->kind, S_WGMMA);
	assert_true(wg->accumulate);
	check_ident(wg->dst, "acc");
	assert_int_equal(wg->src->kind, E_BINARY);
	assert_int_equal(wg->src->op, '@');
	check_ident(wg->src->lhs, "a");
	assert_int_equal(wg->src->rhs->kind, E_TRANSPOSE);
	check_ident(wg->src->rhs->lhs, "b");
	assert_int_equal(mm->body[1]->body[2]->kind, S_WGMMA_WAIT);
	assert_int_equal(mm->body[1]->body[2]->count, 0);
	assert_int_equal(mm->body[1]->body[3]->kind, S_ARRIVE);
	Stmt *st = mm->body[2];
	assert_int_equal(st->kind, S_STORE);
	assert_int_equal(st->dst->kind, E_INDEX);
	assert_int_equal(st->src->kind, E_CALL);
	assert_string_equal(st->src->name, "bf16");
	assert_int_equal(st->src->nargs, 1);

	/* the comment was kept, as a trailing one */
	assert_int_equal(t->p->ncomments, 1);
	assert_string_equal(t->p->comments[0]->text, "# two consumer warpgroups");
	assert_true(t->p->comments[0]->trailing);
	check_span(t->p->comments[0]->span, 8, 45, 25);
	done(t);
}

static void test_other_constructs(void **state)
{
	T *t = parse(
		"kernel k2 target sm_80\n"
		"  param eps: f32\n"
		"  param X: global f16[N]\n"
		"  const BM = 64 * 2\n"
		"  grid persistent (132) as (tile)\n"
		"  cluster (2, 1)\n"
		"  role w warps 0..3\n"
		"  pipeline p stages 2\n"
		"  smem s: f16[64, 64] swizzle none\n"
		"  smem t: f16[64] ring p swizzle 32B\n"
		"  barrier bar producers w, w consumers w arrivals 4\n"
		"  frag x: f32[64, 64] in w split n\n"
		"  frag v: f32[64] in w\n"
		"  frag i: i32[64] in w\n"
		"{\n"
		"  in w {\n"
		"    for j in 1 .. BM step 2 unroll 4 pipelined p {\n"
		"      if j == 1 { sync } else if j > 3 && !(j < 9) { sync w } else { fence gpu }\n"
		"    }\n"
		"    cp_async s <- X[0 +: 64]\n"
		"    cp_async t[0 +: 64] <- X[:]\n"
		"    mma x = s @ s^T\n"
		"    load x <- X[j]\n"
		"    atomic_add X[tile] <- -x[0, :] * 1.5e0 + inf\n"
		"    fence proxy_async\n"
		"    fence cta\n"
		"    let q = 0x1F << 2 >> 1 || eps != 2.5\n"
		"    v, i = rowargmin(x)\n"
		"    sync\n"
		"    x = where(x > 0, x, -inf)\n"
		"  }\n"
		"}\n");
	expect_clean(t);
	Kernel *k = t->p->kernels[0];
	assert_int_equal(k->target, TGT_SM80);
	assert_int_equal(k->decls[0]->space, SP_NONE);
	assert_int_equal(k->decls[0]->dt, DT_F32);
	assert_int_equal(k->decls[0]->rank, 0);
	assert_int_equal(k->decls[2]->kind, D_CONST);
	assert_int_equal(k->decls[2]->value->op, '*');
	assert_true(k->decls[3]->persistent);
	assert_int_equal(k->decls[4]->kind, D_CLUSTER);
	assert_int_equal(k->decls[4]->nexprs, 2);
	assert_int_equal(k->decls[5]->regs, 0);
	assert_int_equal(k->decls[7]->swizzle, SWZ_NONE);
	assert_null(k->decls[7]->ring);
	assert_int_equal(k->decls[8]->swizzle, SWZ_32B);
	assert_string_equal(k->decls[8]->ring, "p");
	assert_int_equal(k->decls[9]->nproducers, 2);
	assert_null(k->decls[9]->ring);
	assert_int_equal(k->decls[10]->split, SPLIT_N);
	assert_int_equal(k->decls[11]->split, SPLIT_NONE);

	Stmt **b = k->body[0]->body;
	Stmt *f = b[0];
	check_int(f->lo, 1);
	check_ident(f->hi, "BM");
	check_int(f->step, 2);
	assert_int_equal(f->unroll, 4);
	assert_string_equal(f->pipe, "p");
	Stmt *iff = f->body[0];
	assert_int_equal(iff->kind, S_IF);
	assert_int_equal(iff->nbody, 1);
	assert_int_equal(iff->body[0]->kind, S_SYNC);
	assert_null(iff->body[0]->name);
	assert_int_equal(iff->nels, 1);
	Stmt *elif = iff->els[0];
	assert_int_equal(elif->kind, S_IF);
	assert_int_equal(elif->cond->op, OP_AND);
	assert_int_equal(elif->cond->rhs->kind, E_UNARY);
	assert_int_equal(elif->cond->rhs->op, '!');
	assert_string_equal(elif->body[0]->name, "w");
	assert_int_equal(elif->els[0]->kind, S_FENCE);
	assert_int_equal(elif->els[0]->fence, FENCE_GPU);

	assert_int_equal(b[1]->kind, S_CP_ASYNC);
	check_ident(b[1]->dst, "s");
	assert_int_equal(b[2]->kind, S_CP_ASYNC);
	assert_int_equal(b[2]->dst->kind, E_INDEX);
	assert_int_equal(b[2]->src->slices[0].kind, SL_ALL);
	assert_int_equal(b[3]->kind, S_MMA);
	assert_false(b[3]->accumulate);
	assert_int_equal(b[4]->kind, S_LOAD);
	assert_int_equal(b[4]->src->slices[0].kind, SL_POINT);
	Stmt *at = b[5];
	assert_int_equal(at->kind, S_ATOMIC);
	/* (-x[0, :] * 1.5) + inf */
	assert_int_equal(at->src->op, '+');
	assert_int_equal(at->src->rhs->kind, E_INF);
	assert_int_equal(at->src->lhs->op, '*');
	assert_int_equal(at->src->lhs->lhs->kind, E_UNARY);
	assert_int_equal(at->src->lhs->lhs->lhs->kind, E_INDEX);
	assert_int_equal(at->src->lhs->rhs->kind, E_FLOAT);
	assert_true(at->src->lhs->rhs->fval == 1.5);
	assert_int_equal(b[6]->fence, FENCE_PROXY_ASYNC);
	assert_int_equal(b[7]->fence, FENCE_CTA);
	Stmt *let = b[8];
	assert_int_equal(let->kind, S_LET);
	assert_string_equal(let->name, "q");
	/* ((0x1F << 2) >> 1) || (eps != 2.5) */
	assert_int_equal(let->src->op, OP_OR);
	assert_int_equal(let->src->lhs->op, OP_SHR);
	assert_int_equal(let->src->lhs->lhs->op, OP_SHL);
	check_int(let->src->lhs->lhs->lhs, 31);
	assert_int_equal(let->src->rhs->op, OP_NE);
	Stmt *tup = b[9];
	assert_int_equal(tup->nlhs, 2);
	check_ident(tup->lhs[1], "i");
	assert_string_equal(tup->src->name, "rowargmin");
	/* `sync` followed by an assignment: the name is not taken as a role */
	assert_int_equal(b[10]->kind, S_SYNC);
	assert_null(b[10]->name);
	assert_int_equal(b[11]->kind, S_ASSIGN);
	assert_int_equal(b[11]->src->nargs, 3);
	assert_int_equal(b[11]->src->args[2]->kind, E_UNARY);
	done(t);
}

static void test_tma_store_and_assoc(void **state)
{
	T *t = parse("kernel k target sm_100a { in r {\n"
	             " tma C[bm * 128 +: 128, 0 +: 64] <- c\n"
	             " x = a - b - c\n"
	             " y = a + b * c\n"
	             " z = (a + b) * c\n"
	             " w = a < b == c\n"
	             " sync load x <- X[0]\n"
	             "} }\n");
	expect_clean(t);
	Kernel *k = t->p->kernels[0];
	assert_int_equal(k->target, TGT_SM100A);
	Stmt **b = k->body[0]->body;
	assert_int_equal(b[0]->kind, S_TMA_STORE);
	assert_int_equal(b[0]->dst->kind, E_INDEX);
	check_ident(b[0]->src, "c");
	assert_int_equal(b[1]->src->op, '-');
	assert_int_equal(b[1]->src->lhs->op, '-');
	check_ident(b[1]->src->rhs, "c");
	assert_int_equal(b[2]->src->op, '+');
	assert_int_equal(b[2]->src->rhs->op, '*');
	assert_int_equal(b[3]->src->op, '*');
	assert_int_equal(b[3]->src->lhs->op, '+');
	assert_int_equal(b[4]->src->op, OP_EQ);
	assert_int_equal(b[4]->src->lhs->op, '<');
	assert_int_equal(b[4]->src->height, 3);
	/* `load` is not a declared role here, so it starts the next statement */
	assert_int_equal(b[5]->kind, S_SYNC);
	assert_null(b[5]->name);
	assert_int_equal(b[6]->kind, S_LOAD);
	done(t);
}

static void test_reserved_and_roles(void **state)
{
	/* roles may use leader keywords (the contract's example does); values may not */
	T *t = parse("kernel k target sm_90a role load warps 0..0 role mma warps 1..1\n"
	             "{ in mma { sync mma\n wait load } }\n");
	expect_clean(t);
	Stmt **b = t->p->kernels[0]->body[0]->body;
	assert_int_equal(b[0]->kind, S_SYNC);
	assert_string_equal(b[0]->name, "mma");
	assert_int_equal(b[1]->kind, S_WAIT);
	done(t);

	t = parse("kernel k target sm_90a frag for: f32[4] in r { in r { let inf = 1 } }\n");
	assert_int_equal(count_rule(t, "CK-SYN-005"), 2);
	const Diag *d = find_rule(t, "CK-SYN-005");
	check_span(d->span, 1, 29, 3);
	assert_non_null(strstr(d->msg, "'for' is a reserved keyword"));
	assert_non_null(d->hint);
	done(t);
}

static void test_error_recovery(void **state)
{
	T *t = parse("kernel k target sm_90a\n"
	             "  role r warps 0..3\n"
	             "{\n"
	             "  in r {\n"
	             "    tma a x\n"
	             "    wait full\n"
	             "    store C[0] <- \n"
	             "    arrive full\n"
	             "    for i in 0 .. 4 { wait q }\n"
	             "  }\n"
	             "}\n");
	assert_int_equal(t->dl.nerr, 2);
	const Diag *d0 = t->dl.items[0], *d1 = t->dl.items[1];
	assert_string_equal(d0->rule, "CK-SYN-001");
	assert_string_equal(d0->msg, "expected '<-' after tma destination, found identifier 'x'");
	check_span(d0->span, 5, 11, 1);
	assert_non_null(d0->hint);
	assert_string_equal(d1->rule, "CK-SYN-001");
	assert_non_null(strstr(d1->msg, "expected an expression"));
	assert_non_null(strstr(d1->msg, "keyword 'arrive'"));
	check_span(d1->span, 8, 5, 6);
	/* everything after each error was still parsed */
	Stmt *in = t->p->kernels[0]->body[0];
	assert_int_equal(in->nbody, 5);
	assert_int_equal(in->body[1]->kind, S_WAIT);
	assert_int_equal(in->body[3]->kind, S_ARRIVE);
	assert_int_equal(in->body[4]->kind, S_FOR);
	done(t);

	/* errors in declarations and in two kernels */
	t = parse("kernel a target sm_90a\n  role r warps 0 3\n  pipeline p stages 2\n{ }\n"
	          "kernel b target sm_70\n  smem s: f64[4]\n{ }\n");
	assert_int_equal(t->p->nkernels, 2);
	assert_int_equal(t->dl.nerr, 3);
	assert_int_equal(t->p->kernels[0]->ndecls, 2);
	assert_int_equal(count_rule(t, "CK-SYN-006"), 2);
	done(t);
}

static void test_specific_errors(void **state)
{
	struct {
		const char *src, *rule, *msg;
	} cases[] = {
		{"kernel k target sm_90a barrier b producers r arrivals 1 { }", "CK-SYN-009",
		 "barrier 'b' is missing its 'consumers ROLE' clause"},
		{"kernel k target sm_90a smem s: f32[4] ring p ring q { }", "CK-SYN-008",
		 "duplicate 'ring' clause"},
		{"kernel k target sm_90a { in r { for i in 0 .. 4 step 1 step 2 { } } }", "CK-SYN-008",
		 "duplicate 'step' clause"},
		{"kernel k target sm_90a { in r { in q { } } }", "CK-SYN-010", "only allowed at the top level"},
		{"kernel k target sm_90a smem s: f32[1, 2, 3, 4, 5] { }", "CK-SYN-012", "5 dimensions"},
		{"kernel k target sm_90a smem s: f32[4] swizzle 128 B { }", "CK-SYN-006", "'128 B'"},
		{"kernel k target sm_90a role r warps 0..3 regs 0 { }", "CK-SYN-007", "out of range"},
		{"kernel k target sm_90a { in r { fence all } }", "CK-SYN-006", "fence kind"},
		{"kernel k target sm_90a { in r { x += 1 } }", "CK-SYN-001", "found '+='"},
		{"kernel k target sm_90a { in r { wgmma acc += a[0] @ b } }", "CK-SYN-001",
		 "expected '@' between the matmul operands"},
		{"kernel k target sm_90a { in r { x = b^U } }", "CK-SYN-001", "expected 'T' after '^'"},
		{"kernel k target sm_90a { in r { x = f(1, 2 } }", "CK-SYN-001", "',' or ')'"},
		{"kernel k target sm_90a { param x: f32 }", "CK-SYN-001", "declaration 'param' inside"},
		{"kernel k target sm_90a { in r { } else { } }", "CK-SYN-001", "'else' without"},
		{"kernel k target sm_90a { in r { target = 1 } }", "CK-SYN-005", "cannot start a statement"},
		{"kernel k target sm_90a grid (1, 2) as (x) { }", "CK-SYN-009", "2 extents but 1"},
		{"role r warps 0..1", "CK-SYN-001", "expected 'kernel'"},
		{"kernel k target sm_90a role r warps 0..1", "CK-SYN-001", "to start the body of kernel 'k'"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		T *t = parse(cases[i].src);
		const Diag *d = find_rule(t, cases[i].rule);
		if (!d || !strstr(d->msg, cases[i].msg)) {
			StrBuf b = {0};
			diag_print_text(&b, &t->ss, &t->dl, false);
			fprintf(stderr, "case %zu (%s): want %s '%s'\n%s", i, cases[i].src, cases[i].rule,
			        cases[i].msg, sb_str(&b));
			sb_free(&b);
		}
		assert_non_null(d);
		assert_non_null(strstr(d->msg, cases[i].msg));
		assert_non_null(d->hint);
		done(t);
	}
}

static void test_unterminated_block(void **state)
{
	T *t = parse("kernel k target sm_90a\n{\n  in r {\n    for i in 0 .. 4 {\n      wait b\n  }\n");
	assert_int_equal(t->dl.nerr, 1);
	const Diag *d = find_rule(t, "CK-SYN-002");
	assert_non_null(d);
	check_span(d->span, 7, 1, 0); /* EOF */
	check_span(d->related, 3, 8, 1); /* the `in r {` brace */
	assert_non_null(d->related_msg);
	assert_non_null(strstr(d->msg, "line 3"));
	/* what was parsed is kept */
	assert_int_equal(t->p->kernels[0]->body[0]->body[0]->nbody, 1);
	done(t);

	/* a second `kernel` also ends an unclosed body, and that kernel parses */
	t = parse("kernel a target sm_90a { in r { wait b }\nkernel b target sm_90a { }\n");
	assert_int_equal(t->dl.nerr, 1);
	assert_int_equal(count_rule(t, "CK-SYN-002"), 1);
	assert_int_equal(t->p->nkernels, 2);
	assert_string_equal(t->p->kernels[1]->name, "b");
	done(t);
}

static char *repeat(const char *pre, const char *unit, int n, const char *post)
{
	size_t lp = strlen(pre), lu = strlen(unit), lq = strlen(post);
	char *s = malloc(lp + lu * (size_t)n + lq + 1);
	memcpy(s, pre, lp);
	for (int i = 0; i < n; i++)
		memcpy(s + lp + lu * (size_t)i, unit, lu);
	memcpy(s + lp + lu * (size_t)n, post, lq + 1);
	return s;
}

static void expect_one_depth_error(const char *src)
{
	T *t = parse(src);
	assert_int_equal(count_rule(t, "CK-SYN-003"), 1);
	const Diag *d = find_rule(t, "CK-SYN-003");
	assert_string_equal(d->msg, "nesting deeper than 256 levels");
	assert_true(t->dl.n <= 3);
	done(t);
}

static void test_depth_limit(void **state)
{
	const char *pre = "kernel k target sm_90a { in r { x = ";
	char *a = repeat(pre, "(", 10000, "1");
	char *b = repeat(a, ")", 10000, " } }\n");
	expect_one_depth_error(b); /* balanced */
	expect_one_depth_error(a); /* never closed */
	free(a);
	free(b);
	a = repeat(pre, "-", 10000, "1 } }");
	expect_one_depth_error(a);
	free(a);
	a = repeat(pre, "f(", 10000, "1");
	expect_one_depth_error(a);
	free(a);
	a = repeat(pre, "x[", 10000, "1");
	expect_one_depth_error(a);
	free(a);
	a = repeat("kernel k target sm_90a { in r { ", "if x { ", 10000, "");
	expect_one_depth_error(a);
	free(a);
	a = repeat("kernel k target sm_90a { in r { if x { } ", "else if x { } ", 10000, "} }");
	expect_one_depth_error(a);
	free(a);
	a = repeat(pre, "1 + ", 100000, "1 } }");
	expect_one_depth_error(a); /* long flat chain: bounded tree height */
	free(a);
	a = repeat("kernel k target sm_90a ", "{", 10000, "");
	T *t = parse(a);
	assert_true(t->dl.n > 0 && t->dl.n <= 3);
	done(t);
	free(a);

	/* exactly at the limit is fine */
	a = repeat(pre, "(", 250, "1");
	b = repeat(a, ")", 250, " } }");
	t = parse(b);
	expect_clean(t);
	done(t);
	free(a);
	free(b);

	/* the limit is configurable */
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	const char *src = "kernel k target sm_90a { in r { x = ((((1)))) } }";
	int f = src_add(&ss, "d.cake", src, strlen(src));
	ctx_init(&c, &ss, &dl);
	c.max_depth = 3;
	parse_file(&c, f);
	assert_int_equal(dl.nerr, 1);
	assert_string_equal(dl.items[0]->msg, "nesting deeper than 3 levels");
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
}

static void test_garbage(void **state)
{
	size_t n = 1 << 16;
	char *buf = malloc(n);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int round = 0; round < 8; round++) {
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[i] = (char)(x >> 24);
			if (round & 1) /* mostly printable ASCII, with some tokens and NULs */
				buf[i] = (char)(" {}()[]kernel<-+:=\n\t\0xyz09#/*$"[(x >> 24) % 31]);
		}
		T *t = parse_n(buf, n);
		assert_true(t->dl.nerr > 0);
		assert_true(t->dl.n <= 50 + 50 + 4);
		/* printers never crash on the result */
		StrBuf b = {0};
		diag_print_text(&b, &t->ss, &t->dl, false);
		print_program(&b, t->p);
		sb_free(&b);
		done(t);
	}
	free(buf);

	/* one run of bad bytes is one diagnostic */
	T *t = parse("kernel k target sm_90a $$$\x01\x02\xff\xfe { }");
	assert_int_equal(t->dl.n, 1);
	const Diag *d = t->dl.items[0];
	assert_string_equal(d->rule, "CK-LEX-001");
	check_span(d->span, 1, 24, 7);
	assert_non_null(strstr(d->msg, "7 bytes of invalid input"));
	done(t);

	t = parse("kernel k target sm_90a ; { }");
	assert_int_equal(t->dl.n, 1);
	assert_string_equal(t->dl.items[0]->msg, "invalid character ';'");
	done(t);

	static const char nul[] = "kernel k target sm_90a \0 { }";
	t = parse_n(nul, sizeof nul - 1);
	assert_int_equal(t->dl.n, 1);
	assert_string_equal(t->dl.items[0]->rule, "CK-LEX-004");
	check_span(t->dl.items[0]->span, 1, 24, 1);
	assert_int_equal(t->p->nkernels, 1);
	done(t);
}

static void test_utf8(void **state)
{
	T *t = parse("kernel k target sm_90a\n  role r warps 0..1 \xff\n{ }\n");
	assert_int_equal(t->dl.n, 1);
	assert_string_equal(t->dl.items[0]->rule, "CK-LEX-002");
	assert_string_equal(t->dl.items[0]->msg, "invalid UTF-8 byte 0xFF");
	check_span(t->dl.items[0]->span, 2, 21, 1);
	done(t);

	/* valid UTF-8 in comments is fine; outside it is not */
	t = parse("# \xe2\x80\x96" "c\xe2\x80\x96\n/* \xc3\xa9t\xc3\xa9 */ kernel k target sm_90a { }\n");
	expect_clean(t);
	assert_int_equal(t->p->ncomments, 2);
	done(t);
	t = parse("kernel k\xc3\xa9 target sm_90a { }\n");
	assert_int_equal(count_rule(t, "CK-LEX-001"), 1);
	assert_non_null(strstr(find_rule(t, "CK-LEX-001")->msg, "U+00E9"));
	done(t);
	/* a byte-order mark is skipped at the start of the file only */
	t = parse("\xEF\xBB\xBFkernel k target sm_90a { }\n");
	expect_clean(t);
	check_span(t->p->kernels[0]->name_span, 1, 8, 1);
	assert_int_equal(t->p->kernels[0]->span.off, 3);
	done(t);
	t = parse("kernel k target sm_90a { } \xEF\xBB\xBF\n");
	assert_int_equal(count_rule(t, "CK-LEX-001"), 1);
	done(t);
	/* an overlong encoding and a lone surrogate are invalid */
	t = parse("kernel k target sm_90a { } # \xc0\xaf\n/* \xed\xa0\x80 */\n");
	assert_int_equal(count_rule(t, "CK-LEX-002"), 2);
	done(t);
}

static void test_empty_and_comments_only(void **state)
{
	T *t = parse("");
	assert_int_equal(t->dl.n, 1);
	assert_string_equal(t->dl.items[0]->rule, "CK-SYN-004");
	assert_string_equal(t->dl.items[0]->msg, "file contains no kernel");
	check_span(t->dl.items[0]->span, 1, 1, 0);
	assert_int_equal(t->p->nkernels, 0);
	done(t);
	t = parse("# nothing here\n\n/* at all */\n");
	assert_int_equal(t->dl.n, 1);
	assert_string_equal(t->dl.items[0]->rule, "CK-SYN-004");
	done(t);
}

static void test_unterminated_comment(void **state)
{
	T *t = parse("kernel k target sm_90a { }\n  /* never\nclosed\n");
	assert_int_equal(t->dl.n, 1);
	const Diag *d = t->dl.items[0];
	assert_string_equal(d->rule, "CK-LEX-003");
	check_span(d->span, 2, 3, 2);
	assert_int_equal(t->p->nkernels, 1);
	done(t);
}

static void test_lexer(void **state)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	const char *src = "0..3 128B 1.5 1e-6 2.0e3 0x1F <- +: += -= == != <= >= << >> && || inf\n  x^T @ % !";
	int f = src_add(&ss, "l.cake", src, strlen(src));
	ctx_init(&c, &ss, &dl);
	int n;
	Token *t = lex_file(&c, f, &n);
	TokKind want[] = {T_INT, T_DOTDOT, T_INT, T_INT, T_IDENT, T_FLOAT, T_FLOAT, T_FLOAT, T_INT,
	                  T_LARROW, T_PLUSCOLON, T_PLUSEQ, T_MINUSEQ, T_EQ, T_NE, T_LE, T_GE, T_SHL, T_SHR,
	                  T_ANDAND, T_OROR, T_IDENT, T_IDENT, T_CARET, T_IDENT, T_AT, T_PERCENT,
	                  T_BANG, T_EOF};
	assert_int_equal(n, (int)NELEM(want));
	for (int i = 0; i < n; i++)
		assert_int_equal(t[i].kind, want[i]);
	assert_int_equal(dl.n, 0);
	assert_int_equal(t[2].ival, 3);
	assert_int_equal(t[3].ival, 128);
	check_span(t[4].span, 1, 9, 1);
	assert_true(t[5].fval == 1.5);
	assert_true(t[6].fval == 1e-6);
	assert_true(t[7].fval == 2000.0);
	assert_int_equal(t[8].ival, 31);
	check_span(t[22].span, 2, 3, 1);   /* x on the second line */
	assert_int_equal(t[22].span.off, 72);
	assert_string_equal(tok_name(T_LARROW), "'<-'");
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);

	struct {
		const char *src, *rule;
		int col, len;
	} bad[] = {
		{"x = 99999999999999999999", "CK-LEX-005", 5, 20},
		{"x = 0x8000000000000000", "CK-LEX-005", 5, 18},
		{"x = 1e999", "CK-LEX-005", 5, 5},
		{"x = 12ab", "CK-LEX-006", 5, 4},
		{"x = 0x", "CK-LEX-006", 5, 2},
		{"x = 1.5.3", "CK-LEX-006", 5, 5},
		{"x = 2e", "CK-LEX-006", 5, 2},
		{"x = 128Bx", "CK-LEX-006", 5, 5},
		{"x = a & b", "CK-LEX-001", 7, 1},
		{"x = a . b", "CK-LEX-001", 7, 1},
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		SourceSet s2 = {0};
		DiagList d2 = {0};
		f = src_add(&s2, "b.cake", bad[i].src, strlen(bad[i].src));
		ctx_init(&c, &s2, &d2);
		lex_file(&c, f, &n);
		assert_int_equal(d2.n, 1);
		assert_string_equal(d2.items[0]->rule, bad[i].rule);
		check_span(d2.items[0]->span, 1, bad[i].col, bad[i].len);
		assert_non_null(d2.items[0]->hint);
		ctx_free(&c);
		diag_free(&d2);
		src_free(&s2);
	}
	/* 9223372036854775807 is the largest accepted integer */
	T *tt = parse("kernel k target sm_90a { in r { x = 9223372036854775807 } }");
	expect_clean(tt);
	assert_true(tt->p->kernels[0]->body[0]->body[0]->src->ival == INT64_MAX);
	done(tt);
}

/* Lone '&' / '|' and `b.T` are reported once and read as what was meant. */
static void test_lex_recovery_tokens(void **state)
{
	T *t = parse("kernel k target sm_90a { in r { x = a & b | c\n wgmma acc += a @ b.T\n } }");
	assert_int_equal(t->dl.nerr, 3);
	assert_int_equal(count_rule(t, "CK-LEX-001"), 3);
	Stmt **b = t->p->kernels[0]->body[0]->body;
	assert_int_equal(b[0]->src->op, OP_OR);
	assert_int_equal(b[0]->src->lhs->op, OP_AND);
	assert_int_equal(b[1]->kind, S_WGMMA);
	assert_int_equal(b[1]->src->rhs->kind, E_TRANSPOSE);
	assert_string_equal(t->dl.items[2]->hint, "the transpose is written b^T");
	done(t);
	/* '=' where '==' was meant gets a targeted hint */
	t = parse("kernel k target sm_90a domain M % 2 = 0 { in r { if k = 0 { } } }");
	assert_int_equal(t->dl.nerr, 2);
	assert_non_null(strstr(t->dl.items[0]->hint, "'=='"));
	assert_non_null(strstr(t->dl.items[1]->hint, "'=='"));
	done(t);
}

/* Every proper prefix of the example, and the example with any one token
 * deleted, gives at least one error, only a few, and never a crash: the
 * recovery paths after each expected token all run. */
static void test_truncations_and_deletions(void **state)
{
	size_t len = strlen(GEMM);
	int worst = 0;
	for (size_t cut = 0; cut < len; cut++) {
		bool blank_tail = true;
		for (size_t i = cut; i < len; i++)
			blank_tail = blank_tail && (GEMM[i] == ' ' || GEMM[i] == '\n' || GEMM[i] == '}');
		T *t = parse_n(GEMM, cut);
		if (cut > 0 && !blank_tail)
			assert_true(t->dl.nerr >= 1);
		worst = t->dl.nerr > worst ? t->dl.nerr : worst;
		done(t);
	}
	assert_true(worst <= 2);
	/* delete one token at a time (tokens found with the lexer itself) */
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	int f = src_add(&ss, "g.cake", GEMM, len);
	ctx_init(&c, &ss, &dl);
	int n;
	Token *toks = lex_file(&c, f, &n);
	char *buf = malloc(len + 1);
	int worst_del = 0, clean = 0;
	for (int i = 0; i + 1 < n; i++) {
		size_t a = (size_t)toks[i].span.off, b = a + (size_t)toks[i].n;
		memcpy(buf, GEMM, a);
		memcpy(buf + a, GEMM + b, len - b);
		T *t = parse_n(buf, len - (b - a));
		worst_del = t->dl.nerr > worst_del ? t->dl.nerr : worst_del;
		clean += t->dl.nerr == 0;
		done(t);
	}
	fprintf(stderr, "  [ info ] %zu prefixes (max %d errors), %d deletions (max %d errors, %d still parse)\n",
	        len, worst, n - 1, worst_del, clean);
	assert_true(worst_del <= 2);
	free(buf);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
}

static void test_lex_error_cap(void **state)
{
	char *s = repeat("kernel k target sm_90a {", " $", 500, " }");
	T *t = parse(s);
	assert_int_equal(count_rule(t, "CK-LEX-001"), 50);
	assert_int_equal(count_rule(t, "CK-LEX-007"), 1);
	assert_int_equal(t->dl.items[50]->sev, SEV_NOTE);
	done(t);
	free(s);
	s = repeat("kernel k target sm_90a { in r {", " x x", 500, " } }");
	t = parse(s);
	assert_int_equal(t->dl.nerr, 1); /* panic mode: one error, then resync */
	done(t);
	free(s);
	s = repeat("", "kernel k target bad { }\n", 500, "");
	t = parse(s);
	assert_int_equal(t->dl.nerr, 50);
	assert_int_equal(count_rule(t, "CK-SYN-011"), 1);
	done(t);
	free(s);
}

static void test_huge_file(void **state)
{
	size_t unit = strlen(GEMM), target = 10u << 20;
	size_t reps = target / unit + 1;
	char *s = malloc(reps * unit + 1);
	for (size_t i = 0; i < reps; i++)
		memcpy(s + i * unit, GEMM, unit);
	s[reps * unit] = 0;
	struct timespec a, b;
	/* CPU time, not wall time: other jobs on the machine must not make
	 * this test flaky */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	T *t = parse_n(s, reps * unit);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	expect_clean(t);
	assert_int_equal(t->p->nkernels, (int)reps);
	assert_int_equal(t->p->ncomments, (int)reps);
	/* last kernel's spans are exact */
	Kernel *k = t->p->kernels[reps - 1];
	int lines = 0;
	for (const char *q = GEMM; *q; q++)
		lines += *q == '\n';
	assert_int_equal(k->span.line, (int)((size_t)lines * (reps - 1) + 1));
	assert_int_equal(k->span.off, (int)(unit * (reps - 1)));
	fprintf(stderr, "  [ info ] 10 MB file: %zu kernels parsed in %.3f s CPU\n", reps, secs);
	/* ~0.5 s in a release build; this binary runs under ASan+UBSan (~3x) */
	assert_true(secs < 6.0);
	done(t);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_example),
		cmocka_unit_test(test_other_constructs),
		cmocka_unit_test(test_tma_store_and_assoc),
		cmocka_unit_test(test_reserved_and_roles),
		cmocka_unit_test(test_error_recovery),
		cmocka_unit_test(test_specific_errors),
		cmocka_unit_test(test_unterminated_block),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_empty_and_comments_only),
		cmocka_unit_test(test_unterminated_comment),
		cmocka_unit_test(test_lexer),
		cmocka_unit_test(test_lex_recovery_tokens),
		cmocka_unit_test(test_truncations_and_deletions),
		cmocka_unit_test(test_lex_error_cap),
		cmocka_unit_test(test_huge_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
