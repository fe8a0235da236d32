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
 * shuffles at the model's shuffle cost and wgmma FLOPs by their share of the predicted
 * tensor time against the vector time, and apportions the prediction's vector and tensor parts to them by their share of
 * their role's operations: where the model thinks the time goes, line by line. The shares
 * are the model's, not a profile: it counts issued element operations, not latency.
 */
#include "costreport.h"
#include "eval.h"
#include "../cost/cost.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(COST_REPORT_MAX_LINES == COST_MAX_STMTS, "costreport.h's limit is the walk's statement table");

#define REPORT_ROLES 64

/* One statement of the table: its weight for the ranking and its shares of its role's work. */
typedef struct Ranked {
	const CostStmt *s;
	double v;          /* vector operations, shuffles weighed at the model's shuffle cost */
	double w;          /* the rank: v plus its wgmma FLOPs in vector-equivalent operations */
	double vs, fs;     /* shares of its role's vector operations and wgmma FLOPs */
	bool crit;         /* a statement of the main loop's role: the prediction's parts apportioned */
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
	double role_v[REPORT_ROLES] = {0}, role_f[REPORT_ROLES] = {0};
	Ranked r[COST_MAX_STMTS];
	int n = 0;
	for (int i = 0; i < c->nstmts; i++, n++) {
		const CostStmt *s = &c->stmts[i];
		r[n] = (Ranked){.s = s, .v = s->vec_ops + sc * s->shfl};
		if (s->role >= 0 && s->role < REPORT_ROLES)
			role_v[s->role] += r[n].v, role_f[s->role] += s->mma_flops;
	}
	for (int i = 0; i < n; i++) {
		const CostStmt *s = r[i].s;
		bool known = s->role >= 0 && s->role < REPORT_ROLES;
		r[i].vs = known && role_v[s->role] > 0 ? r[i].v / role_v[s->role] : 0;
		r[i].fs = known && role_f[s->role] > 0 ? s->mma_flops / role_f[s->role] : 0;
		r[i].crit = c->loop_role && s->role >= 0 && s->role < p->nroles && !strcmp(p->roles[s->role].name, c->loop_role);
		/* wgmma work ranks by its share of the tensor time, in the role's vector operations per
		 * microsecond of vector time */
		r[i].w = r[i].v;
		if (s->mma_flops > 0 && known && pr->vector_us > 0 && role_v[s->role] > 0)
			r[i].w += r[i].fs * pr->tensor_us / pr->vector_us * role_v[s->role];
		else if (s->mma_flops > 0)
			r[i].w += s->mma_flops / 64;   /* no vector work to weigh against: a rough rank */
	}
	qsort(r, (size_t)n, sizeof r[0], ranked_cmp);
	if (lines > n)
		lines = n;
	bool rest = c->stmt_rest.vec_ops + c->stmt_rest.mma_flops > 0;
	if (json)
		sb_puts(out, ",\"lines\":[");
	else {
		sb_printf(out, "statements, by the work counted per tile (the %d heaviest of %d%s; vector and tensor time of role %s apportioned by share):\n",
		          lines, c->nstmts + rest, rest ? ", the rest summed" : "", c->loop_role ? c->loop_role : "(none)");
		sb_printf(out, "  %-10s %-8s %12s %7s %10s %12s %7s %10s %8s\n", "line:col", "role", "vector ops", "share", "vector us", "wgmma FLOP",
		          "share", "tensor us", "waits");
	}
	for (int i = 0; i < lines; i++) {
		const Ranked *t = &r[i];
		const CostStmt *s = t->s;
		const char *role = s->role >= 0 && s->role < p->nroles ? p->roles[s->role].name : "?";
		if (json) {
			sb_printf(out, "%s{\"line\":%d,\"col\":%d,\"role\":", i ? "," : "", s->line, s->col);
			sb_json_str(out, role);
			sb_printf(out, ",\"vec_ops\":%.6g,\"shuffles\":%.6g,\"mma_flops\":%.6g,\"bytes\":%.6g,\"waits\":%.6g,"
			          "\"vector_share\":%.4f,\"tensor_share\":%.4f,\"vector_us\":%.3f,\"tensor_us\":%.3f}",
			          s->vec_ops, s->shfl, s->mma_flops, s->bytes, s->waits, t->vs, t->fs, t->crit ? t->vs * pr->vector_us : 0,
			          t->crit ? t->fs * pr->tensor_us : 0);
			continue;
		}
		char lc[32], vu[16] = "-", fu[16] = "-";
		snprintf(lc, sizeof lc, "%d:%d", s->line, s->col);
		if (t->crit) {
			snprintf(vu, sizeof vu, "%.1f", t->vs * pr->vector_us);
			snprintf(fu, sizeof fu, "%.1f", t->fs * pr->tensor_us);
		}
		sb_printf(out, "  %-10s %-8s %12.4g %6.1f%% %10s %12.4g %6.1f%% %10s %8.4g\n", lc, role, t->v, 100 * t->vs, vu, s->mma_flops,
		          100 * t->fs, fu, s->waits);
	}
	if (json)
		sb_puts(out, "]");
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

