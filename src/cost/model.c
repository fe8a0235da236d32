/*
 * model.c — the prediction: counts + work + GPU row + coefficients -> time
 * with named parts, a bottleneck class and suggestions (cost.h).
 *
 * Notation (docs/COST.md has the long form): per SM rates
 *   R_mma = MMA rate(dtype) * eff_tensor / nfac / SMs     FLOP/s, nfac = 256 / (256 + n0)
 *           * (1 + n0 * mean(1 / N)): a wgmma of N columns per warpgroup runs
 *           at N / (N + wgmma_n0) of the rate, relative to N = 256
 *   R_vec = SIMT lanes * clock * eff_vec                  ops/s; a segment's
 *           vector ops are its element ops + shfl_cost * its row reductions'
 *           lane shuffles (vops)
 *   R_l2  = min(l2_bw * eff_l2 / A, l2_sm_bw * eff_l2)    bytes/s, A = active SMs
 * latencies L = tma_latency * tma_lat_scale, Lg = gmem_latency * gmem_lat_scale,
 * a wait w = mbar_latency * sync_scale.
 *
 * Consumer warpgroups: ov = overlap_max * (overlap + (1 - (1 - overlap)^(n - 1)
 * - overlap) * keep), the share of min(mma, vec) hidden (what `overlap` means
 * in the lines below), keep = ph / (ph + handoff_us) with ph = min(mma, vec) / n
 * the phase of one warpgroup (overlap_share: n = 2 hides overlap_max * overlap;
 * each further one a share of the rest, less for short phases).
 *
 * Main loop, per iteration (one CTA alone on its SM):
 *   mma = it.flops / R_mma, vec = it.ops / R_vec
 *   core = max(mma, vec) + (1 - overlap) * min(mma, vec) + it.waits * w
 *   feed = it.bytes / R_l2 + it.atomics / R_at, R_at = l2_bw * eff_atomic / A
 *   arrive = (L + feed + held) / stages  (`stages` ring slots, each held from
 *            its load's issue until the consumer releases it (`held`: its
 *            work before the ring's `arrive`): Little's law; one slot, held
 *            through all the compute, when the computing role issues its own
 *            loads: no producer runs ahead)
 *   it = max(core, feed, arrive), exposed = max(0, arrive - max(core, feed))
 * Tile: fill = L + (pro.bytes + it.bytes) / R_l2 + pro work;
 *   epi = the epilogue's bytes / R_l2 + its vector work + its waits;
 *   serial (no main loop) = lat_steps * Lg + bytes / R_l2 + ops / R_vec + waits * w;
 *   tile = cta_us + fill + iters * it + epi + serial;
 *   post = epi_post * (the epilogue's bytes / R_l2 + atomics / R_at): the
 *   share of its posted stores and reductions that drains under the next
 *   tile on the SM.
 * The busiest SM runs n = ceil(tiles / SMs) tiles, r = min(CTAs per SM, n)
 * at a time:
 *   ordinary grid:   chain = ceil(n / r) * tile - (ceil(n / r) - 1) * post,
 *                    thru  = n * max(compute(tile), tile.bytes / R_l2) with
 *                    compute = max(mma, vec) + (1 - overlap) * min(mma, vec);
 *                    body_sm = max(chain, thru);
 *   persistent grid: one CTA per SM walks R = ceil(tiles / CTAs) tiles; the
 *                    producer loads the next tile during the epilogue, so
 *                    body_sm = cta_us + fill + R * (iters * it + epi + serial)
 *                              + (R - 1) * (max(0, fill - epi) + tile_us - post),
 *                    tile_us the switch between tiles the run-ahead leaves.
 * DRAM bytes: the work's compulsory bytes, or more when tiles that share a
 * panel are too far apart in launch order for L2 to keep it between them
 * (dram_reuse_bytes, over the reuse distances cost_reuse recorded; the L2
 * share that keeps reusable data is l2_bytes * l2_reuse).
 * Floors over the whole GPU: tensor = FLOPs_mma / (rate * eff_tensor),
 * hbm = DRAM bytes / (hbm_bw * eff_hbm), l2 = SM-side bytes / (l2_bw * eff_l2),
 * vector = ops / (R_vec * SMs), memory = max(hbm, l2) + mem_serial * min(hbm, l2).
 * body = max(body_sm, floors);
 * time = launch_us + body.
 *
 * Bottleneck: the time is attributed to the class of the term that sets
 * each part (a floor above the busiest SM; the throughput bound; on the
 * critical path the loop's max term, fill and CTA start-up as latency, the
 * epilogue as sync), the tail as occupancy, the launch as launch; where
 * wgmma and vector work overlap, the time both are busy counts half to
 * tensor and half to sync (each term's Shapley value in max(a, b) +
 * (1 - ov) min(a, b)). cost_classify names a unit (tensor, memory) only
 * when its terms fill COST_DOMINANT (60 %) of the time less the launch, or
 * the memory system when its floor keeps it busy that share of the time
 * under terms it does not set; otherwise the largest of latency, sync,
 * occupancy and launch: no unit is near its ceiling, the time goes to
 * waiting. This is what a profile sees (bench/ncu_bottleneck.sh: a unit
 * class needs a unit near its peak, else latency).
 */
#include "cost.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static double mma_rate(const GpuInfo *g, DType dt)
{
	switch (dt) {
	case DT_F16: return g->mma_f16.v;
	case DT_F8E4M3: return g->mma_f8.v;
	case DT_F32: return g->mma_tf32.v;
	default: return g->mma_bf16.v;
	}
}

/* DRAM bytes from the reuse distances: a reuse d tiles after the previous
 * use hits L2 with probability min(1, D / d), where D is the window of
 * tiles whose new data fits in the share l2_eff of L2 (D tiles bring in D
 * times the DRAM bytes per tile); solved as a fixed point, which increases
 * monotonically from "everything misses". */
static double dram_reuse_bytes(const CostCounts *c, double l2_eff)
{
	if (c->tiles <= 0)
		return 0;
	double reads = 0;
	for (int m = 0; m < 8; m++)
		reads += c->read_by_axes[m];
	double fixed = c->read_private + c->write_bytes, per = fixed + reads;
	double n = c->reuse_n > 0 ? c->reuse_n : 1;
	double D = l2_eff / fmax(per, 1);
	for (int it = 0; it < 60; it++) {
		per = fixed;
		for (int m = 0; m < 8; m++) {
			if (c->read_by_axes[m] <= 0)
				continue;
			const CostReuse *r = &c->reuse[m];
			double miss = r->first;
			for (int b = 0; b < COST_REUSE_BUCKETS; b++)
				if (r->n[b] > 0)
					miss += r->n[b] * fmax(0, 1 - D / r->d[b]);
			per += c->read_by_axes[m] * miss / n;
		}
		double nd = fmin(l2_eff / fmax(per, 1e-9), 1e15);
		if (fabs(nd - D) <= 1e-9 * D)
			break;
		D = nd;
	}
	return per * c->tiles;
}

/* A segment's SIMT work in ALU operations: its element ops plus its row
 * reductions' lane shuffles at sc ops each. */
static double vops(const CostSeg *s, double sc)
{
	return s->vec_ops + sc * s->shfl;
}

static double compute_time(double mma, double vec, double overlap)
{
	return fmax(mma, vec) + (1 - overlap) * fmin(mma, vec);
}

/* The share of min(wgmma, vector) per iteration that n consumer warpgroups
 * hide. The second warpgroup pairs with the first (ping-pong: one's vector
 * work under the other's wgmma): overlap_max * overlap. v2 let each further
 * warpgroup hide the share `overlap` of what is left, up to overlap_max.
 * v3: a further warpgroup can only slot its phase between the others' when
 * the phases are long against the switch between them. Each warpgroup
 * alternates, every iteration, between its wgmma (and the wait for the
 * group to drain) and its vector work on the result; a switch costs a fixed
 * time h (handoff_us: the drain after the last wgmma, the wake-up from the
 * wait) that nothing overlaps, so of the gain beyond the pair only the
 * share ph / (ph + h) is kept, ph = min(wgmma, vector) / n the phase of one
 * warpgroup (a narrow tile split over four warpgroups gains little over
 * two). h = 0 is the v2 equation. */
static double overlap_share(const double *k, int n, const CostPrediction *p)
{
	if (n < 2)
		return 0;
	double pair = k[CC_OVERLAP], all = 1 - pow(1 - k[CC_OVERLAP], n - 1), h = k[CC_HANDOFF_US];
	double ph = fmin(p->mma_it_us, p->vec_it_us) / n, keep = ph > 0 && h > 0 ? ph / (ph + h) : 1;
	return k[CC_OVERLAP_MAX] * (pair + (all - pair) * keep);
}

static void suggest(CostPrediction *p, double save, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void suggest(CostPrediction *p, double save, const char *fmt, ...)
{
	if (!(save > 0))
		return;
	CostSuggestion s;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s.text, sizeof s.text, fmt, ap);
	va_end(ap);
	s.save_us = save;
	/* keep the two with the largest savings, largest first */
	if (p->nsugg < 2) {
		p->sugg[p->nsugg++] = s;
	} else if (save > p->sugg[1].save_us) {
		p->sugg[1] = s;
	} else {
		return;
	}
	if (p->nsugg == 2 && p->sugg[1].save_us > p->sugg[0].save_us) {
		CostSuggestion t = p->sugg[0];
		p->sugg[0] = p->sugg[1];
		p->sugg[1] = t;
	}
}

const char *const cost_class_names[COST_NCLASS] = {"tensor", "memory", "latency", "sync", "occupancy", "launch"};
const char *const cost_rule_names[4] = {"launch", "unit", "memory-busy", "rest"};

/* The class from the time attributed to each class. A unit (the tensor
 * cores, the memory system) is the bottleneck only when the terms it sets
 * fill a dominant share (COST_DOMINANT) of the kernel's time, the launch
 * left out; or, for the memory system, when it is busy that share of the
 * time under terms it does not set (a producer's or another CTA's loads run
 * under the compute, so the attribution credits them nothing). Otherwise no
 * unit is near its ceiling and the time goes to what fills the rest: exposed
 * latency, sync (waits, vector work), an idle tail or the launch, the
 * largest of them. The launch names it when it is the largest share of all. */
CostClass cost_classify(const double share[COST_NCLASS], double mem_busy, CostRule *rule)
{
	CostRule r = COST_RULE_REST;
	CostClass best = COST_TENSOR, out;
	double work = 0;
	for (int i = 0; i < COST_NCLASS; i++) {
		if (share[i] > share[best])
			best = (CostClass)i;
		if (i != COST_LAUNCH)
			work += share[i];
	}
	if (best == COST_LAUNCH || work <= 0) {
		r = COST_RULE_LAUNCH, out = COST_LAUNCH;
	} else if ((best == COST_TENSOR || best == COST_MEMORY) && share[best] >= COST_DOMINANT * work) {
		r = COST_RULE_UNIT, out = best;
	} else if (mem_busy >= COST_DOMINANT) {
		r = COST_RULE_MEMORY_BUSY, out = COST_MEMORY;
	} else {
		out = COST_LATENCY;
		for (int i = COST_SYNC; i <= COST_LAUNCH; i++)
			if (share[i] > share[out])
				out = (CostClass)i;
	}
	if (rule)
		*rule = r;
	return out;
}

static void predict(const CostCounts *c, const CostWork *w, const GpuInfo *g, const CostModel *m, CostPrediction *p,
                    bool explain)
{
	memset(p, 0, sizeof *p);
	const TargetInfo *t = target_info(g->target);
	const double *k = m->c;
	snprintf(p->version, sizeof p->version, "%s", m->version);
	snprintf(p->target, sizeof p->target, "%s", g->name);
	double sms = g->sm_count.v > 0 ? g->sm_count.v : 1;
	double clk = g->sm_clock_ghz.v * 1e9;
	double rate = mma_rate(g, c->mma_dt);
	/* smaller wgmmas run below the rate of an N = 256 one (fixed cost per instruction) */
	double n0 = k[CC_WGMMA_N0], nfac = c->mma_inv_n > 0 ? 256 / (256 + n0) * (1 + n0 * c->mma_inv_n) : 1;
	double R_mma = rate * k[CC_EFF_TENSOR] / nfac / sms * 1e-6;      /* FLOP per us */
	double R_vec = t->simt_lanes_per_sm * clk * k[CC_EFF_VEC] * 1e-6; /* ops per us */
	if (R_mma <= 0)
		R_mma = 1e-30;
	if (R_vec <= 0)
		R_vec = 1e-30;

	/* occupancy */
	long long smem_cta = c->smem_bytes + t->smem_reserved_per_block;
	int warp_regs = (c->regs_per_thread * t->warp_size + t->reg_alloc_warp - 1) / t->reg_alloc_warp * t->reg_alloc_warp;
	int by_smem = smem_cta > 0 ? (int)(t->smem_per_sm / smem_cta) : t->max_blocks_per_sm;
	int by_regs = warp_regs > 0 ? t->regs_per_sm / (warp_regs * c->warps) : t->max_blocks_per_sm;
	int by_thr = c->block_threads > 0 ? t->max_threads_per_sm / c->block_threads : t->max_blocks_per_sm;
	int cps = t->max_blocks_per_sm;
	p->occ_limit = "blocks";
	if (by_smem < cps)
		cps = by_smem, p->occ_limit = "shared memory";
	if (by_regs < cps)
		cps = by_regs, p->occ_limit = "registers";
	if (by_thr < cps)
		cps = by_thr, p->occ_limit = "threads";
	if (cps < 1)
		cps = 1;
	p->ctas_per_sm = cps;
	p->by_smem = by_smem, p->by_regs = by_regs, p->by_threads = by_thr;

	double tiles = c->tiles > 0 ? c->tiles : 0;
	double ncta = c->persistent ? fmin(tiles, sms) : tiles;
	double active = fmax(1, fmin(sms, ncta));
	p->active_sms = (int)active;
	double R_l2 = fmin(g->l2_bw.v * k[CC_EFF_L2] / active, g->l2_sm_bw.v * k[CC_EFF_L2]) * 1e-6; /* bytes per us */
	if (R_l2 <= 0)
		R_l2 = 1e-30;
	double R_at = fmax(g->l2_bw.v * k[CC_EFF_ATOMIC] / active * 1e-6, 1e-30);        /* atomic bytes per us */
	double vs = k[CC_VSTMT_US], sc = k[CC_SHFL_COST];
	double L = g->tma_latency_us.v * k[CC_LAT_SCALE];
	double Lg = g->gmem_latency_us.v * k[CC_GMEM_LAT_SCALE];
	double wt = g->mbar_latency_us.v * k[CC_SYNC_SCALE];
	/* each consumer warpgroup beyond the first hides a share `overlap` of the
	 * wgmma / vector time the others leave exposed (one warpgroup waits for
	 * its own wgmma before its vector work: nothing is hidden) */
	int wgs = c->consumer_wgs > 0 ? c->consumer_wgs : 1;
	if (c->has_loop) {
		p->mma_it_us = c->it.mma_flops / R_mma;
		p->vec_it_us = vops(&c->it, sc) / R_vec + c->it.vstmts * vs;
	}
	double ov = overlap_share(k, wgs, p);

	/* the main loop */
	double it = 0, fill = 0, epi = 0, serial = 0, exposed = 0, sync_it = 0, unhidden_it = 0;
	if (c->has_loop) {
		sync_it = c->it.waits * wt;
		p->core_us = compute_time(p->mma_it_us, p->vec_it_us, ov) + sync_it;
		unhidden_it = (1 - ov) * fmin(p->mma_it_us, p->vec_it_us);
		p->feed_us = c->it.bytes / R_l2 + c->it.atomic_bytes / R_at;
		/* a ring slot is held from its load's issue until the consumer
		 * releases it: latency, transfer and the compute on it */
		int depth = c->self_fed ? 1 : c->stages > 0 ? c->stages : 1;   /* a role that loads and
		                                                             * computes waits for its own loads */
		double held = c->self_fed ? p->core_us
		              : compute_time(c->hold.mma_flops / R_mma, vops(&c->hold, sc) / R_vec + c->hold.vstmts * vs, ov) +
		                c->hold.waits * wt;
		p->arrive_us = (L + p->feed_us + held) / depth;
		it = fmax(p->core_us, fmax(p->feed_us, p->arrive_us));
		exposed = fmax(0, p->arrive_us - fmax(p->core_us, p->feed_us));
		p->it_us = it;
		p->exposed_it_us = exposed;
		fill = L + (c->pro.bytes + c->it.bytes) / R_l2 + c->pro.atomic_bytes / R_at + c->pro.lat_steps * Lg +
		       compute_time(c->pro.mma_flops / R_mma, vops(&c->pro, sc) / R_vec + c->pro.vstmts * vs, ov) +
		       c->pro.waits * wt;
		epi = c->epi.bytes / R_l2 + c->epi.atomic_bytes / R_at +
		      compute_time(c->epi.mma_flops / R_mma, vops(&c->epi, sc) / R_vec + c->epi.vstmts * vs, ov) +
		      c->epi.lat_steps * Lg + c->epi.waits * wt;
		/* stages that would cover the latency, and what shared memory allows */
		double busy = fmax(p->core_us, p->feed_us);
		p->stages_needed = busy > 0 ? (int)ceil(p->arrive_us * depth / busy - 1e-9) : c->stages;
		if (p->stages_needed < 1)
			p->stages_needed = 1;
		p->stages_max = c->stage_stride > 0 ? (int)((t->smem_per_block - c->smem_other) / c->stage_stride) : c->stages;
	} else {
		serial = c->serial.lat_steps * Lg + c->serial.bytes / R_l2 + c->serial.atomic_bytes / R_at +
		         compute_time(c->serial.mma_flops / R_mma, vops(&c->serial, sc) / R_vec + c->serial.vstmts * vs, ov) +
		         c->serial.waits * wt;
	}
	double cta = k[CC_CTA_US];
	double tile_us = cta + fill + c->iters * it + epi + serial;
	double thru_tile = fmax(compute_time(c->tile.mma_flops / R_mma, vops(&c->tile, sc) / R_vec, ov),
	                        c->tile.bytes / R_l2 + c->tile.atomic_bytes / R_at);

	/* the epilogue's posted traffic (stores, reductions: nothing waits for
	 * them) drains under the next tile on the SM; the throughput bound
	 * still counts its bytes */
	double post = c->has_loop ? k[CC_EPI_POST] * (c->epi.bytes / R_l2 + c->epi.atomic_bytes / R_at) : 0;
	double body_sm, chain_tiles, n_sm;
	if (c->persistent) {
		double rounds = ncta > 0 ? ceil(tiles / ncta) : 0;
		n_sm = rounds;
		chain_tiles = rounds;
		double per = c->iters * it + epi + serial;
		body_sm = tiles > 0 ? cta + fill + rounds * per +
		                      fmax(0, rounds - 1) * (fmax(0, fill - epi) + k[CC_TILE_US] - post) : 0;
		p->chain_us = body_sm;
		p->thru_us = rounds * thru_tile;
		body_sm = fmax(body_sm, p->thru_us);
		p->waves = rounds;
		p->wave_efficiency = rounds > 0 ? tiles / (rounds * sms) : 1;
		p->fill_us = tiles > 0 ? fill + fmax(0, rounds - 1) * fmax(0, fill - epi) : 0;
	} else {
		n_sm = ceil(tiles / sms);
		double r = fmin(cps, n_sm);
		chain_tiles = r > 0 ? ceil(n_sm / r) : 0;
		p->chain_us = chain_tiles * tile_us - fmax(0, chain_tiles - 1) * post;
		p->thru_us = n_sm * thru_tile;
		body_sm = fmax(p->chain_us, p->thru_us);
		double slots = sms * cps;
		p->waves = tiles / slots;
		/* SM-level: the busiest SM's n tiles against the average */
		p->wave_efficiency = n_sm > 0 ? tiles / (sms * n_sm) : 1;
		p->fill_us = chain_tiles * fill;
	}
	p->latency_us = chain_tiles * (c->iters * exposed + c->serial.lat_steps * Lg) + (c->has_loop ? 0 : 0);
	p->sync_us = chain_tiles * c->iters * (sync_it + unhidden_it) + chain_tiles * c->serial.waits * wt;
	p->epilogue_us = chain_tiles * epi;

	/* floors over the whole GPU */
	double mma_total = c->tile.mma_flops * tiles;
	if (mma_total <= 0 && c->mma_dt != DT_NONE)
		mma_total = w->flops;
	p->tensor_us = rate > 0 ? mma_total / (rate * k[CC_EFF_TENSOR]) * 1e6 : 0;
	double vec_total = vops(&c->tile, sc) * tiles;
	if (c->mma_dt == DT_NONE && w->flops > vec_total)
		vec_total = w->flops;
	p->vector_us = vec_total / (R_vec * sms);
	double l2_eff = g->l2_bytes.v * k[CC_L2_REUSE];
	p->dram_bytes = fmax(w->bytes, dram_reuse_bytes(c, l2_eff));
	p->hbm_us = g->hbm_bw.v > 0 ? p->dram_bytes / (g->hbm_bw.v * k[CC_EFF_HBM]) * 1e6 : 0;
	p->l2_us = g->l2_bw.v > 0 ? (c->tile.bytes / k[CC_EFF_L2] + c->tile.atomic_bytes / k[CC_EFF_ATOMIC]) * tiles /
	                            g->l2_bw.v * 1e6 : 0;
	p->memory_us = fmax(p->hbm_us, p->l2_us) + k[CC_MEM_SERIAL] * fmin(p->hbm_us, p->l2_us);
	double body = fmax(body_sm, fmax(fmax(p->tensor_us, p->vector_us), p->memory_us));
	if (tiles <= 0)
		body = 0;
	p->body_us = body;
	p->launch_us = k[CC_LAUNCH_US];
	p->us = p->launch_us + body;
	p->tail_us = body * (1 - fmin(1, p->wave_efficiency));
	p->tflops = w->flops > 0 && p->us > 0 ? w->flops / p->us * 1e-6 : 0;
	if (!explain)
		return;

	/* the bottleneck: the time attributed to the class of the term that
	 * sets each part (the floor that exceeds the busiest SM, the throughput
	 * bound, or the critical path's loop term and fixed parts), plus the
	 * idle share of the last wave and the launch; cost_classify decides */
	double *share = p->share;
	double floor_max = fmax(fmax(p->tensor_us, p->vector_us), p->memory_us);
	if (floor_max >= body_sm) {
		share[p->memory_us >= p->tensor_us && p->memory_us >= p->vector_us ? COST_MEMORY
		      : p->tensor_us >= p->vector_us ? COST_TENSOR : COST_SYNC] += body;
	} else if (!c->persistent && p->thru_us > p->chain_us) {
		double cm = c->tile.mma_flops / R_mma, cv = vops(&c->tile, sc) / R_vec,
		       cb = c->tile.bytes / R_l2 + c->tile.atomic_bytes / R_at, cc = compute_time(cm, cv, ov);
		if (cb >= cc) {
			share[COST_MEMORY] += body;
		} else {
			/* wgmma and vector work, overlapped: the time both units are
			 * busy is split evenly (each term's Shapley value) */
			double o = ov * fmin(cm, cv);
			share[COST_TENSOR] += body * (cm - o / 2) / cc;
			share[COST_SYNC] += body * (cv - o / 2) / cc;
		}
	} else {
		double n_it = chain_tiles * c->iters;
		if (c->has_loop) {
			double base = fmax(p->core_us, p->feed_us);
			if (p->arrive_us > base) {
				share[COST_LATENCY] += n_it * it;   /* the stages set the pace */
			} else if (p->feed_us >= p->core_us) {
				share[COST_MEMORY] += n_it * base;
			} else {
				/* as above: the overlapped part of wgmma and vector work
				 * counts half to each; the waits are sync */
				double mm = p->mma_it_us, vv = p->vec_it_us, o = ov * fmin(mm, vv);
				share[COST_TENSOR] += n_it * (mm - o / 2);
				share[COST_SYNC] += n_it * (vv - o / 2 + sync_it);
			}
		}
		share[COST_LATENCY] += p->fill_us + chain_tiles * cta + chain_tiles * c->serial.lat_steps * Lg;
		share[COST_SYNC] += p->epilogue_us + chain_tiles * (vops(&c->serial, sc) / R_vec + c->serial.vstmts * vs +
		                                                    c->serial.waits * wt);
		share[COST_MEMORY] += chain_tiles * (c->serial.bytes / R_l2 + c->serial.atomic_bytes / R_at);
		share[COST_TENSOR] += chain_tiles * c->serial.mma_flops / R_mma;
	}
	share[COST_OCCUPANCY] += p->tail_us;
	share[COST_LAUNCH] += p->launch_us;
	p->mem_busy = body > 0 ? p->memory_us / body : 0;
	p->bottleneck = cost_class_names[cost_classify(share, p->mem_busy, &p->rule)];
	snprintf(p->why, sizeof p->why, "%s: tensor %.1f us, memory %.1f us (DRAM %.1f, L2 %.1f), fill %.1f, latency %.1f, "
	         "sync %.1f, epilogue %.1f, tail %.1f, launch %.1f", p->bottleneck, p->tensor_us, p->memory_us, p->hbm_us,
	         p->l2_us, p->fill_us, p->latency_us, p->sync_us, p->epilogue_us, p->tail_us, p->launch_us);

	/* suggestions tied to IR constructs */
	if (c->has_loop && c->self_fed && exposed > 0.05 * it)
		suggest(p, p->latency_us * 0.8, "role %s loads its own stages and waits for each (%.2f us latency + %.2f "
		        "transfer per iteration): a producer role (the warp_specialize tactic) keeps %d stages in flight",
		        c->loop_role ? c->loop_role : "?", L, p->feed_us, c->stages > 1 ? c->stages : 2);
	else if (c->has_loop && exposed > 0.02 * it && c->stages > 0) {
		double cover = c->stages * fmax(p->core_us, p->feed_us);
		if (p->stages_needed <= p->stages_max)
			suggest(p, p->latency_us, "pipeline %s: %d stages cover %.2f us of the %.2f us a stage is held (latency "
			        "%.2f + transfer %.2f + compute %.2f): try `stages %d` (shared memory allows %d)", c->pipe, c->stages,
			        cover, p->arrive_us * c->stages, L, p->feed_us, p->arrive_us * c->stages - L - p->feed_us,
			        p->stages_needed, p->stages_max);
		else
			suggest(p, p->latency_us * 0.5, "pipeline %s: %d stages cover %.2f us of the %.2f us a stage is held; %d "
			        "would be needed but shared memory allows %d: a smaller tile per stage lets more stages fit",
			        c->pipe, c->stages, cover, p->arrive_us * c->stages, p->stages_needed, p->stages_max);
	}
	if (tiles > 0 && tiles < sms && !c->persistent)
		suggest(p, body * (1 - tiles / sms), "%.0f SMs, %.0f CTAs: %.0f SMs idle: split-K or a smaller tile (the grid) "
		        "fills them", sms, tiles, sms - tiles);
	else if (tiles > 0 && p->wave_efficiency < 0.9) {
		if (c->persistent)
			suggest(p, p->tail_us, "%.0f tiles over %.0f persistent CTAs: %.0f rounds, the last %.0f%% full: a tile "
			        "size whose count divides by %.0f, or split-K, evens the rounds", tiles, ncta, p->waves,
			        100 * (tiles - (p->waves - 1) * ncta) / ncta, sms);
		else
			suggest(p, p->tail_us, "%.0f SMs x %d CTA slots, %.0f CTAs: %.2f waves, the last %.0f%% full: "
			        "`grid persistent` or split-K fills it", sms, cps, tiles, p->waves,
			        100 * (p->waves - floor(p->waves)));
	}
	if (!c->persistent && c->has_loop && chain_tiles > 1 && cps <= 1 && p->chain_us >= p->thru_us) {
		char lim[96];
		if (!strcmp(p->occ_limit, "registers"))
			snprintf(lim, sizeof lim, "registers: %d x %d threads of %d", c->regs_per_thread, c->block_threads,
			         t->regs_per_sm);
		else if (!strcmp(p->occ_limit, "threads"))
			snprintf(lim, sizeof lim, "threads: %d of %d", c->block_threads, t->max_threads_per_sm);
		else
			snprintf(lim, sizeof lim, "shared memory: %lld KiB of %lld", (long long)(smem_cta / 1024),
			         (long long)(t->smem_per_sm / 1024));
		suggest(p, (chain_tiles - 1) * fill * 0.8, "1 CTA per SM (%s): each tile's fill (%.2f us) and epilogue "
		        "(%.2f us) run alone, %.0f us in all: `grid persistent` loads the next tile during the epilogue", lim,
		        fill, epi, chain_tiles * (fill + epi));
	}
	if (c->group == 0 && c->extent[1] > 1 && p->dram_bytes > 2 * w->bytes && p->hbm_us > 0.1 * body) {
		CostCounts *alt = xmalloc(sizeof *alt);
		*alt = *c;
		cost_reuse(alt, 16);
		double alt_bytes = fmax(w->bytes, dram_reuse_bytes(alt, l2_eff));
		free(alt);
		double alt_hbm = alt_bytes / (g->hbm_bw.v * k[CC_EFF_HBM]) * 1e6;
		double alt_mem = fmax(alt_hbm, p->l2_us) + k[CC_MEM_SERIAL] * fmin(alt_hbm, p->l2_us);
		if (alt_bytes < 0.8 * p->dram_bytes)
			suggest(p, fmax(0, p->memory_us - alt_mem), "the natural raster reads %.2f GB from DRAM for %.2f GB of "
			        "data (tiles that share a panel are a row of %lld tiles apart, and L2 does not hold it that long): "
			        "`group 16` on the grid keeps them within 16 tiles and reads %.2f GB", p->dram_bytes * 1e-9,
			        w->bytes * 1e-9, c->extent[0], alt_bytes * 1e-9);
	}
	if (p->l2_us > p->tensor_us && p->l2_us > p->hbm_us * 1.2 && p->l2_us >= 0.7 * body)
		suggest(p, p->l2_us - fmax(p->tensor_us, p->hbm_us), "the tiles move %.2f GB through L2 for %.2f GB of DRAM "
		        "traffic (%.0fx reuse): a larger output tile or a cluster multicast (`cluster`) cuts it",
		        c->tile.bytes * tiles * 1e-9, w->bytes * 1e-9, w->bytes > 0 ? c->tile.bytes * tiles / w->bytes : 0);
	double ov_next = overlap_share(k, wgs + 1, p);   /* with one more warpgroup */
	if (c->has_loop && unhidden_it > 0.05 * it && wgs < 4)
		suggest(p, c->iters * chain_tiles * (ov_next - ov) * fmin(p->mma_it_us, p->vec_it_us), "role %s: vector work (%.0f ops per "
		        "iteration, %.2f us) and wgmma (%.2f us) overlap %.0f%% in %d consumer warpgroup%s: %d (role warps +4, "
		        "regs from the launch pool) would hide %.0f%%", c->loop_role ? c->loop_role : "?", c->it.vec_ops,
		        p->vec_it_us, p->mma_it_us, 100 * ov, wgs, wgs == 1 ? "" : "s", wgs + 1,
		        100 * ov_next);
	if (p->launch_us > 0.5 * p->us)
		suggest(p, p->launch_us * 0.5, "launch overhead %.1f of %.1f us: fuse the kernel with its neighbour or give "
		        "each launch more work", p->launch_us, p->us);
	if (p->hbm_us >= 0.8 * body && body > 0)
		suggest(p, 0.01 * body, "at %.0f%% of the DRAM ceiling (%.2f GB): only fewer bytes help (a narrower dtype, "
		        "fusing the producer or consumer kernel)", 100 * p->hbm_us / body, w->bytes * 1e-9);
	if (!c->has_loop && p->latency_us > 0.3 * body && c->serial.lat_steps > 1)
		suggest(p, p->latency_us * 0.5, "role %s: %.0f dependent global loads per CTA (%.2f us each) make a latency "
		        "chain of %.0f us: a larger `unroll`, more CTAs per SM or a TMA ring hides it",
		        c->loop_role ? c->loop_role : "?", c->serial.lat_steps, Lg, p->latency_us);
}

void cost_predict(const CostCounts *c, const CostWork *w, const GpuInfo *g, const CostModel *m, CostPrediction *p)
{
	predict(c, w, g, m, p, true);
}

double cost_predict_us(const CostCounts *c, const CostWork *w, const GpuInfo *g, const CostModel *m)
{
	CostPrediction p;
	predict(c, w, g, m, &p, false);
	return p.us;
}

static const char *fmt_bytes(char *buf, size_t n, double b)
{
	if (b >= 1e9)
		snprintf(buf, n, "%.2f GB", b * 1e-9);
	else if (b >= 1e6)
		snprintf(buf, n, "%.2f MB", b * 1e-6);
	else if (b >= 1e3)
		snprintf(buf, n, "%.1f KB", b * 1e-3);
	else
		snprintf(buf, n, "%.0f B", b);
	return buf;
}

void cost_print_text(StrBuf *b, const CostPrediction *p, const CostCounts *c, const CostWork *w)
{
	char x[32], y[32];
	sb_printf(b, "predicted: %.1f us on %s (cost model %s)", p->us, p->target, p->version);
	if (p->tflops > 0)
		sb_printf(b, ", %.0f TFLOP/s", p->tflops);
	sb_printf(b, "\nbottleneck: %s\n", p->bottleneck);
	double work = 0;
	for (int i = 0; i < COST_LAUNCH; i++)
		work += p->share[i];
	sb_puts(b, "time by class (us):");
	for (int i = 0; i < COST_NCLASS; i++)
		sb_printf(b, " %s %.1f%s", cost_class_names[i], p->share[i], i + 1 < COST_NCLASS ? "," : "");
	sb_printf(b, "; memory busy %.0f%%: ", 100 * p->mem_busy);
	if (p->rule == COST_RULE_UNIT)
		sb_printf(b, "%s sets %.0f%% of the time (>= %.0f%%)\n", p->bottleneck,
		          work > 0 ? 100 * p->share[p->bottleneck == cost_class_names[COST_TENSOR] ? COST_TENSOR : COST_MEMORY] / work
		                   : 0, 100 * COST_DOMINANT);
	else if (p->rule == COST_RULE_MEMORY_BUSY)
		sb_printf(b, "no unit sets %.0f%% of the time, the memory system is busy that long\n", 100 * COST_DOMINANT);
	else if (p->rule == COST_RULE_LAUNCH)
		sb_puts(b, "the launch is the largest share\n");
	else
		sb_printf(b, "no unit sets or keeps busy %.0f%% of the time; %s fills most of the rest\n", 100 * COST_DOMINANT,
		          p->bottleneck);
	sb_printf(b, "work: %.3g FLOP, %s of compulsory DRAM traffic (%s)", w->flops, fmt_bytes(x, sizeof x, w->bytes),
	          w->source ? w->source : "?");
	if (p->dram_bytes > 1.05 * w->bytes)
		sb_printf(b, "; %s modelled: tiles re-read the panels L2 no longer holds", fmt_bytes(y, sizeof y, p->dram_bytes));
	sb_puts(b, "\n");
	sb_printf(b, "launch: %.0f %s, %d threads, %d regs/thread, %lld B shared memory: %d CTA%s per SM (%s; by shared "
	          "memory %d, registers %d, threads %d), %d SMs active, %.2f %s, efficiency %.2f\n", c->tiles,
	          c->persistent ? "tiles (persistent)" : "CTAs", c->block_threads, c->regs_per_thread, c->smem_bytes,
	          p->ctas_per_sm, p->ctas_per_sm == 1 ? "" : "s", p->occ_limit, p->by_smem, p->by_regs, p->by_threads,
	          p->active_sms, p->waves, c->persistent ? "rounds" : "waves", p->wave_efficiency);
	if (c->has_loop)
		sb_printf(b, "main loop: pipeline %s (%d stages) in role %s, %.0f iterations per tile; per iteration %.3f us "
		          "= max(compute %.3f [wgmma %.3f, vector %.3f], feed %.3f [%s], arrival %.3f)\n", c->pipe, c->stages,
		          c->loop_role ? c->loop_role : "?", c->iters, p->it_us, p->core_us, p->mma_it_us, p->vec_it_us,
		          p->feed_us, fmt_bytes(y, sizeof y, c->it.bytes), p->arrive_us);
	else
		sb_printf(b, "no pipelined loop: role %s runs %.1f dependent global loads, %s, %.3g vector ops per CTA\n",
		          c->loop_role ? c->loop_role : "?", c->serial.lat_steps, fmt_bytes(y, sizeof y, c->serial.bytes),
		          c->serial.vec_ops);
	sb_printf(b, "parts (us): tensor %.1f  memory %.1f (DRAM %.1f, L2 %.1f)  vector %.1f  fill %.1f  latency %.1f  "
	          "sync %.1f  epilogue %.1f  tail %.1f  launch %.1f\n", p->tensor_us, p->memory_us, p->hbm_us, p->l2_us,
	          p->vector_us, p->fill_us, p->latency_us, p->sync_us, p->epilogue_us, p->tail_us, p->launch_us);
	sb_printf(b, "busiest SM: critical path %.1f us, throughput bound %.1f us\n", p->chain_us, p->thru_us);
	if (c->approx)
		sb_printf(b, "note: %s\n", c->note);
	for (int i = 0; i < p->nsugg; i++)
		sb_printf(b, "suggestion: %s (up to %.1f us)\n", p->sugg[i].text, p->sugg[i].save_us);
}

static void jnum(StrBuf *b, const char *key, double v)
{
	if (isfinite(v))
		sb_printf(b, ",\"%s\":%.6g", key, v);
	else
		sb_printf(b, ",\"%s\":null", key);
}

void cost_print_json(StrBuf *b, const CostPrediction *p, const CostCounts *c, const CostWork *w)
{
	sb_puts(b, "{\"schema\":\"cake-cost/1\",\"target\":");
	sb_json_str(b, p->target);
	sb_puts(b, ",\"model\":");
	sb_json_str(b, p->version);
	jnum(b, "predicted_us", p->us);
	sb_puts(b, ",\"bottleneck\":");
	sb_json_str(b, p->bottleneck);
	sb_puts(b, ",\"parts\":{");
	sb_printf(b, "\"tensor_us\":%.6g", p->tensor_us);
	jnum(b, "memory_us", p->memory_us);
	jnum(b, "hbm_us", p->hbm_us);
	jnum(b, "l2_us", p->l2_us);
	jnum(b, "vector_us", p->vector_us);
	jnum(b, "fill_us", p->fill_us);
	jnum(b, "latency_us", p->latency_us);
	jnum(b, "sync_us", p->sync_us);
	jnum(b, "epilogue_us", p->epilogue_us);
	jnum(b, "tail_us", p->tail_us);
	jnum(b, "launch_us", p->launch_us);
	jnum(b, "chain_us", p->chain_us);
	jnum(b, "thru_us", p->thru_us);
	sb_puts(b, "},\"classes\":{");
	for (int i = 0; i < COST_NCLASS; i++)
		sb_printf(b, "%s\"%s_us\":%.6g", i ? "," : "", cost_class_names[i], isfinite(p->share[i]) ? p->share[i] : 0);
	jnum(b, "memory_busy", p->mem_busy);
	sb_puts(b, ",\"rule\":");
	sb_json_str(b, cost_rule_names[p->rule]);
	sb_puts(b, "},\"work\":{");
	sb_printf(b, "\"flops\":%.15g,\"bytes\":%.15g", w->flops, w->bytes);
	jnum(b, "dram_bytes", p->dram_bytes);
	sb_puts(b, ",\"source\":");
	sb_json_str(b, w->source ? w->source : "?");
	sb_puts(b, "},\"launch\":{");
	sb_printf(b, "\"tiles\":%.0f,\"persistent\":%s,\"block_threads\":%d,\"regs_per_thread\":%d,\"smem_bytes\":%lld",
	          c->tiles, c->persistent ? "true" : "false", c->block_threads, c->regs_per_thread, c->smem_bytes);
	sb_printf(b, ",\"ctas_per_sm\":%d,\"occupancy_limit\":", p->ctas_per_sm);
	sb_json_str(b, p->occ_limit);
	sb_printf(b, ",\"active_sms\":%d", p->active_sms);
	jnum(b, "waves", p->waves);
	jnum(b, "wave_efficiency", p->wave_efficiency);
	sb_puts(b, "},\"loop\":");
	if (c->has_loop) {
		sb_puts(b, "{\"pipeline\":");
		sb_json_str(b, c->pipe);
		sb_printf(b, ",\"stages\":%d,\"role\":", c->stages);
		sb_json_str(b, c->loop_role ? c->loop_role : "?");
		sb_printf(b, ",\"iterations\":%.0f", c->iters);
		jnum(b, "iteration_us", p->it_us);
		jnum(b, "compute_us", p->core_us);
		jnum(b, "wgmma_us", p->mma_it_us);
		jnum(b, "vector_us", p->vec_it_us);
		jnum(b, "feed_us", p->feed_us);
		jnum(b, "arrival_us", p->arrive_us);
		jnum(b, "exposed_us", p->exposed_it_us);
		jnum(b, "bytes", c->it.bytes);
		sb_printf(b, ",\"stages_needed\":%d,\"stages_max\":%d}", p->stages_needed, p->stages_max);
	} else {
		sb_puts(b, "null");
	}
	jnum(b, "tflops", p->tflops);
	sb_puts(b, ",\"approx\":");
	sb_puts(b, c->approx ? "true" : "false");
	sb_puts(b, ",\"note\":");
	sb_json_str(b, c->note);
	sb_puts(b, ",\"suggestions\":[");
	for (int i = 0; i < p->nsugg; i++) {
		sb_puts(b, i ? ",{\"text\":" : "{\"text\":");
		sb_json_str(b, p->sugg[i].text);
		sb_printf(b, ",\"save_us\":%.3g}", p->sugg[i].save_us);
	}
	sb_puts(b, "]}");
}
