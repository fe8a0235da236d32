/*
 * test_fmt.c — the canonical printer (`cake fmt`).
 *
 * Checks the exact canonical layout on a messy input (comments, blank lines,
 * clause order, else-if), minimal parenthesisation and float spelling, and
 * the round-trip law: for every input x that parses cleanly,
 *   parse(print(parse(x))) has no errors, and
 *   print(parse(print(parse(x)))) == print(parse(x)) byte for byte,
 * over inline samples and over every .cake file under kernels/ and tests/
 * (files with parse errors are skipped; the walk runs from the repo root,
 * which is where tests/run_all.sh runs the unit binaries).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"

/* Parse src; return the canonical text (malloc'd) or NULL if it had errors.
 * *nerr receives the error count. */
static char *fmt(const char *src, size_t len, int *nerr)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	int f = src_add(&ss, "f.cake", src, len);
	ctx_init(&c, &ss, &dl);
	Program *p = parse_file(&c, f);
	*nerr = dl.nerr;
	char *out = NULL;
	if (dl.nerr == 0) {
		StrBuf b = {0};
		print_program(&b, p);
		out = strdup(sb_str(&b));
		sb_free(&b);
	}
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	return out;
}

/* The round-trip law for one clean input; returns false if src had errors. */
static bool roundtrip(const char *name, const char *src, size_t len)
{
	int nerr;
	char *p1 = fmt(src, len, &nerr);
	if (!p1)
		return false;
	char *p2 = fmt(p1, strlen(p1), &nerr);
	if (nerr != 0 || !p2 || strcmp(p1, p2) != 0) {
		fprintf(stderr, "round trip failed for %s (%d errors)\n--- first print:\n%s--- second:\n%s",
		        name, nerr, p1, p2 ? p2 : "(errors)\n");
	}
	assert_int_equal(nerr, 0);
	assert_non_null(p2);
	assert_string_equal(p1, p2);
	free(p1);
	free(p2);
	return true;
}

static void test_canonical_layout(void **state)
{
	const char *in =
		"# file header\n"
		"\n"
		"kernel   demo target sm_90a   # the kernel\n"
		"  param A : global bf16 [ M,K ]\n"
		"\n"
		"\n"
		"  /* block\n"
		"     comment */\n"
		"  role load warps 0 .. 3   regs 40\n"
		"  smem a: bf16[128,64] ring ab swizzle 128B\n"
		"  smem z: f32[4] swizzle none\n"
		"  barrier full arrivals 1 consumers mma producers load ring ab\n"
		"{\n"
		"\n"
		"  in load {   # producer\n"
		"    for k in 0..K/64 unroll 2 pipelined ab step 1 { wait empty\n"
		"      tma a <- A[bm*128 +: 128, (k)*64 +: 64]    signal full  # load\n"
		"    }\n"
		"\n"
		"    if k==0 { sync } else { if k>1 { sync } else { fence cta } }\n"
		"    x = ((a + b)) * -(c)  - (d - e)\n"
		"    # last in block\n"
		"  }\n"
		"} # end\n"
		"kernel b2 target sm_80 { }\n";
	const char *want =
		"# file header\n"
		"\n"
		"kernel demo target sm_90a  # the kernel\n"
		"  param A: global bf16[M, K]\n"
		"\n"
		"  /* block\n"
		"     comment */\n"
		"  role load warps 0..3 regs 40\n"
		"  smem a: bf16[128, 64] swizzle 128B ring ab\n"
		"  smem z: f32[4]\n"
		"  barrier full ring ab producers load consumers mma arrivals 1\n"
		"{\n"
		"  in load {  # producer\n"
		"    for k in 0 .. K / 64 step 1 pipelined ab unroll 2 {\n"
		"      wait empty\n"
		"      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full  # load\n"
		"    }\n"
		"\n"
		"    if k == 0 {\n"
		"      sync\n"
		"    } else if k > 1 {\n"
		"      sync\n"
		"    } else {\n"
		"      fence cta\n"
		"    }\n"
		"    x = (a + b) * -c - (d - e)\n"
		"    # last in block\n"
		"  }\n"
		"}  # end\n"
		"\n"
		"kernel b2 target sm_80\n"
		"{\n"
		"}\n";
	int nerr;
	char *got = fmt(in, strlen(in), &nerr);
	assert_int_equal(nerr, 0);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "--- got:\n%s--- want:\n%s", got, want);
	assert_string_equal(got, want);
	free(got);
	assert_true(roundtrip("layout", in, strlen(in)));
}

/* print_expr of the right-hand side of `x = SRC`. */
static void expect_expr(const char *src, const char *want)
{
	char buf[512];
	snprintf(buf, sizeof buf, "kernel k target sm_90a { in r { x = %s } }", src);
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	int f = src_add(&ss, "e.cake", buf, strlen(buf));
	ctx_init(&c, &ss, &dl);
	Program *p = parse_file(&c, f);
	assert_int_equal(dl.nerr, 0);
	StrBuf b = {0};
	print_expr(&b, p->kernels[0]->body[0]->body[0]->src);
	if (strcmp(sb_str(&b), want) != 0)
		fprintf(stderr, "%s: got '%s', want '%s'\n", src, sb_str(&b), want);
	assert_string_equal(sb_str(&b), want);
	sb_free(&b);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
}

static void test_expressions(void **state)
{
	expect_expr("a+b*c", "a + b * c");
	expect_expr("(a+b)*c", "(a + b) * c");
	expect_expr("a-(b-c)", "a - (b - c)");
	expect_expr("(a-b)-c", "a - b - c");
	expect_expr("a/(b*c)", "a / (b * c)");
	expect_expr("-(a+b)", "-(a + b)");
	expect_expr("-(-a)", "--a");
	expect_expr("!(a<b)", "!(a < b)");
	expect_expr("(-a)^T", "(-a)^T");
	expect_expr("-a^T", "-a^T");
	expect_expr("(a+b)[i, :]", "(a + b)[i, :]");
	expect_expr("f(a)[0 +: 4]", "f(a)[0 +: 4]");
	expect_expr("a || b && c", "a || b && c");
	expect_expr("(a || b) && c", "(a || b) && c");
	expect_expr("a << 1 + 2", "a << 1 + 2");
	expect_expr("(a << 1) + 2", "(a << 1) + 2");
	expect_expr("a == (b == c)", "a == (b == c)");
	expect_expr("where(x>0,x,-inf)", "where(x > 0, x, -inf)");
	expect_expr("0x10 % 3", "16 % 3");
	expect_expr("1.5e0", "1.5");
	expect_expr("2.0e3", "2000.0");
	expect_expr("1e-6", "1e-06");
	expect_expr("0.1", "0.1");
	expect_expr("1e300", "1e+300");
	expect_expr("123456789.125", "123456789.125");
	expect_expr("rowmax(s)", "rowmax(s)");
	expect_expr("f()", "f()");
}

static const char *const samples[] = {
	"kernel a target sm_90a { }",
	"kernel a target sm_90a param s: f32 const C = -1 cluster (2,1) grid persistent (132) as (t)"
	" frag x: f32[64] in r split n { in r { x = 1.25 * exp2(x) } }",
	"kernel a target sm_90a { in r { if a { } else if b { } else if c { x = 1 } } }",
	"kernel a target sm_90a { in r { if a { } else { # c\n if b { } } } }",
	"kernel a target sm_90a { in r { if a { } # t\n else { } } }",
	"kernel a target sm_90a { in r { x = 1 /* a */ /* b */ # c\n y = 2 } }",
	"kernel a target sm_90a { in r { x = 1 +\n # inside\n 2 } }",
	"kernel a target sm_90a { in r { x = 1 + # trailing inside\n 2 } }",
	"kernel a target sm_90a { in r { x = 1 /* a\n b */ y = 2 } }",
	"/* a */ # b\nkernel a target sm_90a { }\n\n\n# between\n\nkernel b target sm_80 { } # end\n# eof",
	"kernel a target sm_90a\n# before brace\n{\n# only a comment\n}",
	"kernel a target sm_90a { in r { for i in 0 .. n step 2 { cp_async s[i +: 8] <- G[i +: 8] } "
	"mma c = a @ b^T tma C[0 +: 64] <- c load f <- G[:, 0] atomic_add G[i] <- f wgmma_wait 1 "
	"fence proxy_async sync r let q = i v, w = rowargmin(f) } }",
};

static void test_inline_roundtrips(void **state)
{
	for (size_t i = 0; i < NELEM(samples); i++) {
		char name[32];
		snprintf(name, sizeof name, "sample %zu", i);
		if (!roundtrip(name, samples[i], strlen(samples[i]))) {
			fprintf(stderr, "%s does not parse cleanly\n", name);
			fail();
		}
	}
}

/* Every comment survives formatting: the comment texts are the same, in order. */
static void test_comments_kept(void **state)
{
	for (size_t i = 0; i < NELEM(samples); i++) {
		int nerr;
		char *out = fmt(samples[i], strlen(samples[i]), &nerr);
		assert_non_null(out);
		SourceSet ss = {0};
		DiagList dl = {0};
		Ctx c;
		int f1 = src_add(&ss, "a", samples[i], strlen(samples[i]));
		int f2 = src_add(&ss, "b", out, strlen(out));
		ctx_init(&c, &ss, &dl);
		Program *a = parse_file(&c, f1), *b = parse_file(&c, f2);
		assert_int_equal(a->ncomments, b->ncomments);
		for (int k = 0; k < a->ncomments; k++)
			assert_string_equal(a->comments[k]->text, b->comments[k]->text);
		ctx_free(&c);
		diag_free(&dl);
		src_free(&ss);
		free(out);
	}
}

/* A comment of each kind inserted at every token boundary of a kernel: the
 * result still parses cleanly, obeys the round-trip law and keeps the
 * comment text. */
static void test_comment_everywhere(void **state)
{
	static const char *kernel =
		"kernel g target sm_90a\n"
		"  param A: global bf16[M, K]\n"
		"  grid (M / 128) as (bm)\n"
		"  role load warps 0..3 regs 40\n"
		"  pipeline ab stages 2\n"
		"  smem a: bf16[128, 64] swizzle 128B ring ab\n"
		"  barrier full ring ab producers load consumers load arrivals 1\n"
		"{\n"
		"  in load {\n"
		"    for k in 0 .. K / 64 pipelined ab {\n"
		"      if k > 0 { wait full } else if k < 0 { sync } else { fence cta }\n"
		"      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full\n"
		"    }\n"
		"  }\n"
		"}\n";
	static const char *const comments[] = {"# c1\n", "/* c2 */", "/* c3\n   c3 */", "\n\n# c4\n\n"};
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	size_t len = strlen(kernel);
	int f = src_add(&ss, "k.cake", kernel, len);
	ctx_init(&c, &ss, &dl);
	int n;
	Token *toks = lex_file(&c, f, &n);
	int checked = 0;
	char *buf = malloc(len + 64);
	for (int i = 0; i < n; i++) {
		size_t at = (size_t)toks[i].span.off; /* before token i (or at EOF) */
		if (toks[i].n == 1 && toks[i].p[0] == 'B' && i > 0 && toks[i - 1].kind == T_INT)
			continue; /* `128B` is one spelling: a comment cannot split it */
		for (size_t k = 0; k < NELEM(comments); k++) {
			size_t cl = strlen(comments[k]);
			memcpy(buf, kernel, at);
			memcpy(buf + at, comments[k], cl);
			memcpy(buf + at + cl, kernel + at, len - at);
			buf[len + cl] = 0;
			char name[64];
			snprintf(name, sizeof name, "comment %zu before token %d", k, i);
			if (!roundtrip(name, buf, len + cl)) {
				fprintf(stderr, "%s does not parse:\n%s", name, buf);
				fail();
			}
			int nerr;
			char *out = fmt(buf, len + cl, &nerr);
			const char *text = k == 0 ? "# c1" : k == 1 ? "/* c2 */" : k == 2 ? "/* c3\n   c3 */" : "# c4";
			if (!strstr(out, text))
				fprintf(stderr, "%s lost its comment:\n%s", name, out);
			assert_non_null(strstr(out, text));
			free(out);
			checked++;
		}
	}
	fprintf(stderr, "  [ info ] %d comment placements round-tripped\n", checked);
	free(buf);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
}

/* ---- the corpus walk ---- */

typedef struct Walk {
	int checked, skipped;
} Walk;

/* Round-trip every .cake file under dir (recursive, symlinks not followed). */
static void walk(const char *dir, Walk *w, int depth)
{
	DIR *d = opendir(dir);
	if (!d || depth > 16) {
		if (d)
			closedir(d);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, w, depth + 1);
			continue;
		}
		size_t n = strlen(path);
		if (!S_ISREG(st.st_mode) || n < 5 || strcmp(path + n - 5, ".cake") != 0)
			continue;
		size_t len;
		char *src = read_file(path, &len);
		if (!src)
			continue;
		if (roundtrip(path, src, len))
			w->checked++;
		else
			w->skipped++;
		free(src);
	}
	closedir(d);
}

static void test_corpus_roundtrip(void **state)
{
	Walk w = {0, 0};
	walk("kernels", &w, 0);
	walk("tests", &w, 0);
	fprintf(stderr, "  [ info ] round-tripped %d .cake files (%d skipped: parse errors)\n",
	        w.checked, w.skipped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_layout),
		cmocka_unit_test(test_expressions),
		cmocka_unit_test(test_inline_roundtrips),
		cmocka_unit_test(test_comments_kept),
		cmocka_unit_test(test_comment_everywhere),
		cmocka_unit_test(test_corpus_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
