/*
 * builtins.h — the table of builtin functions of Cake IR and their type rules.
 *
 * Calls in expressions (`exp2(x)`, `rowmax(s)`, `bf16(acc)`) are never user
 * functions: sema resolves the callee in this table, checks the argument count
 * against [min_args, max_args], and applies the type rule named by `rule`.
 * The table is data; the rules themselves live in sema_expr.c (one switch over
 * BuiltinRule) so that a new builtin is one table row when its rule exists.
 *
 * Shapes below use [M, N] for a rank-2 fragment value, [M] for rank 1, and
 * "scalar" for rank 0. "float" means bf16, f16, f32 or f8e4m3. An integer
 * constant or float literal argument adapts to the dtype of the other operand.
 *
 * TYPE RULES (copied into docs/LANGUAGE.md):
 *
 *   BR_UNARY_FLOAT   exp exp2 log log2 sqrt rsqrt sigmoid softplus abs tanh silu
 *                    (x) -> same shape and dtype as x; x must be float (abs also
 *                    accepts integers). Element-wise.
 *   BR_BINARY        min max (a, b) -> element-wise; a and b follow the
 *                    broadcasting rules of `+` (equal shapes, or a scalar, or an
 *                    explicit rows()/cols() broadcast); dtypes must be equal.
 *   BR_WHERE         where(cond, a, b): cond is bool, a and b the values; all
 *                    three broadcast together; result dtype = dtype of a and b
 *                    (which must agree; literals such as -inf adapt).
 *   BR_ROW_REDUCE    rowsum rowmax rowmin (x [M,N]) -> [M], same dtype.
 *   BR_COL_REDUCE    colsum colmax (x [M,N]) -> [N], same dtype.
 *   BR_ROW_ARG       rowargmin rowargmax (x [M,N]) -> two results:
 *                    ([M] value in x's dtype, [M] i32 column index). Must be
 *                    assigned to two fragments: `v, i = rowargmin(d)`.
 *   BR_CUMSUM        cumsum(x, dim) -> same shape/dtype as x; dim is a
 *                    constant 0 (down the rows) or 1 (along a row), < rank(x).
 *   BR_TRI           tril(x [, diag]) triu(x [, diag]) -> same shape/dtype as
 *                    x [M,N]; elements above (tril) / below (triu) diagonal
 *                    `diag` (integer scalar, default 0) become 0.
 *   BR_TRISOLVE      trisolve(L [C,C], B [C,D]) -> X [C,D] with L X = B, L
 *                    lower triangular; L and B float of the same dtype.
 *                    trisolve(L) -> X [C,C] = L^-1 (B the identity).
 *   BR_TOPK          topk(x [M,N], k) -> two results ([M,k] value in x's dtype,
 *                    [M,k] i32 column index); k a constant, 1 <= k <= N.
 *   BR_BCAST_ROWS    rows(v [M]) -> [M, N]: v[i] repeated along row i. N comes
 *                    from the context (see below).
 *   BR_BCAST_COLS    cols(v [N]) -> [M, N]: v[j] repeated down column j.
 *   BR_INDEX         row_idx() col_idx() -> i32 value of the context's shape
 *                    whose elements are their own row (col) coordinate.
 *                    row_idx() also works for a rank-1 context.
 *   BR_L2NORM        l2norm(x [M,N]) -> same; each row divided by its L2 norm
 *                    (x float). For rank 1 the whole vector is normalised.
 *   BR_CAST          bf16 f16 f32 f8e4m3 i32 u32 i64 bool (x) -> x's shape in
 *                    the named dtype. The only way to change a dtype.
 *   BR_SUM           sum(x [M] or [M,N]) -> scalar of x's dtype: the sum of every
 *                    element of a fragment value (a full reduction; the result is the
 *                    same in every thread of the role). Only in fragment math: a let,
 *                    a loop bound, a condition or a slice start cannot read fragments.
 *   BR_FETCH         fetch_add(G[.., idx], v) -> the values G held before
 *                    adding v: G a global i32/u32/f32 tensor indexed by point
 *                    indices, of which at most one is a scatter index (an
 *                    integer vector fragment, one element per value); v a
 *                    scalar or of the reference's shape. Result: the
 *                    reference's shape and G's dtype.
 *
 * THE CONTEXT SHAPE: rows(), cols(), row_idx() and col_idx() take the part
 * of their shape they cannot know from their arguments from the context,
 * which is, in order: the other operand of the element-wise operator or
 * builtin they appear in (`s - rows(m)` with s [M,N]), otherwise the target
 * of the statement (the fragment on the left of `=`, or the destination slice
 * of `store`/`atomic_add`). Used where neither exists (e.g. as the argument
 * of a reduction), sema reports CK-SEM-034.
 */
#ifndef CAKE_BUILTINS_H
#define CAKE_BUILTINS_H

#include "ast.h"

typedef enum BuiltinRule {
	BR_UNARY_FLOAT, BR_BINARY, BR_WHERE, BR_ROW_REDUCE, BR_COL_REDUCE,
	BR_ROW_ARG, BR_CUMSUM, BR_TRI, BR_TRISOLVE, BR_TOPK,
	BR_BCAST_ROWS, BR_BCAST_COLS, BR_INDEX, BR_L2NORM, BR_CAST, BR_FETCH, BR_SUM,
} BuiltinRule;

/* Builtin identifiers, one per table row (Sym.index of a SYM_BUILTIN). */
typedef enum BuiltinId {
	BI_EXP, BI_EXP2, BI_LOG, BI_LOG2, BI_SQRT, BI_RSQRT, BI_SIGMOID,
	BI_SOFTPLUS, BI_ABS, BI_TANH, BI_SILU,
	BI_MIN, BI_MAX, BI_WHERE,
	BI_ROWSUM, BI_ROWMAX, BI_ROWMIN, BI_COLSUM, BI_COLMAX,
	BI_ROWARGMIN, BI_ROWARGMAX,
	BI_CUMSUM, BI_TRIL, BI_TRIU, BI_TRISOLVE, BI_TOPK,
	BI_ROWS, BI_COLS, BI_ROW_IDX, BI_COL_IDX, BI_L2NORM,
	BI_CAST_BF16, BI_CAST_F16, BI_CAST_F32, BI_CAST_F8E4M3,
	BI_CAST_I32, BI_CAST_U32, BI_CAST_I64, BI_CAST_BOOL,
	BI_FETCH_ADD,
	BI_SUM,
	BI__COUNT
} BuiltinId;

typedef struct Builtin {
	const char *name;
	BuiltinId id;
	int min_args, max_args;
	int nresults;          /* 1, or 2 for rowargmin/rowargmax/topk */
	BuiltinRule rule;
	DType cast_to;         /* BR_CAST: target dtype; else DT_NONE */
	const char *doc;       /* one-line signature, e.g. "rowsum(x [M,N]) -> [M]" */
} Builtin;

/* The builtin called `name`, or NULL when there is none. */
const Builtin *builtin_find(const char *name);
/* The builtin with this id (id < BI__COUNT). */
const Builtin *builtin_get(BuiltinId id);
/* Every builtin in table order; *n receives the count. */
const Builtin *builtins_all(int *n);
/* The builtin name closest to `name` by edit distance (<= 2), or NULL. */
const char *builtin_suggest(const char *name);
/* Levenshtein distance between a and b, capped at cap+1 (cheap early exit). */
int edit_distance(const char *a, const char *b, int cap);

#endif
