/*
 * fix.c — machine-applicable fixes for the verifier's findings.
 *
 * A rule whose repair is mechanical attaches a fix (base/diag.h) at its
 * report site through one of the helpers below, so the rule files change by
 * a line each and the text surgery lives here. Every fix is byte-exact
 * against the checked source and is tested by tests/cli/fix.sh: after it,
 * the file is clean of the finding and has no finding it did not have.
 *
 *   v_fix_decl_int   replace the integer after a keyword of a declaration
 *                    (`arrivals 1` -> `arrivals 2`, `stages 6` -> `stages 5`,
 *                    `regs 230` -> `regs 224`). The token is found in the
 *                    declaration's own span: the keyword as a whole word,
 *                    then blanks, then the number (so a pipeline named
 *                    `stages` does not confuse it).
 *   v_fix_arrive     insert the missing `arrive BAR` of a ring barrier
 *                    nobody arrives on: in the one producer role's loop
 *                    pipelined on the barrier's ring, on the line after the
 *                    last statement of the loop body that reads a buffer of
 *                    the ring, and when that read is a wgmma, after the
 *                    `wgmma_wait 0` that retires it (releasing a stage
 *                    while wgmma still reads it would be CK-RACE-003), and
 *                    after any `fence` that directly follows, or that follows
 *                    a run of stores and assignments after the read (a fence
 *                    there orders this iteration's stores before the release). When
 *                    the role's arrive weight differs from the declared
 *                    `arrivals`, the same fix also declares the weight.
 *                    No fix when any of this is ambiguous: no single
 *                    producer, no single such loop, no read, or a wgmma not
 *                    retired by a `wgmma_wait 0` in the same body.
 */
#include "verify_int.h"

#include <ctype.h>

/* The span of the number after keyword kw in declaration d, or NOSPAN. */
static Span decl_int_span(const Sched *v, const Decl *d, const char *kw)
{
	const SourceSet *ss = v->c->srcs;
	Span s = d->span;
	if (!ss || s.file < 0 || s.file >= ss->n || s.off < 0 || (size_t)s.off + (size_t)s.len > ss->files[s.file].len)
		return NOSPAN;
	const char *t = ss->files[s.file].text;
	int end = s.off + s.len, n = (int)strlen(kw);
	for (int i = s.off; i + n < end; i++) {
		if (strncmp(t + i, kw, (size_t)n) != 0)
			continue;
		if (i > s.off && (isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_'))
			continue;
		int j = i + n;
		if (t[j] != ' ' && t[j] != '\t')
			continue;
		while (j < end && (t[j] == ' ' || t[j] == '\t'))
			j++;
		int k = j;
		while (k < end && (isalnum((unsigned char)t[k]) || t[k] == '_'))
			k++;
		if (k > j && isdigit((unsigned char)t[j]))
			return diag_span_at(ss, s.file, j, k - j);
	}
	return NOSPAN;
}

DiagFix *v_fix_decl_int(Sched *v, Diag *d, const Decl *decl, const char *kw, long long value)
{
	Span at = decl_int_span(v, decl, kw);
	if (at.file < 0)
		return NULL;
	const char *t = v->c->srcs->files[at.file].text + at.off;
	DiagFix *f = diag_fix(d, "replace '%s %.*s' with '%s %lld'", kw, at.len, t, kw, value);
	char num[32];
	snprintf(num, sizeof num, "%lld", value);
	diag_fix_edit(f, at, num);
	return f;
}

/* Does the subtree of statement index i read a buffer of ring pipe p? Does
 * it issue a wgmma? */
static void subtree_reads(const Sched *v, int i, int p, bool *reads, bool *wgmma)
{
	*reads = *wgmma = false;
	for (int j = i; j < v->st[i].end && j < v->nst; j++) {
		int bufs[16];
		int n = sched_smem_read(v, v->st[j].s, bufs, 16);
		for (int k = 0; k < n; k++)
			if (bufs[k] >= 0 && v->smems[bufs[k]].pipe == p) {
				*reads = true;
				if (v->st[j].s->kind == S_WGMMA)
					*wgmma = true;
			}
	}
}

/* Byte offset just past the line holding the end of statement s (its
 * closing braces included), and the indentation of the line it starts on. */
static int line_after(const Sched *v, const Stmt *s, StrBuf *indent)
{
	const Source *f = &v->c->srcs->files[s->span.file];
	int end = s->span.off + s->span.len;
	if (s->body_end.file == s->span.file && s->body_end.off + s->body_end.len > end)
		end = s->body_end.off + s->body_end.len;
	if (s->els_end.file == s->span.file && s->els_end.off + s->els_end.len > end)
		end = s->els_end.off + s->els_end.len;
	int ls = s->span.off;
	while (ls > 0 && f->text[ls - 1] != '\n')
		ls--;
	for (int i = ls; i < s->span.off && (f->text[i] == ' ' || f->text[i] == '\t'); i++)
		sb_putc(indent, f->text[i]);
	while ((size_t)end < f->len && f->text[end] != '\n')
		end++;
	return (size_t)end < f->len ? end + 1 : end;
}

DiagFix *v_fix_arrive(Sched *v, Diag *d, int b)
{
	if (b < 0 || b >= v->nbars || v->bars[b].pipe < 0 || !v->c->srcs)
		return NULL;
	SchedBar *B = &v->bars[b];
	int p = B->pipe;
	for (int i = 0; i < v->nst; i++)
		if (sched_bar_arrived(v, v->st[i].s) == b)
			return NULL;   /* someone arrives: the problem is elsewhere */
	/* the producer: the one declared producer role */
	if (B->d->nproducers != 1)
		return NULL;
	int r = sched_role(v, B->d->producers[0]);
	if (r < 0)
		return NULL;
	/* its one loop pipelined on the ring */
	int loop = -1;
	for (int i = 0; i < v->nst; i++) {
		const Stmt *s = v->st[i].s;
		if (s->kind == S_FOR && v->st[i].role == r && s->pipe && sched_pipe(v, s->pipe) == p) {
			if (loop >= 0)
				return NULL;
			loop = i;
		}
	}
	if (loop < 0)
		return NULL;
	const Stmt *L = v->st[loop].s;
	int last = -1;
	bool async = false;
	for (int k = 0; k < L->nbody; k++) {
		int i = sched_stmt_index(v, L->body[k]);
		bool reads, wg;
		if (i < 0)
			return NULL;
		subtree_reads(v, i, p, &reads, &wg);
		if (reads) {
			last = k;
			async = wg;
		}
	}
	if (last < 0)
		return NULL;
	int after = last;
	if (async) {
		after = -1;
		for (int k = last + 1; k < L->nbody && after < 0; k++)
			if (L->body[k]->kind == S_WGMMA_WAIT) {
				if (L->body[k]->count != 0)
					return NULL;
				after = k;
			}
		if (after < 0)
			return NULL;
	}
	/* a fence right after the last use belongs before the release too, and so does one that
	 * follows a run of stores and assignments after it (the stores it orders were written
	 * before the release; `load t <- ring; store buf <- t; fence proxy_async`) */
	int k = after + 1;
	while (k < L->nbody && (L->body[k]->kind == S_STORE || L->body[k]->kind == S_ASSIGN))
		k++;
	if (k > after + 1 && k < L->nbody && L->body[k]->kind == S_FENCE)
		after = k;
	while (after + 1 < L->nbody && L->body[after + 1]->kind == S_FENCE)
		after++;
	const Stmt *s = L->body[after];
	StrBuf text = {0};
	int off = line_after(v, s, &text);
	const Source *f = &v->c->srcs->files[s->span.file];
	if ((size_t)off == f->len && (off == 0 || f->text[off - 1] != '\n')) {
		StrBuf t2 = {0};
		sb_printf(&t2, "\n%s", sb_str(&text));
		sb_free(&text);
		text = t2;
	}
	sb_printf(&text, "arrive %s\n", B->name);
	int weight = v->roles[r].arrive_weight;
	bool recount = B->d->arrivals != weight;
	Span at = recount ? decl_int_span(v, B->d, "arrivals") : NOSPAN;
	if (recount && at.file < 0) {
		sb_free(&text);
		return NULL;
	}
	DiagFix *fx = diag_fix(d, "insert `arrive %s` in role '%s' after line %d (the last use of ring '%s' in "
	                       "the iteration)%s", B->name, v->roles[r].name, s->span.line, v->pipes[p].name,
	                       recount ? ", and declare the arrivals it gives" : "");
	diag_fix_edit(fx, diag_span_at(v->c->srcs, s->span.file, off, 0), sb_str(&text));
	sb_free(&text);
	if (recount) {
		char num[32];
		snprintf(num, sizeof num, "%d", weight);
		diag_fix_edit(fx, at, num);
	}
	return fx;
}
