/*
 * eval.c — checked 64-bit evaluation of integer expressions (see eval.h).
 *
 * Two layers: eval_binop/eval_unop define every operator once, with the
 * overflow rule, and are what sema's node-by-node constant folding calls;
 * eval_int_at walks a whole tree, resolving names through the caller's
 * lookup, and is what the schedule model and the lowering call. Every
 * arithmetic step goes through __builtin_*_overflow or an explicit range
 * test before the C operator runs, so no input reaches undefined
 * behaviour.
 */
#include "eval.h"

#include <stdint.h>
#include <string.h>

bool eval_binop(int op, long long a, long long b, long long *out)
{
	switch (op) {
	case '+': return !__builtin_add_overflow(a, b, out);
	case '-': return !__builtin_sub_overflow(a, b, out);
	case '*': return !__builtin_mul_overflow(a, b, out);
	case '/':
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*out = a / b;
		return true;
	case '%':
		if (b == 0)
			return false;
		*out = b == -1 ? 0 : a % b;
		return true;
	case OP_SHL:
		if (b < 0 || b > 62)
			return false;
		return !__builtin_mul_overflow(a, 1LL << b, out);
	case OP_SHR:
		if (b < 0 || b > 63)
			return false;
		*out = a >> b;
		return true;
	case '<': *out = a < b; return true;
	case '>': *out = a > b; return true;
	case OP_LE: *out = a <= b; return true;
	case OP_GE: *out = a >= b; return true;
	case OP_EQ: *out = a == b; return true;
	case OP_NE: *out = a != b; return true;
	case OP_AND: *out = a && b; return true;
	case OP_OR: *out = a || b; return true;
	default: return false;
	}
}

bool eval_unop(int op, long long a, long long *out)
{
	switch (op) {
	case '-':
		if (a == INT64_MIN)
			return false;
		*out = -a;
		return true;
	case '!':
		*out = !a;
		return true;
	default:
		return false;
	}
}

static bool is_call(const Expr *e, const char *name, int nargs)
{
	return e->nargs == nargs && strcmp(e->name, name) == 0;
}

static bool eval_call(const Expr *e, EvalLookup look, const void *env, int depth, long long *out)
{
	long long a, b;
	if (!e->name)
		return false;
	if (is_call(e, "min", 2) || is_call(e, "max", 2)) {
		if (!eval_int_at(e->args[0], look, env, depth + 1, &a) ||
		    !eval_int_at(e->args[1], look, env, depth + 1, &b))
			return false;
		*out = e->name[1] == 'i' ? (a < b ? a : b) : (a > b ? a : b);
		return true;
	}
	if (is_call(e, "cdiv", 2) || is_call(e, "ceildiv", 2)) {
		if (!eval_int_at(e->args[0], look, env, depth + 1, &a) ||
		    !eval_int_at(e->args[1], look, env, depth + 1, &b) || b <= 0 || a < 0)
			return false;
		*out = a / b + (a % b != 0);
		return true;
	}
	if (is_call(e, "i64", 1))
		return eval_int_at(e->args[0], look, env, depth + 1, out);
	if (is_call(e, "i32", 1) || is_call(e, "u32", 1)) {
		if (!eval_int_at(e->args[0], look, env, depth + 1, &a))
			return false;
		bool fits = e->name[0] == 'i' ? a >= INT32_MIN && a <= INT32_MAX : a >= 0 && a <= UINT32_MAX;
		if (!fits)
			return false;
		*out = a;
		return true;
	}
	return false;
}

bool eval_int_at(const Expr *e, EvalLookup look, const void *env, int depth, long long *out)
{
	long long tmp, a, b;
	if (!out)
		out = &tmp;
	if (!e || depth > EVAL_MAX_DEPTH)
		return false;
	switch (e->kind) {
	case E_INT:
		*out = e->ival;
		return true;
	case E_IDENT:
		return e->name && look && look(env, e, depth, out);
	case E_UNARY:
		return eval_int_at(e->lhs, look, env, depth + 1, &a) && eval_unop(e->op, a, out);
	case E_BINARY:
		if (!eval_int_at(e->lhs, look, env, depth + 1, &a))
			return false;
		if ((e->op == OP_AND && !a) || (e->op == OP_OR && a)) {
			*out = e->op == OP_OR;
			return true;
		}
		return eval_int_at(e->rhs, look, env, depth + 1, &b) && eval_binop(e->op, a, b, out);
	case E_CALL:
		return eval_call(e, look, env, depth, out);
	default:
		return false;
	}
}

bool eval_int(const Expr *e, EvalLookup look, const void *env, long long *out)
{
	return eval_int_at(e, look, env, 0, out);
}
