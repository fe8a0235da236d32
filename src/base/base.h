/*
 * base.h — the few utilities every pass shares.
 *
 * Memory: one Arena per compilation. Every AST node, string and table made
 * while compiling a file lives in the arena and dies with it, so passes never
 * free individual objects. Growable arrays (Vec) use malloc while being built
 * and are usually frozen into the arena when complete.
 *
 * Text: StrBuf is an append-only string builder used by printers and emitters.
 *
 * Sources: a SourceSet owns the text of every file being compiled. A Span is
 * a (file, byte offset, length, line, col) quadruple into it; diagnostics use
 * it to print the source line and a caret.
 *
 * Module prefix: none for the tiny helpers below (arena_, sb_, vec_, src_).
 */
#ifndef CAKE_BASE_H
#define CAKE_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>

#define CAKE_VERSION "0.1.0"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- arena ---- */

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
	ArenaBlock *head;
	size_t used_total;
} Arena;

/* Initialise an empty arena. */
void arena_init(Arena *a);
/* Free every block the arena owns; the arena can be reused after. */
void arena_free(Arena *a);
/* Allocate n zeroed bytes aligned to 16; aborts with a message on OOM. */
void *arena_alloc(Arena *a, size_t n);
/* Copy n bytes of s into the arena and NUL-terminate. */
char *arena_strndup(Arena *a, const char *s, size_t n);
/* Copy a NUL-terminated string into the arena. */
char *arena_strdup(Arena *a, const char *s);
/* printf into a fresh arena string. */
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);

/* ---- malloc wrappers that never return NULL ---- */

/* malloc that aborts with a message instead of returning NULL. */
void *xmalloc(size_t n);
/* calloc that aborts instead of returning NULL. */
void *xcalloc(size_t n, size_t m);
/* realloc that aborts instead of returning NULL. */
void *xrealloc(void *p, size_t n);
/* strdup that aborts instead of returning NULL. */
char *xstrdup(const char *s);

/* ---- growable array of pointers ---- */

typedef struct Vec {
	void **data;
	int len, cap;
} Vec;

/* Append p to v (malloc-backed). */
void vec_push(Vec *v, void *p);
/* Copy v's elements into an arena array, free v's buffer, return the array. */
void **vec_freeze(Vec *v, Arena *a);
/* Release v's malloc buffer. */
void vec_free(Vec *v);

/* ---- string builder ---- */

typedef struct StrBuf {
	char *s;
	size_t len, cap;
} StrBuf;

/* Append formatted text. */
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append n bytes. */
void sb_putn(StrBuf *b, const char *s, size_t n);
/* Append a NUL-terminated string. */
void sb_puts(StrBuf *b, const char *s);
/* Append one character. */
void sb_putc(StrBuf *b, char c);
/* Append s as a JSON string literal, quotes included. */
void sb_json_str(StrBuf *b, const char *s);
/* Return the NUL-terminated content (never NULL). */
const char *sb_str(StrBuf *b);
/* Release the buffer. */
void sb_free(StrBuf *b);

/* ---- sources and spans ---- */

typedef struct Source {
	char *path;     /* as given on the command line */
	char *text;     /* NUL-terminated copy of the bytes */
	size_t len;
} Source;

typedef struct SourceSet {
	Source *files;
	int n, cap;
} SourceSet;

typedef struct Span {
	int file;       /* index into SourceSet; -1 = no location */
	int line, col;  /* 1-based; col counts bytes */
	int off, len;   /* byte offset and length */
} Span;

#define NOSPAN ((Span){-1, 0, 0, 0, 0})

/* Add a file's bytes to the set; returns its index. */
int src_add(SourceSet *ss, const char *path, const char *text, size_t len);
/* Read a file into the set. Returns the index, or -1 with errno set. */
int src_load(SourceSet *ss, const char *path);
/* Free all sources. */
void src_free(SourceSet *ss);
/* Pointer to the start of the source line holding span s, and its length. */
const char *src_line(const SourceSet *ss, Span s, int *linelen);
/* Span covering a through b (same file). */
Span span_join(Span a, Span b);

/* ---- misc ---- */

/* Length (1..4) of the valid UTF-8 sequence at p (not past end); 0 when the
 * bytes there are not one (overlong, a surrogate, past U+10FFFF, truncated). */
int utf8_seq_len(const unsigned char *p, const unsigned char *end);
/* Read a whole file into a malloc'd NUL-terminated buffer; NULL on error. */
char *read_file(const char *path, size_t *len);
/* Write len bytes to path atomically (tmp + rename). Returns 0 or -1. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* mkdir -p. Returns 0 or -1. */
int mkdir_p(const char *path);

/* ---- command line ---- */

/* If argv[*i] is "opt=V" return V; if it is exactly "opt", return the next
 * argument and advance *i. NULL otherwise; then, if missing is non-NULL,
 * *missing is set true when argv[*i] is exactly "opt" with nothing after it. */
const char *cli_optval(int argc, char **argv, int *i, const char *opt, bool *missing);

#endif
