/*
 * test_diag.c — the diagnostic list and its three printers.
 *
 * Each test builds a SourceSet and a DiagList by hand (no parser involved),
 * prints it, and checks the result: exact bytes for the text printer (caret
 * placement, tabs, UTF-8, long lines, the summary), and for JSON and SARIF
 * parses the document back with jansson and checks fields, so an invalid
 * document or a missing field fails the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "base/diag.h"
#include "verify/verify.h"

/* A source set with two files. */
static const char SRC_A[] =
	"kernel k target sm_90a\n"                 /* line 1 */
	"  barrier full ring ab producers load consumers mma arrivals 1\n"  /* line 2 */
	"\tin mma {\twait full }\n"                /* line 3: tabs */
	"/* \xc3\xa9t\xc3\xa9 */ wait empty\n";    /* line 4: UTF-8 in a comment */
static const char SRC_B[] = "x\ny\n";

/* Span of the first occurrence of needle at or after line `line` of file f. */
static Span span_of(const SourceSet *ss, int f, int line, const char *needle)
{
	const char *t = ss->files[f].text;
	const char *p = t;
	for (int l = 1; l < line; l++)
		p = strchr(p, '\n') + 1;
	const char *q = strstr(p, needle);
	assert_non_null(q);
	const char *ls = q;
	while (ls > t && ls[-1] != '\n')
		ls--;
	Span s = {f, line, (int)(q - ls) + 1, (int)(q - t), (int)strlen(needle)};
	return s;
}

static void setup_sources(SourceSet *ss)
{
	memset(ss, 0, sizeof *ss);
	assert_int_equal(src_add(ss, "dir/a.cake", SRC_A, strlen(SRC_A)), 0);
	assert_int_equal(src_add(ss, "b.cake", SRC_B, strlen(SRC_B)), 1);
}

static char *render_text(const SourceSet *ss, const DiagList *dl)
{
	StrBuf b = {0};
	diag_print_text(&b, ss, dl, false);
	char *s = xstrdup(sb_str(&b));
	sb_free(&b);
	return s;
}

static void test_add_counts_and_fields(void **state)
{
	SourceSet ss;
	setup_sources(&ss);
	DiagList dl = {0};
	Diag *d = diag_add(&dl, "CK-T-001", SEV_ERROR, span_of(&ss, 0, 2, "full"), "n=%d", 3);
	assert_string_equal(d->msg, "n=3");
	assert_int_equal(d->stage, -1);
	assert_int_equal(d->phase, -1);
	assert_int_equal(d->related.file, -1);
	assert_null(d->role);
	diag_set(&d->role, "%s", "mma");
	diag_set(&d->role, "%s", "load");   /* replaces, no leak */
	assert_string_equal(d->role, "load");
	diag_related(d, span_of(&ss, 0, 3, "wait"), "first %s", "wait");
	diag_related(d, span_of(&ss, 0, 3, "full"), "waited on here");
	assert_string_equal(d->related_msg, "waited on here");
	diag_add(&dl, "CK-T-002", SEV_WARNING, NOSPAN, "w");
	diag_add(&dl, "CK-T-003", SEV_NOTE, NOSPAN, "n");
	diag_add(&dl, "CK-T-004", SEV_NOTE, NOSPAN, "n");
	assert_int_equal(dl.n, 4);
	assert_int_equal(dl.nerr, 1);
	assert_int_equal(dl.nwarn, 1);
	assert_int_equal(dl.nnote, 2);
	assert_string_equal(sev_name(SEV_ERROR), "error");
	assert_string_equal(sev_name(SEV_WARNING), "warning");
	assert_string_equal(sev_name(SEV_NOTE), "note");
	diag_free(&dl);
	assert_int_equal(dl.n, 0);
	assert_int_equal(dl.nerr, 0);
	src_free(&ss);
}

static void test_cap_counts_but_drops(void **state)
{
	DiagList dl = {0};
	dl.max = 3;
	for (int i = 0; i < 10; i++) {
		Diag *d = diag_add(&dl, "CK-T-001", SEV_ERROR, NOSPAN, "finding %d", i);
		diag_set(&d->hint, "hint %d", i);   /* must be safe past the cap */
		d->stage = i;
	}
	assert_int_equal(dl.n, 3);
	assert_int_equal(dl.nerr, 10);
	assert_int_equal(dl.dropped, 7);
	assert_int_equal(diag_cap(&dl), 3);
	assert_string_equal(dl.items[2]->msg, "finding 2");
	char *t = render_text(NULL, &dl);
	assert_non_null(strstr(t, "cake: note: 7 further findings not shown (limit 3)\n"));
	assert_non_null(strstr(t, "10 errors, 0 warnings\n"));
	free(t);
	diag_free(&dl);
	assert_int_equal(dl.max, 3);   /* the cap survives a free */
	DiagList d0 = {0};
	assert_int_equal(diag_cap(&d0), 10000);
}

static void test_sort_is_stable(void **state)
{
	SourceSet ss;
	setup_sources(&ss);
	DiagList dl = {0};
	diag_add(&dl, "CK-B-001", SEV_ERROR, span_of(&ss, 1, 2, "y"), "b-y");
	diag_add(&dl, "CK-Z-001", SEV_ERROR, span_of(&ss, 0, 3, "wait"), "z first");
	diag_add(&dl, "CK-A-001", SEV_ERROR, span_of(&ss, 0, 3, "wait"), "a");
	diag_add(&dl, "CK-Z-001", SEV_ERROR, span_of(&ss, 0, 3, "wait"), "z second");
	diag_add(&dl, "CK-A-001", SEV_ERROR, span_of(&ss, 0, 2, "full"), "line2");
	diag_add(&dl, "CK-A-001", SEV_ERROR, span_of(&ss, 0, 2, "barrier"), "line2 col3");
	diag_sort(&dl);
	const char *want[] = {"line2 col3", "line2", "a", "z first", "z second", "b-y"};
	assert_int_equal(dl.n, 6);
	for (int i = 0; i < 6; i++)
		assert_string_equal(dl.items[i]->msg, want[i]);
	diag_free(&dl);
	src_free(&ss);
}

static void test_text_exact(void **state)
{
	SourceSet ss;
	setup_sources(&ss);
	DiagList dl = {0};
	Diag *d = diag_add(&dl, "CK-BAR-001", SEV_ERROR, span_of(&ss, 0, 3, "wait full"),
	                   "role 'mma' waits on 'full' but nobody arrives");
	diag_set(&d->role, "mma");
	diag_set(&d->barrier, "full");
	d->stage = 2;
	d->phase = 1;
	diag_set(&d->iter, "k=6");
	diag_set(&d->condition, "arrivals(full) == 1");
	diag_set(&d->hint, "add 'arrive full' in role load");
	diag_related(d, span_of(&ss, 0, 2, "full"), "barrier 'full' declared here");
	Diag *w = diag_add(&dl, "CK-T-002", SEV_WARNING, span_of(&ss, 0, 4, "empty"), "unused");
	diag_set(&w->resource, "empty");
	diag_add(&dl, "CK-T-003", SEV_NOTE, NOSPAN, "no location");
	char *t = render_text(&ss, &dl);
	const char *want =
		"dir/a.cake:3:11: error: role 'mma' waits on 'full' but nobody arrives [CK-BAR-001]\n"
		"\tin mma {\twait full }\n"
		"\t        \t^~~~~~~~~\n"
		"  = role: mma, barrier: full, stage: 2, phase: 1, iteration: k=6\n"
		"  = condition: arrivals(full) == 1\n"
		"  = hint: add 'arrive full' in role load\n"
		"dir/a.cake:2:11: note: barrier 'full' declared here\n"
		"  barrier full ring ab producers load consumers mma arrivals 1\n"
		"          ^~~~\n"
		"dir/a.cake:4:18: warning: unused [CK-T-002]\n"
		"/* \xc3\xa9t\xc3\xa9 */ wait empty\n"
		"               ^~~~~\n"       /* é counts as one column */
		"  = resource: empty\n"
		"cake: note: no location [CK-T-003]\n"
		"1 error, 1 warning, 1 note\n";
	assert_string_equal(t, want);
	free(t);

	/* colour adds escapes but keeps the text */
	StrBuf b = {0};
	diag_print_text(&b, &ss, &dl, true);
	assert_non_null(strstr(sb_str(&b), "\033[1;31merror:"));
	assert_non_null(strstr(sb_str(&b), "\033[1;35mwarning:"));
	sb_free(&b);
	diag_free(&dl);
	src_free(&ss);
}

static void test_text_empty_and_edges(void **state)
{
	/* nothing found: nothing printed at all */
	DiagList dl = {0};
	char *t = render_text(NULL, &dl);
	assert_string_equal(t, "");
	free(t);

	/* span at EOF with length 0, control bytes and invalid UTF-8 in the line */
	SourceSet ss = {0};
	const char bad[] = "ab\x01\xff\xc3(z";
	src_add(&ss, "bad.cake", bad, sizeof bad - 1);
	Span eof = {0, 1, 8, 7, 0};
	Span z = {0, 1, 7, 6, 5};     /* runs past EOF: clipped */
	diag_add(&dl, "CK-T-001", SEV_ERROR, eof, "at end");
	diag_add(&dl, "CK-T-002", SEV_ERROR, z, "z");
	t = render_text(&ss, &dl);
	assert_string_equal(t,
		"bad.cake:1:8: error: at end [CK-T-001]\n"
		"ab??\?(z\n"
		"       ^\n"
		"bad.cake:1:7: error: z [CK-T-002]\n"
		"ab??\?(z\n"
		"      ^\n"
		"2 errors, 0 warnings\n");
	free(t);
	diag_free(&dl);
	src_free(&ss);

	/* a 5000-byte line is shown as a window around the column */
	StrBuf big = {0};
	for (int i = 0; i < 5000; i++)
		sb_putc(&big, (char)('a' + i % 26));
	sb_putc(&big, '\n');
	src_add(&ss, "long.cake", big.s, big.len);
	Span mid = {0, 1, 4001, 4000, 3};
	diag_add(&dl, "CK-T-001", SEV_ERROR, mid, "deep");
	t = render_text(&ss, &dl);
	char *l2 = strchr(t, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	assert_true(strncmp(l2, "...", 3) == 0);
	assert_true(strchr(l2, '\n') - l2 < 300);
	/* the caret sits under the same character as in the window */
	int caret = (int)(strchr(l3, '^') - l3);
	assert_int_equal(l2[caret], big.s[4000]);
	assert_true(strncmp(l3 + caret, "^~~\n", 4) == 0);
	free(t);
	sb_free(&big);
	diag_free(&dl);
	src_free(&ss);
}

static void test_text_multiline_crlf_related(void **state)
{
	SourceSet ss = {0};
	const char src[] = "in load {\r\n  wait full\r\n}\r\n";
	src_add(&ss, "crlf.cake", src, sizeof src - 1);
	DiagList dl = {0};
	/* a span over the whole block: the caret runs to the end of its first line
	 * (the \r is not part of the line) */
	Diag *d = diag_add(&dl, "CK-T-001", SEV_WARNING, (Span){0, 1, 1, 0, (int)sizeof src - 1},
	                   "whole block");
	diag_related(d, NOSPAN, "no place to show");
	d = diag_add(&dl, "CK-T-002", SEV_NOTE, (Span){0, 2, 3, 13, 9}, "wait");
	d->phase = 1;
	char *t = render_text(&ss, &dl);
	assert_string_equal(t,
		"crlf.cake:1:1: warning: whole block [CK-T-001]\n"
		"in load {\n"
		"^~~~~~~~~\n"
		"  = note: no place to show\n"
		"crlf.cake:2:3: note: wait [CK-T-002]\n"
		"  wait full\n"
		"  ^~~~~~~~~\n"
		"  = phase: 1\n"
		"0 errors, 1 warning, 1 note\n");
	free(t);
	diag_free(&dl);
	src_free(&ss);
}

static json_t *parse_json(const char *s)
{
	json_error_t err;
	json_t *j = json_loads(s, 0, &err);
	if (!j)
		fail_msg("invalid JSON at line %d: %s\n%s", err.line, err.text, s);
	return j;
}

static void build_mixed(SourceSet *ss, DiagList *dl)
{
	setup_sources(ss);
	memset(dl, 0, sizeof *dl);
	Diag *d = diag_add(dl, "CK-BAR-001", SEV_ERROR, span_of(ss, 0, 3, "wait full"),
	                   "waits \"forever\"");
	diag_set(&d->role, "mma");
	diag_set(&d->barrier, "full");
	diag_set(&d->pipeline, "ab");
	d->stage = 2;
	d->phase = 0;
	diag_set(&d->iter, "k=6");
	diag_set(&d->condition, "c");
	diag_set(&d->hint, "h");
	diag_related(d, span_of(ss, 0, 2, "full"), "declared here");
	diag_add(dl, "CK-T-002", SEV_WARNING, span_of(ss, 1, 2, "y"), "bad byte \xff here");
	diag_add(dl, "CK-T-003", SEV_NOTE, NOSPAN, "nowhere");
	diag_add(dl, "CK-BAR-001", SEV_ERROR, span_of(ss, 1, 1, "x"), "again");
}

static void test_json(void **state)
{
	SourceSet ss;
	DiagList dl;
	build_mixed(&ss, &dl);
	StrBuf b = {0};
	diag_print_json(&b, &ss, &dl, "v1-test");
	json_t *j = parse_json(sb_str(&b));
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "cake-diagnostics/1");
	assert_string_equal(json_string_value(json_object_get(j, "verifier")), "v1-test");
	json_t *files = json_object_get(j, "files");
	assert_int_equal(json_array_size(files), 2);
	assert_string_equal(json_string_value(json_array_get(files, 0)), "dir/a.cake");
	json_t *ds = json_object_get(j, "diagnostics");
	assert_int_equal(json_array_size(ds), 4);

	json_t *d0 = json_array_get(ds, 0);
	assert_string_equal(json_string_value(json_object_get(d0, "rule")), "CK-BAR-001");
	assert_string_equal(json_string_value(json_object_get(d0, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(d0, "message")), "waits \"forever\"");
	json_t *loc = json_object_get(d0, "location");
	assert_string_equal(json_string_value(json_object_get(loc, "file")), "dir/a.cake");
	assert_int_equal(json_integer_value(json_object_get(loc, "line")), 3);
	assert_int_equal(json_integer_value(json_object_get(loc, "col")), 11);
	assert_int_equal(json_integer_value(json_object_get(loc, "length")), 9);
	assert_int_equal(json_integer_value(json_object_get(loc, "offset")),
	                 strstr(SRC_A, "wait full") - SRC_A);
	assert_string_equal(json_string_value(json_object_get(d0, "role")), "mma");
	assert_string_equal(json_string_value(json_object_get(d0, "pipeline")), "ab");
	assert_int_equal(json_integer_value(json_object_get(d0, "stage")), 2);
	assert_int_equal(json_integer_value(json_object_get(d0, "phase")), 0);
	assert_true(json_is_integer(json_object_get(d0, "phase")));
	assert_string_equal(json_string_value(json_object_get(d0, "iteration")), "k=6");
	json_t *rel = json_object_get(d0, "related");
	assert_int_equal(json_integer_value(json_object_get(rel, "line")), 2);
	assert_string_equal(json_string_value(json_object_get(rel, "message")), "declared here");

	/* absent fields are present and null */
	json_t *d1 = json_array_get(ds, 1);
	const char *keys[] = {"role", "resource", "barrier", "pipeline", "stage", "phase",
	                      "iteration", "condition", "hint", "related"};
	for (size_t i = 0; i < NELEM(keys); i++) {
		json_t *v = json_object_get(d1, keys[i]);
		assert_non_null(v);
		assert_true(json_is_null(v));
	}
	/* ... and a finding without fixes has an empty "fixes" array */
	assert_int_equal(json_array_size(json_object_get(d1, "fixes")), 0);
	assert_true(json_is_array(json_object_get(d1, "fixes")));
	/* invalid UTF-8 in a message became U+FFFD */
	assert_string_equal(json_string_value(json_object_get(d1, "message")),
	                    "bad byte \xef\xbf\xbd here");
	assert_true(json_is_null(json_object_get(json_array_get(ds, 2), "location")));

	json_t *sum = json_object_get(j, "summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "errors")), 2);
	assert_int_equal(json_integer_value(json_object_get(sum, "warnings")), 1);
	assert_int_equal(json_integer_value(json_object_get(sum, "notes")), 1);
	assert_int_equal(json_integer_value(json_object_get(sum, "dropped")), 0);
	json_decref(j);
	sb_free(&b);

	/* empty list and NULL verifier version still make a valid document */
	DiagList empty = {0};
	diag_print_json(&b, &ss, &empty, NULL);
	j = parse_json(sb_str(&b));
	assert_true(json_is_null(json_object_get(j, "verifier")));
	assert_int_equal(json_array_size(json_object_get(j, "diagnostics")), 0);
	json_decref(j);
	sb_free(&b);
	diag_free(&dl);
	src_free(&ss);
}

static void test_sarif(void **state)
{
	SourceSet ss;
	DiagList dl;
	build_mixed(&ss, &dl);
	/* one finding with a rule that really is in the registry, if any */
	int nrules = 0;
	const Rule *all = rules_all(&nrules);
	if (nrules > 0)
		diag_add(&dl, all[0].id, all[0].sev, span_of(&ss, 1, 1, "x"), "registered");
	StrBuf b = {0};
	diag_print_sarif(&b, &ss, &dl, "v1-test");
	json_t *j = parse_json(sb_str(&b));
	assert_string_equal(json_string_value(json_object_get(j, "version")), "2.1.0");
	assert_non_null(strstr(json_string_value(json_object_get(j, "$schema")), "sarif-2.1.0"));
	json_t *runs = json_object_get(j, "runs");
	assert_int_equal(json_array_size(runs), 1);
	json_t *run = json_array_get(runs, 0);
	json_t *drv = json_object_get(json_object_get(run, "tool"), "driver");
	assert_string_equal(json_string_value(json_object_get(drv, "name")), "cake");
	assert_string_equal(json_string_value(json_object_get(drv, "version")), CAKE_VERSION);
	assert_non_null(json_string_value(json_object_get(drv, "informationUri")));
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(run, "properties"), "verifierVersion")), "v1-test");

	/* rules: one per distinct ID, described from the registry when known */
	json_t *rules = json_object_get(drv, "rules");
	size_t want_rules = 3 + (nrules > 0 && rule_find(all[0].id) &&
	                         strcmp(all[0].id, "CK-BAR-001") != 0 &&
	                         strcmp(all[0].id, "CK-T-002") != 0 &&
	                         strcmp(all[0].id, "CK-T-003") != 0);
	assert_int_equal(json_array_size(rules), want_rules);
	for (size_t i = 0; i < json_array_size(rules); i++) {
		json_t *r = json_array_get(rules, i);
		const char *id = json_string_value(json_object_get(r, "id"));
		assert_non_null(id);
		assert_non_null(json_string_value(json_object_get(json_object_get(r, "shortDescription"), "text")));
		const char *lvl = json_string_value(json_object_get(
			json_object_get(r, "defaultConfiguration"), "level"));
		assert_non_null(lvl);
		const Rule *reg = rule_find(id);
		if (reg) {
			assert_string_equal(json_string_value(json_object_get(
				json_object_get(r, "fullDescription"), "text")), reg->rationale);
			assert_string_equal(lvl, sev_name(reg->sev));
		}
	}

	json_t *res = json_object_get(run, "results");
	assert_int_equal(json_array_size(res), (size_t)dl.n);
	json_t *r0 = json_array_get(res, 0);
	assert_string_equal(json_string_value(json_object_get(r0, "ruleId")), "CK-BAR-001");
	int ri = (int)json_integer_value(json_object_get(r0, "ruleIndex"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(rules, (size_t)ri), "id")),
	                    "CK-BAR-001");
	assert_string_equal(json_string_value(json_object_get(r0, "level")), "error");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r0, "message"), "text")),
	                    "waits \"forever\"");
	json_t *pl = json_object_get(json_array_get(json_object_get(r0, "locations"), 0),
	                             "physicalLocation");
	assert_string_equal(json_string_value(json_object_get(json_object_get(pl, "artifactLocation"),
	                                                      "uri")), "dir/a.cake");
	json_t *reg = json_object_get(pl, "region");
	assert_int_equal(json_integer_value(json_object_get(reg, "startLine")), 3);
	assert_int_equal(json_integer_value(json_object_get(reg, "startColumn")), 11);
	assert_int_equal(json_integer_value(json_object_get(reg, "endColumn")), 20);
	json_t *rl = json_array_get(json_object_get(r0, "relatedLocations"), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(rl, "message"), "text")),
	                    "declared here");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
		json_object_get(rl, "physicalLocation"), "region"), "startLine")), 2);
	json_t *props = json_object_get(r0, "properties");
	assert_string_equal(json_string_value(json_object_get(props, "role")), "mma");
	assert_string_equal(json_string_value(json_object_get(props, "barrier")), "full");
	assert_string_equal(json_string_value(json_object_get(props, "pipeline")), "ab");
	assert_int_equal(json_integer_value(json_object_get(props, "stage")), 2);
	assert_int_equal(json_integer_value(json_object_get(props, "phase")), 0);
	assert_string_equal(json_string_value(json_object_get(props, "iteration")), "k=6");
	assert_string_equal(json_string_value(json_object_get(props, "condition")), "c");
	assert_string_equal(json_string_value(json_object_get(props, "hint")), "h");

	/* warning and note levels; a finding without location has no locations */
	assert_string_equal(json_string_value(json_object_get(json_array_get(res, 1), "level")), "warning");
	json_t *r2 = json_array_get(res, 2);
	assert_string_equal(json_string_value(json_object_get(r2, "level")), "note");
	assert_int_equal(json_array_size(json_object_get(r2, "locations")), 0);
	assert_null(json_object_get(json_object_get(r2, "properties"), "role"));
	json_decref(j);
	sb_free(&b);
	diag_free(&dl);

	/* UTF-8 before the span: SARIF columns count code points */
	Span e = span_of(&ss, 0, 4, "empty");
	diag_add(&dl, "CK-T-001", SEV_ERROR, e, "x");
	diag_print_sarif(&b, &ss, &dl, NULL);
	j = parse_json(sb_str(&b));
	run = json_array_get(json_object_get(j, "runs"), 0);
	assert_string_equal(json_string_value(json_object_get(run, "columnKind")), "unicodeCodePoints");
	reg = json_object_get(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(run, "results"), 0), "locations"), 0),
		"physicalLocation"), "region");
	assert_int_equal(json_integer_value(json_object_get(reg, "startColumn")), e.col - 2);
	assert_int_equal(json_integer_value(json_object_get(reg, "endColumn")), e.col - 2 + 5);
	json_decref(j);
	sb_free(&b);
	diag_free(&dl);
	src_free(&ss);

	/* absolute and odd paths become valid URIs */
	src_add(&ss, "/tmp/my dir/k#1.cake", "x", 1);
	diag_add(&dl, "CK-T-001", SEV_ERROR, (Span){0, 1, 1, 0, 1}, "x");
	diag_print_sarif(&b, &ss, &dl, NULL);
	assert_non_null(strstr(sb_str(&b), "\"file:///tmp/my%20dir/k%231.cake\""));
	sb_free(&b);
	diag_free(&dl);
	src_free(&ss);
}

/* SARIF columns stay right when findings come in and out of order, across
 * lines and UTF-8 (the printer caches its position between findings). */
static void test_sarif_columns_many(void **state)
{
	static const char src[] = "ab \xc3\xa9 cd\nxy\n\xe2\x82\xac\xe2\x82\xac z w\n";
	static const int offs[] = {0, 3, 6, 9, 10, 12, 13, 20, 22, 1, 21, 7};
	SourceSet ss = {0};
	src_add(&ss, "c.cake", src, sizeof src - 1);
	DiagList dl = {0};
	for (size_t i = 0; i < NELEM(offs); i++) {
		int line = 1, ls = 0;
		for (int k = 0; k < offs[i]; k++)
			if (src[k] == '\n')
				line++, ls = k + 1;
		diag_add(&dl, "CK-T-001", SEV_ERROR, (Span){0, line, offs[i] - ls + 1, offs[i], 1}, "x");
	}
	StrBuf b = {0};
	diag_print_sarif(&b, &ss, &dl, NULL);
	json_t *j = parse_json(sb_str(&b));
	json_t *res = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "results");
	assert_int_equal(json_array_size(res), NELEM(offs));
	for (size_t i = 0; i < NELEM(offs); i++) {
		json_t *reg = json_object_get(json_object_get(json_array_get(json_object_get(
			json_array_get(res, i), "locations"), 0), "physicalLocation"), "region");
		int ls = offs[i];
		while (ls > 0 && src[ls - 1] != '\n')
			ls--;
		int cp = 0;   /* code points between ls and offs[i] */
		for (int k = ls; k < offs[i]; k++)
			cp += ((unsigned char)src[k] & 0xc0) != 0x80;
		assert_int_equal(json_integer_value(json_object_get(reg, "startColumn")), cp + 1);
		assert_int_equal(json_integer_value(json_object_get(reg, "byteOffset")), offs[i]);
	}
	json_decref(j);
	sb_free(&b);
	diag_free(&dl);
	src_free(&ss);
}

/* Fixes: one per finding, printed in all three formats and applied. */
static void test_fixes(void **state)
{
	SourceSet ss;
	setup_sources(&ss);
	DiagList dl = {0};
	/* replace "arrivals 1" with "arrivals 2" on line 2 */
	Span n1 = span_of(&ss, 0, 2, "1\n");
	n1.len = 1;
	Diag *d = diag_add(&dl, "CK-BAR-001", SEV_ERROR, n1, "count");
	DiagFix *f = diag_fix(d, "replace 'arrivals %d' with 'arrivals %d'", 1, 2);
	diag_fix_edit(f, n1, "2");
	/* a second fix of the same finding is never applied */
	diag_fix_edit(diag_fix(d, "something else"), n1, "7");
	/* insert a line before line 4 (after the tab line) */
	Span at = diag_span_at(&ss, 0, (int)(strstr(SRC_A, "/*") - SRC_A), 0);
	assert_int_equal(at.line, 4);
	assert_int_equal(at.col, 1);
	Diag *d2 = diag_add(&dl, "CK-DEAD-003", SEV_ERROR, at, "missing");
	diag_fix_edit(diag_fix(d2, "insert 'arrive empty'"), at, "arrive empty\n");
	/* the same insertion proposed by another finding is made once */
	Diag *d3 = diag_add(&dl, "CK-RACE-001", SEV_ERROR, at, "also");
	diag_fix_edit(diag_fix(d3, "insert 'arrive empty'"), at, "arrive empty\n");
	/* an overlapping, different edit is skipped */
	Diag *d4 = diag_add(&dl, "CK-T-009", SEV_WARNING, n1, "clash");
	Span wide = n1;
	wide.off -= 3, wide.col -= 3, wide.len = 4;
	diag_fix_edit(diag_fix(d4, "clash"), wide, "x");
	/* a fix for another file does not apply to this one */
	Span bx = span_of(&ss, 1, 1, "x");
	diag_fix_edit(diag_fix(diag_add(&dl, "CK-T-010", SEV_NOTE, bx, "b"), "b"), bx, "z");

	StrBuf out = {0};
	assert_int_equal(diag_apply_fixes(&ss, &dl, 0, &out), 3);
	const char *want = "kernel k target sm_90a\n"
	                   "  barrier full ring ab producers load consumers mma arrivals 2\n"
	                   "\tin mma {\twait full }\n"
	                   "arrive empty\n"
	                   "/* \xc3\xa9t\xc3\xa9 */ wait empty\n";
	assert_string_equal(sb_str(&out), want);
	sb_free(&out);
	assert_int_equal(diag_apply_fixes(&ss, &dl, 1, &out), 1);
	assert_string_equal(sb_str(&out), "z\ny\n");
	sb_free(&out);
	assert_int_equal(diag_span_at(&ss, 0, 100000, 0).file, -1);

	/* text: one "= fix:" line per fix */
	char *t = render_text(&ss, &dl);
	assert_non_null(strstr(t, "  = fix: replace 'arrivals 1' with 'arrivals 2'\n  = fix: something else\n"));
	free(t);

	/* JSON: every finding has "fixes"; edits carry offset, length, line, col */
	StrBuf b = {0};
	diag_print_json(&b, &ss, &dl, NULL);
	json_t *j = parse_json(sb_str(&b));
	json_t *ds = json_object_get(j, "diagnostics");
	json_t *fx = json_object_get(json_array_get(ds, 0), "fixes");
	assert_int_equal(json_array_size(fx), 2);
	json_t *e0 = json_array_get(json_object_get(json_array_get(fx, 0), "edits"), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fx, 0), "description")),
	                    "replace 'arrivals 1' with 'arrivals 2'");
	assert_string_equal(json_string_value(json_object_get(e0, "file")), "dir/a.cake");
	assert_int_equal(json_integer_value(json_object_get(e0, "offset")), n1.off);
	assert_int_equal(json_integer_value(json_object_get(e0, "length")), 1);
	assert_int_equal(json_integer_value(json_object_get(e0, "line")), 2);
	assert_int_equal(json_integer_value(json_object_get(e0, "col")), n1.col);
	assert_string_equal(json_string_value(json_object_get(e0, "replacement")), "2");
	json_decref(j);
	sb_free(&b);

	/* SARIF: fixes / artifactChanges / replacements with an exact deletedRegion */
	diag_print_sarif(&b, &ss, &dl, NULL);
	j = parse_json(sb_str(&b));
	json_t *res = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "results");
	json_t *sf = json_object_get(json_array_get(res, 0), "fixes");
	assert_int_equal(json_array_size(sf), 2);
	json_t *f0 = json_array_get(sf, 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(f0, "description"), "text")),
	                    "replace 'arrivals 1' with 'arrivals 2'");
	json_t *ch = json_array_get(json_object_get(f0, "artifactChanges"), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(ch, "artifactLocation"), "uri")),
	                    "dir/a.cake");
	json_t *rep = json_array_get(json_object_get(ch, "replacements"), 0);
	json_t *del = json_object_get(rep, "deletedRegion");
	assert_int_equal(json_integer_value(json_object_get(del, "startLine")), 2);
	assert_int_equal(json_integer_value(json_object_get(del, "byteOffset")), n1.off);
	assert_int_equal(json_integer_value(json_object_get(del, "byteLength")), 1);
	assert_int_equal(json_integer_value(json_object_get(del, "endColumn")),
	                 json_integer_value(json_object_get(del, "startColumn")) + 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(rep, "insertedContent"), "text")), "2");
	/* an insertion is an empty region */
	json_t *r1 = json_array_get(res, 1);
	json_t *del1 = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(r1, "fixes"), 0), "artifactChanges"), 0), "replacements"), 0), "deletedRegion");
	assert_int_equal(json_integer_value(json_object_get(del1, "byteLength")), 0);
	assert_int_equal(json_integer_value(json_object_get(del1, "startColumn")),
	                 json_integer_value(json_object_get(del1, "endColumn")));
	/* a finding without fixes has no "fixes" key */
	DiagList one = {0};
	diag_add(&one, "CK-T-001", SEV_ERROR, n1, "plain");
	json_decref(j);
	sb_free(&b);
	diag_print_sarif(&b, &ss, &one, NULL);
	j = parse_json(sb_str(&b));
	res = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "results");
	assert_null(json_object_get(json_array_get(res, 0), "fixes"));
	json_decref(j);
	sb_free(&b);
	diag_free(&one);
	diag_free(&dl);
	src_free(&ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_counts_and_fields),
		cmocka_unit_test(test_cap_counts_but_drops),
		cmocka_unit_test(test_sort_is_stable),
		cmocka_unit_test(test_text_exact),
		cmocka_unit_test(test_text_empty_and_edges),
		cmocka_unit_test(test_text_multiline_crlf_related),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_sarif),
		cmocka_unit_test(test_sarif_columns_many),
		cmocka_unit_test(test_fixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
