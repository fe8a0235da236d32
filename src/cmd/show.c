/*
 * show.c — `cake show`: one candidate, its evaluations and their findings.
 *
 *   cake show ID [--store PATH] [--format=text|json]
 *
 * ID is a full candidate id or a unique prefix of one (any case). The text is
 * store_print_candidate's (id, family, origin, parent, created, the canonical
 * IR, the evaluation table), followed, for every evaluation with stored
 * findings (a verifier rejection records them), by a "findings of evaluation
 * N" block in store_print_diags' gcc-style lines. JSON is the
 * cake-candidate/1 document with one more field, "findings": one entry
 * {"eval", "verdict", "kernel", "shape", "diags"} per such evaluation, where
 * diags is the cake-store-diags/1 document.
 *
 * Exit status: 0 shown, 1 no candidate has that id or prefix, or the prefix
 * is ambiguous (the message lists matches), 2 bad usage (also an id that is
 * not hex) or a store that cannot be read.
 */
#include "cmd.h"

#include <string.h>

/* Drop the trailing newline of b. */
static void chomp(StrBuf *b)
{
	while (b->len && b->s[b->len - 1] == '\n')
		b->s[--b->len] = 0;
}

/* Drop the closing "}\n" of the JSON document in b so that fields can follow. */
static void reopen_object(StrBuf *b)
{
	chomp(b);
	if (b->len && b->s[b->len - 1] == '}')
		b->s[--b->len] = 0;
}

int cmd_show(int argc, char **argv)
{
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL, *id = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		int r = cmd_format_option("show", argc, argv, &i, &fmt);
		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if (missing)
			return cmd_usage_error("show", "option '%s' needs a value", argv[i]);
		else if (argv[i][0] == '-')
			return cmd_usage_error("show", "unknown option '%s'", argv[i]);
		else if (id)
			return cmd_usage_error("show", "one candidate at a time (got a second: '%s')", argv[i]);
		else
			id = argv[i];
	}
	if (!id)
		return cmd_usage_error("show", "%s", "no candidate ID (a full id or a unique prefix; see 'cake log')");
	Store *st;
	if (cmd_open_store("show", spath, &st))
		return 2;
	Arena a;
	arena_init(&a);
	StoreCandidate c;
	StoreEval *e = NULL;
	int n = 0, status = 0;
	StoreStatus s = store_get_candidate(st, id, &a, &c);
	if (s == STORE_OK)
		s = store_list_evals(st, &(StoreFilter){.cand = c.id}, &a, &e, &n);
	if (s != STORE_OK) {
		status = cmd_store_failed("show", st, s);
		goto out;
	}
	StrBuf b = {0};
	store_print_candidate(&b, &c, e, n, fmt);
	if (fmt == STORE_FMT_JSON) {
		reopen_object(&b);
		sb_puts(&b, ",\"findings\":[");
	}
	int shown = 0;
	for (int i = n - 1; i >= 0 && status == 0; i--) {   /* oldest first, like the file's history */
		StoreDiag *d;
		int nd;
		if ((s = store_eval_diags(st, e[i].id, &a, &d, &nd)) != STORE_OK) {
			status = cmd_store_failed("show", st, s);
			break;
		}
		if (!nd)
			continue;
		if (fmt == STORE_FMT_JSON) {
			sb_printf(&b, "%s{\"eval\":%lld,\"verdict\":\"%s\",\"kernel\":", shown ? "," : "", (long long)e[i].id,
			          store_verdict_name(e[i].verdict));
			sb_json_str(&b, e[i].kernel ? e[i].kernel : "");
			sb_puts(&b, ",\"shape\":");
			sb_json_str(&b, e[i].shape ? e[i].shape : "");
			sb_puts(&b, ",\"diags\":");
			store_print_diags(&b, d, nd, fmt);
			chomp(&b);
			sb_putc(&b, '}');
		} else {
			sb_printf(&b, "\nfindings of evaluation %lld (%s, kernel %s, shape %s):\n", (long long)e[i].id,
			          store_verdict_name(e[i].verdict), e[i].kernel ? e[i].kernel : "-",
			          e[i].shape && *e[i].shape ? e[i].shape : "-");
			store_print_diags(&b, d, nd, fmt);
		}
		shown++;
	}
	if (fmt == STORE_FMT_JSON)
		sb_puts(&b, "]}\n");
	if (status == 0)
		cmd_emit(stdout, &b);
	sb_free(&b);
out:
	arena_free(&a);
	store_close(st);
	return status;
}
