/*
 * count.c — the plan walked at bound dims: what one tile does (cost.h).
 *
 * Every role program is walked once with a multiplier, the product of the
 * trip counts of its enclosing loops, and every statement adds its work to
 * the role's totals and, inside a pipelined loop, to that loop's:
 *
 *   wgmma / mma     2 M N K FLOPs: M x N the accumulator fragment, K the
 *                   inner extent of the A operand (its buffer's shape);
 *   tma load/store  the box's bytes (the Plan's tensor-map box for loads);
 *   load / store    the slice's bytes when global (at least one element per
 *   atomic_add      fragment element: a gather or scatter moves them all),
 *                   one latency step per global load, divided by the
 *                   loop's `unroll`; shared-memory traffic is vector work;
 *   x = e           vector work: the elements of the largest fragment the
 *                   statement names times the operators of e (casts,
 *                   arithmetic, where, min/max count 1; arg-reductions 2;
 *                   transcendental functions 8, the SFU's rate) and,
 *                   for a row reduction, its lane shuffles (rows x 4
 *                   lanes x 2 xor rounds x values: the accumulator
 *                   layout's quad);
 *   let x = G[..]   a dependent global read (a latency step and its bytes);
 *   wait, sync,     one wait each.
 *   wgmma_wait
 *
 * The main loop is the pipelined loop on the pipeline whose loops carry
 * the most work at nominal H200 rates; its computing role (the one with
 * the most work on that pipeline) is the critical path. Per iteration it
 * does that role's loop work plus the bytes the other roles' loops on the
 * ring move (the producer's TMA boxes). Before the loop (every role's work
 * outside the ring's loops, e.g. a resident x tile) is the tile's prologue;
 * the computing role's work after it is the epilogue. A kernel without a
 * pipelined loop is one serial program per tile: its slowest role's.
 *
 * DRAM. Every global read is also filed by the grid coordinates its index
 * depends on (a read of A[bm * 128 +: 128, k * 64 +: 64] depends on bm
 * only, so every tile of a row of bm reads the same panel), or as private
 * when the index depends on data (a let, a fragment, or the variable of a
 * loop with data-dependent bounds: a gather). cost_plan_work's DRAM bytes
 * read each distinct panel once. cost_reuse walks the tiles in launch order
 * (the raster: natural, or `group G`) and records, per axes mask, how many
 * tiles separate each use of a panel from its previous use: the model
 * (model.c) turns those reuse distances into L2 hits and misses.
 *
 * Trip counts evaluate lo, hi and step over the dims and consts
 * (eval_expr). A loop whose bounds depend on data (`for t in lo .. hi`
 * with lo, hi read from a tensor) is estimated as its share of the
 * tensor it indexes: elements of that tensor over the tiles. The counts
 * then say so (approx, note).
 */
#include "cost.h"
#include "../front/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXROLE 32

typedef struct Walk {
	const Plan *p;
	const Kernel *k;
	const long long *dims;
	double tiles;
	CostSeg role[MAXROLE];       /* per role, per tile */
	CostSeg *loopseg;            /* per PlanLoop: absolute totals inside it */
	CostSeg *loophold;           /* per PlanLoop: the part before its first `arrive` */
	bool *arrived;               /* per PlanLoop: its `arrive` has been walked */
	double mma_w, mma_wn;        /* FLOPs of the wgmmas, and FLOPs / N */
	double *loopiters;           /* per PlanLoop: iterations per tile */
	/* pass 2: the prologue / epilogue split */
	int pass;
	int crit_role;               /* the main loop's computing role */
	int main_pipe;
	int phase;                   /* 0 before the role's first main loop, 2 after */
	CostSeg pro, epi, prod_pro;
	CostCounts *out;
	const char *approx_vars[16];  /* variables of loops with data-dependent bounds */
	int napprox;
} Walk;

static void note(Walk *w, const char *msg)
{
	CostCounts *c = w->out;
	c->approx = true;
	size_t l = strlen(c->note);
	if (l + 3 < sizeof c->note)
		snprintf(c->note + l, sizeof c->note - l, "%s%s", l ? "; " : "", msg);
}

static void seg_add(CostSeg *d, const CostSeg *s, double m)
{
	d->mma_flops += s->mma_flops * m;
	d->vec_ops += s->vec_ops * m;
	d->shfl += s->shfl * m;
	d->bytes += s->bytes * m;
	d->atomic_bytes += s->atomic_bytes * m;
	d->vstmts += s->vstmts * m;
	d->lat_steps += s->lat_steps * m;
	d->waits += s->waits * m;
}

/* Nominal seconds of a segment on one H200 SM: only to choose between loops and roles. */
static double nominal(const CostSeg *s)
{
	return s->mma_flops / 5.9e12 + s->vec_ops / 2.5e11 + (s->bytes + s->atomic_bytes) / 6.4e10 + s->lat_steps * 6e-7 +
	       s->waits * 2e-8 + s->vstmts * 2e-8;
}

static const char *refname(const Expr *e)
{
	for (int g = 0; e && g < 32; g++) {
		if (e->kind == E_IDENT)
			return e->name;
		if (e->kind == E_TRANSPOSE)
			e = e->lhs;
		else if (e->kind == E_INDEX)
			e = e->base;
		else if (e->kind == E_CALL && e->nargs == 1)
			e = e->args[0];
		else
			return NULL;
	}
	return NULL;
}

static const Decl *global_param(const Kernel *k, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i]->space == SP_GLOBAL && k->params[i]->name && !strcmp(k->params[i]->name, name))
			return k->params[i];
	return NULL;
}

static double frag_elems(const Plan *p, const char *name)
{
	int f = name ? plan_frag_index(p, name) : -1;
	if (f < 0)
		return 0;
	return (double)p->frags[f].rows * (double)(p->frags[f].cols > 0 ? p->frags[f].cols : 1);
}

static double buf_elems(const Plan *p, const char *name, DType *dt)
{
	int b = name ? plan_buffer_index(p, name) : -1;
	if (b < 0)
		return 0;
	double e = 1;
	for (int i = 0; i < p->buffers[b].rank; i++)
		e *= (double)p->buffers[b].shape[i];
	if (dt)
		*dt = p->buffers[b].dt;
	return e;
}

/* Largest fragment (elements) an expression names. */
static double max_frag(const Plan *p, const Expr *e)
{
	if (!e)
		return 0;
	double m = 0;
	switch (e->kind) {
	case E_IDENT:
		return frag_elems(p, e->name);
	case E_UNARY:
	case E_TRANSPOSE:
		return max_frag(p, e->lhs);
	case E_BINARY:
		return fmax(max_frag(p, e->lhs), max_frag(p, e->rhs));
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			m = fmax(m, max_frag(p, e->args[i]));
		return m;
	case E_INDEX:
		m = frag_elems(p, e->name ? e->name : refname(e));
		for (int i = 0; i < e->nslices; i++)
			m = fmax(m, fmax(max_frag(p, e->slices[i].start), max_frag(p, e->slices[i].len)));
		return m;
	default:
		return 0;
	}
}

static bool is_transcendental(const char *n)
{
	static const char *const t[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "softplus", "tanh", "silu",
	                                "l2norm"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(n, t[i]))
			return true;
	return false;
}

/* Operator count of an expression (per element). */
static double ops(const Expr *e)
{
	if (!e)
		return 0;
	double s = 0;
	switch (e->kind) {
	case E_UNARY:
		return 1 + ops(e->lhs);
	case E_BINARY:
		return (e->op == '@' ? 0 : 1) + ops(e->lhs) + ops(e->rhs);
	case E_TRANSPOSE:
		return ops(e->lhs);
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			s += ops(e->args[i]);
		if (!e->name)
			return s + 1;
		if (!strcmp(e->name, "rows") || !strcmp(e->name, "cols"))
			return s;
		if (!strcmp(e->name, "rowargmin") || !strcmp(e->name, "rowargmax") || !strcmp(e->name, "topk"))
			return s + 2;
		if (is_transcendental(e->name))
			return s + 8;
		return s + 1;
	default:
		return 0;
	}
}

/* Lane shuffles of the row reductions in an expression: a row of an
 * accumulator-layout fragment lives in a quad of 4 lanes, which combine it
 * in 2 xor rounds, one shuffle per value (rowargmin / rowargmax carry the
 * value and its column). */
static double shuffles(const Plan *p, const Expr *e)
{
	if (!e)
		return 0;
	switch (e->kind) {
	case E_UNARY:
	case E_TRANSPOSE:
		return shuffles(p, e->lhs);
	case E_BINARY:
		return shuffles(p, e->lhs) + shuffles(p, e->rhs);
	case E_CALL: {
		double s = 0;
		for (int i = 0; i < e->nargs; i++)
			s += shuffles(p, e->args[i]);
		if (!e->name || e->nargs < 1)
			return s;
		int vals = !strcmp(e->name, "rowargmin") || !strcmp(e->name, "rowargmax") ? 2
		           : !strcmp(e->name, "rowsum") || !strcmp(e->name, "rowmax") || !strcmp(e->name, "rowmin") ? 1 : 0;
		if (vals) {
			const char *a = refname(e->args[0]);
			int f = a ? plan_frag_index(p, a) : -1;
			if (f >= 0 && p->frags[f].cols > 1)
				s += (double)p->frags[f].rows * 4 * 2 * vals;
		}
		return s;
	}
	default:
		return 0;
	}
}

/* Elements a global slice covers (points 1, ranges their length, ':' the extent). */
static double box_elems(Walk *w, const Expr *ref, const Decl *prm)
{
	double e = 1;
	for (int i = 0; i < ref->nslices; i++) {
		const Slice *sl = &ref->slices[i];
		long long x = 1;
		if (sl->kind == SL_RANGE) {
			if (!eval_expr(sl->len, w->k, w->dims, &x))
				x = 1;
		} else if (sl->kind == SL_ALL) {
			if (!prm || i >= prm->rank || !eval_expr(prm->shape[i], w->k, w->dims, &x))
				x = 1;
		}
		e *= (double)(x > 0 ? x : 1);
	}
	return e;
}

/* The grid axes the index expressions of e depend on (bits), and whether
 * they depend on data (*priv). */
static int deps(Walk *w, const Expr *e, bool *priv)
{
	if (!e)
		return 0;
	int m = 0;
	switch (e->kind) {
	case E_IDENT:
		if (e->sym && e->sym->kind == SYM_GRIDVAR && e->sym->index >= 0 && e->sym->index < 3)
			return 1 << e->sym->index;
		if (e->sym && (e->sym->kind == SYM_LET || e->sym->kind == SYM_FRAG))
			*priv = true;
		for (int i = 0; i < w->napprox; i++)
			if (e->name && !strcmp(e->name, w->approx_vars[i]))
				*priv = true;
		return 0;
	case E_UNARY:
	case E_TRANSPOSE:
		return deps(w, e->lhs, priv);
	case E_BINARY:
		return deps(w, e->lhs, priv) | deps(w, e->rhs, priv);
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			m |= deps(w, e->args[i], priv);
		return m;
	case E_INDEX:
		for (int i = 0; i < e->nslices; i++)
			m |= deps(w, e->slices[i].start, priv) | deps(w, e->slices[i].len, priv);
		if (!global_param(w->k, refname(e)))
			*priv = true;   /* indexed by a value read from shared memory or registers */
		return m;
	default:
		return 0;
	}
}

/* File bytes read through global reference ref (per tile, pass 1) by what its index depends on. */
static void file_read(Walk *w, const Expr *ref, double bytes, double mult)
{
	if (w->pass != 1 || !ref || ref->kind != E_INDEX)
		return;
	bool priv = false;
	int m = 0;
	for (int i = 0; i < ref->nslices; i++)
		m |= deps(w, ref->slices[i].start, &priv) | deps(w, ref->slices[i].len, &priv);
	if (priv)
		w->out->read_private += bytes * mult;
	else
		w->out->read_by_axes[m & 7] += bytes * mult;
}

/* Bytes of the global tensor reads inside e (gathers: at least `elems` elements); reads counted in *nreads. */
static double global_reads(Walk *w, const Expr *e, double elems, double *nreads, double mult)
{
	if (!e)
		return 0;
	double b = 0;
	switch (e->kind) {
	case E_INDEX: {
		const Decl *prm = global_param(w->k, refname(e));
		if (prm) {
			double x = fmax(box_elems(w, e, prm), elems > 0 ? elems : 1) * dtype_size(prm->dt);
			file_read(w, e, x, mult);
			b += x;
			*nreads += 1;
		}
		for (int i = 0; i < e->nslices; i++)
			b += global_reads(w, e->slices[i].start, 0, nreads, mult) +
			     global_reads(w, e->slices[i].len, 0, nreads, mult);
		return b;
	}
	case E_UNARY:
	case E_TRANSPOSE:
		return global_reads(w, e->lhs, elems, nreads, mult);
	case E_BINARY:
		return global_reads(w, e->lhs, elems, nreads, mult) + global_reads(w, e->rhs, elems, nreads, mult);
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			b += global_reads(w, e->args[i], elems, nreads, mult);
		return b;
	default:
		return 0;
	}
}

/* Does e mention identifier name? */
static bool mentions(const Expr *e, const char *name)
{
	if (!e || !name)
		return false;
	switch (e->kind) {
	case E_IDENT:
		return e->name && !strcmp(e->name, name);
	case E_UNARY:
	case E_TRANSPOSE:
		return mentions(e->lhs, name);
	case E_BINARY:
		return mentions(e->lhs, name) || mentions(e->rhs, name);
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			if (mentions(e->args[i], name))
				return true;
		return false;
	case E_INDEX:
		for (int i = 0; i < e->nslices; i++)
			if (mentions(e->slices[i].start, name) || mentions(e->slices[i].len, name))
				return true;
		return false;
	default:
		return false;
	}
}

/* The grid axes expression e depends on, directly or through the lets it names (a bit per
 * axis; depth bounds the chain of lets). */
static unsigned grid_axes_of(const Expr *e, int depth)
{
	if (!e || depth > 8)
		return 0;
	switch (e->kind) {
	case E_IDENT:
		if (e->sym && e->sym->kind == SYM_GRIDVAR && e->sym->index >= 0 && e->sym->index < 8)
			return 1u << e->sym->index;
		if (e->sym && e->sym->kind == SYM_LET && e->sym->stmt)
			return grid_axes_of(e->sym->stmt->src, depth + 1);
		return 0;
	case E_UNARY:
	case E_TRANSPOSE:
		return grid_axes_of(e->lhs, depth);
	case E_BINARY:
		return grid_axes_of(e->lhs, depth) | grid_axes_of(e->rhs, depth);
	case E_CALL: {
		unsigned m = 0;
		for (int i = 0; i < e->nargs; i++)
			m |= grid_axes_of(e->args[i], depth);
		return m;
	}
	case E_INDEX: {
		unsigned m = 0;
		for (int i = 0; i < e->nslices; i++)
			m |= grid_axes_of(e->slices[i].start, depth) | grid_axes_of(e->slices[i].len, depth);
		return m;
	}
	default:
		return 0;
	}
}

/* The extent of the dimension of a global tensor that loop variable v indexes somewhere in
 * body (the first such access), or 0; *other: the grid axes that index that access's other
 * dimensions (they partition those, not this one). */
static double indexed_by(Walk *w, Stmt **body, int n, const char *v, unsigned *other)
{
	for (int i = 0; i < n; i++) {
		const Stmt *s = body[i];
		const Expr *cand[3] = {s->src, s->dst, NULL};
		for (int j = 0; j < 2; j++) {
			const Expr *e = cand[j];
			if (!e || e->kind != E_INDEX)
				continue;
			const Decl *prm = global_param(w->k, refname(e));
			if (!prm)
				continue;
			int hit = -1;
			for (int q = 0; q < e->nslices && q < prm->rank && hit < 0; q++)
				if (mentions(e->slices[q].start, v))
					hit = q;
			if (hit < 0)
				continue;
			*other = 0;
			for (int q = 0; q < e->nslices; q++)
				if (q != hit)
					*other |= grid_axes_of(e->slices[q].start, 0);
			long long x;
			return eval_expr(prm->shape[hit], w->k, w->dims, &x) && x > 0 ? (double)x : 1;
		}
		double sub = indexed_by(w, s->body, s->nbody, v, other);
		if (sub > 0)
			return sub;
	}
	return 0;
}

/* Names in a loop bound: dims and consts at their values, grid coordinates
 * at 0 (a split-K loop's bounds differ per CTA only by an offset). */
static bool bound_lookup(const void *env, const Expr *id, int depth, long long *out)
{
	const Walk *w = env;
	if (id->sym && id->sym->kind == SYM_GRIDVAR) {
		*out = 0;
		return true;
	}
	return eval_expr(id, w->k, w->dims, out);
}

static bool bound(const Walk *w, const Expr *e, long long *out)
{
	return e && eval_int(e, bound_lookup, w, out);
}

/* A loop whose bounds are data (`for c in Cs[n] .. Cs[n + 1]`, n = Ord[q]): its variable
 * indexes some dimension of a tensor, of extent E, which the grid coordinates its bounds
 * depend on divide among themselves (q over N sequences: E / N slots each; a loop over a
 * cluster's points, `Order[b, t]` for t in the bounds of cluster c of batch b: N / K, b
 * partitioning the other dimension). With no grid coordinate in the bounds, the whole
 * extent. */
static double trip_count(Walk *w, const Stmt *s)
{
	long long lo, hi, step = 1;
	if (bound(w, s->lo, &lo) && bound(w, s->hi, &hi) && (!s->step || bound(w, s->step, &step)) && step > 0)
		return hi <= lo ? 0 : (double)((hi - lo + step - 1) / step);
	unsigned other = 0;
	double el = indexed_by(w, s->body, s->nbody, s->name, &other);
	unsigned axes = (grid_axes_of(s->lo, 0) | grid_axes_of(s->hi, 0)) & ~other;
	double share = 1;
	const Decl *g = w->k->grid;
	for (int a = 0; g && a < g->nexprs && a < 8; a++) {
		long long x;
		if ((axes >> a & 1u) && eval_expr(g->exprs[a], w->k, w->dims, &x) && x > 0)
			share *= (double)x;
	}
	char msg[200];
	double t = el > 0 ? fmax(1, el / share) : 1;
	if (w->pass == 1) {
		if (el > 0)
			snprintf(msg, sizeof msg, "trip count of `for %s` depends on data: estimated %.0f (the extent it indexes, %.0f, over the %.0f grid tiles its bounds depend on)",
			         s->name ? s->name : "?", t, el, share);
		else
			snprintf(msg, sizeof msg, "trip count of `for %s` depends on data: counted once", s->name ? s->name : "?");
		note(w, msg);
	}
	return t;
}

/* The work of one statement (not its children), per execution. */
static void stmt_work(Walk *w, const Stmt *s, double latdiv, double mult, CostSeg *g)
{
	const Plan *p = w->p;
	memset(g, 0, sizeof *g);
	switch (s->kind) {
	case S_WAIT:
	case S_SYNC:
	case S_WGMMA_WAIT:
		g->waits = 1;
		break;
	case S_TMA_LOAD: {
		int t = plan_tmap_of(p, s);
		if (t >= 0)
			g->bytes = p->tmaps[t].box_bytes;
		else {
			const Decl *prm = global_param(w->k, refname(s->src));
			if (prm && s->src->kind == E_INDEX)
				g->bytes = box_elems(w, s->src, prm) * dtype_size(prm->dt);
		}
		file_read(w, s->src, g->bytes, mult);
		break;
	}
	case S_TMA_STORE:
	case S_CP_ASYNC: {
		const Expr *ref = s->kind == S_TMA_STORE ? s->dst : s->src;
		const Decl *prm = global_param(w->k, refname(ref));
		if (prm && ref && ref->kind == E_INDEX)
			g->bytes = box_elems(w, ref, prm) * dtype_size(prm->dt);
		if (s->kind == S_CP_ASYNC)
			file_read(w, ref, g->bytes, mult);
		else if (w->pass == 1)
			w->out->write_bytes += g->bytes * mult;
		break;
	}
	case S_WGMMA:
	case S_MMA: {
		const Expr *op = s->src;
		if (!op || op->kind != E_BINARY)
			break;
		const char *acc = refname(s->dst);
		int f = acc ? plan_frag_index(p, acc) : -1;
		if (f < 0)
			break;
		double M = (double)p->frags[f].rows, N = (double)(p->frags[f].cols > 0 ? p->frags[f].cols : 1);
		const Expr *a = op->lhs;
		bool at = a && a->kind == E_TRANSPOSE;
		const char *an = refname(a);
		int b = an ? plan_buffer_index(p, an) : -1;
		double K = 0;
		if (b >= 0 && p->buffers[b].rank == 2)
			K = (double)p->buffers[b].shape[at ? 0 : 1];
		else {
			int af = an ? plan_frag_index(p, an) : -1;
			if (af >= 0)
				K = (double)(at ? p->frags[af].rows : p->frags[af].cols);
		}
		g->mma_flops = 2 * M * N * K;
		if (w->pass == 1 && g->mma_flops > 0) {
			double wn = (double)(p->frags[f].wg_cols > 0 ? p->frags[f].wg_cols : (long long)N);
			w->mma_w += g->mma_flops * mult;
			w->mma_wn += g->mma_flops * mult / wn;
		}
		if (w->out->mma_dt == DT_NONE)
			w->out->mma_dt = b >= 0 ? p->buffers[b].dt : DT_BF16;
		break;
	}
	case S_LOAD: {
		double fe = frag_elems(p, refname(s->dst));
		const Decl *prm = global_param(w->k, refname(s->src));
		if (prm && s->src && s->src->kind == E_INDEX) {
			g->bytes = fmax(box_elems(w, s->src, prm), fe) * dtype_size(prm->dt);
			g->lat_steps = 1 / latdiv;
			file_read(w, s->src, g->bytes, mult);
		} else {
			g->vec_ops = fe > 0 ? fe : buf_elems(p, refname(s->src), NULL);
		}
		g->vstmts = fe > 0;
		break;
	}
	case S_STORE:
	case S_ATOMIC: {
		double fe = fmax(max_frag(p, s->src), max_frag(p, s->dst));
		double nr = 0;
		g->bytes += global_reads(w, s->src, fe, &nr, mult);
		g->lat_steps += nr / latdiv;
		const Decl *prm = global_param(w->k, refname(s->dst));
		if (prm && s->dst && s->dst->kind == E_INDEX) {
			double el = fmax(box_elems(w, s->dst, prm), fe);
			if (s->kind == S_ATOMIC)
				g->atomic_bytes += el * dtype_size(prm->dt) * 2;
			else
				g->bytes += el * dtype_size(prm->dt);
			if (w->pass == 1)
				w->out->write_bytes += el * dtype_size(prm->dt) * mult;
			g->vec_ops += el * ops(s->src);
		} else {
			double el = fe > 0 ? fe : buf_elems(p, refname(s->dst), NULL);
			g->vec_ops += el * (1 + ops(s->src) + (s->kind == S_ATOMIC ? 1 : 0));
		}
		g->vstmts += fe > 0;
		break;
	}
	case S_LET: {
		double nr = 0;
		g->bytes = global_reads(w, s->src, 1, &nr, mult);
		g->lat_steps = nr / latdiv;
		break;
	}
	case S_ASSIGN: {
		double fe = max_frag(p, s->src);
		for (int i = 0; i < s->nlhs; i++)
			fe = fmax(fe, max_frag(p, s->lhs[i]));
		double nr = 0;
		g->bytes = global_reads(w, s->src, fe, &nr, mult);
		g->lat_steps = nr / latdiv;
		g->vec_ops = (fe > 0 ? fe : 1) * fmax(1, ops(s->src));
		g->shfl = shuffles(p, s->src);
		g->vstmts = fe > 0;
		break;
	}
	default:
		break;
	}
}

static int loop_index(const Plan *p, const Stmt *s)
{
	for (int i = 0; i < p->nloops; i++)
		if (p->loops[i].loop == s)
			return i;
	return -1;
}

/* Pass 1: file statement s's work g (times mult: its executions in a tile) under its line. */
static void stmt_file(Walk *w, const Stmt *s, int role, const CostSeg *g, double mult)
{
	if (!(g->vec_ops + g->shfl + g->mma_flops + g->bytes + g->waits > 0))
		return;
	CostCounts *c = w->out;
	CostStmt *t = NULL;
	for (int i = 0; i < c->nstmts && !t; i++)
		if (c->stmts[i].line == s->span.line && c->stmts[i].col == s->span.col && c->stmts[i].role == role)
			t = &c->stmts[i];
	if (!t && c->nstmts < COST_MAX_STMTS) {
		t = &c->stmts[c->nstmts++];
		t->line = s->span.line, t->col = s->span.col, t->role = role;
	}
	if (!t)
		t = &c->stmt_rest;
	t->vec_ops += g->vec_ops * mult, t->shfl += g->shfl * mult, t->mma_flops += g->mma_flops * mult;
	t->bytes += g->bytes * mult, t->waits += g->waits * mult;
}

/* Pass 1: role and loop totals. Pass 2: the prologue / epilogue split. */
static void walk(Walk *w, Stmt **body, int n, int role, double mult, double latdiv, int ploop)
{
	for (int i = 0; i < n; i++) {
		const Stmt *s = body[i];
		if (s->kind == S_FOR) {
			double t = trip_count(w, s);
			int li = s->pipe ? loop_index(w->p, s) : -1;
			bool is_main = li >= 0 && w->p->loops[li].pipe == w->main_pipe;
			if (w->pass == 1 && li >= 0) {
				w->loopiters[li] += mult * t;
				w->arrived[li] = false;
			}
			if (w->pass == 2 && is_main) {
				if (role == w->crit_role)
					w->phase = 2;
				continue;
			}
			long long lo, hi;
			bool data = !bound(w, s->lo, &lo) || !bound(w, s->hi, &hi);
			if (data && w->napprox < 16)
				w->approx_vars[w->napprox++] = s->name;
			walk(w, s->body, s->nbody, role, mult * t, s->unroll > 1 ? s->unroll : 1, li >= 0 ? li : ploop);
			if (data && w->napprox > 0)
				w->napprox--;
			continue;
		}
		if (s->kind == S_IF) {
			walk(w, s->body, s->nbody, role, mult, latdiv, ploop);
			continue;
		}
		CostSeg g;
		stmt_work(w, s, latdiv, mult, &g);
		if (w->pass == 1) {
			stmt_file(w, s, role, &g, mult);
			if (role >= 0 && role < MAXROLE)
				seg_add(&w->role[role], &g, mult);
			if (ploop >= 0) {
				seg_add(&w->loopseg[ploop], &g, mult);
				if (!w->arrived[ploop])
					seg_add(&w->loophold[ploop], &g, mult);
				if (s->kind == S_ARRIVE)
					w->arrived[ploop] = true;
			}
		} else if (role == w->crit_role) {
			seg_add(w->phase == 2 ? &w->epi : &w->pro, &g, mult);
		} else if (ploop < 0 || w->p->loops[ploop].pipe != w->main_pipe) {
			/* another role's work outside the ring: it feeds the tile (bytes only) */
			w->prod_pro.bytes += g.bytes * mult;
		}
	}
}

static void walk_roles(Walk *w)
{
	const Kernel *k = w->k;
	for (int i = 0; i < k->nbody; i++) {
		const Stmt *s = k->body[i];
		if (s->kind != S_IN)
			continue;
		int r = plan_role_index(w->p, s->name);
		w->phase = 0;
		walk(w, s->body, s->nbody, r, 1, 1, -1);
	}
}

bool cost_count(const Plan *p, const long long *dims, CostCounts *out, char *err, size_t n)
{
	memset(out, 0, sizeof *out);
	const Kernel *k = p->kernel;
	double tiles = 1;
	long long e;
	if (p->tiles) {
		if (!eval_expr(p->tiles, k, dims, &e) || e < 0) {
			snprintf(err, n, "the tile count does not evaluate at this shape");
			return false;
		}
		tiles = (double)e;
	} else {
		for (int a = 0; a < 3; a++) {
			if (p->grid[a] && (!eval_expr(p->grid[a], k, dims, &e) || e < 0)) {
				snprintf(err, n, "grid extent %d does not evaluate at this shape", a);
				return false;
			}
			if (p->grid[a])
				tiles *= (double)e;
		}
	}
	out->tiles = tiles;
	out->persistent = p->persistent;
	out->group = p->group;
	for (int a = 0; a < 3; a++) {
		Expr *x = p->group ? p->space[a] : p->grid[a];
		out->extent[a] = 1;
		if (x && eval_expr(x, k, dims, &e) && e > 0)
			out->extent[a] = e;
	}
	out->block_threads = p->block_threads > 0 ? p->block_threads : 32;
	out->warps = (out->block_threads + 31) / 32;
	out->regs_per_thread = p->base_regs > 0 ? p->base_regs : 32;
	/* Registers at launch: a kernel that moves registers between roles
	 * (setmaxnreg) holds the whole pool; otherwise ptxas gives each thread
	 * what it needs, estimated as its fragments' registers plus 32. */
	bool moves = false;
	for (int r = 0; r < p->nroles; r++)
		moves |= p->roles[r].regs > 0;
	if (!moves) {
		int need = 0;
		for (int r = 0; r < p->nroles; r++) {
			int sum = 0;
			for (int f = 0; f < p->nfrags; f++)
				if (p->frags[f].role == r)
					sum += p->frags[f].regs_per_thread;
			need = sum > need ? sum : need;
		}
		need = (need + 32 + 7) / 8 * 8;
		if (need < out->regs_per_thread)
			out->regs_per_thread = need;
	}
	out->smem_bytes = p->smem_bytes > 0 ? p->smem_bytes : 0;
	out->mma_dt = DT_NONE;

	Walk w;
	memset(&w, 0, sizeof w);
	w.p = p, w.k = k, w.dims = dims, w.tiles = tiles, w.out = out;
	w.loopseg = xcalloc((size_t)p->nloops + 1, sizeof *w.loopseg);
	w.loopiters = xcalloc((size_t)p->nloops + 1, sizeof *w.loopiters);
	w.loophold = xcalloc((size_t)p->nloops + 1, sizeof *w.loophold);
	w.arrived = xcalloc((size_t)p->nloops + 1, sizeof *w.arrived);
	w.main_pipe = -1;
	w.crit_role = -1;
	w.pass = 1;
	walk_roles(&w);
	int nr = p->nroles < MAXROLE ? p->nroles : MAXROLE;
	for (int r = 0; r < nr; r++)
		seg_add(&out->tile, &w.role[r], 1);

	/* the main pipeline: its loops carry the most nominal work */
	double best = 0;
	for (int q = 0; q < p->npipes; q++) {
		double t = 0;
		for (int i = 0; i < p->nloops; i++)
			if (p->loops[i].pipe == q)
				t += nominal(&w.loopseg[i]);
		if (t > best)
			best = t, w.main_pipe = q;
	}
	if (w.main_pipe >= 0) {
		/* its computing role: the most nominal work on the ring */
		double rbest = -1;
		for (int i = 0; i < p->nloops; i++) {
			if (p->loops[i].pipe != w.main_pipe)
				continue;
			double t = nominal(&w.loopseg[i]) - w.loopseg[i].bytes / 6.4e10;
			if (t > rbest)
				rbest = t, w.crit_role = p->loops[i].role;
		}
		CostSeg in = {0}, feed = {0}, hold = {0};
		double iters = 0;
		for (int i = 0; i < p->nloops; i++) {
			if (p->loops[i].pipe != w.main_pipe)
				continue;
			if (p->loops[i].role == w.crit_role) {
				seg_add(&in, &w.loopseg[i], 1);
				seg_add(&hold, &w.loophold[i], 1);
				iters += w.loopiters[i];
			} else {
				feed.bytes += w.loopseg[i].bytes;
			}
		}
		/* no other role feeds the ring: the computing role loads its own stages */
		out->self_fed = feed.bytes <= 0 && in.bytes > 0;
		out->has_loop = iters > 0;
		out->pipe = p->pipes[w.main_pipe].name;
		out->stages = p->pipes[w.main_pipe].stages > 0 ? p->pipes[w.main_pipe].stages : 1;
		out->iters = iters;
		if (iters > 0) {
			seg_add(&out->it, &in, 1 / iters);
			seg_add(&out->hold, &hold, 1 / iters);
			out->it.bytes += feed.bytes / iters;
		}
		for (int b = 0; b < p->nbuffers; b++)
			if (p->buffers[b].pipe == w.main_pipe)
				out->stage_stride += p->buffers[b].stage_stride;
		out->smem_other = out->smem_bytes - out->stage_stride * out->stages;
		if (out->smem_other < 0)
			out->smem_other = 0;
		if (w.crit_role >= 0) {
			out->loop_role = p->roles[w.crit_role].name;
			out->consumer_wgs = p->roles[w.crit_role].nwg > 0 ? p->roles[w.crit_role].nwg : 1;
		}
		w.pass = 2;
		walk_roles(&w);
		out->pro = w.pro;
		out->pro.bytes += w.prod_pro.bytes;
		out->epi = w.epi;
	}
	if (!out->has_loop) {
		/* serial: the slowest role's program */
		double rbest = -1;
		int crit = -1;
		for (int r = 0; r < nr; r++)
			if (nominal(&w.role[r]) > rbest)
				rbest = nominal(&w.role[r]), crit = r;
		if (crit >= 0) {
			out->serial = w.role[crit];
			out->loop_role = p->roles[crit].name;
			out->consumer_wgs = p->roles[crit].nwg > 0 ? p->roles[crit].nwg : 1;
		}
		out->pipe = NULL;
		out->stages = 0;
		out->iters = 0;
		memset(&out->it, 0, sizeof out->it);
		memset(&out->hold, 0, sizeof out->hold);
		memset(&out->pro, 0, sizeof out->pro);
		memset(&out->epi, 0, sizeof out->epi);
	}
	out->mma_inv_n = w.mma_w > 0 ? w.mma_wn / w.mma_w : 0;
	free(w.loopseg);
	free(w.loopiters);
	free(w.loophold);
	free(w.arrived);
	cost_reuse(out, out->group);
	return true;
}

/* Tile t's coordinates in the raster order (natural: x fastest; grouped: G rows of y, y fastest). */
static void tile_coords(const CostCounts *c, int group, long long t, long long xyz[3])
{
	long long tx = c->extent[0], ty = c->extent[1];
	if (group > 0 && tx > 0 && ty > 0) {
		long long G = group, g = t / (G * tx), first = g * G, gs = ty - first < G ? ty - first : G;
		long long r = t % (G * tx);
		if (gs < 1)
			gs = 1;
		xyz[1] = first + r % gs;
		xyz[0] = r / gs;
		xyz[2] = t / (tx * ty);
	} else {
		xyz[0] = t % tx;
		xyz[1] = (t / tx) % (ty > 0 ? ty : 1);
		xyz[2] = t / (tx * (ty > 0 ? ty : 1));
	}
}

void cost_reuse(CostCounts *c, int group)
{
	memset(c->reuse, 0, sizeof c->reuse);
	long long N = (long long)c->tiles;
	if (N > (1 << 18))
		N = 1 << 18;
	c->reuse_n = (double)N;
	if (N < 1)
		return;
	size_t cap = 1;
	while (cap < (size_t)N * 2)
		cap <<= 1;
	long long *keys = xmalloc(cap * sizeof *keys), *last = xmalloc(cap * sizeof *last);
	for (int m = 0; m < 8; m++) {
		if (c->read_by_axes[m] <= 0)
			continue;
		for (size_t i = 0; i < cap; i++)
			keys[i] = -1;
		CostReuse *r = &c->reuse[m];
		for (long long t = 0; t < N; t++) {
			long long xyz[3];
			tile_coords(c, group, t, xyz);
			long long key = (m & 1 ? xyz[0] : 0) +
			                (c->extent[0] + 1) * ((m & 2 ? xyz[1] : 0) + (c->extent[1] + 1) * (m & 4 ? xyz[2] : 0));
			size_t h = (size_t)((unsigned long long)key * 0x9E3779B97F4A7C15ull) & (cap - 1);
			while (keys[h] != -1 && keys[h] != key)
				h = (h + 1) & (cap - 1);
			if (keys[h] == -1) {
				keys[h] = key;
				r->first += 1;
			} else {
				double d = (double)(t - last[h]);
				int b = (int)floor(2 * log2(d));
				b = b < 0 ? 0 : b >= COST_REUSE_BUCKETS ? COST_REUSE_BUCKETS - 1 : b;
				r->d[b] = (r->d[b] * r->n[b] + d) / (r->n[b] + 1);
				r->n[b] += 1;
			}
			last[h] = t;
		}
	}
	free(keys);
	free(last);
}

void cost_plan_work(const CostCounts *c, CostWork *w)
{
	w->flops = (c->tile.mma_flops + c->tile.vec_ops) * c->tiles;
	/* each distinct panel once over the whole grid, gathers and writes per tile */
	double b = (c->read_private + c->write_bytes) * c->tiles;
	for (int m = 0; m < 8; m++) {
		double distinct = 1;
		for (int a = 0; a < 3; a++)
			if (m & (1 << a))
				distinct *= (double)c->extent[a];
		b += distinct * c->read_by_axes[m];
	}
	w->bytes = b;
	w->source = "plan";
}
