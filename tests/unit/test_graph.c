/*
 * test_graph.c — the schedule graph built from sema-checked kernels.
 *
 * The contract's GEMM: ops per role in program order, loop structure,
 * barrier users and the tx bytes of `full` (16384 + 32768 = 49152), the
 * accesses of every buffer with their async kind and ring flag. A second
 * kernel checks guards (if/else), trip counts, atomics, scalar reads in
 * slice bounds and by_stmt lookup.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "front/front.h"
#include "front/graph.h"
#include "testlib.h"

static const char GEMM[] = TL_GEMM_SRC("");

typedef struct Fx {
	SourceSet ss;
	DiagList dl;
	Ctx c;
	Program *p;
	Kernel *k;
	Graph *g;
} Fx;

static Fx *build(const char *src)
{
	Fx *f = calloc(1, sizeof *f);
	assert_non_null(f);
	int id = src_add(&f->ss, "g.cake", src, strlen(src));
	ctx_init(&f->c, &f->ss, &f->dl);
	f->p = parse_file(&f->c, id);
	bool ok = f->dl.nerr == 0 && sema_program(&f->c, f->p);
	if (!ok) {
		StrBuf b = {0};
		diag_print_text(&b, &f->ss, &f->dl, false);
		print_message("%s\n", sb_str(&b));
		sb_free(&b);
	}
	assert_true(ok);
	f->k = f->p->kernels[0];
	f->g = graph_build(&f->c, f->k);
	assert_non_null(f->g);
	return f;
}

static void fx_free(Fx *f)
{
	diag_free(&f->dl);
	ctx_free(&f->c);
	src_free(&f->ss);
	free(f);
}

static void test_gemm_roles_and_ops(void **state)
{
	(void)state;
	Fx *f = build(GEMM);
	Graph *g = f->g;
	assert_int_equal(g->nroles, 2);
	GRole *load = graph_role(g, "load"), *mma = graph_role(g, "mma");
	assert_non_null(load);
	assert_non_null(mma);
	assert_ptr_equal(g->roles[0], load);
	assert_int_equal(load->nwarps, 4);
	assert_int_equal(mma->nwarps, 8);
	assert_int_equal(mma->nwarpgroups, 2);
	assert_int_equal(graph_arrive_units(mma), 2);
	assert_int_equal(graph_arrive_units(load), 1);
	/* load: for, wait, tma, tma */
	static const StmtKind lk[] = { S_FOR, S_WAIT, S_TMA_LOAD, S_TMA_LOAD };
	assert_int_equal(load->nops, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(load->ops[i]->kind, lk[i]);
		assert_int_equal(load->ops[i]->index, i);
		assert_ptr_equal(load->ops[i]->role, load);
	}
	/* mma: assign, for, wait, wgmma, wgmma_wait, arrive, store */
	static const StmtKind mk[] = { S_ASSIGN, S_FOR, S_WAIT, S_WGMMA, S_WGMMA_WAIT, S_ARRIVE, S_STORE };
	assert_int_equal(mma->nops, 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(mma->ops[i]->kind, mk[i]);
	assert_int_equal(g->nops, 11);
	assert_ptr_equal(g->ops[4], mma->ops[0]);
	assert_int_equal(mma->ops[0]->gid, 4);
	/* loops */
	assert_int_equal(load->nloops, 1);
	GLoop *lp = load->loops[0];
	assert_string_equal(lp->var, "k");
	assert_int_equal(lp->depth, 1);
	assert_int_equal(lp->stages, 4);
	assert_int_equal(lp->trip, -1);          /* K / 64 is symbolic */
	assert_string_equal(lp->pipe->name, "ab");
	assert_null(load->ops[0]->loop);         /* the for itself is at top level */
	assert_ptr_equal(load->ops[0]->opens, lp);
	assert_null(load->ops[1]->opens);
	assert_ptr_equal(load->ops[1]->loop, lp);
	assert_ptr_equal(load->ops[2]->ploop, lp);
	assert_true(graph_loop_encloses(lp, load->ops[3]));
	assert_false(graph_loop_encloses(lp, load->ops[0]));
	assert_null(mma->ops[0]->loop);
	assert_null(mma->ops[6]->ploop);
	assert_ptr_equal(graph_next_op(mma->ops[2]), mma->ops[3]);
	assert_null(graph_next_op(mma->ops[6]));
	/* by_stmt */
	Stmt *wg = f->k->body[1]->body[1]->body[1];
	assert_ptr_equal(graph_op_of(g, wg), mma->ops[3]);
	assert_null(graph_op_of(g, f->k->body[0]));  /* S_IN has no op */
	fx_free(f);
}

static void test_gemm_barriers(void **state)
{
	(void)state;
	Fx *f = build(GEMM);
	Graph *g = f->g;
	GBar *full = graph_bar(g, "full"), *empty = graph_bar(g, "empty");
	assert_non_null(full);
	assert_non_null(empty);
	assert_int_equal(full->nsignals, 2);
	assert_int_equal(full->nwaits, 1);
	assert_int_equal(full->narrives, 0);
	assert_int_equal(full->signals[0]->tx_bytes, 128 * 64 * 2);
	assert_int_equal(full->signals[1]->tx_bytes, 256 * 64 * 2);
	assert_int_equal(full->tx_bytes, 49152);
	assert_string_equal(full->waits[0]->role->name, "mma");
	assert_int_equal(full->signals[0]->bar_use, GB_SIGNAL);
	assert_int_equal(empty->nwaits, 1);
	assert_int_equal(empty->narrives, 1);
	assert_int_equal(empty->nsignals, 0);
	assert_int_equal(empty->tx_bytes, 0);
	assert_string_equal(empty->waits[0]->role->name, "load");
	assert_string_equal(empty->arrives[0]->role->name, "mma");
	assert_int_equal(empty->arrives[0]->bar_use, GB_ARRIVE);
	assert_string_equal(full->ring->name, "ab");
	/* the span of the first signaller is line 19 */
	assert_int_equal(full->signals[0]->span.line, 19);
	fx_free(f);
}

static void test_gemm_accesses(void **state)
{
	(void)state;
	Fx *f = build(GEMM);
	Graph *g = f->g;
	assert_int_equal(g->nres, 6);   /* A B C a b acc */
	GRes *a = graph_res(g, "a"), *b = graph_res(g, "b"), *acc = graph_res(g, "acc");
	GRes *A = graph_res(g, "A"), *C = graph_res(g, "C");
	assert_int_equal(a->space, SP_SMEM);
	assert_int_equal(a->bytes, 16384);
	assert_int_equal(b->bytes, 32768);
	assert_int_equal(acc->bytes, 128 * 256 * 4);
	assert_int_equal(A->space, SP_GLOBAL);
	/* a: TMA write by load, wgmma read by mma, both at the ring's stage */
	assert_int_equal(a->nacc, 2);
	assert_int_equal(a->acc[0]->mode, GA_WRITE);
	assert_int_equal(a->acc[0]->async, GX_TMA);
	assert_string_equal(a->acc[0]->op->role->name, "load");
	assert_true(a->acc[0]->ring);
	assert_ptr_equal(a->acc[0]->ring_loop, graph_role(g, "load")->loops[0]);
	assert_int_equal(a->acc[1]->mode, GA_READ);
	assert_int_equal(a->acc[1]->async, GX_WGMMA);
	assert_string_equal(a->acc[1]->op->role->name, "mma");
	assert_ptr_equal(a->acc[1]->ring_loop, graph_role(g, "mma")->loops[0]);
	assert_int_equal(b->nacc, 2);
	/* acc: written by `acc = 0`, read+written by wgmma +=, read by the store */
	assert_int_equal(acc->nacc, 3);
	assert_int_equal(acc->acc[0]->mode, GA_WRITE);
	assert_int_equal(acc->acc[0]->async, GX_SYNC);
	assert_int_equal(acc->acc[1]->mode, GA_RW);
	assert_int_equal(acc->acc[1]->async, GX_WGMMA);
	assert_int_equal(acc->acc[2]->mode, GA_READ);
	assert_false(acc->acc[2]->ring);
	/* globals */
	assert_int_equal(A->nacc, 1);
	assert_int_equal(A->acc[0]->mode, GA_READ);
	assert_int_equal(A->acc[0]->async, GX_TMA);
	assert_int_equal(C->nacc, 1);
	assert_int_equal(C->acc[0]->mode, GA_WRITE);
	assert_int_equal(C->acc[0]->op->kind, S_STORE);
	/* op-level lookup */
	GOp *wg = graph_role(g, "mma")->ops[3];
	assert_true(wg->async);
	assert_non_null(graph_op_access(wg, acc, GA_WRITE));
	assert_non_null(graph_op_access(wg, b, GA_READ));
	assert_null(graph_op_access(wg, b, GA_WRITE));
	/* the dump names everything */
	StrBuf sb = {0};
	graph_dump(&sb, g);
	assert_non_null(strstr(sb_str(&sb), "barrier full: 1 waits, 0 arrives, 2 signals, tx 49152 bytes"));
	sb_free(&sb);
	fx_free(f);
}

static const char MISC[] =
	"kernel misc target sm_90a\n"
	"  param X: global f32[N, 64]\n"
	"  param cnt: global i32[N]\n"
	"  param Y: global f32[N, 64]\n"
	"  role w warps 0..1\n"
	"  frag x: f32[64] in w\n"
	"  grid (N) as (r)\n"
	"{\n"
	"  in w {\n"
	"    for i in 0 .. 10 step 3 {\n"
	"      if cnt[r] > i {\n"
	"        load x <- X[r, 0 +: 64]\n"
	"      } else {\n"
	"        x = 0\n"
	"      }\n"
	"      atomic_add Y[cnt[r], 0 +: 64] <- x\n"
	"    }\n"
	"  }\n"
	"}\n";

static void test_misc_guards_trips_atomics(void **state)
{
	(void)state;
	Fx *f = build(MISC);
	Graph *g = f->g;
	GRole *w = graph_role(g, "w");
	assert_int_equal(w->nwarps, 2);
	assert_int_equal(graph_arrive_units(w), 1);
	assert_int_equal(w->nloops, 1);
	assert_int_equal(w->loops[0]->trip, 4);   /* 0, 3, 6, 9 */
	assert_null(w->loops[0]->pipe);
	/* for, if, load, assign, atomic */
	assert_int_equal(w->nops, 5);
	GOp *iff = w->ops[1], *ld = w->ops[2], *as = w->ops[3], *at = w->ops[4];
	assert_int_equal(iff->kind, S_IF);
	assert_ptr_equal(ld->guard, iff->stmt);
	assert_false(ld->in_else);
	assert_ptr_equal(as->guard, iff->stmt);
	assert_true(as->in_else);
	assert_null(at->guard);
	/* the if condition reads cnt */
	GRes *cnt = graph_res(g, "cnt");
	assert_non_null(graph_op_access(iff, cnt, GA_READ));
	/* atomic: read-modify-write of Y, reads x and cnt (slice start) */
	GRes *Y = graph_res(g, "Y"), *x = graph_res(g, "x");
	GAccess *ay = graph_op_access(at, Y, GA_WRITE);
	assert_non_null(ay);
	assert_int_equal(ay->mode, GA_RW);
	assert_true(ay->atomic);
	assert_non_null(graph_op_access(at, x, GA_READ));
	assert_non_null(graph_op_access(at, cnt, GA_READ));
	assert_int_equal(cnt->nacc, 2);
	assert_int_equal(x->nacc, 3);
	assert_int_equal(g->nbars, 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_roles_and_ops),
		cmocka_unit_test(test_gemm_barriers),
		cmocka_unit_test(test_gemm_accesses),
		cmocka_unit_test(test_misc_guards_trips_atomics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
