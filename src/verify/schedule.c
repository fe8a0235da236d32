/*
 * schedule.c — schedule semantics (CK-SCHED-*).
 *
 * Mistakes that are not races or contract violations but make a schedule
 * compute the wrong thing or waste resources:
 *
 *   001  `wgmma acc += ...` before the role initialised acc (error);
 *   002  declared smem/barrier/fragment/pipeline never used (warning);
 *   003  a pipeline deeper than the smallest trip count of its loop (warning);
 *   004  role declared without an `in` block (warning);
 *   005  `in` block with no statement (warning);
 *   006  loop with zero iterations at the smallest domain point (note);
 *   007  `wgmma acc = ...` inside a multi-iteration loop whose result is
 *        not read before the next iteration overwrites it (warning).
 *
 * Initialisation is tracked in program order per role (loop bodies once,
 * both branches of an if); "used" means named by any statement.
 */
#include "verify_int.h"

static bool expr_names(const Expr *e, const char *name)
{
	return e && sched_mentions(e, name);
}

static bool stmt_mentions(const Stmt *s, const char *name)
{
	if ((s->name && strcmp(s->name, name) == 0) || (s->pipe && strcmp(s->pipe, name) == 0))
		return true;
	if (expr_names(s->dst, name) || expr_names(s->src, name) || expr_names(s->cond, name) ||
	    expr_names(s->lo, name) || expr_names(s->hi, name) || expr_names(s->step, name))
		return true;
	for (int i = 0; i < s->nlhs; i++)
		if (expr_names(s->lhs[i], name))
			return true;
	return false;
}

static bool used(const Sched *v, const char *name)
{
	for (int i = 0; i < v->nst; i++)
		if (stmt_mentions(v->st[i].s, name))
			return true;
	return false;
}

static void unused(Sched *v, Decl *d, const char *what, const char *hint)
{
	Diag *dg = v_report(v, "CK-SCHED-002", d->name_span.file >= 0 ? d->name_span : d->span, -1,
	                    d->name, -1, -1, "%s '%s' is declared but never used", what, d->name);
	diag_set(&dg->condition, "some statement uses %s", d->name);
	diag_set(&dg->hint, "%s", hint);
}

static void check_unused(Sched *v)
{
	for (int m = 0; m < v->nsmems; m++)
		if (!used(v, v->smems[m].name))
			unused(v, v->smems[m].d, "shared buffer", "remove it: it costs shared memory");
	for (int b = 0; b < v->nbars; b++)
		if (!used(v, v->bars[b].name))
			unused(v, v->bars[b].d, "barrier", "remove it, or add the wait/arrive it was meant for");
	for (int f = 0; f < v->nfrags; f++)
		if (!used(v, v->frags[f].name))
			unused(v, v->frags[f].d, "fragment", "remove it: it costs registers");
	for (int p = 0; p < v->npipes; p++) {
		bool any = false;
		for (int i = 0; i < v->nst && !any; i++)
			if (v->st[i].s->kind == S_FOR && v->st[i].s->pipe &&
			    strcmp(v->st[i].s->pipe, v->pipes[p].name) == 0)
				any = true;
		if (!any)
			unused(v, v->pipes[p].d, "pipeline",
			       "pipeline a loop with `pipelined NAME`, or remove the pipeline");
	}
}

static void check_roles(Sched *v)
{
	for (int r = 0; r < v->nroles; r++) {
		SchedRole *R = &v->roles[r];
		if (!R->prog) {
			Diag *d = v_report(v, "CK-SCHED-004", R->d->span, r, NULL, -1, -1,
			                   "role '%s' has no `in %s { ... }` block; its %d warps idle",
			                   R->name, R->name, R->warps);
			diag_set(&d->condition, "role %s has a program", R->name);
			diag_set(&d->hint, "add `in %s { ... }` or remove the role", R->name);
		} else if (R->prog->nbody == 0) {
			Diag *d = v_report(v, "CK-SCHED-005", R->prog->span, r, NULL, -1, -1,
			                   "the program of role '%s' is empty", R->name);
			diag_set(&d->condition, "role %s executes at least one statement", R->name);
			diag_set(&d->hint, "give the role work or remove it");
			diag_related(d, R->d->span, "role '%s' declared here", R->name);
		}
	}
}

/* ---- initialisation ---- */

static void init_body(Sched *v, int r, bool *init, Stmt **body, int n, int depth, const Stmt *lp);

/* a fragment read by expression x before the role initialised it */
static void uninit_reads(Sched *v, int r, bool *init, Stmt *s, const Expr *x)
{
	const char *ids[64];
	int n = sched_idents(x, ids, 64);
	for (int i = 0; i < n; i++) {
		int f = sched_frag(v, ids[i]);
		if (f < 0 || init[f] || v->frags[f].role != r)
			continue;
		init[f] = true; /* report once */
		Diag *d = v_report(v, "CK-SCHED-001", s->span, r, v->frags[f].name, -1, -1,
		                   "'%s' is read before role '%s' initialises it", v->frags[f].name,
		                   v->roles[r].name);
		diag_set(&d->condition, "%s initialised before its first read", v->frags[f].name);
		diag_set(&d->hint, "initialise it (e.g. `%s = 0`) before this statement", v->frags[f].name);
		diag_related(d, v->frags[f].d->span, "'%s' declared here", v->frags[f].name);
	}
}

/* Mark in w every fragment a statement of body (nested included) initialises:
 * assigned, loaded, or the target of a wgmma/mma without `+=`. */
static void written_frags(Sched *v, Stmt **body, int n, bool *w, int depth)
{
	for (int i = 0; i < n && depth <= 64; i++) {
		Stmt *s = body[i];
		int f = -1;
		if (!s)
			continue;
		if (s->kind == S_LOAD || ((s->kind == S_WGMMA || s->kind == S_MMA) && !s->accumulate))
			f = sched_frag(v, sched_refname(s->dst));
		for (int k = 0; s->kind == S_ASSIGN && k < s->nlhs; k++)
			if ((f = sched_frag(v, sched_refname(s->lhs[k]))) >= 0)
				w[f] = true;
		if (f >= 0)
			w[f] = true;
		written_frags(v, s->body, s->nbody, w, depth + 1);
		written_frags(v, s->els, s->nels, w, depth + 1);
	}
}

/* Is cond false on the first iteration of loop `lp` (which starts at the constant
 * lp->lo)? `j > c`, `c < j`, `j >= c + 1`, `j != c` with j the loop variable. */
static bool skips_first_iteration(const Stmt *lp, const Expr *cond)
{
	if (!lp || !lp->name || !lp->lo || lp->lo->kind != E_INT || !cond || cond->kind != E_BINARY)
		return false;
	long long c = lp->lo->ival;
	const Expr *a = cond->lhs, *b = cond->rhs;
	bool jl = a && a->kind == E_IDENT && a->name && !strcmp(a->name, lp->name) && b && b->kind == E_INT;
	bool jr = b && b->kind == E_IDENT && b->name && !strcmp(b->name, lp->name) && a && a->kind == E_INT;
	if (jl)
		return (cond->op == '>' && b->ival >= c) || (cond->op == OP_GE && b->ival > c) || (cond->op == OP_NE && b->ival == c);
	if (jr)
		return (cond->op == '<' && a->ival >= c) || (cond->op == OP_LE && a->ival > c) || (cond->op == OP_NE && a->ival == c);
	return false;
}

/* lp: the innermost loop around s (for values carried from an earlier iteration). */
static void init_stmt(Sched *v, int r, bool *init, Stmt *s, int depth, const Stmt *lp)
{
	int f;
	switch (s->kind) {
	case S_FOR:
		init_body(v, r, init, s->body, s->nbody, depth + 1, s);
		return;
	case S_IF:
		if (lp && skips_first_iteration(lp, s->cond)) {
			/* not on the first iteration: whatever the loop body writes was written by an
			 * earlier iteration (`if j > 0 { use t }` ... `t = ...`) */
			bool *w = arena_alloc(v->a, sizeof(bool) * (size_t)(v->nfrags + 1));
			bool *tmp = arena_alloc(v->a, sizeof(bool) * (size_t)(v->nfrags + 1));
			written_frags(v, lp->body, lp->nbody, w, depth);
			for (int k = 0; k < v->nfrags; k++)
				tmp[k] = init[k] || w[k];
			init_body(v, r, tmp, s->body, s->nbody, depth + 1, lp);
			for (int k = 0; k < v->nfrags; k++)
				init[k] = init[k] || (tmp[k] && !w[k]);   /* carried values stay the loop's business */
			init_body(v, r, init, s->els, s->nels, depth + 1, lp);
			return;
		}
		init_body(v, r, init, s->body, s->nbody, depth + 1, lp);
		init_body(v, r, init, s->els, s->nels, depth + 1, lp);
		return;
	case S_WGMMA:
	case S_MMA:
		f = sched_frag(v, sched_refname(s->dst));
		if (f < 0)
			return;
		if (!s->accumulate) {
			init[f] = true;
		} else if (!init[f]) {
			init[f] = true; /* report once */
			Diag *d = v_report(v, "CK-SCHED-001", s->span, r, v->frags[f].name, -1, -1,
			                   "'%s' accumulates into '%s' before role '%s' initialises it",
			                   s->kind == S_WGMMA ? "wgmma" : "mma", v->frags[f].name,
			                   v->roles[r].name);
			diag_set(&d->condition, "%s initialised before the first %s +=", v->frags[f].name,
			         s->kind == S_WGMMA ? "wgmma" : "mma");
			diag_set(&d->hint, "add `%s = 0` before the loop", v->frags[f].name);
			diag_related(d, v->frags[f].d->span, "'%s' declared here", v->frags[f].name);
		}
		return;
	case S_ASSIGN:
		uninit_reads(v, r, init, s, s->src);
		for (int i = 0; i < s->nlhs; i++) {
			f = sched_frag(v, sched_refname(s->lhs[i]));
			if (f >= 0)
				init[f] = true;
		}
		return;
	case S_LOAD:
		f = sched_frag(v, sched_refname(s->dst));
		if (f >= 0)
			init[f] = true;
		return;
	case S_STORE:
	case S_ATOMIC:
	case S_LET:
		uninit_reads(v, r, init, s, s->src);
		return;
	default:
		return;
	}
}

static void init_body(Sched *v, int r, bool *init, Stmt **body, int n, int depth, const Stmt *lp)
{
	if (depth > 64)
		return;
	for (int i = 0; i < n; i++)
		if (body[i])
			init_stmt(v, r, init, body[i], depth, lp);
}

static void check_init(Sched *v)
{
	for (int r = 0; r < v->nroles; r++) {
		if (!v->roles[r].prog)
			continue;
		bool *init = arena_alloc(v->a, sizeof(bool) * (size_t)(v->nfrags + 1));
		init_body(v, r, init, v->roles[r].prog->body, v->roles[r].prog->nbody, 0, NULL);
	}
}

/* ---- trip counts ---- */


static void check_trips(Sched *v)
{
	bool *warned = arena_alloc(v->a, sizeof(bool) * (size_t)(v->npipes + 1));
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		if (e->s->kind != S_FOR)
			continue;
		SchedEnv env;
		sched_loop_env(v, &env, 0, i);
		long long trip;
		if (!sched_trip(v, &env, e->s, &trip))
			continue;
		const char *at = v->ndims ? " at the smallest domain point" : "";
		if (trip == 0) {
			Diag *d = v_report(v, "CK-SCHED-006", e->s->span, e->role, NULL, -1, -1,
			                   "loop over %s runs 0 iterations%s", e->s->name ? e->s->name : "?", at);
			diag_set(&d->condition, "trips(%s .. %s) (0) > 0", sched_exprstr(v, e->s->lo),
			         sched_exprstr(v, e->s->hi));
			diag_set(&d->hint, "check the bounds, or tighten the domain so the loop runs");
		}
		int p = e->s->pipe ? sched_pipe(v, e->s->pipe) : -1;
		/* On a persistent grid a role's top-level loop carries its ring from tile to tile
		 * (§7.6): a one-step loop over a 2-stage ring loads the next tile's operand while the
		 * current one is in use, so more stages than trips per tile is the point, not waste. */
		bool carried = v->persistent && e->loop_idx < 0;
		if (p >= 0 && v->pipes[p].stages > trip && !warned[p] && !carried) {
			warned[p] = true;
			Diag *d = v_report(v, "CK-SCHED-003", e->s->span, e->role, NULL, -1, p,
			                   "pipeline '%s' has %d stages but its loop runs only %lld iteration%s%s",
			                   v->pipes[p].name, v->pipes[p].stages, trip, trip == 1 ? "" : "s", at);
			diag_set(&d->condition, "stages (%d) <= trips(%s .. %s) (%lld)", v->pipes[p].stages,
			         sched_exprstr(v, e->s->lo), sched_exprstr(v, e->s->hi), trip);
			diag_set(&d->hint, "use at most %lld stages or a larger minimum in the domain",
			         trip > 0 ? trip : 1);
			diag_related(d, v->pipes[p].d->span, "pipeline '%s' declared here", v->pipes[p].name);
		}
	}
}

/* ---- non-accumulating matmul in a loop ---- */

static bool reads_frag(const Sched *v, const Stmt *s, const char *name)
{
	switch (s->kind) {
	case S_ASSIGN:
	case S_STORE:
	case S_ATOMIC:
	case S_LET:
		return sched_mentions(s->src, name);
	case S_IF:
		return sched_mentions(s->cond, name);
	case S_WGMMA:
	case S_MMA: {
		const Expr *a, *b;
		if (!sched_matmul_ops(s, &a, &b))
			return false;
		const char *na = sched_refname(a), *nb = sched_refname(b);
		return (na && !strcmp(na, name)) || (nb && !strcmp(nb, name));
	}
	default:
		return false;
	}
}

static void check_overwrite(Sched *v)
{
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		Stmt *s = e->s;
		if ((s->kind != S_WGMMA && s->kind != S_MMA) || s->accumulate || e->loop_idx < 0)
			continue;
		const char *acc = sched_refname(s->dst);
		if (!acc || sched_frag(v, acc) < 0)
			continue;
		/* could the loop run more than once? */
		bool multi = false, known = false;
		int ns = sched_nsamples(v);
		for (int q = 0; q < ns && !multi; q++) {
			SchedEnv env;
			sched_loop_env(v, &env, q, e->loop_idx);
			long long t;
			if (sched_trip(v, &env, e->loop, &t)) {
				known = true;
				if (t > 1)
					multi = true;
			}
		}
		if (!multi && known)
			continue;
		bool read = false;
		for (int j = e->loop_idx + 1; j < v->st[e->loop_idx].end && !read; j++)
			if (j != i && reads_frag(v, v->st[j].s, acc))
				read = true;
		if (read)
			continue;
		Diag *d = v_report(v, "CK-SCHED-007", s->span, e->role, acc, -1, -1,
		                   "`%s %s = ...` overwrites '%s' on every iteration of the loop over %s, "
		                   "discarding the previous partial result", s->kind == S_WGMMA ? "wgmma" : "mma",
		                   acc, acc, e->loop->name ? e->loop->name : "?");
		diag_set(&d->condition, "%s read between successive overwrites", acc);
		diag_set(&d->hint, "initialise `%s = 0` before the loop and accumulate with `+=`", acc);
		diag_related(d, e->loop->span, "the loop");
	}
}

void verify_schedule(Sched *v)
{
	check_unused(v);
	check_roles(v);
	check_init(v);
	check_trips(v);
	check_overwrite(v);
}
