/*
 * eval.c — scalar expressions over bound dims, and their C spelling.
 *
 * The lowering keeps every size that depends on the problem shape symbolic:
 * grid extents, tensor-map extents and strides and loop bounds are Expr
 * trees over the kernel's dims (M, N, K) and consts. The runner binds the
 * dims at launch and needs the numbers, so eval_expr() folds such a tree with
 * the one evaluator of front/eval.c (checked 64-bit arithmetic: any overflow,
 * division by zero or name it cannot bind makes it fail rather than return a
 * wrong value); what is local here is only how names get values (dims from
 * dimvals, consts from their declarations). eval_domain() checks the
 * kernel's `domain` constraints the same way before a launch.
 *
 * lower_expr_c() is the other direction: the C text the emitter writes for a
 * scalar expression inside the generated kernel, where dims are kernel
 * arguments, grid variables and loop variables are locals and consts are
 * inlined as their folded value.
 */
#include "lower.h"
#include "../front/eval.h"

#include <stdlib.h>
#include <string.h>

/* Find a declaration of kind `kind` named `name` among k's declarations. */
static const Decl *find_decl(const Kernel *k, DeclKind kind, const char *name)
{
	for (int i = 0; i < k->ndecls; i++) {
		const Decl *d = k->decls[i];
		if (d->kind == kind && d->name && strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

static int dim_index(const Kernel *k, const char *name)
{
	for (int i = 0; i < k->ndims; i++)
		if (k->dims[i] && strcmp(k->dims[i], name) == 0)
			return i;
	return -1;
}

/* The lowering's names: a dim (bound only when dimvals are given), then a
 * const's value, then sema's folded value of the identifier. */
typedef struct Scope {
	const Kernel *k;
	const long long *dv;
} Scope;

static bool scope_lookup(const void *sc, const Expr *id, int depth, long long *out)
{
	const Scope *s = sc;
	int di = dim_index(s->k, id->name);
	if (di >= 0) {
		if (!s->dv)
			return false;
		*out = s->dv[di];
		return true;
	}
	const Decl *d = find_decl(s->k, D_CONST, id->name);
	if (d)
		return eval_int_at(d->value, scope_lookup, s, depth + 1, out);
	if (id->is_const) {
		*out = id->cval;
		return true;
	}
	return false;
}

bool eval_expr(const Expr *e, const Kernel *k, const long long *dimvals, long long *out)
{
	Scope sc = {k, dimvals};
	long long v;
	if (!eval_int(e, scope_lookup, &sc, &v))
		return false;
	*out = v;
	return true;
}

/* C precedence of a binary operator (higher binds tighter). */
static int c_prec(int op)
{
	switch (op) {
	case OP_OR: return 1;
	case OP_AND: return 2;
	case OP_EQ: case OP_NE: return 3;
	case '<': case '>': case OP_LE: case OP_GE: return 4;
	case OP_SHL: case OP_SHR: return 5;
	case '+': case '-': return 6;
	case '*': case '/': case '%': return 7;
	default: return 0;
	}
}

/* Print e in a context that binds with strength `ctx`: parenthesise when e
 * binds more loosely. Right operands pass ctx + 1 (left-associative ops). */
static void expr_c(StrBuf *out, const Expr *e, const Kernel *k, int ctx)
{
	long long v;
	if (!e) {
		sb_puts(out, "0");
		return;
	}
	switch (e->kind) {
	case E_INT:
		sb_printf(out, "%lld", e->ival);
		return;
	case E_FLOAT: {
		char buf[64];
		snprintf(buf, sizeof buf, "%.9g", e->fval);
		sb_puts(out, buf);
		if (!strpbrk(buf, ".eEni"))
			sb_puts(out, ".0");   /* "2" -> "2.0f": a valid float literal */
		sb_putc(out, 'f');
		return;
	}
	case E_INF:
		sb_puts(out, "__int_as_float(0x7f800000)");
		return;
	case E_IDENT:
		if (dim_index(k, e->name) < 0 && find_decl(k, D_CONST, e->name) && eval_expr(e, k, NULL, &v)) {
			sb_printf(out, "%lld", v);
			return;
		}
		sb_puts(out, e->name);
		return;
	case E_UNARY:
		sb_puts(out, op_spelling(e->op));
		expr_c(out, e->lhs, k, 8);
		return;
	case E_BINARY: {
		if (e->op != OP_EQ && e->op != OP_NE && c_prec(e->op) > 3 && eval_expr(e, k, NULL, &v)) {
			sb_printf(out, "%lld", v);
			return;
		}
		int pr = c_prec(e->op);
		bool paren = pr < ctx;
		if (paren)
			sb_putc(out, '(');
		expr_c(out, e->lhs, k, pr);
		sb_printf(out, " %s ", op_spelling(e->op));
		expr_c(out, e->rhs, k, pr + 1);
		if (paren)
			sb_putc(out, ')');
		return;
	}
	case E_CALL: {
		StrBuf a[2] = {{0}, {0}};
		const char *args[2] = {"", ""};
		for (int i = 0; i < e->nargs && i < 2; i++) {
			expr_c(&a[i], e->args[i], k, 0);
			args[i] = sb_str(&a[i]);
		}
		if (!lower_call_spell(out, e, args))
			sb_printf(out, "/* unsupported call %s */ 0", e->name ? e->name : "?");
		sb_free(&a[0]);
		sb_free(&a[1]);
		return;
	}
	default:
		sb_puts(out, "/* unsupported expression */ 0");
		return;
	}
}

bool lower_scalar_call_ok(const Expr *e)
{
	static const char *const ok[] = {"min", "max", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "softplus", "abs",
	                                 "tanh", "silu", "f32", "bf16", "f16", "i32", "u32", "i64", "bool"};
	for (size_t i = 0; e && e->kind == E_CALL && e->name && i < NELEM(ok); i++)
		if (strcmp(e->name, ok[i]) == 0)
			return e->nargs == (i < 2 ? 2 : 1);
	return false;
}

bool lower_call_spell(StrBuf *out, const Expr *e, const char *const *a)
{
	if (!lower_scalar_call_ok(e))
		return false;
	const char *n = e->name;
	bool flt = e->type.dt == DT_F32 || e->type.dt == DT_BF16 || e->type.dt == DT_F16 || e->type.dt == DT_NONE;
	static const struct { const char *ir, *c; } un[] = {
		{"exp2", "exp2f"}, {"log", "logf"}, {"log2", "log2f"}, {"sqrt", "sqrtf"}, {"rsqrt", "rsqrtf"}, {"tanh", "tanhf"},
	};
	if (!strcmp(n, "exp")) {   /* ex2.approx.ftz on x log2(e) (MUFU): see LANGUAGE.md on its precision */
		sb_printf(out, "cake_exp(%s)", a[0]);
		return true;
	}
	for (size_t i = 0; i < NELEM(un); i++)
		if (strcmp(n, un[i].ir) == 0) {
			sb_printf(out, "%s(%s)", un[i].c, a[0]);
			return true;
		}
	if ((!strcmp(n, "min") || !strcmp(n, "max")) && flt && e->type.dt != DT_NONE)
		sb_printf(out, "%s(%s, %s)", n[1] == 'i' ? "fminf" : "fmaxf", a[0], a[1]);
	else if (!strcmp(n, "min") || !strcmp(n, "max"))   /* integers of mixed widths (int and a 64-bit let): no overload to pick */
		sb_printf(out, "((%s) %s (%s) ? (%s) : (%s))", a[0], n[1] == 'i' ? "<" : ">", a[1], a[0], a[1]);
	else if (!strcmp(n, "abs"))
		sb_printf(out, "%s(%s)", flt ? "fabsf" : "abs", a[0]);
	else if (!strcmp(n, "sigmoid"))
		sb_printf(out, "__fdividef(1.0f, 1.0f + cake_exp(-(%s)))", a[0]);
	else if (!strcmp(n, "silu"))
		sb_printf(out, "__fdividef((%s), 1.0f + cake_exp(-(%s)))", a[0], a[0]);
	else if (!strcmp(n, "softplus"))   /* torch's threshold: x above 20 is its own softplus */
		sb_printf(out, "((%s) > 20.0f ? (%s) : log1pf(cake_exp(%s)))", a[0], a[0], a[0]);
	else if (!strcmp(n, "bf16") || !strcmp(n, "f16"))
		sb_printf(out, "%s((float)(%s))", n[0] == 'b' ? "round_bf16" : "round_f16", a[0]);
	else
		sb_printf(out, "((%s)(%s))", !strcmp(n, "f32") ? "float" : !strcmp(n, "i32") ? "int" : !strcmp(n, "u32") ? "u32" :
		                             !strcmp(n, "i64") ? "long long" : "bool", a[0]);
	return true;
}

void lower_expr_c(StrBuf *out, const Expr *e, const Kernel *k)
{
	expr_c(out, e, k, 0);
}

/* Source-like text of a domain constraint (for messages), malloc'd. */
static char *constraint_text(const Expr *e, const Kernel *k)
{
	StrBuf b = {0};
	lower_expr_c(&b, e, k);
	char *r = xstrdup(sb_str(&b));
	sb_free(&b);
	return r;
}

bool eval_domain(const Kernel *k, const long long *dimvals, const char **failed_constraint)
{
	if (failed_constraint)
		*failed_constraint = NULL;
	for (int i = 0; i < k->ndecls; i++) {
		const Decl *d = k->decls[i];
		if (d->kind != D_DOMAIN)
			continue;
		for (int j = 0; j < d->nexprs; j++) {
			long long v = 0;
			if (eval_expr(d->exprs[j], k, dimvals, &v) && v != 0)
				continue;
			if (failed_constraint)
				*failed_constraint = constraint_text(d->exprs[j], k);
			return false;
		}
	}
	return true;
}
