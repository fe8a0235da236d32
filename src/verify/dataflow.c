/*
 * dataflow.c — data consistency traced from producer to consumer (CK-DATA-*).
 *
 * A value's representation is fixed at its producer (the TMA box that
 * fills a shared buffer, with the buffer's dtype and swizzle; the fragment
 * a matmul writes) and assumed by its consumer (the wgmma descriptor, the
 * store region). This family follows each shared buffer and fragment from
 * the statement that produces it to every statement that consumes it and
 * reports a mismatch at the consumer with the producer as related span:
 *
 *   001  wgmma operand swizzle span == bytes of one row of the tile's
 *        contiguous (K for K-major) extent;
 *   002  the `split` of fragments (which warpgroup holds which rows or
 *        columns) is traced through element-wise math, row reductions and
 *        rows()/cols() broadcasts; m-split and n-split values never mix and
 *        a split value is never assigned to a differently split fragment;
 *   003  a copy inside a loop advances by exactly its tile length;
 *   004  a loop walking a tensor dimension from 0 covers all of it.
 *
 * Dtype, box shape, store shape, matmul shape and ring placement are
 * checked by sema (CK-SEM-017, -024, -025, -029, -030) before we run.
 */
#include "verify_int.h"

static int tma_filling(const Sched *v, int m)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].s->kind == S_TMA_LOAD && sched_smem(v, sched_refname(v->st[i].s->dst)) == m)
			return i;
	return -1;
}

static void check_swizzle(Sched *v, SchedStmt *e)
{
	const Expr *ops[2];
	if (!sched_matmul_ops(e->s, &ops[0], &ops[1]))
		return;
	for (int k = 0; k < 2; k++) {
		int m = sched_smem(v, sched_refname(ops[k]));
		if (m < 0)
			continue;
		SchedSmem *M = &v->smems[m];
		if (!M->cshape || M->rank != 2)
			continue;
		long long row = M->dims[1] * dtype_size(M->d->dt);
		int span = swizzle_bytes(M->d->swizzle);
		int want = row >= 128 ? 128 : row == 64 ? 64 : row == 32 ? 32 : 0;
		if (want == 0 || span == want)
			continue; /* odd rows are CK-HW-003/008's business; longer rows: CK-HW-008 */
		int t = tma_filling(v, m);
		Diag *d = v_report(v, "CK-DATA-001", ops[k]->span, e->role, M->name, -1, M->pipe,
		                   "wgmma reads '%s' as rows of %lld B (%lld x %s) but the buffer is "
		                   "laid out with swizzle %s", M->name, row, M->dims[1], dtype_name(M->d->dt),
		                   swizzle_name(M->d->swizzle));
		diag_set(&d->condition, "swizzle span (%d) == row bytes of %s (%lld)", span, M->name, row);
		if (want)
			diag_set(&d->hint, "declare '%s' with `swizzle %dB`%s", M->name, want,
			         row > 128 ? " and a K extent of 128 B" : "");
		else
			diag_set(&d->hint, "widen the K extent of '%s' to at least 16 elements", M->name);
		if (t >= 0)
			diag_related(d, v->st[t].s->span, "the TMA producing '%s' writes it with swizzle %s",
			             M->name, swizzle_name(M->d->swizzle));
		else
			diag_related(d, M->d->span, "'%s' declared here", M->name);
	}
}

/* ---- split consistency (002) ---- */

enum { SPL_ANY = -2, SPL_UNK = -3 };

typedef struct SplitCx {
	Sched *v;
	SchedStmt *e;
	bool reported;
} SplitCx;

static const char *split_word(int s)
{
	return s == SPLIT_M ? "split m" : s == SPLIT_N ? "split n" : "replicated (unsplit)";
}

static void split_report(SplitCx *cx, const Expr *at, const char *what, const char *frag)
{
	if (cx->reported)
		return;
	cx->reported = true;
	Sched *v = cx->v;
	int f = sched_frag(v, frag);
	Diag *d = v_report(v, "CK-DATA-002", at->span, cx->e->role, frag, -1, -1, "%s", what);
	diag_set(&d->condition, "every operand holds the same rows/columns in each warpgroup of role '%s'",
	         cx->e->role >= 0 ? v->roles[cx->e->role].name : "?");
	diag_set(&d->hint, "declare the fragments with the same `split` (row statistics of a `split m` "
	         "tile are `split m` too)");
	if (f >= 0)
		diag_related(d, v->frags[f].d->span, "'%s' is declared %s here", frag,
		             split_word(v->frags[f].d->split));
}

static int split_combine(SplitCx *cx, const Expr *at, int a, int b, const char *na, const char *nb)
{
	if (a == SPL_UNK || b == SPL_UNK)
		return SPL_UNK;
	if (a == SPL_ANY)
		return b;
	if (b == SPL_ANY)
		return a;
	if (a == b)
		return a;
	if (a == SPLIT_NONE)
		return b;
	if (b == SPLIT_NONE)
		return a;
	char msg[256];
	snprintf(msg, sizeof msg, "'%s' (%s) and '%s' (%s) hold different parts of the tile in each "
	         "warpgroup", na ? na : "?", split_word(a), nb ? nb : "?", split_word(b));
	split_report(cx, at, msg, na ? na : nb ? nb : "?");
	return SPL_UNK;
}

static bool is_name(const char *n, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(n, *list) == 0)
			return true;
	return false;
}

static int split_of(SplitCx *cx, const Expr *x, const char **name, int depth)
{
	Sched *v = cx->v;
	*name = NULL;
	if (!x || depth > 100)
		return SPL_UNK;
	static const char *const rowred[] = { "rowsum", "rowmax", "rowmin", "rowargmin", "rowargmax",
	                                      "topk", NULL };
	static const char *const elem[] = { "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid",
	                                    "softplus", "abs", "min", "max", "where", "silu", "relu",
	                                    "tanh", NULL };
	const char *n1, *n2;
	switch (x->kind) {
	case E_INT:
	case E_FLOAT:
	case E_INF:
	case E_INDEX:
		return SPL_ANY;
	case E_IDENT: {
		int f = sched_frag(v, x->name);
		if (f < 0)
			return SPL_ANY;
		*name = x->name;
		return v->frags[f].d->split;
	}
	case E_UNARY:
		return split_of(cx, x->lhs, name, depth + 1);
	case E_BINARY: {
		int a = split_of(cx, x->lhs, &n1, depth + 1);
		int b = split_of(cx, x->rhs, &n2, depth + 1);
		*name = n1 ? n1 : n2;
		return split_combine(cx, x, a, b, n1, n2);
	}
	case E_CALL: {
		if (!x->name)
			return SPL_UNK;
		bool cast = dtype_from(x->name, (int)strlen(x->name)) != DT_NONE;
		if (strcmp(x->name, "rows") == 0 && x->nargs == 1) {
			int s = split_of(cx, x->args[0], name, depth + 1);
			return s == SPLIT_M ? SPLIT_M : s == SPL_UNK ? SPL_UNK : SPL_ANY;
		}
		if (strcmp(x->name, "cols") == 0 && x->nargs == 1) {
			int s = split_of(cx, x->args[0], name, depth + 1);
			if (s == SPLIT_M) {
				char msg[256];
				snprintf(msg, sizeof msg, "cols(%s) broadcasts a `split m` row vector along the "
				         "columns: each warpgroup holds only its own rows of '%s'",
				         *name ? *name : "?", *name ? *name : "?");
				split_report(cx, x, msg, *name ? *name : "?");
				return SPL_UNK;
			}
			return s == SPL_UNK ? SPL_UNK : SPL_ANY;
		}
		if (is_name(x->name, rowred) && x->nargs >= 1) {
			int s = split_of(cx, x->args[0], name, depth + 1);
			return s == SPLIT_M || s == SPLIT_NONE || s == SPL_ANY ? s : SPL_UNK;
		}
		if (cast || is_name(x->name, elem)) {
			int acc = SPL_ANY;
			const char *an = NULL;
			for (int i = 0; i < x->nargs; i++) {
				int s = split_of(cx, x->args[i], &n1, depth + 1);
				acc = split_combine(cx, x, acc, s, an, n1);
				if (!an)
					an = n1;
			}
			*name = an;
			return acc;
		}
		return SPL_UNK;
	}
	default:
		return SPL_UNK;
	}
}

static void check_split(Sched *v, SchedStmt *e)
{
	Stmt *s = e->s;
	if (e->role < 0 || v->roles[e->role].wgs < 2)
		return;
	if (s->kind != S_ASSIGN && s->kind != S_STORE && s->kind != S_ATOMIC)
		return;
	SplitCx cx = {v, e, false};
	const char *vn;
	int vs = split_of(&cx, s->src, &vn, 0);
	if (s->kind != S_ASSIGN || cx.reported || (vs != SPLIT_M && vs != SPLIT_N))
		return;
	for (int i = 0; i < s->nlhs; i++) {
		const char *tn = sched_refname(s->lhs[i]);
		int f = sched_frag(v, tn);
		if (f < 0 || (int)v->frags[f].d->split == vs)
			continue;
		char msg[300];
		snprintf(msg, sizeof msg, "'%s' is %s but the value assigned to it is %s (from '%s'): each "
		         "warpgroup computes only its own part", tn, split_word(v->frags[f].d->split),
		         split_word(vs), vn ? vn : "?");
		split_report(&cx, s->lhs[i], msg, tn);
		return;
	}
}

/* ---- tile stride (003) and coverage (004) ---- */

static bool only_names(const Sched *v, const Expr *x, const char *var)
{
	const char *ids[32];
	int n = sched_idents(x, ids, 32);
	for (int i = 0; i < n; i++) {
		if (strcmp(ids[i], var) == 0)
			continue;
		bool isconst = false;
		for (int c = 0; c < v->nconsts; c++)
			if (v->consts[c]->name && strcmp(v->consts[c]->name, ids[i]) == 0)
				isconst = true;
		if (!isconst)
			return false;
	}
	return true;
}

static bool mentions_gridvar(const Sched *v, const Expr *x)
{
	for (int g = 0; g < v->ngridvars; g++)
		if (x && sched_mentions(x, v->gridvars[g]))
			return true;
	return false;
}

/* A TMA load into one column panel of a buffer (`tma b[:, c +: 64] <- B[..., k * 128 + c +: 64]`)
 * is one of the boxes that fill the buffer in the step: along the panel's dimension the tile that
 * advances with the loop is the whole buffer, not the box. When dim bdim of the buffer is the
 * panel's, sets *len to the buffer's extent there and *panel0 to the panel's start (a constant)
 * and returns true. */
static bool panel_extent(const Sched *v, const Stmt *s, int bdim, long long *len, long long *panel0)
{
	const Expr *dst = s->kind == S_TMA_LOAD ? s->dst : NULL;
	if (bdim < 0 || !dst || dst->kind != E_INDEX || bdim >= dst->nslices)
		return false;
	int m = sched_smem(v, sched_refname(dst));
	if (m < 0 || !v->smems[m].cshape || bdim >= v->smems[m].rank)
		return false;
	const Slice *ps = &dst->slices[bdim];
	long long c, w;
	SchedEnv env;
	sched_env_sample(v, &env, 0);
	if (ps->kind != SL_RANGE || !sched_eval(v, &env, ps->start, &c) ||
	    !sched_eval(v, &env, ps->len, &w) || w != *len || w >= v->smems[m].dims[bdim])
		return false;
	*len = v->smems[m].dims[bdim];
	*panel0 = c;
	return true;
}

static void check_tiles(Sched *v, int idx)
{
	SchedStmt *e = &v->st[idx];
	Stmt *s = e->s;
	const Expr *ref = NULL;
	if (s->kind == S_TMA_LOAD || s->kind == S_CP_ASYNC || s->kind == S_LOAD)
		ref = s->src;
	if (!ref || ref->kind != E_INDEX || e->loop_idx < 0)
		return;
	Decl *p = sched_param(v, sched_refname(ref));
	if (!p || p->space != SP_GLOBAL)
		return;
	SchedStmt *L = &v->st[e->loop_idx];
	Stmt *f = L->s;
	if (!f->name)
		return;
	SchedEnv env;
	sched_loop_env(v, &env, 0, idx);
	long long lo, step = 1;
	if (!sched_eval(v, &env, f->lo, &lo) || (f->step && !sched_eval(v, &env, f->step, &step)) || step <= 0)
		return;
	int nrange = 0;
	for (int i = 0; i < ref->nslices; i++) {
		const Slice *sl = &ref->slices[i];
		int bdim = sl->kind == SL_RANGE ? nrange++ : -1;   /* the buffer dim this one fills */
		if (sl->kind != SL_RANGE || !sched_mentions(sl->start, f->name))
			continue;
		long long s0, s1, len;
		sched_env_set(&env, f->name, lo);
		if (!sched_eval(v, &env, sl->start, &s0) || !sched_eval(v, &env, sl->len, &len))
			continue;
		long long panel0 = 0, box = len;
		bool panel = panel_extent(v, s, bdim, &len, &panel0);
		if (panel && panel0 != 0)
			continue;   /* the panel at 0 speaks for the buffer's other panels */
		sched_env_set(&env, f->name, lo + step);
		if (!sched_eval(v, &env, sl->start, &s1))
			continue;
		long long delta = s1 - s0;
		if (delta != 0 && delta != len) {
			const char *how = (delta < 0 ? -delta : delta) < len ? "consecutive tiles overlap" :
			                  "data between tiles is skipped";
			Diag *d;
			if (panel) {
				const char *bn = sched_refname(s->dst);
				d = v_report(v, "CK-DATA-003", sl->span, e->role, p->name, -1, e->ppipe,
				             "the panel loads of one step fill all %lld columns of '%s', but their boxes "
				             "along dim %d of '%s' advance by %lld per iteration of %s: %s", len, bn, i,
				             p->name, delta, f->name, how);
				diag_set(&d->condition, "start(%s+%lld) - start(%s) (%lld) == width of '%s' (%lld)", f->name,
				         step, f->name, delta, bn, len);
				diag_set(&d->hint, "advance each panel's box by the buffer's width: `%s * %lld + c +: %lld` "
				         "for the panel at column c", f->name, len / (step ? step : 1), box);
			} else {
				d = v_report(v, "CK-DATA-003", sl->span, e->role, p->name, -1, e->ppipe,
				             "tile start along dim %d of '%s' advances by %lld per iteration of %s "
				             "but the tile is %lld long: %s", i, p->name, delta, f->name, len, how);
				diag_set(&d->condition, "start(%s+%lld) - start(%s) (%lld) == length (%lld)", f->name,
				         step, f->name, delta, len);
				diag_set(&d->hint, "use `%s * %lld +: %lld` (or change the tile length)", f->name,
				         len / (step ? step : 1), len);
			}
			diag_related(d, f->span, "the loop over %s", f->name);
			continue;
		}
		if (delta != len || i >= p->rank || s0 != 0 || !only_names(v, sl->start, f->name) ||
		    mentions_gridvar(v, f->lo) || mentions_gridvar(v, f->hi) || L->loop_idx >= 0)
			continue;
		int ns = sched_nsamples(v);
		for (int q = 0; q < ns; q++) {
			SchedEnv e2;
			sched_loop_env(v, &e2, q, e->loop_idx);
			long long trip, ext;
			if (!sched_trip(v, &e2, f, &trip) || !sched_eval(v, &e2, p->shape[i], &ext))
				continue;
			if (trip * len == ext)
				continue;
			const char *en = sched_exprstr(v, p->shape[i]);
			Diag *d = v_report(v, "CK-DATA-004", f->span, e->role, p->name, -1, e->ppipe,
			                   "the loop over %s reads %lld x %lld = %lld of the %lld elements of "
			                   "dim %d of '%s' (%s)", f->name, trip, len, trip * len, ext, i,
			                   p->name, en);
			diag_set(&d->condition, "trips (%lld) * tile (%lld) == %s (%lld)", trip, len, en, ext);
			diag_set(&d->hint, "iterate %s over 0 .. %s / %lld", f->name, en, len);
			diag_related(d, sl->span, "the tile along that dim");
			break;
		}
	}
}

void verify_dataflow(Sched *v)
{
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		switch (e->s->kind) {
		case S_WGMMA:
			if (v->tgt == TGT_SM90A)
				check_swizzle(v, e);
			break;
		default:
			break;
		}
		check_split(v, e);
		check_tiles(v, i);
	}
}
