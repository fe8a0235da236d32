/*
 * families.c — `cake families`: the kernel families a `family NAME` clause
 * may name (src/family/), with their parameter contracts and tolerances.
 *
 *   cake families [--format=text|json]
 */
#include "cmd.h"

#include <string.h>

int cmd_families(int argc, char **argv)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return cmd_usage_error("families", "unknown format '%s' (expected text or json)", v);
			json = !strcmp(v, "json");
		} else if (missing) {
			return cmd_usage_error("families", "option '%s' needs a value", argv[i]);
		} else {
			return cmd_usage_error("families", argv[i][0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'",
			                       argv[i]);
		}
	}
	FamilyTable t = family_builtin();
	StrBuf b = {0};
	if (json)
		sb_puts(&b, "{\"families\":[");
	for (int i = 0; i < t.n; i++) {
		const Family *f = t.f[i];
		if (json) {
			sb_puts(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
			sb_json_str(&b, f->name);
			sb_puts(&b, ",\"module\":");
			sb_json_str(&b, f->module);
			sb_puts(&b, ",\"summary\":");
			sb_json_str(&b, f->summary);
			sb_puts(&b, ",\"params\":");
			sb_json_str(&b, f->params);
			sb_puts(&b, ",\"tolerance\":");
			sb_json_str(&b, f->tolerance);
			sb_printf(&b, ",\"oracle\":%s,\"refusals\":%s,\"structured_inputs\":%s,\"in_place\":[", f->check ? "true" : "false",
			          f->refuse ? "true" : "false", f->inputs ? "true" : "false");
			for (int j = 0; f->inout && f->inout[j]; j++) {
				if (j)
					sb_putc(&b, ',');
				sb_json_str(&b, f->inout[j]);
			}
			sb_puts(&b, "]}");
		} else {
			sb_printf(&b, "%-18s %-10s %s\n", f->name, f->module, f->summary);
			sb_printf(&b, "%-18s params     %s\n", "", f->params);
			sb_printf(&b, "%-18s tolerance  %s\n", "", f->tolerance);
			if (f->inout && f->inout[0])
				sb_printf(&b, "%-18s in place   %s\n", "", f->inout[0]);
		}
	}
	if (json)
		sb_puts(&b, "\n]}\n");
	cmd_emit(stdout, &b);
	sb_free(&b);
	return 0;
}
