/*
 * calibrate.c — `cake calibrate`: fit the cost model to measured
 * evaluations and write the new model version.
 *
 *   cake calibrate [--family F] [--target h200] [--store PATH | --data FILE.jsonl...]
 *                  [--candidates FILE.jsonl]... [--sources DIR]... [--split candidate|group]
 *                  [--holdout N] [--lambda X] [--rank-weight W] [--version V]
 *                  [-o data/cost/h200-vN.json] [--format=text|json]
 *
 * Reads the measurements (a store's ok evaluations, or cake-measure/1
 * files: the store's export, with the cake-candidate/1 file of their texts
 * beside them), fits the coefficients on a deterministic split that holds
 * out one candidate in N (or whole (family, shape) groups), and reports per
 * family, on the held-out part: Kendall tau between predicted and measured times,
 * the median absolute percentage error and the top-3 hit rate
 * (src/harness/calibrate.h, docs/COST.md). With -o it writes the fitted
 * model (its version: --version, or the file's name without .json), which
 * every later command picks up when it is the highest-numbered version in
 * data/cost.
 *
 * Exit status: 0 fitted; 1 the target is refused or no row is usable; 2 bad
 * usage or an input / output file problem.
 */
#include "cmd.h"
#include "../harness/calibrate.h"

#include <stdlib.h>
#include <string.h>

static int cal_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake calibrate: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake calibrate [--family F] [--target h200] [--store PATH | --data FILE.jsonl...]\n"
	                "                      [--candidates FILE.jsonl]... [--sources DIR]... [--split candidate|group]\n"
	                "                      [--holdout N] [--lambda X] [--rank-weight W] [--version V]\n"
	                "                      [-o data/cost/h200-vN.json] [--format=text|json]\n");
	return 2;
}

int cmd_calibrate(int argc, char **argv)
{
	CalRequest req = cal_request();
	const char *out = NULL;
	bool json = false;
	char version[64] = "";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--family", &missing)))
			req.family = v;
		else if ((v = cli_optval(argc, argv, &i, "--target", &missing)))
			req.target = v;
		else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			req.store = v;
		else if ((v = cli_optval(argc, argv, &i, "--data", &missing))) {
			if (req.ndata == CAL_MAX_SOURCES)
				return cal_usage("at most 16 --data files (got '%s' past them)", v);
			req.data[req.ndata++] = v;
		} else if ((v = cli_optval(argc, argv, &i, "--candidates", &missing))) {
			if (req.ncandidates == CAL_MAX_SOURCES)
				return cal_usage("at most 16 --candidates files (got '%s' past them)", v);
			req.candidates[req.ncandidates++] = v;
		} else if ((v = cli_optval(argc, argv, &i, "--split", &missing))) {
			if (strcmp(v, "candidate") && strcmp(v, "group"))
				return cal_usage("unknown --split '%s' (candidate or group)", v);
			req.by_group = !strcmp(v, "group");
		} else if ((v = cli_optval(argc, argv, &i, "--sources", &missing))) {
			if (req.nsources == CAL_MAX_SOURCES)
				return cal_usage("at most 16 --sources (got '%s' past them)", v);
			req.sources[req.nsources++] = v;
		} else if ((v = cli_optval(argc, argv, &i, "--holdout", &missing))) {
			req.holdout = atoi(v);
			if (req.holdout < 1)
				return cal_usage("--holdout needs a positive N (hold out one group in N), got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--lambda", &missing))) {
			char *end;
			req.lambda = strtod(v, &end);
			if (*end || req.lambda < 0)
				return cal_usage("--lambda needs a number >= 0, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--rank-weight", &missing))) {
			char *end;
			req.rank_weight = strtod(v, &end);
			if (*end || req.rank_weight < 0)
				return cal_usage("--rank-weight needs a number >= 0, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--version", &missing))) {
			if (strlen(v) >= sizeof version || strchr(v, ';'))
				return cal_usage("--version '%s' is too long or holds ';'", v);
			snprintf(version, sizeof version, "%s", v);
		} else if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
		           (v = cli_optval(argc, argv, &i, "--output", &missing)))
			out = v;
		else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return cal_usage("unknown --format '%s' (text or json)", v);
			json = !strcmp(v, "json");
		} else if (missing)
			return cal_usage("option '%s' needs a value", a);
		else
			return cal_usage("unknown argument '%s'", a);
	}
	if ((req.store != NULL) == (req.ndata > 0))
		return cal_usage("%s", "give one of --store PATH and --data FILE.jsonl");
	if (!version[0] && out) {
		const char *base = strrchr(out, '/');
		base = base ? base + 1 : out;
		size_t l = strlen(base);
		if (l > 5 && !strcmp(base + l - 5, ".json"))
			l -= 5;
		snprintf(version, sizeof version, "%.*s", (int)(l < 63 ? l : 63), base);
	}
	req.version = version[0] ? version : NULL;
	CalReport rep;
	char err[1024];
	if (!cal_run(&req, &rep, err, sizeof err)) {
		fprintf(stderr, "cake calibrate: %s\n", err);
		bool usage = !strncmp(err, "cannot read", 11) || strstr(err, "store") != NULL;
		return usage ? 2 : 1;
	}
	int rc = 0;
	StrBuf b = {0};
	cal_print(&b, &rep, json);
	if (out) {
		StrBuf m = {0};
		cost_model_json(&m, &rep.fitted);
		if (write_file_atomic(out, m.s, m.len) != 0) {
			fprintf(stderr, "cake calibrate: cannot write '%s'\n", out);
			rc = 2;
		} else if (!json) {
			sb_printf(&b, "wrote %s (version %s)\n", out, rep.fitted.version);
		}
		sb_free(&m);
	}
	cmd_emit(stdout, &b);
	sb_free(&b);
	cal_report_free(&rep);
	return rc;
}
