/*
 * eval.h — the one evaluator of symbolic integer expressions.
 *
 * Sizes in Cake are integer expressions over literals, consts, the symbolic
 * dims of the global params and (inside role programs) grid and loop
 * variables. Three stages need their values: sema folds constant
 * expressions, the schedule model evaluates them at sampled domain points,
 * and the lowering and the runner evaluate them over the bound dims at
 * launch. They all go through this evaluator, so an expression has one
 * meaning everywhere. What differs between them is only how a name gets its
 * value, which the caller supplies as a lookup callback.
 *
 * Arithmetic is 64-bit signed, checked: a result that does not fit
 * (overflow of + - * and unary -, INT64_MIN / -1, a shift that loses bits),
 * a division or modulo by zero, or a cast whose value does not fit the
 * target type is "not computable" — the functions return false — never
 * undefined behaviour and never a wrapped value.
 *
 *   + - * / %        C semantics (truncating division; a % -1 is 0)
 *   << >>            a << b = a * 2^b for b in 0..62; a >> b arithmetic, b in 0..63
 *   < > <= >= == !=  0 or 1
 *   && || !          0 or 1; && and || short-circuit, so `0 && x` is 0 even
 *                    when x is not computable
 *   min(a, b) max(a, b)
 *   cdiv(a, b) ceildiv(a, b)   ceil(a / b) for a >= 0, b > 0
 *   i32(x) u32(x) i64(x)       x, when it fits the type
 *
 * Anything else (floats, tensors, '@', other calls) is not computable.
 * Recursion is bounded by EVAL_MAX_DEPTH, including through lookups that
 * evaluate a definition (a const's value) with eval_int_at.
 *
 * Module prefix: eval_ (lower.h's eval_expr/eval_domain are wrappers).
 */
#ifndef CAKE_EVAL_H
#define CAKE_EVAL_H

#include "ast.h"

#define EVAL_MAX_DEPTH 64

/* Value of the identifier `ident` (an E_IDENT with a name) at evaluation depth
 * depth: store it in *out and return true, or return false when the name has no
 * value here. A lookup that evaluates a definition passes depth + 1 to eval_int_at. */
typedef bool (*EvalLookup)(const void *env, const Expr *ident, int depth, long long *out);

/* a OP b for a binary operator code ('+', OP_SHL, '<', OP_AND, ...); false when
 * not computable (see above) or op is not an integer operator. */
bool eval_binop(int op, long long a, long long b, long long *out);
/* OP a for '-' and '!'; false when not computable or op is another operator. */
bool eval_unop(int op, long long a, long long *out);
/* Value of e with names resolved by look(env, ...) (look may be NULL: no names);
 * false when not computable. out may be NULL (only computability is asked). */
bool eval_int(const Expr *e, EvalLookup look, const void *env, long long *out);
/* eval_int starting at recursion depth depth (for lookups); false beyond EVAL_MAX_DEPTH. */
bool eval_int_at(const Expr *e, EvalLookup look, const void *env, int depth, long long *out);

#endif
