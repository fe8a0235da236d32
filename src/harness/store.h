/*
 * store.h — the candidate store: the memory of Cake's search loop.
 *
 * One SQLite file (WAL mode, no server) holds every candidate Cake has seen
 * (content-addressed canonical IR text, its family, parent and origin), every
 * evaluation of a candidate (which kernel, which shape, which harness judged
 * it, on which GPU, with what verdict and time), the verifier findings of
 * an evaluation, and the gate runs of the outer loop (a later harness
 * re-judging every stored candidate, and each work item whose outcome it
 * changed, so a candidate that disappears is traced to the rule that
 * removed it). `cake eval`, `cake evolve`, `cake log/show/best/diff`, the
 * cost-model calibration, the outer loop and the MCP server all go through
 * this header; none of them sees SQL. docs/STORE.md is the full reference
 * (schema, migrations, refusals, concurrency, crash safety, export format).
 *
 * Handles and memory. store_open gives a Store; one handle per thread (a
 * process may hold several). Every record a query returns is allocated in an
 * Arena the caller passes, so results die with the caller's arena and
 * nothing needs freeing one by one. Records passed *in* are only read.
 *
 * Errors. Every call returns a StoreStatus. Anything other than STORE_OK and
 * the documented outcomes (STORE_NOT_FOUND, STORE_CLAIMED, ...) leaves a
 * one-line message in store_errmsg() that names the store file, the problem
 * and, where there is one, the fix. store_open, which has no handle yet,
 * appends its message to a StrBuf instead.
 *
 * Concurrency. Several processes may share one file: writes are single
 * short transactions (BEGIN IMMEDIATE, 10 s busy timeout), readers never
 * block writers, and store_claim hands each work item (candidate, kernel,
 * shape, harness) to exactly one live owner. Each evaluation is committed in
 * its own transaction, so a process killed at any moment loses no evaluation
 * store_add_eval reported as done.
 *
 * Module prefix: store_.
 */
#ifndef CAKE_STORE_H
#define CAKE_STORE_H

#include "../base/base.h"
#include "../base/diag.h"

/* Where commands keep the store unless given --store PATH. */
#define STORE_DEFAULT_PATH ".cake/store.db"
/* Schema version this binary writes; older files are migrated on open. */
#define STORE_SCHEMA_VERSION 3
/* PRAGMA application_id of a Cake store: "CAKE" in ASCII. */
#define STORE_APPLICATION_ID 0x43414B45
/* How long a write waits for another process's transaction. */
#define STORE_BUSY_TIMEOUT_MS 10000
/* A claim lease comfortably longer than one evaluation (compile, watchdog,
 * timing); a worker renews it with store_claim when it runs longer. */
#define STORE_LEASE_MS (15 * 60 * 1000)
/* Hex digits of a candidate id (xxh3-128). */
#define STORE_ID_LEN 32

typedef struct Store Store;

typedef enum StoreStatus {
	STORE_OK = 0,
	STORE_NOT_FOUND,     /* the lookup matched nothing (not an error) */
	STORE_AMBIGUOUS,     /* an id prefix matched several candidates */
	STORE_CLAIMED,       /* store_claim: the caller now holds the work item */
	STORE_ALREADY_DONE,  /* store_claim: a conclusive evaluation already exists */
	STORE_BUSY,          /* store_claim: another owner holds a live claim */
	STORE_INVALID,       /* a bad argument: origin, shape, id, verdict, missing field */
	STORE_MISSING,       /* store_open without STORE_CREATE: the file does not exist */
	STORE_NOT_A_DB,      /* refused: not a SQLite database, or corrupt */
	STORE_FOREIGN,       /* refused: a SQLite database that is not a Cake store */
	STORE_TOO_NEW,       /* refused: schema newer than this binary knows */
	STORE_ERROR,         /* SQLite or I/O failure (locked past the timeout, disk full, ...) */
} StoreStatus;

/* Name of a status ("ok", "not_found", "ambiguous", ...). */
const char *store_status_name(StoreStatus s);

/* ---- opening ---- */

enum {
	STORE_CREATE = 1,    /* create the file (and its parent directories) when missing */
};

/* Open the store at path (NULL = STORE_DEFAULT_PATH), creating it when
 * missing and flags has STORE_CREATE, migrating an older schema in one
 * transaction. Refuses a file that is not SQLite, a foreign SQLite database
 * and a newer schema without changing a byte of it. Returns STORE_OK with
 * *out set, or another status with *out NULL and one line appended to err
 * (which may be NULL). A zero-length file is initialised as a new store. */
StoreStatus store_open(const char *path, unsigned flags, Store **out, StrBuf *err);
/* Close the handle (NULL is a no-op). Committed work is already durable. */
void store_close(Store *st);
/* The last error message of st ("" when none). Valid until the next call on st. */
const char *store_errmsg(const Store *st);
/* The path st was opened with. */
const char *store_path(const Store *st);
/* Schema version of the open file (STORE_SCHEMA_VERSION after open). */
int store_schema_version(Store *st);
/* Run SQLite's integrity check: STORE_OK, or STORE_ERROR naming the first problems. */
StoreStatus store_check(Store *st);

/* ---- candidates ---- */

typedef struct StoreCandidate {
	char id[STORE_ID_LEN + 1];  /* output: xxh3-128 hex of text */
	const char *text;           /* canonical (`cake fmt`) text; required */
	const char *family;         /* NULL when unknown */
	const char *parent;         /* full id of the candidate it was derived from, or NULL */
	const char *origin;         /* "tactic:NAME", "tactic:NAME:ARGS", "agent:NAME" or "human" */
	int64_t created_ms;         /* Unix ms; 0 on input = now */
} StoreCandidate;

/* Write the candidate id of text (xxh3-128 of its bytes, high 64 bits first,
 * 32 lowercase hex digits) into id. */
void store_hash_text(const char *text, char id[STORE_ID_LEN + 1]);
/* Insert a candidate unless its text is already stored (then nothing changes:
 * the first family, parent and origin are kept). Writes the id into id_out
 * (may be NULL) and, when inserted is non-NULL, whether a row was added.
 * STORE_INVALID for a bad origin or parent id. */
StoreStatus store_add_candidate(Store *st, const StoreCandidate *c, char id_out[STORE_ID_LEN + 1],
                                bool *inserted);
/* Resolve a full id or a unique prefix (1..32 hex digits, any case) to a full
 * id. STORE_NOT_FOUND, or STORE_AMBIGUOUS with the matches in the message. */
StoreStatus store_resolve(Store *st, const char *prefix, char id[STORE_ID_LEN + 1]);
/* Fetch the candidate named by a full id or unique prefix; strings in a. */
StoreStatus store_get_candidate(Store *st, const char *prefix, Arena *a, StoreCandidate *out);

/* ---- evaluations ---- */

typedef enum StoreVerdict {
	STORE_V_NONE = 0,       /* unset: never stored */
	STORE_V_OK,             /* correct; times are set when it was timed */
	STORE_V_MISMATCH,       /* wrong numbers (rel_err says how wrong; NaN is stored as NULL) */
	STORE_V_HANG,           /* the watchdog fired */
	STORE_V_FAULT,          /* illegal address, misaligned access, signal in the child */
	STORE_V_COMPILE_ERROR,  /* NVRTC rejected the generated code */
	STORE_V_LAUNCH_ERROR,   /* the launch or an allocation failed */
	STORE_V_REFUSED,        /* lowering or the shape's domain refused it */
	STORE_V_REJECTED,       /* the verifier blocked it (diagnostics say why) */
	STORE_V_NO_GPU,         /* nothing was run: no driver or device */
	STORE_V_INTERNAL_ERROR, /* a bug or an environment failure in the harness */
	STORE_V_DRY_RUN,        /* recorded without running (--dry-run) */
	STORE_NVERDICT
} StoreVerdict;

/* Name of a verdict ("ok", "compile_error", ...); "?" for an unknown value. */
const char *store_verdict_name(StoreVerdict v);
/* Parse a verdict name; STORE_V_NONE when s is not one. */
StoreVerdict store_verdict_parse(const char *s);
/* Whether v judges the candidate (ok .. rejected), so that store_find_eval and
 * store_claim treat the work as done; no_gpu, internal_error and dry_run do not. */
bool store_verdict_conclusive(StoreVerdict v);

/* The harness that judged an evaluation. NULL or "" means none (e.g. no
 * cost model yet); no component may contain ';'. */
typedef struct StoreHarness {
	const char *compiler;    /* CAKE_VERSION */
	const char *verifier;    /* verifier_version() */
	const char *cost_model;  /* cost-model version */
	const char *tactics;     /* tactic-set version */
} StoreHarness;

/* Append the combined dedup key of h to out:
 * "compiler=C;verifier=V;cost=M;tactics=T". STORE_INVALID when a component
 * holds ';' (out unchanged). */
StoreStatus store_harness_key(const StoreHarness *h, StrBuf *out);
/* Append the canonical form of a shape ("N=8192, M=64,K=8" -> "K=8,M=64,N=8192":
 * NAME=VALUE pairs sorted by name, no spaces, integer values without leading
 * zeros) to out. STORE_INVALID for a malformed or repeated name (out unchanged).
 * "" is the shape of a kernel with no dimensions. */
StoreStatus store_shape_canon(const char *shape, StrBuf *out);

typedef struct StoreEval {
	int64_t id;              /* output: row id, increasing in insertion order */
	const char *cand;        /* full candidate id; required */
	const char *family;      /* output: the candidate's family (NULL when none) */
	const char *kernel;      /* kernel name inside the candidate's file; required */
	const char *shape;       /* canonicalised on input (store_shape_canon) */
	uint64_t seed;           /* input seed */
	const char *target;      /* "sm_90a"; NULL when unknown */
	const char *gpu;         /* device name; NULL when none */
	const char *driver;      /* driver version, e.g. "13.0"; NULL when none */
	StoreHarness harness;
	const char *harness_key; /* output: store_harness_key of harness */
	StoreVerdict verdict;    /* required */
	const char *message;     /* one line: the error, or a note; NULL when none */
	double predicted_us;     /* NaN = none (the NULL of every double below) */
	double median_us, min_us, max_us;
	double rel_err;
	double gpu_s;            /* GPU seconds spent, for budgets (0 when none) */
	int64_t time_ms;         /* Unix ms; 0 on input = now */
	const char *campaign;    /* groups the evaluations of one `cake evolve` run; NULL none */
	const char *worker;      /* who recorded it (a claim owner); NULL none (schema v2) */
} StoreEval;

/* Initialise an input record: everything empty, every double NaN. */
void store_eval_init(StoreEval *e);
/* How bad a GPU verdict is: hang 5, fault 4, mismatch 3, launch_error 2, ok 1;
 * 0 for a verdict that says nothing about the GPU (the rule impact and the
 * failure mining both judge a work item by its worst). */
int store_gpu_rank(StoreVerdict v);
/* qsort order of evaluations by work item (candidate, kernel, shape), then
 * by row id: the grouping of `cake gate --store` and `cake mine`. */
int store_eval_cmp_item(const void *a, const void *b);
/* Record an evaluation and, when dl is non-NULL, its findings (file names
 * from ss, which may be NULL), and remove any claim on its (candidate,
 * kernel, shape, harness) -- all in one transaction. *id_out (may be NULL)
 * receives the row id. The candidate must exist. */
StoreStatus store_add_eval(Store *st, const StoreEval *e, const SourceSet *ss, const DiagList *dl,
                           int64_t *id_out);
/* The newest conclusive evaluation of (cand, kernel, shape, harness) into out
 * (strings in a), or STORE_NOT_FOUND. cand is a full id. */
StoreStatus store_find_eval(Store *st, const char *cand, const char *kernel, const char *shape,
                            const StoreHarness *h, Arena *a, StoreEval *out);
/* Fetch evaluation id into out (strings in a), or STORE_NOT_FOUND. */
StoreStatus store_get_eval(Store *st, int64_t id, Arena *a, StoreEval *out);

/* ---- diagnostics of an evaluation ---- */

typedef struct StoreDiag {
	int seq;                 /* 0-based order within the evaluation */
	const char *rule;        /* "CK-RES-002" */
	Severity sev;
	const char *msg;
	const char *file;        /* NULL when the finding has no location */
	int line, col, len;      /* 0 when no location */
	const char *role, *resource, *barrier, *pipeline;
	int stage, phase;        /* -1 when not relevant */
	const char *iter, *condition, *hint;
	const char *rel_file;    /* the related span, NULL when none */
	int rel_line, rel_col;
	const char *rel_msg;
} StoreDiag;

/* Append every finding of dl (file names from ss, may be NULL) to evaluation
 * eval_id after those it has, in one transaction. */
StoreStatus store_add_diags(Store *st, int64_t eval_id, const SourceSet *ss, const DiagList *dl);
/* The findings of evaluation eval_id in order (array and strings in a). */
StoreStatus store_eval_diags(Store *st, int64_t eval_id, Arena *a, StoreDiag **out, int *n);

/* ---- gate runs: the current harness re-judging stored candidates (schema v3) ---- */

/* What the harness decided about a work item before any GPU run. */
typedef enum StoreOutcome {
	STORE_OUT_NONE = 0,      /* unset: never stored */
	STORE_OUT_ACCEPTED,      /* passed the verifier, the lowering and the shape refusals */
	STORE_OUT_REJECTED,      /* a verifier (or front-end) error blocked it */
	STORE_OUT_REFUSED,       /* the lowering, the domain, the launch layer or the family refused it */
	STORE_NOUTCOME
} StoreOutcome;

/* How an outcome that changed relates to what the GPU said. */
typedef enum StoreImpactKind {
	STORE_IMP_NONE = 0,
	STORE_IMP_TRUE_POSITIVE,   /* newly blocked; it had hung, faulted, mismatched or failed to launch */
	STORE_IMP_FALSE_POSITIVE,  /* newly blocked; it had run ok */
	STORE_IMP_UNRUN,           /* newly blocked; never run on a GPU */
	STORE_IMP_NEWLY_ACCEPTED,  /* blocked before, accepted now (a rule was relaxed or fixed) */
	STORE_IMP_RULE_CHANGED,    /* blocked before and now, by another rule or stage */
	STORE_NIMPACT
} StoreImpactKind;

/* Name of an outcome ("accepted", "rejected", "refused"); "?" for an unknown value. */
const char *store_outcome_name(StoreOutcome o);
/* Parse an outcome name; STORE_OUT_NONE when s is not one. */
StoreOutcome store_outcome_parse(const char *s);
/* Name of an impact ("true_positive", ..., "rule_changed"); "?" for an unknown value. */
const char *store_impact_name(StoreImpactKind k);
/* Parse an impact name; STORE_IMP_NONE when s is not one. */
StoreImpactKind store_impact_parse(const char *s);

/* One re-judgement of the whole store by one harness (`cake gate --store`). */
typedef struct StoreGateRun {
	int64_t id;              /* output: row id */
	int64_t time_ms;         /* Unix ms; 0 on input = now */
	StoreHarness harness;    /* the harness that re-judged (compiler required) */
	const char *harness_key; /* output */
	int items;               /* work items (candidate, kernel, shape) re-judged */
	int changed;             /* output: impact rows recorded with it */
	const char *worker;      /* HOST:PID, or NULL */
} StoreGateRun;

/* One work item whose outcome differs between an earlier evaluation and a gate run. */
typedef struct StoreImpact {
	int64_t run;             /* output: the gate run */
	int64_t run_ms;          /* output: its time */
	const char *run_harness; /* output: its harness key */
	int seq;                 /* output: 0-based order within the run */
	const char *cand;        /* full candidate id; required */
	const char *kernel;      /* required */
	const char *shape;       /* canonicalised on input */
	int64_t eval;            /* the newest evaluation that had the old outcome (0: none) */
	const char *old_harness; /* that evaluation's harness key; required */
	StoreOutcome old_outcome;/* required */
	const char *old_rule;    /* the rule that blocked it then, NULL when none */
	StoreOutcome new_outcome;/* required */
	const char *new_rule;    /* the rule that blocks it now, NULL when none */
	const char *rule;        /* the rule the change is charged to (new_rule, or old_rule when
	                          * newly accepted); NULL for a shape refusal */
	StoreImpactKind impact;  /* required */
	StoreVerdict gpu_verdict;/* the work item's worst recorded GPU verdict, STORE_V_NONE when never run */
	const char *message;     /* one line: the new finding or refusal, NULL when none */
} StoreImpact;

/* Record a gate run and its impact rows in one transaction; run->id,
 * run->harness_key and run->changed are not read. *id_out (may be NULL) gets
 * the run's id. STORE_INVALID for a bad row (unknown candidate, missing field). */
StoreStatus store_add_gate_run(Store *st, const StoreGateRun *run, const StoreImpact *rows, int n,
                               int64_t *id_out);
/* Gate runs, newest first (limit 0 = all; array and strings in a). */
StoreStatus store_list_gate_runs(Store *st, int limit, Arena *a, StoreGateRun **out, int *n);
/* Impact rows, oldest run first and in order within a run: of candidate cand
 * (a full id or unique prefix; NULL: every candidate) and of gate run `run`
 * (0: every run). Array and strings in a. */
StoreStatus store_list_impact(Store *st, const char *cand, int64_t run, Arena *a, StoreImpact **out, int *n);

/* ---- claims: one evaluation per work item across processes ---- */

/* Write "HOST:PID" into buf (an owner string for store_claim). */
void store_default_owner(char *buf, size_t len);
/* Atomically take the work item (cand, kernel, shape, harness) for owner for
 * lease_ms milliseconds. STORE_ALREADY_DONE when a conclusive evaluation of it
 * exists, STORE_BUSY when another owner holds an unexpired claim, otherwise
 * STORE_CLAIMED (an expired claim is taken over; the same owner renews its
 * lease). store_add_eval of the item releases the claim. */
StoreStatus store_claim(Store *st, const char *cand, const char *kernel, const char *shape,
                        const StoreHarness *h, const char *owner, int64_t lease_ms);
/* Give up owner's claim on the item without evaluating it (STORE_NOT_FOUND
 * when owner holds none). */
StoreStatus store_release(Store *st, const char *cand, const char *kernel, const char *shape,
                          const StoreHarness *h, const char *owner);
/* Drop every claim of owner (a worker shutting down); *n (may be NULL) gets the count. */
StoreStatus store_release_all(Store *st, const char *owner, int *n);

/* ---- queries ---- */

/* Filters shared by the queries; a zeroed filter matches everything. */
typedef struct StoreFilter {
	const char *family;      /* candidate family */
	const char *campaign;
	const char *cand;        /* full id or unique prefix (else STORE_NOT_FOUND / STORE_AMBIGUOUS) */
	const char *kernel;
	const char *shape;       /* canonicalised before matching */
	const char *verdict;     /* verdict name */
	const char *harness;     /* combined harness key */
	const char *gpu;
	int limit;               /* 0 = no limit */
} StoreFilter;

/* Evaluations matching f, newest first (array and strings in a). */
StoreStatus store_list_evals(Store *st, const StoreFilter *f, Arena *a, StoreEval **out, int *n);
/* The ok evaluation with the smallest median time matching f (ties: the
 * earliest); give family (or a candidate's family), shape and optionally
 * kernel. STORE_NOT_FOUND when none was timed. */
StoreStatus store_best(Store *st, const StoreFilter *f, Arena *a, StoreEval *out);
/* The frontier: the best ok evaluation per (family, kernel, shape) among
 * those matching f, ordered by family, kernel, shape (f->limit ignored). */
StoreStatus store_frontier(Store *st, const StoreFilter *f, Arena *a, StoreEval **out, int *n);

typedef struct StoreCounts {
	const char *campaign;    /* NULL: evaluations outside any campaign */
	int n[STORE_NVERDICT];   /* evaluations per verdict (n[0] unused) */
	int total;
	double gpu_s;            /* GPU seconds spent */
} StoreCounts;

/* Counts by verdict per campaign among evaluations matching f, ordered by
 * campaign name (no campaign first). */
StoreStatus store_counts(Store *st, const StoreFilter *f, Arena *a, StoreCounts **out, int *n);
/* Append the evaluations matching f, oldest first, as JSON lines (format
 * cake-measure/1, one object per line, docs/STORE.md) to out; *n (may be
 * NULL) gets the line count. */
StoreStatus store_export_jsonl(Store *st, const StoreFilter *f, StrBuf *out, int *n);

/* ---- printers (for the query commands) ---- */

typedef enum StoreFormat { STORE_FMT_TEXT, STORE_FMT_JSON } StoreFormat;

/* Append Unix milliseconds as ISO 8601 UTC ("2026-12-01T09:24:37.068Z"), as every printer shows times. */
void store_print_time(StrBuf *out, int64_t ms);
/* One evaluation as a JSON object (the object of the export and of the printers). */
void store_eval_json(StrBuf *out, const StoreEval *e);
/* Evaluations: a text table, one line each, or JSON {"schema":"cake-evals/1","evaluations":[...]}. */
void store_print_evals(StrBuf *out, const StoreEval *e, int n, StoreFormat fmt);
/* A candidate (header, text) and its evaluations; JSON schema cake-candidate/1. */
void store_print_candidate(StrBuf *out, const StoreCandidate *c, const StoreEval *e, int n,
                           StoreFormat fmt);
/* Findings of an evaluation: gcc-style lines, or a JSON array of objects. */
void store_print_diags(StrBuf *out, const StoreDiag *d, int n, StoreFormat fmt);
/* Verdict counts per campaign: a table, or JSON {"schema":"cake-counts/1","campaigns":[...]}. */
void store_print_counts(StrBuf *out, const StoreCounts *c, int n, StoreFormat fmt);

#endif
