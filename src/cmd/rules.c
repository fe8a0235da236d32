/*
 * rules.c — `cake rules`: the rule registry (src/base/registry.c).
 *
 *   cake rules [--format=text|json|markdown]
 *
 * markdown is docs/RULES.md byte for byte (`make docs` writes it).
 */
#include "cmd.h"

#include <string.h>

int cmd_rules(int argc, char **argv)
{
	const char *format = "text";
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0 && strcmp(v, "markdown") != 0)
				return cmd_usage_error("rules", "unknown format '%s' (expected text, json or markdown)", v);
			format = v;
		} else if (missing) {
			return cmd_usage_error("rules", "option '%s' needs a value", argv[i]);
		} else {
			return cmd_usage_error("rules", argv[i][0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'",
			                       argv[i]);
		}
	}
	StrBuf b = {0};
	rules_print(&b, format);
	cmd_emit(stdout, &b);
	sb_free(&b);
	return 0;
}
