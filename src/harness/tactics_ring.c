/*
 * tactics_ring.c — operand_ring: a persistent grid on which each tile's
 * once-per-tile operand has a 2-stage ring of its own.
 *
 * A kernel with one CTA per tile often loads one operand once per tile, before
 * its main loop (the k-means point tile: `tma x0 <- X[...] signal xfull`, then
 * the centroid tiles through a ring). Each CTA then waits for that copy before
 * its first product, and the SM idles for it. The `persistent` tactic cannot
 * help such a kernel: on a persistent grid the next tile's copy would overwrite
 * the buffer while the current tile still reads it, and nothing releases it.
 * This tactic gives the operand what the main loop's operands have, a ring and
 * a release barrier, and makes the grid persistent, so the producer loads the
 * next tile's operand as soon as it has issued the current tile's main loop:
 *
 *   pipeline xp stages 2                       new, before the first pipeline
 *   smem x0: ... ring xp                       every buffer the one-shot loads fill
 *   barrier xfull  ring xp ...                 the barrier they signal
 *   barrier xempty ring xp producers C consumers P arrivals <C's warpgroups>
 *   grid persistent (...)
 *   in P {                                     the producer
 *     for i in 0 .. 1 pipelined xp {           replaces the one-shot loads
 *       wait xempty
 *       tma x0 <- ... signal xfull             (moved, in order)
 *     }
 *     ...                                      the rest, unchanged
 *   }
 *   in C {                                     the consumer
 *     ...                                      before `wait xfull`: unchanged
 *     for i in 0 .. 1 pipelined xp {
 *       wait xfull
 *       ...                                    up to the last statement reading the buffers
 *       arrive xempty
 *     }
 *     ...                                      the rest (the tile's epilogue), unchanged
 *   }
 *
 * A one-step loop carries its ring from tile to tile on a persistent grid
 * (LANGUAGE.md §7.6), and a ring buffer read inside an inner loop pipelined on
 * another pipeline takes the stage of the enclosing loop on its own (the
 * lowering's nested pipelined loops). Names: for a barrier `Xfull` the
 * pipeline is `Xp` and the release barrier `Xempty` (`tp` and `tempty` when X
 * is empty), the loop variable `i`, each with a numeric suffix when taken.
 *
 * The precondition refuses what the rewrite cannot move faithfully: loads
 * under an `if` or in a loop, one-shot loads into a ring buffer or of more
 * than one role or barrier, or not one after another; a barrier also waited
 * elsewhere or not by exactly one role; buffers written by anything else or
 * read outside the consumer's span; a `let` inside that span (it would go out
 * of scope). Shared memory for the second stage is the verifier's to judge
 * (CK-RES-001): a kernel that has no room takes `stages` on its main ring
 * first. The pipeline (tactics.c) checks the result as for every tactic; a
 * wgmma still in flight at the release is CK-RACE-003 there.
 */
#include "tactics_int.h"

#include <string.h>

#define OR_MAX 16

typedef struct Or {
	Stmt *pin, *cin;          /* the producer's and the consumer's `in` blocks */
	Decl *prod, *cons;        /* their roles */
	int first, nloads;        /* the one-shot loads: pin->body[first .. first + nloads) */
	Decl *bufs[OR_MAX];       /* the buffers they fill */
	int nbufs;
	Decl *bar;                /* the barrier they signal */
	int wait, last;           /* the consumer's span: cin->body[wait .. last] */
} Or;

static Decl *decl_named(Kernel *k, const char *name, DeclKind kind)
{
	for (int i = 0; name && i < k->ndecls; i++)
		if (k->decls[i]->kind == kind && k->decls[i]->name && strcmp(k->decls[i]->name, name) == 0)
			return k->decls[i];
	return NULL;
}

static const char *buf_name(const Expr *e)
{
	if (!e)
		return NULL;
	return e->kind == E_IDENT ? e->name : e->kind == E_INDEX && e->base ? e->base->name : NULL;
}

/* Does statement s (and everything under it) mention name? */
static bool stmt_mentions(Stmt *s, const char *name)
{
	if (!s)
		return false;
	if (s->name && strcmp(s->name, name) == 0)
		return true;
	Expr **slots[16];
	int n = tac_stmt_exprs(s, slots, 16);
	for (int i = 0; i < n; i++)
		if (tac_expr_uses(*slots[i], name))
			return true;
	for (int i = 0; i < s->nbody; i++)
		if (stmt_mentions(s->body[i], name))
			return true;
	for (int i = 0; i < s->nels; i++)
		if (stmt_mentions(s->els[i], name))
			return true;
	return false;
}

static bool mentions_any(Stmt *s, const Or *o)
{
	for (int b = 0; b < o->nbufs; b++)
		if (stmt_mentions(s, o->bufs[b]->name))
			return true;
	return false;
}

/* The `in` block of role r (top level of the kernel body). */
static Stmt *in_block(Kernel *k, const Decl *r)
{
	for (int i = 0; i < k->nbody; i++)
		if (k->body[i]->kind == S_IN && k->body[i]->name && strcmp(k->body[i]->name, r->name) == 0)
			return k->body[i];
	return NULL;
}

typedef struct LoadScan {
	Stmt *nested;             /* a one-shot-looking TMA load under a loop or an `if` */
	int waits;                /* `wait B` statements anywhere */
	const char *bar;
} LoadScan;

static void scan_loads(Stmt *s, void *arg)
{
	LoadScan *l = arg;
	if (s->kind == S_WAIT && s->name && l->bar && strcmp(s->name, l->bar) == 0)
		l->waits++;
}

static bool or_scan(TacCtx *t, Or *o)
{
	Kernel *k = t->k;
	memset(o, 0, sizeof *o);
	Decl *g = tac_grid(k);
	if (!g)
		return tac_fail(t, "kernel '%s' has no grid", k->name);
	if (g->persistent)
		return tac_fail(t, "the grid of kernel '%s' is already persistent", k->name);
	/* the one-shot loads: top-level TMA loads of an `in` block, into buffers outside any ring */
	for (int i = 0; i < k->nbody; i++) {
		Stmt *in = k->body[i];
		if (in->kind != S_IN)
			continue;
		for (int q = 0; q < in->nbody; q++) {
			Stmt *s = in->body[q];
			if (s->kind != S_TMA_LOAD)
				continue;
			Decl *b = decl_named(k, buf_name(s->dst), D_SMEM);
			if (!b || b->ring)
				continue;
			if (o->pin && o->pin != in)
				return tac_fail(t, "kernel '%s' loads once per tile from two roles ('%s' and '%s')", k->name,
				                o->pin->name, in->name);
			if (o->pin && o->first + o->nloads != q)
				return tac_fail(t, "the once-per-tile loads of role '%s' are not one after another (line %d)", in->name,
				                s->span.line);
			Decl *bar = decl_named(k, s->name, D_BARRIER);
			if (!bar || bar->ring)
				return tac_fail(t, "the once-per-tile load of '%s' (line %d) does not signal a barrier outside a ring",
				                b->name, s->span.line);
			if (o->bar && o->bar != bar)
				return tac_fail(t, "the once-per-tile loads signal two barriers ('%s' and '%s')", o->bar->name, bar->name);
			if (!o->pin)
				o->pin = in, o->first = q;
			o->nloads++;
			o->bar = bar;
			bool dup = false;
			for (int x = 0; x < o->nbufs; x++)
				dup |= o->bufs[x] == b;
			if (!dup) {
				if (o->nbufs == OR_MAX)
					return tac_fail(t, "kernel '%s' fills more than %d buffers once per tile", k->name, OR_MAX);
				o->bufs[o->nbufs++] = b;
			}
		}
	}
	if (!o->pin)
		return tac_fail(t, "kernel '%s' has no once-per-tile TMA load at the top of a role (into a buffer outside a ring)",
		                k->name);
	o->prod = decl_named(k, o->pin->name, D_ROLE);
	/* the barrier: waited once, at the top of exactly one other role */
	if (o->bar->nconsumers != 1)
		return tac_fail(t, "barrier '%s' has %d consumer roles; one role must wait for the tile's operand",
		                o->bar->name, o->bar->nconsumers);
	o->cons = decl_named(k, o->bar->consumers[0], D_ROLE);
	o->cin = o->cons ? in_block(k, o->cons) : NULL;
	if (!o->prod || !o->cons || !o->cin || o->cons == o->prod)
		return tac_fail(t, "barrier '%s' is not waited by a role other than '%s'", o->bar->name, o->pin->name);
	LoadScan ls = {NULL, 0, o->bar->name};
	tac_each_stmt(k, scan_loads, &ls);
	o->wait = -1;
	for (int q = 0; q < o->cin->nbody; q++) {
		Stmt *s = o->cin->body[q];
		if (s->kind == S_WAIT && s->name && strcmp(s->name, o->bar->name) == 0)
			o->wait = q;
	}
	if (o->wait < 0 || ls.waits != 1)
		return tac_fail(t, "role '%s' must wait on '%s' exactly once, at the top of its program", o->cons->name,
		                o->bar->name);
	/* nothing else touches the buffers: the producer only loads them, the consumer reads them after its wait */
	for (int q = 0; q < o->pin->nbody; q++)
		if ((q < o->first || q >= o->first + o->nloads) && mentions_any(o->pin->body[q], o))
			return tac_fail(t, "role '%s' uses a once-per-tile buffer outside its loads (line %d)", o->pin->name,
			                o->pin->body[q]->span.line);
	o->last = -1;
	for (int q = 0; q < o->cin->nbody; q++)
		if (mentions_any(o->cin->body[q], o)) {
			if (q < o->wait)
				return tac_fail(t, "role '%s' reads a once-per-tile buffer before waiting on '%s' (line %d)",
				                o->cons->name, o->bar->name, o->cin->body[q]->span.line);
			o->last = q;
		}
	if (o->last < 0)
		return tac_fail(t, "role '%s' never reads the buffers it waits for on '%s'", o->cons->name, o->bar->name);
	for (int i = 0; i < k->nbody; i++) {
		Stmt *in = k->body[i];
		if (in->kind == S_IN && in != o->pin && in != o->cin)
			for (int q = 0; q < in->nbody; q++)
				if (mentions_any(in->body[q], o))
					return tac_fail(t, "role '%s' also uses a once-per-tile buffer (line %d)", in->name,
					                in->body[q]->span.line);
	}
	for (int q = o->wait; q <= o->last; q++)
		if (o->cin->body[q]->kind == S_LET)
			return tac_fail(t, "the `let` at line %d of role '%s' would go out of scope inside the tile's loop",
			                o->cin->body[q]->span.line, o->cons->name);
	return true;
}

/* ---- the hooks ---- */

/* Decode operand_ring's arguments (Tactic.parse). */
bool operand_ring_parse(TacCtx *t)
{
	return true;
}

/* operand_ring's precondition (Tactic.pre). */
bool operand_ring_pre(TacCtx *t)
{
	Or o;
	return or_scan(t, &o);
}

static Expr *int_expr(TacCtx *t, long long v)
{
	Expr *e = arena_alloc(&t->c->arena, sizeof *e);
	e->kind = E_INT;
	e->span = NOSPAN;
	e->ival = v;
	e->height = 1;
	return e;
}

/* `for VAR in 0 .. 1 pipelined PIPE { body }` */
static Stmt *one_step(TacCtx *t, const char *var, const char *pipe, Stmt **body, int n)
{
	Stmt *f = tac_new_stmt(t, S_FOR, var);
	f->pipe = pipe;
	f->lo = int_expr(t, 0);
	f->hi = int_expr(t, 1);
	f->body = body;
	f->nbody = n;
	return f;
}

/* operand_ring's rewrite of the AST (Tactic.apply). */
bool operand_ring_apply(TacCtx *t)
{
	Kernel *k = t->k;
	Or o;
	if (!or_scan(t, &o))
		return false;
	/* names: Xfull -> pipeline Xp, release barrier Xempty */
	const char *bn = o.bar->name;
	size_t bl = strlen(bn);
	char *stem = arena_printf(&t->c->arena, "%s", bn);
	if (bl >= 4 && strcmp(bn + bl - 4, "full") == 0)
		stem[bl - 4] = 0;
	if (!stem[0])
		stem = "t";
	const char *pipe = tac_fresh_name(t, arena_printf(&t->c->arena, "%sp", stem), NULL);
	const char *empty = tac_fresh_name(t, arena_printf(&t->c->arena, "%sempty", stem), NULL);
	if (strcmp(pipe, empty) == 0)
		empty = tac_fresh_name(t, arena_printf(&t->c->arena, "%s_release", stem), NULL);
	const char *var = tac_fresh_name(t, "i", NULL);
	/* the pipeline, before the first one (the once-per-tile buffers usually come first), or
	 * before the first buffer */
	Decl *pd = arena_alloc(&t->c->arena, sizeof *pd);
	pd->kind = D_PIPELINE;
	pd->span = pd->name_span = NOSPAN;
	pd->name = pipe;
	pd->stages = 2;
	int at = -1, first_smem = -1;
	for (int i = 0; i < k->ndecls; i++) {
		if (k->decls[i]->kind == D_PIPELINE && at < 0)
			at = i;
		if (k->decls[i]->kind == D_SMEM && first_smem < 0)
			first_smem = i;
	}
	tac_insert_decl(t, pd, at >= 0 ? at : first_smem >= 0 ? first_smem : k->ndecls);
	/* the buffers and the barrier join the ring; the release barrier follows the barrier */
	for (int b = 0; b < o.nbufs; b++)
		o.bufs[b]->ring = pipe;
	o.bar->ring = pipe;
	Decl *e = arena_alloc(&t->c->arena, sizeof *e);
	e->kind = D_BARRIER;
	e->span = e->name_span = e->ring_span = NOSPAN;
	e->name = empty;
	e->ring = pipe;
	e->producers = tac_name_list(t, o.cons->name);
	e->nproducers = 1;
	e->consumers = tac_name_list(t, o.prod->name);
	e->nconsumers = 1;
	e->arrivals = tac_role_wgs(o.cons);
	int bi = 0;
	while (bi < k->ndecls && k->decls[bi] != o.bar)
		bi++;
	tac_insert_decl(t, e, bi + 1);
	/* the producer: wait for the stage, then the loads */
	Stmt **lb = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)(o.nloads + 1));
	lb[0] = tac_new_stmt(t, S_WAIT, empty);
	for (int q = 0; q < o.nloads; q++)
		lb[q + 1] = o.pin->body[o.first + q];
	Stmt **pb = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)o.pin->nbody);
	int np = 0;
	for (int q = 0; q < o.pin->nbody; q++) {
		if (q == o.first)
			pb[np++] = one_step(t, var, pipe, lb, o.nloads + 1);
		if (q < o.first || q >= o.first + o.nloads)
			pb[np++] = o.pin->body[q];
	}
	o.pin->body = pb;
	o.pin->nbody = np;
	/* the consumer: the span from the wait to the last read, then the release */
	int span = o.last - o.wait + 1;
	Stmt **cb = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)(span + 1));
	for (int q = 0; q < span; q++)
		cb[q] = o.cin->body[o.wait + q];
	cb[span] = tac_new_stmt(t, S_ARRIVE, empty);
	Stmt **nb = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)o.cin->nbody);
	int nc = 0;
	for (int q = 0; q < o.cin->nbody; q++) {
		if (q == o.wait)
			nb[nc++] = one_step(t, var, pipe, cb, span + 1);
		if (q < o.wait || q > o.last)
			nb[nc++] = o.cin->body[q];
	}
	o.cin->body = nb;
	o.cin->nbody = nc;
	tac_grid(k)->persistent = true;
	return true;
}

/* Push operand_ring's proposal arguments for this kernel (Tactic.propose): none, when the
 * precondition holds (a kernel without a once-per-tile operand gets no proposal). */
void operand_ring_propose(TacCtx *t)
{
	Or o;
	StrBuf *why = t->why, quiet = {0};
	t->why = &quiet;
	if (or_scan(t, &o))
		tac_propose(t, "%s", "");
	t->why = why;
	sb_free(&quiet);
}
