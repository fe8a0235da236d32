/*
 * run.h — the isolated runner: one kernel, run in a child process on the
 * GPU under a watchdog, checked by its family's oracle, timed.
 *
 * The caller (cake run, cake eval, the search loop) has already compiled
 * the kernel through the pipeline up to the lowering and bound its dims;
 * run_isolated() forks, and the child compiles (through the caller's
 * compile callback: NVRTC must not run before the fork), opens the device,
 * allocates and fills the inputs (seeded, never zero; then the family's
 * structured inputs), resets the outputs (RunParam.reset), launches once
 * for correctness, reads the outputs back, checks that nothing is left
 * poisoned, asks the family's oracle (family.h), and with timing on times
 * many launches, each after an L2 flush and the same output reset.
 *
 * Verdicts: ok, mismatch, hang (watchdog), fault (a signal, or a CUDA error
 * at synchronisation), compile_error, launch_error, refused (the shape, the
 * family, before any GPU work), no_gpu, internal_error. A verdict is data,
 * never a crash of the caller.
 *
 * Nothing here names a family: family-specific inputs, refusals, oracles
 * and report fields come through the Family descriptor.
 *
 * Module prefix: run_.
 */
#ifndef CAKE_RUN_H
#define CAKE_RUN_H

#include "launch.h"
#include "../family/family.h"

typedef enum RunVerdict {
	RUN_OK = 0, RUN_MISMATCH, RUN_HANG, RUN_FAULT, RUN_COMPILE_ERROR,
	RUN_LAUNCH_ERROR, RUN_REFUSED, RUN_NO_GPU, RUN_INTERNAL
} RunVerdict;

/* How a parameter's device buffer is prepared before every launch. */
typedef enum RunReset {
	RESET_NONE,       /* an input: uploaded once */
	RESET_POISON,     /* an output: 0xFF bytes (NaN for floats), so unwritten elements show */
	RESET_ZERO,       /* an accumulator (atomic_add): zeros */
	RESET_UPLOAD,     /* in place (the family says so): its input values, uploaded again */
} RunReset;

typedef struct RunOptions {
	uint64_t seed;
	double timeout_s;           /* watchdog per launch (default 10) */
	bool time;                  /* time --iters launches after --warmup */
	int iters, warmup;
	int check_rows;             /* rows/points an oracle samples */
	int device;                 /* GPU ordinal */
	bool debug_hang;            /* the kernel was lowered with the flight recorder */
	bool no_oracle;             /* skip the family's oracle (poison checks still run) */
} RunOptions;

/* The caller's compile step, run in the child: fill *out (the cubin and
 * ptxas report) or return non-zero with err set. JIT_* codes. */
typedef int (*RunCompileFn)(void *ctx, JitResult *out, char *err, size_t n);

typedef struct RunJob {
	const Plan *plan;
	const Kernel *k;
	const Family *fam;          /* NULL: no oracle (outputs checked for poison only) */
	long long dimvals[LAUNCH_MAX_DIMS];
	double *scalars;            /* per Kernel.params index (may be NULL) */
	RunOptions o;
	RunCompileFn compile;
	void *compile_ctx;
} RunJob;

/* Written by the child into shared memory, read by the parent. Fixed size,
 * pointer-free. */
typedef struct RunReport {
	int verdict;             /* RunVerdict, valid when done */
	int done;
	int stage;               /* progress: 1 device open, 2 inputs ready, 3 launched, 4 synced, 5 checked, 6 timed */
	char error[512];
	char device[256];
	int sm_count, driver_version;
	unsigned grid[3], block, cluster[3];
	long long smem;
	int regs, local_bytes;
	long long unwritten, first_unwritten;
	long long unwritten_sparse;  /* unwritten elements of scatter/atomic-only outputs (expected, not a failure) */
	int checked;             /* the family's oracle ran */
	FamReport fam;           /* its report */
	double med_us, min_us, max_us;
	int iters;
	double gpu_seconds;      /* wall time the child held the GPU */
	JitKernelInfo kern[4];
	int nkern, cache_hit;
	double compile_ms;
} RunReport;

/* Name of a verdict ("ok", "mismatch", "hang", ...). */
const char *run_verdict_name(RunVerdict v);
/* Default options: a time-based seed, 10 s watchdog, 50 timed launches
 * after 5 warm-ups, 256 sampled rows, device 0. */
RunOptions run_options(void);
/* How parameter i of plan p is reset before each launch, given family f
 * (NULL for none): scalars and inputs RESET_NONE; in-place parameters of f
 * RESET_UPLOAD; accumulators RESET_ZERO; other outputs RESET_POISON. The
 * correctness launch and every timed launch use this same decision. */
RunReset run_param_reset(const Plan *p, const Family *f, int i);
/* Check j's shape before any GPU work: the launch layer's refusals, then the
 * family's. Returns RUN_OK, or RUN_REFUSED with err set. */
RunVerdict run_refusal(const RunJob *j, char *err, size_t n);
/* Fork, run the child under the watchdog and fill *r; returns the verdict.
 * With --debug-hang, a hang fills story with the per-role flight record. */
RunVerdict run_isolated(const RunJob *j, RunReport *r, StrBuf *story, char *err, size_t n);
/* True when libcuda.so.1 can be loaded (the parent never initialises CUDA). */
bool run_driver_present(void);
/* Fill n elements of dtype `dtype` (a DType) with seeded random values:
 * floats finite, non-zero, in [-1, 1] (f16 kept in its normal range);
 * integers in [0, 64). The same seed gives the same bytes. */
void run_fill_input(void *h, int dtype, size_t n, uint64_t seed);
/* Turn a --debug-hang flight recorder (ctas * plan->nwarpgroups CakeHangRecord
 * slots, layout in src/lower/lower.h) into a one-line story naming, for the
 * first CTA with a pending wait, each role's barrier[stage], phase, loop
 * iteration and IR line, plus how many CTAs are stuck. Appends to out. */
void run_hang_story(const Plan *p, const Kernel *k, const void *rec, long long ctas, StrBuf *out);

#endif
