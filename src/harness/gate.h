/*
 * gate.h — the outer loop's gates: the corpus gate, and rule impact on the
 * store's real history.
 *
 * The environment Cake searches in (verifier rules, lowering primitives,
 * cost-model calibrations, tactics) changes under test gates
 * (docs/OUTER_LOOP.md). Two of them live here:
 *
 *   gate_corpus   runs the whole corpus through the pipeline (cake_compile):
 *                 valid programs (kernels/..., tests/corpus/good) must check
 *                 with no error; known-bad programs (tests/corpus/bad) must be
 *                 caught by the rule their first line `# expect: ID` names, at
 *                 that rule's registered severity; every kernels/... kernel
 *                 must compile to an sm_90a cubin with 0 spills (skipped with
 *                 a note when NVRTC is missing); with the GPU part, each
 *                 kernel under kernels/ with a `family` clause runs once at a
 *                 small shape inside its domain through the isolated runner
 *                 (eval_candidate without a store) and must come back `ok`.
 *   gate_store    re-judges every stored work item (candidate text, kernel,
 *                 shape) with the current harness (the pipeline to the
 *                 verifier and the lowering, then the shape through the launch
 *                 layer's and the family's refusals; no GPU) and reports each
 *                 one whose outcome changed against what its evaluations
 *                 recorded, with its GPU verdict: newly rejected while it had
 *                 hung, faulted, mismatched or failed to launch is a true
 *                 positive of the rule, newly rejected while it ran ok a false
 *                 positive, and newly accepted means a rule was relaxed. The
 *                 run and its rows are recorded in the store (schema v3), so
 *                 gate_trace can tell a candidate's history.
 *
 * Module prefix: gate_.
 */
#ifndef CAKE_GATE_H
#define CAKE_GATE_H

#include "eval.h"

/* ---- the corpus gate ---- */

typedef enum GateClass {
	GATE_VALID = 0,  /* kernels/..., tests/corpus/good: no error */
	GATE_BAD,        /* tests/corpus/bad: caught by the expected rule */
	GATE_BUILD,      /* kernels/...: sm_90a cubin, 0 spills */
	GATE_GPU,        /* kernels/... with a family: verdict ok at a small shape */
	GATE_NCLASS
} GateClass;

typedef enum GateStatus { GATE_PASS = 0, GATE_FAIL, GATE_SKIP } GateStatus;

typedef struct GateItem {
	GateClass cls;
	GateStatus status;
	char path[512];       /* relative to the root */
	char kernel[128];     /* build, gpu: the kernel ("" for a whole file) */
	char shape[256];      /* gpu: the shape it ran at */
	char expected[256];   /* what the gate demands */
	char got[1024];       /* what happened */
} GateItem;

typedef struct GateOptions {
	const char *root;     /* the directory holding kernels/ and tests/corpus/ (NULL: ".") */
	bool gpu;             /* also run each family kernel's correctness case */
	RunOptions run;       /* runner options of the GPU cases (timing off) */
} GateOptions;

typedef struct GateReport {
	GateItem *items;
	int n, cap;
	int count[GATE_NCLASS][3]; /* per class: pass, fail, skip */
	char note[GATE_NCLASS][256];/* why a class was skipped ("" when it ran) */
	char root[512];
} GateReport;

/* Defaults: root ".", no GPU part, runner defaults without timing. */
GateOptions gate_options(void);
/* Run the corpus gate under o->root into r (see the file comment). Returns 0
 * green, 1 a regression, 69 when the GPU part found no GPU (and nothing
 * regressed), 2 with err set when the root holds no corpus. */
int gate_corpus(const GateOptions *o, GateReport *r, char *err, size_t n);
/* The shape the GPU part runs kernel `k` of unit u at: the first domain
 * sample (every dim at its i-th smallest valid value, sched.h) that the
 * domain, the launch layer and the family accept, else the first entry of
 * the family's table of small shapes that they accept. Writes "A=1,B=2"
 * and where it came from ("domain sample 2", "family table"); false when
 * none fits. u must have reached the derive stage. */
bool gate_small_shape(const CakeUnit *u, int kernel, char *shape, size_t n, char *from, size_t fn);
/* Print r: a summary (counts per class, each regression named with its
 * file, expected and got), or JSON {"schema":"cake-gate/1",...}. */
void gate_print(StrBuf *out, const GateReport *r, StoreFormat fmt);
/* Release r's items. */
void gate_report_free(GateReport *r);

/* ---- rule impact on the store ---- */

/* What the current harness decides about a work item before any GPU run. */
typedef struct GateJudgement {
	StoreOutcome outcome;
	char rule[32];            /* the blocking rule ("" when accepted, or a shape refusal) */
	char message[512];        /* the first error or the refusal ("" when accepted) */
} GateJudgement;

/* Judge kernel `kernel` of IR text at shape with the current harness: the
 * pipeline to the lowering, then the shape through the domain, the launch
 * layer and the family (run_refusal). No GPU, nothing recorded. */
void gate_judge(const char *text, const char *kernel, const char *shape, GateJudgement *out);

/* Per rule: what re-judging the store charged to it. */
typedef struct GateRuleImpact {
	const char *rule;         /* NULL: shape refusals */
	int tp, fp, unrun, accepted, changed;
} GateRuleImpact;

typedef struct GateImpact {
	Arena arena;              /* everything below */
	StoreGateRun run;         /* the run (id set when recorded) */
	StoreImpact *rows;        /* work items whose outcome changed, in store order */
	int n;
	int evals;                /* evaluations read */
	int same_harness;         /* rows whose old evaluation had the current harness key:
	                           * the harness changed without a version change */
	GateRuleImpact *rules;    /* sorted by rule id, shape refusals last */
	int nrules;
	int tp, fp, unrun, accepted, changed;
	bool recorded;
} GateImpact;

/* Re-judge every work item of st (see the file comment) into out; with
 * record, store the run and its rows. Returns 0 when no rule rejects a
 * candidate that ran ok, 1 when one does (a false positive), 2 with err set
 * on a store failure. Free out with gate_impact_free. */
int gate_store(Store *st, bool record, GateImpact *out, char *err, size_t n);
/* Print out: the per-rule table (TP, FP, unrun, newly accepted, changed) and
 * one line per changed work item, or JSON {"schema":"cake-gate-impact/1",...}. */
void gate_impact_print(StrBuf *b, const GateImpact *out, StoreFormat fmt);
/* Release out. */
void gate_impact_free(GateImpact *out);
/* Print the history of candidate cand (id or unique prefix): its evaluations
 * with the harness that judged each, and every gate run that changed its
 * outcome (which rule, which harness, when), ending with where it stands.
 * Returns 0, 1 when no candidate matches (or several do), 2 on a store
 * failure; err is set unless 0. */
int gate_trace(Store *st, const char *cand, StrBuf *b, StoreFormat fmt, char *err, size_t n);

#endif
