/*
 * diag.h — findings, collected never thrown.
 *
 * Every pass (parser, sema, verifier rules, lowering) reports problems by
 * appending a Diag to a DiagList. Nothing stops at the first finding. Each
 * Diag carries a stable rule ID, a severity, the primary span, and the
 * localisation an agent needs: the role, resource (buffer/fragment/param),
 * barrier, pipeline, stage, phase and iteration involved, the violated
 * condition, a related span (the other end of a handoff) and a one-line hint.
 *
 * A finding may carry machine-applicable fixes: each a one-line description
 * and one or more text edits (replace `len` bytes at a byte offset of a file
 * with new text; len 0 inserts). A rule attaches one where the repair is
 * mechanical (a count to replace, an `arrive` to insert); `cake check --fix`
 * and the MCP `check` tool apply them with diag_apply_fixes.
 *
 * Three printers render a list: gcc-style text with source line and caret,
 * JSON (schema in docs/DIAGNOSTICS.md) and SARIF 2.1.0 (fixes as SARIF
 * `fixes` with artifactChanges and replacements).
 */
#ifndef CAKE_DIAG_H
#define CAKE_DIAG_H

#include "base.h"

typedef enum Severity { SEV_NOTE, SEV_WARNING, SEV_ERROR } Severity;

typedef struct DiagEdit {
	Span span;            /* the bytes replaced (file, off, len; line/col of the start) */
	char *text;           /* the replacement (malloc'd; "" deletes) */
} DiagEdit;

typedef struct DiagFix {
	char *desc;           /* one line, e.g. "replace 'arrivals 1' with 'arrivals 2'" */
	DiagEdit *edits;      /* at least one; malloc'd */
	int nedits;
} DiagFix;

typedef struct Diag {
	const char *rule;     /* stable ID, e.g. "CK-SYN-001" (static string) */
	Severity sev;
	Span span;
	char *msg;            /* one sentence, no trailing period */
	/* localisation; NULL / -1 when not relevant */
	char *role;
	char *resource;       /* smem buffer, fragment or global param */
	char *barrier;
	char *pipeline;
	int stage, phase;     /* -1 when not relevant */
	char *iter;           /* e.g. "k=6"; NULL when not relevant */
	char *condition;      /* the violated condition, e.g. "tx_bytes(full) == 32768" */
	char *hint;           /* one-line fix hint */
	Span related;         /* the other end (NOSPAN when none) */
	char *related_msg;    /* text for the related "note:" line */
	DiagFix **fixes;      /* machine-applicable fixes, best first (malloc'd) */
	int nfixes;
} Diag;

typedef struct DiagList {
	Diag **items;
	int n, cap;
	int nerr, nwarn, nnote;
	int max;              /* stop recording (but keep counting) past this many; 0 = 10000 */
	int dropped;
	Diag *spill;          /* scratch finding handed out past `max` (owned, reused) */
} DiagList;

/* Start a new finding; fields other than rule/sev/span/msg start empty.
 * The returned Diag is owned by the list (malloc-backed). */
Diag *diag_add(DiagList *dl, const char *rule, Severity sev, Span span,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Set a string field of d (role, resource, ...) with printf formatting. */
void diag_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Attach the related span and its note text. */
void diag_related(Diag *d, Span s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Start a fix of d described by the printf-formatted line; add its edits
 * with diag_fix_edit. The fix is owned by d. */
DiagFix *diag_fix(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add an edit to f: replace the s.len bytes at s.off of file s.file with
 * text (s.len 0 inserts before s.off). s.line/s.col must locate s.off. */
void diag_fix_edit(DiagFix *f, Span s, const char *text);
/* The span of len bytes at byte offset off of file `file` in ss, with its
 * line and column computed; NOSPAN when off is outside the file. */
Span diag_span_at(const SourceSet *ss, int file, int off, int len);
/* Apply fixes to file `file` of ss: the first fix of each finding of dl
 * (in list order) whose edits all lie in that file and do not overlap an
 * edit already taken (an identical edit counts as already applied). The
 * resulting text goes to out (the original when nothing applies); returns
 * the number of findings whose fix was applied. */
int diag_apply_fixes(const SourceSet *ss, const DiagList *dl, int file, StrBuf *out);
/* Free every finding. */
void diag_free(DiagList *dl);
/* Remove the recorded findings at index from and later whose rule is one of
 * rules (NULL-terminated), keeping the order of the rest and the counts true;
 * returns how many were removed. */
int diag_remove_rules(DiagList *dl, int from, const char *const *rules);
/* Stable order: by file, line, col, then rule ID. */
void diag_sort(DiagList *dl);
/* Name of a severity: "error", "warning", "note". */
const char *sev_name(Severity s);
/* Effective recording cap of dl (dl->max, or 10000 when 0). */
int diag_cap(const DiagList *dl);

typedef enum DiagFormat { FMT_TEXT, FMT_JSON, FMT_SARIF } DiagFormat;

/* gcc-style text: "file:line:col: error: msg [ID]", source line, caret, note. */
void diag_print_text(StrBuf *out, const SourceSet *ss, const DiagList *dl, bool color);
/* JSON document described in docs/DIAGNOSTICS.md. verifier_version may be NULL. */
void diag_print_json(StrBuf *out, const SourceSet *ss, const DiagList *dl,
                     const char *verifier_version);
/* SARIF 2.1.0 log with one run; ruleId = Diag.rule. */
void diag_print_sarif(StrBuf *out, const SourceSet *ss, const DiagList *dl,
                      const char *verifier_version);

#endif
