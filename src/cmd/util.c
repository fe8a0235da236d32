/*
 * util.c — what every subcommand shares: the usage-error line, the colour
 * rule and the printing of findings (see cmd.h).
 *
 * The colour rule lives here and nowhere else: colour only on a terminal,
 * never when NO_COLOR is set or TERM is "dumb", unless --color=always or
 * never says otherwise.
 *
 * The query commands' helpers open a store without STORE_CREATE and refuse
 * a zero-length file themselves (store_open would initialise it), so that
 * reading never makes a store; they check a filter's verdict name, shape and
 * limit before the store is opened, so a typo is a usage error (status 2)
 * that lists what is accepted, not an empty answer.
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "cake%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cake help' for usage.\n");
	return 2;
}

bool cmd_use_color(CmdColor c, int fd)
{
	if (c != COLOR_AUTO)
		return c == COLOR_ALWAYS;
	const char *term = getenv("TERM");
	return isatty(fd) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

bool cmd_parse_color(const char *v, CmdColor *c)
{
	if (!strcmp(v, "auto"))
		*c = COLOR_AUTO;
	else if (!strcmp(v, "always"))
		*c = COLOR_ALWAYS;
	else if (!strcmp(v, "never"))
		*c = COLOR_NEVER;
	else
		return false;
	return true;
}

void cmd_emit(FILE *f, StrBuf *b)
{
	if (b->len)
		fwrite(b->s, 1, b->len, f);
	fflush(f);
}

void cmd_print_diags(SourceSet *ss, DiagList *dl)
{
	if (!dl->n)
		return;
	StrBuf b = {0};
	diag_sort(dl);
	diag_print_text(&b, ss, dl, cmd_use_color(COLOR_AUTO, STDERR_FILENO));
	cmd_emit(stderr, &b);
	sb_free(&b);
}

bool cmd_parse_stage(const char *v, int *stage)
{
	if (!strcmp(v, "ast")) {
		*stage = CAKE_PARSE;
		return true;
	}
	return cake_stage_from(v, stage);
}

static int no_store(const char *cmd, const char *path, const char *why)
{
	fprintf(stderr, "cake %s: no store at '%s'%s: 'cake eval' or 'cake evolve' makes one as it records "
	        "evaluations; pass --store PATH to read another\n", cmd, path, why);
	return 2;
}

int cmd_open_store(const char *cmd, const char *path, Store **st)
{
	const char *p = path ? path : STORE_DEFAULT_PATH;
	struct stat sb;
	*st = NULL;
	bool have = stat(p, &sb) == 0;
	if (!have && (errno == ENOENT || errno == ENOTDIR))
		return no_store(cmd, p, "");
	if (have && S_ISREG(sb.st_mode) && sb.st_size == 0)
		return no_store(cmd, p, " (the file is empty)");
	StrBuf err = {0};
	StoreStatus s = store_open(p, 0, st, &err);
	if (s == STORE_MISSING)   /* removed between the stat and the open */
		no_store(cmd, p, "");
	else if (s != STORE_OK)
		fprintf(stderr, "cake %s: %s\n", cmd, sb_str(&err));
	sb_free(&err);
	return s == STORE_OK ? 0 : 2;
}

/* "ok, mismatch, ..., dry_run" */
static void verdict_list(StrBuf *b)
{
	for (int v = 1; v < STORE_NVERDICT; v++)
		sb_printf(b, "%s%s", v > 1 ? ", " : "", store_verdict_name((StoreVerdict)v));
}

int cmd_filter_option(const char *cmd, int argc, char **argv, int *i, StoreFilter *f)
{
	static const char *const names[] = {"--family", "--campaign", "--verdict", "--kernel", "--shape",
	                                    "--candidate", "--gpu", "--harness", "--limit"};
	const char *v = NULL;
	bool missing = false;
	size_t k = 0;
	for (; k < NELEM(names) && !v && !missing; k++)
		v = cli_optval(argc, argv, i, names[k], &missing);
	if (missing)
		return cmd_usage_error(cmd, "option '%s' needs a value", argv[*i]);
	if (!v)
		return 0;
	const char *name = names[k - 1];
	if (!strcmp(name, "--verdict")) {
		if (store_verdict_parse(v) == STORE_V_NONE) {
			StrBuf b = {0};
			verdict_list(&b);
			fprintf(stderr, "cake %s: unknown verdict '%s' (expected one of: %s)\nTry 'cake help' for usage.\n",
			        cmd, v, sb_str(&b));
			sb_free(&b);
			return 2;
		}
		f->verdict = v;
	} else if (!strcmp(name, "--shape")) {
		StrBuf b = {0};
		StoreStatus s = store_shape_canon(v, &b);
		sb_free(&b);
		if (s != STORE_OK)
			return cmd_usage_error(cmd, "bad --shape '%s' (expected NAME=VALUE,..., e.g. M=4096,N=4096,K=4096)", v);
		f->shape = v;
	} else if (!strcmp(name, "--limit")) {
		char *end;
		long n = strtol(v, &end, 10);
		if (!*v || *end || n < 1 || n > 1000000000)
			return cmd_usage_error(cmd, "--limit needs a positive count, got '%s'", v);
		f->limit = (int)n;
	} else if (!strcmp(name, "--family"))
		f->family = v;
	else if (!strcmp(name, "--campaign"))
		f->campaign = v;
	else if (!strcmp(name, "--kernel"))
		f->kernel = v;
	else if (!strcmp(name, "--candidate"))
		f->cand = v;
	else if (!strcmp(name, "--gpu"))
		f->gpu = v;
	else
		f->harness = v;
	return 1;
}

int cmd_format_option(const char *cmd, int argc, char **argv, int *i, StoreFormat *fmt)
{
	bool missing = false;
	const char *v = cli_optval(argc, argv, i, "--format", &missing);
	if (missing)
		return cmd_usage_error(cmd, "option '%s' needs a value", argv[*i]);
	if (!v)
		return 0;
	if (strcmp(v, "text") && strcmp(v, "json"))
		return cmd_usage_error(cmd, "unknown format '%s' (expected text or json)", v);
	*fmt = strcmp(v, "json") ? STORE_FMT_TEXT : STORE_FMT_JSON;
	return 1;
}

int cmd_store_failed(const char *cmd, Store *st, StoreStatus s)
{
	fprintf(stderr, "cake %s: %s\n", cmd, store_errmsg(st));
	return s == STORE_NOT_FOUND || s == STORE_AMBIGUOUS ? 1 : 2;
}
