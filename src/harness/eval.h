/*
 * eval.h — evaluate one candidate: check, rank, build, run, record.
 *
 * The unit of work of Cake's inner loop, shared by `cake eval`, `cake
 * evolve` and the MCP server's `evaluate` tool. eval_candidate():
 *   1. canonicalises the IR (the pipeline's parse stage and `cake fmt`'s
 *      printer) and hashes it: the candidate id (xxh3-128);
 *   2. records the candidate in the store (family, parent, origin);
 *   3. serves a (candidate, kernel, shape, harness) already judged from the
 *      store unless forced, and otherwise claims the work item so that no
 *      other process evaluates it at the same time;
 *   4. compiles through the pipeline up to the lowering; a verifier error is
 *      the verdict `rejected`, recorded with its findings at no GPU cost
 *      (skip_rules judges as a past harness without some rules would);
 *      a lowering refusal or a shape the launch layer or the family refuses
 *      is `refused`;
 *   5. predicts the time through the ranking seam (rank.h);
 *   6. with dry_run, compiles through NVRTC (when present) and records
 *      `dry_run`; otherwise runs the kernel on the GPU through the isolated
 *      runner (src/gpu/run.h) and records its verdict, times and error;
 *   7. records the evaluation with the harness that judged it (compiler,
 *      verifier, cost-model and tactic-set versions) in one transaction.
 *
 * Module prefix: eval_.
 */
#ifndef CAKE_EVAL_H
#define CAKE_EVAL_H

#include "../cake.h"
#include "../gpu/run.h"
#include "store.h"
#include "rank.h"

typedef struct EvalRequest {
	const char *text;           /* the IR */
	size_t len;
	const char *name;           /* its file name in findings */
	const char *kernel;         /* the kernel to evaluate (NULL: the file's only one) */
	const char *shape;          /* "M=8192,N=8192,K=8192": every dim of the kernel */
	const char *origin;         /* "human", "agent:NAME", "tactic:NAME:ARGS" (NULL: human) */
	const char *parent;         /* the parent candidate's full id, or NULL */
	const char *campaign;       /* groups an evolve run's evaluations, or NULL */
	const char *worker;         /* claim owner (NULL: HOST:PID) */
	const char *tactics;        /* the tactic-set version to record (NULL: the current set's) */
	RunOptions run;             /* seed, watchdog, timing */
	bool dry_run;               /* everything but the GPU run */
	bool no_jit;                /* with dry_run: stop after the ranking (no NVRTC compile); the
	                             * search loop's screening pass before its GPU runs */
	bool force;                 /* evaluate again even when the store has a verdict */
	const char *const *skip_rules; /* judge without these verifier rules (NULL-terminated; NULL: none):
	                             * to rebuild the history of a harness before a rule, or to measure a
	                             * rule's impact. The verifier version recorded says so
	                             * ("v1-xxxxxxxx-without:CK-RES-002"), so it is another harness. */
	Store *store;               /* NULL: nothing is recorded or served */
} EvalRequest;

typedef enum EvalStatus {
	EVAL_DONE = 0,              /* an evaluation exists: new, or served from the store */
	EVAL_BUSY,                  /* another process holds the work item */
	EVAL_BAD_REQUEST,           /* the request is wrong (message says how); nothing recorded */
	EVAL_STORE_ERROR,           /* the store failed (message names it) */
} EvalStatus;

typedef struct EvalResult {
	EvalStatus status;
	char cand[STORE_ID_LEN + 1];
	char kernel[128];
	char family[64];            /* "" when the kernel names none */
	char shape[256];            /* canonical */
	StoreVerdict verdict;
	char message[1024];
	bool cached;                /* served from the store, nothing re-run */
	int64_t eval_id;            /* the stored row (0 when no store) */
	RankPrediction pred;        /* valid when has_pred */
	bool has_pred;
	double median_us, min_us, max_us, rel_err, gpu_s;
	char device[256];
	DiagList diags;             /* the findings of the compile (spans into the caller's SourceSet) */
	int nerr, nwarn;
	char *canonical;            /* malloc'd canonical text (free with eval_result_free) */
} EvalResult;

/* The default request: human origin, runner defaults, nothing recorded. */
EvalRequest eval_request(void);
/* The harness versions eval records (tactics NULL: the current tactic set's). */
StoreHarness eval_harness(const char *tactics);
/* Write the verifier version of a harness without skip_rules (NULL-terminated;
 * NULL or empty: verifier_version() itself) into buf:
 * "v1-xxxxxxxx-without:CK-RES-002,CK-BAR-001". */
void eval_verifier_version(const char *const *skip_rules, char *buf, size_t n);
/* Evaluate req (see the file comment); res->status says whether an
 * evaluation exists. The IR is added to ss (the caller's), so res->diags
 * can be printed against it. */
EvalStatus eval_candidate(const EvalRequest *req, SourceSet *ss, EvalResult *res);
/* Free what eval_candidate allocated in res. */
void eval_result_free(EvalResult *res);
/* Bind a canonical shape "A=1,B=2" to k's dims (dimvals like Kernel.dims);
 * false with err naming a missing or unknown dim or a bad value. */
bool eval_bind_shape(const Kernel *k, const char *shape, long long *dimvals, char *err, size_t n);
/* The canonical text of IR text (the parse stage and `cake fmt`'s printer;
 * the text itself when it does not parse), malloc'd: what a candidate id hashes. */
char *eval_canonical(SourceSet *ss, const char *name, const char *text, size_t len);

#endif
