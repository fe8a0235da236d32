/*
 * mine.h — failure mining: group the GPU failures the verifier let through
 * by the schedule features they share, and say where a rule is missing.
 *
 * The store remembers every GPU verdict. A hang, fault, mismatch or launch
 * error recorded there is a candidate some harness verified and still sent
 * to the GPU, so it is evidence about the verifier. mine_store() reads
 * every work item (candidate, kernel, shape) that ran on a GPU, extracts its
 * schedule features from the candidate's Plan and schedule model (derived
 * without the verifier, so a candidate today's verifier rejects still has
 * them), and groups the failures:
 *
 *   features   "name=value" strings: register budget per role, the CTA's
 *              launch pool (threads x the multiple of 8 at or below
 *              65536 / threads) and the registers the roles ask for
 *              (sum of regs x threads), over or within the pool and the
 *              register file; per barrier the declared against the derived
 *              arrivals; per pipeline its stages against the loop's trip
 *              count at the shape; accumulator tiles; warpgroups per role,
 *              threads; persistent or not; shared memory (16 KiB buckets);
 *              cluster shape.
 *   clusters   greedy: the feature held by the most failures not yet in a
 *              cluster, among features rare in ok runs (at most
 *              max_ok_freq of them hold it), opens a cluster of those
 *              failures; its shared features are every feature all its
 *              members hold that is rare among ok runs, each with its
 *              frequency among the failures and among the ok runs.
 *   rules      each feature names the rule family whose check it is about
 *              (registers -> CK-RES, barrier arrivals -> CK-BAR/CK-DEAD,
 *              stages against trips -> CK-SCHED/CK-DEAD, ...); each cluster
 *              also says how many of its members today's harness already
 *              blocks (gate_judge), and by which rule: none means the check
 *              is missing.
 *
 * Module prefix: mine_.
 */
#ifndef CAKE_MINE_H
#define CAKE_MINE_H

#include "gate.h"

typedef struct MineOptions {
	double max_ok_freq;          /* a shared feature is held by at most this share of ok runs (default 0.25) */
	int examples;                /* example candidates per cluster (default 3) */
	StoreFilter filter;          /* which evaluations to read (zeroed: all) */
} MineOptions;

typedef struct MineItem {
	const char *cand, *kernel, *shape;
	StoreVerdict verdict;        /* the worst GPU verdict of the work item */
	const char *message;         /* that evaluation's message */
	int64_t eval;                /* that evaluation */
	const char **feat;           /* its features (NULL when they could not be extracted) */
	int nfeat;
	bool failed;                 /* hang, fault, mismatch, launch_error */
} MineItem;

typedef struct MineShared {
	const char *feature;         /* "regs_pool=over" */
	const char *family;          /* rule family: "CK-RES", "CK-BAR/CK-DEAD", ... */
	int fail_n, ok_n;            /* failures (all clusters) and ok runs holding it */
	double fail_freq, ok_freq;   /* the same as shares of the failures and of the ok runs */
} MineShared;

typedef struct MineCluster {
	const char *key;             /* the feature that opened the cluster */
	const char *family;          /* its rule family */
	const char *what;            /* one line: what the key feature means */
	MineShared *shared;          /* shared features, most telling first */
	int nshared;
	int *members;                /* indices into MineResult.items */
	int nmembers;
	int verdicts[STORE_NVERDICT];/* members per verdict */
	int caught_now;              /* members today's harness blocks */
	const char *caught_rules;    /* those rules, comma-separated ("" when none) */
} MineCluster;

typedef struct MineResult {
	Arena arena;                 /* everything below */
	MineItem *items;             /* work items with a GPU verdict */
	int nitems;
	int nfail, nok, nunfeatured; /* failures, ok runs, items without features */
	MineCluster *clusters;
	int nclusters;
	int unexplained;             /* failures in no cluster (no feature rare among ok runs) */
	double max_ok_freq;
} MineResult;

/* Defaults: max_ok_freq 0.25, 3 examples, every evaluation. */
MineOptions mine_options(void);
/* The schedule features of kernel `kernel` (NULL: the file's only one) of IR
 * text at shape, as "name=value" strings in a (sorted). Returns the count,
 * or -1 when the candidate does not compile to a Plan even without the
 * verifier. */
int mine_features(const char *text, const char *kernel, const char *shape, Arena *a, const char ***out);
/* Mine st (see the file comment) into out. Returns 0, or 2 with err set on
 * a store failure. Free out with mine_free. */
int mine_store(Store *st, const MineOptions *o, MineResult *out, char *err, size_t n);
/* Print out: totals, then each cluster (its verdicts, shared features with
 * both frequencies, examples, the rule family and what today's harness
 * catches), or JSON {"schema":"cake-mine/1",...}. */
void mine_print(StrBuf *b, const MineResult *out, StoreFormat fmt);
/* Release out. */
void mine_free(MineResult *out);

#endif
