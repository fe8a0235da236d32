/*
 * rank.h — the seam through which the search loop ranks candidates.
 *
 * `cake eval` records a predicted time with every evaluation and `cake
 * evolve` runs only the best-predicted candidates of a generation on the
 * GPU. Both ask rank_predict(). Until the calibrated cost model (src/cost/)
 * lands, the prediction is an analytic PLACEHOLDER: a roofline of the
 * family's FLOP and byte counts against fixed H200 ceilings, stretched by
 * the wave quantization of the launch (tiles over SMs times the CTAs that
 * fit per SM by shared memory, registers and threads), a latency term (a
 * role that loads and computes serialises its TMA round trips; a producer
 * role hides them behind the stages of its ring), plus a pipeline fill term
 * and a launch overhead. It names itself with RANK_MODEL_VERSION, which
 * the store records with every evaluation, so that predictions of the
 * placeholder are never mistaken for the cost model's. The cost model
 * replaces rank.c behind this same header.
 *
 * Module prefix: rank_.
 */
#ifndef CAKE_RANK_H
#define CAKE_RANK_H

#include "../lower/lower.h"
#include "../family/family.h"

typedef struct RankPrediction {
	double us;                  /* predicted kernel time in microseconds */
	double compute_us, memory_us, fill_us, launch_us;
	double latency_us;          /* exposed load latency beyond the roofline */
	double wave_efficiency;     /* busy SM-slots over launched SM-slots, 0..1 */
	int ctas_per_sm;
	const char *bottleneck;     /* "tensor", "memory", "occupancy", "launch" */
	char why[256];              /* one line */
} RankPrediction;

/* The version string of the model behind rank_predict. */
const char *rank_model_version(void);
/* Predict the time of kernel k (plan p) at dims for family f (NULL: no FLOP
 * or byte counts, then only the launch geometry ranks). False with out->why
 * when the shape cannot be evaluated. */
bool rank_predict(const Plan *p, const long long *dimvals, const Family *f, RankPrediction *out);

#endif
