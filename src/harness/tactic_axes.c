/*
 * tactic_axes.c — extent classes, and resizing one of them (the tile engine).
 *
 * A CTA tile shows up in many places of a Cake IR kernel: the shape of every
 * shared buffer and fragment that holds it, the length of every TMA box or
 * load/store slice that moves it, the offset `bm * 128` of those slices, the
 * grid extent `M / 128` or loop trip count `K / 64` that steps over it, other
 * uses of the coordinate such as `targ + j * 128`, and the domain constraint
 * `M % 128 == 0` that makes it divide. Changing a tile by text substitution
 * would confuse the M tile with an N tile of the same size, so this file
 * first works out which extents *must* be equal:
 *
 *   - a TMA load/store, cp_async, load or store: the reference's extents
 *     (unit extents dropped, as in LANGUAGE.md §2.3) are the buffer's or the
 *     value's extents, in order;
 *   - a wgmma/mma ACC += A @ B (after ^T): ACC[0] = A[0], ACC[1] = B[1],
 *     A[1] = B[0];
 *   - an assignment F = E and every element-wise operator or builtin: the
 *     operands' shapes are equal (rows(v) puts v on axis 0, cols(v) on axis
 *     1, reductions keep the surviving axis, row_idx()/col_idx() take the
 *     context's shape);
 *   - a scatter index vector stands for the extent it indexes.
 *
 * It is a union-find over *slots* (one per axis of every buffer and fragment,
 * one per ranged slice, fresh ones for broadcast axes); every slot whose
 * extent is written somewhere is a *site* that can be rewritten. A class is a
 * tile when all its extents are integer literals of one size S, every slice
 * in it that reads global memory starts at `v * S` for a grid coordinate or
 * loop variable v, and every other use of those coordinates is `v * S` too
 * (the trip counts and extents over them are written `D / c` with S | c).
 * Resizing it to S' then rewrites all of that consistently; domain
 * constraints `D % c == 0` scale to `D % (c / S * S')` and lower bounds
 * `D >= c` are raised to at least S'. Anything the engine does not recognise
 * makes ax_tile_info refuse with a sentence naming the construct, so a tile
 * tactic never half-rewrites a kernel.
 */
#include "tactics_int.h"

#include <string.h>

typedef enum SiteKind { SITE_DECL, SITE_SLICE, SITE_PINNED } SiteKind;

typedef struct AxSite {
	SiteKind kind;
	int slot;
	long long val;       /* constant extent, -1 when not constant */
	Decl *decl;          /* DECL: the buffer/fragment; SLICE: the referenced param or buffer */
	int axis;
	Slice *slice;        /* SLICE */
	Expr *ref;           /* SLICE, PINNED: the reference */
	const char *why;     /* PINNED: why this extent cannot change */
} AxSite;

struct Axes {
	TacCtx *t;
	int *parent;
	long long *val;      /* per slot; meaningful at the class root */
	int nslots, cap;
	AxSite *sites;
	int nsites, capsites;
	Decl **decls;        /* smem and frag declarations with slots */
	int *base;
	int ndecls;
};

/* ---- union-find ---- */

static int new_slot(Axes *A, long long val)
{
	if (A->nslots == A->cap) {
		A->cap = A->cap ? A->cap * 2 : 64;
		int *np = arena_alloc(&A->t->c->arena, sizeof(int) * (size_t)A->cap);
		long long *nv = arena_alloc(&A->t->c->arena, sizeof(long long) * (size_t)A->cap);
		if (A->nslots) {
			memcpy(np, A->parent, sizeof(int) * (size_t)A->nslots);
			memcpy(nv, A->val, sizeof(long long) * (size_t)A->nslots);
		}
		A->parent = np;
		A->val = nv;
	}
	A->parent[A->nslots] = A->nslots;
	A->val[A->nslots] = val;
	return A->nslots++;
}

int ax_class(Axes *A, int s)
{
	while (A->parent[s] != s) {
		A->parent[s] = A->parent[A->parent[s]];
		s = A->parent[s];
	}
	return s;
}

static void unite(Axes *A, int a, int b)
{
	a = ax_class(A, a);
	b = ax_class(A, b);
	if (a == b)
		return;
	if (A->val[a] < 0)
		A->val[a] = A->val[b];
	A->parent[b] = a;
}

static long long slot_val(Axes *A, int s)
{
	return A->val[ax_class(A, s)];
}

static void add_site(Axes *A, AxSite s)
{
	if (A->nsites == A->capsites) {
		A->capsites = A->capsites ? A->capsites * 2 : 64;
		AxSite *n = arena_alloc(&A->t->c->arena, sizeof(AxSite) * (size_t)A->capsites);
		if (A->nsites)
			memcpy(n, A->sites, sizeof(AxSite) * (size_t)A->nsites);
		A->sites = n;
	}
	A->sites[A->nsites++] = s;
}

/* ---- slots of declarations and references ---- */

int ax_decl_slot(Axes *A, const Decl *d, int axis)
{
	for (int i = 0; i < A->ndecls; i++)
		if (A->decls[i] == d)
			return axis >= 0 && axis < d->rank ? A->base[i] + axis : -1;
	return -1;
}

static Decl *sym_decl(const Expr *e)
{
	if (!e || e->kind != E_IDENT || !e->sym)
		return NULL;
	return e->sym->decl;
}

/* The non-unit axes of a declaration's shape, as slots. */
static int decl_axes(Axes *A, const Decl *d, int *out)
{
	int n = 0;
	for (int i = 0; d && i < d->rank; i++) {
		int s = ax_decl_slot(A, d, i);
		if (s >= 0 && slot_val(A, s) != 1)
			out[n++] = s;
	}
	return n;
}

static int shape_of(Axes *A, Expr *e, int *out);

/* The non-unit extents of a reference X[slices], registering its slice sites. */
static int ref_axes(Axes *A, Expr *ref, int *out)
{
	if (!ref || ref->kind != E_INDEX)
		return 0;
	Decl *base = sym_decl(ref->base);
	int n = 0;
	for (int i = 0; i < ref->nslices && n < MAX_RANK; i++) {
		Slice *sl = &ref->slices[i];
		long long len;
		if (sl->kind == SL_POINT) {
			if (sl->start && sl->start->type.rank == 1) {   /* a scatter index vector */
				int v[MAX_RANK];
				if (shape_of(A, sl->start, v) == 1)
					out[n++] = v[0];
			}
		} else if (sl->kind == SL_RANGE) {
			bool c = tac_const(sl->len, &len);
			if (c && len == 1)
				continue;
			int s = new_slot(A, c ? len : -1);
			AxSite st = {SITE_SLICE, s, c ? len : -1, base, i, sl, ref, NULL};
			if (!c || sl->len->kind != E_INT) {
				st.kind = SITE_PINNED;
				st.why = "a slice length is not an integer literal";
			}
			add_site(A, st);
			out[n++] = s;
		} else if (base && (base->kind == D_SMEM || base->kind == D_FRAG)) {
			int s = ax_decl_slot(A, base, i);
			if (s >= 0 && slot_val(A, s) != 1)
				out[n++] = s;
		} else {
			/* `:` over a global dimension: the whole of it, which no tile resizes */
			Expr *ext = base && i < base->rank ? base->shape[i] : NULL;
			bool c = tac_const(ext, &len);
			if (c && len == 1)
				continue;
			int s = new_slot(A, c ? len : -1);
			AxSite st = {SITE_PINNED, s, c ? len : -1, base, i, NULL, ref,
			             "a reference takes the whole of a global dimension with `:`"};
			add_site(A, st);
			out[n++] = s;
		}
	}
	return n;
}

/* Unify two shapes after dropping unit extents (copies, loads, stores). */
static void match(Axes *A, const int *a, int na, const int *b, int nb)
{
	int x[MAX_RANK], y[MAX_RANK], n = 0, m = 0;
	for (int i = 0; i < na; i++)
		if (slot_val(A, a[i]) != 1)
			x[n++] = a[i];
	for (int i = 0; i < nb; i++)
		if (slot_val(A, b[i]) != 1)
			y[m++] = b[i];
	if (n != m)
		return;
	for (int i = 0; i < n; i++)
		unite(A, x[i], y[i]);
}

/* ---- shapes of expressions: rank, or -1 for "the context's shape" ---- */

static int merge(Axes *A, int ra, const int *a, int rb, const int *b, int *out)
{
	const int *src = a;
	int r = ra;
	if (ra < 0 || (ra == 0 && rb != 0)) {
		src = b;
		r = rb;
	} else if (rb > 0 && ra == rb) {
		for (int i = 0; i < ra; i++)
			unite(A, a[i], b[i]);
	}
	for (int i = 0; i < r; i++)
		out[i] = src[i];
	return r;
}

static int fresh_shape(Axes *A, const Expr *e, int *out)
{
	int r = e->type.rank;
	for (int i = 0; i < r && i < MAX_RANK; i++)
		out[i] = new_slot(A, -1);
	return r;
}

static int call_shape(Axes *A, Expr *e, int *out)
{
	const Builtin *b = e->name ? builtin_find(e->name) : NULL;
	int x[MAX_RANK], y[MAX_RANK];
	if (!b || e->nargs == 0) {
		if (b && b->rule == BR_INDEX)
			return -1;
		return fresh_shape(A, e, out);
	}
	int rx = shape_of(A, e->args[0], x);
	switch (b->rule) {
	case BR_UNARY_FLOAT:
	case BR_CAST:
	case BR_L2NORM:
	case BR_CUMSUM:
	case BR_TRI:
		for (int i = 1; i < e->nargs; i++)
			shape_of(A, e->args[i], y);
		for (int i = 0; i < rx; i++)
			out[i] = x[i];
		return rx;
	case BR_BINARY:
	case BR_WHERE: {
		int r = rx, cur[MAX_RANK];
		for (int i = 0; i < rx; i++)
			cur[i] = x[i];
		for (int i = 1; i < e->nargs; i++) {
			int ry = shape_of(A, e->args[i], y);
			int tmp[MAX_RANK];
			r = merge(A, r, cur, ry, y, tmp);
			for (int q = 0; q < r; q++)
				cur[q] = tmp[q];
		}
		for (int i = 0; i < r; i++)
			out[i] = cur[i];
		return r;
	}
	case BR_ROW_REDUCE:
	case BR_ROW_ARG:
		if (rx == 2) {
			out[0] = x[0];
			return 1;
		}
		return fresh_shape(A, e, out);
	case BR_COL_REDUCE:
		if (rx == 2) {
			out[0] = x[1];
			return 1;
		}
		return fresh_shape(A, e, out);
	case BR_SUM:
		return 0;   /* a scalar: no axes */
	case BR_TOPK:
		if (rx == 2) {
			out[0] = x[0];
			out[1] = new_slot(A, -1);
			return 2;
		}
		return fresh_shape(A, e, out);
	case BR_BCAST_ROWS:
		if (rx == 1) {
			out[0] = x[0];
			out[1] = new_slot(A, -1);
			return 2;
		}
		return fresh_shape(A, e, out);
	case BR_BCAST_COLS:
		if (rx == 1) {
			out[0] = new_slot(A, -1);
			out[1] = x[0];
			return 2;
		}
		return fresh_shape(A, e, out);
	case BR_TRISOLVE: {
		int ry = e->nargs > 1 ? shape_of(A, e->args[1], y) : 0;
		if (rx == 2 && e->nargs == 1) {   /* trisolve(L) = L^-1: square, L's shape */
			unite(A, x[0], x[1]);
			out[0] = x[0];
			out[1] = x[1];
			return 2;
		}
		if (rx == 2 && ry == 2) {
			unite(A, x[0], x[1]);
			unite(A, x[0], y[0]);
			out[0] = y[0];
			out[1] = y[1];
			return 2;
		}
		return fresh_shape(A, e, out);
	}
	case BR_FETCH: {
		int r = ref_axes(A, e->args[0], y);
		for (int i = 1; i < e->nargs; i++)
			shape_of(A, e->args[i], x);
		if (r == 1) {
			out[0] = y[0];
			return 1;
		}
		return fresh_shape(A, e, out);
	}
	case BR_INDEX:
		return -1;
	}
	return fresh_shape(A, e, out);
}

static int shape_of(Axes *A, Expr *e, int *out)
{
	if (!e)
		return 0;
	int a[MAX_RANK], b[MAX_RANK];
	switch (e->kind) {
	case E_INT:
	case E_FLOAT:
	case E_INF:
	case E_INDEX:
		return 0;
	case E_IDENT: {
		Decl *d = sym_decl(e);
		if (!d || e->sym->kind != SYM_FRAG)
			return 0;
		for (int i = 0; i < d->rank; i++)
			out[i] = ax_decl_slot(A, d, i);
		return d->rank;
	}
	case E_UNARY:
		return shape_of(A, e->lhs, out);
	case E_TRANSPOSE: {
		int r = shape_of(A, e->lhs, a);
		for (int i = 0; i < r; i++)
			out[i] = a[r - 1 - i];
		return r;
	}
	case E_BINARY: {
		int ra = shape_of(A, e->lhs, a);
		int rb = shape_of(A, e->rhs, b);
		return merge(A, ra, a, rb, b, out);
	}
	case E_CALL:
		return call_shape(A, e, out);
	}
	return 0;
}

/* A matrix-product operand: its declaration's two axes, transposed for ^T. */
static bool operand(Axes *A, Expr *e, int *out)
{
	bool tr = e && e->kind == E_TRANSPOSE;
	Decl *d = sym_decl(tr ? e->lhs : e);
	if (!d || d->rank != 2)
		return false;
	out[0] = ax_decl_slot(A, d, tr ? 1 : 0);
	out[1] = ax_decl_slot(A, d, tr ? 0 : 1);
	return out[0] >= 0 && out[1] >= 0;
}

static void unify_stmt(Stmt *s, void *arg)
{
	Axes *A = arg;
	int a[MAX_RANK], b[MAX_RANK];
	switch (s->kind) {
	case S_TMA_LOAD:
		match(A, a, decl_axes(A, sym_decl(s->dst), a), b, ref_axes(A, s->src, b));
		break;
	case S_TMA_STORE:
		match(A, a, ref_axes(A, s->dst, a), b, decl_axes(A, sym_decl(s->src), b));
		break;
	case S_CP_ASYNC: {
		int na = s->dst && s->dst->kind == E_INDEX ? ref_axes(A, s->dst, a) : decl_axes(A, sym_decl(s->dst), a);
		match(A, a, na, b, ref_axes(A, s->src, b));
		break;
	}
	case S_LOAD:
		match(A, a, decl_axes(A, sym_decl(s->dst), a), b, ref_axes(A, s->src, b));
		break;
	case S_STORE:
	case S_ATOMIC: {
		int na = ref_axes(A, s->dst, a);
		int nb = shape_of(A, s->src, b);
		if (nb > 0)
			match(A, a, na, b, nb);
		break;
	}
	case S_WGMMA:
	case S_MMA: {
		Decl *acc = sym_decl(s->dst);
		int x[2], y[2];
		if (!acc || acc->rank != 2 || !s->src || s->src->kind != E_BINARY ||
		    !operand(A, s->src->lhs, x) || !operand(A, s->src->rhs, y))
			break;
		unite(A, ax_decl_slot(A, acc, 0), x[0]);
		unite(A, ax_decl_slot(A, acc, 1), y[1]);
		unite(A, x[1], y[0]);
		break;
	}
	case S_ASSIGN: {
		int r = shape_of(A, s->src, b);
		for (int i = 0; i < s->nlhs; i++) {
			Decl *d = sym_decl(s->lhs[i]);
			if (!d || r <= 0 || d->rank != r)
				continue;
			for (int q = 0; q < r; q++)
				unite(A, ax_decl_slot(A, d, q), b[q]);
		}
		break;
	}
	case S_LET:
	case S_FOR:
	case S_IF:
		if (s->src)
			shape_of(A, s->src, b);
		break;
	default:
		break;
	}
}

Axes *tac_axes(TacCtx *t)
{
	if (t->ax)
		return t->ax;
	Kernel *k = t->k;
	Axes *A = arena_alloc(&t->c->arena, sizeof *A);
	A->t = t;
	A->decls = arena_alloc(&t->c->arena, sizeof(Decl *) * (size_t)(k->ndecls + 1));
	A->base = arena_alloc(&t->c->arena, sizeof(int) * (size_t)(k->ndecls + 1));
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind != D_SMEM && d->kind != D_FRAG)
			continue;
		A->decls[A->ndecls] = d;
		A->base[A->ndecls++] = A->nslots;
		for (int q = 0; q < d->rank; q++) {
			long long v;
			bool c = tac_const(d->shape[q], &v);
			int s = new_slot(A, c ? v : -1);
			AxSite st = {SITE_DECL, s, c ? v : -1, d, q, NULL, NULL, NULL};
			if (!c || d->shape[q]->kind != E_INT) {
				st.kind = SITE_PINNED;
				st.why = "a declared extent is not an integer literal";
			}
			add_site(A, st);
		}
	}
	tac_each_stmt(k, unify_stmt, A);
	t->ax = A;
	return A;
}

/* ---- tiles ---- */

/* e is `v * c` or `c * v` with v a grid coordinate or loop variable. */
static bool is_prod(Expr *e, Sym **v, Expr **lit)
{
	if (!e || e->kind != E_BINARY || e->op != '*' || !e->lhs || !e->rhs)
		return false;
	Expr *a = e->lhs, *b = e->rhs;
	if (a->kind == E_INT && b->kind == E_IDENT) {
		Expr *x = a;
		a = b;
		b = x;
	}
	if (a->kind != E_IDENT || b->kind != E_INT || !a->sym ||
	    (a->sym->kind != SYM_GRIDVAR && a->sym->kind != SYM_LOOPVAR))
		return false;
	*v = a->sym;
	*lit = b;
	return true;
}

static bool in_vars(const TileInfo *ti, const Sym *v)
{
	for (int i = 0; i < ti->nvars; i++)
		if (ti->vars[i] == v)
			return true;
	return false;
}

static bool in_dims(const TileInfo *ti, const char *name)
{
	for (int i = 0; name && i < ti->ndims; i++)
		if (strcmp(ti->dims[i], name) == 0)
			return true;
	return false;
}

static const char *etext(TacCtx *t, const Expr *e)
{
	StrBuf b = {0};
	print_expr(&b, e);
	char *s = arena_strdup(&t->c->arena, sb_str(&b));
	sb_free(&b);
	return s;
}

/* First use of a tile coordinate that is not `v * size`, or NULL. */
static Expr *bad_use(Expr *e, const TileInfo *ti)
{
	if (!e)
		return NULL;
	Sym *v;
	Expr *lit;
	if (is_prod(e, &v, &lit) && in_vars(ti, v))
		return lit->ival == ti->size ? NULL : e;
	if (e->kind == E_IDENT)
		return e->sym && in_vars(ti, e->sym) ? e : NULL;
	Expr *r;
	if ((r = bad_use(e->lhs, ti)) || (r = bad_use(e->rhs, ti)) || (r = bad_use(e->base, ti)))
		return r;
	for (int i = 0; i < e->nargs; i++)
		if ((r = bad_use(e->args[i], ti)))
			return r;
	for (int i = 0; i < e->nslices; i++)
		if ((r = bad_use(e->slices[i].start, ti)) || (r = bad_use(e->slices[i].len, ti)))
			return r;
	return NULL;
}

/* Occurrences of the tiled dims in a trip count or grid extent: the number of
 * `D / c` with size | c, or -1 when a dim occurs any other way. */
static int dim_uses(const Expr *e, const TileInfo *ti)
{
	if (!e)
		return 0;
	if (e->kind == E_BINARY && e->op == '/' && e->lhs && e->lhs->kind == E_IDENT &&
	    in_dims(ti, e->lhs->name) && e->rhs && e->rhs->kind == E_INT)
		return e->rhs->ival > 0 && e->rhs->ival % ti->size == 0 ? 1 : -1;
	if (e->kind == E_IDENT)
		return in_dims(ti, e->name) ? -1 : 0;
	int n = 0;
	const Expr *kids[2] = {e->lhs, e->rhs};
	for (int i = 0; i < 2; i++) {
		int u = dim_uses(kids[i], ti);
		if (u < 0)
			return -1;
		n += u;
	}
	for (int i = 0; i < e->nargs; i++) {
		int u = dim_uses(e->args[i], ti);
		if (u < 0)
			return -1;
		n += u;
	}
	return n;
}

static void scale_dim_uses(Expr *e, const TileInfo *ti, long long size)
{
	if (!e)
		return;
	if (e->kind == E_BINARY && e->op == '/' && e->lhs && e->lhs->kind == E_IDENT &&
	    in_dims(ti, e->lhs->name) && e->rhs && e->rhs->kind == E_INT) {
		e->rhs->ival = e->rhs->ival / ti->size * size;
		return;
	}
	scale_dim_uses(e->lhs, ti, size);
	scale_dim_uses(e->rhs, ti, size);
	for (int i = 0; i < e->nargs; i++)
		scale_dim_uses(e->args[i], ti, size);
}

static void add_name(TileInfo *ti, const char *name)
{
	size_t n = strlen(ti->names);
	if (name && n + strlen(name) + 3 < sizeof ti->names) {
		/* exact-word dedupe */
		const char *p = ti->names;
		size_t l = strlen(name);
		while ((p = strstr(p, name))) {
			bool start = p == ti->names || p[-1] == ' ';
			bool end = p[l] == 0 || p[l] == ',';
			if (start && end)
				return;
			p += l;
		}
		if (n)
			strcat(ti->names, ", ");
		strcat(ti->names, name);
	} else if (name && n + 5 < sizeof ti->names && (n < 3 || strcmp(ti->names + n - 3, "...") != 0)) {
		strcat(ti->names, ", ...");
	}
}

typedef struct UseScan {
	const TileInfo *ti;
	Expr *bad;
	Stmt *at;
} UseScan;

static void scan_uses(Stmt *s, void *arg)
{
	UseScan *u = arg;
	if (u->bad)
		return;
	Expr **slots[16];
	int n = tac_stmt_exprs(s, slots, 16);
	for (int i = 0; i < n && !u->bad; i++) {
		u->bad = bad_use(*slots[i], u->ti);
		if (u->bad)
			u->at = s;
	}
}

typedef struct PeerScan {
	TacCtx *t;
	TileInfo *ti;
} PeerScan;

static bool same_text(TacCtx *t, const Expr *a, const Expr *b)
{
	return a && b && strcmp(etext(t, a), etext(t, b)) == 0;
}

static void scan_peers(Stmt *s, void *arg)
{
	PeerScan *p = arg;
	TileInfo *ti = p->ti;
	if (s->kind != S_FOR || !s->sym || in_vars(ti, s->sym) || ti->nvars >= AX_MAXVARS)
		return;
	for (int i = 0; i < ti->nvars; i++) {
		Stmt *f = ti->vars[i]->kind == SYM_LOOPVAR ? ti->vars[i]->stmt : NULL;
		if (f && same_text(p->t, f->lo, s->lo) && same_text(p->t, f->hi, s->hi) &&
		    ((f->pipe && s->pipe && strcmp(f->pipe, s->pipe) == 0) || (!f->pipe && !s->pipe))) {
			ti->vars[ti->nvars++] = s->sym;
			return;
		}
	}
}

bool ax_tile_info(TacCtx *t, int slot, const char *what, TileInfo *ti)
{
	Axes *A = tac_axes(t);
	memset(ti, 0, sizeof *ti);
	ti->slot = slot;
	int cls = ax_class(A, slot);
	ti->size = A->val[cls];
	if (ti->size <= 0)
		return tac_fail(t, "%s of kernel '%s' is not a constant extent", what, t->k->name);
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		if (ax_class(A, s->slot) != cls)
			continue;
		if (s->decl && (s->kind == SITE_DECL || (s->kind == SITE_PINNED && !s->ref)))
			add_name(ti, s->decl->name);
		if (s->decl && s->decl->kind == D_SMEM && s->decl->ring && !s->ref)
			ti->ring = true;
	}
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		if (ax_class(A, s->slot) != cls)
			continue;
		if (s->kind == SITE_PINNED) {
			if (s->ref)
				return tac_fail(t, "%s (%lld; %s) cannot be resized: '%s' takes the whole of a global dimension",
				                what, ti->size, ti->names, etext(t, s->ref));
			return tac_fail(t, "%s (%lld; %s) cannot be resized: extent %d of '%s' is written '%s', not as a literal",
			                what, ti->size, ti->names, s->axis, s->decl ? s->decl->name : "?",
			                s->decl ? etext(t, s->decl->shape[s->axis]) : "?");
		}
		if (s->val != ti->size)
			return tac_fail(t, "%s of kernel '%s' has extents of different sizes (%lld and %lld)",
			                what, t->k->name, ti->size, s->val);
		if (s->kind != SITE_SLICE)
			continue;
		if (!s->decl || s->decl->kind != D_PARAM)
			return tac_fail(t, "%s (%lld; %s) cannot be resized: '%s' is a part of shared buffer '%s'",
			                what, ti->size, ti->names, etext(t, s->ref), s->decl ? s->decl->name : "?");
		Sym *v;
		Expr *lit;
		if (!is_prod(s->slice->start, &v, &lit) || lit->ival != ti->size)
			return tac_fail(t, "%s (%lld; %s) is not stepped by a grid coordinate or loop: slice '%s' starts at '%s', not at a multiple of the tile",
			                what, ti->size, ti->names, etext(t, s->ref), etext(t, s->slice->start));
		if (!in_vars(ti, v) && ti->nvars < AX_MAXVARS)
			ti->vars[ti->nvars++] = v;
		if (v->kind == SYM_GRIDVAR)
			ti->grid = true;
		else
			ti->loop = true;
		Expr *ext = s->axis < s->decl->rank ? s->decl->shape[s->axis] : NULL;
		if (!ext || ext->kind != E_IDENT)
			return tac_fail(t, "%s (%lld; %s) steps over dimension %d of '%s', which is '%s', not a dim",
			                what, ti->size, ti->names, s->axis, s->decl->name, ext ? etext(t, ext) : "?");
		if (!in_dims(ti, ext->name) && ti->ndims < AX_MAXDIMS)
			ti->dims[ti->ndims++] = ext->name;
	}
	if (ti->nvars == 0)
		return tac_fail(t, "%s (%lld; %s) is not stepped by a grid coordinate or a loop: no global slice of that length starts at `v * %lld`",
		                what, ti->size, ti->names, ti->size);
	/* loops with the same bounds as a stepping loop (the consumer's loop over
	 * the ring, which reads no global slice itself) step the same tiles */
	PeerScan ps = {t, ti};
	tac_each_stmt(t->k, scan_peers, &ps);
	/* the coordinates: used only as `v * size` */
	UseScan u = {ti, NULL, NULL};
	tac_each_stmt(t->k, scan_uses, &u);
	if (u.bad)
		return tac_fail(t, "%s (%lld; %s) cannot be resized: '%s' is used as '%s', not as '%s * %lld'",
		                what, ti->size, ti->names, u.bad->kind == E_IDENT ? u.bad->name : etext(t, u.bad),
		                etext(t, u.bad), u.bad->kind == E_IDENT ? u.bad->name : "v", ti->size);
	/* every slice starting at `v * size` belongs to this class */
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		Sym *v;
		Expr *lit;
		if (s->kind == SITE_SLICE && ax_class(A, s->slot) != cls && is_prod(s->slice->start, &v, &lit) && in_vars(ti, v))
			return tac_fail(t, "%s (%lld; %s) cannot be resized: slice '%s' steps with the same coordinate but is %lld long",
			                what, ti->size, ti->names, etext(t, s->ref), s->val);
	}
	/* trip counts and grid extents over the coordinates */
	Decl *grid = tac_grid(t->k);
	for (int i = 0; i < ti->nvars; i++) {
		Sym *v = ti->vars[i];
		if (v->kind == SYM_LOOPVAR) {
			Stmt *f = v->stmt;
			if (!f || f->step)
				return tac_fail(t, "%s (%lld; %s) cannot be resized: loop '%s' has a step", what, ti->size, ti->names, v->name);
			int lo = dim_uses(f->lo, ti), hi = dim_uses(f->hi, ti);
			if (lo < 0 || hi <= 0)
				return tac_fail(t, "%s (%lld; %s) cannot be resized: the trip count of loop '%s' (%s .. %s) is not written as %s / %lld",
				                what, ti->size, ti->names, v->name, etext(t, f->lo), etext(t, f->hi),
				                ti->ndims ? ti->dims[0] : "D", ti->size);
		} else {
			if (!grid || v->index < 0 || v->index >= grid->nexprs)
				return tac_fail(t, "%s: grid coordinate '%s' has no extent", what, v->name);
			if (dim_uses(grid->exprs[v->index], ti) <= 0)
				return tac_fail(t, "%s (%lld; %s) cannot be resized: the grid extent of '%s' is '%s', not %s / %lld",
				                what, ti->size, ti->names, v->name, etext(t, grid->exprs[v->index]),
				                ti->ndims ? ti->dims[0] : "D", ti->size);
		}
	}
	return true;
}

/* Products `v * size` of the tile's coordinates, rescaled. */
static void scale_prods(Expr *e, const TileInfo *ti, long long size)
{
	if (!e)
		return;
	Sym *v;
	Expr *lit;
	if (is_prod(e, &v, &lit) && in_vars(ti, v) && lit->ival == ti->size) {
		lit->ival = size;
		return;
	}
	scale_prods(e->lhs, ti, size);
	scale_prods(e->rhs, ti, size);
	scale_prods(e->base, ti, size);
	for (int i = 0; i < e->nargs; i++)
		scale_prods(e->args[i], ti, size);
	for (int i = 0; i < e->nslices; i++) {
		scale_prods(e->slices[i].start, ti, size);
		scale_prods(e->slices[i].len, ti, size);
	}
}

typedef struct Resize {
	const TileInfo *ti;
	long long size;
} Resize;

static void resize_stmt(Stmt *s, void *arg)
{
	Resize *r = arg;
	Expr **slots[16];
	int n = tac_stmt_exprs(s, slots, 16);
	for (int i = 0; i < n; i++)
		scale_prods(*slots[i], r->ti, r->size);
}

static long long gcd(long long a, long long b)
{
	while (b) {
		long long x = a % b;
		a = b;
		b = x;
	}
	return a;
}

static long long lcm(long long a, long long b)
{
	return a / gcd(a, b) * b;
}

static bool is_dim(const Expr *e, const char *dim)
{
	return e && e->kind == E_IDENT && e->name && strcmp(e->name, dim) == 0;
}

static void scale_item(Expr *e, const char *dim, long long from, long long to, bool other)
{
	if (!e || e->kind != E_BINARY)
		return;
	if (e->op == OP_AND) {
		scale_item(e->lhs, dim, from, to, other);
		scale_item(e->rhs, dim, from, to, other);
		return;
	}
	Expr *l = e->lhs, *r = e->rhs;
	if (e->op == OP_EQ && l && l->kind == E_BINARY && l->op == '%' && is_dim(l->lhs, dim) &&
	    l->rhs && l->rhs->kind == E_INT && l->rhs->ival > 0 && r && r->kind == E_INT && r->ival == 0) {
		long long c = l->rhs->ival;
		long long n = c % from == 0 ? c / from * to : lcm(c, to);
		l->rhs->ival = other ? lcm(c, n) : n;
		return;
	}
	/* D >= c, D > c, c <= D, c < D: at least one tile */
	if ((e->op == OP_GE || e->op == '>') && is_dim(l, dim) && r && r->kind == E_INT) {
		long long need = e->op == OP_GE ? to : to - 1;
		if (r->ival < need)
			r->ival = need;
	} else if ((e->op == OP_LE || e->op == '<') && is_dim(r, dim) && l && l->kind == E_INT) {
		long long need = e->op == OP_LE ? to : to - 1;
		if (l->ival < need)
			l->ival = need;
	}
}

void ax_scale_domain(TacCtx *t, const char *dim, long long from, long long to, bool other_tiles)
{
	Kernel *k = t->k;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind != D_DOMAIN)
			continue;
		for (int q = 0; q < d->nexprs; q++)
			scale_item(d->exprs[q], dim, from, to, other_tiles);
	}
}

bool ax_tile_resize(TacCtx *t, const TileInfo *ti, long long size)
{
	Axes *A = tac_axes(t);
	int cls = ax_class(A, ti->slot);
	/* dims that another tile also steps over keep their divisibility */
	bool other[AX_MAXDIMS] = {false};
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		if (s->kind != SITE_SLICE || ax_class(A, s->slot) == cls || !s->decl || s->decl->kind != D_PARAM ||
		    s->axis >= s->decl->rank || s->val <= 1)
			continue;
		Expr *ext = s->decl->shape[s->axis];
		for (int q = 0; q < ti->ndims; q++)
			if (is_dim(ext, ti->dims[q]))
				other[q] = true;
	}
	/* products first (they recognise `v * old size`), then the extents */
	Resize r = {ti, size};
	tac_each_stmt(t->k, resize_stmt, &r);
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		if (ax_class(A, s->slot) != cls)
			continue;
		if (s->kind == SITE_DECL)
			s->decl->shape[s->axis] = tac_int(t, size);
		else if (s->kind == SITE_SLICE)
			s->slice->len = tac_int(t, size);
	}
	Decl *grid = tac_grid(t->k);
	for (int i = 0; i < ti->nvars; i++) {
		Sym *v = ti->vars[i];
		if (v->kind == SYM_LOOPVAR && v->stmt) {
			scale_dim_uses(v->stmt->lo, ti, size);
			scale_dim_uses(v->stmt->hi, ti, size);
		} else if (v->kind == SYM_GRIDVAR && grid && v->index >= 0 && v->index < grid->nexprs) {
			scale_dim_uses(grid->exprs[v->index], ti, size);
		}
	}
	for (int q = 0; q < ti->ndims; q++)
		ax_scale_domain(t, ti->dims[q], ti->size, size, other[q]);
	return true;
}

int ax_class_buffers(Axes *A, int slot, Decl **out, int max)
{
	int cls = ax_class(A, slot), n = 0;
	for (int i = 0; i < A->nsites; i++) {
		AxSite *s = &A->sites[i];
		if (s->ref || !s->decl || s->decl->kind != D_SMEM || ax_class(A, s->slot) != cls)
			continue;
		bool dup = false;
		for (int q = 0; q < n; q++)
			dup = dup || out[q] == s->decl;
		if (!dup && n < max)
			out[n++] = s->decl;
	}
	return n;
}
