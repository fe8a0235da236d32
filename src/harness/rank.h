/*
 * rank.h — the seam through which the search loop ranks candidates.
 *
 * `cake eval` records a predicted time with every evaluation and `cake
 * evolve` runs only the best-predicted candidates of a generation on the
 * GPU. Both ask rank_predict(), which is the cost model (src/cost/cost.h)
 * for the ranking GPU: h200, or the GPU row named by the environment
 * variable CAKE_COST_TARGET. The model version (the highest
 * data/cost/NAME-vN.json found, or the built-in v1) is loaded once per
 * process; rank_model_version() names it, and the store records it with
 * every evaluation, so predictions of different model versions are never
 * mixed up.
 *
 * rank_work() is the one place that turns a kernel's family into the
 * model's work (its `rates` hook at the bound extents), or counts the work
 * off the plan for a kernel without a family; `cake cost` and `cake
 * calibrate` use it too.
 *
 * Module prefix: rank_.
 */
#ifndef CAKE_RANK_H
#define CAKE_RANK_H

#include "../lower/lower.h"
#include "../family/family.h"
#include "../cost/cost.h"

typedef struct RankPrediction {
	double us;                  /* predicted kernel time in microseconds */
	double compute_us, memory_us, fill_us, launch_us;
	double latency_us;          /* exposed load latency */
	double wave_efficiency;     /* busy SM-slots over launched SM-slots, 0..1 */
	int ctas_per_sm;
	const char *bottleneck;     /* memory, tensor, latency, sync, occupancy, launch */
	char why[320];              /* one line */
} RankPrediction;

/* The version string of the model behind rank_predict ("h200-v1"). */
const char *rank_model_version(void);
/* The GPU row and model rank_predict uses; false with err when the model
 * cannot be loaded or the target is not calibrated. */
bool rank_model(const GpuInfo **g, const CostModel **m, char *err, size_t n);
/* Fill *c (the plan counted at dims) and *w (the work: family f's rates, or
 * the plan's counts when f is NULL or has no rates). False with err when
 * the launch grid does not evaluate at dims. */
bool rank_work(const Plan *p, const long long *dimvals, const Family *f, CostCounts *c, CostWork *w, char *err,
               size_t n);
/* Predict the time of kernel plan p at dims for family f (NULL: the work is
 * counted off the plan). False with out->why when the shape cannot be
 * evaluated or the ranking model is unavailable. */
bool rank_predict(const Plan *p, const long long *dimvals, const Family *f, RankPrediction *out);

#endif
