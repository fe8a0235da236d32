/*
 * test_tactics.c — the tactic registry (src/harness/tactics.c).
 *
 * Every tactic gets at least one positive case on a real corpus kernel
 * (the kernels/gemm files, tests/corpus/good/kmeans_assign_tile_per_cta.cake): the result must
 * re-parse, pass sema, print back identically (a fixed point of
 * print_program), pass verify_kernel with no error, derive a plan and lower
 * (lower_sm90 returns true), and its text must have changed in the intended
 * way — asserted on exact substrings of the canonical output and on plan
 * values (stages, shared-memory bytes, threads, registers, arrivals). Every
 * tactic also gets a negative case whose refusal reason is asserted, and the
 * harness cases cover bad specs, inputs with errors, the tactic-set version,
 * the listing and proposal enumeration (no proposal may be TACTIC_BROKEN and
 * every applied one must pass the same checks). Paths are relative to the
 * repository root, where tests/run_all.sh runs the unit binaries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "harness/tactics.h"
#include "front/front.h"
#include "verify/verify.h"
#include "lower/lower.h"

static const char *G128x256 = "kernels/gemm/gemm_ws_128x256_s4.cake";
static const char *G128x128 = "kernels/gemm/gemm_ws_128x128_s5.cake";
static const char *GPERS = "kernels/gemm/gemm_persistent.cake";
static const char *ASSIGN = "tests/corpus/good/kmeans_assign_tile_per_cta.cake";
static const char *GSEED = "kernels/gemm/seed_naive.cake";
static const char *ASEED = "kernels/kmeans/seed_naive.cake";
static const char *APERS = "kernels/kmeans/assign.cake";   /* the persistent assign */
static const char *ROWSUM = "tests/corpus/good/rowsum_single_role_ring.cake";

/* What a result's plan says, copied out of its arena. */
typedef struct Res {
	char *text;
	long long smem_bytes;
	int threads;
	int stages;             /* of the first pipeline */
	int regs[4];            /* per role, declaration order */
	int arrivals_empty;     /* barrier 'empty' */
	bool persistent;
	int group;
	int grid_rank;
	long long tx_full;      /* barrier 'full' */
} Res;

static char *slurp(const char *path, size_t *len)
{
	char *s = read_file(path, len);
	if (!s)
		fail_msg("cannot read %s (run from the repository root)", path);
	return s;
}

static void print_diags(SourceSet *ss, DiagList *dl)
{
	StrBuf b = {0};
	diag_sort(dl);
	diag_print_text(&b, ss, dl, false);
	print_message("%s", sb_str(&b));
	sb_free(&b);
}

/* The full pipeline on text: parse, sema, fixed point, verify (no errors),
 * derive_plan, lower_sm90; fills r from the plan of kernel `kname`. */
static void check_text(const char *text, const char *kname, Res *r)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	int f = src_add(&ss, "result.cake", text, strlen(text));
	Ctx c;
	ctx_init(&c, &ss, &dl);
	Program *p = parse_file(&c, f);
	assert_int_equal(dl.nerr, 0);
	if (!sema_program(&c, p))
		print_diags(&ss, &dl);
	assert_int_equal(dl.nerr, 0);
	StrBuf again = {0};
	print_program(&again, p);
	assert_string_equal(sb_str(&again), text);
	sb_free(&again);
	Kernel *k = NULL;
	for (int i = 0; i < p->nkernels; i++)
		if (!kname || strcmp(p->kernels[i]->name, kname) == 0) {
			k = p->kernels[i];
			break;
		}
	assert_non_null(k);
	verify_kernel(&c, k);
	if (dl.nerr)
		print_diags(&ss, &dl);
	assert_int_equal(dl.nerr, 0);
	Plan *pl = derive_plan(&c, k);
	if (!pl)
		print_diags(&ss, &dl);
	assert_non_null(pl);
	StrBuf cuda = {0};
	bool ok = lower_sm90(&c, k, pl, &cuda, false);
	if (!ok)
		print_diags(&ss, &dl);
	assert_true(ok);
	sb_free(&cuda);
	if (r) {
		memset(r, 0, sizeof *r);
		r->smem_bytes = pl->smem_bytes;
		r->threads = pl->block_threads;
		r->stages = pl->npipes ? pl->pipes[0].stages : 0;
		for (int i = 0; i < pl->nroles && i < 4; i++)
			r->regs[i] = pl->roles[i].decl->regs;
		for (int i = 0; i < pl->nbarriers; i++) {
			if (strcmp(pl->barriers[i].name, "empty") == 0)
				r->arrivals_empty = pl->barriers[i].arrivals;
			if (strcmp(pl->barriers[i].name, "full") == 0)
				r->tx_full = pl->barriers[i].tx_bytes;
		}
		r->persistent = pl->persistent;
		r->group = pl->group;
		r->grid_rank = pl->space_rank;
	}
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
}

/* Apply spec to kernel kname of path; must succeed and pass check_text. */
static void apply_ok(const char *path, const char *kname, const char *spec, Res *r)
{
	size_t len;
	char *src = slurp(path, &len);
	StrBuf out = {0}, why = {0};
	TacticStatus st = tactic_apply_text(src, len, spec, kname, &out, &why);
	if (st != TACTIC_OK)
		fail_msg("%s on %s (%s): status %d: %s", spec, path, kname ? kname : "first kernel", st, sb_str(&why));
	check_text(sb_str(&out), kname, r);
	r->text = xstrdup(sb_str(&out));
	sb_free(&out);
	sb_free(&why);
	free(src);
}

/* The plan of the (comment-free canonical) input itself. */
static void original(const char *path, const char *kname, Res *r)
{
	size_t len;
	char *src = slurp(path, &len);
	SourceSet ss = {0};
	DiagList dl = {0};
	int f = src_add(&ss, path, src, len);
	Ctx c;
	ctx_init(&c, &ss, &dl);
	Program *p = parse_file(&c, f);
	p->comments = NULL;
	p->ncomments = 0;
	StrBuf b = {0};
	print_program(&b, p);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	free(src);
	check_text(sb_str(&b), kname, r);
	r->text = xstrdup(sb_str(&b));
	sb_free(&b);
}

/* Apply spec; must be refused with `want` status and a reason containing `part`. */
static void apply_refused(const char *path, const char *kname, const char *spec, TacticStatus want, const char *part)
{
	size_t len;
	char *src = slurp(path, &len);
	StrBuf out = {0}, why = {0};
	TacticStatus st = tactic_apply_text(src, len, spec, kname, &out, &why);
	if (st != want || !strstr(sb_str(&why), part))
		fail_msg("%s on %s: status %d (want %d), reason '%s' (want '%s')", spec, path, st, want, sb_str(&why), part);
	if (want == TACTIC_REJECTED)
		assert_true(out.len > 0);   /* the rejected program is handed back */
	else
		assert_int_equal(out.len, 0);
	sb_free(&out);
	sb_free(&why);
	free(src);
}

static void has(const Res *r, const char *part)
{
	if (!strstr(r->text, part))
		fail_msg("expected '%s' in:\n%s", part, r->text);
}

static void lacks(const Res *r, const char *part)
{
	if (strstr(r->text, part))
		fail_msg("did not expect '%s' in:\n%s", part, r->text);
}

static int count(const char *text, const char *part)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, part)); p += strlen(part))
		n++;
	return n;
}

/* ---- the registry ---- */

static void test_registry(void **state)
{
	int n;
	const Tactic *ts = tactics_all(&n);
	assert_true(n >= 12);
	for (int i = 0; i < n; i++) {
		assert_non_null(ts[i].name);
		assert_non_null(ts[i].params);
		assert_true(strlen(ts[i].summary) > 10);
		assert_true(ts[i].version >= 1);
		assert_ptr_equal(tactic_find(ts[i].name), &ts[i]);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ts[i].name, ts[j].name);
	}
	const char *required[] = {"tile_m", "tile_n", "tile_k", "stages", "consumers", "persistent", "nonpersistent",
	                          "raster_group", "split_k", "swap_ab", "swizzle", "regs", "unroll", "centroid_tile",
	                          "warp_specialize"};
	for (size_t i = 0; i < NELEM(required); i++)
		assert_non_null(tactic_find(required[i]));
	assert_ptr_equal(tactic_find("stages:4"), tactic_find("stages"));
	assert_null(tactic_find("stage"));
	char a[32], b[32];
	tactics_version_str(a);
	tactics_version_str(b);
	assert_string_equal(a, b);
	assert_int_equal(strncmp(a, "t1-", 3), 0);
	assert_int_equal(strlen(a), 11);
	StrBuf t = {0}, j = {0};
	tactics_print(&t, "text");
	tactics_print(&j, "json");
	assert_non_null(strstr(sb_str(&t), "regs:ROLE:N"));
	assert_non_null(strstr(sb_str(&t), a));
	assert_non_null(strstr(sb_str(&j), "\"name\": \"split_k\""));
	assert_non_null(strstr(sb_str(&j), "\"schema\": \"cake-tactics/1\""));
	sb_free(&t);
	sb_free(&j);
}

/* ---- stages ---- */

static void test_stages(void **state)
{
	Res o, r;
	original(G128x128, NULL, &o);
	apply_ok(G128x128, NULL, "stages:3", &r);
	has(&r, "pipeline ab stages 3\n");
	assert_int_equal(o.stages, 5);
	assert_int_equal(r.stages, 3);
	assert_int_equal(o.smem_bytes - r.smem_bytes, 2 * 32768 + 2 * 2 * 8);   /* two stages of a+b, two of each barrier */
	/* nothing else changed */
	assert_int_equal(count(r.text, "\n"), count(o.text, "\n"));
	free(r.text);
	apply_ok(G128x256, NULL, "stages:2", &r);
	assert_int_equal(r.stages, 2);
	free(r.text);
	free(o.text);
	apply_refused(G128x128, NULL, "stages:5", TACTIC_NOT_APPLICABLE, "pipeline 'ab' of kernel 'gemm_bf16_128x128' already has 5 stages");
	apply_refused(G128x256, NULL, "stages:6", TACTIC_REJECTED, "[CK-RES-001]");
	apply_refused(G128x256, NULL, "stages:4:xy", TACTIC_NOT_APPLICABLE, "has no pipeline 'xy'");
	apply_refused(G128x256, NULL, "stages:0", TACTIC_BAD_SPEC, "the stage count must be an integer in 1..64");
}

/* ---- tile_m / tile_n / tile_k / centroid_tile ---- */

static void test_tile_m(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "tile_m:64", &r);
	has(&r, "domain M % 64 == 0, N % 128 == 0, K % 64 == 0, K >= 64\n");
	has(&r, "grid (N / 128, M / 64) as (bn, bm)\n");
	has(&r, "smem a: bf16[64, 64] swizzle 128B ring ab\n");
	has(&r, "smem b: bf16[128, 64] swizzle 128B ring ab\n");
	has(&r, "frag acc: f32[64, 128] in mma split n\n");   /* 64 rows cannot go to 2 warpgroups */
	has(&r, "tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full");
	has(&r, "tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full");
	has(&r, "store C[bm * 64 +: 64, bn * 128 +: 128] <- bf16(acc)");
	assert_int_equal(r.tx_full, 64 * 64 * 2 + 128 * 64 * 2);
	free(r.text);
	/* k-means: the points per CTA, with every row vector that goes with them */
	apply_ok(ASSIGN, "kmeans_assign_d64", "tile_m:256", &r);
	has(&r, "grid (N / 256, B) as (bm, b)\n");
	has(&r, "domain N % 256 == 0, K % 128 == 0, K >= 256\n");
	has(&r, "smem x0: bf16[256, 64] swizzle 128B\n");
	has(&r, "frag s: f32[256, 128] in dist split m\n");
	has(&r, "frag best_i: i32[256] in dist split m\n");
	has(&r, "frag cn: f32[128] in dist\n");   /* the centroid axis is untouched */
	has(&r, "tma x0 <- X[b, bm * 256 +: 256, 0 +: 64] signal xfull");
	has(&r, "store Out[b, bm * 256 +: 256] <- best_i");
	has(&r, "kernel kmeans_assign target sm_90a family kmeans_assign\n  const D = 128\n");   /* the other kernel is unchanged */
	free(r.text);
	apply_refused(ASSIGN, "kmeans_assign", "tile_m:128", TACTIC_NOT_APPLICABLE,
	              "accumulator 's' [128, 128] cannot be split by rows over the 4 warpgroups of role 'dist'");
	apply_refused(G128x128, NULL, "tile_m:128", TACTIC_NOT_APPLICABLE, "is already 128");
	apply_refused(G128x128, NULL, "tile_m:96", TACTIC_NOT_APPLICABLE, "not a multiple of 64");
	apply_refused(G128x128, NULL, "tile_m:100", TACTIC_BAD_SPEC, "multiple of 8");
}

static void test_tile_n(void **state)
{
	Res o, r;
	original(G128x256, NULL, &o);
	apply_ok(G128x256, NULL, "tile_n:128", &r);
	has(&r, "domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64\n");
	has(&r, "grid (N / 128, M / 128) as (bn, bm) group 16\n");
	has(&r, "smem a: bf16[128, 64] swizzle 128B ring ab\n");
	has(&r, "smem b: bf16[128, 64] swizzle 128B ring ab\n");
	has(&r, "frag acc: f32[128, 128] in mma split m\n");
	has(&r, "tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full");
	has(&r, "store C[bm * 128 +: 128, bn * 128 +: 128] <- bf16(acc)");
	assert_int_equal(o.smem_bytes - r.smem_bytes, 4 * 16384);
	assert_int_equal(r.tx_full, 2 * 16384);
	free(r.text);
	free(o.text);
	apply_ok(G128x128, NULL, "tile_n:64", &r);
	has(&r, "frag acc: f32[128, 64] in mma split m\n");
	has(&r, "grid (N / 64, M / 128) as (bn, bm)\n");
	free(r.text);
	apply_refused(ASSIGN, "kmeans_assign", "tile_n:64", TACTIC_NOT_APPLICABLE,
	              "kernel 'kmeans_assign' has no ring buffer indexed by the grid's N tile");
}

static void test_tile_k(void **state)
{
	Res r;
	apply_ok(G128x256, NULL, "tile_k:32", &r);
	has(&r, "domain M % 128 == 0, N % 256 == 0, K % 32 == 0, K >= 64\n");
	has(&r, "smem a: bf16[128, 32] swizzle 64B ring ab\n");   /* the row must stay one swizzle span */
	has(&r, "smem b: bf16[256, 32] swizzle 64B ring ab\n");
	assert_int_equal(count(r.text, "for k in 0 .. K / 32 pipelined ab {"), 2);
	has(&r, "tma a <- A[bm * 128 +: 128, k * 32 +: 32] signal full");
	has(&r, "tma b <- B[bn * 256 +: 256, k * 32 +: 32] signal full");
	free(r.text);
	apply_refused(G128x256, NULL, "tile_k:128", TACTIC_NOT_APPLICABLE, "which no swizzle span (32B, 64B, 128B) matches");
	apply_refused(ASSIGN, "kmeans_assign", "tile_k:32", TACTIC_NOT_APPLICABLE,
	              "slice 'X[b, bm * 256 +: 256, 0 +: 64]' starts at '0', not at a multiple of the tile");
}

static void test_centroid_tile(void **state)
{
	Res o, r;
	original(ASSIGN, "kmeans_assign", &o);
	apply_ok(ASSIGN, "kmeans_assign", "centroid_tile:64", &r);
	has(&r, "domain N % 256 == 0, K % 64 == 0, K >= 512\n");
	has(&r, "smem c0: bf16[64, 64] swizzle 128B ring cr\n");
	has(&r, "smem c1: bf16[64, 64] swizzle 128B ring cr\n");
	has(&r, "smem x0: bf16[256, 64] swizzle 128B\n");
	has(&r, "frag s: f32[256, 64] in dist split m\n");
	has(&r, "frag cn: f32[64] in dist\n");
	has(&r, "frag tmin: f32[256] in dist split m\n");
	assert_int_equal(count(r.text, "for j in 0 .. K / 64 pipelined cr {"), 2);
	has(&r, "tma c0 <- Cent[b, j * 64 +: 64, 0 +: 64] signal full");
	has(&r, "load cn <- Cnorm[b, j * 64 +: 64]");
	has(&r, "best_i = where(tmin < best_d, targ + j * 64, best_i)");   /* the centroid index offset */
	assert_int_equal(o.tx_full - r.tx_full, 2 * 64 * 64 * 2);
	free(r.text);
	free(o.text);
	apply_ok(ASSIGN, "kmeans_assign_d64", "centroid_tile:256", &r);
	has(&r, "smem c0: bf16[256, 64] swizzle 128B ring cr\n");
	has(&r, "frag s: f32[128, 256] in dist split m\n");
	has(&r, "domain N % 128 == 0, K % 256 == 0, K >= 256\n");
	has(&r, "best_i = where(tmin < best_d, targ + j * 256, best_i)");
	free(r.text);
	apply_refused(G128x256, NULL, "centroid_tile:128", TACTIC_NOT_APPLICABLE,
	              "kernel 'gemm_bf16' has no ring buffer indexed by a loop over centroid tiles");
	apply_refused(ASSIGN, "kmeans_assign", "centroid_tile:256", TACTIC_REJECTED, "[CK-RES-001]");
}

/* ---- consumers ---- */

static void test_consumers(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "consumers:1", &r);
	has(&r, "role mma warps 4..7 regs 240\n");   /* what the pool leaves, at most 240 */
	has(&r, "barrier empty ring ab producers mma consumers load arrivals 1\n");
	assert_int_equal(r.threads, 256);
	assert_int_equal(r.arrivals_empty, 1);
	free(r.text);
	/* the four-warpgroup assign back to two: the fragments double per thread, regs follow */
	apply_ok(ASSIGN, "kmeans_assign", "consumers:2", &r);
	has(&r, "role dist warps 4..11 regs 240\n");
	has(&r, "barrier empty ring cr producers dist consumers load arrivals 2\n");
	has(&r, "frag s: f32[256, 128] in dist split m\n");
	assert_int_equal(r.threads, 384);
	assert_int_equal(r.regs[0] * 128 + r.regs[1] * 256 <= 384 * 168, true);   /* the launch pool */
	free(r.text);
	/* four warpgroups: 128 rows cannot be split 4 ways, the columns are */
	apply_ok(G128x256, NULL, "consumers:4", &r);
	has(&r, "role mma warps 4..19 regs 104\n");
	has(&r, "frag acc: f32[128, 256] in mma split n\n");
	assert_int_equal(r.arrivals_empty, 4);
	assert_int_equal(r.threads, 640);
	assert_true(40 * 128 + r.regs[1] * 512 <= 640 * 96);
	free(r.text);
	apply_refused(G128x256, NULL, "consumers:1", TACTIC_NOT_APPLICABLE, "launch pool leaves it 256");
	apply_refused(G128x256, NULL, "consumers:3", TACTIC_NOT_APPLICABLE, "cannot be split over the 3 warpgroups");
	apply_refused(G128x256, NULL, "consumers:2", TACTIC_NOT_APPLICABLE, "already has 2 consumer warpgroups");
	apply_refused("tests/corpus/good/kmeans_assign_pingpong.cake", NULL, "consumers:2", TACTIC_NOT_APPLICABLE,
	              "has two roles that issue wgmma ('da' and 'db')");
}

/* ---- grid tactics ---- */

static void test_persistent(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "persistent", &r);
	has(&r, "grid persistent (N / 128, M / 128) as (bn, bm)\n");
	assert_true(r.persistent);
	free(r.text);
	apply_ok(GPERS, NULL, "nonpersistent", &r);
	has(&r, "grid (N / 256, M / 128) as (bn, bm) group 16\n");
	assert_false(r.persistent);
	free(r.text);
	apply_refused(ASSIGN, "kmeans_assign", "persistent", TACTIC_NOT_APPLICABLE,
	              "fills shared buffer 'x0' once per tile outside a pipelined loop");
	apply_refused(GPERS, NULL, "persistent", TACTIC_NOT_APPLICABLE, "is already persistent");
	apply_refused(G128x128, NULL, "nonpersistent", TACTIC_NOT_APPLICABLE, "is not persistent");
	apply_refused(G128x128, NULL, "persistent:1", TACTIC_BAD_SPEC, "'persistent' takes no arguments");
}

static void test_raster_group(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "raster_group:8", &r);
	has(&r, "grid (N / 128, M / 128) as (bn, bm) group 8\n");
	assert_int_equal(r.group, 8);
	free(r.text);
	apply_ok(G128x256, NULL, "raster_group:0", &r);
	has(&r, "grid (N / 256, M / 128) as (bn, bm)\n");
	assert_int_equal(r.group, 0);
	free(r.text);
	apply_ok(ASSIGN, "kmeans_assign", "raster_group:4", &r);
	has(&r, "grid (N / 256, B) as (bm, b) group 4\n");
	free(r.text);
	apply_refused(G128x256, NULL, "raster_group:16", TACTIC_NOT_APPLICABLE, "already has group 16");
	apply_refused("kernels/kmeans/update_segmented.cake", NULL, "raster_group:8", TACTIC_NOT_APPLICABLE,
	              "has 1 axis; a raster group needs exactly 2");
}

static void test_split_k(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "split_k:4", &r);
	has(&r, "param C: global f32[M, N]\n");
	has(&r, "domain M % 128 == 0, N % 128 == 0, K % 256 == 0, K >= 256\n");
	has(&r, "grid (N / 128, M / 128, 4) as (bn, bm, ks)\n");
	assert_int_equal(count(r.text, "for k in ks * (K / 256) .. (ks + 1) * (K / 256) pipelined ab"), 2);
	has(&r, "atomic_add C[bm * 128 +: 128, bn * 128 +: 128] <- acc\n");
	lacks(&r, "store C");
	assert_int_equal(r.grid_rank, 3);
	free(r.text);
	/* the grouped raster needs a 2-D grid: dropped */
	apply_ok(G128x256, NULL, "split_k:2", &r);
	has(&r, "grid (N / 256, M / 128, 2) as (bn, bm, ks)\n");
	has(&r, "K % 128 == 0, K >= 128\n");
	free(r.text);
	apply_refused(ASSIGN, "kmeans_assign", "split_k:2", TACTIC_NOT_APPLICABLE, "is not stepped by a grid coordinate or loop");
	apply_refused("tests/corpus/good/gemm_splitk_atomic.cake", NULL, "split_k:2", TACTIC_NOT_APPLICABLE, "already has 3 axes");
	apply_refused(G128x128, NULL, "split_k:1", TACTIC_BAD_SPEC, "the number of K splits must be an integer in 2..64");
}

static void test_swap_ab(void **state)
{
	Res r;
	apply_ok(G128x256, NULL, "swap_ab", &r);
	has(&r, "grid (M / 128, N / 256) as (bm, bn) group 16\n");
	const char *tb = strstr(r.text, "tma b <- B"), *ta = strstr(r.text, "tma a <- A");
	assert_non_null(ta);
	assert_non_null(tb);
	assert_true(tb < ta);   /* the B tile's load is issued first */
	/* swap_ab twice is the identity */
	StrBuf out = {0}, why = {0};
	assert_int_equal(tactic_apply_text(r.text, strlen(r.text), "swap_ab", NULL, &out, &why), TACTIC_OK);
	Res o;
	original(G128x256, NULL, &o);
	assert_string_equal(sb_str(&out), o.text);
	sb_free(&out);
	sb_free(&why);
	free(o.text);
	free(r.text);
	apply_refused(ASSIGN, "kmeans_assign", "swap_ab", TACTIC_NOT_APPLICABLE,
	              "grid axis 'b' of kernel 'kmeans_assign' indexes both the A and the B operand");
}

/* ---- swizzle, regs, unroll ---- */

static void test_swizzle(void **state)
{
	Res o, r, k, back;
	original(G128x128, NULL, &o);
	apply_ok(G128x128, NULL, "swizzle:64B", &r);
	has(&r, "smem a: bf16[128, 32] swizzle 64B ring ab\n");
	has(&r, "smem b: bf16[128, 32] swizzle 64B ring ab\n");
	has(&r, "k * 32 +: 32");
	/* the same rewrite as tile_k:32, seen from the swizzle */
	apply_ok(G128x128, NULL, "tile_k:32", &k);
	assert_string_equal(r.text, k.text);
	/* and back: swizzle:128B restores the kernel */
	StrBuf out = {0}, why = {0};
	assert_int_equal(tactic_apply_text(r.text, strlen(r.text), "swizzle:128B", NULL, &out, &why), TACTIC_OK);
	check_text(sb_str(&out), NULL, &back);
	assert_string_equal(sb_str(&out), o.text);
	sb_free(&out);
	sb_free(&why);
	free(r.text);
	free(k.text);
	free(o.text);
	apply_refused(G128x128, NULL, "swizzle:128B", TACTIC_NOT_APPLICABLE, "already use swizzle 128B");
	apply_refused(ASSIGN, "kmeans_assign", "swizzle:64B", TACTIC_NOT_APPLICABLE, "starts at '0'");
	apply_refused(G128x128, NULL, "swizzle:16B", TACTIC_BAD_SPEC, "the swizzle must be 128B, 64B or 32B");
}

static void test_regs(void **state)
{
	Res r;
	apply_ok(G128x256, NULL, "regs:mma:224", &r);
	has(&r, "role mma warps 4..11 regs 224\n");
	assert_int_equal(r.regs[1], 224);
	assert_int_equal(r.regs[0], 40);
	free(r.text);
	apply_ok(ASSIGN, "kmeans_assign", "regs:load:32", &r);
	has(&r, "role load warps 0..3 regs 32\n");
	has(&r, "role dist warps 4..19 regs 112\n");
	free(r.text);
	apply_refused(G128x256, NULL, "regs:mma:240", TACTIC_NOT_APPLICABLE, "role 'mma' can have at most regs 232");
	apply_refused(G128x256, NULL, "regs:mma:144", TACTIC_NOT_APPLICABLE, "the fragments of role 'mma' need 128 registers per thread");
	apply_refused(G128x256, NULL, "regs:dma:64", TACTIC_NOT_APPLICABLE, "has no role 'dma' (roles: load, mma)");
	apply_refused(G128x256, NULL, "regs:mma:100", TACTIC_BAD_SPEC, "multiple of 8");
	apply_refused(G128x256, NULL, "regs:mma", TACTIC_BAD_SPEC, "'regs' takes regs:ROLE:N");
}

static void test_unroll(void **state)
{
	Res r;
	apply_ok(G128x128, NULL, "unroll:2", &r);
	assert_int_equal(count(r.text, "pipelined ab unroll 2 {"), 2);
	free(r.text);
	apply_ok(G128x128, NULL, "unroll:0", &r);   /* removes the producer's `unroll 1` */
	lacks(&r, "unroll");
	free(r.text);
	apply_ok(ASSIGN, "kmeans_assign", "unroll:4:j", &r);
	assert_int_equal(count(r.text, "for j in 0 .. K / 128 pipelined cr unroll 4 {"), 2);
	free(r.text);
	apply_refused("kernels/kmeans/update_segmented.cake", NULL, "unroll:2", TACTIC_NOT_APPLICABLE, "has no pipelined loop");
	apply_refused(G128x256, NULL, "unroll:2:q", TACTIC_NOT_APPLICABLE, "has no loop over 'q'");
}

/* ---- warp_specialize, and the paths from the naive seeds ---- */

/* Apply spec to program text (not a file); must succeed and pass check_text. */
static void apply_text_ok(const char *text, const char *spec, Res *r)
{
	StrBuf out = {0}, why = {0};
	TacticStatus st = tactic_apply_text(text, strlen(text), spec, NULL, &out, &why);
	if (st != TACTIC_OK)
		fail_msg("%s: status %d: %s", spec, st, sb_str(&why));
	check_text(sb_str(&out), NULL, r);
	r->text = xstrdup(sb_str(&out));
	sb_free(&out);
	sb_free(&why);
}

static void apply_text_refused(const char *text, const char *spec, const char *part)
{
	StrBuf out = {0}, why = {0};
	TacticStatus st = tactic_apply_text(text, strlen(text), spec, NULL, &out, &why);
	if (st != TACTIC_NOT_APPLICABLE || !strstr(sb_str(&why), part))
		fail_msg("%s: status %d, reason '%s' (want '%s')", spec, st, sb_str(&why), part);
	sb_free(&out);
	sb_free(&why);
}

static void test_warp_specialize(void **state)
{
	Res o, r;
	/* the GEMM seed: one role, one warpgroup, a 1-stage ring */
	original(GSEED, NULL, &o);
	assert_int_equal(o.threads, 128);
	assert_int_equal(o.stages, 1);
	apply_ok(GSEED, NULL, "warp_specialize", &r);
	has(&r, "  role load warps 0..3 regs 40\n  role mma warps 4..7 regs 240\n");   /* the producer goes first */
	has(&r, "  barrier full ring ab producers load consumers mma arrivals 1\n"
	        "  barrier empty ring ab producers mma consumers load arrivals 1\n");
	has(&r, "  in load {\n    for k in 0 .. K / 64 pipelined ab {\n      wait empty\n"
	        "      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full\n"
	        "      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full\n    }\n  }\n  in mma {\n");
	has(&r, "      wait full\n      wgmma acc += a @ b^T\n      wgmma_wait 0\n      arrive empty\n    }\n");
	assert_int_equal(count(r.text, "tma "), 2);   /* moved, not copied */
	assert_int_equal(r.threads, 256);
	assert_int_equal(r.arrivals_empty, 1);
	assert_int_equal(r.tx_full, o.tx_full);
	assert_int_equal(r.smem_bytes, o.smem_bytes + 8);   /* one more mbarrier */
	assert_int_equal(r.regs[0], 40);
	assert_int_equal(r.regs[1], 240);
	free(r.text);
	free(o.text);
	/* the assign seed: the one-shot point tile moves too, with its barrier */
	apply_ok(ASEED, NULL, "warp_specialize", &r);
	has(&r, "  role load warps 0..3 regs 40\n  role dist warps 4..7 regs 240\n");
	has(&r, "  barrier xfull producers load consumers dist arrivals 1\n"
	        "  barrier full ring cr producers load consumers dist arrivals 1\n"
	        "  barrier empty ring cr producers dist consumers load arrivals 1\n");
	has(&r, "  in load {\n    tma x0 <- X[b, bm * 64 +: 64, 0 +: 64] signal xfull\n"
	        "    tma x1 <- X[b, bm * 64 +: 64, 64 +: 64] signal xfull\n"
	        "    for j in 0 .. K / 128 pipelined cr {\n      wait empty\n");
	has(&r, "  in dist {\n    best_d = inf\n    best_i = 0\n    wait xfull\n"
	        "    for j in 0 .. K / 128 pipelined cr {\n      load cn <- Cnorm[b, j * 128 +: 128]\n      wait full\n");
	has(&r, "      wgmma_wait 0\n      arrive empty\n      s = 0.5 * cols(cn) - s\n");   /* released before the epilogue */
	free(r.text);
	/* the single-role ring of the corpus: released right after its plain load of the stage */
	apply_ok(ROWSUM, NULL, "warp_specialize", &r);
	has(&r, "  role load warps 0..3 regs 40\n  role main warps 4..7 regs 240\n");
	has(&r, "      wait full\n      load x <- a[:, :]\n      arrive empty\n      r = r + rowsum(x)\n");
	assert_int_equal(r.stages, 2);
	free(r.text);
	/* names that are taken get a suffix */
	const char *taken =
		"kernel rs target sm_90a\n  param A: global f32[M, K]\n  param C: global f32[M]\n"
		"  domain M % 128 == 0, K % 64 == 0, K >= 256\n  grid (M / 128) as (bm)\n  role load warps 0..3\n"
		"  pipeline p stages 2\n  smem a: f32[128, 64] ring p\n  barrier empty ring p producers load consumers load arrivals 1\n"
		"  frag x: f32[128, 64] in load\n  frag r: f32[128] in load\n{\n  in load {\n    r = 0.0\n"
		"    for k in 0 .. K / 64 pipelined p {\n      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal empty\n"
		"      wait empty\n      load x <- a[:, :]\n      r = r + rowsum(x)\n    }\n    store C[bm * 128 +: 128] <- r\n  }\n}\n";
	apply_text_ok(taken, "warp_specialize", &r);
	has(&r, "  role load2 warps 0..3 regs 40\n  role load warps 4..7 regs 240\n");
	has(&r, "  barrier empty ring p producers load2 consumers load arrivals 1\n"
	        "  barrier empty2 ring p producers load consumers load2 arrivals 1\n");
	has(&r, "  in load2 {\n    for k in 0 .. K / 64 pipelined p {\n      wait empty2\n");
	free(r.text);
	/* refusals */
	apply_refused(G128x256, NULL, "warp_specialize", TACTIC_NOT_APPLICABLE,
	              "kernel 'gemm_bf16' has 2 roles (load, mma); warp_specialize splits the program of a single role");
	apply_refused("kernels/kmeans/update_segmented.cake", NULL, "warp_specialize", TACTIC_NOT_APPLICABLE,
	              "role 'work' of kernel 'kmeans_update_segmented' issues no TMA load directly in a pipelined loop");
	apply_refused("tests/corpus/good/gemm_sm80_cp_async_mma.cake", NULL, "warp_specialize", TACTIC_NOT_APPLICABLE,
	              "targets sm_80");
	apply_refused(GSEED, NULL, "warp_specialize:1", TACTIC_BAD_SPEC, "'warp_specialize' takes no arguments");
	const char *guarded =
		"kernel rs target sm_90a\n  param A: global f32[M, K]\n  param C: global f32[M]\n"
		"  domain M % 128 == 0, K % 64 == 0, K >= 256\n  grid (M / 128) as (bm)\n  role main warps 0..3\n"
		"  pipeline p stages 2\n  smem a: f32[128, 64] ring p\n  barrier full ring p producers main consumers main arrivals 1\n"
		"  frag x: f32[128, 64] in main\n  frag r: f32[128] in main\n{\n  in main {\n    r = 0.0\n"
		"    for k in 0 .. K / 64 pipelined p {\n      let kk = k\n      tma a <- A[bm * 128 +: 128, kk * 64 +: 64] signal full\n"
		"      wait full\n      load x <- a[:, :]\n      r = r + rowsum(x)\n    }\n    store C[bm * 128 +: 128] <- r\n  }\n}\n";
	apply_text_refused(guarded, "warp_specialize", "the TMA load into 'a' (line 17) uses 'kk', which a producer role would not have");
}

/* Walk a chain of tactics from a seed as the search would: every step must be
 * one of the proposals that apply to the current candidate (tactics_propose),
 * and its result must re-check (verifier without errors, plan, lowering).
 * Returns the last result's text (malloc'd); r gets its plan. */
static char *walk_chain(const char *path, const char *const *chain, int n, Res *r)
{
	size_t len;
	char *cur = slurp(path, &len);
	for (int i = 0; i < n; i++) {
		TacticProposals ps;
		assert_true(tactics_propose(cur, strlen(cur), NULL, true, &ps) > 0);
		char origin[80];
		snprintf(origin, sizeof origin, "tactic:%s", chain[i]);
		const char *next = NULL;
		for (int q = 0; q < ps.n; q++)
			if (strcmp(ps.items[q].origin, origin) == 0)
				next = ps.items[q].text;
		if (!next) {
			StrBuf b = {0};
			for (int q = 0; q < ps.n; q++)
				sb_printf(&b, " %s", ps.items[q].origin + 7);
			fail_msg("step %d of the chain from %s: %s is not among the proposals that apply:%s", i + 1, path, chain[i], sb_str(&b));
		}
		check_text(next, NULL, r);
		free(cur);
		cur = xstrdup(next);
		tactic_proposals_free(&ps);
	}
	r->text = cur;
	return cur;
}

/* The comment-free canonical text of kernel `kname` of path, renamed `as`. */
static char *hand_written(const char *path, const char *kname, const char *as, Res *r)
{
	original(path, kname, r);
	char head[128];
	snprintf(head, sizeof head, "kernel %s target", kname);
	char *k = strstr(r->text, head);
	assert_non_null(k);
	char *end = strstr(k + 1, "\nkernel ");
	StrBuf b = {0};
	sb_printf(&b, "kernel %s target", as);
	sb_putn(&b, k + strlen(head), end ? (size_t)(end - k) - strlen(head) : strlen(k + strlen(head)));
	if (end)   /* the blank line between kernels */
		b.len--;
	char *text = xstrdup(sb_str(&b));
	sb_free(&b);
	return text;
}

static void same_plan(const Res *a, const Res *b)
{
	assert_int_equal(a->smem_bytes, b->smem_bytes);
	assert_int_equal(a->threads, b->threads);
	assert_int_equal(a->stages, b->stages);
	for (int i = 0; i < 4; i++)
		assert_int_equal(a->regs[i], b->regs[i]);
	assert_int_equal(a->arrivals_empty, b->arrivals_empty);
	assert_int_equal(a->tx_full, b->tx_full);
	assert_int_equal(a->persistent, b->persistent);
	assert_int_equal(a->group, b->group);
	assert_int_equal(a->grid_rank, b->grid_rank);
}

static void test_seed_chains(void **state)
{
	Res r, h;
	/* GEMM: the naive seed to kernels/gemm/gemm_ws_128x256_s4.cake, then to gemm_persistent.cake */
	static const char *const gemm[] = {"warp_specialize", "stages:4", "consumers:2", "tile_n:256", "raster_group:16", "persistent"};
	walk_chain(GSEED, gemm, 5, &r);
	char *want = hand_written(G128x256, "gemm_bf16", "gemm_seed_naive", &h);
	assert_string_equal(r.text, want);
	same_plan(&r, &h);
	assert_int_equal(r.stages, 4);
	assert_int_equal(r.threads, 384);
	assert_int_equal(r.smem_bytes, h.smem_bytes);
	free(want);
	free(h.text);
	free(r.text);
	walk_chain(GSEED, gemm, 6, &r);
	want = hand_written(GPERS, "gemm_bf16_persistent", "gemm_seed_naive", &h);
	assert_string_equal(r.text, want);
	same_plan(&r, &h);
	free(want);
	free(h.text);
	free(r.text);
	/* k-means assign: the naive seed (64 points) to tests/corpus/good/kmeans_assign_tile_per_cta.cake's
	 * kmeans_assign (256 points, 4 stages, four 64-point consumer warpgroups,
	 * regs 24 / 112). The producer gives up registers before the consumers grow
	 * to four, so consumers:4 sizes them at 112 directly: after consumers:4 at
	 * regs 40 / 104 ptxas spills (52 bytes), although the verifier's count fits */
	static const char *const assign[] = {"warp_specialize", "stages:4", "tile_m:128", "consumers:2", "tile_m:256",
	                                     "regs:load:24", "consumers:4"};
	walk_chain(ASEED, assign, 7, &r);
	want = hand_written(ASSIGN, "kmeans_assign", "kmeans_assign_seed_naive", &h);
	assert_string_equal(r.text, want);
	same_plan(&r, &h);
	assert_int_equal(r.stages, 4);
	assert_int_equal(r.threads, 640);
	assert_int_equal(r.regs[0], 24);
	assert_int_equal(r.regs[1], 112);
	assert_int_equal(r.arrivals_empty, 4);
	free(want);
	free(h.text);
	free(r.text);
	/* ... and on to kernels/kmeans/assign.cake's persistent kmeans_assign: room for a second
	 * point stage (3 centroid stages), 32 registers for the producer (at 24 its persistent
	 * tile loop spills in ptxas, which the tactics' register count does not see), then the
	 * point tile into a ring of its own on a persistent grid */
	static const char *const assign_p[] = {"warp_specialize", "stages:4", "tile_m:128", "consumers:2", "tile_m:256",
	                                       "regs:load:24", "consumers:4", "stages:3", "regs:load:32", "operand_ring"};
	walk_chain(ASEED, assign_p, 10, &r);
	want = hand_written(APERS, "kmeans_assign", "kmeans_assign_seed_naive", &h);
	assert_string_equal(r.text, want);
	same_plan(&r, &h);
	assert_true(r.persistent);
	free(want);
	free(h.text);
	free(r.text);
}

/* ragged:DIM: a grid axis over whole tiles made to cover any DIM, its TMA boxes clipped */
static void test_ragged(void **state)
{
	Res r, h;
	const char *whole = "tests/corpus/good/gemm_tma_128x192_whole_tiles.cake";
	/* the pre-session-12 128x192 tile becomes the library's clipped kernel exactly */
	apply_ok(whole, NULL, "ragged:N", &r);
	char *want = hand_written("kernels/gemm/gemm_tma.cake", "gemm_bf16_tma_128x192", "gemm_bf16_tma_128x192", &h);
	assert_string_equal(r.text, want);
	same_plan(&r, &h);
	free(want);
	free(h.text);
	free(r.text);
	/* along M nothing is the innermost extent of a tensor: the clause goes, the A boxes and
	 * the C panels clip */
	apply_ok(whole, NULL, "ragged:M", &r);
	has(&r, "  domain N % 192 == 0, K % 64 == 0, K >= 64\n  grid (N / 192, (M + 127) / 128) as (bn, bm)\n");
	has(&r, "      tma a <- A[bm * 128 +: 128, k * 64 +: 64] clip signal full\n");
	has(&r, "    tma C[bm * 128 +: 128, bn * 192 + 128 +: 64] clip <- cs[:, 128 +: 64]\n");
	free(r.text);
	/* refusals: a plain store, a dim no grid axis covers, an unknown dim, no argument */
	apply_refused("kernels/gemm/gemm_ws_128x192_s5.cake", NULL, "ragged:N", TACTIC_NOT_APPLICABLE,
	              "the store of 'C' at line");
	apply_refused(whole, NULL, "ragged:K", TACTIC_NOT_APPLICABLE, "no grid extent of kernel 'gemm_bf16_tma_128x192' covers 'K'");
	apply_refused(whole, NULL, "ragged:Q", TACTIC_NOT_APPLICABLE, "has no dim 'Q'");
	apply_refused(whole, NULL, "ragged", TACTIC_BAD_SPEC, "'ragged' takes ragged:DIM");
}

/* operand_ring: the once-per-tile operand into a ring of its own on a persistent grid */
static void test_operand_ring(void **state)
{
	Res r;
	/* the f16 twin's form (two consumer warpgroups, 4 centroid stages): room for both point stages */
	const char *f16 =
		"kernel a16 target sm_90a family kmeans_assign\n  const D = 128\n  param X: global f16[B, N, D]\n"
		"  param Cent: global f16[B, K, D]\n  param Cnorm: global f32[B, K]\n  param Out: global i32[B, N]\n"
		"  domain N % 128 == 0, K % 128 == 0, K >= 512\n  grid (N / 128, B) as (bm, b)\n"
		"  role load warps 0..3 regs 40\n  role dist warps 4..11 regs 232\n  pipeline cr stages 4\n"
		"  smem x0: f16[128, 64] swizzle 128B\n  smem x1: f16[128, 64] swizzle 128B\n"
		"  smem c0: f16[128, 64] swizzle 128B ring cr\n  smem c1: f16[128, 64] swizzle 128B ring cr\n"
		"  barrier xfull producers load consumers dist arrivals 1\n"
		"  barrier full ring cr producers load consumers dist arrivals 1\n"
		"  barrier empty ring cr producers dist consumers load arrivals 2\n"
		"  frag s: f32[128, 128] in dist split m\n  frag cn: f32[128] in dist\n  frag tmin: f32[128] in dist split m\n"
		"  frag targ: i32[128] in dist split m\n  frag best_d: f32[128] in dist split m\n  frag best_i: i32[128] in dist split m\n"
		"{\n  in load {\n    tma x0 <- X[b, bm * 128 +: 128, 0 +: 64] signal xfull\n"
		"    tma x1 <- X[b, bm * 128 +: 128, 64 +: 64] signal xfull\n    for j in 0 .. K / 128 pipelined cr {\n"
		"      wait empty\n      tma c0 <- Cent[b, j * 128 +: 128, 0 +: 64] signal full\n"
		"      tma c1 <- Cent[b, j * 128 +: 128, 64 +: 64] signal full\n    }\n  }\n  in dist {\n    best_d = inf\n"
		"    best_i = 0\n    wait xfull\n    for j in 0 .. K / 128 pipelined cr {\n      load cn <- Cnorm[b, j * 128 +: 128]\n"
		"      wait full\n      wgmma s = x0 @ c0^T\n      wgmma s += x1 @ c1^T\n      wgmma_wait 0\n      arrive empty\n"
		"      s = 0.5 * cols(cn) - s\n      tmin, targ = rowargmin(s)\n      best_i = where(tmin < best_d, targ + j * 128, best_i)\n"
		"      best_d = min(best_d, tmin)\n    }\n    store Out[b, bm * 128 +: 128] <- best_i\n  }\n}\n";
	StrBuf out = {0}, why = {0};
	assert_int_equal(tactic_apply_text(f16, strlen(f16), "operand_ring", NULL, &out, &why), TACTIC_OK);
	check_text(sb_str(&out), NULL, &r);
	r.text = xstrdup(sb_str(&out));
	has(&r, "  grid persistent (N / 128, B) as (bm, b)\n");
	has(&r, "  pipeline xp stages 2\n  pipeline cr stages 4\n");
	has(&r, "  smem x0: f16[128, 64] swizzle 128B ring xp\n");
	has(&r, "  barrier xfull ring xp producers load consumers dist arrivals 1\n"
	        "  barrier xempty ring xp producers dist consumers load arrivals 2\n");
	has(&r, "    for i in 0 .. 1 pipelined xp {\n      wait xempty\n      tma x0 <- ");
	has(&r, "      arrive xempty\n    }\n    store Out[");
	assert_true(r.persistent);
	free(r.text);
	sb_free(&out);
	sb_free(&why);
	/* refusals: no room for the second point stage (the pipeline re-checks the result), no
	 * once-per-tile operand, a grid already persistent */
	apply_refused(ASSIGN, "kmeans_assign", "operand_ring", TACTIC_REJECTED, "[CK-RES-001]");
	apply_refused(G128x256, NULL, "operand_ring", TACTIC_NOT_APPLICABLE,
	              "kernel 'gemm_bf16' has no once-per-tile TMA load at the top of a role");
	apply_refused(APERS, "kmeans_assign", "operand_ring", TACTIC_NOT_APPLICABLE, "is already persistent");
	apply_refused(ASSIGN, "kmeans_assign", "operand_ring:2", TACTIC_BAD_SPEC, "'operand_ring' takes no arguments");
}

/* ---- the harness: bad specs, bad inputs, proposals ---- */

static void test_bad_spec(void **state)
{
	apply_refused(G128x256, NULL, "frobnicate", TACTIC_BAD_SPEC, "unknown tactic 'frobnicate'");
	apply_refused(G128x256, NULL, "stage:4", TACTIC_BAD_SPEC, "did you mean 'stages'?");
	apply_refused(G128x256, NULL, "stages", TACTIC_BAD_SPEC, "'stages' takes stages:N[:PIPE]");
	apply_refused(G128x256, NULL, "stages:four", TACTIC_BAD_SPEC, "not 'four'");
	apply_refused(G128x256, NULL, "stages::ab", TACTIC_BAD_SPEC, "empty argument");
}

static void test_bad_input(void **state)
{
	StrBuf out = {0}, why = {0};
	const char *syn = "kernel k target sm_90a\n  role load warps 0..3\n{\n  in load {\n";
	assert_int_equal(tactic_apply_text(syn, strlen(syn), "stages:3", NULL, &out, &why), TACTIC_BAD_INPUT);
	assert_non_null(strstr(sb_str(&why), "has syntax errors; no tactic applied"));
	assert_int_equal(out.len, 0);
	why.len = 0;
	const char *sem = "kernel k target sm_90a\n  pipeline ab stages 2\n  role load warps 0..3\n{\n  in load {\n    wait nothing\n  }\n}\n";
	assert_int_equal(tactic_apply_text(sem, strlen(sem), "stages:3", NULL, &out, &why), TACTIC_BAD_INPUT);
	assert_non_null(strstr(sb_str(&why), "has errors; no tactic applied"));
	why.len = 0;
	/* a kernel the verifier rejects (tests/corpus/bad) is refused too */
	size_t len;
	char *bad = slurp("tests/corpus/bad/race_no_wait_full.cake", &len);
	assert_int_equal(tactic_apply_text(bad, len, "stages:3", NULL, &out, &why), TACTIC_BAD_INPUT);
	assert_non_null(strstr(sb_str(&why), "has verifier errors; no tactic applied"));
	free(bad);
	why.len = 0;
	char *src = slurp(ASSIGN, &len);
	assert_int_equal(tactic_apply_text(src, len, "stages:3", "nope", &out, &why), TACTIC_BAD_INPUT);
	assert_non_null(strstr(sb_str(&why), "has no kernel named 'nope' (it has 'kmeans_assign', 'kmeans_assign_d64')"));
	free(src);
	assert_int_equal(out.len, 0);
	sb_free(&out);
	sb_free(&why);
}

/* Comments go; the canonical text of a result is a fixed point. */
static void test_canonical(void **state)
{
	Res r;
	apply_ok(G128x256, NULL, "stages:3", &r);
	lacks(&r, "#");
	assert_int_equal(strncmp(r.text, "kernel gemm_bf16 target sm_90a family gemm\n", 43), 0);
	/* applying a tactic to a result, and back */
	StrBuf out = {0}, why = {0};
	assert_int_equal(tactic_apply_text(r.text, strlen(r.text), "stages:4", NULL, &out, &why), TACTIC_OK);
	Res o;
	original(G128x256, NULL, &o);
	assert_string_equal(sb_str(&out), o.text);
	sb_free(&out);
	sb_free(&why);
	free(r.text);
	free(o.text);
}

static void check_proposals(const char *path, const char *kname, int min_ok)
{
	size_t len;
	char *src = slurp(path, &len);
	TacticProposals ps;
	int n = tactics_propose(src, len, kname, false, &ps);
	assert_true(n > 0);
	int ok = 0;
	for (int i = 0; i < ps.n; i++) {
		TacticProposal *p = &ps.items[i];
		assert_int_equal(strncmp(p->origin, "tactic:", 7), 0);
		assert_true(tactic_find(p->origin + 7) != NULL);
		if (p->status == TACTIC_BROKEN)
			fail_msg("%s on %s: %s", p->origin, path, p->reason);
		assert_true(p->status == TACTIC_OK || p->status == TACTIC_NOT_APPLICABLE || p->status == TACTIC_REJECTED);
		if (p->status == TACTIC_REJECTED) {   /* the verifier's or the lowering's refusal, with the program */
			assert_non_null(p->reason);
			assert_non_null(p->text);
			continue;
		}
		if (p->status != TACTIC_OK) {
			assert_non_null(p->reason);
			assert_null(p->text);
			continue;
		}
		ok++;
		assert_null(p->reason);
		check_text(p->text, kname, NULL);
		assert_string_not_equal(p->text, src);
	}
	assert_true(ok >= min_ok);
	TacticProposals only;
	int m = tactics_propose(src, len, kname, true, &only);
	assert_int_equal(m, ok);
	tactic_proposals_free(&only);
	tactic_proposals_free(&ps);
	assert_int_equal(ps.n, 0);
	free(src);
}

static void test_propose(void **state)
{
	check_proposals(G128x256, NULL, 20);
	check_proposals(ASSIGN, "kmeans_assign", 10);
	check_proposals(GSEED, NULL, 10);
	check_proposals(ASEED, NULL, 8);
	const char *bad = "kernel k target sm_90a\n{\n";
	TacticProposals ps;
	assert_int_equal(tactics_propose(bad, strlen(bad), NULL, false, &ps), -1);
	assert_int_equal(ps.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_tile_m),
		cmocka_unit_test(test_tile_n),
		cmocka_unit_test(test_tile_k),
		cmocka_unit_test(test_centroid_tile),
		cmocka_unit_test(test_consumers),
		cmocka_unit_test(test_persistent),
		cmocka_unit_test(test_raster_group),
		cmocka_unit_test(test_split_k),
		cmocka_unit_test(test_swap_ab),
		cmocka_unit_test(test_swizzle),
		cmocka_unit_test(test_regs),
		cmocka_unit_test(test_unroll),
		cmocka_unit_test(test_warp_specialize),
		cmocka_unit_test(test_seed_chains),
		cmocka_unit_test(test_operand_ring),
		cmocka_unit_test(test_ragged),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_propose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
