/*
 * test_cost.c — the cost model (src/cost/): its arithmetic on hand-computed
 * cases, the plan counter, refusals, the model files, and the fit.
 *
 *   - the contract GEMM at 8192^3: the counts (tiles, iterations, bytes and
 *     FLOPs per iteration, the ring's stride), tensor time = 2MNK / rate;
 *     without a family the plan counter gives the family's FLOPs and bytes;
 *   - a memory-bound kernel: time = launch + bytes / bandwidth;
 *   - stages against latency: the exposed latency, the stages that would
 *     cover it, what shared memory allows, and the suggestion's numbers;
 *   - partial waves: 96 CTAs on 132 SMs, 200 CTAs in 1.52 waves;
 *   - the bottleneck rule on synthetic shares (a unit only when it sets 60 %
 *     of the time, the launch left out; the memory system when it is busy
 *     that long under the compute; else the largest of the rest), and on
 *     a synthetic loop: wgmma alone is tensor, wgmma with as much vector work
 *     overlapped is sync (the overlap counts half to each), and the same
 *     with a ring that keeps L2 70 % busy underneath is memory;
 *   - refusal of an uncalibrated (b200) and an unknown target;
 *   - the built-in models equal the newest committed data/cost/NAME-vN.json files (h200-v3,
 *     h100-v2), and the v1 and v2 files still load, their missing coefficients neutral;
 *     a model file round-trips, and broken ones are refused with a reason;
 *   - the split holds out whole groups, deterministically; the metrics on a
 *     hand-made ranking; the fit recovers known coefficients from times
 *     predicted with them and perturbed by 2% (corpus kernels x shapes);
 *   - every corpus kernel that derives predicts a finite time at two
 *     domain samples (no crash under ASan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <dirent.h>
#include <cmocka.h>

#include "cake.h"
#include "cost/cost.h"
#include "sched/sched.h"
#include "harness/rank.h"
#include "testlib.h"

#define GEMM_FAM \
	"kernel gemm_bf16 target sm_90a family gemm\n" TL_GEMM_DECLS("") TL_GEMM_BODY_HEAD "      arrive empty\n" \
	TL_GEMM_BODY_TAIL

typedef struct Unit {
	SourceSet ss;
	DiagList dl;
	CakeUnit u;
} Unit;

static const Plan *compile(Unit *t, const char *src)
{
	memset(t, 0, sizeof *t);
	CakeOptions o = cake_options(CAKE_DERIVE);
	cake_compile_text(&t->u, &t->ss, &t->dl, "t.cake", src, strlen(src), &o);
	assert_int_equal(t->dl.nerr, 0);
	assert_int_equal(t->u.nkernels, 1);
	assert_non_null(t->u.plans[0]);
	return t->u.plans[0];
}

static void unit_free(Unit *t)
{
	cake_unit_free(&t->u);
	diag_free(&t->dl);
	src_free(&t->ss);
}

/* A model with efficiencies 1 and no overheads: time is the plain arithmetic. */
static CostModel plain(const GpuInfo *g)
{
	CostModel m;
	cost_prior(g, &m);
	m.c[CC_EFF_TENSOR] = m.c[CC_EFF_L2] = m.c[CC_EFF_HBM] = 1;
	m.c[CC_EFF_VEC] = 1;
	m.c[CC_OVERLAP] = 0;
	m.c[CC_LAT_SCALE] = 1;
	m.c[CC_SYNC_SCALE] = 0;
	m.c[CC_LAUNCH_US] = 3;
	m.c[CC_CTA_US] = 0;
	m.c[CC_MEM_SERIAL] = 0;
	m.c[CC_GMEM_LAT_SCALE] = 1;
	m.c[CC_WGMMA_N0] = 0;
	m.c[CC_EFF_ATOMIC] = 1;
	m.c[CC_VSTMT_US] = 0;
	return m;
}

static void close_to(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want))) {
		print_error("%.9g is not within %.3g%% of %.9g\n", got, rel * 100, want);
		fail();
	}
}

static void test_gemm_8192(void **state)
{
	Unit t;
	const Plan *p = compile(&t, GEMM_FAM);
	long long dims[3];
	char err[256];
	/* dims in sema order: M, K (from A), N (from B) */
	for (int d = 0; d < p->kernel->ndims; d++)
		dims[d] = 8192;
	CostCounts c;
	assert_true(cost_count(p, dims, &c, err, sizeof err));
	assert_true(c.tiles == 32 * 64);
	assert_true(c.has_loop);
	assert_string_equal(c.pipe, "ab");
	assert_string_equal(c.loop_role, "mma");
	assert_int_equal(c.stages, 4);
	assert_true(c.iters == 128);
	assert_true(c.it.mma_flops == 2.0 * 128 * 256 * 64);
	assert_true(c.it.bytes == 128 * 64 * 2 + 256 * 64 * 2);
	assert_int_equal(c.stage_stride, 49152);
	assert_int_equal(c.consumer_wgs, 2);
	assert_int_equal(c.mma_dt, DT_BF16);
	assert_true(c.epi.bytes == 128 * 256 * 2);
	assert_false(c.approx);

	/* the family's work, and the same from the plan alone */
	const Family *f = family_find(family_builtin(), "gemm");
	CostCounts c2;
	CostWork w, wp;
	assert_true(rank_work(p, dims, f, &c2, &w, err, sizeof err));
	double M = 8192, N = 8192, K = 8192;
	assert_true(w.flops == 2 * M * N * K);
	assert_true(w.bytes == (M * K + N * K) * 2 + M * N * 2);
	cost_plan_work(&c, &wp);
	assert_true(wp.bytes == w.bytes);
	close_to(wp.flops, w.flops, 1e-3);   /* + the accumulator's zeroing and the cast */

	const GpuInfo *g = cost_target("h200", err, sizeof err);
	assert_non_null(g);
	CostModel m = plain(g);
	CostPrediction pr;
	cost_predict(&c, &w, g, &m, &pr);
	close_to(pr.tensor_us, 2 * M * N * K / 781e12 * 1e6, 1e-12);
	close_to(pr.hbm_us, pr.dram_bytes / 4.17e12 * 1e6, 1e-12);
	assert_true(pr.dram_bytes >= w.bytes);
	assert_int_equal(pr.ctas_per_sm, 1);
	assert_string_equal(pr.occ_limit, "shared memory");
	/* per iteration: wgmma time on one SM's share of the rate */
	close_to(pr.mma_it_us, 2.0 * 128 * 256 * 64 / (781e12 / 132) * 1e6, 1e-12);
	close_to(pr.feed_us, 49152 / (11e12 / 132) * 1e6, 1e-12);
	assert_true(pr.us >= pr.tensor_us + 3);
	assert_true(pr.us <= pr.tensor_us * 1.25);
	close_to(pr.waves, 2048.0 / 132, 1e-12);
	assert_non_null(pr.bottleneck);
	/* the prediction names its version and target */
	assert_string_equal(pr.target, "h200");
	unit_free(&t);
}

/* The raster: without `group`, tiles that share a B panel are a row (32
 * tiles) apart and L2 does not keep it; with `group 16` they are adjacent.
 * Session 3 run C1 measured 2082 us against 1402 on an H200. */
static void test_raster(void **state)
{
	static const char *grouped = "kernel gemm_bf16 target sm_90a family gemm\n"
		"  param A: global bf16[M, K]\n  param B: global bf16[N, K]\n  param C: global bf16[M, N]\n"
		"  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64\n"
		"  grid (N / 256, M / 128) as (bn, bm) group 16\n"
		"  role load warps 0..3 regs 40\n  role mma  warps 4..11 regs 232\n  pipeline ab stages 4\n"
		"  smem a: bf16[128, 64] swizzle 128B ring ab\n  smem b: bf16[256, 64] swizzle 128B ring ab\n"
		"  barrier full  ring ab producers load consumers mma  arrivals 1\n"
		"  barrier empty ring ab producers mma  consumers load arrivals 2\n"
		"  frag acc: f32[128, 256] in mma split m\n" TL_GEMM_BODY_HEAD "      arrive empty\n" TL_GEMM_BODY_TAIL;
	Unit t1, t2;
	const Plan *pn = compile(&t1, GEMM_FAM), *pg = compile(&t2, grouped);
	long long dims[3] = {8192, 8192, 8192};
	char err[256];
	CostCounts cn, cg;
	CostWork w;
	const Family *f = family_find(family_builtin(), "gemm");
	assert_true(rank_work(pn, dims, f, &cn, &w, err, sizeof err));
	assert_true(rank_work(pg, dims, f, &cg, &w, err, sizeof err));
	assert_int_equal(cg.group, 16);
	/* B follows bn (axis 0): natural order reuses it 32 tiles later (bucket of 32) */
	assert_true(cn.read_by_axes[1] == 256.0 * 8192 * 2);
	assert_true(cn.read_by_axes[2] == 128.0 * 8192 * 2);
	assert_true(cn.reuse[1].first == 32);
	assert_true(cn.reuse[1].n[10] == 2048 - 32 && cn.reuse[1].d[10] == 32);
	assert_true(cn.reuse[2].n[0] == 2048 - 64);
	const GpuInfo *g = gpu_info("h200");
	const CostModel *m = cost_builtin("h200");
	CostPrediction a, b;
	cost_predict(&cn, &w, g, m, &a);
	cost_predict(&cg, &w, g, m, &b);
	assert_true(a.dram_bytes > 5 * b.dram_bytes);
	assert_true(a.us > 1.15 * b.us);
	bool found = false;
	for (int i = 0; i < a.nsugg; i++)
		found |= strstr(a.sugg[i].text, "`group 16`") != NULL;
	assert_true(found);
	unit_free(&t1);
	unit_free(&t2);
}

static CostCounts memory_counts(void)
{
	CostCounts c;
	memset(&c, 0, sizeof c);
	c.tiles = 132 * 8;
	c.block_threads = 256;
	c.warps = 8;
	c.regs_per_thread = 24;
	c.extent[0] = (long long)c.tiles;
	c.extent[1] = c.extent[2] = 1;
	c.serial.bytes = 4096;
	c.serial.lat_steps = 1;
	c.tile = c.serial;
	c.consumer_wgs = 2;
	return c;
}

static void test_memory_bound(void **state)
{
	char err[256];
	const GpuInfo *g = cost_target("h200", err, sizeof err);
	CostModel m = plain(g);
	CostCounts c = memory_counts();
	CostWork w = {.flops = 0, .bytes = 4.17e9, .source = "test"};
	CostPrediction p;
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.hbm_us, 1000, 1e-12);
	close_to(p.us, 1003, 1e-12);
	assert_string_equal(p.bottleneck, "memory");
	/* half the DRAM efficiency doubles it */
	m.c[CC_EFF_HBM] = 0.5;
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.us, 2003, 1e-12);
	/* occupancy: 256 threads of 32 registers: 8 CTAs by threads */
	assert_int_equal(p.ctas_per_sm, 8);
	assert_string_equal(p.occ_limit, "threads");
}

/* One tile per SM and one pipelined loop in `role`: `iters` iterations of `mma_us` of bf16 wgmma
 * per SM, fed by a ring of `stages` stages of `bytes` each (released after the wgmma). */
static CostCounts ring_counts(const char *role, int stages, int iters, double bytes, double mma_us)
{
	CostCounts c = memory_counts();
	c.tiles = 132;
	c.extent[0] = 132;
	c.serial = (CostSeg){0};
	c.has_loop = true;
	c.pipe = "ab";
	c.loop_role = role;
	c.stages = stages;
	c.iters = iters;
	c.it.bytes = bytes;
	c.it.mma_flops = mma_us * 1e-6 * 781e12 / 132;
	c.hold = c.it;
	c.stage_stride = (long long)bytes;
	c.smem_other = 1024;
	c.smem_bytes = stages * (long long)bytes + 1024;
	c.tile.bytes = c.it.bytes * c.iters;
	c.tile.mma_flops = c.it.mma_flops * c.iters;
	c.mma_dt = DT_BF16;
	return c;
}

static void test_stages_latency(void **state)
{
	char err[256];
	const GpuInfo *g = cost_target("h200", err, sizeof err);
	CostModel m = plain(g);
	CostCounts c = ring_counts("mma", 2, 100, 32768, 0.1);
	CostWork w = {.flops = 1, .bytes = 1, .source = "test"};
	CostPrediction p;
	cost_predict(&c, &w, g, &m, &p);
	double feed = 32768 / (11e12 / 132) * 1e6, arrive = (1.0 + feed + 0.1) / 2;
	close_to(p.feed_us, feed, 1e-12);
	close_to(p.core_us, 0.1, 1e-9);
	close_to(p.arrive_us, arrive, 1e-12);
	close_to(p.it_us, arrive, 1e-12);
	close_to(p.exposed_it_us, arrive - feed, 1e-12);
	assert_int_equal(p.stages_needed, 4);   /* ceil((1 + 0.509 + 0.1) / 0.509) */
	assert_int_equal(p.stages_max, (232448 - 1024) / 32768);
	close_to(p.latency_us, 100 * (arrive - feed), 1e-9);
	assert_string_equal(p.bottleneck, "latency");
	assert_true(p.nsugg >= 1);
	assert_non_null(strstr(p.sugg[0].text, "2 stages cover"));
	assert_non_null(strstr(p.sugg[0].text, "try `stages 4` (shared memory allows 7)"));
	/* with 4 stages the latency is covered */
	c.stages = 4;
	cost_predict(&c, &w, g, &m, &p);
	assert_true(p.exposed_it_us == 0);
	close_to(p.it_us, feed, 1e-12);
}

static void test_partial_wave(void **state)
{
	char err[256];
	const GpuInfo *g = cost_target("h200", err, sizeof err);
	CostModel m = plain(g);
	CostCounts c = memory_counts();
	c.smem_bytes = 200 * 1024;   /* one CTA per SM */
	c.tiles = 96;
	c.extent[0] = 96;
	c.serial.lat_steps = 100;   /* 60 us of latency per CTA */
	c.tile = c.serial;
	CostWork w = {.flops = 0, .bytes = 1e6, .source = "test"};
	CostPrediction p;
	cost_predict(&c, &w, g, &m, &p);
	assert_int_equal(p.ctas_per_sm, 1);
	assert_int_equal(p.active_sms, 96);
	close_to(p.wave_efficiency, 96.0 / 132, 1e-12);
	bool found = false;
	for (int i = 0; i < p.nsugg; i++)
		found |= strstr(p.sugg[i].text, "132 SMs, 96 CTAs: 36 SMs idle") != NULL;
	assert_true(found);
	c.tiles = 200;
	c.extent[0] = 200;
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.waves, 200.0 / 132, 1e-12);
	close_to(p.wave_efficiency, 200.0 / 264, 1e-12);
	close_to(p.chain_us, 2 * (100 * 0.6 + 4096 / (11e12 / 132) * 1e6), 1e-9);
	found = false;
	for (int i = 0; i < p.nsugg; i++)
		found |= strstr(p.sugg[i].text, "1.52 waves, the last 52% full") != NULL;
	assert_true(found);
}

static CostClass classify(double t, double m, double l, double s, double o, double la, double busy, CostRule want)
{
	double sh[COST_NCLASS] = {t, m, l, s, o, la};
	CostRule r = (CostRule)-1;
	CostClass k = cost_classify(sh, busy, &r);
	assert_int_equal(r, want);
	return k;
}

static void test_classify_rule(void **state)
{
	/* a unit that sets most of the time names it */
	assert_int_equal(classify(70, 0, 10, 20, 0, 3, 0.2, COST_RULE_UNIT), COST_TENSOR);
	assert_int_equal(classify(0, 61, 39, 0, 0, 3, 0.61, COST_RULE_UNIT), COST_MEMORY);
	assert_int_equal(classify(60, 0, 0, 40, 0, 3, 0, COST_RULE_UNIT), COST_TENSOR);   /* 60 % is enough */
	/* the launch is not in the kernel's time: 55 of 55 + 30 + 15 */
	assert_int_equal(classify(55, 0, 0, 30, 0, 40, 0, COST_RULE_UNIT), COST_TENSOR);
	/* the largest share, but not a dominant one: what fills the rest */
	assert_int_equal(classify(50, 0, 10, 40, 0, 3, 0.3, COST_RULE_REST), COST_SYNC);
	assert_int_equal(classify(45, 0, 35, 20, 0, 3, 0.3, COST_RULE_REST), COST_LATENCY);
	assert_int_equal(classify(40, 0, 10, 15, 35, 3, 0.1, COST_RULE_REST), COST_OCCUPANCY);
	assert_int_equal(classify(0, 59, 41, 0, 0, 3, 0.59, COST_RULE_REST), COST_LATENCY);
	/* ... unless the memory system is busy most of the time underneath */
	assert_int_equal(classify(55, 0, 0, 45, 0, 3, 0.8, COST_RULE_MEMORY_BUSY), COST_MEMORY);
	assert_int_equal(classify(20, 0, 50, 30, 0, 3, 0.6, COST_RULE_MEMORY_BUSY), COST_MEMORY);
	/* a dominant unit wins over a busy memory system */
	assert_int_equal(classify(67, 0, 3, 27, 3, 3, 0.94, COST_RULE_UNIT), COST_TENSOR);
	/* latency-like shares name themselves when they are the largest */
	assert_int_equal(classify(20, 0, 50, 30, 0, 3, 0.1, COST_RULE_REST), COST_LATENCY);
	/* the launch: the largest share of all, or nothing else */
	assert_int_equal(classify(0.3, 0, 0.6, 0.5, 1.4, 3, 0.07, COST_RULE_LAUNCH), COST_LAUNCH);
	assert_int_equal(classify(0, 0, 0, 0, 0, 0, 0, COST_RULE_LAUNCH), COST_LAUNCH);
	/* the launch fills the rest when it is larger than any latency-like share */
	assert_int_equal(classify(40, 0, 30, 10, 0, 35, 0.1, COST_RULE_REST), COST_LAUNCH);
	assert_string_equal(cost_class_names[COST_OCCUPANCY], "occupancy");
	assert_string_equal(cost_rule_names[COST_RULE_MEMORY_BUSY], "memory-busy");
}

/* One tile per SM, 100 iterations of 1 us of wgmma (4 consumer warpgroups)
 * and `vec` us of vector work, fed by a 4-stage ring of `bytes` per stage. */
static CostCounts overlap_counts(double vec, double bytes)
{
	CostCounts c = ring_counts("dist", 4, 100, bytes, 1.0);
	c.consumer_wgs = 4;
	c.it.vec_ops = vec * 128 * 1980;   /* 128 lanes x 1.98 GHz, eff_vec 1 */
	c.hold = c.it;
	c.tile.vec_ops = c.it.vec_ops * c.iters;
	return c;
}

static void test_classify_overlap(void **state)
{
	char err[256];
	const GpuInfo *g = cost_target("h200", err, sizeof err);
	CostModel m = plain(g);
	m.c[CC_OVERLAP] = 0.5;
	m.c[CC_OVERLAP_MAX] = 1;   /* 4 warpgroups hide 1 - 0.5^3 = 87.5 % */
	m.c[CC_HANDOFF_US] = 0;    /* the v2 overlap (v3's switch cost is checked below) */
	CostWork w = {.flops = 1, .bytes = 1, .source = "test"};
	CostPrediction p;
	/* wgmma alone: the tensor cores set the time */
	CostCounts c = overlap_counts(0, 4096);
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.core_us, 1.0, 1e-9);
	close_to(p.share[COST_TENSOR], 100, 1e-9);
	assert_string_equal(p.bottleneck, "tensor");
	assert_int_equal(p.rule, COST_RULE_UNIT);
	/* as much vector work: 1 + 0.125 us per iteration, the 0.875 us both
	 * units are busy counted half to each: 56.25 us tensor, 56.25 sync */
	c = overlap_counts(1.0, 4096);
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.core_us, 1.125, 1e-9);
	close_to(p.share[COST_TENSOR], 56.25, 1e-9);
	close_to(p.share[COST_SYNC], 56.25, 1e-9);
	assert_string_equal(p.bottleneck, "sync");
	assert_int_equal(p.rule, COST_RULE_REST);
	assert_true(p.mem_busy < 0.1);
	/* the same compute over a ring that moves 0.8 us of L2 traffic per
	 * iteration: L2 is busy ~70 % of the time, though it sets none of it */
	c = overlap_counts(1.0, 0.8e-6 * 11e12 / 132);
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.feed_us, 0.8, 1e-9);
	close_to(p.it_us, 1.125, 1e-9);
	assert_true(p.share[COST_MEMORY] == 0);
	assert_true(p.mem_busy > 0.65 && p.mem_busy < 0.75);
	assert_string_equal(p.bottleneck, "memory");
	assert_int_equal(p.rule, COST_RULE_MEMORY_BUSY);
	/* v3: a switch of 0.25 us against phases of 1 / 4 us: the pair keeps
	 * its 50 %, the third and fourth warpgroups half of their 37.5 %:
	 * 68.75 % hidden, 1 + 0.3125 us per iteration */
	m.c[CC_HANDOFF_US] = 0.25;
	c = overlap_counts(1.0, 4096);
	cost_predict(&c, &w, g, &m, &p);
	close_to(p.core_us, 1.3125, 1e-9);
}

static void test_refusal(void **state)
{
	char err[512];
	assert_null(cost_target("b200", err, sizeof err));
	assert_non_null(strstr(err, "not calibrated"));
	assert_non_null(strstr(err, "h200"));
	assert_non_null(strstr(err, "h100"));
	assert_null(cost_target("mi300", err, sizeof err));
	assert_non_null(strstr(err, "unknown cost target 'mi300'"));
	assert_non_null(strstr(err, "h100"));
	assert_non_null(cost_target("H200", err, sizeof err));
	assert_non_null(cost_target("h100", err, sizeof err));
	/* b200 is declared, on the sm_100a compile row */
	const GpuInfo *b = gpu_info("b200");
	assert_non_null(b);
	assert_false(b->calibrated);
	assert_int_equal(b->target, TGT_SM100A);
	assert_int_equal(gpu_info("h100")->target, TGT_SM90A);
	assert_true(gpu_info("h200")->hbm_bw.kind == FACT_MEASURED);
	assert_true(gpu_info("h100")->hbm_bw.kind == FACT_LEAD);
}

static void same_model(const CostModel *a, const CostModel *b)
{
	assert_string_equal(a->version, b->version);
	assert_string_equal(a->target, b->target);
	for (int i = 0; i < CC_NCOEF; i++)
		if (a->c[i] != b->c[i]) {
			print_error("coefficient %s: %.17g != %.17g\n", cost_coef_name(i), a->c[i], b->c[i]);
			fail();
		}
	assert_string_equal(a->data_hash, b->data_hash);
	assert_string_equal(a->fitted_on, b->fitted_on);
	assert_int_equal(a->rows, b->rows);
	assert_int_equal(a->train, b->train);
	assert_int_equal(a->heldout, b->heldout);
}

static void test_builtin_is_committed(void **state)
{
	const char *names[] = {"h200", "h100"};
	const int newest[] = {3, 2};     /* h100 has no measurements: still the v2 transfer */
	for (int i = 0; i < 2; i++) {
		const GpuInfo *g = gpu_info(names[i]);
		char path[128], err[512];
		snprintf(path, sizeof path, "data/cost/%s-v%d.json", names[i], newest[i]);
		CostModel m;
		if (!cost_model_load(g, path, &m, NULL, 0, err, sizeof err)) {
			print_error("%s\n", err);
			fail();
		}
		const CostModel *b = cost_builtin(names[i]);
		assert_non_null(b);
		same_model(&m, b);
	}
	assert_null(cost_builtin("b200"));
	/* v1 predates tile_us, overlap_max, shfl_cost and epi_post: they read neutral */
	CostModel v1;
	char err[512];
	assert_true(cost_model_load(gpu_info("h200"), "data/cost/h200-v1.json", &v1, NULL, 0, err, sizeof err));
	assert_string_equal(v1.version, "h200-v1");
	for (int i = CC_TILE_US; i < CC_NCOEF; i++)
		assert_true(v1.c[i] == cost_coef_neutral(i));
	/* v2 predates handoff_us: it reads neutral (0, the v2 overlap) */
	CostModel v2;
	assert_true(cost_model_load(gpu_info("h200"), "data/cost/h200-v2.json", &v2, NULL, 0, err, sizeof err));
	assert_true(v2.c[CC_HANDOFF_US] == cost_coef_neutral(CC_HANDOFF_US) && v2.c[CC_HANDOFF_US] == 0);
}

static void test_model_files(void **state)
{
	const CostModel *b = cost_builtin("h200");
	StrBuf s = {0};
	cost_model_json(&s, b);
	CostModel m;
	char err[256];
	assert_true(cost_model_parse(s.s, s.len, &m, err, sizeof err));
	same_model(&m, b);
	sb_free(&s);
	const char *bad[][2] = {
		{"{", "not JSON"},
		{"{\"format\":\"x\"}", "cake-cost-model/1"},
		{"{\"format\":\"cake-cost-model/1\",\"version\":\"v\",\"target\":\"h200\",\"coefficients\":{}}", "eff_tensor"},
		{"{\"format\":\"cake-cost-model/1\",\"version\":\"v\",\"target\":\"h200\",\"coefficients\":{\"eff_tensor\":9,"
		 "\"eff_l2\":1,\"eff_hbm\":1,\"eff_vec\":0.5,\"overlap\":0.5,\"tma_lat_scale\":1,\"gmem_lat_scale\":1,\"wgmma_n0\":8,\"eff_atomic\":0.5,\"vstmt_us\":0.02,\"sync_scale\":1,\"launch_us\":3,"
		 "\"cta_us\":1,\"mem_serial\":0,\"l2_reuse\":0.5}}", "outside its range"},
		{"{\"format\":\"cake-cost-model/1\",\"version\":\"v\",\"target\":\"h200\",\"coefficients\":{\"eff_tensor\":1,"
		 "\"eff_l2\":1,\"eff_hbm\":1,\"eff_vec\":0.5,\"overlap\":0.5,\"tma_lat_scale\":1,\"gmem_lat_scale\":1,\"wgmma_n0\":8,\"eff_atomic\":0.5,\"vstmt_us\":0.02,\"sync_scale\":1,\"launch_us\":3,"
		 "\"cta_us\":1,\"mem_serial\":0,\"l2_reuse\":0.5,\"bogus\":1}}", "unknown coefficient \"bogus\""},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(cost_model_parse(bad[i][0], strlen(bad[i][0]), &m, err, sizeof err));
		if (!strstr(err, bad[i][1])) {
			print_error("case %zu: '%s' does not say '%s'\n", i, err, bad[i][1]);
			fail();
		}
	}
	/* a missing file is an error, not the built-in */
	assert_false(cost_model_load(gpu_info("h200"), "/nonexistent/h200-v9.json", &m, NULL, 0, err, sizeof err));
	assert_non_null(strstr(err, "cannot read"));
}

static void test_split_and_metrics(void **state)
{
	CostSample s[8];
	memset(s, 0, sizeof s);
	const char *groups[] = {"f|a", "f|a", "f|a", "f|a", "f|b", "f|b", "g|c", "g|c"};
	double meas[] = {10, 20, 30, 40, 5, 6, 1, 2};
	for (int i = 0; i < 8; i++) {
		s[i].group = groups[i];
		s[i].family = groups[i][0] == 'f' ? "f" : "g";
		s[i].meas_us = meas[i];
	}
	cost_split(s, 8, 3, true);
	/* whole groups, and family f (two groups) holds out at least one */
	for (int i = 1; i < 8; i++)
		if (!strcmp(s[i].group, s[i - 1].group))
			assert_true(s[i].heldout == s[i - 1].heldout);
	assert_true(s[0].heldout || s[4].heldout);
	bool first[8];
	for (int i = 0; i < 8; i++)
		first[i] = s[i].heldout;
	cost_split(s, 8, 3, true);
	for (int i = 0; i < 8; i++)
		assert_true(first[i] == s[i].heldout);
	/* metrics with a hand ranking: the model's time = the count of its counts */
	const GpuInfo *g = gpu_info("h200");
	CostModel m = plain(g);
	m.c[CC_LAUNCH_US] = 0.5;
	for (int i = 0; i < 8; i++) {
		s[i].heldout = true;
		s[i].c = memory_counts();
		s[i].w.bytes = 0;
		s[i].w.source = "t";
	}
	/* predictions 0.5 + hbm: make group a's order 1,2,4,3 */
	double bytes[] = {1, 2, 4, 3, 1, 2, 1, 2};
	for (int i = 0; i < 8; i++) {
		s[i].c.tiles = 0;   /* no body: time = launch + bytes floor only when tiles > 0 */
		s[i].c.tiles = 1;
		s[i].c.extent[0] = 1;
		s[i].c.serial = (CostSeg){0};
		s[i].c.tile = s[i].c.serial;
		s[i].w.bytes = bytes[i] * 4.17e12 * 1e-6 * 100;   /* 100 us per unit */
	}
	CostMetrics mt;
	cost_metrics(s, 8, g, &m, true, "f", &mt);
	assert_int_equal(mt.n, 6);
	assert_int_equal(mt.groups, 2);
	assert_int_equal(mt.pairs, 6 + 1);
	/* group a: 6 pairs, one discordant (30 vs 40 predicted 400 vs 300); group b concordant */
	close_to(mt.tau, (6.0 - 1 - 1 + 1) / 7, 1e-12);
	assert_int_equal(mt.top3_groups, 2);
	assert_int_equal(mt.top3_hits, 2);
	assert_int_equal(mt.top3_trivial, 1);
	cost_metrics(s, 8, g, &m, false, NULL, &mt);
	assert_int_equal(mt.n, 0);
	assert_true(isnan(mt.tau));
}

/* ---- the fit on synthetic times ---- */

typedef struct Corpus {
	Unit u[16];
	int n;
} Corpus;

#define NFIT 5
static const char *fit_files[NFIT][2] = {
	{"tests/data/cost/src/gemm_ws_128x256_s4.cake", NULL},
	{"tests/data/cost/src/gemm_persistent.cake", NULL},
	{"tests/data/cost/src/gemm_ws_128x128_s5.cake", NULL},
	{"tests/data/cost/src/kmeans_update_segmented.cake", NULL},
	{"tests/data/cost/src/kmeans_update_sorted.cake", "kmeans_segsum"},
};

/* Samples of the fit files at many shapes, timed by `truth` and perturbed by +-noise (deterministic). */
static int synth(Unit *u, CostSample *s, const CostModel *truth, double noise, char groups[][64])
{
	const GpuInfo *g = gpu_info("h200");
	long long gemm_shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 1024, 8192}, {2048, 2048, 2048},
	                              {1024, 1024, 1024}, {256, 512, 64},     {4096, 8192, 2048}, {16384, 2048, 4096},
	                              {512, 1024, 8192},  {2048, 4096, 1024}};
	int ns = 0;
	char err[256];
	for (int f = 0; f < NFIT; f++) {
		memset(&u[f], 0, sizeof u[f]);
		CakeOptions o = cake_options(CAKE_DERIVE);
		o.kernel = fit_files[f][1];
		assert_int_equal(cake_compile_path(&u[f].u, &u[f].ss, &u[f].dl, fit_files[f][0], &o), 0);
		const Plan *p = u[f].u.plans[0];
		const Kernel *k = p->kernel;
		const Family *fam = family_find(family_builtin(), k->family->name);
		int nshape = f < 3 ? 10 : 3;
		for (int i = 0; i < nshape; i++) {
			long long dims[8] = {0};
			for (int d = 0; d < k->ndims; d++) {
				const char *n = k->dims[d];
				if (f < 3)
					dims[d] = !strcmp(n, "M") ? gemm_shapes[i][0] : !strcmp(n, "N") ? gemm_shapes[i][1] : gemm_shapes[i][2];
				else if (f == 3)
					dims[d] = !strcmp(n, "N") ? 524288LL << i : !strcmp(n, "K") ? 1024 : 1025;
				else
					dims[d] = !strcmp(n, "B") ? 4LL << (2 * i) : !strcmp(n, "N") ? 65536 : 1024;
			}
			CostSample *x = &s[ns];
			memset(x, 0, sizeof *x);
			assert_true(rank_work(p, dims, fam, &x->c, &x->w, err, sizeof err));
			x->family = k->family->name;
			snprintf(groups[ns], 64, "%s|%d|%d", x->family, f < 3 ? 0 : f, i);
			x->group = groups[ns];
			x->meas_us = cost_predict_us(&x->c, &x->w, g, truth) * (1 + noise * ((ns * 7919) % 5 - 2) / 2.0);
			ns++;
		}
	}
	return ns;
}

static void test_fit_recovers(void **state)
{
	const GpuInfo *g = gpu_info("h200");
	CostModel truth, prior;
	cost_prior(g, &prior);
	/* v2's terms held at their neutral values: in this GEMM-heavy set
	 * epi_post and tile_us trade against cta_us and the fill latency (the
	 * per-tile costs of a chain), so the data cannot pin them all at once */
	bool free_coef[CC_NCOEF];
	for (int i = 0; i < CC_NCOEF; i++)
		free_coef[i] = i < CC_TILE_US;
	for (int i = CC_TILE_US; i < CC_NCOEF; i++)
		prior.c[i] = cost_coef_neutral(i);
	truth = prior;
	truth.c[CC_EFF_TENSOR] = 0.9;
	truth.c[CC_EFF_L2] = 1.2;
	truth.c[CC_LAUNCH_US] = 4.5;
	truth.c[CC_LAT_SCALE] = 0.7;
	truth.c[CC_CTA_US] = 1.5;
	for (int pass = 0; pass < 2; pass++) {
		double noise = pass ? 0.01 : 0;
		CostSample s[64];
		char groups[64][64];
		Unit u[NFIT];
		int ns = synth(u, s, &truth, noise, groups);
		cost_split(s, ns, 3, true);
		int held = 0;
		for (int i = 0; i < ns; i++)
			held += s[i].heldout;
		assert_true(held > 0 && held < ns);
		CostModel fit = prior;
		cost_fit_some(s, ns, g, &prior, pass ? 1e-4 : 0, 0, free_coef, &fit);
		for (int i = 0; i < CC_NCOEF; i++)
			print_message("  noise %.2f %-11s truth %-8.4g fitted %-8.4g\n", noise, cost_coef_name(i), truth.c[i],
			              fit.c[i]);
		CostMetrics mt;
		cost_metrics(s, ns, g, &fit, true, NULL, &mt);
		print_message("  held out: %d samples, %d groups, %d pairs, tau %.3f, mape %.4f\n", mt.n, mt.groups, mt.pairs,
		              mt.tau, mt.mape);
		if (!pass) {
			/* exact times: the coefficients the data pins come back (eff_l2
			 * and eff_hbm trade against each other in GEMM-only data: both
			 * are memory, and no sample here separates them) */
			close_to(fit.c[CC_EFF_TENSOR], 0.9, 0.01);
			close_to(fit.c[CC_LAT_SCALE], 0.7, 0.03);
			close_to(fit.c[CC_LAUNCH_US], 4.5, 0.03);
			close_to(fit.c[CC_CTA_US], 1.5, 0.03);
			assert_true(mt.mape < 0.002);
		} else {
			/* +-1%: the tensor rate and the launch within a few percent (the TMA latency binds in
			 * too few samples to survive the noise), and the held-out times within 2% */
			close_to(fit.c[CC_EFF_TENSOR], 0.9, 0.03);
			close_to(fit.c[CC_LAUNCH_US], 4.5, 0.05);
			assert_true(mt.mape < 0.02);
			/* deterministic: the same fit again */
			CostModel again = prior;
			cost_fit_some(s, ns, g, &prior, 1e-4, 0, free_coef, &again);
			for (int i = 0; i < CC_NCOEF; i++)
				assert_true(again.c[i] == fit.c[i]);
		}
		assert_true(mt.tau >= 0.9 || isnan(mt.tau));
		for (int f = 0; f < NFIT; f++)
			unit_free(&u[f]);
	}
}

/* ---- every corpus kernel ---- */

static void smoke_file(const char *path, int *npred)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_DERIVE);
	cake_compile_path(&u, &ss, &dl, path, &o);
	const GpuInfo *g = gpu_info("h200");
	const CostModel *m = cost_builtin("h200");
	for (int i = 0; i < u.nkernels && u.plans; i++) {
		const Plan *p = u.plans[i];
		if (!p)
			continue;
		Sched v;
		sched_build(&v, &u.ctx, u.kernels[i]);
		int ns = sched_nsamples(&v);
		for (int q = 0; q < 2; q++) {
			int si = q ? ns - 1 : 0;
			long long dims[16] = {0};
			for (int d = 0; d < v.ndims && d < 16; d++)
				dims[d] = v.ndimvals[d] > si ? v.dimvals[d][si] : v.ndimvals[d] > 0 ? v.dimvals[d][v.ndimvals[d] - 1] : 1;
			const Family *f = u.kernels[i]->family ? family_find(family_builtin(), u.kernels[i]->family->name) : NULL;
			CostCounts c;
			CostWork w;
			char err[256];
			if (!rank_work(p, dims, f, &c, &w, err, sizeof err))
				continue;
			CostPrediction pr;
			cost_predict(&c, &w, g, m, &pr);
			if (!(isfinite(pr.us) && pr.us > 0 && pr.tensor_us >= 0 && pr.memory_us >= 0 && pr.bottleneck)) {
				print_error("%s kernel %s: predicted %g\n", path, p->name, pr.us);
				fail();
			}
			StrBuf b = {0};
			cost_print_text(&b, &pr, &c, &w);
			cost_print_json(&b, &pr, &c, &w);
			sb_free(&b);
			(*npred)++;
		}
		sched_free(&v);
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void smoke_dir(const char *dir, int *npred)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".cake")) {
			char path[512];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			smoke_file(path, npred);
		}
	}
	closedir(d);
}

static void test_corpus_smoke(void **state)
{
	int n = 0;
	smoke_dir("tests/corpus/good", &n);
	smoke_dir("kernels/gemm", &n);
	smoke_dir("kernels/kmeans", &n);
	assert_true(n >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_8192),
		cmocka_unit_test(test_raster),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_stages_latency),
		cmocka_unit_test(test_partial_wave),
		cmocka_unit_test(test_classify_rule),
		cmocka_unit_test(test_classify_overlap),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_builtin_is_committed),
		cmocka_unit_test(test_model_files),
		cmocka_unit_test(test_split_and_metrics),
		cmocka_unit_test(test_fit_recovers),
		cmocka_unit_test(test_corpus_smoke),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
