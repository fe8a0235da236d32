/*
 * resource.c — per-target resource limits (CK-RES-*).
 *
 * The lowering derives the shared-memory layout, the register split and the
 * barrier table; this family checks the same numbers against the target's
 * limits (base/target.h) first, so that a schedule which cannot launch is
 * rejected with the numbers that make it fail:
 *
 *   - shared memory: the layout of the schedule model (sched.h, "Shared-
 *     memory layout"), the one the lowering uses: swizzled buffers aligned to
 *     1024 B, TMA destinations and wgmma operands to 128 B, others to 16 B;
 *     largest alignment first, ring buffers times stages, then the 8-byte
 *     mbarriers, plus slack of the largest alignment for the dynamic base.
 *     The total must fit the target table's smem_per_block (227 KB on
 *     sm_90a / sm_100a, 163 KB on sm_80).
 *   - registers: regs x threads summed over roles <= the registers the CTA is
 *     launched with, threads x min(256, the multiple of 8 at or below 65536 /
 *     threads) (ptxas gives a kernel that uses setmaxnreg the most its launch
 *     bounds allow, and setmaxnreg only moves registers between warpgroups:
 *     an increase the pool cannot cover blocks forever); setmaxnreg takes
 *     multiples of 8 in 24..256 and acts per warpgroup. The numbers are the
 *     target table's setmaxnreg_max, reg_alloc_unit, regs_per_sm and
 *     setmaxnreg_min.
 *   - threads <= 1024; wgmma roles warpgroup-aligned; named barriers and
 *     mbarrier counts within their hardware fields; tx bytes per phase.
 *   - fragments: the sum a role's fragments need against its `regs` (a
 *     warning: lifetimes are not modelled), and one fragment against what a
 *     thread can have at all (an error: it can never be in registers).
 */
#include "verify_int.h"

static void check_smem(Sched *v)
{
	/* the layout is the model's (sched.h), the one the lowering uses */
	int big[3] = {-1, -1, -1};
	long long bigsz[3] = {0, 0, 0};
	for (int q = 0; q < v->nsmem_order; q++) {
		int m = v->smem_order[q];
		long long sz = v->smems[m].stride * v->smems[m].stages;
		for (int j = 0; j < 3; j++)
			if (sz > bigsz[j]) {
				for (int r = 2; r > j; r--) {
					big[r] = big[r - 1];
					bigsz[r] = bigsz[r - 1];
				}
				big[j] = m;
				bigsz[j] = sz;
				break;
			}
	}
	long long buffers = v->smem_bar_base;
	long long barbytes = v->smem_used - v->smem_bar_base;
	long long slack = v->smem_bytes - v->smem_used;
	long long total = v->smem_bytes;
	long long limit = target_info(v->tgt)->smem_per_block;
	if (total <= limit || big[0] < 0)
		return;
	StrBuf bb = {0};
	for (int j = 0; j < 3 && big[j] >= 0; j++) {
		SchedSmem *s = &v->smems[big[j]];
		if (j)
			sb_puts(&bb, ", ");
		if (s->stages > 1)
			sb_printf(&bb, "%s %d x %lld B", s->name, s->stages, s->bytes);
		else
			sb_printf(&bb, "%s %lld B", s->name, s->bytes);
	}
	SchedSmem *s0 = &v->smems[big[0]];
	Diag *d = v_report(v, "CK-RES-001", s0->d->span, -1, s0->name, -1, s0->pipe,
	                   "shared memory needs %lld B but %s allows %lld B per block (biggest: %s)",
	                   total, target_name(v->tgt), limit, sb_str(&bb));
	diag_set(&d->condition, "smem_total (%lld = %lld buffers + %lld barriers + %lld align slack) <= %lld",
	         total, buffers, barbytes, slack, limit);
	if (s0->pipe >= 0 && s0->stages > 1) {
		/* one stage of the ring in the layout: every ring buffer's aligned
		 * stride and one mbarrier per ring barrier (exact: see sched.h) */
		long long per = 0;
		for (int m = 0; m < v->nsmems; m++)
			if (v->smems[m].pipe == s0->pipe && v->smems[m].bytes > 0)
				per += v->smems[m].stride;
		for (int b = 0; b < v->nbars; b++)
			if (v->bars[b].pipe == s0->pipe)
				per += 8;
		int st = s0->stages;
		int need = st;
		while (need > 1 && total - (long long)(st - need) * per > limit)
			need--;
		diag_set(&d->hint, "reduce pipeline '%s' from %d to %d stages, or shrink the tiles",
		         v->pipes[s0->pipe].name, st, need);
		if (total - (long long)(st - need) * per <= limit)
			v_fix_decl_int(v, d, v->pipes[s0->pipe].d, "stages", need);
		diag_related(d, v->pipes[s0->pipe].d->span, "pipeline '%s' replicates its ring buffers %d times",
		             v->pipes[s0->pipe].name, st);
	} else {
		diag_set(&d->hint, "shrink the biggest buffers or reuse one buffer for two purposes");
	}
	sb_free(&bb);
}

static void check_warps(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	int maxhi = -1;
	int maxr = -1;
	for (int r = 0; r < v->nroles; r++) {
		SchedRole *a = &v->roles[r];
		if (a->lo < 0 || a->hi < a->lo)
			continue; /* CK-SEM-006 */
		if (a->hi > maxhi) {
			maxhi = a->hi;
			maxr = r;
		}
	}
	int threads = (maxhi + 1) * ti->warp_size;
	if (maxr >= 0 && threads > ti->max_threads_per_block) {
		Diag *d = v_report(v, "CK-RES-005", v->roles[maxr].d->span, maxr, NULL, -1, -1,
		                   "the block needs %d threads (warps 0..%d) but at most %d are allowed",
		                   threads, maxhi, ti->max_threads_per_block);
		diag_set(&d->condition, "threads (%d) <= %d", threads, ti->max_threads_per_block);
		diag_set(&d->hint, "use at most %d warps: fewer consumer warpgroups or smaller roles",
		         ti->max_threads_per_block / ti->warp_size);
	}
}

static void check_regs(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	int unit = ti->reg_alloc_unit, lo = ti->setmaxnreg_min, hi = ti->setmaxnreg_max;
	bool all = v->nroles > 0, any = false, differ = false;
	int first = -1;
	long long sum = 0;
	int maxr = -1;
	long long maxc = -1;
	for (int r = 0; r < v->nroles; r++) {
		SchedRole *a = &v->roles[r];
		int regs = a->d->regs;
		if (regs <= 0) {
			all = false;
			continue;
		}
		any = true;
		if (first < 0)
			first = regs;
		else if (regs != first)
			differ = true;
		if (regs % unit != 0 || regs < lo || regs > hi) {
			Diag *d = v_report(v, "CK-RES-003", a->d->span, r, NULL, -1, -1,
			                   "role '%s' asks for %d registers per thread, which setmaxnreg cannot set",
			                   a->name, regs);
			diag_set(&d->condition, "regs (%d) %% %d == 0 && %d <= regs <= %d", regs, unit, lo, hi);
			int fix = regs < lo ? lo : regs > hi ? hi : regs / unit * unit;
			diag_set(&d->hint, "use regs %d", fix);
			v_fix_decl_int(v, d, a->d, "regs", fix);
			if (regs > lo && regs < hi && (regs + unit - 1) / unit * unit <= hi)   /* the alternative */
				v_fix_decl_int(v, d, a->d, "regs", (regs + unit - 1) / unit * unit);
		}
		long long c = (long long)regs * a->threads;
		sum += c;
		if (c > maxc) {
			maxc = c;
			maxr = r;
		}
	}
	long long threads = 0;
	for (int r = 0; r < v->nroles; r++)
		threads += v->roles[r].threads;
	/* capped at the setmaxnreg maximum (the lowering's launch budget caps at
	 * max_regs_per_thread instead; see derive.c) */
	long long per = threads > 0 ? ti->regs_per_sm / threads / unit * unit : 0;
	per = per > hi ? hi : per;
	long long pool = per * threads;   /* what the CTA is launched with; setmaxnreg redistributes it */
	if (all && sum > pool && maxr >= 0) {
		StrBuf b = {0};
		for (int r = 0; r < v->nroles; r++)
			sb_printf(&b, "%s%s %d x %d", r ? " + " : "", v->roles[r].name, v->roles[r].d->regs,
			          v->roles[r].threads);
		Diag *d = v_report(v, "CK-RES-002", v->roles[maxr].d->span, maxr, NULL, -1, -1,
		                   "roles need %lld registers but a CTA of %lld threads is launched with %lld x %lld = %lld, "
		                   "and setmaxnreg only moves registers between warpgroups (a larger increase waits forever)",
		                   sum, threads, threads, per, pool);
		diag_set(&d->condition, "%s = %lld <= %lld", sb_str(&b), sum, pool);
		long long others = sum - maxc;
		long long fit = (pool - others) / (v->roles[maxr].threads ? v->roles[maxr].threads : 1);
		fit = fit / unit * unit;
		diag_set(&d->hint, "lower role '%s' to regs %lld or fewer", v->roles[maxr].name, fit);
		if (fit >= lo && fit < v->roles[maxr].d->regs)
			v_fix_decl_int(v, d, v->roles[maxr].d, "regs", fit);
		sb_free(&b);
	}
	int wg = ti->warpgroup_warps;
	if (any && differ) {
		for (int r = 0; r < v->nroles; r++) {
			SchedRole *a = &v->roles[r];
			if (a->warps <= 0 || (a->lo % wg == 0 && a->warps % wg == 0))
				continue;
			Diag *d = v_report(v, "CK-RES-004", a->d->span, r, NULL, -1, -1,
			                   "roles have different register budgets but role '%s' (warps %d..%d) "
			                   "does not cover whole warpgroups", a->name, a->lo, a->hi);
			diag_set(&d->condition, "warp_lo (%d) %% %d == 0 && warps (%d) %% %d == 0", a->lo, wg, a->warps, wg);
			diag_set(&d->hint, "make role '%s' span whole warpgroups (e.g. warps %d..%d)", a->name,
			         a->lo / wg * wg, a->lo / wg * wg + ((a->warps + wg - 1) / wg) * wg - 1);
		}
	}
}

static void check_wgmma_roles(Sched *v)
{
	int wg = target_info(v->tgt)->warpgroup_warps;
	for (int r = 0; r < v->nroles; r++) {
		SchedRole *a = &v->roles[r];
		if (a->warps <= 0 || !sched_role_uses(v, r, S_WGMMA))
			continue;
		if (a->lo % wg == 0 && a->warps % wg == 0)
			continue;
		Span at = a->d->span;
		for (int i = 0; i < v->nst; i++)
			if (v->st[i].role == r && v->st[i].s->kind == S_WGMMA) {
				at = v->st[i].s->span;
				break;
			}
		Diag *d = v_report(v, "CK-RES-006", at, r, NULL, -1, -1,
		                   "role '%s' issues wgmma but warps %d..%d are not whole warpgroups",
		                   a->name, a->lo, a->hi);
		diag_set(&d->condition, "warp_lo (%d) %% %d == 0 && warps (%d) %% %d == 0", a->lo, wg, a->warps, wg);
		diag_set(&d->hint, "declare role '%s' over warps %d..%d", a->name, (a->lo + wg - 1) / wg * wg,
		         (a->lo + wg - 1) / wg * wg + ((a->warps + wg - 1) / wg) * wg - 1);
		diag_related(d, a->d->span, "role '%s' declared here", a->name);
	}
}

static void check_barriers(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	int nfree = ti->named_barriers - 1;   /* barrier 0 is __syncthreads */
	int nsync = 0, last = -1;
	for (int r = 0; r < v->nroles; r++)
		if (sched_role_uses(v, r, S_SYNC)) {
			nsync++;
			last = r;
		}
	if (nsync > nfree) {
		Diag *d = v_report(v, "CK-RES-007", v->roles[last].d->span, last, NULL, -1, -1,
		                   "%d roles use named barriers but a block has %d free (%d, one reserved)",
		                   nsync, nfree, ti->named_barriers);
		diag_set(&d->condition, "roles using sync (%d) <= %d", nsync, nfree);
		diag_set(&d->hint, "merge roles or replace `sync` with mbarriers");
	}
	for (int b = 0; b < v->nbars; b++) {
		Decl *d0 = v->bars[b].d;
		if (d0->arrivals >= 1 && d0->arrivals <= ti->mbar_max_arrivals)
			continue;
		Diag *d = v_report(v, "CK-RES-007", d0->span, -1, NULL, b, -1,
		                   "barrier '%s' declares %d arrivals, outside the mbarrier count range",
		                   v->bars[b].name, d0->arrivals);
		diag_set(&d->condition, "1 <= arrivals (%d) <= %d", d0->arrivals, ti->mbar_max_arrivals);
		diag_set(&d->hint, "declare the arrivals per phase (one per arriving warpgroup or TMA role)");
	}
	/* tx bytes per phase: TMA loads signalling b within one loop body of one role */
	for (int b = 0; b < v->nbars; b++) {
		for (int r = 0; r < v->nroles; r++) {
			/* group by innermost loop */
			for (int i = 0; i < v->nst; i++) {
				SchedStmt *e = &v->st[i];
				if (e->role != r || e->s->kind != S_TMA_LOAD || sched_bar(v, e->s->name) != b)
					continue;
				/* first such statement of this loop body: sum the group */
				bool first = true;
				for (int j = 0; j < i; j++)
					if (v->st[j].role == r && v->st[j].s->kind == S_TMA_LOAD &&
					    sched_bar(v, v->st[j].s->name) == b && v->st[j].loop == e->loop)
						first = false;
				if (!first)
					continue;
				long long sum = 0;
				bool known = true;
				for (int j = i; j < v->nst; j++) {
					SchedStmt *f = &v->st[j];
					if (f->role != r || f->s->kind != S_TMA_LOAD || sched_bar(v, f->s->name) != b ||
					    f->loop != e->loop)
						continue;
					long long x = sched_tma_bytes(v, f->s);
					if (x < 0)
						known = false;
					else
						sum += x;
				}
				if (known && sum > ti->mbar_max_tx) {
					Diag *d = v_report(v, "CK-RES-008", e->s->span, r, NULL, b, -1,
					                   "TMA loads signal %lld bytes on barrier '%s' per phase, over the "
					                   "mbarrier transaction limit", sum, v->bars[b].name);
					diag_set(&d->condition, "tx_bytes(%s) (%lld) <= %lld", v->bars[b].name, sum,
					         ti->mbar_max_tx);
					diag_set(&d->hint, "split the tiles over two barriers or shrink the boxes");
				}
			}
		}
	}
}

static void check_frag_regs(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	int wg_threads = ti->warpgroup_warps * ti->warp_size;
	for (int r = 0; r < v->nroles; r++) {
		SchedRole *a = &v->roles[r];
		if (a->d->regs <= 0 || a->threads <= 0)
			continue;
		long long words = 0;
		int big = -1;
		long long bigw = -1;
		for (int f = 0; f < v->nfrags; f++) {
			SchedFrag *fr = &v->frags[f];
			if (fr->role != r || !fr->cshape)
				continue;
			long long el = 1;
			for (int q = 0; q < fr->rank; q++)
				el *= fr->dims[q];
			/* a split fragment is spread over every thread of the role; an unsplit one
			 * is replicated in each warpgroup, i.e. spread over one warpgroup's threads */
			int holders = fr->d->split != SPLIT_NONE || fr->d->lanes || a->threads < wg_threads ? a->threads : wg_threads;
			long long w = (el * dtype_size(fr->d->dt) + 3) / 4;
			w = (w + holders - 1) / holders;
			words += w;
			if (w > bigw) {
				bigw = w;
				big = f;
			}
		}
		if (big >= 0 && words > a->d->regs) {
			Diag *d = v_report(v, "CK-RES-009", v->frags[big].d->span, r, v->frags[big].name, -1, -1,
			                   "fragments of role '%s' need %lld registers per thread but the role "
			                   "has regs %d (largest: '%s', %lld)", a->name, words, a->d->regs,
			                   v->frags[big].name, bigw);
			diag_set(&d->condition, "fragment registers (%lld) <= regs (%d)", words, a->d->regs);
			diag_set(&d->hint, "raise the role's regs, add warpgroups or shrink the tile");
		}
	}
}

/* CK-RES-011: one fragment larger than the registers a thread can have. A fragment is one
 * register array that the lowering keeps whole (a wgmma accumulator is the instruction's
 * operand; the others are indexed by unrolled loops), so one that needs more 32-bit words per
 * thread than the thread can be given cannot live in registers at any moment: ptxas puts it
 * in local memory, a certain spill. The ceiling is the target's per-thread maximum (255),
 * lower when the CTA is so large that the launch cannot give every thread that many (65536 /
 * threads, in units of 8). The sum over a role's fragments against its `regs` (CK-RES-009) is
 * only a warning, since fragments need not all be live at once; this is the case that is
 * certain. Found from real campaigns: `cake evolve` on an H200 spent most of its wall time
 * compiling such candidates (a 256x256 f32 accumulator on one warpgroup, 512 words per
 * thread) that ptxas then spilled by 10 KB. */
static void check_frag_ceiling(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	int wg_threads = ti->warpgroup_warps * ti->warp_size;
	int cta = 0;
	for (int r = 0; r < v->nroles; r++)
		cta += v->roles[r].threads > 0 ? v->roles[r].threads : 0;
	if (cta <= 0)
		return;
	int ceiling = ti->max_regs_per_thread;
	int launch = ti->regs_per_sm / cta / ti->reg_alloc_unit * ti->reg_alloc_unit;
	if (launch < ceiling)
		ceiling = launch;
	for (int f = 0; f < v->nfrags; f++) {
		SchedFrag *fr = &v->frags[f];
		if (fr->role < 0 || !fr->cshape)
			continue;
		SchedRole *a = &v->roles[fr->role];
		if (a->threads <= 0)
			continue;
		long long el = 1;
		for (int q = 0; q < fr->rank; q++)
			el *= fr->dims[q];
		int holders = fr->d->split != SPLIT_NONE || fr->d->lanes || a->threads < wg_threads ? a->threads : wg_threads;
		long long w = ((el * dtype_size(fr->d->dt) + 3) / 4 + holders - 1) / holders;
		if (w <= ceiling)
			continue;
		Diag *d = v_report(v, "CK-RES-011", fr->d->span, fr->role, fr->name, -1, -1,
		                   "fragment '%s' needs %lld registers per thread (%lld elements over %d threads of role '%s'), "
		                   "more than a thread can have (%d): it cannot be held in registers",
		                   fr->name, w, el, holders, a->name, ceiling);
		diag_set(&d->condition, "registers per thread of '%s' (%lld) <= %d", fr->name, w, ceiling);
		diag_set(&d->hint, "split it over more warpgroups (`split m` with more warps in role '%s') or shrink the tile",
		         a->name);
	}
}

/* CK-RES-010: a thread tile's rows divide over the role's warps (32 / lanes rows per warp per pass). */
static void check_tiles(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	for (int f = 0; f < v->nfrags; f++) {
		SchedFrag *fr = &v->frags[f];
		if (!fr->d->lanes || fr->role < 0 || !fr->cshape || fr->rank != 2)
			continue;
		SchedRole *a = &v->roles[fr->role];
		int warps = a->threads / ti->warp_size;
		long long pass = (long long)warps * (ti->warp_size / fr->d->lanes);
		if (warps <= 0 || fr->dims[0] % pass == 0)
			continue;
		Diag *d = v_report(v, "CK-RES-010", fr->d->span, fr->role, fr->name, -1, -1,
		                   "thread tile '%s' has %lld rows, but role '%s' covers %lld rows per pass (%d warps x %d rows of %d lanes)",
		                   fr->name, fr->dims[0], a->name, pass, warps, ti->warp_size / fr->d->lanes, fr->d->lanes);
		diag_set(&d->condition, "rows (%lld) %% (warps x 32 / lanes) (%lld) == 0", fr->dims[0], pass);
		diag_set(&d->hint, "use a multiple of %lld rows, or change the role's warps or the tile's lanes", pass);
	}
}

void verify_resource(Sched *v)
{
	check_tiles(v);
	check_smem(v);
	check_warps(v);
	check_regs(v);
	check_wgmma_roles(v);
	check_barriers(v);
	check_frag_regs(v);
	check_frag_ceiling(v);
}
