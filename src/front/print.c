/*
 * print.c — the canonical printer behind `cake fmt`.
 *
 * Layout (the canonical form, also described in docs/grammar.ebnf):
 *
 *   kernel NAME target TARGET
 *     <one declaration per line, indented 2 spaces>
 *   {
 *     <statements, 2 more spaces per block level>
 *   }
 *
 * Kernels are separated by one blank line. A blank line in the source before
 * a declaration, statement or own-line comment is kept (runs of blank lines
 * become one); a blank line right after a line ending in '{' (or after the
 * kernel header) is dropped. Optional clauses are printed in the grammar's
 * order (for: step, pipelined, unroll; smem: swizzle, ring; barrier: ring,
 * producers, consumers, arrivals), `swizzle none` is left out, and an else
 * branch holding just an if is printed `} else if ... {` unless a comment
 * sits between the two.
 *
 * Expressions: single spaces around binary operators and around '..' in
 * loops, none in a warp range (`warps 0..3`), slices as `a +: b`, the whole
 * extent as `:`, transposes as `b^T`, calls as `f(a, b)`. Parentheses are
 * emitted only where precedence needs them (every binary operator is left
 * associative, so a right operand of equal precedence is parenthesised).
 * Integers are printed in decimal. Floats read back to the same double:
 * magnitudes in [1e-4, 1e15) as plain decimals with the fewest fraction
 * digits (at least one: 2000.0, 0.1), others in the shortest %g form with
 * an exponent (1e-06, 1e+300).
 *
 * Comments come from Program.comments (source order, with spans). Before a
 * node is printed, every comment that starts before it is emitted: a comment
 * that trailed a token on its source line is appended to the last printed
 * line (two spaces, then the text), any other goes on its own line at the
 * current indentation. Comments before a closing brace are flushed inside
 * the block. Re-printing the output therefore yields the same text.
 */
#include "front.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Printer {
	StrBuf *out;
	Comment **cs;
	int nc, ci;
	int indent;
	bool block_start;     /* nothing printed yet in the current block */
} Printer;

static void put_indent(Printer *p)
{
	for (int i = 0; i < p->indent; i++)
		sb_puts(p->out, "  ");
}

static bool ends_with_newline(const StrBuf *b)
{
	return b->len > 0 && b->s[b->len - 1] == '\n';
}

static bool ends_with_blank_line(const StrBuf *b)
{
	return b->len == 0 || (b->len >= 2 && b->s[b->len - 1] == '\n' && b->s[b->len - 2] == '\n');
}

static void blank_line(Printer *p)
{
	if (!p->block_start && !ends_with_blank_line(p->out))
		sb_putc(p->out, '\n');
}

/* Emit every comment that starts before byte offset `off` (only the
 * leading run of trailing comments when trailing_only). */
static void flush_some(Printer *p, int off, bool trailing_only)
{
	while (p->ci < p->nc && p->cs[p->ci]->span.off < off &&
	       (!trailing_only || p->cs[p->ci]->trailing)) {
		const Comment *c = p->cs[p->ci++];
		if (c->trailing && ends_with_newline(p->out)) {
			p->out->len--;
			sb_puts(p->out, "  ");
			sb_puts(p->out, c->text);
			sb_putc(p->out, '\n');
			continue;
		}
		if (c->blank_before)
			blank_line(p);
		put_indent(p);
		sb_puts(p->out, c->text);
		sb_putc(p->out, '\n');
		p->block_start = false;
	}
}

static void flush_comments(Printer *p, int off)
{
	flush_some(p, off, false);
}

/* ---- expressions ---- */

static int prec_of(const Expr *e)
{
	if (!e)
		return 9;
	switch (e->kind) {
	case E_BINARY:
		switch (e->op) {
		case OP_OR: return 1;
		case OP_AND: return 2;
		case OP_EQ: case OP_NE: case '<': case OP_LE: case '>': case OP_GE: return 3;
		case OP_SHL: case OP_SHR: return 4;
		case '+': case '-': return 5;
		default: return 6; /* * / % @ */
		}
	case E_UNARY: return 7;
	default: return 8;
	}
}

static void print_float(StrBuf *b, double v)
{
	if (isinf(v)) {
		sb_puts(b, v > 0 ? "inf" : "-inf");
		return;
	}
	if (isnan(v)) {
		sb_puts(b, "nan");
		return;
	}
	char buf[400];
	double mag = fabs(v);
	if (mag == 0 || (mag >= 1e-4 && mag < 1e15)) {
		/* plain decimal: the fewest fraction digits (at least one) that
		 * read back exactly */
		for (int digits = 1; digits <= 330; digits++) {
			snprintf(buf, sizeof buf, "%.*f", digits, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	} else {
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(buf, sizeof buf, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		if (!strpbrk(buf, ".eE"))
			strcat(buf, ".0");
	}
	sb_puts(b, buf);
}

static void print_sub(StrBuf *b, const Expr *e, int minprec);

static void print_slice(StrBuf *b, const Slice *s)
{
	switch (s->kind) {
	case SL_ALL:
		sb_putc(b, ':');
		break;
	case SL_RANGE:
		print_sub(b, s->start, 1);
		sb_puts(b, " +: ");
		print_sub(b, s->len, 1);
		break;
	case SL_POINT:
		print_sub(b, s->start, 1);
		break;
	}
}

static void print_sub(StrBuf *b, const Expr *e, int minprec)
{
	if (!e) {
		sb_puts(b, "?");
		return;
	}
	int prec = prec_of(e);
	bool paren = prec < minprec;
	if (paren)
		sb_putc(b, '(');
	switch (e->kind) {
	case E_INT:
		sb_printf(b, "%lld", e->ival);
		break;
	case E_FLOAT:
		print_float(b, e->fval);
		break;
	case E_INF:
		sb_puts(b, "inf");
		break;
	case E_IDENT:
		sb_puts(b, e->name ? e->name : "?");
		break;
	case E_UNARY:
		sb_puts(b, op_spelling(e->op));
		print_sub(b, e->lhs, 7);
		break;
	case E_BINARY:
		print_sub(b, e->lhs, prec);
		sb_putc(b, ' ');
		sb_puts(b, op_spelling(e->op));
		sb_putc(b, ' ');
		print_sub(b, e->rhs, prec + 1);
		break;
	case E_CALL:
		sb_puts(b, e->name ? e->name : "?");
		sb_putc(b, '(');
		for (int i = 0; i < e->nargs; i++) {
			if (i)
				sb_puts(b, ", ");
			print_sub(b, e->args[i], 1);
		}
		sb_putc(b, ')');
		break;
	case E_INDEX:
		print_sub(b, e->base, 8);
		sb_putc(b, '[');
		for (int i = 0; i < e->nslices; i++) {
			if (i)
				sb_puts(b, ", ");
			print_slice(b, &e->slices[i]);
		}
		sb_putc(b, ']');
		break;
	case E_TRANSPOSE:
		print_sub(b, e->lhs, 8);
		sb_puts(b, "^T");
		break;
	}
	if (paren)
		sb_putc(b, ')');
}

void print_expr(StrBuf *out, const Expr *e)
{
	print_sub(out, e, 1);
}

static void print_list(StrBuf *b, Expr *const *es, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		print_expr(b, es[i]);
	}
}

static void print_names(StrBuf *b, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_puts(b, names[i] ? names[i] : "?");
	}
}

static const char *nm(const char *s)
{
	return s ? s : "?";
}

/* ---- declarations ---- */

static void print_typed(StrBuf *b, const Decl *d)
{
	sb_puts(b, dtype_name(d->dt));
	if (d->rank > 0 || d->space != SP_NONE) {
		sb_putc(b, '[');
		print_list(b, d->shape, d->rank);
		sb_putc(b, ']');
	}
}

static void print_decl(StrBuf *b, const Decl *d)
{
	switch (d->kind) {
	case D_PARAM:
		sb_printf(b, "param %s: ", nm(d->name));
		if (d->space == SP_GLOBAL) {
			sb_puts(b, "global ");
			print_typed(b, d);
		} else {
			sb_puts(b, dtype_name(d->dt));
		}
		break;
	case D_CONST:
		sb_printf(b, "const %s = ", nm(d->name));
		print_expr(b, d->value);
		break;
	case D_DOMAIN:
		sb_puts(b, "domain ");
		print_list(b, d->exprs, d->nexprs);
		break;
	case D_GRID:
		sb_puts(b, d->persistent ? "grid persistent (" : "grid (");
		print_list(b, d->exprs, d->nexprs);
		sb_puts(b, ") as (");
		print_names(b, d->grid_vars, d->nexprs);
		sb_putc(b, ')');
		if (d->group_stated || d->group)
			sb_printf(b, " group %d", d->group);
		break;
	case D_FAMILY:
		break;   /* printed in the kernel header */
	case D_CLUSTER:
		sb_puts(b, "cluster (");
		print_list(b, d->exprs, d->nexprs);
		sb_putc(b, ')');
		break;
	case D_ROLE:
		sb_printf(b, "role %s warps %d..%d", nm(d->name), d->warp_lo, d->warp_hi);
		if (d->regs)
			sb_printf(b, " regs %d", d->regs);
		break;
	case D_PIPELINE:
		sb_printf(b, "pipeline %s stages %d", nm(d->name), d->stages);
		break;
	case D_SMEM:
		sb_printf(b, "smem %s: ", nm(d->name));
		print_typed(b, d);
		if (d->swizzle != SWZ_NONE)
			sb_printf(b, " swizzle %s", swizzle_name(d->swizzle));
		if (d->ring)
			sb_printf(b, " ring %s", d->ring);
		break;
	case D_BARRIER:
		sb_printf(b, "barrier %s", nm(d->name));
		if (d->ring)
			sb_printf(b, " ring %s", d->ring);
		sb_puts(b, " producers ");
		print_names(b, d->producers, d->nproducers);
		sb_puts(b, " consumers ");
		print_names(b, d->consumers, d->nconsumers);
		sb_printf(b, " arrivals %d", d->arrivals);
		break;
	case D_FRAG:
		sb_printf(b, "frag %s: ", nm(d->name));
		print_typed(b, d);
		sb_printf(b, " in %s", nm(d->owner));
		if (d->split == SPLIT_M)
			sb_puts(b, " split m");
		else if (d->split == SPLIT_N)
			sb_puts(b, " split n");
		if (d->lanes)
			sb_printf(b, " lanes %d", d->lanes);
		break;
	}
}

/* ---- statements ---- */

static void print_stmt(Printer *p, const Stmt *s);

/* Statements of a block, then the comments before its closing brace. */
static void print_block(Printer *p, Stmt *const *body, int n, Span end)
{
	p->indent++;
	p->block_start = true;
	for (int i = 0; i < n; i++)
		if (body[i])
			print_stmt(p, body[i]);
	flush_comments(p, end.off);
	p->indent--;
	p->block_start = false;
}

static void close_brace(Printer *p)
{
	put_indent(p);
	sb_putc(p->out, '}');
}

/* "if C { ... }" plus its else part, from the current position. */
static void print_if(Printer *p, const Stmt *s)
{
	StrBuf *b = p->out;
	sb_puts(b, "if ");
	print_expr(b, s->cond);
	sb_puts(b, " {\n");
	print_block(p, s->body, s->nbody, s->body_end);
	close_brace(p);
	if (s->nels == 0)
		return;
	const Stmt *e = s->els[0];
	bool elif = s->nels == 1 && e && e->kind == S_IF &&
	            !(p->ci < p->nc && p->cs[p->ci]->span.off < e->span.off);
	if (elif) {
		sb_puts(b, " else ");
		print_if(p, e);
		return;
	}
	sb_puts(b, " else {\n");
	print_block(p, s->els, s->nels, s->els_end);
	close_brace(p);
}

static void print_stmt(Printer *p, const Stmt *s)
{
	StrBuf *b = p->out;
	flush_comments(p, s->span.off);
	if (s->blank_before)
		blank_line(p);
	put_indent(p);
	p->block_start = false;
	switch (s->kind) {
	case S_IN:
		sb_printf(b, "in %s {\n", nm(s->name));
		print_block(p, s->body, s->nbody, s->body_end);
		close_brace(p);
		break;
	case S_FOR:
		sb_printf(b, "for %s in ", nm(s->name));
		print_expr(b, s->lo);
		sb_puts(b, " .. ");
		print_expr(b, s->hi);
		if (s->step) {
			sb_puts(b, " step ");
			print_expr(b, s->step);
		}
		if (s->pipe)
			sb_printf(b, " pipelined %s", s->pipe);
		if (s->unroll)
			sb_printf(b, " unroll %d", s->unroll);
		sb_puts(b, " {\n");
		print_block(p, s->body, s->nbody, s->body_end);
		close_brace(p);
		break;
	case S_IF:
		print_if(p, s);
		break;
	case S_WAIT:
		sb_printf(b, "wait %s", nm(s->name));
		break;
	case S_ARRIVE:
		sb_printf(b, "arrive %s", nm(s->name));
		break;
	case S_TMA_LOAD:
		sb_puts(b, "tma ");
		print_expr(b, s->dst);
		sb_puts(b, s->clip_dst ? " clip <- " : " <- ");
		print_expr(b, s->src);
		sb_printf(b, "%s signal %s", s->clip_src ? " clip" : "", nm(s->name));
		break;
	case S_TMA_STORE:
	case S_CP_ASYNC:
	case S_LOAD:
	case S_STORE:
	case S_ATOMIC:
		sb_puts(b, s->kind == S_TMA_STORE ? "tma " : s->kind == S_CP_ASYNC ? "cp_async "
		           : s->kind == S_LOAD ? "load " : s->kind == S_STORE ? "store " : "atomic_add ");
		print_expr(b, s->dst);
		sb_puts(b, s->clip_dst ? " clip <- " : " <- ");
		if (s->transposed) {
			print_sub(b, s->src, 8);
			sb_puts(b, "^T");
		} else {
			print_expr(b, s->src);
		}
		if (s->clip_src)
			sb_puts(b, " clip");
		break;
	case S_WGMMA:
	case S_MMA:
		sb_puts(b, s->kind == S_WGMMA ? "wgmma " : "mma ");
		print_expr(b, s->dst);
		sb_puts(b, s->negate ? " -= " : s->accumulate ? " += " : " = ");
		print_expr(b, s->src);
		break;
	case S_WGMMA_WAIT:
		sb_printf(b, "wgmma_wait %d", s->count);
		break;
	case S_FENCE:
		sb_printf(b, "fence %s", s->fence == FENCE_PROXY_ASYNC ? "proxy_async"
		                         : s->fence == FENCE_CTA ? "cta" : "gpu");
		break;
	case S_SYNC:
		sb_puts(b, "sync");
		if (s->name)
			sb_printf(b, " %s", s->name);
		break;
	case S_LET:
		sb_printf(b, "let %s = ", nm(s->name));
		print_expr(b, s->src);
		break;
	case S_ASSIGN:
		print_list(b, s->lhs, s->nlhs);
		sb_puts(b, " = ");
		print_expr(b, s->src);
		break;
	}
	sb_putc(b, '\n');
}

/* ---- kernels ---- */

static void print_kernel(Printer *p, const Kernel *k, bool first)
{
	StrBuf *b = p->out;
	flush_some(p, k->span.off, true); /* "} # end" stays on the brace line */
	if (!first && b->len > 0) {
		if (!ends_with_blank_line(b))
			sb_putc(b, '\n');
		p->block_start = true;
	}
	p->indent = 0;
	flush_comments(p, k->span.off);
	if (k->blank_before)
		blank_line(p);
	sb_printf(b, "kernel %s target %s", nm(k->name), target_name(k->target));
	if (k->family)
		sb_printf(b, " family %s%s", nm(k->family->name), k->family->stage ? " stage" : "");
	sb_putc(b, '\n');
	p->indent = 1;
	p->block_start = true;
	for (int i = 0; i < k->ndecls; i++) {
		const Decl *d = k->decls[i];
		flush_comments(p, d->span.off);
		if (d->blank_before)
			blank_line(p);
		put_indent(p);
		print_decl(b, d);
		sb_putc(b, '\n');
		p->block_start = false;
	}
	flush_comments(p, k->lbrace.off);
	p->indent = 0;
	sb_puts(b, "{\n");
	print_block(p, k->body, k->nbody, k->rbrace);
	sb_puts(b, "}\n");
	p->block_start = false;
}

void print_program(StrBuf *out, const Program *prog)
{
	Printer p;
	memset(&p, 0, sizeof p);
	p.out = out;
	p.cs = prog->comments;
	p.nc = prog->ncomments;
	p.block_start = true;
	for (int i = 0; i < prog->nkernels; i++)
		print_kernel(&p, prog->kernels[i], i == 0);
	p.indent = 0;
	flush_comments(&p, INT_MAX);
	sb_str(out);
}
