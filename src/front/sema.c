/*
 * sema.c — names, types, shapes, ownership and scoping of Cake IR.
 *
 * The parser hands over a bare tree. Sema walks each kernel once and
 * annotates it in place so that later passes never resolve a name again:
 *
 *   1. Declarations. Every named declaration becomes a Sym in Kernel.syms;
 *      identifiers in the shapes of global params that are not consts become
 *      symbolic dims (SYM_DIM) in order of first appearance; the grid's
 *      coordinate names become SYM_GRIDVAR. Consts are folded on demand (a
 *      const may use a later const; a cycle is an error). Declarations are
 *      then checked: constant shapes, warp ranges that do not overlap,
 *      pipelines with at least one stage, rings that name pipelines,
 *      barrier producers/consumers and fragment owners that name roles.
 *
 *   2. Statements. The kernel body holds only `in ROLE { }` blocks, one per
 *      role. Every statement gets a preorder id, its executing role, its
 *      innermost loop and innermost pipelined loop. Loop variables live in
 *      their body; a `let` lives to the end of its block. A scope stack of
 *      Syms (innermost last) sits on top of the kernel table.
 *
 *   3. Expressions. Every Expr gets a Type (dtype, space, rank, extents).
 *      Integer expressions over literals and consts are folded (is_const,
 *      cval). Element-wise operators need equal shapes, or a scalar operand,
 *      or an explicit broadcast rows(v)/cols(v). rows(), cols(), row_idx()
 *      and col_idx() leave part of their shape open (an extent of DIM_CTX, or
 *      a rank of RANK_CTX); the open part is closed by unification with the
 *      other operand, or finally with the statement's target, and settle()
 *      writes the closed shape back into the subtree so that no open shape
 *      survives sema. Literals have no dtype of their own: an integer
 *      constant or a float literal takes the dtype of the operand it meets.
 *      Any other dtype change needs an explicit cast.
 *
 *   4. Ownership. A fragment is read and written only by its owner role; a
 *      barrier is waited on only by its consumers and arrived on or
 *      signalled only by its producers; a ring buffer or ring barrier of
 *      pipeline P is used only inside a loop pipelined over P.
 *
 * Sema stops at nothing: every finding is reported (CK-SEM-001..040, see
 * docs/sema-rules.txt) and a subexpression that failed to type is
 * "poisoned" (check_expr returns false) so that one mistake does not
 * cascade into many reports. Hardware limits (register budgets, shared
 * memory size, wgmma shapes, warpgroup alignment) are the verifier's.
 */
#include "front.h"
#include "builtins.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DIM_CTX (-2)   /* extent taken from the context (rows/cols) */
#define RANK_CTX (-1)  /* whole shape taken from the context (row_idx/col_idx) */

/* Where an expression sits decides which names it may use. */
typedef enum Cx {
	CX_STMT,        /* statements: everything in scope */
	CX_CONST,       /* smem/frag shapes, cluster, const values: consts only */
	CX_DIMS,        /* param shapes, domain, grid: dims and consts */
} Cx;

typedef struct Sema {
	Ctx *c;
	Kernel *k;
	Vec ksyms;            /* kernel-level symbols */
	Vec scope;            /* loop variables and lets in scope, innermost last */
	Vec loops;            /* enclosing S_FOR statements, innermost last */
	Sym *role;            /* executing role, NULL outside `in` */
	Cx cx;
	const char *cx_rule;  /* rule for a name not allowed in CX_DIMS */
	const char *cx_what;  /* "a domain constraint", "the grid extent" */
	Expr *multi_ok;       /* the one call allowed to return two values */
	bool scatter_ok;      /* checking an atomic_add destination: a point slice may be
	                       * a scatter index (an integer vector fragment) */
	int nstmt;
	char *const_state;    /* per const (Sym.index): 0 new, 1 folding, 2 done */
	Sym *bsym[BI__COUNT];
	Vec dims;
	int nsuggest;         /* "did you mean" searches made; capped (SUGGEST_MAX) */
	Vec gone;             /* loop variables and lets whose scope has ended */
} Sema;

/* Each suggestion scans every visible name; past this many per kernel the search
 * is skipped, so a file of thousands of unknown names stays linear. */
#define SUGGEST_MAX 256

/* ---- diagnostics ---- */

static Diag *serr(Sema *s, const char *id, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static Diag *serr(Sema *s, const char *id, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = arena_vprintf(&s->c->arena, fmt, ap);
	va_end(ap);
	Diag *d = diag_add(s->c->diags, id, SEV_ERROR, sp, "%s", m);
	if (s->role)
		diag_set(&d->role, "%s", s->role->name);
	return d;
}

static const char *kind_name(SymKind k)
{
	switch (k) {
	case SYM_DIM: return "dimension";
	case SYM_PARAM: return "param";
	case SYM_CONST: return "const";
	case SYM_GRIDVAR: return "grid coordinate";
	case SYM_ROLE: return "role";
	case SYM_PIPE: return "pipeline";
	case SYM_SMEM: return "smem buffer";
	case SYM_BARRIER: return "barrier";
	case SYM_FRAG: return "fragment";
	case SYM_LOOPVAR: return "loop variable";
	case SYM_LET: return "let binding";
	case SYM_BUILTIN: return "builtin";
	default: return "name";
	}
}

/* Fill the resource/barrier/pipeline localisation from a symbol. */
static void loc_sym(Diag *d, Sym *y)
{
	if (!y)
		return;
	switch (y->kind) {
	case SYM_SMEM: case SYM_FRAG: case SYM_PARAM:
		diag_set(&d->resource, "%s", y->name);
		if (y->decl && y->decl->ring)
			diag_set(&d->pipeline, "%s", y->decl->ring);
		break;
	case SYM_BARRIER:
		diag_set(&d->barrier, "%s", y->name);
		if (y->decl && y->decl->ring)
			diag_set(&d->pipeline, "%s", y->decl->ring);
		break;
	case SYM_PIPE:
		diag_set(&d->pipeline, "%s", y->name);
		break;
	case SYM_ROLE:
		if (!d->role)
			diag_set(&d->role, "%s", y->name);
		break;
	default:
		break;
	}
}

/* ---- symbols and scopes ---- */

static Sym *find_in(Vec *v, const char *name)
{
	if (!name)
		return NULL;
	for (int i = v->len - 1; i >= 0; i--) {
		Sym *y = v->data[i];
		if (strcmp(y->name, name) == 0)
			return y;
	}
	return NULL;
}

static Sym *lookup(Sema *s, const char *name)
{
	Sym *y = find_in(&s->scope, name);
	return y ? y : find_in(&s->ksyms, name);
}

/* End the scopes opened since `mark`, remembering their names for diagnostics. */
static void scope_pop(Sema *s, int mark)
{
	for (int i = mark; i < s->scope.len; i++)
		vec_push(&s->gone, s->scope.data[i]);
	s->scope.len = mark;
}

/* Closest visible name of an allowed kind (mask of 1<<SymKind; 0 = any). */
static const char *suggest(Sema *s, const char *name, unsigned mask)
{
	if (s->nsuggest >= SUGGEST_MAX)
		return NULL;
	s->nsuggest++;
	const char *best = NULL;
	int bestd = 3;
	Vec *vs[2] = { &s->scope, &s->ksyms };
	for (int v = 0; v < 2; v++)
		for (int i = 0; i < vs[v]->len; i++) {
			Sym *y = vs[v]->data[i];
			if (mask && !(mask & (1u << y->kind)))
				continue;
			int d = edit_distance(name, y->name, 2);
			if (d < bestd && d < (int)strlen(name)) {
				bestd = d;
				best = y->name;
			}
		}
	return best;
}

static void unknown(Sema *s, const char *name, Span sp, const char *what, unsigned mask)
{
	Diag *d = serr(s, "CK-SEM-002", sp, "unknown %s '%s'", what, name);
	const char *g = suggest(s, name, mask);
	Sym *out = find_in(&s->gone, name);
	if (g)
		diag_set(&d->hint, "did you mean '%s'?", g);
	else if (out) {
		diag_set(&d->hint, "'%s' is a %s visible only inside the block that declares it; use it there",
		         name, out->kind == SYM_LOOPVAR ? "loop variable" : "`let`");
		diag_related(d, out->span, "'%s' declared here", name);
	} else
		diag_set(&d->hint, "declare '%s' before the kernel body", name);
}

static Sym *new_sym(Sema *s, SymKind k, const char *name, Span sp)
{
	Sym *y = arena_alloc(&s->c->arena, sizeof *y);
	y->kind = k;
	y->name = name;
	y->span = sp;
	return y;
}

/* Declare a kernel-level (scoped = false) or block-level symbol, reporting a
 * clash with any visible name. Returns the new Sym (declared even on clash
 * for kernel symbols, so later uses still resolve). */
static Sym *declare(Sema *s, SymKind k, const char *name, Span sp, bool scoped)
{
	Sym *y = new_sym(s, k, name ? name : "?", sp);
	if (!name)
		return y;   /* a parse error left no name; nothing to declare */
	Sym *old = lookup(s, name);
	if (old) {
		Diag *d = serr(s, "CK-SEM-001", sp, "'%s' is already declared as a %s",
		               name, kind_name(old->kind));
		diag_related(d, old->span, "'%s' first declared here", name);
		diag_set(&d->hint, "rename one of the two");
		return y;   /* keep the first one visible: fewer follow-on errors */
	}
	vec_push(scoped ? &s->scope : &s->ksyms, y);
	return y;
}

/* Resolve a name that must be of kind `want`; reports and returns NULL. */
static Sym *resolve_kind(Sema *s, const char *name, Span sp, SymKind want)
{
	if (!name)
		return NULL;
	Sym *y = lookup(s, name);
	if (!y) {
		unknown(s, name, sp, kind_name(want), 1u << want);
		return NULL;
	}
	if (y->kind != want) {
		Diag *d = serr(s, "CK-SEM-003", sp, "'%s' is a %s, but a %s is expected here",
		               name, kind_name(y->kind), kind_name(want));
		diag_related(d, y->span, "'%s' declared here", name);
		const char *g = suggest(s, name, 1u << want);
		if (g)
			diag_set(&d->hint, "did you mean the %s '%s'?", kind_name(want), g);
		return NULL;
	}
	return y;
}

/* ---- types ---- */

static bool dt_is_int(DType t)
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
static Type decl_type(Decl *d)
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
static Type drop1(Type t)
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

static bool expr_same(const Expr *a, const Expr *b)
{
	if (!a || !b || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case E_INT: return a->ival == b->ival;
	case E_IDENT: return strcmp(a->name, b->name) == 0;
	case E_BINARY: return a->op == b->op && expr_same(a->lhs, b->lhs) && expr_same(a->rhs, b->rhs);
	case E_UNARY: return a->op == b->op && expr_same(a->lhs, b->lhs);
	default: return false;
	}
}

static const char *shape_str(Sema *s, const Type *t)
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
static bool unify_shape(const Type *a, const Type *b, Type *out)
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
			if (x == -1 && y == -1 && !expr_same(a->dims[i], b->dims[i]))
				return false;
		} else {
			return false;
		}
	}
	*out = r;
	return true;
}

/* Literal kind: 1 = integer constant, 2 = float literal, 0 = typed value. */
static int lit_kind(const Expr *e)
{
	switch (e->kind) {
	case E_INT: return 1;
	case E_FLOAT: case E_INF: return 2;
	case E_IDENT: return e->is_const && e->sym && e->sym->kind == SYM_CONST ? 1 : 0;
	case E_UNARY:
		return e->op == '-' ? lit_kind(e->lhs) : 0;
	case E_BINARY: {
		if (e->op != '+' && e->op != '-' && e->op != '*' && e->op != '/')
			return 0;
		int a = lit_kind(e->lhs), b = lit_kind(e->rhs);
		if (!a || !b)
			return 0;
		return a > b ? a : b;
	}
	default: return 0;
	}
}

/* Give a literal subtree the dtype it adapts to. */
static void settle_dt(Expr *e, DType dt)
{
	if (!e || !lit_kind(e))
		return;
	e->type.dt = dt;
	if (e->kind == E_UNARY)
		settle_dt(e->lhs, dt);
	else if (e->kind == E_BINARY) {
		settle_dt(e->lhs, dt);
		settle_dt(e->rhs, dt);
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
				Diag *d = serr(s, "CK-SEM-034", e->span,
				               "%s() needs a fragment shape of rank %d or more, but the context is %s",
				               b->name, b->id == BI_COL_IDX ? 2 : 1, shape_str(s, t));
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
	int la = lit_kind(a), lb = lit_kind(b);
	DType da = a->type.dt, db = b->type.dt;
	if (la && lb) {
		*out = (la == 2 || lb == 2) ? DT_F32 : DT_I32;
		if (la == 2 || lb == 2) {
			settle_dt(a, DT_F32);
			settle_dt(b, DT_F32);
		}
		return true;
	}
	if (la || lb) {
		Expr *lit = la ? a : b;
		DType other = la ? db : da;
		int lk = la ? la : lb;
		if (other == DT_BOOL || (lk == 2 && !dtype_is_float(other))) {
			Diag *d = serr(s, "CK-SEM-031", sp, "%s mixes a %s literal with a %s value",
			               what, lk == 2 ? "float" : "integer", dtype_name(other));
			diag_set(&d->hint, "cast the %s operand explicitly, e.g. f32(x)", dtype_name(other));
			return false;
		}
		settle_dt(lit, other);
		*out = other;
		return true;
	}
	if (da == db) {
		*out = da;
		return true;
	}
	if (dt_is_int(da) && dt_is_int(db) && a->type.rank == 0 && b->type.rank == 0) {
		*out = (da == DT_I64 || db == DT_I64) ? DT_I64 : DT_U32;
		return true;
	}
	DType wide = (da == DT_F32 || db == DT_F32) ? DT_F32 : (dtype_is_float(da) ? da : db);
	Expr *narrow = (a->type.dt == wide) ? b : a;
	Diag *d = serr(s, "CK-SEM-031", sp, "%s mixes %s and %s; Cake IR never converts implicitly",
	               what, dtype_name(da), dtype_name(db));
	diag_set(&d->hint, "convert one side explicitly, e.g. %s(...) around the %s operand",
	         dtype_name(wide), dtype_name(narrow->type.dt));
	return false;
}

/* ---- constant folding ---- */

static bool fold_binary(Sema *s, Expr *e)
{
	long long a = e->lhs->cval, b = e->rhs->cval, r = 0;
	unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
	switch (e->op) {
	case '+': r = (long long)(ua + ub); break;
	case '-': r = (long long)(ua - ub); break;
	case '*': r = (long long)(ua * ub); break;
	case '/': case '%':
		if (b == 0) {
			Diag *d = serr(s, "CK-SEM-005", e->span, "division by zero in a constant expression");
			diag_set(&d->hint, "the right operand of '%c' folds to 0", e->op);
			return false;
		}
		if (a == LLONG_MIN && b == -1)
			r = e->op == '/' ? LLONG_MIN : 0;
		else
			r = e->op == '/' ? a / b : a % b;
		break;
	case OP_SHL: case OP_SHR:
		if (b < 0 || b > 62) {
			Diag *d = serr(s, "CK-SEM-005", e->span, "shift by %lld in a constant expression is out of range", b);
			diag_set(&d->hint, "shift amounts must be between 0 and 62");
			return false;
		}
		r = e->op == OP_SHL ? (long long)(ua << b) : a >> b;
		break;
	case '<': r = a < b; break;
	case '>': r = a > b; break;
	case OP_LE: r = a <= b; break;
	case OP_GE: r = a >= b; break;
	case OP_EQ: r = a == b; break;
	case OP_NE: r = a != b; break;
	case OP_AND: r = a && b; break;
	case OP_OR: r = a || b; break;
	default: return true;
	}
	e->is_const = true;
	e->cval = r;
	return true;
}

/* ---- expressions ---- */

static bool check_expr(Sema *s, Expr *e);
static void check_block(Sema *s, Stmt **body, int n);

static bool const_value(Sema *s, Sym *y);

/* Ownership and ring checks for one use of a resource symbol. */
static void use_sym(Sema *s, Sym *y, Span sp, bool write)
{
	if (!y || s->cx != CX_STMT)
		return;
	if (y->kind == SYM_FRAG && s->role && y->decl && y->decl->owner_sym &&
	    y->decl->owner_sym != s->role) {
		Diag *d = serr(s, "CK-SEM-023", sp, "fragment '%s' is owned by role '%s' but role '%s' %s it",
		               y->name, y->decl->owner, s->role->name, write ? "writes" : "reads");
		loc_sym(d, y);
		diag_related(d, y->decl->owner_span, "'%s' is declared in role '%s' here", y->name, y->decl->owner);
		diag_set(&d->hint, "move this statement into `in %s { }`, or pass the data through an smem buffer",
		         y->decl->owner);
		diag_set(&d->condition, "owner(%s) == %s", y->name, s->role->name);
	}
	if ((y->kind == SYM_SMEM || y->kind == SYM_BARRIER) && y->decl && y->decl->ring_sym) {
		Sym *p = y->decl->ring_sym;
		for (int i = 0; i < s->loops.len; i++) {
			Stmt *l = s->loops.data[i];
			if (l->pipe_sym == p)
				return;
		}
		Diag *d = serr(s, "CK-SEM-017", sp,
		               "%s '%s' is a ring of pipeline '%s' but is used outside a loop pipelined over '%s'",
		               kind_name(y->kind), y->name, p->name, p->name);
		loc_sym(d, y);
		diag_related(d, y->decl->ring_span, "'%s' is declared `ring %s` here", y->name, p->name);
		diag_set(&d->hint, "use it inside `for ... pipelined %s { }`, or drop `ring %s` from its declaration",
		         p->name, p->name);
	}
}

static bool check_ident(Sema *s, Expr *e)
{
	Sym *y = lookup(s, e->name);
	if (!y) {
		unsigned mask = 0;
		if (s->cx == CX_CONST)
			mask = 1u << SYM_CONST;
		else if (s->cx == CX_DIMS)
			mask = (1u << SYM_CONST) | (1u << SYM_DIM);
		unknown(s, e->name, e->span, "name", mask);
		return false;
	}
	e->sym = y;
	if (s->cx == CX_CONST && y->kind != SYM_CONST) {
		Diag *d = serr(s, "CK-SEM-004", e->span, "'%s' is a %s, not a compile-time constant",
		               e->name, kind_name(y->kind));
		diag_set(&d->hint, "%s must be constant; declare `const NAME = value` and use it", s->cx_what);
		return false;
	}
	if (s->cx == CX_DIMS && y->kind != SYM_CONST && y->kind != SYM_DIM) {
		Diag *d = serr(s, s->cx_rule, e->span, "%s may use only dimensions and consts, but '%s' is a %s",
		               s->cx_what, e->name, kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		diag_set(&d->hint, "use the symbolic sizes of the global params (M, N, K) and consts");
		return false;
	}
	switch (y->kind) {
	case SYM_CONST:
		if (!const_value(s, y))
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
		e->type = decl_type(y->decl);
		if (y->decl->space == SP_GLOBAL) {
			Diag *d = serr(s, "CK-SEM-037", e->span,
			               "global tensor '%s' cannot be used as a value", e->name);
			loc_sym(d, y);
			diag_set(&d->hint, "index it (%s[i, j]) for one element, or `load` a tile into a fragment", e->name);
			return false;
		}
		return true;
	case SYM_FRAG:
		use_sym(s, y, e->span, false);
		e->type = decl_type(y->decl);
		return true;
	case SYM_SMEM: {
		Diag *d = serr(s, "CK-SEM-037", e->span,
		               "smem buffer '%s' cannot be used as a value", e->name);
		loc_sym(d, y);
		diag_set(&d->hint, "`load` it into a fragment first: load x <- %s[...]", e->name);
		return false;
	}
	default: {
		Diag *d = serr(s, "CK-SEM-003", e->span, "'%s' is a %s, not a value", e->name, kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		loc_sym(d, y);
		return false;
	}
	}
}

/* Check an integer scalar (slice start, loop bound, ...). */
static bool need_int(Sema *s, Expr *e, const char *what)
{
	if (!check_expr(s, e))
		return false;
	if (e->type.rank != 0) {
		Diag *d = serr(s, "CK-SEM-037", e->span, "%s must be a scalar, but it has shape %s",
		               what, shape_str(s, &e->type));
		diag_set(&d->hint, "use loop variables, grid coordinates, lets, dims and consts here");
		return false;
	}
	if (!dt_is_int(e->type.dt)) {
		Diag *d = serr(s, "CK-SEM-036", e->span, "%s must be an integer, but it is %s",
		               what, dtype_name(e->type.dt));
		diag_set(&d->hint, "convert with i32(...)");
		return false;
	}
	return true;
}

/* Check a boolean expression of the given rank class (scalar when scalar). */
static bool need_bool(Sema *s, Expr *e, const char *what, bool scalar)
{
	if (!check_expr(s, e))
		return false;
	if (scalar && e->type.rank != 0) {
		Diag *d = serr(s, "CK-SEM-037", e->span, "%s must be a scalar, but it has shape %s",
		               what, shape_str(s, &e->type));
		diag_set(&d->hint, "a condition is uniform over the role; reduce the fragment first");
		return false;
	}
	if (e->type.dt != DT_BOOL) {
		Diag *d = serr(s, "CK-SEM-036", e->span, "%s must be a boolean, but it is %s",
		               what, dtype_name(e->type.dt));
		diag_set(&d->hint, "compare it, e.g. `x != 0`");
		return false;
	}
	return true;
}

/* Slice type of a reference base[slices] to a global param or smem buffer.
 * Fills e->type with one extent per slice (points have extent 1). */
static bool check_ref(Sema *s, Expr *e, bool write, bool tma)
{
	Expr *base = e->kind == E_INDEX ? e->base : e;
	if (base->kind != E_IDENT) {
		serr(s, "CK-SEM-027", base->span, "expected the name of a global param or smem buffer");
		return false;
	}
	Sym *y = lookup(s, base->name);
	if (!y) {
		unknown(s, base->name, base->span, "tensor", (1u << SYM_PARAM) | (1u << SYM_SMEM));
		return false;
	}
	base->sym = e->sym = y;
	if (y->kind == SYM_FRAG && e->kind == E_INDEX) {
		Diag *d = serr(s, "CK-SEM-026", e->span, "fragment '%s' cannot be indexed", y->name);
		loc_sym(d, y);
		diag_set(&d->hint, "fragments are whole tiles in registers; operate on the whole fragment");
		return false;
	}
	if (!(y->kind == SYM_SMEM || (y->kind == SYM_PARAM && y->decl->space == SP_GLOBAL))) {
		Diag *d = serr(s, "CK-SEM-027", base->span, "'%s' is a %s, but a global param or smem buffer is expected",
		               y->name, kind_name(y->kind));
		loc_sym(d, y);
		diag_related(d, y->span, "'%s' declared here", y->name);
		return false;
	}
	use_sym(s, y, base->span, write);
	Type bt = decl_type(y->decl);
	base->type = bt;
	if (e->kind != E_INDEX) {
		e->type = bt;
		return true;
	}
	bool ok = true;
	if (e->nslices != bt.rank) {
		Diag *d = serr(s, "CK-SEM-026", e->span, "'%s' has %d dimension%s but is indexed with %d slice%s",
		               y->name, bt.rank, bt.rank == 1 ? "" : "s", e->nslices, e->nslices == 1 ? "" : "s");
		loc_sym(d, y);
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
		          ? lookup(s, sl->start->name) : NULL;
		if (fy && fy->kind == SYM_FRAG) {
			/* scatter index: element r of the vector names the row of this
			 * dimension that element r of the value goes to (LANGUAGE.md) */
			if (!check_expr(s, sl->start))
				ok = false;
			else if (sl->start->type.rank != 1 || !dt_is_int(sl->start->type.dt)) {
				Diag *d = serr(s, "CK-SEM-037", sl->start->span,
				               "a scatter index must be an integer vector fragment, but '%s' is %s %s",
				               fy->name, dtype_name(sl->start->type.dt), shape_str(s, &sl->start->type));
				loc_sym(d, fy);
				diag_set(&d->hint, "declare the index as `frag %s: i32[n] in ROLE`", fy->name);
				ok = false;
			} else if (nscatter++) {
				Diag *d = serr(s, "CK-SEM-026", sl->span, "'%s' is indexed with more than one scatter index", y->name);
				diag_set(&d->hint, "scatter along one dimension; give the others as ranges or ':'");
				ok = false;
			} else {
				ext = sl->start->type.cdims[0];
				dim = sl->start->type.dims[0];
			}
		} else if (sl->kind != SL_ALL && sl->start)
			ok &= need_int(s, sl->start, "a slice start");
		if (sl->kind == SL_RANGE) {
			if (need_int(s, sl->len, "a slice length")) {
				if (!sl->len->is_const) {
					Diag *d = serr(s, "CK-SEM-004", sl->len->span,
					               "the slice length of '%s' must be a compile-time constant", y->name);
					diag_set(&d->hint, "write the tile size as a literal or a const");
					ok = false;
				} else if (sl->len->cval <= 0) {
					serr(s, "CK-SEM-026", sl->len->span, "slice length %lld is not positive", sl->len->cval);
					ok = false;
				}
				ext = sl->len->cval;
				dim = sl->len;
			} else {
				ok = false;
			}
		} else if (sl->kind == SL_ALL) {
			if (tma) {
				Diag *d = serr(s, "CK-SEM-026", sl->span,
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
		Sym *y = lookup(s, e->name);
		if (y) {
			Diag *d = serr(s, "CK-SEM-033", e->span, "'%s' is a %s, not a function", e->name, kind_name(y->kind));
			diag_related(d, y->span, "'%s' declared here", e->name);
			const char *g = builtin_suggest(e->name);
			if (g)
				diag_set(&d->hint, "did you mean the builtin '%s'?", g);
			return NULL;
		}
		Diag *d = serr(s, "CK-SEM-033", e->span, "unknown function '%s'", e->name);
		const char *g = builtin_suggest(e->name);
		if (g)
			diag_set(&d->hint, "did you mean '%s'?", g);
		else
			diag_set(&d->hint, "Cake IR has only builtins; see docs/LANGUAGE.md for the list");
		return NULL;
	}
	if (!s->bsym[b->id]) {
		Sym *y = new_sym(s, SYM_BUILTIN, b->name, NOSPAN);
		y->index = b->id;
		s->bsym[b->id] = y;
	}
	e->sym = s->bsym[b->id];
	return b;
}

static bool arg_float(Sema *s, const Builtin *b, Expr *a, bool allow_int)
{
	DType t = a->type.dt;
	if (dtype_is_float(t) || (allow_int && dt_is_int(t)) || lit_kind(a))
		return true;
	Diag *d = serr(s, "CK-SEM-035", a->span, "%s() needs a %s argument, but it is %s",
	               b->name, allow_int ? "numeric" : "floating-point", dtype_name(t));
	diag_set(&d->hint, "convert it first, e.g. %s(f32(x))", b->name);
	return false;
}

static bool arg_rank2(Sema *s, const Builtin *b, Expr *a)
{
	if (shape_open(&a->type)) {
		Diag *d = serr(s, "CK-SEM-034", a->span, "cannot infer the shape of the argument of %s()", b->name);
		diag_set(&d->hint, "assign the broadcast to a fragment first, then pass the fragment");
		return false;
	}
	if (a->type.rank != 2) {
		Diag *d = serr(s, "CK-SEM-035", a->span, "%s() needs a rank-2 [M, N] argument, but it has shape %s",
		               b->name, shape_str(s, &a->type));
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	return true;
}

static bool arg_const(Sema *s, const Builtin *b, Expr *a, const char *what, long long lo, long long hi)
{
	if (!a->is_const || a->type.rank != 0) {
		Diag *d = serr(s, "CK-SEM-035", a->span, "the %s of %s() must be a compile-time constant", what, b->name);
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	if (a->cval < lo || a->cval > hi) {
		Diag *d = serr(s, "CK-SEM-035", a->span, "the %s of %s() is %lld, outside [%lld, %lld]",
		               what, b->name, a->cval, lo, hi);
		diag_set(&d->hint, "%s", b->doc);
		return false;
	}
	return true;
}

static bool shape_err(Sema *s, Span sp, const char *what, const Type *a, const Type *b)
{
	Diag *d = serr(s, "CK-SEM-030", sp, "%s: shapes %s and %s do not match",
	               what, shape_str(s, a), shape_str(s, b));
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
		if (!unify_shape(&shape, &ops[i]->type, &r))
			return shape_err(s, e->span, what, &shape, &ops[i]->type);
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
	for (int i = 0; i < e->nargs; i++)
		ok &= check_expr(s, e->args[i]);
	if (!b || !ok)
		return false;
	if (b->nresults > 1 && s->multi_ok != e) {
		Diag *d = serr(s, "CK-SEM-032", e->span, "%s() returns %d values and must be assigned directly",
		               b->name, b->nresults);
		diag_set(&d->hint, "write `v, i = %s(...)` as its own statement", b->name);
		return false;
	}
	if (e->nargs < b->min_args || e->nargs > b->max_args) {
		Diag *d;
		if (b->min_args == b->max_args)
			d = serr(s, "CK-SEM-035", e->span, "%s() takes %d argument%s, but %d %s given", b->name,
			         b->min_args, b->min_args == 1 ? "" : "s", e->nargs, e->nargs == 1 ? "is" : "are");
		else
			d = serr(s, "CK-SEM-035", e->span, "%s() takes %d to %d arguments, but %d %s given", b->name,
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
		if (lit_kind(a[0])) {
			settle_dt(a[0], DT_F32);
			e->type.dt = DT_F32;
		}
		return true;
	case BR_BINARY:
		if (a[0]->type.dt == DT_BOOL || a[1]->type.dt == DT_BOOL) {
			serr(s, "CK-SEM-035", e->span, "%s() needs numeric arguments, not bool", b->name);
			return false;
		}
		return combine(s, e, a, 2, b->name, true);
	case BR_WHERE:
		if (a[0]->type.dt != DT_BOOL) {
			Diag *d = serr(s, "CK-SEM-035", a[0]->span, "the condition of where() must be bool, but it is %s",
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
			serr(s, "CK-SEM-035", a[0]->span, "%s() needs a numeric argument, not bool", b->name);
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
	case BR_CUMSUM:
		if (shape_open(&a[0]->type) || a[0]->type.rank < 1) {
			serr(s, "CK-SEM-035", a[0]->span, "cumsum() needs a fragment argument of rank 1 or 2");
			return false;
		}
		if (!arg_float(s, b, a[0], true) || !arg_const(s, b, a[1], "dimension", 0, a[0]->type.rank - 1))
			return false;
		e->type = a[0]->type;
		return true;
	case BR_TRI:
		if (!arg_rank2(s, b, a[0]))
			return false;
		if (e->nargs == 2 && !need_int(s, a[1], "the diagonal of tril/triu"))
			return false;
		e->type = a[0]->type;
		return true;
	case BR_TRISOLVE:
		if (!arg_rank2(s, b, a[0]) || !arg_rank2(s, b, a[1]) ||
		    !arg_float(s, b, a[0], false) || !arg_float(s, b, a[1], false))
			return false;
		if (a[0]->type.cdims[0] != a[0]->type.cdims[1]) {
			Diag *d = serr(s, "CK-SEM-035", a[0]->span, "trisolve() needs a square L, but it is %s",
			               shape_str(s, &a[0]->type));
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		if (a[1]->type.cdims[0] != a[0]->type.cdims[0]) {
			Diag *d = serr(s, "CK-SEM-030", e->span, "trisolve(): L is %s but B is %s; B needs %lld rows",
			               shape_str(s, &a[0]->type), shape_str(s, &a[1]->type), a[0]->type.cdims[0]);
			diag_set(&d->hint, "%s", b->doc);
			return false;
		}
		if (a[0]->type.dt != a[1]->type.dt) {
			Diag *d = serr(s, "CK-SEM-031", e->span, "trisolve(): L is %s but B is %s",
			               dtype_name(a[0]->type.dt), dtype_name(a[1]->type.dt));
			diag_set(&d->hint, "cast one of them, e.g. f32(...)");
			return false;
		}
		e->type = a[1]->type;
		return true;
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
			Diag *d = serr(s, "CK-SEM-035", a[0]->span, "%s() broadcasts a rank-1 vector, but its argument has shape %s",
			               b->name, shape_str(s, &a[0]->type));
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
			serr(s, "CK-SEM-035", a[0]->span, "l2norm() needs a fragment of rank 1 or 2");
			return false;
		}
		if (!arg_float(s, b, a[0], false))
			return false;
		e->type = a[0]->type;
		return true;
	case BR_CAST:
		e->type = a[0]->type;
		e->type.dt = b->cast_to;
		if (lit_kind(a[0]) == 1 && a[0]->is_const && dt_is_int(b->cast_to)) {
			e->is_const = true;
			e->cval = a[0]->cval;
		}
		return true;
	}
	return true;
}

/* Type e (value context). Returns false when e could not be typed: the
 * reason has been reported and callers stay quiet. */
static bool check_expr(Sema *s, Expr *e)
{
	if (!e)
		return false;
	if (s->cx != CX_STMT && (e->kind == E_CALL || e->kind == E_INDEX || e->kind == E_TRANSPOSE ||
	                         e->kind == E_FLOAT || e->kind == E_INF)) {
		Diag *d;
		if (s->cx == CX_CONST)
			d = serr(s, "CK-SEM-004", e->span, "%s must be a compile-time integer constant", s->cx_what);
		else
			d = serr(s, s->cx_rule, e->span, "%s may use only integer arithmetic on dimensions and consts",
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
		if (!check_expr(s, e->lhs))
			return false;
		e->type = e->lhs->type;
		if (e->op == '!') {
			if (e->lhs->type.dt != DT_BOOL) {
				Diag *d = serr(s, "CK-SEM-036", e->span, "'!' needs a boolean operand, but it is %s",
				               dtype_name(e->lhs->type.dt));
				diag_set(&d->hint, "compare the value instead, e.g. x == 0");
				return false;
			}
		} else if (e->lhs->type.dt == DT_BOOL) {
			serr(s, "CK-SEM-036", e->span, "unary '-' needs a numeric operand, not bool");
			return false;
		}
		if (e->lhs->is_const) {
			e->is_const = true;
			e->cval = e->op == '!' ? !e->lhs->cval
			                       : (long long)(0ull - (unsigned long long)e->lhs->cval);
		}
		return true;
	}
	case E_TRANSPOSE: {
		Diag *d = serr(s, "CK-SEM-036", e->span, "'^T' is allowed only on wgmma/mma operands");
		diag_set(&d->hint, "transpose an operand in `wgmma acc += a @ b^T`");
		return false;
	}
	case E_INDEX: {
		if (!check_ref(s, e, false, false))
			return false;
		Type v = drop1(e->type);
		if (v.rank != 0) {
			Diag *d = serr(s, "CK-SEM-037", e->span,
			               "a %s tile of '%s' cannot be used as a value in an expression",
			               shape_str(s, &v), e->sym->name);
			loc_sym(d, e->sym);
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
		Diag *d = serr(s, "CK-SEM-036", e->span, "'@' (matrix product) is allowed only in wgmma and mma statements");
		diag_set(&d->hint, "write `wgmma acc += a @ b` with acc a fragment");
		return false;
	}
	bool okl = check_expr(s, e->lhs);
	bool okr = check_expr(s, e->rhs);
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
				Diag *d = serr(s, "CK-SEM-036", ops[i]->span, "%s needs boolean operands, but this one is %s",
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
				Diag *d = serr(s, "CK-SEM-036", ops[i]->span, "%s needs numeric operands, but this one is bool", what);
				diag_set(&d->hint, "use && / || for booleans, or where(c, 1, 0) for a number");
				return false;
			}
			if (intonly && !dt_is_int(ops[i]->type.dt) && lit_kind(ops[i]) != 1) {
				Diag *d = serr(s, "CK-SEM-036", ops[i]->span, "%s needs integer operands, but this one is %s",
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
static bool const_value(Sema *s, Sym *y)
{
	int i = y->index;
	if (s->const_state[i] == 2)
		return y->decl->value && y->decl->value->is_const;
	if (s->const_state[i] == 1) {
		Diag *d = serr(s, "CK-SEM-004", y->span, "const '%s' depends on itself", y->name);
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
	bool ok = v && check_expr(s, v);
	if (ok && !v->is_const) {
		serr(s, "CK-SEM-004", v->span, "the value of const '%s' is not a compile-time integer constant", y->name);
		ok = false;
	}
	s->cx = cx;
	s->cx_what = what;
	s->role = role;
	s->const_state[i] = 2;
	return ok;
}

/* ---- declarations ---- */

static void collect_dims(Sema *s, Expr *e, Vec *constnames)
{
	if (!e)
		return;
	switch (e->kind) {
	case E_IDENT: {
		for (int i = 0; i < constnames->len; i++)
			if (strcmp(constnames->data[i], e->name) == 0)
				return;
		Sym *y = find_in(&s->ksyms, e->name);
		if (y)
			return;   /* a dim seen before, or a clash reported as CK-SEM-003 later */
		y = declare(s, SYM_DIM, e->name, e->span, false);
		y->index = s->dims.len;
		vec_push(&s->dims, (void *)e->name);
		return;
	}
	case E_UNARY: case E_TRANSPOSE:
		collect_dims(s, e->lhs, constnames);
		return;
	case E_BINARY:
		collect_dims(s, e->lhs, constnames);
		collect_dims(s, e->rhs, constnames);
		return;
	default:
		return;
	}
}

/* A constant, positive shape (smem, frag). */
static void check_const_shape(Sema *s, Decl *d, const char *what)
{
	s->cx = CX_CONST;
	s->cx_what = arena_printf(&s->c->arena, "the shape of %s '%s'", what, d->name);
	if (d->rank > MAX_RANK)
		serr(s, "CK-SEM-026", d->span, "%s '%s' has rank %d; at most %d dimensions are supported",
		     what, d->name, d->rank, MAX_RANK);
	for (int i = 0; i < d->rank; i++) {
		Expr *x = d->shape[i];
		if (!check_expr(s, x))
			continue;
		if (!x->is_const) {
			Diag *d2 = serr(s, "CK-SEM-004", x->span, "the shape of %s '%s' must be constant", what, d->name);
			diag_set(&d2->hint, "use literals or consts; symbolic sizes belong to global params");
		} else if (x->cval <= 0) {
			serr(s, "CK-SEM-004", x->span, "extent %lld of %s '%s' must be a positive constant",
			     x->cval, what, d->name);
		}
	}
	s->cx = CX_STMT;
}

static Sym *resolve_ring(Sema *s, Decl *d)
{
	if (!d->ring)
		return NULL;
	return resolve_kind(s, d->ring, d->ring_span, SYM_PIPE);
}

static Sym **resolve_roles(Sema *s, Decl *d, const char **names, Span *spans, int n, const char *list)
{
	Sym **r = arena_alloc(&s->c->arena, sizeof(Sym *) * (size_t)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++) {
		r[i] = resolve_kind(s, names[i], spans[i], SYM_ROLE);
		for (int j = 0; j < i && r[i]; j++)
			if (r[j] == r[i]) {
				Diag *dg = serr(s, "CK-SEM-019", spans[i], "role '%s' is listed twice in the %s of barrier '%s'",
				                names[i], list, d->name);
				diag_related(dg, spans[j], "first listed here");
				diag_set(&dg->barrier, "%s", d->name);
				diag_set(&dg->hint, "list each role once; `arrivals` counts the arrivals per phase");
				break;
			}
	}
	return r;
}

static void check_decls(Sema *s)
{
	Kernel *k = s->k;
	Vec constnames = {0};
	Vec roles = {0}, pipes = {0}, smems = {0}, bars = {0}, frags = {0}, params = {0}, domains = {0};
	int nconst = 0;
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_CONST && k->decls[i]->name) {
			vec_push(&constnames, (void *)k->decls[i]->name);
			nconst++;
		}
	s->const_state = arena_alloc(&s->c->arena, (size_t)nconst + 1);
	int ci = 0;
	/* pass 1: names, in source order */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		Sym *y = NULL;
		switch (d->kind) {
		case D_PARAM:
			if (d->space == SP_GLOBAL)
				for (int j = 0; j < d->rank; j++)
					collect_dims(s, d->shape[j], &constnames);
			y = declare(s, SYM_PARAM, d->name, d->name_span, false);
			d->id = params.len;
			vec_push(&params, d);
			break;
		case D_CONST:
			y = declare(s, SYM_CONST, d->name, d->name_span, false);
			y->index = ci++;
			break;
		case D_ROLE:
			y = declare(s, SYM_ROLE, d->name, d->name_span, false);
			d->id = roles.len;
			vec_push(&roles, d);
			break;
		case D_PIPELINE:
			y = declare(s, SYM_PIPE, d->name, d->name_span, false);
			d->id = pipes.len;
			vec_push(&pipes, d);
			break;
		case D_SMEM:
			y = declare(s, SYM_SMEM, d->name, d->name_span, false);
			d->id = smems.len;
			vec_push(&smems, d);
			break;
		case D_BARRIER:
			y = declare(s, SYM_BARRIER, d->name, d->name_span, false);
			d->id = bars.len;
			vec_push(&bars, d);
			break;
		case D_FRAG:
			y = declare(s, SYM_FRAG, d->name, d->name_span, false);
			d->id = frags.len;
			vec_push(&frags, d);
			break;
		case D_DOMAIN:
			d->id = domains.len;
			vec_push(&domains, d);
			break;
		case D_GRID: case D_CLUSTER: {
			Decl **slot = d->kind == D_GRID ? &k->grid : &k->cluster;
			if (*slot) {
				Diag *dg = serr(s, "CK-SEM-013", d->span, "a second `%s` declaration",
				                d->kind == D_GRID ? "grid" : "cluster");
				diag_related(dg, (*slot)->span, "the first one is here");
				diag_set(&dg->hint, "a kernel has one %s; merge the two", d->kind == D_GRID ? "grid" : "cluster");
				break;
			}
			*slot = d;
			if (d->kind == D_GRID)
				for (int j = 0; d->grid_vars && d->grid_vars[j]; j++) {
					Sym *g = declare(s, SYM_GRIDVAR, d->grid_vars[j], d->grid_var_spans[j], false);
					g->index = j;
					g->decl = d;
				}
			break;
		}
		}
		if (y)
			y->decl = d;
	}
	vec_free(&constnames);
	/* pass 2: check each declaration */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		switch (d->kind) {
		case D_PARAM:
			if (d->space == SP_GLOBAL) {
				s->cx = CX_DIMS;
				s->cx_rule = "CK-SEM-003";
				s->cx_what = arena_printf(&s->c->arena, "the shape of param '%s'", d->name);
				if (d->rank > MAX_RANK)
					serr(s, "CK-SEM-026", d->span, "param '%s' has rank %d; at most %d dimensions are supported",
					     d->name, d->rank, MAX_RANK);
				for (int j = 0; j < d->rank; j++)
					if (check_expr(s, d->shape[j]) && d->shape[j]->type.dt == DT_BOOL)
						serr(s, "CK-SEM-011", d->shape[j]->span, "an extent of param '%s' must be an integer",
						     d->name);
				s->cx = CX_STMT;
			}
			break;
		case D_CONST: {
			Sym *y = find_in(&s->ksyms, d->name);
			if (y && y->decl == d)
				const_value(s, y);
			break;
		}
		case D_DOMAIN:
			s->cx = CX_DIMS;
			s->cx_rule = "CK-SEM-010";
			s->cx_what = "a domain constraint";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (check_expr(s, x) && x->type.dt != DT_BOOL) {
					Diag *dg = serr(s, "CK-SEM-010", x->span, "a domain constraint must be a boolean condition");
					diag_set(&dg->hint, "write a comparison such as `M %% 128 == 0` or `K >= 64`");
				}
			}
			s->cx = CX_STMT;
			break;
		case D_GRID:
			if (d != k->grid)
				break;
			s->cx = CX_DIMS;
			s->cx_rule = "CK-SEM-011";
			s->cx_what = "a grid extent";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (check_expr(s, x) && !dt_is_int(x->type.dt)) {
					Diag *dg = serr(s, "CK-SEM-011", x->span, "a grid extent must be an integer expression");
					diag_set(&dg->hint, "e.g. `grid (N / 128, M / 128) as (bn, bm)`");
				}
			}
			s->cx = CX_STMT;
			/* a name count that differs from the extent count is CK-SYN-009 */
			if (d->nexprs < 1 || d->nexprs > 3) {
				Diag *dg = serr(s, "CK-SEM-012", d->span, "a grid has 1 to 3 dimensions, not %d", d->nexprs);
				diag_set(&dg->hint, "fold extra dimensions into one extent");
			}
			/* grouped tile raster (§4.5): G >= 1, and only over a 2-D tile space */
			if (d->group_stated || d->group) {
				Span gs = d->group_span.file >= 0 && d->group_span.len ? d->group_span : d->span;
				if (d->group < 1) {
					Diag *dg = serr(s, "CK-SEM-041", gs, "a tile group must be at least 1, not %d", d->group);
					diag_set(&dg->hint, "write `group 8` (8 rows of the second grid axis per group) or drop the clause; `group 1` is the natural order");
				}
				if (d->nexprs != 2) {
					Diag *dg = serr(s, "CK-SEM-042", gs, "`group` needs a 2-D grid, but this grid has %d dimension%s", d->nexprs,
					                d->nexprs == 1 ? "" : "s");
					diag_set(&dg->hint, "the grouped raster maps a tile index onto (x, y) tiles; declare `grid (X, Y) as (bn, bm) group G` or drop `group`");
				}
			}
			break;
		case D_CLUSTER:
			if (d != k->cluster)
				break;
			s->cx = CX_CONST;
			s->cx_what = "a cluster extent";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (check_expr(s, x) && (!x->is_const || x->cval < 1))
					serr(s, "CK-SEM-004", x->span, "a cluster extent must be a positive constant");
			}
			s->cx = CX_STMT;
			if (d->nexprs < 1 || d->nexprs > 3)
				serr(s, "CK-SEM-012", d->span, "a cluster has 1 to 3 dimensions, not %d", d->nexprs);
			break;
		case D_ROLE:
			if (d->warp_lo > d->warp_hi) {
				Diag *dg = serr(s, "CK-SEM-006", d->span, "role '%s' has warp range %d..%d with the first above the last",
				                d->name, d->warp_lo, d->warp_hi);
				diag_set(&dg->hint, "ranges are inclusive and ascending: write `warps %d..%d`", d->warp_hi, d->warp_lo);
				diag_set(&dg->role, "%s", d->name);
			}
			break;
		case D_PIPELINE:
			if (d->stages < 1) {
				Diag *dg = serr(s, "CK-SEM-008", d->span, "pipeline '%s' has %d stages; at least 1 is needed",
				                d->name, d->stages);
				diag_set(&dg->pipeline, "%s", d->name);
				diag_set(&dg->hint, "write `stages 2` or more to overlap loads with compute");
			}
			break;
		case D_SMEM:
			check_const_shape(s, d, "smem buffer");
			d->ring_sym = resolve_ring(s, d);
			break;
		case D_BARRIER:
			d->ring_sym = resolve_ring(s, d);
			d->producer_syms = resolve_roles(s, d, d->producers, d->producer_spans, d->nproducers, "producers");
			d->consumer_syms = resolve_roles(s, d, d->consumers, d->consumer_spans, d->nconsumers, "consumers");
			if (d->arrivals < 1) {
				Diag *dg = serr(s, "CK-SEM-038", d->span, "barrier '%s' declares %d arrivals; at least 1 is needed",
				                d->name, d->arrivals);
				diag_set(&dg->barrier, "%s", d->name);
				diag_set(&dg->hint, "count one arrival per arriving warpgroup (or TMA issuing role) per phase");
			}
			break;
		case D_FRAG:
			check_const_shape(s, d, "fragment");
			if (d->owner)
				d->owner_sym = resolve_kind(s, d->owner, d->owner_span, SYM_ROLE);
			if ((d->split == SPLIT_N && d->rank < 2) || (d->split == SPLIT_M && d->rank < 1)) {
				Diag *dg = serr(s, "CK-SEM-009", d->span, "fragment '%s' of rank %d cannot be `split %s`",
				                d->name, d->rank, d->split == SPLIT_M ? "m" : "n");
				diag_set(&dg->resource, "%s", d->name);
				diag_set(&dg->hint, "split n divides columns and needs rank 2; use split m or no split");
			}
			break;
		}
	}
	/* roles must not share warps */
	for (int i = 0; i < roles.len; i++)
		for (int j = 0; j < i; j++) {
			Decl *a = roles.data[j], *b = roles.data[i];
			if (a->warp_lo > a->warp_hi || b->warp_lo > b->warp_hi)
				continue;
			if (b->warp_lo <= a->warp_hi && a->warp_lo <= b->warp_hi) {
				Diag *dg = serr(s, "CK-SEM-007", b->span, "roles '%s' (warps %d..%d) and '%s' (warps %d..%d) overlap",
				                b->name, b->warp_lo, b->warp_hi, a->name, a->warp_lo, a->warp_hi);
				diag_related(dg, a->span, "role '%s' declared here", a->name);
				diag_set(&dg->role, "%s", b->name);
				diag_set(&dg->hint, "give each role its own warps, e.g. `warps %d..%d`",
				         a->warp_hi + 1, a->warp_hi + 1 + (b->warp_hi - b->warp_lo));
			}
		}
	k->nroles = roles.len;     k->roles = (Decl **)vec_freeze(&roles, &s->c->arena);
	k->npipes = pipes.len;     k->pipes = (Decl **)vec_freeze(&pipes, &s->c->arena);
	k->nsmems = smems.len;     k->smems = (Decl **)vec_freeze(&smems, &s->c->arena);
	k->nbarriers = bars.len;   k->barriers = (Decl **)vec_freeze(&bars, &s->c->arena);
	k->nfrags = frags.len;     k->frags = (Decl **)vec_freeze(&frags, &s->c->arena);
	k->nparams = params.len;   k->params = (Decl **)vec_freeze(&params, &s->c->arena);
	k->ndomains = domains.len; k->domains = (Decl **)vec_freeze(&domains, &s->c->arena);
}

/* ---- statements ---- */

static const char *role_list(Sema *s, Sym **syms, const char **names, int n)
{
	StrBuf b = {0};
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
	char *r = arena_strdup(&s->c->arena, n ? sb_str(&b) : "none");
	sb_free(&b);
	return r;
}

static bool role_in(Sym *role, Sym **syms, int n)
{
	for (int i = 0; i < n; i++)
		if (syms && syms[i] == role)
			return true;
	return false;
}

/* Resolve the barrier of a wait/arrive/signal and check the role may use it. */
static void check_barrier_use(Sema *s, Stmt *st, const char *verb, bool producer, const char *rule)
{
	Sym *y = resolve_kind(s, st->name, st->name_span, SYM_BARRIER);
	st->sym = y;
	if (!y)
		return;
	use_sym(s, y, st->name_span, false);
	Decl *d = y->decl;
	if (!s->role || !d)
		return;
	Sym **list = producer ? d->producer_syms : d->consumer_syms;
	const char **names = producer ? d->producers : d->consumers;
	int n = producer ? d->nproducers : d->nconsumers;
	if (role_in(s->role, list, n))
		return;
	Diag *dg = serr(s, rule, st->span, "role '%s' %s barrier '%s', but its %s are: %s",
	                s->role->name, verb, y->name, producer ? "producers" : "consumers",
	                role_list(s, list, names, n));
	loc_sym(dg, y);
	diag_related(dg, d->span, "barrier '%s' declared here", y->name);
	diag_set(&dg->hint, "add '%s' to the %s of '%s', or move this statement to one of its %s",
	         s->role->name, producer ? "producers" : "consumers", y->name, producer ? "producers" : "consumers");
	diag_set(&dg->condition, "%s in %s(%s)", s->role->name, producer ? "producers" : "consumers", y->name);
}

/* Compare a copy's two shapes after dropping extents of 1. */
static bool copy_shapes(Sema *s, Stmt *st, const char *what, Expr *dst, Expr *src)
{
	Type a = drop1(dst->type), b = drop1(src->type);
	bool same = a.rank == b.rank;
	for (int i = 0; same && i < a.rank; i++) {
		if (a.cdims[i] != b.cdims[i])
			same = false;
		else if (a.cdims[i] == -1 && !expr_same(a.dims[i], b.dims[i]))
			same = false;
	}
	if (same)
		return true;
	Diag *d;
	if (st->kind == S_TMA_STORE)
		d = serr(s, "CK-SEM-024", st->span, "%s copies smem buffer '%s' of shape %s into a %s tile of '%s'",
		         what, src->sym ? src->sym->name : "?", shape_str(s, &src->type), shape_str(s, &dst->type),
		         dst->sym ? dst->sym->name : "?");
	else
		d = serr(s, "CK-SEM-024", st->span, "%s copies a %s tile into %s of shape %s",
		         what, shape_str(s, &src->type), dst->sym ? dst->sym->name : "the destination",
		         shape_str(s, &dst->type));
	loc_sym(d, dst->sym && dst->sym->kind == SYM_SMEM ? dst->sym : src->sym);
	Sym *smem = dst->sym && dst->sym->kind == SYM_SMEM ? dst->sym : src->sym;
	if (smem && smem->decl)
		diag_related(d, smem->decl->span, "'%s' declared here", smem->name);
	diag_set(&d->hint, "make the box lengths (after dropping extents of 1) equal the buffer shape");
	Sym *gl = smem == src->sym ? dst->sym : src->sym;
	diag_set(&d->condition, "box(%s) == shape(%s)", gl ? gl->name : "?", smem ? smem->name : "?");
	return false;
}

static bool copy_dtypes(Sema *s, Stmt *st, const char *what, Expr *dst, Expr *src)
{
	if (dst->type.dt == src->type.dt)
		return true;
	Diag *d = serr(s, "CK-SEM-025", st->span, "%s moves %s data into %s '%s' without conversion",
	               what, dtype_name(src->type.dt), dtype_name(dst->type.dt), dst->sym ? dst->sym->name : "?");
	loc_sym(d, dst->sym);
	if (dst->sym && dst->sym->decl)
		diag_related(d, dst->sym->decl->span, "'%s' declared here", dst->sym->name);
	diag_set(&d->hint, "copies never convert: declare '%s' as %s, then convert with a cast in an assignment",
	         dst->sym ? dst->sym->name : "the destination", dtype_name(src->type.dt));
	return false;
}

static Sym *frag_target(Sema *s, Expr *e, const char *what, bool write)
{
	if (e->kind != E_IDENT) {
		Diag *d = serr(s, "CK-SEM-040", e->span, "%s must be a fragment name", what);
		diag_set(&d->hint, "declare `frag x: f32[M, N] in ROLE` and assign to x");
		return NULL;
	}
	Sym *y = lookup(s, e->name);
	if (!y) {
		unknown(s, e->name, e->span, "fragment", 1u << SYM_FRAG);
		return NULL;
	}
	e->sym = y;
	if (y->kind != SYM_FRAG) {
		Diag *d = serr(s, "CK-SEM-040", e->span, "%s must be a fragment, but '%s' is a %s",
		               what, e->name, kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		loc_sym(d, y);
		if (y->kind == SYM_SMEM || y->kind == SYM_PARAM)
			diag_set(&d->hint, "write memory with `store %s[...] <- value`", e->name);
		else
			diag_set(&d->hint, "only fragments can be assigned; lets and loop variables are immutable");
		return NULL;
	}
	use_sym(s, y, e->span, write);
	e->type = decl_type(y->decl);
	return y;
}

/* Check value v against a target of type t (assignment/store): shapes unify,
 * dtypes equal (literals adapt). */
static bool value_into(Sema *s, Expr *v, const Type *t, Span sp, const char *what, bool drop)
{
	Type tt = *t;
	Type r;
	Type vt = drop && !shape_open(&v->type) ? drop1(v->type) : v->type;
	if (!unify_shape(&vt, &tt, &r) || (vt.rank > 0 && vt.rank != RANK_CTX && !shape_open(&vt)
	                                   && vt.rank != tt.rank))
		return shape_err(s, sp, what, &tt, &v->type);
	if (shape_open(&v->type)) {
		if (!settle_shape(s, v, &tt))
			return false;
		if (shape_open(&v->type)) {
			Diag *d = serr(s, "CK-SEM-034", v->span, "cannot infer the shape of this value");
			diag_set(&d->hint, "rows(), cols(), row_idx() and col_idx() need a fragment or tile target");
			return false;
		}
	}
	if (v->type.dt == tt.dt)
		return true;
	int lk = lit_kind(v);
	if (lk && (dtype_is_float(tt.dt) || (lk == 1 && dt_is_int(tt.dt)))) {
		settle_dt(v, tt.dt);
		return true;
	}
	Diag *d = serr(s, "CK-SEM-031", sp, "%s: the value is %s but the target is %s",
	               what, dtype_name(v->type.dt), dtype_name(tt.dt));
	diag_set(&d->hint, "convert explicitly: %s(...)", dtype_name(tt.dt));
	diag_set(&d->condition, "dtype(value) == %s", dtype_name(tt.dt));
	return false;
}

static Expr *mm_operand(Expr *e, bool *trans)
{
	*trans = false;
	if (e && e->kind == E_TRANSPOSE) {
		*trans = true;
		e = e->lhs;
	}
	return e;
}

static void check_mma(Sema *s, Stmt *st)
{
	const char *op = st->kind == S_WGMMA ? "wgmma" : "mma";
	Sym *acc = st->dst ? frag_target(s, st->dst, "the accumulator", true) : NULL;
	Expr *src = st->src;
	if (!src || src->kind != E_BINARY || src->op != '@') {
		serr(s, "CK-SEM-027", src ? src->span : st->span, "%s needs `a @ b` on the right", op);
		return;
	}
	bool ta, tb;
	Expr *a = mm_operand(src->lhs, &ta), *b = mm_operand(src->rhs, &tb);
	Expr *ops[2] = { a, b };
	bool tr[2] = { ta, tb };
	Type T[2];
	bool ok = acc != NULL;
	for (int i = 0; i < 2; i++) {
		Expr *x = ops[i];
		const char *nm = i ? "b" : "a";
		if (!x || x->kind != E_IDENT) {
			serr(s, "CK-SEM-027", x ? x->span : src->span, "%s operand %s must be the name of an smem buffer%s",
			     op, nm, i == 0 || st->kind == S_MMA ? " or fragment" : "");
			ok = false;
			continue;
		}
		Sym *y = lookup(s, x->name);
		if (!y) {
			unknown(s, x->name, x->span, "operand", (1u << SYM_SMEM) | (1u << SYM_FRAG));
			ok = false;
			continue;
		}
		x->sym = y;
		bool frag_ok = i == 0 || st->kind == S_MMA;
		if (y->kind == SYM_SMEM || (y->kind == SYM_FRAG && frag_ok)) {
			use_sym(s, y, x->span, false);
			if (y->kind == SYM_FRAG && tr[i]) {
				Diag *d = serr(s, "CK-SEM-027", x->span, "%s operand %s: fragment '%s' cannot be transposed",
				               op, nm, y->name);
				loc_sym(d, y);
				diag_set(&d->hint, "register operands are used as laid out; transpose through an smem buffer");
				ok = false;
			}
			x->type = decl_type(y->decl);
			if (x->type.rank != 2) {
				serr(s, "CK-SEM-029", x->span, "%s operand %s '%s' must have rank 2, but it has shape %s",
				     op, nm, y->name, shape_str(s, &x->type));
				ok = false;
			}
			T[i] = x->type;
			if (tr[i] && x->type.rank == 2) {
				T[i].cdims[0] = x->type.cdims[1];
				T[i].cdims[1] = x->type.cdims[0];
			}
			src->lhs->type = i == 0 ? T[0] : src->lhs->type;
			if (i == 1)
				src->rhs->type = T[1];
		} else {
			Diag *d = serr(s, "CK-SEM-027", x->span, "%s operand %s must be %s, but '%s' is a %s", op, nm,
			               frag_ok ? "an smem buffer or a fragment" : "an smem buffer", x->name, kind_name(y->kind));
			diag_related(d, y->span, "'%s' declared here", x->name);
			loc_sym(d, y);
			if (y->kind == SYM_FRAG)
				diag_set(&d->hint, "wgmma reads B from shared memory; store the fragment to an smem buffer first");
			ok = false;
		}
	}
	if (!ok)
		return;
	Type C = st->dst->type;
	if (C.rank != 2) {
		serr(s, "CK-SEM-029", st->dst->span, "%s accumulator '%s' must have rank 2, but it has shape %s",
		     op, acc->name, shape_str(s, &C));
		return;
	}
	if (C.dt != DT_F32 && C.dt != DT_F16) {
		Diag *d = serr(s, "CK-SEM-028", st->dst->span, "%s accumulator '%s' is %s; it must be f32 or f16",
		               op, acc->name, dtype_name(C.dt));
		loc_sym(d, acc);
		diag_related(d, acc->decl->span, "'%s' declared here", acc->name);
		diag_set(&d->hint, "declare the accumulator as f32 and cast when storing: bf16(%s)", acc->name);
	}
	DType da = a->type.dt, db = b->type.dt;
	bool okdt = (da == DT_BF16 || da == DT_F16 || da == DT_F8E4M3);
	if (!okdt || da != db) {
		Diag *d = serr(s, "CK-SEM-028", src->span, "%s operands are %s and %s; they must be the same type, one of bf16, f16, f8e4m3",
		               op, dtype_name(da), dtype_name(db));
		diag_set(&d->hint, "declare both operand buffers with the same 16- or 8-bit float type");
	}
	long long M = C.cdims[0], N = C.cdims[1];
	long long Ma = T[0].cdims[0], Ka = T[0].cdims[1], Kb = T[1].cdims[0], Nb = T[1].cdims[1];
	if (M != Ma || N != Nb || Ka != Kb) {
		Diag *d = serr(s, "CK-SEM-029", src->span,
		               "%s shapes disagree: %s is [%lld, %lld] (M x N) but %s%s gives [%lld, %lld] (M x K) and %s%s gives [%lld, %lld] (K x N)",
		               op, acc->name, M, N, a->name, ta ? "^T" : "", Ma, Ka, b->name, tb ? "^T" : "", Kb, Nb);
		diag_set(&d->condition, "acc [M,N] = a [M,K] @ b [K,N]");
		diag_set(&d->hint, "%s", Ka != Kb && Ka == Nb ? "b is probably stored [N, K]: write b^T"
		                         : "check the tile shapes of the operands and the accumulator");
		if (b->sym && b->sym->decl)
			diag_related(d, b->sym->decl->span, "'%s' declared here", b->name);
		loc_sym(d, acc);
	}
}

static void check_stmt(Sema *s, Stmt *st, bool top);

static void enter_loop(Sema *s, Stmt *st)
{
	vec_push(&s->loops, st);
}

static void check_for(Sema *s, Stmt *st)
{
	need_int(s, st->lo, "the loop start");
	need_int(s, st->hi, "the loop end");
	if (st->step && need_int(s, st->step, "the loop step") && st->step->is_const && st->step->cval <= 0) {
		Diag *d = serr(s, "CK-SEM-039", st->step->span, "loop step %lld is not positive", st->step->cval);
		diag_set(&d->hint, "loops count upward over lo .. hi; use a positive step");
	}
	if (st->pipe) {
		st->pipe_sym = resolve_kind(s, st->pipe, st->pipe_span, SYM_PIPE);
		if (st->pipe_sym)
			for (int i = 0; i < s->loops.len; i++) {
				Stmt *o = s->loops.data[i];
				if (o->pipe_sym == st->pipe_sym) {
					Diag *d = serr(s, "CK-SEM-018", st->pipe_span,
					               "loop over '%s' is pipelined over '%s', which an enclosing loop already pipelines",
					               st->name, st->pipe);
					diag_related(d, o->pipe_span, "the enclosing loop over '%s' is pipelined over '%s' here",
					             o->name, st->pipe);
					diag_set(&d->pipeline, "%s", st->pipe);
					diag_set(&d->hint, "pipeline only one loop per pipeline (usually the innermost), or declare a second pipeline");
					break;
				}
			}
	}
	int mark = s->scope.len;
	st->sym = declare(s, SYM_LOOPVAR, st->name, st->name_span, true);
	st->sym->stmt = st;
	enter_loop(s, st);
	check_block(s, st->body, st->nbody);
	s->loops.len--;
	scope_pop(s, mark);
}

static Stmt *cur_ploop(Sema *s)
{
	for (int i = s->loops.len - 1; i >= 0; i--) {
		Stmt *l = s->loops.data[i];
		if (l->pipe_sym)
			return l;
	}
	return NULL;
}

static void check_stmt(Sema *s, Stmt *st, bool top)
{
	st->id = s->nstmt++;
	st->role = s->role;
	st->loop = s->loops.len ? s->loops.data[s->loops.len - 1] : NULL;
	st->ploop = cur_ploop(s);
	if (top && st->kind != S_IN) {
		Diag *d = serr(s, "CK-SEM-014", st->span, "only `in ROLE { }` blocks may appear at the top of the kernel body");
		diag_set(&d->hint, "put this statement inside the `in` block of the role that executes it");
	}
	switch (st->kind) {
	case S_IN:
		if (!top) {
			Diag *d = serr(s, "CK-SEM-016", st->span, "`in %s` is nested inside another role's program",
			               st->name ? st->name : "?");
			diag_set(&d->hint, "`in` blocks appear only at the top level of the kernel body");
		}
		break;   /* handled by check_body */
	case S_FOR:
		check_for(s, st);
		break;
	case S_IF: {
		need_bool(s, st->cond, "an `if` condition", true);
		int mark = s->scope.len;
		check_block(s, st->body, st->nbody);
		scope_pop(s, mark);
		check_block(s, st->els, st->nels);
		scope_pop(s, mark);
		break;
	}
	case S_WAIT:
		check_barrier_use(s, st, "waits on", false, "CK-SEM-020");
		break;
	case S_ARRIVE:
		check_barrier_use(s, st, "arrives on", true, "CK-SEM-021");
		break;
	case S_TMA_LOAD: case S_TMA_STORE: case S_CP_ASYNC: {
		bool load = st->kind != S_TMA_STORE;
		const char *what = st->kind == S_CP_ASYNC ? "cp_async" : load ? "tma load" : "tma store";
		Expr *smem = load ? st->dst : st->src, *glob = load ? st->src : st->dst;
		bool ok = true;
		if (!smem || !glob)
			break;
		if (!check_ref(s, smem, load, st->kind != S_CP_ASYNC))
			ok = false;
		else if (smem->sym->kind != SYM_SMEM || (st->kind != S_CP_ASYNC && smem->kind != E_IDENT)) {
			Diag *d = serr(s, "CK-SEM-027", smem->span, "%s needs a whole smem buffer on the %s side, but '%s' is %s",
			               what, load ? "destination" : "source", smem->sym->name,
			               smem->sym->kind == SYM_SMEM ? "indexed" : "a global param");
			loc_sym(d, smem->sym);
			diag_set(&d->hint, load ? "write `tma buf <- Global[i +: m, j +: n] signal bar`"
			                        : "write `tma Global[i +: m, j +: n] <- buf`");
			ok = false;
		}
		if (!check_ref(s, glob, !load, st->kind != S_CP_ASYNC))
			ok = false;
		else if (glob->sym->kind != SYM_PARAM || glob->kind != E_INDEX) {
			Diag *d = serr(s, "CK-SEM-027", glob->span, "%s needs an indexed global param on the %s side",
			               what, load ? "source" : "destination");
			loc_sym(d, glob->sym);
			diag_set(&d->hint, "name the global tile: Param[i +: m, j +: n]");
			ok = false;
		}
		if (ok) {
			if (load)
				copy_shapes(s, st, what, smem, glob);
			else
				copy_shapes(s, st, what, glob, smem);
			if (load)
				copy_dtypes(s, st, what, smem, glob);
			else
				copy_dtypes(s, st, what, glob, smem);
		}
		if (st->kind == S_TMA_LOAD && st->name)
			check_barrier_use(s, st, "signals", true, "CK-SEM-022");
		break;
	}
	case S_WGMMA: case S_MMA:
		check_mma(s, st);
		break;
	case S_WGMMA_WAIT: case S_FENCE:
		break;
	case S_SYNC:
		if (st->name)
			st->sym = resolve_kind(s, st->name, st->name_span, SYM_ROLE);
		break;
	case S_LOAD: {
		Sym *f = st->dst ? frag_target(s, st->dst, "the destination of load", true) : NULL;
		if (!st->src || !check_ref(s, st->src, false, false) || !f)
			break;
		if (st->src->kind != E_INDEX) {
			Diag *d = serr(s, "CK-SEM-027", st->src->span, "load needs an indexed tile, e.g. %s[i +: m, j +: n]",
			               st->src->sym->name);
			loc_sym(d, st->src->sym);
			break;
		}
		Type a = drop1(st->dst->type), b = drop1(st->src->type);
		Type r;
		if (!unify_shape(&a, &b, &r) || a.rank != b.rank) {
			shape_err(s, st->span, "load", &st->dst->type, &st->src->type);
			break;
		}
		copy_dtypes(s, st, "load", st->dst, st->src);
		break;
	}
	case S_STORE: case S_ATOMIC: {
		const char *what = st->kind == S_STORE ? "store" : "atomic_add";
		s->scatter_ok = st->kind == S_ATOMIC;
		bool ok = st->dst && check_ref(s, st->dst, true, false);
		s->scatter_ok = false;
		if (ok && st->dst->kind != E_INDEX) {
			serr(s, "CK-SEM-027", st->dst->span, "%s needs an indexed destination, e.g. %s[i +: m, j +: n]",
			     what, st->dst->sym->name);
			ok = false;
		}
		bool okv = st->src && check_expr(s, st->src);
		if (!ok || !okv)
			break;
		Type t = drop1(st->dst->type);
		value_into(s, st->src, &t, st->span, what, true);
		break;
	}
	case S_LET: {
		bool ok = check_expr(s, st->src);
		if (ok && st->src->type.rank != 0) {
			Diag *d = serr(s, "CK-SEM-037", st->src->span, "`let %s` binds a scalar, but the value has shape %s",
			               st->name, shape_str(s, &st->src->type));
			diag_set(&d->hint, "hold tiles in a declared fragment: frag %s: f32[...] in ROLE", st->name);
			st->src->type.dt = DT_NONE;
		}
		if (ok && lit_kind(st->src) == 2)
			settle_dt(st->src, DT_F32);
		else if (!ok && st->src)
			st->src->type.dt = DT_NONE;
		st->sym = declare(s, SYM_LET, st->name, st->name_span, true);
		st->sym->stmt = st;
		break;
	}
	case S_ASSIGN: {
		Sym *lhs[8] = {0};
		bool ok = true;
		for (int i = 0; i < st->nlhs; i++) {
			Sym *y = frag_target(s, st->lhs[i], "the left side of '='", true);
			if (i < 8)
				lhs[i] = y;
			ok &= y != NULL;
		}
		if (st->nlhs > 0)
			st->sym = st->lhs[0]->sym;
		Expr *v = st->src;
		if (!v)
			break;
		const Builtin *b = v->kind == E_CALL ? builtin_find(v->name) : NULL;
		int nres = b ? b->nresults : 1;
		s->multi_ok = v;
		bool okv = check_expr(s, v);
		s->multi_ok = NULL;
		if (nres != st->nlhs) {
			Diag *d = serr(s, "CK-SEM-032", st->span, "%d name%s on the left of '=' but the value has %d result%s",
			               st->nlhs, st->nlhs == 1 ? "" : "s", nres, nres == 1 ? "" : "s");
			if (nres == 2)
				diag_set(&d->hint, "write `v, i = %s(...)`: the values and their i32 column indices", b->name);
			else
				diag_set(&d->hint, "assign one value per statement");
			break;
		}
		if (!ok || !okv)
			break;
		if (nres == 1) {
			value_into(s, v, &st->lhs[0]->type, st->span, "assignment", false);
			break;
		}
		/* two results: (value, i32 index) */
		Type vt = v->type;
		Type it = vt;
		it.dt = DT_I32;
		Type want[2] = { vt, it };
		for (int i = 0; i < 2; i++) {
			Type lt = st->lhs[i]->type;
			Type r;
			if (!unify_shape(&lt, &want[i], &r) || lt.rank != want[i].rank) {
				shape_err(s, st->lhs[i]->span, i ? "index result" : "value result", &lt, &want[i]);
				continue;
			}
			if (lt.dt != want[i].dt) {
				Diag *d = serr(s, "CK-SEM-031", st->lhs[i]->span,
				               "the %s result of %s() is %s but fragment '%s' is %s",
				               i ? "index" : "value", b->name, dtype_name(want[i].dt), lhs[i]->name,
				               dtype_name(lt.dt));
				diag_set(&d->hint, "declare '%s' as %s", lhs[i]->name, dtype_name(want[i].dt));
			}
		}
		break;
	}
	}
}

static void check_block(Sema *s, Stmt **body, int n)
{
	int mark = s->scope.len;
	for (int i = 0; i < n; i++)
		if (body[i])
			check_stmt(s, body[i], false);
	scope_pop(s, mark);
}

static void check_body(Sema *s)
{
	Kernel *k = s->k;
	Stmt **first = arena_alloc(&s->c->arena, sizeof(Stmt *) * (size_t)(k->nroles + 1));
	for (int i = 0; i < k->nbody; i++) {
		Stmt *st = k->body[i];
		if (!st)
			continue;
		s->role = NULL;
		if (st->kind != S_IN) {
			check_stmt(s, st, true);
			continue;
		}
		check_stmt(s, st, true);
		Sym *r = st->name ? resolve_kind(s, st->name, st->name_span, SYM_ROLE) : NULL;
		st->sym = r;
		if (r) {
			int id = r->decl->id;
			if (first[id]) {
				Diag *d = serr(s, "CK-SEM-015", st->span, "role '%s' has a second `in` block", r->name);
				diag_related(d, first[id]->span, "its first `in` block is here");
				diag_set(&d->role, "%s", r->name);
				diag_set(&d->hint, "merge the two blocks: a role has one program");
			} else {
				first[id] = st;
			}
		}
		s->role = r;
		st->role = r;
		check_block(s, st->body, st->nbody);
		s->role = NULL;
	}
}

static void sema_kernel(Sema *s, Kernel *k)
{
	int nerr0 = s->c->diags->nerr;
	s->k = k;
	k->grid = k->cluster = NULL;
	check_decls(s);
	check_body(s);
	k->nsyms = s->ksyms.len;
	k->syms = (Sym **)vec_freeze(&s->ksyms, &s->c->arena);
	k->ndims = s->dims.len;
	k->dims = (const char **)vec_freeze(&s->dims, &s->c->arena);
	k->nstmts = s->nstmt;
	k->sema_ok = s->c->diags->nerr == nerr0;
}

/* Check every kernel of p; true when no error was found. */
bool sema_program(Ctx *c, Program *p)
{
	int nerr0 = c->diags->nerr;
	for (int i = 0; i < p->nkernels; i++) {
		Sema s;
		memset(&s, 0, sizeof s);
		s.c = c;
		s.cx = CX_STMT;
		s.cx_rule = "CK-SEM-011";
		s.cx_what = "this expression";
		if (p->kernels[i])
			sema_kernel(&s, p->kernels[i]);
		vec_free(&s.ksyms);
		vec_free(&s.scope);
		vec_free(&s.gone);
		vec_free(&s.loops);
		vec_free(&s.dims);
	}
	return c->diags->nerr == nerr0;
}

/* Kernel-level symbol named `name`, or NULL. */
Sym *sema_lookup(Kernel *k, const char *name)
{
	if (!k || !name)
		return NULL;
	for (int i = 0; i < k->nsyms; i++)
		if (strcmp(k->syms[i]->name, name) == 0)
			return k->syms[i];
	return NULL;
}
