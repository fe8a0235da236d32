/*
 * rank.c — the placeholder ranking model behind rank.h.
 *
 * t = max(compute, memory) / wave_efficiency + fill + launch, where
 *   compute  = FLOP / 700 TFLOP/s (dense bf16 on an H200: cuBLAS reaches
 *              781 at 8192³, shared/ANCHORS.md; 700 leaves room for an
 *              epilogue),
 *   memory   = bytes / 3.5 TB/s (the measured 4.17 TB/s copy ceiling, less
 *              the usual 15% a kernel loses to its access pattern),
 *   wave_efficiency = tiles / (waves · 132 · ctas_per_sm), with ctas_per_sm
 *              bounded by shared memory (227 KiB), the 64K register file and
 *              2048 threads per SM (a persistent grid's last round of tiles
 *              is as partial as an ordinary grid's last wave),
 *   fill     = stages of the first pipelined ring · 0.6 µs (one TMA round
 *              trip per stage before the ring is full),
 *   launch   = 4 µs.
 * These constants are not calibrated; the cost model (issue: cost model v1)
 * replaces this file and fits its coefficients to measured evaluations.
 */
#include "rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SMS 132
#define PEAK_FLOPS 700e12
#define PEAK_BYTES 3.5e12
#define SMEM_PER_SM 232448.0
#define REGS_PER_SM 65536.0
#define THREADS_PER_SM 2048.0

const char *rank_model_version(void)
{
	return "placeholder-roofline-1";
}

bool rank_predict(const Plan *p, const long long *dimvals, const Family *f, RankPrediction *out)
{
	memset(out, 0, sizeof *out);
	const Kernel *k = p->kernel;
	double tiles = 1;
	for (int a = 0; a < 3; a++) {
		long long e = 1;
		if (p->grid[a] && (!eval_expr(p->grid[a], k, dimvals, &e) || e < 1)) {
			snprintf(out->why, sizeof out->why, "grid extent %d does not evaluate for this shape", a);
			return false;
		}
		tiles *= (double)e;
	}
	double flops = 0, bytes = 0;
	if (f && f->rates) {
		FamBuf *b = xcalloc((size_t)k->nparams + 1, sizeof *b);
		for (int i = 0; i < k->nparams; i++) {
			b[i].decl = k->params[i];
			b[i].rank = k->params[i]->rank;
			for (int r = 0; r < b[i].rank && k->params[i]->space == SP_GLOBAL; r++)
				if (!eval_expr(k->params[i]->shape[r], k, dimvals, &b[i].dims[r]))
					b[i].dims[r] = 1;
		}
		FamRun fr = {k, dimvals, b, 0, 0, 1, NULL};
		f->rates(&fr, &flops, &bytes);
		free(b);
	}
	double smem = p->smem_bytes > 0 ? (double)p->smem_bytes : 1;
	int regs = p->base_regs > 0 ? p->base_regs : 32;
	double by_smem = floor(SMEM_PER_SM / smem), by_regs = floor(REGS_PER_SM / ((double)regs * p->block_threads));
	double by_threads = floor(THREADS_PER_SM / p->block_threads), per = fmin(by_smem, fmin(by_regs, by_threads));
	if (per < 1)
		per = 1;
	out->ctas_per_sm = (int)per;
	double slots = SMS * per;
	/* a persistent grid loops over the same waves of tiles: its last round is
	 * as partial as the last wave of an ordinary grid */
	out->wave_efficiency = tiles / (ceil(tiles / slots) * slots);
	out->compute_us = flops / PEAK_FLOPS * 1e6;
	out->memory_us = bytes / PEAK_BYTES * 1e6;
	int stages = p->npipes > 0 ? p->pipes[0].stages : 1;
	out->fill_us = 0.6 * stages;
	out->launch_us = 4;
	double body = fmax(out->compute_us, out->memory_us);
	double eff = out->wave_efficiency > 0 ? out->wave_efficiency : 1;
	out->us = body / eff + out->fill_us + out->launch_us;
	if (body < out->launch_us)
		out->bottleneck = "launch";
	else if (eff < 0.7)
		out->bottleneck = "occupancy";
	else
		out->bottleneck = out->compute_us >= out->memory_us ? "tensor" : "memory";
	snprintf(out->why, sizeof out->why, "placeholder roofline: compute %.1f us, memory %.1f us, %.0f tiles on %d x %d CTA slots "
	         "(wave efficiency %.2f), fill %.1f us", out->compute_us, out->memory_us, tiles, SMS, out->ctas_per_sm,
	         out->wave_efficiency, out->fill_us);
	return true;
}
