/*
 * tactics_ragged.c — ragged:DIM: a grid axis that covers DIM in whole tiles
 * learns to cover any DIM, its last tile clipped by TMA.
 *
 * A tile kernel's domain usually says `N % 192 == 0`: its grid has N / 192
 * CTAs along bn and every CTA reads and writes whole tiles. When every global
 * access along N goes through TMA, the last tile may instead run past N and
 * be clipped (LANGUAGE.md §5.4: a load fills zeros there, a store drops it),
 * which is how the library's 128x192 tiles cover N = 11008 without padding:
 *
 *   domain ..., N % 192 == 0, ...     ->  N % 8 == 0 (16-byte rows of the
 *                                          tensors N is the innermost dim
 *                                          of), or nothing when it is none's
 *   grid (N / 192, ...) as (bn, ...)  ->  grid ((N + 191) / 192, ...)
 *   tma b <- B[bn * 192 +: 192, ...]  ->  tma b <- B[bn * 192 +: 192, ...] clip
 *   tma C[..., bn * 192 + 64 +: 64] <- cs[...]   ->   ... clip <- cs[...]
 *
 * The precondition refuses what clipping would make wrong: a plain load or
 * store (or an atomic, a scalar read) whose slices use the grid coordinate
 * (nothing clips those); a slice along DIM that does not start at
 * `g * T + c` with its box inside the CTA's own tile (c + length <= T), so
 * that no clipped box can reach into the next CTA's columns (an input the
 * verifier accepts has its boxes so; the rewrite checks it rather than
 * relying on it); DIM used
 * anywhere else in the program (a loop bound, a `let`: its ragged value
 * would leak into the arithmetic); a grid extent other than `DIM / T`. The
 * pipeline (tactics.c) re-checks the result with the verifier, whose memory
 * rules run the largest sampled points when a kernel clips.
 */
#include "tactics_int.h"

#include <string.h>

typedef struct Rg {
	const char *dim;
	Decl *grid;
	int axis;                 /* the grid axis whose extent is dim / T */
	long long T;
	const char *var;          /* its coordinate */
	int clause;               /* the domain clause `dim % T == 0` (index in its exprs), -1 */
	Decl *domain;
	long long align;          /* elements per 16 bytes of the narrowest tensor dim is innermost in; 0 none */
	bool fail;
} Rg;

static bool is_ident(const Expr *e, const char *name)
{
	return e && e->kind == E_IDENT && e->name && strcmp(e->name, name) == 0;
}

static bool int_of(const Expr *e, long long *v)
{
	if (!e || e->kind != E_INT)
		return false;
	*v = e->ival;
	return true;
}

/* start = var * T [+ c] with 0 <= c: sets *c */
static bool tile_start(const Expr *s, const char *var, long long T, long long *c)
{
	long long t;
	*c = 0;
	if (s && s->kind == E_BINARY && s->op == '+' && int_of(s->rhs, c))
		s = s->lhs;
	return s && s->kind == E_BINARY && s->op == '*' && is_ident(s->lhs, var) && int_of(s->rhs, &t) && t == T &&
	       *c >= 0;
}

static Decl *param_of(Kernel *k, const Expr *ref)
{
	const char *n = ref && ref->kind == E_INDEX && ref->base ? ref->base->name : NULL;
	for (int i = 0; n && i < k->ndecls; i++)
		if (k->decls[i]->kind == D_PARAM && k->decls[i]->name && strcmp(k->decls[i]->name, n) == 0)
			return k->decls[i];
	return NULL;
}

typedef struct RgScan {
	TacCtx *t;
	Rg *r;
	bool apply;
} RgScan;

/* Check (or mark) the global reference ref of statement s: tma is true for the global side of
 * a TMA copy, clip the flag to set. */
static void check_ref(RgScan *x, Stmt *s, const Expr *ref, bool tma, bool *clip)
{
	Rg *r = x->r;
	if (r->fail || !ref || ref->kind != E_INDEX)
		return;
	Decl *p = param_of(x->t->k, ref);
	if (!p)
		return;
	bool uses = false;
	for (int i = 0; i < ref->nslices; i++) {
		const Slice *sl = &ref->slices[i];
		bool v = tac_expr_uses(sl->start, r->var) || tac_expr_uses(sl->len, r->var);
		if (!v)
			continue;
		uses = true;
		if (!tma) {
			r->fail = true;
			tac_fail(x->t, "the %s of '%s' at line %d uses '%s': a plain access cannot be clipped",
			         s->kind == S_LOAD ? "load" : s->kind == S_STORE ? "store" : "access", p->name, s->span.line, r->var);
			return;
		}
		long long c, len;
		if (i >= p->rank || !is_ident(p->shape[i], r->dim) || sl->kind != SL_RANGE || !int_of(sl->len, &len) ||
		    !tile_start(sl->start, r->var, r->T, &c) || c + len > r->T) {
			r->fail = true;
			tac_fail(x->t, "the TMA box of '%s' at line %d is not inside the CTA's own tile along '%s' (`%s * %lld + c +: n` "
			         "with c + n <= %lld), so a clipped box could reach the next CTA's", p->name, s->span.line, r->dim,
			         r->var, r->T, r->T);
			return;
		}
	}
	if (uses && x->apply)
		*clip = true;
}

static void scan_stmt(Stmt *s, void *arg)
{
	RgScan *x = arg;
	Rg *r = x->r;
	if (r->fail)
		return;
	switch (s->kind) {
	case S_TMA_LOAD:
		check_ref(x, s, s->src, true, &s->clip_src);
		return;
	case S_TMA_STORE:
		check_ref(x, s, s->dst, true, &s->clip_dst);
		return;
	default:
		break;
	}
	/* any other statement: its global references must not use the coordinate, and DIM must not
	 * appear (a loop bound or a `let` would see the ragged value) */
	Expr **slots[16];
	int n = tac_stmt_exprs(s, slots, 16);
	for (int i = 0; i < n && !r->fail; i++) {
		if (tac_expr_uses(*slots[i], r->dim)) {
			r->fail = true;
			tac_fail(x->t, "line %d uses '%s' itself; with a ragged %s its value would change the arithmetic", s->span.line,
			         r->dim, r->dim);
			return;
		}
		if (tac_expr_uses(*slots[i], r->var)) {
			const Expr *e = *slots[i];
			if (e->kind == E_INDEX && param_of(x->t->k, e))
				check_ref(x, s, e, false, NULL);
			else if (s->kind == S_LOAD || s->kind == S_STORE || s->kind == S_ATOMIC || s->kind == S_CP_ASYNC) {
				r->fail = true;
				tac_fail(x->t, "line %d reads global memory at an address that uses '%s': a plain access cannot be clipped",
				         s->span.line, r->var);
			}
		}
	}
}

static bool rg_scan(TacCtx *t, Rg *r, bool apply)
{
	Kernel *k = t->k;
	memset(r, 0, sizeof *r);
	r->dim = t->arg[0];
	r->clause = -1;
	bool isdim = false;
	for (int i = 0; i < k->ndims; i++)
		isdim |= strcmp(k->dims[i], r->dim) == 0;
	if (!isdim)
		return tac_fail(t, "kernel '%s' has no dim '%s'", k->name, r->dim);
	r->grid = tac_grid(k);
	if (!r->grid)
		return tac_fail(t, "kernel '%s' has no grid", k->name);
	r->axis = -1;
	for (int a = 0; a < r->grid->nexprs; a++) {
		Expr *e = r->grid->exprs[a];
		if (tac_expr_uses(e, r->dim)) {
			if (r->axis >= 0 || !(e->kind == E_BINARY && e->op == '/' && is_ident(e->lhs, r->dim) && int_of(e->rhs, &r->T) && r->T > 1))
				return tac_fail(t, "the grid of kernel '%s' does not cover '%s' as `%s / T` on one axis", k->name, r->dim, r->dim);
			r->axis = a;
		}
	}
	if (r->axis < 0)
		return tac_fail(t, "no grid extent of kernel '%s' covers '%s'", k->name, r->dim);
	r->var = r->grid->grid_vars[r->axis];
	if (!r->var)
		return tac_fail(t, "grid axis %d of kernel '%s' has no coordinate name", r->axis, k->name);
	/* the domain clause dim % T == 0, and what else the domain says of dim */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind != D_DOMAIN)
			continue;
		for (int q = 0; q < d->nexprs; q++) {
			Expr *e = d->exprs[q];
			long long m, z;
			if (e && e->kind == E_BINARY && e->op == OP_EQ && e->lhs && e->lhs->kind == E_BINARY && e->lhs->op == '%' &&
			    is_ident(e->lhs->lhs, r->dim) && int_of(e->lhs->rhs, &m) && int_of(e->rhs, &z) && z == 0 && m == r->T) {
				r->domain = d;
				r->clause = q;
			}
		}
	}
	if (r->clause < 0)
		return tac_fail(t, "the domain of kernel '%s' has no `%s %% %lld == 0` to relax", k->name, r->dim, r->T);
	/* the tensors dim is the innermost extent of: their rows must stay 16-byte multiples */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *p = k->decls[i];
		if (p->kind != D_PARAM || p->rank < 2 || !is_ident(p->shape[p->rank - 1], r->dim))
			continue;
		long long a = 16 / (dtype_size(p->dt) > 0 ? dtype_size(p->dt) : 1);
		if (a > r->align)
			r->align = a;
	}
	RgScan x = {t, r, apply};
	tac_each_stmt(k, scan_stmt, &x);
	if (r->fail)
		return false;
	return true;
}

/* ---- the hooks ---- */

/* Decode ragged's arguments (Tactic.parse): the dim. */
bool ragged_parse(TacCtx *t)
{
	return true;
}

/* ragged's precondition (Tactic.pre). */
bool ragged_pre(TacCtx *t)
{
	Rg r;
	return rg_scan(t, &r, false);
}

/* ragged's rewrite of the AST (Tactic.apply). */
bool ragged_apply(TacCtx *t)
{
	Rg r;
	if (!rg_scan(t, &r, false))
		return false;
	rg_scan(t, &r, true);   /* marks the boxes */
	Arena *a = &t->c->arena;
	/* grid: dim / T -> (dim + T - 1) / T */
	Expr *e = r.grid->exprs[r.axis];
	Expr *sum = arena_alloc(a, sizeof *sum), *tm1 = arena_alloc(a, sizeof *tm1);
	*tm1 = *e->rhs;
	tm1->ival = r.T - 1;
	sum->kind = E_BINARY;
	sum->op = '+';
	sum->span = NOSPAN;
	sum->lhs = e->lhs;
	sum->rhs = tm1;
	sum->height = 2;
	e->lhs = sum;
	e->height = 3;
	/* domain: dim % T == 0 -> dim % align == 0, or dropped */
	Expr *cl = r.domain->exprs[r.clause];
	if (r.align > 1) {
		Expr *m = arena_alloc(a, sizeof *m);
		*m = *cl->lhs->rhs;
		m->ival = r.align;
		cl->lhs->rhs = m;
	} else {
		for (int q = r.clause; q + 1 < r.domain->nexprs; q++)
			r.domain->exprs[q] = r.domain->exprs[q + 1];
		r.domain->nexprs--;
	}
	return true;
}

/* Push ragged's proposal arguments for this kernel (Tactic.propose): each dim it applies to. */
void ragged_propose(TacCtx *t)
{
	StrBuf *why = t->why, quiet = {0};
	for (int i = 0; i < t->k->ndims; i++) {
		const char *saved = t->arg[0];
		t->arg[0] = t->k->dims[i];
		t->why = &quiet;
		Rg r;
		if (rg_scan(t, &r, false))
			tac_propose(t, "%s", t->k->dims[i]);
		t->why = why;
		quiet.len = 0;
		t->arg[0] = saved;
	}
	sb_free(&quiet);
}
