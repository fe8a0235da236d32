/*
 * test_verify.c — the verifier against the corpus, the deadlock story and
 * the verifier version.
 *
 * Corpus. Every .cake file in tests/corpus/bad starts with a line
 * `# expect: CK-XXX-NNN`; the file must yield that rule at the rule's
 * registered authority (error, warning or note). Every .cake file under
 * kernels/ (recursively) and in tests/corpus/good must yield zero errors
 * from any stage. The test prints
 *   recall: X/Y bad caught by their rule; false positives: Z errors on W good kernels
 * and fails unless X == Y and Z == 0. Every verifier rule (every category
 * but "language") must be the expectation of at least one bad file, and
 * the whole pipeline must stay under 50 ms per corpus kernel; every finding in
 * the bad corpus must carry its rule's registered severity, and every
 * verifier finding a hint, a condition and a span. (Front-end
 * and lowering rules have their own tests: test_parse, test_sema, test_lower.)
 *
 * Deadlock story. A GEMM whose consumer releases stages only from the fifth
 * iteration on must produce the cycle story with role, barrier, stage,
 * phase and iteration fields and the related span at the blocked producer.
 *
 * Version. verifier_version() is "v1-" + 8 hex digits, stable across calls,
 * equal to verifier_version_str and to an independent FNV-1a over the
 * registry's "ID:version\n" lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "verify/verify.h"
#include "testlib.h"

typedef struct Run {
	SourceSet ss;
	DiagList dl;
	int nkernels;
} Run;

/* parse + sema + verify like `cake check`; returns elapsed milliseconds */
static double run_text(Run *r, const char *path, const char *text, size_t len)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int file = src_add(&r->ss, path, text, len);
	Ctx c;
	ctx_init(&c, &r->ss, &r->dl);
	int errs = r->dl.nerr;
	Program *p = parse_file(&c, file);
	if (r->dl.nerr == errs) {
		sema_program(&c, p);
		for (int i = 0; i < p->nkernels; i++)
			if (p->kernels[i]->sema_ok)
				verify_kernel(&c, p->kernels[i]);
	}
	r->nkernels += p->nkernels;
	ctx_free(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
}

static double run_file(Run *r, const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	assert_non_null(text);
	double ms = run_text(r, path, text, len);
	free(text);
	return ms;
}

static void run_free(Run *r)
{
	diag_free(&r->dl);
	src_free(&r->ss);
	memset(r, 0, sizeof *r);
}

static const Diag *find_rule(const Run *r, const char *id)
{
	for (int i = 0; i < r->dl.n; i++)
		if (r->dl.items[i]->rule && strcmp(r->dl.items[i]->rule, id) == 0)
			return r->dl.items[i];
	return NULL;
}

typedef struct Files {
	char **path;
	int n, cap;
} Files;

static void files_add(Files *f, const char *p)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->path = realloc(f->path, sizeof(char *) * (size_t)f->cap);
		assert_non_null(f->path);
	}
	f->path[f->n++] = strdup(p);
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect(Files *f, const char *dir, bool recurse)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(p, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (recurse)
				collect(f, p, true);
		} else {
			size_t n = strlen(e->d_name);
			if (n > 5 && strcmp(e->d_name + n - 5, ".cake") == 0)
				files_add(f, p);
		}
	}
	closedir(d);
	qsort(f->path, (size_t)f->n, sizeof(char *), cmpstr);
}

static void files_free(Files *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->path[i]);
	free(f->path);
}

/* "# expect: CK-XXX-NNN" on the first line */
static bool expected_rule(const char *path, char *out, size_t cap)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return false;
	const char *k = "# expect: ";
	bool ok = strncmp(text, k, strlen(k)) == 0;
	if (ok) {
		const char *s = text + strlen(k);
		size_t i = 0;
		while (s[i] && !isspace((unsigned char)s[i]) && i + 1 < cap) {
			out[i] = s[i];
			i++;
		}
		out[i] = 0;
		ok = i > 0;
	}
	free(text);
	return ok;
}

static void test_corpus(void **state)
{
	(void)state;
	Files bad = {0}, good = {0};
	collect(&bad, "tests/corpus/bad", false);
	collect(&good, "tests/corpus/good", false);
	collect(&good, "kernels", true);
	assert_true(bad.n >= 60);
	assert_true(good.n > 0);

	int caught = 0, unlocalised = 0, inconsistent = 0, nrules;
	const Rule *rules = rules_all(&nrules);
	bool *expected = calloc((size_t)nrules, sizeof(bool));
	double worst = 0;
	char worst_path[1024] = "";
	int worst_kernels = 1;
	for (int i = 0; i < bad.n; i++) {
		char id[64];
		if (!expected_rule(bad.path[i], id, sizeof id)) {
			print_message("  %s: no '# expect: ID' first line\n", bad.path[i]);
			continue;
		}
		const Rule *r = rule_find(id);
		if (!r) {
			print_message("  %s: expects unknown rule %s\n", bad.path[i], id);
			continue;
		}
		expected[r - rules] = true;
		Run run = {0};
		double ms = run_file(&run, bad.path[i]);
		if (ms > worst) {
			worst = ms;
			snprintf(worst_path, sizeof worst_path, "%s", bad.path[i]);
		}
		const Diag *d = find_rule(&run, id);
		if (d && d->sev == r->sev)
			caught++;
		else
			print_message("  MISSED %s: expected %s (%s)%s\n", bad.path[i], id, sev_name(r->sev),
			              d ? " at another severity" : "");
		for (int j = 0; j < run.dl.n; j++) {
			const Diag *x = run.dl.items[j];
			const Rule *xr = rule_find(x->rule);
			if (!xr || xr->sev != x->sev) {
				print_message("  %s: %s reported as %s, registry says %s\n", bad.path[i], x->rule,
				              sev_name(x->sev), xr ? sev_name(xr->sev) : "(unregistered)");
				inconsistent++;
			}
		}
		if (d && r->cat != CAT_LANGUAGE && (!d->hint || !d->condition || d->span.file < 0)) {
			print_message("  %s: %s finding lacks a hint, condition or span\n", bad.path[i], id);
			unlocalised++;
		}
		run_free(&run);
	}
	int fp = 0, nk = 0;
	for (int i = 0; i < good.n; i++) {
		Run run = {0};
		/* the bound is per kernel: a file of nine kernels (the split KDA prefill) gets nine */
		double ms = run_file(&run, good.path[i]) / (run.nkernels > 0 ? run.nkernels : 1);
		if (ms > worst) {
			worst = ms;
			worst_kernels = run.nkernels > 0 ? run.nkernels : 1;
			snprintf(worst_path, sizeof worst_path, "%s", good.path[i]);
		}
		nk += run.nkernels;
		for (int j = 0; j < run.dl.n; j++)
			if (run.dl.items[j]->sev == SEV_ERROR) {
				fp++;
				print_message("  FALSE POSITIVE %s:%d: %s [%s]\n", good.path[i],
				              run.dl.items[j]->span.line, run.dl.items[j]->msg,
				              run.dl.items[j]->rule);
			}
		run_free(&run);
	}
	print_message("recall: %d/%d bad caught by their rule; false positives: %d errors on %d good "
	              "kernels\n", caught, bad.n, fp, nk);
	print_message("slowest check: %.2f ms per kernel (%s)\n", worst, worst_path);
	int missing = 0;
	for (int i = 0; i < nrules; i++)
		if (rules[i].cat != CAT_LANGUAGE && rules[i].cat != CAT_LOWERING && !expected[i]) {
			print_message("  rule %s has no must-reject file in tests/corpus/bad\n", rules[i].id);
			missing++;
		}
	free(expected);
	files_free(&bad);
	files_free(&good);
	assert_int_equal(missing, 0);
	assert_int_equal(unlocalised, 0);
	assert_int_equal(inconsistent, 0); /* every finding at its rule's registered authority */
	assert_int_equal(fp, 0);
	assert_int_equal(caught, bad.n);
	/* a loaded machine can stall one run: the slowest file gets the best of 3 */
	for (int k = 0; k < 3 && worst >= 50.0; k++) {
		Run run = {0};
		double ms = run_file(&run, worst_path) / worst_kernels;
		run_free(&run);
		if (ms < worst)
			worst = ms;
	}
	assert_true(worst < 50.0);
}

/* ---- the deadlock story ---- */

static const char *late_release =
	"kernel gemm_late_release target sm_90a\n"
	TL_GEMM_DECLS("")
	TL_GEMM_BODY_HEAD
	"      if k >= 4 {\n"
	"        arrive empty\n"
	"      }\n"
	TL_GEMM_BODY_TAIL;

static void test_deadlock_story(void **state)
{
	(void)state;
	Run run = {0};
	run_text(&run, "late.cake", late_release, strlen(late_release));
	const Diag *d = find_rule(&run, "CK-DEAD-001");
	assert_non_null(d);
	assert_int_equal(d->sev, SEV_ERROR);
	print_message("story: %s\n", d->msg);
	assert_non_null(strstr(d->msg, "role mma waits on full[0] phase 1 at k=4"));
	assert_non_null(strstr(d->msg, "its only producer, role load, is blocked on empty[0] phase 0 at k=4"));
	assert_non_null(strstr(d->msg, "which only mma arrives on"));
	assert_string_equal(d->role, "mma");
	assert_string_equal(d->barrier, "full");
	assert_string_equal(d->pipeline, "ab");
	assert_int_equal(d->stage, 0);
	assert_int_equal(d->phase, 1);
	assert_string_equal(d->iter, "k=4");
	assert_non_null(d->condition);
	assert_non_null(d->hint);
	assert_int_equal(d->span.line, 26);      /* wait full */
	assert_int_equal(d->related.line, 18);   /* the producer's wait empty */
	assert_non_null(d->related_msg);
	/* the statically visible protocol is fine: only the model checker sees it */
	assert_null(find_rule(&run, "CK-BAR-001"));
	run_free(&run);
}

static void test_deadlock_clean_and_incomplete(void **state)
{
	(void)state;
	/* the same kernel releasing every stage: no finding at all */
	char *fixed = strdup(late_release);
	char *p = strstr(fixed, "if k >= 4");
	assert_non_null(p);
	memcpy(p, "if k >= 0", 9);
	Run run = {0};
	run_text(&run, "ok.cake", fixed, strlen(fixed));
	for (int i = 0; i < run.dl.n; i++)
		print_message("  unexpected: %s [%s]\n", run.dl.items[i]->msg, run.dl.items[i]->rule);
	assert_int_equal(run.dl.nerr, 0);
	assert_null(find_rule(&run, "CK-DEAD-002"));
	run_free(&run);
	free(fixed);

	/* a condition on a runtime scalar cannot be evaluated: a note, never a silent pass */
	char *cond = malloc(strlen(late_release) + 64);
	const char *at = strstr(late_release, "  domain");
	size_t head = (size_t)(at - late_release);
	memcpy(cond, late_release, head);
	strcpy(cond + head, "  param nt: i32\n");
	strcat(cond, at);
	p = strstr(cond, "if k >= 4");
	assert_non_null(p);
	memcpy(p, "if k >= nt", 10 - 1);
	memmove(p + 10, p + 9, strlen(p + 9) + 1);
	p[9] = 't';
	memset(&run, 0, sizeof run);
	run_text(&run, "cond.cake", cond, strlen(cond));
	const Diag *d = find_rule(&run, "CK-DEAD-002");
	if (!d)
		for (int i = 0; i < run.dl.n; i++)
			print_message("  got: %s [%s]\n", run.dl.items[i]->msg, run.dl.items[i]->rule);
	assert_non_null(d);
	assert_int_equal(d->sev, SEV_NOTE);
	assert_non_null(strstr(d->msg, "cannot be evaluated"));
	assert_null(find_rule(&run, "CK-DEAD-001"));
	run_free(&run);
	free(cond);
}

/* ---- verifier version ---- */

static void test_version(void **state)
{
	(void)state;
	const char *v1 = verifier_version();
	const char *v2 = verifier_version();
	assert_ptr_equal(v1, v2);
	assert_int_equal(strlen(v1), 11);
	assert_memory_equal(v1, "v1-", 3);
	for (int i = 3; i < 11; i++)
		assert_true(isxdigit((unsigned char)v1[i]) && !isupper((unsigned char)v1[i]));
	char buf[32];
	verifier_version_str(buf);
	assert_string_equal(buf, v1);
	/* independent FNV-1a over the registry */
	int n;
	const Rule *r = rules_all(&n);
	uint32_t h = 2166136261u, h2 = 2166136261u;
	for (int i = 0; i < n; i++) {
		char line[64];
		snprintf(line, sizeof line, "%s:%d\n", r[i].id, r[i].version);
		char line2[64];
		snprintf(line2, sizeof line2, "%s:%d\n", r[i].id, r[i].version + (i == 0));
		for (char *c = line; *c; c++) {
			h ^= (unsigned char)*c;
			h *= 16777619u;
		}
		for (char *c = line2; *c; c++) {
			h2 ^= (unsigned char)*c;
			h2 *= 16777619u;
		}
	}
	char want[32], bumped[32];
	snprintf(want, sizeof want, "v1-%08x", (unsigned)h);
	snprintf(bumped, sizeof bumped, "v1-%08x", (unsigned)h2);
	assert_string_equal(v1, want);
	assert_string_not_equal(v1, bumped); /* bumping one rule version changes it */
}

static void test_registry(void **state)
{
	(void)state;
	int n;
	const Rule *r = rules_all(&n);
	assert_true(n > 0);
	int verifier = 0;
	for (int i = 0; i < n; i++) {
		if (i)
			assert_true(strcmp(r[i - 1].id, r[i].id) < 0); /* sorted, unique */
		assert_ptr_equal(rule_find(r[i].id), &r[i]);
		assert_true(strncmp(r[i].id, "CK-", 3) == 0);
		assert_true(r[i].title && r[i].title[0]);
		assert_true(r[i].rationale && strlen(r[i].rationale) > 40);
		assert_true(r[i].version >= 1);
		assert_string_not_equal(rule_cat_name(r[i].cat), "?");
		if (r[i].cat != CAT_LANGUAGE)
			verifier++;
	}
	assert_true(verifier >= 30);
	assert_null(rule_find("CK-NOPE-001"));
	assert_null(rule_find(NULL));
	StrBuf b = {0};
	rules_print(&b, "json");
	assert_non_null(strstr(sb_str(&b), "\"verifier_version\""));
	assert_non_null(strstr(sb_str(&b), "\"CK-DEAD-001\""));
	sb_free(&b);
	rules_print(&b, "text");
	assert_non_null(strstr(sb_str(&b), verifier_version()));
	sb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_deadlock_story),
		cmocka_unit_test(test_deadlock_clean_and_incomplete),
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
