/*
 * verify_int.h — the verifier's private model, shared by the rule families.
 *
 * verify_kernel builds one VCtx per kernel (model.c): the declared roles,
 * pipelines, shared buffers, barriers and fragments resolved by name from
 * the declarations (so the verifier does not depend on how much of the tree
 * sema annotated), every statement in preorder with its role, innermost
 * loop, innermost pipelined loop and enclosing `if`, and a small set of
 * sampled domain points (concrete values for the symbolic dims that satisfy
 * the domain constraints, smallest first). Each family (resource.c,
 * contract.c, barrier.c, race.c, dataflow.c, schedule.c, deadlock.c) reads
 * the model and reports through c->diags; none keeps state of its own.
 */
#ifndef CAKE_VERIFY_INT_H
#define CAKE_VERIFY_INT_H

#include "verify.h"

#include <string.h>

#define VSAMPLES 48       /* sampled domain points per dim */
#define VENV_MAX 48       /* bindings in one evaluation environment */

typedef struct VRole {
	Decl *d;
	const char *name;
	int lo, hi, warps, threads;
	int arrive_weight;    /* arrivals per `arrive`: warpgroups, or 1 under 4 warps */
	int wgs;              /* warpgroups (warps / 4, at least 1) */
	Stmt *prog;           /* the first `in` block of this role, or NULL */
	int nprogs;           /* number of `in` blocks naming it */
} VRole;

typedef struct VPipe {
	Decl *d;
	const char *name;
	int stages;
} VPipe;

typedef struct VSmem {
	Decl *d;
	const char *name;
	int pipe;             /* ring pipeline index or -1 */
	int rank;
	long long dims[MAX_RANK];
	bool cshape;          /* every extent folded to a constant */
	long long elems;      /* per stage, -1 if unknown */
	long long bytes;      /* per stage, -1 if unknown */
} VSmem;

typedef struct VBar {
	Decl *d;
	const char *name;
	int pipe;             /* ring pipeline index or -1 */
} VBar;

typedef struct VFrag {
	Decl *d;
	const char *name;
	int role;             /* owner role index or -1 */
	int rank;
	long long dims[MAX_RANK];
	bool cshape;
} VFrag;

typedef struct VStmt {
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
} VStmt;

typedef struct VEnv {
	const char *names[VENV_MAX];
	long long vals[VENV_MAX];
	int n;
} VEnv;

typedef struct VCtx {
	Ctx *c;
	Kernel *k;
	Arena *a;
	DiagList *dl;
	Target tgt;
	VRole *roles; int nroles;
	VPipe *pipes; int npipes;
	VSmem *smems; int nsmems;
	VBar *bars; int nbars;
	VFrag *frags; int nfrags;
	Decl **params; int nparams;
	Decl **consts; int nconsts;
	Expr **domain; int ndomain;       /* domain constraints split at && */
	const char **dims; int ndims;
	long long (*dimvals)[VSAMPLES];   /* [ndims][VSAMPLES] ascending valid values */
	int *ndimvals;
	bool domain_ok;                   /* every dim got at least one value */
	const char **gridvars; int ngridvars;
	bool persistent;                  /* grid persistent: role programs run once per tile */
	VStmt *st; int nst;
	const Stmt **sidx_key; int *sidx_val; int sidx_cap;   /* Stmt* -> index hash */
} VCtx;

/* ---- model.c ---- */
/* Build the model of kernel k (arena-backed in c->arena). */
void vmodel_build(VCtx *v, Ctx *c, Kernel *k);
/* Release anything the model holds outside the arena. */
void vmodel_free(VCtx *v);
/* Index of a declared role/pipeline/smem/barrier/fragment/param by name, or -1. */
int v_role(const VCtx *v, const char *name);
int v_pipe(const VCtx *v, const char *name);
int v_smem(const VCtx *v, const char *name);
int v_bar(const VCtx *v, const char *name);
int v_frag(const VCtx *v, const char *name);
Decl *v_param(const VCtx *v, const char *name);
/* Index of statement s in the preorder list, or -1. */
int v_stmt_index(const VCtx *v, const Stmt *s);
/* Evaluate an integer expression under env (consts folded); false if not computable. */
bool v_eval(const VCtx *v, const VEnv *env, const Expr *e, long long *out);
/* Bind name=val in env (later bindings shadow earlier ones). */
void venv_set(VEnv *env, const char *name, long long val);
/* Environment of domain sample i: every dim at its i-th valid value, grid vars 0. */
void venv_sample(const VCtx *v, VEnv *env, int i);
/* venv_sample plus every loop enclosing statement idx bound to its lower bound. */
void v_loop_env(const VCtx *v, VEnv *env, int sample, int idx);
/* Number of distinct domain samples available (>= 1; 1 when there are no dims). */
int v_nsamples(const VCtx *v);
/* Name of the buffer/fragment/param an operand expression refers to (strips ^T, [..], casts). */
const char *v_refname(const Expr *e);
/* True when e is `x^T` (possibly parenthesised). */
bool v_is_transposed(const Expr *e);
/* Collect up to max identifier names read by e (deduplicated); returns count. */
int v_idents(const Expr *e, const char **out, int max);
/* True if e mentions identifier name. */
bool v_mentions(const Expr *e, const char *name);
/* The smem buffer written by statement s (TMA load, cp.async, store), or -1. */
int v_smem_written(const VCtx *v, const Stmt *s);
/* Collect smem buffers read by s into out (max n); returns count. */
int v_smem_read(const VCtx *v, const Stmt *s, int *out, int max);
/* Barrier signalled/arrived by s (TMA signal or arrive), waited by s: index or -1. */
int v_bar_arrived(const VCtx *v, const Stmt *s);
int v_bar_waited(const VCtx *v, const Stmt *s);
/* Matmul operands of a wgmma/mma statement (NULL when malformed). */
bool v_matmul_ops(const Stmt *s, const Expr **a, const Expr **b);
/* Box extents of a global reference (slice lengths; ':' = the dim, point = 1) under env.
 * Returns rank, or -1 when an extent cannot be evaluated. */
int v_box(const VCtx *v, const VEnv *env, const Expr *ref, long long *box, int max);
/* Bytes one TMA load/store moves (box elements x element size) at sample 0; -1 unknown. */
long long v_tma_bytes(const VCtx *v, const Stmt *s);
/* Trip count of a for statement under env; false if not computable. */
bool v_trip(const VCtx *v, const VEnv *env, const Stmt *f, long long *trip);
/* Is statement index j inside the subtree of statement index i? */
bool v_inside(const VCtx *v, int i, int j);
/* Short text of an expression (arena) for messages. */
const char *v_exprstr(const VCtx *v, const Expr *e);
/* Does role r's program contain a statement of kind kind? */
bool v_role_uses(const VCtx *v, int r, StmtKind kind);

/* ---- the families: each runs all its checks on the model, reports every finding ---- */
/* CK-RES-*: shared memory layout, registers, threads, barrier limits. */
void verify_resource(VCtx *v);
/* CK-HW-*: wgmma/mma/TMA/cp.async contracts, target availability, clusters. */
void verify_contract(VCtx *v);
/* CK-BAR-*: arrival counts, tx bytes, producers, pipeline trip counts. */
void verify_barrier(VCtx *v);
/* CK-RACE-*: RAW/WAR on stages, wgmma in flight, proxy fences, handoffs. */
void verify_race(VCtx *v);
/* CK-DATA-*: swizzle vs wgmma, fragment splits, tile strides, loop coverage. */
void verify_dataflow(VCtx *v);
/* CK-SCHED-*: initialisation, unused resources, dead roles, trip counts. */
void verify_schedule(VCtx *v);
/* CK-DEAD-*: the deadlock model checker. */
void verify_deadlock(VCtx *v);
/* The lowering's "starts free" convention (docs/LOWERING.md): does role r's first
 * wait on each stage of ring barrier b pass without a completed phase? True when r
 * writes buffers of b's ring and no TMA signals b (an empty-slot barrier). */
bool v_starts_free(const VCtx *v, int r, int b);

/* ---- shared helpers for findings ---- */
/* diag_add with the role/resource/barrier/pipeline fields set when non-NULL. */
Diag *v_report(VCtx *v, const char *rule, Span span, int role, const char *resource,
               int bar, int pipe, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

#endif
