/*
 * race.c — data races on shared memory and accumulators (CK-RACE-*).
 *
 * The model is program order within each role plus the happens-before
 * edges mbarriers create: a role that waits on B is ordered after every
 * write its producers made before arriving on (or signalling) B. For each
 * shared buffer the family derives
 *
 *   writers        roles that TMA into it, cp.async into it or store to it;
 *   full barriers  barriers its TMA loads signal, and barriers a storing
 *                  role arrives on after the store in the same loop body;
 *   release bars   barriers a reader role arrives on that a writer waits on;
 *
 * and checks, per statement:
 *
 *   RAW (001)      a read of a ring stage inside its pipelined loop is
 *                  preceded in the same iteration by a wait on a full barrier;
 *   WAR (002)      a write inside a loop, to a buffer another role reads, is
 *                  preceded in the same iteration by a wait on a barrier a
 *                  reader arrives on;
 *   in flight (003, 006)  a sequential pass over each role keeps the list of
 *                  wgmma groups in flight (each wgmma statement commits one
 *                  group; `wgmma_wait N` leaves the newest N). Arriving on a
 *                  release barrier of a stage an in-flight wgmma of this
 *                  iteration reads (003), or touching an accumulator an
 *                  in-flight wgmma writes (006), is a race. Loop bodies are
 *                  walked twice so groups carried over from the previous
 *                  iteration are seen; those read the previous stage, which
 *                  only conflicts when the ring has one stage;
 *   two writers (004), proxy fence (005: and, before a TMA store, which one thread
 *                  issues, the role's `sync` after the other threads' stores),
 *                  cross-role read (007).
 */
#include "verify_int.h"

#define MAXB 64
#define MAXS 64

typedef struct RaceInfo {
	bool full[MAXS][MAXB];     /* full barriers of each smem buffer */
	bool release[MAXS][MAXB];  /* release barriers of each smem buffer */
	bool async_read[MAXS];     /* read by TMA store or wgmma somewhere */
	bool *reported;            /* [nst * 8]: (stmt, rule) already reported */
} RaceInfo;

static bool once(Sched *v, RaceInfo *ri, int idx, int rule)
{
	if (idx < 0)
		return true;
	bool *p = &ri->reported[idx * 8 + rule];
	if (*p)
		return false;
	*p = true;
	return true;
}

static bool role_writes(const Sched *v, int r, int m)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].role == r && sched_smem_written(v, v->st[i].s) == m)
			return true;
	return false;
}

static bool role_reads(const Sched *v, int r, int m)
{
	int rd[8];
	for (int i = 0; i < v->nst; i++) {
		if (v->st[i].role != r)
			continue;
		int n = sched_smem_read(v, v->st[i].s, rd, 8);
		for (int q = 0; q < n; q++)
			if (rd[q] == m)
				return true;
	}
	return false;
}

static bool role_arrives_on(const Sched *v, int r, int b)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].role == r && sched_bar_arrived(v, v->st[i].s) == b)
			return true;
	return false;
}

static bool role_waits_on(const Sched *v, int r, int b)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].role == r && sched_bar_waited(v, v->st[i].s) == b)
			return true;
	return false;
}

static void derive(Sched *v, RaceInfo *ri)
{
	int ns = v->nsmems < MAXS ? v->nsmems : MAXS;
	int nb = v->nbars < MAXB ? v->nbars : MAXB;
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		Stmt *s = e->s;
		int m = sched_smem_written(v, s);
		if (m >= 0 && m < ns) {
			if (s->kind == S_TMA_LOAD) {
				int b = sched_bar(v, s->name);
				if (b >= 0 && b < nb)
					ri->full[m][b] = true;
			} else {
				/* arrive after the store in the same loop body of the same role */
				for (int j = i + 1; j < v->nst; j++) {
					SchedStmt *f = &v->st[j];
					if (f->role != e->role)
						break;
					if (e->loop_idx >= 0 && !sched_inside(v, e->loop_idx, j))
						break;
					int b = sched_bar_arrived(v, f->s);
					if (f->s->kind == S_ARRIVE && b >= 0 && b < nb)
						ri->full[m][b] = true;
				}
			}
		}
		if (s->kind == S_TMA_STORE || s->kind == S_WGMMA) {
			int rd[8];
			int n = sched_smem_read(v, s, rd, 8);
			for (int q = 0; q < n; q++)
				if (rd[q] < ns)
					ri->async_read[rd[q]] = true;
		}
	}
	/* release barriers: a writer waits on b and then, in the same loop body
	 * (or later in its program when the wait is outside loops), writes m;
	 * some other role that reads m arrives on b */
	for (int j = 0; j < v->nst; j++) {
		SchedStmt *wj = &v->st[j];
		int b = sched_bar_waited(v, wj->s);
		if (b < 0 || b >= nb || wj->role < 0)
			continue;
		for (int i = j + 1; i < v->nst; i++) {
			SchedStmt *wi = &v->st[i];
			if (wi->role != wj->role)
				break;
			if (wj->loop_idx >= 0 && !sched_inside(v, wj->loop_idx, i))
				break;
			int m = sched_smem_written(v, wi->s);
			if (m < 0 || m >= ns || ri->release[m][b])
				continue;
			for (int r = 0; r < v->nroles; r++)
				if (r != wj->role && role_reads(v, r, m) && role_arrives_on(v, r, b))
					ri->release[m][b] = true;
		}
	}
}

/* Is there, in role r, a wait on a barrier in set[] at a statement index in (lo, hi)? */
static bool waited_between(const Sched *v, int r, int lo, int hi, const bool *set)
{
	for (int j = lo + 1; j < hi; j++) {
		if (v->st[j].role != r)
			continue;
		int b = sched_bar_waited(v, v->st[j].s);
		if (b >= 0 && b < MAXB && set[b])
			return true;
	}
	return false;
}

/* the first wait in role r at an index in (lo, hi) on a barrier in set[], or -1 */
static int first_full_wait(const Sched *v, int r, int lo, int hi, const bool *set)
{
	for (int j = lo + 1; j < hi; j++) {
		if (v->st[j].role != r)
			continue;
		int b = sched_bar_waited(v, v->st[j].s);
		if (b >= 0 && b < MAXB && set[b] && v->bars[b].pipe >= 0)
			return b;
	}
	return -1;
}

static int first_writer_stmt(const Sched *v, int m, int not_role)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].role != not_role && sched_smem_written(v, v->st[i].s) == m)
			return i;
	return -1;
}

static void check_raw_war(Sched *v, RaceInfo *ri)
{
	int ns = v->nsmems < MAXS ? v->nsmems : MAXS;
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		Stmt *s = e->s;
		if (e->role < 0)
			continue;
		/* reads */
		int rd[8];
		int n = sched_smem_read(v, s, rd, 8);
		for (int q = 0; q < n; q++) {
			int m = rd[q];
			if (m >= ns)
				continue;
			SchedSmem *M = &v->smems[m];
			bool anyfull = false, other_writer = false;
			for (int b = 0; b < MAXB; b++)
				anyfull |= ri->full[m][b];
			for (int w = 0; w < v->nroles; w++)
				if (w != e->role && role_writes(v, w, m))
					other_writer = true;
			bool self_tma = false;
			for (int j = 0; j < v->nst; j++)
				if (v->st[j].role == e->role && v->st[j].s->kind == S_TMA_LOAD &&
				    sched_smem(v, sched_refname(v->st[j].s->dst)) == m)
					self_tma = true;
			if (!other_writer && !self_tma)
				continue;
			if (M->pipe >= 0 && e->ploop && e->ppipe == M->pipe && anyfull) {
				int fw = first_full_wait(v, e->role, e->ploop_idx, i, ri->full[m]);
				if (!waited_between(v, e->role, e->ploop_idx, i, ri->full[m]) && once(v, ri, i, 1)) {
					const char *bn = "?";
					for (int b = 0; b < v->nbars && b < MAXB; b++)
						if (ri->full[m][b]) {
							bn = v->bars[b].name;
							break;
						}
					Diag *d = v_report(v, "CK-RACE-001", s->span, e->role, M->name, sched_bar(v, bn),
					                   M->pipe, "role '%s' reads the current stage of '%s' before "
					                   "waiting on '%s' in this iteration", v->roles[e->role].name,
					                   M->name, bn);
					diag_set(&d->condition, "wait %s precedes the read of %s in each iteration of %s",
					         bn, M->name, e->ploop->name ? e->ploop->name : "the loop");
					diag_set(&d->hint, "add `wait %s` at the top of the pipelined loop body", bn);
					int w = first_writer_stmt(v, m, -1);
					if (w >= 0)
						diag_related(d, v->st[w].s->span, "the stage is filled here");
				} else if (fw >= 0 && sched_starts_free(v, e->role, fw) && once(v, ri, i, 1)) {
					/* The wait exists, but under the lowering's "starts free" convention
					 * (docs/LOWERING.md) it passes on the first pass over each stage:
					 * the read is not ordered after the write on that pass. */
					int b = fw;
					Diag *d = v_report(v, "CK-RACE-001", s->span, e->role, M->name, b, M->pipe,
					                   "role '%s' also writes ring buffers of '%s', so its `wait %s` "
					                   "starts free and passes before the first write into '%s' lands",
					                   v->roles[e->role].name, v->pipes[M->pipe].name,
					                   b >= 0 ? v->bars[b].name : "?", M->name);
					diag_set(&d->condition, "wait %s orders the read of %s on the first pass over "
					         "the ring", b >= 0 ? v->bars[b].name : "?", M->name);
					diag_set(&d->hint, "load the ring from a separate producer role, or read a buffer "
					         "outside the ring");
					if (b >= 0)
						diag_related(d, v->bars[b].d->span, "barrier '%s' declared here",
						             v->bars[b].name);
				}
				continue;
			}
			if (!other_writer || (M->pipe >= 0 && e->ploop && e->ppipe == M->pipe))
				continue;
			/* RACE-007: any prior wait on a barrier some other writer arrives on/signals */
			bool ok = false;
			for (int j = 0; j < i && !ok; j++) {
				if (v->st[j].role != e->role)
					continue;
				int b = sched_bar_waited(v, v->st[j].s);
				if (b < 0)
					continue;
				/* only the barriers that complete after the write order it: the TMA's
				 * signal barrier, or one the storing role arrives on after the store */
				if (b < MAXB && ri->full[m][b])
					ok = true;
			}
			if (!ok && once(v, ri, i, 7)) {
				int w = first_writer_stmt(v, m, e->role);
				Diag *d = v_report(v, "CK-RACE-007", s->span, e->role, M->name, -1, M->pipe,
				                   "role '%s' reads '%s', written by role '%s', without waiting on a "
				                   "barrier that role arrives on", v->roles[e->role].name, M->name,
				                   w >= 0 && v->st[w].role >= 0 ? v->roles[v->st[w].role].name : "?");
				diag_set(&d->condition, "a wait ordered after the write precedes the read of %s",
				         M->name);
				diag_set(&d->hint, "have the writer `arrive` on a barrier after writing and `wait` on "
				         "it here");
				if (w >= 0)
					diag_related(d, v->st[w].s->span, "'%s' is written here", M->name);
			}
		}
		/* writes: WAR */
		int m = sched_smem_written(v, s);
		if (m < 0 || m >= ns || !e->loop)
			continue;
		SchedSmem *M = &v->smems[m];
		int scope = (M->pipe >= 0 && e->ploop && e->ppipe == M->pipe) ? e->ploop_idx : e->loop_idx;
		int reader = -1;
		for (int r = 0; r < v->nroles; r++)
			if (r != e->role && role_reads(v, r, m)) {
				reader = r;
				break;
			}
		if (reader < 0)
			continue;
		bool rel[MAXB] = {0};
		bool anyrel = false;
		for (int b = 0; b < v->nbars && b < MAXB; b++)
			for (int r = 0; r < v->nroles; r++)
				if (r != e->role && role_reads(v, r, m) && role_arrives_on(v, r, b)) {
					rel[b] = true;
					anyrel = true;
				}
		if (anyrel && waited_between(v, e->role, scope, i, rel))
			continue;
		if (!once(v, ri, i, 2))
			continue;
		const char *bn = NULL;
		for (int b = 0; b < v->nbars && b < MAXB; b++)
			if (rel[b]) {
				bn = v->bars[b].name;
				break;
			}
		Diag *d = v_report(v, "CK-RACE-002", s->span, e->role, M->name, bn ? sched_bar(v, bn) : -1,
		                   M->pipe, "role '%s' overwrites %s'%s' without waiting for role '%s' to "
		                   "release it in this iteration", v->roles[e->role].name,
		                   M->pipe >= 0 ? "the current stage of " : "", M->name, v->roles[reader].name);
		diag_set(&d->condition, "wait %s precedes the write of %s in each iteration",
		         bn ? bn : "<release barrier>", M->name);
		if (bn)
			diag_set(&d->hint, "add `wait %s` before writing '%s'", bn, M->name);
		else
			diag_set(&d->hint, "declare a barrier that role '%s' arrives on after reading '%s' and "
			         "wait on it before writing", v->roles[reader].name, M->name);
		diag_related(d, v->st[scope].s->span, "in this loop");
	}
}

/* [lo, hi) per dimension of the region statement idx writes; false if not constant */
static bool region_of(const Sched *v, int idx, long long *lo, long long *hi, int *rank)
{
	const Stmt *s = v->st[idx].s;
	if ((s->kind != S_STORE && s->kind != S_ATOMIC && s->kind != S_CP_ASYNC) || !s->dst ||
	    s->dst->kind != E_INDEX)
		return false;
	int m = sched_smem(v, sched_refname(s->dst));
	if (m < 0 || s->dst->nslices > MAX_RANK)
		return false;
	SchedEnv env;
	sched_loop_env(v, &env, 0, idx);
	for (int i = 0; i < s->dst->nslices; i++) {
		const Slice *sl = &s->dst->slices[i];
		long long a, n = 1;
		if (sl->kind == SL_ALL) {
			if (i >= v->smems[m].rank || v->smems[m].dims[i] < 0)
				return false;
			a = 0;
			n = v->smems[m].dims[i];
		} else if (!sched_eval(v, &env, sl->start, &a) ||
		           (sl->kind == SL_RANGE && !sched_eval(v, &env, sl->len, &n))) {
			return false;
		}
		lo[i] = a;
		hi[i] = a + n;
	}
	*rank = s->dst->nslices;
	return true;
}

/* do statements i and j write provably disjoint regions of one buffer? */
static bool disjoint_regions(const Sched *v, int i, int j)
{
	long long lo1[MAX_RANK], hi1[MAX_RANK], lo2[MAX_RANK], hi2[MAX_RANK];
	int r1, r2;
	if (!region_of(v, i, lo1, hi1, &r1) || !region_of(v, j, lo2, hi2, &r2) || r1 != r2)
		return false;
	for (int d = 0; d < r1; d++)
		if (hi1[d] <= lo2[d] || hi2[d] <= lo1[d])
			return true;
	return false;
}

static void check_two_writers(Sched *v)
{
	for (int m = 0; m < v->nsmems; m++) {
		int w1 = -1, s1 = -1;
		for (int i = 0; i < v->nst; i++) {
			SchedStmt *e = &v->st[i];
			if (e->role < 0 || sched_smem_written(v, e->s) != m)
				continue;
			if (w1 < 0) {
				w1 = e->role;
				s1 = i;
				continue;
			}
			if (e->role == w1)
				continue;
			if (e->s->kind == S_ATOMIC && v->st[s1].s->kind == S_ATOMIC)
				continue;
			if (disjoint_regions(v, s1, i))
				continue;
			bool ordered = false;
			for (int b = 0; b < v->nbars && !ordered; b++)
				if ((role_arrives_on(v, w1, b) && role_waits_on(v, e->role, b)) ||
				    (role_arrives_on(v, e->role, b) && role_waits_on(v, w1, b)))
					ordered = true;
			if (ordered)
				continue;
			Diag *d = v_report(v, "CK-RACE-004", e->s->span, e->role, v->smems[m].name, -1,
			                   v->smems[m].pipe, "roles '%s' and '%s' both write '%s' with no barrier "
			                   "ordering them", v->roles[w1].name, v->roles[e->role].name,
			                   v->smems[m].name);
			diag_set(&d->condition, "a barrier orders the writes of %s by %s and %s",
			         v->smems[m].name, v->roles[w1].name, v->roles[e->role].name);
			diag_set(&d->hint, "write '%s' from one role, or hand off with arrive/wait between the "
			         "writers", v->smems[m].name);
			diag_related(d, v->st[s1].s->span, "role '%s' writes it here", v->roles[w1].name);
			break;
		}
	}
}

/* ---- sequential pass: wgmma groups in flight and generic-proxy writes ---- */

#define MAXFLY 32

typedef struct Fly {
	int idx;          /* statement index of the wgmma */
	int bufs[2];
	int acc;          /* fragment index or -1 */
	int gen;          /* iteration generation */
} Fly;

typedef struct SeqState {
	Fly fly[MAXFLY];
	int nfly;
	int gen;
	int counter;         /* source of fresh generations */
	long budget;         /* statement visits left (loops are walked twice per level) */
	int pending[MAXS];   /* statement index of an unfenced generic store, -1 */
	int unsynced[MAXS];  /* statement index of a generic store no `sync` of the role followed yet, -1 */
	int role;
} SeqState;

static void seq_body(Sched *v, RaceInfo *ri, SeqState *st, Stmt **body, int n, int depth);

static void frag_touch(Sched *v, RaceInfo *ri, SeqState *st, int idx, int f, bool write)
{
	for (int q = 0; q < st->nfly; q++) {
		if (st->fly[q].acc != f)
			continue;
		if (!once(v, ri, idx, 6))
			return;
		Stmt *s = v->st[idx].s;
		int outstanding = st->nfly;
		Diag *d = v_report(v, "CK-RACE-006", s->span, st->role, v->frags[f].name, -1, -1,
		                   "accumulator '%s' is %s while a wgmma writing it may still be in flight",
		                   v->frags[f].name, write ? "overwritten" : "read");
		diag_set(&d->condition, "wgmma groups in flight writing %s (%d) == 0 before this access",
		         v->frags[f].name, outstanding);
		diag_set(&d->hint, "add `wgmma_wait 0` before using '%s'", v->frags[f].name);
		diag_related(d, v->st[st->fly[q].idx].s->span, "the wgmma writing it is issued here");
		return;
	}
}

static void seq_stmt(Sched *v, RaceInfo *ri, SeqState *st, Stmt *s, int depth)
{
	if (st->budget-- <= 0)
		return;
	int idx = sched_stmt_index(v, s);
	if (idx < 0)
		return;
	int ns = v->nsmems < MAXS ? v->nsmems : MAXS;
	switch (s->kind) {
	case S_FOR: {
		int saved = st->gen;
		for (int pass = 0; pass < 2; pass++) {
			st->gen = ++st->counter;
			seq_body(v, ri, st, s->body, s->nbody, depth + 1);
		}
		/* groups issued in the loop stay in flight after it; mark them as "current" */
		for (int q = 0; q < st->nfly; q++)
			st->fly[q].gen = saved;
		st->gen = saved;
		return;
	}
	case S_IF:
		seq_body(v, ri, st, s->body, s->nbody, depth + 1);
		seq_body(v, ri, st, s->els, s->nels, depth + 1);
		return;
	case S_WGMMA: {
		int f = sched_frag(v, sched_refname(s->dst));
		if (!s->accumulate && f >= 0)
			frag_touch(v, ri, st, idx, f, true);
		int rd[8];
		int n = sched_smem_read(v, s, rd, 8);
		for (int q = 0; q < n; q++)
			if (rd[q] < ns && st->pending[rd[q]] >= 0 && once(v, ri, st->pending[rd[q]], 5)) {
				Diag *d = v_report(v, "CK-RACE-005", v->st[st->pending[rd[q]]].s->span, st->role,
				                   v->smems[rd[q]].name, -1, -1, "'%s' is written with a plain store "
				                   "and then read by wgmma without `fence proxy_async`",
				                   v->smems[rd[q]].name);
				diag_set(&d->condition, "fence proxy_async between the store and the async read");
				diag_set(&d->hint, "add `fence proxy_async` after the store");
				diag_related(d, s->span, "the wgmma reads it here");
				st->pending[rd[q]] = -1;
			}
		if (st->nfly == MAXFLY) {
			memmove(&st->fly[0], &st->fly[1], sizeof(Fly) * (MAXFLY - 1));
			st->nfly--;
		}
		Fly *fl = &st->fly[st->nfly++];
		fl->idx = idx;
		fl->bufs[0] = n > 0 ? rd[0] : -1;
		fl->bufs[1] = n > 1 ? rd[1] : -1;
		fl->acc = f;
		fl->gen = st->gen;
		return;
	}
	case S_WGMMA_WAIT: {
		int keep = s->count < 0 ? 0 : s->count;
		if (st->nfly > keep) {
			memmove(&st->fly[0], &st->fly[st->nfly - keep], sizeof(Fly) * (size_t)keep);
			st->nfly = keep;
		}
		return;
	}
	case S_ARRIVE: {
		int b = sched_bar(v, s->name);
		if (b < 0 || b >= MAXB)
			break;
		for (int q = 0; q < st->nfly; q++) {
			Fly *fl = &st->fly[q];
			for (int k = 0; k < 2; k++) {
				int m = fl->bufs[k];
				if (m < 0 || m >= ns || !ri->release[m][b])
					continue;
				SchedSmem *M = &v->smems[m];
				int stages = M->pipe >= 0 ? v->pipes[M->pipe].stages : 1;
				if (fl->gen != st->gen && stages > 1)
					continue;
				if (!once(v, ri, idx, 3))
					goto arrive_done;
				int behind = st->nfly - q; /* groups newer than or equal to this one */
				Diag *d = v_report(v, "CK-RACE-003", s->span, st->role, M->name, b, M->pipe,
				                   "arrive %s releases the stage of '%s' while the wgmma reading it may "
				                   "still be in flight", v->bars[b].name, M->name);
				diag_set(&d->condition, "wgmma groups in flight reading %s (%d) == 0 at arrive %s",
				         M->name, behind, v->bars[b].name);
				diag_set(&d->hint, "add `wgmma_wait 0` before `arrive %s` (or release the previous "
				         "stage instead)", v->bars[b].name);
				diag_related(d, v->st[fl->idx].s->span, "the wgmma reading '%s' is issued here",
				             M->name);
				goto arrive_done;
			}
		}
	arrive_done:
		for (int m = 0; m < ns; m++) {
			if (st->pending[m] < 0 || !ri->async_read[m])
				continue;
			if (once(v, ri, st->pending[m], 5)) {
				Diag *d = v_report(v, "CK-RACE-005", v->st[st->pending[m]].s->span, st->role,
				                   v->smems[m].name, b, -1, "'%s' is written with a plain store and "
				                   "handed to the async proxy (TMA/wgmma) without `fence proxy_async`",
				                   v->smems[m].name);
				diag_set(&d->condition, "fence proxy_async between the store and arrive %s",
				         v->bars[b].name);
				diag_set(&d->hint, "add `fence proxy_async` before `arrive %s`", v->bars[b].name);
				diag_related(d, s->span, "the handoff is here");
			}
			st->pending[m] = -1;
		}
		return;
	}
	case S_FENCE:
		if (s->fence == FENCE_PROXY_ASYNC)
			for (int m = 0; m < ns; m++)
				st->pending[m] = -1;
		return;
	case S_SYNC:
		if (!s->name || !strcmp(s->name, v->roles[st->role].name))
			for (int m = 0; m < ns; m++)
				if (st->pending[m] < 0)   /* the barrier orders the stores only once they are fenced */
					st->unsynced[m] = -1;
		return;
	case S_TMA_STORE: {
		int m = sched_smem(v, sched_refname(s->src));
		/* one thread issues the store: the other threads' writes must be behind the role's barrier */
		if (m >= 0 && m < ns && st->pending[m] < 0 && st->unsynced[m] >= 0 && once(v, ri, st->unsynced[m], 5)) {
			const char *rn = v->roles[st->role].name;
			Diag *d = v_report(v, "CK-RACE-005", v->st[st->unsynced[m]].s->span, st->role, v->smems[m].name, -1, -1,
			                   "'%s' is written by every thread of role '%s' and then read by a TMA store one thread "
			                   "issues, with no `sync %s` between the fence and the TMA store", v->smems[m].name, rn, rn);
			diag_set(&d->condition, "sync %s between the fenced store and the TMA store", rn);
			diag_set(&d->hint, "add `sync %s` after `fence proxy_async`", rn);
			diag_related(d, s->span, "the TMA store reads it here");
			st->unsynced[m] = -1;
		}
		if (m >= 0 && m < ns && st->pending[m] >= 0 && once(v, ri, st->pending[m], 5)) {
			Diag *d = v_report(v, "CK-RACE-005", v->st[st->pending[m]].s->span, st->role,
			                   v->smems[m].name, -1, -1, "'%s' is written with a plain store and then "
			                   "read by a TMA store without `fence proxy_async`", v->smems[m].name);
			diag_set(&d->condition, "fence proxy_async between the store and the TMA store");
			diag_set(&d->hint, "add `fence proxy_async` after the store");
			diag_related(d, s->span, "the TMA store reads it here");
			st->pending[m] = -1;
		}
		return;
	}
	default:
		break;
	}
	/* generic smem writes */
	if (s->kind == S_STORE || s->kind == S_CP_ASYNC || s->kind == S_ATOMIC) {
		int m = sched_smem_written(v, s);
		if (m >= 0 && m < ns && v->tgt == TGT_SM90A)
			st->pending[m] = st->unsynced[m] = idx;
	}
	/* fragment accesses */
	const char *ids[64];
	int n = 0;
	if (s->kind == S_ASSIGN || s->kind == S_STORE || s->kind == S_ATOMIC || s->kind == S_LET)
		n = sched_idents(s->src, ids, 64);
	for (int q = 0; q < n; q++) {
		int f = sched_frag(v, ids[q]);
		if (f >= 0)
			frag_touch(v, ri, st, idx, f, false);
	}
	if (s->kind == S_ASSIGN)
		for (int q = 0; q < s->nlhs; q++) {
			int f = sched_frag(v, sched_refname(s->lhs[q]));
			if (f >= 0)
				frag_touch(v, ri, st, idx, f, true);
		}
	if (s->kind == S_LOAD || s->kind == S_MMA) {
		int f = sched_frag(v, sched_refname(s->dst));
		if (f >= 0)
			frag_touch(v, ri, st, idx, f, true);
	}
}

static void seq_body(Sched *v, RaceInfo *ri, SeqState *st, Stmt **body, int n, int depth)
{
	if (depth > 64)
		return;
	for (int i = 0; i < n; i++)
		if (body[i])
			seq_stmt(v, ri, st, body[i], depth);
}

void verify_race(Sched *v)
{
	RaceInfo *ri = arena_alloc(v->a, sizeof *ri);
	ri->reported = arena_alloc(v->a, sizeof(bool) * 8 * (size_t)(v->nst + 1));
	derive(v, ri);
	check_raw_war(v, ri);
	check_two_writers(v);
	for (int r = 0; r < v->nroles; r++) {
		Stmt *prog = v->roles[r].prog;
		if (!prog)
			continue;
		SeqState st;
		memset(&st, 0, sizeof st);
		st.role = r;
		st.budget = 200000;
		for (int m = 0; m < MAXS; m++)
			st.pending[m] = st.unsynced[m] = -1;
		seq_body(v, ri, &st, prog->body, prog->nbody, 0);
	}
}
