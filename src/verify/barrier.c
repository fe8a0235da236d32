/*
 * barrier.c — the mbarrier protocol (CK-BAR-*).
 *
 * For every declared barrier this family derives, from the role programs,
 * who arrives on it (arrive statements and TMA loads that `signal` it), who
 * waits on it, how many arrivals one phase receives, and in which pipelined
 * loop each use sits. It then checks the protocol the lowering relies on:
 *
 *   arrivals per phase   sum over arriving roles of (warpgroups of the role
 *                        x arrive statements per iteration) plus one per
 *                        role whose TMA loads signal the barrier; if/else
 *                        branches count by their larger side. Must equal
 *                        the declared `arrivals` (CK-BAR-001).
 *   tx bytes             derived from the TMA boxes; a conditional TMA in a
 *                        loop body makes the per-phase total unreliable
 *                        (CK-BAR-002).
 *   producers            every wait needs an arriving role other than the
 *                        waiter (CK-BAR-003, CK-BAR-004) and uses must match
 *                        the declared producer/consumer lists (CK-BAR-008).
 *   pipelines            ring barriers are used only inside loops pipelined
 *                        on their ring (CK-BAR-005, CK-BAR-007), and the
 *                        roles of one pipeline run equal trip counts
 *                        (CK-BAR-005), compared symbolically, then at the
 *                        sampled domain points.
 */
#include "verify_int.h"

/* arrive statements on b in one execution of body (loops not descended; if = max branch) */
static int count_arrives(const Sched *v, Stmt **body, int n, int b, bool tma, int depth)
{
	int c = 0;
	if (depth > 200)
		return 0;
	for (int i = 0; i < n; i++) {
		Stmt *s = body[i];
		if (!s)
			continue;
		if (!tma && s->kind == S_ARRIVE && sched_bar(v, s->name) == b)
			c++;
		else if (tma && s->kind == S_TMA_LOAD && sched_bar(v, s->name) == b)
			c = 1;
		else if (s->kind == S_IF) {
			int t = count_arrives(v, s->body, s->nbody, b, tma, depth + 1);
			int e = count_arrives(v, s->els, s->nels, b, tma, depth + 1);
			int m = t > e ? t : e;
			c = tma ? (c || m) : c + m;
		}
	}
	return c;
}

/* max over the role's blocks (program body and every loop body) */
static int role_arrives(const Sched *v, int r, int b, bool tma, Stmt **where)
{
	int best = 0;
	Stmt *prog = v->roles[r].prog;
	if (!prog)
		return 0;
	int c = count_arrives(v, prog->body, prog->nbody, b, tma, 0);
	if (c > best)
		best = c;
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		if (e->role != r)
			continue;
		if (e->s->kind == S_FOR) {
			c = count_arrives(v, e->s->body, e->s->nbody, b, tma, 0);
			if (c > best)
				best = c;
		}
		if (where && !*where && (tma ? e->s->kind == S_TMA_LOAD : e->s->kind == S_ARRIVE) &&
		    sched_bar(v, e->s->name) == b)
			*where = e->s;
	}
	return best;
}

static void check_arrivals(Sched *v, int b)
{
	SchedBar *B = &v->bars[b];
	int derived = 0;
	StrBuf why = {0};
	Stmt *first = NULL;
	for (int r = 0; r < v->nroles; r++) {
		Stmt *w = NULL;
		int na = role_arrives(v, r, b, false, &w);
		Stmt *w2 = NULL;
		int nt = role_arrives(v, r, b, true, &w2);
		if (!first)
			first = w ? w : w2;
		if (na) {
			int wt = v->roles[r].arrive_weight;
			derived += na * wt;
			sb_printf(&why, "%srole %s: %d arrive x %d (%s)", why.len ? ", " : "", v->roles[r].name,
			          na, wt, wt == 1 && v->roles[r].warps < 4 ? "one per role under 4 warps" :
			          wt == 1 ? "1 warpgroup" : "warpgroups");
		}
		if (nt) {
			derived += 1;
			sb_printf(&why, "%srole %s: 1 TMA expect_tx arrive", why.len ? ", " : "",
			          v->roles[r].name);
		}
	}
	if (derived == 0 || derived == B->d->arrivals || B->d->arrivals < 1) {
		sb_free(&why);
		return;
	}
	Diag *d = v_report(v, "CK-BAR-001", B->d->span, -1, NULL, b, -1,
	                   "barrier '%s' declares %d arrival%s per phase but the role programs give %d",
	                   B->name, B->d->arrivals, B->d->arrivals == 1 ? "" : "s", derived);
	diag_set(&d->condition, "arrivals (%d) == derived (%d: %s)", B->d->arrivals, derived,
	         sb_str(&why));
	/* A declared producer that never arrives is more likely a lost `arrive` than a
	 * miscount: recounting would let the phase complete without that role (the
	 * release it owes becomes a race), so no fix is proposed then. */
	int silent = -1;
	for (int q = 0; q < B->d->nproducers && silent < 0; q++) {
		int r = sched_role(v, B->d->producers[q]);
		if (r >= 0 && !role_arrives(v, r, b, false, NULL) && !role_arrives(v, r, b, true, NULL))
			silent = r;
	}
	if (silent >= 0 && derived < B->d->arrivals) {
		diag_set(&d->hint, "role '%s' is a declared producer of '%s' but never arrives on it: add its "
		         "`arrive %s` (or declare `arrivals %d`)", v->roles[silent].name, B->name, B->name,
		         derived);
	} else {
		diag_set(&d->hint, "declare `arrivals %d`", derived);
		v_fix_decl_int(v, d, B->d, "arrivals", derived);
	}
	if (first)
		diag_related(d, first->span, "arrivals on '%s' come from here", B->name);
	sb_free(&why);
}

static void check_tx(Sched *v, int b)
{
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		if (e->s->kind != S_TMA_LOAD || sched_bar(v, e->s->name) != b || e->if_idx < 0)
			continue;
		/* conditional inside its own loop body (or at role top with no loop) */
		if (e->loop_idx >= 0 && !sched_inside(v, e->loop_idx, e->if_idx))
			continue;
		/* waits on b also conditional? then assume the same condition guards both */
		bool wait_cond = false, wait_any = false;
		for (int j = 0; j < v->nst; j++)
			if (v->st[j].s->kind == S_WAIT && sched_bar(v, v->st[j].s->name) == b) {
				wait_any = true;
				if (v->st[j].if_idx >= 0 &&
				    (v->st[j].loop_idx < 0 || sched_inside(v, v->st[j].loop_idx, v->st[j].if_idx)))
					wait_cond = true;
			}
		if (!wait_any || wait_cond)
			continue;
		long long total = 0, mine = sched_tma_bytes(v, e->s);
		for (int j = 0; j < v->nst; j++)
			if (v->st[j].s->kind == S_TMA_LOAD && sched_bar(v, v->st[j].s->name) == b &&
			    v->st[j].role == e->role && v->st[j].loop == e->loop) {
				long long x = sched_tma_bytes(v, v->st[j].s);
				if (x > 0)
					total += x;
			}
		Diag *d = v_report(v, "CK-BAR-002", e->s->span, e->role, sched_refname(e->s->dst), b, -1,
		                   "barrier '%s' expects %lld tx bytes per phase, but this TMA (%lld B) is "
		                   "conditional, so some phases never receive them", v->bars[b].name, total,
		                   mine);
		diag_set(&d->condition, "tx bytes delivered every phase == %lld", total);
		diag_set(&d->hint, "issue the TMA unconditionally, or signal a separate barrier that is "
		         "waited on under the same condition");
		diag_related(d, v->st[e->if_idx].s->span, "the condition is here");
	}
}

static void check_uses(Sched *v, int b)
{
	SchedBar *B = &v->bars[b];
	bool waits[64] = {0}, arrs[64] = {0}, tmas[64] = {0};
	int nr = v->nroles < 64 ? v->nroles : 64;
	Stmt *firstwait[64] = {0};
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		Stmt *s = e->s;
		bool w = sched_bar_waited(v, s) == b, a = sched_bar_arrived(v, s) == b;
		if (!w && !a)
			continue;
		if (e->role >= 0 && e->role < nr) {
			if (w) {
				waits[e->role] = true;
				if (!firstwait[e->role])
					firstwait[e->role] = s;
			}
			if (a)
				arrs[e->role] = true;
			if (a && s->kind == S_TMA_LOAD)
				tmas[e->role] = true;
		}
	}
	for (int r = 0; r < nr; r++) {
		if (!waits[r])
			continue;
		bool other = false;
		for (int q = 0; q < nr; q++)
			if (q != r && arrs[q])
				other = true;
		if (other || tmas[r])
			continue; /* a role may wait for its own TMA: the bytes come from the copy engine */
		if (arrs[r]) {
			Diag *d = v_report(v, "CK-BAR-004", firstwait[r]->span, r, NULL, b, -1,
			                   "role '%s' waits on barrier '%s', which only it arrives on", v->roles[r].name,
			                   B->name);
			diag_set(&d->condition, "producers(%s) \\ {%s} != {}", B->name, v->roles[r].name);
			diag_set(&d->hint, "wait on the barrier the other role arrives on (or use `sync`)");
		} else {
			Diag *d = v_report(v, "CK-BAR-003", firstwait[r]->span, r, NULL, b, -1,
			                   "role '%s' waits on barrier '%s' but no role arrives on it or signals it",
			                   v->roles[r].name, B->name);
			diag_set(&d->condition, "some role != %s arrives on %s", v->roles[r].name, B->name);
			diag_set(&d->hint, "add `arrive %s` (or a TMA `signal %s`) in the producing role",
			         B->name, B->name);
			diag_related(d, B->d->span, "barrier '%s' declared here", B->name);
			v_fix_arrive(v, d, b);
		}
	}
}

/* env with grid vars 0 and every enclosing loop variable at its lower bound */

static void check_trips(Sched *v)
{
	for (int p = 0; p < v->npipes; p++) {
		int loops[64], nl = 0;
		for (int i = 0; i < v->nst && nl < 64; i++) {
			Stmt *s = v->st[i].s;
			if (s->kind == S_FOR && s->pipe && sched_pipe(v, s->pipe) == p && v->st[i].role >= 0)
				loops[nl++] = i;
		}
		for (int x = 1; x < nl; x++) {
			SchedStmt *a = &v->st[loops[0]], *b = &v->st[loops[x]];
			if (a->role == b->role)
				continue;
			const char *ta = sched_exprstr(v, a->s->hi), *tb = sched_exprstr(v, b->s->hi);
			const char *la = sched_exprstr(v, a->s->lo), *lb = sched_exprstr(v, b->s->lo);
			const char *sa = a->s->step ? sched_exprstr(v, a->s->step) : "1";
			const char *sb = b->s->step ? sched_exprstr(v, b->s->step) : "1";
			if (!strcmp(ta, tb) && !strcmp(la, lb) && !strcmp(sa, sb))
				continue;
			int ns = sched_nsamples(v);
			for (int q = 0; q < ns; q++) {
				SchedEnv ea, eb;
				sched_loop_env(v, &ea, q, loops[0]);
				sched_loop_env(v, &eb, q, loops[x]);
				long long na, nb;
				if (!sched_trip(v, &ea, a->s, &na) || !sched_trip(v, &eb, b->s, &nb) || na == nb)
					continue;
				StrBuf at = {0};
				for (int dd = 0; dd < v->ndims; dd++)
					if (v->ndimvals[dd] > 0)
						sb_printf(&at, "%s%s=%lld", at.len ? ", " : "", v->dims[dd],
						          v->dimvals[dd][q < v->ndimvals[dd] ? q : v->ndimvals[dd] - 1]);
				Diag *d = v_report(v, "CK-BAR-005", b->s->span, b->role, NULL, -1, p,
				                   "role '%s' runs %lld iteration%s of pipeline '%s' but role '%s' runs %lld",
				                   v->roles[b->role].name, nb, nb == 1 ? "" : "s", v->pipes[p].name,
				                   v->roles[a->role].name, na);
				diag_set(&d->condition, "trips(%s: %s..%s) == trips(%s: %s..%s) (%lld vs %lld at %s)",
				         v->roles[b->role].name, lb, tb, v->roles[a->role].name, la, ta, nb, na,
				         at.len ? sb_str(&at) : "constants");
				diag_set(&d->hint, "iterate both roles over the same range of pipeline '%s'",
				         v->pipes[p].name);
				diag_related(d, a->s->span, "role '%s' iterates here", v->roles[a->role].name);
				sb_free(&at);
				break;
			}
		}
	}
}

void verify_barrier(Sched *v)
{
	for (int b = 0; b < v->nbars; b++) {
		check_arrivals(v, b);
		check_tx(v, b);
		check_uses(v, b);
	}
	check_trips(v);
}
