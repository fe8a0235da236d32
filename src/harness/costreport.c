/*
 * costreport.c — the cost model's report for one kernel at one shape (see
 * costreport.h): the one place that binds a shape, takes the kernel's work
 * (its family's rates, or the plan's own counts), predicts with the newest
 * model version of the target and prints the prediction with its parts,
 * bottleneck and suggestions. `cake cost`, `cake check --cost` and the MCP
 * server's `cost` tool all print through it.
 *
 * The statement table (`cake cost --lines N`) ranks the statements by the work the walk
 * counted for them per tile (cost_count's CostStmt), weighing vector operations, lane
 * shuffles at the model's shuffle cost and wgmma FLOPs at the model's ratio of the two
 * rates, and apportions the prediction's vector and tensor parts to them by their share of
 * their role's operations: where the model thinks the time goes, line by line. The shares
 * are the model's, not a profile: it counts issued element operations, not latency.
 */
#include "costreport.h"
#include "eval.h"
#include "../cost/cost.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(COST_REPORT_MAX_LINES == COST_MAX_STMTS, "costreport.h's limit is the walk's statement table");

typedef struct Ranked {
	const CostStmt *s;
	double w;   /* vector-equivalent operations */
} Ranked;

static int ranked_cmp(const void *a, const void *b)
{
	double x = ((const Ranked *)a)->w, y = ((const Ranked *)b)->w;
	return (x < y) - (x > y);
}

/* The statement table: the `lines` heaviest statements of c, by vector-equivalent work. */
static void report_lines(StrBuf *out, const Plan *p, const CostCounts *c, const CostPrediction *pr, const CostModel *m,
                         int lines, bool json)
{
	double sc = m->c[CC_SHFL_COST];
	double role_v[64] = {0}, role_f[64] = {0};
	Ranked r[COST_MAX_STMTS];
	int n = 0;
	for (int i = 0; i < c->nstmts; i++) {
		const CostStmt *s = &c->stmts[i];
		double v = s->vec_ops + sc * s->shfl;
		if (s->role >= 0 && s->role < 64)
			role_v[s->role] += v, role_f[s->role] += s->mma_flops;
		r[n].s = s, r[n].w = v;
		n++;
	}
	/* wgmma work ranks by its tensor time against the vector time of the same role */
	for (int i = 0; i < n; i++) {
		const CostStmt *s = r[i].s;
		if (s->mma_flops > 0 && s->role >= 0 && s->role < 64 && role_f[s->role] > 0 && pr->vector_us > 0 && role_v[s->role] > 0)
			r[i].w += s->mma_flops / role_f[s->role] * pr->tensor_us / pr->vector_us * role_v[s->role];
		else if (s->mma_flops > 0)
			r[i].w += s->mma_flops / 64;   /* no vector work to weigh against: a rough rank */
	}
	qsort(r, (size_t)n, sizeof r[0], ranked_cmp);
	if (lines > n)
		lines = n;
	if (json) {
		sb_puts(out, ",\"lines\":[");
		for (int i = 0; i < lines; i++) {
			const CostStmt *s = r[i].s;
			double vs = s->role >= 0 && s->role < 64 && role_v[s->role] > 0 ? (s->vec_ops + sc * s->shfl) / role_v[s->role] : 0;
			double fs = s->role >= 0 && s->role < 64 && role_f[s->role] > 0 ? s->mma_flops / role_f[s->role] : 0;
			bool crit = c->loop_role && s->role >= 0 && s->role < p->nroles && !strcmp(p->roles[s->role].name, c->loop_role);
			sb_printf(out, "%s{\"line\":%d,\"col\":%d,\"role\":", i ? "," : "", s->line, s->col);
			sb_json_str(out, s->role >= 0 && s->role < p->nroles ? p->roles[s->role].name : "?");
			sb_printf(out, ",\"vec_ops\":%.6g,\"shuffles\":%.6g,\"mma_flops\":%.6g,\"bytes\":%.6g,\"waits\":%.6g,"
			          "\"vector_share\":%.4f,\"tensor_share\":%.4f,\"vector_us\":%.3f,\"tensor_us\":%.3f}",
			          s->vec_ops, s->shfl, s->mma_flops, s->bytes, s->waits, vs, fs, crit ? vs * pr->vector_us : 0,
			          crit ? fs * pr->tensor_us : 0);
		}
		sb_puts(out, "]");
		return;
	}
	sb_printf(out, "statements, by the work counted per tile (the %d heaviest of %d%s; vector and tensor time of role %s apportioned by share):\n",
	          lines, c->nstmts + (c->stmt_rest.vec_ops + c->stmt_rest.mma_flops > 0), c->stmt_rest.vec_ops + c->stmt_rest.mma_flops > 0 ? ", the rest summed" : "",
	          c->loop_role ? c->loop_role : "(none)");
	sb_printf(out, "  %-10s %-8s %12s %7s %10s %12s %7s %10s %8s\n", "line:col", "role", "vector ops", "share", "vector us", "wgmma FLOP",
	          "share", "tensor us", "waits");
	for (int i = 0; i < lines; i++) {
		const CostStmt *s = r[i].s;
		double v = s->vec_ops + sc * s->shfl;
		double vs = s->role >= 0 && s->role < 64 && role_v[s->role] > 0 ? v / role_v[s->role] : 0;
		double fs = s->role >= 0 && s->role < 64 && role_f[s->role] > 0 ? s->mma_flops / role_f[s->role] : 0;
		bool crit = c->loop_role && s->role >= 0 && s->role < p->nroles && !strcmp(p->roles[s->role].name, c->loop_role);
		char lc[32];
		snprintf(lc, sizeof lc, "%d:%d", s->line, s->col);
		sb_printf(out, "  %-10s %-8s %12.4g %6.1f%% ", lc, s->role >= 0 && s->role < p->nroles ? p->roles[s->role].name : "?", v, 100 * vs);
		if (crit)
			sb_printf(out, "%10.1f ", vs * pr->vector_us);
		else
			sb_printf(out, "%10s ", "-");
		sb_printf(out, "%12.4g %6.1f%% ", s->mma_flops, 100 * fs);
		if (crit)
			sb_printf(out, "%10.1f ", fs * pr->tensor_us);
		else
			sb_printf(out, "%10s ", "-");
		sb_printf(out, "%8.4g\n", s->waits);
	}
}

int cost_report(StrBuf *out, const Plan *p, const char *shape, const char *target, const char *model_path,
                     bool json, int lines, char *err, size_t n)
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
		if (lines > 0)
			report_lines(out, p, &c, &pr, &m, lines, true);
		sb_puts(out, "}\n");
	} else {
		sb_printf(out, "cost of kernel %s at %s (%s)\n", k->name, sb_str(&canon),
		          f ? f->name : "no family: work counted off the plan");
		if (!in_domain)
			sb_printf(out, "note: the shape is outside the kernel's domain (%s): the launch would refuse it\n",
			          failed ? failed : "?");
		cost_print_text(out, &pr, &c, &w);
		if (lines > 0)
			report_lines(out, p, &c, &pr, &m, lines, false);
	}
	free((void *)failed);
	sb_free(&canon);
	return 0;
}

