/*
 * lex.c — the Cake IR lexer.
 *
 * The lexer turns the bytes of one source file into tokens on demand
 * (lex_next); lex_file wraps it for callers that want a whole array. The
 * parser pulls tokens one by one, so a 10 MB file never materialises a token
 * array, and comments are collected on the side (with whether they trail a
 * token on the same line, and whether a blank line precedes them) so that
 * `cake fmt` can put them back.
 *
 * Numbers: decimal and 0x hexadecimal integers (up to INT64_MAX), floats
 * written with a fraction and/or an exponent (1.5, 1e-6, 2.0e3). A '.' is
 * part of a number only when a digit follows it, so `0..3` is INT '..' INT.
 * A number immediately followed by letters is malformed, except an integer
 * followed by the single letter B (`128B`, the swizzle spelling), which
 * lexes as INT then IDENT "B"; the parser checks the two are adjacent.
 * `inf` is an ordinary identifier; the parser gives it its literal meaning.
 *
 * Errors never stop the lexer. A run of consecutive bad bytes (invalid
 * characters, invalid UTF-8, NUL bytes, non-ASCII text outside comments) is
 * reported once for the whole run, and after LEX_MAX_ERRORS diagnostics one
 * note says the rest are suppressed, so binary garbage yields a bounded
 * report. Malformed or out-of-range numbers still yield a number token so the
 * parser does not pile a second error on top; likewise a lone '&' or '|' is
 * reported and then read as '&&' or '||', `b.T` as `b^T` and any other lone
 * '.' as '..'.
 *
 * Source must be UTF-8; non-ASCII characters are allowed only in comments
 * (and a byte-order mark at offset 0, which is skipped).
 * `<-` is always the arrow: the comparison with a negative number must be
 * spelled with a space (`a < -1`).
 */
#include "front.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEX_MAX_ERRORS 50

static const char *const tok_names[] = {
	[T_EOF] = "end of file", [T_IDENT] = "identifier", [T_INT] = "integer",
	[T_FLOAT] = "number", [T_LBRACE] = "'{'", [T_RBRACE] = "'}'",
	[T_LPAREN] = "'('", [T_RPAREN] = "')'", [T_LBRACK] = "'['",
	[T_RBRACK] = "']'", [T_COMMA] = "','", [T_COLON] = "':'",
	[T_DOTDOT] = "'..'", [T_LARROW] = "'<-'", [T_PLUSCOLON] = "'+:'",
	[T_PLUSEQ] = "'+='", [T_MINUSEQ] = "'-='", [T_ASSIGN] = "'='", [T_EQ] = "'=='", [T_NE] = "'!='",
	[T_LT] = "'<'", [T_LE] = "'<='", [T_GT] = "'>'", [T_GE] = "'>='",
	[T_PLUS] = "'+'", [T_MINUS] = "'-'", [T_STAR] = "'*'", [T_SLASH] = "'/'",
	[T_PERCENT] = "'%'", [T_AT] = "'@'", [T_CARET] = "'^'", [T_BANG] = "'!'",
	[T_ANDAND] = "'&&'", [T_OROR] = "'||'", [T_SHL] = "'<<'", [T_SHR] = "'>>'",
	[T_ERROR] = "invalid token",
};

const char *tok_name(TokKind k)
{
	if ((int)k < 0 || (size_t)k >= NELEM(tok_names) || !tok_names[k])
		return "token";
	return tok_names[k];
}

void lex_init(Lexer *lx, Ctx *c, int file)
{
	memset(lx, 0, sizeof *lx);
	lx->c = c;
	lx->file = file;
	if (c->srcs && file >= 0 && file < c->srcs->n) {
		lx->src = c->srcs->files[file].text;
		lx->len = c->srcs->files[file].len;
	} else {
		lx->src = "";
		lx->len = 0;
	}
	lx->line = 1;
	/* a UTF-8 byte-order mark at the very start is allowed and skipped;
	 * columns on line 1 count from after it */
	if (lx->len >= 3 && memcmp(lx->src, "\xEF\xBB\xBF", 3) == 0)
		lx->pos = lx->line_start = 3;
}

Comment **lex_take_comments(Lexer *lx, int *n)
{
	*n = lx->comments.len;
	return (Comment **)vec_freeze(&lx->comments, &lx->c->arena);
}

/* ---- character classes ---- */

static bool is_ident_start(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static bool is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_ident_char(int ch)
{
	return is_ident_start(ch) || is_digit(ch);
}

static int hex_val(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), storing
 * the code point; 0 if the bytes there are not valid UTF-8. */
static int utf8_len(const unsigned char *p, size_t avail, unsigned *cp)
{
	unsigned c0 = p[0];
	int n;
	unsigned v, min;
	if (c0 < 0x80) {
		*cp = c0;
		return 1;
	} else if (c0 >= 0xC2 && c0 <= 0xDF) {
		n = 2, v = c0 & 0x1F, min = 0x80;
	} else if (c0 >= 0xE0 && c0 <= 0xEF) {
		n = 3, v = c0 & 0x0F, min = 0x800;
	} else if (c0 >= 0xF0 && c0 <= 0xF4) {
		n = 4, v = c0 & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if ((size_t)n > avail)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* ---- diagnostics ---- */

static Span span_at(Lexer *lx, size_t off, size_t len)
{
	Span s;
	s.file = lx->file;
	s.line = lx->line;
	s.col = (int)(off - lx->line_start) + 1;
	s.off = (int)off;
	s.len = (int)len;
	return s;
}

/* Report one lexical finding unless the cap was reached; NULL when dropped. */
static Diag *lex_error(Lexer *lx, const char *rule, Span sp, const char *hint,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static Diag *lex_error(Lexer *lx, const char *rule, Span sp, const char *hint,
                       const char *fmt, ...)
{
	if (lx->nerrors >= LEX_MAX_ERRORS) {
		if (!lx->capped) {
			lx->capped = true;
			Diag *d = diag_add(lx->c->diags, "CK-LEX-007", SEV_NOTE, sp,
			                   "too many lexical errors (%d); further ones are not reported",
			                   LEX_MAX_ERRORS);
			diag_set(&d->hint, "fix the errors above first; is this file really Cake source text?");
		}
		return NULL;
	}
	lx->nerrors++;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	Diag *d = diag_add(lx->c->diags, rule, SEV_ERROR, sp, "%s", buf);
	if (hint)
		diag_set(&d->hint, "%s", hint);
	return d;
}

/* ---- whitespace and comments ---- */

static void newline(Lexer *lx)
{
	lx->line++;
	lx->line_start = lx->pos;
	lx->newlines++;
	lx->tok_on_line = false;
}

/* Check a comment body for invalid UTF-8 (the one lexical rule comments
 * obey); report the first bad byte. */
static void check_comment_utf8(Lexer *lx, size_t from, size_t to)
{
	const unsigned char *s = (const unsigned char *)lx->src;
	int line = lx->line;
	size_t ls = lx->line_start;
	for (size_t i = from; i < to;) {
		unsigned cp;
		int n = utf8_len(s + i, to - i, &cp);
		if (s[i] == '\n') {
			line++;
			ls = i + 1;
		}
		if (n == 0 || s[i] == 0) {
			Span sp = {lx->file, line, (int)(i - ls) + 1, (int)i, 1};
			if (s[i] == 0)
				lex_error(lx, "CK-LEX-004", sp, "remove the NUL byte; Cake source is UTF-8 text",
				          "NUL byte inside a comment");
			else
				lex_error(lx, "CK-LEX-002", sp, "re-save the file as UTF-8",
				          "invalid UTF-8 byte 0x%02X inside a comment", s[i]);
			return;
		}
		i += (size_t)n;
	}
}

static void add_comment(Lexer *lx, size_t start, size_t end, Span sp)
{
	while (end > start && (lx->src[end - 1] == ' ' || lx->src[end - 1] == '\t' ||
	                       lx->src[end - 1] == '\r'))
		end--;
	Comment *cm = arena_alloc(&lx->c->arena, sizeof *cm);
	cm->text = arena_strndup(&lx->c->arena, lx->src + start, end - start);
	cm->span = sp;
	cm->span.len = (int)(end - start);
	cm->trailing = lx->tok_on_line;
	cm->blank_before = lx->newlines >= 2;
	lx->newlines = 0;
	vec_push(&lx->comments, cm);
}

/* Skip blanks, newlines and comments. */
static void skip_space(Lexer *lx)
{
	const char *s = lx->src;
	for (;;) {
		if (lx->pos >= lx->len)
			return;
		char ch = s[lx->pos];
		if (ch == ' ' || ch == '\t' || ch == '\r') {
			lx->pos++;
		} else if (ch == '\n') {
			lx->pos++;
			newline(lx);
		} else if (ch == '#') {
			size_t start = lx->pos;
			Span sp = span_at(lx, start, 1);
			while (lx->pos < lx->len && s[lx->pos] != '\n')
				lx->pos++;
			check_comment_utf8(lx, start, lx->pos);
			add_comment(lx, start, lx->pos, sp);
		} else if (ch == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '*') {
			size_t start = lx->pos;
			Span sp = span_at(lx, start, 2);
			bool trailing = lx->tok_on_line;
			int nl = lx->newlines;
			lx->pos += 2;
			bool closed = false;
			while (lx->pos < lx->len) {
				if (s[lx->pos] == '*' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/') {
					lx->pos += 2;
					closed = true;
					break;
				}
				if (s[lx->pos] == '\n') {
					lx->pos++;
					lx->line++;
					lx->line_start = lx->pos;
				} else {
					lx->pos++;
				}
			}
			if (!closed) {
				Diag *d = lex_error(lx, "CK-LEX-003", sp,
				                    "close the comment with '*/' (block comments do not nest)",
				                    "unterminated block comment");
				if (d)
					diag_related(d, span_at(lx, lx->pos, 0), "end of file reached here");
				lx->newlines = 0;
				return;
			}
			/* Only the UTF-8 check; the line tracking above already ran. */
			int save_line = lx->line;
			size_t save_ls = lx->line_start;
			lx->line = sp.line;
			lx->line_start = (size_t)(sp.off - (sp.col - 1));
			check_comment_utf8(lx, start, lx->pos);
			lx->line = save_line;
			lx->line_start = save_ls;
			lx->tok_on_line = trailing;
			lx->newlines = nl;
			add_comment(lx, start, lx->pos, sp);
			/* a token after the comment on its last line is not "on the line"
			 * of the comment for trailing purposes; keep the state as it was */
			lx->tok_on_line = trailing;
		} else {
			return;
		}
	}
}

/* ---- bad bytes ---- */

typedef enum BadKind { BAD_NONE, BAD_CHAR, BAD_NONASCII, BAD_UTF8, BAD_NUL } BadKind;

/* Classify the unit at pos: BAD_NONE if a token (or blank/comment) can start
 * there, else the kind of bad byte, with *n its length in bytes. */
static BadKind bad_unit(Lexer *lx, size_t pos, int *n, unsigned *cp)
{
	const unsigned char *s = (const unsigned char *)lx->src;
	unsigned char ch = s[pos];
	*n = 1;
	*cp = ch;
	if (ch == 0)
		return BAD_NUL;
	if (ch >= 0x80) {
		int k = utf8_len(s + pos, lx->len - pos, cp);
		if (k == 0)
			return BAD_UTF8;
		*n = k;
		return BAD_NONASCII;
	}
	if (is_ident_char(ch))
		return BAD_NONE;
	switch (ch) {
	case ' ': case '\t': case '\r': case '\n': case '#':
	case '{': case '}': case '(': case ')': case '[': case ']': case ',': case ':':
	case '<': case '+': case '=': case '!': case '>': case '-': case '*': case '/':
	case '%': case '@': case '^':
		return BAD_NONE;
	case '.':
		return (pos + 1 < lx->len && s[pos + 1] == '.') ? BAD_NONE : BAD_CHAR;
	case '&':
		return (pos + 1 < lx->len && s[pos + 1] == '&') ? BAD_NONE : BAD_CHAR;
	case '|':
		return (pos + 1 < lx->len && s[pos + 1] == '|') ? BAD_NONE : BAD_CHAR;
	default:
		return BAD_CHAR;
	}
}

static const char *bad_char_hint(unsigned ch)
{
	switch (ch) {
	case ';': return "statements end at the next keyword or line; remove the ';'";
	case '.': return "ranges are written 'lo .. hi'; there is no member access";
	case '&': return "the logical and is written '&&'";
	case '|': return "the logical or is written '||'";
	case '"': case '\'': return "Cake has no string or character literals";
	case '$': case '`': case '?': case '~': case '\\':
		return "this character has no meaning in Cake; remove it";
	default: return "remove it; Cake source uses ASCII outside comments";
	}
}

/* Skip a maximal run of bad units starting at lx->pos and report it once. */
static void bad_run(Lexer *lx)
{
	size_t start = lx->pos;
	int n;
	unsigned cp;
	BadKind first = bad_unit(lx, start, &n, &cp);
	unsigned first_cp = cp;
	int units = 0;
	while (lx->pos < lx->len) {
		BadKind k = bad_unit(lx, lx->pos, &n, &cp);
		if (k == BAD_NONE)
			break;
		lx->pos += (size_t)n;
		units++;
	}
	if (lx->pos == start) /* defensive: always make progress */
		lx->pos++;
	size_t len = lx->pos - start;
	Span sp = span_at(lx, start, len);
	if (units > 1) {
		const char *rule = first == BAD_NUL ? "CK-LEX-004" : first == BAD_UTF8 ? "CK-LEX-002"
		                                                                        : "CK-LEX-001";
		lex_error(lx, rule, sp, "delete these bytes; is this a binary file or the wrong encoding?",
		          "%zu bytes of invalid input (starting with byte 0x%02X)", len,
		          (unsigned char)lx->src[start]);
		return;
	}
	switch (first) {
	case BAD_NUL:
		lex_error(lx, "CK-LEX-004", sp, "remove the NUL byte; Cake source is UTF-8 text",
		          "NUL byte in source");
		break;
	case BAD_UTF8:
		lex_error(lx, "CK-LEX-002", sp, "re-save the file as UTF-8",
		          "invalid UTF-8 byte 0x%02X", (unsigned char)lx->src[start]);
		break;
	case BAD_NONASCII:
		lex_error(lx, "CK-LEX-001", sp,
		          "names and operators are ASCII; put other text in a '#' comment",
		          "non-ASCII character U+%04X outside a comment", first_cp);
		break;
	default:
		if (first_cp < 0x20 || first_cp == 0x7F)
			lex_error(lx, "CK-LEX-001", sp, "remove the control character",
			          "invalid control character 0x%02X", first_cp);
		else
			lex_error(lx, "CK-LEX-001", sp, bad_char_hint(first_cp),
			          "invalid character '%c'", (char)first_cp);
		break;
	}
}

/* ---- numbers ---- */

static void lex_number(Lexer *lx, Token *t)
{
	const char *s = lx->src;
	size_t start = lx->pos, p = start;
	bool is_float = false, bad = false, big = false;
	unsigned long long v = 0;
	if (s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X')) {
		p += 2;
		size_t d0 = p;
		while (hex_val((unsigned char)s[p]) >= 0) {
			if (v > (unsigned long long)INT64_MAX >> 4)
				big = true;
			v = (v << 4) | (unsigned)hex_val((unsigned char)s[p]);
			if (v > (unsigned long long)INT64_MAX)
				big = true;
			p++;
		}
		if (p == d0)
			bad = true;
	} else {
		while (is_digit((unsigned char)s[p])) {
			unsigned d = (unsigned)(s[p] - '0');
			if (v > ((unsigned long long)INT64_MAX - d) / 10)
				big = true;
			else
				v = v * 10 + d;
			p++;
		}
		if (s[p] == '.' && is_digit((unsigned char)s[p + 1])) {
			is_float = true;
			p++;
			while (is_digit((unsigned char)s[p]))
				p++;
		}
		if ((s[p] == 'e' || s[p] == 'E') &&
		    (is_digit((unsigned char)s[p + 1]) ||
		     ((s[p + 1] == '+' || s[p + 1] == '-') && is_digit((unsigned char)s[p + 2])))) {
			is_float = true;
			p += 2;
			while (is_digit((unsigned char)s[p]))
				p++;
		}
	}
	/* A number glued to letters is malformed, except INT followed by "B". */
	if (is_ident_char((unsigned char)s[p]) || (s[p] == '.' && is_digit((unsigned char)s[p + 1]))) {
		bool swz = !is_float && !bad && s[p] == 'B' && !is_ident_char((unsigned char)s[p + 1]);
		if (!swz) {
			bad = true;
			while (is_ident_char((unsigned char)s[p]) ||
			       (s[p] == '.' && is_digit((unsigned char)s[p + 1])))
				p++;
		}
	}
	/* the source is NUL-terminated, so s[p + 1] and s[p + 2] above are safe:
	 * every read stops at the NUL */
	lx->pos = p;
	t->kind = is_float ? T_FLOAT : T_INT;
	t->span = span_at(lx, start, p - start);
	t->p = s + start;
	t->n = (int)(p - start);
	int shown = t->n > 40 ? 40 : t->n;
	if (bad) {
		lex_error(lx, "CK-LEX-006", t->span,
		          "write 128, 0x80, 1.5 or 1e-6; separate a number from a name with a space",
		          "malformed number '%.*s%s'", shown, t->p, shown < t->n ? "..." : "");
		t->ival = 0;
		t->fval = 0;
		return;
	}
	if (is_float) {
		char buf[128];
		if (t->n >= (int)sizeof buf) {
			lex_error(lx, "CK-LEX-006", t->span, "write the number with fewer digits",
			          "number literal '%.*s...' is too long", shown, t->p);
			t->fval = 0;
			return;
		}
		memcpy(buf, t->p, (size_t)t->n);
		buf[t->n] = 0;
		errno = 0;
		double d = strtod(buf, NULL);
		if (isinf(d)) {
			lex_error(lx, "CK-LEX-005", t->span,
			          "use the literal 'inf' for infinity, or a smaller value",
			          "number literal '%s' is too large for a double", buf);
			d = 0;
		}
		t->fval = d;
		return;
	}
	if (big) {
		lex_error(lx, "CK-LEX-005", t->span, "integers must fit in 64 bits (at most 9223372036854775807)",
		          "integer literal '%.*s%s' is too large", shown, t->p, shown < t->n ? "..." : "");
		v = 0;
	}
	t->ival = (long long)v;
}

/* ---- tokens ---- */

Token lex_next(Lexer *lx)
{
	Token t;
	memset(&t, 0, sizeof t);
	for (;;) {
		skip_space(lx);
		t.blank_before = lx->newlines >= 2;
		if (lx->pos >= lx->len) {
			t.kind = T_EOF;
			t.span = span_at(lx, lx->len, 0);
			t.p = lx->src + lx->len;
			return t;
		}
		int n;
		unsigned cp;
		char ch0 = lx->src[lx->pos];
		if ((ch0 == '&' || ch0 == '|') && lx->src[lx->pos + 1] != ch0) {
			/* a single '&' or '|': report it, then read it as '&&' / '||'
			 * so the parser does not add a second error */
			size_t at = lx->pos++;
			t.kind = ch0 == '&' ? T_ANDAND : T_OROR;
			t.span = span_at(lx, at, 1);
			t.p = lx->src + at;
			t.n = 1;
			lex_error(lx, "CK-LEX-001", t.span, bad_char_hint((unsigned char)ch0),
			          "invalid character '%c'", ch0);
			lx->newlines = 0;
			lx->tok_on_line = true;
			return t;
		}
		if (ch0 == '.' && lx->src[lx->pos + 1] != '.') {
			/* `b.T`: report, then read it as the transpose `b^T`; any
			 * other lone '.' is read as the range '..' */
			bool tr = lx->src[lx->pos + 1] == 'T' &&
			          !is_ident_char((unsigned char)lx->src[lx->pos + 2]);
			size_t at = lx->pos++;
			t.kind = tr ? T_CARET : T_DOTDOT;
			t.span = span_at(lx, at, 1);
			t.p = lx->src + at;
			t.n = 1;
			lex_error(lx, "CK-LEX-001", t.span,
			          tr ? "the transpose is written b^T" : bad_char_hint('.'),
			          "invalid character '.'");
			lx->newlines = 0;
			lx->tok_on_line = true;
			return t;
		}
		if (bad_unit(lx, lx->pos, &n, &cp) != BAD_NONE) {
			bad_run(lx);
			continue;
		}
		break;
	}
	const char *s = lx->src;
	size_t start = lx->pos;
	unsigned char ch = (unsigned char)s[start];
	lx->newlines = 0;
	lx->tok_on_line = true;
	if (is_digit(ch)) {
		lex_number(lx, &t);
		return t;
	}
	if (is_ident_start(ch)) {
		size_t p = start + 1;
		while (is_ident_char((unsigned char)s[p]))
			p++;
		lx->pos = p;
		t.kind = T_IDENT;
		t.span = span_at(lx, start, p - start);
		t.p = s + start;
		t.n = (int)(p - start);
		return t;
	}
	char c1 = s[start + 1]; /* NUL-terminated source: safe */
	TokKind k;
	int len = 1;
	switch (ch) {
	case '{': k = T_LBRACE; break;
	case '}': k = T_RBRACE; break;
	case '(': k = T_LPAREN; break;
	case ')': k = T_RPAREN; break;
	case '[': k = T_LBRACK; break;
	case ']': k = T_RBRACK; break;
	case ',': k = T_COMMA; break;
	case ':': k = T_COLON; break;
	case '.': k = T_DOTDOT, len = 2; break; /* bad_unit guarantees ".." */
	case '<':
		if (c1 == '-') k = T_LARROW, len = 2;
		else if (c1 == '=') k = T_LE, len = 2;
		else if (c1 == '<') k = T_SHL, len = 2;
		else k = T_LT;
		break;
	case '>':
		if (c1 == '=') k = T_GE, len = 2;
		else if (c1 == '>') k = T_SHR, len = 2;
		else k = T_GT;
		break;
	case '+':
		if (c1 == ':') k = T_PLUSCOLON, len = 2;
		else if (c1 == '=') k = T_PLUSEQ, len = 2;
		else k = T_PLUS;
		break;
	case '=':
		if (c1 == '=') k = T_EQ, len = 2;
		else k = T_ASSIGN;
		break;
	case '!':
		if (c1 == '=') k = T_NE, len = 2;
		else k = T_BANG;
		break;
	case '&': k = T_ANDAND, len = 2; break; /* bad_unit guarantees "&&" */
	case '|': k = T_OROR, len = 2; break;
	case '-':
		if (c1 == '=') k = T_MINUSEQ, len = 2;
		else k = T_MINUS;
		break;
	case '*': k = T_STAR; break;
	case '/': k = T_SLASH; break;
	case '%': k = T_PERCENT; break;
	case '@': k = T_AT; break;
	case '^': k = T_CARET; break;
	default: k = T_ERROR; break; /* unreachable: bad_unit filtered it */
	}
	lx->pos = start + (size_t)len;
	t.kind = k;
	t.span = span_at(lx, start, (size_t)len);
	t.p = s + start;
	t.n = len;
	return t;
}

Token *lex_file(Ctx *c, int file, int *ntok)
{
	Lexer lx;
	lex_init(&lx, c, file);
	size_t cap = 256, n = 0;
	Token *buf = xmalloc(cap * sizeof *buf);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap * sizeof *buf);
		}
		buf[n] = lex_next(&lx);
		if (buf[n++].kind == T_EOF)
			break;
	}
	Token *out = arena_alloc(&c->arena, n * sizeof *out);
	memcpy(out, buf, n * sizeof *out);
	free(buf);
	vec_free(&lx.comments);
	*ntok = (int)n;
	return out;
}
