/*
 * tactics_int.h — what the tactic files share: the application context, the
 * AST helpers and the extent analysis behind the tile tactics.
 *
 * Internal to src/harness/tactic*.c. tactics.c owns the registry and the
 * pipeline (parse, sema, verify the input; precondition; rewrite; print;
 * re-check the result). tactic_axes.c is the extent analysis: it unifies
 * every extent that the program forces to be equal (a TMA box and its
 * buffer, a wgmma's M/N/K axes, both sides of an element-wise expression, a
 * store and its value) into classes, and rewrites one class to a new size
 * together with the grid extents, loop trip counts, slice offsets and domain
 * constraints that depend on it. tactics_sched.c holds the schedule tactics
 * (stages, consumers, regs, unroll, persistent, raster_group, swap_ab),
 * tactics_tile.c the tile tactics (tile_m/n/k, centroid_tile, swizzle,
 * split_k), tactics_ws.c warp_specialize (a single role split into a TMA
 * producer and its consumer), tactics_ring.c operand_ring (a once-per-tile
 * operand moved into a ring of its own on a persistent grid), tactics_ragged.c
 * ragged (a grid axis over whole tiles made to cover any extent, TMA boxes
 * clipped).
 *
 * Reasons: every refusal is one sentence without a trailing period and
 * without the tactic's name (the caller prefixes it), naming the construct
 * (kernel, role, buffer, loop) it is about.
 */
#ifndef CAKE_TACTICS_INT_H
#define CAKE_TACTICS_INT_H

#include "tactics.h"
#include "../front/front.h"
#include "../front/builtins.h"

#define TAC_MAXARGS 4
#define AX_MAXVARS 8
#define AX_MAXDIMS 8
/* registers per thread a role keeps beyond its fragments (addresses, loop
 * counters, descriptors) when a tactic sizes or checks a budget */
#define TAC_REG_HEADROOM 24

typedef struct Axes Axes;

/* The main matrix product of a kernel: the first wgmma (or mma) inside a
 * pipelined loop, with the classes of its M, N and K extents. */
typedef struct Gemm {
	Stmt *mm;             /* the wgmma / mma statement */
	Decl *role;           /* the role that issues it (the consumer role) */
	Decl *acc;            /* its accumulator fragment */
	Decl *a, *b;          /* its operands' declarations (smem buffers or, for A, a fragment) */
	bool a_t, b_t;        /* operand written with ^T */
	int m, n, kk;         /* slots of the M, N and K extents (any member of the class) */
} Gemm;

/* What a tile class looks like: its size, the coordinates that step over it
 * (grid coordinates or loop variables, each used as `v * size`), and the dims
 * it tiles. */
typedef struct TileInfo {
	int slot;
	long long size;
	Sym *vars[AX_MAXVARS];
	int nvars;
	bool grid;            /* some index variable is a grid coordinate */
	bool loop;            /* some index variable is a loop variable */
	const char *dims[AX_MAXDIMS];
	int ndims;
	bool ring;            /* the class holds an extent of a ring buffer */
	char names[160];      /* "a, b" : buffers (or fragments) of the class, for messages */
} TileInfo;

struct TacCtx {
	Ctx *c;               /* the input's compilation (arena for new nodes) */
	Program *prog;
	Kernel *k;
	const Tactic *tac;
	int nargs;
	const char *arg[TAC_MAXARGS];   /* the ':'-separated arguments, raw */
	long long num[TAC_MAXARGS];     /* integer arguments decoded by the parse hook */
	StrBuf *why;          /* the reason, when something fails */
	Vec *props;           /* propose: argument strings pushed here */
	Axes *ax;             /* extent classes (tac_axes) */
	Gemm gemm;            /* main matrix product (tac_gemm) */
	int gemm_state;       /* 0 not looked for, 1 found, -1 none */
};

/* ---- the hooks of every tactic (tactics_sched.c, tactics_tile.c, tactics_ws.c) ----
 * NAME_parse, NAME_pre, NAME_apply and NAME_propose implement the Tactic
 * fields of the same names (their contracts are in tactics.h); tactics.c's
 * registry lists them. */
#define TAC_HOOKS(n) \
	bool n##_parse(TacCtx *t); bool n##_pre(TacCtx *t); bool n##_apply(TacCtx *t); void n##_propose(TacCtx *t);
TAC_HOOKS(tile_m) TAC_HOOKS(tile_n) TAC_HOOKS(tile_k) TAC_HOOKS(centroid_tile) TAC_HOOKS(stages)
TAC_HOOKS(consumers) TAC_HOOKS(persistent) TAC_HOOKS(nonpersistent) TAC_HOOKS(raster_group)
TAC_HOOKS(split_k) TAC_HOOKS(swap_ab) TAC_HOOKS(swizzle) TAC_HOOKS(regs) TAC_HOOKS(unroll)
TAC_HOOKS(warp_specialize) TAC_HOOKS(operand_ring) TAC_HOOKS(ragged)
#undef TAC_HOOKS

/* ---- tactics.c: reasons, arguments, AST helpers ---- */

/* `base`, or base2, base3, ...: the first name the kernel does not use (nor `also`). */
const char *tac_fresh_name(TacCtx *t, const char *base, const char *also);
/* A new statement of kind, named name (a role, barrier or loop variable), without a span. */
Stmt *tac_new_stmt(TacCtx *t, StmtKind kind, const char *name);
/* A one-name list (a barrier's producers or consumers). */
const char **tac_name_list(TacCtx *t, const char *name);
/* Insert d into the kernel's declarations at index at. */
void tac_insert_decl(TacCtx *t, Decl *d, int at);

/* Does expression e mention name (an identifier, a callee, an indexed base)? */
bool tac_expr_uses(const Expr *e, const char *name);

/* Write the reason (printf format) and return false. */
bool tac_fail(TacCtx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decode argument i as an integer in lo..hi ("what" names it in the message). */
bool tac_int_arg(TacCtx *t, int i, long long lo, long long hi, const char *what);
/* Push a proposal argument string (copied into the arena). */
void tac_propose(TacCtx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* New integer literal / identifier / binary node in the arena. */
Expr *tac_int(TacCtx *t, long long v);
Expr *tac_ident(TacCtx *t, const char *name);
Expr *tac_bin(TacCtx *t, int op, Expr *l, Expr *r);
/* Integer value of a literal (or folded constant) expression; false otherwise. */
bool tac_const(const Expr *e, long long *v);
/* The declaration called `name` of kind `kind`, or NULL. */
Decl *tac_decl(Kernel *k, DeclKind kind, const char *name);
/* The kernel's grid declaration, or NULL. */
Decl *tac_grid(Kernel *k);
/* The `in ROLE` statement of role `name`, or NULL. */
Stmt *tac_role_body(Kernel *k, const char *name);
/* Call fn on every statement of the kernel body, in program order (pre-order). */
void tac_each_stmt(Kernel *k, void (*fn)(Stmt *s, void *arg), void *arg);
/* Pointers to the expression fields of s (lo, hi, step, cond, dst, src, lhs...);
 * returns how many were stored (at most max). */
int tac_stmt_exprs(Stmt *s, Expr ***slots, int max);
/* True when `name` is used anywhere in the kernel (declarations, statements). */
bool tac_name_used(Kernel *k, const char *name);
/* Number of warpgroups of a role (1 for a role of fewer than 4 warps). */
int tac_role_wgs(const Decl *r);
/* Threads of a role. */
int tac_role_threads(const Decl *r);
/* Registers per thread the fragments of role r need, counted as CK-RES-009 does. */
long long tac_frag_words(Kernel *k, const Decl *r);
/* Registers a role may ask for so that sum(regs x threads) fits the CTA's launch
 * pool, given the other roles' budgets; a multiple of 8, at most 256. */
int tac_regs_fit(Kernel *k, const Decl *r);
/* The main matrix product (cached); false with a reason when there is none. */
bool tac_gemm(TacCtx *t);

/* ---- tactics_sched.c ---- */

/* Check (and with apply, make) every fragment of role splittable over nwg
 * warpgroups: an accumulator whose rows leave no multiple of 64 per warpgroup
 * is split by columns instead when its wgmmas allow it. False with a reason. */
bool tac_fix_splits(TacCtx *t, Decl *role, int nwg, bool apply);

/* ---- tactic_axes.c: extent classes and the tile rewrite ---- */

/* Unify the extents of t's kernel (cached in t->ax). */
Axes *tac_axes(TacCtx *t);
/* Slot of axis `axis` of a smem buffer or fragment declaration, or -1. */
int ax_decl_slot(Axes *A, const Decl *d, int axis);
/* Representative of slot's class. */
int ax_class(Axes *A, int slot);
/* Describe the class of `slot` as a tile; false with a reason when it is not
 * one this engine can resize (an extent written as a const, a slice at a
 * constant offset, a coordinate used other than as `v * size`). `what` names
 * the class in reasons ("the M tile"). */
bool ax_tile_info(TacCtx *t, int slot, const char *what, TileInfo *ti);
/* Resize the class described by ti to `size`: extents, slice offsets
 * `v * size`, every other `v * size` of its coordinates, grid extents and loop
 * bounds `D / c`, and domain constraints on the dims it tiles. */
bool ax_tile_resize(TacCtx *t, const TileInfo *ti, long long size);
/* Every smem buffer with an extent in the class of `slot` (up to max); returns count. */
int ax_class_buffers(Axes *A, int slot, Decl **out, int max);
/* Scale the domain constraints on dim `dim` of tiled size `from` to `to` (as
 * ax_tile_resize does); `other_tiles` keeps divisibility another tiling needs. */
void ax_scale_domain(TacCtx *t, const char *dim, long long from, long long to, bool other_tiles);

#endif
