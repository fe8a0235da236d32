/*
 * tactics_ws.c — warp_specialize: split the program of a single-role kernel
 * into a TMA producer warpgroup and the consumer role.
 *
 * The input is the naive form (kernels/gemm/seed_naive.cake,
 * tests/corpus/good/rowsum_single_role_ring.cake): one role that, in each
 * step of a loop pipelined over a ring, TMA-loads the step's tiles into the
 * ring's buffers, waits on the ring's `full` barrier for its own loads and
 * consumes them; possibly with one-shot TMA loads before the loop (the
 * k-means point tile) signalling a barrier of their own. The rewrite:
 *
 *   role load warps 0..3 regs 40          new, declared before the role
 *   role R    warps +4                    shifted; regs = what the launch
 *                                         pool leaves beside the producer,
 *                                         at most 240 (the consumers convention)
 *   barrier full   producers load         every TMA-signalled barrier
 *   barrier empty ring P producers R consumers load arrivals <R's warpgroups>
 *   in load {                             new, before R's program
 *     tma x <- ...                        one-shot loads, moved, in order
 *     for k in LO .. HI pipelined P {     the loop header, copied
 *       wait empty
 *       tma a <- ...                      the step's loads, moved, in order
 *     }
 *   }
 *   in R { ... wait full ... arrive empty ... }
 *
 * `arrive empty` goes right after the last statement of the loop body that
 * reads a ring buffer of P, or, when that read is a wgmma, after the
 * `wgmma_wait 0` that retires it (the corpus kernels' place). Names that
 * would clash get a suffix (load2, empty2). The precondition refuses what the
 * rewrite cannot move faithfully: TMA loads under an `if` or in a nested
 * loop, loads whose coordinates use a `let` or a fragment, cp_async, a ring
 * also written by the role, a barrier both signalled and arrived on, one-shot
 * buffers on a persistent grid (nothing would release them between tiles).
 * The pipeline (tactics.c) then checks the result with the verifier and the
 * lowering, as for every tactic.
 */
#include "tactics_int.h"

#include <string.h>

#define WS_MAX 32

/* What the precondition found, and where the rewrite puts things. */
typedef struct Ws {
	Decl *role;
	Stmt *in;                 /* the role's `in` block */
	Stmt *loops[WS_MAX];      /* top-level pipelined loops that hold TMA loads */
	int nloops;
	int release[WS_MAX];      /* per loop: index in the body after which `arrive` goes */
	Decl *pipes[WS_MAX];      /* distinct pipelines of those loops */
	int npipes;
	Decl *sigbars[WS_MAX];    /* barriers signalled by TMA loads */
	int nsig;
	int oneshot;              /* one-shot (top-level) TMA loads */
} Ws;

/* ---- small helpers ---- */

static bool is_tma(const Stmt *s)
{
	return s && s->kind == S_TMA_LOAD;
}

static Decl *sym_decl_of(const Expr *e)
{
	return e && e->sym ? e->sym->decl : NULL;
}

/* The first statement of kind `kind` in the subtree of s (s included), or NULL. */
static const Stmt *find_kind(const Stmt *s, StmtKind kind)
{
	if (!s)
		return NULL;
	if (s->kind == kind)
		return s;
	for (int i = 0; i < s->nbody; i++) {
		const Stmt *x = find_kind(s->body[i], kind);
		if (x)
			return x;
	}
	for (int i = 0; i < s->nels; i++) {
		const Stmt *x = find_kind(s->els[i], kind);
		if (x)
			return x;
	}
	return NULL;
}

/* A name the producer may see in a TMA coordinate or a loop bound: grid
 * coordinates, dims, consts, params, and the copied loop's variable. NULL when
 * all are fine, else the first offending name. */
static const char *foreign_name(const Expr *e, const Stmt *loop)
{
	if (!e)
		return NULL;
	if ((e->kind == E_IDENT || e->kind == E_INDEX) && e->sym) {
		SymKind k = e->sym->kind;
		bool ok = k == SYM_DIM || k == SYM_PARAM || k == SYM_CONST || k == SYM_GRIDVAR || k == SYM_BUILTIN ||
		          (k == SYM_LOOPVAR && loop && e->sym->stmt == loop);
		if (!ok)
			return e->kind == E_INDEX && e->base ? e->base->name : e->name;
	}
	const char *n;
	if ((n = foreign_name(e->lhs, loop)) || (n = foreign_name(e->rhs, loop)))
		return n;
	if (e->kind != E_INDEX && (n = foreign_name(e->base, loop)))
		return n;
	for (int i = 0; i < e->nargs; i++)
		if ((n = foreign_name(e->args[i], loop)))
			return n;
	for (int i = 0; i < e->nslices; i++)
		if ((n = foreign_name(e->slices[i].start, loop)) || (n = foreign_name(e->slices[i].len, loop)))
			return n;
	return NULL;
}

/* Does e mention a shared buffer of ring `pipe`? */
static bool expr_ring(const Expr *e, const char *pipe)
{
	if (!e)
		return false;
	if ((e->kind == E_IDENT || e->kind == E_INDEX) && e->sym && e->sym->kind == SYM_SMEM) {
		Decl *d = e->sym->decl;
		if (d && d->ring && strcmp(d->ring, pipe) == 0)
			return true;
	}
	if (expr_ring(e->lhs, pipe) || expr_ring(e->rhs, pipe) || expr_ring(e->base, pipe))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_ring(e->args[i], pipe))
			return true;
	for (int i = 0; i < e->nslices; i++)
		if (expr_ring(e->slices[i].start, pipe) || expr_ring(e->slices[i].len, pipe))
			return true;
	return false;
}

typedef struct RingUse {
	const char *pipe;
	bool read, async;         /* reads a ring buffer; a wgmma does */
	const Stmt *write;        /* a statement other than a TMA load that writes one */
	const Stmt *async_at;     /* the last such wgmma */
	const Stmt *tstore;       /* a TMA store from one */
} RingUse;

static void ring_use(const Stmt *s, RingUse *u)
{
	if (!s)
		return;
	switch (s->kind) {
	case S_TMA_LOAD:
		break;   /* moved to the producer */
	case S_STORE:
	case S_ATOMIC:
	case S_CP_ASYNC:
		if (s->dst && s->dst->kind == E_INDEX && expr_ring(s->dst->base, u->pipe) && !u->write)
			u->write = s;
		if (s->dst && s->dst->kind == E_IDENT && expr_ring(s->dst, u->pipe) && !u->write)
			u->write = s;
		if (s->dst && s->dst->kind == E_INDEX) {
			for (int i = 0; i < s->dst->nslices; i++)
				u->read = u->read || expr_ring(s->dst->slices[i].start, u->pipe);
		}
		u->read = u->read || expr_ring(s->src, u->pipe);
		break;
	case S_WGMMA:
		if (expr_ring(s->src, u->pipe)) {
			u->read = true;
			u->async = true;
			u->async_at = s;
		}
		break;
	case S_TMA_STORE:
		if (expr_ring(s->src, u->pipe) && !u->tstore)
			u->tstore = s;
		break;
	default: {
		Expr **slots[16];
		int n = tac_stmt_exprs((Stmt *)s, slots, 16);
		for (int i = 0; i < n; i++)
			u->read = u->read || expr_ring(*slots[i], u->pipe);
		break;
	}
	}
	for (int i = 0; i < s->nbody; i++)
		ring_use(s->body[i], u);
	for (int i = 0; i < s->nels; i++)
		ring_use(s->els[i], u);
}

static bool has_ptr(void *const *list, int n, const void *p)
{
	for (int i = 0; i < n; i++)
		if (list[i] == p)
			return true;
	return false;
}

/* ---- the precondition's analysis ---- */

/* Check one TMA load the producer will issue; `loop` is its pipelined loop or NULL. */
static bool check_tma(TacCtx *t, Ws *w, const Stmt *s, const Stmt *loop)
{
	Kernel *k = t->k;
	Decl *buf = sym_decl_of(s->dst);
	Decl *bar = tac_decl(k, D_BARRIER, s->name);
	if (!buf || !bar)
		return tac_fail(t, "the TMA load at line %d has no resolved buffer or barrier", s->span.line);
	const char *bad = foreign_name(s->src, loop);
	if (bad)
		return tac_fail(t, "the TMA load into '%s' (line %d) uses '%s', which a producer role would not have (only grid coordinates, dims, consts, params%s)",
		                buf->name, s->span.line, bad, loop ? " and the loop variable" : "");
	if (loop) {
		if (!buf->ring || strcmp(buf->ring, loop->pipe) != 0)
			return tac_fail(t, "the TMA load at line %d in the loop pipelined over '%s' fills '%s', which is not a ring buffer of '%s'",
			                s->span.line, loop->pipe, buf->name, loop->pipe);
		if (!bar->ring || strcmp(bar->ring, loop->pipe) != 0)
			return tac_fail(t, "the TMA load at line %d in the loop pipelined over '%s' signals '%s', which is not a ring barrier of '%s'",
			                s->span.line, loop->pipe, bar->name, loop->pipe);
	} else {
		w->oneshot++;
	}
	if (!has_ptr((void *const *)w->sigbars, w->nsig, bar)) {
		if (w->nsig == WS_MAX)
			return tac_fail(t, "kernel '%s' has too many TMA-signalled barriers", k->name);
		w->sigbars[w->nsig++] = bar;
	}
	return true;
}

typedef struct ArriveScan {
	Decl **bars;
	int nbars;
	const Stmt *hit;
	int tmas;               /* TMA loads filling buffer `buf` */
	const Decl *buf;
} ArriveScan;

static void scan_arrives(Stmt *s, void *arg)
{
	ArriveScan *a = arg;
	if (s->kind == S_ARRIVE && !a->hit)
		for (int i = 0; i < a->nbars; i++)
			if (s->name && strcmp(s->name, a->bars[i]->name) == 0)
				a->hit = s;
	if (s->kind == S_TMA_LOAD && a->buf && sym_decl_of(s->dst) == a->buf)
		a->tmas++;
}

static bool ws_scan(TacCtx *t, Ws *w)
{
	Kernel *k = t->k;
	memset(w, 0, sizeof *w);
	if (k->target != TGT_SM90A)
		return tac_fail(t, "kernel '%s' targets %s; warp specialization with TMA producers needs sm_90a", k->name,
		                target_name(k->target));
	int nroles = 0;
	StrBuf names = {0};
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_ROLE) {
			sb_printf(&names, "%s%s", nroles ? ", " : "", k->decls[i]->name);
			if (!nroles)
				w->role = k->decls[i];
			nroles++;
		}
	if (nroles != 1) {
		tac_fail(t, "kernel '%s' has %d roles (%s); warp_specialize splits the program of a single role into a TMA producer and its consumer",
		         k->name, nroles, sb_str(&names));
		sb_free(&names);
		return false;
	}
	sb_free(&names);
	Decl *r = w->role;
	int warps = r->warp_hi - r->warp_lo + 1;
	if (r->warp_lo % 4 || warps % 4)
		return tac_fail(t, "role '%s' (warps %d..%d) is not made of whole warpgroups", r->name, r->warp_lo, r->warp_hi);
	if ((r->warp_hi + 1 + 4) * 32 > 1024)
		return tac_fail(t, "a producer warpgroup beside role '%s' (warps %d..%d) would give kernel '%s' %d threads per CTA, over the limit of 1024",
		                r->name, r->warp_lo, r->warp_hi, k->name, (r->warp_hi + 5) * 32);
	w->in = tac_role_body(k, r->name);
	if (!w->in)
		return tac_fail(t, "role '%s' of kernel '%s' has no program", r->name, k->name);
	const Stmt *cp = find_kind(w->in, S_CP_ASYNC);
	if (cp)
		return tac_fail(t, "role '%s' copies with cp_async (line %d); warp_specialize moves TMA loads only", r->name, cp->span.line);
	for (int i = 0; i < w->in->nbody; i++) {
		Stmt *s = w->in->body[i];
		if (is_tma(s)) {
			if (!check_tma(t, w, s, NULL))
				return false;
			continue;
		}
		bool ploop = s->kind == S_FOR && s->pipe;
		int ntma = 0;
		for (int q = 0; ploop && q < s->nbody; q++) {
			if (is_tma(s->body[q])) {
				if (!check_tma(t, w, s->body[q], s))
					return false;
				ntma++;
				continue;
			}
			const Stmt *deep = find_kind(s->body[q], S_TMA_LOAD);
			if (deep)
				return tac_fail(t, "the TMA load at line %d is nested inside the loop body; warp_specialize moves loads that stand directly in a pipelined loop",
				                deep->span.line);
		}
		if (!ploop) {
			const Stmt *deep = find_kind(s, S_TMA_LOAD);
			if (deep)
				return tac_fail(t, "the TMA load at line %d is neither at the top of role '%s''s program nor directly in a pipelined loop there",
				                deep->span.line, r->name);
			continue;
		}
		if (!ntma)
			continue;
		if (w->nloops == WS_MAX)
			return tac_fail(t, "role '%s' has too many pipelined loops", r->name);
		const char *bad = foreign_name(s->lo, NULL);
		if (!bad)
			bad = foreign_name(s->hi, NULL);
		if (!bad)
			bad = foreign_name(s->step, NULL);
		if (bad)
			return tac_fail(t, "the bounds of loop '%s' (line %d) use '%s', which a producer role would not have", s->name,
			                s->span.line, bad);
		Decl *pipe = tac_decl(k, D_PIPELINE, s->pipe);
		if (!pipe)
			return tac_fail(t, "loop '%s' is pipelined over unknown '%s'", s->name, s->pipe);
		if (!has_ptr((void *const *)w->pipes, w->npipes, pipe))
			w->pipes[w->npipes++] = pipe;
		/* the role must wait for its loads in the same body, and release the
		 * stage after its last read */
		bool waited = false;
		int last_read = -1, wait_at = -1;
		const Stmt *pending = NULL;   /* a wgmma reading the ring, not yet retired */
		for (int q = 0; q < s->nbody; q++) {
			Stmt *b = s->body[q];
			if (is_tma(b))
				continue;
			if (b->kind == S_WAIT && b->name) {
				Decl *bar = tac_decl(k, D_BARRIER, b->name);
				if (bar && bar->ring && strcmp(bar->ring, s->pipe) == 0 && has_ptr((void *const *)w->sigbars, w->nsig, bar) &&
				    !waited) {
					waited = true;
					wait_at = q;
				}
			}
			RingUse u = {s->pipe, false, false, NULL, NULL, NULL};
			ring_use(b, &u);
			if (u.write)
				return tac_fail(t, "role '%s' also writes ring buffers of '%s' (line %d); warp_specialize hands a producer only rings that TMA alone fills",
				                r->name, s->pipe, u.write->span.line);
			if (u.tstore)
				return tac_fail(t, "the TMA store at line %d reads a ring buffer of '%s'; warp_specialize cannot tell when it has finished reading the stage",
				                u.tstore->span.line, s->pipe);
			if (u.read)
				last_read = q;
			if (u.async)
				pending = u.async_at;
			if (b->kind == S_WGMMA_WAIT && b->count == 0 && pending) {
				pending = NULL;
				last_read = q;
			}
		}
		if (!waited)
			return tac_fail(t, "loop '%s' (line %d) TMA-loads ring '%s' but waits on none of the barriers its loads signal in the same body",
			                s->name, s->span.line, s->pipe);
		if (pending)
			return tac_fail(t, "the wgmma at line %d reads a ring buffer of '%s' and no later `wgmma_wait 0` in the loop body retires it, so the stage cannot be handed back",
			                pending->span.line, s->pipe);
		w->release[w->nloops] = last_read >= 0 ? last_read : wait_at;
		w->loops[w->nloops++] = s;
	}
	if (!w->nloops)
		return tac_fail(t, "role '%s' of kernel '%s' issues no TMA load directly in a pipelined loop, so there is no ring to hand to a producer",
		                r->name, k->name);
	/* a barrier the loads signal must not also count arrivals of the role */
	ArriveScan a = {w->sigbars, w->nsig, NULL, 0, NULL};
	tac_each_stmt(k, scan_arrives, &a);
	if (a.hit)
		return tac_fail(t, "barrier '%s' is signalled by TMA loads and also arrived on by role '%s' (line %d)", a.hit->name,
		                r->name, a.hit->span.line);
	/* one-shot buffers: filled once, and never again while the consumer reads */
	for (int i = 0; i < w->in->nbody; i++) {
		Stmt *s = w->in->body[i];
		if (!is_tma(s))
			continue;
		Decl *buf = sym_decl_of(s->dst);
		Decl *g = tac_grid(k);
		if (g && g->persistent)
			return tac_fail(t, "kernel '%s' has a persistent grid and fills '%s' once per tile (line %d): after the split nothing would keep the producer from overwriting it while the consumer still reads the previous tile",
			                k->name, buf->name, s->span.line);
		ArriveScan b = {NULL, 0, NULL, 0, buf};
		tac_each_stmt(k, scan_arrives, &b);
		if (b.tmas != 1)
			return tac_fail(t, "shared buffer '%s' is filled by %d TMA loads; a producer would overwrite it before the consumer read it",
			                buf->name, b.tmas);
	}
	return true;
}

/* ---- the hooks ---- */

/* Decode warp_specialize's arguments (Tactic.parse). */
bool warp_specialize_parse(TacCtx *t)
{
	return true;
}

/* warp_specialize's precondition (Tactic.pre). */
bool warp_specialize_pre(TacCtx *t)
{
	Ws w;
	return ws_scan(t, &w);
}

static int decl_index(const Kernel *k, const Decl *d)
{
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i] == d)
			return i;
	return k->ndecls;
}

/* warp_specialize's rewrite of the AST (Tactic.apply). */
bool warp_specialize_apply(TacCtx *t)
{
	Kernel *k = t->k;
	Ws w;
	if (!ws_scan(t, &w))
		return false;
	Decl *r = w.role;
	/* the producer role, before the consumer */
	const char *lname = tac_fresh_name(t, "load", NULL);
	Decl *load = arena_alloc(&t->c->arena, sizeof *load);
	load->kind = D_ROLE;
	load->span = load->name_span = NOSPAN;
	load->name = lname;
	load->warp_lo = 0;
	load->warp_hi = 3;
	load->regs = 40;
	tac_insert_decl(t, load, decl_index(k, r));
	r->warp_lo += 4;
	r->warp_hi += 4;
	/* TMA-signalled barriers are now produced by the producer */
	for (int i = 0; i < w.nsig; i++) {
		w.sigbars[i]->producers = tac_name_list(t, lname);
		w.sigbars[i]->nproducers = 1;
	}
	/* one empty barrier per pipeline, after the last barrier of its ring */
	const char *empty[WS_MAX];
	for (int p = 0; p < w.npipes; p++) {
		const char *base = p == 0 ? "empty" : arena_printf(&t->c->arena, "%s_empty", w.pipes[p]->name);
		empty[p] = tac_fresh_name(t, base, NULL);
		for (int q = 0; q < p; q++)
			if (strcmp(empty[q], empty[p]) == 0)
				empty[p] = tac_fresh_name(t, arena_printf(&t->c->arena, "%s%d", base, p + 1), NULL);
		Decl *e = arena_alloc(&t->c->arena, sizeof *e);
		e->kind = D_BARRIER;
		e->span = e->name_span = e->ring_span = NOSPAN;
		e->name = empty[p];
		e->ring = w.pipes[p]->name;
		e->producers = tac_name_list(t, r->name);
		e->nproducers = 1;
		e->consumers = tac_name_list(t, lname);
		e->nconsumers = 1;
		e->arrivals = tac_role_wgs(r);
		int at = -1;
		for (int i = 0; i < k->ndecls; i++) {
			Decl *d = k->decls[i];
			if (d->kind == D_BARRIER && d->ring && strcmp(d->ring, w.pipes[p]->name) == 0)
				at = i + 1;
		}
		if (at < 0)
			at = k->ndecls;
		tac_insert_decl(t, e, at);
	}
	/* the producer's program: the role's loads in program order */
	Stmt **prod = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)w.in->nbody);
	Stmt **cons = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)w.in->nbody);
	int np = 0, nc = 0;
	for (int i = 0; i < w.in->nbody; i++) {
		Stmt *s = w.in->body[i];
		if (is_tma(s)) {
			prod[np++] = s;
			continue;
		}
		cons[nc++] = s;
		int li = -1;
		for (int q = 0; q < w.nloops; q++)
			if (w.loops[q] == s)
				li = q;
		if (li < 0)
			continue;
		int pi = 0;
		while (strcmp(w.pipes[pi]->name, s->pipe) != 0)
			pi++;
		Stmt *f = tac_new_stmt(t, S_FOR, s->name);
		f->pipe = s->pipe;
		f->lo = s->lo;
		f->hi = s->hi;
		f->step = s->step;
		f->unroll = s->unroll;
		f->body = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)(s->nbody + 1));
		f->body[f->nbody++] = tac_new_stmt(t, S_WAIT, empty[pi]);
		Stmt **rest = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)(s->nbody + 1));
		int nr = 0;
		for (int q = 0; q < s->nbody; q++) {
			Stmt *b = s->body[q];
			if (is_tma(b))
				f->body[f->nbody++] = b;
			else
				rest[nr++] = b;
			if (q == w.release[li])
				rest[nr++] = tac_new_stmt(t, S_ARRIVE, empty[pi]);
		}
		s->body = rest;
		s->nbody = nr;
		prod[np++] = f;
	}
	w.in->body = cons;
	w.in->nbody = nc;
	Stmt *pin = tac_new_stmt(t, S_IN, lname);
	pin->body = prod;
	pin->nbody = np;
	Stmt **top = arena_alloc(&t->c->arena, sizeof(Stmt *) * (size_t)(k->nbody + 1));
	int nt = 0;
	for (int i = 0; i < k->nbody; i++) {
		if (k->body[i] == w.in)
			top[nt++] = pin;
		top[nt++] = k->body[i];
	}
	k->body = top;
	k->nbody = nt;
	/* the consumer's budget: what the launch pool leaves beside the producer */
	int fit = tac_regs_fit(k, r);
	long long need = tac_frag_words(k, r);
	int want = fit > 240 ? 240 : fit;
	if (want < need + TAC_REG_HEADROOM || want < 24)
		return tac_fail(t, "the fragments of role '%s' need %lld registers per thread (plus %d for addresses and counters), but beside a 40-register producer the CTA's launch pool leaves it %d",
		                r->name, need, TAC_REG_HEADROOM, fit);
	r->regs = want;
	return true;
}

/* Push warp_specialize's proposal arguments for this kernel (Tactic.propose):
 * none, and only for a kernel of one role. */
void warp_specialize_propose(TacCtx *t)
{
	int n = 0;
	for (int i = 0; i < t->k->ndecls; i++)
		n += t->k->decls[i]->kind == D_ROLE;
	if (n == 1)
		tac_propose(t, "%s", "");
}
