/*
 * cond.c — the clauses of `cake library --domain FILE`: integer conditions over
 * a family's shape variables (gemm: M N K; kmeans: B N D K F16).
 *
 * The file holds clauses separated by newlines or commas; `#` starts a
 * comment. A clause is an integer expression, true when non-zero:
 *   literals, the family's variables, ( ), unary - and !, * / %, + -,
 *   < <= > >= == !=, && ||
 * with C's precedence and meaning. `/` and `%` take only a positive literal
 * on the right (no division by zero can be written), and literals stay below
 * 2^53, so the same text means the same thing evaluated here (64-bit, checked:
 * an overflow makes the clause false) and compiled into the generated library
 * (where each clause is printed back fully parenthesised over long long).
 *
 * The clauses narrow the family's declared domain: the library refuses a shape
 * any clause rejects (CAKE_*_E_SHAPE, naming the clause), and `cake library
 * --explain` with the same --domain says so too.
 */
#include "lib.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { C_INT, C_VAR, C_NEG, C_NOT, C_BIN };

struct LibCondNode {
	int kind;
	int op;                 /* C_BIN: one of the OP_ codes below */
	long long val;          /* C_INT */
	int var;                /* C_VAR */
	LibCondNode *a, *b;
};

enum { LOP_MUL = 1, LOP_DIV, LOP_MOD, LOP_ADD, LOP_SUB, LOP_LT, LOP_LE, LOP_GT, LOP_GE, LOP_EQ, LOP_NE, LOP_AND, LOP_OR };

static const char *const op_text[] = {"", "*", "/", "%", "+", "-", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};

typedef struct Parser {
	const char *s;          /* current position in the clause */
	const char *const *vars;
	int nvars;
	char *err;
	size_t errlen;
	bool failed;
} Parser;

static void perr(Parser *p, const char *msg)
{
	if (!p->failed)
		snprintf(p->err, p->errlen, "%s at '%.20s'", msg, *p->s ? p->s : "end of clause");
	p->failed = true;
}

static void skip(Parser *p)
{
	while (*p->s == ' ' || *p->s == '\t')
		p->s++;
}

static bool eat(Parser *p, const char *tok)
{
	skip(p);
	size_t n = strlen(tok);
	if (strncmp(p->s, tok, n))
		return false;
	/* "<" must not eat the first half of "<=", "&" alone is not an operator, ... */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && p->s[1] == '=')
		return false;
	p->s += n;
	return true;
}

static LibCondNode *node(int kind, int op, LibCondNode *a, LibCondNode *b)
{
	LibCondNode *n = xcalloc(1, sizeof *n);
	n->kind = kind;
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static LibCondNode *parse_or(Parser *p);

static LibCondNode *parse_primary(Parser *p)
{
	skip(p);
	if (eat(p, "(")) {
		LibCondNode *n = parse_or(p);
		if (!eat(p, ")"))
			perr(p, "expected ')'");
		return n;
	}
	if (eat(p, "-"))
		return node(C_NEG, 0, parse_primary(p), NULL);
	if (eat(p, "!"))
		return node(C_NOT, 0, parse_primary(p), NULL);
	if (isdigit((unsigned char)*p->s)) {
		long long v = 0;
		while (isdigit((unsigned char)*p->s)) {
			if (v > (1ll << 53) / 10) {
				perr(p, "literal too large (at most 2^53)");
				return node(C_INT, 0, NULL, NULL);
			}
			v = v * 10 + (*p->s++ - '0');
		}
		LibCondNode *n = node(C_INT, 0, NULL, NULL);
		n->val = v;
		return n;
	}
	if (isalpha((unsigned char)*p->s) || *p->s == '_') {
		const char *b = p->s;
		while (isalnum((unsigned char)*p->s) || *p->s == '_')
			p->s++;
		size_t n = (size_t)(p->s - b);
		for (int i = 0; i < p->nvars; i++)
			if (strlen(p->vars[i]) == n && !strncmp(p->vars[i], b, n)) {
				LibCondNode *v = node(C_VAR, 0, NULL, NULL);
				v->var = i;
				return v;
			}
		p->s = b;
		perr(p, "unknown variable");
		return node(C_INT, 0, NULL, NULL);
	}
	perr(p, "expected a number, a variable or '('");
	return node(C_INT, 0, NULL, NULL);
}

static LibCondNode *parse_mul(Parser *p)
{
	LibCondNode *l = parse_primary(p);
	for (;;) {
		int op = eat(p, "*") ? LOP_MUL : eat(p, "/") ? LOP_DIV : eat(p, "%") ? LOP_MOD : 0;
		if (!op)
			return l;
		LibCondNode *r = parse_primary(p);
		if ((op == LOP_DIV || op == LOP_MOD) && (r->kind != C_INT || r->val <= 0))
			perr(p, "'/' and '%' need a positive number on the right");
		l = node(C_BIN, op, l, r);
	}
}

static LibCondNode *parse_add(Parser *p)
{
	LibCondNode *l = parse_mul(p);
	for (;;) {
		int op = eat(p, "+") ? LOP_ADD : eat(p, "-") ? LOP_SUB : 0;
		if (!op)
			return l;
		l = node(C_BIN, op, l, parse_mul(p));
	}
}

static LibCondNode *parse_cmp(Parser *p)
{
	LibCondNode *l = parse_add(p);
	for (;;) {
		int op = eat(p, "<=") ? LOP_LE : eat(p, ">=") ? LOP_GE : eat(p, "==") ? LOP_EQ : eat(p, "!=") ? LOP_NE
		       : eat(p, "<") ? LOP_LT : eat(p, ">") ? LOP_GT : 0;
		if (!op)
			return l;
		l = node(C_BIN, op, l, parse_add(p));
	}
}

static LibCondNode *parse_and(Parser *p)
{
	LibCondNode *l = parse_cmp(p);
	while (eat(p, "&&"))
		l = node(C_BIN, LOP_AND, l, parse_cmp(p));
	return l;
}

static LibCondNode *parse_or(Parser *p)
{
	LibCondNode *l = parse_and(p);
	while (eat(p, "||"))
		l = node(C_BIN, LOP_OR, l, parse_and(p));
	return l;
}

static void node_free(LibCondNode *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	free(n);
}

/* Checked 64-bit evaluation; false on overflow. */
static bool eval(const LibCondNode *n, const long long *v, long long *out)
{
	long long a = 0, b = 0;
	switch (n->kind) {
	case C_INT: *out = n->val; return true;
	case C_VAR: *out = v[n->var]; return true;
	case C_NEG: if (!eval(n->a, v, &a) || a == (-9223372036854775807ll - 1)) return false; *out = -a; return true;
	case C_NOT: if (!eval(n->a, v, &a)) return false; *out = !a; return true;
	default: break;
	}
	if (!eval(n->a, v, &a))
		return false;
	if (n->op == LOP_AND && !a) { *out = 0; return true; }
	if (n->op == LOP_OR && a) { *out = 1; return true; }
	if (!eval(n->b, v, &b))
		return false;
	switch (n->op) {
	case LOP_MUL: return !__builtin_mul_overflow(a, b, out);
	case LOP_DIV: *out = a / b; return true;
	case LOP_MOD: *out = a % b; return true;
	case LOP_ADD: return !__builtin_add_overflow(a, b, out);
	case LOP_SUB: return !__builtin_sub_overflow(a, b, out);
	case LOP_LT: *out = a < b; return true;
	case LOP_LE: *out = a <= b; return true;
	case LOP_GT: *out = a > b; return true;
	case LOP_GE: *out = a >= b; return true;
	case LOP_EQ: *out = a == b; return true;
	case LOP_NE: *out = a != b; return true;
	case LOP_AND: case LOP_OR: *out = b != 0; return true;
	default: return false;
	}
}

/* C text of n over long long with the evaluator's overflow rule: lc_add/lc_sub/lc_mul/lc_neg
 * clear *ok on overflow (the clause is then false, as here). */
static void emit(StrBuf *o, const LibCondNode *n, const char *const *vars)
{
	static const char *const fn[] = {[LOP_MUL] = "lc_mul", [LOP_ADD] = "lc_add", [LOP_SUB] = "lc_sub"};
	switch (n->kind) {
	case C_INT: sb_printf(o, "%lldLL", n->val); return;
	case C_VAR: sb_puts(o, vars[n->var]); return;
	case C_NEG: sb_puts(o, "lc_neg(ok, "); emit(o, n->a, vars); sb_putc(o, ')'); return;
	case C_NOT: sb_puts(o, "(long long)(!"); emit(o, n->a, vars); sb_putc(o, ')'); return;
	default:
		if (n->op == LOP_MUL || n->op == LOP_ADD || n->op == LOP_SUB) {
			sb_printf(o, "%s(ok, ", fn[n->op]);
			emit(o, n->a, vars);
			sb_puts(o, ", ");
			emit(o, n->b, vars);
			sb_putc(o, ')');
			return;
		}
		sb_puts(o, "(long long)(");
		emit(o, n->a, vars);
		sb_printf(o, " %s ", op_text[n->op]);
		emit(o, n->b, vars);
		sb_putc(o, ')');
	}
}

bool lib_conds_parse(LibConds *c, const char *text, const char *const *vars, int nvars, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->vars = vars;
	c->nvars = nvars;
	int line = 1;
	const char *s = text;
	while (*s) {
		/* one clause: up to a comma, newline or comment at depth 0 */
		const char *b = s, *e = s;
		int depth = 0;
		while (*e && *e != '\n' && *e != '#' && !(*e == ',' && depth == 0)) {
			depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
			e++;
		}
		while (b < e && (*b == ' ' || *b == '\t' || *b == '\r'))
			b++;
		const char *t = e;
		while (t > b && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
			t--;
		if (t > b) {
			if (c->n == LIB_MAX_CONDS) {
				snprintf(err, errlen, "line %d: more than %d clauses", line, LIB_MAX_CONDS);
				lib_conds_free(c);
				return false;
			}
			char *txt = xmalloc((size_t)(t - b) + 1);
			memcpy(txt, b, (size_t)(t - b));
			txt[t - b] = 0;
			char msg[256] = "";
			Parser p = {txt, vars, nvars, msg, sizeof msg, false};
			LibCondNode *n = parse_or(&p);
			skip(&p);
			if (!p.failed && *p.s)
				perr(&p, "unexpected text");
			if (p.failed) {
				snprintf(err, errlen, "line %d: '%s': %s", line, txt, msg);
				node_free(n);
				free(txt);
				lib_conds_free(c);
				return false;
			}
			c->text[c->n] = txt;
			c->root[c->n] = n;
			c->n++;
		}
		if (*e == '#')
			while (*e && *e != '\n')
				e++;
		if (*e == '\n')
			line++;
		s = *e ? e + 1 : e;
	}
	return true;
}

void lib_conds_free(LibConds *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->text[i]);
		node_free(c->root[i]);
	}
	c->n = 0;
}

bool lib_conds_eval(const LibConds *c, const long long *v, const char **failed)
{
	for (int i = 0; c && i < c->n; i++) {
		long long r = 0;
		if (!eval(c->root[i], v, &r) || !r) {
			if (failed)
				*failed = c->text[i];
			return false;
		}
	}
	return true;
}

void lib_conds_emit_c(StrBuf *o, const LibConds *c, const char *const *vars, int nvars)
{
	if (c && c->n)
		sb_puts(o, "/* checked arithmetic of the --domain clauses: an overflow makes the clause false */\n"
		        "static long long lc_add(int *ok, long long a, long long b) { long long r; if (__builtin_add_overflow(a, b, &r)) *ok = 0; return r; }\n"
		        "static long long lc_sub(int *ok, long long a, long long b) { long long r; if (__builtin_sub_overflow(a, b, &r)) *ok = 0; return r; }\n"
		        "static long long lc_mul(int *ok, long long a, long long b) { long long r; if (__builtin_mul_overflow(a, b, &r)) *ok = 0; return r; }\n"
		        "static long long lc_neg(int *ok, long long a) { if (a == -9223372036854775807LL - 1) { *ok = 0; return 0; } return -a; }\n\n");
	sb_puts(o, "/* The clauses of --domain FILE (none: always true). */\n"
	        "static int lib_user_domain(const void *lx, const long long *v, const char **failed)\n{\n\t(void)lx;\n");
	for (int i = 0; i < nvars; i++)
		sb_printf(o, "\tconst long long %s = v[%d];\n\t(void)%s;\n", vars[i], i, vars[i]);
	for (int i = 0; c && i < c->n; i++) {
		sb_puts(o, "\t{\n\t\tint okv = 1, *ok = &okv;\n\t\tlong long r = ");
		emit(o, c->root[i], vars);
		sb_puts(o, ";\n\t\tif (!okv || !r) {\n\t\t\t*failed = ");
		lib_c_string(o, c->text[i]);
		sb_puts(o, ";\n\t\t\treturn 0;\n\t\t}\n\t\t(void)ok;\n\t}\n");
	}
	sb_puts(o, "\t*failed = 0;\n\treturn 1;\n}\n\n");
}
