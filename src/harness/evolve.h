/*
 * evolve.h — the inner loop: propose, verify, rank, run, keep the frontier.
 *
 * evolve_run() searches from seed kernels (a file, or every corpus kernel of
 * a family) at one or more shapes, under a budget of GPU seconds or of
 * candidates. Each generation:
 *   1. the frontier is rebuilt from the store (the best candidates of the
 *      campaign by measured time, or by predicted time in a dry run), so a
 *      rerun with the same arguments resumes where the last one stopped and
 *      several processes can work on one campaign;
 *   2. the parents — the best --width candidates by measured time, the best
 *      by predicted time, and the not yet expanded results of enabling
 *      tactics (warp_specialize, consumers: they pay off only through the
 *      tactics they open up) — get the tactics' proposals
 *      (src/harness/tactics.h); each proposal is evaluated without a GPU
 *      (eval_candidate in dry-run mode: verified, ranked, compiled), so a
 *      verifier rejection is recorded with its findings at no GPU cost;
 *   3. the best-predicted candidates not yet measured are run on the GPU
 *      through the isolated runner (skipped in a dry run);
 *   4. the budget is checked after every evaluation.
 * A candidate that hangs or faults the GPU is a recorded verdict and the
 * loop goes on. The ranking is rank.h's (the cost model, src/cost/cost.h).
 * The store's claims keep two processes from evaluating
 * the same (candidate, shape, harness) at once.
 *
 * Module prefix: evolve_.
 */
#ifndef CAKE_EVOLVE_H
#define CAKE_EVOLVE_H

#include <signal.h>

#include "eval.h"

#define EVOLVE_MAX_SHAPES 8

/* What the loop reports after each evaluation and each generation. */
typedef struct EvolveProgress {
	const char *event;          /* "seed", "eval", "generation", "done" */
	char campaign[64];
	int generation;
	int proposed;               /* candidates of the campaign (seeds included) */
	int rejected;               /* verifier rejections, lowering refusals and NVRTC compile
	                             * errors (no GPU spent) */
	int run;                    /* GPU runs */
	int failed;                 /* GPU runs that were not ok (hang, fault, mismatch, ...) */
	int busy;                   /* items skipped because another process held them */
	double gpu_s;               /* GPU seconds spent by the campaign */
	double wall_s;              /* seconds since this process started the loop */
	double seed_score;          /* the best seed's score (geometric mean over shapes, us) */
	double best_score;          /* the best candidate's score */
	char best[STORE_ID_LEN + 1];/* its id */
	double baseline_score;      /* the baseline's score, NAN when none */
	bool measured;              /* scores are measured times (false: predictions, a dry run) */
	const char *reason;         /* "done": why the loop stopped */
	const EvalResult *last;     /* "eval": the evaluation just made */
	const char *last_origin;
} EvolveProgress;

typedef struct EvolveOptions {
	const char *seed;           /* a .cake file, or a family name (its corpus kernels under kernels_dir) */
	const char *kernel;         /* with a file: one kernel of it (NULL: every kernel) */
	const char *kernels_dir;    /* the corpus root for a family seed (default "kernels") */
	const char *baseline;       /* a .cake file timed for the "vs baseline" figure, or NULL */
	const char *baseline_kernel;/* the baseline's kernel when its file holds several */
	const char *shapes[EVOLVE_MAX_SHAPES];
	int nshapes;
	double budget_gpu_s;        /* stop after this many GPU seconds (0: no limit) */
	int budget_cands;           /* stop after this many candidates (0: no limit) */
	double budget_wall_s;       /* a dry run's time budget: wall seconds of this process (0: none) */
	bool dry_run;               /* everything but the GPU runs */
	int width;                  /* frontier members expanded per generation (default 3) */
	int top;                    /* candidates run on the GPU per generation (default 6) */
	const char *campaign;       /* NULL: derived from the seeds, shapes and mode (a rerun resumes) */
	const char *worker;         /* claim owner (NULL: HOST:PID) */
	RunOptions run;
	Store *store;
	volatile sig_atomic_t *stop;/* set by a signal handler: stop after the evaluation in flight */
	void (*progress)(void *ctx, const EvolveProgress *p);
	void *progress_ctx;
} EvolveOptions;

/* Defaults: width 3, top 6, kernels "kernels", runner defaults with timing. */
EvolveOptions evolve_options(void);
/* Run the loop. Returns 0 when it stopped normally (budget, frontier
 * exhausted or interrupted: final->reason says which), 2 with err set for a
 * bad request (no seed, a seed with errors, a bad shape) or a store failure. */
int evolve_run(const EvolveOptions *o, EvolveProgress *final, char *err, size_t n);

#endif
