/*
 * costreport.c — the cost model's report for one kernel at one shape (see
 * costreport.h): the one place that binds a shape, takes the kernel's work
 * (its family's rates, or the plan's own counts), predicts with the newest
 * model version of the target and prints the prediction with its parts,
 * bottleneck and suggestions. `cake cost`, `cake check --cost` and the MCP
 * server's `cost` tool all print through it.
 */
#include "costreport.h"
#include "eval.h"
#include "../cost/cost.h"

#include <stdlib.h>
#include <string.h>

int cost_report(StrBuf *out, const Plan *p, const char *shape, const char *target, const char *model_path,
                     bool json, char *err, size_t n)
{
	const GpuInfo *g = cost_target(target ? target : "h200", err, n);
	if (!g)
		return 1;
	CostModel m;
	if (!cost_model_load(g, model_path, &m, NULL, 0, err, n))
		return 2;
	const Kernel *k = p->kernel;
	long long dims[LAUNCH_MAX_DIMS] = {0};
	if (k->ndims > LAUNCH_MAX_DIMS) {
		snprintf(err, n, "kernel '%s' has more dims than the launch layer binds", k->name);
		return 2;
	}
	if (!eval_bind_shape(k, shape, dims, err, n))
		return 2;
	const Family *f = family_of_kernel(k);
	CostCounts c;
	CostWork w;
	if (!rank_work(p, dims, f, &c, &w, err, n))
		return 2;
	const char *failed = NULL;
	bool in_domain = eval_domain(k, dims, &failed);
	CostPrediction pr;
	cost_predict(&c, &w, g, &m, &pr);
	StrBuf canon = {0};
	store_shape_canon(shape, &canon);
	if (json) {
		sb_puts(out, "{\"kernel\":");
		sb_json_str(out, k->name);
		sb_puts(out, ",\"shape\":");
		sb_json_str(out, sb_str(&canon));
		sb_puts(out, ",\"family\":");
		if (f)
			sb_json_str(out, f->name);
		else
			sb_puts(out, "null");
		sb_puts(out, ",\"in_domain\":");
		sb_puts(out, in_domain ? "true" : "false");
		sb_puts(out, ",\"cost\":");
		cost_print_json(out, &pr, &c, &w);
		sb_puts(out, "}\n");
	} else {
		sb_printf(out, "cost of kernel %s at %s (%s)\n", k->name, sb_str(&canon),
		          f ? f->name : "no family: work counted off the plan");
		if (!in_domain)
			sb_printf(out, "note: the shape is outside the kernel's domain (%s): the launch would refuse it\n",
			          failed ? failed : "?");
		cost_print_text(out, &pr, &c, &w);
	}
	free((void *)failed);
	sb_free(&canon);
	return 0;
}

