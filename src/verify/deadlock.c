/*
 * deadlock.c — the deadlock model checker (CK-DEAD-*).
 *
 * Model. Each role is a program counter over its flattened trace: the role
 * program with every loop unrolled at a concrete trip count and every `if`
 * resolved, keeping only barrier events:
 *
 *   WAIT b[s] need n   blocks until barrier b, stage s, has completed at
 *                      least n phases;
 *   ARRIVE b[s] k      adds k arrivals (k = warpgroups of the role, or 1
 *                      under 4 warps; a TMA load that signals b adds one per
 *                      issuing role per loop iteration and delivers its
 *                      bytes at once). When the arrivals reach the declared
 *                      count the phase completes.
 *
 * Inside a loop pipelined on P a ring barrier means stage c % S, where c
 * counts the role's pipelined iterations of P so far (continuing across
 * enclosing loops) and S is P's stage count; the wait of round c / S needs
 * c / S + 1 completions. The data producer's first pass over an empty ring
 * is free, with the lowering's convention: a ring barrier waited by a role
 * that writes buffers of the same ring needs only c / S completions (the
 * "empty" barrier starts free). Non-ring barriers count waits per role and
 * never start free.
 *
 * Barrier state only grows (completions never decrease), so running every
 * role as far as it can, repeatedly, reaches the one final state of this
 * model whatever the interleaving: if some role is then still blocked the
 * program deadlocks. The blocked roles are turned into a story by
 * following "waits on b, whose producer is blocked on b2, ..." until a role
 * repeats (CK-DEAD-001, a cycle) or a producer has finished (CK-DEAD-003).
 * A role reaching a wait whose barrier has already completed more phases
 * than it needs would see the wrong parity bit (CK-DEAD-004).
 *
 * A persistent grid runs each role program twice (two tiles, block
 * coordinates 0 then 1), the ring counters carrying over.
 *
 * Trip counts. The checker runs at the domain samples of sched/model.c: the
 * smallest point, the next one, and the first one at which every pipelined
 * loop runs at least stages + 2 iterations (so every stage wraps around).
 * Loops with constant bounds run as written. When a bound or condition
 * cannot be evaluated, or the trace exceeds the step cap, it says so with a
 * CK-DEAD-002 note instead of passing silently.
 */
#include <string.h>

#include "verify_int.h"

#include <stdlib.h>

#define MAX_EVENTS 200000   /* per scenario, all roles together */
#define MAX_STEPS 500000    /* statements visited per scenario, all roles together */
#define MAX_LEV 3

enum { EV_WAIT, EV_ARRIVE };

typedef struct Ev {
	unsigned char kind;
	int bar, stage;
	int need;               /* EV_WAIT */
	int count;              /* EV_ARRIVE */
	int sidx;               /* statement index */
	int nlev;
	const char *ivar[MAX_LEV];
	long long ival[MAX_LEV];
} Ev;

typedef struct Trace {
	Ev *ev;
	int n, cap;
} Trace;

typedef struct Gen {
	Sched *v;
	int role;
	SchedEnv env;
	Trace *tr;
	int *total;
	long *steps;
	long long *pcount;      /* per pipeline: iterations so far */
	int *waits;             /* per barrier: non-ring waits so far */
	long long *sig_inst;    /* per barrier: loop instance of the last TMA arrive */
	long long inst;         /* current innermost loop-iteration instance */
	long long inst_next;
	int nlev;
	const char *ivar[MAX_LEV + 8];
	long long ival[MAX_LEV + 8];
	bool *free_start;       /* per barrier for this role */
	bool fail;
	char why[256];
	const char *why_hint;
	Span why_span;
} Gen;

static void gen_fail(Gen *g, Span sp, const char *fmt, const char *a, const char *b)
{
	if (g->fail)
		return;
	g->fail = true;
	g->why_span = sp;
	snprintf(g->why, sizeof g->why, fmt, a ? a : "?", b ? b : "?");
}

static void push(Gen *g, Ev e)
{
	if (*g->total >= MAX_EVENTS) {
		if (!g->fail) {
			g->fail = true;
			g->why_span = NOSPAN;
			snprintf(g->why, sizeof g->why, "the trace exceeds the step cap of %d events",
			         MAX_EVENTS);
			g->why_hint = "the model checker unrolls every loop; this point has too many "
			              "barrier operations to check";
		}
		return;
	}
	Trace *t = g->tr;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->ev = xrealloc(t->ev, sizeof(Ev) * (size_t)t->cap);
	}
	int lo = g->nlev > MAX_LEV ? g->nlev - MAX_LEV : 0;
	e.nlev = g->nlev - lo;
	for (int i = 0; i < e.nlev; i++) {
		e.ivar[i] = g->ivar[lo + i];
		e.ival[i] = g->ival[lo + i];
	}
	t->ev[t->n++] = e;
	(*g->total)++;
}

static int stage_of(Gen *g, int b, int *round)
{
	Sched *v = g->v;
	int p = v->bars[b].pipe;
	if (p < 0) {
		*round = -1;
		return 0;
	}
	int S = v->pipes[p].stages > 0 ? v->pipes[p].stages : 1;
	long long c = g->pcount[p];
	*round = (int)(c / S);
	return (int)(c % S);
}

static void gen_body(Gen *g, Stmt **body, int n, int depth);

static void gen_stmt(Gen *g, Stmt *s, int depth)
{
	Sched *v = g->v;
	if (g->fail)
		return;
	if (++*g->steps > MAX_STEPS) {
		g->fail = true;
		g->why_span = s->span;
		snprintf(g->why, sizeof g->why, "the role programs exceed the step cap of %d statements",
		         MAX_STEPS);
		g->why_hint = "the model checker unrolls every loop; loops of millions of iterations "
		              "are not checked at this domain point";
		return;
	}
	int idx = sched_stmt_index(v, s);
	switch (s->kind) {
	case S_FOR: {
		long long trip;
		if (!sched_trip(v, &g->env, s, &trip)) {
			gen_fail(g, s->span, "the trip count of the loop over %s (%s) cannot be evaluated",
			         s->name, sched_exprstr(v, s->hi));
			return;
		}
		long long lo = 0, step = 1;
		sched_eval(v, &g->env, s->lo, &lo);
		if (s->step)
			sched_eval(v, &g->env, s->step, &step);
		int p = s->pipe ? sched_pipe(v, s->pipe) : -1;
		long long saved_inst = g->inst;
		int saved_env = g->env.n;
		if (g->nlev < MAX_LEV + 8) {
			g->ivar[g->nlev] = s->name ? s->name : "?";
			g->nlev++;
		}
		for (long long it = 0; it < trip && !g->fail; it++) {
			g->env.n = saved_env;
			if (s->name)
				sched_env_set(&g->env, s->name, lo + it * step);
			if (g->nlev - 1 < MAX_LEV + 8)
				g->ival[g->nlev - 1] = lo + it * step;
			g->inst = ++g->inst_next;
			gen_body(g, s->body, s->nbody, depth + 1);
			if (p >= 0)
				g->pcount[p]++;
		}
		g->nlev--;
		g->env.n = saved_env;
		g->inst = saved_inst;
		return;
	}
	case S_IF: {
		long long c;
		if (!sched_eval(v, &g->env, s->cond, &c)) {
			gen_fail(g, s->span, "the condition `%s` cannot be evaluated%s", sched_exprstr(v, s->cond),
			         "");
			return;
		}
		if (c)
			gen_body(g, s->body, s->nbody, depth + 1);
		else
			gen_body(g, s->els, s->nels, depth + 1);
		return;
	}
	case S_LET: {
		long long x;
		if (s->name && sched_eval(v, &g->env, s->src, &x))
			sched_env_set(&g->env, s->name, x);
		return;
	}
	case S_WAIT: {
		int b = sched_bar(v, s->name);
		if (b < 0)
			return;
		int round;
		int st = stage_of(g, b, &round);
		int need;
		if (round < 0) {
			need = ++g->waits[b];
			if (g->free_start[b])
				need--;
		} else {
			need = g->free_start[b] ? round : round + 1;
		}
		push(g, (Ev){.kind = EV_WAIT, .bar = b, .stage = st, .need = need, .sidx = idx});
		return;
	}
	case S_ARRIVE: {
		int b = sched_bar(v, s->name);
		if (b < 0)
			return;
		int round;
		int st = stage_of(g, b, &round);
		push(g, (Ev){.kind = EV_ARRIVE, .bar = b, .stage = st,
		             .count = v->roles[g->role].arrive_weight, .sidx = idx});
		return;
	}
	case S_TMA_LOAD: {
		int b = sched_bar(v, s->name);
		if (b < 0 || g->sig_inst[b] == g->inst)
			return;
		g->sig_inst[b] = g->inst;
		int round;
		int st = stage_of(g, b, &round);
		push(g, (Ev){.kind = EV_ARRIVE, .bar = b, .stage = st, .count = 1, .sidx = idx});
		return;
	}
	default:
		return;
	}
}

static void gen_body(Gen *g, Stmt **body, int n, int depth)
{
	if (depth > 64)
		return;
	for (int i = 0; i < n && !g->fail; i++)
		if (body[i])
			gen_stmt(g, body[i], depth);
}

/* ---- simulation ---- */

typedef struct Sim {
	Sched *v;
	Trace *tr;              /* per role */
	int *pc;
	int maxst;
	long long *comp, *arr;  /* [bar * maxst + stage] */
} Sim;

static const char *iter_str(Sched *v, const Ev *e)
{
	if (e->nlev == 0)
		return NULL;
	StrBuf b = {0};
	for (int i = 0; i < e->nlev; i++)
		sb_printf(&b, "%s%s=%lld", i ? ", " : "", e->ivar[i], e->ival[i]);
	char *r = arena_strdup(v->a, sb_str(&b));
	sb_free(&b);
	return r;
}

static void bar_label(StrBuf *b, Sched *v, int bar, int stage)
{
	if (v->bars[bar].pipe >= 0)
		sb_printf(b, "%s[%d]", v->bars[bar].name, stage);
	else
		sb_printf(b, "%s", v->bars[bar].name);
}

/* roles that have arrive events on b (in this scenario's traces) */
static int producers_of(Sim *S, int bar, int *out, int max)
{
	Sched *v = S->v;
	int n = 0;
	for (int r = 0; r < v->nroles; r++) {
		Trace *t = &S->tr[r];
		for (int i = 0; i < t->n; i++)
			if (t->ev[i].kind == EV_ARRIVE && t->ev[i].bar == bar) {
				if (n < max)
					out[n++] = r;
				break;
			}
	}
	return n;
}

/* does role r still have an arrival on bar[stage] at or after its pc? */
static bool future_arrive(Sim *S, int r, int bar, int stage)
{
	Trace *t = &S->tr[r];
	for (int i = S->pc[r]; i < t->n; i++)
		if (t->ev[i].kind == EV_ARRIVE && t->ev[i].bar == bar && t->ev[i].stage == stage)
			return true;
	return false;
}

/* env of a domain point: dim d at its idx[d]-th sampled value, grid vars 0 */
static void point_env(const Sched *v, SchedEnv *env, const int *idx)
{
	env->n = 0;
	for (int d = 0; d < v->ndims; d++) {
		int n = v->ndimvals[d];
		if (n > 0)
			sched_env_set(env, v->dims[d], v->dimvals[d][idx[d] < n ? idx[d] : n - 1]);
	}
	for (int g = 0; g < v->ngridvars; g++)
		sched_env_set(env, v->gridvars[g], 0);
}

static const char *scenario_str(Sched *v, const int *idx)
{
	if (v->ndims == 0)
		return "at the constant trip counts";
	StrBuf b = {0};
	sb_puts(&b, "at ");
	for (int d = 0; d < v->ndims; d++) {
		if (v->ndimvals[d] <= 0)
			continue;
		int n = v->ndimvals[d];
		sb_printf(&b, "%s%s=%lld", d ? ", " : "", v->dims[d],
		          v->dimvals[d][idx[d] < n ? idx[d] : n - 1]);
	}
	char *r = arena_strdup(v->a, sb_str(&b));
	sb_free(&b);
	return r;
}

static void report_deadlock(Sim *S, const int *idx)
{
	Sched *v = S->v;
	int start = -1;
	for (int r = 0; r < v->nroles; r++)
		if (S->pc[r] < S->tr[r].n) {
			start = r;
			break;
		}
	if (start < 0)
		return;
	int chain[64] = {0}, n = 0;
	bool seen[64] = {0};
	int r = start;
	bool cycle = false;
	int starve_bar = -1;
	StrBuf story = {0};
	while (n < 64 && r >= 0 && r < 64) {
		if (seen[r]) {
			cycle = true;
			break;
		}
		seen[r] = true;
		chain[n++] = r;
		Ev *e = &S->tr[r].ev[S->pc[r]];
		int prods[64];
		int np = producers_of(S, e->bar, prods, 64);
		/* choose a blocked producer other than r that would still arrive on this
		 * barrier stage later in its trace (prefer one already in the chain); a
		 * producer with no such arrival left cannot unblock r at all */
		int next = -1;
		for (int q = 0; q < np; q++)
			if (prods[q] != r && future_arrive(S, prods[q], e->bar, e->stage) && seen[prods[q]])
				next = prods[q];
		for (int q = 0; q < np && next < 0; q++)
			if (prods[q] != r && future_arrive(S, prods[q], e->bar, e->stage))
				next = prods[q];
		if (next < 0) {
			starve_bar = e->bar;
			break;
		}
		r = next;
	}
	/* Trim to what matters: for a cycle, only the roles on the cycle, rotated
	 * so that it starts at a role waiting for data (a TMA-signalled barrier)
	 * when there is one; for starvation, only the starved role. */
	if (cycle) {
		int c = 0;
		while (c < n && chain[c] != r)
			c++;
		int len = n - c, rot = 0;
		for (int i = 0; i < len; i++) {
			Ev *e = &S->tr[chain[c + i]].ev[S->pc[chain[c + i]]];
			bool tma = false;
			for (int j = 0; j < v->nst && !tma; j++)
				if (v->st[j].s->kind == S_TMA_LOAD && sched_bar(v, v->st[j].s->name) == e->bar)
					tma = true;
			if (tma) {
				rot = i;
				break;
			}
		}
		int tmp[64] = {0};
		for (int i = 0; i < len; i++)
			tmp[i] = chain[c + (rot + i) % len];
		for (int i = 0; i < len; i++)
			chain[i] = tmp[i];
		n = len;
	} else if (n > 1) {
		chain[0] = chain[n - 1];
		n = 1;
	}
	start = chain[0];
	/* build the story */
	for (int i = 0; i < n; i++) {
		int ri = chain[i];
		Ev *e = &S->tr[ri].ev[S->pc[ri]];
		const char *it = iter_str(v, e);
		int phase = e->need > 0 ? (e->need - 1) & 1 : 0;
		if (i == 0) {
			sb_printf(&story, "role %s waits on ", v->roles[ri].name);
		} else {
			int prods[64];
			int np = producers_of(S, S->tr[chain[i - 1]].ev[S->pc[chain[i - 1]]].bar, prods, 64);
			sb_printf(&story, "; its %sproducer, role %s, is blocked on ", np == 1 ? "only " : "",
			          v->roles[ri].name);
		}
		bar_label(&story, v, e->bar, e->stage);
		sb_printf(&story, " phase %d", phase);
		if (it)
			sb_printf(&story, " at %s", it);
	}
	Ev *e0 = &S->tr[start].ev[S->pc[start]];
	Ev *el = &S->tr[chain[n - 1]].ev[S->pc[chain[n - 1]]];
	if (cycle) {
		int prods[64];
		int np = producers_of(S, el->bar, prods, 64);
		if (np == 1)
			sb_printf(&story, ", which only %s arrives on", v->roles[prods[0]].name);
		else {
			sb_puts(&story, ", which ");
			for (int q = 0; q < np; q++)
				sb_printf(&story, "%s%s", q ? " and " : "", v->roles[prods[q]].name);
			sb_puts(&story, " arrive on");
		}
	} else {
		int prods[64];
		int np = producers_of(S, starve_bar, prods, 64);
		long long arr = S->arr[starve_bar * S->maxst + el->stage];
		bool any_alive = false;
		for (int q = 0; q < np; q++)
			if (S->pc[prods[q]] < S->tr[prods[q]].n)
				any_alive = true;
		if (np == 0)
			sb_puts(&story, ", but no role arrives on it in this run");
		else
			sb_printf(&story, ", but %s %s no arrival on it left: the phase got %lld of %d arrivals",
			          np == 1 ? v->roles[prods[0]].name : "its producers",
			          any_alive ? (np == 1 ? "has" : "have") : (np == 1 ? "has finished with" :
			          "have finished with"), arr, v->bars[starve_bar].d->arrivals);
	}
	const char *scn = scenario_str(v, idx);
	Stmt *ws = v->st[e0->sidx].s;
	Diag *d = v_report(v, cycle ? "CK-DEAD-001" : "CK-DEAD-003", ws->span, start, NULL, e0->bar,
	                   -1, "deadlock %s: %s", scn, sb_str(&story));
	d->stage = v->bars[e0->bar].pipe >= 0 ? e0->stage : -1;
	d->phase = e0->need > 0 ? (e0->need - 1) & 1 : 0;
	const char *it0 = iter_str(v, e0);
	if (it0)
		diag_set(&d->iter, "%s", it0);
	long long c0 = S->comp[e0->bar * S->maxst + e0->stage];
	StrBuf lb = {0};
	bar_label(&lb, v, e0->bar, e0->stage);
	diag_set(&d->condition, "completed phases of %s (%lld) >= %d", sb_str(&lb), c0, e0->need);
	sb_free(&lb);
	if (!cycle)
		v_fix_arrive(v, d, e0->bar);   /* only when nobody arrives on it at all */
	if (cycle && n > 1) {
		Ev *e1 = &S->tr[chain[1]].ev[S->pc[chain[1]]];
		diag_set(&d->hint, "role %s must arrive on (or signal) %s before it waits on %s%s, or role "
		         "%s must arrive on %s before it waits on %s: reorder the handoff",
		         v->roles[chain[1]].name, v->bars[e0->bar].name, v->bars[e1->bar].name,
		         n > 2 ? " (and so on around the cycle)" : "", v->roles[chain[0]].name,
		         v->bars[e1->bar].name, v->bars[e0->bar].name);
	} else if (cycle) {
		diag_set(&d->hint, "every role must arrive on what the others wait for before waiting "
		         "itself: check the order of wait/arrive and the declared arrivals");
	}
	if (cycle) {
		if (n > 1) {
			Ev *e1 = &S->tr[chain[1]].ev[S->pc[chain[1]]];
			diag_related(d, v->st[e1->sidx].s->span, "role %s is blocked here on %s",
			             v->roles[chain[1]].name, v->bars[e1->bar].name);
		} else {
			diag_related(d, v->bars[e0->bar].d->span, "barrier '%s' declared here",
			             v->bars[e0->bar].name);
		}
	}
	if (!cycle) {
		diag_set(&d->hint, "the producers of '%s' must arrive once per phase the consumers wait "
		         "for: check trip counts, conditions and the declared arrivals",
		         v->bars[starve_bar].name);
		diag_related(d, v->bars[starve_bar].d->span, "barrier '%s' declared with arrivals %d",
		             v->bars[starve_bar].name, v->bars[starve_bar].d->arrivals);
	}
	sb_free(&story);
}

/* Run one scenario; returns true when a finding was reported. */
static bool run_sample(Sched *v, const int *idx, bool *noted)
{
	int nr = v->nroles;
	Sim S = {.v = v};
	S.tr = xcalloc((size_t)nr + 1, sizeof(Trace));
	S.pc = xcalloc((size_t)nr + 1, sizeof(int));
	int total = 0;
	long steps = 0;
	bool failed = false, found = false;
	for (int r = 0; r < nr && !failed; r++) {
		Stmt *prog = v->roles[r].prog;
		if (!prog)
			continue;
		Gen g;
		memset(&g, 0, sizeof g);
		g.v = v;
		g.role = r;
		g.tr = &S.tr[r];
		g.total = &total;
		g.steps = &steps;
		g.pcount = xcalloc((size_t)v->npipes + 1, sizeof(long long));
		g.waits = xcalloc((size_t)v->nbars + 1, sizeof(int));
		g.sig_inst = xcalloc((size_t)v->nbars + 1, sizeof(long long));
		g.free_start = xcalloc((size_t)v->nbars + 1, sizeof(bool));
		for (int b = 0; b < v->nbars; b++) {
			g.sig_inst[b] = -1;
			g.free_start[b] = sched_starts_free(v, r, b);
		}
		point_env(v, &g.env, idx);
		/* a persistent CTA runs the role program once per tile; two tiles show the
		 * phases carried from one tile into the next */
		for (int tile = 0; tile < (v->persistent ? 2 : 1) && !g.fail; tile++) {
			for (int gv = 0; gv < v->ngridvars; gv++)
				sched_env_set(&g.env, v->gridvars[gv], tile);
			gen_body(&g, prog->body, prog->nbody, 0);
		}
		if (g.fail) {
			failed = true;
			if (!*noted) {
				*noted = true;
				Diag *d = v_report(v, "CK-DEAD-002", g.why_span.file >= 0 ? g.why_span : prog->span,
				                   r, NULL, -1, -1, "deadlock check of role '%s' %s not completed: %s",
				                   v->roles[r].name, scenario_str(v, idx), g.why);
				diag_set(&d->condition, "trip counts and conditions evaluable at the sampled domain "
				         "points");
				diag_set(&d->hint, "%s", g.why_hint ? g.why_hint :
				         "bound loops and conditions by dims, consts and loop variables so the "
				         "checker can evaluate them");
			}
		}
		free(g.pcount);
		free(g.waits);
		free(g.sig_inst);
		free(g.free_start);
	}
	if (!failed) {
		S.maxst = 1;
		for (int p = 0; p < v->npipes; p++)
			if (v->pipes[p].stages > S.maxst)
				S.maxst = v->pipes[p].stages;
		size_t cells = (size_t)(v->nbars + 1) * (size_t)S.maxst;
		S.comp = xcalloc(cells, sizeof(long long));
		S.arr = xcalloc(cells, sizeof(long long));
		bool progress = true, aliased = false;
		while (progress) {
			progress = false;
			for (int r = 0; r < nr; r++) {
				Trace *t = &S.tr[r];
				while (S.pc[r] < t->n) {
					Ev *e = &t->ev[S.pc[r]];
					size_t cell = (size_t)e->bar * (size_t)S.maxst + (size_t)(e->stage % S.maxst);
					if (e->kind == EV_WAIT) {
						if (S.comp[cell] < e->need)
							break;
						if (S.comp[cell] > e->need && !aliased && e->need >= 0) {
							aliased = true;
							found = true;
							Stmt *ws = v->st[e->sidx].s;
							Diag *d = v_report(v, "CK-DEAD-004", ws->span, r, NULL, e->bar, -1,
							                   "role %s waits on %s[%d] for phase %d %s, but the "
							                   "barrier has already completed %lld phase%s, so the "
							                   "parity bit it tests is ambiguous",
							                   v->roles[r].name, v->bars[e->bar].name, e->stage,
							                   e->need > 0 ? (e->need - 1) & 1 : 0,
							                   scenario_str(v, idx), S.comp[cell],
							                   S.comp[cell] == 1 ? "" : "s");
							d->stage = v->bars[e->bar].pipe >= 0 ? e->stage : -1;
							d->phase = e->need > 0 ? (e->need - 1) & 1 : 0;
							const char *it = iter_str(v, e);
							if (it)
								diag_set(&d->iter, "%s", it);
							diag_set(&d->condition, "completed phases (%lld) <= needed (%d) at the wait",
							         S.comp[cell], e->need);
							diag_set(&d->hint, "the producer must wait for the consumer to release "
							         "'%s' before arriving again", v->bars[e->bar].name);
						}
					} else {
						int A = v->bars[e->bar].d->arrivals;
						S.arr[cell] += e->count;
						if (A > 0)
							while (S.arr[cell] >= A) {
								S.arr[cell] -= A;
								S.comp[cell]++;
							}
					}
					S.pc[r]++;
					progress = true;
				}
			}
		}
		bool stuck = false;
		for (int r = 0; r < nr; r++)
			if (S.pc[r] < S.tr[r].n)
				stuck = true;
		if (stuck) {
			report_deadlock(&S, idx);
			found = true;
		}
		free(S.comp);
		free(S.arr);
	}
	for (int r = 0; r < nr; r++)
		free(S.tr[r].ev);
	free(S.tr);
	free(S.pc);
	return found;
}

/* at point idx, does every pipelined loop (with computable bounds) run at
 * least stages + 2 iterations, and is there at least one such loop? */
static bool deep_enough(const Sched *v, const int *idx)
{
	bool any = false;
	for (int i = 0; i < v->nst; i++) {
		Stmt *s = v->st[i].s;
		if (s->kind != S_FOR || !s->pipe)
			continue;
		int p = sched_pipe(v, s->pipe);
		if (p < 0)
			continue;
		SchedEnv env;
		point_env(v, &env, idx);
		int chain[64], n = 0;
		for (int l = v->st[i].loop_idx; l >= 0 && n < 64; l = v->st[l].loop_idx)
			chain[n++] = l;
		for (int q = n - 1; q >= 0; q--) {
			Stmt *f = v->st[chain[q]].s;
			long long lo;
			if (f->name && sched_eval(v, &env, f->lo, &lo))
				sched_env_set(&env, f->name, lo);
		}
		long long t;
		if (!sched_trip(v, &env, s, &t))
			continue;
		any = true;
		if (t < v->pipes[p].stages + 2)
			return false;
	}
	return any;
}

void verify_deadlock(Sched *v)
{
	if (v->nroles == 0 || v->nbars == 0)
		return;
	if (!v->domain_ok) {
		Diag *d = v_report(v, "CK-DEAD-002", v->k->span, -1, NULL, -1, -1,
		                   "deadlock check not run: no value of some dim satisfies the domain "
		                   "constraints");
		diag_set(&d->condition, "each dim has a value satisfying the domain");
		diag_set(&d->hint, "check the domain constraints");
		return;
	}
	int total = sched_nsamples(v);
	int nd = v->ndims;
	int *pts = xcalloc((size_t)(3 * (nd + 1)), sizeof(int));
	int np = 0;
	int *idx = xcalloc((size_t)nd + 1, sizeof(int));
	/* the deep point: the first sample index at which every pipelined loop runs
	 * >= stages + 2 iterations, then every dim that does not need to be that
	 * large put back to its smallest value */
	bool found = false;
	for (int q = 0; q < total && !found; q++) {
		for (int d = 0; d < nd; d++)
			idx[d] = q;
		if (deep_enough(v, idx))
			found = true;
	}
	if (found) {
		for (int d = 0; d < nd; d++) {
			int keep = idx[d];
			idx[d] = 0;
			if (!deep_enough(v, idx))
				idx[d] = keep;
		}
		memcpy(&pts[np++ * (nd + 1)], idx, sizeof(int) * (size_t)nd);
	}
	/* then the domain edges: the smallest point and the next one */
	for (int q = 0; q < 2 && q < total; q++) {
		int *pt = &pts[np * (nd + 1)];
		for (int d = 0; d < nd; d++)
			pt[d] = q;
		bool dup = false;
		for (int o = 0; o < np; o++)
			if (!memcmp(&pts[o * (nd + 1)], pt, sizeof(int) * (size_t)nd))
				dup = true;
		if (!dup)
			np++;
	}
	bool noted = false;
	for (int i = 0; i < np; i++)
		if (run_sample(v, &pts[i * (nd + 1)], &noted))
			break;
	free(pts);
	free(idx);
}
