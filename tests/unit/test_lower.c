/*
 * test_lower.c — the derived plan and the sm_90a lowering.
 *
 * The GEMM of docs/SYNTAX-CONTRACT.txt is compiled from an inline string
 * through the real parser and sema; the test then checks every derived
 * number against a hand derivation (offsets and their alignment, total
 * dynamic smem = 4 x (16384 + 32768) + 8 mbarriers + 1024 B slack, expect_tx
 * 49152 on `full`, arrivals, the starts-free convention, setmaxnreg values,
 * tensor-map boxes innermost first, argument order) and that the generated
 * CUDA holds the key PTX. Variants check the refusals (sm_80 target,
 * clusters, unsupported statements), the persistent grid, the --debug-hang
 * recorder and expression/domain evaluation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lower/lower.h"

static const char GEMM[] =
	"kernel gemm_bf16 target sm_90a\n"
	"  param A: global bf16[M, K]\n"
	"  param B: global bf16[N, K]\n"
	"  param C: global bf16[M, N]\n"
	"  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64\n"
	"  grid (N / 256, M / 128) as (bn, bm)\n"
	"  role load warps 0..3 regs 40\n"
	"  role mma  warps 4..11 regs 232            # two consumer warpgroups\n"
	"  pipeline ab stages 4\n"
	"  smem a: bf16[128, 64] swizzle 128B ring ab\n"
	"  smem b: bf16[256, 64] swizzle 128B ring ab\n"
	"  barrier full  ring ab producers load consumers mma  arrivals 1\n"
	"  barrier empty ring ab producers mma  consumers load arrivals 2\n"
	"  frag acc: f32[128, 256] in mma split m\n"
	"{\n"
	"  in load {\n"
	"    for k in 0 .. K / 64 pipelined ab {\n"
	"      wait empty\n"
	"      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full\n"
	"      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full\n"
	"    }\n"
	"  }\n"
	"  in mma {\n"
	"    acc = 0\n"
	"    for k in 0 .. K / 64 pipelined ab {\n"
	"      wait full\n"
	"      wgmma acc += a @ b^T\n"
	"      wgmma_wait 0\n"
	"      arrive empty\n"
	"    }\n"
	"    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n"
	"  }\n"
	"}\n";

typedef struct Fx {
	SourceSet ss;
	DiagList dl;
	Ctx c;
	Program *prog;
	Kernel *k;
} Fx;

/* Parse + sema `text`; the kernel must pass the front end. */
static void fx_open(Fx *f, const char *text)
{
	memset(f, 0, sizeof *f);
	ctx_init(&f->c, &f->ss, &f->dl);
	int fi = src_add(&f->ss, "gemm.cake", text, strlen(text));
	f->prog = parse_file(&f->c, fi);
	assert_int_equal(f->dl.nerr, 0);
	sema_program(&f->c, f->prog);
	if (f->dl.nerr) {
		StrBuf b = {0};
		diag_print_text(&b, &f->ss, &f->dl, false);
		fprintf(stderr, "%s", sb_str(&b));
		sb_free(&b);
	}
	assert_int_equal(f->dl.nerr, 0);
	assert_int_equal(f->prog->nkernels, 1);
	f->k = f->prog->kernels[0];
}

static void fx_close(Fx *f)
{
	diag_free(&f->dl);
	ctx_free(&f->c);
	src_free(&f->ss);
}

/* Replace the first occurrence of `from` in GEMM by `to` (malloc'd result). */
static char *gemm_with(const char *from, const char *to)
{
	const char *at = strstr(GEMM, from);
	assert_non_null(at);
	size_t n = strlen(GEMM) - strlen(from) + strlen(to) + 1;
	char *s = malloc(n);
	assert_non_null(s);
	size_t pre = (size_t)(at - GEMM);
	memcpy(s, GEMM, pre);
	strcpy(s + pre, to);
	strcat(s, at + strlen(from));
	return s;
}

static bool has_rule(const DiagList *dl, const char *id)
{
	for (int i = 0; i < dl->n; i++)
		if (strcmp(dl->items[i]->rule, id) == 0)
			return true;
	return false;
}

static void test_gemm_plan(void **state)
{
	Fx f;
	fx_open(&f, GEMM);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(f.dl.nerr, 0);

	/* roles */
	assert_int_equal(p->nroles, 2);
	assert_int_equal(p->block_threads, 384);
	assert_int_equal(p->nwarpgroups, 3);
	assert_int_equal(p->base_regs, 168);
	assert_string_equal(p->roles[0].name, "load");
	assert_int_equal(p->roles[0].thread_lo, 0);
	assert_int_equal(p->roles[0].nthreads, 128);
	assert_int_equal(p->roles[0].nwg, 1);
	assert_int_equal(p->roles[0].regs, 40);
	assert_int_equal(p->roles[0].regs_dir, -1);
	assert_true(p->roles[0].single_thread);
	assert_int_equal(p->roles[1].thread_lo, 128);
	assert_int_equal(p->roles[1].nthreads, 256);
	assert_int_equal(p->roles[1].wg_lo, 1);
	assert_int_equal(p->roles[1].nwg, 2);
	assert_int_equal(p->roles[1].regs, 232);
	assert_int_equal(p->roles[1].regs_dir, 1);
	assert_false(p->roles[1].single_thread);
	assert_int_equal(p->roles[1].arrivals_per_arrive, 2);

	/* shared memory */
	assert_int_equal(p->nbuffers, 2);
	int a = plan_buffer_index(p, "a"), b = plan_buffer_index(p, "b");
	assert_true(a >= 0 && b >= 0);
	assert_int_equal(p->buffers[a].bytes_per_stage, 16384);
	assert_int_equal(p->buffers[b].bytes_per_stage, 32768);
	assert_int_equal(p->buffers[a].stages, 4);
	for (int i = 0; i < p->nbuffers; i++) {
		assert_int_equal(p->buffers[i].align, 1024);
		assert_int_equal(p->buffers[i].offset % 1024, 0);
		assert_int_equal(p->buffers[i].stage_stride % 1024, 0);
		assert_int_equal(p->buffers[i].desc_sbo, 1024);
		assert_int_equal(p->buffers[i].desc_layout, 1);
		assert_true(p->buffers[i].tma_dst && p->buffers[i].wgmma_operand);
	}
	/* the buffers do not overlap */
	long long ea = p->buffers[a].offset + 4 * 16384, eb = p->buffers[b].offset + 4 * 32768;
	assert_true(ea <= p->buffers[b].offset || eb <= p->buffers[a].offset);
	int full = plan_barrier_index(p, "full"), empty = plan_barrier_index(p, "empty");
	assert_true(full >= 0 && empty >= 0);
	assert_int_equal(p->barriers[full].offset % 8, 0);
	assert_int_equal(p->barriers[empty].offset % 8, 0);
	assert_true(p->barriers[full].offset >= 4 * (16384 + 32768));
	assert_int_equal(p->barriers[full].count, 4);
	assert_int_equal(p->smem_used, 4 * (16384 + 32768) + 2 * 4 * 8);
	assert_int_equal(p->smem_bytes, 4 * (16384 + 32768) + 2 * 4 * 8 + 1024);

	/* barriers */
	assert_int_equal(p->barriers[full].tx_bytes, 49152);
	assert_int_equal(p->barriers[full].arrivals, 1);
	assert_false(p->barriers[full].starts_free);
	assert_int_equal(p->barriers[empty].tx_bytes, 0);
	assert_int_equal(p->barriers[empty].arrivals, 2);
	assert_true(p->barriers[empty].starts_free);

	/* pipelined loops: one per role, both on ab */
	assert_int_equal(p->nloops, 2);
	assert_int_equal(p->loops[0].role, 0);
	assert_int_equal(p->loops[1].role, 1);
	assert_string_equal(p->loops[0].stage_var, "ab_stage");

	/* tensor maps: boxes innermost first */
	assert_int_equal(p->ntmaps, 2);
	assert_string_equal(p->tmaps[0].param, "A");
	assert_int_equal(p->tmaps[0].rank, 2);
	assert_int_equal(p->tmaps[0].box[0], 64);
	assert_int_equal(p->tmaps[0].box[1], 128);
	assert_int_equal(p->tmaps[0].swizzle, SWZ_128B);
	assert_int_equal(p->tmaps[0].box_bytes, 16384);
	assert_string_equal(p->tmaps[1].param, "B");
	assert_int_equal(p->tmaps[1].box[0], 64);
	assert_int_equal(p->tmaps[1].box[1], 256);
	assert_int_equal(p->tmaps[1].smem_buffer, b);
	/* global dims and strides evaluate with bound dims (dims in Kernel.dims order) */
	long long dv[8] = {0};
	for (int i = 0; i < p->ndims; i++)
		dv[i] = strcmp(p->dims[i], "M") == 0 ? 512 : strcmp(p->dims[i], "N") == 0 ? 1024 : 320;
	long long v = 0;
	assert_true(eval_expr(p->tmaps[0].gdims[0], f.k, dv, &v));
	assert_int_equal(v, 320);     /* K innermost */
	assert_true(eval_expr(p->tmaps[0].gdims[1], f.k, dv, &v));
	assert_int_equal(v, 512);     /* M */
	assert_true(eval_expr(p->tmaps[0].gstrides[1], f.k, dv, &v));
	assert_int_equal(v, 640);     /* K * 2 bytes */
	assert_true(eval_expr(p->tiles, f.k, dv, &v));
	assert_int_equal(v, (1024 / 256) * (512 / 128));

	/* fragment */
	assert_int_equal(p->nfrags, 1);
	assert_int_equal(p->frags[0].wg_rows, 64);
	assert_int_equal(p->frags[0].mtiles, 1);
	assert_int_equal(p->frags[0].regs_per_thread, 128);

	/* launch and args */
	assert_int_equal(p->grid_rank, 2);
	assert_false(p->persistent);
	assert_int_equal(p->cluster[0] * p->cluster[1] * p->cluster[2], 1);
	assert_int_equal(p->nargs, 3 + p->ndims);
	assert_int_equal(p->args[0].kind, ARG_TMAP);
	assert_string_equal(p->args[0].name, "tmA");
	assert_int_equal(p->args[1].kind, ARG_TMAP);
	assert_string_equal(p->args[1].name, "tmB");
	assert_int_equal(p->args[2].kind, ARG_PTR);
	assert_string_equal(p->args[2].name, "C");
	for (int i = 3; i < p->nargs; i++)
		assert_int_equal(p->args[i].kind, ARG_DIM);

	StrBuf pb = {0};
	plan_print(&pb, p);
	assert_non_null(strstr(sb_str(&pb), "49152"));
	assert_non_null(strstr(sb_str(&pb), "starts free"));
	sb_free(&pb);
	fx_close(&f);
}

static void test_gemm_cuda(void **state)
{
	Fx f;
	fx_open(&f, GEMM);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *s = sb_str(&cu);
	static const char *must[] = {
		"extern \"C\" __global__ void __launch_bounds__(384, 1)",
		"const __grid_constant__ CUtensorMap tmA",
		"mbarrier.init.shared::cta.b64",
		"fence.mbarrier_init.release.cluster",
		"fence.proxy.async.shared::cta",
		"mbarrier.try_wait.parity.shared::cta.b64",
		"mbarrier.arrive.expect_tx.shared::cta.b64",
		"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
		"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
		"%127}, %128, %129, p, 1, 1, 0, 0;",
		"wgmma.fence.sync.aligned",
		"wgmma.commit_group.sync.aligned",
		"wgmma.wait_group.sync.aligned",
		"setmaxnreg.inc.sync.aligned.u32",
		"setmaxnreg_dec<40>();",
		"setmaxnreg_inc<232>();",
		"cvt.rn.bf16x2.f32",
		"mbar_wait(bar_empty + 8u * ab_stage, ab_phase ^ 1u);",
		"mbar_wait(bar_full + 8u * ab_stage, ab_phase);",
		"mbar_arrive_expect_tx(bar_full + 8u * ab_stage, 49152u);",
		"if (++ab_stage == 4u) { ab_stage = 0u; ab_phase ^= 1u; }",
		"wgmma_desc(b_base_ + kk_ * 32u, 16u, 1024u, 1u)",
		"role_wg * 8192u",
		"// gemm.cake:18: wait empty",
		"// gemm.cake:27: wgmma acc += a @ b^T",
		"float acc[128];",
	};
	for (size_t i = 0; i < NELEM(must); i++) {
		if (!strstr(s, must[i]))
			fprintf(stderr, "missing in generated CUDA: %s\n", must[i]);
		assert_non_null(strstr(s, must[i]));
	}
	/* expect_tx is armed once per iteration (before the first copy only) */
	const char *first = strstr(s, "mbar_arrive_expect_tx(bar_full");
	assert_null(strstr(first + 1, "mbar_arrive_expect_tx(bar_full"));
	assert_null(strstr(s, "#include"));
	assert_null(strstr(s, "hang_note"));
	sb_free(&cu);
	fx_close(&f);
}

static void test_debug_hang(void **state)
{
	Fx f;
	fx_open(&f, GEMM);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, true));
	const char *s = sb_str(&cu);
	assert_non_null(strstr(s, "CakeHangRecord *cake_dbg)"));
	assert_non_null(strstr(s, "__threadfence_system()"));
	/* one record before each of the two waits, one "done" per role */
	int n = 0;
	for (const char *q = s; (q = strstr(q, "hang_note(cake_dbg")); q++)
		n++;
	assert_int_equal(n, 4);
	assert_int_equal(sizeof(CakeHangRecord), 64);
	sb_free(&cu);
	fx_close(&f);
}

static void test_persistent(void **state)
{
	char *src = gemm_with("grid (", "grid persistent (");
	Fx f;
	fx_open(&f, src);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_true(p->persistent);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *s = sb_str(&cu);
	assert_non_null(strstr(s, "for (int cake_tile = blockIdx.x; cake_tile < cake_tiles; cake_tile += gridDim.x)"));
	assert_non_null(strstr(s, "const int bn = cake_tile % (N / 256);"));
	/* the stage/phase registers are declared before the tile loop (carried across tiles) */
	const char *st = strstr(s, "u32 ab_stage = 0u");
	const char *tl = strstr(s, "for (int cake_tile");
	assert_true(st && tl && st < tl);
	assert_non_null(strstr(s, "const int bm = cake_tile / (N / 256) % (M / 128);"));
	sb_free(&cu);
	fx_close(&f);
	free(src);
}

static void test_refuse_sm80(void **state)
{
	char *src = gemm_with("target sm_90a", "target sm_80");
	Fx f;
	memset(&f, 0, sizeof f);
	ctx_init(&f.c, &f.ss, &f.dl);
	int fi = src_add(&f.ss, "gemm.cake", src, strlen(src));
	f.prog = parse_file(&f.c, fi);
	sema_program(&f.c, f.prog);
	f.k = f.prog->kernels[0];
	int before = f.dl.nerr;
	assert_null(derive_plan(&f.c, f.k));
	assert_true(f.dl.nerr > before);
	assert_true(has_rule(&f.dl, "CK-LOW-001"));
	bool named = false;
	for (int i = 0; i < f.dl.n; i++)
		if (strstr(f.dl.items[i]->msg, "lowering for sm_80 is not implemented yet"))
			named = true;
	assert_true(named);
	fx_close(&f);
	free(src);
}

static void test_refuse_cluster(void **state)
{
	char *src = gemm_with("  role load", "  cluster (2, 1)\n  role load");
	Fx f;
	fx_open(&f, src);
	assert_null(derive_plan(&f.c, f.k));
	assert_true(has_rule(&f.dl, "CK-LOW-010"));
	fx_close(&f);
	free(src);
}

static void test_refuse_unlowered_statement(void **state)
{
	/* element-wise math on the accumulator is not lowered yet: a clear CK-LOW-002 */
	char *src = gemm_with("    store C", "    acc = acc * 2.0\n    store C");
	Fx f;
	fx_open(&f, src);   /* valid Cake IR: sema accepts it */
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_false(lower_sm90(&f.c, f.k, p, &cu, false));
	assert_true(has_rule(&f.dl, "CK-LOW-002"));
	sb_free(&cu);
	fx_close(&f);
	free(src);
}

static void test_smem_limit(void **state)
{
	char *src = gemm_with("stages 4", "stages 5");
	Fx f;
	fx_open(&f, src);
	assert_null(derive_plan(&f.c, f.k));
	assert_true(has_rule(&f.dl, "CK-LOW-004"));
	fx_close(&f);
	free(src);
}

static void test_eval(void **state)
{
	Fx f;
	fx_open(&f, GEMM);
	long long dv[8];
	for (int i = 0; i < f.k->ndims; i++)
		dv[i] = strcmp(f.k->dims[i], "M") == 0 ? 256 : strcmp(f.k->dims[i], "N") == 0 ? 512 : 128;
	const char *why = NULL;
	assert_true(eval_domain(f.k, dv, &why));
	assert_null(why);
	for (int i = 0; i < f.k->ndims; i++)
		if (strcmp(f.k->dims[i], "N") == 0)
			dv[i] = 384;
	assert_false(eval_domain(f.k, dv, &why));
	assert_non_null(why);
	assert_string_equal(why, "N % 256 == 0");
	free((void *)why);
	/* grid extents evaluate; an unbound name does not */
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	long long v;
	assert_true(eval_expr(p->grid[0], f.k, dv, &v));
	assert_int_equal(v, 1);
	assert_false(eval_expr(p->grid[0], f.k, NULL, &v));
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_plan),
		cmocka_unit_test(test_gemm_cuda),
		cmocka_unit_test(test_debug_hang),
		cmocka_unit_test(test_persistent),
		cmocka_unit_test(test_refuse_sm80),
		cmocka_unit_test(test_refuse_cluster),
		cmocka_unit_test(test_refuse_unlowered_statement),
		cmocka_unit_test(test_smem_limit),
		cmocka_unit_test(test_eval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
