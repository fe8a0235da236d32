/*
 * cost.c — `cake cost`: the cost model's prediction for one kernel at one
 * shape, with its parts, the bottleneck and suggestions.
 *
 *   cake cost FILE --shape NAME=V,... [--kernel K] [--target h200]
 *             [--model FILE.json] [--lines N] [--format=text|json]
 *   cake cost --targets [--format=text|json]
 *
 * Compiles through the pipeline up to derive (cake_compile), binds the
 * shape, takes the kernel's work from its family's rates (or counts it off
 * the plan when it has none: rank_work), and predicts with the newest model
 * version of the target (src/cost/cost.h, docs/COST.md). --targets lists
 * the GPU rows with every fact and its source.
 *
 * Exit status: 0 predicted; 1 the program has errors, or the target is
 * unknown or not calibrated (the message names the calibrated ones); 2 bad
 * usage, a bad shape, or a model file that cannot be read.
 *
 * cost_report() is shared with `cake check --cost`.
 */
#include "cmd.h"
#include "../harness/eval.h"
#include "../harness/costreport.h"

#include <stdlib.h>
#include <string.h>

static int cost_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake cost: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake cost FILE --shape NAME=V,... [--kernel NAME] [--target h200] [--model FILE.json] [--lines N]\n"
	                "                 [--format=text|json]\n"
	                "       cake cost --targets [--format=text|json]\n");
	return 2;
}

static void fact(StrBuf *b, const char *key, const GpuFact *f, bool json, bool last)
{
	if (json) {
		sb_printf(b, "\"%s\":{\"value\":%.6g,\"source\":\"%s\",\"note\":", key, f->v, fact_source_name(f->kind));
		sb_json_str(b, f->src ? f->src : "");
		sb_printf(b, "}%s", last ? "" : ",");
	} else {
		sb_printf(b, "  %-16s %-12.6g %-9s %s\n", key, f->v, fact_source_name(f->kind), f->src ? f->src : "");
	}
}

static int list_targets(bool json)
{
	int n;
	const GpuInfo *g = gpu_rows(&n);
	StrBuf b = {0};
	if (json)
		sb_puts(&b, "{\"schema\":\"cake-cost-targets/1\",\"targets\":[");
	for (int i = 0; i < n; i++) {
		CostModel m;
		char from[512] = "", err[512] = "";
		bool have = g[i].calibrated && cost_model_load(&g[i], NULL, &m, from, sizeof from, err, sizeof err);
		if (json) {
			sb_printf(&b, "%s{\"name\":", i ? "," : "");
			sb_json_str(&b, g[i].name);
			sb_puts(&b, ",\"product\":");
			sb_json_str(&b, g[i].product);
			sb_puts(&b, ",\"compile_target\":");
			sb_json_str(&b, target_name(g[i].target));
			sb_printf(&b, ",\"calibrated\":%s,\"cost_model\":", g[i].calibrated ? "true" : "false");
			if (have)
				sb_json_str(&b, m.version);
			else
				sb_puts(&b, "null");
			sb_puts(&b, ",\"facts\":{");
		} else {
			sb_printf(&b, "%s (%s), compile target %s, %s", g[i].name, g[i].product, target_name(g[i].target),
			          g[i].calibrated ? "calibrated" : "declared, not calibrated: cake cost refuses it");
			if (have)
				sb_printf(&b, ", cost model %s (%s)", m.version, from);
			sb_puts(&b, "\n");
		}
		fact(&b, "sm_count", &g[i].sm_count, json, false);
		fact(&b, "sm_clock_ghz", &g[i].sm_clock_ghz, json, false);
		fact(&b, "hbm_bw", &g[i].hbm_bw, json, false);
		fact(&b, "l2_bytes", &g[i].l2_bytes, json, false);
		fact(&b, "l2_bw", &g[i].l2_bw, json, false);
		fact(&b, "l2_sm_bw", &g[i].l2_sm_bw, json, false);
		fact(&b, "mma_bf16", &g[i].mma_bf16, json, false);
		fact(&b, "mma_f16", &g[i].mma_f16, json, false);
		fact(&b, "mma_f8", &g[i].mma_f8, json, false);
		fact(&b, "mma_tf32", &g[i].mma_tf32, json, false);
		fact(&b, "tma_latency_us", &g[i].tma_latency_us, json, false);
		fact(&b, "gmem_latency_us", &g[i].gmem_latency_us, json, false);
		fact(&b, "mbar_latency_us", &g[i].mbar_latency_us, json, false);
		fact(&b, "launch_us", &g[i].launch_us, json, true);
		if (json)
			sb_puts(&b, "}}");
	}
	if (json)
		sb_puts(&b, "]}\n");
	cmd_emit(stdout, &b);
	sb_free(&b);
	return 0;
}

int cmd_cost(int argc, char **argv)
{
	const char *file = NULL, *shape = NULL, *kernel = NULL, *target = "h200", *model = NULL;
	bool json = false, targets = false;
	int lines = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--shape", &missing)))
			shape = v;
		else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing)))
			kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--target", &missing)))
			target = v;
		else if ((v = cli_optval(argc, argv, &i, "--model", &missing)))
			model = v;
		else if ((v = cli_optval(argc, argv, &i, "--lines", &missing))) {
			char *end;
			long x = strtol(v, &end, 10);
			if (*end || end == v || x < 1 || x > COST_REPORT_MAX_LINES) {
				char m[96];
				snprintf(m, sizeof m, "--lines takes a count of statements, 1..%d (got '%.40s')", COST_REPORT_MAX_LINES, v);
				return cost_usage("%s", m);
			}
			lines = (int)x;
		}
		else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return cost_usage("unknown --format '%s' (text or json)", v);
			json = !strcmp(v, "json");
		} else if (missing)
			return cost_usage("option '%s' needs a value", a);
		else if (!strcmp(a, "--targets"))
			targets = true;
		else if (a[0] == '-' && a[1])
			return cost_usage("unknown option '%s'", a);
		else if (file)
			return cost_usage("one FILE at a time (got a second: '%s')", a);
		else
			file = a;
	}
	if (targets)
		return list_targets(json);
	if (!file)
		return cost_usage("%s", "no input FILE");
	if (!shape)
		return cost_usage("%s", "--shape NAME=VALUE,... is required (every dim of the kernel)");
	char err[512];
	/* refuse an unknown or uncalibrated target before compiling anything */
	if (!cost_target(target, err, sizeof err)) {
		fprintf(stderr, "cake cost: %s\n", err);
		return 1;
	}
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeOptions o = cake_options(CAKE_DERIVE);
	o.kernel = kernel;
	CakeUnit u;
	int rc = 0;
	cake_compile_path(&u, &ss, &dl, file, &o);
	if (u.status == 2) {
		fprintf(stderr, "cake cost: %s\n", u.error);
		rc = 2;
		goto out;
	}
	if (dl.nerr || u.failed != CAKE_STAGE_NONE) {
		cmd_print_diags(&ss, &dl);
		if (u.error[0])
			fprintf(stderr, "cake cost: %s\n", u.error);
		rc = 1;
		goto out;
	}
	if (u.nkernels != 1) {
		fprintf(stderr, "cake cost: %s holds %d kernels; name one (--kernel)\n", file, u.nkernels);
		rc = 2;
		goto out;
	}
	StrBuf b = {0};
	rc = cost_report(&b, u.plans[0], shape, target, model, json, lines, err, sizeof err);
	if (rc)
		fprintf(stderr, "cake cost: %s\n", err);
	else
		cmd_emit(stdout, &b);
	sb_free(&b);
out:
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return rc;
}
