/*
 * fuzz_check.c — libFuzzer target for the whole checking front half.
 *
 * For each input: a fresh Ctx; lex + parse; when the parse is clean, the
 * formatter's round-trip law (parse(print(p)) is clean and prints the same
 * bytes, otherwise abort), then sema and, for every kernel sema accepted,
 * the verifier; finally the three diagnostic printers (text, JSON, SARIF).
 * Everything is freed, so LeakSanitizer sees any leak. This is the same
 * order of passes `cake check` runs (sema only after a clean parse).
 *
 *   make fuzz
 *   build/fuzz/fuzz_check -max_total_time=660 -max_len=65536 -timeout=10 \
 *       -rss_limit_mb=4096 -dict=tests/fuzz/cake.dict build/fuzz/corpus tests/fuzz/seeds
 *
 * (libFuzzer writes new inputs into the FIRST directory, so the scratch
 * corpus must come before the committed seeds.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The round-trip law of `cake fmt` on a cleanly parsed program. */
static void check_fmt(const Program *p)
{
	StrBuf a = {0}, b = {0};
	print_program(&a, p);
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	int f = src_add(&ss, "fmt.cake", sb_str(&a), a.len);
	ctx_init(&c, &ss, &dl);
	Program *q = parse_file(&c, f);
	if (dl.nerr != 0) {
		fprintf(stderr, "fmt output does not parse:\n%s", sb_str(&a));
		abort();
	}
	print_program(&b, q);
	if (a.len != b.len || memcmp(sb_str(&a), sb_str(&b), a.len) != 0) {
		fprintf(stderr, "fmt is not idempotent:\n--- first:\n%s--- second:\n%s", sb_str(&a),
		        sb_str(&b));
		abort();
	}
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	sb_free(&a);
	sb_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	/* the pipeline up to parse; the fmt law on a clean tree; then on to the verifier */
	CakeOptions o = cake_options(CAKE_PARSE);
	cake_compile_text(&u, &ss, &dl, "fuzz.cake", (const char *)data, size, &o);
	if (dl.nerr == 0)
		check_fmt(u.prog);
	cake_unit_free(&u);
	diag_free(&dl);
	o.until = CAKE_VERIFY;
	cake_compile(&u, &ss, &dl, 0, &o);
	StrBuf out = {0};
	diag_sort(&dl);
	diag_print_text(&out, &ss, &dl, false);
	diag_print_text(&out, &ss, &dl, true);
	diag_print_json(&out, &ss, &dl, verifier_version());
	diag_print_sarif(&out, &ss, &dl, verifier_version());
	sb_free(&out);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return 0;
}
