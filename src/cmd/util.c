/*
 * util.c — what every subcommand shares: the usage-error line, the colour
 * rule and the printing of findings (see cmd.h).
 *
 * The colour rule lives here and nowhere else: colour only on a terminal,
 * never when NO_COLOR is set or TERM is "dumb", unless --color=always or
 * never says otherwise.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
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
