/*
 * base.c — arena, malloc wrappers, Vec, StrBuf, SourceSet and file helpers.
 *
 * The arena hands out memory from 64 KiB blocks (larger requests get a block
 * of their own). Nothing is freed until arena_free. The source set keeps a
 * NUL-terminated copy of each file so the lexer can run off the end safely.
 */
#include "base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ArenaBlock {
	ArenaBlock *next;
	size_t cap, used;
	_Alignas(16) unsigned char data[];
};

static void oom(size_t n)
{
	fprintf(stderr, "cake: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom(n * m);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s);
	char *d = xmalloc(n + 1);
	memcpy(d, s, n + 1);
	return d;
}

void arena_init(Arena *a)
{
	a->head = NULL;
	a->used_total = 0;
}

void arena_free(Arena *a)
{
	ArenaBlock *b = a->head, *n;
	for (; b; b = n) {
		n = b->next;
		free(b);
	}
	a->head = NULL;
	a->used_total = 0;
}

void *arena_alloc(Arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	ArenaBlock *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = xmalloc(sizeof(ArenaBlock) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	a->used_total += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_vprintf(Arena *a, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	char *d = arena_alloc(a, (size_t)n + 1);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	return d;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return d;
}

void vec_push(Vec *v, void *p)
{
	if (v->len == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->data = xrealloc(v->data, sizeof(void *) * (size_t)v->cap);
	}
	v->data[v->len++] = p;
}

void **vec_freeze(Vec *v, Arena *a)
{
	void **d = arena_alloc(a, sizeof(void *) * (size_t)(v->len + 1));
	if (v->len)
		memcpy(d, v->data, sizeof(void *) * (size_t)v->len);
	free(v->data);
	v->data = NULL;
	v->cap = 0;
	return d;
}

void vec_free(Vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

static void sb_grow(StrBuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void sb_putn(StrBuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void sb_puts(StrBuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_putc(StrBuf *b, char c)
{
	sb_putn(b, &c, 1);
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n > 0) {
		sb_grow(b, (size_t)n);
		vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
		b->len += (size_t)n;
	}
	va_end(ap);
}

void sb_json_str(StrBuf *b, const char *s)
{
	sb_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': sb_puts(b, "\\\""); break;
		case '\\': sb_puts(b, "\\\\"); break;
		case '\n': sb_puts(b, "\\n"); break;
		case '\r': sb_puts(b, "\\r"); break;
		case '\t': sb_puts(b, "\\t"); break;
		default:
			if (*p < 0x20)
				sb_printf(b, "\\u%04x", *p);
			else
				sb_putc(b, (char)*p);
		}
	}
	sb_putc(b, '"');
}

const char *sb_str(StrBuf *b)
{
	if (!b->s)
		sb_grow(b, 0), b->s[0] = 0;
	return b->s;
}

void sb_free(StrBuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

int src_add(SourceSet *ss, const char *path, const char *text, size_t len)
{
	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? ss->cap * 2 : 4;
		ss->files = xrealloc(ss->files, sizeof(Source) * (size_t)ss->cap);
	}
	Source *s = &ss->files[ss->n];
	s->path = xstrdup(path);
	s->text = xmalloc(len + 1);
	memcpy(s->text, text, len);
	s->text[len] = 0;
	s->len = len;
	return ss->n++;
}

int src_load(SourceSet *ss, const char *path)
{
	size_t len;
	char *t = read_file(path, &len);
	if (!t)
		return -1;
	int i = src_add(ss, path, t, len);
	free(t);
	return i;
}

void src_free(SourceSet *ss)
{
	for (int i = 0; i < ss->n; i++) {
		free(ss->files[i].path);
		free(ss->files[i].text);
	}
	free(ss->files);
	ss->files = NULL;
	ss->n = ss->cap = 0;
}

const char *src_line(const SourceSet *ss, Span s, int *linelen)
{
	if (s.file < 0 || s.file >= ss->n) {
		*linelen = 0;
		return "";
	}
	const Source *f = &ss->files[s.file];
	size_t off = (size_t)s.off <= f->len ? (size_t)s.off : f->len;
	size_t b = off, e = off;
	while (b > 0 && f->text[b - 1] != '\n')
		b--;
	while (e < f->len && f->text[e] != '\n')
		e++;
	*linelen = (int)(e - b);
	return f->text + b;
}

Span span_join(Span a, Span b)
{
	if (a.file < 0)
		return b;
	if (b.file < 0 || b.file != a.file)
		return a;
	Span r = a;
	int end = b.off + b.len;
	if (end > a.off + a.len)
		r.len = end - a.off;
	return r;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		errno = EISDIR;
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0) {
			if (ferror(f)) {
				int e = errno;
				free(buf);
				fclose(f);
				errno = e ? e : EIO;
				return NULL;
			}
			break;
		}
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	size_t pl = strlen(path);
	char *tmp = xmalloc(pl + 32);
	snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		free(tmp);
		return -1;
	}
	if (fwrite(data, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				free(p);
				return -1;
			}
			*s = '/';
		}
	}
	int r = mkdir(p, 0755);
	free(p);
	return (r == 0 || errno == EEXIST) ? 0 : -1;
}

const char *cli_optval(int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t n = strlen(opt);
	const char *a = argv[*i];
	if (strncmp(a, opt, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != 0)
		return NULL;
	if (*i + 1 >= argc) {
		if (missing)
			*missing = true;
		return NULL;
	}
	return argv[++*i];
}

int utf8_seq_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	int n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	if (end - p < n)
		return 0;
	unsigned cp = c & (0x3f >> (n - 1));
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
