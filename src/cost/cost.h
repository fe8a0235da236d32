/*
 * cost.h — the cost model: a kernel's time predicted from its Plan.
 *
 * The search loop ranks candidates before any of them runs, so it needs a
 * time for a schedule at a shape without a GPU. The cost model reads the
 * derived Plan (roles, the pipelined loop and its ring, TMA boxes, fragments,
 * the launch geometry, registers and shared memory) at bound dims, plus the
 * kernel's work (FLOP and compulsory DRAM byte counts, which the caller gets
 * from the kernel's family, or from cost_plan_work when it has none), and a
 * GPU row of the target table (base/target.h: SM count, clocks, bandwidths,
 * MMA rates, latencies). It predicts a time with named parts:
 *
 *   tensor     wgmma FLOPs over the dense tensor-core rate;
 *   memory     compulsory DRAM bytes over the DRAM ceiling, and the tiles'
 *              SM-side traffic over the L2 bandwidth;
 *   fill       the first stage of a tile arriving (TMA latency + transfer);
 *   latency    load latency the ring's stages do not cover: with s stages at
 *              most s loads are in flight, so an iteration takes at least
 *              (latency + transfer) / s (Little's law);
 *   sync       barrier waits per iteration, and vector (SIMT) work that the
 *              wgmma does not overlap;
 *   epilogue   the work after the main loop (stores, vector work);
 *   tail       the idle share of the last wave (or round of tiles);
 *   launch     the launch overhead a timed launch pays;
 * with the occupancy that decides them (CTAs per SM by shared memory,
 * registers, threads and blocks), a bottleneck class (memory, tensor,
 * latency, sync, occupancy, launch) and up to two suggestions tied to IR
 * constructs, with numbers. docs/COST.md has the equations.
 *
 * Work is split in two so the calibration can evaluate thousands of
 * coefficient sets cheaply: cost_count() walks the Plan once at the dims
 * into CostCounts (coefficient-free); cost_predict() is arithmetic on
 * counts, a GPU row and a CostModel (the free coefficients: efficiencies,
 * latency and sync scales, launch and per-CTA overheads). Model versions
 * live in data/cost/NAME-vN.json (cost_model_load); the binary carries the
 * committed v1 files as built-in defaults, so it works from any directory.
 *
 * The model never rejects a schedule: it predicts for every plan (a shape
 * the launch layer refuses is the caller's business). It refuses only a
 * GPU it has no calibrated parameters for (cost_target), naming the ones it
 * has.
 *
 * Layering: cost/ reads lower/ (the Plan, eval_expr), front/ and base/
 * (the target table); never family/ (the caller passes the work in).
 *
 * Module prefix: cost_.
 */
#ifndef CAKE_COST_H
#define CAKE_COST_H

#include "../lower/lower.h"
#include "../base/target.h"

/* ---- the work: what the kernel must do at the shape ---- */

typedef struct CostWork {
	double flops;               /* useful operations (the family's count; 0 = unknown) */
	double bytes;               /* compulsory DRAM bytes (the family's count) */
	const char *source;         /* "family gemm", "plan" */
} CostWork;

/* ---- counts: the plan walked at bound dims (coefficient-free) ---- */

/* Work of one stretch of a role's program. */
typedef struct CostSeg {
	double mma_flops;           /* wgmma / mma FLOPs (2 M N K each) */
	double vec_ops;             /* SIMT element operations on fragments and shared memory */
	double shfl;                /* lane shuffles of row reductions (the quad's 2 xor rounds per value) */
	double bytes;               /* SM-side global traffic: TMA, loads, stores */
	double atomic_bytes;        /* global atomics (read-modify-write at L2: twice their elements) */
	double vstmts;              /* vector statements (each a dependent chain with a latency) */
	double lat_steps;           /* dependent global loads (a load's latency each), unroll-divided */
	double waits;               /* barrier waits, named-barrier syncs, wgmma_wait drains */
} CostSeg;

#define COST_REUSE_BUCKETS 48

typedef struct CostReuse {
	double first;                       /* panels used for the first time */
	double n[COST_REUSE_BUCKETS];       /* reuses whose distance falls in bucket b (2^(b/2) ..) */
	double d[COST_REUSE_BUCKETS];       /* their mean distance */
} CostReuse;

/* One statement's work per tile (pass 1 of the walk, every execution in a tile summed):
 * `cake cost --lines` ranks them. */
#define COST_MAX_STMTS 128
typedef struct CostStmt {
	int line, col;              /* where the statement starts */
	int role;                   /* its role (plan index) */
	double vec_ops, shfl, mma_flops, bytes, waits;
} CostStmt;

typedef struct CostCounts {
	/* launch */
	double tiles;               /* CTAs of an ordinary grid; tiles of a persistent one */
	bool persistent;
	int block_threads, warps;
	int regs_per_thread;        /* the pool (base_regs) when roles setmaxnreg; else fragments + 32 */
	long long smem_bytes;       /* dynamic shared memory per CTA */
	/* the main loop: the pipelined loop carrying the most work (has_loop) */
	bool has_loop;
	const char *pipe;           /* its pipeline */
	int stages;
	double iters;               /* iterations per tile */
	long long stage_stride;     /* shared-memory bytes one stage of the ring takes (all its buffers) */
	long long smem_other;       /* shared memory that is not the ring */
	const char *loop_role;      /* the role whose loop computes (the critical path) */
	int consumer_wgs;           /* its warpgroups */
	bool self_fed;              /* that role issues the ring's loads itself (no producer role) */
	CostSeg it;                 /* per iteration: the critical role's work + the ring's TMA bytes */
	CostSeg hold;               /* per iteration: the critical role's work before it releases the
	                             * ring (its first `arrive` in the loop; all of it when none) */
	double mma_inv_n;           /* FLOP-weighted mean of 1 / N over the wgmmas (N per warpgroup) */
	CostSeg pro, epi;           /* per tile, before and after the main loop (every role) */
	CostSeg serial;             /* no main loop: the critical role's whole program, per tile */
	CostSeg tile;               /* everything one tile does, every role */
	DType mma_dt;               /* operand type of the wgmmas (DT_NONE: no MMA) */
	/* what DRAM sees: global reads per tile by the grid coordinates their
	 * index depends on (bit a = grid axis a), reads that depend on data
	 * (gathers: every tile reads its own), and writes per tile */
	double read_by_axes[8];
	double read_private;
	double write_bytes;
	long long extent[3];        /* tile space per grid axis (x, y, z) */
	int group;                  /* grouped raster: G rows of y per group (0: natural) */
	/* L2 reuse (cost_reuse): for the reads filed by each axes mask, over the
	 * first reuse_n tiles in launch order, the first uses of each panel and a
	 * histogram of reuse distances (tiles since the panel's previous use) */
	double reuse_n;
	CostReuse reuse[8];
	bool approx;                /* a trip count was estimated (see note) */
	char note[256];
	/* per statement, per tile (the first COST_MAX_STMTS statements with work; the rest summed
	 * into stmt_rest) */
	CostStmt stmts[COST_MAX_STMTS];
	int nstmts;
	CostStmt stmt_rest;
} CostCounts;

/* Walk plan p at dims (indexed like Kernel.dims) into *out. False with err
 * only when the launch grid does not evaluate at these dims. A trip count
 * that depends on data is estimated (out->approx, out->note say how). */
bool cost_count(const Plan *p, const long long *dims, CostCounts *out, char *err, size_t n);
/* Fill c->reuse for c's tiles in launch order under raster `group` (0:
 * natural; cost_count calls it with the plan's). */
void cost_reuse(CostCounts *c, int group);
/* The work read off the counts alone, for a kernel without a family:
 * FLOPs = wgmma FLOPs + vector ops; DRAM bytes = every distinct panel of
 * the grid read once (a read depending on grid axes x and y: once per
 * (x, y)), gathers and writes once per tile. */
void cost_plan_work(const CostCounts *c, CostWork *w);

/* ---- the free coefficients and model versions ---- */

typedef enum CostCoef {
	CC_EFF_TENSOR = 0,          /* share of the MMA ceiling a wgmma stream reaches */
	CC_EFF_L2,                  /* share of the L2 -> SM bandwidth TMA tiles reach */
	CC_EFF_HBM,                 /* share of the DRAM ceiling */
	CC_EFF_VEC,                 /* share of the SIMT issue rate fragment math reaches */
	CC_OVERLAP,                 /* share of the smaller of (wgmma, vector) time hidden under the larger */
	CC_LAT_SCALE,               /* multiplies the TMA latency */
	CC_SYNC_SCALE,              /* multiplies the barrier-wait latency */
	CC_LAUNCH_US,               /* launch overhead per timed launch, us */
	CC_CTA_US,                  /* per-CTA start-up (barrier init, tensor-map prefetch), us */
	CC_MEM_SERIAL,              /* share of the smaller of DRAM and L2 time not hidden under the larger */
	CC_L2_REUSE,                /* share of the L2 capacity that keeps data for later tiles */
	CC_GMEM_LAT_SCALE,          /* multiplies the global-load latency */
	CC_WGMMA_N0,                /* a wgmma of N columns runs at N / (N + n0) of the rate, relative to N = 256 */
	CC_EFF_ATOMIC,              /* share of the L2 bandwidth global atomics (red, fetch_add) reach */
	CC_VSTMT_US,                /* latency of one vector statement beyond its throughput, us */
	/* v2: added after h200-v1 was fitted; a file without them reads their
	 * neutral value (cost_coef_neutral), which leaves the v1 equations */
	CC_TILE_US,                 /* per-tile switch of a persistent CTA, us */
	CC_OVERLAP_MAX,             /* share of min(wgmma, vector) any number of warpgroups can hide */
	CC_SHFL_COST,               /* SIMT ops one lane shuffle costs (shuffles issue at 32 lanes per clock) */
	CC_EPI_POST,                /* share of the epilogue's posted traffic that drains under the next tile */
	/* v3: added after h200-v2 was fitted (neutral 0: the v2 equations) */
	CC_HANDOFF_US,              /* a warpgroup's switch between its wgmma and vector phases, us */
	CC_NCOEF
} CostCoef;

typedef struct CostModel {
	char version[48];           /* "h200-v1" */
	char target[16];            /* the GPU row it belongs to: "h200" */
	double c[CC_NCOEF];
	char data_hash[48];         /* "xxh3-64:..." of the measurements it was fitted on, or "none" */
	char fitted_on[256];        /* what those were, one line */
	int rows, train, heldout;   /* measurements used */
} CostModel;

/* The coefficient's key in a model file ("eff_tensor", ...), NULL out of range. */
const char *cost_coef_name(int i);
/* One line saying what coefficient i means. */
const char *cost_coef_doc(int i);
/* The value of coefficient i that leaves the equations as they were
 * before it was added (what a model file without it reads). */
double cost_coef_neutral(int i);
/* The structure version that added coefficient i (1: v1, 2: v2, ...). */
int cost_coef_since(int i);
/* The range the calibration keeps coefficient i in. */
void cost_coef_bounds(int i, double *lo, double *hi);
/* The prior: the coefficients before any fit (efficiencies 1, scales 1,
 * launch and latencies from the GPU row), which the fit starts from and
 * is pulled toward. */
void cost_prior(const GpuInfo *g, CostModel *out);
/* The built-in model of GPU row name (identical to the committed
 * data/cost/NAME-v1.json), or NULL when there is none. */
const CostModel *cost_builtin(const char *target);
/* Parse a model file's text (format cake-cost-model/1). False with err. */
bool cost_model_parse(const char *text, size_t len, CostModel *out, char *err, size_t n);
/* Append m as a model file (format cake-cost-model/1, one key per line). */
void cost_model_json(StrBuf *out, const CostModel *m);
/* The model for GPU row g: the file at path when non-NULL; else the
 * highest-numbered NAME-vN.json in the model directory (CAKE_COST_DIR, or
 * data/cost under the working directory, or beside the executable); else
 * the built-in one. False with err when the file is unreadable or broken,
 * or when nothing exists for g. from (may be NULL) gets the path used or
 * "built-in". */
bool cost_model_load(const GpuInfo *g, const char *path, CostModel *out, char *from, size_t nfrom, char *err,
                     size_t n);

/* The GPU row named name when the cost model predicts for it; else NULL
 * with err naming the problem and the calibrated GPUs. */
const GpuInfo *cost_target(const char *name, char *err, size_t n);
/* The calibrated GPU names, comma-separated ("h100, h200"). */
void cost_calibrated_names(char *buf, size_t n);

/* ---- the prediction ---- */

typedef struct CostSuggestion {
	char text[360];
	double save_us;             /* what it would save if it worked, roughly */
} CostSuggestion;

/* The bottleneck classes, in this order (cost_class_names). */
typedef enum CostClass {
	COST_TENSOR, COST_MEMORY, COST_LATENCY, COST_SYNC, COST_OCCUPANCY, COST_LAUNCH, COST_NCLASS
} CostClass;
extern const char *const cost_class_names[COST_NCLASS];
/* A unit (tensor, memory) names the bottleneck only when it sets at least
 * this share of the time (docs/COST.md, "Bottleneck"). */
#define COST_DOMINANT 0.6
/* How cost_classify decided (cost_rule_names): the launch overhead is the
 * largest share; a unit sets a dominant share; the memory system is busy a
 * dominant share of the time under the terms that set it; no unit is
 * dominant and the largest of the rest (latency, sync, occupancy) names it. */
typedef enum CostRule { COST_RULE_LAUNCH, COST_RULE_UNIT, COST_RULE_MEMORY_BUSY, COST_RULE_REST } CostRule;
extern const char *const cost_rule_names[4];
/* The classification rule, on the time attributed to each class (share, us,
 * the launch included) and the memory system's busy share of the kernel's
 * time (the memory floor over the time less the launch, 0..1). Pure: the
 * tests call it on synthetic shares. */
CostClass cost_classify(const double share[COST_NCLASS], double mem_busy, CostRule *rule);

typedef struct CostPrediction {
	double us;                  /* the predicted time of one timed launch */
	/* parts, microseconds (not additive: see docs/COST.md) */
	double tensor_us, vector_us, memory_us, hbm_us, l2_us;
	double fill_us, latency_us, sync_us, epilogue_us, tail_us, launch_us;
	double body_us;             /* us - launch_us */
	double dram_bytes;          /* the work's bytes, or the per-wave estimate when larger */
	double chain_us, thru_us;   /* the busiest SM: its slots' critical path, its throughput bound */
	/* the main loop, per iteration, us */
	double it_us, core_us, mma_it_us, vec_it_us, feed_us, arrive_us, exposed_it_us;
	int stages_needed, stages_max;
	/* launch geometry */
	int ctas_per_sm;
	const char *occ_limit;      /* "shared memory", "registers", "threads", "blocks" */
	int by_smem, by_regs, by_threads;
	int active_sms;
	double waves;               /* tiles / slots (persistent: rounds of tiles per CTA) */
	double wave_efficiency;     /* busy slots over launched slots, 0..1 */
	double tflops;              /* the caller's FLOPs over the time, TFLOP/s (0 unknown) */
	const char *bottleneck;     /* memory, tensor, latency, sync, occupancy, launch */
	double share[COST_NCLASS];  /* the time attributed to each class, us (the bottleneck's input) */
	double mem_busy;            /* memory floor over body_us, 0..1 */
	CostRule rule;              /* how the class was decided */
	char why[320];              /* one line */
	CostSuggestion sugg[2];
	int nsugg;
	char version[48];           /* the model version that predicted */
	char target[16];
} CostPrediction;

/* Predict the time of counts c with work w on GPU row g under model m.
 * Arithmetic only; never fails for a calibrated row (callers check with
 * cost_target first). */
void cost_predict(const CostCounts *c, const CostWork *w, const GpuInfo *g, const CostModel *m, CostPrediction *out);
/* The predicted time alone (no parts' text, no suggestions): what the calibration evaluates. */
double cost_predict_us(const CostCounts *c, const CostWork *w, const GpuInfo *g, const CostModel *m);

/* The prediction as text: the time, its parts, the bottleneck and the suggestions. */
void cost_print_text(StrBuf *b, const CostPrediction *p, const CostCounts *c, const CostWork *w);
/* The prediction as one JSON object (schema cake-cost/1), no newline. */
void cost_print_json(StrBuf *b, const CostPrediction *p, const CostCounts *c, const CostWork *w);

/* ---- calibration: fitting and ranking metrics (fit.c) ---- */

typedef struct CostSample {
	CostCounts c;
	CostWork w;
	double meas_us;             /* measured median */
	const char *family;         /* "" when none */
	const char *group;          /* family + shape: the set whose candidates are ranked together */
	const char *cand;           /* candidate id */
	bool heldout;
	double pred_us;             /* filled by cost_fit / cost_metrics */
} CostSample;

typedef struct CostMetrics {
	int n;                      /* samples */
	int groups;                 /* (family, shape) groups with >= 2 samples */
	int pairs;                  /* candidate pairs inside those groups */
	double tau;                 /* Kendall tau-b over those pairs (NaN: no untied pair) */
	double tau3;                /* the same over the pairs measured at least 3 % apart (NaN: none) */
	int pairs3;
	double mape;                /* median absolute percentage error (NaN: no sample) */
	int top3_hits, top3_groups; /* groups whose measured best is in the model's top 3 */
	int top3_trivial;           /* of those, groups of 3 or fewer (always hit) */
} CostMetrics;

/* Mark each sample held out or not, one in `every` by an xxh3 hash:
 * candidates (by_group false: a candidate is held out at all its shapes) or
 * whole (family, shape) groups (at least one per family with two or more).
 * Deterministic. */
void cost_split(CostSample *s, int n, int every, bool by_group);
/* Fit m's coefficients to the samples not held out: coordinate search over
 * the mean squared log error, plus rank_weight times a pairwise ranking loss
 * (candidates of one group in the wrong order), plus a pull toward the prior
 * of weight lambda per coefficient. Starts from *m, writes the result into
 * *m; the coefficients of the newest structure version (cost_coef_since)
 * are held at their neutral value until the others have converged, then
 * searched alone, the others held there. Deterministic. Returns the final
 * objective. */
double cost_fit(CostSample *s, int n, const GpuInfo *g, const CostModel *prior, double lambda, double rank_weight,
                CostModel *m);
/* The same with only the coefficients i with fit[i] searched (fit NULL:
 * all); the others keep their value in *m. */
double cost_fit_some(CostSample *s, int n, const GpuInfo *g, const CostModel *prior, double lambda, double rank_weight,
                     const bool *fit, CostModel *m);
/* Predict every sample under m (into pred_us) and compute the metrics of
 * those with heldout == which and family `family` (NULL: all). */
void cost_metrics(CostSample *s, int n, const GpuInfo *g, const CostModel *m, bool which, const char *family,
                  CostMetrics *out);

#endif
