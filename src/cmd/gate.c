/*
 * gate.c — `cake gate`: the outer loop's gates (src/harness/gate.h).
 *
 *   cake gate [--root DIR] [--gpu] [--timeout SEC] [--format=text|json]
 *   cake gate --store PATH [--no-record] [--format=text|json]
 *   cake gate --store PATH --trace ID [--format=text|json]
 *
 * Without --store: the corpus gate over DIR (default the current
 * directory): valid programs check clean, known-bad programs are caught by
 * the rule their `# expect:` line names, every kernels/... kernel compiles to
 * an sm_90a cubin with 0 spills; --gpu also runs each family kernel's
 * correctness case on the GPU. Prints counts per class and each regression
 * (file, expected, got). Exit status: 0 green, 1 a regression, 2 bad usage
 * or no corpus under DIR, 69 --gpu without a GPU (and nothing regressed).
 *
 * With --store: rule impact on the store's history. Every stored work item
 * is re-judged by this binary's harness; each whose outcome changed is
 * printed with the rule it is charged to and its recorded GPU verdict, and
 * the run is recorded in the store (not with --no-record). Exit status: 0,
 * 1 when a rule now rejects a candidate that ran ok (a false positive), 2 a
 * store problem. --trace ID prints one candidate's history instead (1 when
 * no candidate matches).
 */
#include "cmd.h"
#include "../harness/gate.h"

#include <stdlib.h>
#include <string.h>

static int corpus(const GateOptions *o, StoreFormat fmt)
{
	GateReport r;
	char err[1024] = "";
	int rc = gate_corpus(o, &r, err, sizeof err);
	if (rc == 2) {
		fprintf(stderr, "cake gate: %s\n", err);
		return 2;
	}
	StrBuf b = {0};
	gate_print(&b, &r, fmt);
	cmd_emit(stdout, &b);
	sb_free(&b);
	gate_report_free(&r);
	return rc;
}

static int impact(const char *spath, bool record, const char *trace, StoreFormat fmt)
{
	Store *st = NULL;
	int rc = cmd_open_store("gate", spath, &st);
	if (rc)
		return rc;
	char err[1024] = "";
	StrBuf b = {0};
	if (trace) {
		rc = gate_trace(st, trace, &b, fmt, err, sizeof err);
	} else {
		GateImpact g;
		rc = gate_store(st, record, &g, err, sizeof err);
		if (rc != 2)
			gate_impact_print(&b, &g, fmt);
		gate_impact_free(&g);
	}
	if (err[0] && (trace ? rc != 0 : rc == 2))
		fprintf(stderr, "cake gate: %s\n", err);
	cmd_emit(stdout, &b);
	sb_free(&b);
	store_close(st);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	GateOptions o = gate_options();
	StoreFormat fmt = STORE_FMT_TEXT;
	const char *spath = NULL, *trace = NULL;
	bool record = true, have_root = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		int r = cmd_format_option("gate", argc, argv, &i, &fmt);
		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((v = cli_optval(argc, argv, &i, "--root", &missing))) {
			o.root = v;
			have_root = true;
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--trace", &missing)))
			trace = v;
		else if ((v = cli_optval(argc, argv, &i, "--timeout", &missing))) {
			o.run.timeout_s = atof(v);
			if (o.run.timeout_s <= 0)
				return cmd_usage_error("gate", "--timeout needs a positive number of seconds, got '%s'", v);
		} else if (missing)
			return cmd_usage_error("gate", "option '%s' needs a value", a);
		else if (!strcmp(a, "--gpu"))
			o.gpu = true;
		else if (!strcmp(a, "--no-record"))
			record = false;
		else if (a[0] == '-')
			return cmd_usage_error("gate", "unknown option '%s'", a);
		else
			return cmd_usage_error("gate", "unexpected argument '%s' (the corpus is found under --root DIR)", a);
	}
	if (trace && !spath)
		return cmd_usage_error("gate", "%s", "--trace needs --store PATH");
	if (spath && (o.gpu || have_root))
		return cmd_usage_error("gate", "%s", "--store re-judges a store; --gpu and --root belong to the corpus gate");
	if (!spath && !record)
		return cmd_usage_error("gate", "%s", "--no-record needs --store PATH");
	return spath ? impact(spath, record, trace, fmt) : corpus(&o, fmt);
}
