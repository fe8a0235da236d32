/*
 * test_family.c — kernel families as modules (src/family/).
 *
 * A family is one descriptor; adding one is a new file plus a table line.
 * This test proves it with a test-only family, `test_scale` (Out = 2 · In
 * over f32 vectors), registered in a FamilyTable of its own beside the
 * built-in ones: the pipeline accepts a kernel naming it, rejects a typo
 * (CK-SEM-043) and a kernel whose parameters do not fit (CK-SEM-044), and
 * the runner-facing hooks (refusals, inputs, oracle) work on host images.
 * It also checks the built-in registry, the GEMM and k-means oracles on
 * small CPU-computed cases, and the runner's reset policy: an in-place
 * parameter is re-uploaded before every launch, never poisoned (the bug the
 * old runner had in its timing loop).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cake.h"
#include "gpu/run.h"

/* ---- the test-only family ---- */

static bool scale_fits(const Kernel *k, char *why, size_t n)
{
	static const DType f32[] = {DT_F32};
	return fam_need(k, "In", f32, 1, 1, 1, why, n) && fam_need(k, "Out", f32, 1, 1, 1, why, n);
}

static bool scale_refuse(const FamRun *r, char *why, size_t n)
{
	if (fam_buf(r, "In")->dims[0] > 1 << 20) {
		snprintf(why, n, "test_scale takes at most 2^20 elements");
		return true;
	}
	return false;
}

static bool scale_inputs(FamRun *r, char *err, size_t n)
{
	float *in = fam_buf(r, "In")->host;
	for (size_t i = 0; i < fam_buf(r, "In")->elems; i++)
		in[i] = (float)(i % 7) - 3.0f + 0.5f;   /* structured, never zero */
	return true;
}

static int scale_check(FamRun *r, FamReport *rep)
{
	const float *in = fam_buf(r, "In")->host, *out = fam_buf(r, "Out")->host;
	snprintf(rep->oracle, sizeof rep->oracle, "scale_f64");
	rep->tol = 0;
	rep->first_bad = -1;
	for (size_t i = 0; i < fam_buf(r, "In")->elems; i++)
		if ((double)out[i] != 2.0 * in[i] && rep->first_bad < 0)
			rep->first_bad = (long long)i;
	rep->rows = (long long)fam_buf(r, "In")->elems;
	if (rep->first_bad >= 0) {
		snprintf(rep->error, sizeof rep->error, "element %lld is not twice its input", rep->first_bad);
		return 1;
	}
	return 0;
}

static const Family family_test_scale = {
	.name = "test_scale",
	.module = "test_family.c",
	.summary = "Out = 2 In (test only)",
	.params = "In: f32[N], Out: f32[N]",
	.tolerance = "exact",
	.fits = scale_fits,
	.refuse = scale_refuse,
	.inputs = scale_inputs,
	.check = scale_check,
};

/* The built-in families plus test_scale: "one line in the table". */
static FamilyTable with_test_family(const Family **store)
{
	FamilyTable b = family_builtin();
	for (int i = 0; i < b.n; i++)
		store[i] = b.f[i];
	store[b.n] = &family_test_scale;
	return (FamilyTable){store, b.n + 1};
}

#define SCALE_KERNEL(FAM, OUTDT) \
	"kernel scale target sm_90a family " FAM "\n" \
	"  param In:  global f32[N]\n" \
	"  param Out: global " OUTDT "[N]\n" \
	"  domain N % 128 == 0\n" \
	"  grid (N / 128) as (b)\n" \
	"  role work warps 0..3\n" \
	"  frag x: f32[128] in work\n" \
	"{\n" \
	"  in work {\n" \
	"    load x <- In[b * 128 +: 128]\n" \
	"    store Out[b * 128 +: 128] <- " OUTDT "(x * 2.0)\n" \
	"  }\n" \
	"}\n"

/* Compile text to `until` with the table t; returns the unit (caller frees). */
static int compile(CakeUnit *u, SourceSet *ss, DiagList *dl, const char *text, CakeStage until, const FamilyTable *t)
{
	CakeOptions o = cake_options(until);
	o.families = t;
	return cake_compile_text(u, ss, dl, "test.cake", text, strlen(text), &o);
}

static bool has_rule(const DiagList *dl, const char *rule)
{
	for (int i = 0; i < dl->n; i++)
		if (!strcmp(dl->items[i]->rule, rule))
			return true;
	return false;
}

static void test_test_family_accepted(void **state)
{
	const Family *store[16];
	FamilyTable t = with_test_family(store);
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	assert_int_equal(compile(&u, &ss, &dl, SCALE_KERNEL("test_scale", "f32"), CAKE_LOWER, &t), 0);
	assert_int_equal(dl.nerr, 0);
	assert_int_equal(u.reached, CAKE_LOWER);
	assert_non_null(u.kernels[0]->family);
	assert_ptr_equal(family_find(t, u.kernels[0]->family->name), &family_test_scale);
	/* the plan says Out is a dense output and In an input */
	assert_true(u.plans[0]->params[1].output);
	assert_false(u.plans[0]->params[1].sparse);
	assert_false(u.plans[0]->params[0].output);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void test_unknown_family(void **state)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	/* the built-in table does not know test_scale */
	assert_int_equal(compile(&u, &ss, &dl, SCALE_KERNEL("test_scale", "f32"), CAKE_SEMA, NULL), 1);
	assert_true(has_rule(&dl, "CK-SEM-043"));
	assert_int_equal(u.failed, CAKE_SEMA);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	/* a typo of a built-in name gets a hint */
	SourceSet s2 = {0};
	DiagList d2 = {0};
	compile(&u, &s2, &d2, SCALE_KERNEL("gemn", "f32"), CAKE_SEMA, NULL);
	assert_true(has_rule(&d2, "CK-SEM-043"));
	assert_non_null(d2.items[0]->hint);
	assert_non_null(strstr(d2.items[0]->hint, "'gemm'"));
	cake_unit_free(&u);
	diag_free(&d2);
	src_free(&s2);
}

static void test_params_do_not_fit(void **state)
{
	const Family *store[16];
	FamilyTable t = with_test_family(store);
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	assert_int_equal(compile(&u, &ss, &dl, SCALE_KERNEL("test_scale", "bf16"), CAKE_SEMA, &t), 1);
	assert_true(has_rule(&dl, "CK-SEM-044"));
	bool named = false;
	for (int i = 0; i < dl.n; i++)
		named |= !strcmp(dl.items[i]->rule, "CK-SEM-044") && strstr(dl.items[i]->msg, "'Out' is bf16, not f32");
	assert_true(named);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	/* and a gemm kernel with its operands named otherwise */
	SourceSet s2 = {0};
	DiagList d2 = {0};
	compile(&u, &s2, &d2, SCALE_KERNEL("gemm", "f32"), CAKE_SEMA, NULL);
	assert_true(has_rule(&d2, "CK-SEM-044"));
	cake_unit_free(&u);
	diag_free(&d2);
	src_free(&s2);
}

/* `family F stage`: a kda stage is held to the family tensors it names; run alone it has no
 * family (family_of_kernel); a family without chains (gemm) refuses the clause. */
static void test_stages(void **state)
{
	static const char *const stage =
		"kernel part target sm_90a family kda stage\n"
		"  param Q:  global bf16[B, T, H, 128]\n"
		"  param Wk: global f32[B, T, H, 128]\n"
		"  grid (T, H, B) as (t, h, b)\n"
		"  role w warps 0..0\n"
		"  frag x16: bf16[128] in w\n"
		"{\n"
		"  in w {\n"
		"    load x16 <- Q[b, t, h, :]\n"
		"    store Wk[b, t, h, :] <- f32(x16)\n"
		"  }\n"
		"}\n";
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	assert_int_equal(compile(&u, &ss, &dl, stage, CAKE_SEMA, NULL), 0);
	assert_int_equal(dl.nerr, 0);
	assert_true(u.kernels[0]->family->stage);
	assert_null(family_of_kernel(u.kernels[0]));   /* a stage alone has no oracle */
	assert_non_null(family_find(family_builtin(), u.kernels[0]->family->name));   /* by name, for the chain */
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	/* the same kernel as a whole layer misses the family's tensors */
	char *whole = xstrdup(stage);
	memcpy(strstr(whole, " stage\n"), "      \n", 7);
	SourceSet s2 = {0};
	DiagList d2 = {0};
	assert_int_equal(compile(&u, &s2, &d2, whole, CAKE_SEMA, NULL), 1);
	assert_true(has_rule(&d2, "CK-SEM-044"));
	cake_unit_free(&u);
	diag_free(&d2);
	src_free(&s2);
	free(whole);
	/* gemm runs no chains */
	SourceSet s3 = {0};
	DiagList d3 = {0};
	const char *tail = strstr(stage, " stage\n");
	char *g = xmalloc(strlen(stage) + 8);
	snprintf(g, strlen(stage) + 8, "kernel part target sm_90a family gemm%s", tail);
	compile(&u, &s3, &d3, g, CAKE_SEMA, NULL);
	bool named = false;
	for (int i = 0; i < d3.n; i++)
		named |= !strcmp(d3.items[i]->rule, "CK-SEM-044") && strstr(d3.items[i]->msg, "runs no chains of stages");
	assert_true(named);
	cake_unit_free(&u);
	diag_free(&d3);
	src_free(&s3);
	free(g);
}

/* Host images for a compiled kernel under dims, as the runner makes them. */
typedef struct Host {
	FamBuf b[8];
	FamRun r;
	Launch L;
} Host;

static void host_make(Host *h, CakeUnit *u, const long long *dims)
{
	memset(h, 0, sizeof *h);
	char err[256];
	assert_true(launch_shape(&h->L, u->plans[0], dims, err, sizeof err));
	const Kernel *k = u->kernels[0];
	for (int i = 0; i < k->nparams; i++) {
		h->b[i].decl = k->params[i];
		h->b[i].rank = k->params[i]->rank;
		assert_true(launch_param_extents(&h->L, i, h->b[i].dims, &h->b[i].elems));
		h->b[i].bytes = h->b[i].elems * (size_t)dtype_size(k->params[i]->dt);
		h->b[i].host = calloc(h->b[i].elems, (size_t)dtype_size(k->params[i]->dt));
		run_fill_input(h->b[i].host, k->params[i]->dt, h->b[i].elems, 99 + (uint64_t)i);
	}
	h->r = (FamRun){k, h->L.dimvals, h->b, 5, 4096, 1, NULL, NULL};   /* every row checked */
}

static void host_free(Host *h, const Kernel *k)
{
	for (int i = 0; i < k->nparams; i++)
		free(h->b[i].host);
}

static void test_test_family_hooks(void **state)
{
	const Family *store[16];
	FamilyTable t = with_test_family(store);
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	assert_int_equal(compile(&u, &ss, &dl, SCALE_KERNEL("test_scale", "f32"), CAKE_DERIVE, &t), 0);
	long long dims[1] = {256};
	Host h;
	host_make(&h, &u, dims);
	char why[256];
	assert_false(family_test_scale.refuse(&h.r, why, sizeof why));
	assert_true(family_test_scale.inputs(&h.r, why, sizeof why));
	float *in = h.b[0].host, *out = h.b[1].host;
	for (int i = 0; i < 256; i++)
		out[i] = 2 * in[i];   /* what a correct kernel writes */
	FamReport rep = {0};
	assert_int_equal(family_test_scale.check(&h.r, &rep), 0);
	out[17] += 1;
	FamReport bad = {0};
	assert_int_equal(family_test_scale.check(&h.r, &bad), 1);
	assert_int_equal(bad.first_bad, 17);
	/* the launch layer refuses a shape outside the domain before any family hook */
	long long odd[1] = {100};
	Launch L;
	assert_false(launch_shape(&L, u.plans[0], odd, why, sizeof why));
	assert_non_null(strstr(why, "N % 128 == 0"));
	host_free(&h, u.kernels[0]);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void test_builtin_registry(void **state)
{
	FamilyTable t = family_builtin();
	assert_true(t.n >= 5);
	for (int i = 0; i < t.n; i++) {
		assert_non_null(t.f[i]->name);
		assert_non_null(t.f[i]->fits);
		assert_non_null(t.f[i]->check);
		assert_ptr_equal(family_find(t, t.f[i]->name), t.f[i]);
		for (int j = i + 1; j < t.n; j++)
			assert_string_not_equal(t.f[i]->name, t.f[j]->name);
	}
	assert_null(family_find(t, "no_such_family"));
	assert_true(family_is_inout(family_find(t, "kmeans_segmented"), "Cent"));
	assert_false(family_is_inout(family_find(t, "kmeans_segmented"), "X"));
	assert_false(family_is_inout(NULL, "Cent"));
}

/* Compile a corpus kernel to its plan. */
static void corpus(CakeUnit *u, SourceSet *ss, DiagList *dl, const char *path, const char *kernel)
{
	CakeOptions o = cake_options(CAKE_DERIVE);
	o.kernel = kernel;
	assert_int_equal(cake_compile_path(u, ss, dl, path, &o), 0);
	assert_int_equal(u->nkernels, 1);
}

static void test_reset_policy(void **state)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	FamilyTable t = family_builtin();
	/* the segmented update: Cent is updated in place, so it is uploaded again
	 * before every launch and never poisoned; the rest are inputs */
	corpus(&u, &ss, &dl, "kernels/kmeans/update_segmented.cake", NULL);
	const Plan *p = u.plans[0];
	const Family *f = family_find(t, u.kernels[0]->family->name);
	assert_string_equal(f->name, "kmeans_segmented");
	for (int i = 0; i < u.kernels[0]->nparams; i++) {
		const char *n = u.kernels[0]->params[i]->name;
		assert_int_equal(run_param_reset(p, f, i), !strcmp(n, "Cent") ? RESET_UPLOAD : RESET_NONE);
	}
	/* without the family (a kernel run with no family) Cent would be poisoned */
	int ci = fam_param(u.kernels[0], "Cent");
	assert_int_equal(run_param_reset(p, NULL, ci), RESET_POISON);
	cake_unit_free(&u);
	/* split-K accumulates with atomic_add: zeroed, and sparse */
	corpus(&u, &ss, &dl, "tests/corpus/good/gemm_splitk_atomic.cake", NULL);
	int c = fam_param(u.kernels[0], "C");
	assert_int_equal(run_param_reset(u.plans[0], family_find(t, "gemm"), c), RESET_ZERO);
	assert_true(u.plans[0]->params[c].accum);
	cake_unit_free(&u);
	/* a plain GEMM output is poisoned; the scatter of the atomic k-means update is an accumulator */
	corpus(&u, &ss, &dl, "kernels/gemm/gemm_ws_128x256_s4.cake", NULL);
	assert_int_equal(run_param_reset(u.plans[0], family_find(t, "gemm"), fam_param(u.kernels[0], "C")), RESET_POISON);
	assert_int_equal(run_param_reset(u.plans[0], family_find(t, "gemm"), fam_param(u.kernels[0], "A")), RESET_NONE);
	cake_unit_free(&u);
	corpus(&u, &ss, &dl, "kernels/kmeans/update_sorted.cake", "kmeans_fill");
	int o = fam_param(u.kernels[0], "Order");
	assert_true(u.plans[0]->params[o].output);
	assert_true(u.plans[0]->params[o].sparse);   /* scatter stores only */
	assert_false(u.plans[0]->params[o].accum);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void test_gemm_oracle_on_cpu(void **state)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	corpus(&u, &ss, &dl, "kernels/gemm/gemm_ws_128x256_s4.cake", NULL);
	long long dims[3];
	for (int d = 0; d < u.kernels[0]->ndims; d++)
		dims[d] = !strcmp(u.kernels[0]->dims[d], "K") ? 64 : !strcmp(u.kernels[0]->dims[d], "N") ? 256 : 128;
	Host h;
	host_make(&h, &u, dims);
	const Family *f = family_find(family_builtin(), "gemm");
	FamBuf *A = fam_buf(&h.r, "A"), *B = fam_buf(&h.r, "B"), *C = fam_buf(&h.r, "C");
	int M = (int)C->dims[0], N = (int)C->dims[1], K = (int)A->dims[1];
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)oracle_bf16_to_f32(((uint16_t *)A->host)[i * K + k]) *
				     oracle_bf16_to_f32(((uint16_t *)B->host)[j * K + k]);
			((uint16_t *)C->host)[i * N + j] = oracle_f32_to_bf16((float)s);
		}
	FamReport rep = {0};
	assert_int_equal(f->check(&h.r, &rep), 0);
	assert_string_equal(rep.oracle, "gemm_abt_f64");
	assert_true(rep.rel_err < 1e-2);
	double flops = 0, bytes = 0;
	f->rates(&h.r, &flops, &bytes);
	assert_true(flops == 2.0 * M * N * K);
	assert_true(bytes == (2.0 * M * K + 2.0 * N * K) + 2.0 * M * N);
	((uint16_t *)C->host)[5 * N + 7] = oracle_f32_to_bf16(1000.0f);
	FamReport bad = {0};
	assert_int_equal(f->check(&h.r, &bad), 1);
	assert_int_equal(bad.first_bad, 5LL * N + 7);
	host_free(&h, u.kernels[0]);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void test_kmeans_refusals(void **state)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	corpus(&u, &ss, &dl, "kernels/kmeans/assign.cake", "kmeans_assign");
	const Family *f = family_find(family_builtin(), "kmeans_assign");
	long long dims[3];
	for (int d = 0; d < u.kernels[0]->ndims; d++)
		dims[d] = !strcmp(u.kernels[0]->dims[d], "B") ? 1 : !strcmp(u.kernels[0]->dims[d], "N") ? 512 : 1024;
	Host h;
	host_make(&h, &u, dims);
	char why[256];
	assert_true(f->refuse(&h.r, why, sizeof why));
	assert_non_null(strstr(why, "K = 1024 clusters > N = 512 points"));
	host_free(&h, u.kernels[0]);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_test_family_accepted),
		cmocka_unit_test(test_unknown_family),
		cmocka_unit_test(test_params_do_not_fit),
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_test_family_hooks),
		cmocka_unit_test(test_builtin_registry),
		cmocka_unit_test(test_reset_policy),
		cmocka_unit_test(test_gemm_oracle_on_cpu),
		cmocka_unit_test(test_kmeans_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
