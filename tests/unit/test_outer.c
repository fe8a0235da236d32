/*
 * test_outer.c — the outer loop's tools on the CK-RES-002 v1 -> v2 history,
 * without a GPU: rule impact (gate_store, gate_trace), failure mining
 * (mine_store, mine_features) and the GPU part's small shapes
 * (gate_small_shape).
 *
 * The store is built through the store API exactly as `cake eval` would
 * record the history of bench/RESULTS.md run S: the four-warpgroup k-means
 * assign of tests/corpus/bad/res_regs_launch_pool.cake (regs 120) and its
 * variants (regs 112; regs 112 with 3 and 2 stages) judged by a v1-style
 * harness, the verifier without CK-RES-002 (eval_verifier_version says
 * "-without:CK-RES-002"). THE GPU VERDICTS ARE PLANTED: `hang` for regs 120
 * and `ok` with times for the others are what the H200 returned in runs S1
 * and S2, written here by hand because this test has no GPU; nothing in the
 * code under test is faked. bench/outer_example.sh rebuilds the same
 * history with real runs on the GPU host (docs/OUTER_LOOP.md).
 *
 * Checks: the current harness charges one true positive to CK-RES-002 (the
 * hang) and rejects none of the ok runs; the gate run and its impact row
 * are in the store and gate_trace names the rule that removed the
 * candidate; mining puts the hang in one cluster opened by regs_pool=over,
 * rule family CK-RES, with regs.dist=120 held by no ok run, already blocked
 * today by CK-RES-002. A second store plants the other impacts: an ok run
 * the current rule rejects (false positive, exit 1), a rejection by an older
 * harness the current one accepts (newly accepted), a rejection that stays
 * (no row), and a never-run dry run (unrun).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/gate.h"
#include "harness/mine.h"

#define HANG_FILE "tests/corpus/bad/res_regs_launch_pool.cake"
#define SHAPE "B=32,N=65536,K=1024"

static char *mk_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char tmpl[1024];
	snprintf(tmpl, sizeof tmpl, "%s/cake-outer-XXXXXX", t && *t ? t : "/tmp");
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return xstrdup(d);
}

static void rm_rf(const char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* text with the first `from` replaced by `to` (malloc'd) */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	assert_non_null(p);
	StrBuf b = {0};
	sb_putn(&b, text, (size_t)(p - text));
	sb_puts(&b, to);
	sb_puts(&b, p + strlen(from));
	char *r = xstrdup(sb_str(&b));
	sb_free(&b);
	return r;
}

static Store *open_new(const char *dir, const char *name)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	Store *st = NULL;
	StrBuf err = {0};
	assert_int_equal(store_open(path, STORE_CREATE, &st, &err), STORE_OK);
	sb_free(&err);
	return st;
}

static void add_cand(Store *st, const char *text, const char *parent, char id[STORE_ID_LEN + 1])
{
	StoreCandidate c = {.text = text, .parent = parent, .origin = parent ? "tactic:regs:dist:112" : "human"};
	assert_int_equal(store_add_candidate(st, &c, id, NULL), STORE_OK);
}

/* Record one evaluation of the item with verdict v under harness h; a
 * verifier rejection carries the pipeline's real findings. */
static int64_t record(Store *st, const char *id, const char *text, StoreHarness h, StoreVerdict v, double median,
                      double gpu_s, const char *message, int64_t t)
{
	StoreEval e;
	store_eval_init(&e);
	e.cand = id;
	e.kernel = "kmeans_assign_4wg";
	e.shape = SHAPE;
	e.harness = h;
	e.verdict = v;
	e.median_us = median;
	e.min_us = e.max_us = median;
	e.gpu_s = gpu_s;
	e.message = message;
	e.time_ms = t;
	e.target = "sm_90a";
	if (v != STORE_V_REJECTED && v != STORE_V_DRY_RUN)
		e.gpu = "NVIDIA H200", e.driver = "13.0";
	SourceSet ss = {0};
	DiagList dl = {0};
	if (v == STORE_V_REJECTED) {
		CakeUnit u;
		CakeOptions o = cake_options(CAKE_VERIFY);
		cake_compile_text(&u, &ss, &dl, "candidate.cake", text, strlen(text), &o);
		assert_true(dl.nerr > 0);
		cake_unit_free(&u);
	}
	int64_t eid = 0;
	StoreStatus s = store_add_eval(st, &e, &ss, dl.n ? &dl : NULL, &eid);
	if (s != STORE_OK)
		fprintf(stderr, "%s\n", store_errmsg(st));
	assert_int_equal(s, STORE_OK);
	diag_free(&dl);
	src_free(&ss);
	return eid;
}

typedef struct History {
	char hang[STORE_ID_LEN + 1], r112[STORE_ID_LEN + 1], s3[STORE_ID_LEN + 1], s2[STORE_ID_LEN + 1];
	char *t120, *t112, *t3, *t2;
} History;

static StoreHarness v1_harness(char *vver, size_t n)
{
	static const char *const skip[] = {"CK-RES-002", NULL};
	eval_verifier_version(skip, vver, n);
	StoreHarness h = eval_harness(NULL);
	h.verifier = vver;
	return h;
}

/* The run-S history: regs 120 hung, regs 112 (and two stage variants) ran ok. */
static void build_history(Store *st, History *h)
{
	size_t len;
	h->t120 = read_file(HANG_FILE, &len);
	assert_non_null(h->t120);
	h->t112 = replace(h->t120, "regs 120", "regs 112");
	h->t3 = replace(h->t112, "pipeline cr stages 4", "pipeline cr stages 3");
	h->t2 = replace(h->t112, "pipeline cr stages 4", "pipeline cr stages 2");
	char vver[256];
	StoreHarness v1 = v1_harness(vver, sizeof vver);
	assert_non_null(strstr(v1.verifier, "-without:CK-RES-002"));
	add_cand(st, h->t120, NULL, h->hang);
	add_cand(st, h->t112, h->hang, h->r112);
	add_cand(st, h->t3, h->r112, h->s3);
	add_cand(st, h->t2, h->r112, h->s2);
	/* planted: the verdicts the H200 returned (bench/RESULTS.md runs S1, S2) */
	record(st, h->hang, h->t120, v1, STORE_V_HANG, NAN, 10.4, "the watchdog fired after 10 s (kernel still running)",
	       1764406620000);
	record(st, h->r112, h->t112, v1, STORE_V_OK, 1029.1, 2.1, NULL, 1764406680000);
	record(st, h->s3, h->t3, v1, STORE_V_OK, 1041.7, 2.1, NULL, 1764406690000);
	record(st, h->s2, h->t2, v1, STORE_V_OK, 1088.3, 2.2, NULL, 1764406700000);
}

static void history_free(History *h)
{
	free(h->t120);
	free(h->t112);
	free(h->t3);
	free(h->t2);
}

static void test_worked_example(void **state)
{
	char *dir = mk_tmpdir();
	Store *st = open_new(dir, "s.db");
	History h;
	build_history(st, &h);

	/* the features mining sees */
	Arena a;
	arena_init(&a);
	const char **f;
	int nf = mine_features(h.t120, NULL, SHAPE, &a, &f);
	assert_true(nf > 10);
	const char *want[] = {"regs_pool=over", "regs_file=within", "launch_pool=61440", "regs_asked=64512",
	                      "regs.dist=120", "regs.load=24", "threads=640", "role.dist=4wg", "bar.empty=4/4",
	                      "bar_arrivals=match", "stages.cr=4", "trips.cr=8", "stages_vs_trips=within",
	                      "persistent=no", "cluster=1x1x1"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		bool found = false;
		for (int k = 0; k < nf && !found; k++)
			found = !strcmp(f[k], want[i]);
		if (!found)
			fprintf(stderr, "missing feature %s\n", want[i]);
		assert_true(found);
	}
	nf = mine_features(h.t112, NULL, SHAPE, &a, &f);
	bool within = false;
	for (int k = 0; k < nf; k++)
		within = within || !strcmp(f[k], "regs_pool=within");
	assert_true(within);
	assert_int_equal(mine_features("kernel broken target sm_90a {", NULL, "", &a, &f), -1);

	/* mining: one cluster, the register pool, CK-RES, caught today by CK-RES-002 */
	MineResult m;
	char err[1024] = "";
	assert_int_equal(mine_store(st, NULL, &m, err, sizeof err), 0);
	assert_int_equal(m.nitems, 4);
	assert_int_equal(m.nfail, 1);
	assert_int_equal(m.nok, 3);
	assert_int_equal(m.nclusters, 1);
	assert_int_equal(m.unexplained, 0);
	const MineCluster *c = &m.clusters[0];
	assert_string_equal(c->key, "regs_pool=over");
	assert_string_equal(c->family, "CK-RES");
	assert_int_equal(c->nmembers, 1);
	assert_int_equal(c->verdicts[STORE_V_HANG], 1);
	assert_int_equal(c->caught_now, 1);
	assert_string_equal(c->caught_rules, "CK-RES-002");
	bool dist120 = false;
	for (int s = 0; s < c->nshared; s++) {
		assert_int_equal(c->shared[s].fail_n, 1);
		assert_true(c->shared[s].ok_freq <= 0.25);
		if (!strcmp(c->shared[s].feature, "regs.dist=120"))
			dist120 = c->shared[s].ok_n == 0 && c->shared[s].fail_freq == 1.0;
		assert_true(strcmp(c->shared[s].feature, "launch_pool=61440") != 0);   /* every ok run has it too */
	}
	assert_true(dist120);
	StrBuf out = {0};
	mine_print(&out, &m, STORE_FMT_TEXT);
	assert_non_null(strstr(sb_str(&out), "sharing regs_pool=over -> rule family CK-RES"));
	assert_non_null(strstr(sb_str(&out), "today's harness blocks 1 of 1 (CK-RES-002)"));
	out.len = 0;
	mine_print(&out, &m, STORE_FMT_JSON);
	assert_non_null(strstr(sb_str(&out), "\"schema\":\"cake-mine/1\""));
	mine_free(&m);

	/* rule impact: the v2 rule catches the hang (a true positive) and rejects none of the ok runs */
	GateImpact g;
	assert_int_equal(gate_store(st, true, &g, err, sizeof err), 0);
	assert_int_equal(g.run.items, 4);
	assert_int_equal(g.evals, 4);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.tp, 1);
	assert_int_equal(g.fp, 0);
	assert_int_equal(g.unrun + g.accepted + g.changed + g.same_harness, 0);
	assert_int_equal(g.nrules, 1);
	assert_string_equal(g.rules[0].rule, "CK-RES-002");
	assert_int_equal(g.rules[0].tp, 1);
	const StoreImpact *r = &g.rows[0];
	assert_string_equal(r->cand, h.hang);
	assert_int_equal(r->old_outcome, STORE_OUT_ACCEPTED);
	assert_int_equal(r->new_outcome, STORE_OUT_REJECTED);
	assert_string_equal(r->rule, "CK-RES-002");
	assert_int_equal(r->gpu_verdict, STORE_V_HANG);
	assert_int_equal(r->impact, STORE_IMP_TRUE_POSITIVE);
	assert_true(g.recorded && g.run.id > 0);
	out.len = 0;
	gate_impact_print(&out, &g, STORE_FMT_TEXT);
	assert_non_null(strstr(sb_str(&out), "1 true positive, 0 false positives"));
	int64_t run = g.run.id;
	gate_impact_free(&g);

	/* the store remembers: the run, its row, and the candidate's history */
	StoreImpact *im;
	int ni = 0;
	assert_int_equal(store_list_impact(st, h.hang, 0, &a, &im, &ni), STORE_OK);
	assert_int_equal(ni, 1);
	assert_int_equal(im[0].run, run);
	assert_int_equal(store_list_impact(st, h.r112, 0, &a, &im, &ni), STORE_OK);
	assert_int_equal(ni, 0);
	out.len = 0;
	assert_int_equal(gate_trace(st, h.hang, &out, STORE_FMT_TEXT, err, sizeof err), 0);
	assert_non_null(strstr(sb_str(&out), "-without:CK-RES-002  hang"));
	assert_non_null(strstr(sb_str(&out), "accepted -> rejected by CK-RES-002 (true_positive; GPU: hang)"));
	assert_non_null(strstr(sb_str(&out), "removed from the search by CK-RES-002"));
	out.len = 0;
	assert_int_equal(gate_trace(st, h.r112, &out, STORE_FMT_TEXT, err, sizeof err), 0);
	assert_non_null(strstr(sb_str(&out), "now: no gate run changed its outcome"));
	assert_int_equal(gate_trace(st, "ffffffffffffffffffffffffffffffff", &out, STORE_FMT_TEXT, err, sizeof err), 1);

	/* a second run changes nothing new but is recorded too */
	assert_int_equal(gate_store(st, false, &g, err, sizeof err), 0);
	assert_int_equal(g.tp, 1);
	assert_false(g.recorded);
	gate_impact_free(&g);
	StoreGateRun *runs;
	int nr = 0;
	assert_int_equal(store_list_gate_runs(st, 0, &a, &runs, &nr), STORE_OK);
	assert_int_equal(nr, 1);

	sb_free(&out);
	arena_free(&a);
	history_free(&h);
	store_close(st);
	rm_rf(dir);
	free(dir);
}

static void test_impact_kinds(void **state)
{
	char *dir = mk_tmpdir();
	Store *st = open_new(dir, "k.db");
	History h;
	build_history(st, &h);
	char vver[256];
	StoreHarness v1 = v1_harness(vver, sizeof vver);
	StoreHarness now = eval_harness(NULL);
	StoreHarness old = now;
	old.verifier = "v1-00000000";   /* an older verifier that rejected more */
	/* planted: a regs 128 variant that "ran ok" under v1 -> a false positive of CK-RES-002 today */
	char *t128 = replace(h.t120, "regs 120", "regs 128"), id128[STORE_ID_LEN + 1];
	add_cand(st, t128, NULL, id128);
	record(st, id128, t128, v1, STORE_V_OK, 999.0, 2.0, NULL, 1764406710000);
	/* regs 112 rejected by the older verifier (its findings say CK-RES-002 through the message) */
	StoreEval e;
	store_eval_init(&e);
	e.cand = h.r112;
	e.kernel = "kmeans_assign_4wg";
	e.shape = SHAPE;
	e.harness = old;
	e.verdict = STORE_V_REJECTED;
	e.message = "CK-RES-002: roles need too many registers";
	e.time_ms = 1764406600000;
	assert_int_equal(store_add_eval(st, &e, NULL, NULL, NULL), STORE_OK);
	/* the hang rejected by today's harness too: no change for that evaluation */
	record(st, h.hang, h.t120, now, STORE_V_REJECTED, NAN, 0, NULL, 1764406800000);
	/* a regs 136 variant only dry-run under v1: newly rejected, never run */
	char *t136 = replace(h.t120, "regs 120", "regs 136"), id136[STORE_ID_LEN + 1];
	add_cand(st, t136, NULL, id136);
	record(st, id136, t136, v1, STORE_V_DRY_RUN, NAN, 0, "dry run", 1764406820000);

	GateImpact g;
	char err[1024] = "";
	assert_int_equal(gate_store(st, true, &g, err, sizeof err), 1);   /* a false positive */
	assert_int_equal(g.tp, 1);
	assert_int_equal(g.fp, 1);
	assert_int_equal(g.unrun, 1);
	assert_int_equal(g.accepted, 1);
	assert_int_equal(g.n, 4);
	bool fp = false, acc = false;
	for (int i = 0; i < g.n; i++) {
		const StoreImpact *r = &g.rows[i];
		if (!strcmp(r->cand, id128))
			fp = r->impact == STORE_IMP_FALSE_POSITIVE && r->gpu_verdict == STORE_V_OK && !strcmp(r->rule, "CK-RES-002");
		if (!strcmp(r->cand, h.r112))
			acc = r->impact == STORE_IMP_NEWLY_ACCEPTED && r->old_outcome == STORE_OUT_REJECTED &&
			      !strcmp(r->old_rule, "CK-RES-002") && r->new_outcome == STORE_OUT_ACCEPTED;
	}
	assert_true(fp);
	assert_true(acc);
	StrBuf out = {0};
	gate_impact_print(&out, &g, STORE_FMT_JSON);
	assert_non_null(strstr(sb_str(&out), "\"false_positive\":1"));
	sb_free(&out);
	gate_impact_free(&g);
	free(t128);
	free(t136);
	history_free(&h);
	store_close(st);
	rm_rf(dir);
	free(dir);
}

/* The GPU part's shapes: the family table, else a domain sample. */
static void test_small_shapes(void **state)
{
	size_t len;
	char *text = read_file("kernels/kmeans/assign.cake", &len);
	assert_non_null(text);
	char *moved = replace(text, "domain N % 256 == 0, K % 128 == 0, K >= 512", "domain N % 2048 == 0, K % 128 == 0, K >= 512");
	for (int pass = 0; pass < 2; pass++) {
		const char *t = pass ? moved : text;
		SourceSet ss = {0};
		DiagList dl = {0};
		CakeUnit u;
		CakeOptions o = cake_options(CAKE_DERIVE);
		o.kernel = "kmeans_assign";
		cake_compile_text(&u, &ss, &dl, "assign.cake", t, strlen(t), &o);
		assert_int_equal(u.status, 0);
		char shape[256], from[64];
		assert_true(gate_small_shape(&u, 0, shape, sizeof shape, from, sizeof from));
		if (!pass) {
			assert_string_equal(shape, "B=2,K=512,N=1024");
			assert_string_equal(from, "family table");
		} else {   /* N % 2048: the table's N=1024 is refused, the first domain sample fits */
			assert_string_equal(shape, "B=1,K=512,N=2048");
			assert_string_equal(from, "domain sample 0");
		}
		cake_unit_free(&u);
		diag_free(&dl);
		src_free(&ss);
	}
	free(moved);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_impact_kinds),
		cmocka_unit_test(test_small_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
