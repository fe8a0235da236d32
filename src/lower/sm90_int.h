/*
 * sm90_int.h — internal interface between the sm_90a emitter files.
 *
 * sm90.c walks the kernel and emits everything tied to the tensor-core
 * schedule (roles, barriers, TMA, wgmma, the accumulator-derived fragment
 * layouts). sm90_vec.c emits the plain SIMT vector work: element reads of
 * global tensors in scalar expressions (`let lo = Offsets[c]`) and loads,
 * stores and element-wise math of FRAG_VEC fragments (lower.h).
 * sm90_tile.c emits the thread tiles (`lanes`) and their row and column vectors.
 * sm90_acc.c emits the accumulator-layout primitives that move data between
 * threads through shuffles and shared memory (cumsum down the rows, trisolve).
 * sm90_prelude.c writes the PTX helper library in front of the kernel, from
 * the need_* flags the body emission left in Em. They share the emitter
 * state Em and a few output helpers declared here. Not part of
 * the runner ABI; nothing outside src/lower/sm90*.c includes this file.
 */
#ifndef CAKE_SM90_INT_H
#define CAKE_SM90_INT_H

#include "lower.h"

/* Emitter state of one kernel. */
typedef struct Em {
	Ctx *c;
	Kernel *k;
	const Plan *p;
	StrBuf *o;          /* kernel body being written */
	bool dbg;
	bool ok;
	int ind;
	const char *file;   /* basename of the source */
	int role;           /* current role index */
	int loops;          /* loops around the statement being emitted */
	const Stmt *loop_at[16]; /* those loops, outermost first (the outer 16 only): where a loop variable's range is read */
	bool elected;       /* current role runs on one elected thread */
	unsigned short need_w[2][33]; /* wgmma wrappers needed: [f16?][N/8], bit (A negated ? 8 : 0) + (A M-major ? 4 : 0) + (A regs ? 2 : 0) + (B N-major ? 1 : 0) */
	bool need_rank[6];  /* tma_load_Nd wrappers needed */
	bool need_store_rank[6]; /* tma_store_Nd wrappers (and the bulk-group helpers) needed */
	/* TMA stores of the current role (emit_role): src[b] the role stores buffer b through TMA,
	 * issued[b] a store of b has been emitted so far (its read may still be pending) */
	bool *tstore_src;
	bool *tstore_issued;
	bool need_pack[DT__COUNT];
	bool need_red;      /* red_add_* wrappers (atomic_add) needed */
	bool need_gmem;     /* ld/st global helpers of sm90_vec.c needed */
	int nscan;          /* thread-vector scans emitted so far (names their shared scratch) */
	long long xchg_at;  /* bytes of the role's scratch the current exchange's arrays take (sm90_xchg) */
	/* barriers armed (expect_tx emitted) in the current loop body */
	bool *armed;
	/* row reductions nested in the expression being emitted, precomputed into temporaries */
	const Expr *red_expr[8];
	const char *red_name[8];
	int nred;
	/* row values an accumulator-layout statement reads, computed before its element loop
	 * (sm90.c, acc_pre_*): l2norm's per-row scale (PRE_L2), a vector broadcast in the
	 * other orientation through shared memory (PRE_RELAY: rows() of a column vector,
	 * cols() of a row vector), read at pre_ix[] */
	const Expr *pre_expr[8];
	const char *pre_name[8];
	const char *pre_ix[8];
	int pre_kind[8];
	int npre;
	const PlanFrag *acc_ref;   /* the tile of the statement acc_pre_collect looks at */
	/* sum() calls of the statement being emitted, precomputed into scalar temporaries */
	const Expr *sum_expr[8];
	const char *sum_name[8];
	int nsum;
} Em;

/* Loop context of a fragment expression: the layout iterated over and the
 * fragment that fixes its index decoding (and, for FRAG_VEC, its length). */
typedef struct Fx {
	FragLayout lay;
	const PlanFrag *ref;
	const char *ix;         /* the register index variable (NULL: the layout's default) */
	long long n;            /* FRAG_TROW/TCOL nested in a tile: the expected length (0: ref's) */
} Fx;

/* ---- helpers defined in sm90.c ---- */

/* Append one indented line of kernel text. */
void sm90_line(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a CK-LOW error at sp (role filled in) and mark the emission failed. */
Diag *sm90_refuse(Em *e, Span sp, const char *id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* "// file:line: <source>  -- extra" for the statement at sp. */
void sm90_ir_comment(Em *e, Span sp, const char *extra);
/* C text of a scalar expression (refused with CK-LOW-002 when not scalar-lowerable). */
char *sm90_cexpr(Em *e, const Expr *x);
/* Same, parenthesised unless a single name or number. */
char *sm90_cexpr_p(Em *e, const Expr *x);
/* C type of a tensor element, and of a fragment register (16-bit floats held as f32). */
const char *sm90_ctype(DType t);
const char *sm90_ftype(DType t);
/* The plan fragment named by identifier x, or NULL. */
const PlanFrag *sm90_frag_of(Em *e, const Expr *x);
/* C text of element x of a fragment expression at the current index of c->lay. */
bool sm90_fx_emit(Em *e, StrBuf *o, const Expr *x, const Fx *c);

/* The shared array `ty name[dims[0]]..[dims[rank-1]]` of a cross-thread exchange of role
 * `role` (one that writes it, a named barrier over the role, reads it, then frees it with
 * a last barrier over the role): in the role's part of the lowering's scratch when it has
 * one with room left in the current exchange, else a static __shared__ array.
 * sm90_xchg_begin starts an exchange (its arrays from the start of the part again). */
void sm90_xchg_begin(Em *e);
void sm90_xchg(Em *e, int role, const char *ty, const char *name, int rank, const long long *dims, const char *note);

/* The "const int mt_ = ..., j_, h_, e_" line decoding accumulator index a_ of ref (one tab in). */
void sm90_acc_decode(Em *e, const PlanFrag *ref);
/* First accumulator-layout fragment read by x (not inside sum()), or NULL. */
const PlanFrag *sm90_find_acc(Em *e, const Expr *x);

/* ---- sm90_acc.c: accumulator-layout primitives that move data between threads ---- */

/* dst = cumsum(x, 0) over accumulator-layout tiles: a scan down the rows. */
void sm90_acc_cumsum(Em *e, Stmt *s, const PlanFrag *dst);
/* dst = trisolve(L, B): forward substitution through the role's shared scratch. */
void sm90_acc_trisolve(Em *e, Stmt *s, const PlanFrag *dst);

/* ---- sm90_prelude.c ---- */

/* The helper library the kernel body needs, in its fixed order: the
 * always-present prelude, then tma_load_<R>d per e->need_rank, wgmma
 * wrappers per e->need_w, red_add_* (need_red), the sm90_vec.c global
 * helpers (need_gmem) and, with debug_hang, the hang_note recorder. */
void sm90_prelude_emit(StrBuf *o, const Em *e, bool debug_hang);

/* ---- sm90_vec.c ---- */

/* True when x (a scalar expression) reads a global tensor element anywhere. */
bool sm90_vec_has_reads(const Expr *x);
/* NULL when every element read in x is a full point index of a global tensor
 * with scalar-lowerable indices; else the offending sub-expression. `bad` is
 * the caller's checker for the remaining (non-read) leaves. */
const Expr *sm90_vec_reads_bad(Em *e, const Expr *x, const Expr *(*bad)(Em *, const Expr *));
/* C text of a scalar expression containing element reads (64-bit index math). */
char *sm90_vec_cexpr(Em *e, const Expr *x);
/* C type of a `let` whose value contains element reads (the read tensor's dtype). */
const char *sm90_vec_let_type(Em *e, const Expr *x);
/* load F <- G[i, .., s +: n] into a FRAG_VEC fragment. */
void sm90_vec_load(Em *e, Stmt *s, const PlanFrag *f);
/* store G[i, .., s +: n] <- expr over FRAG_VEC fragments (f: one of them). */
void sm90_vec_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *f);
/* Scatter forms over a thread-vector index `ix` (G[i, .., ix] with point indices
 * before it, ix the last index): atomic_add, a plain scatter store, and
 * dst = fetch_add(G[.., ix], v). Each returns after refusing what it cannot lower. */
void sm90_vec_atomic(Em *e, Stmt *s, const PlanFrag *ix);
void sm90_vec_atomic_row(Em *e, Stmt *s, const PlanFrag *f);
void sm90_vec_scatter_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *ix);
void sm90_vec_fetch_add(Em *e, Stmt *s, const PlanFrag *dst);
/* dst = cumsum(x, 0) over thread vectors: a role-wide inclusive scan. */
void sm90_vec_cumsum(Em *e, Stmt *s, const PlanFrag *dst);
/* A positive number that provably divides scalar expression x (1 if unknown; 0 for 0):
 * literals, consts, dims through their `D % c == 0` domain constraints. */
long long sm90_known_multiple(const Em *e, const Expr *x);
/* Does ref index a shared buffer? */
bool sm90_vec_is_smem(Em *e, const Expr *ref);
/* load v <- buf[.., s +: n] (load true, src unused) or store buf[.., s +: n] <- src. */
void sm90_vec_smem_rows(Em *e, Stmt *s, const Expr *src, const PlanFrag *f, bool load);
/* atomic_add buf[.., idx] <- v (dst NULL) or dst = fetch_add(buf[.., idx], v) on a shared buffer. */
void sm90_vec_smem_atomic(Em *e, Stmt *s, const Expr *ref, const Expr *v, const PlanFrag *ix, const PlanFrag *dst);
/* "(element index)" of the current v_ of thread vector f, for row_idx(). */
char *sm90_vec_elem_index(Em *e, const PlanFrag *f);
/* The ld.global / st.global helper functions, emitted once per translation unit. */
void sm90_vec_helpers(StrBuf *o);
/* The global tensor parameter called name, or NULL. */
const Decl *sm90_global(const Em *e, const char *name);
/* True when the kernel never writes global tensor `name` (ld.global.nc is safe). */
bool sm90_read_only(const Em *e, const char *name);
/* "(long long)i * stride + ..." of the first npoints point indices of x into g. */
void sm90_point_offset(Em *e, StrBuf *o, const Expr *x, const Decl *g, int npoints);
long long sm90_gcd(long long a, long long b);

/* A global reference G[..] whose slices are point indices and at most two ranges
 * (`s +: n` or `:`), in any dimensions: the pieces of its element offset. */
typedef struct GRef {
	const Decl *g;
	int nr;                     /* ranged dimensions, 0..2, outermost first */
	int rdim[2];                /* their indices */
	long long len[2];
	const char *start[2];       /* C text of the starts ("0") */
	long long mstart[2];        /* provable multiples (0: the start is 0) */
	const char *stride[2];      /* element strides of the ranged dimensions (C text) */
	long long mstride[2];
	bool unit[2];               /* the innermost dimension (stride 1) */
	const char *base;           /* element offset of the point indices ("" when none) */
	long long mbase;            /* its provable multiple (0: it is 0) */
} GRef;
/* False when x is not such a reference (a scatter index, more than two ranges, a
 * dtype the plain accesses do not move). */
bool sm90_gref(Em *e, const Expr *x, GRef *r);

/* ---- sm90_tile.c: thread tiles (FRAG_TILE) and their vectors (FRAG_TROW, FRAG_TCOL) ---- */

/* C text of the tile row held at register row index `i` (a C expression) of f's role. */
char *sm90_tile_row(Em *e, const PlanFrag *f, const char *i);
/* C text of the tile column held at register column index `j`. */
char *sm90_tile_col(Em *e, const PlanFrag *f, const char *j);
/* Columns per lane (P) and rows per thread of f's tile layout. */
int sm90_tile_pc(const Em *e, const PlanFrag *f);
/* load F <- G[i, .., rows, cols] (tile), G[i, .., s +: n] (row or column vector). */
void sm90_tile_load(Em *e, Stmt *s, const PlanFrag *f);
/* store G[..] <- expr whose layout is f's (a tile, a row vector or a column vector). */
void sm90_tile_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *f);
/* Compute call = rowsum/rowmax/rowmin (into a FRAG_TROW-shaped name[]) or
 * colsum/colmax (FRAG_TCOL) of a tile expression; ctx is the tile that fixes the
 * shape when the argument reads none. Declares `name` when declare. */
bool sm90_tile_reduce(Em *e, const Expr *call, const char *name, DType dt, const PlanFrag *ctx, bool declare, Span sp);
/* Emit `const T name = sum(x)` for a sum() call (a full reduction over the role). */
bool sm90_sum_emit(Em *e, const Expr *call, const char *name, Span sp);

#endif
