/*
 * eval.c — `cake eval`: evaluate one candidate and record it in the store.
 *
 *   cake eval FILE --shape NAME=V,... [--kernel NAME] [--store PATH] [--force]
 *             [--dry-run] [--seed N] [--iters N] [--timeout SEC] [--no-time]
 *             [--campaign NAME] [--origin ORIGIN] [--parent ID] [--skip-rule ID]...
 *             [--format=text|json]
 *
 * Checks, ranks, builds, runs and records (src/harness/eval.c). A
 * (candidate, shape, harness) already judged is served from the store unless
 * --force; a verifier rejection is recorded with its findings at no GPU
 * cost. The predicted time comes from the ranking seam (src/harness/rank.h):
 * the cost model (src/cost/cost.h), whose version is recorded. --parent names the
 * candidate this one was derived from (a stored candidate's id or unique
 * prefix, resolved to the full id), so that `cake diff ID` can show the change.
 * --skip-rule ID (repeatable) judges as a past harness without that verifier
 * rule did: its findings are dropped and the verifier version recorded says
 * so ("v1-xxxxxxxx-without:ID"). It exists to rebuild the history of a rule
 * on a GPU (bench/outer_example.sh) and to measure a rule's impact with
 * `cake gate --store`; the search loop never uses it.
 *
 * Exit status: 0 ok (or dry_run), 1 any other verdict, 2 bad usage or a store
 * problem, 69 no GPU (the no_gpu verdict is still recorded; use --dry-run).
 */
#include "cmd.h"
#include "../harness/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int eval_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake eval: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake eval FILE --shape NAME=V,... [--kernel NAME] [--store PATH] [--force] [--dry-run]\n"
	                "                 [--seed N] [--iters N] [--timeout SEC] [--no-time] [--campaign NAME]\n"
	                "                 [--origin human|agent:NAME|tactic:NAME:ARGS] [--parent ID] [--skip-rule ID]...\n"
	                "                 [--format=text|json]\n");
	return 2;
}

static void num(StrBuf *b, const char *key, double v)
{
	if (isnan(v))
		sb_printf(b, ",\"%s\":null", key);
	else
		sb_printf(b, ",\"%s\":%.3f", key, v);
}

/* Print one evaluation (shared by eval and evolve's JSON lines). */
static void print_json(StrBuf *b, const EvalResult *r)
{
	sb_puts(b, "{\"candidate\":");
	sb_json_str(b, r->cand);
	sb_puts(b, ",\"kernel\":");
	sb_json_str(b, r->kernel);
	sb_puts(b, ",\"family\":");
	if (r->family[0])
		sb_json_str(b, r->family);
	else
		sb_puts(b, "null");
	sb_puts(b, ",\"shape\":");
	sb_json_str(b, r->shape);
	sb_puts(b, ",\"verdict\":");
	sb_json_str(b, store_verdict_name(r->verdict));
	sb_printf(b, ",\"cached\":%s,\"eval_id\":%lld", r->cached ? "true" : "false", (long long)r->eval_id);
	num(b, "predicted_us", r->has_pred ? r->pred.us : NAN);
	num(b, "median_us", r->median_us);
	num(b, "min_us", r->min_us);
	num(b, "max_us", r->max_us);
	if (isnan(r->rel_err))
		sb_puts(b, ",\"rel_err\":null");
	else
		sb_printf(b, ",\"rel_err\":%.3e", r->rel_err);
	sb_printf(b, ",\"errors\":%d,\"warnings\":%d,\"message\":", r->nerr, r->nwarn);
	sb_json_str(b, r->message);
	sb_puts(b, "}\n");
}

int cmd_eval(int argc, char **argv)
{
	EvalRequest req = eval_request();
	req.run.time = true;
	req.run.iters = 30;
	const char *file = NULL, *spath = NULL, *parent = NULL;
	const char *skip[17] = {0};
	int nskip = 0;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--shape", &missing)))
			req.shape = v;
		else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing)))
			req.kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--campaign", &missing)))
			req.campaign = v;
		else if ((v = cli_optval(argc, argv, &i, "--origin", &missing)))
			req.origin = v;
		else if ((v = cli_optval(argc, argv, &i, "--parent", &missing)))
			parent = v;
		else if ((v = cli_optval(argc, argv, &i, "--skip-rule", &missing))) {
			const Rule *r = rule_find(v);
			if (!r || r->cat == CAT_LANGUAGE || r->cat == CAT_LOWERING)
				return eval_usage("--skip-rule needs a verifier rule ID (see 'cake rules'), got '%s'", v);
			if (nskip == 16)
				return eval_usage("at most 16 --skip-rule options (got '%s' as the 17th)", v);
			skip[nskip++] = r->id;
			req.skip_rules = skip;
		}
		else if ((v = cli_optval(argc, argv, &i, "--seed", &missing)))
			req.run.seed = strtoull(v, NULL, 0);
		else if ((v = cli_optval(argc, argv, &i, "--iters", &missing))) {
			req.run.iters = atoi(v);
			if (req.run.iters < 1)
				return eval_usage("--iters needs a positive count, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--timeout", &missing))) {
			req.run.timeout_s = atof(v);
			if (req.run.timeout_s <= 0)
				return eval_usage("--timeout needs a positive number of seconds, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return eval_usage("unknown --format '%s' (text or json)", v);
			json = !strcmp(v, "json");
		} else if (missing)
			return eval_usage("option '%s' needs a value", a);
		else if (!strcmp(a, "--force"))
			req.force = true;
		else if (!strcmp(a, "--dry-run"))
			req.dry_run = true;
		else if (!strcmp(a, "--no-time"))
			req.run.time = false;
		else if (a[0] == '-' && a[1])
			return eval_usage("unknown option '%s'", a);
		else if (file)
			return eval_usage("one FILE at a time (got a second: '%s')", a);
		else
			file = a;
	}
	if (!file)
		return eval_usage("%s", "no input FILE");
	if (!req.shape)
		return eval_usage("%s", "--shape NAME=VALUE,... is required (every dim of the kernel)");
	size_t len;
	char *text = read_file(file, &len);
	if (!text) {
		fprintf(stderr, "cake eval: cannot read '%s'\n", file);
		return 2;
	}
	StrBuf err = {0};
	Store *st = NULL;
	if (store_open(spath, STORE_CREATE, &st, &err) != STORE_OK) {
		fprintf(stderr, "cake eval: %s\n", sb_str(&err));
		sb_free(&err);
		free(text);
		return 2;
	}
	char parent_id[STORE_ID_LEN + 1];
	if (parent) {
		StoreStatus ps = store_resolve(st, parent, parent_id);
		if (ps != STORE_OK) {
			fprintf(stderr, "cake eval: --parent: %s\n", store_errmsg(st));
			store_close(st);
			sb_free(&err);
			free(text);
			return 2;
		}
		req.parent = parent_id;
	}
	req.text = text;
	req.len = len;
	req.name = file;
	req.store = st;
	SourceSet ss = {0};
	EvalResult r;
	EvalStatus es = eval_candidate(&req, &ss, &r);
	int status;
	if (es == EVAL_BAD_REQUEST || es == EVAL_STORE_ERROR || es == EVAL_BUSY) {
		fprintf(stderr, "cake eval: %s\n", r.message);
		status = es == EVAL_BUSY ? 1 : 2;
	} else {
		if (r.diags.nerr)
			cmd_print_diags(&ss, &r.diags);
		StrBuf b = {0};
		if (json) {
			print_json(&b, &r);
		} else {
			sb_printf(&b, "cake eval: %s kernel %s shape %s%s\n", r.cand, r.kernel, r.shape, r.cached ? " (from the store)" : "");
			if (r.has_pred)
				sb_printf(&b, "  predicted: %.1f us (%s)%s%s\n", r.pred.us, rank_model_version(), r.pred.why[0] ? ": " : "",
				          r.pred.why);
			if (!isnan(r.median_us))
				sb_printf(&b, "  measured:  median %.1f us, min %.1f, max %.1f on %s\n", r.median_us, r.min_us, r.max_us,
				          r.device);
			sb_printf(&b, "  recorded:  evaluation %lld in %s\n", (long long)r.eval_id, store_path(st));
			sb_printf(&b, "verdict: %s%s%s\n", store_verdict_name(r.verdict), r.message[0] ? ": " : "", r.message);
		}
		cmd_emit(stdout, &b);
		sb_free(&b);
		status = r.verdict == STORE_V_OK || r.verdict == STORE_V_DRY_RUN ? 0
		       : r.verdict == STORE_V_NO_GPU ? GPU_EXIT_NO_DRIVER : 1;
	}
	eval_result_free(&r);
	src_free(&ss);
	store_close(st);
	sb_free(&err);
	free(text);
	return status;
}
