/*
 * sema_expr.c — types of Cake expressions: the rules for operators,
 * builtin calls, broadcasting, casts, reductions and constant folding.
 *
 * sema.c walks declarations and statements and hands every expression it
 * meets to sema_check_expr, which gives each Expr a Type (dtype, space,
 * rank, extents) in place. The rules are kept apart from the walk because
 * they form one self-contained unit: they read the Sema state (scopes,
 * context, executing role) but never change which names are declared.
 *
 * Integer expressions over literals and consts are folded (is_const, cval)
 * with the operators of the one evaluator (eval.h: checked 64-bit, so a
 * result that overflows is not a constant); division by zero and
 * out-of-range shifts are reported here first. Consts are folded on demand
 * (sema_const_value), so a const may use a later const and a cycle is an
 * error. Element-wise operators need equal
 * shapes, or a scalar operand, or an explicit broadcast rows(v)/cols(v).
 * rows(), cols(), row_idx() and col_idx() leave part of their shape open
 * (an extent of DIM_CTX, or a rank of RANK_CTX); the open part is closed by
 * unification with the other operand, or finally with the statement's
 * target (sema_value_into), and settle_shape() writes the closed shape back
 * into the subtree so that no open shape survives sema. Literals have no
 * dtype of their own: an integer constant or a float literal takes the
 * dtype of the operand it meets. Any other dtype change needs an explicit
 * cast. Builtin calls are checked against the table in builtins.c: arity,
 * operand dtypes and ranks, constant arguments, and the result type.
 *
 * A subexpression that failed to type is "poisoned": sema_check_expr
 * returns false, the reason has been reported, and callers stay quiet so
 * that one mistake does not cascade into many reports.
 */
#include "front.h"
#include "builtins.h"
#include "eval.h"
#include "sema_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* ---- types ---- */

bool sema_dt_is_int(DType t)
{
	return t == DT_I32 || t == DT_U32 || t == DT_I64;
}

static Type scalar_type(DType dt)
{
	Type t;
	memset(&t, 0, sizeof t);
	t.dt = dt;
	t.space = SP_NONE;
	return t;
}

static bool shape_open(const Type *t)
{
	if (t->rank == RANK_CTX)
		return true;
	for (int i = 0; i < t->rank; i++)
		if (t->cdims[i] == DIM_CTX)
			return true;
	return false;
}

/* Type of a declared param/smem/frag from its (already checked) shape. */
Type sema_decl_type(Decl *d)
{
	Type t = scalar_type(d->dt);
	if (d->kind == D_SMEM)
		t.space = SP_SMEM;
	else if (d->kind == D_FRAG)
		t.space = SP_FRAG;
	else
		t.space = d->space;
	t.rank = d->rank < MAX_RANK ? d->rank : MAX_RANK;
	for (int i = 0; i < t.rank; i++) {
		t.dims[i] = d->shape ? d->shape[i] : NULL;
		t.cdims[i] = t.dims[i] && t.dims[i]->is_const ? t.dims[i]->cval : -1;
	}
	return t;
}

/* Remove the extents that are exactly 1 (points and `+: 1` slices). */
Type sema_drop1(Type t)
{
	Type r = t;
	if (t.rank <= 0)
		return r;
	r.rank = 0;
	for (int i = 0; i < t.rank; i++)
		if (t.cdims[i] != 1) {
			r.dims[r.rank] = t.dims[i];
			r.cdims[r.rank] = t.cdims[i];
			r.rank++;
		}
	for (int i = r.rank; i < MAX_RANK; i++) {
		r.dims[i] = NULL;
		r.cdims[i] = 0;
	}
	return r;
}

bool sema_expr_same(const Expr *a, const Expr *b)
{
	if (!a || !b || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case E_INT: return a->ival == b->ival;
	case E_IDENT: return strcmp(a->name, b->name) == 0;
	case E_BINARY: return a->op == b->op && sema_expr_same(a->lhs, b->lhs) && sema_expr_same(a->rhs, b->rhs);
	case E_UNARY: return a->op == b->op && sema_expr_same(a->lhs, b->lhs);
	default: return false;
	}
}

const char *sema_shape_str(Sema *s, const Type *t)
{
	StrBuf b = {0};
	if (t->rank == RANK_CTX) {
		sb_puts(&b, "[...]");
	} else if (t->rank == 0) {
		sb_puts(&b, "scalar");
	} else {
		sb_putc(&b, '[');
		for (int i = 0; i < t->rank; i++) {
			if (i)
				sb_puts(&b, ", ");
			if (t->cdims[i] >= 0)
				sb_printf(&b, "%lld", t->cdims[i]);
			else if (t->cdims[i] == DIM_CTX)
				sb_putc(&b, '?');
			else if (t->dims[i])
				print_expr(&b, t->dims[i]);
			else
				sb_putc(&b, '?');
		}
		sb_putc(&b, ']');
	}
	char *r = arena_strdup(&s->c->arena, sb_str(&b));
	sb_free(&b);
	return r;
}

/* Element-wise shape unification: equal shapes, a scalar, or open extents.
 * On success *out gets the combined shape (dtype/space untouched). */
bool sema_unify_shape(const Type *a, const Type *b, Type *out)
{
	Type r = *a;
	if (a->rank == 0 || (a->rank == RANK_CTX && b->rank != 0)) {
		r = *b;
		r.dt = a->dt;
		r.space = a->space;
		if (a->rank == RANK_CTX && b->rank == 0)
			r.rank = RANK_CTX;
		*out = r;
		return true;
	}
	if (b->rank == 0 || b->rank == RANK_CTX) {
		*out = r;
		return true;
	}
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++) {
		long long x = a->cdims[i], y = b->cdims[i];
		if (x == DIM_CTX) {
			r.cdims[i] = y;
			r.dims[i] = b->dims[i];
		} else if (y == DIM_CTX || x == y) {
			if (x == -1 && y == -1 && !sema_expr_same(a->dims[i], b->dims[i]))
				return false;
		} else {
			return false;
		}
	}
	*out = r;
	return true;
}

/* Literal kind: 1 = integer constant, 2 = float literal, 0 = typed value. */
int sema_lit_kind(const Expr *e)
{
	switch (e->kind) {
	case E_INT: return 1;
	case E_FLOAT: case E_INF: return 2;
	case E_IDENT: return e->is_const && e->sym && e->sym->kind == SYM_CONST ? 1 : 0;
	case E_UNARY:
		return e->op == '-' ? sema_lit_kind(e->lhs) : 0;
	case E_BINARY: {
		if (e->op != '+' && e->op != '-' && e->op != '*' && e->op != '/')
			return 0;
		int a = sema_lit_kind(e->lhs), b = sema_lit_kind(e->rhs);
		if (!a || !b)
			return 0;
		return a > b ? a : b;
	}
	default: return 0;
	}
}

/* Give a literal subtree the dtype it adapts to. */
void sema_settle_dt(Expr *e, DType dt)
{
	if (!e || !sema_lit_kind(e))
		return;
	e->type.dt = dt;
	if (e->kind == E_UNARY)
		sema_settle_dt(e->lhs, dt);
	else if (e->kind == E_BINARY) {
		sema_settle_dt(e->lhs, dt);
		sema_settle_dt(e->rhs, dt);
	}
}

static bool is_elementwise_call(const Expr *e)
{
	if (e->kind != E_CALL || !e->sym)
		return false;
	const Builtin *b = builtin_get((BuiltinId)e->sym->index);
	return b && (b->rule == BR_UNARY_FLOAT || b->rule == BR_BINARY || b->rule == BR_WHERE ||
	             b->rule == BR_CAST);
}

/* Close the open shape of e (and its element-wise subtree) with t. */
static bool settle_shape(Sema *s, Expr *e, const Type *t)
{
	if (!e || !shape_open(&e->type))
		return true;
	if (t->rank == RANK_CTX || shape_open(t))
		return true;   /* still open: the caller reports */
	if (e->kind == E_CALL && e->sym) {
		const Builtin *b = builtin_get((BuiltinId)e->sym->index);
		if (b && b->rule == BR_INDEX) {
			if (t->rank < 1 || (b->id == BI_COL_IDX && t->rank < 2)) {
				Diag *d = sema_err(s, "CK-SEM-034", e->span,
				                   "%s() needs a fragment shape of rank %d or more, but the context is %s",
				                   b->name, b->id == BI_COL_IDX ? 2 : 1, sema_shape_str(s, t));
				diag_set(&d->hint, "use %s() inside an assignment to a [M, N] fragment", b->name);
				return false;
			}
		}
	}
	DType dt = e->type.dt;
	Space sp = e->type.space;
	e->type = *t;
	e->type.dt = dt;
	e->type.space = sp;
	if (e->kind == E_UNARY)
		return settle_shape(s, e->lhs, t);
	if (e->kind == E_BINARY)
		return settle_shape(s, e->lhs, t) & settle_shape(s, e->rhs, t);
	if (is_elementwise_call(e)) {
		bool ok = true;
		for (int i = 0; i < e->nargs; i++)
			ok &= settle_shape(s, e->args[i], t);
		return ok;
	}
	return true;
}

/* Dtype of an element-wise combination of a and b (literals adapt).
 * `what` names the operation in messages. */
static bool unify_dt(Sema *s, Expr *a, Expr *b, Span sp, const char *what, DType *out)
{
	int la = sema_lit_kind(a), lb = sema_lit_kind(b);
	DType da = a->type.dt, db = b->type.dt;
	if (la && lb) {
		*out = (la == 2 || lb == 2) ? DT_F32 : DT_I32;
		if (la == 2 || lb == 2) {
			sema_settle_dt(a, DT_F32);
			sema_settle_dt(b, DT_F32);
		}
		return true;
	}
	if (la || lb) {
		Expr *lit = la ? a : b;
		DType other = la ? db : da;
		int lk = la ? la : lb;
		if (other == DT_BOOL || (lk == 2 && !dtype_is_float(other))) {
			Diag *d = sema_err(s, "CK-SEM-031", sp, "%s mixes a %s literal with a %s value",
			                   what, lk == 2 ? "float" : "integer", dtype_name(other));
			diag_set(&d->hint, "cast the %s operand explicitly, e.g. f32(x)", dtype_name(other));
			return false;
		}
		sema_settle_dt(lit, other);
		*out = other;
		return true;
	}
	if (da == db) {
		*out = da;
		return true;
	}
	if (sema_dt_is_int(da) && sema_dt_is_int(db) && a->type.rank == 0 && b->type.rank == 0) {
		*out = (da == DT_I64 || db == DT_I64) ? DT_I64 : DT_U32;
		return true;
	}
	DType wide = (da == DT_F32 || db == DT_F32) ? DT_F32 : (dtype_is_float(da) ? da : db);
	Expr *narrow = (a->type.dt == wide) ? b : a;
	Diag *d = sema_err(s, "CK-SEM-031", sp, "%s mixes %s and %s; Cake IR never converts implicitly",
	                   what, dtype_name(da), dtype_name(db));
	diag_set(&d->hint, "convert one side explicitly, e.g. %s(...) around the %s operand",
	         dtype_name(wide), dtype_name(narrow->type.dt));
	return false;
}

/* ---- constant folding ---- */

static bool fold_binary(Sema *s, Expr *e)
{
	long long a = e->lhs->cval, b = e->rhs->cval, r = 0;
	if ((e->op == '/' || e->op == '%') && b == 0) {
		Diag *d = sema_err(s, "CK-SEM-005", e->span, "division by zero in a constant expression");
		diag_set(&d->hint, "the right operand of '%c' folds to 0", e->op);
		return false;
	}
	if ((e->op == OP_SHL || e->op == OP_SHR) && (b < 0 || b > 62)) {
		Diag *d = sema_err(s, "CK-SEM-005", e->span, "shift by %lld in a constant expression is out of range", b);
		diag_set(&d->hint, "shift amounts must be between 0 and 62");
		return false;
	}
	/* the one evaluator's rule: a result that overflows is not a constant */
	if (eval_binop(e->op, a, b, &r)) {
		e->is_const = true;
		e->cval = r;
	}
	return true;
}

/* ---- expressions ---- */

static bool check_ident(Sema *s, Expr *e)
{
	Sym *y = sema_find(s, e->name);
	if (!y) {
		unsigned mask = 0;
		if (s->cx == CX_CONST)
			mask = 1u << SYM_CONST;
		else if (s->cx == CX_DIMS)
			mask = (1u << SYM_CONST) | (1u << SYM_DIM);
		sema_unknown(s, e->name, e->span, "name", mask);
		return false;
	}
	e->sym = y;
	if (s->cx == CX_CONST && y->kind != SYM_CONST) {
		Diag *d = sema_err(s, "CK-SEM-004", e->span, "'%s' is a %s, not a compile-time constant",
		                   e->name, sema_kind_name(y->kind));
		diag_set(&d->hint, "%s must be constant; declare `const NAME = value` and use it", s->cx_what);
		return false;
	}
	if (s->cx == CX_DIMS && y->kind != SYM_CONST && y->kind != SYM_DIM) {
		Diag *d = sema_err(s, s->cx_rule, e->span, "%s may use only dimensions and consts, but '%s' is a %s",
		                   s->cx_what, e->name, sema_kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		diag_set(&d->hint, "use the symbolic sizes of the global params (M, N, K) and consts");
		return false;
	}
	switch (y->kind) {
	case SYM_CONST:
		if (!sema_const_value(s, y))
			return false;
		e->type = scalar_type(DT_I32);
		e->is_const = true;
		e->cval = y->decl->value->cval;
		return true;
	case SYM_DIM: case SYM_GRIDVAR: case SYM_LOOPVAR:
		e->type = scalar_type(DT_I32);
		return true;
	case SYM_LET:
		if (!y->stmt || !y->stmt->src || y->stmt->src->type.dt == DT_NONE)
			return false;
		e->type = y->stmt->src->type;
		if (y->stmt->src->is_const) {
			e->is_const = true;
			e->cval = y->stmt->src->cval;
		}
		return true;
	case SYM_PARAM:
		e->type = sema_decl_type(y->decl);
		if (y->decl->space == SP_GLOBAL) {
			Diag *d = sema_err(s, "CK-SEM-037", e->span,
			                   "global tensor '%s' cannot be used as a value", e->name);
			sema_loc_sym(d, y);
			diag_set(&d->hint, "index it (%s[i, j]) for one element, or `load` a tile into a fragment", e->name);
			return false;
		}
		return true;
	case SYM_FRAG:
		sema_use_sym(s, y, e->span, false);
		e->type = sema_decl_type(y->decl);
		return true;
	case SYM_SMEM: {
		Diag *d = sema_err(s, "CK-SEM-037", e->span,
		                   "smem buffer '%s' cannot be used as a value", e->name);
		sema_loc_sym(d, y);
		diag_set(&d->hint, "`load` it into a fragment first: load x <- %s[...]", e->name);
		return false;
	}
	default: {
		Diag *d = sema_err(s, "CK-SEM-003", e->span, "'%s' is a %s, not a value", e->name, sema_kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		sema_loc_sym(d, y);
		return false;
	}
	}
}

const Expr *sema_frag_read(const Expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == E_IDENT && e->sym && e->sym->kind == SYM_FRAG)
		return e;
	const Expr *r = sema_frag_read(e->lhs);
	if (!r)
		r = sema_frag_read(e->rhs);
	for (int i = 0; !r && i < e->nargs; i++)
		r = sema_frag_read(e->args[i]);
	return r;
}

bool sema_uniform_err(Sema *s, const Expr *e, const char *what)
{
	const Expr *f = sema_frag_read(e);
	if (!f)
		return false;
	Diag *d = sema_err(s, "CK-SEM-037", f->span, "%s is uniform over the role and cannot read fragment '%s'", what, f->name);
	diag_set(&d->hint, "a reduction such as sum(%s) is a value in fragment math; keep it in a fragment expression", f->name);
	return true;
}

/* Check an integer scalar (slice start, loop bound, ...). */
bool sema_need_int(Sema *s, Expr *e, const char *what)
{
	if (!sema_check_expr(s, e))
		return false;
	if (e->type.rank == 0 && sema_uniform_err(s, e, what))
		return false;
	if (e->type.rank != 0) {
		Diag *d = sema_err(s, "CK-SEM-037", e->span, "%s must be a scalar, but it has shape %s",
		                   what, sema_shape_str(s, &e->type));
		diag_set(&d->hint, "use loop variables, grid coordinates, lets, dims and consts here");
		return false;
	}
	if (!sema_dt_is_int(e->type.dt)) {
		Diag *d = sema_err(s, "CK-SEM-036", e->span, "%s must be an integer, but it is %s",
		                   what, dtype_name(e->type.dt));
		diag_set(&d->hint, "convert with i32(...)");
		return false;
	}
	return true;
}

/* Check a boolean expression of the given rank class (scalar when scalar). */
bool sema_need_bool(Sema *s, Expr *e, const char *what, bool scalar)
{
	if (!sema_check_expr(s, e))
		return false;
	if (scalar && e->type.rank == 0 && sema_uniform_err(s, e, what))
		return false;
	if (scalar && e->type.rank != 0) {
		Diag *d = sema_err(s, "CK-SEM-037", e->span, "%s must be a scalar, but it has shape %s",
		                   what, sema_shape_str(s, &e->type));
		diag_set(&d->hint, "a condition is uniform over the role; reduce the fragment first");
		return false;
	}
	if (e->type.dt != DT_BOOL) {
		Diag *d = sema_err(s, "CK-SEM-036", e->span, "%s must be a boolean, but it is %s",
		                   what, dtype_name(e->type.dt));
		diag_set(&d->hint, "compare it, e.g. `x != 0`");
		return false;
	}
	return true;
}

/* Slice type of a reference base[slices] to a global param or smem buffer.
 * Fills e->type with one extent per slice (points have extent 1). */
bool sema_check_ref(Sema *s, Expr *e, bool write, bool tma)
{
	Expr *base = e->kind == E_INDEX ? e->base : e;
	if (base->kind != E_IDENT) {
		sema_err(s, "CK-SEM-027", base->span, "expected the name of a global param or smem buffer");
		return false;
	}
	Sym *y = sema_find(s, base->name);
	if (!y) {
		sema_unknown(s, base->name, base->span, "tensor", (1u << SYM_PARAM) | (1u << SYM_SMEM));
		return false;
	}
	base->sym = e->sym = y;
	if (y->kind == SYM_FRAG && e->kind == E_INDEX) {
		Diag *d = sema_err(s, "CK-SEM-026", e->span, "fragment '%s' cannot be indexed", y->name);
		sema_loc_sym(d, y);
		diag_set(&d->hint, "fragments are whole tiles in registers; operate on the whole fragment");
		return false;
	}
	if (!(y->kind == SYM_SMEM || (y->kind == SYM_PARAM && y->decl->space == SP_GLOBAL))) {
		Diag *d = sema_err(s, "CK-SEM-027", base->span, "'%s' is a %s, but a global param or smem buffer is expected",
		                   y->name, sema_kind_name(y->kind));
		sema_loc_sym(d, y);
		diag_related(d, y->span, "'%s' declared here", y->name);
		return false;
	}
	sema_use_sym(s, y, base->span, write);
	Type bt = sema_decl_type(y->decl);
	base->type = bt;
	if (e->kind != E_INDEX) {
		e->type = bt;
		return true;
	}
	bool ok = true;
	if (e->nslices != bt.rank) {
		Diag *d = sema_err(s, "CK-SEM-026", e->span, "'%s' has %d dimension%s but is indexed with %d slice%s",
		                   y->name, bt.rank, bt.rank == 1 ? "" : "s", e->nslices, e->nslices == 1 ? "" : "s");
		sema_loc_sym(d, y);
		diag_set(&d->hint, "give one slice per dimension: a point i, a range i +: n, or ':'");
		ok = false;
	}
	Type t = bt;
	t.rank = e->nslices < MAX_RANK ? e->nslices : MAX_RANK;
	int nscatter = 0;
	for (int i = 0; i < e->nslices; i++) {
		Slice *sl = &e->slices[i];
		long long ext = 1;
		Expr *dim = NULL;
		Sym *fy = sl->kind == SL_POINT && s->scatter_ok && sl->start && sl->start->kind == E_IDENT
		          ? sema_find(s, sl->start->name) : NULL;
		if (fy && fy->kind == SYM_FRAG) {
			/* scatter index: element r of the vector names the row of this
			 * dimension that element r of the value goes to (LANGUAGE.md) */
			if (!sema_check_expr(s, sl->start))
				ok = false;
			else if (sl->start->type.rank != 1 || !sema_dt_is_int(sl->start->type.dt)) {
				Diag *d = sema_err(s, "CK-SEM-037", sl->start->span,
				                   "a scatter index must be an integer vector fragment, but '%s' is %s %s",
				                   fy->name, dtype_name(sl->start->type.dt), sema_shape_str(s, &sl->start->type));
				sema_loc_sym(d, fy);
				diag_set(&d->hint, "declare the index as `frag %s: i32[n] in ROLE`", fy->name);
				ok = false;
			} else if (nscatter++) {
				Diag *d = sema_err(s, "CK-SEM-026", sl->span, "'%s' is indexed with more than one scatter index", y->name);
				diag_set(&d->hint, "scatter along one dimension; give the others as ranges or ':'");
				ok = false;
			} else {
				ext = sl->start->type.cdims[0];
				dim = sl->start->type.dims[0];
			}
		} else if (sl->kind != SL_ALL && sl->start)
			ok &= sema_need_int(s, sl->start, "a slice start");
		if (sl->kind == SL_RANGE) {
			if (sema_need_int(s, sl->len, "a slice length")) {
				if (!sl->len->is_const) {
					Diag *d = sema_err(s, "CK-SEM-004", sl->len->span,
					                   "the slice length of '%s' must be a compile-time constant", y->name);
					diag_set(&d->hint, "write the tile size as a literal or a const");
					ok = false;
				} else if (sl->len->cval <= 0) {
					sema_err(s, "CK-SEM-026", sl->len->span, "slice length %lld is not positive", sl->len->cval);
					ok = false;
				}
				ext = sl->len->cval;
				dim = sl->len;
			} else {
				ok = false;
			}
		} else if (sl->kind == SL_ALL) {
			if (tma) {
				Diag *d = sema_err(s, "CK-SEM-026", sl->span,
				                   "a TMA box needs an explicit extent in every dimension, not ':'");
				diag_set(&d->hint, "write `start +: length`");
				ok = false;
			}
			if (i < bt.rank) {
				ext = bt.cdims[i];
				dim = bt.dims[i];
			}
		}
		if (i < MAX_RANK) {
			t.cdims[i] = ext;
			t.dims[i] = dim;
		}
	}
	e->type = t;
	return ok;
}

static const Builtin *call_builtin(Sema *s, Expr *e)
{
	const Builtin *b = builtin_find(e->name);
	if (!b) {
		Sym *y = sema_find(s, e->name);
		if (y) {
			Diag *d = sema_err(s, "CK-SEM-033", e->span, "'%s' is a %s, not a function", e->name, sema_kind_name(y->kind));
			diag_related(d, y->span, "'%s' declared here", e->name);
			const char *g = builtin_suggest(e->name);
			if (g)
				diag_set(&d->hint, "did you mean the builtin '%s'?", g);
			return NULL;
		}
		Diag *d = sema_err(s, "CK-SEM-033", e->span, "unknown function '%s'", e->name);
		const char *g = builtin_suggest(e->name);
		if (g) {
			diag_set(&d->hint, "did you mean '%s'?", g);
			sema_fix_rename(s, d, e->span, e->name, g);
		} else
			diag_set(&d->hint, "Cake IR has only builtins; see docs/LANGUAGE.md for the list");
		return NULL;
	}
	if (!s->bsym[b->id]) {
		Sym *y = sema_new_sym(s, SYM_BUILTIN, b->name, NOSPAN);
		y->index = b->id;
		s->bsym[b->id] = y;
	}
	e->sym = s->bsym[b->id];
	return b;
}

static bool arg_float(Sema *s, const Builtin *b, Expr *a, bool allow_int)
{
	DType t = a->type.dt;
	if (dtype_is_float(t) || (allow_int && sema_dt_is_int(t)) || sema_lit_kind(a))
		return true;
	Diag *d = sema_err(s, "CK-SEM-035", a->span, "%s() needs a %s argument, but it is %s",
	                   b->name, allow_int ? "numeric" : "floating-point", dtype_name(t));
	diag_set(&d->hint, "convert it first, e.g. %s(f32(x))", b->name);
	return false;
}

static bool arg_rank2(Sema *s, const Builtin *b, Expr *a)
{
	if (shape_open(&a->type)) {
		Diag *d = sema_err(s, "CK-SEM-034", a->span, "cannot infer the shape of the argument of %s()", b->name);
		diag_set(&d->hint, "assign the broadcast to a fragment first, then pass the fragment");
		return false;
	}
	if (a->type.rank != 2) {
		Diag *d = sema_err(s, "CK-SEM-035", a->span, "%s() needs a rank-2 [M, N] argument, but it has shape %s",
		                   b->name, sema_shape_str(s, &a->type));
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	return true;
}

static bool arg_const(Sema *s, const Builtin *b, Expr *a, const char *what, long long lo, long long hi)
{
	if (!a->is_const || a->type.rank != 0) {
		Diag *d = sema_err(s, "CK-SEM-035", a->span, "the %s of %s() must be a compile-time constant", what, b->name);
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	if (a->cval < lo || a->cval > hi) {
		Diag *d = sema_err(s, "CK-SEM-035", a->span, "the %s of %s() is %lld, outside [%lld, %lld]",
		                   what, b->name, a->cval, lo, hi);
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	return true;
}

/* A constant that tiles an extent (cumsum's segment length, trisolve's block size): in
 * 1 .. ext and dividing it (ext unknown, <= 0: only positive). */
static bool arg_divisor(Sema *s, const Builtin *b, Expr *a, const char *what, long long ext)
{
	if (!arg_const(s, b, a, what, 1, ext > 0 ? ext : (1ll << 40)))
		return false;
	if (ext > 0 && ext % a->cval) {
		Diag *d = sema_err(s, "CK-SEM-035", a->span, "the %s of %s() is %lld, which does not divide the extent %lld", what, b->name,
		                   a->cval, ext);
		diag_set(&d->hint, "pieces of that length must tile the extent: a divisor of %lld", ext);
		return false;
	}
	return true;
}

bool sema_shape_err(Sema *s, Span sp, const char *what, const Type *a, const Type *b)
{
	Diag *d = sema_err(s, "CK-SEM-030", sp, "%s: shapes %s and %s do not match",
	                   what, sema_shape_str(s, a), sema_shape_str(s, b));
	diag_set(&d->hint, "shapes must be equal, one a scalar, or a vector broadcast with rows(v) / cols(v)");
	diag_set(&d->condition, "shape(lhs) == shape(rhs)");
	return false;
}

/* Element-wise combination of n operands (binary ops, min/max, where). */
static bool combine(Sema *s, Expr *e, Expr **ops, int n, const char *what, bool numeric_dt)
{
	Type shape = ops[0]->type;
	for (int i = 1; i < n; i++) {
		Type r;
		if (!sema_unify_shape(&shape, &ops[i]->type, &r))
			return sema_shape_err(s, e->span, what, &shape, &ops[i]->type);
		shape = r;
	}
	if (!shape_open(&shape))
		for (int i = 0; i < n; i++)
			if (!settle_shape(s, ops[i], &shape))
				return false;
	e->type = shape;
	e->type.space = SP_NONE;
	for (int i = 0; i < n; i++)
		if (ops[i]->type.space == SP_FRAG || ops[i]->type.rank != 0)
			e->type.space = SP_FRAG;
	if (e->type.rank == 0)
		e->type.space = SP_NONE;
	if (numeric_dt) {
		DType dt = DT_NONE;
		if (!unify_dt(s, ops[0], ops[1], e->span, what, &dt))
			return false;
		for (int i = 2; i < n; i++) {
			if (!unify_dt(s, ops[i - 1], ops[i], e->span, what, &dt))
				return false;
		}
		e->type.dt = dt;
	}
	return true;
}

static bool check_call(Sema *s, Expr *e)
{
	const Builtin *b = call_builtin(s, e);
	bool ok = true;
	for (int i = 0; i < e->nargs; i++) {
		bool scatter = s->scatter_ok;
		s->scatter_ok = b && b->rule == BR_FETCH && i == 0;   /* fetch_add(G[b, idx], v): idx may be a vector */
		ok &= sema_check_expr(s, e->args[i]);
		s->scatter_ok = scatter;
	}
	if (!b || !ok)
		return false;
	if (b->nresults > 1 && s->multi_ok != e) {
		Diag *d = sema_err(s, "CK-SEM-032", e->span, "%s() returns %d values and must be assigned directly",
		                   b->name, b->nresults);
		diag_set(&d->hint, "write `v, i = %s(...)` as its own statement", b->name);
		return false;
	}
	if (e->nargs < b->min_args || e->nargs > b->max_args) {
		Diag *d;
		if (b->min_args == b->max_args)
			d = sema_err(s, "CK-SEM-035", e->span, "%s() takes %d argument%s, but %d %s given", b->name,
			             b->min_args, b->min_args == 1 ? "" : "s", e->nargs, e->nargs == 1 ? "is" : "are");
		else
			d = sema_err(s, "CK-SEM-035", e->span, "%s() takes %d to %d arguments, but %d %s given", b->name,
			             b->min_args, b->max_args, e->nargs, e->nargs == 1 ? "is" : "are");
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	Expr **a = e->args;
	switch (b->rule) {
	case BR_UNARY_FLOAT:
		if (!arg_float(s, b, a[0], b->id == BI_ABS))
			return false;
		e->type = a[0]->type;
		if (sema_lit_kind(a[0])) {
			sema_settle_dt(a[0], DT_F32);
			e->type.dt = DT_F32;
		}
		return true;
	case BR_BINARY:
		if (a[0]->type.dt == DT_BOOL || a[1]->type.dt == DT_BOOL) {
			sema_err(s, "CK-SEM-035", e->span, "%s() needs numeric arguments, not bool", b->name);
			return false;
		}
		return combine(s, e, a, 2, b->name, true);
	case BR_WHERE:
		if (a[0]->type.dt != DT_BOOL) {
			Diag *d = sema_err(s, "CK-SEM-035", a[0]->span, "the condition of where() must be bool, but it is %s",
			                   dtype_name(a[0]->type.dt));
			diag_set(&d->hint, "compare it, e.g. where(x > 0, x, 0)");
			return false;
		}
		if (!combine(s, e, a, 3, "where()", false))
			return false;
		{
			DType dt;
			if (!unify_dt(s, a[1], a[2], e->span, "where()", &dt))
				return false;
			e->type.dt = dt;
		}
		return true;
	case BR_ROW_REDUCE: case BR_COL_REDUCE: case BR_ROW_ARG:
		if (!arg_rank2(s, b, a[0]))
			return false;
		if (a[0]->type.dt == DT_BOOL) {
			sema_err(s, "CK-SEM-035", a[0]->span, "%s() needs a numeric argument, not bool", b->name);
			return false;
		}
		e->type = a[0]->type;
		e->type.rank = 1;
		if (b->rule == BR_COL_REDUCE) {
			e->type.dims[0] = a[0]->type.dims[1];
			e->type.cdims[0] = a[0]->type.cdims[1];
		}
		e->type.dims[1] = NULL;
		e->type.cdims[1] = 0;
		return true;
	case BR_FETCH: {
		const Expr *r = a[0];
		const Sym *g = r->kind == E_INDEX && r->base && r->base->kind == E_IDENT ? sema_find(s, r->base->name) : NULL;
		bool pts = r->kind == E_INDEX;
		for (int i = 0; pts && i < r->nslices; i++)
			pts = r->slices[i].kind == SL_POINT;
		bool mem = g && ((g->kind == SYM_PARAM && g->decl && g->decl->space == SP_GLOBAL) || g->kind == SYM_SMEM);
		if (!mem || !pts || (r->type.dt != DT_I32 && r->type.dt != DT_U32 && r->type.dt != DT_F32)) {
			Diag *d = sema_err(s, "CK-SEM-035", a[0]->span,
			                   "fetch_add() needs an element reference into a global tensor or shared buffer of i32, u32 or f32 (one point index per dimension, at most one of them an index vector)");
			diag_set(&d->hint, "e.g. slot = fetch_add(Cursor[b, lab], 1) with `frag lab: i32[n] in ROLE`");
			return false;
		}
		Expr *ops[2] = {a[0], a[1]};
		if (!combine(s, e, ops, 2, "fetch_add", true))
			return false;
		e->type = r->type;
		e->type.space = r->type.rank ? SP_FRAG : SP_NONE;
		return true;
	}
	case BR_CUMSUM:
		if (shape_open(&a[0]->type) || a[0]->type.rank < 1) {
			sema_err(s, "CK-SEM-035", a[0]->span, "cumsum() needs a fragment argument of rank 1 or 2");
			return false;
		}
		if (!arg_float(s, b, a[0], true) || !arg_const(s, b, a[1], "dimension", 0, a[0]->type.rank - 1))
			return false;
		if (e->nargs == 3) {   /* cumsum(x, dim, seg): the scan restarts every seg elements */
			if (!arg_divisor(s, b, a[2], "segment length", a[0]->type.cdims[a[1]->cval]))
				return false;
		}
		e->type = a[0]->type;
		return true;
	case BR_TRI:
		if (!arg_rank2(s, b, a[0]))
			return false;
		if (e->nargs == 2 && !sema_need_int(s, a[1], "the diagonal of tril/triu"))
			return false;
		e->type = a[0]->type;
		return true;
	case BR_TRISOLVE: {
		bool blocks = e->nargs == 2 && a[1]->type.rank == 0;   /* trisolve(L, S): the inverses of L's S x S diagonal blocks */
		if (!arg_rank2(s, b, a[0]) || !arg_float(s, b, a[0], false) ||
		    (e->nargs == 2 && !blocks && (!arg_rank2(s, b, a[1]) || !arg_float(s, b, a[1], false))))
			return false;
		if (a[0]->type.cdims[0] != a[0]->type.cdims[1]) {
			Diag *d = sema_err(s, "CK-SEM-035", a[0]->span, "trisolve() needs a square L, but it is %s",
			                   sema_shape_str(s, &a[0]->type));
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		if (blocks && !arg_divisor(s, b, a[1], "block size", a[0]->type.cdims[0]))
			return false;
		if (e->nargs == 1 || blocks) {   /* trisolve(L): the inverse, L X = I; with S, of each diagonal block */
			e->type = a[0]->type;
			return true;
		}
		if (a[1]->type.cdims[0] != a[0]->type.cdims[0]) {
			Diag *d = sema_err(s, "CK-SEM-030", e->span, "trisolve(): L is %s but B is %s; B needs %lld rows",
			                   sema_shape_str(s, &a[0]->type), sema_shape_str(s, &a[1]->type), a[0]->type.cdims[0]);
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		if (a[0]->type.dt != a[1]->type.dt) {
			Diag *d = sema_err(s, "CK-SEM-031", e->span, "trisolve(): L is %s but B is %s",
			                   dtype_name(a[0]->type.dt), dtype_name(a[1]->type.dt));
			diag_set(&d->hint, "cast one of them, e.g. f32(...)");
			return false;
		}
		e->type = a[1]->type;
		return true;
	}
	case BR_TOPK:
		if (!arg_rank2(s, b, a[0]))
			return false;
		if (!arg_const(s, b, a[1], "k", 1, a[0]->type.cdims[1] > 0 ? a[0]->type.cdims[1] : LLONG_MAX))
			return false;
		e->type = a[0]->type;
		e->type.cdims[1] = a[1]->cval;
		e->type.dims[1] = a[1];
		return true;
	case BR_BCAST_ROWS: case BR_BCAST_COLS:
		if (shape_open(&a[0]->type) || a[0]->type.rank != 1) {
			Diag *d = sema_err(s, "CK-SEM-035", a[0]->span, "%s() broadcasts a rank-1 vector, but its argument has shape %s",
			                   b->name, sema_shape_str(s, &a[0]->type));
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		e->type = a[0]->type;
		e->type.rank = 2;
		if (b->rule == BR_BCAST_ROWS) {
			e->type.dims[1] = NULL;
			e->type.cdims[1] = DIM_CTX;
		} else {
			e->type.dims[1] = a[0]->type.dims[0];
			e->type.cdims[1] = a[0]->type.cdims[0];
			e->type.dims[0] = NULL;
			e->type.cdims[0] = DIM_CTX;
		}
		return true;
	case BR_INDEX:
		e->type = scalar_type(DT_I32);
		e->type.space = SP_FRAG;
		e->type.rank = RANK_CTX;
		return true;
	case BR_L2NORM:
		if (shape_open(&a[0]->type) || a[0]->type.rank < 1 || a[0]->type.rank > 2) {
			sema_err(s, "CK-SEM-035", a[0]->span, "l2norm() needs a fragment of rank 1 or 2");
			return false;
		}
		if (!arg_float(s, b, a[0], false))
			return false;
		e->type = a[0]->type;
		return true;
	case BR_SUM:
		if (shape_open(&a[0]->type) || a[0]->type.rank < 1 || a[0]->type.rank > 2 || a[0]->type.space != SP_FRAG) {
			Diag *d = sema_err(s, "CK-SEM-035", a[0]->span, "sum() reduces a fragment value of rank 1 or 2, but its argument has shape %s",
			                   sema_shape_str(s, &a[0]->type));
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		if (a[0]->type.dt == DT_BOOL) {
			sema_err(s, "CK-SEM-035", a[0]->span, "sum() needs a numeric argument, not bool");
			return false;
		}
		e->type = scalar_type(a[0]->type.dt);
		return true;
	case BR_CAST:
		e->type = a[0]->type;
		e->type.dt = b->cast_to;
		if (sema_lit_kind(a[0]) == 1 && a[0]->is_const && sema_dt_is_int(b->cast_to)) {
			e->is_const = true;
			e->cval = a[0]->cval;
		}
		return true;
	}
	return true;
}

/* Type e (value context). Returns false when e could not be typed: the
 * reason has been reported and callers stay quiet. */
bool sema_check_expr(Sema *s, Expr *e)
{
	if (!e)
		return false;
	if (s->cx != CX_STMT && (e->kind == E_CALL || e->kind == E_INDEX || e->kind == E_TRANSPOSE ||
	                         e->kind == E_FLOAT || e->kind == E_INF)) {
		Diag *d;
		if (s->cx == CX_CONST)
			d = sema_err(s, "CK-SEM-004", e->span, "%s must be a compile-time integer constant", s->cx_what);
		else
			d = sema_err(s, s->cx_rule, e->span, "%s may use only integer arithmetic on dimensions and consts",
			             s->cx_what);
		diag_set(&d->hint, "use literals, consts, dims and + - * / %% only");
		return false;
	}
	switch (e->kind) {
	case E_INT:
		e->type = scalar_type(DT_I32);
		e->is_const = true;
		e->cval = e->ival;
		return true;
	case E_FLOAT: case E_INF:
		e->type = scalar_type(DT_F32);
		return true;
	case E_IDENT:
		return check_ident(s, e);
	case E_UNARY: {
		if (!sema_check_expr(s, e->lhs))
			return false;
		e->type = e->lhs->type;
		if (e->op == '!') {
			if (e->lhs->type.dt != DT_BOOL) {
				Diag *d = sema_err(s, "CK-SEM-036", e->span, "'!' needs a boolean operand, but it is %s",
				                   dtype_name(e->lhs->type.dt));
				diag_set(&d->hint, "compare the value instead, e.g. x == 0");
				return false;
			}
		} else if (e->lhs->type.dt == DT_BOOL) {
			sema_err(s, "CK-SEM-036", e->span, "unary '-' needs a numeric operand, not bool");
			return false;
		}
		if (e->lhs->is_const && eval_unop(e->op, e->lhs->cval, &e->cval))
			e->is_const = true;
		return true;
	}
	case E_TRANSPOSE: {
		Diag *d = sema_err(s, "CK-SEM-036", e->span, "'^T' is allowed only on wgmma/mma operands and on the whole value of a store");
		diag_set(&d->hint, "transpose an operand in `wgmma acc += a @ b^T`, or a stored value in `store G[...] <- v^T`");
		return false;
	}
	case E_INDEX: {
		if (!sema_check_ref(s, e, false, false))
			return false;
		Type v = sema_drop1(e->type);
		if (v.rank == 1 && s->scatter_ok) {   /* fetch_add(G[b, idx], v): one element per index */
			e->type = v;
			e->type.space = SP_FRAG;
			return true;
		}
		if (v.rank != 0) {
			Diag *d = sema_err(s, "CK-SEM-037", e->span,
			                   "a %s tile of '%s' cannot be used as a value in an expression",
			                   sema_shape_str(s, &v), e->sym->name);
			sema_loc_sym(d, e->sym);
			diag_set(&d->hint, "`load` the tile into a fragment first: load x <- %s[...]", e->sym->name);
			return false;
		}
		e->type = scalar_type(e->type.dt);
		return true;
	}
	case E_CALL:
		return check_call(s, e);
	case E_BINARY:
		break;
	}
	/* binary operators */
	if (e->op == '@') {
		Diag *d = sema_err(s, "CK-SEM-036", e->span, "'@' (matrix product) is allowed only in wgmma and mma statements");
		diag_set(&d->hint, "write `wgmma acc += a @ b` with acc a fragment");
		return false;
	}
	bool okl = sema_check_expr(s, e->lhs);
	bool okr = sema_check_expr(s, e->rhs);
	if (!okl || !okr)
		return false;
	const char *opname;
	char buf[4];
	switch (e->op) {
	case OP_EQ: opname = "'=='"; break;
	case OP_NE: opname = "'!='"; break;
	case OP_LE: opname = "'<='"; break;
	case OP_GE: opname = "'>='"; break;
	case OP_AND: opname = "'&&'"; break;
	case OP_OR: opname = "'||'"; break;
	case OP_SHL: opname = "'<<'"; break;
	case OP_SHR: opname = "'>>'"; break;
	default:
		buf[0] = '\'';
		buf[1] = (char)e->op;
		buf[2] = '\'';
		buf[3] = 0;
		opname = arena_strdup(&s->c->arena, buf);
	}
	const char *what = arena_printf(&s->c->arena, "operator %s", opname);
	Expr *ops[2] = { e->lhs, e->rhs };
	bool logical = e->op == OP_AND || e->op == OP_OR;
	bool compare = e->op == OP_EQ || e->op == OP_NE || e->op == '<' || e->op == '>' ||
	               e->op == OP_LE || e->op == OP_GE;
	bool intonly = e->op == '%' || e->op == OP_SHL || e->op == OP_SHR;
	if (logical) {
		for (int i = 0; i < 2; i++)
			if (ops[i]->type.dt != DT_BOOL) {
				Diag *d = sema_err(s, "CK-SEM-036", ops[i]->span, "%s needs boolean operands, but this one is %s",
				                   what, dtype_name(ops[i]->type.dt));
				diag_set(&d->hint, "compare it, e.g. `x != 0`");
				return false;
			}
		if (!combine(s, e, ops, 2, what, false))
			return false;
		e->type.dt = DT_BOOL;
	} else {
		for (int i = 0; i < 2; i++) {
			bool bad = (!compare || (e->op != OP_EQ && e->op != OP_NE)) && ops[i]->type.dt == DT_BOOL;
			if (bad) {
				Diag *d = sema_err(s, "CK-SEM-036", ops[i]->span, "%s needs numeric operands, but this one is bool", what);
				diag_set(&d->hint, "use && / || for booleans, or where(c, 1, 0) for a number");
				return false;
			}
			if (intonly && !sema_dt_is_int(ops[i]->type.dt) && sema_lit_kind(ops[i]) != 1) {
				Diag *d = sema_err(s, "CK-SEM-036", ops[i]->span, "%s needs integer operands, but this one is %s",
				                   what, dtype_name(ops[i]->type.dt));
				diag_set(&d->hint, "convert with i32(...) first");
				return false;
			}
		}
		if (!combine(s, e, ops, 2, what, true))
			return false;
		if (compare)
			e->type.dt = DT_BOOL;
	}
	if (e->lhs->is_const && e->rhs->is_const && e->lhs->type.rank == 0 && e->rhs->type.rank == 0 &&
	    !dtype_is_float(e->lhs->type.dt) && !dtype_is_float(e->rhs->type.dt))
		return fold_binary(s, e);
	return true;
}

/* Fold a const declaration on demand (consts may refer to later consts). */
bool sema_const_value(Sema *s, Sym *y)
{
	int i = y->index;
	if (s->const_state[i] == 2)
		return y->decl->value && y->decl->value->is_const;
	if (s->const_state[i] == 1) {
		Diag *d = sema_err(s, "CK-SEM-004", y->span, "const '%s' depends on itself", y->name);
		diag_set(&d->hint, "give '%s' a value that does not refer back to it", y->name);
		s->const_state[i] = 2;
		return false;
	}
	s->const_state[i] = 1;
	Cx cx = s->cx;
	const char *what = s->cx_what;
	Sym *role = s->role;
	s->cx = CX_CONST;
	s->cx_what = arena_printf(&s->c->arena, "the value of const '%s'", y->name);
	s->role = NULL;
	Expr *v = y->decl->value;
	bool ok = v && sema_check_expr(s, v);
	if (ok && !v->is_const) {
		sema_err(s, "CK-SEM-004", v->span, "the value of const '%s' is not a compile-time integer constant", y->name);
		ok = false;
	}
	s->cx = cx;
	s->cx_what = what;
	s->role = role;
	s->const_state[i] = 2;
	return ok;
}

/* Check value v against a target of type t (assignment/store): shapes unify,
 * dtypes equal (literals adapt). */
bool sema_value_into(Sema *s, Expr *v, const Type *t, Span sp, const char *what, bool drop)
{
	Type tt = *t;
	Type r;
	Type vt = drop && !shape_open(&v->type) ? sema_drop1(v->type) : v->type;
	if (!sema_unify_shape(&vt, &tt, &r) || (vt.rank > 0 && vt.rank != RANK_CTX && !shape_open(&vt)
	                                        && vt.rank != tt.rank))
		return sema_shape_err(s, sp, what, &tt, &v->type);
	if (shape_open(&v->type)) {
		if (!settle_shape(s, v, &tt))
			return false;
		if (shape_open(&v->type)) {
			Diag *d = sema_err(s, "CK-SEM-034", v->span, "cannot infer the shape of this value");
			diag_set(&d->hint, "rows(), cols(), row_idx() and col_idx() need a fragment or tile target");
			return false;
		}
	}
	if (v->type.dt == tt.dt)
		return true;
	int lk = sema_lit_kind(v);
	if (lk && (dtype_is_float(tt.dt) || (lk == 1 && sema_dt_is_int(tt.dt)))) {
		sema_settle_dt(v, tt.dt);
		return true;
	}
	Diag *d = sema_err(s, "CK-SEM-031", sp, "%s: the value is %s but the target is %s",
	                   what, dtype_name(v->type.dt), dtype_name(tt.dt));
	diag_set(&d->hint, "convert explicitly: %s(...)", dtype_name(tt.dt));
	diag_set(&d->condition, "dtype(value) == %s", dtype_name(tt.dt));
	return false;
}
