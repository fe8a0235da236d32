/*
 * log.c — `cake log`: the store's evaluations, newest first.
 *
 *   cake log [--family F] [--campaign C] [--verdict V] [--kernel K] [--shape S]
 *            [--candidate ID] [--gpu G] [--harness KEY] [--limit N]
 *            [--store PATH] [--format=text|json]
 *
 * A thin wrapper over store_list_evals and store_print_evals: the text table
 * puts the predicted time, the measured median and their ratio (PRED/MEAS)
 * side by side wherever both exist; JSON is the cake-evals/1 document, whose
 * evaluations carry predicted_us and median_us. The filters are shared with
 * `cake export` (cmd_filter_option). An empty answer is not an error: it
 * prints "no evaluations" (or count 0) with status 0.
 *
 * Exit status: 0 listed (maybe nothing), 1 --candidate matched no candidate
 * or several, 2 bad usage or a store that cannot be read.
 */
#include "cmd.h"

#include <string.h>

int cmd_log(int argc, char **argv)
{
	StoreFilter f = {0};
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		int r;
		if ((r = cmd_filter_option("log", argc, argv, &i, &f)) || (r = cmd_format_option("log", argc, argv, &i, &fmt))) {
			if (r == 2)
				return 2;
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if (missing)
			return cmd_usage_error("log", "option '%s' needs a value", argv[i]);
		else if (argv[i][0] == '-')
			return cmd_usage_error("log", "unknown option '%s'", argv[i]);
		else
			return cmd_usage_error("log", "unexpected argument '%s' (filters are options: --family F, --kernel K, ...)",
			                       argv[i]);
	}
	Store *st;
	if (cmd_open_store("log", spath, &st))
		return 2;
	Arena a;
	arena_init(&a);
	StoreEval *e;
	int n, status = 0;
	StoreStatus s = store_list_evals(st, &f, &a, &e, &n);
	if (s != STORE_OK)
		status = cmd_store_failed("log", st, s);
	else {
		StrBuf b = {0};
		store_print_evals(&b, e, n, fmt);
		cmd_emit(stdout, &b);
		sb_free(&b);
	}
	arena_free(&a);
	store_close(st);
	return status;
}
