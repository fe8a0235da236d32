/*
 * graph.c — build the schedule graph (graph.h) from a kernel that passed sema.
 *
 * One walk per role over its `in` block, in program order. Each statement
 * becomes a GOp; S_FOR statements also open a GLoop that the ops of their
 * body point to, and S_IF statements become the `guard` of the ops of their
 * branches. While making an op, the walk records every resource it touches:
 * the statement's own target (the smem buffer a TMA writes, the fragment an
 * assignment writes, the global tile a store writes) with its mode and async
 * kind, and every read found in its expressions (fragments in a value,
 * params and buffers indexed in slice bounds or point reads, scalar params).
 *
 * After the walk, three indexes are filled from the per-role op lists, in
 * role order then program order: accesses per resource, ops per barrier
 * (waits, arrives, TMA signals) and ops per statement id. The TMA byte count
 * of a barrier's phase is the sum of its signallers' box bytes, which is
 * what `expect_tx` must announce; -1 marks a box whose lengths are not
 * constant (sema rejects those for TMA, so -1 means sema did not run).
 *
 * Nothing here reports a diagnostic: the graph describes, the verifier
 * judges. Everything is allocated in the compilation's arena.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

typedef struct GB {
	Ctx *c;
	Graph *g;
	GRole *role;
	Vec ops;        /* ops of the current role */
	Vec loops;      /* loops of the current role */
	Vec acc;        /* accesses of the op being built */
} GB;

static void *alloc(GB *b, size_t n)
{
	return arena_alloc(&b->c->arena, n);
}

static GRes *res_of(const Graph *g, const Sym *y)
{
	if (!y)
		return NULL;
	for (int i = 0; i < g->nres; i++)
		if (g->res[i]->sym == y || (g->res[i]->decl && g->res[i]->decl == y->decl &&
		                             y->kind != SYM_BUILTIN && y->kind != SYM_DIM))
			return g->res[i];
	return NULL;
}

static GBar *bar_of(const Graph *g, const Sym *y)
{
	if (!y || y->kind != SYM_BARRIER)
		return NULL;
	for (int i = 0; i < g->nbars; i++)
		if (g->bars[i]->sym == y || g->bars[i]->decl == y->decl)
			return g->bars[i];
	return NULL;
}

/* Add (or widen) an access of the current op to the resource named by sym. */
static void add_access(GB *b, GOp *op, Sym *y, Expr *ref, int mode, GAsync as, bool atomic)
{
	if (!y || (y->kind != SYM_SMEM && y->kind != SYM_FRAG && y->kind != SYM_PARAM))
		return;
	GRes *r = res_of(b->g, y);
	if (!r)
		return;
	for (int i = 0; i < b->acc.len; i++) {
		GAccess *a = b->acc.data[i];
		if (a->res == r && a->async == as) {
			a->mode |= mode;   /* one access per resource and kind: s = s * 2 is rw:s */
			a->atomic |= atomic;
			return;
		}
	}
	GAccess *a = alloc(b, sizeof *a);
	a->op = op;
	a->res = r;
	a->mode = mode;
	a->async = as;
	a->atomic = atomic;
	a->ref = ref;
	a->span = ref ? ref->span : op->span;
	if (r->ring) {
		a->ring = true;
		a->ring_loop = graph_pipelined_loop(op, r->ring);
	}
	vec_push(&b->acc, a);
}

/* Record every resource read inside expression e (ordinary reads). */
static void reads_in(GB *b, GOp *op, Expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case E_IDENT:
		add_access(b, op, e->sym, e, GA_READ, GX_SYNC, false);
		return;
	case E_INDEX:
		add_access(b, op, e->sym, e, GA_READ, GX_SYNC, false);
		for (int i = 0; i < e->nslices; i++) {
			reads_in(b, op, e->slices[i].start);
			reads_in(b, op, e->slices[i].len);
		}
		return;
	case E_UNARY: case E_TRANSPOSE:
		reads_in(b, op, e->lhs);
		return;
	case E_BINARY:
		reads_in(b, op, e->lhs);
		reads_in(b, op, e->rhs);
		return;
	case E_CALL:
		for (int i = 0; i < e->nargs; i++)
			reads_in(b, op, e->args[i]);
		return;
	default:
		return;
	}
}

/* The slice bounds of a reference are ordinary reads. */
static void slice_reads(GB *b, GOp *op, Expr *ref)
{
	if (!ref || ref->kind != E_INDEX)
		return;
	for (int i = 0; i < ref->nslices; i++) {
		reads_in(b, op, ref->slices[i].start);
		reads_in(b, op, ref->slices[i].len);
	}
}

static Sym *ref_sym(Expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == E_TRANSPOSE)
		e = e->lhs;
	if (e && e->kind == E_INDEX && !e->sym && e->base)
		return e->base->sym;
	return e ? e->sym : NULL;
}

static long long box_bytes(Expr *ref)
{
	if (!ref || !ref->sym || !ref->sym->decl)
		return -1;
	long long n = dtype_size(ref->sym->decl->dt);
	if (ref->kind != E_INDEX)
		return -1;
	for (int i = 0; i < ref->type.rank && i < MAX_RANK; i++) {
		if (ref->type.cdims[i] < 0)
			return -1;
		n *= ref->type.cdims[i];
	}
	return n;
}

static void fill_accesses(GB *b, GOp *op)
{
	Stmt *st = op->stmt;
	switch (st->kind) {
	case S_FOR:
		reads_in(b, op, st->lo);
		reads_in(b, op, st->hi);
		reads_in(b, op, st->step);
		break;
	case S_IF:
		reads_in(b, op, st->cond);
		break;
	case S_TMA_LOAD:
		op->async = true;
		add_access(b, op, ref_sym(st->dst), st->dst, GA_WRITE, GX_TMA, false);
		add_access(b, op, ref_sym(st->src), st->src, GA_READ, GX_TMA, false);
		slice_reads(b, op, st->src);
		op->tx_bytes = box_bytes(st->src);
		break;
	case S_TMA_STORE:
		op->async = true;
		add_access(b, op, ref_sym(st->src), st->src, GA_READ, GX_TMA, false);
		add_access(b, op, ref_sym(st->dst), st->dst, GA_WRITE, GX_TMA, false);
		slice_reads(b, op, st->dst);
		break;
	case S_CP_ASYNC:
		op->async = true;
		add_access(b, op, ref_sym(st->dst), st->dst, GA_WRITE, GX_CP_ASYNC, false);
		add_access(b, op, ref_sym(st->src), st->src, GA_READ, GX_CP_ASYNC, false);
		slice_reads(b, op, st->dst);
		slice_reads(b, op, st->src);
		break;
	case S_WGMMA: case S_MMA: {
		GAsync as = st->kind == S_WGMMA ? GX_WGMMA : GX_SYNC;
		op->async = st->kind == S_WGMMA;
		add_access(b, op, ref_sym(st->dst), st->dst, st->accumulate ? GA_RW : GA_WRITE, as, false);
		if (st->src && st->src->kind == E_BINARY) {
			Expr *x = st->src->lhs, *y = st->src->rhs;
			add_access(b, op, ref_sym(x), x && x->kind == E_TRANSPOSE ? x->lhs : x, GA_READ, as, false);
			add_access(b, op, ref_sym(y), y && y->kind == E_TRANSPOSE ? y->lhs : y, GA_READ, as, false);
		}
		break;
	}
	case S_LOAD:
		add_access(b, op, ref_sym(st->dst), st->dst, GA_WRITE, GX_SYNC, false);
		add_access(b, op, ref_sym(st->src), st->src, GA_READ, GX_SYNC, false);
		slice_reads(b, op, st->src);
		break;
	case S_STORE: case S_ATOMIC:
		reads_in(b, op, st->src);
		add_access(b, op, ref_sym(st->dst), st->dst, st->kind == S_ATOMIC ? GA_RW : GA_WRITE,
		           GX_SYNC, st->kind == S_ATOMIC);
		slice_reads(b, op, st->dst);
		break;
	case S_LET:
		reads_in(b, op, st->src);
		break;
	case S_ASSIGN:
		reads_in(b, op, st->src);
		for (int i = 0; i < st->nlhs; i++)
			add_access(b, op, ref_sym(st->lhs[i]), st->lhs[i], GA_WRITE, GX_SYNC, false);
		break;
	default:
		break;
	}
}

static long long const_trip(Stmt *st)
{
	if (!st->lo || !st->hi || !st->lo->is_const || !st->hi->is_const)
		return -1;
	long long step = 1;
	if (st->step) {
		if (!st->step->is_const || st->step->cval <= 0)
			return -1;
		step = st->step->cval;
	}
	long long n = st->hi->cval - st->lo->cval;
	if (n <= 0)
		return 0;
	return (n + step - 1) / step;
}

static void walk(GB *b, Stmt **body, int n, GLoop *loop, Stmt *guard, bool in_else);

static GOp *make_op(GB *b, Stmt *st, GLoop *loop, Stmt *guard, bool in_else)
{
	GOp *op = alloc(b, sizeof *op);
	op->kind = st->kind;
	op->stmt = st;
	op->span = st->span;
	op->role = b->role;
	op->index = b->ops.len;
	op->loop = loop;
	for (GLoop *l = loop; l; l = l->parent)
		if (l->pipe) {
			op->ploop = l;
			break;
		}
	op->guard = guard;
	op->in_else = in_else;
	switch (st->kind) {
	case S_WAIT: op->bar_use = GB_WAIT; break;
	case S_ARRIVE: op->bar_use = GB_ARRIVE; break;
	case S_TMA_LOAD: op->bar_use = st->sym ? GB_SIGNAL : GB_NONE; break;
	default: break;
	}
	if (op->bar_use != GB_NONE) {
		op->bar = bar_of(b->g, st->sym);
		if (!op->bar)
			op->bar_use = GB_NONE;
	}
	b->acc.len = 0;
	fill_accesses(b, op);
	op->nacc = b->acc.len;
	op->acc = alloc(b, sizeof(GAccess *) * (size_t)(op->nacc + 1));
	for (int i = 0; i < op->nacc; i++)
		op->acc[i] = b->acc.data[i];
	vec_push(&b->ops, op);
	if (st->id >= 0 && st->id < b->g->nstmts)
		b->g->by_stmt[st->id] = op;
	return op;
}

static void walk(GB *b, Stmt **body, int n, GLoop *loop, Stmt *guard, bool in_else)
{
	for (int i = 0; i < n; i++) {
		Stmt *st = body[i];
		if (!st || st->kind == S_IN)
			continue;
		GOp *op = make_op(b, st, loop, guard, in_else);
		if (st->kind == S_FOR) {
			GLoop *l = alloc(b, sizeof *l);
			op->opens = l;
			l->stmt = st;
			l->role = b->role;
			l->parent = loop;
			l->depth = loop ? loop->depth + 1 : 1;
			l->id = b->loops.len;
			l->var = st->name;
			l->var_sym = st->sym;
			l->lo = st->lo;
			l->hi = st->hi;
			l->step = st->step;
			l->trip = const_trip(st);
			l->pipe = st->pipe_sym;
			l->pipe_decl = st->pipe_sym ? st->pipe_sym->decl : NULL;
			l->stages = l->pipe_decl ? l->pipe_decl->stages : 0;
			vec_push(&b->loops, l);
			walk(b, st->body, st->nbody, l, guard, in_else);
		} else if (st->kind == S_IF) {
			walk(b, st->body, st->nbody, loop, st, false);
			walk(b, st->els, st->nels, loop, st, true);
		}
	}
}

static long long decl_bytes(Decl *d)
{
	long long n = dtype_size(d->dt);
	if (d->space == SP_NONE && d->kind == D_PARAM)
		return n;
	for (int i = 0; i < d->rank; i++) {
		if (!d->shape[i] || !d->shape[i]->is_const || d->shape[i]->cval < 0)
			return -1;
		n *= d->shape[i]->cval;
	}
	return n;
}

static GRes *new_res(GB *b, Kernel *k, Decl *d, Space sp)
{
	GRes *r = alloc(b, sizeof *r);
	r->decl = d;
	r->name = d->name;
	r->sym = sema_lookup(k, d->name);
	r->space = sp;
	r->ring = d->ring_sym;
	r->bytes = decl_bytes(d);
	return r;
}

#define FREEZE(vec, type, dst, cnt) do { \
	(cnt) = (vec).len; \
	(dst) = (type)vec_freeze(&(vec), &b.c->arena); \
	(vec).len = 0; \
} while (0)

/* Build the graph; see graph.h. */
Graph *graph_build(Ctx *c, Kernel *k)
{
	GB b;
	memset(&b, 0, sizeof b);
	b.c = c;
	Graph *g = arena_alloc(&c->arena, sizeof *g);
	b.g = g;
	g->k = k;
	g->nstmts = k->nstmts;
	g->by_stmt = arena_alloc(&c->arena, sizeof(GOp *) * (size_t)(k->nstmts + 1));
	/* resources: params, smems, frags */
	Vec res = {0};
	for (int i = 0; i < k->nparams; i++)
		vec_push(&res, new_res(&b, k, k->params[i], k->params[i]->space));
	for (int i = 0; i < k->nsmems; i++)
		vec_push(&res, new_res(&b, k, k->smems[i], SP_SMEM));
	for (int i = 0; i < k->nfrags; i++)
		vec_push(&res, new_res(&b, k, k->frags[i], SP_FRAG));
	FREEZE(res, GRes **, g->res, g->nres);
	/* barriers */
	g->nbars = k->nbarriers;
	g->bars = arena_alloc(&c->arena, sizeof(GBar *) * (size_t)(g->nbars + 1));
	for (int i = 0; i < g->nbars; i++) {
		GBar *br = arena_alloc(&c->arena, sizeof *br);
		Decl *d = k->barriers[i];
		br->decl = d;
		br->name = d->name;
		br->sym = sema_lookup(k, d->name);
		br->ring = d->ring_sym;
		g->bars[i] = br;
	}
	/* roles */
	g->nroles = k->nroles;
	g->roles = arena_alloc(&c->arena, sizeof(GRole *) * (size_t)(g->nroles + 1));
	for (int i = 0; i < g->nroles; i++) {
		Decl *d = k->roles[i];
		GRole *r = arena_alloc(&c->arena, sizeof *r);
		r->decl = d;
		r->name = d->name;
		r->sym = sema_lookup(k, d->name);
		r->id = i;
		r->nwarps = d->warp_hi - d->warp_lo + 1;
		if (r->nwarps < 1)
			r->nwarps = 1;
		r->nwarpgroups = (r->nwarps + 3) / 4;
		r->arrive_units = r->nwarpgroups;
		g->roles[i] = r;
	}
	for (int i = 0; i < k->nbody; i++) {
		Stmt *st = k->body[i];
		if (!st || st->kind != S_IN || !st->sym || !st->sym->decl)
			continue;
		int id = st->sym->decl->id;
		if (id < 0 || id >= g->nroles || g->roles[id]->in)
			continue;
		GRole *r = g->roles[id];
		r->in = st;
		b.role = r;
		walk(&b, st->body, st->nbody, NULL, NULL, false);
		FREEZE(b.ops, GOp **, r->ops, r->nops);
		FREEZE(b.loops, GLoop **, r->loops, r->nloops);
	}
	vec_free(&b.acc);
	/* global op list and the per-resource / per-barrier indexes */
	Vec all = {0};
	Vec *racc = calloc((size_t)g->nres + 1, sizeof(Vec));
	Vec *bw = calloc((size_t)g->nbars + 1, sizeof(Vec) * 3);
	if (!racc || !bw) {
		fprintf(stderr, "cake: out of memory\n");
		abort();
	}
	for (int i = 0; i < g->nroles; i++) {
		GRole *r = g->roles[i];
		for (int j = 0; j < r->nops; j++) {
			GOp *op = r->ops[j];
			op->gid = all.len;
			vec_push(&all, op);
			for (int a = 0; a < op->nacc; a++) {
				GRes *rs = op->acc[a]->res;
				for (int q = 0; q < g->nres; q++)
					if (g->res[q] == rs)
						vec_push(&racc[q], op->acc[a]);
			}
			if (op->bar) {
				int q = op->bar->decl->id;
				int which = op->bar_use == GB_WAIT ? 0 : op->bar_use == GB_ARRIVE ? 1 : 2;
				if (q >= 0 && q < g->nbars)
					vec_push(&bw[q * 3 + which], op);
			}
		}
	}
	FREEZE(all, GOp **, g->ops, g->nops);
	for (int q = 0; q < g->nres; q++)
		FREEZE(racc[q], GAccess **, g->res[q]->acc, g->res[q]->nacc);
	for (int q = 0; q < g->nbars; q++) {
		GBar *br = g->bars[q];
		FREEZE(bw[q * 3 + 0], GOp **, br->waits, br->nwaits);
		FREEZE(bw[q * 3 + 1], GOp **, br->arrives, br->narrives);
		FREEZE(bw[q * 3 + 2], GOp **, br->signals, br->nsignals);
		br->tx_bytes = 0;
		for (int i = 0; i < br->nsignals; i++) {
			if (br->signals[i]->tx_bytes < 0) {
				br->tx_bytes = -1;
				break;
			}
			br->tx_bytes += br->signals[i]->tx_bytes;
		}
	}
	free(racc);
	free(bw);
	return g;
}

/* ---- lookups and helpers ---- */

/* Role by name, or NULL. */
GRole *graph_role(const Graph *g, const char *name)
{
	for (int i = 0; i < g->nroles; i++)
		if (strcmp(g->roles[i]->name, name) == 0)
			return g->roles[i];
	return NULL;
}

/* Resource (param, smem, frag) by name, or NULL. */
GRes *graph_res(const Graph *g, const char *name)
{
	for (int i = 0; i < g->nres; i++)
		if (strcmp(g->res[i]->name, name) == 0)
			return g->res[i];
	return NULL;
}

/* Barrier by name, or NULL. */
GBar *graph_bar(const Graph *g, const char *name)
{
	for (int i = 0; i < g->nbars; i++)
		if (strcmp(g->bars[i]->name, name) == 0)
			return g->bars[i];
	return NULL;
}

/* The op made for statement s, or NULL. */
GOp *graph_op_of(const Graph *g, const Stmt *s)
{
	if (!s || s->id < 0 || s->id >= g->nstmts)
		return NULL;
	GOp *op = g->by_stmt[s->id];
	return op && op->stmt == s ? op : NULL;
}

/* Arrivals per `arrive`: one per warpgroup, 1 below 4 warps. */
int graph_arrive_units(const GRole *r)
{
	return r->nwarps >= 4 ? r->nwarpgroups : 1;
}

/* True when l is op->loop or one of its parents. */
bool graph_loop_encloses(const GLoop *l, const GOp *op)
{
	for (const GLoop *x = op->loop; x; x = x->parent)
		if (x == l)
			return true;
	return false;
}

/* Innermost loop around op pipelined over p, or NULL. */
GLoop *graph_pipelined_loop(const GOp *op, const Sym *p)
{
	if (!p)
		return NULL;
	for (GLoop *x = op->loop; x; x = x->parent)
		if (x->pipe == p)
			return x;
	return NULL;
}

/* op's access to res with any bit of mode, or NULL. */
GAccess *graph_op_access(const GOp *op, const GRes *res, int mode)
{
	for (int i = 0; i < op->nacc; i++)
		if (op->acc[i]->res == res && (op->acc[i]->mode & mode))
			return op->acc[i];
	return NULL;
}

/* Next op of the same role, or NULL. */
GOp *graph_next_op(const GOp *op)
{
	if (!op || !op->role || op->index + 1 >= op->role->nops)
		return NULL;
	return op->role->ops[op->index + 1];
}

/* Printable op kind. */
const char *graph_op_name(StmtKind k)
{
	switch (k) {
	case S_IN: return "in";
	case S_FOR: return "for";
	case S_IF: return "if";
	case S_WAIT: return "wait";
	case S_ARRIVE: return "arrive";
	case S_TMA_LOAD: return "tma_load";
	case S_TMA_STORE: return "tma_store";
	case S_CP_ASYNC: return "cp_async";
	case S_WGMMA: return "wgmma";
	case S_WGMMA_WAIT: return "wgmma_wait";
	case S_MMA: return "mma";
	case S_LOAD: return "load";
	case S_STORE: return "store";
	case S_ATOMIC: return "atomic_add";
	case S_FENCE: return "fence";
	case S_SYNC: return "sync";
	case S_LET: return "let";
	case S_ASSIGN: return "assign";
	}
	return "?";
}

static const char *async_name(GAsync a)
{
	switch (a) {
	case GX_SYNC: return "";
	case GX_TMA: return " tma";
	case GX_WGMMA: return " wgmma";
	case GX_CP_ASYNC: return " cp_async";
	}
	return "";
}

/* Dump; see graph.h. */
void graph_dump(StrBuf *out, const Graph *g)
{
	sb_printf(out, "graph %s: %d roles, %d resources, %d barriers, %d ops\n",
	          g->k->name ? g->k->name : "?", g->nroles, g->nres, g->nbars, g->nops);
	for (int i = 0; i < g->nroles; i++) {
		GRole *r = g->roles[i];
		sb_printf(out, "role %s (warps %d, warpgroups %d, arrive units %d)%s\n", r->name, r->nwarps,
		          r->nwarpgroups, graph_arrive_units(r), r->in ? "" : " [no in block]");
		for (int j = 0; j < r->nops; j++) {
			GOp *op = r->ops[j];
			int depth = op->loop ? op->loop->depth : 0;
			sb_printf(out, "  %*s#%d %s line %d", depth * 2, "", op->stmt->id, graph_op_name(op->kind),
			          op->span.line);
			if (op->kind == S_FOR) {
				sb_printf(out, " var %s", op->stmt->name ? op->stmt->name : "?");
				if (op->stmt->pipe_sym)
					sb_printf(out, " pipelined %s", op->stmt->pipe_sym->name);
			}
			if (op->bar)
				sb_printf(out, " %s %s", op->bar_use == GB_WAIT ? "waits" : op->bar_use == GB_ARRIVE ? "arrives"
				                                                                          : "signals",
				          op->bar->name);
			if (op->kind == S_TMA_LOAD)
				sb_printf(out, " tx %lld", op->tx_bytes);
			if (op->guard)
				sb_printf(out, " if#%d%s", op->guard->id, op->in_else ? " else" : "");
			for (int a = 0; a < op->nacc; a++) {
				GAccess *ac = op->acc[a];
				sb_printf(out, " %s%s%s%s%s", ac->mode == GA_RW ? "rw:" : ac->mode == GA_WRITE ? "w:" : "r:",
				          ac->res->name, async_name(ac->async), ac->ring ? " ring" : "", ac->atomic ? " atomic" : "");
			}
			sb_putc(out, '\n');
		}
	}
	for (int i = 0; i < g->nbars; i++) {
		GBar *br = g->bars[i];
		sb_printf(out, "barrier %s: %d waits, %d arrives, %d signals, tx %lld bytes\n", br->name, br->nwaits,
		          br->narrives, br->nsignals, br->tx_bytes);
	}
	for (int i = 0; i < g->nres; i++) {
		GRes *r = g->res[i];
		sb_printf(out, "resource %s: %d accesses, %lld bytes\n", r->name, r->nacc, r->bytes);
	}
}
