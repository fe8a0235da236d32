/*
 * derive.c — the mechanics a Cake IR schedule leaves to the compiler.
 *
 * A schedule states roles, buffers, barriers, pipelines and tiles. What a
 * CUDA programmer would otherwise compute by hand is derived here, once, into
 * a Plan (lower.h) that both the emitter (sm90.c) and the GPU runner read.
 *
 * derive_plan first builds the schedule model (src/sched/sched.h), the same
 * one the verifier checks, and every step reads it: roles, pipelines,
 * buffers, barriers and fragments in the model's order (which is therefore
 * the Plan's), the statement index with each statement's role and loops,
 * the shared-memory layout and the "starts free" decision. Nothing is
 * resolved or laid out a second time here; what is local is what only the
 * lowering needs (warpgroup identity, setmaxnreg, descriptors, tensor maps,
 * expect_tx bytes, fragment register layouts, the argument order) and the
 * CK-LOW-* refusals. Hardware limits come from the target table
 * (base/target.h). The steps:
 *
 *   roles      warp range -> thread range, warpgroups, the elected thread of
 *              a role that only issues asynchronous work (a TMA producer),
 *              setmaxnreg per role (dec below the launch budget, inc above;
 *              emitted only when roles state different budgets);
 *   smem       the model's layout (sched.h, "Shared-memory layout"): 1024 B
 *              alignment for a swizzled buffer, 128 B for a TMA destination
 *              or wgmma operand, 16 B otherwise, a ring buffer one slot per
 *              stage, largest alignment first, then the mbarriers; the kernel
 *              aligns the dynamic base itself, so the launch asks for the
 *              slack too;
 *   barriers   arrival count per phase as declared; expect_tx bytes = the sum
 *              of the TMA boxes that signal the barrier in one iteration;
 *              "starts free" (sched_starts_free) for a ring barrier that no
 *              TMA signals, waited by the roles that write the ring's buffers
 *              (the producer's first wait on an empty slot must pass, so it
 *              waits for parity phase^1);
 *   pipelines  one stage/phase register pair per (role, pipeline), advanced
 *              at the end of every iteration of a loop pipelined on it;
 *   TMA        one tensor map per (global tensor, box, swizzle): extents and
 *              byte strides innermost first (symbolic, evaluated at launch),
 *              box from the slice lengths;
 *   wgmma      descriptor pieces per operand buffer (LBO, SBO = 8 rows x row
 *              bytes, layout bits from the swizzle) and the accumulator
 *              fragment's split over the owning role's warpgroups;
 *   launch     grid extents (symbolic), persistent flag, cluster, threads;
 *              a grouped raster (`group G`) launches a 1-D grid of all tiles
 *              (or the persistent CTAs) and keeps the declared extents as the
 *              tile space the emitted mapping decodes;
 *   arguments  tensor maps, then pointers of tensors accessed directly, then
 *              dims, then scalar parameters.
 *
 * Anything the lowering cannot handle is refused here or in sm90.c with a
 * CK-LOW-* error naming the construct and the target; the plan is never
 * produced for a schedule that would be lowered wrongly.
 */
#include "lower.h"
#include "../sched/sched.h"

#include <string.h>

/* ---- small lookups ---- */

int plan_role_index(const Plan *p, const char *name)
{
	for (int i = 0; name && i < p->nroles; i++)
		if (strcmp(p->roles[i].name, name) == 0)
			return i;
	return -1;
}

int plan_buffer_index(const Plan *p, const char *name)
{
	for (int i = 0; name && i < p->nbuffers; i++)
		if (strcmp(p->buffers[i].name, name) == 0)
			return i;
	return -1;
}

int plan_barrier_index(const Plan *p, const char *name)
{
	for (int i = 0; name && i < p->nbarriers; i++)
		if (strcmp(p->barriers[i].name, name) == 0)
			return i;
	return -1;
}

int plan_pipe_index(const Plan *p, const char *name)
{
	for (int i = 0; name && i < p->npipes; i++)
		if (strcmp(p->pipes[i].name, name) == 0)
			return i;
	return -1;
}

int plan_frag_index(const Plan *p, const char *name)
{
	for (int i = 0; name && i < p->nfrags; i++)
		if (strcmp(p->frags[i].name, name) == 0)
			return i;
	return -1;
}

const PlanLoop *plan_loop_of(const Plan *p, const Stmt *loop)
{
	for (int i = 0; i < p->nloops; i++)
		if (p->loops[i].loop == loop)
			return &p->loops[i];
	return NULL;
}

int plan_tmap_of(const Plan *p, const Stmt *tma)
{
	for (int i = 0; i < p->ntmaps; i++)
		for (int j = 0; j < p->tmaps[i].nuses; j++)
			if (p->tmaps[i].uses[j] == tma)
				return i;
	return -1;
}

const char *lower_base_name(const Expr *e)
{
	while (e && (e->kind == E_INDEX || e->kind == E_TRANSPOSE))
		e = e->kind == E_INDEX ? e->base : e->lhs;
	return (e && e->kind == E_IDENT) ? e->name : NULL;
}

/* ---- statement walk with context ---- */

/* The schedule model's statement index is the walk: every statement in
 * preorder with its role (index into Plan.roles: the model's role order),
 * innermost loop and innermost pipelined loop. */
typedef void (*VisitFn)(void *st, Stmt *s, const SchedStmt *w);

static void walk_kernel(const Sched *m, VisitFn fn, void *st)
{
	for (int i = 0; i < m->nst; i++)
		fn(st, m->st[i].s, &m->st[i]);
}

/* Is w inside an `if` within its innermost loop (or role program)? */
static bool in_if(const SchedStmt *w)
{
	return w->if_idx > w->loop_idx;
}

/* ---- derivation state ---- */

typedef struct Der {
	Ctx *c;
	Kernel *k;
	Plan *p;
	const TargetInfo *ti;   /* the kernel's row of the target table */
	Sched m;                /* the schedule model, shared with the verifier */
	bool ok;
	/* per-role: does the program only issue async work? */
	bool *role_async_only;
} Der;

static Diag *low_err(Der *d, const char *id, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static Diag *low_err(Der *d, const char *id, Span sp, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	d->ok = false;
	return diag_add(d->c->diags, id, SEV_ERROR, sp, "%s", buf);
}

/* Declared extent e, whose value in the model is dim: true with *out = dim when it
 * is a positive constant, else reports CK-LOW-005. */
static bool const_extent(Der *d, long long dim, Expr *e, const char *what, const char *name, long long *out)
{
	*out = dim;
	if (dim > 0)
		return true;
	Diag *g = low_err(d, "CK-LOW-005", e ? e->span : NOSPAN,
	                  "%s '%s' needs constant positive extents to be lowered for sm_90a", what, name);
	diag_set(&g->resource, "%s", name);
	diag_set(&g->hint, "use integer literals or consts for the extents of %s", name);
	return false;
}

/* ---- roles ---- */

static void derive_roles(Der *d)
{
	Kernel *k = d->k;
	Plan *p = d->p;
	const TargetInfo *ti = d->ti;
	int maxwarp_limit = ti->max_threads_per_block / ti->warp_size - 1;
	int maxwarp = -1;
	p->nroles = d->m.nroles;
	p->roles = arena_alloc(&d->c->arena, sizeof(PlanRole) * (size_t)(p->nroles ? p->nroles : 1));
	for (int i = 0; i < p->nroles; i++) {
		Decl *r = d->m.roles[i].d;
		PlanRole *pr = &p->roles[i];
		pr->name = r->name;
		pr->decl = r;
		pr->warp_lo = r->warp_lo;
		pr->warp_hi = r->warp_hi;
		if (r->warp_lo < 0 || r->warp_hi < r->warp_lo || r->warp_hi > maxwarp_limit) {
			Diag *g = low_err(d, "CK-LOW-003", r->span, "role '%s' has warp range %d..%d, which sm_90a cannot launch (0 <= lo <= hi <= %d)",
			                  r->name, r->warp_lo, r->warp_hi, maxwarp_limit);
			diag_set(&g->role, "%s", r->name);
			continue;
		}
		pr->nwarps = r->warp_hi - r->warp_lo + 1;
		pr->thread_lo = r->warp_lo * ti->warp_size;
		pr->nthreads = pr->nwarps * ti->warp_size;
		pr->wg_lo = r->warp_lo / ti->warpgroup_warps;
		pr->wg_hi = r->warp_hi / ti->warpgroup_warps;
		bool whole = r->warp_lo % ti->warpgroup_warps == 0 && pr->nwarps % ti->warpgroup_warps == 0;
		pr->nwg = whole ? pr->nwarps / ti->warpgroup_warps : 0;
		pr->arrivals_per_arrive = pr->nwg > 0 ? pr->nwg : 1;
		pr->regs = r->regs;
		if (r->warp_hi > maxwarp)
			maxwarp = r->warp_hi;
	}
	if (p->nroles == 0) {
		low_err(d, "CK-LOW-003", k->span, "kernel '%s' declares no role; sm_90a lowering needs at least one `role`", k->name);
		return;
	}
	p->block_threads = (maxwarp + 1) * ti->warp_size;
	if (p->block_threads > ti->max_threads_per_block) {
		low_err(d, "CK-LOW-003", k->span, "kernel '%s' needs %d threads per block; sm_90a allows at most %d", k->name, p->block_threads,
		        ti->max_threads_per_block);
		return;
	}
	int wg_threads = ti->warpgroup_warps * ti->warp_size;
	p->nwarpgroups = (p->block_threads + wg_threads - 1) / wg_threads;
	int base = ti->regs_per_sm / (p->block_threads > 0 ? p->block_threads : 1);
	if (base > ti->max_regs_per_thread)
		base = ti->max_regs_per_thread;
	base = base / ti->reg_alloc_unit * ti->reg_alloc_unit;
	p->base_regs = base;
	/* setmaxnreg only when roles state different budgets */
	int first = 0;
	bool differ = false;
	for (int i = 0; i < p->nroles; i++) {
		if (!p->roles[i].regs)
			continue;
		if (!first)
			first = p->roles[i].regs;
		else if (p->roles[i].regs != first)
			differ = true;
	}
	long long total = 0;
	for (int i = 0; i < p->nroles; i++) {
		PlanRole *pr = &p->roles[i];
		Decl *r = pr->decl;
		if (!differ || !pr->regs) {
			total += (long long)pr->nthreads * base;
			pr->regs_dir = 0;
			continue;
		}
		if (pr->regs < ti->setmaxnreg_min || pr->regs > ti->setmaxnreg_max || pr->regs % ti->reg_alloc_unit != 0) {
			Diag *g = low_err(d, "CK-LOW-003", r->span, "role '%s' asks for %d registers per thread; setmaxnreg on sm_90a takes a multiple of %d in %d..%d",
			                  r->name, pr->regs, ti->reg_alloc_unit, ti->setmaxnreg_min, ti->setmaxnreg_max);
			diag_set(&g->role, "%s", r->name);
			diag_set(&g->hint, "round the regs of role '%s' to a multiple of %d between %d and %d", r->name, ti->reg_alloc_unit,
			         ti->setmaxnreg_min, ti->setmaxnreg_max);
			continue;
		}
		if (pr->nwg == 0) {
			Diag *g = low_err(d, "CK-LOW-003", r->span, "role '%s' (warps %d..%d) states regs but is not whole warpgroups; setmaxnreg on sm_90a applies to aligned warpgroups of 4 warps",
			                  r->name, r->warp_lo, r->warp_hi);
			diag_set(&g->role, "%s", r->name);
			diag_set(&g->hint, "give role '%s' a warp range starting at a multiple of 4 with a multiple of 4 warps, or drop its regs", r->name);
			continue;
		}
		pr->regs_dir = pr->regs < base ? -1 : pr->regs > base ? 1 : 0;
		total += (long long)pr->nthreads * pr->regs;
	}
	if (total > ti->regs_per_sm) {
		Diag *g = low_err(d, "CK-LOW-003", k->span, "the roles of kernel '%s' ask for %lld registers in all; an sm_90a SM has %d", k->name, total,
		                  ti->regs_per_sm);
		diag_set(&g->condition, "sum(role threads x regs) <= %d", ti->regs_per_sm);
		diag_set(&g->hint, "lower the regs of the producer or consumer roles");
	}
}

/* ---- what each role's program does ---- */

static void mark_async(void *st, Stmt *s, const SchedStmt *w)
{
	Der *d = st;
	if (w->role < 0)
		return;
	switch (s->kind) {
	case S_FOR: case S_IF: case S_WAIT: case S_TMA_LOAD: case S_LET:
		break;
	case S_ARRIVE:
		break;
	default:
		d->role_async_only[w->role] = false;
	}
}

/* Which roles only issue asynchronous work: one elected thread runs them. */
static void derive_issue(Der *d)
{
	Plan *p = d->p;
	d->role_async_only = arena_alloc(&d->c->arena, sizeof(bool) * (size_t)p->nroles);
	for (int i = 0; i < p->nroles; i++)
		d->role_async_only[i] = true;
	walk_kernel(&d->m, mark_async, d);
	for (int i = 0; i < p->nroles; i++)
		p->roles[i].single_thread = d->role_async_only[i];
}

/* ---- shared memory ---- */

static void derive_smem(Der *d)
{
	Kernel *k = d->k;
	Plan *p = d->p;
	const Sched *m = &d->m;
	p->nbuffers = m->nsmems;
	p->buffers = arena_alloc(&d->c->arena, sizeof(PlanBuffer) * (size_t)(m->nsmems ? m->nsmems : 1));
	for (int i = 0; i < m->nsmems; i++) {
		const SchedSmem *ms = &m->smems[i];
		Decl *s = ms->d;
		PlanBuffer *b = &p->buffers[i];
		b->name = s->name;
		b->decl = s;
		b->dt = s->dt;
		b->rank = s->rank;
		b->swizzle = s->swizzle;
		/* the model's layout: one computation for the verifier and the lowering */
		b->tma_dst = ms->tma_dst;
		b->tma_src = ms->tma_src;
		b->wgmma_operand = ms->wgmma_operand;
		b->align = ms->align;
		b->stages = ms->stages;
		b->pipe = ms->pipe;
		b->offset = ms->offset;
		bool ok = s->rank >= 1 && s->rank <= MAX_RANK;
		for (int j = 0; ok && j < s->rank; j++)
			if (!const_extent(d, ms->dims[j], s->shape[j], "shared buffer", s->name, &b->shape[j]))
				ok = false;
		if (!ok)
			continue;
		b->bytes_per_stage = ms->bytes;
		b->stage_stride = ms->stride;
		b->row_bytes = (int)(b->shape[s->rank - 1] * dtype_size(s->dt));
		if (s->ring && ms->pipe < 0) {
			Diag *g = low_err(d, "CK-LOW-008", s->ring_span, "shared buffer '%s' rings over unknown pipeline '%s'", s->name, s->ring);
			diag_set(&g->resource, "%s", s->name);
			continue;
		}
		if (b->wgmma_operand) {
			b->desc_layout = b->swizzle == SWZ_128B ? 1 : b->swizzle == SWZ_64B ? 2 : b->swizzle == SWZ_32B ? 3 : 0;
			b->desc_lbo = 16;
			/* 8 rows of one swizzle span: rows wider than the span are column panels (sm90.c) */
			int span = swizzle_bytes(b->swizzle);
			b->desc_sbo = 8 * (span && b->row_bytes > span ? span : b->row_bytes);
		}
	}
	for (int i = 0; i < p->nbarriers; i++)
		p->barriers[i].offset = m->bars[i].offset;
	p->smem_used = m->smem_used;
	p->smem_base_align = m->smem_base_align;
	p->smem_bytes = m->smem_bytes;
	int maxalign = m->smem_base_align;
	if (p->smem_bytes > d->ti->smem_per_block) {
		Diag *g = low_err(d, "CK-LOW-004", k->span, "kernel '%s' needs %lld bytes of shared memory (buffers, barriers and %d bytes of alignment slack); sm_90a allows %lld per block",
		                  k->name, p->smem_bytes, maxalign, d->ti->smem_per_block);
		diag_set(&g->condition, "smem_bytes <= %lld", d->ti->smem_per_block);
		diag_set(&g->hint, "reduce the pipeline stages or the tile sizes");
	}
}

/* ---- pipelines, barriers ---- */

static void derive_pipes(Der *d)
{
	Plan *p = d->p;
	p->npipes = d->m.npipes;
	p->pipes = arena_alloc(&d->c->arena, sizeof(PlanPipe) * (size_t)(p->npipes ? p->npipes : 1));
	for (int i = 0; i < p->npipes; i++) {
		Decl *pd = d->m.pipes[i].d;
		p->pipes[i].name = pd->name;
		p->pipes[i].decl = pd;
		p->pipes[i].stages = pd->stages;
		if (pd->stages < 1 || pd->stages > 64)
			low_err(d, "CK-LOW-008", pd->span, "pipeline '%s' has %d stages; the sm_90a lowering supports 1..64", pd->name, pd->stages);
	}
}

static void derive_barriers_decl(Der *d)
{
	Plan *p = d->p;
	p->nbarriers = d->m.nbars;
	p->barriers = arena_alloc(&d->c->arena, sizeof(PlanBarrier) * (size_t)(p->nbarriers ? p->nbarriers : 1));
	for (int i = 0; i < p->nbarriers; i++) {
		const SchedBar *mb = &d->m.bars[i];
		Decl *bd = mb->d;
		PlanBarrier *b = &p->barriers[i];
		b->name = bd->name;
		b->decl = bd;
		b->count = mb->count;   /* the model's layout: one mbarrier per ring stage */
		b->pipe = mb->pipe;
		b->arrivals = bd->arrivals;
		if (bd->arrivals < 1 || bd->arrivals > d->ti->mbar_max_arrivals) {
			Diag *g = low_err(d, "CK-LOW-007", bd->span, "barrier '%s' declares %d arrivals; an sm_90a mbarrier counts 1..%d", bd->name, bd->arrivals,
			                  d->ti->mbar_max_arrivals);
			diag_set(&g->barrier, "%s", bd->name);
		}
	}
}

typedef struct TxState {
	Der *d;
	Stmt **first_loop;   /* per barrier: loop of its first TMA signal */
	bool *seen;
	int *waiter_writes;  /* per barrier: -1 unknown, 0 waiters read, 1 waiters write ring */
} TxState;

/* Bytes a TMA load writes into its buffer per stage: the whole stage, or for a load into one
 * column panel (`tma buf[:, c +: w] <- ...`, checked by sema) that panel's rows x span. */
/* The shared bytes one TMA copy moves: a whole buffer stage, or one column panel (rows x the
 * swizzle span) when the shared side names a panel (`buf[:, c +: W]`, sema checked the form). */
static long long tma_smem_bytes(const PlanBuffer *b, const Stmt *s)
{
	const Expr *sh = s->kind == S_TMA_STORE ? s->src : s->dst;
	if (sh && sh->kind == E_INDEX && b->swizzle != SWZ_NONE && b->rank == 2)
		return b->shape[0] * swizzle_bytes(b->swizzle);
	return b->bytes_per_stage;
}

static void tx_visit(void *st, Stmt *s, const SchedStmt *w)
{
	TxState *t = st;
	Der *d = t->d;
	Plan *p = d->p;
	if (s->kind == S_TMA_LOAD) {
		int bi = plan_barrier_index(p, s->name);
		int buf = plan_buffer_index(p, lower_base_name(s->dst));
		if (bi < 0 || buf < 0)
			return;
		PlanBarrier *b = &p->barriers[bi];
		if (in_if(w)) {
			Diag *g = low_err(d, "CK-LOW-007", s->span, "tma signalling barrier '%s' under an `if` inside its loop is not lowered yet for sm_90a (its expect_tx byte count would depend on the branch)", b->name);
			diag_set(&g->barrier, "%s", b->name);
			diag_set(&g->hint, "issue the load unconditionally, or split the loop");
			return;
		}
		if (b->pipe >= 0 && (!w->ploop || w->loop != w->ploop || strcmp(w->ploop->pipe, p->pipes[b->pipe].name) != 0)) {
			Diag *g = low_err(d, "CK-LOW-008", s->span, "tma signalling ring barrier '%s' must sit directly in a loop pipelined on '%s' to be lowered for sm_90a (one phase per iteration)",
			                  b->name, p->pipes[b->pipe].name);
			diag_set(&g->barrier, "%s", b->name);
			diag_set(&g->pipeline, "%s", p->pipes[b->pipe].name);
			return;
		}
		if (!t->seen[bi]) {
			t->seen[bi] = true;
			t->first_loop[bi] = w->loop;
		} else if (t->first_loop[bi] != w->loop) {
			Diag *g = low_err(d, "CK-LOW-007", s->span, "barrier '%s' is signalled by tma loads in different loops; the sm_90a lowering derives one expect_tx count per barrier and does not lower this yet", b->name);
			diag_set(&g->barrier, "%s", b->name);
			diag_set(&g->hint, "use a separate barrier for each loop's loads");
			return;
		}
		b->tx_bytes += tma_smem_bytes(&p->buffers[buf], s);
	} else if (s->kind == S_WAIT) {
		int bi = plan_barrier_index(p, s->name);
		if (bi < 0 || w->role < 0)
			return;
		PlanBarrier *b = &p->barriers[bi];
		/* the one "starts free" decision, shared with the verifier */
		int writes = sched_starts_free(&d->m, w->role, bi);
		if (b->pipe >= 0) {
			if (!w->ploop || !w->ploop->pipe || strcmp(w->ploop->pipe, p->pipes[b->pipe].name) != 0) {
				Diag *g = low_err(d, "CK-LOW-008", s->span, "wait on ring barrier '%s' outside a loop pipelined on '%s'; the sm_90a lowering derives its stage from such a loop",
				                  b->name, p->pipes[b->pipe].name);
				diag_set(&g->barrier, "%s", b->name);
				diag_set(&g->pipeline, "%s", p->pipes[b->pipe].name);
				diag_set(&g->hint, "move the wait into a `for ... pipelined %s` loop", p->pipes[b->pipe].name);
			}
		}
		if (t->waiter_writes[bi] < 0) {
			t->waiter_writes[bi] = writes;
			b->starts_free = writes;
		} else if (t->waiter_writes[bi] != writes) {
			Diag *g = low_err(d, "CK-LOW-012", s->span, "barrier '%s' is waited both by a role that writes ring '%s' (starts free) and by one that reads it; the sm_90a lowering cannot give it one phase convention",
			                  b->name, b->pipe >= 0 ? p->pipes[b->pipe].name : "-");
			diag_set(&g->barrier, "%s", b->name);
		}
	}
}

static void derive_barrier_use(Der *d)
{
	Plan *p = d->p;
	int n = p->nbarriers ? p->nbarriers : 1;
	TxState t = {d, arena_alloc(&d->c->arena, sizeof(Stmt *) * (size_t)n),
	             arena_alloc(&d->c->arena, sizeof(bool) * (size_t)n),
	             arena_alloc(&d->c->arena, sizeof(int) * (size_t)n)};
	for (int i = 0; i < p->nbarriers; i++)
		t.waiter_writes[i] = -1;
	walk_kernel(&d->m, tx_visit, &t);
	for (int i = 0; i < p->nbarriers; i++) {
		if (p->barriers[i].tx_bytes > d->ti->mbar_max_tx) {
			Diag *g = low_err(d, "CK-LOW-007", p->barriers[i].decl->span, "barrier '%s' would expect %lld transaction bytes per phase; an sm_90a mbarrier counts fewer than 2^20",
			                  p->barriers[i].name, p->barriers[i].tx_bytes);
			diag_set(&g->barrier, "%s", p->barriers[i].name);
		}
	}
}

/* ---- pipelined loops ---- */

static void loop_visit(void *st, Stmt *s, const SchedStmt *w)
{
	Der *d = st;
	Plan *p = d->p;
	if (s->kind != S_FOR || !s->pipe)
		return;
	int pi = plan_pipe_index(p, s->pipe);
	if (pi < 0 || w->role < 0) {
		low_err(d, "CK-LOW-008", s->pipe_span, "loop pipelined on unknown pipeline '%s' (or outside a role)", s->pipe);
		return;
	}
	if (w->ploop && w->ploop->pipe && strcmp(w->ploop->pipe, s->pipe) == 0) {
		Diag *g = low_err(d, "CK-LOW-008", s->span, "loops pipelined on '%s' are nested; the sm_90a lowering advances one stage per iteration of one loop and does not lower this", s->pipe);
		diag_set(&g->pipeline, "%s", s->pipe);
		return;
	}
	PlanLoop *l = &p->loops[p->nloops++];
	l->loop = s;
	l->pipe = pi;
	l->role = w->role;
	l->stage_var = arena_printf(&d->c->arena, "%s_stage", s->pipe);
	l->phase_var = arena_printf(&d->c->arena, "%s_phase", s->pipe);
}

static void count_loops(void *st, Stmt *s, const SchedStmt *w)
{
	if (s->kind == S_FOR && s->pipe)
		(*(int *)st)++;
}

static void derive_loops(Der *d)
{
	int nl = 0;
	walk_kernel(&d->m, count_loops, &nl);
	d->p->loops = arena_alloc(&d->c->arena, sizeof(PlanLoop) * (size_t)(nl ? nl : 1));
	walk_kernel(&d->m, loop_visit, d);
}

/* ---- TMA maps ---- */

static Expr *mk_int(Der *d, long long v)
{
	Expr *e = arena_alloc(&d->c->arena, sizeof(Expr));
	e->kind = E_INT;
	e->span = NOSPAN;
	e->ival = v;
	e->is_const = true;
	e->cval = v;
	return e;
}

static Expr *mk_mul(Der *d, Expr *a, Expr *b)
{
	Expr *e = arena_alloc(&d->c->arena, sizeof(Expr));
	e->kind = E_BINARY;
	e->span = NOSPAN;
	e->op = '*';
	e->lhs = a;
	e->rhs = b;
	return e;
}

static void tmap_visit(void *st, Stmt *s, const SchedStmt *w)
{
	Der *d = st;
	Plan *p = d->p;
	Kernel *k = d->k;
	if (s->kind != S_TMA_LOAD && s->kind != S_TMA_STORE)
		return;
	bool load = s->kind == S_TMA_LOAD;
	const Expr *gref = load ? s->src : s->dst, *sref = load ? s->dst : s->src;
	const char *what = load ? "tma load" : "tma store";
	const char *pname = lower_base_name(gref);
	Decl *param = sched_param(&d->m, pname);
	int bi = plan_buffer_index(p, lower_base_name(sref));
	if (!param || param->space != SP_GLOBAL || !gref || gref->kind != E_INDEX || bi < 0) {
		low_err(d, "CK-LOW-006", s->span, load ? "tma load must copy a slice of a global tensor parameter into a shared buffer"
		                                       : "tma store must copy a shared buffer into a slice of a global tensor parameter");
		return;
	}
	PlanBuffer *buf = &p->buffers[bi];
	int r = param->rank;
	if (r < 1 || r > d->ti->tma_max_rank || r > MAX_RANK || gref->nslices != r) {
		low_err(d, "CK-LOW-006", gref->span, "%s %s '%s' needs one slice per dimension (rank %d, at most %d)", what, load ? "from" : "into",
		        pname, r, MAX_RANK);
		return;
	}
	int box[MAX_RANK] = {0};
	long long elems = 1;
	for (int i = 0; i < r; i++) {
		Slice *sl = &gref->slices[r - 1 - i];
		long long len = 1;
		if (sl->kind == SL_RANGE) {
			if (!eval_expr(sl->len, k, NULL, &len) || len <= 0) {
				Diag *g = low_err(d, "CK-LOW-006", sl->span, "tma box extent of '%s' must be a positive constant", pname);
				diag_set(&g->resource, "%s", pname);
				return;
			}
		} else if (sl->kind == SL_ALL) {
			if (!eval_expr(param->shape[r - 1 - i], k, NULL, &len)) {
				Diag *g = low_err(d, "CK-LOW-006", sl->span, "`:` over symbolic dimension of '%s' cannot be a tma box; give an explicit `start +: length`", pname);
				diag_set(&g->resource, "%s", pname);
				return;
			}
		}
		if (len > d->ti->tma_box_max) {
			Diag *g = low_err(d, "CK-LOW-006", sl->span, "tma box extent %lld of '%s' exceeds %d, the sm_90a TMA limit", len, pname, d->ti->tma_box_max);
			diag_set(&g->resource, "%s", pname);
			diag_set(&g->hint, "split the load into boxes of at most %d along this dimension", d->ti->tma_box_max);
			return;
		}
		box[i] = (int)len;
		elems *= len;
	}
	int esz = dtype_size(param->dt);
	int inner_bytes = box[0] * esz;
	if (inner_bytes % d->ti->tma_inner_align != 0) {
		Diag *g = low_err(d, "CK-LOW-006", gref->span, "tma box of '%s' has an innermost extent of %d bytes; sm_90a TMA needs a multiple of %d", pname, inner_bytes,
		                  d->ti->tma_inner_align);
		diag_set(&g->resource, "%s", pname);
		return;
	}
	if (buf->swizzle != SWZ_NONE && inner_bytes > swizzle_bytes(buf->swizzle)) {
		Diag *g = low_err(d, "CK-LOW-006", gref->span, "tma box of '%s' is %d bytes wide, more than the %s swizzle span of buffer '%s'", pname, inner_bytes,
		                  swizzle_name(buf->swizzle), buf->name);
		diag_set(&g->resource, "%s", buf->name);
		diag_set(&g->hint, "make the innermost extent of '%s' %d bytes or use a wider swizzle", buf->name, swizzle_bytes(buf->swizzle));
		return;
	}
	if (elems * esz != tma_smem_bytes(buf, s) || param->dt != buf->dt) {
		Diag *g = low_err(d, "CK-LOW-006", s->span, "tma box of '%s' (%lld x %s) does not fill %s '%s' (%lld bytes per stage)", pname, elems, dtype_name(param->dt),
		                  sref->kind == E_INDEX ? "its panel of buffer" : "buffer", buf->name, tma_smem_bytes(buf, s));
		diag_set(&g->resource, "%s", buf->name);
		return;
	}
	/* reuse an identical map */
	for (int i = 0; i < p->ntmaps; i++) {
		PlanTmap *t = &p->tmaps[i];
		if (t->param_decl == param && t->swizzle == buf->swizzle && memcmp(t->box, box, sizeof box) == 0) {
			t->uses[t->nuses++] = s;
			t->store |= !load;
			return;
		}
	}
	PlanTmap *t = &p->tmaps[p->ntmaps++];
	t->param = pname;
	t->param_decl = param;
	t->dt = param->dt;
	t->rank = r;
	Expr *stride = mk_int(d, esz);
	for (int i = 0; i < r; i++) {
		t->gdims[i] = param->shape[r - 1 - i];
		t->box[i] = box[i];
		t->elem_strides[i] = 1;
		if (i > 0) {
			stride = mk_mul(d, stride, param->shape[r - i]);
			t->gstrides[i] = stride;
		}
	}
	t->swizzle = buf->swizzle;
	t->smem_buffer = bi;
	t->store = !load;
	t->box_bytes = (int)(elems * esz);
	int same = 0;
	for (int i = 0; i < p->ntmaps - 1; i++)
		if (p->tmaps[i].param_decl == param)
			same++;
	t->var = same ? arena_printf(&d->c->arena, "tm%s_%d", pname, same) : arena_printf(&d->c->arena, "tm%s", pname);
	t->uses = arena_alloc(&d->c->arena, sizeof(Stmt *) * (size_t)(k->nstmts > 0 ? k->nstmts : 256));
	t->uses[t->nuses++] = s;
}

static void count_tma(void *st, Stmt *s, const SchedStmt *w)
{
	if (s->kind == S_TMA_LOAD || s->kind == S_TMA_STORE)
		(*(int *)st)++;
}

static void derive_tmaps(Der *d)
{
	int nt = 0;
	walk_kernel(&d->m, count_tma, &nt);
	d->p->tmaps = arena_alloc(&d->c->arena, sizeof(PlanTmap) * (size_t)(nt ? nt : 1));
	walk_kernel(&d->m, tmap_visit, d);
}

/* ---- layout inference for rank-1 fragments ----
 * A vector is a row vector (one value per accumulator row) or a column vector
 * (one per column). Evidence: the result of a row reduction, an argument of
 * rows(), a `split m` declaration -> row; an argument of cols(), the result
 * of a column reduction -> column. Then assignments propagate it both ways
 * (best_d = min(best_d, tmin) makes best_d a row vector like tmin). What is
 * left undecided is a column vector. */

typedef struct LayQ {
	Vec *frags;        /* Decl* of the fragments, index = frag number */
	int *lay;          /* -1 unknown, FRAG_ROW, FRAG_COL (rank 1); FRAG_ACC (rank 2) */
	bool changed;
} LayQ;

static int frag_num(LayQ *q, const Expr *x)
{
	if (!x || x->kind != E_IDENT)
		return -1;
	for (int i = 0; i < q->frags->len; i++)
		if (strcmp(((Decl *)q->frags->data[i])->name, x->name) == 0)
			return i;
	return -1;
}

/* Does the role owning frag f also own a rank-2 (accumulator) fragment? */
static bool lay_owner_has_acc(LayQ *q, int f)
{
	const Decl *fd = q->frags->data[f];
	for (int j = 0; j < q->frags->len; j++) {
		const Decl *od = q->frags->data[j];
		if (od->rank == 2 && od->owner && fd->owner && strcmp(od->owner, fd->owner) == 0)
			return true;
	}
	return false;
}

/* The lanes of the thread tiles of the role owning frag f (0: it owns none; -1: they disagree). */
static int lay_owner_lanes(LayQ *q, int f)
{
	const Decl *fd = q->frags->data[f];
	int L = 0;
	for (int j = 0; j < q->frags->len; j++) {
		const Decl *od = q->frags->data[j];
		if (od->rank == 2 && od->lanes && od->owner && fd->owner && strcmp(od->owner, fd->owner) == 0)
			L = L == 0 || L == od->lanes ? od->lanes : -1;
	}
	return L;
}

static void lay_set(LayQ *q, int f, int l)
{
	if (f >= 0 && q->lay[f] < 0) {
		q->lay[f] = l;
		q->changed = true;
	}
}

static void lay_push_reads(LayQ *q, const Expr *x, int l);

/* Evidence inside an expression: rows(v), cols(v). */
static void lay_expr(LayQ *q, const Expr *x)
{
	if (!x)
		return;
	if (x->kind == E_CALL && x->name && x->nargs == 1 && (strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0)) {
		lay_set(q, frag_num(q, x->args[0]), x->name[0] == 'r' ? FRAG_ROW : FRAG_COL);
		lay_push_reads(q, x->args[0], x->name[0] == 'r' ? FRAG_ROW : FRAG_COL);   /* rows(f32(z)): z too */
	}
	lay_expr(q, x->lhs);
	lay_expr(q, x->rhs);
	for (int i = 0; i < x->nargs; i++)
		lay_expr(q, x->args[i]);
}

/* The known vector layout of a frag read directly (not through rows/cols/reductions) in x, or -1. */
static int lay_of_reads(LayQ *q, const Expr *x)
{
	if (!x)
		return -1;
	int f = frag_num(q, x);
	if (f >= 0)
		return q->lay[f] == FRAG_ROW || q->lay[f] == FRAG_COL ? q->lay[f] : -1;
	if (x->kind == E_CALL && x->name &&
	    (strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0 || strncmp(x->name, "row", 3) == 0 || strncmp(x->name, "col", 3) == 0 ||
	     strcmp(x->name, "sum") == 0))   /* sum(): a scalar, whatever its argument's layout */
		return -1;
	int l = lay_of_reads(q, x->lhs);
	if (l < 0)
		l = lay_of_reads(q, x->rhs);
	for (int i = 0; l < 0 && i < x->nargs; i++)
		l = lay_of_reads(q, x->args[i]);
	return l;
}

/* Give unknown frags read directly in x the layout l. */
static void lay_push_reads(LayQ *q, const Expr *x, int l)
{
	if (!x)
		return;
	int f = frag_num(q, x);
	if (f >= 0) {
		if (((Decl *)q->frags->data[f])->rank == 1)
			lay_set(q, f, l);
		return;
	}
	if (x->kind == E_CALL && x->name &&
	    (strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0 || strncmp(x->name, "row", 3) == 0 || strncmp(x->name, "col", 3) == 0 ||
	     strcmp(x->name, "sum") == 0))   /* sum(): a scalar, whatever its argument's layout */
		return;
	lay_push_reads(q, x->lhs, l);
	lay_push_reads(q, x->rhs, l);
	for (int i = 0; i < x->nargs; i++)
		lay_push_reads(q, x->args[i], l);
}

/* True when x contains a row reduction (rowsum(a) + rowsum(b) is a row vector). */
static bool has_row_reduction(const Expr *x)
{
	if (!x)
		return false;
	if (x->kind == E_CALL && x->name && (strcmp(x->name, "rowsum") == 0 || strcmp(x->name, "rowmax") == 0 ||
	                                     strcmp(x->name, "rowmin") == 0))
		return true;
	if (has_row_reduction(x->lhs) || has_row_reduction(x->rhs))
		return true;
	for (int i = 0; i < x->nargs; i++)
		if (has_row_reduction(x->args[i]))
			return true;
	return false;
}

static void lay_stmts(LayQ *q, Stmt **ss, int n)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = ss[i];
		lay_expr(q, s->src);
		lay_expr(q, s->cond);
		/* a scatter index (atomic_add G[idx, ...]) names one row per row of the value,
		 * in a role with accumulator tiles; in a plain SIMT role it stays a thread vector */
		if ((s->kind == S_ATOMIC || s->kind == S_STORE) && s->dst && s->dst->kind == E_INDEX)
			for (int j = 0; j < s->dst->nslices; j++) {
				int f = s->dst->slices[j].kind == SL_POINT ? frag_num(q, s->dst->slices[j].start) : -1;
				if (f >= 0 && lay_owner_has_acc(q, f))
					lay_set(q, f, FRAG_ROW);
			}
		if (s->kind == S_ASSIGN && s->src) {
			const Expr *x = s->src;
			bool rowred = x->kind == E_CALL && x->name && (strcmp(x->name, "rowsum") == 0 || strcmp(x->name, "rowmax") == 0 ||
			                                               strcmp(x->name, "rowmin") == 0 || strcmp(x->name, "rowargmin") == 0 ||
			                                               strcmp(x->name, "rowargmax") == 0);
			bool colred = x->kind == E_CALL && x->name && (strcmp(x->name, "colsum") == 0 || strcmp(x->name, "colmax") == 0);
			for (int j = 0; j < s->nlhs; j++) {
				int f = frag_num(q, s->lhs[j]);
				if (f < 0 || ((Decl *)q->frags->data[f])->rank != 1)
					continue;
				if (rowred)
					lay_set(q, f, FRAG_ROW);
				else if (colred)
					lay_set(q, f, FRAG_COL);
				else if (s->nlhs == 1) {
					int l = lay_of_reads(q, x);
					if (l < 0 && has_row_reduction(x))
						l = FRAG_ROW;
					if (l >= 0) {
						lay_set(q, f, l);
						lay_push_reads(q, x, l);   /* the other operands of the element-wise value too */
					} else if (q->lay[f] >= 0)
						lay_push_reads(q, x, q->lay[f]);
				}
			}
		}
		lay_stmts(q, s->body, s->nbody);
		lay_stmts(q, s->els, s->nels);
	}
}

/* Column vectors against `split n` tiles. A column vector (FRAG_COL) lines up with the
 * columns of the tiles it meets: broadcast with cols(v) over a tile, or produced by
 * colsum/colmax of one. When that tile is `split n` over several warpgroups, each
 * warpgroup holds only its columns of the tile, so the vector is split the same way
 * (index 2j + e holds column role_wg * wg_cols + 8j + 2(l%4) + e); against an unsplit
 * (or `split m`) tile it holds every column. The tile that fixes the columns of a
 * statement is the assigned fragment when it is rank 2, else the first rank-2 fragment
 * read; element-wise assignments between column vectors share the marks. The producers
 * (colsum/colmax, element-wise assignments) decide first; a broadcast then marks only a
 * vector no producer marked, and a cols(v) over a tile split unlike v is a relayout through
 * shared memory in the lowering (sm90.c, emit_relayout). A vector whose producers meet both
 * kinds of tile has no one layout (CK-LOW-009). */
typedef struct ColQ {
	LayQ *q;
	const Plan *p;
	const Sched *m;
	signed char *mark;   /* 0 unknown, 1 split n, 2 every column */
	int *conflict;       /* a frag number, -1 none */
	bool changed;
	bool bcast;          /* the second pass: broadcasts mark the vectors still unknown */
	bool soft;           /* marking for a broadcast: a known mark stays, no conflict */
} ColQ;

/* The first rank-2, non-tile fragment read in x (not inside sum()), or -1. */
static int col_ctx_tile(ColQ *cq, const Expr *x)
{
	if (!x || (x->kind == E_CALL && x->name && strcmp(x->name, "sum") == 0))
		return -1;
	int f = frag_num(cq->q, x);
	if (f >= 0) {
		const Decl *fd = cq->q->frags->data[f];
		return fd->rank == 2 && !fd->lanes ? f : -1;
	}
	int r = col_ctx_tile(cq, x->lhs);
	if (r < 0)
		r = col_ctx_tile(cq, x->rhs);
	for (int i = 0; r < 0 && i < x->nargs; i++)
		r = col_ctx_tile(cq, x->args[i]);
	return r;
}

static int col_mark_of_tile(ColQ *cq, int t)
{
	const Decl *td = cq->q->frags->data[t];
	int role = cq->m->frags[t].role;
	int nwg = role >= 0 ? cq->p->roles[role].nwg : 0;
	return td->split == SPLIT_N && nwg > 1 ? 1 : 2;
}

static void col_mark(ColQ *cq, int f, int v)
{
	if (f < 0 || v <= 0 || cq->q->lay[f] != FRAG_COL)
		return;
	if (cq->mark[f] == 0) {
		cq->mark[f] = (signed char)v;
		cq->changed = true;
	} else if (cq->mark[f] != v && !cq->soft && *cq->conflict < 0) {
		*cq->conflict = f;
	}
}

/* Mark the column vectors read directly (not through reductions or broadcasts) in x. */
static void col_mark_reads(ColQ *cq, const Expr *x, int v)
{
	if (!x)
		return;
	int f = frag_num(cq->q, x);
	if (f >= 0) {
		if (((Decl *)cq->q->frags->data[f])->rank == 1)
			col_mark(cq, f, v);
		return;
	}
	if (x->kind == E_CALL && x->name && (strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0 || strncmp(x->name, "row", 3) == 0 ||
	                                     strncmp(x->name, "col", 3) == 0 || strcmp(x->name, "sum") == 0))
		return;
	col_mark_reads(cq, x->lhs, v);
	col_mark_reads(cq, x->rhs, v);
	for (int i = 0; i < x->nargs; i++)
		col_mark_reads(cq, x->args[i], v);
}

/* The mark shared by the column vectors read directly in x (0 if none is marked). */
static int col_reads_mark(ColQ *cq, const Expr *x)
{
	if (!x)
		return 0;
	int f = frag_num(cq->q, x);
	if (f >= 0)
		return ((Decl *)cq->q->frags->data[f])->rank == 1 && cq->q->lay[f] == FRAG_COL ? cq->mark[f] : 0;
	if (x->kind == E_CALL && x->name && (strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0 || strncmp(x->name, "row", 3) == 0 ||
	                                     strncmp(x->name, "col", 3) == 0 || strcmp(x->name, "sum") == 0))
		return 0;
	int v = col_reads_mark(cq, x->lhs);
	if (!v)
		v = col_reads_mark(cq, x->rhs);
	for (int i = 0; !v && i < x->nargs; i++)
		v = col_reads_mark(cq, x->args[i]);
	return v;
}

/* cols(arg) anywhere in x: the column vectors in arg take the tile's mark v. */
static void col_broadcasts(ColQ *cq, const Expr *x, int v)
{
	if (!x || (x->kind == E_CALL && x->name && strcmp(x->name, "sum") == 0))
		return;
	if (x->kind == E_CALL && x->name && x->nargs == 1 && strcmp(x->name, "cols") == 0) {
		cq->soft = true;
		col_mark_reads(cq, x->args[0], v);
		cq->soft = false;
	}
	col_broadcasts(cq, x->lhs, v);
	col_broadcasts(cq, x->rhs, v);
	for (int i = 0; i < x->nargs; i++)
		col_broadcasts(cq, x->args[i], v);
}

static void col_stmts(ColQ *cq, Stmt **ss, int n)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = ss[i];
		if ((s->kind == S_ASSIGN || s->kind == S_STORE || s->kind == S_ATOMIC) && s->src) {
			int dst = s->kind == S_ASSIGN && s->nlhs >= 1 ? frag_num(cq->q, s->lhs[0]) : -1;
			const Decl *dd = dst >= 0 ? cq->q->frags->data[dst] : NULL;
			int t = dd && dd->rank == 2 && !dd->lanes ? dst : col_ctx_tile(cq, s->src);
			if (t >= 0 && cq->bcast)
				col_broadcasts(cq, s->src, col_mark_of_tile(cq, t));
			const Expr *x = s->src;
			if (dd && dd->rank == 1 && s->nlhs == 1 && cq->q->lay[dst] == FRAG_COL) {
				if (x->kind == E_CALL && x->name && x->nargs == 1 && (strcmp(x->name, "colsum") == 0 || strcmp(x->name, "colmax") == 0)) {
					int rt = col_ctx_tile(cq, x->args[0]);
					if (rt >= 0)
						col_mark(cq, dst, col_mark_of_tile(cq, rt));
				} else if (t < 0) {   /* element-wise over column vectors: one layout for all of them */
					int v = cq->mark[dst] ? cq->mark[dst] : col_reads_mark(cq, x);
					col_mark(cq, dst, v);
					col_mark_reads(cq, x, v);
				}
			}
		}
		col_stmts(cq, s->body, s->nbody);
		col_stmts(cq, s->els, s->nels);
	}
}

/* The layout of a thread tile (FRAG_TILE) or of a vector of a role that owns
 * tiles (FRAG_TROW, FRAG_TCOL), lower.h: rows dealt to the W warps, G = 32 / L
 * rows per warp per pass, each row over L lanes, P = cols / L columns per lane.
 * False after CK-LOW-009 when the role's tiles disagree on L, the role also owns
 * accumulator tiles, or the extents do not divide. */
static bool derive_tile_frag(Der *d, PlanFrag *f, const Decl *fd, const PlanRole *r, int L, int lay)
{
	if (L < 0) {
		low_err(d, "CK-LOW-009", fd->span, "the thread tiles of role '%s' disagree on `lanes`; the sm_90a lowering needs one row layout per role", r->name);
		return false;
	}
	for (int j = 0; j < d->m.nfrags; j++) {
		const Decl *od = d->m.frags[j].d;
		if (od->rank == 2 && !od->lanes && d->m.frags[j].role == f->role) {
			Diag *g = low_err(d, "CK-LOW-009", fd->span, "role '%s' owns thread tiles (`lanes`) and the accumulator-layout fragment '%s'; the sm_90a lowering keeps the two kinds in different roles",
			                  r->name, od->name);
			diag_set(&g->hint, "give the tile work its own role, or declare '%s' with `lanes`", od->name);
			return false;
		}
	}
	int G = 32 / L, W = r->nwarps;
	long long pass = (long long)W * G;
	f->lanes = L;
	f->layout = (FragLayout)lay;
	f->mtiles = 0;
	f->wg_rows = f->rows;
	f->wg_cols = f->cols;
	const char *why = NULL;
	if (lay == FRAG_TILE) {
		if (f->rows % pass || f->cols % L)
			why = "its rows are not a multiple of the role's rows per pass (warps x 32 / lanes) or its columns of lanes";
		else
			f->regs_per_thread = (int)(f->rows / pass * (f->cols / L));
	} else if (lay == FRAG_TROW) {
		if (f->rows % pass)
			why = "a row vector of the role's thread tiles needs a multiple of warps x 32 / lanes elements";
		else
			f->regs_per_thread = (int)(f->rows / pass);
	} else {
		if (f->rows % L)
			why = "a column vector of the role's thread tiles needs a multiple of lanes elements";
		else
			f->regs_per_thread = (int)(f->rows / L);
	}
	if (!why && f->regs_per_thread > 255)
		why = "it needs more than 255 registers per thread";
	if (why) {
		f->regs_per_thread = 0;
		Diag *g = low_err(d, "CK-LOW-009", fd->span, "fragment '%s' has no thread-tile layout in role '%s' (%d warps, lanes %d): %s", fd->name, r->name, W, L, why);
		diag_set(&g->hint, "rows per pass: %lld", pass);
		return false;
	}
	return true;
}

static void derive_frags(Der *d)
{
	Kernel *k = d->k;
	Plan *p = d->p;
	const Sched *m = &d->m;
	Vec v = {0};
	for (int i = 0; i < m->nfrags; i++)
		vec_push(&v, m->frags[i].d);
	int *lay = arena_alloc(&d->c->arena, sizeof(int) * (size_t)(v.len + 1));
	for (int i = 0; i < v.len; i++) {
		Decl *fd = v.data[i];
		lay[i] = fd->rank == 2 ? (fd->lanes ? FRAG_TILE : FRAG_ACC) : fd->split == SPLIT_M ? FRAG_ROW : -1;
	}
	LayQ q = {&v, lay, true};
	for (int it = 0; q.changed && it < 64; it++) {
		q.changed = false;
		lay_stmts(&q, k->body, k->nbody);
	}
	/* A vector left undecided in a role that owns no rank-2 (accumulator) fragment
	 * is plain SIMT data: it has no accumulator to line up with, so it is spread
	 * over the role's threads (FRAG_VEC) instead of replicated per quad. */
	for (int i = 0; i < v.len; i++) {
		Decl *fd = v.data[i];
		int L = lay_owner_lanes(&q, i);
		if (fd->rank == 1 && L != 0)   /* a role with thread tiles: the tile's row and column vectors */
			lay[i] = lay[i] == FRAG_ROW ? FRAG_TROW : FRAG_TCOL;
		else if (fd->rank == 1 && lay[i] < 0 && !lay_owner_has_acc(&q, i))
			lay[i] = FRAG_VEC;
	}
	signed char *cmark = arena_alloc(&d->c->arena, (size_t)(v.len + 1));
	int conflict = -1;
	ColQ cq = {&q, p, m, cmark, &conflict, true, false, false};
	for (int pass = 0; pass < 2; pass++) {   /* the producers, then the broadcasts */
		cq.bcast = pass == 1;
		cq.changed = true;
		for (int it = 0; cq.changed && it < 64; it++) {
			cq.changed = false;
			col_stmts(&cq, k->body, k->nbody);
		}
	}
	if (conflict >= 0) {
		Decl *fd = v.data[conflict];
		Diag *g = low_err(d, "CK-LOW-009", fd->span, "column vector '%s' lines up with a `split n` tile (each warpgroup holding its columns) and with a tile whose columns every warpgroup holds; the sm_90a lowering gives a vector one layout",
		                  fd->name);
		diag_set(&g->resource, "%s", fd->name);
		diag_set(&g->hint, "use one column vector per kind of tile (load or compute it twice)");
	}
	p->nfrags = v.len;
	p->frags = arena_alloc(&d->c->arena, sizeof(PlanFrag) * (size_t)(v.len ? v.len : 1));
	for (int i = 0; i < v.len; i++) {
		Decl *fd = v.data[i];
		PlanFrag *f = &p->frags[i];
		f->name = fd->name;
		f->decl = fd;
		f->dt = fd->dt;
		f->split = fd->split;
		f->role = m->frags[i].role;
		if (f->role < 0) {
			low_err(d, "CK-LOW-009", fd->owner_span, "fragment '%s' is owned by unknown role '%s'", fd->name, fd->owner ? fd->owner : "?");
			continue;
		}
		if (fd->rank < 1 || fd->rank > 2) {
			low_err(d, "CK-LOW-009", fd->span, "fragment '%s' has rank %d; the sm_90a lowering handles rank 1 and 2 fragments", fd->name, fd->rank);
			continue;
		}
		long long rows = 1, cols = 1;
		if (fd->rank == 2) {
			if (!const_extent(d, m->frags[i].dims[0], fd->shape[0], "fragment", fd->name, &rows) ||
			    !const_extent(d, m->frags[i].dims[1], fd->shape[1], "fragment", fd->name, &cols))
				continue;
		} else if (!const_extent(d, m->frags[i].dims[0], fd->shape[0], "fragment", fd->name, &rows)) {
			continue;   /* rank 1: one value per row (e.g. a row reduction's result) */
		}
		f->rows = rows;
		f->cols = cols;
		PlanRole *r = &p->roles[f->role];
		int nwg = r->nwg > 0 ? r->nwg : 1;
		f->wg_rows = rows;
		f->wg_cols = cols;
		if (fd->split == SPLIT_M) {
			if (rows % nwg) {
				low_err(d, "CK-LOW-009", fd->span, "fragment '%s' splits %lld rows over the %d warpgroups of role '%s', which does not divide", fd->name, rows, nwg, r->name);
				continue;
			}
			f->wg_rows = rows / nwg;
		} else if (fd->split == SPLIT_N) {
			if (cols % nwg) {
				low_err(d, "CK-LOW-009", fd->span, "fragment '%s' splits %lld columns over the %d warpgroups of role '%s', which does not divide", fd->name, cols, nwg, r->name);
				continue;
			}
			f->wg_cols = cols / nwg;
		}
		f->mtiles = f->wg_rows % d->ti->wgmma_m == 0 ? (int)(f->wg_rows / d->ti->wgmma_m) : 0;
		int L = lay_owner_lanes(&q, i);
		if (L != 0 && !derive_tile_frag(d, f, fd, r, L, lay[i]))
			continue;
		if (L != 0) {
			/* a thread tile or one of its vectors (derive_tile_frag) */
		} else if (fd->rank == 2) {
			f->layout = FRAG_ACC;
			f->regs_per_thread = f->mtiles && f->wg_cols % 8 == 0 ? (int)(f->mtiles * f->wg_cols / 2) : 0;
		} else if (lay[i] == FRAG_ROW) {
			f->layout = FRAG_ROW;
			/* rows are split over warpgroups like the accumulator's; an unsplit row
			 * vector of a multi-warpgroup role is replicated: every warpgroup holds
			 * every row, like the rows of an unsplit or `split n` tile */
			f->regs_per_thread = f->mtiles ? 2 * f->mtiles : 0;
		} else if (lay[i] == FRAG_VEC) {
			/* spread over the role's threads: P = ceil(len / threads) contiguous elements each */
			f->layout = FRAG_VEC;
			f->wg_rows = rows;
			f->mtiles = 0;
			f->regs_per_thread = rows > 0 ? (int)((rows + r->nthreads - 1) / r->nthreads) : 0;
			if (f->regs_per_thread > 64) {
				Diag *g = low_err(d, "CK-LOW-009", fd->span, "vector fragment '%s' of %lld elements needs %d registers per thread over the %d threads of role '%s'; the sm_90a lowering holds at most 64",
				                  fd->name, rows, f->regs_per_thread, r->nthreads, r->name);
				diag_set(&g->hint, "split the vector, or give role '%s' more warps", r->name);
				f->regs_per_thread = 0;
			}
		} else {
			/* a per-column vector: [len], len = the accumulator's columns; against `split n`
			 * tiles each warpgroup holds its part (ColQ above) */
			f->layout = FRAG_COL;
			f->wg_cols = f->wg_rows;
			f->wg_rows = 1;
			f->mtiles = 0;
			if (cmark[i] == 1 && rows % nwg == 0) {
				f->split = SPLIT_N;
				f->wg_cols = rows / nwg;
			}
			f->regs_per_thread = f->wg_cols % 8 == 0 ? (int)(f->wg_cols / 4) : 0;
		}
	}
	vec_free(&v);
}

/* ---- shared scratch of the lowering ----
 *
 * trisolve(L, B) into a [R, C] accumulator-layout fragment transposes through shared
 * memory (sm90_acc.c): L's lower triangle as four row groups of plan_trisolve_group(R) f32
 * (rows 4 m + q in group q, so each thread of a column's lane quad finds its rows at constant
 * offsets), and the right-hand side as R x (P + 1) f32, one column per lane quad while it
 * solves, P columns at a time. The region is placed after the
 * barriers, 16-byte aligned, one part per role that solves, sized for its largest trisolve
 * (a role's solves never overlap: each ends with a barrier over the role), and counted in
 * the shared memory the launch requests. P is all of C when that fits the limit; otherwise
 * it is halved (while it divides C evenly, down to 8 columns) until the scratch fits, and
 * the solve runs in C / P passes; what still does not fit is CK-LOW-004. */
typedef struct ScratchQ {
	Der *d;
	int pass;                /* the pass width tried (0: every column at once) */
	long long *role_bytes;   /* per role */
	int *role_cols;          /* per role: the widest pass it uses */
} ScratchQ;

static void scratch_visit(void *st, Stmt *s, const SchedStmt *w)
{
	ScratchQ *q = st;
	const Plan *p = q->d->p;
	if (s->kind != S_ASSIGN || s->nlhs != 1 || !s->src || s->src->kind != E_CALL || !s->src->name || strcmp(s->src->name, "trisolve") != 0 ||
	    !s->lhs[0] || s->lhs[0]->kind != E_IDENT)
		return;
	int fi = plan_frag_index(p, s->lhs[0]->name);
	if (fi < 0 || p->frags[fi].role < 0)
		return;
	const PlanFrag *f = &p->frags[fi];
	long long P = q->pass && q->pass < f->cols ? q->pass : f->cols;
	while (f->cols % P)
		P /= 2;
	long long b = 4 * (4 * plan_trisolve_group(f->rows) + f->rows * (P + 1));
	b = (b + 15) / 16 * 16;
	if (b > q->role_bytes[f->role])
		q->role_bytes[f->role] = b;
	if (P > q->role_cols[f->role])
		q->role_cols[f->role] = (int)P;
	(void)w;
}

static void derive_scratch(Der *d)
{
	Plan *p = d->p;
	size_t nr = (size_t)(p->nroles + 1);
	ScratchQ q = {d, 0, arena_alloc(&d->c->arena, sizeof(long long) * nr), arena_alloc(&d->c->arena, sizeof(int) * nr)};
	long long at = (p->smem_used + 15) / 16 * 16, total = 0;
	for (;;) {
		memset(q.role_bytes, 0, sizeof(long long) * nr);
		memset(q.role_cols, 0, sizeof(int) * nr);
		walk_kernel(&d->m, scratch_visit, &q);
		total = 0;
		int widest = 0;
		for (int r = 0; r < p->nroles; r++) {
			total += q.role_bytes[r];
			widest = q.role_cols[r] > widest ? q.role_cols[r] : widest;
		}
		if (!total || p->smem_bytes + (at + total - p->smem_used) <= d->ti->smem_per_block || widest <= 8 || widest % 2)
			break;
		q.pass = widest / 2;   /* narrower passes: less scratch */
	}
	p->scratch_role = arena_alloc(&d->c->arena, sizeof(long long) * nr);
	p->scratch_cols = arena_alloc(&d->c->arena, sizeof(int) * nr);
	long long off = 0;
	for (int r = 0; r < p->nroles; r++) {
		p->scratch_role[r] = q.role_bytes[r] ? at + off : -1;
		p->scratch_cols[r] = q.role_cols[r];
		off += q.role_bytes[r];
	}
	if (!total)
		return;
	p->scratch_offset = at;
	p->scratch_bytes = total;
	long long grow = at + total - p->smem_used;
	p->smem_used += grow;
	p->smem_bytes += grow;
	if (p->smem_bytes > d->ti->smem_per_block) {
		Diag *g = low_err(d, "CK-LOW-004", d->k->span, "kernel '%s' needs %lld bytes of shared memory, %lld of them the lowering's trisolve scratch (passes of %d columns); sm_90a allows %lld per block",
		                  d->k->name, p->smem_bytes, total, q.pass ? q.pass : 0, d->ti->smem_per_block);
		diag_set(&g->condition, "smem_bytes <= %lld", d->ti->smem_per_block);
		diag_set(&g->hint, "reduce the pipeline stages or the shared buffers");
	}
}

/* ---- launch and arguments ---- */

static void derive_launch(Der *d)
{
	Kernel *k = d->k;
	Plan *p = d->p;
	Decl *grid = NULL, *cluster = NULL;
	for (int i = 0; i < k->ndecls; i++) {
		if (k->decls[i]->kind == D_GRID)
			grid = k->decls[i];
		if (k->decls[i]->kind == D_CLUSTER)
			cluster = k->decls[i];
	}
	p->cluster[0] = p->cluster[1] = p->cluster[2] = 1;
	if (!grid) {
		Diag *g = low_err(d, "CK-LOW-010", k->name_span, "kernel '%s' has no `grid` declaration; the sm_90a lowering needs the block coordinates", k->name);
		diag_set(&g->hint, "add e.g. `grid (N / 256, M / 128) as (bn, bm)`");
		return;
	}
	if (grid->nexprs < 1 || grid->nexprs > 3) {
		low_err(d, "CK-LOW-010", grid->span, "grid of kernel '%s' has %d extents; sm_90a launches 1 to 3", k->name, grid->nexprs);
		return;
	}
	p->grid_rank = p->space_rank = grid->nexprs;
	p->persistent = grid->persistent;
	Expr *tiles = NULL;
	for (int i = 0; i < grid->nexprs; i++) {
		p->grid[i] = p->space[i] = grid->exprs[i];
		tiles = tiles ? mk_mul(d, tiles, grid->exprs[i]) : grid->exprs[i];
	}
	p->tiles = tiles;
	if (grid->group_stated || grid->group) {
		/* sema guarantees G >= 1 and a 2-D grid; re-checked for trees built without it */
		if (grid->group < 1 || grid->nexprs != 2) {
			low_err(d, "CK-LOW-010", grid->span, "`group %d` on a %d-D grid cannot be lowered (needs G >= 1 and a 2-D grid)", grid->group, grid->nexprs);
			return;
		}
		/* grouped raster: the launch is 1-D over all tiles; blockIdx.x (or the
		 * persistent tile index) is decoded into (x, y) by the emitted mapping */
		p->group = grid->group;
		p->grid[0] = tiles;
		p->grid[1] = p->grid[2] = NULL;
		p->grid_rank = 1;
	}
	if (cluster) {
		for (int i = 0; i < cluster->nexprs && i < 3; i++) {
			long long v;
			if (!eval_expr(cluster->exprs[i], k, NULL, &v) || v < 1 || v > d->ti->max_cluster) {
				low_err(d, "CK-LOW-010", cluster->span, "cluster extents must be constants in 1..%d", d->ti->max_cluster);
				return;
			}
			p->cluster[i] = (int)v;
		}
		if (p->cluster[0] * p->cluster[1] * p->cluster[2] != 1) {
			Diag *g = low_err(d, "CK-LOW-010", cluster->span, "clusters of more than one CTA (multicast TMA, remote barrier arrival) are not lowered yet for sm_90a");
			diag_set(&g->hint, "remove the `cluster` declaration or use cluster (1)");
		}
	}
}

typedef struct PtrQ {
	Plan *p;
	Kernel *k;
	bool *direct;   /* per param decl index in k->decls */
} PtrQ;

/* Mark global tensors read element-wise anywhere in x (top: x itself is the
 * statement's destination or load source, marked by the caller; look only inside). */
static void ptr_reads(PtrQ *q, const Expr *x, bool top)
{
	if (!x)
		return;
	if (x->kind == E_INDEX) {
		const char *n = top ? NULL : lower_base_name(x);
		for (int i = 0; n && i < q->k->ndecls; i++) {
			Decl *dd = q->k->decls[i];
			if (dd->kind == D_PARAM && dd->space == SP_GLOBAL && strcmp(dd->name, n) == 0)
				q->direct[i] = true;
		}
		for (int i = 0; i < x->nslices; i++) {
			ptr_reads(q, x->slices[i].start, false);
			ptr_reads(q, x->slices[i].len, false);
		}
		return;
	}
	ptr_reads(q, x->lhs, false);
	ptr_reads(q, x->rhs, false);
	for (int i = 0; i < x->nargs; i++)
		ptr_reads(q, x->args[i], false);
}

static void ptr_visit(void *st, Stmt *s, const SchedStmt *w)
{
	PtrQ *q = st;
	const char *names[2] = {NULL, NULL};
	if (s->kind == S_STORE || s->kind == S_ATOMIC)   /* a TMA store writes through its tensor map */
		names[0] = lower_base_name(s->dst);
	if (s->kind == S_LOAD || s->kind == S_CP_ASYNC)
		names[1] = lower_base_name(s->src);
	/* element reads in scalar expressions (`let lo = Offsets[c]`, `X[Order[t], :]`) also
	 * need the pointer; the global source of a tma/cp_async goes through its tensor map */
	if (s->kind != S_TMA_LOAD && s->kind != S_TMA_STORE && s->kind != S_CP_ASYNC) {
		ptr_reads(q, s->src, s->kind == S_LOAD);
		ptr_reads(q, s->dst, true);
		ptr_reads(q, s->cond, false);
		ptr_reads(q, s->lo, false);
		ptr_reads(q, s->hi, false);
		ptr_reads(q, s->step, false);
	}
	for (int n = 0; n < 2; n++) {
		if (!names[n])
			continue;
		for (int i = 0; i < q->k->ndecls; i++) {
			Decl *dd = q->k->decls[i];
			if (dd->kind == D_PARAM && dd->space == SP_GLOBAL && strcmp(dd->name, names[n]) == 0)
				q->direct[i] = true;
		}
	}
}

static void derive_args(Der *d)
{
	Kernel *k = d->k;
	Plan *p = d->p;
	int cap = p->ntmaps + k->ndecls + k->ndims + 1;
	p->args = arena_alloc(&d->c->arena, sizeof(PlanArg) * (size_t)cap);
	for (int i = 0; i < p->ntmaps; i++)
		p->args[p->nargs++] = (PlanArg){ARG_TMAP, p->tmaps[i].var, i, p->tmaps[i].dt};
	PtrQ q = {p, k, arena_alloc(&d->c->arena, sizeof(bool) * (size_t)(k->ndecls + 1))};
	walk_kernel(&d->m, ptr_visit, &q);
	int pidx = 0;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *dd = k->decls[i];
		if (dd->kind != D_PARAM)
			continue;
		if (dd->space == SP_GLOBAL && q.direct[i])
			p->args[p->nargs++] = (PlanArg){ARG_PTR, dd->name, pidx, dd->dt};
		pidx++;
	}
	for (int i = 0; i < k->ndims; i++)
		p->args[p->nargs++] = (PlanArg){ARG_DIM, k->dims[i], i, DT_I32};
	pidx = 0;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *dd = k->decls[i];
		if (dd->kind != D_PARAM)
			continue;
		if (dd->space != SP_GLOBAL)
			p->args[p->nargs++] = (PlanArg){ARG_SCALAR, dd->name, pidx, dd->dt};
		pidx++;
	}
}

/* ---- entry ---- */

Plan *derive_plan(Ctx *c, Kernel *k)
{
	Der d = {.c = c, .k = k, .ok = true};
	if (!k)
		return NULL;
	d.ti = target_info(k->target);
	if (!d.ti->lowered) {
		Diag *g = diag_add(c->diags, "CK-LOW-001", SEV_ERROR, k->target_span,
		                   "lowering for %s is not implemented yet; kernel '%s' cannot be built", target_name(k->target), k->name);
		diag_set(&g->hint, "target sm_90a, or check the kernel with `cake check` only");
		return NULL;
	}
	Plan *p = arena_alloc(&c->arena, sizeof(Plan));
	d.p = p;
	p->kernel = k;
	p->name = k->name;
	p->target = k->target;
	p->dims = k->dims;
	p->ndims = k->ndims;
	sched_build(&d.m, c, k);   /* the schedule model every step below reads */
	derive_roles(&d);
	if (!d.ok)
		return NULL;
	derive_issue(&d);
	derive_pipes(&d);
	derive_barriers_decl(&d);
	derive_smem(&d);
	derive_barrier_use(&d);
	derive_loops(&d);
	derive_tmaps(&d);
	derive_frags(&d);
	derive_scratch(&d);
	derive_launch(&d);
	derive_args(&d);
	derive_param_uses(c, p);
	sched_free(&d.m);
	return d.ok ? p : NULL;
}

/* ---- printing ---- */

static void print_e(StrBuf *out, const Expr *e, const Kernel *k)
{
	if (!e)
		sb_puts(out, "1");
	else
		lower_expr_c(out, e, k);
}

void plan_print(StrBuf *out, const Plan *p)
{
	const Kernel *k = p->kernel;
	sb_printf(out, "plan of kernel %s (target %s)\n", p->name, target_name(p->target));
	sb_printf(out, "\nlaunch\n  block      %d threads (%d warpgroups), launch register budget %d/thread\n", p->block_threads, p->nwarpgroups, p->base_regs);
	sb_puts(out, "  grid       (");
	for (int i = 0; i < p->grid_rank; i++) {
		if (i)
			sb_puts(out, ", ");
		print_e(out, p->grid[i], k);
	}
	sb_printf(out, ")%s\n", p->persistent ? "  persistent: launch min(#SMs, tiles) CTAs along x, each loops over tiles" : "");
	if (p->group) {
		/* the tile space and the grouped raster that decodes a tile index t into it */
		sb_puts(out, "  tiles      (");
		for (int i = 0; i < p->space_rank; i++) {
			if (i)
				sb_puts(out, ", ");
			print_e(out, p->space[i], k);
		}
		const char **gv = NULL;
		for (int i = 0; i < k->ndecls; i++)
			if (k->decls[i]->kind == D_GRID)
				gv = k->decls[i]->grid_vars;
		const char *x = gv && gv[0] ? gv[0] : "x", *y = gv && gv[1] ? gv[1] : "y";
		sb_printf(out, ") as (%s, %s), t = %s\n", x, y, p->persistent ? "tile index" : "blockIdx.x");
		sb_printf(out, "  raster     grouped, group %d: %d consecutive %s rows per group, %s fastest inside a group:\n", p->group, p->group, y, y);
		sb_printf(out, "             g = t / (%d * tiles_x); first = g * %d; gs = min(tiles_y - first, %d); r = t %% (%d * tiles_x);\n",
		          p->group, p->group, p->group, p->group);
		sb_printf(out, "             %s = first + r %% gs; %s = r / gs   (tiles_x = ", y, x);
		print_e(out, p->space[0], k);
		sb_puts(out, ", tiles_y = ");
		print_e(out, p->space[1], k);
		sb_puts(out, ")\n");
	} else if (p->grid_rank > 1 || p->persistent) {
		sb_puts(out, "  raster     natural (first coordinate fastest)\n");
	}
	sb_printf(out, "  cluster    (%d, %d, %d)\n", p->cluster[0], p->cluster[1], p->cluster[2]);
	sb_printf(out, "  smem       %lld bytes dynamic (%lld used + %d alignment slack; base aligned to %d)\n",
	          p->smem_bytes, p->smem_used, (int)(p->smem_bytes - p->smem_used), p->smem_base_align);

	sb_puts(out, "\nroles\n  name        warps    threads    warpgroups  setmaxnreg      issue\n");
	for (int i = 0; i < p->nroles; i++) {
		const PlanRole *r = &p->roles[i];
		char wg[32], reg[32], warps[32], thr[32];
		snprintf(warps, sizeof warps, "%d..%d", r->warp_lo, r->warp_hi);
		snprintf(thr, sizeof thr, "%d..%d", r->thread_lo, r->thread_lo + r->nthreads - 1);
		if (r->nwg)
			snprintf(wg, sizeof wg, "%d..%d (%d)", r->wg_lo, r->wg_hi, r->nwg);
		else
			snprintf(wg, sizeof wg, "partial");
		if (r->regs_dir)
			snprintf(reg, sizeof reg, "%s %d", r->regs_dir > 0 ? "inc" : "dec", r->regs);
		else
			snprintf(reg, sizeof reg, "-");
		sb_printf(out, "  %-10s  %-7s  %-9s  %-10s  %-14s  %s\n", r->name, warps, thr, wg, reg,
		          r->single_thread ? "one elected thread" : "all threads");
	}

	sb_puts(out, "\nshared memory (offsets from the aligned base)\n  name        offset   align  swizzle  stages  bytes/stage  stride   shape\n");
	for (int i = 0; i < p->nbuffers; i++) {
		const PlanBuffer *b = &p->buffers[i];
		char shape[96] = "";
		size_t n = 0;
		for (int j = 0; j < b->rank && n < sizeof shape - 24; j++)
			n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", j ? "x" : "", b->shape[j]);
		sb_printf(out, "  %-10s  %-7lld  %-5d  %-7s  %-6d  %-11lld  %-7lld  %s %s%s%s%s\n", b->name, b->offset, b->align,
		          swizzle_name(b->swizzle), b->stages, b->bytes_per_stage, b->stage_stride, dtype_name(b->dt), shape,
		          b->tma_dst ? "  tma-dst" : "", b->tma_src ? "  tma-src" : "", b->wgmma_operand ? "  wgmma" : "");
		if (b->wgmma_operand)
			sb_printf(out, "              wgmma descriptor: LBO %d, SBO %d, layout %d (%s)\n", b->desc_lbo, b->desc_sbo, b->desc_layout, swizzle_name(b->swizzle));
	}
	sb_puts(out, "\nbarriers (mbarrier, 8 bytes each)\n  name        offset   count  arrivals  tx-bytes  first wait\n");
	for (int i = 0; i < p->nbarriers; i++) {
		const PlanBarrier *b = &p->barriers[i];
		sb_printf(out, "  %-10s  %-7lld  %-5d  %-8d  %-8lld  %s\n", b->name, b->offset, b->count, b->arrivals, b->tx_bytes,
		          b->starts_free ? "starts free (parity phase^1)" : "parity phase");
	}
	sb_puts(out, "\npipelined loops (stage += 1 per iteration; phase ^= 1 when stage wraps; carried across tiles)\n");
	for (int i = 0; i < p->nloops; i++) {
		const PlanLoop *l = &p->loops[i];
		sb_printf(out, "  line %-4d role %-8s for %s pipelined %s: %s, %s (stages %d)\n", l->loop->span.line, p->roles[l->role].name,
		          l->loop->name ? l->loop->name : "?", p->pipes[l->pipe].name, l->stage_var, l->phase_var, p->pipes[l->pipe].stages);
	}
	sb_puts(out, "\ntensor maps (cuTensorMapEncodeTiled; innermost dimension first)\n");
	for (int i = 0; i < p->ntmaps; i++) {
		const PlanTmap *t = &p->tmaps[i];
		sb_printf(out, "  %-6s %s %s rank %d dims (", t->var, t->param, dtype_name(t->dt), t->rank);
		for (int j = 0; j < t->rank; j++) {
			if (j)
				sb_puts(out, ", ");
			print_e(out, t->gdims[j], k);
		}
		sb_puts(out, ") strides (");
		for (int j = 1; j < t->rank; j++) {
			if (j > 1)
				sb_puts(out, ", ");
			print_e(out, t->gstrides[j], k);
		}
		sb_puts(out, ") box (");
		for (int j = 0; j < t->rank; j++)
			sb_printf(out, "%s%d", j ? ", " : "", t->box[j]);
		sb_printf(out, ") %d bytes, swizzle %s %s %s\n", t->box_bytes, swizzle_name(t->swizzle), t->store ? "<-" : "->",
		          p->buffers[t->smem_buffer].name);
	}
	if (p->nfrags) {
		sb_puts(out, "\nfragments\n");
		for (int i = 0; i < p->nfrags; i++) {
			const PlanFrag *f = &p->frags[i];
			const char *split = f->split == SPLIT_M ? " split m" : f->split == SPLIT_N ? " split n" : "";
			const char *role = f->role >= 0 ? p->roles[f->role].name : "?";
			if (f->layout == FRAG_ACC)
				sb_printf(out, "  %-8s %s[%lld, %lld] in %s%s: accumulator layout, per warpgroup %lld x %lld (%d m64 tiles), %d regs/thread\n",
				          f->name, dtype_name(f->dt), f->rows, f->cols, role, split, f->wg_rows, f->wg_cols, f->mtiles, f->regs_per_thread);
			else if (f->layout == FRAG_ROW)
				sb_printf(out, "  %-8s %s[%lld] in %s%s: row vector, per warpgroup %lld rows, %d regs/thread\n", f->name, dtype_name(f->dt),
				          f->rows, role, split, f->wg_rows, f->regs_per_thread);
			else if (f->layout == FRAG_VEC)
				sb_printf(out, "  %-8s %s[%lld] in %s: thread vector, %d contiguous elements per thread of the role\n", f->name,
				          dtype_name(f->dt), f->rows, role, f->regs_per_thread);
			else if (f->layout == FRAG_TILE)
				sb_printf(out, "  %-8s %s[%lld, %lld] in %s: thread tile, rows over %d warps x %d per pass, each row over %d lanes (%lld columns per lane), %d regs/thread\n",
				          f->name, dtype_name(f->dt), f->rows, f->cols, role, p->roles[f->role].nwarps, 32 / f->lanes, f->lanes,
				          f->cols / f->lanes, f->regs_per_thread);
			else if (f->layout == FRAG_TROW)
				sb_printf(out, "  %-8s %s[%lld] in %s: thread-tile row vector, %d regs/thread (the %d lanes of a row hold the same values)\n",
				          f->name, dtype_name(f->dt), f->rows, role, f->regs_per_thread, f->lanes);
			else if (f->layout == FRAG_TCOL)
				sb_printf(out, "  %-8s %s[%lld] in %s: thread-tile column vector, %d contiguous columns per lane (replicated over rows)\n",
				          f->name, dtype_name(f->dt), f->rows, role, f->regs_per_thread);
			else
				sb_printf(out, "  %-8s %s[%lld] in %s%s: column vector, %lld columns, %d regs/thread\n", f->name, dtype_name(f->dt), f->rows,
				          role, split, f->wg_cols, f->regs_per_thread);
		}
	}
	if (p->scratch_bytes) {
		sb_printf(out, "\nlowering scratch (trisolve transposes): %lld bytes at offset %lld\n", p->scratch_bytes, p->scratch_offset);
		for (int r = 0; r < p->nroles; r++)
			if (p->scratch_role[r] >= 0)
				sb_printf(out, "  role %-8s offset %-7lld passes of %d columns\n", p->roles[r].name, p->scratch_role[r], p->scratch_cols[r]);
	}
	sb_puts(out, "\nkernel arguments (in order)\n");
	static const char *kinds[] = {"tensor-map", "pointer", "dim", "scalar", "debug"};
	for (int i = 0; i < p->nargs; i++)
		sb_printf(out, "  %d  %-10s %s\n", i, kinds[p->args[i].kind], p->args[i].name);
}
