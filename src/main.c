/*
 * main.c — the `cake` command-line driver.
 *
 * The driver owns nothing clever: it parses the command line, loads files,
 * runs the passes in order and prints what they found. The pipeline for one
 * file is a flat list of calls in check_file(), one line per stage, in the
 * spirit of QBE's main.c; `--dump=STAGE` prints the state after that stage
 * (to stderr, so stdout stays a clean diagnostics document) and the pipeline
 * carries on.
 *
 * Subcommands are a table (name, handler, one-line summary). Each handler
 * returns the process exit status:
 *   0  clean, or only warnings/notes
 *   1  the input has errors (or `fmt --check` found a file not canonical)
 *   2  usage error or an I/O problem (missing file, directory, write failure)
 *  69  `run` / `build --emit=cubin` found no CUDA driver or NVRTC
 * Findings of every file are collected into one DiagList, sorted and printed
 * once, so `--format=json` and `--format=sarif` always yield one document.
 *
 * This is the only file allowed global state, and it has none beyond the
 * read-only command table.
 */
#include "base/diag.h"
#include "front/front.h"
#include "verify/verify.h"
#include "lower/lower.h"
#include "gpu/gpu.h"
#include "cmd/cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum Dump { DUMP_NONE, DUMP_TOKENS, DUMP_AST, DUMP_SEMA } Dump;
typedef enum Color { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } Color;

typedef struct CheckOpts {
	DiagFormat format;
	Dump dump;
	bool verify;
	Color color;
} CheckOpts;

static int cmd_check(int argc, char **argv);
static int cmd_fmt(int argc, char **argv);
static int cmd_rules(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct Command {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the subcommand name */
	const char *usage;
} commands[] = {
	{"check", cmd_check,
	 "check [--format=text|json|sarif] [--dump=tokens|ast|sema] [--no-verify]\n"
	 "             [--color=auto|always|never] FILE...\n"
	 "      parse, type-check and verify Cake IR files; print every finding"},
	{"fmt", cmd_fmt,
	 "fmt [-w|--write] [--check] FILE...\n"
	 "      print canonical text; -w rewrites files in place, --check lists files\n"
	 "      that are not canonical"},
	{"rules", cmd_rules,
	 "rules [--format=text|json|markdown]\n"
	 "      list every verifier and front-end rule (ID, authority, rationale)"},
	/* build_main lives in src/lower/build_cmd.c (owned by the lowering). */
	{"build", build_main,
	 "build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME] [--debug-hang]\n"
	 "             [--no-verify] [--allow-spills]\n"
	 "      derive and lower to CUDA C++ (or a plan, or a cubin through NVRTC)"},
	/* run_main lives in src/gpu/run.c (owned by the GPU runner). */
	{"run", run_main,
	 "run FILE [NAME=VALUE...] [--kernel NAME] [--seed N] [--timeout SEC] [--time]\n"
	 "           [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]\n"
	 "           [--format=text|json] [--debug-hang] [--no-verify] [--device N]\n"
	 "      JIT through NVRTC, run isolated on the GPU, check against an oracle, time"},
	/* kmeans_main lives in src/gpu/kmeans_cmd.c (the k-means family). */
	{"kmeans", kmeans_main,
	 "kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N] [--tol T]\n"
	 "           [--seed S] [--input FILE] [--check-rows N] [--no-check] [--kernels DIR]\n"
	 "           [--device N] [--format=text|json]\n"
	 "      Lloyd's k-means on the GPU with the kernels/kmeans kernels: iterations, inertia, time"},
	{"tactics", cmd_tactics,
	 "tactics [--format=text|json]\n"
	 "      list the tactics (named, parameterized IR rewrites) with their parameters"},
	{"apply", cmd_apply,
	 "apply TACTIC[:ARGS] FILE [--kernel NAME]\n"
	 "      apply one tactic to a kernel and print the rewritten program (see docs/TACTICS.md)"},
	{"help", cmd_help,
	 "help\n"
	 "      print this message"},
};

/* ---- small helpers ---- */

static void usage(FILE *f)
{
	fprintf(f, "usage: cake COMMAND [OPTIONS] [FILE...]\n\ncommands:\n");
	for (size_t i = 0; i < NELEM(commands); i++)
		fprintf(f, "  cake %s\n", commands[i].usage);
	fprintf(f, "\n  cake --version\n      print the compiler and verifier versions\n"
	        "\nexit status: 0 clean (warnings allowed), 1 errors found, 2 usage or I/O problem,\n"
	        "69 no CUDA driver / NVRTC for a command that needs one\n"
	        "FILE may be '-' to read standard input. See docs/CLI.md.\n");
}

/* Print "cake CMD: message" and the usage hint to stderr; returns 2. */
static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "cake%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cake help' for usage.\n");
	return 2;
}

/* Write the buffer to f. */
static void emit(FILE *f, StrBuf *b)
{
	if (b->len)
		fwrite(b->s, 1, b->len, f);
	fflush(f);
}

static bool use_color(Color c, int fd)
{
	if (c != COLOR_AUTO)
		return c == COLOR_ALWAYS;
	const char *term = getenv("TERM");
	return isatty(fd) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

/* Load path ("-" = stdin) into ss. Returns the index, or -1 after printing
 * "cake: cannot read 'path': reason" to stderr. */
static int load_source(SourceSet *ss, const char *path)
{
	if (strcmp(path, "-") == 0) {
		StrBuf b = {0};
		char buf[65536];
		size_t r;
		while ((r = fread(buf, 1, sizeof buf, stdin)) > 0)
			sb_putn(&b, buf, r);
		if (ferror(stdin)) {
			fprintf(stderr, "cake: cannot read standard input: %s\n", strerror(errno));
			sb_free(&b);
			return -1;
		}
		int i = src_add(ss, "<stdin>", b.s ? b.s : "", b.len);
		sb_free(&b);
		return i;
	}
	int i = src_load(ss, path);
	if (i < 0)
		fprintf(stderr, "cake: cannot read '%s': %s\n", path, strerror(errno));
	return i;
}

/* ---- dumps (debug views after a stage; to stderr) ---- */

static void dump_tokens(Ctx *c, int file)
{
	/* lex into a scratch list: parse_file lexes again and reports for real */
	DiagList scratch = {0};
	DiagList *real = c->diags;
	c->diags = &scratch;
	int n;
	Token *t = lex_file(c, file, &n);
	c->diags = real;
	diag_free(&scratch);
	StrBuf b = {0};
	const char *path = c->srcs->files[file].path;
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%s:%d:%d: %s '%.*s'\n", path, t[i].span.line, t[i].span.col,
		          tok_name(t[i].kind), t[i].n, t[i].p ? t[i].p : "");
	emit(stderr, &b);
	sb_free(&b);
}

static void dump_program(const Program *p, const char *stage)
{
	StrBuf b = {0};
	sb_printf(&b, "# --dump=%s\n", stage);
	print_program(&b, p);
	emit(stderr, &b);
	sb_free(&b);
}

/* ---- cake check ---- */

/* The pipeline for one file, one stage per line. Findings accumulate in dl;
 * sema runs only on a file that parsed cleanly (a recovered tree would only
 * produce cascades), the verifier only on kernels that passed sema. */
static void check_file(const CheckOpts *o, SourceSet *ss, DiagList *dl, int file)
{
	Ctx c;
	ctx_init(&c, ss, dl);
	int errs = dl->nerr;
	if (o->dump == DUMP_TOKENS)
		dump_tokens(&c, file);
	Program *p = parse_file(&c, file);
	if (o->dump == DUMP_AST)
		dump_program(p, "ast");
	if (dl->nerr == errs) {
		sema_program(&c, p);
		if (o->dump == DUMP_SEMA)
			dump_program(p, "sema");
		for (int i = 0; o->verify && i < p->nkernels; i++)
			if (p->kernels[i]->sema_ok)
				verify_kernel(&c, p->kernels[i]);
	}
	ctx_free(&c);
}

static int cmd_check(int argc, char **argv)
{
	CheckOpts o = {FMT_TEXT, DUMP_NONE, true, COLOR_AUTO};
	const char **files = xmalloc(sizeof(char *) * (size_t)argc);
	int nfiles = 0, rc = 0;
	bool only_files = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
			files[nfiles++] = a;
		} else if (strcmp(a, "--") == 0) {
			only_files = true;
		} else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") == 0)
				o.format = FMT_TEXT;
			else if (strcmp(v, "json") == 0)
				o.format = FMT_JSON;
			else if (strcmp(v, "sarif") == 0)
				o.format = FMT_SARIF;
			else {
				rc = usage_error("check", "unknown format '%s' (expected text, json or sarif)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--dump", &missing))) {
			if (strcmp(v, "tokens") == 0)
				o.dump = DUMP_TOKENS;
			else if (strcmp(v, "ast") == 0)
				o.dump = DUMP_AST;
			else if (strcmp(v, "sema") == 0)
				o.dump = DUMP_SEMA;
			else {
				rc = usage_error("check", "unknown dump stage '%s' (expected tokens, ast or sema)", v);
				goto out;
			}
		} else if ((v = cli_optval(argc, argv, &i, "--color", &missing))) {
			if (strcmp(v, "auto") == 0)
				o.color = COLOR_AUTO;
			else if (strcmp(v, "always") == 0)
				o.color = COLOR_ALWAYS;
			else if (strcmp(v, "never") == 0)
				o.color = COLOR_NEVER;
			else {
				rc = usage_error("check", "unknown color mode '%s' (expected auto, always or never)", v);
				goto out;
			}
		} else if (strcmp(a, "--no-verify") == 0) {
			o.verify = false;
		} else if (missing) {
			rc = usage_error("check", "option '%s' needs a value", a);
			goto out;
		} else {
			rc = usage_error("check", "unknown option '%s'", a);
			goto out;
		}
	}
	if (nfiles == 0) {
		rc = usage_error("check", "no input files%s", "");
		goto out;
	}

	SourceSet ss = {0};
	DiagList dl = {0};
	int loaded = 0;
	for (int i = 0; i < nfiles; i++) {
		int f = load_source(&ss, files[i]);
		if (f < 0) {
			rc = 2;
			continue;
		}
		loaded++;
		check_file(&o, &ss, &dl, f);
	}
	diag_sort(&dl);
	StrBuf out = {0};
	if (o.format == FMT_JSON)
		diag_print_json(&out, &ss, &dl, verifier_version());
	else if (o.format == FMT_SARIF)
		diag_print_sarif(&out, &ss, &dl, verifier_version());
	else
		diag_print_text(&out, &ss, &dl, use_color(o.color, STDOUT_FILENO));
	if (loaded > 0)
		emit(stdout, &out);
	sb_free(&out);
	if (rc == 0 && dl.nerr > 0)
		rc = 1;
	diag_free(&dl);
	src_free(&ss);
out:
	free(files);
	return rc;
}

/* ---- cake fmt ---- */

static int cmd_fmt(int argc, char **argv)
{
	bool write = false, check = false, only_files = false;
	const char **files = xmalloc(sizeof(char *) * (size_t)argc);
	int nfiles = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0)
			files[nfiles++] = a;
		else if (strcmp(a, "--") == 0)
			only_files = true;
		else if (strcmp(a, "-w") == 0 || strcmp(a, "--write") == 0)
			write = true;
		else if (strcmp(a, "--check") == 0)
			check = true;
		else {
			rc = usage_error("fmt", "unknown option '%s'", a);
			goto out;
		}
	}
	if (nfiles == 0) {
		rc = usage_error("fmt", "no input files%s", "");
		goto out;
	}
	if (write && check) {
		rc = usage_error("fmt", "-w and --check cannot be combined%s", "");
		goto out;
	}

	SourceSet ss = {0};
	for (int i = 0; i < nfiles; i++) {
		if (write && strcmp(files[i], "-") == 0) {
			rc = usage_error("fmt", "cannot rewrite standard input in place (drop -w)%s", "");
			continue;
		}
		int f = load_source(&ss, files[i]);
		if (f < 0) {
			rc = 2;
			continue;
		}
		DiagList dl = {0};
		Ctx c;
		ctx_init(&c, &ss, &dl);
		Program *p = parse_file(&c, f);
		if (dl.nerr > 0) {
			/* never print or write a partially recovered tree */
			diag_sort(&dl);
			StrBuf e = {0};
			diag_print_text(&e, &ss, &dl, use_color(COLOR_AUTO, STDERR_FILENO));
			sb_printf(&e, "cake fmt: '%s' has syntax errors; left unchanged\n", files[i]);
			emit(stderr, &e);
			sb_free(&e);
			if (rc < 1)
				rc = 1;
		} else {
			StrBuf t = {0};
			print_program(&t, p);
			const Source *s = &ss.files[f];
			bool same = t.len == s->len && memcmp(sb_str(&t), s->text, s->len) == 0;
			if (check) {
				if (!same) {
					printf("%s\n", files[i]);
					if (rc < 1)
						rc = 1;
				}
			} else if (write) {
				if (!same && write_file_atomic(files[i], t.s ? t.s : "", t.len) != 0) {
					fprintf(stderr, "cake fmt: cannot write '%s': %s\n", files[i],
					        strerror(errno));
					rc = 2;
				}
			} else {
				emit(stdout, &t);
			}
			sb_free(&t);
		}
		ctx_free(&c);
		diag_free(&dl);
	}
	fflush(stdout);
	src_free(&ss);
out:
	free(files);
	return rc;
}

/* ---- cake rules ---- */

static int cmd_rules(int argc, char **argv)
{
	const char *format = "text";
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0 && strcmp(v, "markdown") != 0)
				return usage_error("rules", "unknown format '%s' (expected text, json or markdown)", v);
			format = v;
		} else if (missing) {
			return usage_error("rules", "option '%s' needs a value", argv[i]);
		} else {
			return usage_error("rules", argv[i][0] == '-' ? "unknown option '%s'"
			                   : "unexpected argument '%s'", argv[i]);
		}
	}
	StrBuf b = {0};
	rules_print(&b, format);
	emit(stdout, &b);
	sb_free(&b);
	return 0;
}

/* ---- help, version, dispatch ---- */

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return cmd_help(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("cake " CAKE_VERSION " (verifier %s)\n", verifier_version());
		return 0;
	}
	for (size_t i = 0; i < NELEM(commands); i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
			return cmd_help(argc - 1, argv + 1);
		return commands[i].run(argc - 1, argv + 1);
	}
	if (cmd[0] == '-')
		return usage_error(NULL, "unknown option '%s'", cmd);
	return usage_error(NULL, "unknown command '%s'", cmd);
}
