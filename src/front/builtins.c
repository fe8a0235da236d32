/*
 * builtins.c — the builtin-function table of Cake IR.
 *
 * Cake IR has no user functions. Every call is a builtin from this table: a
 * name, an argument-count range, a result count and the name of a type rule
 * (BuiltinRule). Sema looks a callee up here and applies the rule; the
 * lowering switches on BuiltinId. Keeping the table as plain data means the
 * documentation (builtins.h, docs/LANGUAGE.md), the checker and the lowering
 * all agree on one list, and adding a builtin whose rule already exists is a
 * single row.
 *
 * The table is indexed by BuiltinId: row i has id i (builtins_all() order),
 * which builtin_get() relies on and the unit tests check.
 */
#include "builtins.h"

#include <string.h>

#define UN(nm, id, doc) { nm, id, 1, 1, 1, BR_UNARY_FLOAT, DT_NONE, doc }
#define CAST(nm, id, dt) { nm, id, 1, 1, 1, BR_CAST, dt, nm "(x) -> x converted to " nm }

static const Builtin TABLE[BI__COUNT] = {
	UN("exp", BI_EXP, "exp(x) -> e^x, element-wise"),
	UN("exp2", BI_EXP2, "exp2(x) -> 2^x, element-wise"),
	UN("log", BI_LOG, "log(x) -> natural logarithm, element-wise"),
	UN("log2", BI_LOG2, "log2(x) -> base-2 logarithm, element-wise"),
	UN("sqrt", BI_SQRT, "sqrt(x) -> square root, element-wise"),
	UN("rsqrt", BI_RSQRT, "rsqrt(x) -> 1/sqrt(x), element-wise"),
	UN("sigmoid", BI_SIGMOID, "sigmoid(x) -> 1/(1+e^-x), element-wise"),
	UN("softplus", BI_SOFTPLUS, "softplus(x) -> log(1+e^x), element-wise"),
	UN("abs", BI_ABS, "abs(x) -> |x|, element-wise (float or integer)"),
	UN("tanh", BI_TANH, "tanh(x) -> hyperbolic tangent, element-wise"),
	UN("silu", BI_SILU, "silu(x) -> x*sigmoid(x), element-wise"),
	{ "min", BI_MIN, 2, 2, 1, BR_BINARY, DT_NONE, "min(a, b) -> element-wise minimum (broadcasts like +)" },
	{ "max", BI_MAX, 2, 2, 1, BR_BINARY, DT_NONE, "max(a, b) -> element-wise maximum (broadcasts like +)" },
	{ "where", BI_WHERE, 3, 3, 1, BR_WHERE, DT_NONE, "where(cond bool, a, b) -> a where cond else b" },
	{ "rowsum", BI_ROWSUM, 1, 1, 1, BR_ROW_REDUCE, DT_NONE, "rowsum(x [M,N]) -> [M]" },
	{ "rowmax", BI_ROWMAX, 1, 1, 1, BR_ROW_REDUCE, DT_NONE, "rowmax(x [M,N]) -> [M]" },
	{ "rowmin", BI_ROWMIN, 1, 1, 1, BR_ROW_REDUCE, DT_NONE, "rowmin(x [M,N]) -> [M]" },
	{ "colsum", BI_COLSUM, 1, 1, 1, BR_COL_REDUCE, DT_NONE, "colsum(x [M,N]) -> [N]" },
	{ "colmax", BI_COLMAX, 1, 1, 1, BR_COL_REDUCE, DT_NONE, "colmax(x [M,N]) -> [N]" },
	{ "rowargmin", BI_ROWARGMIN, 1, 1, 2, BR_ROW_ARG, DT_NONE, "v, i = rowargmin(x [M,N]) -> ([M] min, [M] i32 column)" },
	{ "rowargmax", BI_ROWARGMAX, 1, 1, 2, BR_ROW_ARG, DT_NONE, "v, i = rowargmax(x [M,N]) -> ([M] max, [M] i32 column)" },
	{ "cumsum", BI_CUMSUM, 2, 3, 1, BR_CUMSUM, DT_NONE, "cumsum(x, dim [, seg]) -> inclusive prefix sum along constant dim 0 or 1, restarting every seg elements (a constant dividing the extent)" },
	{ "tril", BI_TRIL, 1, 2, 1, BR_TRI, DT_NONE, "tril(x [M,N] [, diag]) -> x with elements above diagonal diag zeroed" },
	{ "triu", BI_TRIU, 1, 2, 1, BR_TRI, DT_NONE, "triu(x [M,N] [, diag]) -> x with elements below diagonal diag zeroed" },
	{ "trisolve", BI_TRISOLVE, 1, 2, 1, BR_TRISOLVE, DT_NONE, "trisolve(L [C,C], B [C,D]) -> X [C,D] solving L X = B, L lower triangular; trisolve(L) -> L^-1; trisolve(L, S) -> the inverses of L's S x S diagonal blocks" },
	{ "topk", BI_TOPK, 2, 2, 2, BR_TOPK, DT_NONE, "v, i = topk(x [M,N], k) -> ([M,k] largest, [M,k] i32 column)" },
	{ "rows", BI_ROWS, 1, 1, 1, BR_BCAST_ROWS, DT_NONE, "rows(v [M]) -> [M,N], v[i] along row i; N from the context" },
	{ "cols", BI_COLS, 1, 1, 1, BR_BCAST_COLS, DT_NONE, "cols(v [N]) -> [M,N], v[j] down column j; M from the context" },
	{ "row_idx", BI_ROW_IDX, 0, 0, 1, BR_INDEX, DT_NONE, "row_idx() -> i32 row coordinate of each element of the context shape" },
	{ "col_idx", BI_COL_IDX, 0, 0, 1, BR_INDEX, DT_NONE, "col_idx() -> i32 column coordinate of each element of the context shape" },
	{ "l2norm", BI_L2NORM, 1, 1, 1, BR_L2NORM, DT_NONE, "l2norm(x [M,N]) -> each row divided by its L2 norm" },
	CAST("bf16", BI_CAST_BF16, DT_BF16),
	CAST("f16", BI_CAST_F16, DT_F16),
	CAST("f32", BI_CAST_F32, DT_F32),
	CAST("f8e4m3", BI_CAST_F8E4M3, DT_F8E4M3),
	CAST("i32", BI_CAST_I32, DT_I32),
	CAST("u32", BI_CAST_U32, DT_U32),
	CAST("i64", BI_CAST_I64, DT_I64),
	CAST("bool", BI_CAST_BOOL, DT_BOOL),
	{ "fetch_add", BI_FETCH_ADD, 2, 2, 1, BR_FETCH, DT_NONE, "fetch_add(G[.., idx], v) -> values of G before the atomic add of v (one per element of idx)" },
	{ "sum", BI_SUM, 1, 1, 1, BR_SUM, DT_NONE, "sum(x [M] or [M,N]) -> the sum of every element, a scalar (fragment math only)" },
};

/* Builtin table lookup by exact name. */
const Builtin *builtin_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NELEM(TABLE); i++)
		if (strcmp(TABLE[i].name, name) == 0)
			return &TABLE[i];
	return NULL;
}

/* Row of the table with this id. */
const Builtin *builtin_get(BuiltinId id)
{
	if ((int)id < 0 || id >= BI__COUNT)
		return NULL;
	return &TABLE[id];
}

/* The whole table. */
const Builtin *builtins_all(int *n)
{
	*n = (int)NELEM(TABLE);
	return TABLE;
}

/* Levenshtein distance with two rows; names are short (< 64 chars matter). */
int edit_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63) /* long names: only exact matches are useful */
		return strcmp(a, b) == 0 ? 0 : cap + 1;
	int diff = (int)la - (int)lb;
	if (diff < 0)
		diff = -diff;
	if (diff > cap)
		return cap + 1;
	int prev[64], cur[64];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		int rowmin = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			int m = sub < del ? sub : del;
			cur[j] = m < ins ? m : ins;
			if (cur[j] < rowmin)
				rowmin = cur[j];
		}
		if (rowmin > cap)
			return cap + 1;
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb] > cap ? cap + 1 : prev[lb];
}

/* Closest builtin name within distance 2 (ties: table order). */
const char *builtin_suggest(const char *name)
{
	const char *best = NULL;
	int bestd = 3;
	for (size_t i = 0; i < NELEM(TABLE); i++) {
		int d = edit_distance(name, TABLE[i].name, 2);
		if (d < bestd && d < (int)strlen(name)) {
			bestd = d;
			best = TABLE[i].name;
		}
	}
	return best;
}
