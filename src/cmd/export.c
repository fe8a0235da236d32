/*
 * export.c — `cake export`: the measurement set as JSON lines.
 *
 *   cake export [--family F] [--campaign C] [--verdict V] [--kernel K] [--shape S]
 *               [--candidate ID] [--gpu G] [--harness KEY] [--limit N]
 *               [-o FILE] [--store PATH]
 *
 * store_export_jsonl's cake-measure/1 lines (docs/STORE.md), oldest first,
 * one evaluation each: the file that is committed for cost-model calibration
 * (store files never are). The filters are `cake log`'s; --limit keeps the
 * newest N. Without -o the lines go to stdout; with -o FILE they replace FILE
 * atomically (a temporary file renamed over it) and one line on stderr says
 * how many were written. An empty selection is an empty file, status 0. The
 * format is fixed, so there is no --format.
 *
 * Exit status: 0 written, 1 --candidate matched no candidate or several,
 * 2 bad usage, a store that cannot be read, or a write that failed.
 */
#include "cmd.h"

#include <errno.h>
#include <string.h>

int cmd_export(int argc, char **argv)
{
	StoreFilter f = {0};
	const char *spath = NULL, *outp = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		int r;
		if ((r = cmd_filter_option("export", argc, argv, &i, &f))) {
			if (r == 2)
				return 2;
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
		         (!missing && (v = cli_optval(argc, argv, &i, "--output", &missing))))
			outp = v;
		else if (missing)
			return cmd_usage_error("export", "option '%s' needs a value", argv[i]);
		else if (!strncmp(argv[i], "--format", 8))
			return cmd_usage_error("export", "'%s': the export is always JSON lines (cake-measure/1); "
			                       "'cake log --format=json' prints one document", argv[i]);
		else if (argv[i][0] == '-')
			return cmd_usage_error("export", "unknown option '%s'", argv[i]);
		else
			return cmd_usage_error("export", "unexpected argument '%s' (write to a file with -o FILE)", argv[i]);
	}
	Store *st;
	if (cmd_open_store("export", spath, &st))
		return 2;
	StrBuf b = {0};
	int n = 0, status = 0;
	StoreStatus s = store_export_jsonl(st, &f, &b, &n);
	if (s != STORE_OK)
		status = cmd_store_failed("export", st, s);
	else if (!outp || !strcmp(outp, "-"))
		cmd_emit(stdout, &b);
	else if (write_file_atomic(outp, b.s ? b.s : "", b.len) != 0) {
		fprintf(stderr, "cake export: cannot write '%s': %s\n", outp, strerror(errno));
		status = 2;
	} else
		fprintf(stderr, "cake export: %d evaluation%s to %s\n", n, n == 1 ? "" : "s", outp);
	sb_free(&b);
	store_close(st);
	return status;
}
