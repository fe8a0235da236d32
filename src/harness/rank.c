/*
 * rank.c — the placeholder ranking model behind rank.h.
 *
 * t = max(max(compute, memory) / wave_efficiency, latency-bound) + fill + launch, where
 *   compute  = FLOP / 700 TFLOP/s (dense bf16 on an H200: cuBLAS reaches
 *              781 at 8192³, shared/ANCHORS.md; 700 leaves room for an
 *              epilogue),
 *   memory   = bytes / 3.5 TB/s (the measured 4.17 TB/s copy ceiling, less
 *              the usual 15% a kernel loses to its access pattern), or the
 *              tiles' TMA traffic through L2 at 10 TB/s when larger (an 8192³
 *              GEMM of 128x256 tiles moves 12.9 GB in 1.47 ms: >= 8.8 TB/s),
 *   wave_efficiency = tiles / (waves · 132 · ctas_per_sm), with ctas_per_sm
 *              bounded by shared memory (227 KiB), the 64K register file and
 *              2048 threads per SM (a persistent grid's last round of tiles
 *              is as partial as an ordinary grid's last wave),
 *   raster   = the HBM re-reads of the operand that follows the grid's first
 *              coordinate, once per row (or per group of G rows with `group
 *              G`) when it does not fit half of the 50 MB L2,
 *   latency  = the time the first pipelined loop cannot hide its TMA round
 *              trip (1 µs): serialised when one role loads and computes,
 *              covered by S stages of compute behind a producer role; per SM,
 *              r resident CTAs share the tensor cores (see rank_predict),
 *   fill     = stages of the first pipelined ring · 0.6 µs (one TMA round
 *              trip per stage before the ring is full),
 *   launch   = 4 µs.
 * These constants are not calibrated; the cost model (issue: cost model v1)
 * replaces this file and fits its coefficients to measured evaluations.
 */
#include "rank.h"
#include "../front/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SMS 132
#define PEAK_FLOPS 700e12
#define PEAK_BYTES 3.5e12
#define SMEM_PER_SM 232448.0
#define REGS_PER_SM 65536.0
#define THREADS_PER_SM 2048.0
#define LAT_US 1.0
#define L2_BYTES 10e12
#define L2_SIZE 50e6

const char *rank_model_version(void)
{
	return "placeholder-roofline-4";
}

typedef struct TripEnv {
	const Kernel *k;
	const long long *dimvals;
} TripEnv;

/* Names in a loop bound: dims and consts at their values, grid coordinates
 * at 0 (a split-K loop's bounds differ per CTA only by an offset). */
static bool trip_lookup(const void *env, const Expr *id, int depth, long long *out)
{
	const TripEnv *t = env;
	const Decl *g = t->k->grid;
	for (int i = 0; g && g->grid_vars && i < g->nexprs; i++)
		if (g->grid_vars[i] && !strcmp(g->grid_vars[i], id->name)) {
			*out = 0;
			return true;
		}
	return eval_expr(id, t->k, t->dimvals, out);
}

/* Trip count of loop f at dims (0 when it cannot be evaluated). */
static long long trips_of(const Plan *p, const Stmt *f, const long long *dimvals)
{
	long long lo = 0, hi = 0, st = 1;
	if (!f)
		return 0;
	TripEnv env = {p->kernel, dimvals};
	if (!eval_int(f->lo, trip_lookup, &env, &lo) || !eval_int(f->hi, trip_lookup, &env, &hi) ||
	    (f->step && !eval_int(f->step, trip_lookup, &env, &st)) || st < 1 || hi <= lo)
		return 0;
	return (hi - lo + st - 1) / st;
}

/* Trip count of the first pipelined loop at dims (0 when it cannot be evaluated). */
static long long trips(const Plan *p, const long long *dimvals)
{
	return p->nloops < 1 ? 0 : trips_of(p, p->loops[0].loop, dimvals);
}

/* Bytes the CTAs' TMA loads move through L2 in all: each map's box, times
 * the iterations of the pipelined loop it is issued in (once per tile
 * outside it), times the tiles. Small tiles re-read their operands more. */
static double tile_bytes(const Plan *p, const long long *dimvals, double tiles)
{
	double per_tile = 0;
	for (int t = 0; t < p->ntmaps; t++)
		for (int u = 0; u < p->tmaps[t].nuses; u++) {
			long long it = trips_of(p, p->tmaps[t].uses[u]->ploop, dimvals);
			per_tile += (double)p->tmaps[t].box_bytes * (it > 0 ? (double)it : 1.0);
		}
	return per_tile * tiles;
}

/* Does e mention identifier `name`? */
static bool mentions(const Expr *e, const char *name, int depth)
{
	if (!e || depth > 64)
		return false;
	if (e->kind == E_IDENT && e->name && !strcmp(e->name, name))
		return true;
	if (mentions(e->lhs, name, depth + 1) || mentions(e->rhs, name, depth + 1))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (mentions(e->args[i], name, depth + 1))
			return true;
	for (int i = 0; e->kind == E_INDEX && i < e->nslices; i++)
		if (mentions(e->slices[i].start, name, depth + 1))
			return true;
	return false;
}

/* HBM bytes beyond the compulsory ones from the raster order: an operand
 * whose tiles follow the first grid coordinate (x, fastest) is re-read from
 * HBM once per row of y when it does not fit half the L2, or once per group
 * of G rows with `group G` (y fastest inside a group). An 8192³ GEMM of
 * 128x256 tiles re-reads B 64 times in the natural order (8.6 GB, 2.4 ms at
 * 3.5 TB/s) and 4 times with group 16. */
static double raster_bytes(const Plan *p, const long long *dimvals)
{
	const Kernel *k = p->kernel;
	if (p->space_rank < 2 || !k->grid || !k->grid->grid_vars || !k->grid->grid_vars[0] || !k->grid->grid_vars[1])
		return 0;
	long long y = 1;
	if (!p->space[1] || !eval_expr(p->space[1], k, dimvals, &y) || y < 2)
		return 0;
	double rows = p->group > 0 ? ceil((double)y / p->group) : (double)y, extra = 0;
	for (int t = 0; t < p->ntmaps; t++) {
		const PlanTmap *tm = &p->tmaps[t];
		bool x = false, yy = false;
		for (int u = 0; u < tm->nuses; u++) {
			x |= mentions(tm->uses[u]->src, k->grid->grid_vars[0], 0);
			yy |= mentions(tm->uses[u]->src, k->grid->grid_vars[1], 0);
		}
		if (!x || yy)
			continue;
		double bytes = dtype_size(tm->dt);
		for (int d = 0; d < tm->rank; d++) {
			long long e = 0;
			if (!eval_expr(tm->gdims[d], k, dimvals, &e))
				e = 1;
			bytes *= (double)e;
		}
		if (bytes > L2_SIZE / 2)
			extra += bytes * (rows - 1);
	}
	return extra;
}

/* Registers one CTA holds: the roles' setmaxnreg budgets, or, without them,
 * the fragments each thread holds plus 40 for addresses and loop state. */
static double cta_regs(const Plan *p)
{
	double total = 0;
	for (int r = 0; r < p->nroles; r++) {
		const PlanRole *ro = &p->roles[r];
		int regs = ro->regs;
		if (!regs) {
			regs = 40;
			for (int f = 0; f < p->nfrags; f++)
				if (p->frags[f].role == r)
					regs += p->frags[f].regs_per_thread;
			regs = regs > 255 ? 255 : regs;
		}
		total += (double)regs * ro->nthreads;
	}
	return total > 0 ? total : 32.0 * p->block_threads;
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
	double by_smem = floor(SMEM_PER_SM / smem), by_regs = floor(REGS_PER_SM / cta_regs(p));
	double by_threads = floor(THREADS_PER_SM / p->block_threads), per = fmin(by_smem, fmin(by_regs, by_threads));
	if (per < 1)
		per = 1;
	out->ctas_per_sm = (int)per;
	double slots = SMS * per;
	double waves = ceil(tiles / slots);
	/* a persistent grid loops over the same waves of tiles: its last round is
	 * as partial as the last wave of an ordinary grid */
	out->wave_efficiency = tiles / (waves * slots);
	out->compute_us = flops / PEAK_FLOPS * 1e6;
	out->memory_us = bytes / PEAK_BYTES * 1e6;
	int stages = p->npipes > 0 ? p->pipes[0].stages : 1;
	out->fill_us = 0.6 * stages;
	out->launch_us = 4;
	double eff = out->wave_efficiency > 0 ? out->wave_efficiency : 1;
	double body = fmax(out->compute_us, out->memory_us) / eff;
	/* latency: per pipelined iteration a CTA needs its TMA round trip (LAT_US)
	 * and its share of tensor work; a role that issues its own loads and waits
	 * for them serialises the two, a producer role with S stages in flight
	 * hides the round trip behind S iterations of compute. One consumer
	 * warpgroup keeps the tensor cores about 3/4 busy, two or more fully. */
	long long it = trips(p, dimvals);
	double hbm = (bytes + raster_bytes(p, dimvals)) / PEAK_BYTES * 1e6;
	if (hbm > body) {
		out->memory_us = hbm;
		body = hbm;
	}
	double l2 = tile_bytes(p, dimvals, tiles) / L2_BYTES * 1e6;
	if (l2 > body) {
		out->memory_us = fmax(out->memory_us, l2);
		body = l2;
	}
	int consumer_wgs = 0;
	bool producer = false;
	for (int r = 0; r < p->nroles; r++) {
		producer |= p->roles[r].single_thread;
		if (!p->roles[r].single_thread)
			consumer_wgs += p->roles[r].nwg > 0 ? p->roles[r].nwg : 1;
	}
	if (it > 0 && flops > 0) {
		double ci = flops / tiles / (double)it / (PEAK_FLOPS / SMS) * 1e6;   /* us per iteration at the SM's full rate */
		double ew = consumer_wgs >= 2 ? 1.0 : 0.75;
		double cta = producer ? fmax(ci / ew, (LAT_US + ci / ew) / stages) : LAT_US + ci / ew;
		double sm = fmax(per * ci / ew, cta);
		double lat_body = waves * (double)it * sm;
		if (lat_body > body) {
			out->latency_us = lat_body - body;
			body = lat_body;
		}
	}
	out->us = body + out->fill_us + out->launch_us;
	if (fmax(out->compute_us, out->memory_us) < out->launch_us)
		out->bottleneck = "launch";
	else if (out->latency_us > 0.15 * out->us)
		out->bottleneck = "latency";
	else if (eff < 0.7)
		out->bottleneck = "occupancy";
	else
		out->bottleneck = out->compute_us >= out->memory_us ? "tensor" : "memory";
	snprintf(out->why, sizeof out->why, "placeholder model: compute %.1f us, memory %.1f us, exposed latency %.1f us "
	         "(%s, %d stages), %.0f tiles on %d x %d CTA slots (wave efficiency %.2f)", out->compute_us, out->memory_us,
	         out->latency_us, producer ? "producer role" : "loads and compute serialised", stages, tiles, SMS,
	         out->ctas_per_sm, out->wave_efficiency);
	return true;
}
