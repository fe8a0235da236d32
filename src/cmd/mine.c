/*
 * mine.c — `cake mine`: failure mining over the store (src/harness/mine.h).
 *
 *   cake mine [--store PATH] [--family F] [--campaign C] [--kernel K]
 *             [--shape S] [--gpu G] [--max-ok PERCENT] [--format=text|json]
 *
 * Groups the GPU failures the verifier let through (hang, fault, mismatch,
 * launch_error) by the schedule features they share, with each shared
 * feature's frequency among the failures and among the ok runs, example
 * candidates, the rule family where a check belongs and how many of them
 * today's harness already blocks. The filter options pick evaluations as
 * `cake log` does. --max-ok (default 25) is the largest share of ok runs a
 * shared feature may appear in.
 *
 * Exit status: 0 (also when there is nothing to mine), 2 bad usage or a
 * store problem.
 */
#include "cmd.h"
#include "../harness/mine.h"

#include <stdlib.h>
#include <string.h>

int cmd_mine(int argc, char **argv)
{
	MineOptions o = mine_options();
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		int r = cmd_format_option("mine", argc, argv, &i, &fmt);
		if (r == 2)
			return 2;
		if (r)
			continue;
		r = cmd_filter_option("mine", argc, argv, &i, &o.filter);
		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--max-ok", &missing))) {
			char *end;
			double p = strtod(v, &end);
			if (*end || end == v || p < 0 || p > 100)
				return cmd_usage_error("mine", "--max-ok needs a percentage from 0 to 100, got '%s'", v);
			o.max_ok_freq = p / 100;
		} else if (missing)
			return cmd_usage_error("mine", "option '%s' needs a value", a);
		else
			return cmd_usage_error("mine", "unknown argument '%s'", a);
	}
	o.filter.limit = 0;
	Store *st = NULL;
	int rc = cmd_open_store("mine", spath, &st);
	if (rc)
		return rc;
	MineResult m;
	char err[1024] = "";
	rc = mine_store(st, &o, &m, err, sizeof err);
	if (rc) {
		fprintf(stderr, "cake mine: %s\n", err);
	} else {
		StrBuf b = {0};
		mine_print(&b, &m, fmt);
		cmd_emit(stdout, &b);
		sb_free(&b);
	}
	mine_free(&m);
	store_close(st);
	return rc;
}
