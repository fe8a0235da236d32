/*
 * lower.h — the derived plan of a kernel and the sm_90a lowering.
 *
 * Cake IR states the schedule (roles, buffers, barriers, pipelines, tiles);
 * the compiler derives the mechanics. derive_plan() computes them once from a
 * kernel that passed sema (and, normally, the verifier), reading the same
 * schedule model the verifier checked (src/sched/sched.h: roles, buffers and
 * their shared-memory layout, barriers, fragments, statement index), and
 * records them in a Plan: warp/warpgroup identity and setmaxnreg per role,
 * the shared-memory layout with every alignment, the barrier table with
 * arrival counts and expect_tx bytes, the stage/phase rule of each pipelined
 * loop, the TMA tensor maps the host must encode, the launch configuration
 * and the ordered kernel argument list. The Plan is the ABI between the compiler and the GPU runner
 * (src/gpu/): the runner encodes tensor maps, sizes the grid and marshals the
 * arguments in exactly the order of Plan.args, evaluating every symbolic
 * extent with eval_expr() over the bound dims.
 *
 * lower_sm90() turns kernel + plan into readable CUDA C++ with inline PTX
 * (NVRTC-compilable, no #include). Everything the lowering does not support
 * yet is refused with a CK-LOW-* error naming the construct; nothing is ever
 * lowered silently for another target.
 *
 * Dims: dimvals[] arrays are indexed like Kernel.dims (sema order: first
 * appearance in param shapes); Plan.dims mirrors that list.
 *
 * Module prefixes: plan_, lower_, eval_.
 */
#ifndef CAKE_LOWER_H
#define CAKE_LOWER_H

#include "../front/front.h"

/* ---- roles ---- */

typedef struct PlanRole {
	const char *name;
	Decl *decl;
	int warp_lo, warp_hi;   /* inclusive warp range, as declared */
	int nwarps;
	int thread_lo;          /* first thread index (warp_lo * 32) */
	int nthreads;           /* nwarps * 32 */
	int wg_lo, wg_hi;       /* warpgroups touched (warp / 4), inclusive */
	int nwg;                /* number of whole warpgroups (0 if the role is < 4 warps) */
	int regs;               /* setmaxnreg value; 0 = no setmaxnreg emitted */
	int regs_dir;           /* +1 setmaxnreg.inc, -1 setmaxnreg.dec, 0 none */
	bool single_thread;     /* the role program only issues async work (wait/tma/loops):
	                         * one elected thread (thread_lo) runs it, as in a TMA producer */
	int arrivals_per_arrive;/* arrivals one `arrive` statement contributes:
	                         * nwg, or 1 when the role has fewer than 4 warps */
} PlanRole;

/* ---- pipelines and pipelined loops ---- */

typedef struct PlanPipe {
	const char *name;
	Decl *decl;
	int stages;
} PlanPipe;

/* One `for ... pipelined P` loop. The executing role keeps two registers per
 * pipeline, stage_var and phase_var, initialised to 0 once at the start of the
 * role program (before any persistent tile loop, so they continue across
 * tiles and across successive loops on the same pipeline). At the end of each
 * iteration: stage += 1; if stage == stages { stage = 0; phase ^= 1 }.
 * A ring barrier B waited in the loop is addressed as B[stage]; the parity
 * waited for is `phase` or, if B starts free (PlanBarrier.starts_free),
 * `phase ^ 1` so the first pass through the ring does not block. */
typedef struct PlanLoop {
	Stmt *loop;
	int pipe;               /* index into Plan.pipes */
	int role;               /* index into Plan.roles */
	const char *stage_var;  /* emitted variable names, e.g. "ab_stage" */
	const char *phase_var;  /* e.g. "ab_phase" */
} PlanLoop;

/* ---- shared memory ---- */

typedef struct PlanBuffer {
	const char *name;
	Decl *decl;
	DType dt;
	int rank;
	long long shape[MAX_RANK];  /* constant extents, outermost first */
	long long bytes_per_stage;  /* elements * dtype size */
	long long stage_stride;     /* bytes_per_stage rounded up to align */
	int stages;                 /* ring stages, 1 if not a ring */
	int pipe;                   /* ring pipeline index, -1 if none */
	long long offset;           /* byte offset from the aligned dynamic-smem base */
	int align;                  /* 1024 for 128B/64B/32B swizzle, 128 for TMA/wgmma use, 16 else */
	Swizzle swizzle;
	bool tma_dst;               /* filled by a tma load */
	bool tma_src;               /* read by a tma store */
	bool wgmma_operand;         /* read by wgmma through a descriptor */
	/* wgmma descriptor pieces for this buffer (valid when wgmma_operand) */
	int desc_lbo;               /* leading byte offset, bytes */
	int desc_sbo;               /* stride byte offset, bytes (8 rows * row bytes) */
	int desc_layout;            /* bits 62-63: 1 = 128B, 2 = 64B, 3 = 32B, 0 = none */
	int row_bytes;              /* bytes of the innermost extent */
} PlanBuffer;

typedef struct PlanBarrier {
	const char *name;
	Decl *decl;
	long long offset;           /* byte offset (8-aligned) of barrier[0] */
	int count;                  /* number of mbarriers: stages of its ring, else 1 */
	int pipe;                   /* ring pipeline index, -1 if none */
	int arrivals;               /* per-phase arrival count given to mbarrier.init */
	long long tx_bytes;         /* expect_tx bytes per phase: sum of the TMA boxes that
	                             * signal it in one iteration (0 = no TMA) */
	bool starts_free;           /* first wait per stage passes (parity phase^1): the
	                             * waiting roles are the writers of the ring's buffers */
} PlanBarrier;

/* ---- TMA tensor maps (host side: cuTensorMapEncodeTiled) ---- */

typedef struct PlanTmap {
	const char *param;          /* global tensor parameter name */
	Decl *param_decl;
	DType dt;                   /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 for bf16, ... */
	int rank;
	Expr *gdims[MAX_RANK];      /* global extents, INNERMOST FIRST (eval_expr them) */
	Expr *gstrides[MAX_RANK];   /* byte strides of dims 1..rank-1 (gstrides[0] unused,
	                             * NULL); innermost-first like gdims (row-major tensor) */
	int box[MAX_RANK];          /* box extents in elements, innermost first */
	int elem_strides[MAX_RANK]; /* all 1 */
	Swizzle swizzle;            /* CU_TENSOR_MAP_SWIZZLE_* matching the smem buffer */
	int smem_buffer;            /* index into Plan.buffers it fills (a load) or reads (a store) */
	bool store;                 /* used by a tma store: the kernel writes the tensor through it */
	int box_bytes;              /* product(box) * dtype size */
	const char *var;            /* kernel parameter name, e.g. "tmA" */
	Stmt **uses;                /* the `tma` statements that use this map */
	int nuses;
} PlanTmap;

/* ---- register fragments ---- */

/* Register layout of a fragment, all derived from the wgmma m64nNk16
 * accumulator layout so that element-wise math needs no data movement:
 *   FRAG_ACC  rank 2: thread t (warp w = t/32 % 4, lane l) of a warpgroup holds,
 *             per 64-row tile mt and 8-column group j, the elements
 *             (mt*64 + w*16 + l/4 + 8h, 8j + 2(l%4) + e) at index
 *             mt*(wg_cols/2) + 4j + 2h + e  (h, e in {0, 1});
 *   FRAG_ROW  rank 1, one value per row (split m like the accumulator): index
 *             mt*2 + h holds row mt*64 + w*16 + l/4 + 8h (the 4 lanes of a quad
 *             hold the same value);
 *   FRAG_COL  rank 1, one value per column (broadcast with cols()): index
 *             2j + e holds column 8j + 2(l%4) + e;
 *   FRAG_VEC  rank 1 in a role that owns no accumulator-layout fragment (plain
 *             SIMT vector work, src/lower/sm90_vec.c): the elements are spread
 *             over the role's threads in contiguous runs; role thread t (threadIdx.x
 *             - thread_lo) holds elements t*P .. t*P + P-1 at register index 0..P-1,
 *             P = regs_per_thread = ceil(len / role threads) (one element per thread
 *             for a 128-vector in 128 threads); threads past the end hold nothing;
 *   FRAG_TILE rank 2, a thread tile (`lanes L`, src/lower/sm90_tile.c): with W the
 *             role's warps, G = 32 / L row groups per warp and P = cols / L, thread
 *             (warp w of the role, lane l) holds, for i in 0 .. rows / (W G) - 1, row
 *             (i W + w) G + l / L, columns (l % L) P .. (l % L) P + P - 1, at index
 *             i P + j; a row is L consecutive lanes, a warp G rows at a time;
 *   FRAG_TROW rank 1 in a role that owns thread tiles, one value per tile row: index i
 *             holds row (i W + w) G + l / L (the L lanes of a row hold the same value);
 *   FRAG_TCOL rank 1 in such a role, one value per tile column: index j holds column
 *             (l % L) P + j (every row group and warp holds the same values). */
typedef enum FragLayout { FRAG_ACC = 0, FRAG_ROW, FRAG_COL, FRAG_VEC, FRAG_TILE, FRAG_TROW, FRAG_TCOL } FragLayout;

typedef struct PlanFrag {
	const char *name;
	Decl *decl;
	DType dt;
	int role;                   /* owning role (index into Plan.roles) */
	long long rows, cols;       /* declared [rows, cols] (rank 1: [rows], cols = 1) */
	SplitKind split;
	long long wg_rows;          /* rows held by one warpgroup (rows / nwg for split m) */
	long long wg_cols;          /* cols held by one warpgroup (cols / nwg for split n) */
	int mtiles;                 /* wg_rows / 64: m64 wgmma tiles per warpgroup */
	FragLayout layout;
	int regs_per_thread;        /* registers per thread in that layout (0: not representable) */
	int lanes;                  /* FRAG_TILE/TROW/TCOL: lanes per tile row (the role's tiles' L) */
} PlanFrag;

/* ---- kernel arguments, in launch order ---- */

typedef enum ArgKind {
	ARG_TMAP,    /* const __grid_constant__ CUtensorMap (64-byte aligned, 128 bytes) */
	ARG_PTR,     /* device pointer to a global tensor parameter */
	ARG_DIM,     /* int (32-bit) value of a symbolic dim */
	ARG_SCALAR,  /* scalar parameter, by value in its dtype */
	ARG_DEBUG,   /* CakeHangRecord * : host-mapped flight recorder (--debug-hang) */
} ArgKind;

typedef struct PlanArg {
	ArgKind kind;
	const char *name;           /* C parameter name in the emitted kernel */
	int index;                  /* ARG_TMAP: Plan.tmaps; ARG_PTR/ARG_SCALAR: Kernel.params
	                             * index (decl order among params); ARG_DIM: Kernel.dims */
	DType dt;                   /* element type (ARG_PTR, ARG_SCALAR) */
} PlanArg;

/* ---- debug-hang flight recorder ----
 * With --debug-hang the kernel takes one extra, last argument: a pointer to
 * host-mapped memory (e.g. cuMemHostRegister(DEVICEMAP) of a MAP_SHARED
 * region, zeroed before launch) holding grid_ctas * Plan.nwarpgroups records.
 * Before every wait, the first thread of the waiting warpgroup (or the
 * elected thread of a single-thread role) writes its record with volatile
 * stores, magic last, then __threadfence_system(). Slot index =
 * (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * nwarpgroups
 * + threadIdx.x / 128. When a role's program ends it writes state = DONE.
 * After a watchdog timeout the host reads every slot whose magic is set: a
 * slot still WAITING names the role, barrier (index into Plan.barriers, whose
 * decl span gives the source line), stage, parity, loop iteration and tile. */
#define CAKE_HANG_MAGIC   0xCA4E0001u
#define CAKE_HANG_WAITING 1u
#define CAKE_HANG_DONE    2u
typedef struct CakeHangRecord {
	uint32_t magic;    /* CAKE_HANG_MAGIC once written (stored last) */
	uint32_t role;     /* index into Plan.roles */
	uint32_t barrier;  /* index into Plan.barriers (0xffffffff: none, e.g. DONE) */
	uint32_t stage;    /* ring stage waited on (0 for a non-ring barrier) */
	uint32_t phase;    /* parity waited for */
	uint32_t iter;     /* value of the innermost enclosing loop variable (0 if none) */
	uint32_t state;    /* CAKE_HANG_WAITING or CAKE_HANG_DONE */
	uint32_t line;     /* IR source line of the wait (or of the role's `in` for DONE) */
	uint32_t tile;     /* persistent grid: the tile index; else the linear CTA index */
	uint32_t seq;      /* number of records this slot has written (wraps) */
	uint32_t reserved[6];
} CakeHangRecord;     /* 64 bytes */

/* ---- how the kernel uses each parameter (the runner's poisoning contract) ---- */

/* One entry per Kernel.params index. The runner and the launch layer read
 * these instead of walking statements: an output is poisoned (0xFF bytes)
 * before every launch so an unwritten element is caught; an accumulator
 * (written by atomic_add) is zeroed instead; a sparse output (written only
 * by atomic_add or scatter stores) may legitimately leave elements
 * unwritten. A family may further declare a parameter in place (its input
 * values are uploaded before every launch; family.h). */
typedef struct PlanParam {
	const char *name;
	Decl *decl;
	bool global;                /* a global tensor (else a scalar) */
	bool output;                /* some store, tma store or atomic_add writes it */
	bool accum;                 /* written by atomic_add */
	bool sparse;                /* written only by atomic_add or scatter stores */
} PlanParam;

/* ---- the plan ---- */

typedef struct Plan {
	Kernel *kernel;
	const char *name;           /* kernel (entry point) name */
	Target target;
	/* dims, same order as Kernel.dims */
	const char **dims;
	int ndims;
	/* roles */
	PlanRole *roles;
	int nroles;
	int block_threads;          /* 32 * (highest warp + 1) */
	int nwarpgroups;            /* ceil(block_threads / 128) = debug slots per CTA */
	/* pipelines */
	PlanPipe *pipes;
	int npipes;
	PlanLoop *loops;
	int nloops;
	/* shared memory: buffers first (largest alignment first), then barriers */
	PlanBuffer *buffers;
	int nbuffers;
	PlanBarrier *barriers;
	int nbarriers;
	long long smem_used;        /* bytes from the aligned base to the end of the barriers */
	int smem_base_align;        /* alignment the kernel imposes on the dynamic base (1024) */
	long long smem_bytes;       /* dynamic smem to request = smem_used + base_align - 16
	                             * (slack: the runtime only guarantees 16-byte alignment) */
	long long scratch_offset;   /* shared memory the lowering uses for itself, after the barriers
	                             * (trisolve's transposes, derive_scratch): offset from the aligned
	                             * base and bytes, included in smem_used/smem_bytes; 0 bytes: none */
	long long scratch_bytes;
	long long *scratch_role;    /* per role (Plan.roles index): the offset of its part, -1 none */
	int *scratch_cols;          /* per role: the columns a trisolve pass solves (its right-hand
	                             * side is solved in passes of at most this many columns, fewer
	                             * than all when the full width would not fit the limit) */
	/* TMA */
	PlanTmap *tmaps;
	int ntmaps;
	/* fragments */
	PlanFrag *frags;
	int nfrags;
	/* launch */
	Expr *grid[3];              /* launch grid extents x, y, z (NULL = 1); grid var i = blockIdx
	                             * axis i, except with a grouped raster (group > 0): then one
	                             * extent, the tile count, and the grid vars come from the mapping */
	int grid_rank;
	bool persistent;            /* launch min(#SMs, tiles) CTAs; each loops over tiles */
	Expr *tiles;                /* product of the grid extents (tile count) */
	int cluster[3];             /* cluster dims (1,1,1 when not declared) */
	/* arguments, in order. args never holds ARG_DEBUG: a kernel built with
	 * --debug-hang takes one more, last, argument (CakeHangRecord *). */
	PlanArg *args;
	int nargs;
	/* parameter uses, per Kernel.params index */
	PlanParam *params;
	int nparams;
	int base_regs;              /* per-thread register budget at launch:
	                             * min(255, 65536 / block_threads) rounded down to 8 */
	/* tile space and raster order (LANGUAGE.md §4.5) */
	Expr *space[3];             /* the declared grid extents (x, y, z) (NULL = 1): the tile space */
	int space_rank;
	int group;                  /* `group G`: tile t -> (x, y) in groups of G rows of y
	                             * (y = first + r % gs, x = r / gs, see plan_print); 0 = natural
	                             * order (x fastest). Non-zero only for 2-D grids. */
} Plan;

/* Derive the plan of kernel k (target must be sm_90a; k must have passed
 * sema). Returns NULL after reporting CK-LOW-* errors to c->diags. */
Plan *derive_plan(Ctx *c, Kernel *k);

/* derive step (params.c): fill p->params from the statements of p->kernel. */
void derive_param_uses(Ctx *c, Plan *p);

/* Print the plan as the human-readable `cake build --emit=plan` table. */
void plan_print(StrBuf *out, const Plan *p);

/* Emit the CUDA C++ translation unit of k for sm_90a into cuda. With
 * debug_hang the kernel takes an extra CakeHangRecord* argument (last) and
 * records each wait. Returns false after CK-LOW-* errors (cuda then holds a
 * partial text that must not be compiled). */
bool lower_sm90(Ctx *c, Kernel *k, const Plan *p, StrBuf *cuda, bool debug_hang);

/* Evaluate a scalar integer expression over bound dims (dimvals indexed like
 * Kernel.dims; NULL: dims unbound) and consts, with front/eval.h's operators and
 * overflow rule. False when it uses anything else (grid vars, loop vars), divides
 * by zero, or overflows. */
bool eval_expr(const Expr *e, const Kernel *k, const long long *dimvals, long long *out);

/* True when every `domain` constraint holds for dimvals. Otherwise false and,
 * if failed_constraint is non-NULL, *failed_constraint receives a malloc'd
 * canonical text of the first failing constraint (e.g. "N % 256 == 0"); the
 * caller frees it. A constraint that cannot be evaluated counts as failing. */
bool eval_domain(const Kernel *k, const long long *dimvals, const char **failed_constraint);

/* Append C source text for a scalar expression (dims, consts, grid vars, loop
 * vars and lets by name; consts and constant arithmetic folded), with only
 * the parentheses C precedence needs. Callers embedding it in a larger C
 * expression wrap it in parentheses. */
void lower_expr_c(StrBuf *out, const Expr *e, const Kernel *k);
/* A builtin call the scalar spelling handles: min/max, the unary float
 * builtins (exp ... silu, softplus with torch's threshold of 20) and casts. */
bool lower_scalar_call_ok(const Expr *e);
/* The C text of such a call with its arguments already spelled (a[0], a[1]);
 * false for any other call. */
bool lower_call_spell(StrBuf *out, const Expr *e, const char *const *a);

/* ---- helpers shared by derive.c and sm90.c (not part of the runner ABI) ---- */

/* Index of the named role / buffer / barrier / pipe / frag in the plan, or -1. */
int plan_role_index(const Plan *p, const char *name);
int plan_buffer_index(const Plan *p, const char *name);
int plan_barrier_index(const Plan *p, const char *name);
int plan_pipe_index(const Plan *p, const char *name);
int plan_frag_index(const Plan *p, const char *name);
/* The f32 stride of the four row groups of trisolve's L (R rows) in the lowering's scratch:
 * rows 4 m + q (q fixed) one after the other, row m padded to 4 m + 4 entries, so a thread's
 * rows lie at offsets 2 m (m + 1) from its group's start and every 4-column block of a row is
 * 16-byte aligned; 4 more than a multiple of 32 floats, so the groups the four threads of a
 * lane quad read at once fall in different banks. */
static inline long long plan_trisolve_group(long long R)
{
	long long R4 = (R + 3) / 4, n = 2 * R4 * R4 + 2 * R4;
	return (n + 27) / 32 * 32 + 4;
}
/* The PlanLoop of a pipelined S_FOR, or NULL. */
const PlanLoop *plan_loop_of(const Plan *p, const Stmt *loop);
/* Index of the tensor map a `tma` load statement uses, or -1. */
int plan_tmap_of(const Plan *p, const Stmt *tma);
/* Name of the global parameter an E_INDEX / E_IDENT refers to (NULL if none). */
const char *lower_base_name(const Expr *e);

#endif
