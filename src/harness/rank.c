/*
 * rank.c — the ranking seam over the cost model (rank.h).
 *
 * The model is loaded once per process (pthread_once): the GPU row of
 * CAKE_COST_TARGET (default h200) and its newest model version. A model
 * that cannot be loaded leaves the version "unavailable" and every
 * prediction false with the reason, so an evaluation is still recorded,
 * without a predicted time.
 */
#include "rank.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t model_once = PTHREAD_ONCE_INIT;
static const GpuInfo *model_gpu;
static CostModel model;
static char model_err[320];
static bool model_ok;

static void load_model(void)
{
	const char *t = getenv("CAKE_COST_TARGET");
	char err[300];
	model_gpu = cost_target(t && t[0] ? t : "h200", err, sizeof err);
	if (!model_gpu) {
		snprintf(model_err, sizeof model_err, "%s", err);
		snprintf(model.version, sizeof model.version, "unavailable");
		return;
	}
	model_ok = cost_model_load(model_gpu, NULL, &model, NULL, 0, err, sizeof err);
	if (!model_ok) {
		snprintf(model_err, sizeof model_err, "%s", err);
		snprintf(model.version, sizeof model.version, "unavailable");
	}
}

const char *rank_model_version(void)
{
	pthread_once(&model_once, load_model);
	return model.version;
}

bool rank_model(const GpuInfo **g, const CostModel **m, char *err, size_t n)
{
	pthread_once(&model_once, load_model);
	if (!model_ok) {
		snprintf(err, n, "%s", model_err);
		return false;
	}
	*g = model_gpu;
	*m = &model;
	return true;
}

bool rank_work(const Plan *p, const long long *dimvals, const Family *f, CostCounts *c, CostWork *w, char *err,
               size_t n)
{
	if (!cost_count(p, dimvals, c, err, n))
		return false;
	const Kernel *k = p->kernel;
	if (f && f->rates) {
		FamBuf *b = xcalloc((size_t)k->nparams + 1, sizeof *b);
		for (int i = 0; i < k->nparams; i++) {
			b[i].decl = k->params[i];
			b[i].rank = k->params[i]->rank;
			for (int r = 0; r < b[i].rank && k->params[i]->space == SP_GLOBAL; r++)
				if (!eval_expr(k->params[i]->shape[r], k, dimvals, &b[i].dims[r]))
					b[i].dims[r] = 1;
		}
		FamRun fr = {k, dimvals, b, 0, 0, 1, NULL, NULL};
		w->flops = w->bytes = 0;
		f->rates(&fr, &w->flops, &w->bytes);
		w->source = f->name;
		free(b);
	} else {
		cost_plan_work(c, w);
	}
	return true;
}

bool rank_predict(const Plan *p, const long long *dimvals, const Family *f, RankPrediction *out)
{
	memset(out, 0, sizeof *out);
	const GpuInfo *g;
	const CostModel *m;
	if (!rank_model(&g, &m, out->why, sizeof out->why))
		return false;
	CostCounts c;
	CostWork w;
	if (!rank_work(p, dimvals, f, &c, &w, out->why, sizeof out->why))
		return false;
	CostPrediction cp;
	cost_predict(&c, &w, g, m, &cp);
	out->us = cp.us;
	out->compute_us = cp.tensor_us;
	out->memory_us = cp.memory_us;
	out->fill_us = cp.fill_us;
	out->launch_us = cp.launch_us;
	out->latency_us = cp.latency_us;
	out->wave_efficiency = cp.wave_efficiency;
	out->ctas_per_sm = cp.ctas_per_sm;
	out->bottleneck = cp.bottleneck;
	snprintf(out->why, sizeof out->why, "%s", cp.why);
	return true;
}
