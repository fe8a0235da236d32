/*
 * test_language_doc.c — docs/LANGUAGE.md stays in step with what it quotes.
 *
 * The specification embeds text that also lives elsewhere, and promises
 * that the copies agree:
 *
 *   - §3 includes docs/grammar.ebnf verbatim (the first ```ebnf block);
 *   - §10 includes every family sketch verbatim: a heading that names the
 *     file in backquotes (`kernels/gemm/gemm_ws_128x256_s4.cake`) followed
 *     by a ``` block whose text must equal the file byte for byte;
 *   - every golden diagnostic test tests/diag/sX.Y-NAME.cake is named after
 *     a clause, and that clause (a heading "§X.Y " or "§X ") must exist, and
 *     the file (unless it is empty) must start with a comment naming the
 *     rule ID it expects on a line "# Expected: CK-...";
 *   - every verifier rule ID the text cites (CK-BAR/RACE/DEAD/DATA/HW/RES/
 *     SCHED/MEM) exists in the registry, and each row of the §9 rule table
 *     carries the registry's current title for its ID (IDs are stable, but
 *     a renumbered registry must not leave the spec pointing at the wrong
 *     rule).
 *
 * The tests read the files relative to the repository root, which is where
 * tests/run_all.sh runs the unit binaries. A missing document or quoted file
 * is a failure, not a skip: the promise is part of the repository.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"

/* Whole file as a NUL-terminated malloc'd string, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

/* The body of the first fenced block that starts at or after `from` with the
 * opening fence line `fence` ("```" or "```ebnf"), as a malloc'd string. */
static char *fenced_after(const char *from, const char *fence)
{
	char open[32];
	snprintf(open, sizeof open, "\n%s\n", fence);
	const char *s = strstr(from, open);
	if (!s)
		return NULL;
	s += strlen(open);
	const char *e = strstr(s, "\n```\n");
	if (!e)
		return NULL;
	size_t n = (size_t)(e - s) + 1;   /* keep the final newline */
	char *out = malloc(n + 1);
	memcpy(out, s, n);
	out[n] = 0;
	return out;
}

static void test_grammar_included_verbatim(void **state)
{
	(void)state;
	char *doc = slurp("docs/LANGUAGE.md");
	char *gram = slurp("docs/grammar.ebnf");
	assert_non_null(doc);
	assert_non_null(gram);
	const char *sec = strstr(doc, "## §3 Grammar");
	assert_non_null(sec);
	char *quoted = fenced_after(sec, "```ebnf");
	assert_non_null(quoted);
	if (strcmp(quoted, gram) != 0)
		fail_msg("docs/LANGUAGE.md §3 differs from docs/grammar.ebnf; run: sh docs/sync-language-grammar.sh");
	free(quoted);
	free(gram);
	free(doc);
}

static void test_sketches_included_verbatim(void **state)
{
	(void)state;
	char *doc = slurp("docs/LANGUAGE.md");
	assert_non_null(doc);
	const char *sec = strstr(doc, "## §10 Family sketches");
	assert_non_null(sec);
	int checked = 0;
	/* every "### §10... — `path`" heading */
	for (const char *h = strstr(sec, "\n### §10"); h; h = strstr(h + 1, "\n### §10")) {
		const char *eol = strchr(h + 1, '\n');
		const char *q1 = strchr(h + 1, '`');
		if (!eol || !q1 || q1 > eol)
			continue;
		const char *q2 = strchr(q1 + 1, '`');
		if (!q2 || q2 > eol)
			continue;
		char path[256];
		size_t n = (size_t)(q2 - q1 - 1);
		assert_true(n < sizeof path);
		memcpy(path, q1 + 1, n);
		path[n] = 0;
		char *file = slurp(path);
		if (!file)
			fail_msg("§10 quotes '%s', which does not exist", path);
		char *quoted = fenced_after(eol, "```");
		assert_non_null(quoted);
		if (strcmp(quoted, file) != 0)
			fail_msg("docs/LANGUAGE.md §10 copy of '%s' differs from the file", path);
		free(quoted);
		free(file);
		checked++;
	}
	/* GEMM, KMeans assign, two updates, KDA, KNN */
	assert_true(checked >= 6);
	free(doc);
}

static void test_diag_tests_name_clauses(void **state)
{
	(void)state;
	char *doc = slurp("docs/LANGUAGE.md");
	assert_non_null(doc);
	DIR *d = opendir("tests/diag");
	assert_non_null(d);
	struct dirent *e;
	int checked = 0;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".cake") != 0 || e->d_name[0] != 's')
			continue;
		/* "s5.4-tma-..." -> clause "5.4" */
		char clause[16];
		size_t i = 1, k = 0;
		while (e->d_name[i] && e->d_name[i] != '-' && k + 1 < sizeof clause)
			clause[k++] = e->d_name[i++];
		clause[k] = 0;
		char heading[40];
		snprintf(heading, sizeof heading, "§%s ", clause);
		if (!strstr(doc, heading))
			fail_msg("tests/diag/%s names clause §%s, which LANGUAGE.md does not have", e->d_name, clause);
		char path[512];
		snprintf(path, sizeof path, "tests/diag/%s", e->d_name);
		char *src = slurp(path);
		assert_non_null(src);
		if (src[0] && !strstr(src, "\n# Expected: CK-"))
			fail_msg("%s does not name the rule it expects ('# Expected: CK-...')", path);
		free(src);
		checked++;
	}
	closedir(d);
	assert_true(checked >= 45);
	free(doc);
}

static void test_cited_rules_exist(void **state)
{
	(void)state;
	static const char *const fam[] = { "BAR", "RACE", "DEAD", "DATA", "HW", "RES", "SCHED", "MEM" };
	char *doc = slurp("docs/LANGUAGE.md");
	assert_non_null(doc);
	int cited = 0, rows = 0;
	for (const char *p = strstr(doc, "CK-"); p; p = strstr(p + 3, "CK-")) {
		char id[24];
		size_t n = 0;
		while (n + 1 < sizeof id && (p[n] == '-' || (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9')))
			id[n] = p[n], n++;
		id[n] = 0;
		bool verifier = false;
		for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
			size_t fl = strlen(fam[i]);
			if (strncmp(id + 3, fam[i], fl) == 0 && id[3 + fl] == '-' && id[4 + fl] >= '0' && id[4 + fl] <= '9')
				verifier = true;
		}
		if (!verifier)
			continue;
		const Rule *r = rule_find(id);
		if (!r)
			fail_msg("docs/LANGUAGE.md cites %s, which the registry does not have", id);
		cited++;
		/* a §9 table row: "| `ID` | category | authority | title |" */
		if (p > doc + 2 && p[-1] == '`' && p[-2] == ' ' && p[-3] == '|') {
			const char *t = p;
			for (int bars = 0; *t && *t != '\n' && bars < 3; t++)
				if (*t == '|')
					bars++;
			while (*t == ' ')
				t++;
			size_t tl = strlen(r->title);
			if (strncmp(t, r->title, tl) != 0 || strncmp(t + tl, " |", 2) != 0)
				fail_msg("docs/LANGUAGE.md §9 lists %s with a title other than the registry's '%s'", id, r->title);
			rows++;
		}
	}
	assert_true(cited > 0);
	int nrules;
	const Rule *all = rules_all(&nrules);
	int nverify = 0;
	for (int i = 0; i < nrules; i++)
		for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
			size_t fl = strlen(fam[f]);
			if (strncmp(all[i].id + 3, fam[f], fl) == 0 && all[i].id[3 + fl] == '-')
				nverify++;
		}
	if (rows != nverify)
		fail_msg("docs/LANGUAGE.md §9 lists %d verifier rules but the registry has %d", rows, nverify);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grammar_included_verbatim),
		cmocka_unit_test(test_sketches_included_verbatim),
		cmocka_unit_test(test_diag_tests_name_clauses),
		cmocka_unit_test(test_cited_rules_exist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
