/*
 * memory.c — global-memory safety and ring-stage lifetime (CK-MEM-*).
 *
 * Two families of facts no other rule looks at: what the grid as a whole
 * does to each global tensor, and whether a role still reads a ring stage
 * after handing it back to its producer.
 *
 * The global-memory model. Every statement that touches a global tensor is
 * an *access*: `store`, TMA store (writes), `atomic_add` and `fetch_add`
 * (atomics), `load`, TMA load, `cp_async` and element reads inside
 * expressions such as `let lo = Offsets[c]` (reads). An access names one box
 * per execution: per dimension a point `e` or a range `e +: n` (`:` is the
 * whole dimension). Each slice start is compiled, once per domain point,
 * into an affine form over the *walk variables* — the grid coordinates,
 * loop variables and lets — with coefficients evaluated from the dims at
 * that point (`bm * 128 + 64` is 64 + 128·bm). A start that is not affine in
 * them (a variable under `/` or `%`) is evaluated directly at each
 * execution instead. A slice indexed by an integer fragment is a scatter
 * (LANGUAGE.md §5.14): its rows are data, so that dimension is not judged.
 *
 * At each checked domain point (the model's samples, smallest first, each
 * with `X == e` constraints applied and every domain constraint holding)
 * the family enumerates the grid's tiles — every block coordinate tuple in
 * the grid's extents; a persistent grid and a `group` raster visit the same
 * tile space in another order, so neither changes what is written — and
 * runs every role program once per tile: loops at their trip counts, `if`
 * conditions evaluated, lets bound (loop bounds, lets and the sides of a
 * comparison are affine forms too, so a visit is a few multiply-adds and
 * names are looked up only for the rare form that is not affine). What the
 * model cannot decide (a bound or condition read from memory or from a
 * runtime scalar) makes every access under it *undecided*. Then:
 *
 *   003  every decided access of every kind stays inside its tensor on each
 *        non-scatter dimension: 0 <= start and start + len <= extent;
 *   002  no element of a global tensor written by plain stores or TMA stores
 *        is written by two executions (two CTAs, two roles, two statements
 *        or two iterations of a loop) — found by placing every decided
 *        write's box on a grid of cells (coordinate compression of the box
 *        edges) and meeting an owned cell;
 *   001  every element of such a tensor is written, when every write to it
 *        at that point was decided and the tensor is not also read by the
 *        kernel (an in-place update keeps what it does not write).
 *
 * Tensors written by `atomic_add`/`fetch_add` (split-K, histograms) or by a
 * scatter store are exempt from 001 and 002: they are meant to be hit
 * several times or at data-dependent places. Messages name the tensor, the
 * box, the CTAs (tiles, for persistent grids), roles and iterations, the
 * domain point and the grid; the hint reads the affine forms back ("dim 1
 * advances by 64 per bn but its slice is 128 long").
 *
 * Cost. The family has a budget of MEM_BUDGET statement and iteration
 * visits per kernel over at most MEM_POINTS points (two more, the middle and
 * the largest sample, when a TMA box is clipped). A point the budget cuts
 * short is not judged for 001 (the findings of 002/003 it produced stand:
 * they name a concrete execution). A loop whose body only reads (no write,
 * `if` or `let` below it, no inner loop bounded by its variable) with
 * affine starts is walked at its first and last trip only: an affine start
 * takes its extremes there, so bounds are decided exactly (GEMM k-loops
 * cost two trips, not K / 64).
 *
 * Use after release (004). A barrier *gates* the refill of ring buffer m by
 * role W when W waits on it, in a pipelined iteration, before writing m.
 * Inside a loop pipelined on P, a role R that arrives on a ring barrier of P
 * gating another role's refill of m (the `empty` barrier) has given the
 * current stage of m back: a read of m later in the same iteration, in
 * program order (wgmma operand, `load`, TMA store source, any expression),
 * races with the refill — unless R still arrives, after the read in that
 * iteration, on another barrier gating the same refill (K and V released by
 * `kempty` and `vempty`: reading vs after `arrive kempty` is fine while
 * `arrive vempty` follows). A read in the other branch of an `if` holding
 * the arrive is not after it. wgmma issued before the arrive and still in
 * flight is CK-RACE-003's business.
 */
#include "verify_int.h"
#include "../front/eval.h"

#include <stdlib.h>

enum {
	MEM_MAXV = 48,         /* walk variables per kernel */
	MEM_MAXL = 6,          /* enclosing loops remembered per write */
	MEM_TERMS = 6,         /* variable terms of one affine form */
	MEM_BUDGET = 20000,    /* statement and iteration visits per kernel */
	MEM_POINTS = 6,        /* domain points at most */
	MEM_CELLS = 1 << 16,   /* coverage cells per tensor and point */
	MEM_RECS = 1 << 15,    /* writes remembered per point */
};

typedef enum AccKind {
	AK_LOAD, AK_TMA_LOAD, AK_CP_ASYNC, AK_READ, AK_STORE, AK_TMA_STORE, AK_ATOMIC,
} AccKind;

static const char *const acc_verb[] = {
	"load", "TMA load", "cp_async", "read", "store", "TMA store", "atomic add",
};

/* c + sum k[i] * var[slot[i]], coefficients at the current point */
typedef struct Lin {
	bool ok;
	long long c;
	int n;
	int slot[MEM_TERMS];
	long long k[MEM_TERMS];
} Lin;

typedef struct Acc {
	int idx;               /* statement index */
	const Expr *ref;       /* E_INDEX into a global param */
	int pi;                /* index in v->params */
	AccKind kind;
	int scatter;           /* slice holding an index vector, -1 */
	bool oob_reported;
	bool clip;             /* a TMA box marked `clip`: it may run past the tensor's end */
	bool affine;           /* at the current point: every start and length affine */
	/* at the current point */
	Lin st[MAX_RANK], ln[MAX_RANK];
	long long ext[MAX_RANK];
	bool ext_ok[MAX_RANK];
} Acc;

typedef struct Tensor {
	bool written, atomic, scatter, read;
	bool cov_reported, dup_reported;
	bool undecided;        /* at the current point: a write the model could not place */
} Tensor;

/* one decided write at the current point */
typedef struct Rec {
	int acc, role;
	long long tile[3];
	int nl;
	int loop[MEM_MAXL];    /* enclosing loop statements, outermost first */
	long long lv[MEM_MAXL];
	long long lo[MAX_RANK], hi[MAX_RANK];
} Rec;

typedef struct Mem {
	Sched *v;
	const Decl *grid;
	int ngrid;
	const char *names[MEM_MAXV];
	int nnames;
	int *slot_of_stmt;     /* [nst]: the variable a for/let binds, -1 */
	Acc *acc;
	int nacc, capacc;
	int *acc_first, *acc_n;    /* [nst] */
	bool *has_acc;         /* [nst]: the subtree holds an access */
	bool *reads_only;      /* [nst] of a for: no write, `if` or `let` below it, and no
	                        * loop below it bounded by its variable */
	bool *extremes;        /* [nst] of a for, at the current point: reads_only and every
	                        * access below affine, so its first and last trip decide */
	Tensor *t;             /* [nparams] */
	Lin *sa, *sb, *sc;     /* [nst] at the current point: for lo/hi/step, let value,
	                        * the two sides of an `if` comparison */
	long budget;
	/* the current point */
	SchedEnv pt;
	long long gext[3];
	Rec *rec;
	int nrec, caprec;
	bool overflow;         /* more writes than MEM_RECS */
	bool incomplete;       /* the budget ran out inside the point */
} Mem;

/* the walk through one role program for one tile */
typedef struct Walk {
	bool bound[MEM_MAXV];
	long long val[MEM_MAXV];
	int nl;
	int loop[MEM_MAXL];
	long long lv[MEM_MAXL];
	int undecided;         /* enclosing loops/ifs the model cannot evaluate */
	int role;
	long long tile[3];
} Walk;

/* ---- walk variables and affine forms ---- */

static int slot_of(const Mem *m, const char *name)
{
	for (int i = 0; name && i < m->nnames; i++)
		if (strcmp(m->names[i], name) == 0)
			return i;
	return -1;
}

static int add_name(Mem *m, const char *name)
{
	int s = slot_of(m, name);
	if (s >= 0 || !name || m->nnames >= MEM_MAXV)
		return s;
	m->names[m->nnames] = name;
	return m->nnames++;
}

static bool mentions_slot(const Mem *m, const Expr *e)
{
	const char *ids[64];
	int n = sched_idents(e, ids, 64);
	for (int i = 0; i < n; i++)
		if (slot_of(m, ids[i]) >= 0)
			return true;
	return false;
}

static bool lin_scale(Lin *a, long long s)
{
	if (__builtin_mul_overflow(a->c, s, &a->c))
		return false;
	for (int i = 0; i < a->n; i++)
		if (__builtin_mul_overflow(a->k[i], s, &a->k[i]))
			return false;
	return true;
}

static bool lin_add(Lin *a, const Lin *b, long long sign)
{
	long long c;
	if (__builtin_mul_overflow(b->c, sign, &c) || __builtin_add_overflow(a->c, c, &a->c))
		return false;
	for (int j = 0; j < b->n; j++) {
		long long k;
		if (__builtin_mul_overflow(b->k[j], sign, &k))
			return false;
		int i = 0;
		while (i < a->n && a->slot[i] != b->slot[j])
			i++;
		if (i == a->n) {
			if (a->n == MEM_TERMS)
				return false;
			a->slot[a->n] = b->slot[j];
			a->k[a->n++] = 0;
		}
		if (__builtin_add_overflow(a->k[i], k, &a->k[i]))
			return false;
	}
	return true;
}

/* Affine form of e in the walk variables, var-free parts evaluated at the point. */
static bool lin_build(const Mem *m, const Expr *e, Lin *o, int depth)
{
	memset(o, 0, sizeof *o);
	if (!e || depth > 64)
		return false;
	Lin b;
	switch (e->kind) {
	case E_INT:
		o->c = e->ival;
		return o->ok = true;
	case E_IDENT: {
		int s = slot_of(m, e->name);
		if (s >= 0) {
			o->n = 1;
			o->slot[0] = s;
			o->k[0] = 1;
			return o->ok = true;
		}
		break;
	}
	case E_UNARY:
		if (e->op == '-' && lin_build(m, e->lhs, o, depth + 1))
			return o->ok = lin_scale(o, -1);
		break;
	case E_BINARY:
		if (e->op == '+' || e->op == '-') {
			if (lin_build(m, e->lhs, o, depth + 1) && lin_build(m, e->rhs, &b, depth + 1))
				return o->ok = lin_add(o, &b, e->op == '-' ? -1 : 1);
		} else if (e->op == '*') {
			Lin a;
			if (lin_build(m, e->lhs, &a, depth + 1) && lin_build(m, e->rhs, &b, depth + 1)) {
				if (a.n == 0) {
					*o = b;
					return o->ok = lin_scale(o, a.c);
				}
				if (b.n == 0) {
					*o = a;
					return o->ok = lin_scale(o, b.c);
				}
			}
		}
		break;
	default:
		break;
	}
	memset(o, 0, sizeof *o);
	if (mentions_slot(m, e))
		return false;
	return o->ok = sched_eval(m->v, &m->pt, e, &o->c);
}

static long long lin_coef(const Lin *l, int slot)
{
	for (int i = 0; l->ok && i < l->n; i++)
		if (l->slot[i] == slot)
			return l->k[i];
	return 0;
}

static void bind(Walk *w, int s, long long x)
{
	if (s < 0)
		return;
	w->bound[s] = true;
	w->val[s] = x;
}

static void unbind(Walk *w, int s)
{
	if (s >= 0)
		w->bound[s] = false;
}

/* e evaluated by name in the walk (the fallback for forms that are not affine) */
static bool eval_named(const Mem *m, const Walk *w, const Expr *e, long long *out)
{
	SchedEnv env = m->pt;
	for (int i = 0; i < m->nnames; i++)
		if (w->bound[i])
			sched_env_set(&env, m->names[i], w->val[i]);
	return sched_eval(m->v, &env, e, out);
}

/* value of expression e (compiled as l) in the walk; false when undecided */
static bool value(const Mem *m, const Walk *w, const Lin *l, const Expr *e, long long *out)
{
	if (!l->ok)
		return eval_named(m, w, e, out);
	long long x = l->c;
	for (int i = 0; i < l->n; i++) {
		long long t;
		if (!w->bound[l->slot[i]] || __builtin_mul_overflow(l->k[i], w->val[l->slot[i]], &t) ||
		    __builtin_add_overflow(x, t, &x))
			return false;
	}
	*out = x;
	return true;
}

static bool is_compare(const Expr *e)
{
	return e && e->kind == E_BINARY && (e->op == '<' || e->op == '>' || e->op == OP_LE ||
	                                    e->op == OP_GE || e->op == OP_EQ || e->op == OP_NE);
}

/* the condition of if statement idx in the walk */
static bool cond_value(const Mem *m, const Walk *w, int idx, long long *out)
{
	const Expr *c = m->v->st[idx].s->cond;
	long long a, b;
	if (is_compare(c) && m->sa[idx].ok && m->sb[idx].ok && value(m, w, &m->sa[idx], c->lhs, &a) &&
	    value(m, w, &m->sb[idx], c->rhs, &b))
		return eval_binop(c->op, a, b, out);
	return eval_named(m, w, c, out);
}

/* one past the then-branch of if statement index f */
static int then_end(const Sched *v, int f)
{
	const Stmt *s = v->st[f].s;
	if (s->nbody == 0)
		return f + 1;
	int last = sched_stmt_index(v, s->body[s->nbody - 1]);
	return last >= 0 ? v->st[last].end : f + 1;
}

/* ---- collecting the accesses ---- */

static int param_index(const Sched *v, const Decl *p)
{
	for (int i = 0; i < v->nparams; i++)
		if (v->params[i] == p)
			return i;
	return -1;
}

static void add_acc(Mem *m, int idx, const Expr *ref, AccKind kind)
{
	Sched *v = m->v;
	Decl *p = sched_param(v, sched_refname(ref));
	if (!ref || ref->kind != E_INDEX || !p || p->space != SP_GLOBAL || p->rank > MAX_RANK ||
	    ref->nslices != p->rank)
		return;
	if (m->nacc == m->capacc) {
		m->capacc = m->capacc ? 2 * m->capacc : 32;
		m->acc = xrealloc(m->acc, sizeof(Acc) * (size_t)m->capacc);
	}
	Acc *a = &m->acc[m->nacc++];
	memset(a, 0, sizeof *a);
	a->idx = idx;
	a->ref = ref;
	a->pi = param_index(v, p);
	a->kind = kind;
	a->scatter = -1;
	{
		const Stmt *s = v->st[idx].s;
		a->clip = (kind == AK_TMA_LOAD && s->clip_src) || (kind == AK_TMA_STORE && s->clip_dst);
	}
	for (int d = 0; d < ref->nslices; d++) {
		const char *ids[32];
		int n = sched_idents(ref->slices[d].start, ids, 32);
		for (int q = 0; q < n; q++)
			if (sched_frag(v, ids[q]) >= 0)
				a->scatter = d;
	}
	Tensor *t = &m->t[a->pi];
	if (kind == AK_STORE || kind == AK_TMA_STORE) {
		t->written = true;
		if (a->scatter >= 0)
			t->scatter = true;
	} else if (kind == AK_ATOMIC) {
		t->atomic = true;
	} else {
		t->read = true;
	}
}

static void collect_reads(Mem *m, int idx, const Expr *e, int depth);

static void collect_ref(Mem *m, int idx, const Expr *ref, AccKind kind, int depth)
{
	if (!ref || depth > 200)
		return;
	add_acc(m, idx, ref, kind);
	if (ref->kind == E_INDEX)
		for (int d = 0; d < ref->nslices; d++) {
			collect_reads(m, idx, ref->slices[d].start, depth + 1);
			collect_reads(m, idx, ref->slices[d].len, depth + 1);
		}
}

static void collect_reads(Mem *m, int idx, const Expr *e, int depth)
{
	if (!e || depth > 200)
		return;
	if (e->kind == E_INDEX) {
		collect_ref(m, idx, e, AK_READ, depth + 1);
		return;
	}
	if (e->kind == E_CALL && e->name && strcmp(e->name, "fetch_add") == 0 && e->nargs >= 1) {
		collect_ref(m, idx, e->args[0], AK_ATOMIC, depth + 1);
		for (int i = 1; i < e->nargs; i++)
			collect_reads(m, idx, e->args[i], depth + 1);
		return;
	}
	collect_reads(m, idx, e->lhs, depth + 1);
	collect_reads(m, idx, e->rhs, depth + 1);
	for (int i = 0; i < e->nargs; i++)
		collect_reads(m, idx, e->args[i], depth + 1);
}

static void collect(Mem *m)
{
	Sched *v = m->v;
	for (int i = 0; i < v->nst; i++) {
		const Stmt *s = v->st[i].s;
		m->acc_first[i] = m->nacc;
		m->slot_of_stmt[i] = -1;
		if (v->st[i].role < 0)
			continue;
		switch (s->kind) {
		case S_STORE:
		case S_ATOMIC:
			if (sched_param(v, sched_refname(s->dst)))
				collect_ref(m, i, s->dst, s->kind == S_STORE ? AK_STORE : AK_ATOMIC, 0);
			collect_reads(m, i, s->src, 0);
			break;
		case S_TMA_STORE:
			collect_ref(m, i, s->dst, AK_TMA_STORE, 0);
			break;
		case S_TMA_LOAD:
			collect_ref(m, i, s->src, AK_TMA_LOAD, 0);
			break;
		case S_CP_ASYNC:
			collect_ref(m, i, s->src, AK_CP_ASYNC, 0);
			break;
		case S_LOAD:
			if (sched_param(v, sched_refname(s->src)))
				collect_ref(m, i, s->src, AK_LOAD, 0);
			break;
		case S_LET:
			m->slot_of_stmt[i] = add_name(m, s->name);
			collect_reads(m, i, s->src, 0);
			break;
		case S_ASSIGN:
			collect_reads(m, i, s->src, 0);
			break;
		case S_IF:
			collect_reads(m, i, s->cond, 0);
			break;
		case S_FOR:
			m->slot_of_stmt[i] = add_name(m, s->name);
			collect_reads(m, i, s->lo, 0);
			collect_reads(m, i, s->hi, 0);
			collect_reads(m, i, s->step, 0);
			break;
		default:
			break;
		}
		m->acc_n[i] = m->nacc - m->acc_first[i];
	}
	int *upto = xcalloc((size_t)v->nst + 1, sizeof(int));
	for (int i = 0; i < v->nst; i++)
		upto[i + 1] = upto[i] + m->acc_n[i];
	for (int i = 0; i < v->nst; i++)
		m->has_acc[i] = upto[v->st[i].end] > upto[i];
	free(upto);
	for (int i = 0; i < v->nst; i++) {
		const Stmt *f = v->st[i].s;
		if (f->kind != S_FOR)
			continue;
		bool ok = f->name != NULL;
		for (int j = i + 1; ok && j < v->st[i].end; j++) {
			const Stmt *s = v->st[j].s;
			if (s->kind == S_IF || s->kind == S_LET)
				ok = false;
			if (s->kind == S_FOR && (sched_mentions(s->lo, f->name) || sched_mentions(s->hi, f->name) ||
			                         (s->step && sched_mentions(s->step, f->name))))
				ok = false;
			for (int q = 0; q < m->acc_n[j]; q++) {
				AccKind k = m->acc[m->acc_first[j] + q].kind;
				if (k == AK_STORE || k == AK_TMA_STORE)
					ok = false;
			}
		}
		m->reads_only[i] = ok;
	}
}

/* ---- describing executions ---- */

static void put_tile(const Mem *m, StrBuf *b, const long long *tile)
{
	sb_puts(b, "(");
	for (int g = 0; g < m->ngrid; g++)
		sb_printf(b, "%s%s=%lld", g ? ", " : "", m->v->gridvars[g], tile[g]);
	sb_puts(b, ")");
}

static const char *cta_word(const Mem *m)
{
	return m->v->persistent ? "tile" : "CTA";
}

/* "CTA (bn=0, bm=1)" or "the CTA" without a grid */
static void put_cta(const Mem *m, StrBuf *b, const long long *tile)
{
	if (m->ngrid == 0) {
		sb_puts(b, "the CTA");
		return;
	}
	sb_printf(b, "%s ", cta_word(m));
	put_tile(m, b, tile);
}

static void put_loops(const Mem *m, StrBuf *b, int nl, const int *loop, const long long *lv)
{
	for (int i = 0; i < nl; i++)
		sb_printf(b, "%s%s=%lld", i ? ", " : "", m->v->st[loop[i]].s->name, lv[i]);
}

/* "M=128, N=256": the dims the tensor's shape and the grid mention, at the point */
static void put_point(const Mem *m, StrBuf *b, const Decl *p)
{
	const char *ids[64];
	int n = 0;
	for (int d = 0; p && d < p->rank; d++)
		n += sched_idents(p->shape[d], ids + n, 64 - n);
	for (int g = 0; m->grid && g < m->ngrid && n < 64; g++)
		n += sched_idents(m->grid->exprs[g], ids + n, 64 - n);
	int put = 0;
	for (int i = 0; i < n; i++) {
		bool dup = false;
		for (int j = 0; j < i; j++)
			dup |= strcmp(ids[i], ids[j]) == 0;
		long long x;
		const Expr id = {.kind = E_IDENT, .name = ids[i]};
		if (dup || !sched_eval(m->v, &m->pt, &id, &x))
			continue;
		bool isdim = false;
		for (int q = 0; q < m->v->ndims; q++)
			isdim |= strcmp(m->v->dims[q], ids[i]) == 0;
		if (isdim)
			sb_printf(b, "%s%s=%lld", put++ ? ", " : "", ids[i], x);
	}
	if (!put)
		sb_puts(b, "every point");
}

static void put_grid(const Mem *m, StrBuf *b)
{
	if (!m->grid) {
		sb_puts(b, "no grid: one CTA");
		return;
	}
	sb_printf(b, "grid %s(", m->v->persistent ? "persistent " : "");
	for (int g = 0; g < m->ngrid; g++)
		sb_printf(b, "%s%s", g ? ", " : "", sched_exprstr(m->v, m->grid->exprs[g]));
	sb_puts(b, ")");
}

/* T[lo +: n, ...] over the given box (points as one index) */
static void put_box(const Mem *m, StrBuf *b, const Acc *a, const long long *lo, const long long *hi)
{
	const Expr *ref = a->ref;
	sb_printf(b, "%s[", m->v->params[a->pi]->name);
	for (int d = 0; d < ref->nslices; d++) {
		if (d)
			sb_puts(b, ", ");
		if (d == a->scatter)
			sb_puts(b, sched_exprstr(m->v, ref->slices[d].start));
		else if (ref->slices[d].kind == SL_POINT && hi[d] == lo[d] + 1)
			sb_printf(b, "%lld", lo[d]);
		else
			sb_printf(b, "%lld +: %lld", lo[d], hi[d] - lo[d]);
	}
	sb_puts(b, "]");
}

static const char *dim_word(int rank, int d, bool plural)
{
	if (rank == 2)
		return d == 0 ? (plural ? "rows" : "row") : (plural ? "columns" : "column");
	return plural ? "indices" : "index";
}

/* the slice length of dim d at the current point (1 for a point, the extent for `:`) */
static long long slice_len(const Acc *a, int d)
{
	const Slice *sl = &a->ref->slices[d];
	if (sl->kind == SL_POINT)
		return 1;
	if (sl->kind == SL_ALL)
		return a->ext_ok[d] ? a->ext[d] : -1;
	return a->ln[d].ok && a->ln[d].n == 0 ? a->ln[d].c : -1;
}

/* ---- 003: outside the tensor ---- */

static void oob_hint(const Mem *m, const Acc *a, int d, StrBuf *h)
{
	const Decl *p = m->v->params[a->pi];
	const char *ext = sched_exprstr(m->v, p->shape[d]);
	long long len = slice_len(a, d);
	for (int g = 0; g < m->ngrid; g++) {
		long long k = lin_coef(&a->st[d], g);
		if (k == 0)
			continue;
		const char *gv = m->v->gridvars[g];
		if (len > (k < 0 ? -k : k)) {
			sb_printf(h, "the slice is %lld long but the start steps by %lld per %s: use `%s * %lld +: "
			          "%lld` with %s / %lld CTAs along %s", len, k, gv, gv, len, len, ext, len, gv);
			return;
		}
		sb_printf(h, "the grid extent along %s (%s = %lld) times the step %lld overruns %s = %lld: "
		          "use %s / %lld CTAs along %s, or require %s %% %lld == 0 in the domain", gv,
		          sched_exprstr(m->v, m->grid->exprs[g]), m->gext[g], k, ext, a->ext[d], ext, k, gv,
		          ext, k);
		return;
	}
	sb_printf(h, "keep the slice inside 0 .. %s - 1 for every CTA and iteration: fix its start or "
	          "length, the loop bounds, or tighten the domain", ext);
}

static void report_oob(Mem *m, const Walk *w, Acc *a, int d, const long long *lo, const long long *hi)
{
	Sched *v = m->v;
	const Decl *p = v->params[a->pi];
	a->oob_reported = true;
	StrBuf box = {0}, who = {0}, at = {0}, it = {0}, h = {0};
	put_box(m, &box, a, lo, hi);
	put_cta(m, &who, w->tile);
	if (w->nl) {
		sb_puts(&who, " at ");
		put_loops(m, &who, w->nl, w->loop, w->lv);
		put_loops(m, &it, w->nl, w->loop, w->lv);
	}
	put_point(m, &at, p);
	const char *tail = a->kind == AK_TMA_LOAD ? " (TMA fills that part with zeros)"
	                 : a->kind == AK_TMA_STORE ? " (TMA drops that part of the tile)" : "";
	bool before = lo[d] < 0;
	long long olo = before ? lo[d] : a->ext[d], ohi = before ? (hi[d] < 0 ? hi[d] : 0) : hi[d];
	Diag *dg = v_report(v, "CK-MEM-003", a->ref->slices[d].span, v->st[a->idx].role, p->name, -1,
	                    v->st[a->idx].ppipe, "the %s of %s in %s reaches %s dim %d of '%s' (%s = %lld "
	                    "at %s): %s %lld..%lld are outside%s", acc_verb[a->kind], sb_str(&box),
	                    sb_str(&who), before ? "before the start of" : "past the end of", d, p->name,
	                    sched_exprstr(v, p->shape[d]), a->ext[d], sb_str(&at),
	                    dim_word(p->rank, d, true), olo, ohi - 1, tail);
	diag_set(&dg->condition, "0 <= start and start + length <= %s along dim %d of %s, for every CTA "
	         "and iteration", sched_exprstr(v, p->shape[d]), d, p->name);
	oob_hint(m, a, d, &h);
	if (!before && (a->kind == AK_TMA_LOAD || a->kind == AK_TMA_STORE))
		sb_printf(&h, "; or, when the last tile is meant to be ragged, mark the box `clip` (%s)",
		          a->kind == AK_TMA_LOAD ? "`tma buf <- G[...] clip signal B`" : "`tma G[...] clip <- buf`");
	diag_set(&dg->hint, "%s", sb_str(&h));
	if (w->nl)
		diag_set(&dg->iter, "%s", sb_str(&it));
	diag_related(dg, p->span, "'%s' declared here", p->name);
	sb_free(&box);
	sb_free(&who);
	sb_free(&at);
	sb_free(&it);
	sb_free(&h);
}

/* ---- the walk ---- */

static void visit(Mem *m, Walk *w, Acc *a)
{
	const Expr *ref = a->ref;
	long long lo[MAX_RANK], hi[MAX_RANK];
	bool known[MAX_RANK], all = true;
	for (int d = 0; d < ref->nslices; d++) {
		const Slice *sl = &ref->slices[d];
		long long st, len = 1;
		known[d] = false;
		if (d == a->scatter) {
		} else if (sl->kind == SL_ALL) {
			if (a->ext_ok[d]) {
				lo[d] = 0;
				hi[d] = a->ext[d];
				known[d] = true;
			}
		} else if (value(m, w, &a->st[d], sl->start, &st) &&
		           (sl->kind == SL_POINT || value(m, w, &a->ln[d], sl->len, &len)) &&
		           !__builtin_add_overflow(st, len, &hi[d])) {
			lo[d] = st;
			known[d] = true;
		}
		all &= known[d];
	}
	if (!w->undecided && !a->oob_reported)
		for (int d = 0; d < ref->nslices; d++)
			if (known[d] && a->ext_ok[d] && (lo[d] < 0 || (hi[d] > a->ext[d] && !a->clip))) {
				report_oob(m, w, a, d, lo, hi);
				break;
			}
	if (a->clip)   /* what a clipped box writes: its part inside the tensor (maybe nothing) */
		for (int d = 0; d < ref->nslices; d++)
			if (known[d] && a->ext_ok[d] && hi[d] > a->ext[d]) {
				hi[d] = a->ext[d];
				if (lo[d] > hi[d])
					lo[d] = hi[d];
			}
	if (a->kind != AK_STORE && a->kind != AK_TMA_STORE)
		return;
	Tensor *t = &m->t[a->pi];
	if (t->atomic || t->scatter)
		return;
	if (w->undecided || !all) {
		t->undecided = true;
		return;
	}
	if (m->nrec == m->caprec) {
		if (m->caprec >= MEM_RECS) {
			m->overflow = true;
			return;
		}
		m->caprec = m->caprec ? 2 * m->caprec : 64;
		m->rec = xrealloc(m->rec, sizeof(Rec) * (size_t)m->caprec);
	}
	Rec *r = &m->rec[m->nrec++];
	r->acc = (int)(a - m->acc);
	r->role = w->role;
	memcpy(r->tile, w->tile, sizeof r->tile);
	r->nl = w->nl;
	memcpy(r->loop, w->loop, sizeof r->loop);
	memcpy(r->lv, w->lv, sizeof r->lv);
	memcpy(r->lo, lo, sizeof lo);
	memcpy(r->hi, hi, sizeof hi);
}

static void visit_stmt(Mem *m, Walk *w, int idx)
{
	for (int q = 0; q < m->acc_n[idx]; q++) {
		m->budget--;
		visit(m, w, &m->acc[m->acc_first[idx] + q]);
	}
}

static void walk_range(Mem *m, Walk *w, int lo, int hi, int depth);

static void walk_for(Mem *m, Walk *w, int idx, int depth)
{
	Sched *v = m->v;
	const Stmt *s = v->st[idx].s;
	int sl = m->slot_of_stmt[idx], end = v->st[idx].end;
	bool had = sl >= 0 && w->bound[sl];
	long long old = had ? w->val[sl] : 0, lo, hi, step = 1;
	bool ok = value(m, w, &m->sa[idx], s->lo, &lo) && value(m, w, &m->sb[idx], s->hi, &hi) &&
	          (!s->step || value(m, w, &m->sc[idx], s->step, &step)) && step > 0;
	bool keep = w->nl < MEM_MAXL;
	if (!ok) {
		/* trips unknown: the body runs an unknown number of times, its variable unbound */
		unbind(w, sl);
		w->undecided++;
		walk_range(m, w, idx + 1, end, depth + 1);
		w->undecided--;
	} else {
		if (keep)
			w->loop[w->nl++] = idx;
		if (m->extremes[idx] && hi > lo) {
			/* affine reads only: the first and the last trip bound every start */
			long long last = lo + (hi - lo - 1) / step * step;
			for (int q = 0; q < (last > lo ? 2 : 1); q++) {
				long long x = q ? last : lo;
				m->budget--;
				bind(w, sl, x);
				if (keep)
					w->lv[w->nl - 1] = x;
				walk_range(m, w, idx + 1, end, depth + 1);
			}
		} else {
			for (long long x = lo; x < hi;) {
				if (m->budget-- <= 0) {
					m->incomplete = true;
					break;
				}
				bind(w, sl, x);
				if (keep)
					w->lv[w->nl - 1] = x;
				walk_range(m, w, idx + 1, end, depth + 1);
				if (__builtin_add_overflow(x, step, &x))
					break;
			}
		}
		if (keep)
			w->nl--;
	}
	if (had)
		bind(w, sl, old);
	else
		unbind(w, sl);
}

static void walk_stmt(Mem *m, Walk *w, int idx, int depth)
{
	Sched *v = m->v;
	const Stmt *s = v->st[idx].s;
	if (depth > 64)
		return;
	if (m->budget <= 0) {
		m->incomplete = true;
		return;
	}
	if (s->kind == S_LET) {
		visit_stmt(m, w, idx);
		long long x;
		if (value(m, w, &m->sa[idx], s->src, &x))
			bind(w, m->slot_of_stmt[idx], x);
		else
			unbind(w, m->slot_of_stmt[idx]);
		return;
	}
	if (!m->has_acc[idx])
		return;
	m->budget--;
	visit_stmt(m, w, idx);
	switch (s->kind) {
	case S_FOR:
		walk_for(m, w, idx, depth);
		break;
	case S_IF: {
		long long c;
		int te = then_end(v, idx), end = v->st[idx].end;
		if (cond_value(m, w, idx, &c)) {
			if (c)
				walk_range(m, w, idx + 1, te, depth + 1);
			else
				walk_range(m, w, te, end, depth + 1);
		} else {
			w->undecided++;
			walk_range(m, w, idx + 1, end, depth + 1);
			w->undecided--;
		}
		break;
	}
	default:
		break;
	}
}

/* the statements at indices [lo, hi), siblings in preorder */
static void walk_range(Mem *m, Walk *w, int lo, int hi, int depth)
{
	for (int j = lo; j < hi; j = m->v->st[j].end)
		walk_stmt(m, w, j, depth);
}

/* ---- 001 and 002 at one point ---- */

/* insert x into the sorted distinct values e[0..*n) */
static void edge_add(long long *e, int *n, long long x)
{
	int lo = 0, hi = *n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (e[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < *n && e[lo] == x)
		return;
	memmove(&e[lo + 1], &e[lo], sizeof *e * (size_t)(*n - lo));
	e[lo] = x;
	(*n)++;
}

static int find_edge(const long long *e, int n, long long x)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (e[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* who wrote: the parts of r that differ from o (all of them when o is NULL) */
static void put_who(const Mem *m, StrBuf *b, const Rec *r, const Rec *o)
{
	bool tile = !o || memcmp(r->tile, o->tile, sizeof r->tile) != 0;
	bool role = !o || r->role != o->role || r->acc != o->acc;
	bool loops = r->nl > 0 && (!o || !(r->nl == o->nl && memcmp(r->lv, o->lv, sizeof(long long) *
	                                                             (size_t)r->nl) == 0));
	if (tile || (!role && !loops))
		put_cta(m, b, r->tile);
	if (role) {
		if (b->len)
			sb_puts(b, " ");
		sb_printf(b, "role '%s'", m->v->roles[r->role].name);
		if (o && r->role == o->role)
			sb_printf(b, " (line %d)", m->v->st[m->acc[r->acc].idx].s->span.line);
	}
	if (loops) {
		sb_puts(b, b->len ? " at " : "iteration ");
		put_loops(m, b, r->nl, r->loop, r->lv);
	}
}

static void dup_hint(const Mem *m, const Rec *x, const Rec *y, StrBuf *h)
{
	const Acc *a = &m->acc[y->acc];
	const char *tn = m->v->params[a->pi]->name;
	if (x->acc != y->acc) {
		sb_printf(h, "make the regions of the two writes of '%s' disjoint (or accumulate with "
		          "atomic_add)", tn);
		return;
	}
	/* the variable that tells the two executions apart */
	int s = -1;
	for (int g = 0; g < m->ngrid && s < 0; g++)
		if (x->tile[g] != y->tile[g])
			s = g;
	for (int i = 0; i < x->nl && i < y->nl && s < 0; i++)
		if (x->lv[i] != y->lv[i])
			s = m->slot_of_stmt[x->loop[i]];
	if (s < 0) {
		sb_printf(h, "give every CTA and iteration its own part of '%s'", tn);
		return;
	}
	const char *vn = m->names[s];
	bool depends = false, affine = true;
	for (int d = 0; d < a->ref->nslices; d++) {
		if (a->ref->slices[d].kind == SL_ALL)
			continue;
		affine &= a->st[d].ok;
		long long k = lin_coef(&a->st[d], s), len = slice_len(a, d);
		if (k != 0)
			depends = true;
		if (k != 0 && len > (k < 0 ? -k : k)) {
			sb_printf(h, "dim %d advances by %lld per %s but its slice is %lld long: use `%s * %lld +: "
			          "%lld`", d, k, vn, len, vn, len, len);
			return;
		}
	}
	if (affine && !depends)
		sb_printf(h, "no slice start of '%s' depends on %s, so every %s stores the same elements: "
		          "index the tile by %s, or accumulate with atomic_add", tn, vn,
		          s < m->ngrid ? "CTA along it" : "iteration", vn);
	else
		sb_printf(h, "give every CTA and iteration its own part of '%s' (or accumulate with "
		          "atomic_add)", tn);
}

static void report_dup(Mem *m, const Rec *x, const Rec *y)
{
	Sched *v = m->v;
	const Acc *a = &m->acc[y->acc];
	const Decl *p = v->params[a->pi];
	long long lo[MAX_RANK], hi[MAX_RANK];
	for (int d = 0; d < p->rank; d++) {
		lo[d] = x->lo[d] > y->lo[d] ? x->lo[d] : y->lo[d];
		hi[d] = x->hi[d] < y->hi[d] ? x->hi[d] : y->hi[d];
	}
	StrBuf wx = {0}, wy = {0}, box = {0}, at = {0}, gr = {0}, h = {0};
	put_who(m, &wx, x, y);
	put_who(m, &wy, y, x);
	put_box(m, &box, a, lo, hi);
	put_point(m, &at, p);
	put_grid(m, &gr);
	bool same_tile = memcmp(x->tile, y->tile, sizeof x->tile) == 0;
	const char *ctx = "";
	StrBuf in = {0};
	if (same_tile && m->ngrid > 0) {
		sb_puts(&in, " of ");
		put_cta(m, &in, x->tile);
		ctx = sb_str(&in);
	}
	if (x->acc != y->acc && same_tile && x->role != y->role && x->nl == 0 && y->nl == 0) {
		sb_free(&wx);
		sb_free(&wy);
		sb_printf(&wx, "roles '%s'", v->roles[x->role].name);
		sb_printf(&wy, "'%s'", v->roles[y->role].name);
	}
	if (x->acc == y->acc && !same_tile && m->ngrid > 0 && x->nl == y->nl &&
	    memcmp(x->lv, y->lv, sizeof(long long) * (size_t)x->nl) == 0) {
		sb_free(&wx);
		sb_free(&wy);
		sb_printf(&wx, "%ss ", cta_word(m));
		put_tile(m, &wx, x->tile);
		put_tile(m, &wy, y->tile);
	}
	if (x->acc == y->acc && same_tile && x->nl > 0) {
		/* one statement, two iterations: "iterations r=0 and r=1 of role 'work'" */
		sb_free(&wx);
		sb_free(&wy);
		sb_puts(&wx, "iterations ");
		put_loops(m, &wx, x->nl, x->loop, x->lv);
		put_loops(m, &wy, y->nl, y->loop, y->lv);
		sb_printf(&wy, " of role '%s'", v->roles[y->role].name);
		if (m->ngrid > 0) {
			sb_free(&in);
			sb_puts(&in, " in ");
			put_cta(m, &in, x->tile);
			ctx = sb_str(&in);
		}
	}
	Diag *d = v_report(v, "CK-MEM-002", v->st[a->idx].s->span, y->role, p->name, -1, -1,
	                   "%s and %s%s both %s %s at %s (%s)", sb_str(&wx), sb_str(&wy), ctx,
	                   a->kind == AK_TMA_STORE ? "TMA-store" : "store", sb_str(&box), sb_str(&at),
	                   sb_str(&gr));
	diag_set(&d->condition, "every element of %s is written by one CTA, role and iteration only "
	         "(several writers need atomic_add)", p->name);
	dup_hint(m, x, y, &h);
	diag_set(&d->hint, "%s", sb_str(&h));
	if (y->nl) {
		StrBuf it = {0};
		put_loops(m, &it, y->nl, y->loop, y->lv);
		diag_set(&d->iter, "%s", sb_str(&it));
		sb_free(&it);
	}
	if (x->acc != y->acc)
		diag_related(d, v->st[m->acc[x->acc].idx].s->span, "the other write of %s", sb_str(&box));
	else if (!same_tile && m->grid)
		diag_related(d, m->grid->span, "the grid that runs it in every CTA");
	else if (y->nl)
		diag_related(d, v->st[y->loop[y->nl - 1]].s->span, "the loop that repeats it");
	sb_free(&wx);
	sb_free(&wy);
	sb_free(&box);
	sb_free(&at);
	sb_free(&gr);
	sb_free(&h);
	sb_free(&in);
}

/* Why dim (every dim when -1) is not covered, read from the affine forms of the writes. */
static void cov_hint(const Mem *m, int pi, int only, StrBuf *h)
{
	const Decl *p = m->v->params[pi];
	for (int g = 0; g < m->ngrid && only < 0; g++)
		if (m->gext[g] == 0) {
			sb_printf(h, "the grid has %s = 0 CTAs along %s here: require the domain to make it at "
			          "least 1 (or divide by a smaller tile)", sched_exprstr(m->v, m->grid->exprs[g]),
			          m->v->gridvars[g]);
			return;
		}
	for (int dim = only < 0 ? 0 : only; dim < p->rank && (only < 0 || dim == only); dim++)
	for (int i = 0; i < m->nacc; i++) {
		const Acc *a = &m->acc[i];
		if (a->pi != pi || (a->kind != AK_STORE && a->kind != AK_TMA_STORE) ||
		    a->ref->slices[dim].kind == SL_ALL || !a->st[dim].ok)
			continue;
		const char *ext = sched_exprstr(m->v, p->shape[dim]);
		long long len = slice_len(a, dim);
		if (a->st[dim].n == 0 && len > 0 && len < a->ext[dim]) {
			sb_printf(h, "the write at line %d covers only %lld..%lld of dim %d (%s = %lld) and no grid "
			          "coordinate or loop variable moves it: write the rest too, or widen the slice",
			          m->v->st[a->idx].s->span.line, a->st[dim].c, a->st[dim].c + len - 1, dim, ext,
			          a->ext[dim]);
			return;
		}
		for (int g = 0; g < m->ngrid; g++) {
			long long k = lin_coef(&a->st[dim], g);
			if (k == 0 || len <= 0)
				continue;
			const char *gv = m->v->gridvars[g];
			/* every write of the tensor moving with g by the same step, together */
			long long sum = 0;
			int nw = 0;
			for (int j = 0; j < m->nacc; j++) {
				const Acc *b = &m->acc[j];
				if (b->pi == pi && (b->kind == AK_STORE || b->kind == AK_TMA_STORE) &&
				    b->ref->slices[dim].kind != SL_ALL && lin_coef(&b->st[dim], g) == k) {
					sum += slice_len(b, dim);
					nw++;
				}
			}
			if ((k < 0 ? -k : k) > sum) {
				sb_printf(h, "per step of %s the %s of '%s' advance by %lld along dim %d but store "
				          "only %lld: store %lld-long slices, or step by %lld", gv,
				          nw > 1 ? "writes" : "tiles", p->name, k, dim, sum, k, sum);
				return;
			}
			if (nw > 1 && m->t[pi].dup_reported) {
				sb_printf(h, "the writes of '%s' overlap (the CK-MEM-002 finding) instead of tiling "
				          "dim %d: give each its own offset", p->name, dim);
				return;
			}
			if (m->gext[g] * len < a->ext[dim]) {
				sb_printf(h, "the grid has %s = %lld CTA%s along %s, each storing %lld of dim %d: %lld "
				          "of %s = %lld; use %s / %lld CTAs along %s (or longer tiles)",
				          sched_exprstr(m->v, m->grid->exprs[g]), m->gext[g],
				          m->gext[g] == 1 ? "" : "s", gv, len, dim,
				          m->gext[g] * len, ext, a->ext[dim], ext, len, gv);
				return;
			}
		}
	}
	sb_printf(h, "store every element of '%s' once: check the grid extents, the tile offsets and "
	          "lengths, and the loop bounds against its shape", p->name);
}

/* coordinate-compressed cells of one tensor at one point */
typedef struct Cells {
	int rank;
	long long *edge[MAX_RANK];   /* sorted distinct box edges, 0 and the extent included */
	int ne[MAX_RANK];
	long long stride[MAX_RANK];  /* row-major over cells */
	long long n;
	int *owner;                  /* record writing each cell first, -1 */
} Cells;

/* is every cell with index i along dim d unwritten? */
static bool slab_empty(const Cells *c, int d, int i)
{
	long long n = c->n / (c->ne[d] - 1);
	for (long long it = 0; it < n; it++) {
		long long r = it, off = (long long)i * c->stride[d];
		for (int q = c->rank - 1; q >= 0; q--) {
			if (q == d)
				continue;
			off += (r % (c->ne[q] - 1)) * c->stride[q];
			r /= c->ne[q] - 1;
		}
		if (c->owner[off] >= 0)
			return false;
	}
	return true;
}

static void report_cov(Mem *m, int pi, const Cells *c, long long first)
{
	Sched *v = m->v;
	const Decl *p = v->params[pi];
	int rank = c->rank, u[MAX_RANK], dim = -1;
	for (int d = 0; d < rank; d++)
		u[d] = (int)(first / c->stride[d] % (c->ne[d] - 1));
	bool none = true;
	for (long long i = 0; i < c->n && none; i++)
		none = c->owner[i] < 0;
	StrBuf what = {0}, at = {0}, gr = {0}, h = {0};
	if (none) {
		sb_printf(&what, "no element of '%s' is ever", p->name);
	} else {
		for (int d = 0; d < rank && dim < 0; d++)
			if (slab_empty(c, d, u[d]))
				dim = d;
	}
	if (!none && dim >= 0) {
		int lo = u[dim], hi = u[dim] + 1;
		while (lo > 0 && slab_empty(c, dim, lo - 1))
			lo--;
		while (hi < c->ne[dim] - 1 && slab_empty(c, dim, hi))
			hi++;
		sb_printf(&what, "%s %lld..%lld of '%s' (dim %d, %s = %lld) are", dim_word(rank, dim, true),
		          c->edge[dim][lo], c->edge[dim][hi] - 1, p->name, dim,
		          sched_exprstr(v, p->shape[dim]), c->edge[dim][c->ne[dim] - 1]);
		sb_puts(&what, " never");
	} else if (!none) {
		sb_printf(&what, "%s[", p->name);
		for (int d = 0; d < rank; d++)
			sb_printf(&what, "%s%lld +: %lld", d ? ", " : "", c->edge[d][u[d]],
			          c->edge[d][u[d] + 1] - c->edge[d][u[d]]);
		sb_puts(&what, "] is never");
	}
	if (dim < 0) /* the dim whose cell is not the whole extent, for the hint */
		for (int d = 0; d < rank && dim < 0; d++)
			if (c->ne[d] > 2)
				dim = d;
	if (none)
		dim = -1;
	put_point(m, &at, p);
	put_grid(m, &gr);
	int first_w = -1;
	for (int i = 0; i < m->nacc && first_w < 0; i++)
		if (m->acc[i].pi == pi && (m->acc[i].kind == AK_STORE || m->acc[i].kind == AK_TMA_STORE))
			first_w = i;
	const Acc *a = &m->acc[first_w];
	Diag *d = v_report(v, "CK-MEM-001", v->st[a->idx].s->span, v->st[a->idx].role, p->name, -1, -1,
	                   "%s written at %s (%s)", sb_str(&what), sb_str(&at), sb_str(&gr));
	diag_set(&d->condition, "the writes of every CTA, role and iteration together cover %s", p->name);
	cov_hint(m, pi, dim, &h);
	diag_set(&d->hint, "%s", sb_str(&h));
	if (m->grid)
		diag_related(d, m->grid->span, "the grid whose CTAs write '%s'", p->name);
	else
		diag_related(d, p->span, "'%s' declared here", p->name);
	sb_free(&what);
	sb_free(&at);
	sb_free(&gr);
	sb_free(&h);
}

static void check_tensor(Mem *m, int pi)
{
	Sched *v = m->v;
	Tensor *t = &m->t[pi];
	const Decl *p = v->params[pi];
	if (!t->written || t->atomic || t->scatter || p->rank < 1 || p->rank > MAX_RANK)
		return;
	bool want_cov = !t->cov_reported && !t->read && !t->undecided && !m->incomplete && !m->overflow;
	if (t->dup_reported && !want_cov)
		return;
	Cells c = {.rank = p->rank, .n = 1};
	long long ext[MAX_RANK];
	for (int d = 0; d < c.rank; d++)
		if (!sched_eval(v, &m->pt, p->shape[d], &ext[d]) || ext[d] <= 0)
			return;
	int nr = 0;
	for (int i = 0; i < m->nrec; i++)
		nr += m->acc[m->rec[i].acc].pi == pi;
	for (int d = 0; d < c.rank; d++) {
		long long *e = c.edge[d] = xmalloc(sizeof(long long) * (size_t)(2 * nr + 2));
		int u = 0;
		edge_add(e, &u, 0);
		edge_add(e, &u, ext[d]);
		for (int i = 0; i < m->nrec; i++) {
			const Rec *r = &m->rec[i];
			if (m->acc[r->acc].pi != pi)
				continue;
			edge_add(e, &u, r->lo[d] < 0 ? 0 : r->lo[d] > ext[d] ? ext[d] : r->lo[d]);
			edge_add(e, &u, r->hi[d] < 0 ? 0 : r->hi[d] > ext[d] ? ext[d] : r->hi[d]);
		}
		c.ne[d] = u;
		if (c.n > MEM_CELLS / (u - 1))
			c.n = MEM_CELLS + 1;
		else
			c.n *= u - 1;
	}
	if (c.n <= MEM_CELLS) {
		c.stride[c.rank - 1] = 1;
		for (int d = c.rank - 2; d >= 0; d--)
			c.stride[d] = c.stride[d + 1] * (c.ne[d + 1] - 1);
		c.owner = xmalloc(sizeof(int) * (size_t)c.n);
		for (long long i = 0; i < c.n; i++)
			c.owner[i] = -1;
		for (int i = 0; i < m->nrec; i++) {
			const Rec *r = &m->rec[i];
			if (m->acc[r->acc].pi != pi)
				continue;
			int lo[MAX_RANK], hi[MAX_RANK], at[MAX_RANK];
			bool empty = false;
			for (int d = 0; d < c.rank; d++) {
				long long a = r->lo[d] < 0 ? 0 : r->lo[d], b = r->hi[d] > ext[d] ? ext[d] : r->hi[d];
				if (a >= b)
					empty = true;
				lo[d] = at[d] = find_edge(c.edge[d], c.ne[d], a);
				hi[d] = find_edge(c.edge[d], c.ne[d], b);
			}
			if (empty)
				continue;
			for (;;) {
				long long off = 0;
				for (int d = 0; d < c.rank; d++)
					off += at[d] * c.stride[d];
				if (c.owner[off] < 0) {
					c.owner[off] = i;
				} else if (!t->dup_reported) {
					t->dup_reported = true;
					report_dup(m, &m->rec[c.owner[off]], r);
				}
				int d = c.rank - 1;
				while (d >= 0 && ++at[d] == hi[d]) {
					at[d] = lo[d];
					d--;
				}
				if (d < 0)
					break;
			}
		}
		if (want_cov)
			for (long long i = 0; i < c.n; i++)
				if (c.owner[i] < 0) {
					t->cov_reported = true;
					report_cov(m, pi, &c, i);
					break;
				}
		free(c.owner);
	}
	for (int d = 0; d < c.rank; d++)
		free(c.edge[d]);
}

/* ---- the points ---- */

/* Point i of the domain: the model's sample, `X == e` constraints applied,
 * every computable constraint true; false when the point is not in the domain. */
static bool make_point(Mem *m, int i)
{
	Sched *v = m->v;
	sched_env_sample(v, &m->pt, i);
	/* drop the grid coordinates sched_env_sample binds to 0 */
	SchedEnv e = {.n = 0};
	for (int q = 0; q < m->pt.n; q++) {
		bool grid = false;
		for (int g = 0; g < v->ngridvars; g++)
			grid |= strcmp(m->pt.names[q], v->gridvars[g]) == 0;
		if (!grid)
			sched_env_set(&e, m->pt.names[q], m->pt.vals[q]);
	}
	m->pt = e;
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < v->ndomain; c++) {
			const Expr *x = v->domain[c];
			if (x->kind != E_BINARY || x->op != OP_EQ)
				continue;
			const Expr *id = x->lhs, *val = x->rhs;
			if (!id || id->kind != E_IDENT)
				id = x->rhs, val = x->lhs;
			long long y;
			if (id && id->kind == E_IDENT && id->name && val && !sched_mentions(val, id->name) &&
			    sched_eval(v, &m->pt, val, &y)) {
				bool isdim = false;
				for (int d = 0; d < v->ndims; d++)
					isdim |= strcmp(v->dims[d], id->name) == 0;
				if (isdim)
					sched_env_set(&m->pt, id->name, y);
			}
		}
	for (int c = 0; c < v->ndomain; c++) {
		long long y;
		if (sched_eval(v, &m->pt, v->domain[c], &y) && !y)
			return false;
	}
	return true;
}

static void run_point(Mem *m)
{
	Sched *v = m->v;
	for (int i = 0; i < m->nacc; i++) {
		Acc *a = &m->acc[i];
		const Decl *p = v->params[a->pi];
		for (int d = 0; d < a->ref->nslices; d++) {
			const Slice *sl = &a->ref->slices[d];
			a->ext_ok[d] = sched_eval(v, &m->pt, p->shape[d], &a->ext[d]);
			if (d == a->scatter || sl->kind == SL_ALL) {
				a->st[d].ok = a->ln[d].ok = false;
				continue;
			}
			lin_build(m, sl->start, &a->st[d], 0);
			if (sl->kind == SL_RANGE)
				lin_build(m, sl->len, &a->ln[d], 0);
		}
		a->affine = true;
		for (int d = 0; d < a->ref->nslices; d++) {
			const Slice *sl = &a->ref->slices[d];
			if (d != a->scatter && sl->kind != SL_ALL &&
			    (!a->st[d].ok || (sl->kind == SL_RANGE && !a->ln[d].ok)))
				a->affine = false;
		}
	}
	for (int i = 0; i < v->nst; i++) {
		const Stmt *s = v->st[i].s;
		m->sa[i].ok = m->sb[i].ok = m->sc[i].ok = false;
		if (s->kind == S_FOR) {
			lin_build(m, s->lo, &m->sa[i], 0);
			lin_build(m, s->hi, &m->sb[i], 0);
			if (s->step)
				lin_build(m, s->step, &m->sc[i], 0);
		} else if (s->kind == S_LET) {
			lin_build(m, s->src, &m->sa[i], 0);
		} else if (s->kind == S_IF && is_compare(s->cond)) {
			lin_build(m, s->cond->lhs, &m->sa[i], 0);
			lin_build(m, s->cond->rhs, &m->sb[i], 0);
		}
	}
	for (int i = 0; i < v->nst; i++) {
		m->extremes[i] = m->reads_only[i];
		for (int q = 0; m->extremes[i] && q < m->nacc; q++)
			if (m->acc[q].idx > i && m->acc[q].idx < v->st[i].end && !m->acc[q].affine)
				m->extremes[i] = false;
	}
	long long tiles = 1;
	for (int g = 0; g < m->ngrid; g++) {
		if (!sched_eval(v, &m->pt, m->grid->exprs[g], &m->gext[g]))
			return; /* extents the model cannot evaluate: nothing is judged here */
		if (m->gext[g] < 0)
			m->gext[g] = 0;
		if (__builtin_mul_overflow(tiles, m->gext[g], &tiles))
			return;
	}
	if (tiles > m->budget) {
		m->budget = 0;
		return;
	}
	for (int i = 0; i < v->nparams; i++)
		m->t[i].undecided = false;
	m->nrec = 0;
	m->overflow = m->incomplete = false;
	for (long long tix = 0; tix < tiles && !m->incomplete; tix++) {
		long long tile[3] = {0, 0, 0}, r = tix;
		for (int g = 0; g < m->ngrid; g++) {
			tile[g] = r % m->gext[g];
			r /= m->gext[g];
		}
		for (int ro = 0; ro < v->nroles && !m->incomplete; ro++) {
			int pi = sched_stmt_index(v, v->roles[ro].prog);
			if (pi < 0)
				continue;
			Walk w;
			memset(&w, 0, sizeof w);
			w.role = ro;
			memcpy(w.tile, tile, sizeof tile);
			for (int g = 0; g < m->ngrid; g++)
				bind(&w, g, tile[g]);
			walk_range(m, &w, pi + 1, v->st[pi].end, 0);
		}
	}
	for (int i = 0; i < v->nparams; i++)
		check_tensor(m, i);
}

/* ---- 004: a ring stage read after its release ---- */

/* Does role w wait on barrier b, in the pipelined iteration where it writes ring
 * buffer m, before that write (b gates the refill of m)? */
static bool gates(const Sched *v, int w, int m, int b)
{
	for (int i = 0; i < v->nst; i++) {
		const SchedStmt *e = &v->st[i];
		if (e->role != w || e->ploop_idx < 0 || sched_smem_written(v, e->s) != m)
			continue;
		for (int q = e->ploop_idx + 1; q < i; q++)
			if (v->st[q].role == w && v->st[q].ploop_idx == e->ploop_idx &&
			    sched_bar_waited(v, v->st[q].s) == b)
				return true;
	}
	return false;
}

/* Does role r still arrive, after statement j in the iteration of loop L, on a
 * barrier that gates w's refill of m? Then the refill waits for r past j. */
static bool still_held(const Sched *v, int w, int m, int r, int j, int L)
{
	for (int q = j + 1; q < v->st[L].end; q++) {
		if (v->st[q].role != r || v->st[q].ploop_idx != L || v->st[q].s->kind != S_ARRIVE)
			continue;
		int b = sched_bar(v, v->st[q].s->name);
		if (b >= 0 && gates(v, w, m, b))
			return true;
	}
	return false;
}

/* are i and j (i < j) in different branches of some if enclosing both? */
static bool other_branch(const Sched *v, int i, int j)
{
	for (int f = v->st[i].if_idx; f >= 0; f = v->st[f].if_idx)
		if (sched_inside(v, f, j)) {
			int te = then_end(v, f);
			if (i < te && j >= te)
				return true;
		}
	return false;
}

static void check_release(Sched *v)
{
	bool *done = arena_alloc(v->a, sizeof(bool) * (size_t)(v->nst + 1));
	int *writer = arena_alloc(v->a, sizeof(int) * (size_t)(v->nsmems + 1));
	for (int i = 0; i < v->nst; i++) {
		const SchedStmt *e = &v->st[i];
		if (e->s->kind != S_ARRIVE || e->role < 0 || e->ploop_idx < 0 || e->ppipe < 0)
			continue;
		int b = sched_bar(v, e->s->name);
		if (b < 0 || v->bars[b].pipe != e->ppipe)
			continue;
		/* the ring buffers whose refill this arrive lets through, and by whom */
		bool any = false;
		for (int m = 0; m < v->nsmems; m++) {
			writer[m] = -1;
			if (v->smems[m].pipe != e->ppipe)
				continue;
			for (int r = 0; r < v->nroles && writer[m] < 0; r++)
				if (r != e->role && gates(v, r, m, b))
					writer[m] = r;
			any |= writer[m] >= 0;
		}
		int L = e->ploop_idx;
		for (int j = i + 1; j < v->st[L].end; j++) {
			const SchedStmt *f = &v->st[j];
			if (f->role != e->role || f->ploop_idx != L || done[j] || other_branch(v, i, j))
				continue;
			int rd[8], hit[8], nh = 0;
			int n = sched_smem_read(v, f->s, rd, 8);
			for (int q = 0; q < n; q++)
				if (writer[rd[q]] >= 0 && !still_held(v, writer[rd[q]], rd[q], e->role, j, L))
					hit[nh++] = rd[q];
			if (nh == 0)
				continue;
			done[j] = true;
			int m = hit[0];
			StrBuf names = {0};
			for (int q = 0; q < nh; q++)
				sb_printf(&names, "%s'%s'", q == 0 ? "" : q == nh - 1 ? " and " : ", ",
				          v->smems[hit[q]].name);
			const char *lv = e->ploop->name ? e->ploop->name : "the loop";
			Diag *d = v_report(v, "CK-MEM-004", f->s->span, e->role, v->smems[m].name, b, e->ppipe,
			                   "role '%s' reads %s after `arrive %s` (line %d) has released the "
			                   "current stage to role '%s' in the same iteration of %s",
			                   v->roles[e->role].name, sb_str(&names), v->bars[b].name,
			                   e->s->span.line, v->roles[writer[m]].name, lv);
			diag_set(&d->condition, "every read of the current stage of %s precedes arrive %s in "
			         "each iteration of %s (role %s refills it once %s completes)", v->smems[m].name,
			         v->bars[b].name, lv, v->roles[writer[m]].name, v->bars[b].name);
			diag_set(&d->hint, "move `arrive %s` below the last read of %s in the loop body (for "
			         "wgmma: after the `wgmma_wait` that retires it)", v->bars[b].name, sb_str(&names));
			diag_related(d, e->s->span, "the stage of %s is released here", sb_str(&names));
			sb_free(&names);
		}
	}
}

void verify_memory(Sched *v)
{
	check_release(v);
	Mem m;
	memset(&m, 0, sizeof m);
	m.v = v;
	m.grid = v->k->grid;
	m.ngrid = m.grid && v->gridvars ? v->ngridvars : 0;
	if (m.ngrid > 3)
		return;
	for (int g = 0; g < m.ngrid; g++)
		add_name(&m, v->gridvars[g]);
	size_t n = (size_t)v->nst + 1;
	m.slot_of_stmt = xcalloc(n, sizeof(int));
	m.acc_first = xcalloc(n, sizeof(int));
	m.acc_n = xcalloc(n, sizeof(int));
	m.has_acc = xcalloc(n, sizeof(bool));
	m.reads_only = xcalloc(n, sizeof(bool));
	m.extremes = xcalloc(n, sizeof(bool));
	m.sa = xcalloc(n, sizeof(Lin));
	m.sb = xcalloc(n, sizeof(Lin));
	m.sc = xcalloc(n, sizeof(Lin));
	m.t = xcalloc((size_t)v->nparams + 1, sizeof(Tensor));
	collect(&m);
	m.budget = MEM_BUDGET;
	int np = sched_nsamples(v);
	for (int i = 0; m.nacc > 0 && i < np && i < MEM_POINTS && m.budget > 0; i++) {
		if (make_point(&m, i))
			run_point(&m);
	}
	/* A clipped TMA box is checked only where it is inside the tensor, so at the smallest points
	 * (one CTA along a ragged dimension) two CTAs' boxes never meet; the largest samples (several
	 * CTAs along every grid axis) are where an unclipped box overlapping the next CTA's tile shows */
	bool clip = false;
	for (int q = 0; q < m.nacc; q++)
		clip |= m.acc[q].clip;
	for (int k = 0; clip && k < 2 && m.budget > 0; k++) {
		int i = k ? np - 1 : np / 2;
		if (i >= MEM_POINTS && make_point(&m, i))
			run_point(&m);
	}
	free(m.slot_of_stmt);
	free(m.acc_first);
	free(m.acc_n);
	free(m.has_acc);
	free(m.reads_only);
	free(m.extremes);
	free(m.sa);
	free(m.sb);
	free(m.sc);
	free(m.t);
	free(m.acc);
	free(m.rec);
}
