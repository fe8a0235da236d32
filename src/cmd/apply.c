/*
 * apply.c — `cake apply TACTIC[:ARGS] FILE [--kernel NAME]`.
 *
 * Applies one tactic (src/harness/tactics.c) to one kernel of FILE (the
 * first kernel without --kernel; "-" reads standard input) and prints the
 * whole rewritten program, canonical and without comments, on stdout. Exit
 * status and messages:
 *
 *   0  the rewritten program is on stdout
 *   1  the tactic does not apply: "cake apply: TACTIC does not apply: REASON";
 *      or the input has errors (its diagnostics, then one line, on stderr),
 *      or has no such kernel
 *   2  usage: unknown tactic, bad tactic arguments, missing operands,
 *      unknown options, an unreadable file
 *
 * Nothing is written to stdout unless the tactic applied, so
 * `cake apply stages:5 k.cake > k5.cake` never leaves half a program.
 */
#include "cmd.h"
#include "../harness/tactics.h"

#include <errno.h>
#include <string.h>

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake apply: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake apply TACTIC[:ARGS] FILE [--kernel NAME]  (see 'cake tactics')\n");
	return 2;
}

static int load(SourceSet *ss, const char *path)
{
	if (strcmp(path, "-") != 0) {
		int f = src_load(ss, path);
		if (f < 0)
			fprintf(stderr, "cake: cannot read '%s': %s\n", path, strerror(errno));
		return f;
	}
	StrBuf b = {0};
	char buf[65536];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, stdin)) > 0)
		sb_putn(&b, buf, r);
	int f = -1;
	if (ferror(stdin))
		fprintf(stderr, "cake: cannot read standard input: %s\n", strerror(errno));
	else
		f = src_add(ss, "<stdin>", sb_str(&b), b.len);
	sb_free(&b);
	return f;
}

int cmd_apply(int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL}, *kernel = NULL;
	int npos = 0;
	bool only = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if (only || a[0] != '-' || strcmp(a, "-") == 0) {
			if (npos == 2)
				return usage("unexpected argument '%s'", a);
			pos[npos++] = a;
		} else if (strcmp(a, "--") == 0) {
			only = true;
		} else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing))) {
			kernel = v;
		} else if (missing) {
			return usage("option '%s' needs a value", a);
		} else {
			return usage("unknown option '%s'", a);
		}
	}
	if (npos < 2)
		return usage(npos == 0 ? "expected a tactic and a file%s" : "expected a file after '%s'", npos ? pos[0] : "");
	SourceSet ss = {0};
	DiagList dl = {0};
	int rc = 0;
	int f = load(&ss, pos[1]);
	if (f < 0) {
		src_free(&ss);
		return 2;
	}
	StrBuf out = {0}, why = {0};
	TacticStatus st = tactic_apply_source(&ss, f, &dl, pos[0], kernel, &out, &why);
	switch (st) {
	case TACTIC_OK:
		fwrite(sb_str(&out), 1, out.len, stdout);
		fflush(stdout);
		break;
	case TACTIC_NOT_APPLICABLE:
	case TACTIC_REJECTED:
		fprintf(stderr, "cake apply: %s does not apply: %s\n", pos[0], sb_str(&why));
		rc = 1;
		break;
	case TACTIC_BAD_SPEC:
		rc = usage("%s", sb_str(&why));
		break;
	case TACTIC_BAD_INPUT: {
		StrBuf d = {0};
		diag_sort(&dl);
		diag_print_text(&d, &ss, &dl, false);
		if (dl.nerr > 0)
			fwrite(sb_str(&d), 1, d.len, stderr);
		sb_free(&d);
		fprintf(stderr, "cake apply: %s\n", sb_str(&why));
		rc = 1;
		break;
	}
	case TACTIC_BROKEN:
		fprintf(stderr, "cake apply: %s failed: %s\n", pos[0], sb_str(&why));
		rc = 1;
		break;
	}
	sb_free(&out);
	sb_free(&why);
	diag_free(&dl);
	src_free(&ss);
	return rc;
}
