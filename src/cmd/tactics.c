/*
 * tactics.c — `cake tactics`: list the tactic registry.
 *
 * A thin wrapper over tactics_print() (src/harness/tactics.c): text is one
 * line per tactic, NAME:PARAMS and its summary, after a header with the
 * tactic-set version; json is one document (schema cake-tactics/1) with the
 * version and, per tactic, its name, version, parameter spelling and summary.
 */
#include "cmd.h"
#include "../harness/tactics.h"

#include <string.h>

int cmd_tactics(int argc, char **argv)
{
	const char *format = "text";
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0) {
				fprintf(stderr, "cake tactics: unknown format '%s' (expected text or json)\n"
				        "Try 'cake help' for usage.\n", v);
				return 2;
			}
			format = v;
		} else {
			fprintf(stderr, "cake tactics: %s '%s'\nTry 'cake help' for usage.\n",
			        missing ? "option needs a value:" : argv[i][0] == '-' ? "unknown option" : "unexpected argument",
			        argv[i]);
			return 2;
		}
	}
	StrBuf b = {0};
	tactics_print(&b, format);
	fwrite(sb_str(&b), 1, b.len, stdout);
	fflush(stdout);
	sb_free(&b);
	return 0;
}
