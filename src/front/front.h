/*
 * front.h — the front end's public interface: lexer, parser, sema, printer.
 *
 * A Ctx is the state of one compilation: its arena, the source set and the
 * diagnostic list. Passes take a Ctx and never keep global state.
 */
#ifndef CAKE_FRONT_H
#define CAKE_FRONT_H

#include "ast.h"
#include "../base/diag.h"

typedef struct Ctx {
	Arena arena;
	SourceSet *srcs;
	DiagList *diags;
	int max_depth;          /* nesting limit for the parser (default 256) */
	/* the kernel families a `family NAME` clause may name (set by the
	 * pipeline from src/family/; NULL: names are not checked by sema) */
	const char *const *families;
	int nfamilies;
} Ctx;

/* Initialise ctx over caller-owned sources and diagnostics. */
void ctx_init(Ctx *c, SourceSet *srcs, DiagList *diags);
/* Free the arena (the sources and diagnostics stay with their owner). */
void ctx_free(Ctx *c);

/* ---- lexer ---- */

typedef enum TokKind {
	T_EOF = 0, T_IDENT, T_INT, T_FLOAT,
	T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK,
	T_COMMA, T_COLON, T_DOTDOT, T_LARROW /* <- */, T_PLUSCOLON /* +: */,
	T_PLUSEQ, T_MINUSEQ, T_ASSIGN, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
	T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_AT, T_CARET, T_BANG,
	T_ANDAND, T_OROR, T_SHL, T_SHR,
	T_ERROR,
} TokKind;

typedef struct Token {
	TokKind kind;
	Span span;
	const char *p;          /* points into the source text */
	int n;                  /* length */
	long long ival;
	double fval;
	bool blank_before;      /* a blank line separates it from the previous token/comment */
} Token;

/* Tokenise source file `file`. Lexical errors are reported to c->diags
 * (CK-LEX-*) and the offending bytes skipped. Returns an arena array ending
 * with T_EOF; *ntok receives the count including T_EOF. */
Token *lex_file(Ctx *c, int file, int *ntok);
/* Printable name of a token kind ("'<-'", "identifier"). */
const char *tok_name(TokKind k);

/* Incremental lexer: the parser pulls tokens one at a time so a large file
 * never needs a whole token array. Comments are collected as a side effect. */
typedef struct Lexer {
	Ctx *c;
	int file;
	const char *src;        /* NUL-terminated source text */
	size_t len, pos;
	int line;               /* current line (1-based) */
	size_t line_start;      /* byte offset of the current line */
	int newlines;           /* newlines since the last token or comment */
	bool tok_on_line;       /* a token was produced on the current line */
	int nerrors;            /* lexical diagnostics reported so far */
	bool capped;            /* the "too many errors" note was issued */
	Vec comments;           /* Comment* in source order (malloc-backed) */
} Lexer;

/* Start lexing source file `file` of c->srcs. */
void lex_init(Lexer *lx, Ctx *c, int file);
/* Next token; T_EOF (repeatedly) at the end. Lexical errors go to c->diags. */
Token lex_next(Lexer *lx);
/* Move the collected comments into the arena; *n receives the count. */
Comment **lex_take_comments(Lexer *lx, int *n);

/* ---- parser ---- */

/* Parse a whole file. Syntax errors (CK-SYN-*) go to c->diags; the parser
 * recovers at the next declaration/statement keyword and continues. Never
 * returns NULL. */
Program *parse_file(Ctx *c, int file);

/* ---- sema ---- */

/* Resolve names, check types/shapes/role ownership, annotate the tree.
 * Findings are CK-SEM-*. Returns true when no error was found. */
bool sema_program(Ctx *c, Program *p);
/* Look up a kernel symbol by name; NULL if absent. */
Sym *sema_lookup(Kernel *k, const char *name);

/* ---- printer (cake fmt) ---- */

/* Canonical text of the program; parse(print(p)) prints identically. */
void print_program(StrBuf *out, const Program *p);
/* Canonical text of one expression. */
void print_expr(StrBuf *out, const Expr *e);

#endif
