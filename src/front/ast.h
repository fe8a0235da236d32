/*
 * ast.h — the Cake IR syntax tree, shared by every pass.
 *
 * The parser builds it; sema annotates it in place (resolved symbols, value
 * types, owning role of each statement); the verifier and the lowering read
 * it. Every node has a Span. Lists are arena arrays with a count.
 *
 * The language is specified in docs/LANGUAGE.md; its grammar, which the
 * parser implements exactly, is docs/grammar.ebnf.
 *
 * Concrete syntax sketch (the normative grammar is docs/grammar.ebnf):
 *
 *   kernel gemm target sm_90a
 *     param A: global bf16[M, K]
 *     const BM = 128
 *     domain M % 128 == 0, K >= 64
 *     grid (N / 128, M / 128) as (bn, bm)
 *     role load warps 0..0 regs 40
 *     pipeline ab stages 4
 *     smem a: bf16[128, 64] swizzle 128B ring ab
 *     barrier full ring ab producers load consumers mma arrivals 1
 *     frag acc: f32[128, 256] in mma split m
 *   {
 *     in load { for k in 0 .. K / 64 pipelined ab { wait empty  tma a <- A[..] signal full } }
 *     in mma  { ... }
 *   }
 *
 * Newlines are not significant; statements and declarations are delimited by
 * their leading keyword. '#' starts a comment to end of line; '/' '*' block
 * comments do not nest.
 */
#ifndef CAKE_AST_H
#define CAKE_AST_H

#include "../base/base.h"
#include "../base/target.h"

/* ---- element types, spaces, targets ---- */

typedef enum DType {
	DT_NONE = 0, DT_BF16, DT_F16, DT_F32, DT_F8E4M3,
	DT_I32, DT_U32, DT_I64, DT_BOOL,
	DT__COUNT
} DType;

typedef enum Space {
	SP_NONE = 0,   /* scalar (uniform value) */
	SP_GLOBAL,     /* global-memory tensor parameter */
	SP_SMEM,       /* shared-memory buffer */
	SP_FRAG,       /* register fragment owned by a role */
} Space;

/* Target, target_name() and target_from() live in the target table (base/target.h). */

typedef enum Swizzle { SWZ_NONE = 0, SWZ_32B, SWZ_64B, SWZ_128B } Swizzle;

/* Size in bytes of one element (f8 = 1, bool = 1). */
int dtype_size(DType t);
/* Keyword spelling ("bf16"...); "?" for DT_NONE. */
const char *dtype_name(DType t);
/* Parse a dtype keyword; DT_NONE if s is not one. */
DType dtype_from(const char *s, int n);
/* True for bf16, f16, f32 and f8e4m3. */
bool dtype_is_float(DType t);
const char *swizzle_name(Swizzle s);   /* "none", "32B", "64B", "128B" */
int swizzle_bytes(Swizzle s);          /* 0, 32, 64, 128 */
/* Source spelling of a unary/binary operator code ("==", "<<", "@"...); "?" if unknown.
 * The C emitters use it too: every operator but '@' is spelled the same in C. */
const char *op_spelling(int op);

/* ---- symbols ---- */

typedef struct Decl Decl;
typedef struct Expr Expr;
typedef struct Stmt Stmt;

typedef enum SymKind {
	SYM_NONE = 0,
	SYM_DIM,       /* symbolic size (M, N, K) introduced by a param shape */
	SYM_PARAM,     /* global tensor or scalar parameter */
	SYM_CONST,     /* compile-time constant */
	SYM_GRIDVAR,   /* block coordinate named by `grid ... as (...)` */
	SYM_ROLE,
	SYM_PIPE,
	SYM_SMEM,
	SYM_BARRIER,
	SYM_FRAG,
	SYM_LOOPVAR,
	SYM_LET,       /* scalar bound by `let` */
	SYM_BUILTIN,   /* builtin function (exp2, rowmin, ...) */
} SymKind;

typedef struct Sym {
	SymKind kind;
	const char *name;
	Span span;          /* declaration site */
	Decl *decl;         /* for declared resources */
	Stmt *stmt;         /* for loop variables / lets */
	int index;          /* dims: dim number; grid vars: axis; builtins: id */
} Sym;

/* ---- types of values (filled by sema) ---- */

#define MAX_RANK 4

typedef struct Type {
	DType dt;
	Space space;
	int rank;               /* 0 = scalar */
	Expr *dims[MAX_RANK];   /* symbolic extents (may be NULL for derived) */
	long long cdims[MAX_RANK]; /* constant-folded extents, -1 if symbolic */
} Type;

/* ---- expressions ---- */

typedef enum ExprKind {
	E_INT, E_FLOAT, E_IDENT,
	E_UNARY,      /* op: '-', '!' */
	E_BINARY,     /* op: + - * / % == != < <= > >= && || and MATMUL '@' */
	E_CALL,       /* builtin(args) or dtype cast bf16(x) */
	E_INDEX,      /* base[slice, ...] */
	E_TRANSPOSE,  /* x^T */
	E_INF,        /* the literal `inf` */
} ExprKind;

typedef enum SliceKind {
	SL_POINT,     /* e          : a single index */
	SL_RANGE,     /* e +: n     : n elements starting at e */
	SL_ALL,       /* :          : the whole extent */
} SliceKind;

typedef struct Slice {
	SliceKind kind;
	Expr *start;  /* SL_POINT, SL_RANGE */
	Expr *len;    /* SL_RANGE */
	Span span;
} Slice;

/* Binary/unary operator codes (single chars where possible). */
enum {
	OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_AND, OP_OR, OP_SHL, OP_SHR,
};

struct Expr {
	ExprKind kind;
	Span span;
	long long ival;       /* E_INT */
	double fval;          /* E_FLOAT */
	const char *name;     /* E_IDENT, E_CALL (callee) */
	int op;               /* E_UNARY, E_BINARY */
	Expr *lhs, *rhs;      /* E_BINARY; E_UNARY/E_TRANSPOSE use lhs */
	Expr **args;          /* E_CALL */
	int nargs;
	Expr *base;           /* E_INDEX */
	Slice *slices;        /* E_INDEX */
	int nslices;
	/* sema */
	Sym *sym;             /* E_IDENT, E_CALL (builtin), E_INDEX (base's sym) */
	Type type;
	bool is_const;        /* folded to a compile-time constant */
	long long cval;
	/* parser */
	int height;           /* height of this subtree (leaf = 1); the parser keeps
	                       * it <= Ctx.max_depth so recursive passes are safe */
};

/* ---- declarations ---- */

typedef enum DeclKind {
	D_PARAM, D_CONST, D_DOMAIN, D_GRID, D_CLUSTER, D_ROLE, D_PIPELINE,
	D_SMEM, D_BARRIER, D_FRAG, D_FAMILY,
} DeclKind;

typedef enum SplitKind { SPLIT_NONE = 0, SPLIT_M, SPLIT_N } SplitKind;

struct Decl {
	DeclKind kind;
	Span span;            /* whole declaration */
	const char *name;     /* NULL for domain, grid, cluster */
	Span name_span;
	/* D_PARAM, D_SMEM, D_FRAG: element type and shape */
	DType dt;
	Space space;          /* D_PARAM: SP_GLOBAL or SP_NONE (scalar) */
	Expr **shape;
	int rank;
	/* D_CONST */
	Expr *value;
	/* D_DOMAIN: constraints; D_GRID: extents; D_CLUSTER: extents */
	Expr **exprs;
	int nexprs;
	/* D_GRID */
	const char **grid_vars;
	Span *grid_var_spans;
	bool persistent;
	int group;            /* `group G`: grouped tile raster, G rows of the second
	                       * axis per group (LANGUAGE.md §4.5); 0 = not stated */
	bool group_stated;    /* a `group` clause was written (even `group 0`, which
	                       * sema rejects) */
	Span group_span;      /* the `group G` clause (for diagnostics) */
	/* D_FAMILY */
	bool stage;           /* `family F stage`: one kernel of a chain the app runs as a
	                       * layer; the family's contract holds for the chain (LANGUAGE.md) */
	Span stage_span;
	/* D_ROLE */
	int warp_lo, warp_hi; /* inclusive */
	int regs;             /* 0 = not stated */
	/* D_PIPELINE */
	int stages;
	/* D_SMEM */
	Swizzle swizzle;
	const char *ring;     /* pipeline name or NULL */
	Span ring_span;
	/* D_BARRIER (ring as above) */
	const char **producers;
	Span *producer_spans;
	int nproducers;
	const char **consumers;
	Span *consumer_spans;
	int nconsumers;
	int arrivals;
	/* D_FRAG */
	const char *owner;    /* role name */
	Span owner_span;
	SplitKind split;
	int lanes;            /* `lanes L`: a thread tile, each row over L lanes (0: not a tile) */
	Span lanes_span;
	/* sema */
	Sym *ring_sym, *owner_sym;
	Sym **producer_syms, **consumer_syms;
	int id;               /* index among declarations of the same kind */
	/* parser (for `cake fmt`) */
	bool blank_before;    /* a blank line preceded it in the source */
};

/* ---- statements ---- */

typedef enum StmtKind {
	S_IN,          /* in ROLE { body } */
	S_FOR,         /* for v in lo .. hi [step s] [pipelined P] [unroll n] { body } */
	S_IF,          /* if cond { then } [else { els }] */
	S_WAIT,        /* wait BAR */
	S_ARRIVE,      /* arrive BAR */
	S_TMA_LOAD,    /* tma SMEM <- GLOBAL[...] signal BAR */
	S_TMA_STORE,   /* tma GLOBAL[...] <- SMEM */
	S_CP_ASYNC,    /* cp_async SMEM[...] <- GLOBAL[...] */
	S_WGMMA,       /* wgmma ACC (+= | =) A @ B */
	S_WGMMA_WAIT,  /* wgmma_wait N */
	S_MMA,         /* mma ACC (+= | =) A @ B   (sm_80 mma.sync) */
	S_LOAD,        /* load FRAG <- SRC[...]    (global or smem, vectorised) */
	S_STORE,       /* store DST[...] <- expr   (global or smem) */
	S_ATOMIC,      /* atomic_add DST[...] <- expr */
	S_FENCE,       /* fence proxy_async | cta | gpu */
	S_SYNC,        /* sync [ROLE]  (named barrier over the role's threads) */
	S_LET,         /* let x = expr */
	S_ASSIGN,      /* a [, b] = expr     (fragment element-wise / reduction) */
} StmtKind;

typedef enum FenceKind { FENCE_PROXY_ASYNC, FENCE_CTA, FENCE_GPU } FenceKind;

struct Stmt {
	StmtKind kind;
	Span span;
	/* S_IN: role; S_WAIT/S_ARRIVE/S_TMA_LOAD(signal): barrier; S_SYNC: role or NULL;
	 * S_FOR: loop variable; S_FOR pipelined: pipeline in `pipe` */
	const char *name;
	Span name_span;
	const char *pipe;
	Span pipe_span;
	Stmt **body;          /* S_IN, S_FOR, S_IF then */
	int nbody;
	Stmt **els;           /* S_IF else */
	int nels;
	Expr *lo, *hi, *step; /* S_FOR (step NULL = 1) */
	int unroll;           /* S_FOR: 0 = not stated */
	Expr *cond;           /* S_IF */
	/* data movement and math:
	 *   S_TMA_LOAD:  dst = smem ident (or E_INDEX: one column panel), src = global E_INDEX
	 *   S_TMA_STORE: dst = global E_INDEX,      src = smem ident
	 *   S_CP_ASYNC:  dst = smem ident/index,    src = global E_INDEX
	 *   S_LOAD:      dst = frag ident,          src = E_INDEX
	 *   S_STORE, S_ATOMIC: dst = E_INDEX,       src = any expr
	 *   S_WGMMA/S_MMA: dst = acc ident, src = E_BINARY '@' (operands may be E_TRANSPOSE)
	 *   S_LET: dst = NULL, name = variable, src = value
	 *   S_ASSIGN: lhs[0..nlhs) identifiers, src = value */
	Expr *dst, *src;
	Expr **lhs;
	int nlhs;
	bool accumulate;      /* S_WGMMA/S_MMA: += or -= (true) or = (false) */
	bool negate;          /* S_WGMMA/S_MMA: -= (the product subtracted; accumulate is set too) */
	bool transposed;      /* S_STORE: `store G[..] <- v^T`, the value written transposed (the
	                       * parser takes the `^T` off src and sets this) */
	/* S_TMA_LOAD/S_TMA_STORE: `clip` after a reference: its box may run past the end of the
	 * tensor (LANGUAGE.md §5.4); clip_dst / clip_src say which side carried it */
	bool clip_dst, clip_src;
	Span clip_span;
	int count;            /* S_WGMMA_WAIT: pending groups allowed */
	FenceKind fence;
	/* sema */
	Sym *sym;             /* the named role/barrier/loop var/let */
	Sym *pipe_sym;
	Sym *role;            /* the role executing this statement */
	Stmt *loop;           /* innermost enclosing S_FOR (NULL at top of role) */
	Stmt *ploop;          /* innermost enclosing pipelined S_FOR */
	int id;               /* preorder number within the kernel */
	/* parser (for `cake fmt` comment placement) */
	Span body_end;        /* the '}' closing body (S_IN, S_FOR, S_IF then) */
	Span els_end;         /* the '}' closing the else block (S_IF with a block else) */
	bool blank_before;    /* a blank line preceded it in the source */
};

/* ---- kernel and file ---- */

typedef struct Kernel {
	const char *name;
	Span span, name_span;
	Target target;
	Span target_span;
	Decl **decls;
	int ndecls;
	Stmt **body;          /* top-level statements: normally only S_IN */
	int nbody;
	/* sema: symbols by kind, in declaration order */
	Sym **syms;
	int nsyms;
	Decl **roles, **pipes, **smems, **barriers, **frags, **params;
	int nroles, npipes, nsmems, nbarriers, nfrags, nparams;
	const char **dims;    /* symbolic dims in order of first appearance */
	int ndims;
	Decl *grid, *cluster;
	Decl *family;         /* `family NAME` (name in ->name), or NULL: no family, no oracle */
	Decl **domains;
	int ndomains;
	int nstmts;
	bool sema_ok;
	/* parser (for `cake fmt` comment placement) */
	Span lbrace, rbrace;  /* the body's '{' and '}' */
	bool blank_before;    /* a blank line preceded `kernel` in the source */
} Kernel;

/* A source comment, kept so `cake fmt` can re-emit it. `text` is the whole
 * comment including its delimiters ('#...' without the newline, or the full
 * block comment), with trailing blanks removed. */
typedef struct Comment {
	const char *text;
	Span span;
	bool trailing;        /* a token precedes it on the same source line */
	bool blank_before;    /* a blank line separates it from what precedes it */
} Comment;

typedef struct Program {
	Kernel **kernels;
	int nkernels;
	int file;             /* SourceSet index */
	/* parser: every comment of the file in source order */
	Comment **comments;
	int ncomments;
} Program;

#endif
