/*
 * cake.h — the one pipeline call.
 *
 * Every command (src/cmd/), the store and the search loop (src/harness/),
 * the MCP server (src/agent/), the library generator (src/lib/) and the
 * multi-kernel apps (src/app/) compile Cake IR through cake_compile(). It
 * runs the stages in order, up to a requested one:
 *
 *     parse -> sema -> verify -> derive -> lower -> jit
 *
 * and returns one artifact, the CakeUnit: the program, the findings (in the
 * caller's DiagList), the plan of every selected kernel, the CUDA C++
 * translation unit, and the cubin with its ptxas report. The stages are a
 * flat list of functions in src/cake.c, one line each (QBE style); the
 * state after any stage can be dumped (CakeOptions.dump_after, the
 * `--dump-after=STAGE` flag of check, build and run).
 *
 * Gating. parse always runs; sema runs on a file that parsed without
 * errors (a recovered tree would only produce cascades); verify runs on each
 * selected kernel that passed sema; derive, lower and jit run only when no
 * error has been reported so far. A stage that reports an error stops the
 * pipeline there (CakeUnit.failed). The JIT target comes from the plan's
 * target (target_info(...)->arch), never from a literal.
 *
 * Ownership. The caller owns the SourceSet and the DiagList (so several
 * files can share one list and be printed as one document); the unit owns
 * its arena (through its Ctx), the CUDA text and the JIT result, all freed
 * by cake_unit_free(). Kernels, plans and the program live in the arena.
 *
 * Module prefix: cake_.
 */
#ifndef CAKE_CAKE_H
#define CAKE_CAKE_H

#include "base/diag.h"
#include "front/front.h"
#include "verify/verify.h"
#include "lower/lower.h"
#include "gpu/gpu.h"
#include "family/family.h"

typedef enum CakeStage {
	CAKE_PARSE = 0, CAKE_SEMA, CAKE_VERIFY, CAKE_DERIVE, CAKE_LOWER, CAKE_JIT, CAKE_NSTAGES
} CakeStage;

#define CAKE_STAGE_NONE (-1)

typedef struct CakeOptions {
	CakeStage until;            /* the last stage to run */
	bool no_verify;             /* skip the verifier (its stage then does nothing) */
	const char *const *skip_rules; /* verify: drop the findings of these rules (NULL-terminated; NULL:
	                             * none), e.g. to judge as a past harness without a rule did */
	const char *kernel;         /* select this kernel only (NULL: every kernel of the file) */
	bool debug_hang;            /* lower with the flight recorder (and -DCAKE_DEBUG_HANG=1) */
	bool allow_spills;          /* jit: spills are reported, not CK-LOW-014 errors */
	const char *cache_dir;      /* jit: cubin cache (NULL: the default) */
	bool no_cache;              /* jit: do not read the cache */
	int dump_after;             /* a CakeStage, or CAKE_STAGE_NONE */
	StrBuf *dump;               /* where dumps go; NULL: standard error */
	const FamilyTable *families;/* the families `family NAME` may name (NULL: family_builtin()) */
} CakeOptions;

typedef struct CakeUnit {
	SourceSet *srcs;            /* the caller's */
	DiagList *diags;            /* the caller's */
	int file;                   /* index into srcs */
	Ctx ctx;                    /* arena of this compilation */
	Program *prog;
	Kernel **kernels;           /* the selected kernels, in file order */
	int nkernels;
	Plan **plans;               /* plans[i] of kernels[i] (after derive) */
	StrBuf cuda;                /* the translation unit of every selected kernel (after lower) */
	JitResult jit;              /* cubin and ptxas report (after jit) */
	bool jit_compact;           /* the cubin is the -DCAKE_COMPACT=1 one (the default form spilled) */
	char error[1024];           /* a failure that is not a finding (kernel not found, NVRTC missing) */
	int reached;                /* the last stage that completed, or CAKE_STAGE_NONE */
	int failed;                 /* the stage that stopped the pipeline, or CAKE_STAGE_NONE */
	int status;                 /* 0 ok; 1 the program has errors; 69 NVRTC missing at jit */
} CakeUnit;

/* Name of a stage ("parse", ..., "jit"). */
const char *cake_stage_name(int stage);
/* Parse a stage name; false if s names none. */
bool cake_stage_from(const char *s, int *stage);
/* Default options: run to `until`, verify on, no kernel filter, no dump. */
CakeOptions cake_options(CakeStage until);

/* Run file `file` of srcs through the stages up to o->until, reporting to
 * dl. Returns u->status; on success u->reached == o->until. The unit must be
 * released with cake_unit_free whatever the outcome. */
int cake_compile(CakeUnit *u, SourceSet *srcs, DiagList *dl, int file, const CakeOptions *o);
/* Run the jit stage on a unit that reached CAKE_LOWER (the isolated runner
 * does this in its child process, after the fork). Returns u->status. */
int cake_jit(CakeUnit *u, const CakeOptions *o);
/* Load path ("-" = standard input) into srcs and compile it; a file that
 * cannot be read sets u->status = 2 and u->error. */
int cake_compile_path(CakeUnit *u, SourceSet *srcs, DiagList *dl, const char *path, const CakeOptions *o);
/* Compile IR text held in memory (named `name` in findings). */
int cake_compile_text(CakeUnit *u, SourceSet *srcs, DiagList *dl, const char *name, const char *text,
                      size_t len, const CakeOptions *o);
/* The CK-LOW-014 findings (register spills) of ptxas reports kern[0..n) of u's
 * kernels, added to dl; the first also goes to u->error. Returns how many
 * kernels spill. The jit stage calls it on its own report; a caller whose jit
 * ran in another process (the isolated runner's child) calls it on the report
 * that came back, so the findings are not lost with the child. */
/* Whether any kernel of a compiled unit spills registers (ptxas's report). */
bool jit_spilled(const JitResult *r);
int cake_spill_findings(CakeUnit *u, DiagList *dl, const JitKernelInfo *kern, int n);
/* CK-LOW-015 findings for kernels whose static plus dynamic shared memory is over the target's
 * per-block limit (ptxas's report and the plan); returns their number. */
int cake_smem_findings(CakeUnit *u, DiagList *dl, const JitKernelInfo *kern, int n);
/* The canonical text of kernel k of u's program printed alone (no other
 * kernel, no comments), malloc'd: what `cake evolve` seeds and records, so
 * its hash is the kernel's candidate id in a store. */
char *cake_kernel_text(const CakeUnit *u, int k);
/* Index of the selected kernel named `name`, or -1. */
int cake_kernel_index(const CakeUnit *u, const char *name);
/* Release the unit's arena, CUDA text and JIT result (the sources and
 * findings stay with the caller). Safe on a zeroed unit. */
void cake_unit_free(CakeUnit *u);

#endif
