/*
 * report.c — `cake report`: the campaign report as one static HTML page
 * (src/harness/report.h).
 *
 *   cake report [--store PATH] [-o FILE] [--title TEXT] [--family F] [--campaign C]
 *               [--kernel K] [--shape S] [--gpu G]
 *
 * Writes the page (inline SVG, no JavaScript) to FILE (default report.html;
 * "-" is standard output): the evolution curve, predicted against measured
 * time, the verdict mix and the GPU runs the verifier saved, the frontier
 * with each candidate's IR diff from its parent, and the latest gate run's
 * rule impact. The filter options pick evaluations as `cake log` does.
 *
 * Exit status: 0 written, 2 bad usage, a store problem or an unwritable FILE.
 */
#include "cmd.h"
#include "../harness/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(int argc, char **argv)
{
	ReportOptions o = report_options();
	const char *spath = NULL, *outp = "report.html";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		int r = cmd_filter_option("report", argc, argv, &i, &o.filter);
		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
		         (!missing && (v = cli_optval(argc, argv, &i, "--output", &missing))))
			outp = v;
		else if ((v = cli_optval(argc, argv, &i, "--title", &missing)))
			o.title = v;
		else if (missing)
			return cmd_usage_error("report", "option '%s' needs a value", a);
		else
			return cmd_usage_error("report", "unknown argument '%s'", a);
	}
	Store *st = NULL;
	int rc = cmd_open_store("report", spath, &st);
	if (rc)
		return rc;
	StrBuf b = {0};
	char err[1024] = "";
	rc = report_html(st, &o, &b, err, sizeof err);
	store_close(st);
	if (rc) {
		fprintf(stderr, "cake report: %s\n", err);
		sb_free(&b);
		return 2;
	}
	if (!strcmp(outp, "-")) {
		cmd_emit(stdout, &b);
		sb_free(&b);
		return 0;
	}
	FILE *f = fopen(outp, "wb");
	if (!f || fwrite(b.s, 1, b.len, f) != b.len || fclose(f) != 0) {
		fprintf(stderr, "cake report: cannot write '%s': %s\n", outp, strerror(errno));
		sb_free(&b);
		return 2;
	}
	fprintf(stderr, "cake report: wrote %s (%zu bytes)\n", outp, b.len);
	sb_free(&b);
	return 0;
}
