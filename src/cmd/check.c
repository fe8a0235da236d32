/*
 * check.c — `cake check`: parse, type-check and verify Cake IR files and
 * print every finding.
 *
 *   cake check [--format=text|json|sarif] [--dump-after=STAGE] [--dump=tokens]
 *              [--no-verify] [--fix] [--color=auto|always|never]
 *              [--cost --shape NAME=V,... [--target h200]] FILE...
 *
 * Each file goes through the pipeline (cake_compile) up to the verifier.
 * Findings of every file are collected into one DiagList, sorted and printed
 * once, so that --format=json and --format=sarif always yield one document.
 * Dumps go to standard error, so standard output stays a clean diagnostics
 * document; --dump=tokens shows the lexer's view of each file, and the
 * older --dump=ast|sema are --dump-after=parse|sema.
 *
 * --fix applies the machine-applicable fixes (diag_apply_fixes: the first
 * fix of each finding, overlapping edits skipped), rewrites each changed
 * file atomically, says so on stderr, then checks every file again and
 * prints what remains: the output and the exit status are those of the
 * repaired files. Standard input cannot be rewritten, so `--fix -` is a
 * usage error.
 *
 * --cost (text format only, needs --shape) also runs derive and, after the
 * findings, prints the cost model's summary of every kernel the shape
 * binds (cost_report, the same as `cake cost`).
 */
#include "cmd.h"
#include "../harness/costreport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The lexer's view of a file, to stderr (a scratch list takes its findings:
 * the parser lexes again and reports them for real). */
static void dump_tokens(SourceSet *ss, int file)
{
	DiagList scratch = {0};
	Ctx c;
	ctx_init(&c, ss, &scratch);
	int n;
	Token *t = lex_file(&c, file, &n);
	StrBuf b = {0};
	const char *path = ss->files[file].path;
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%s:%d:%d: %s '%.*s'\n", path, t[i].span.line, t[i].span.col, tok_name(t[i].kind), t[i].n,
		          t[i].p ? t[i].p : "");
	cmd_emit(stderr, &b);
	sb_free(&b);
	ctx_free(&c);
	diag_free(&scratch);
}

/* What --cost asks for: the shape, the GPU row, and where the summaries go. */
typedef struct CostReq {
	const char *shape, *target;
	StrBuf *out;                /* NULL: no --cost */
	int rc;                     /* 1 when a target was refused */
} CostReq;

/* Compile files[0..n) up to the verifier (derive with --cost) into ss and
 * dl; *loaded counts the files read. Returns 2 when a file cannot be read,
 * else 0. */
static int check_files(const char **files, int nfiles, const CakeOptions *o, bool tokens, SourceSet *ss,
                       DiagList *dl, int *loaded, CostReq *cost)
{
	int rc = 0;
	for (int i = 0; i < nfiles; i++) {
		CakeUnit u;
		int before = ss->n;
		if (tokens && strcmp(files[i], "-") != 0 && src_load(ss, files[i]) >= 0) {
			dump_tokens(ss, ss->n - 1);
			cake_compile(&u, ss, dl, ss->n - 1, o);
		} else {
			cake_compile_path(&u, ss, dl, files[i], o);
			if (tokens && ss->n > before)
				dump_tokens(ss, ss->n - 1);
		}
		if (u.status == 2) {
			fprintf(stderr, "cake: %s\n", u.error);
			rc = 2;
		} else {
			(*loaded)++;
		}
		for (int j = 0; cost && cost->out && j < u.nkernels; j++) {
			char err[512];
			if (!u.plans || !u.plans[j]) {
				sb_printf(cost->out, "cost of kernel %s: not derived (see the findings)\n", u.kernels[j]->name);
				continue;
			}
			int cr = cost_report(cost->out, u.plans[j], cost->shape, cost->target, NULL, false, 0, err, sizeof err);
			if (cr)
				sb_printf(cost->out, "cost of kernel %s: %s\n", u.kernels[j]->name, err);
			if (cr == 1)
				cost->rc = 1;
		}
		cake_unit_free(&u);
	}
	return rc;
}

int cmd_check(int argc, char **argv)
{
	DiagFormat format = FMT_TEXT;
	CmdColor color = COLOR_AUTO;
	CakeOptions o = cake_options(CAKE_VERIFY);
	bool tokens = false, only_files = false, fix = false, cost = false;
	const char *shape = NULL, *target = NULL;
	StrBuf costs = {0};
	const char **files = xmalloc(sizeof(char *) * (size_t)argc);
	int nfiles = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
			files[nfiles++] = a;
		} else if (strcmp(a, "--") == 0) {
			only_files = true;
		} else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") == 0)
				format = FMT_TEXT;
			else if (strcmp(v, "json") == 0)
				format = FMT_JSON;
			else if (strcmp(v, "sarif") == 0)
				format = FMT_SARIF;
			else {
				rc = cmd_usage_error("check", "unknown format '%s' (expected text, json or sarif)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--dump", &missing))) {
			if (strcmp(v, "tokens") == 0)
				tokens = true;
			else if ((strcmp(v, "ast") && strcmp(v, "sema")) || !cmd_parse_stage(v, &o.dump_after)) {
				rc = cmd_usage_error("check", "unknown dump stage '%s' (expected tokens, ast or sema)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--dump-after", &missing))) {
			if (!cake_stage_from(v, &o.dump_after) || o.dump_after > CAKE_VERIFY) {
				rc = cmd_usage_error("check", "unknown stage '%s' for check --dump-after (parse, sema or verify; "
				                     "cake build dumps later stages)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--color", &missing))) {
			if (!cmd_parse_color(v, &color)) {
				rc = cmd_usage_error("check", "unknown color mode '%s' (expected auto, always or never)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--shape", &missing))) {
			shape = v;
		} else if ((v = cli_optval(argc, argv, &i, "--target", &missing))) {
			target = v;
		} else if (strcmp(a, "--cost") == 0) {
			cost = true;
		} else if (strcmp(a, "--no-verify") == 0) {
			o.no_verify = true;
		} else if (strcmp(a, "--fix") == 0) {
			fix = true;
		} else if (missing) {
			rc = cmd_usage_error("check", "option '%s' needs a value", a);
			goto out;
		} else {
			rc = cmd_usage_error("check", "unknown option '%s'", a);
			goto out;
		}
	}
	if (nfiles == 0) {
		rc = cmd_usage_error("check", "no input files%s", "");
		goto out;
	}
	if (cost && (!shape || format != FMT_TEXT)) {
		rc = cmd_usage_error("check", "%s", !shape ? "--cost needs --shape NAME=V,..." :
		                     "--cost prints text; use cake cost --format=json for JSON");
		goto out;
	}
	if ((shape || target) && !cost) {
		rc = cmd_usage_error("check", "%s needs --cost", shape ? "--shape" : "--target");
		goto out;
	}
	CostReq creq = {shape, target, cost ? &costs : NULL, 0};
	if (cost)
		o.until = CAKE_DERIVE;

	SourceSet ss = {0};
	DiagList dl = {0};
	int loaded = 0;
	if (fix) {
		for (int i = 0; i < nfiles; i++)
			if (strcmp(files[i], "-") == 0) {
				rc = cmd_usage_error("check", "--fix cannot rewrite standard input (give a file)%s", "");
				goto out;
			}
		rc = check_files(files, nfiles, &o, false, &ss, &dl, &loaded, NULL);
		diag_sort(&dl);
		for (int fi = 0; fi < ss.n; fi++) {
			StrBuf t = {0};
			int n = diag_apply_fixes(&ss, &dl, fi, &t);
			const Source *f = &ss.files[fi];
			if (n > 0 && !(t.len == f->len && memcmp(sb_str(&t), f->text, f->len) == 0)) {
				if (write_file_atomic(f->path, t.s ? t.s : "", t.len) != 0) {
					fprintf(stderr, "cake check: cannot write '%s': %s\n", f->path, strerror(errno));
					rc = 2;
				} else {
					fprintf(stderr, "cake check: %s: applied %d fix%s\n", f->path, n, n == 1 ? "" : "es");
				}
			}
			sb_free(&t);
		}
		diag_free(&dl);
		src_free(&ss);
		loaded = 0;
		int rc2 = check_files(files, nfiles, &o, false, &ss, &dl, &loaded, &creq);
		if (rc == 0)
			rc = rc2;
	} else {
		rc = check_files(files, nfiles, &o, tokens, &ss, &dl, &loaded, &creq);
	}
	if (rc == 0)
		rc = creq.rc;
	diag_sort(&dl);
	StrBuf out = {0};
	if (format == FMT_JSON)
		diag_print_json(&out, &ss, &dl, verifier_version());
	else if (format == FMT_SARIF)
		diag_print_sarif(&out, &ss, &dl, verifier_version());
	else
		diag_print_text(&out, &ss, &dl, cmd_use_color(color, STDOUT_FILENO));
	if (loaded > 0) {
		if (costs.len)
			sb_printf(&out, "%s%s", out.len ? "\n" : "", sb_str(&costs));
		cmd_emit(stdout, &out);
	}
	sb_free(&out);
	if (rc == 0 && dl.nerr > 0)
		rc = 1;
	diag_free(&dl);
	src_free(&ss);
out:
	sb_free(&costs);
	free(files);
	return rc;
}
