/*
 * graph.h — the schedule graph of a kernel that passed sema.
 *
 * Sema leaves an annotated tree; the verifier's race/deadlock/barrier rules
 * and the lowering's derive pass want the same facts in another shape: "who
 * touches what, in which order, through which barrier". graph_build() walks
 * each role's `in` block once and records:
 *
 *   - GRole: the role's operations in program order (preorder over its
 *     statements, S_IN itself excluded), and its loops;
 *   - GOp: one per statement. Control statements (S_FOR, S_IF) are ops too,
 *     so that the reads in loop bounds and conditions are recorded, but they
 *     carry no barrier and write nothing. Each op knows its innermost loop,
 *     its innermost pipelined loop, its innermost enclosing `if` and the
 *     barrier it waits on / arrives on / signals;
 *   - GAccess: each read or write of a resource (smem buffer, fragment or
 *     global/scalar parameter) by an op, with the mode (read, write, both),
 *     whether it is asynchronous (TMA, wgmma, cp.async: completes later,
 *     tracked by a barrier or wgmma_wait / cp.async wait) and whether it
 *     touches the current stage of a ring buffer;
 *   - GRes: per resource, every access in (role, program) order;
 *   - GBar: per barrier, its waiters, arrivers and TMA signallers, and the
 *     transaction bytes its TMA signallers post per phase;
 *   - GLoop: loop variable, bound expressions, constant trip count when it
 *     folds, pipeline and stage count for pipelined loops.
 *
 * Structure: ops of a role are in preorder; `op->loop` / `loop->parent`
 * give the nesting, and `op->stmt` reaches the tree (for bodies / else
 * branches) whenever a rule needs to simulate control flow: the deadlock
 * model checker walks Stmt bodies and calls graph_op_of(g, stmt) to get each
 * statement's facts.
 *
 * Everything is arena-allocated in the Ctx passed to graph_build and lives as
 * long as the compilation. The graph never changes after it is built.
 */
#ifndef CAKE_GRAPH_H
#define CAKE_GRAPH_H

#include "front.h"

typedef struct GRole GRole;
typedef struct GOp GOp;
typedef struct GLoop GLoop;
typedef struct GRes GRes;
typedef struct GBar GBar;

/* Access mode bits. */
enum { GA_READ = 1, GA_WRITE = 2, GA_RW = 3 };

/* How an access happens. */
typedef enum GAsync {
	GX_SYNC = 0,     /* ordinary: complete when the statement ends */
	GX_TMA,          /* TMA engine (load: completes on the signal barrier) */
	GX_WGMMA,        /* wgmma: operand reads/acc writes complete at wgmma_wait */
	GX_CP_ASYNC,     /* cp.async: completes at the next cp.async wait/barrier */
} GAsync;

/* The role an op plays on its barrier. */
typedef enum GBarUse {
	GB_NONE = 0,
	GB_WAIT,         /* wait B */
	GB_ARRIVE,       /* arrive B */
	GB_SIGNAL,       /* tma ... signal B  (one arrival + tx bytes) */
} GBarUse;

typedef struct GAccess {
	GOp *op;             /* the operation performing it */
	GRes *res;           /* the resource touched */
	int mode;            /* GA_READ, GA_WRITE or GA_RW (atomics, +=) */
	GAsync async;        /* GX_SYNC for ordinary accesses */
	bool atomic;         /* atomic_add destination */
	bool ring;           /* a ring buffer at the current stage of ring_loop */
	GLoop *ring_loop;    /* the enclosing loop pipelined over the ring's pipeline */
	Expr *ref;           /* E_IDENT or E_INDEX naming the access (slices there) */
	Span span;           /* span of ref */
} GAccess;

struct GLoop {
	Stmt *stmt;          /* the S_FOR */
	GRole *role;
	GLoop *parent;       /* enclosing loop of the same role, or NULL */
	int depth;           /* 1 for an outermost loop */
	int id;              /* index in role->loops (preorder) */
	const char *var;     /* loop variable name */
	Sym *var_sym;
	Expr *lo, *hi, *step;   /* step NULL = 1 */
	long long trip;      /* constant trip count ceil((hi-lo)/step) >= 0, or -1 */
	Sym *pipe;           /* pipelined over this pipeline, or NULL */
	Decl *pipe_decl;
	int stages;          /* pipe_decl->stages, 0 when not pipelined */
};

struct GOp {
	StmtKind kind;       /* stmt->kind */
	Stmt *stmt;
	Span span;
	GRole *role;
	int index;           /* position in role->ops */
	int gid;             /* position in graph->ops (all roles, role order) */
	GLoop *loop;         /* innermost enclosing loop, NULL at role top level
	                      * (for an S_FOR op: the loop around it, not its own) */
	GLoop *opens;        /* S_FOR: the loop this op opens; NULL otherwise */
	GLoop *ploop;        /* innermost enclosing pipelined loop */
	Stmt *guard;         /* innermost enclosing S_IF, NULL when unconditional */
	bool in_else;        /* op is in guard's else branch */
	/* barrier use */
	GBarUse bar_use;
	GBar *bar;           /* NULL when bar_use == GB_NONE */
	long long tx_bytes;  /* S_TMA_LOAD: box elements * dtype size, -1 when not constant; else 0 */
	bool async;          /* TMA, wgmma or cp.async statement */
	/* resource accesses */
	GAccess **acc;
	int nacc;
};

struct GRole {
	Sym *sym;
	Decl *decl;
	const char *name;
	int id;              /* decl->id */
	Stmt *in;            /* the `in ROLE {}` block, NULL if the role has none */
	int nwarps;          /* warp_hi - warp_lo + 1 */
	int nwarpgroups;     /* nwarps / 4 rounded up; at least 1 */
	int arrive_units;    /* arrivals one `arrive` contributes (see graph_arrive_units) */
	GOp **ops;           /* program order (preorder) */
	int nops;
	GLoop **loops;       /* preorder */
	int nloops;
};

struct GRes {
	Sym *sym;            /* SYM_SMEM, SYM_FRAG or SYM_PARAM */
	Decl *decl;
	const char *name;
	Space space;         /* SP_SMEM, SP_FRAG, SP_GLOBAL, SP_NONE (scalar param) */
	Sym *ring;           /* ring pipeline (smem), or NULL */
	long long bytes;     /* one stage: product of const dims * dtype size, -1 if unknown */
	GAccess **acc;       /* all accesses, ordered by role id then program order */
	int nacc;
};

struct GBar {
	Sym *sym;
	Decl *decl;
	const char *name;
	Sym *ring;           /* ring pipeline or NULL */
	GOp **waits;   int nwaits;     /* `wait B` ops, role order then program order */
	GOp **arrives; int narrives;   /* `arrive B` ops */
	GOp **signals; int nsignals;   /* `tma ... signal B` ops */
	long long tx_bytes;  /* sum of tx_bytes over signals (one phase), -1 if any unknown */
};

typedef struct Graph {
	Kernel *k;
	GRole **roles;       /* by role decl id (k->roles order) */
	int nroles;
	GRes **res;          /* params, then smems, then frags, declaration order */
	int nres;
	GBar **bars;         /* by barrier decl id */
	int nbars;
	GOp **ops;           /* every op of every role, role order */
	int nops;
	GOp **by_stmt;       /* indexed by Stmt.id (size k->nstmts); NULL for S_IN */
	int nstmts;
} Graph;

/* Build the schedule graph of k (which must have k->sema_ok). Never NULL;
 * arena-allocated in c. Reports nothing: sema has already checked names. */
Graph *graph_build(Ctx *c, Kernel *k);

/* The role, resource or barrier with this name, or NULL. */
GRole *graph_role(const Graph *g, const char *name);
GRes *graph_res(const Graph *g, const char *name);
GBar *graph_bar(const Graph *g, const char *name);
/* The op built for statement s (NULL for S_IN or a foreign statement). */
GOp *graph_op_of(const Graph *g, const Stmt *s);

/* Arrivals that one `arrive` by role r contributes: one per warpgroup,
 * or 1 when the role has fewer than 4 warps. */
int graph_arrive_units(const GRole *r);
/* True when loop l is op's innermost loop or encloses it. */
bool graph_loop_encloses(const GLoop *l, const GOp *op);
/* The loop enclosing op that is pipelined over pipeline p, or NULL. */
GLoop *graph_pipelined_loop(const GOp *op, const Sym *p);
/* The access of op to res with any of the mode bits in `mode`, or NULL. */
GAccess *graph_op_access(const GOp *op, const GRes *res, int mode);
/* Next op of the same role in program order, NULL after the last. */
GOp *graph_next_op(const GOp *op);
/* Printable name of an op kind ("wait", "tma_load", "wgmma", ...). */
const char *graph_op_name(StmtKind k);
/* Human-readable dump of the whole graph (cake check --dump=graph). */
void graph_dump(StrBuf *out, const Graph *g);

/* Iterate: for every role r of g / every op o of role r / every access a of op o. */
#define GRAPH_EACH_ROLE(g, r, i) \
	for (int i = 0; i < (g)->nroles && ((r) = (g)->roles[i], 1); i++)
#define GRAPH_EACH_OP(role, o, i) \
	for (int i = 0; i < (role)->nops && ((o) = (role)->ops[i], 1); i++)
#define GRAPH_EACH_ACCESS(op, a, i) \
	for (int i = 0; i < (op)->nacc && ((a) = (op)->acc[i], 1); i++)

#endif
