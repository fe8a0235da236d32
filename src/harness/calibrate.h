/*
 * calibrate.h — fit the cost model to measured evaluations.
 *
 * The measurements come from a store (every `ok` evaluation with a measured
 * median) or from committed cake-measure/1 JSON-lines files (the store's
 * export, docs/STORE.md). Each row names a candidate by id; its text comes
 * from the store, or, for a file, from a cake-candidate/1 file (the one
 * beside it, FILE.candidates.jsonl, and any named), from the .cake files
 * under the source directories whose canonical text hashes to that id, or
 * from the file the row's optional "source" field names, when its hash
 * matches. Each row is
 * compiled to its Plan (cake_compile to derive), bound to its shape and
 * counted (rank_work: the family's rates or the plan), which gives one
 * CostSample; rows that cannot be used are skipped with a reason.
 *
 * Then cost_split holds out candidates (or whole (family, shape) groups), cost_fit fits the
 * coefficients to the rest, starting from and pulled toward the prior, and
 * cost_metrics reports, per family and on the held-out groups, Kendall tau,
 * the median absolute percentage error and the top-3 hit rate. The new
 * model version carries the xxh3-64 hash of the rows it was fitted on.
 *
 * Module prefix: cal_.
 */
#ifndef CAKE_CALIBRATE_H
#define CAKE_CALIBRATE_H

#include "../cake.h"
#include "../cost/cost.h"

#define CAL_MAX_SOURCES 16

typedef struct CalRequest {
	const char *family;         /* only this family (NULL: all) */
	const char *target;         /* GPU row (NULL: h200) */
	const char *store;          /* a store path, or NULL */
	const char *data[CAL_MAX_SOURCES];      /* cake-measure/1 files (none with a store) */
	int ndata;
	const char *candidates[CAL_MAX_SOURCES];/* cake-candidate/1 files (FILE.candidates.jsonl beside
	                                         * each data file is read too) */
	int ncandidates;
	bool by_group;              /* hold out (family, shape) groups, not candidates */
	const char *sources[CAL_MAX_SOURCES];   /* directories of .cake files resolving candidate ids */
	int nsources;               /* 0: kernels and tests/corpus/good */
	int holdout;                /* hold out one (family, shape) group in this many (default 3) */
	double lambda;              /* pull toward the prior (default 0.5) */
	double rank_weight;         /* weight of the pairwise ranking loss (default 3) */
	const char *version;        /* the new model's version string (NULL: from out's file name) */
} CalRequest;

typedef struct CalFamily {
	char name[64];
	CostMetrics held, train;    /* fitted model, held-out and fit-set */
	CostMetrics held_prior;     /* the prior on the held-out groups, for comparison */
} CalFamily;

typedef struct CalReport {
	const GpuInfo *gpu;
	CostModel prior, fitted;
	int rows, used, train, heldout;
	int skipped;
	StrBuf skips;               /* one line per skipped row */
	double obj_prior, obj_fit;  /* training objective before and after */
	CalFamily fam[32];
	int nfam;
	CostMetrics all_held, all_held_prior;
	CostSample *samples;        /* the samples (pred_us under the fitted model) */
	char **labels;              /* per sample: "kernel shape" */
	int nsamples;
	char source[512];           /* what was read */
	Arena *arena;               /* the samples' strings */
} CalReport;

/* The default request: h200, hold out 1 candidate in 3, lambda 0.5, rank weight 3. */
CalRequest cal_request(void);
/* Read, fit and measure (see the file comment). False with err when the
 * input cannot be read, the target is refused, or no row is usable. */
bool cal_run(const CalRequest *req, CalReport *rep, char *err, size_t n);
/* The report as text, or as one JSON object (schema cake-calibrate/1). */
void cal_print(StrBuf *out, const CalReport *rep, bool json);
/* Release the report. */
void cal_report_free(CalReport *rep);

#endif
