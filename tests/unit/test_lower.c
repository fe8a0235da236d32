/*
 * test_lower.c — the derived plan and the sm_90a lowering.
 *
 * The GEMM of docs/LANGUAGE.md §10.1 is compiled from an inline string
 * through the real parser and sema; the test then checks every derived
 * number against a hand derivation (offsets and their alignment, total
 * dynamic smem = 4 x (16384 + 32768) + 8 mbarriers + 1024 B slack, expect_tx
 * 49152 on `full`, arrivals, the starts-free convention, setmaxnreg values,
 * tensor-map boxes innermost first, argument order) and that the generated
 * CUDA holds the key PTX. Variants check the refusals (sm_80 target,
 * clusters, unsupported statements), the persistent grid, the grouped tile
 * raster (`group G`: plan, mapping, 1-D launch), the --debug-hang
 * recorder and expression/domain evaluation; the Flash-KMeans assign checks
 * fragment math, the row argmin and the non-ring barrier.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lower/lower.h"
#include "gpu/gpu.h"
#include "testlib.h"

static const char GEMM[] = TL_GEMM_SRC("            # two consumer warpgroups");

static const char ASSIGN[] =
	"kernel kmeans_assign target sm_90a\n"
	"  const D = 128\n"
	"  param X:     global bf16[N, D]\n"
	"  param Cent:  global bf16[K, D]\n"
	"  param Cnorm: global f32[K]\n"
	"  param Out:   global i32[N]\n"
	"  domain N % 128 == 0, K % 128 == 0, K >= 512\n"
	"  grid (N / 128) as (bm)\n"
	"  role load warps 0..3 regs 40\n"
	"  role dist warps 4..11 regs 232\n"
	"  pipeline cr stages 4\n"
	"  smem x0: bf16[128, 64] swizzle 128B\n"
	"  smem x1: bf16[128, 64] swizzle 128B\n"
	"  smem c0: bf16[128, 64] swizzle 128B ring cr\n"
	"  smem c1: bf16[128, 64] swizzle 128B ring cr\n"
	"  barrier xfull producers load consumers dist arrivals 1\n"
	"  barrier full  ring cr producers load consumers dist arrivals 1\n"
	"  barrier empty ring cr producers dist consumers load arrivals 2\n"
	"  frag s:      f32[128, 128] in dist split m\n"
	"  frag cn:     f32[128] in dist\n"
	"  frag tmin:   f32[128] in dist split m\n"
	"  frag targ:   i32[128] in dist split m\n"
	"  frag best_d: f32[128] in dist split m\n"
	"  frag best_i: i32[128] in dist split m\n"
	"{\n"
	"  in load {\n"
	"    tma x0 <- X[bm * 128 +: 128, 0 +: 64] signal xfull\n"
	"    tma x1 <- X[bm * 128 +: 128, 64 +: 64] signal xfull\n"
	"    for j in 0 .. K / 128 pipelined cr {\n"
	"      wait empty\n"
	"      tma c0 <- Cent[j * 128 +: 128, 0 +: 64] signal full\n"
	"      tma c1 <- Cent[j * 128 +: 128, 64 +: 64] signal full\n"
	"    }\n"
	"  }\n"
	"  in dist {\n"
	"    best_d = inf\n"
	"    best_i = 0\n"
	"    wait xfull\n"
	"    for j in 0 .. K / 128 pipelined cr {\n"
	"      load cn <- Cnorm[j * 128 +: 128]\n"
	"      wait full\n"
	"      wgmma s = x0 @ c0^T\n"
	"      wgmma s += x1 @ c1^T\n"
	"      wgmma_wait 0\n"
	"      arrive empty\n"
	"      s = cols(cn) - 2.0 * s\n"
	"      tmin, targ = rowargmin(s)\n"
	"      best_i = where(tmin < best_d, targ + j * 128, best_i)\n"
	"      best_d = min(best_d, tmin)\n"
	"    }\n"
	"    store Out[bm * 128 +: 128] <- best_i\n"
	"  }\n"
	"}\n";

/* tests/corpus/good/attn_fwd_causal_d64.cake (comments dropped) */
static const char ATTN[] =
	"kernel attn_fwd_causal_d64 target sm_90a\n"
	"  const D = 64\n"
	"  param Q:  global bf16[BH, S, D]\n"
	"  param Kx: global bf16[BH, S, D]\n"
	"  param V:  global bf16[BH, S, D]\n"
	"  param O:  global bf16[BH, S, D]\n"
	"  domain S % 128 == 0, S >= 128\n"
	"  grid (S / 128, BH) as (bm, bh)\n"
	"  role load warps 0..3 regs 40\n"
	"  role attn warps 4..11 regs 232\n"
	"  pipeline kv stages 3\n"
	"  smem qs: bf16[128, 64] swizzle 128B\n"
	"  smem ks: bf16[128, 64] swizzle 128B ring kv\n"
	"  smem vs: bf16[128, 64] swizzle 128B ring kv\n"
	"  barrier qfull producers load consumers attn arrivals 1\n"
	"  barrier full  ring kv producers load consumers attn arrivals 1\n"
	"  barrier empty ring kv producers attn consumers load arrivals 2\n"
	"  frag s:     f32[128, 128] in attn split m\n"
	"  frag p:     bf16[128, 128] in attn split m\n"
	"  frag o:     f32[128, 64] in attn split m\n"
	"  frag m:     f32[128] in attn split m\n"
	"  frag mnew:  f32[128] in attn split m\n"
	"  frag l:     f32[128] in attn split m\n"
	"  frag alpha: f32[128] in attn split m\n"
	"{\n"
	"  in load {\n"
	"    tma qs <- Q[bh, bm * 128 +: 128, 0 +: 64] signal qfull\n"
	"    for j in 0 .. bm + 1 pipelined kv {\n"
	"      wait empty\n"
	"      tma ks <- Kx[bh, j * 128 +: 128, 0 +: 64] signal full\n"
	"      tma vs <- V[bh, j * 128 +: 128, 0 +: 64] signal full\n"
	"    }\n"
	"  }\n"
	"  in attn {\n"
	"    m = -inf\n"
	"    l = 0.0\n"
	"    o = 0.0\n"
	"    wait qfull\n"
	"    for j in 0 .. bm + 1 pipelined kv {\n"
	"      wait full\n"
	"      wgmma s = qs @ ks^T\n"
	"      wgmma_wait 0\n"
	"      s = s * 0.18033688011112042\n"
	"      if j == bm {\n"
	"        s = where(col_idx() <= row_idx(), s, -inf)\n"
	"      }\n"
	"      mnew = max(m, rowmax(s))\n"
	"      p = bf16(exp2(s - rows(mnew)))\n"
	"      alpha = exp2(m - mnew)\n"
	"      l = l * alpha + rowsum(f32(p))\n"
	"      o = o * rows(alpha)\n"
	"      m = mnew\n"
	"      wgmma o += p @ vs\n"
	"      wgmma_wait 0\n"
	"      arrive empty\n"
	"    }\n"
	"    store O[bh, bm * 128 +: 128, :] <- bf16(o / rows(l))\n"
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

/* Replace every occurrence of each from[i] by to[i] in GEMM (malloc'd result). */
static char *gemm_with_all(const char *const *from, const char *const *to, int n)
{
	char *cur = strdup(GEMM);
	for (int i = 0; i < n; i++) {
		const char *at;
		size_t from_off = 0;   /* search after the text already inserted */
		while ((at = strstr(cur + from_off, from[i])) != NULL) {
			size_t len = strlen(cur) - strlen(from[i]) + strlen(to[i]) + 1;
			char *nx = malloc(len);
			assert_non_null(nx);
			size_t pre = (size_t)(at - cur);
			memcpy(nx, cur, pre);
			strcpy(nx + pre, to[i]);
			strcat(nx, at + strlen(from[i]));
			free(cur);
			cur = nx;
			from_off = pre + strlen(to[i]);
		}
	}
	return cur;
}

static bool has_rule(const DiagList *dl, const char *id)
{
	for (int i = 0; i < dl->n; i++)
		if (strcmp(dl->items[i]->rule, id) == 0)
			return true;
	return false;
}

/* text passes the front end and derives a plan, but the lowering refuses it with `rule`. */
static void expect_refused(const char *text, const char *rule)
{
	Fx f;
	fx_open(&f, text);   /* valid Cake IR: sema accepts it */
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_false(lower_sm90(&f.c, f.k, p, &cu, false));
	assert_true(has_rule(&f.dl, rule));
	sb_free(&cu);
	fx_close(&f);
}

/* Assert that each of the n strings in must occurs in the generated CUDA text;
 * a missing one is named on stderr first. */
static void expect_all(const char *text, const char *const *must, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!strstr(text, must[i]))
			fprintf(stderr, "missing in generated CUDA: %s\n", must[i]);
		assert_non_null(strstr(text, must[i]));
	}
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
	expect_all(s, must, NELEM(must));
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

/* The prototype's grouped raster (bench/proto/gemm_sm90.cu, tile_coords) as the
 * reference for the mapping LANGUAGE.md §4.5 documents and sm90.c emits. */
static void ref_raster(int t, int tiles_x, int tiles_y, int G, int *x, int *y)
{
	int per = G * tiles_x, g = t / per, first = g * G;
	int gs = tiles_y - first < G ? tiles_y - first : G;
	int r = t % per;
	*y = first + r % gs;
	*x = r / gs;
}

static long long dim_eval(const Kernel *k, const Expr *e, long long M, long long N, long long K)
{
	long long dv[8], v = -1;
	for (int i = 0; i < k->ndims && i < 8; i++)
		dv[i] = strcmp(k->dims[i], "M") == 0 ? M : strcmp(k->dims[i], "N") == 0 ? N : K;
	assert_true(eval_expr(e, k, dv, &v));
	return v;
}

static int count_of(const char *s, const char *needle)
{
	int n = 0;
	for (const char *q = s; (q = strstr(q, needle)); q++)
		n++;
	return n;
}

static void test_grouped_raster(void **state)
{
	/* the mapping: a bijection of the tile space, G rows of y per group, y fastest
	 * inside a group, a short last group; G = 1 is the natural order */
	static const int shapes[][3] = {{32, 64, 16}, {32, 64, 8}, {4, 2, 16}, {12, 10, 4}, {7, 9, 1}, {3, 5, 5}};
	for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
		int tx = shapes[c][0], ty = shapes[c][1], G = shapes[c][2];
		char *seen = calloc((size_t)(tx * ty), 1);
		assert_non_null(seen);
		for (int t = 0; t < tx * ty; t++) {
			int x, y;
			ref_raster(t, tx, ty, G, &x, &y);
			assert_true(x >= 0 && x < tx && y >= 0 && y < ty);
			assert_int_equal(seen[y * tx + x], 0);
			seen[y * tx + x] = 1;
			if (G == 1) {
				assert_int_equal(x, t % tx);
				assert_int_equal(y, t / tx);
			}
		}
		free(seen);
	}
	int x, y;
	ref_raster(1, 32, 64, 16, &x, &y);   /* second tile: next row of the group, same column */
	assert_int_equal(x, 0);
	assert_int_equal(y, 1);
	ref_raster(16, 32, 64, 16, &x, &y);  /* after 16 rows: next column */
	assert_int_equal(x, 1);
	assert_int_equal(y, 0);
	ref_raster(12 * 8 + 3, 12, 10, 4, &x, &y);   /* third group has 2 rows of 10 */
	assert_int_equal(y, 8 + 3 % 2);
	assert_int_equal(x, 3 / 2);

	/* non-persistent: a 1-D launch over every tile, coordinates from blockIdx.x */
	char *src = gemm_with("as (bn, bm)\n", "as (bn, bm) group 16\n");
	Fx f;
	fx_open(&f, src);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(p->group, 16);
	assert_int_equal(p->grid_rank, 1);
	assert_null(p->grid[1]);
	assert_int_equal(p->space_rank, 2);
	assert_int_equal(dim_eval(f.k, p->grid[0], 8192, 8192, 8192), 32 * 64);
	assert_int_equal(dim_eval(f.k, p->grid[0], 256, 512, 64), 2 * 2);
	assert_int_equal(dim_eval(f.k, p->space[0], 8192, 1024, 8192), 4);
	assert_int_equal(dim_eval(f.k, p->space[1], 8192, 1024, 8192), 64);
	StrBuf pl = {0};
	plan_print(&pl, p);
	const char *ps = sb_str(&pl);
	assert_non_null(strstr(ps, "  grid       (N / 256 * (M / 128))\n"));
	assert_non_null(strstr(ps, "  tiles      (N / 256, M / 128) as (bn, bm), t = blockIdx.x\n"));
	assert_non_null(strstr(ps, "  raster     grouped, group 16:"));
	assert_non_null(strstr(ps, "bm = first + r % gs; bn = r / gs"));
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *s = sb_str(&cu);
	assert_non_null(strstr(s, "// gemm.cake:6: grid (N / 256, M / 128) as (bn, bm) group 16  -- grouped raster"));
	assert_non_null(strstr(s, "const int cake_grp_tiles = 16 * (N / 256);"));
	assert_non_null(strstr(s, "const int cake_first = (int)blockIdx.x / cake_grp_tiles * 16;"));
	assert_non_null(strstr(s, "const int cake_gs = (M / 128) - cake_first < 16 ? (M / 128) - cake_first : 16;"));
	assert_non_null(strstr(s, "const int cake_r = (int)blockIdx.x % cake_grp_tiles;"));
	assert_non_null(strstr(s, "const int bm = cake_first + cake_r % cake_gs;"));
	assert_non_null(strstr(s, "const int bn = cake_r / cake_gs;"));
	assert_null(strstr(s, "blockIdx.y"));
	/* the coordinates are bound before any role uses them */
	const char *bind = strstr(s, "const int bn = cake_r / cake_gs;"), *use = strstr(s, "bm * 128");
	assert_true(bind && use && bind < use);
	sb_free(&cu);
	sb_free(&pl);
	fx_close(&f);
	free(src);

	/* persistent: the tile loop of every role decodes cake_tile the same way */
	const char *from[] = {"grid (", "as (bn, bm)\n"};
	const char *to[] = {"grid persistent (", "as (bn, bm) group 8\n"};
	src = gemm_with_all(from, to, 2);
	fx_open(&f, src);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_true(p->persistent);
	assert_int_equal(p->group, 8);
	assert_int_equal(p->grid_rank, 1);
	assert_int_equal(dim_eval(f.k, p->tiles, 4096, 4096, 4096), 16 * 32);
	cu = (StrBuf){0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	s = sb_str(&cu);
	assert_int_equal(count_of(s, "const int cake_first = cake_tile / cake_grp_tiles * 8;"), 2);
	assert_int_equal(count_of(s, "const int bm = cake_first + cake_r % cake_gs;"), 2);
	assert_null(strstr(s, "cake_tile % (N / 256)"));
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
	/* a triangular mask on the accumulator is not lowered yet: a clear CK-LOW-002 */
	char *src = gemm_with("    store C", "    acc = tril(acc)\n    store C");
	expect_refused(src, "CK-LOW-002");
	free(src);
}

/* §5.4 TMA stores: the epilogue through a swizzled staging buffer, one box per 64-column panel.
 * The plan has C's tensor map (a store: C is not passed as a pointer, the buffer is 1024-aligned
 * as the source of a 128B-swizzled box); the CUDA issues each panel's store on one thread into a
 * bulk group and waits for the group's reads before the CTA exits; in a persistent grid it also
 * waits before the staging buffer is rewritten by the next tile. A buffer the storing role does
 * not own alone is refused. */
static void test_tma_store(void **state)
{
	const char *from[] = {"stages 4", "  barrier full", "    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n"};
	const char *to[] = {"stages 3", "  smem cs: bf16[128, 256] swizzle 128B\n  barrier full",
	                    "    store cs[:, :] <- bf16(acc)\n    fence proxy_async\n    sync mma\n"
	                    "    tma C[bm * 128 +: 128, bn * 256 +: 64] <- cs[:, 0 +: 64]\n"
	                    "    tma C[bm * 128 +: 128, bn * 256 + 64 +: 64] <- cs[:, 64 +: 64]\n"
	                    "    tma C[bm * 128 +: 128, bn * 256 + 128 +: 64] <- cs[:, 128 +: 64]\n"
	                    "    tma C[bm * 128 +: 128, bn * 256 + 192 +: 64] <- cs[:, 192 +: 64]\n"};
	char *src = gemm_with_all(from, to, 3);
	Fx f;
	fx_open(&f, src);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	int cm = -1;
	for (int i = 0; i < p->ntmaps; i++)
		if (!strcmp(p->tmaps[i].param, "C"))
			cm = i;
	assert_true(cm >= 0);
	assert_true(p->tmaps[cm].store);
	assert_int_equal(p->tmaps[cm].box[0], 64);
	assert_int_equal(p->tmaps[cm].box[1], 128);
	assert_int_equal(p->tmaps[cm].swizzle, SWZ_128B);
	assert_int_equal(p->tmaps[cm].nuses, 4);
	int cs = plan_buffer_index(p, "cs");
	assert_true(cs >= 0 && p->buffers[cs].tma_src && p->buffers[cs].offset % 1024 == 0);
	for (int i = 0; i < p->nargs; i++)
		assert_false(p->args[i].kind == ARG_PTR && !strcmp(p->args[i].name, "C"));
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *s = sb_str(&cu);
	const char *must[] = {
		"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
		"tma_store_2d(&tmC, smem_cs + 0u /* panel 0 */, bn * 256, bm * 128);",
		"tma_store_2d(&tmC, smem_cs + 49152u /* panel 3 */, bn * 256 + 192, bm * 128);",
		"before the CTA exits",
	};
	expect_all(s, must, NELEM(must));
	assert_int_equal(count_of(s, "bulk_commit();"), 4);   /* one per panel store */
	assert_null(strstr(s, "issued before have read it"));   /* one tile per CTA: nothing to wait for */
	sb_free(&cu);
	fx_close(&f);
	free(src);

	/* persistent: the next tile's store into cs waits for the previous tile's TMA stores */
	const char *pfrom[] = {from[0], from[1], from[2], "grid ("};
	const char *pto[] = {to[0], to[1], to[2], "grid persistent ("};
	char *pers = gemm_with_all(pfrom, pto, 4);
	fx_open(&f, pers);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	cu = (StrBuf){0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	s = sb_str(&cu);
	const char *wait = strstr(s, "issued before have read it"), *st = strstr(s, "st_shared_u32(base_ + so_");
	assert_true(wait && st && wait < st);
	assert_non_null(strstr(wait, "named_bar_sync(2u, 256u);   /* role mma's threads wait for it */"));
	sb_free(&cu);
	fx_close(&f);
	free(pers);

	/* another role writing the store's source: refused, naming both roles */
	const char *xfrom[] = {"stages 4", "  barrier full", "    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n",
	                       "      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full\n"};
	const char *xto[] = {"stages 2", "  smem cs: bf16[128, 256] swizzle 128B\n  barrier full", to[2],
	                     "      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full\n"
	                     "      tma cs[:, 0 +: 64] <- C[bm * 128 +: 128, bn * 256 +: 64] signal full\n"};
	src = gemm_with_all(xfrom, xto, 4);
	expect_refused(src, "CK-LOW-006");
	fx_open(&f, src);
	p = derive_plan(&f.c, f.k);
	cu = (StrBuf){0};
	assert_false(lower_sm90(&f.c, f.k, p, &cu, false));
	bool named = false;
	for (int i = 0; i < f.dl.n; i++)
		if (strstr(f.dl.items[i]->msg, "role 'load' writes 'cs', which role 'mma' stores through TMA"))
			named = true;
	assert_true(named);
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

/* The Flash-KMeans assign: fragment math in the accumulator layout, a row
 * argmin with quad shuffles, row/column vectors, a non-ring barrier. */
static void test_kmeans_assign(void **state)
{
	Fx f;
	fx_open(&f, ASSIGN);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	int s = plan_frag_index(p, "s"), cn = plan_frag_index(p, "cn"), bi = plan_frag_index(p, "best_i");
	assert_true(s >= 0 && cn >= 0 && bi >= 0);
	assert_int_equal(p->frags[s].layout, FRAG_ACC);
	assert_int_equal(p->frags[s].regs_per_thread, 64);     /* 64 x 128 per warpgroup */
	assert_int_equal(p->frags[cn].layout, FRAG_COL);
	assert_int_equal(p->frags[cn].regs_per_thread, 32);    /* 128 columns / 4 lanes */
	assert_int_equal(p->frags[bi].layout, FRAG_ROW);
	assert_int_equal(p->frags[bi].regs_per_thread, 2);     /* rows l/4 and l/4 + 8 */
	int xfull = plan_barrier_index(p, "xfull");
	assert_int_equal(p->barriers[xfull].count, 1);
	assert_int_equal(p->barriers[xfull].tx_bytes, 32768);
	assert_false(p->barriers[xfull].starts_free);
	assert_int_equal(p->barriers[plan_barrier_index(p, "full")].tx_bytes, 32768);
	/* args: two maps, then the directly accessed tensors in declaration order, then dims */
	assert_int_equal(p->args[0].kind, ARG_TMAP);
	assert_int_equal(p->args[2].kind, ARG_PTR);
	assert_string_equal(p->args[2].name, "Cnorm");
	assert_string_equal(p->args[3].name, "Out");
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
		"mbar_arrive_expect_tx(bar_xfull, 32768u);",
		"mbar_wait(bar_xfull, xfull_phase);",
		"if (kk_ == 0)   /* overwrite: d is not read */",   /* s = x0 @ c0^T overwrites (in a loop: the _z twin first) */
		"wgmma_m64n128k16_bf16_z(",
		"s[a_] = (cn[2 * j_ + e_] - (2.0f * s[a_]));",   /* cols() broadcast */
		"__shfl_xor_sync(0xffffffffu, v_, o_)",
		"if (w_ < v_ || (w_ == v_ && iw_ < ix_))",        /* lowest index on ties */
		"best_d[r_] = fminf(best_d[r_], tmin[r_]);",
		"best_i[r_] = ((tmin[r_] < best_d[r_]) ? (targ[r_] + (j * 128)) : best_i[r_]);",
		"if (lane_ % 4u == 0u) {",
		"float cn[32];",
		"int best_i[2];",
	};
	expect_all(t, must, NELEM(must));
	sb_free(&cu);
	fx_close(&f);
}

/* 64B swizzle: rows of 32 bf16, SBO = 8 x 64 B, layout 2, two K steps. */
static void test_swizzle_64B(void **state)
{
	static const char *const from[] = {"bf16[128, 64] swizzle 128B", "bf16[256, 64] swizzle 128B", "k * 64 +: 64", "K / 64", "K % 64 == 0"};
	static const char *const to[] = {"bf16[128, 32] swizzle 64B", "bf16[256, 32] swizzle 64B", "k * 32 +: 32", "K / 32", "K % 32 == 0"};
	char *src = gemm_with_all(from, to, 5);
	Fx f;
	fx_open(&f, src);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	int a = plan_buffer_index(p, "a");
	assert_int_equal(p->buffers[a].desc_sbo, 512);
	assert_int_equal(p->buffers[a].desc_layout, 2);
	assert_int_equal(p->buffers[a].bytes_per_stage, 8192);
	assert_int_equal(p->tmaps[0].box[0], 32);
	assert_int_equal(p->tmaps[0].swizzle, SWZ_64B);
	assert_int_equal(p->barriers[plan_barrier_index(p, "full")].tx_bytes, 8192 + 16384);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	assert_non_null(strstr(sb_str(&cu), "wgmma_desc(b_base_ + kk_ * 32u, 16u, 512u, 2u)"));
	assert_non_null(strstr(sb_str(&cu), "for (int kk_ = 0; kk_ < 2; ++kk_)"));
	sb_free(&cu);
	fx_close(&f);
	free(src);
}

/* A swizzled ring buffer read into registers (the TMA swizzle undone per 16-byte
 * chunk), a nested row reduction, and a row-vector expression stored to a vector. */
static void test_smem_load_and_row_store(void **state)
{
	static const char *const from[] = {"  frag acc: f32[128, 256] in mma split m\n", "      wait full\n",
	                                   "    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n", "  param C: global bf16[M, N]\n"};
	static const char *const to[] = {"  frag acc: f32[128, 256] in mma split m\n  frag xa: bf16[128, 64] in mma split m\n  frag xn: f32[128] in mma split m\n",
	                                 "      wait full\n      load xa <- a[:, :]\n      xn = xn + rowsum(f32(xa) * f32(xa))\n",
	                                 "    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n    store R[bm * 128 +: 128] <- max(xn, 0.0)\n",
	                                 "  param C: global bf16[M, N]\n  param R: global f32[M]\n"};
	char *src = gemm_with_all(from, to, 4);
	char *src2 = malloc(strlen(src) + 32);
	assert_non_null(src2);
	/* initialise xn before the loop */
	const char *at = strstr(src, "    acc = 0\n");
	assert_non_null(at);
	size_t pre = (size_t)(at - src);
	memcpy(src2, src, pre);
	strcpy(src2 + pre, "    xn = 0.0\n");
	strcat(src2, at);
	Fx f;
	fx_open(&f, src2);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(p->frags[plan_frag_index(p, "xn")].layout, FRAG_ROW);
	assert_int_equal(p->frags[plan_frag_index(p, "xa")].regs_per_thread, 32);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"const u32 so_ = o_ ^ (((o_ >> 7) & 7u) << 4);   /* 128B swizzle */",
		"const u32 base_ = smem_a + 16384u * ab_stage;",
		"xa[a_] = bf16lo_f32(v_);",
		"float red0_[2];",
		"xn[r_] = (xn[r_] + red0_[r_]);",
		"dst_[(r_ / 2) * 64 + (r_ % 2) * 8] = (float)(fmaxf(xn[r_], 0.0f));",
	};
	expect_all(t, must, NELEM(must));
	sb_free(&cu);
	fx_close(&f);
	free(src);
	free(src2);
}

/* Attention: P kept in registers as the A operand of the second wgmma (its
 * accumulator layout packed to bf16 pairs), V read N-major (trans-b), a causal
 * mask from row_idx()/col_idx(), rank-3 tensors with a point index. */
static void test_attention(void **state)
{
	Fx f;
	fx_open(&f, ATTN);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(p->tmaps[0].rank, 3);
	assert_int_equal(p->tmaps[0].box[0], 64);
	assert_int_equal(p->tmaps[0].box[1], 128);
	assert_int_equal(p->tmaps[0].box[2], 1);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
		"}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;",           /* register A, trans-b */
		"pack_bf16x2(pa_[0], pa_[1]), pack_bf16x2(pa_[2], pa_[3]), pack_bf16x2(pa_[4], pa_[5]), pack_bf16x2(pa_[6], pa_[7]),",
		"wgmma_desc(b_base_ + kk_ * 2048u, 0u, 1024u, 1u)",   /* 16 rows of 128 B per K step */
		"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes",
		"(8 * j_ + 2 * (int)(threadIdx.x % 4u) + e_) <= ((int)role_wg * 64 + (int)(warp % 4u) * 16",
		"p[a_] = round_bf16(",
		"for (int j = 0; j < (bm + 1); j += 1) {",
		"*(u32 *)o_ = pack_bf16x2(v_[0], v_[1]);",
	};
	expect_all(t, must, NELEM(must));
	sb_free(&cu);
	fx_close(&f);
}

/* The segmented k-means update (kernels/kmeans/update_segmented.cake): a role with
 * no accumulator doing SIMT vector work. Element reads of global tensors in lets
 * (64-bit index, read-only path), loop bounds from lets, a row load and a row
 * store of thread vectors (one element per thread for 128 threads; a 1-warp role
 * gets 4 elements per thread and 8-byte accesses), and it compiles with NVRTC. */
static const char SEGMENTED[] =
	"kernel kmeans_update_segmented target sm_90a\n"
	"  const D = 128\n"
	"  param X:       global bf16[N, D]\n"
	"  param Order:   global i32[N]\n"
	"  param Offsets: global i32[K1]\n"
	"  param Cent:    global bf16[K, D]\n"
	"  domain K1 == K + 1, N >= 1\n"
	"  grid (K) as (c)\n"
	"  role work warps 0..3\n"
	"  frag x:   bf16[128] in work\n"
	"  frag acc: f32[128] in work\n"
	"{\n"
	"  in work {\n"
	"    let lo = Offsets[c]\n"
	"    let hi = Offsets[c + 1]\n"
	"    acc = 0.0\n"
	"    for t in lo .. hi unroll 4 {\n"
	"      let p = Order[t]\n"
	"      load x <- X[p, :]\n"
	"      acc = acc + f32(x)\n"
	"    }\n"
	"    if hi > lo {\n"
	"      store Cent[c, :] <- bf16(acc / f32(hi - lo))\n"
	"    }\n"
	"  }\n"
	"}\n";

/* Replace the first occurrence of `from` in `text` (malloc'd result). */
/* A role that loads a ring by TMA and waits for its own loads: the barrier its
 * TMA signals must not start free (the first wait needs the landed data). */
static void test_own_tma_wait_not_free(void **state)
{
	(void)state;
	static const char src[] =
		"kernel rowsum_ring target sm_90a\n"
		"  param A: global f32[M, K]\n"
		"  param C: global f32[M]\n"
		"  domain M % 128 == 0, K % 64 == 0, K >= 256\n"
		"  grid (M / 128) as (bm)\n"
		"  role main warps 0..3\n"
		"  pipeline p stages 2\n"
		"  smem a: f32[128, 64] ring p\n"
		"  barrier full ring p producers main consumers main arrivals 1\n"
		"  frag x: f32[128, 64] in main\n"
		"  frag r: f32[128] in main\n"
		"{\n"
		"  in main {\n"
		"    r = 0.0\n"
		"    for k in 0 .. K / 64 pipelined p {\n"
		"      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full\n"
		"      wait full\n"
		"      load x <- a[:, :]\n"
		"      r = r + rowsum(x)\n"
		"    }\n"
		"    store C[bm * 128 +: 128] <- r\n"
		"  }\n"
		"}\n";
	Fx f;
	fx_open(&f, src);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	int full = plan_barrier_index(p, "full");
	assert_true(full >= 0);
	assert_int_equal(p->barriers[full].tx_bytes, 128 * 64 * 4);
	assert_false(p->barriers[full].starts_free);
	fx_close(&f);
}

static char *text_with(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	assert_non_null(at);
	char *s = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	assert_non_null(s);
	memcpy(s, text, (size_t)(at - text));
	strcpy(s + (at - text), to);
	strcat(s, at + strlen(from));
	return s;
}

/* Compile generated CUDA through NVRTC into a private cache; 0 spills. Skipped
 * with a note when NVRTC is not installed. */
static void expect_compiles(const char *cuda, const char *kname)
{
	int ma, mi;
	char err[512];
	if (jit_nvrtc_version(&ma, &mi, err, sizeof err) != 0) {
		printf("NVRTC not available, %s not compiled: %s\n", kname, err);
		return;
	}
	char tmpl[] = "/tmp/cake-lower-test-XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	JitOptions o = {0};
	o.cache_dir = dir;
	JitResult r = {0};
	int rc = jit_compile(cuda, "segmented.cu", &o, &r, err, sizeof err);
	if (rc != JIT_OK)
		fprintf(stderr, "NVRTC: %s\n%s\n", err, r.log ? r.log : "");
	assert_int_equal(rc, JIT_OK);
	assert_int_equal(r.nkern, 1);
	assert_string_equal(r.kern[0].name, kname);
	assert_int_equal(r.kern[0].spill_stores, 0);
	assert_int_equal(r.kern[0].spill_loads, 0);
	jit_result_free(&r);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void test_kmeans_segmented(void **state)
{
	Fx f;
	fx_open(&f, SEGMENTED);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	int x = plan_frag_index(p, "x"), acc = plan_frag_index(p, "acc");
	assert_int_equal(p->frags[x].layout, FRAG_VEC);
	assert_int_equal(p->frags[x].regs_per_thread, 1);      /* 128 elements, 128 threads */
	assert_int_equal(p->frags[acc].layout, FRAG_VEC);
	/* Order and Offsets are only read in lets, yet are kernel arguments */
	assert_int_equal(p->nargs, 7);
	static const char *args[] = {"X", "Order", "Offsets", "Cent", "N", "K1", "K"};
	for (int i = 0; i < 7; i++)
		assert_string_equal(p->args[i].name, args[i]);
	assert_int_equal(p->args[1].kind, ARG_PTR);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"const int lo = (int)ld_global_nc_b32(Offsets + (long long)c);",         /* scalar element reads */
		"const int hi = (int)ld_global_nc_b32(Offsets + (long long)(c + 1));",
		"#pragma unroll 4",
		"for (int t = lo; t < hi; t += 1) {",
		"const int p = (int)ld_global_nc_b32(Order + (long long)t);",
		"const bf16_t *src_ = X + (long long)p * 128 + vt_;",                    /* row load, element t */
		"x[0] = bf16lo_f32(w_[0]);",
		"acc[v_] = (acc[v_] + ((float)x[v_]));",
		"if (hi > lo) {",
		"bf16_t *dst_ = Cent + (long long)c * 128 + vt_;",                       /* row store */
		"st_global_b16(dst_, (u32)bf16_bits((acc[v_] / ((float)(hi - lo)))));",
		"asm(\"ld.global.nc.u16 %0, [%1];\\n\"",
	};
	expect_all(t, must, NELEM(must));
	expect_compiles(t, "kmeans_update_segmented");
	sb_free(&cu);
	fx_close(&f);

	/* one warp: 4 elements per thread, 8-byte vector accesses */
	char *one = text_with(SEGMENTED, "warps 0..3", "warps 0..0");
	fx_open(&f, one);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(p->frags[plan_frag_index(p, "x")].regs_per_thread, 4);
	StrBuf cu1 = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu1, false));
	assert_non_null(strstr(sb_str(&cu1), "ld_global_nc_v2(src_ + q_ * 4, w_);"));
	assert_non_null(strstr(sb_str(&cu1), "st_global_v2(dst_ + q_ * 4, w_);"));
	expect_compiles(sb_str(&cu1), "kmeans_update_segmented");
	sb_free(&cu1);
	fx_close(&f);
	free(one);

	/* a range over the rows (not the innermost dimension) is refused, with the fragment named */
	char *col = text_with(SEGMENTED, "load x <- X[p, :]", "load x <- X[0 +: 128, p]");
	expect_refused(col, "CK-LOW-002");
	free(col);
}

/* The counting sort of the sorted k-means update (kernels/kmeans/update_sorted.cake):
 * a role-wide scan (cumsum over a thread vector of 4 elements per thread), fetch_add
 * handing out slots, a scatter store, a batched atomic histogram. */
static const char SCAN[] =
	"kernel scan target sm_90a\n"
	"  param Counts:  global i32[B, K]\n"
	"  param Offsets: global i32[B, K]\n"
	"  domain K == 4096\n"
	"  grid (B) as (b)\n"
	"  role work warps 0..31\n"
	"  frag cnt:  i32[4096] in work\n"
	"  frag incl: i32[4096] in work\n"
	"{\n"
	"  in work {\n"
	"    load cnt <- Counts[b, 0 +: 4096]\n"
	"    incl = cumsum(cnt, 0)\n"
	"    store Offsets[b, 0 +: 4096] <- incl - cnt\n"
	"  }\n"
	"}\n";
static const char FILL[] =
	"kernel fill target sm_90a\n"
	"  param Assign: global i32[B, N]\n"
	"  param Cursor: global i32[B, K]\n"
	"  param Counts: global i32[B, K]\n"
	"  param Order:  global i32[B, N]\n"
	"  domain N % 128 == 0\n"
	"  grid (N / 128, B) as (bp, b)\n"
	"  role work warps 0..3\n"
	"  frag lab:  i32[128] in work\n"
	"  frag slot: i32[128] in work\n"
	"{\n"
	"  in work {\n"
	"    load lab <- Assign[b, bp * 128 +: 128]\n"
	"    atomic_add Counts[b, lab] <- 1\n"
	"    slot = fetch_add(Cursor[b, lab], 1)\n"
	"    store Order[b, slot] <- bp * 128 + row_idx()\n"
	"  }\n"
	"}\n";

/* The per-CTA counting of kmeans_fill: thread vectors against a shared buffer. */
static const char SFILL[] =
	"kernel sfill target sm_90a\n"
	"  param Assign: global i32[B, N]\n"
	"  param Cursor: global i32[B, K]\n"
	"  param Order:  global i32[B, N]\n"
	"  domain N % 1024 == 0, K <= 4096\n"
	"  grid ((N + 16383) / 16384, B) as (bp, b)\n"
	"  role work warps 0..31\n"
	"  smem hs: i32[4096]\n"
	"  frag lab:  i32[1024] in work\n"
	"  frag slot: i32[1024] in work\n"
	"  frag z:    i32[4096] in work\n"
	"  frag kid:  i32[4096] in work\n"
	"{\n"
	"  in work {\n"
	"    z = 0\n"
	"    store hs[0 +: 4096] <- z\n"
	"    sync work\n"
	"    for i in 0 .. 16 unroll 4 {\n"
	"      if bp * 16384 + i * 1024 < N {\n"
	"        load lab <- Assign[b, bp * 16384 + i * 1024 +: 1024]\n"
	"        atomic_add hs[lab] <- 1\n"
	"      }\n"
	"    }\n"
	"    sync work\n"
	"    load z <- hs[0 +: 4096]\n"
	"    kid = row_idx()\n"
	"    z = fetch_add(Cursor[b, kid], z)\n"
	"    store hs[0 +: 4096] <- z\n"
	"    sync work\n"
	"    for i in 0 .. 16 unroll 4 {\n"
	"      if bp * 16384 + i * 1024 < N {\n"
	"        load lab <- Assign[b, bp * 16384 + i * 1024 +: 1024]\n"
	"        slot = fetch_add(hs[lab], 1)\n"
	"        store Order[b, slot] <- bp * 16384 + i * 1024 + row_idx()\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

static void test_counting_sort(void **state)
{
	(void)state;
	Fx f;
	StrBuf cu = {0}, one[2] = {{0}, {0}};
	const char *src[2] = {SCAN, FILL}, *names[2] = {"scan", "fill"};
	for (int i = 0; i < 2; i++) {
		fx_open(&f, src[i]);
		Plan *p = derive_plan(&f.c, f.k);
		assert_non_null(p);
		if (i == 0)
			assert_int_equal(p->frags[plan_frag_index(p, "cnt")].regs_per_thread, 4);   /* 4096 over 1024 threads */
		else
			assert_int_equal(p->frags[plan_frag_index(p, "lab")].layout, FRAG_VEC);   /* a scatter index in a SIMT role */
		assert_true(lower_sm90(&f.c, f.k, p, &one[i], false));
		sb_puts(&cu, sb_str(&one[i]));
		fx_close(&f);
	}
	const char *t = sb_str(&cu);
	static const char *must[] = {
		/* scan: per thread, warp ladder, warp totals in shared memory between role barriers */
		"run_ += (int)(cnt[v_]);",
		"const int y_ = __shfl_up_sync(0xffffffffu, x_, d_);",
		"__shared__ int scan0_[32];",
		"named_bar_sync(1u, 1024u);",
		"pre_ += scan0_[w_ - 1];",
		"incl[v_] += pre_;",
		"w_[0] = ld_global_nc_b32(src_ + q_ * 1);",   /* K is a bare dim: no alignment proof, 4-byte loads */
		/* batched histogram, fetch_add, scatter store with the element index */
		"int *const base_ = Counts + (long long)b * (long long)K;",
		"red_add_s32(base_ + row_, (int)(1));",
		"slot[v_] = (unsigned)row_ < (unsigned)K ? atomicAdd(base_ + row_, (int)(1)) : (int)-1;",
		"int *const base_ = Order + (long long)b * (long long)N;",
		"if ((unsigned)row_ < (unsigned)N)",
		"base_[row_] = (int)(((bp * 128) + ((int)threadIdx.x + v_)));",
		"#ifndef CAKE_RED_ADD",
	};
	expect_all(t, must, NELEM(must));
	for (int i = 0; i < 2; i++) {
		expect_compiles(sb_str(&one[i]), names[i]);
		sb_free(&one[i]);
	}
	sb_free(&cu);

	/* shared-memory forms: row stores/loads, red and atom on shared addresses, bounds */
	fx_open(&f, SFILL);
	Plan *ps = derive_plan(&f.c, f.k);
	assert_non_null(ps);
	StrBuf cs = {0};
	assert_true(lower_sm90(&f.c, f.k, ps, &cs, false));
	static const char *smust[] = {
		"const u32 a_ = smem_hs + (u32)((0) + ((int)threadIdx.x * 4 + v_)) * 4u;",
		"st_shared_u32(a_, (u32)(int)(z[v_]));",
		"z[v_] = (int)ld_shared_u32(a_);",
		"const bool in_ = (unsigned)row_ < 4096u;",
		"red_shared_add_s32(smem_hs + (u32)row_ * 4u, (int)(1));",
		"slot[v_] = in_ ? atom_shared_add_s32(smem_hs + (u32)row_ * 4u, (int)(1)) : (int)-1;",
		"z[v_] = (unsigned)row_ < (unsigned)K ? atomicAdd(base_ + row_, (int)(z[v_])) : (int)-1;",
		"named_bar_sync(1u, 1024u);",
		"#pragma unroll 4",
	};
	expect_all(sb_str(&cs), smust, NELEM(smust));
	expect_compiles(sb_str(&cs), "sfill");
	sb_free(&cs);
	fx_close(&f);

	/* fetch_add into a row vector (a role with an accumulator tile) is refused by name */
	char *acc = text_with(FILL, "  frag slot: i32[128] in work\n", "  frag slot: i32[128] in work\n  frag t: f32[128, 64] in work\n");
	expect_refused(acc, "CK-LOW-002");
	free(acc);
}

/* Thread tiles (`lanes`, FRAG_TILE) and their row and column vectors: the layouts, the
 * 16-byte row accesses, the shuffle trees of rowsum and sum(), colsum across the warps
 * through shared memory, scalar float math in lets; refusals. tests/lower/emu.sh runs the
 * same kernels on the CPU emulator against float64. */
static const char TILES[] =
	"kernel tiles target sm_90a\n"
	"  param X: global f32[N, 128]\n"
	"  param A: global f32[N]\n"
	"  param Y: global f32[N]\n"
	"  param C: global f32[N, 128]\n"
	"  domain N % 32 == 0\n"
	"  grid (N / 32) as (b)\n"
	"  role work warps 0..3\n"
	"  frag S:  f32[32, 128] in work lanes 32\n"
	"  frag k:  f32[128] in work\n"
	"  frag d:  f32[32] in work\n"
	"  frag cs: f32[128] in work\n"
	"{\n"
	"  in work {\n"
	"    let a = sigmoid(A[b]) * 2.0\n"
	"    load S <- X[b * 32 +: 32, :]\n"
	"    load k <- X[0, :]\n"
	"    d = rowsum(S * cols(k * a)) + sum(k * k)\n"
	"    cs = colsum(S * rows(d))\n"
	"    store Y[b * 32 +: 32] <- d + sum(d)\n"
	"    store C[b, :] <- cs\n"
	"  }\n"
	"}\n";

static void test_thread_tiles(void **state)
{
	(void)state;
	Fx f;
	fx_open(&f, TILES);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	const PlanFrag *S = &p->frags[plan_frag_index(p, "S")], *k = &p->frags[plan_frag_index(p, "k")];
	const PlanFrag *d = &p->frags[plan_frag_index(p, "d")], *cs = &p->frags[plan_frag_index(p, "cs")];
	assert_int_equal(S->layout, FRAG_TILE);
	assert_int_equal(S->regs_per_thread, 32);   /* 8 rows x 4 columns */
	assert_int_equal(S->lanes, 32);
	assert_int_equal(k->layout, FRAG_TCOL);
	assert_int_equal(k->regs_per_thread, 4);
	assert_int_equal(d->layout, FRAG_TROW);
	assert_int_equal(d->regs_per_thread, 8);
	assert_int_equal(cs->layout, FRAG_TCOL);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"const float a = (__fdividef(1.0f, 1.0f + cake_exp(-((__uint_as_float(ld_global_nc_b32(A + (long long)b)))))) * (2.0f));",
		"ld_global_nc_v4(p_ + q_ * 4, wv_);",                               /* 16-byte row pieces */
		"const float *p_ = src_ + (long long)((i_) * 4 + (int)warp) * 128;",  /* row (i W + w) */
		"v_[u_] = v_[u_] + (float)__shfl_xor_sync(0xffffffffu, v_[u_], o_);",
		"for (int o_ = 1; o_ < 32; o_ <<= 1)   /* the lanes of a row */",
		"__shared__ float xw",                                              /* colsum and sum(d) across warps */
		"named_bar_sync(1u, 128u);",
		"if ((int)(threadIdx.x % 32u) == 0) {",                             /* a row vector: one lane per row stores */
		"if ((int)warp == 0) {",                                            /* a column vector: the first warp stores */
		"(S[a_] * (k[j_] * a))",
	};
	expect_all(t, must, NELEM(must));
	expect_compiles(t, "tiles");
	sb_free(&cu);
	fx_close(&f);
	/* 16 lanes per row: 2 rows per warp, 8 columns per lane */
	char *l16 = text_with(TILES, "lanes 32", "lanes 16");
	fx_open(&f, l16);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	assert_int_equal(p->frags[plan_frag_index(p, "S")].regs_per_thread, 32);
	assert_int_equal(p->frags[plan_frag_index(p, "k")].regs_per_thread, 8);
	assert_int_equal(p->frags[plan_frag_index(p, "d")].regs_per_thread, 4);
	StrBuf c16 = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &c16, false));
	assert_non_null(strstr(sb_str(&c16), "(((i_) * 4 + (int)warp) * 2 + (int)(threadIdx.x % 32u) / 16)"));
	assert_non_null(strstr(sb_str(&c16), "for (int o_ = 16; o_ < 32; o_ <<= 1)   /* the row groups of the warp */"));
	expect_compiles(sb_str(&c16), "tiles");
	sb_free(&c16);
	fx_close(&f);
	free(l16);
	/* refusals: a tile loaded from shared memory; a tile next to an accumulator in one role */
	char *sm = text_with(TILES, "  frag S:", "  smem buf: f32[32, 128]\n  frag S:");
	char *sm2 = text_with(sm, "load S <- X[b * 32 +: 32, :]", "store buf[0, 0 +: 128] <- k\n    sync\n    load S <- buf[:, :]");
	expect_refused(sm2, "CK-LOW-002");
	free(sm), free(sm2);
	char *mix = text_with(TILES, "  frag cs:", "  frag acc: f32[64, 64] in work\n  frag cs:");
	char *mix2 = text_with(mix, "    store C[b, :] <- cs\n", "    store C[b, :] <- cs\n    acc = 0\n");
	fx_open(&f, mix2);
	assert_null(derive_plan(&f.c, f.k));
	assert_true(has_rule(&f.dl, "CK-LOW-009"));
	fx_close(&f);
	free(mix), free(mix2);
}

/* The accumulator-layout primitives that move data between threads (sm90_acc.c and the
 * row values of sm90.c): cumsum, l2norm and row reductions of split-n tiles, column vectors
 * split like their tile, relayouts, trisolve with its scratch; executed by tests/lower/emu.sh,
 * here the plan, key lines and the refusals. */
static const char ACCP[] =
	"kernel accp target sm_90a\n"
	"  param X: global f32[B, 64, 128]\n"
	"  param V: global f32[B, 128]\n"
	"  param L: global f32[B, 64, 64]\n"
	"  param O: global f32[B, 64, 128]\n"
	"  param S: global f32[B, 128, 128]\n"
	"  grid (B) as (b)\n"
	"  role work warps 0..7\n"
	"  frag x:  f32[64, 128] in work split n\n"
	"  frag g:  f32[64, 128] in work split n\n"
	"  frag l:  f32[64, 64] in work\n"
	"  frag s:  f32[128, 128] in work split n\n"
	"  frag v:  f32[128] in work\n"
	"  frag gc: f32[128] in work\n"
	"{\n"
	"  in work {\n"
	"    load x <- X[b, :, :]\n"
	"    load v <- V[b, :]\n"
	"    load l <- L[b, :, :]\n"
	"    load s <- S[b, :, :]\n"
	"    x = l2norm(x + cols(v))\n"
	"    gc = colsum(x)\n"
	"    g = cumsum(x, 0)\n"
	"    g = trisolve(l, g - cols(gc))\n"
	"    store O[b, :, :] <- g\n"
	"    store S[b, :, :] <- rows(exp(gc)) * s\n"
	"  }\n"
	"}\n";

static void test_acc_primitives(void **state)
{
	(void)state;
	Fx f;
	fx_open(&f, ACCP);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	const PlanFrag *v = &p->frags[plan_frag_index(p, "v")], *gc = &p->frags[plan_frag_index(p, "gc")];
	assert_int_equal(v->layout, FRAG_COL);   /* split like the split-n tile it is broadcast over */
	assert_int_equal(v->split, SPLIT_N);
	assert_int_equal(v->wg_cols, 64);
	assert_int_equal(v->regs_per_thread, 16);
	assert_int_equal(gc->split, SPLIT_N);     /* a colsum of a split-n tile */
	/* trisolve's scratch after the (absent) buffers: L's lower triangle in four row groups of
	 * 548 f32 (rows 4 m + q, row m padded to 4 m + 4; 544 rounded to 4 past a multiple of 32)
	 * and B 64 x 129 f32, all columns at once */
	assert_int_equal(plan_trisolve_group(64), 548);
	assert_int_equal(p->scratch_bytes, 4 * (4 * 548 + 64 * 129));
	assert_int_equal(p->scratch_role[0], p->scratch_offset);
	assert_int_equal(p->scratch_cols[0], 128);
	assert_true(p->smem_used >= p->scratch_offset + p->scratch_bytes);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"const float2 *src_ = (const float2 *)(V + (long long)b * 128 + 2 * (int)(lane_ % 4u) + (int)role_wg * 64);",   /* split-n column vector */
		"float (*const rw",                                       /* the row sums of squares across the warpgroups */
		"l2n",                                                    /* l2norm's per-row scale */
		"rsqrtf(",
		"__shfl_up_sync(0xffffffffu, v_[a_], o_);",               /* the scan's ladder */
		"float (*const cu",                                       /* ... and its block totals */
		"xb_[t_] = __shfl_sync(0xffffffffu, x_[0] * ri_, (int)(lane_ & 28u) + t_);",  /* forward substitution, a block of four rows */
		"float *const rv",                                        /* rows() of a column vector */
		"(cake_smem + 0u);",                                      /* the exchanges in the solve's scratch, */
	};
	expect_all(t, must, NELEM(must));
	assert_null(strstr(t, "__shared__ float"));                 /* not static shared memory */
	expect_compiles(t, "accp");
	sb_free(&cu);
	fx_close(&f);
	/* refusals: a scan along the rows; a nested cumsum; a solve of 128 rows */
	char *c1 = text_with(ACCP, "g = cumsum(x, 0)", "g = cumsum(x, 1)");
	expect_refused(c1, "CK-LOW-002");
	char *c2 = text_with(ACCP, "g = cumsum(x, 0)", "g = exp(cumsum(x, 0))");
	expect_refused(c2, "CK-LOW-002");
	char *c3 = text_with(ACCP, "  frag l:  f32[64, 64] in work\n", "  frag l:  f32[64, 64] in work\n  frag l2: f32[128, 128] in work split n\n");
	char *c4 = text_with(c3, "    store O[b, :, :] <- g\n", "    store O[b, :, :] <- g\n    l2 = trisolve(s, s)\n");
	expect_refused(c4, "CK-LOW-002");
	/* ... and a segment the layout does not hold whole (4 rows: a quarter of a row half) */
	char *c5 = text_with(ACCP, "g = cumsum(x, 0)", "g = cumsum(x, 0, 4)");
	expect_refused(c5, "CK-LOW-002");
	/* ... and a block-diagonal inverse in blocks of 4 rows (a warp's eight columns would span two) */
	char *c6 = text_with(ACCP, "    store O[b, :, :] <- g\n", "    store O[b, :, :] <- g\n    l = trisolve(l, 4)\n");
	expect_refused(c6, "CK-LOW-002");
	free(c1), free(c2), free(c3), free(c4), free(c5), free(c6);
	/* a column vector broadcast over a split-n tile and over an unsplit one: it keeps the
	 * split-n layout and the second broadcast is a relayout through shared memory */
	char *m1 = text_with(ACCP, "  frag gc: f32[128] in work\n", "  frag gc: f32[128] in work\n  frag u: f32[64, 128] in work\n");
	char *m2 = text_with(m1, "    store O[b, :, :] <- g\n", "    u = cols(v) + 0.0\n    store O[b, :, :] <- g\n");
	fx_open(&f, m2);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu2 = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu2, false));
	static const char *must2[] = {
		"/* cols(): the column vector's values at the columns this thread holds */",
		"rv",
	};
	expect_all(sb_str(&cu2), must2, NELEM(must2));
	expect_compiles(sb_str(&cu2), "accp");
	sb_free(&cu2);
	fx_close(&f);
	/* ... but a vector that colsum produces from both kinds of tile has no one layout */
	char *m3 = text_with(m1, "    store O[b, :, :] <- g\n", "    u = cols(v) + 0.0\n    gc = colsum(u)\n    store O[b, :, :] <- g\n");
	fx_open(&f, m3);
	assert_null(derive_plan(&f.c, f.k));
	assert_true(has_rule(&f.dl, "CK-LOW-009"));
	fx_close(&f);
	free(m1), free(m2), free(m3);
}

/* wgmma operands in column panels (rows of two 128B swizzle spans), a transposed A, an
 * N-major B split by panels: the descriptors (executed by tests/lower/emu.sh's model). */
static const char PANELS[] =
	"kernel panels target sm_90a\n"
	"  param P: global bf16[B, 64, 128]\n"
	"  param O: global f32[B, 128, 128]\n"
	"  param O2: global f32[B, 64, 64]\n"
	"  grid (B) as (b)\n"
	"  role math warps 0..7\n"
	"  smem pa: bf16[64, 128] swizzle 128B\n"
	"  frag t: bf16[64, 128] in math split n\n"
	"  frag c: f32[128, 128] in math split n\n"
	"  frag d: f32[64, 64] in math\n"
	"{\n"
	"  in math {\n"
	"    load t <- P[b, :, :]\n"
	"    store pa[:, :] <- t\n"
	"    fence proxy_async\n"
	"    sync math\n"
	"    wgmma c = pa^T @ pa\n"
	"    wgmma d = pa @ pa^T\n"
	"    wgmma_wait 0\n"
	"    store O[b, :, :] <- c\n"
	"    store O2[b, :, :] <- d\n"
	"  }\n"
	"}\n";

/* tests/corpus/good/acc_smem_panels.cake (comments dropped): column panels of shared buffers
 * loaded and stored in the accumulator layout (LANGUAGE.md §5.6), at a loop variable's
 * multiple and at constant offsets */
static const char *CPANELS =
	"kernel acc_smem_panels target sm_90a\n"
	"  param X:    global bf16[B, 64, 128]\n"
	"  param Out:  global f32[B, 64, 128]\n"
	"  param Out2: global f32[B, 64, 128]\n"
	"  grid (B) as (b)\n"
	"  role load warps 0..3\n"
	"  role work warps 4..7\n"
	"  smem xs: bf16[64, 128] swizzle 128B\n"
	"  smem ys: bf16[64, 128] swizzle 128B\n"
	"  smem zs: f32[64, 128]\n"
	"  barrier full producers load consumers work arrivals 1\n"
	"  frag t: bf16[64, 64] in work\n"
	"  frag u: bf16[64, 128] in work\n"
	"  frag w: f32[64, 128] in work\n"
	"{\n"
	"  in load {\n"
	"    tma xs[:, 0 +: 64] <- X[b, 0 +: 64, 0 +: 64] signal full\n"
	"    tma xs[:, 64 +: 64] <- X[b, 0 +: 64, 64 +: 64] signal full\n"
	"  }\n"
	"  in work {\n"
	"    wait full\n"
	"    for p in 0 .. 2 {\n"
	"      load t <- xs[:, p * 64 +: 64]\n"
	"      store ys[:, p * 64 +: 64] <- bf16(f32(t) * (2.0 + 2.0 * f32(p)))\n"
	"    }\n"
	"    load t <- xs[:, 64 +: 64]\n"
	"    store zs[:, 0 +: 64] <- f32(t)\n"
	"    load t <- xs[:, 0 +: 64]\n"
	"    store zs[:, 64 +: 64] <- f32(t)\n"
	"    sync work\n"
	"    load u <- ys[:, :]\n"
	"    store Out[b, :, :] <- f32(u)\n"
	"    load w <- zs[:, :]\n"
	"    store Out2[b, :, :] <- w\n"
	"  }\n"
	"}\n";

static void test_smem_col_panels(void **state)
{
	(void)state;
	Fx f;
	fx_open(&f, CPANELS);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	static const char *must[] = {
		"const int col0_ = (int)((p * 64)) + 2 * (int)(lane_ % 4u);",   /* the loop's panel */
		"const int col0_ = (int)(64) + 2 * (int)(lane_ % 4u);",         /* a constant one */
	};
	expect_all(sb_str(&cu), must, NELEM(must));
	expect_compiles(sb_str(&cu), "acc_smem_panels");
	sb_free(&cu);
	fx_close(&f);
	/* refusals: a loop that takes a panel past the buffer's end; a start that is not a
	 * multiple of 8; a factor that is not one; a loop with a bound the lowering cannot know */
	char *r1 = text_with(CPANELS, "for p in 0 .. 2 {", "for p in 0 .. 3 {");
	expect_refused(r1, "CK-LOW-002");
	char *r2 = text_with(CPANELS, "load t <- xs[:, 64 +: 64]", "load t <- xs[:, 4 +: 64]");
	expect_refused(r2, "CK-LOW-002");
	char *r3 = text_with(CPANELS, "store ys[:, p * 64 +: 64]", "store ys[:, p * 60 +: 64]");
	expect_refused(r3, "CK-LOW-011");
	char *r4 = text_with(CPANELS, "for p in 0 .. 2 {", "for p in 0 .. B {");
	expect_refused(r4, "CK-LOW-002");
	free(r1), free(r2), free(r3), free(r4);
}

static void test_wgmma_panels(void **state)
{
	(void)state;
	Fx f;
	fx_open(&f, PANELS);
	Plan *p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cu = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cu, false));
	const char *t = sb_str(&cu);
	static const char *must[] = {
		"const u32 o_ = c_ / 128u * 8192u + (u32)(row0_ + mt_ * 64 + 8 * h_) * 128u + c_ % 128u;",   /* the store into panels */
		"wgmma_m64n64k16_bf16_ta_tb(c + mt_ * 32,",                                                  /* M-major A, N-major B */
		"wgmma_desc(a_base_ + mt_ * 8192u + kk_ * 2048u, 8192u, 1024u, 1u),",                       /* A^T: a panel per m64 tile */
		"const u32 b_base_ = smem_pa + role_wg * 8192u;   /* this warpgroup's 64 columns: its panels of pa */",
		"wgmma_desc(a_base_ + mt_ * 8192u + kk_ / 4 * 8192u + kk_ % 4 * 32u, 16u, 1024u, 1u),",     /* K-major over two panels */
		"%32, %33, p, 1, 1, 1, 1;",                                                                    /* trans-a and trans-b */
	};
	expect_all(t, must, NELEM(must));
	expect_compiles(t, "panels");
	sb_free(&cu);
	fx_close(&f);
	/* an N-major B of 32 columns a warpgroup, the second warpgroup's starting 64 B inside the
	 * 64-column atom: read from there (tests/corpus/good/acc_wgmma_nsub.cake runs the form) */
	char *h = text_with(PANELS, "  smem pa: bf16[64, 128] swizzle 128B\n", "  smem pa: bf16[64, 128] swizzle 128B\n  smem nb: bf16[64, 64] swizzle 128B\n  frag e: f32[64, 64] in math split n\n  frag z: bf16[64, 64] in math\n");
	char *h2 = text_with(h, "    wgmma_wait 0\n", "    wgmma e = nb @ nb\n    wgmma_wait 0\n");
	char *h3 = text_with(h2, "    store pa[:, :] <- t\n", "    store pa[:, :] <- t\n    z = 0\n    store nb[:, :] <- z\n");
	fx_open(&f, h3);
	p = derive_plan(&f.c, f.k);
	assert_non_null(p);
	StrBuf cs = {0};
	assert_true(lower_sm90(&f.c, f.k, p, &cs, false));
	static const char *sub[] = {"const u32 b_base_ = smem_nb + role_wg / 2u * 8192u + role_wg % 2u * 64u;"};
	expect_all(sb_str(&cs), sub, NELEM(sub));
	sb_free(&cs);
	fx_close(&f);
	/* ... and one whose 96 columns start inside an atom and cross into the next is refused */
	char *h4 = text_with(h3, "  smem nb: bf16[64, 64] swizzle 128B\n  frag e: f32[64, 64] in math split n\n",
	                     "  smem nb: bf16[64, 192] swizzle 128B\n  frag e: f32[64, 192] in math split n\n");
	char *h5 = text_with(h4, "    wgmma e = nb @ nb\n", "    wgmma e = z @ nb\n");
	char *h6 = text_with(h5, "    store nb[:, :] <- z\n", "    store nb[:, 0 +: 64] <- z\n    store nb[:, 64 +: 64] <- z\n    store nb[:, 128 +: 64] <- z\n");
	expect_refused(h6, "CK-LOW-009");
	free(h), free(h2), free(h3), free(h4), free(h5), free(h6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_plan),
		cmocka_unit_test(test_own_tma_wait_not_free),
		cmocka_unit_test(test_gemm_cuda),
		cmocka_unit_test(test_tma_store),
		cmocka_unit_test(test_debug_hang),
		cmocka_unit_test(test_persistent),
		cmocka_unit_test(test_grouped_raster),
		cmocka_unit_test(test_refuse_sm80),
		cmocka_unit_test(test_refuse_cluster),
		cmocka_unit_test(test_refuse_unlowered_statement),
		cmocka_unit_test(test_smem_limit),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_kmeans_assign),
		cmocka_unit_test(test_swizzle_64B),
		cmocka_unit_test(test_smem_load_and_row_store),
		cmocka_unit_test(test_attention),
		cmocka_unit_test(test_kmeans_segmented),
		cmocka_unit_test(test_counting_sort),
		cmocka_unit_test(test_thread_tiles),
		cmocka_unit_test(test_acc_primitives),
		cmocka_unit_test(test_wgmma_panels),
		cmocka_unit_test(test_smem_col_panels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
