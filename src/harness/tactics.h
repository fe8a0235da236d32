/*
 * tactics.h — named, parameterized rewrites of Cake IR kernels.
 *
 * A tactic is a reusable schedule change with a precondition: `stages:5`
 * deepens a ring, `tile_n:128` changes the CTA tile, `consumers:1` removes a
 * consumer warpgroup. `cake evolve` applies tactics to a seed kernel, drops
 * what the verifier rejects, ranks the rest and runs the best; `cake apply`
 * applies one by hand; `cake tactics` lists them. docs/TACTICS.md documents
 * every tactic (what it rewrites, its precondition, its parameters).
 *
 * A tactic is spelled NAME or NAME:ARG[:ARG] ("tile_n:128", "regs:mma:224",
 * "persistent"). Applying one takes the text of a program and the name of one
 * of its kernels and yields either the rewritten program as canonical Cake IR
 * (the `cake fmt` form, comments dropped: a candidate's provenance lives in
 * the store, and two paths to the same schedule give the same bytes) or a
 * one-sentence reason why the tactic does not apply. The other kernels of the
 * file are printed unchanged.
 *
 * What a result is guaranteed to be: it re-parses, passes sema, prints back
 * identically, and its rewritten kernel passes the verifier with no error and
 * no CK-RES-009 (register spill) warning; on sm_90a it also derives a plan
 * and lowers to CUDA. A rewrite that would break one of these is reported as
 * not applying, with the finding as the reason — so a tactic never hands the
 * search loop a program that is known to be illegal.
 *
 * The registry is a flat table; tactics_version_str() hashes every tactic's
 * name and version, so the store can record which tactic set produced a
 * candidate. Bump a tactic's version whenever its output for some input
 * changes.
 *
 * Module prefixes: tactic_ (one tactic), tactics_ (the set).
 */
#ifndef CAKE_TACTICS_H
#define CAKE_TACTICS_H

#include "../base/diag.h"

typedef struct TacCtx TacCtx;   /* one application in progress (tactics_int.h) */

typedef struct Tactic {
	const char *name;        /* "tile_n" */
	int version;             /* bump when the rewrite's output changes */
	const char *params;      /* argument spelling, e.g. "SIZE", "ROLE:N", "" for none */
	const char *summary;     /* one line for `cake tactics` */
	int min_args, max_args;  /* number of ':'-separated arguments accepted */
	/* Check and decode the arguments (t's args are split, not yet interpreted);
	 * false = bad arguments, with the message written to the reason. */
	bool (*parse)(TacCtx *t);
	/* Precondition on the parsed, sema'd, verified kernel; false = does not
	 * apply, with a one-sentence reason naming the construct. */
	bool (*pre)(TacCtx *t);
	/* Rewrite the kernel's AST in place (new nodes in the context's arena);
	 * false = does not apply after all (reason written). Runs only after pre. */
	bool (*apply)(TacCtx *t);
	/* Push sensible argument strings (arena or static) for this kernel onto
	 * t's proposal list; NULL = the tactic takes no arguments (one proposal). */
	void (*propose)(TacCtx *t);
	/* An enabling rewrite: its value shows only after the tactics it opens up
	 * (warp_specialize makes a ring worth deepening; more consumer warpgroups
	 * make a wider tile fit), so a search expands its result once whatever
	 * the result's own time. */
	bool enabling;
} Tactic;

typedef enum TacticStatus {
	TACTIC_OK = 0,
	TACTIC_NOT_APPLICABLE,   /* the precondition failed, or the result would spill */
	TACTIC_REJECTED,         /* the rewrite produced a program that the verifier or the
	                          * lowering rejects: `out` holds it (the search loop records
	                          * it as a verifier rejection), `why` the first finding */
	TACTIC_BAD_SPEC,         /* unknown tactic or bad arguments (a usage error) */
	TACTIC_BAD_INPUT,        /* the input has errors, or names no such kernel */
	TACTIC_BROKEN,           /* the rewrite produced a program that does not re-parse
	                          * or pass sema: a bug in the tactic */
} TacticStatus;

/* Every registered tactic in table order; *n receives the count. */
const Tactic *tactics_all(int *n);
/* The tactic called `name` (the part of a spec before the first ':'), or NULL. */
const Tactic *tactic_find(const char *name);
/* Write the tactic-set version ("t1-xxxxxxxx": hash of names and versions) into buf. */
void tactics_version_str(char buf[32]);
/* The tactic-set version as a static string (computed once). */
const char *tactics_version(void);
/* Print the registry: format "text" (default) or "json" (one object per tactic). */
void tactics_print(StrBuf *out, const char *format);

/* Apply `spec` to kernel `kernel` (NULL = the file's first kernel) of source
 * `file` in ss. Findings on the input (parse, sema, verifier) go to dl, so a
 * caller can print them on TACTIC_BAD_INPUT. On TACTIC_OK (and on
 * TACTIC_REJECTED) the whole program, rewritten, is appended to out;
 * otherwise one sentence is appended to why (without the "cake apply:"
 * prefix). */
TacticStatus tactic_apply_source(SourceSet *ss, int file, DiagList *dl, const char *spec,
                                 const char *kernel, StrBuf *out, StrBuf *why);
/* tactic_apply_source on program text held in memory (named "<candidate>"). */
TacticStatus tactic_apply_text(const char *src, size_t len, const char *spec,
                               const char *kernel, StrBuf *out, StrBuf *why);

/* One proposal: a tactic with concrete arguments and what it gave. */
typedef struct TacticProposal {
	char *origin;            /* "tactic:NAME" or "tactic:NAME:ARGS" */
	TacticStatus status;
	char *text;              /* the rewritten program (status OK or REJECTED), else NULL */
	char *reason;            /* why not (status not OK), else NULL */
} TacticProposal;

typedef struct TacticProposals {
	TacticProposal *items;   /* malloc'd; free with tactic_proposals_free */
	int n;
} TacticProposals;

/* For every tactic, a small list of sensible arguments for kernel `kernel`
 * (NULL = first) of the program in src, each applied to it. With only_ok just
 * the proposals that applied are kept. Returns the number kept, or -1 when the
 * input has errors or names no such kernel (out is then empty). */
int tactics_propose(const char *src, size_t len, const char *kernel, bool only_ok,
                    TacticProposals *out);
/* Free every proposal and reset the list. */
void tactic_proposals_free(TacticProposals *ps);

#endif
