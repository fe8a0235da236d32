/*
 * gate.c — the corpus gate (gate.h): every program of the corpus through the
 * one pipeline call, judged against what the corpus says about it.
 *
 * The corpus is three directories under a root (the repository, or a copy
 * of it: `cake gate --root DIR` is how the tests plant a regression):
 *   kernels/...          the kernels Cake ships (recursively): they must check
 *                       with no error, compile through NVRTC to an sm_90a
 *                       cubin without spills, and, with the GPU part, give
 *                       verdict ok at a small shape when they name a family;
 *   tests/corpus/good   valid programs: no error;
 *   tests/corpus/bad    known-bad programs, each starting with the line
 *                       `# expect: CK-XXX-NNN`: that rule must report, at its
 *                       registered severity.
 * The classes are judged the way tests/unit/test_verify.c and
 * tools/corpus.sh judge them, but as data: each check is one GateItem with
 * what was expected and what came back, so a regression names its file.
 *
 * Small shapes. The GPU part needs a shape inside each kernel's domain that
 * the family also accepts. A family's table below holds small shapes that
 * ran on an H200 (bench/RESULTS.md, bench/arch_check.sh), scaled down; the
 * first one binding exactly the kernel's dims and accepted by the domain,
 * the launch layer and the family wins. A kernel the table does not fit
 * gets its shape from the schedule model's domain samples (every dim at its
 * i-th smallest valid value), the first sample run_refusal accepts.
 *
 * NVRTC and fork. The build class compiles in this process; the GPU part
 * forks the runner's child (eval_candidate), whose cuInit fails after NVRTC
 * ran in the parent (eval.c says why). So the GPU part runs before the build
 * class, and both after the CPU-only classes.
 */
#include "gate.h"
#include "../sched/sched.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const CLASS_NAME[GATE_NCLASS] = {"valid", "bad", "build", "gpu"};
static const char *const STATUS_NAME[3] = {"pass", "fail", "skip"};

/* Small shapes per family (see the file comment). */
static const struct {
	const char *family;
	const char *shapes[3];
} SMALL[] = {
	{"gemm", {"M=256,N=512,K=128"}},
	{"kmeans_assign", {"B=2,N=1024,K=512"}},
	{"kmeans_divide", {"B=2,K=1024"}},
	{"kmeans_segmented", {"N=4096,K=64,K1=65"}},
	{"kmeans_segsum", {"B=2,N=4096,K=64"}},
	{"kda", {"B=1,T=64,H=2,N=3,N1=4", "B=2,T=40,H=2"}},   /* packed (cu_seqlens), or B sequences */
	{"kda_decode", {"B=2,T=2,H=2"}},
};

GateOptions gate_options(void)
{
	GateOptions o = {.root = ".", .gpu = false, .run = run_options()};
	o.run.time = false;
	return o;
}

/* ---- files ---- */

typedef struct Files {
	char **p;
	int n, cap;
} Files;

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect the .cake files of root/rel (recursively when asked) as paths relative to root. */
static bool collect(Files *f, const char *root, const char *rel, bool recurse)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", root, rel);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char r[1024], p[2048];
		snprintf(r, sizeof r, "%s/%s", rel, e->d_name);
		snprintf(p, sizeof p, "%s/%s", root, r);
		struct stat sb;
		if (stat(p, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (recurse)
				collect(f, root, r, true);
			continue;
		}
		size_t n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".cake") == 0) {
			if (f->n == f->cap) {
				f->cap = f->cap ? f->cap * 2 : 64;
				f->p = xrealloc(f->p, (size_t)f->cap * sizeof *f->p);
			}
			f->p[f->n++] = xstrdup(r);
		}
	}
	closedir(d);
	qsort(f->p, (size_t)f->n, sizeof *f->p, cmpstr);
	return true;
}

static void files_free(Files *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->p[i]);
	free(f->p);
	memset(f, 0, sizeof *f);
}

/* ---- items ---- */

static GateItem *add_item(GateReport *r, GateClass c, const char *path, const char *kernel)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 128;
		r->items = xrealloc(r->items, (size_t)r->cap * sizeof *r->items);
	}
	GateItem *it = &r->items[r->n++];
	memset(it, 0, sizeof *it);
	it->cls = c;
	snprintf(it->path, sizeof it->path, "%s", path);
	snprintf(it->kernel, sizeof it->kernel, "%s", kernel ? kernel : "");
	return it;
}

static void settle(GateReport *r, GateItem *it, GateStatus s)
{
	it->status = s;
	r->count[it->cls][s]++;
}

/* The error findings of dl from index `from` as "RULE line L: msg; ..." (at most 3). */
static void errors_of(const DiagList *dl, int from, char *out, size_t n)
{
	StrBuf b = {0};
	int k = 0, total = 0;
	for (int i = from; i < dl->n; i++) {
		const Diag *d = dl->items[i];
		if (d->sev != SEV_ERROR)
			continue;
		total++;
		if (k++ < 3)
			sb_printf(&b, "%s%s line %d: %s", b.len ? "; " : "", d->rule ? d->rule : "?", d->span.line, d->msg);
	}
	if (total > 3)
		sb_printf(&b, "; and %d more", total - 3);
	snprintf(out, n, "%s", total ? sb_str(&b) : "the compile failed");
	sb_free(&b);
}

/* "# expect: ID" on the first line */
static bool expected_rule(const char *text, char *out, size_t cap)
{
	const char *k = "# expect: ";
	if (strncmp(text, k, strlen(k)) != 0)
		return false;
	const char *s = text + strlen(k);
	size_t i = 0;
	while (s[i] && !isspace((unsigned char)s[i]) && i + 1 < cap) {
		out[i] = s[i];
		i++;
	}
	out[i] = 0;
	return i > 0;
}

/* ---- the classes ---- */

static void check_valid(GateReport *r, const char *root, const char *rel)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	GateItem *it = add_item(r, GATE_VALID, rel, NULL);
	snprintf(it->expected, sizeof it->expected, "no errors");
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_VERIFY);
	cake_compile_path(&u, &ss, &dl, path, &o);
	if (u.status == 2)
		snprintf(it->got, sizeof it->got, "%s", u.error);
	else if (dl.nerr)
		errors_of(&dl, 0, it->got, sizeof it->got);
	else
		snprintf(it->got, sizeof it->got, "no errors (%d warning%s, %d kernel%s)", dl.nwarn, dl.nwarn == 1 ? "" : "s",
		         u.nkernels, u.nkernels == 1 ? "" : "s");
	settle(r, it, u.status == 0 && dl.nerr == 0 ? GATE_PASS : GATE_FAIL);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

static void check_bad(GateReport *r, const char *root, const char *rel)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	GateItem *it = add_item(r, GATE_BAD, rel, NULL);
	size_t len;
	char *text = read_file(path, &len);
	char id[64];
	const Rule *rule = NULL;
	if (!text) {
		snprintf(it->expected, sizeof it->expected, "a readable file");
		snprintf(it->got, sizeof it->got, "cannot read it");
	} else if (!expected_rule(text, id, sizeof id)) {
		snprintf(it->expected, sizeof it->expected, "a first line '# expect: CK-XXX-NNN'");
		snprintf(it->got, sizeof it->got, "no such line");
	} else if (!(rule = rule_find(id))) {
		snprintf(it->expected, sizeof it->expected, "%s", id);
		snprintf(it->got, sizeof it->got, "'%s' is not a registered rule", id);
	}
	if (!rule) {
		settle(r, it, GATE_FAIL);
		free(text);
		return;
	}
	snprintf(it->expected, sizeof it->expected, "%s (%s)", rule->id, sev_name(rule->sev));
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_LOWER);   /* CPU only; a CK-LOW expectation needs the lowering */
	cake_compile_text(&u, &ss, &dl, rel, text, len, &o);
	bool caught = false;
	StrBuf got = {0};
	for (int i = 0; i < dl.n; i++) {
		const Diag *d = dl.items[i];
		if (d->rule && strcmp(d->rule, rule->id) == 0 && d->sev == rule->sev)
			caught = true;
		bool seen = false;   /* list each (rule, severity) once */
		for (int j = 0; j < i && !seen; j++)
			seen = dl.items[j]->rule && d->rule && !strcmp(dl.items[j]->rule, d->rule) && dl.items[j]->sev == d->sev;
		if (!seen)
			sb_printf(&got, "%s%s (%s)", got.len ? ", " : "", d->rule ? d->rule : "?", sev_name(d->sev));
	}
	snprintf(it->got, sizeof it->got, "%s", got.len ? sb_str(&got) : "no findings");
	settle(r, it, caught ? GATE_PASS : GATE_FAIL);
	sb_free(&got);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	free(text);
}

static void check_build(GateReport *r, const char *root, const char *rel, bool *no_nvrtc)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_JIT);
	cake_compile_path(&u, &ss, &dl, path, &o);
	if (u.status == GPU_EXIT_NO_DRIVER) {
		*no_nvrtc = true;
		for (int i = 0; i < u.nkernels; i++) {
			GateItem *it = add_item(r, GATE_BUILD, rel, u.kernels[i]->name);
			snprintf(it->expected, sizeof it->expected, "sm_90a cubin, 0 spills");
			snprintf(it->got, sizeof it->got, "not compiled: NVRTC not found");
			settle(r, it, GATE_SKIP);
		}
	} else if (u.status != 0) {
		GateItem *it = add_item(r, GATE_BUILD, rel, NULL);
		snprintf(it->expected, sizeof it->expected, "sm_90a cubin, 0 spills");
		if (dl.nerr)
			errors_of(&dl, 0, it->got, sizeof it->got);
		else
			snprintf(it->got, sizeof it->got, "%s", u.error[0] ? u.error : "the compile failed");
		settle(r, it, GATE_FAIL);
	} else {
		for (int i = 0; i < u.nkernels; i++) {
			GateItem *it = add_item(r, GATE_BUILD, rel, u.kernels[i]->name);
			snprintf(it->expected, sizeof it->expected, "sm_90a cubin, 0 spills");
			const JitKernelInfo *ki = NULL;
			for (int j = 0; j < u.jit.nkern && !ki; j++)
				if (strcmp(u.jit.kern[j].name, u.kernels[i]->name) == 0)
					ki = &u.jit.kern[j];
			if (!ki) {
				snprintf(it->got, sizeof it->got, "no ptxas report for the kernel");
				settle(r, it, GATE_FAIL);
				continue;
			}
			snprintf(it->got, sizeof it->got, "%d registers, %d bytes spill stores, %d bytes spill loads%s", ki->regs,
			         ki->spill_stores, ki->spill_loads, u.jit.cache_hit ? " (cached)" : "");
			settle(r, it, ki->spill_stores == 0 && ki->spill_loads == 0 ? GATE_PASS : GATE_FAIL);
		}
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

/* Whether the shape binds exactly k's dims and run_refusal accepts it under plan p. */
static bool shape_fits(const Kernel *k, const Plan *p, const Family *fam, const char *shape)
{
	long long dims[LAUNCH_MAX_DIMS] = {0};
	char err[512];
	if (!eval_bind_shape(k, shape, dims, err, sizeof err))
		return false;
	RunJob j;
	memset(&j, 0, sizeof j);
	j.plan = p;
	j.k = k;
	j.fam = fam;
	memcpy(j.dimvals, dims, sizeof dims);
	j.o = run_options();
	return run_refusal(&j, err, sizeof err) == RUN_OK;
}

bool gate_small_shape(const CakeUnit *u, int ki, char *shape, size_t n, char *from, size_t fn)
{
	const Kernel *k = u->kernels[ki];
	const Plan *p = u->plans ? u->plans[ki] : NULL;
	if (!p)
		return false;
	const Family *fam = family_of_kernel(k);
	for (size_t i = 0; fam && i < NELEM(SMALL); i++) {
		if (strcmp(SMALL[i].family, fam->name) != 0)
			continue;
		for (int s = 0; s < 3 && SMALL[i].shapes[s]; s++)
			if (shape_fits(k, p, fam, SMALL[i].shapes[s])) {
				StrBuf b = {0};
				store_shape_canon(SMALL[i].shapes[s], &b);
				snprintf(shape, n, "%s", sb_str(&b));
				sb_free(&b);
				snprintf(from, fn, "family table");
				return true;
			}
	}
	Sched v;
	sched_build(&v, (Ctx *)&u->ctx, (Kernel *)k);
	bool found = false;
	int ns = v.domain_ok ? sched_nsamples(&v) : 0;
	for (int i = 0; i < ns && !found; i++) {
		StrBuf b = {0}, c = {0};
		for (int d = 0; d < v.ndims; d++) {
			int m = v.ndimvals[d];
			sb_printf(&b, "%s%s=%lld", d ? "," : "", v.dims[d], v.dimvals[d][i < m ? i : m - 1]);
		}
		if (store_shape_canon(sb_str(&b), &c) == STORE_OK && shape_fits(k, p, fam, sb_str(&c))) {
			snprintf(shape, n, "%s", sb_str(&c));
			snprintf(from, fn, "domain sample %d", i);
			found = true;
		}
		sb_free(&b);
		sb_free(&c);
	}
	sched_free(&v);
	return found;
}

static void check_gpu(GateReport *r, const GateOptions *o, const char *rel, bool *no_gpu)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", o->root, rel);
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return;   /* the valid class already failed it */
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions co = cake_options(CAKE_DERIVE);
	cake_compile_text(&u, &ss, &dl, rel, text, len, &co);
	for (int i = 0; i < u.nkernels; i++) {
		const Kernel *k = u.kernels[i];
		if (!k->family)
			continue;
		GateItem *it = add_item(r, GATE_GPU, rel, k->name);
		snprintf(it->expected, sizeof it->expected, "verdict ok (family %s)", k->family->name);
		char from[64] = "";
		if (u.status != 0 || !u.plans) {
			snprintf(it->got, sizeof it->got, "not run: the kernel does not compile");
			settle(r, it, GATE_FAIL);
			continue;
		}
		const char *scalar = NULL;
		const Family *kfam = family_find(family_builtin(), k->family->name);
		for (int q = 0; q < k->nparams && !scalar; q++)
			if (k->params[q]->space != SP_GLOBAL)
				scalar = k->params[q]->name;
		if (scalar && !(kfam && kfam->scalar_defaults)) {
			/* a GPU case binds dims only: a scalar would run at 0, which the family may refuse,
			 * unless the family gives its scalars defaults (kda: lower_bound = -5) */
			snprintf(it->got, sizeof it->got, "skipped: no GPU case (takes the scalar parameter '%s'; the gate's GPU "
			         "cases bind dims only)", scalar);
			settle(r, it, GATE_SKIP);
			continue;
		}
		if (!gate_small_shape(&u, i, it->shape, sizeof it->shape, from, sizeof from)) {
			snprintf(it->got, sizeof it->got, "skipped: no GPU case (no small shape inside the domain that the family "
			         "accepts: add one to the family table in src/harness/gate.c)");
			settle(r, it, GATE_SKIP);
			continue;
		}
		EvalRequest req = eval_request();
		req.text = text;
		req.len = len;
		req.name = rel;
		req.kernel = k->name;
		req.shape = it->shape;
		req.run = o->run;
		SourceSet es = {0};
		EvalResult res;
		EvalStatus st = eval_candidate(&req, &es, &res);
		if (st != EVAL_DONE) {
			snprintf(it->got, sizeof it->got, "not run: %.900s", res.message);
			settle(r, it, GATE_FAIL);
		} else if (res.verdict == STORE_V_NO_GPU) {
			*no_gpu = true;
			snprintf(it->got, sizeof it->got, "not run: no GPU (shape from the %s)", from);
			settle(r, it, GATE_SKIP);
		} else {
			snprintf(it->got, sizeof it->got, "%s%s%.900s (shape from the %s)", store_verdict_name(res.verdict),
			         res.message[0] ? ": " : "", res.message, from);
			settle(r, it, res.verdict == STORE_V_OK ? GATE_PASS : GATE_FAIL);
		}
		eval_result_free(&res);
		src_free(&es);
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	free(text);
}

int gate_corpus(const GateOptions *o, GateReport *r, char *err, size_t n)
{
	memset(r, 0, sizeof *r);
	const char *root = o->root && *o->root ? o->root : ".";
	snprintf(r->root, sizeof r->root, "%s", root);
	Files kern = {0}, good = {0}, bad = {0};
	bool hk = collect(&kern, root, "kernels", true);
	bool hg = collect(&good, root, "tests/corpus/good", false);
	bool hb = collect(&bad, root, "tests/corpus/bad", false);
	if (!hk && !hg && !hb) {
		snprintf(err, n, "'%s' holds no corpus (kernels/, tests/corpus/good/, tests/corpus/bad/); pass --root with "
		         "the repository's directory", root);
		return 2;
	}
	for (int i = 0; i < kern.n; i++)
		check_valid(r, root, kern.p[i]);
	for (int i = 0; i < good.n; i++)
		check_valid(r, root, good.p[i]);
	for (int i = 0; i < bad.n; i++)
		check_bad(r, root, bad.p[i]);
	bool no_gpu = false, no_nvrtc = false;
	if (o->gpu) {
		GateOptions g = *o;
		g.root = root;
		for (int i = 0; i < kern.n; i++)
			check_gpu(r, &g, kern.p[i], &no_gpu);
		if (no_gpu)
			snprintf(r->note[GATE_GPU], sizeof r->note[GATE_GPU], "%s", gpu_no_driver_msg());
	} else
		snprintf(r->note[GATE_GPU], sizeof r->note[GATE_GPU], "not asked (--gpu runs each family's correctness case)");
	for (int i = 0; i < kern.n; i++)
		check_build(r, root, kern.p[i], &no_nvrtc);
	if (no_nvrtc)
		snprintf(r->note[GATE_BUILD], sizeof r->note[GATE_BUILD],
		         "NVRTC not found (install the CUDA toolkit or set CUDA_HOME): build step not run");
	files_free(&kern);
	files_free(&good);
	files_free(&bad);
	int fails = 0;
	for (int c = 0; c < GATE_NCLASS; c++)
		fails += r->count[c][GATE_FAIL];
	return fails ? 1 : no_gpu ? GPU_EXIT_NO_DRIVER : 0;
}

void gate_report_free(GateReport *r)
{
	free(r->items);
	memset(r, 0, sizeof *r);
}

/* ---- printing ---- */

static const char *const CLASS_WHAT[GATE_NCLASS] = {
	"kernels/**, tests/corpus/good: no errors",
	"tests/corpus/bad: caught by the rule '# expect:' names",
	"kernels/**: sm_90a cubin, 0 spills",
	"kernels/** with a family: verdict ok at a small shape",
};

static void item_json(StrBuf *b, const GateItem *it)
{
	sb_puts(b, "{\"class\":");
	sb_json_str(b, CLASS_NAME[it->cls]);
	sb_puts(b, ",\"status\":");
	sb_json_str(b, STATUS_NAME[it->status]);
	sb_puts(b, ",\"file\":");
	sb_json_str(b, it->path);
	sb_puts(b, ",\"kernel\":");
	if (it->kernel[0])
		sb_json_str(b, it->kernel);
	else
		sb_puts(b, "null");
	sb_puts(b, ",\"shape\":");
	if (it->shape[0])
		sb_json_str(b, it->shape);
	else
		sb_puts(b, "null");
	sb_puts(b, ",\"expected\":");
	sb_json_str(b, it->expected);
	sb_puts(b, ",\"got\":");
	sb_json_str(b, it->got);
	sb_puts(b, "}");
}

void gate_print(StrBuf *out, const GateReport *r, StoreFormat fmt)
{
	int fails = 0, checks = 0;
	for (int c = 0; c < GATE_NCLASS; c++) {
		fails += r->count[c][GATE_FAIL];
		checks += r->count[c][GATE_PASS] + r->count[c][GATE_FAIL];
	}
	if (fmt == STORE_FMT_JSON) {
		sb_puts(out, "{\"schema\":\"cake-gate/1\",\"root\":");
		sb_json_str(out, r->root);
		sb_printf(out, ",\"green\":%s,\"checks\":%d,\"regressions\":%d,\"classes\":{", fails ? "false" : "true", checks,
		          fails);
		for (int c = 0; c < GATE_NCLASS; c++) {
			sb_printf(out, "%s\"%s\":{\"pass\":%d,\"fail\":%d,\"skip\":%d,\"note\":", c ? "," : "", CLASS_NAME[c],
			          r->count[c][GATE_PASS], r->count[c][GATE_FAIL], r->count[c][GATE_SKIP]);
			if (r->note[c][0])
				sb_json_str(out, r->note[c]);
			else
				sb_puts(out, "null");
			sb_puts(out, "}");
		}
		sb_puts(out, "},\"failures\":[");
		for (int i = 0, k = 0; i < r->n; i++)
			if (r->items[i].status == GATE_FAIL) {
				if (k++)
					sb_putc(out, ',');
				item_json(out, &r->items[i]);
			}
		sb_puts(out, "],\"items\":[");
		for (int i = 0; i < r->n; i++) {
			if (i)
				sb_putc(out, ',');
			item_json(out, &r->items[i]);
		}
		sb_puts(out, "]}\n");
		return;
	}
	sb_printf(out, "cake gate: the corpus under %s\n", r->root);
	for (int c = 0; c < GATE_NCLASS; c++) {
		int p = r->count[c][GATE_PASS], f = r->count[c][GATE_FAIL], s = r->count[c][GATE_SKIP];
		sb_printf(out, "  %-6s %4d pass, %d fail", CLASS_NAME[c], p, f);
		if (s)
			sb_printf(out, ", %d skipped", s);
		sb_printf(out, "   (%s)", CLASS_WHAT[c]);
		if (r->note[c][0])
			sb_printf(out, "\n         note: %s", r->note[c]);
		sb_putc(out, '\n');
	}
	for (int i = 0; i < r->n; i++) {
		const GateItem *it = &r->items[i];
		if (it->status != GATE_FAIL)
			continue;
		sb_printf(out, "REGRESSION %s %s", CLASS_NAME[it->cls], it->path);
		if (it->kernel[0])
			sb_printf(out, " kernel %s", it->kernel);
		if (it->shape[0])
			sb_printf(out, " shape %s", it->shape);
		sb_printf(out, ": expected %s, got %s\n", it->expected, it->got);
	}
	if (fails)
		sb_printf(out, "gate: RED: %d regression%s in %d checks\n", fails, fails == 1 ? "" : "s", checks);
	else
		sb_printf(out, "gate: green: %d checks passed\n", checks);
}
