/*
 * sema_int.h — state and helpers shared by the two halves of sema.
 *
 * Internal to src/front: sema.c (names, scopes, declarations, statements,
 * ownership) and sema_expr.c (expression types, builtin rules, folding)
 * share one Sema per kernel. Nothing outside those two files includes this
 * header; the public entry points (sema_program, sema_lookup) are in
 * front.h. Every helper below reports through the Diags of s->c and never
 * stops: a false / NULL result means "already reported, stay quiet".
 */
#ifndef CAKE_FRONT_SEMA_INT_H
#define CAKE_FRONT_SEMA_INT_H

#include "front.h"
#include "builtins.h"

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

/* ---- sema.c: diagnostics, names, ownership ---- */

/* Report error `id` at sp, tagged with the executing role; returns the Diag. */
Diag *sema_err(Sema *s, const char *id, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Human name of a symbol kind ("smem buffer", "loop variable", ...). */
const char *sema_kind_name(SymKind k);
/* Fill d's resource/barrier/pipeline localisation from y (NULL: no-op). */
void sema_loc_sym(Diag *d, Sym *y);
/* Visible symbol `name`: innermost scope first, then the kernel table; or NULL. */
Sym *sema_find(Sema *s, const char *name);
/* Report unknown name `name` (a `what`), with a "did you mean" of kinds in mask. */
void sema_unknown(Sema *s, const char *name, Span sp, const char *what, unsigned mask);
/* Attach to d the fix replacing `name` with suggestion g at the start of sp
 * (only when the source there is exactly that name). */
void sema_fix_rename(Sema *s, Diag *d, Span sp, const char *name, const char *g);
/* New arena symbol of kind k; not entered in any table. */
Sym *sema_new_sym(Sema *s, SymKind k, const char *name, Span sp);
/* Ownership (fragment owner role) and ring (pipelined loop) checks for one use of y. */
void sema_use_sym(Sema *s, Sym *y, Span sp, bool write);

/* ---- sema_expr.c: types and expressions ---- */

/* True for the integer dtypes (i32, u32, i64). */
bool sema_dt_is_int(DType t);
/* Type of a declared param/smem/frag from its (already checked) shape. */
Type sema_decl_type(Decl *d);
/* t without the extents that are exactly 1 (points and `+: 1` slices). */
Type sema_drop1(Type t);
/* Structural equality of two extent expressions (ints, names, unary and binary ops). */
bool sema_expr_same(const Expr *a, const Expr *b);
/* Arena string of t's shape for messages: "[64, N]", "scalar", "[...]". */
const char *sema_shape_str(Sema *s, const Type *t);
/* Element-wise shape unification of a and b into *out (dtype untouched); false on mismatch. */
bool sema_unify_shape(const Type *a, const Type *b, Type *out);
/* Literal kind of e: 1 = integer constant, 2 = float literal, 0 = typed value. */
int sema_lit_kind(const Expr *e);
/* Give the literal subtree e the dtype dt it adapts to. */
void sema_settle_dt(Expr *e, DType dt);
/* Report a shape mismatch (CK-SEM-030) of `what` between a and b; returns false. */
bool sema_shape_err(Sema *s, Span sp, const char *what, const Type *a, const Type *b);
/* Type e in place (value context); false when it could not be typed (reported). */
bool sema_check_expr(Sema *s, Expr *e);
/* Fold const y on demand (a cycle is reported); true when it has a constant value. */
bool sema_const_value(Sema *s, Sym *y);
/* Type e and require an integer scalar (`what` names it in messages). */
bool sema_need_int(Sema *s, Expr *e, const char *what);
/* The first fragment name read in e (after checking), or NULL. */
const Expr *sema_frag_read(const Expr *e);
/* Report CK-SEM-037 when the scalar e (`what`: a let, a bound, a condition)
 * reads a fragment, e.g. through sum(); true when reported. */
bool sema_uniform_err(Sema *s, const Expr *e, const char *what);
/* Type e and require a boolean (a scalar one when scalar). */
bool sema_need_bool(Sema *s, Expr *e, const char *what, bool scalar);
/* Type a reference base[slices] to a global param or smem buffer (e->type = slice type). */
bool sema_check_ref(Sema *s, Expr *e, bool write, bool tma);
/* Check typed value v against target type t (assignment/store): shapes unify and
 * settle, dtypes equal (literals adapt); drop ignores extents of 1. */
bool sema_value_into(Sema *s, Expr *v, const Type *t, Span sp, const char *what, bool drop);

#endif
