/*
 * sched.h — the schedule model: one view of a kernel for every later stage.
 *
 * A kernel that passed sema is a tree. The verifier's rule families and the
 * lowering's derive step both want the same facts in another shape: which
 * roles exist and which warps they run on, which pipelines, shared buffers,
 * barriers and fragments are declared and how they refer to each other,
 * which role executes each statement inside which loops, and at which
 * concrete points of the domain symbolic sizes may be evaluated. sched_build
 * computes those facts once, into a Sched, and both read them from there:
 * src/verify/ checks them, src/lower/derive.c turns them into the Plan, and
 * the cost model will rank from them. There is no second resolution of
 * names or of the statement structure anywhere else.
 *
 * Contents (all arena-backed, in the compilation's arena):
 *   roles      warp range, threads, warpgroups, arrive weight, first `in` block;
 *   pipes      stage count;
 *   smems      ring pipeline, constant extents, bytes per stage, how the
 *              program uses it (TMA destination, wgmma operand) and its
 *              place in the shared-memory layout;
 *   bars       ring pipeline, mbarrier count and offset;
 *   frags      owning role, constant extents;
 *   params, consts, the domain constraints split at `&&`;
 *   dims       the symbolic sizes of the global params, each with up to
 *              SCHED_SAMPLES valid values (the domain samples, model.c);
 *   grid vars  and the persistent flag;
 *   st         every statement in preorder with its role, loop depth,
 *              innermost loop, innermost pipelined loop (and its pipeline),
 *              innermost `if` and the end of its subtree, plus a Stmt* ->
 *              index hash.
 * Indices are declaration order within each kind, so index i of roles,
 * pipes, smems, bars and frags is also index i of the Plan's tables.
 *
 * Shared-memory layout. One function (layout_smem in model.c) places the
 * dynamic shared memory, and both the verifier's capacity rule (CK-RES-001)
 * and the lowering (Plan.buffers, Plan.barriers, Plan.smem_*) read the
 * result, so the bytes the verifier checks are the bytes the kernel asks
 * for. Every buffer gets the alignment its uses need: 1024 B when swizzled
 * (so the swizzle pattern and the wgmma descriptor's base offset line up;
 * a safe superset of the 512/256 B the 64B/32B patterns need), 128 B when a
 * TMA load fills it or wgmma reads it, 16 B otherwise. Each stage is rounded
 * up to that alignment and a ring buffer has one stage per pipeline stage.
 * Buffers are placed largest alignment first, declaration order within;
 * then the mbarriers, 8 B each, one per ring stage, from the next multiple
 * of 8. The runtime only guarantees a 16-byte aligned dynamic base, so the
 * kernel aligns it itself and the launch asks for the largest alignment as
 * slack. A buffer whose size is unknown (a symbolic extent, which sema
 * rejects) is not placed.
 *
 * Layering: sched/ sits above front/ and base/ and below verify/ and
 * lower/; it includes only those two. Reporting (rule IDs, findings) is
 * the verifier's business and stays in verify_int.h.
 *
 * Module prefix: sched_.
 */
#ifndef CAKE_SCHED_H
#define CAKE_SCHED_H

#include "../front/front.h"

#define SCHED_SAMPLES 48       /* sampled domain points per dim */
#define SCHED_ENV_MAX 48       /* bindings in one evaluation environment */

typedef struct SchedRole {
	Decl *d;
	const char *name;
	int lo, hi, warps, threads;
	int arrive_weight;    /* arrivals per `arrive` the verifier assumes: wgs */
	int wgs;              /* warpgroups: warps / 4 rounded up, 1 under 4 warps (the
	                       * target table's warpgroup_warps) */
	Stmt *prog;           /* the first `in` block of this role, or NULL */
	int nprogs;           /* number of `in` blocks naming it */
} SchedRole;

typedef struct SchedPipe {
	Decl *d;
	const char *name;
	int stages;
} SchedPipe;

typedef struct SchedSmem {
	Decl *d;
	const char *name;
	int pipe;             /* ring pipeline index or -1 */
	int rank;
	long long dims[MAX_RANK];
	bool cshape;          /* every extent folded to a constant */
	long long elems;      /* per stage, -1 if unknown */
	long long bytes;      /* per stage, -1 if unknown */
	bool tma_dst;         /* some TMA load fills it */
	bool tma_src;         /* some TMA store reads it */
	bool wgmma_operand;   /* some wgmma reads it as an operand (through a descriptor) */
	/* the shared-memory layout (see "Shared-memory layout" above) */
	int stages;           /* copies: the ring's stages (at least 1), 1 if not a ring */
	int align;            /* 1024 swizzled, 128 TMA destination or wgmma operand, else 16 */
	long long stride;     /* bytes per stage rounded up to align (0 when bytes unknown) */
	long long offset;     /* from the aligned dynamic-smem base; -1 when not placed */
} SchedSmem;

typedef struct SchedBar {
	Decl *d;
	const char *name;
	int pipe;             /* ring pipeline index or -1 */
	int count;            /* mbarriers: the ring's stages (at least 1), 1 if not a ring */
	long long offset;     /* of mbarrier 0 from the aligned base (8 bytes each) */
} SchedBar;

typedef struct SchedFrag {
	Decl *d;
	const char *name;
	int role;             /* owner role index or -1 */
	int rank;
	long long dims[MAX_RANK];
	bool cshape;
} SchedFrag;

typedef struct SchedStmt {
	Stmt *s;
	int role;             /* executing role index, -1 outside `in` */
	int depth;            /* loop depth within the role */
	Stmt *loop;           /* innermost enclosing for */
	int loop_idx;         /* its index in the statement list, -1 */
	Stmt *ploop;          /* innermost enclosing pipelined for */
	int ploop_idx;
	int ppipe;            /* pipeline index of ploop (-1 if none or unknown) */
	Stmt *ifs;            /* innermost enclosing if, NULL */
	int if_idx;
	int end;              /* one past the last descendant in the list */
} SchedStmt;

typedef struct SchedEnv {
	const char *names[SCHED_ENV_MAX];
	long long vals[SCHED_ENV_MAX];
	int n;
} SchedEnv;

typedef struct Sched {
	Ctx *c;
	Kernel *k;
	Arena *a;                         /* c->arena: everything below lives there */
	Target tgt;
	SchedRole *roles; int nroles;
	SchedPipe *pipes; int npipes;
	SchedSmem *smems; int nsmems;
	SchedBar *bars; int nbars;
	SchedFrag *frags; int nfrags;
	Decl **params; int nparams;
	Decl **consts; int nconsts;
	Expr **domain; int ndomain;       /* domain constraints split at && */
	const char **dims; int ndims;
	long long (*dimvals)[SCHED_SAMPLES];   /* [ndims][SCHED_SAMPLES] ascending valid values */
	int *ndimvals;
	bool domain_ok;                   /* every dim got at least one value */
	const char **gridvars; int ngridvars;
	bool persistent;                  /* grid persistent: role programs run once per tile */
	/* shared-memory layout: buffers in smem_order, then the barriers */
	int *smem_order; int nsmem_order; /* placed buffers (bytes known), in placement order */
	long long smem_bar_base;          /* offset of the first barrier: end of the buffers, 8-aligned */
	long long smem_used;              /* end of the last barrier */
	int smem_base_align;              /* largest buffer alignment (at least 16) */
	long long smem_bytes;             /* dynamic smem a launch requests: smem_used plus
	                                   * smem_base_align of slack when that is above 16 */
	SchedStmt *st; int nst;
	const Stmt **sidx_key; int *sidx_val; int sidx_cap;   /* Stmt* -> index hash */
} Sched;

/* ---- building and lookups ---- */
/* Build the model of kernel k (arena-backed in c->arena). */
void sched_build(Sched *v, Ctx *c, Kernel *k);
/* Release anything the model holds outside the arena. */
void sched_free(Sched *v);
/* Index of a declared role/pipeline/smem/barrier/fragment/param by name, or -1. */
int sched_role(const Sched *v, const char *name);
int sched_pipe(const Sched *v, const char *name);
int sched_smem(const Sched *v, const char *name);
int sched_bar(const Sched *v, const char *name);
int sched_frag(const Sched *v, const char *name);
Decl *sched_param(const Sched *v, const char *name);
/* Index of statement s in the preorder list, or -1. */
int sched_stmt_index(const Sched *v, const Stmt *s);
/* Evaluate an integer expression under env (consts folded); false if not computable. */
bool sched_eval(const Sched *v, const SchedEnv *env, const Expr *e, long long *out);
/* Bind name=val in env (later bindings shadow earlier ones). */
void sched_env_set(SchedEnv *env, const char *name, long long val);
/* Environment of domain sample i: every dim at its i-th valid value, grid vars 0. */
void sched_env_sample(const Sched *v, SchedEnv *env, int i);
/* sched_env_sample plus every loop enclosing statement idx bound to its lower bound. */
void sched_loop_env(const Sched *v, SchedEnv *env, int sample, int idx);
/* Number of distinct domain samples available (>= 1; 1 when there are no dims). */
int sched_nsamples(const Sched *v);
/* Name of the buffer/fragment/param an operand expression refers to (strips ^T, [..], casts). */
const char *sched_refname(const Expr *e);
/* True when e is `x^T` (possibly parenthesised). */
bool sched_is_transposed(const Expr *e);
/* Collect up to max identifier names read by e (deduplicated); returns count. */
int sched_idents(const Expr *e, const char **out, int max);
/* True if e mentions identifier name. */
bool sched_mentions(const Expr *e, const char *name);
/* The smem buffer written by statement s (TMA load, cp.async, store), or -1. */
int sched_smem_written(const Sched *v, const Stmt *s);
/* Collect smem buffers read by s into out (max n); returns count. */
int sched_smem_read(const Sched *v, const Stmt *s, int *out, int max);
/* Barrier signalled/arrived by s (TMA signal or arrive), waited by s: index or -1. */
int sched_bar_arrived(const Sched *v, const Stmt *s);
int sched_bar_waited(const Sched *v, const Stmt *s);
/* Matmul operands of a wgmma/mma statement; false when malformed. */
bool sched_matmul_ops(const Stmt *s, const Expr **a, const Expr **b);
/* Box extents of a global reference (slice lengths; ':' = the dim, point = 1) under env.
 * Returns rank, or -1 when an extent cannot be evaluated. */
int sched_box(const Sched *v, const SchedEnv *env, const Expr *ref, long long *box, int max);
/* Bytes one TMA load/store moves (box elements x element size) at sample 0; -1 unknown. */
long long sched_tma_bytes(const Sched *v, const Stmt *s);
/* Trip count of a for statement under env; false if not computable. */
bool sched_trip(const Sched *v, const SchedEnv *env, const Stmt *f, long long *trip);
/* Is statement index j inside the subtree of statement index i? */
bool sched_inside(const Sched *v, int i, int j);
/* Short text of an expression (arena) for messages. */
const char *sched_exprstr(const Sched *v, const Expr *e);
/* Does role r's program contain a statement of kind kind? */
bool sched_role_uses(const Sched *v, int r, StmtKind kind);

/* ---- the lowering's conventions, decided once for verifier and lowering ---- */
/* "Starts free" (docs/LOWERING.md): does role r's first wait on each stage of
 * barrier b pass without a completed phase? True when b is a ring barrier, r
 * writes buffers of b's ring and no TMA signals b (an empty-slot barrier). */
bool sched_starts_free(const Sched *v, int r, int b);


#endif
