/*
 * test_rules_doc.c — the registry is complete and docs/RULES.md is current.
 *
 * 1. Every rule ID written as a string literal anywhere under src/
 *    ("CK-LEX-003", "CK-SEM-021", "CK-RACE-001", ...) must be in the
 *    registry, so no finding can carry an undocumented ID.
 * 2. docs/RULES.md must be byte-identical to rules_print("markdown"); when
 *    it is not, run `make docs`.
 * Run from the repository root (tests/run_all.sh does).
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

#include "verify/verify.h"

/* scan text for "CK-<UPPER>+-<DIGITS>" inside double quotes; count missing */
static int scan_text(const char *path, const char *s, int *seen)
{
	int missing = 0;
	for (const char *p = s; (p = strstr(p, "\"CK-")); p++) {
		const char *q = p + 4;
		const char *fam = q;
		while (isupper((unsigned char)*q))
			q++;
		if (q == fam || *q != '-')
			continue;
		q++;
		const char *num = q;
		while (isdigit((unsigned char)*q))
			q++;
		if (q == num || *q != '"')
			continue;
		char id[64];
		size_t n = (size_t)(q - (p + 1));
		if (n >= sizeof id)
			continue;
		memcpy(id, p + 1, n);
		id[n] = 0;
		(*seen)++;
		if (!rule_find(id)) {
			print_message("  %s uses %s, which is not in the registry (src/base/registry.c)\n",
			              path, id);
			missing++;
		}
	}
	return missing;
}

static int scan_dir(const char *dir, int *seen)
{
	int missing = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
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
			missing += scan_dir(p, seen);
			continue;
		}
		size_t n = strlen(e->d_name);
		if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
			continue;
		size_t len;
		char *text = read_file(p, &len);
		if (!text)
			continue;
		missing += scan_text(p, text, seen);
		free(text);
	}
	closedir(d);
	return missing;
}

static void test_ids_registered(void **state)
{
	(void)state;
	int seen = 0;
	int missing = scan_dir("src", &seen);
	print_message("%d rule-ID literals scanned under src/\n", seen);
	assert_true(seen > 50);
	assert_int_equal(missing, 0);
}

static void test_scanner_catches_unknown(void **state)
{
	(void)state;
	int seen = 0;
	/* the scanner itself must be able to fail */
	assert_int_equal(scan_text("<test>", "x = \"CK-ZZZ-999\"; y = \"CK-DEAD-001\";", &seen), 1);
	assert_int_equal(seen, 2);
}

static void test_rules_md_current(void **state)
{
	(void)state;
	size_t len;
	char *doc = read_file("docs/RULES.md", &len);
	if (!doc)
		print_message("  docs/RULES.md is missing: run `make docs`\n");
	assert_non_null(doc);
	StrBuf b = {0};
	rules_print(&b, "markdown");
	bool same = b.len == len && memcmp(sb_str(&b), doc, len) == 0;
	if (!same)
		print_message("  docs/RULES.md is stale (%zu bytes, registry gives %zu): run `make docs`\n",
		              len, b.len);
	sb_free(&b);
	free(doc);
	assert_true(same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scanner_catches_unknown),
		cmocka_unit_test(test_ids_registered),
		cmocka_unit_test(test_rules_md_current),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
