/*
 * parse.c — recursive-descent parser for Cake IR.
 *
 * The grammar (docs/grammar.ebnf, normative) is LL(2): every declaration and
 * statement starts with a keyword, except a fragment assignment, which starts
 * with a name followed by '=' or ','. Newlines carry no meaning, so the only
 * place the parser needs two tokens of lookahead is `sync [ROLE]` (a name
 * after `sync` belongs to it unless '=' or ',' follows) and `grid persistent`.
 * Tokens are pulled from the incremental lexer through a 4-slot lookahead
 * buffer; nothing holds the whole token stream.
 *
 * Expressions use precedence climbing over the levels of the contract
 * (|| < && < comparisons < shifts < + - < * / % < unary < postfix). All binary
 * operators are left-associative. The matmul '@' is not a general operator:
 * it only appears between the two operands of wgmma/mma.
 *
 * Errors and recovery. Every finding is a CK-SYN diagnostic with a message
 * of the form "expected X <context>, found Y" and a hint. After an error the
 * parser is in panic mode: further errors are suppressed until it resyncs at
 * the next statement or declaration keyword (skipping a balanced {...} block
 * on the way, so a broken statement's body does not close the enclosing
 * block) or a closing brace, and then continues, so independent mistakes are
 * all reported. At most one error is reported per source position (a
 * truncated file gives one "found end of file", not one per open construct).
 * After PARSE_MAX_ERRORS errors it stops with one note.
 *
 * Depth. One counter tracks syntactic nesting (blocks, else-if chains,
 * parentheses, brackets, call arguments, unary operators). Past c->max_depth
 * the parser reports "nesting deeper than N levels" once and skips the
 * offending group with a counting loop instead of recursing. Independently,
 * each Expr records its subtree height and a binary chain that would grow
 * past the limit is cut with the same error, so every later recursive pass
 * over the tree (sema, printer, verifier) has bounded depth.
 */
#include "front.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PARSE_MAX_ERRORS 50

typedef struct Parser {
	Ctx *c;
	Arena *a;
	int file;
	Lexer lx;
	Token la[4];
	int nla;
	Token eof;            /* returned by peek once parsing was abandoned */
	Span prev;            /* span of the last consumed token */
	long ntok;            /* tokens consumed so far (progress check) */
	int depth, maxdepth;
	bool depth_reported;
	bool panic;           /* an error was reported; suppress until resync */
	int nerr;
	bool stopped;         /* error cap reached */
	Vec roles;            /* role names declared by the current kernel (for `sync`) */
	int unterminated_off; /* offset where an unterminated block was reported, or -1 */
	int last_err_off;     /* offset of the last reported error, or -1 */
} Parser;

/* ---- token access ---- */

static Token *peek(Parser *p, int k)
{
	if (p->stopped)
		return &p->eof;
	while (p->nla <= k)
		p->la[p->nla++] = lex_next(&p->lx);
	return &p->la[k];
}

static Token advance(Parser *p)
{
	Token t = *peek(p, 0);
	if (t.kind == T_EOF || p->stopped)
		return t;
	memmove(&p->la[0], &p->la[1], sizeof(Token) * (size_t)(p->nla - 1));
	p->nla--;
	p->prev = t.span;
	p->ntok++;
	return t;
}

static bool at(Parser *p, TokKind k)
{
	return peek(p, 0)->kind == k;
}

static bool tok_is(const Token *t, const char *kw)
{
	return t->kind == T_IDENT && (size_t)t->n == strlen(kw) && memcmp(t->p, kw, (size_t)t->n) == 0;
}

static bool at_kw(Parser *p, const char *kw)
{
	return tok_is(peek(p, 0), kw);
}

static const char *const decl_leaders[] = {
	"param", "const", "domain", "grid", "cluster", "role", "pipeline", "smem", "barrier", "frag",
};

static const char *const stmt_leaders[] = {
	"in", "for", "if", "else", "wait", "arrive", "tma", "cp_async", "wgmma", "wgmma_wait", "mma",
	"load", "store", "atomic_add", "fence", "sync", "let",
};

static bool is_decl_leader(const Token *t)
{
	for (size_t i = 0; i < NELEM(decl_leaders); i++)
		if (tok_is(t, decl_leaders[i]))
			return true;
	return false;
}

static bool is_stmt_leader(const Token *t)
{
	for (size_t i = 0; i < NELEM(stmt_leaders); i++)
		if (tok_is(t, stmt_leaders[i]))
			return true;
	return false;
}

/* Reserved words: cannot name anything. */
static bool is_reserved(const Token *t)
{
	return tok_is(t, "kernel") || tok_is(t, "target") || is_decl_leader(t) || is_stmt_leader(t);
}

/* Human description of a token for "found ..." ("identifier 'x'"). */
static const char *tok_desc(Parser *p, const Token *t)
{
	int n = t->n > 32 ? 32 : t->n;
	const char *more = t->n > 32 ? "..." : "";
	switch (t->kind) {
	case T_EOF: return "end of file";
	case T_IDENT:
		if (is_reserved(t))
			return arena_printf(p->a, "keyword '%.*s'", n, t->p);
		return arena_printf(p->a, "identifier '%.*s%s'", n, t->p, more);
	case T_INT: return arena_printf(p->a, "integer '%.*s%s'", n, t->p, more);
	case T_FLOAT: return arena_printf(p->a, "number '%.*s%s'", n, t->p, more);
	default: return tok_name(t->kind);
	}
}

static char *tok_str(Parser *p, const Token *t)
{
	return arena_strndup(p->a, t->p, (size_t)t->n);
}

/* ---- diagnostics ---- */

/* Report a syntax error unless in panic mode; returns the Diag or NULL. */
static Diag *perr(Parser *p, const char *rule, Span sp, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static Diag *perr(Parser *p, const char *rule, Span sp, const char *hint, const char *fmt, ...)
{
	if (p->panic || p->stopped)
		return NULL;
	p->panic = true;
	if (sp.off == p->last_err_off) /* one error per source position (e.g. EOF) */
		return NULL;
	p->last_err_off = sp.off;
	if (p->nerr >= PARSE_MAX_ERRORS) {
		Diag *d = diag_add(p->c->diags, "CK-SYN-011", SEV_NOTE, sp,
		                   "too many syntax errors (%d); parsing stopped", PARSE_MAX_ERRORS);
		diag_set(&d->hint, "fix the errors above and run again");
		p->stopped = true;
		p->eof.span = sp;
		return NULL;
	}
	p->nerr++;
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	Diag *d = diag_add(p->c->diags, rule, SEV_ERROR, sp, "%s", buf);
	if (hint)
		diag_set(&d->hint, "%s", hint);
	return d;
}

/* "expected WHAT CONTEXT, found TOKEN" at the current token. */
static Diag *expected(Parser *p, const char *what, const char *context, const char *hint)
{
	Token *t = peek(p, 0);
	return perr(p, "CK-SYN-001", t->span, hint, "expected %s%s%s, found %s", what,
	            context && *context ? " " : "", context ? context : "", tok_desc(p, t));
}

static bool expect(Parser *p, TokKind k, const char *context, const char *hint)
{
	if (at(p, k)) {
		advance(p);
		return true;
	}
	expected(p, tok_name(k), context, hint);
	return false;
}

static bool expect_kw(Parser *p, const char *kw, const char *context, const char *hint)
{
	if (at_kw(p, kw)) {
		advance(p);
		return true;
	}
	char what[64];
	snprintf(what, sizeof what, "'%s'", kw);
	expected(p, what, context, hint);
	return false;
}

/* A user-chosen name (of kind `what`, e.g. "barrier"); NULL on error. */
static const char *expect_name(Parser *p, const char *what, const char *context, Span *sp)
{
	Token *t = peek(p, 0);
	if (t->kind == T_IDENT && !is_reserved(t) && !tok_is(t, "inf")) {
		Token tk = advance(p);
		if (sp)
			*sp = tk.span;
		return tok_str(p, &tk);
	}
	if (sp)
		*sp = t->span;
	if (t->kind == T_IDENT && !p->panic) {
		char hint[128];
		snprintf(hint, sizeof hint, "pick another name, e.g. '%.*s_'", t->n > 40 ? 40 : t->n, t->p);
		if (tok_is(t, "inf"))
			perr(p, "CK-SYN-005", t->span, hint,
			     "'inf' is the infinity literal and cannot be used as a %s name", what);
		else
			perr(p, "CK-SYN-005", t->span, hint,
			     "'%.*s' is a reserved keyword and cannot be used as a %s name", t->n, t->p, what);
		return NULL;
	}
	char w[64];
	snprintf(w, sizeof w, "%s name", what);
	expected(p, w, context, NULL);
	return NULL;
}

/* A role, pipeline, barrier or kernel name: these only ever follow a
 * keyword, so any identifier is accepted (the contract's own example names
 * its roles `load` and `mma`). NULL on error. */
static const char *expect_any_name(Parser *p, const char *what, const char *context, Span *sp)
{
	Token *t = peek(p, 0);
	if (t->kind == T_IDENT) {
		Token tk = advance(p);
		if (sp)
			*sp = tk.span;
		return tok_str(p, &tk);
	}
	if (sp)
		*sp = t->span;
	char w[64];
	snprintf(w, sizeof w, "%s name", what);
	expected(p, w, context, NULL);
	return NULL;
}

/* An integer literal in [lo, hi] (counts, warp numbers); -1 on error. */
static int expect_int(Parser *p, const char *what, const char *context, long long lo, long long hi)
{
	Token *t = peek(p, 0);
	if (t->kind != T_INT) {
		char w[96];
		snprintf(w, sizeof w, "an integer %s", what);
		expected(p, w, context, "write a plain integer literal here");
		return -1;
	}
	Token tk = advance(p);
	if (tk.ival < lo || tk.ival > hi) {
		perr(p, "CK-SYN-007", tk.span, "use a value in the allowed range",
		     "%s %lld is out of range (%lld..%lld)", what, tk.ival, lo, hi);
		return -1;
	}
	return (int)tk.ival;
}

static void too_deep(Parser *p, Span sp)
{
	if (p->depth_reported)
		return;
	p->depth_reported = true;
	p->panic = false; /* always reported, even inside another error */
	perr(p, "CK-SYN-003", sp, "flatten the nesting: bind parts to 'let' names or split the block",
	     "nesting deeper than %d levels", p->maxdepth);
	p->panic = true;
}

/* ---- recovery ---- */

/* Consume a balanced group starting at the current opening token ( [ { with
 * a counter (no recursion). Stops at EOF. */
static void skip_balanced(Parser *p)
{
	long d = 0;
	do {
		Token *t = peek(p, 0);
		if (t->kind == T_EOF)
			return;
		if (t->kind == T_LPAREN || t->kind == T_LBRACK || t->kind == T_LBRACE)
			d++;
		else if (t->kind == T_RPAREN || t->kind == T_RBRACK || t->kind == T_RBRACE)
			d--;
		advance(p);
	} while (d > 0);
}

/* Is the current token a place where a statement can start again? */
static bool stmt_sync_point(Parser *p)
{
	Token *t = peek(p, 0);
	if (t->kind == T_RBRACE || t->kind == T_EOF || tok_is(t, "kernel"))
		return true;
	if (tok_is(t, "else"))
		return false;
	if (tok_is(t, "in")) /* `in ROLE {`, not the `in` of `for k in` */
		return peek(p, 1)->kind == T_IDENT && peek(p, 2)->kind == T_LBRACE;
	return is_stmt_leader(t);
}

static void sync_stmt(Parser *p)
{
	while (!stmt_sync_point(p)) {
		if (at(p, T_LBRACE))
			skip_balanced(p);
		else
			advance(p);
	}
	p->panic = false;
}

static void sync_decl(Parser *p)
{
	for (;;) {
		Token *t = peek(p, 0);
		if (t->kind == T_EOF || t->kind == T_LBRACE || tok_is(t, "kernel") || is_decl_leader(t))
			break;
		advance(p);
	}
	p->panic = false;
}

/* ---- expressions ---- */

static Expr *new_expr(Parser *p, ExprKind k, Span sp)
{
	Expr *e = arena_alloc(p->a, sizeof *e);
	e->kind = k;
	e->span = sp;
	e->height = 1;
	return e;
}

/* Placeholder for a missing operand, so callers never see NULL. */
static Expr *error_expr(Parser *p, Span sp)
{
	Expr *e = new_expr(p, E_INT, sp);
	e->ival = 0;
	return e;
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

/* Set e's height from its children; false (and reported) if over the limit. */
static bool check_height(Parser *p, Expr *e, int child_height)
{
	e->height = child_height + 1;
	if (e->height > p->maxdepth) {
		too_deep(p, e->span);
		return false;
	}
	return true;
}

static Expr *parse_expr(Parser *p);

static int binop(TokKind k, int *op)
{
	switch (k) {
	case T_OROR: *op = OP_OR; return 1;
	case T_ANDAND: *op = OP_AND; return 2;
	case T_EQ: *op = OP_EQ; return 3;
	case T_NE: *op = OP_NE; return 3;
	case T_LT: *op = '<'; return 3;
	case T_LE: *op = OP_LE; return 3;
	case T_GT: *op = '>'; return 3;
	case T_GE: *op = OP_GE; return 3;
	case T_SHL: *op = OP_SHL; return 4;
	case T_SHR: *op = OP_SHR; return 4;
	case T_PLUS: *op = '+'; return 5;
	case T_MINUS: *op = '-'; return 5;
	case T_STAR: *op = '*'; return 6;
	case T_SLASH: *op = '/'; return 6;
	case T_PERCENT: *op = '%'; return 6;
	default: return 0;
	}
}

static bool enter(Parser *p, Span sp)
{
	if (p->depth >= p->maxdepth) {
		too_deep(p, sp);
		return false;
	}
	p->depth++;
	return true;
}

static void leave(Parser *p)
{
	p->depth--;
}

/* expr { "," expr } into a frozen array. */
static Expr **parse_expr_list(Parser *p, int *n)
{
	Vec v = {0};
	do {
		vec_push(&v, parse_expr(p));
	} while (at(p, T_COMMA) && (advance(p), true));
	*n = v.len;
	return (Expr **)vec_freeze(&v, p->a);
}

static Expr *parse_primary(Parser *p)
{
	Token *t = peek(p, 0);
	switch (t->kind) {
	case T_INT: {
		Token tk = advance(p);
		Expr *e = new_expr(p, E_INT, tk.span);
		e->ival = tk.ival;
		return e;
	}
	case T_FLOAT: {
		Token tk = advance(p);
		Expr *e = new_expr(p, E_FLOAT, tk.span);
		e->fval = tk.fval;
		return e;
	}
	case T_LPAREN: {
		Span open = t->span;
		if (!enter(p, open)) {
			skip_balanced(p);
			return error_expr(p, open);
		}
		advance(p);
		Expr *e = parse_expr(p);
		if (!at(p, T_RPAREN)) {
			Diag *d = expected(p, "')'", "to close '('", "add the missing ')'");
			if (d)
				diag_related(d, open, "'(' opened here");
		} else {
			advance(p);
		}
		leave(p);
		return e;
	}
	case T_IDENT:
		break;
	default:
		expected(p, "an expression", "", "an operand is a number, a name, a call f(x) or (expr)");
		return error_expr(p, t->span);
	}
	if (is_reserved(t)) {
		expected(p, "an expression", "", "a statement keyword cannot start an operand; is an operand missing?");
		return error_expr(p, t->span);
	}
	Token name = advance(p);
	if (tok_is(&name, "inf"))
		return new_expr(p, E_INF, name.span);
	if (!at(p, T_LPAREN)) {
		Expr *e = new_expr(p, E_IDENT, name.span);
		e->name = tok_str(p, &name);
		return e;
	}
	/* call */
	Span open = peek(p, 0)->span;
	Expr *e = new_expr(p, E_CALL, name.span);
	e->name = tok_str(p, &name);
	if (!enter(p, open)) {
		skip_balanced(p);
		return e;
	}
	advance(p);
	int h = 0;
	if (!at(p, T_RPAREN)) {
		e->args = parse_expr_list(p, &e->nargs);
		for (int i = 0; i < e->nargs; i++)
			h = max_i(h, e->args[i]->height);
	}
	if (at(p, T_RPAREN)) {
		advance(p);
	} else {
		char ctx[96];
		snprintf(ctx, sizeof ctx, "after the arguments of '%.40s'", e->name);
		Diag *d = expected(p, "',' or ')'", ctx, "close the call with ')'");
		if (d)
			diag_related(d, open, "'(' opened here");
	}
	leave(p);
	e->span = span_join(name.span, p->prev);
	check_height(p, e, h);
	return e;
}

/* One slice inside [...]: ':' | expr | expr '+:' expr. */
static void parse_slice(Parser *p, Slice *s)
{
	Token *t = peek(p, 0);
	if (t->kind == T_COLON && (peek(p, 1)->kind == T_COMMA || peek(p, 1)->kind == T_RBRACK)) {
		Token tk = advance(p);
		s->kind = SL_ALL;
		s->span = tk.span;
		return;
	}
	s->start = parse_expr(p);
	s->span = s->start->span;
	if (at(p, T_PLUSCOLON)) {
		advance(p);
		s->kind = SL_RANGE;
		s->len = parse_expr(p);
		s->span = span_join(s->start->span, s->len->span);
	} else {
		s->kind = SL_POINT;
	}
}

/* base '[' slice { ',' slice } ']' with the '[' current. */
static Expr *parse_index(Parser *p, Expr *base)
{
	Span open = peek(p, 0)->span;
	if (!enter(p, open)) {
		skip_balanced(p);
		return base;
	}
	advance(p);
	Expr *e = new_expr(p, E_INDEX, base->span);
	e->base = base;
	Slice tmp[16];
	Slice *sl = tmp;
	int n = 0, cap = 16;
	int h = base->height;
	for (;;) {
		if (n == cap) {
			Slice *ns = arena_alloc(p->a, sizeof(Slice) * (size_t)cap * 2);
			memcpy(ns, sl, sizeof(Slice) * (size_t)n);
			sl = ns;
			cap *= 2;
		}
		memset(&sl[n], 0, sizeof sl[n]);
		parse_slice(p, &sl[n]);
		if (sl[n].start)
			h = max_i(h, sl[n].start->height);
		if (sl[n].len)
			h = max_i(h, sl[n].len->height);
		n++;
		if (!at(p, T_COMMA))
			break;
		advance(p);
	}
	e->slices = arena_alloc(p->a, sizeof(Slice) * (size_t)n);
	memcpy(e->slices, sl, sizeof(Slice) * (size_t)n);
	e->nslices = n;
	if (at(p, T_RBRACK)) {
		advance(p);
	} else {
		Diag *d = expected(p, "',' or ']'", "after an index", "close the index with ']'");
		if (d)
			diag_related(d, open, "'[' opened here");
	}
	leave(p);
	e->span = span_join(base->span, p->prev);
	if (!check_height(p, e, h))
		return base;
	return e;
}

/* '^' 'T' with the '^' current; returns the transpose of e. */
static Expr *parse_transpose(Parser *p, Expr *e)
{
	advance(p);
	if (!at_kw(p, "T")) {
		expected(p, "'T'", "after '^'", "the only postfix '^' is the transpose b^T");
		return e;
	}
	advance(p);
	Expr *t = new_expr(p, E_TRANSPOSE, span_join(e->span, p->prev));
	t->lhs = e;
	if (!check_height(p, t, e->height))
		return e;
	return t;
}

static Expr *parse_postfix(Parser *p)
{
	Expr *e = parse_primary(p);
	for (;;) {
		if (at(p, T_LBRACK))
			e = parse_index(p, e);
		else if (at(p, T_CARET))
			e = parse_transpose(p, e);
		else
			return e;
		if (p->panic)
			return e;
	}
}

static Expr *parse_unary(Parser *p)
{
	Token *t = peek(p, 0);
	if (t->kind != T_MINUS && t->kind != T_BANG)
		return parse_postfix(p);
	if (!enter(p, t->span)) {
		while (at(p, T_MINUS) || at(p, T_BANG))
			advance(p);
		return parse_postfix(p);
	}
	Token op = advance(p);
	Expr *x = parse_unary(p);
	leave(p);
	Expr *e = new_expr(p, E_UNARY, span_join(op.span, x->span));
	e->op = op.kind == T_MINUS ? '-' : '!';
	e->lhs = x;
	if (!check_height(p, e, x->height))
		return x;
	return e;
}

static Expr *parse_binary(Parser *p, int minprec)
{
	Expr *lhs = parse_unary(p);
	for (;;) {
		int op, prec = binop(peek(p, 0)->kind, &op);
		if (prec == 0 || prec < minprec)
			return lhs;
		advance(p);
		Expr *rhs = parse_binary(p, prec + 1);
		Expr *e = new_expr(p, E_BINARY, span_join(lhs->span, rhs->span));
		e->op = op;
		e->lhs = lhs;
		e->rhs = rhs;
		if (check_height(p, e, max_i(lhs->height, rhs->height)))
			lhs = e;
	}
}

static Expr *parse_expr(Parser *p)
{
	return parse_binary(p, 1);
}

/* ---- shared pieces of declarations and statements ---- */

static Expr *ident_expr(Parser *p, const char *name, Span sp)
{
	Expr *e = new_expr(p, E_IDENT, sp);
	e->name = name ? name : "?";
	return e;
}

/* ref = IDENT '[' slices ']' */
static Expr *parse_ref(Parser *p, const char *what, const char *context)
{
	Span sp;
	const char *name = expect_name(p, what, context, &sp);
	Expr *base = ident_expr(p, name, sp);
	if (!name)
		return base;
	if (!at(p, T_LBRACK)) {
		char ctx[96];
		snprintf(ctx, sizeof ctx, "after '%.40s'", name);
		expected(p, "'['", ctx, "name the tile with a slice, e.g. A[bm * 128 +: 128, k * 64 +: 64]");
		return base;
	}
	return parse_index(p, base);
}

static DType parse_dtype(Parser *p, const char *context)
{
	Token *t = peek(p, 0);
	if (t->kind != T_IDENT) {
		expected(p, "an element type", context, "one of bf16, f16, f32, f8e4m3, i32, u32, i64, bool");
		return DT_NONE;
	}
	DType dt = dtype_from(t->p, t->n);
	if (dt == DT_NONE) {
		perr(p, "CK-SYN-006", t->span, "use one of bf16, f16, f32, f8e4m3, i32, u32, i64, bool",
		     "unknown element type '%.*s'", t->n > 40 ? 40 : t->n, t->p);
		return DT_NONE;
	}
	advance(p);
	return dt;
}

/* '[' expr {',' expr} ']' for a declared shape. */
static void parse_shape(Parser *p, Decl *d, const char *context)
{
	if (!expect(p, T_LBRACK, context, "give the shape, e.g. [128, 64]"))
		return;
	Span open = p->prev;
	if (!enter(p, open))
		return;
	d->shape = parse_expr_list(p, &d->rank);
	leave(p);
	if (!at(p, T_RBRACK)) {
		Diag *dg = expected(p, "',' or ']'", "in the shape", "close the shape with ']'");
		if (dg)
			diag_related(dg, open, "'[' opened here");
		return;
	}
	advance(p);
	if (d->rank > MAX_RANK) {
		perr(p, "CK-SYN-012", span_join(open, p->prev), "reshape the tensor to at most 4 dimensions",
		     "shape has %d dimensions; at most %d are supported", d->rank, MAX_RANK);
		d->rank = MAX_RANK;
	}
}

/* IDENT { ',' IDENT } (role names). */
static void parse_name_list(Parser *p, bool any, const char *what, const char *context,
                            const char ***names, Span **spans, int *n)
{
	Vec v = {0}, vs = {0};
	do {
		Span sp;
		const char *nm = any ? expect_any_name(p, what, context, &sp)
		                     : expect_name(p, what, context, &sp);
		if (!nm)
			break;
		Span *s = arena_alloc(p->a, sizeof *s);
		*s = sp;
		vec_push(&v, (void *)nm);
		vec_push(&vs, s);
	} while (at(p, T_COMMA) && (advance(p), true));
	*n = v.len;
	*names = (const char **)vec_freeze(&v, p->a);
	Span **sps = (Span **)vec_freeze(&vs, p->a);
	*spans = arena_alloc(p->a, sizeof(Span) * (size_t)(*n + 1));
	for (int i = 0; i < *n; i++)
		(*spans)[i] = *sps[i];
}

static void dup_clause(Parser *p, Span sp, const char *clause, const char *owner)
{
	perr(p, "CK-SYN-008", sp, "state each clause once", "duplicate '%s' clause in %s", clause, owner);
}

/* ---- declarations ---- */

static Decl *new_decl(Parser *p, DeclKind k, Token *lead)
{
	Decl *d = arena_alloc(p->a, sizeof *d);
	d->kind = k;
	d->span = lead->span;
	d->blank_before = lead->blank_before;
	return d;
}

static void parse_param(Parser *p, Decl *d)
{
	d->name = expect_name(p, "parameter", "after 'param'", &d->name_span);
	if (!d->name)
		return;
	if (!expect(p, T_COLON, "after the parameter name", "write 'param A: global bf16[M, K]' or 'param eps: f32'"))
		return;
	if (at_kw(p, "global")) {
		advance(p);
		d->space = SP_GLOBAL;
		d->dt = parse_dtype(p, "after 'global'");
		if (d->dt == DT_NONE)
			return;
		parse_shape(p, d, "after the element type of a global parameter");
	} else {
		d->space = SP_NONE;
		d->dt = parse_dtype(p, "after ':' (write 'global DTYPE[shape]' for a tensor)");
	}
}

static void parse_grid(Parser *p, Decl *d)
{
	if (at_kw(p, "persistent") && peek(p, 1)->kind == T_LPAREN) {
		advance(p);
		d->persistent = true;
	}
	if (!expect(p, T_LPAREN, "after 'grid'", "write 'grid (N / 128, M / 128) as (bn, bm)'"))
		return;
	d->exprs = parse_expr_list(p, &d->nexprs);
	if (!expect(p, T_RPAREN, "after the grid extents", NULL))
		return;
	if (!expect_kw(p, "as", "after the grid extents", "name the block coordinates: 'as (bn, bm)'"))
		return;
	if (!expect(p, T_LPAREN, "after 'as'", NULL))
		return;
	const char **names;
	Span *spans;
	int n;
	parse_name_list(p, false, "block coordinate", "in 'as (...)'", &names, &spans, &n);
	d->grid_vars = names;
	d->grid_var_spans = spans;
	if (!p->panic && n != d->nexprs)
		perr(p, "CK-SYN-009", span_join(spans[0], spans[n - 1]),
		     "give one coordinate name per grid extent",
		     "grid has %d extent%s but %d coordinate name%s", d->nexprs, d->nexprs == 1 ? "" : "s",
		     n, n == 1 ? "" : "s");
	if (!expect(p, T_RPAREN, "after the coordinate names", NULL))
		return;
	/* `group G`: grouped tile raster. 0 is accepted here so sema can say why
	 * it is wrong (CK-SEM-041); the rank rule is sema's too (CK-SEM-042). */
	if (at_kw(p, "group")) {
		Token g = advance(p);
		int v = expect_int(p, "tile group", "after 'group'", 0, 65535);
		if (v >= 0) {
			d->group = v;
			d->group_stated = true;
			d->group_span = span_join(g.span, p->prev);
		}
	}
}

static void parse_role(Parser *p, Decl *d)
{
	d->name = expect_any_name(p, "role", "after 'role'", &d->name_span);
	if (!d->name)
		return;
	vec_push(&p->roles, (void *)d->name);
	if (!expect_kw(p, "warps", "after the role name", "write 'role load warps 0..3 regs 40'"))
		return;
	d->warp_lo = expect_int(p, "first warp", "after 'warps'", 0, 1023);
	if (d->warp_lo < 0)
		return;
	if (!expect(p, T_DOTDOT, "in the warp range", "warp ranges are inclusive: 'warps 0..3'"))
		return;
	d->warp_hi = expect_int(p, "last warp", "after '..'", 0, 1023);
	if (d->warp_hi < 0)
		return;
	if (at_kw(p, "regs")) {
		advance(p);
		int r = expect_int(p, "register count", "after 'regs'", 1, 65535);
		if (r > 0)
			d->regs = r;
	}
}

static void parse_smem(Parser *p, Decl *d)
{
	d->name = expect_name(p, "shared buffer", "after 'smem'", &d->name_span);
	if (!d->name)
		return;
	d->space = SP_SMEM;
	if (!expect(p, T_COLON, "after the buffer name", "write 'smem a: bf16[128, 64]'"))
		return;
	d->dt = parse_dtype(p, "after ':'");
	if (d->dt == DT_NONE)
		return;
	parse_shape(p, d, "after the element type");
	bool have_swz = false, have_ring = false;
	while (!p->panic) {
		if (at_kw(p, "swizzle")) {
			Token kw = advance(p);
			if (have_swz)
				dup_clause(p, kw.span, "swizzle", "a smem declaration");
			have_swz = true;
			Token *t = peek(p, 0);
			if (tok_is(t, "none")) {
				advance(p);
				d->swizzle = SWZ_NONE;
				continue;
			}
			Token *b = peek(p, 1);
			if (t->kind == T_INT && tok_is(b, "B") && b->span.off == t->span.off + t->n &&
			    (t->ival == 32 || t->ival == 64 || t->ival == 128)) {
				d->swizzle = t->ival == 32 ? SWZ_32B : t->ival == 64 ? SWZ_64B : SWZ_128B;
				advance(p);
				advance(p);
				continue;
			}
			if (t->kind == T_INT && tok_is(b, "B"))
				perr(p, "CK-SYN-006", span_join(t->span, b->span),
				     "write one of none, 32B, 64B, 128B (no space before B)",
				     "unsupported swizzle '%.*s%sB'", t->n, t->p,
				     b->span.off == t->span.off + t->n ? "" : " ");
			else
				perr(p, "CK-SYN-006", t->span, "write one of none, 32B, 64B, 128B",
				     "expected a swizzle mode after 'swizzle', found %s", tok_desc(p, t));
		} else if (at_kw(p, "ring")) {
			Token kw = advance(p);
			if (have_ring)
				dup_clause(p, kw.span, "ring", "a smem declaration");
			have_ring = true;
			d->ring = expect_any_name(p, "pipeline", "after 'ring'", &d->ring_span);
		} else {
			break;
		}
	}
}

static void parse_barrier(Parser *p, Decl *d)
{
	d->name = expect_any_name(p, "barrier", "after 'barrier'", &d->name_span);
	if (!d->name)
		return;
	bool ring = false, prod = false, cons = false, arr = false;
	while (!p->panic) {
		Token *t = peek(p, 0);
		if (tok_is(t, "ring")) {
			Token kw = advance(p);
			if (ring)
				dup_clause(p, kw.span, "ring", "a barrier declaration");
			ring = true;
			d->ring = expect_any_name(p, "pipeline", "after 'ring'", &d->ring_span);
		} else if (tok_is(t, "producers")) {
			Token kw = advance(p);
			if (prod)
				dup_clause(p, kw.span, "producers", "a barrier declaration");
			prod = true;
			parse_name_list(p, true, "role", "after 'producers'", &d->producers, &d->producer_spans,
			                &d->nproducers);
		} else if (tok_is(t, "consumers")) {
			Token kw = advance(p);
			if (cons)
				dup_clause(p, kw.span, "consumers", "a barrier declaration");
			cons = true;
			parse_name_list(p, true, "role", "after 'consumers'", &d->consumers, &d->consumer_spans,
			                &d->nconsumers);
		} else if (tok_is(t, "arrivals")) {
			Token kw = advance(p);
			if (arr)
				dup_clause(p, kw.span, "arrivals", "a barrier declaration");
			arr = true;
			int v = expect_int(p, "arrival count", "after 'arrivals'", 1, 1 << 20);
			if (v > 0)
				d->arrivals = v;
		} else {
			break;
		}
	}
	if (p->panic)
		return;
	const char *missing = !prod ? "producers ROLE" : !cons ? "consumers ROLE" : !arr ? "arrivals N" : NULL;
	if (missing) {
		Token *t = peek(p, 0);
		char hint[160];
		snprintf(hint, sizeof hint, "write e.g. 'barrier %.40s ring ab producers load consumers mma arrivals 1'",
		         d->name);
		perr(p, "CK-SYN-009", t->span, hint, "barrier '%s' is missing its '%s' clause, found %s",
		     d->name, missing, tok_desc(p, t));
	}
}

static void parse_frag(Parser *p, Decl *d)
{
	d->name = expect_name(p, "fragment", "after 'frag'", &d->name_span);
	if (!d->name)
		return;
	d->space = SP_FRAG;
	if (!expect(p, T_COLON, "after the fragment name", "write 'frag acc: f32[128, 256] in mma'"))
		return;
	d->dt = parse_dtype(p, "after ':'");
	if (d->dt == DT_NONE)
		return;
	parse_shape(p, d, "after the element type");
	if (p->panic)
		return;
	if (!expect_kw(p, "in", "after the fragment shape", "name the owning role: 'in mma'"))
		return;
	d->owner = expect_any_name(p, "role", "after 'in'", &d->owner_span);
	if (!d->owner)
		return;
	if (at_kw(p, "split")) {
		advance(p);
		if (at_kw(p, "m")) {
			d->split = SPLIT_M;
			advance(p);
		} else if (at_kw(p, "n")) {
			d->split = SPLIT_N;
			advance(p);
		} else {
			Token *t = peek(p, 0);
			perr(p, "CK-SYN-006", t->span, "split over rows ('split m') or columns ('split n')",
			     "expected 'm' or 'n' after 'split', found %s", tok_desc(p, t));
		}
	}
	if (at_kw(p, "lanes")) {   /* a thread tile: each row spread over L lanes (LANGUAGE.md 4.11) */
		d->lanes_span = advance(p).span;
		int v = expect_int(p, "lanes per row", "after 'lanes'", 1, 32);
		d->lanes = v > 0 ? v : 0;
	}
}

/* One declaration; the leader keyword is current. */
static Decl *parse_decl(Parser *p)
{
	Token lead = advance(p);
	Decl *d;
	if (tok_is(&lead, "param")) {
		d = new_decl(p, D_PARAM, &lead);
		parse_param(p, d);
	} else if (tok_is(&lead, "const")) {
		d = new_decl(p, D_CONST, &lead);
		d->name = expect_name(p, "constant", "after 'const'", &d->name_span);
		if (d->name && expect(p, T_ASSIGN, "after the constant name", "write 'const BM = 128'"))
			d->value = parse_expr(p);
	} else if (tok_is(&lead, "domain")) {
		d = new_decl(p, D_DOMAIN, &lead);
		d->exprs = parse_expr_list(p, &d->nexprs);
	} else if (tok_is(&lead, "grid")) {
		d = new_decl(p, D_GRID, &lead);
		parse_grid(p, d);
	} else if (tok_is(&lead, "cluster")) {
		d = new_decl(p, D_CLUSTER, &lead);
		if (expect(p, T_LPAREN, "after 'cluster'", "write 'cluster (2, 1)'")) {
			d->exprs = parse_expr_list(p, &d->nexprs);
			expect(p, T_RPAREN, "after the cluster extents", NULL);
		}
	} else if (tok_is(&lead, "role")) {
		d = new_decl(p, D_ROLE, &lead);
		parse_role(p, d);
	} else if (tok_is(&lead, "pipeline")) {
		d = new_decl(p, D_PIPELINE, &lead);
		d->name = expect_any_name(p, "pipeline", "after 'pipeline'", &d->name_span);
		if (d->name && expect_kw(p, "stages", "after the pipeline name", "write 'pipeline ab stages 4'"))
			d->stages = expect_int(p, "stage count", "after 'stages'", 1, 1024);
		if (d->stages < 0)
			d->stages = 0;
	} else if (tok_is(&lead, "smem")) {
		d = new_decl(p, D_SMEM, &lead);
		parse_smem(p, d);
	} else if (tok_is(&lead, "barrier")) {
		d = new_decl(p, D_BARRIER, &lead);
		parse_barrier(p, d);
	} else {
		d = new_decl(p, D_FRAG, &lead);
		parse_frag(p, d);
	}
	if (d->warp_lo < 0)
		d->warp_lo = 0;
	if (d->warp_hi < 0)
		d->warp_hi = 0;
	d->span = span_join(lead.span, p->prev);
	return d;
}

/* ---- statements ---- */

static Stmt *parse_stmt(Parser *p, bool top);

static Stmt *new_stmt(Parser *p, StmtKind k, Token *lead)
{
	Stmt *s = arena_alloc(p->a, sizeof *s);
	s->kind = k;
	s->span = lead->span;
	s->blank_before = lead->blank_before;
	return s;
}

/* '{' { stmt } '}' with the '{' current (callers check it). */
static Stmt **parse_block(Parser *p, int *n, Span *close, bool top)
{
	Token open = advance(p);
	*close = open.span;
	Vec v = {0};
	if (!enter(p, open.span)) {
		/* too deep: skip the whole block without recursing */
		long d = 1;
		while (d > 0 && !at(p, T_EOF)) {
			if (at(p, T_LBRACE))
				d++;
			else if (at(p, T_RBRACE))
				d--;
			advance(p);
		}
		*close = p->prev;
		*n = 0;
		return (Stmt **)vec_freeze(&v, p->a);
	}
	for (;;) {
		Token *t = peek(p, 0);
		if (t->kind == T_RBRACE) {
			*close = advance(p).span;
			break;
		}
		if (t->kind == T_EOF || tok_is(t, "kernel")) {
			/* report only the innermost unclosed block at this point */
			if (p->unterminated_off == t->span.off)
				p->panic = true;
			p->unterminated_off = t->span.off;
			Diag *d = perr(p, "CK-SYN-002", t->span, "add the matching '}'",
			               "unterminated block: expected '}' to close the '{' at line %d, found %s",
			               open.span.line, tok_desc(p, t));
			if (d)
				diag_related(d, open.span, "block opened here");
			*close = t->span;
			break;
		}
		long before = p->ntok;
		Stmt *s = parse_stmt(p, top);
		if (s)
			vec_push(&v, s);
		if (p->panic) {
			if (p->ntok == before && !stmt_sync_point(p))
				advance(p);
			sync_stmt(p);
			if (p->ntok == before && stmt_sync_point(p) && !at(p, T_RBRACE) && !at(p, T_EOF) &&
			    !at_kw(p, "kernel"))
				advance(p); /* no progress on a leader that failed: step over it */
		}
	}
	leave(p);
	*n = v.len;
	return (Stmt **)vec_freeze(&v, p->a);
}

/* '{' body '}' after a statement header; reports a missing '{'. */
static Stmt **parse_body(Parser *p, int *n, Span *close, const char *context)
{
	if (!at(p, T_LBRACE)) {
		expected(p, "'{'", context,
		         at(p, T_ASSIGN) ? "to compare, write '==' ('=' assigns)" : "open the body with '{'");
		*n = 0;
		return NULL;
	}
	return parse_block(p, n, close, false);
}

static void parse_for(Parser *p, Stmt *s)
{
	s->name = expect_name(p, "loop variable", "after 'for'", &s->name_span);
	if (!s->name)
		return;
	if (!expect_kw(p, "in", "after the loop variable", "write 'for k in 0 .. K / 64 { ... }'"))
		return;
	s->lo = parse_expr(p);
	if (!expect(p, T_DOTDOT, "between the loop bounds", "loops are half-open ranges 'lo .. hi'"))
		return;
	s->hi = parse_expr(p);
	bool step = false, piped = false, unroll = false;
	while (!p->panic) {
		Token *t = peek(p, 0);
		if (tok_is(t, "step")) {
			Token kw = advance(p);
			if (step)
				dup_clause(p, kw.span, "step", "a for loop");
			step = true;
			s->step = parse_expr(p);
		} else if (tok_is(t, "pipelined")) {
			Token kw = advance(p);
			if (piped)
				dup_clause(p, kw.span, "pipelined", "a for loop");
			piped = true;
			s->pipe = expect_any_name(p, "pipeline", "after 'pipelined'", &s->pipe_span);
		} else if (tok_is(t, "unroll")) {
			Token kw = advance(p);
			if (unroll)
				dup_clause(p, kw.span, "unroll", "a for loop");
			unroll = true;
			int u = expect_int(p, "unroll factor", "after 'unroll'", 1, 1024);
			if (u > 0)
				s->unroll = u;
		} else {
			break;
		}
	}
	if (p->panic)
		return;
	s->body = parse_body(p, &s->nbody, &s->body_end,
	                     "after the loop header (or 'step', 'pipelined', 'unroll')");
}

static void parse_if(Parser *p, Stmt *s)
{
	s->cond = parse_expr(p);
	if (p->panic)
		return;
	s->body = parse_body(p, &s->nbody, &s->body_end, "after the if condition");
	if (p->panic || !at_kw(p, "else"))
		return;
	advance(p);
	if (at_kw(p, "if")) {
		Token lead = *peek(p, 0);
		if (!enter(p, lead.span)) {
			sync_stmt(p);
			return;
		}
		Stmt *e = parse_stmt(p, false);
		leave(p);
		s->els = arena_alloc(p->a, sizeof(Stmt *));
		s->els[0] = e;
		s->nels = 1;
		s->els_end = e->els ? e->els_end : e->body_end;
		return;
	}
	s->els = parse_body(p, &s->nels, &s->els_end, "after 'else' (or write 'else if')");
}

/* wgmma/mma operand: IDENT [ '^' 'T' ]. */
static Expr *parse_operand(Parser *p, const char *context)
{
	Span sp;
	const char *name = expect_name(p, "operand", context, &sp);
	Expr *e = ident_expr(p, name, sp);
	if (name && at(p, T_CARET))
		e = parse_transpose(p, e);
	return e;
}

static void parse_mma(Parser *p, Stmt *s, const char *kw)
{
	Span sp;
	char ctx[64];
	snprintf(ctx, sizeof ctx, "after '%s'", kw);
	const char *acc = expect_name(p, "accumulator", ctx, &sp);
	if (!acc)
		return;
	s->dst = ident_expr(p, acc, sp);
	if (at(p, T_PLUSEQ) || at(p, T_MINUSEQ)) {
		s->accumulate = true;
		s->negate = at(p, T_MINUSEQ);
		advance(p);
	} else if (at(p, T_ASSIGN)) {
		advance(p);
	} else {
		expected(p, "'+=', '-=' or '='", "after the accumulator", "write 'acc += a @ b^T'");
		return;
	}
	Expr *a = parse_operand(p, "after '+=' / '-=' / '='");
	if (p->panic)
		return;
	if (!expect(p, T_AT, "between the matmul operands", "write 'acc += a @ b^T'"))
		return;
	Expr *b = parse_operand(p, "after '@'");
	Expr *m = new_expr(p, E_BINARY, span_join(a->span, b->span));
	m->op = '@';
	m->lhs = a;
	m->rhs = b;
	m->height = max_i(a->height, b->height) + 1;
	s->src = m;
}

/* The `signal BAR` that ends a TMA load. */
static void parse_tma_signal(Parser *p, Stmt *s, const char *hint)
{
	if (p->panic)
		return;
	if (!expect_kw(p, "signal", "after the tma source", hint))
		return;
	s->name = expect_any_name(p, "barrier", "after 'signal'", &s->name_span);
}

/* `tma buf <- G[...] signal B` (load), `tma buf[:, c +: w] <- G[...] signal B` (load into one
 * column panel of buf), `tma G[...] <- buf` (store) and `tma G[...] <- buf[:, c +: w]` (store
 * of one column panel): an indexed left side is a store unless the right side is indexed too;
 * with both sides indexed, `signal` makes it a load and its absence a store (sema then checks
 * which side is the buffer and says what the other form takes). */
/* An optional `clip` after a TMA statement's reference (its box may run past the tensor's end). */
static bool parse_tma_clip(Parser *p, Stmt *s)
{
	if (p->panic || !at_kw(p, "clip"))
		return false;
	s->clip_span = peek(p, 0)->span;
	advance(p);
	return true;
}

static void parse_tma(Parser *p, Stmt *s)
{
	Token *t = peek(p, 0);
	if (t->kind == T_IDENT && peek(p, 1)->kind == T_LBRACK) {
		s->kind = S_TMA_STORE;
		s->dst = parse_ref(p, "global tensor", "after 'tma'");
		s->clip_dst = parse_tma_clip(p, s);
		if (!expect(p, T_LARROW, "after tma destination", "write 'tma C[...] <- c'"))
			return;
		if (peek(p, 0)->kind == T_IDENT && peek(p, 1)->kind == T_LBRACK) {
			s->src = parse_ref(p, "global tensor", "after '<-'");
			s->clip_src = parse_tma_clip(p, s);
			if (p->panic)
				return;
			if (at_kw(p, "signal")) {
				s->kind = S_TMA_LOAD;   /* a load into a panel of the buffer on the left */
				parse_tma_signal(p, s, "a load into a panel completes on a barrier: 'tma buf[:, c +: w] <- G[...] signal full'");
			}
			return;
		}
		Span sp;
		const char *src = expect_name(p, "shared buffer", "after '<-'", &sp);
		if (src)
			s->src = ident_expr(p, src, sp);
		s->clip_src = parse_tma_clip(p, s);   /* misplaced: sema says where it goes */
		return;
	}
	s->kind = S_TMA_LOAD;
	Span sp;
	const char *dst = expect_name(p, "shared buffer", "after 'tma'", &sp);
	if (!dst)
		return;
	s->dst = ident_expr(p, dst, sp);
	s->clip_dst = parse_tma_clip(p, s);   /* misplaced: sema says where it goes */
	if (!expect(p, T_LARROW, "after tma destination",
	            "write 'tma a <- A[...] signal full' (load) or 'tma C[...] <- c' (store)"))
		return;
	s->src = parse_ref(p, "global tensor", "after '<-'");
	s->clip_src = parse_tma_clip(p, s);
	parse_tma_signal(p, s, "a TMA load completes on a barrier: '... signal full'");
}

/* dst '<-' value for load/store/atomic_add/cp_async. */
static void parse_move(Parser *p, Stmt *s, const char *kw)
{
	char ctx[64];
	snprintf(ctx, sizeof ctx, "after '%s'", kw);
	switch (s->kind) {
	case S_LOAD: {
		Span sp;
		const char *dst = expect_name(p, "fragment", ctx, &sp);
		if (!dst)
			return;
		s->dst = ident_expr(p, dst, sp);
		break;
	}
	case S_CP_ASYNC:
		if (peek(p, 0)->kind == T_IDENT && peek(p, 1)->kind == T_LBRACK) {
			s->dst = parse_ref(p, "shared buffer", ctx);
		} else {
			Span sp;
			const char *dst = expect_name(p, "shared buffer", ctx, &sp);
			if (!dst)
				return;
			s->dst = ident_expr(p, dst, sp);
		}
		break;
	default:
		s->dst = parse_ref(p, "destination", ctx);
		break;
	}
	if (p->panic)
		return;
	snprintf(ctx, sizeof ctx, "after %s destination", kw);
	if (!expect(p, T_LARROW, ctx, "data moves right to left: 'dst <- src'"))
		return;
	if (s->kind == S_LOAD || s->kind == S_CP_ASYNC)
		s->src = parse_ref(p, "source tensor", "after '<-'");
	else
		s->src = parse_expr(p);
}

static void parse_assign(Parser *p, Stmt *s, Token *first)
{
	Vec v = {0};
	for (;;) {
		Span sp;
		const char *nm = expect_name(p, "fragment", v.len ? "after ','" : "", &sp);
		if (!nm)
			break;
		vec_push(&v, ident_expr(p, nm, sp));
		if (!at(p, T_COMMA))
			break;
		advance(p);
	}
	s->nlhs = v.len;
	s->lhs = (Expr **)vec_freeze(&v, p->a);
	if (p->panic)
		return;
	if (at(p, T_PLUSEQ) || at(p, T_MINUSEQ)) {
		bool minus = at(p, T_MINUSEQ);
		perr(p, "CK-SYN-001", peek(p, 0)->span,
		     minus ? "'-=' is only for wgmma accumulation; write 'x = x - y'" : "'+=' is only for wgmma/mma accumulation; write 'x = x + y'",
		     "expected '=' after the assigned name%s, found '%s'", s->nlhs > 1 ? "s" : "", minus ? "-=" : "+=");
		return;
	}
	if (!expect(p, T_ASSIGN, s->nlhs > 1 ? "after the assigned names" : "after the assigned name",
	            "a statement starting with a name is an assignment 'x = expr'; "
	            "otherwise start it with a keyword (wait, tma, store, ...)"))
		return;
	s->src = parse_expr(p);
}

static Stmt *parse_stmt(Parser *p, bool top)
{
	Token *t = peek(p, 0);
	if (t->kind != T_IDENT) {
		expected(p, "a statement", "",
		         "statements start with a keyword (for, if, wait, tma, store, ...) or 'name = expr'");
		return NULL;
	}
	if (tok_is(t, "target")) {
		perr(p, "CK-SYN-005", t->span, "pick another name, e.g. 'target_'",
		     "'target' is a reserved keyword and cannot start a statement");
		return NULL;
	}
	if (is_decl_leader(t)) {
		perr(p, "CK-SYN-001", t->span,
		     "declarations go between the kernel header and the body's '{'",
		     "declaration '%.*s' inside the kernel body", t->n, t->p);
		return NULL;
	}
	if (tok_is(t, "else")) {
		perr(p, "CK-SYN-001", t->span, "'else' must follow the '}' of an if block",
		     "'else' without a matching 'if'");
		return NULL;
	}
	Token lead = *t;
	Stmt *s;
	if (!is_stmt_leader(t)) {
		s = new_stmt(p, S_ASSIGN, &lead);
		parse_assign(p, s, &lead);
		s->span = span_join(lead.span, p->prev);
		return s;
	}
	advance(p);
	if (tok_is(&lead, "in")) {
		s = new_stmt(p, S_IN, &lead);
		if (!top) { /* reported, but parsed normally so recovery is clean */
			bool was = p->panic;
			perr(p, "CK-SYN-010", lead.span, "put each 'in ROLE { ... }' directly in the kernel body",
			     "'in' role blocks are only allowed at the top level of the kernel body");
			p->panic = was;
		}
		s->name = expect_any_name(p, "role", "after 'in'", &s->name_span);
		if (s->name)
			s->body = parse_body(p, &s->nbody, &s->body_end, "after the role name");
	} else if (tok_is(&lead, "for")) {
		s = new_stmt(p, S_FOR, &lead);
		parse_for(p, s);
	} else if (tok_is(&lead, "if")) {
		s = new_stmt(p, S_IF, &lead);
		parse_if(p, s);
	} else if (tok_is(&lead, "wait") || tok_is(&lead, "arrive")) {
		bool w = tok_is(&lead, "wait");
		s = new_stmt(p, w ? S_WAIT : S_ARRIVE, &lead);
		s->name = expect_any_name(p, "barrier", w ? "after 'wait'" : "after 'arrive'", &s->name_span);
	} else if (tok_is(&lead, "tma")) {
		s = new_stmt(p, S_TMA_LOAD, &lead);
		parse_tma(p, s);
	} else if (tok_is(&lead, "cp_async")) {
		s = new_stmt(p, S_CP_ASYNC, &lead);
		parse_move(p, s, "cp_async");
	} else if (tok_is(&lead, "wgmma")) {
		s = new_stmt(p, S_WGMMA, &lead);
		parse_mma(p, s, "wgmma");
	} else if (tok_is(&lead, "mma")) {
		s = new_stmt(p, S_MMA, &lead);
		parse_mma(p, s, "mma");
	} else if (tok_is(&lead, "wgmma_wait")) {
		s = new_stmt(p, S_WGMMA_WAIT, &lead);
		int n = expect_int(p, "pending group count", "after 'wgmma_wait'", 0, 7);
		s->count = n < 0 ? 0 : n;
	} else if (tok_is(&lead, "load")) {
		s = new_stmt(p, S_LOAD, &lead);
		parse_move(p, s, "load");
	} else if (tok_is(&lead, "store")) {
		s = new_stmt(p, S_STORE, &lead);
		parse_move(p, s, "store");
		if (s->src && s->src->kind == E_TRANSPOSE) {   /* store G[..] <- v^T: a flag, not an operand */
			s->transposed = true;
			s->src = s->src->lhs;
		}
	} else if (tok_is(&lead, "atomic_add")) {
		s = new_stmt(p, S_ATOMIC, &lead);
		parse_move(p, s, "atomic_add");
	} else if (tok_is(&lead, "fence")) {
		s = new_stmt(p, S_FENCE, &lead);
		Token *k = peek(p, 0);
		if (tok_is(k, "proxy_async"))
			s->fence = FENCE_PROXY_ASYNC;
		else if (tok_is(k, "cta"))
			s->fence = FENCE_CTA;
		else if (tok_is(k, "gpu"))
			s->fence = FENCE_GPU;
		else
			perr(p, "CK-SYN-006", k->span, "write 'fence proxy_async', 'fence cta' or 'fence gpu'",
			     "expected fence kind after 'fence', found %s", tok_desc(p, k));
		if (!p->panic)
			advance(p);
	} else if (tok_is(&lead, "sync")) {
		s = new_stmt(p, S_SYNC, &lead);
		Token *k = peek(p, 0);
		TokKind k1 = peek(p, 1)->kind;
		bool role = false;
		for (int i = 0; k->kind == T_IDENT && i < p->roles.len; i++)
			role = role || ((size_t)k->n == strlen(p->roles.data[i]) &&
			                memcmp(k->p, p->roles.data[i], (size_t)k->n) == 0);
		if (role || (k->kind == T_IDENT && !is_reserved(k) && k1 != T_ASSIGN && k1 != T_COMMA &&
		             k1 != T_PLUSEQ && k1 != T_MINUSEQ))
			s->name = expect_any_name(p, "role", "after 'sync'", &s->name_span);
	} else { /* let */
		s = new_stmt(p, S_LET, &lead);
		s->name = expect_name(p, "variable", "after 'let'", &s->name_span);
		if (s->name && expect(p, T_ASSIGN, "after the let name", "write 'let x = expr'"))
			s->src = parse_expr(p);
	}
	s->span = span_join(lead.span, p->prev);
	return s;
}

/* ---- kernels ---- */

static Kernel *parse_kernel(Parser *p)
{
	Token lead = advance(p);
	Kernel *k = arena_alloc(p->a, sizeof *k);
	p->roles.len = 0;
	k->span = lead.span;
	k->blank_before = lead.blank_before;
	k->name = expect_any_name(p, "kernel", "after 'kernel'", &k->name_span);
	if (!k->name)
		k->name = "?";
	if (!p->panic && expect_kw(p, "target", "after the kernel name", "write 'kernel NAME target sm_90a'")) {
		Token *t = peek(p, 0);
		Target tg = t->kind == T_IDENT ? target_from(t->p, t->n) : TGT_NONE;
		if (tg == TGT_NONE) {
			perr(p, "CK-SYN-006", t->span, "targets are sm_90a (Hopper), sm_80 (Ampere) and sm_100a (Blackwell)",
			     "unknown target %s", tok_desc(p, t));
		} else {
			k->target = tg;
			k->target_span = advance(p).span;
		}
	}
	if (!p->panic && tok_is(peek(p, 0), "family")) {
		Token lead = advance(p);
		Decl *d = new_decl(p, D_FAMILY, &lead);
		d->name = expect_any_name(p, "family", "after 'family'", &d->name_span);
		if (d->name && tok_is(peek(p, 0), "stage")) {
			d->stage = true;
			d->stage_span = advance(p).span;
		}
		k->family = d->name ? d : NULL;
	}
	if (p->panic)
		sync_decl(p);
	Vec decls = {0};
	for (;;) {
		Token *t = peek(p, 0);
		if (is_decl_leader(t)) {
			vec_push(&decls, parse_decl(p));
			if (p->panic)
				sync_decl(p);
			continue;
		}
		if (t->kind == T_LBRACE)
			break;
		if (t->kind == T_EOF || tok_is(t, "kernel")) {
			perr(p, "CK-SYN-001", t->span, "every kernel has a body: '{ in ROLE { ... } }'",
			     "expected a declaration or '{' to start the body of kernel '%s', found %s",
			     k->name, tok_desc(p, t));
			p->panic = false;
			k->ndecls = decls.len;
			k->decls = (Decl **)vec_freeze(&decls, p->a);
			k->span = span_join(lead.span, p->prev);
			return k;
		}
		expected(p, "a declaration or '{'", "in the kernel header",
		         t->kind == T_ASSIGN ? "to compare in a domain constraint, write '==' ('=' assigns)"
		         : is_stmt_leader(t) ? "statements go inside the body '{ ... }'"
		                           : "declarations start with param, const, domain, grid, cluster, "
		                             "role, pipeline, smem, barrier or frag");
		long before = p->ntok;
		sync_decl(p);
		if (p->ntok == before)
			advance(p);
	}
	k->ndecls = decls.len;
	k->decls = (Decl **)vec_freeze(&decls, p->a);
	k->lbrace = peek(p, 0)->span;
	k->body = parse_block(p, &k->nbody, &k->rbrace, true);
	p->panic = false;
	k->span = span_join(lead.span, p->prev);
	return k;
}

Program *parse_file(Ctx *c, int file)
{
	Parser p;
	memset(&p, 0, sizeof p);
	p.c = c;
	p.a = &c->arena;
	p.file = file;
	p.maxdepth = c->max_depth > 0 ? c->max_depth : 256;
	p.unterminated_off = -1;
	p.last_err_off = -1;
	lex_init(&p.lx, c, file);
	p.eof.kind = T_EOF;
	p.eof.span = (Span){file, 1, 1, 0, 0};
	p.prev = p.eof.span;
	Program *prog = arena_alloc(p.a, sizeof *prog);
	prog->file = file;
	Vec ks = {0};
	for (;;) {
		Token *t = peek(&p, 0);
		if (t->kind == T_EOF)
			break;
		if (tok_is(t, "kernel")) {
			vec_push(&ks, parse_kernel(&p));
			continue;
		}
		expected(&p, "'kernel'", "at the top level of the file",
		         "a file holds kernels: 'kernel NAME target sm_90a ...'");
		while (!at(&p, T_EOF) && !at_kw(&p, "kernel")) {
			if (at(&p, T_LBRACE))
				skip_balanced(&p);
			else
				advance(&p);
		}
		p.panic = false;
	}
	if (ks.len == 0 && p.nerr == 0) {
		Span sp = peek(&p, 0)->span;
		Diag *d = diag_add(c->diags, "CK-SYN-004", SEV_ERROR, sp, "file contains no kernel");
		diag_set(&d->hint, "start the file with 'kernel NAME target sm_90a'");
	}
	/* drain the lexer so every lexical error and comment is seen */
	if (!p.stopped)
		while (peek(&p, 0)->kind != T_EOF)
			advance(&p);
	prog->nkernels = ks.len;
	prog->kernels = (Kernel **)vec_freeze(&ks, p.a);
	prog->comments = lex_take_comments(&p.lx, &prog->ncomments);
	vec_free(&p.roles);
	return prog;
}
