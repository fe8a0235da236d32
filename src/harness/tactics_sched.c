/*
 * tactics_sched.c — the schedule tactics: stages, consumers, regs, unroll,
 * persistent, nonpersistent, raster_group and swap_ab.
 *
 * None of these changes what a CTA computes; they change how it is staged,
 * staffed and scheduled. Each is a small edit of declarations:
 *
 *   stages:N[:PIPE]   the pipeline's `stages` (ring buffers and ring barriers
 *                     follow, being declared `ring PIPE`);
 *   consumers:N       the wgmma role's warp range (later roles shift), the
 *                     arrivals of every barrier it releases (one per
 *                     warpgroup), the split of its fragments (an accumulator
 *                     whose rows no longer give each warpgroup a multiple of
 *                     64 is split by columns instead), and its register budget
 *                     (what the CTA's launch pool leaves beside the other
 *                     roles, at most 240, as the corpus kernels do);
 *   regs:ROLE:N       one role's `regs`, checked against the launch pool
 *                     (threads x floor8(65536 / threads)) and the role's
 *                     fragments;
 *   unroll:N[:VAR]    the `unroll` clause of the pipelined loops;
 *   persistent, nonpersistent, raster_group:G   the grid's clauses;
 *   swap_ab           the grid's two axes exchanged (and the cluster's), so
 *                     the raster walks the other operand's tiles fastest; the
 *                     producer's A and B tile loads trade places, so the tile
 *                     the next CTAs share is requested first. Applied twice it
 *                     is the identity.
 *
 * tac_fix_splits() is shared with the tile tactics (tactics_tile.c), which
 * change how many rows an accumulator has.
 */
#include "tactics_int.h"

#include <string.h>

/* ---- shared: fragment splits over a role's warpgroups ---- */

typedef struct AccScan {
	const Decl *f;
	bool written;        /* some wgmma writes it */
	bool b_kmajor;       /* ... and every such wgmma reads B as `b^T` from shared memory */
	bool a_smem;         /* ... and A from shared memory */
} AccScan;

static void scan_acc(Stmt *s, void *arg)
{
	AccScan *a = arg;
	if (s->kind != S_WGMMA || !s->dst || !s->dst->sym || s->dst->sym->decl != a->f || !s->src)
		return;
	if (!a->written) {
		a->b_kmajor = a->a_smem = true;
		a->written = true;
	}
	Expr *x = s->src->lhs, *y = s->src->rhs;
	a->b_kmajor = a->b_kmajor && y && y->kind == E_TRANSPOSE;
	a->a_smem = a->a_smem && x && x->kind == E_IDENT && x->sym && x->sym->kind == SYM_SMEM;
}

static bool split_ok(long long rows, long long cols, SplitKind sp, int nwg, bool acc)
{
	if (nwg <= 1)
		return !acc || rows % 64 == 0;
	if (sp == SPLIT_M)
		return rows % nwg == 0 && (!acc || (rows / nwg) % 64 == 0);
	if (sp == SPLIT_N)
		return cols > 0 && cols % nwg == 0 && (!acc || ((cols / nwg) % 8 == 0 && cols / nwg >= 8 && cols / nwg <= 256 && rows % 64 == 0));
	return !acc;   /* an unsplit accumulator is not lowered for several warpgroups */
}

bool tac_fix_splits(TacCtx *t, Decl *role, int nwg, bool apply)
{
	Kernel *k = t->k;
	/* splitting an accumulator by columns leaves the vectors that go with it
	 * (rowargmin, rowmax, cols(...)) without a layout: only when every
	 * fragment of the role is a wgmma accumulator (a GEMM) */
	bool only_acc = true;
	int rows_cls[16], nrows = 0;   /* M classes of accumulators newly split by rows */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *f = k->decls[i];
		if (f->kind != D_FRAG || !f->owner || strcmp(f->owner, role->name) != 0)
			continue;
		AccScan a = {f, false, false, false};
		tac_each_stmt(k, scan_acc, &a);
		only_acc = only_acc && a.written && f->rank == 2;
	}
	for (int i = 0; i < k->ndecls; i++) {
		Decl *f = k->decls[i];
		if (f->kind != D_FRAG || !f->owner || strcmp(f->owner, role->name) != 0)
			continue;
		long long rows = 0, cols = 0;
		tac_const(f->shape[0], &rows);
		if (f->rank == 2)
			tac_const(f->shape[1], &cols);
		AccScan a = {f, false, false, false};
		tac_each_stmt(k, scan_acc, &a);
		if (split_ok(rows, cols, f->split, nwg, a.written))
			continue;
		SplitKind alt[2] = {SPLIT_M, SPLIT_N};
		SplitKind pick = SPLIT_NONE;
		bool found = false;
		for (int q = 0; q < 2 && !found; q++) {
			if (alt[q] == f->split)
				continue;
			if (alt[q] == SPLIT_N && (!a.written || f->rank != 2 || !a.b_kmajor || !a.a_smem || !only_acc))
				continue;
			if (alt[q] == SPLIT_M && f->rank < 1)
				continue;
			if (split_ok(rows, cols, alt[q], nwg, a.written)) {
				pick = alt[q];
				found = true;
			}
		}
		if (!found) {
			if (a.written && !only_acc)
				return tac_fail(t, "accumulator '%s' [%lld, %lld] cannot be split by rows over the %d warpgroups of role '%s' (wgmma needs a multiple of 64 rows per warpgroup), and the role's other fragments (row or column vectors) keep it from being split by columns",
				                f->name, rows, cols, nwg, role->name);
			if (a.written)
				return tac_fail(t, "accumulator '%s' [%lld, %lld] cannot be split over the %d warpgroups of role '%s' (wgmma needs a multiple of 64 rows and 8..256 columns per warpgroup)",
				                f->name, rows, cols, nwg, role->name);
			return tac_fail(t, "fragment '%s' (%lld rows) cannot be split over the %d warpgroups of role '%s'",
			                f->name, rows, nwg, role->name);
		}
		if (pick == SPLIT_M && f->split == SPLIT_NONE && nrows < (int)NELEM(rows_cls)) {
			int slot = ax_decl_slot(tac_axes(t), f, 0);
			if (slot >= 0)
				rows_cls[nrows++] = ax_class(tac_axes(t), slot);
		}
		if (apply)
			f->split = pick;
	}
	/* an accumulator that starts being split by rows takes the unsplit
	 * fragments of its M class with it (the row vectors of a running argmin:
	 * a replicated fragment cannot hold a value each warpgroup computes only
	 * its part of, CK-DATA-002) */
	for (int i = 0; apply && nrows && nwg > 1 && i < k->ndecls; i++) {
		Decl *f = k->decls[i];
		if (f->kind != D_FRAG || !f->owner || strcmp(f->owner, role->name) != 0 || f->split != SPLIT_NONE)
			continue;
		int slot = ax_decl_slot(tac_axes(t), f, 0);
		long long rows = 0;
		if (slot < 0 || !tac_const(f->shape[0], &rows) || rows % nwg)
			continue;
		for (int q = 0; q < nrows; q++)
			if (ax_class(tac_axes(t), slot) == rows_cls[q])
				f->split = SPLIT_M;
	}
	return true;
}

/* ---- stages:N[:PIPE] ---- */

static Decl *stages_pipe(TacCtx *t, int *count)
{
	Decl *pick = NULL;
	*count = 0;
	for (int i = 0; i < t->k->ndecls; i++) {
		Decl *d = t->k->decls[i];
		if (d->kind != D_PIPELINE)
			continue;
		(*count)++;
		if (t->nargs > 1 ? strcmp(d->name, t->arg[1]) == 0 : !pick)
			pick = d;
	}
	return pick;
}

/* Decode stages's arguments (Tactic.parse). */
bool stages_parse(TacCtx *t)
{
	return tac_int_arg(t, 0, 1, 64, "the stage count");
}

/* stages's precondition (Tactic.pre). */
bool stages_pre(TacCtx *t)
{
	int n;
	Decl *p = stages_pipe(t, &n);
	if (n == 0)
		return tac_fail(t, "kernel '%s' declares no pipeline", t->k->name);
	if (!p)
		return tac_fail(t, "kernel '%s' has no pipeline '%s'", t->k->name, t->arg[1]);
	if (t->nargs == 1 && n > 1)
		return tac_fail(t, "kernel '%s' has %d pipelines; name one (stages:N:PIPE)", t->k->name, n);
	if (p->stages == t->num[0])
		return tac_fail(t, "pipeline '%s' of kernel '%s' already has %lld stages", p->name, t->k->name, t->num[0]);
	return true;
}

/* stages's rewrite of the AST (Tactic.apply). */
bool stages_apply(TacCtx *t)
{
	int n;
	stages_pipe(t, &n)->stages = (int)t->num[0];
	return true;
}

/* Push stages's proposal arguments for this kernel (Tactic.propose). */
void stages_propose(TacCtx *t)
{
	int n = 0;
	for (int i = 0; i < t->k->ndecls; i++)
		n += t->k->decls[i]->kind == D_PIPELINE;
	for (int i = 0; i < t->k->ndecls; i++) {
		Decl *d = t->k->decls[i];
		if (d->kind != D_PIPELINE)
			continue;
		for (int s = 2; s <= 7; s++)
			if (s != d->stages) {
				if (n > 1)
					tac_propose(t, "%d:%s", s, d->name);
				else
					tac_propose(t, "%d", s);
			}
	}
}

/* ---- consumers:N ---- */

typedef struct RoleScan {
	const Decl *role;
	const char *other;   /* another role that issues wgmma */
} RoleScan;

static void scan_wgmma_roles(Stmt *s, void *arg)
{
	RoleScan *r = arg;
	if (s->kind == S_WGMMA && s->role && s->role->decl != r->role && !r->other)
		r->other = s->role->name;
}

/* Decode consumers's arguments (Tactic.parse). */
bool consumers_parse(TacCtx *t)
{
	return tac_int_arg(t, 0, 1, 8, "the number of consumer warpgroups");
}

/* consumers's precondition (Tactic.pre). */
bool consumers_pre(TacCtx *t)
{
	if (!tac_gemm(t))
		return false;
	Kernel *k = t->k;
	Decl *r = t->gemm.role;
	if (t->gemm.mm->kind != S_WGMMA)
		return tac_fail(t, "the matrix product of kernel '%s' is an mma.sync, whose role is not made of consumer warpgroups", k->name);
	RoleScan rs = {r, NULL};
	tac_each_stmt(k, scan_wgmma_roles, &rs);
	if (rs.other)
		return tac_fail(t, "kernel '%s' has two roles that issue wgmma ('%s' and '%s'); consumers resizes a single consumer role",
		                k->name, r->name, rs.other);
	int warps = r->warp_hi - r->warp_lo + 1;
	if (r->warp_lo % 4 || warps % 4)
		return tac_fail(t, "role '%s' (warps %d..%d) is not made of whole warpgroups", r->name, r->warp_lo, r->warp_hi);
	int nwg = warps / 4, n = (int)t->num[0];
	if (n == nwg)
		return tac_fail(t, "role '%s' of kernel '%s' already has %d consumer warpgroup%s", r->name, k->name, n, n == 1 ? "" : "s");
	int hi = 0;
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_ROLE && k->decls[i]->warp_hi + 1 > hi)
			hi = k->decls[i]->warp_hi + 1;
	int threads = (hi + 4 * (n - nwg)) * 32;
	if (threads > 1024)
		return tac_fail(t, "%d consumer warpgroups give kernel '%s' %d threads per CTA, over the limit of 1024", n, k->name, threads);
	for (int i = 0; i < k->ndecls; i++) {
		Decl *b = k->decls[i];
		if (b->kind != D_BARRIER)
			continue;
		bool prod = false;
		for (int q = 0; q < b->nproducers; q++)
			prod = prod || strcmp(b->producers[q], r->name) == 0;
		if (!prod)
			continue;
		if (b->nproducers > 1)
			return tac_fail(t, "barrier '%s' has producers besides role '%s', so its arrivals do not follow the consumer warpgroups", b->name, r->name);
		if (b->arrivals % nwg)
			return tac_fail(t, "barrier '%s' counts %d arrivals, not a multiple of the %d warpgroups of role '%s'", b->name, b->arrivals, nwg, r->name);
	}
	return tac_fix_splits(t, r, n, false);
}

/* consumers's rewrite of the AST (Tactic.apply). */
bool consumers_apply(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *r = t->gemm.role;
	int nwg = tac_role_wgs(r), n = (int)t->num[0];
	int delta = 4 * (n - nwg), old_hi = r->warp_hi;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind == D_ROLE && d != r && d->warp_lo > old_hi) {
			d->warp_lo += delta;
			d->warp_hi += delta;
		}
		if (d->kind != D_BARRIER)
			continue;
		for (int q = 0; q < d->nproducers; q++)
			if (strcmp(d->producers[q], r->name) == 0)
				d->arrivals = d->arrivals / nwg * n;
	}
	r->warp_hi += delta;
	if (!tac_fix_splits(t, r, n, true))
		return false;
	if (r->regs > 0) {
		int fit = tac_regs_fit(k, r);
		long long need = tac_frag_words(k, r);
		/* the corpus convention: consumers take what the launch pool leaves
		 * (232 beside a 40-register producer for two warpgroups, 112 beside
		 * 24 for four), at most 240 */
		long long want = fit > 240 ? 240 : fit;
		if (want < need + TAC_REG_HEADROOM || want < 24)
			return tac_fail(t, "the fragments of role '%s' would need %lld registers per thread with %d warpgroup%s (plus %d for addresses and counters), but the CTA's launch pool leaves it %d",
			                r->name, need, n, n == 1 ? "" : "s", TAC_REG_HEADROOM, fit);
		r->regs = (int)want;
	}
	return true;
}

/* Push consumers's proposal arguments for this kernel (Tactic.propose). */
void consumers_propose(TacCtx *t)
{
	if (!tac_gemm(t))
		return;
	int nwg = tac_role_wgs(t->gemm.role);
	for (int n = 1; n <= 4; n++)
		if (n != nwg)
			tac_propose(t, "%d", n);
}

/* ---- regs:ROLE:N ---- */

/* Decode regs's arguments (Tactic.parse). */
bool regs_parse(TacCtx *t)
{
	if (!tac_int_arg(t, 1, 24, 256, "the register budget"))
		return false;
	if (t->num[1] % 8)
		return tac_fail(t, "the register budget must be a multiple of 8 (setmaxnreg), not %lld", t->num[1]);
	return true;
}

static void role_list(TacCtx *t, StrBuf *b)
{
	int n = 0;
	for (int i = 0; i < t->k->ndecls; i++)
		if (t->k->decls[i]->kind == D_ROLE)
			sb_printf(b, "%s%s", n++ ? ", " : "", t->k->decls[i]->name);
}

/* regs's precondition (Tactic.pre). */
bool regs_pre(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *r = tac_decl(k, D_ROLE, t->arg[0]);
	if (!r) {
		StrBuf b = {0};
		role_list(t, &b);
		tac_fail(t, "kernel '%s' has no role '%s' (roles: %s)", k->name, t->arg[0], sb_str(&b));
		sb_free(&b);
		return false;
	}
	int n = (int)t->num[1];
	if (k->target != TGT_SM90A)
		return tac_fail(t, "kernel '%s' targets %s, where register budgets (setmaxnreg) do not exist", k->name, target_name(k->target));
	if (r->regs == n)
		return tac_fail(t, "role '%s' of kernel '%s' already has regs %d", r->name, k->name, n);
	int warps = r->warp_hi - r->warp_lo + 1;
	if (r->warp_lo % 4 || warps % 4)
		return tac_fail(t, "role '%s' (warps %d..%d) is not made of whole warpgroups, which setmaxnreg needs", r->name, r->warp_lo, r->warp_hi);
	int fit = tac_regs_fit(k, r);
	if (n > fit)
		return tac_fail(t, "role '%s' can have at most regs %d: the other roles' budgets leave that much of the CTA's launch pool", r->name, fit);
	long long need = tac_frag_words(k, r);
	if (need + TAC_REG_HEADROOM > n)
		return tac_fail(t, "the fragments of role '%s' need %lld registers per thread, which leaves fewer than %d of regs %d for addresses and counters",
		                r->name, need, TAC_REG_HEADROOM, n);
	return true;
}

/* regs's rewrite of the AST (Tactic.apply). */
bool regs_apply(TacCtx *t)
{
	tac_decl(t->k, D_ROLE, t->arg[0])->regs = (int)t->num[1];
	return true;
}

/* Push regs's proposal arguments for this kernel (Tactic.propose). */
void regs_propose(TacCtx *t)
{
	static const int cand[] = {24, 32, 40, 56, 72, 80, 96, 104, 112, 120, 152, 160, 168, 184, 200, 208, 216, 224, 232, 240};
	Kernel *k = t->k;
	if (k->target != TGT_SM90A)
		return;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *r = k->decls[i];
		if (r->kind != D_ROLE || r->regs <= 0)
			continue;
		int fit = tac_regs_fit(k, r);
		long long need = tac_frag_words(k, r);
		int below = 0, above = 0;
		/* a role that holds fragments is not offered less: ptxas spills well
		 * before the fragment count says so (the assign at regs 104) */
		for (int q = (int)NELEM(cand) - 1; q >= 0 && below < 2 && need == 0; q--)
			if (cand[q] < r->regs && cand[q] >= need + TAC_REG_HEADROOM) {
				tac_propose(t, "%s:%d", r->name, cand[q]);
				below++;
			}
		for (size_t q = 0; q < NELEM(cand) && above < 2; q++)
			if (cand[q] > r->regs && cand[q] <= fit) {
				tac_propose(t, "%s:%d", r->name, cand[q]);
				above++;
			}
	}
}

/* ---- unroll:N[:VAR] ---- */

typedef struct UnrollScan {
	TacCtx *t;
	int loops, already;
	bool apply;
} UnrollScan;

static void scan_unroll(Stmt *s, void *arg)
{
	UnrollScan *u = arg;
	if (s->kind != S_FOR)
		return;
	if (u->t->nargs > 1 ? strcmp(s->name, u->t->arg[1]) != 0 : !s->pipe)
		return;
	u->loops++;
	u->already += s->unroll == u->t->num[0];
	if (u->apply)
		s->unroll = (int)u->t->num[0];
}

/* Decode unroll's arguments (Tactic.parse). */
bool unroll_parse(TacCtx *t)
{
	return tac_int_arg(t, 0, 0, 1024, "the unroll factor");
}

/* unroll's precondition (Tactic.pre). */
bool unroll_pre(TacCtx *t)
{
	UnrollScan u = {t, 0, 0, false};
	tac_each_stmt(t->k, scan_unroll, &u);
	if (u.loops == 0)
		return t->nargs > 1 ? tac_fail(t, "kernel '%s' has no loop over '%s'", t->k->name, t->arg[1])
		                    : tac_fail(t, "kernel '%s' has no pipelined loop", t->k->name);
	if (u.already == u.loops)
		return t->num[0] ? tac_fail(t, "every targeted loop of kernel '%s' already has unroll %lld", t->k->name, t->num[0])
		                 : tac_fail(t, "no targeted loop of kernel '%s' has an unroll clause", t->k->name);
	return true;
}

/* unroll's rewrite of the AST (Tactic.apply). */
bool unroll_apply(TacCtx *t)
{
	UnrollScan u = {t, 0, 0, true};
	tac_each_stmt(t->k, scan_unroll, &u);
	return true;
}

/* Push unroll's proposal arguments for this kernel (Tactic.propose). */
void unroll_propose(TacCtx *t)
{
	tac_propose(t, "1");
	tac_propose(t, "2");
	tac_propose(t, "4");
}

/* ---- persistent, nonpersistent ---- */

typedef struct OnceScan {
	Stmt *s;
} OnceScan;

static void scan_once(Stmt *s, void *arg)
{
	OnceScan *o = arg;
	if (!o->s && (s->kind == S_TMA_LOAD || s->kind == S_CP_ASYNC) && !s->ploop)
		o->s = s;
}

/* Decode persistent's arguments (Tactic.parse). */
bool persistent_parse(TacCtx *t)
{
	return true;
}

/* persistent's precondition (Tactic.pre). */
bool persistent_pre(TacCtx *t)
{
	Decl *g = tac_grid(t->k);
	if (!g)
		return tac_fail(t, "kernel '%s' has no grid", t->k->name);
	if (g->persistent)
		return tac_fail(t, "the grid of kernel '%s' is already persistent", t->k->name);
	OnceScan o = {NULL};
	tac_each_stmt(t->k, scan_once, &o);
	if (o.s) {
		const char *buf = o.s->dst && o.s->dst->kind == E_IDENT ? o.s->dst->name
		                  : o.s->dst && o.s->dst->base ? o.s->dst->base->name : "?";
		return tac_fail(t, "kernel '%s' fills shared buffer '%s' once per tile outside a pipelined loop (line %d), with no barrier to release it; a persistent CTA would overwrite it while the previous tile still reads it",
		                t->k->name, buf, o.s->span.line);
	}
	return true;
}

/* persistent's rewrite of the AST (Tactic.apply). */
bool persistent_apply(TacCtx *t)
{
	tac_grid(t->k)->persistent = true;
	return true;
}

/* Push persistent's proposal arguments for this kernel (Tactic.propose). */
void persistent_propose(TacCtx *t)
{
	tac_propose(t, "%s", "");
}

/* Decode nonpersistent's arguments (Tactic.parse). */
bool nonpersistent_parse(TacCtx *t)
{
	return true;
}

/* nonpersistent's precondition (Tactic.pre). */
bool nonpersistent_pre(TacCtx *t)
{
	Decl *g = tac_grid(t->k);
	if (!g || !g->persistent)
		return tac_fail(t, "the grid of kernel '%s' is not persistent", t->k->name);
	return true;
}

/* nonpersistent's rewrite of the AST (Tactic.apply). */
bool nonpersistent_apply(TacCtx *t)
{
	tac_grid(t->k)->persistent = false;
	return true;
}

/* Push nonpersistent's proposal arguments for this kernel (Tactic.propose). */
void nonpersistent_propose(TacCtx *t)
{
	tac_propose(t, "%s", "");
}

/* ---- raster_group:G ---- */

/* Decode raster_group's arguments (Tactic.parse). */
bool raster_group_parse(TacCtx *t)
{
	return tac_int_arg(t, 0, 0, 4096, "the group size");
}

/* raster_group's precondition (Tactic.pre). */
bool raster_group_pre(TacCtx *t)
{
	Decl *g = tac_grid(t->k);
	if (!g)
		return tac_fail(t, "kernel '%s' has no grid", t->k->name);
	if (g->nexprs != 2)
		return tac_fail(t, "the grid of kernel '%s' has %d ax%s; a raster group needs exactly 2", t->k->name, g->nexprs, g->nexprs == 1 ? "is" : "es");
	if (g->group == t->num[0])
		return t->num[0] ? tac_fail(t, "the grid of kernel '%s' already has group %lld", t->k->name, t->num[0])
		                 : tac_fail(t, "the grid of kernel '%s' has no group clause", t->k->name);
	return true;
}

/* raster_group's rewrite of the AST (Tactic.apply). */
bool raster_group_apply(TacCtx *t)
{
	Decl *g = tac_grid(t->k);
	g->group = (int)t->num[0];
	g->group_stated = g->group > 0;
	return true;
}

/* Push raster_group's proposal arguments for this kernel (Tactic.propose). */
void raster_group_propose(TacCtx *t)
{
	static const int cand[] = {0, 8, 16, 32};
	for (size_t i = 0; i < NELEM(cand); i++)
		tac_propose(t, "%d", cand[i]);
}

/* ---- swap_ab ---- */

typedef struct TmaPair {
	const Decl *a, *b;
	bool done;
} TmaPair;

static bool swap_in(Stmt **b, int n, const Decl *da, const Decl *db)
{
	int ia = -1, ib = -1;
	for (int i = 0; i < n; i++) {
		Stmt *s = b[i];
		if (!s || s->kind != S_TMA_LOAD || !s->dst || !s->dst->sym)
			continue;
		if (s->dst->sym->decl == da && ia < 0)
			ia = i;
		if (s->dst->sym->decl == db && ib < 0)
			ib = i;
	}
	if (ia < 0 || ib < 0)
		return false;
	Stmt *x = b[ia];
	b[ia] = b[ib];
	b[ib] = x;
	return true;
}

static void swap_tmas(Stmt *s, void *arg)
{
	TmaPair *p = arg;
	if (!p->done && (s->kind == S_FOR || s->kind == S_IN))
		p->done = swap_in(s->body, s->nbody, p->a, p->b);
}

/* Decode swap_ab's arguments (Tactic.parse). */
bool swap_ab_parse(TacCtx *t)
{
	return true;
}

typedef struct AxisScan {
	const Decl *a, *b;
	const char *var;
	bool in_a, in_b;
} AxisScan;

static bool expr_mentions(const Expr *e, const char *name)
{
	if (!e)
		return false;
	if (e->kind == E_IDENT && e->name && strcmp(e->name, name) == 0)
		return true;
	if (expr_mentions(e->lhs, name) || expr_mentions(e->rhs, name) || expr_mentions(e->base, name))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_mentions(e->args[i], name))
			return true;
	for (int i = 0; i < e->nslices; i++)
		if (expr_mentions(e->slices[i].start, name))
			return true;
	return false;
}

/* Does grid coordinate `var` index the loads of operand A, of operand B? */
static void scan_axis(Stmt *s, void *arg)
{
	AxisScan *x = arg;
	if ((s->kind != S_TMA_LOAD && s->kind != S_CP_ASYNC) || !s->dst || !s->src)
		return;
	const Expr *d = s->dst->kind == E_INDEX ? s->dst->base : s->dst;
	const Decl *buf = d && d->sym ? d->sym->decl : NULL;
	if (!expr_mentions(s->src, x->var))
		return;
	x->in_a = x->in_a || buf == x->a;
	x->in_b = x->in_b || buf == x->b;
}

/* swap_ab's precondition (Tactic.pre). */
bool swap_ab_pre(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *g = tac_grid(k);
	if (!g)
		return tac_fail(t, "kernel '%s' has no grid", k->name);
	if (g->nexprs != 2)
		return tac_fail(t, "the grid of kernel '%s' has %d ax%s; swap_ab exchanges the two axes of a 2-D grid", k->name, g->nexprs, g->nexprs == 1 ? "is" : "es");
	if (!tac_gemm(t))
		return false;
	AxisScan x[2];
	for (int i = 0; i < 2; i++) {
		x[i] = (AxisScan){t->gemm.a, t->gemm.b, g->grid_vars[i], false, false};
		tac_each_stmt(k, scan_axis, &x[i]);
		if (x[i].in_a == x[i].in_b)
			return tac_fail(t, "grid axis '%s' of kernel '%s' indexes %s operand of its matrix product ('%s' and '%s'), so the grid axes are not the A and B tiles",
			                x[i].var, k->name, x[i].in_a ? "both the A and the B" : "neither", t->gemm.a->name, t->gemm.b->name);
	}
	if (x[0].in_a == x[1].in_a)
		return tac_fail(t, "both grid axes of kernel '%s' index operand '%s'", k->name, x[0].in_a ? t->gemm.a->name : t->gemm.b->name);
	return true;
}

/* swap_ab's rewrite of the AST (Tactic.apply). */
bool swap_ab_apply(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *g = tac_grid(k);
	Expr *e = g->exprs[0];
	g->exprs[0] = g->exprs[1];
	g->exprs[1] = e;
	const char *v = g->grid_vars[0];
	g->grid_vars[0] = g->grid_vars[1];
	g->grid_vars[1] = v;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *c = k->decls[i];
		if (c->kind == D_CLUSTER && c->nexprs >= 2) {
			Expr *x = c->exprs[0];
			c->exprs[0] = c->exprs[1];
			c->exprs[1] = x;
		}
	}
	TmaPair p = {t->gemm.a, t->gemm.b, false};
	tac_each_stmt(k, swap_tmas, &p);
	return true;
}

/* Push swap_ab's proposal arguments for this kernel (Tactic.propose). */
void swap_ab_propose(TacCtx *t)
{
	tac_propose(t, "%s", "");
}
