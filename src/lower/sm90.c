/*
 * sm90.c — CUDA C++ with inline PTX for Hopper (sm_90a) from a kernel + Plan.
 *
 * The output is one self-contained translation unit that NVRTC compiles
 * without any #include: the few types it needs (u32, u64, bf16 bits, the
 * 128-byte CUtensorMap) are declared at the top, followed by one small
 * __device__ __forceinline__ function per PTX instruction the kernel uses
 * (mbarrier init/arrive/expect_tx/try_wait loop, cp.async.bulk.tensor,
 * wgmma fence/commit/wait and one mma_async wrapper per N, setmaxnreg,
 * fences, named barriers, bf16 packing). The wgmma wrappers are generated
 * here, operand list and all, for exactly the N values the kernel needs.
 *
 * The kernel body follows the schedule's structure one to one, so a reader
 * can hold the .cake file next to it: every emitted block starts with a
 * comment naming the IR line it comes from ("// gemm.cake:23: wait empty").
 *
 *   prologue   aligned smem base, one u32 address per buffer and barrier,
 *              warp index (warp-uniform), barrier init by thread 0 followed
 *              by fence.mbarrier_init + fence.proxy.async + __syncthreads;
 *   roles      if / else if on the warp index. A role first adjusts its
 *              register budget (setmaxnreg), declares the stage/phase
 *              registers of its pipelines and its fragments, then runs its
 *              program (once, or once per tile in a persistent grid). A role
 *              that only issues asynchronous work runs on one elected thread;
 *   statements wait -> try_wait.parity spin on B[stage] (phase, or phase^1
 *              for a barrier that starts free); arrive -> one arrival per
 *              warpgroup (its first thread); tma -> expect_tx with the
 *              derived bytes before the first copy that signals a barrier in
 *              the iteration, then cp.async.bulk.tensor; wgmma -> fence, one
 *              m64nNk16 per 64-row slice and 16-wide K step with the shared
 *              memory descriptors advanced by 32 bytes, commit; store of a
 *              wgmma accumulator -> the m64nNk16 fragment layout (thread t
 *              holds rows warp*16 + lane/4 and +8, column pairs 8j +
 *              2*(lane%4)), converted and stored as 4-byte pairs.
 *
 * Anything else (sm_80 instructions, TMA stores, element-wise math and
 * reductions on fragments, ...) is refused with CK-LOW-002 naming the
 * statement; the emitter is organised per statement kind so each new
 * primitive is one more case.
 */
#include "lower.h"

#include <string.h>

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
	bool elected;       /* current role runs on one elected thread */
	bool need_n[2][33]; /* wgmma wrappers needed: [f16?][N/8] */
	bool need_rank[6];  /* tma_load_Nd wrappers needed */
	bool need_pack[DT__COUNT];
	/* barriers armed (expect_tx emitted) in the current loop body */
	bool *armed;
} Em;

/* ---- small output helpers ---- */

static void line(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Em *e, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (int i = 0; i < e->ind; i++)
		sb_putc(e->o, '\t');
	sb_puts(e->o, buf);
	sb_putc(e->o, '\n');
}

static Diag *refuse(Em *e, Span sp, const char *id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static Diag *refuse(Em *e, Span sp, const char *id, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	e->ok = false;
	Diag *d = diag_add(e->c->diags, id, SEV_ERROR, sp, "%s", buf);
	if (e->role >= 0)
		diag_set(&d->role, "%s", e->p->roles[e->role].name);
	return d;
}

/* "// file:line: <source text>" for the statement at span sp. */
static void ir_comment(Em *e, Span sp, const char *extra)
{
	char text[160] = "";
	if (sp.file >= 0 && e->c->srcs && sp.file < e->c->srcs->n) {
		int n = 0;
		const char *s = src_line(e->c->srcs, sp, &n);
		while (n > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			n--;
		}
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '{' || s[n - 1] == '\r'))
			n--;
		/* drop a trailing # comment */
		for (int i = 0; i < n; i++)
			if (s[i] == '#') {
				n = i;
				while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
					n--;
				break;
			}
		if (n > (int)sizeof text - 1)
			n = (int)sizeof text - 1;
		for (int i = 0; i < n; i++)
			text[i] = (s[i] == '*' && i + 1 < n && s[i + 1] == '/') ? '|' : s[i];
		text[n] = 0;
	}
	line(e, "// %s:%d: %s%s%s", e->file, sp.line, text, extra ? "  -- " : "", extra ? extra : "");
}

/* Is x a scalar expression the emitter can spell in C? (names of dims, consts,
 * grid/loop variables, lets and scalar params; arithmetic; min/max). */
static const Expr *scalar_bad(Em *e, const Expr *x)
{
	if (!x)
		return NULL;
	switch (x->kind) {
	case E_INT: case E_FLOAT: case E_INF:
		return NULL;
	case E_IDENT:
		for (int i = 0; i < e->k->ndecls; i++) {
			const Decl *d = e->k->decls[i];
			if (d->name && strcmp(d->name, x->name) == 0 && d->kind != D_CONST && !(d->kind == D_PARAM && d->space != SP_GLOBAL))
				return x;
		}
		return NULL;
	case E_UNARY:
		return scalar_bad(e, x->lhs);
	case E_BINARY: {
		if (x->op == '@')
			return x;
		const Expr *b = scalar_bad(e, x->lhs);
		return b ? b : scalar_bad(e, x->rhs);
	}
	case E_CALL:
		if (x->name && (strcmp(x->name, "min") == 0 || strcmp(x->name, "max") == 0) && x->nargs == 2) {
			const Expr *b = scalar_bad(e, x->args[0]);
			return b ? b : scalar_bad(e, x->args[1]);
		}
		return x;
	default:
		return x;
	}
}

static char *cexpr(Em *e, const Expr *x)
{
	const Expr *bad = scalar_bad(e, x);
	if (bad) {
		Diag *d = refuse(e, bad->span, "CK-LOW-002", "this expression is not lowered yet for sm_90a in a scalar context (only dims, consts, grid and loop variables, lets, scalar params, arithmetic and min/max are)");
		diag_set(&d->hint, "compute the value from dims and loop variables, or wait for the primitive's lowering");
		return arena_strdup(&e->c->arena, "0");
	}
	StrBuf b = {0};
	lower_expr_c(&b, x, e->k);
	char *s = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	return s;
}

/* C text of x parenthesised unless it is a single name or number. */
static char *cexpr_p(Em *e, const Expr *x)
{
	if (x && (x->kind == E_IDENT || x->kind == E_INT))
		return cexpr(e, x);
	return arena_printf(&e->c->arena, "(%s)", cexpr(e, x));
}

static const char *ctype_of(DType t)
{
	switch (t) {
	case DT_BF16: return "bf16_t";
	case DT_F16: return "f16_t";
	case DT_F32: return "float";
	case DT_I32: return "int";
	case DT_U32: return "u32";
	case DT_I64: return "long long";
	case DT_BOOL: return "bool";
	case DT_F8E4M3: return "unsigned char";
	default: return "void";
	}
}

/* ---- the fixed helper library ---- */

static void emit_prelude(StrBuf *o)
{
	sb_puts(o,
	        "#ifndef CAKE_SM90_PRELUDE   /* shared by every kernel of one translation unit */\n"
	        "#define CAKE_SM90_PRELUDE\n"
	        "typedef unsigned int u32;\n"
	        "typedef unsigned long long u64;\n"
	        "typedef unsigned short bf16_t;   /* bf16 bits */\n"
	        "typedef unsigned short f16_t;    /* f16 bits */\n"
	        "\n"
	        "/* The 128-byte TMA descriptor, passed by value as a __grid_constant__ parameter. */\n"
	        "struct __align__(64) CUtensorMap { u64 opaque[16]; };\n"
	        "\n"
	        "__device__ __forceinline__ u32 smem_u32(const void *p)\n"
	        "{\n"
	        "\treturn (u32)__cvta_generic_to_shared(p);\n"
	        "}\n"
	        "\n"
	        "/* ---- mbarrier ---- */\n"
	        "__device__ __forceinline__ void mbar_init(u32 bar, u32 count)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(bar), \"r\"(count) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* Make barrier initialisation visible to the other threads and the async (TMA) proxy. */\n"
	        "__device__ __forceinline__ void fence_mbarrier_init(void)\n"
	        "{\n"
	        "\tasm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void fence_proxy_async(void)\n"
	        "{\n"
	        "\tasm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* One arrival that also raises the phase's expected transaction bytes. */\n"
	        "__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void mbar_arrive(u32 bar)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(bar) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* `count` arrivals at once (one elected thread arriving for several warpgroups). */\n"
	        "__device__ __forceinline__ void mbar_arrive_cnt(u32 bar, u32 count)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(bar), \"r\"(count) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* Spin until the phase with the given parity has completed. */\n"
	        "__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)\n"
	        "{\n"
	        "\tasm volatile(\n"
	        "\t\t\"{\\n\"\n"
	        "\t\t\".reg .pred done;\\n\"\n"
	        "\t\t\"WAIT_%=:\\n\"\n"
	        "\t\t\"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n\"\n"
	        "\t\t\"@!done bra WAIT_%=;\\n\"\n"
	        "\t\t\"}\\n\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- named barriers, register budget ---- */\n"
	        "__device__ __forceinline__ void named_bar_sync(u32 id, u32 nthreads)\n"
	        "{\n"
	        "\tasm volatile(\"bar.sync %0, %1;\\n\" :: \"r\"(id), \"r\"(nthreads) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "template <int R>\n"
	        "__device__ __forceinline__ void setmaxnreg_inc(void)\n"
	        "{\n"
	        "\tasm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\\n\" :: \"n\"(R));\n"
	        "}\n"
	        "\n"
	        "template <int R>\n"
	        "__device__ __forceinline__ void setmaxnreg_dec(void)\n"
	        "{\n"
	        "\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\\n\" :: \"n\"(R));\n"
	        "}\n"
	        "\n"
	        "/* ---- TMA ---- */\n"
	        "__device__ __forceinline__ void tma_prefetch(const CUtensorMap *map)\n"
	        "{\n"
	        "\tasm volatile(\"prefetch.tensormap [%0];\\n\" :: \"l\"((u64)map) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- wgmma ---- */\n"
	        "/* Shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading byte\n"
	        " * offset >> 4 (16-29), stride byte offset >> 4 (32-45), layout (62-63: 1 = 128B,\n"
	        " * 2 = 64B, 3 = 32B swizzle). Buffers are aligned to the swizzle pattern, so the\n"
	        " * base-offset field (49-51) stays 0. */\n"
	        "__device__ __forceinline__ u64 wgmma_desc(u32 saddr, u32 lbo, u32 sbo, u32 layout)\n"
	        "{\n"
	        "\treturn (u64)((saddr & 0x3FFFFu) >> 4) | ((u64)((lbo >> 4) & 0x3FFFu) << 16) |\n"
	        "\t       ((u64)((sbo >> 4) & 0x3FFFu) << 32) | ((u64)layout << 62);\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void wgmma_fence(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void wgmma_commit(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "template <int N>\n"
	        "__device__ __forceinline__ void wgmma_wait(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- conversions ---- */\n"
	        "/* Two floats -> packed bf16x2 (lo in the low half), round to nearest even. */\n"
	        "__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi)\n"
	        "{\n"
	        "\tu32 r;\n"
	        "\tasm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\\n\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
	        "\treturn r;\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ u32 pack_f16x2(float lo, float hi)\n"
	        "{\n"
	        "\tu32 r;\n"
	        "\tasm(\"cvt.rn.f16x2.f32 %0, %1, %2;\\n\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
	        "\treturn r;\n"
	        "}\n"
	        "#endif\n");
}

static void emit_tma_wrapper(StrBuf *o, int rank)
{
	sb_printf(o, "\n#ifndef CAKE_TMA_LOAD_%dD\n#define CAKE_TMA_LOAD_%dD\n", rank, rank);
	sb_printf(o, "/* TMA load of one box of a rank-%d tensor into shared memory; completes on `bar`\n"
	             " * with the box's bytes as transactions. Coordinates innermost first. */\n", rank);
	sb_printf(o, "__device__ __forceinline__ void tma_load_%dd(u32 dst, const CUtensorMap *map, u32 bar", rank);
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", int c%d", i);
	sb_puts(o, ")\n{\n\tasm volatile(\n");
	sb_printf(o, "\t\t\"cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes\"\n", rank);
	sb_puts(o, "\t\t\" [%0], [%1, {");
	for (int i = 0; i < rank; i++)
		sb_printf(o, "%s%%%d", i ? ", " : "", 3 + i);
	sb_puts(o, "}], [%2];\\n\"\n\t\t:: \"r\"(dst), \"l\"((u64)map), \"r\"(bar)");
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", \"r\"(c%d)", i);
	sb_puts(o, " : \"memory\");\n}\n#endif\n");
}

/* wgmma.mma_async m64nNk16 with both operands from shared memory (descriptors),
 * f32 accumulators d[0 .. N/2), scale_d = 0 overwrites, 1 accumulates. */
static void emit_wgmma_wrapper(StrBuf *o, int n, bool f16)
{
	const char *ab = f16 ? "f16" : "bf16";
	int nd = n / 2;
	sb_printf(o, "\n#ifndef CAKE_WGMMA_M64N%dK16_%s\n#define CAKE_WGMMA_M64N%dK16_%s\n", n, f16 ? "F16" : "BF16", n, f16 ? "F16" : "BF16");
	sb_printf(o, "/* D[64 x %d] (f32, %d registers per thread) (+)= A[64 x 16] * B[16 x %d], %s operands\n"
	             " * from shared memory, both K-major (no transpose). */\n", n, nd, n, ab);
	sb_printf(o, "__device__ __forceinline__ void wgmma_m64n%dk16_%s(float *d, u64 da, u64 db, int scale_d)\n{\n", n, ab);
	sb_puts(o, "\tasm volatile(\n");
	sb_printf(o, "\t\t\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", nd + 2);
	sb_printf(o, "\t\t\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s \"\n\t\t\"{", n, ab, ab);
	for (int i = 0; i < nd; i++) {
		sb_printf(o, "%s%%%d", i ? ", " : "", i);
		if (i % 16 == 15 && i + 1 < nd)
			sb_puts(o, "\"\n\t\t\"");
	}
	sb_printf(o, "}, %%%d, %%%d, p, 1, 1, 0, 0;\\n}\\n\"\n\t\t: ", nd, nd + 1);
	for (int i = 0; i < nd; i++) {
		sb_printf(o, "%s\"+f\"(d[%d])", i ? ", " : "", i);
		if (i % 8 == 7 && i + 1 < nd)
			sb_puts(o, "\n\t\t  ");
	}
	sb_puts(o, "\n\t\t: \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}\n#endif\n");
}

static void emit_debug_helper(StrBuf *o)
{
	sb_puts(o,
	        "\n#ifndef CAKE_HANG_NOTE\n#define CAKE_HANG_NOTE\n"
	        "/* --debug-hang flight recorder: one 64-byte record per warpgroup per CTA in\n"
	        " * host-mapped memory (layout = CakeHangRecord in src/lower/lower.h). */\n"
	        "struct CakeHangRecord { u32 magic, role, barrier, stage, phase, iter, state, line, tile, seq, reserved[6]; };\n"
	        "\n"
	        "__device__ __forceinline__ void hang_note(CakeHangRecord *dbg, u32 slots, u32 role, u32 bar, u32 stage,\n"
	        "                                          u32 phase, u32 iter, u32 state, u32 line, u32 tile)\n"
	        "{\n"
	        "\tu32 cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
	        "\tvolatile u32 *r = (volatile u32 *)(dbg + (u64)cta * slots + threadIdx.x / 128u);\n"
	        "\tr[1] = role;\n"
	        "\tr[2] = bar;\n"
	        "\tr[3] = stage;\n"
	        "\tr[4] = phase;\n"
	        "\tr[5] = iter;\n"
	        "\tr[6] = state;\n"
	        "\tr[7] = line;\n"
	        "\tr[8] = tile;\n"
	        "\tr[9] = r[9] + 1u;\n"
	        "\tr[0] = 0xCA4E0001u;\n"
	        "\t__threadfence_system();\n"
	        "}\n"
	        "#endif\n");
}

/* ---- statements ---- */

typedef struct Scope {
	const PlanLoop *ploop;   /* innermost pipelined loop */
	const Stmt *loop;        /* innermost loop */
} Scope;

static void emit_list(Em *e, Stmt **ss, int n, Scope sc);

/* Address expression of buffer b at the current stage. */
static char *buf_addr(Em *e, int bi, Scope sc, Span sp)
{
	const PlanBuffer *b = &e->p->buffers[bi];
	if (b->pipe < 0)
		return arena_printf(&e->c->arena, "smem_%s", b->name);
	if (!sc.ploop || sc.ploop->pipe != b->pipe) {
		Diag *d = refuse(e, sp, "CK-LOW-008", "ring buffer '%s' is used outside a loop pipelined on '%s'; its stage cannot be derived", b->name,
		                 e->p->pipes[b->pipe].name);
		diag_set(&d->resource, "%s", b->name);
		return arena_strdup(&e->c->arena, "0u");
	}
	return arena_printf(&e->c->arena, "smem_%s + %lldu * %s", b->name, b->stage_stride, sc.ploop->stage_var);
}

static char *bar_addr(Em *e, int bi, Scope sc, Span sp, char **stage_out)
{
	const PlanBarrier *b = &e->p->barriers[bi];
	if (b->pipe < 0) {
		*stage_out = "0u";
		return arena_printf(&e->c->arena, "bar_%s", b->name);
	}
	if (!sc.ploop || sc.ploop->pipe != b->pipe) {
		Diag *d = refuse(e, sp, "CK-LOW-008", "ring barrier '%s' is used outside a loop pipelined on '%s'; its stage cannot be derived", b->name,
		                 e->p->pipes[b->pipe].name);
		diag_set(&d->barrier, "%s", b->name);
		*stage_out = "0u";
		return arena_strdup(&e->c->arena, "0u");
	}
	*stage_out = (char *)sc.ploop->stage_var;
	return arena_printf(&e->c->arena, "bar_%s + 8u * %s", b->name, sc.ploop->stage_var);
}

static const char *elect_cond(Em *e)
{
	const PlanRole *r = &e->p->roles[e->role];
	if (r->nwg > 0)
		return "threadIdx.x % 128u == 0u";
	return arena_printf(&e->c->arena, "threadIdx.x == %du", r->thread_lo);
}

static void emit_hang(Em *e, int bi, const char *stage, const char *parity, Scope sc, Span sp, bool done)
{
	if (!e->dbg)
		return;
	const char *iter = sc.loop && sc.loop->name ? arena_printf(&e->c->arena, "(u32)(%s)", sc.loop->name) : "0u";
	const char *tile = e->p->persistent ? "(u32)cake_tile" : "blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)";
	if (done && e->p->persistent)
		tile = "0xffffffffu";
	const char *call = arena_printf(&e->c->arena, "hang_note(cake_dbg, %du, %du, %uu, %s, %s, %s, %uu, %du, %s);", e->p->nwarpgroups, e->role,
	                                bi < 0 ? 0xffffffffu : (unsigned)bi, stage, parity, done ? "0u" : iter,
	                                done ? 2u : 1u, sp.line, tile);
	if (e->elected)
		line(e, "%s", call);
	else
		line(e, "if (%s) %s", elect_cond(e), call);
}

static void emit_wait(Em *e, Stmt *s, Scope sc)
{
	int bi = plan_barrier_index(e->p, s->name);
	if (bi < 0) {
		refuse(e, s->span, "CK-LOW-002", "wait on unknown barrier '%s'", s->name ? s->name : "?");
		return;
	}
	const PlanBarrier *b = &e->p->barriers[bi];
	char *stage;
	char *addr = bar_addr(e, bi, sc, s->span, &stage);
	const char *ph = b->pipe >= 0 ? sc.ploop ? sc.ploop->phase_var : "0u" : arena_printf(&e->c->arena, "%s_phase", b->name);
	const char *parity = b->starts_free ? arena_printf(&e->c->arena, "%s ^ 1u", ph) : ph;
	ir_comment(e, s->span, b->starts_free ? "starts free: the first pass through the ring does not block" : NULL);
	emit_hang(e, bi, stage, parity, sc, s->span, false);
	line(e, "mbar_wait(%s, %s);", addr, parity);
	if (b->pipe < 0)
		line(e, "%s_phase ^= 1u;", b->name);
}

static void emit_arrive(Em *e, Stmt *s, Scope sc)
{
	int bi = plan_barrier_index(e->p, s->name);
	if (bi < 0) {
		refuse(e, s->span, "CK-LOW-002", "arrive on unknown barrier '%s'", s->name ? s->name : "?");
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	char *stage;
	char *addr = bar_addr(e, bi, sc, s->span, &stage);
	if (e->elected) {
		ir_comment(e, s->span, r->arrivals_per_arrive > 1 ? "one arrival per warpgroup of the role" : NULL);
		if (r->arrivals_per_arrive > 1)
			line(e, "mbar_arrive_cnt(%s, %du);", addr, r->arrivals_per_arrive);
		else
			line(e, "mbar_arrive(%s);", addr);
	} else {
		ir_comment(e, s->span, r->nwg > 0 ? "one arrival per warpgroup (its first thread)" : "one arrival for the role");
		line(e, "if (%s)", elect_cond(e));
		line(e, "\tmbar_arrive(%s);", addr);
	}
}

static void emit_tma_load(Em *e, Stmt *s, Scope sc)
{
	const Plan *p = e->p;
	int ti = plan_tmap_of(p, s);
	int bi = plan_barrier_index(p, s->name);
	int buf = plan_buffer_index(p, lower_base_name(s->dst));
	if (ti < 0 || bi < 0 || buf < 0) {
		refuse(e, s->span, "CK-LOW-006", "tma load could not be matched to a tensor map, barrier and buffer");
		return;
	}
	const PlanTmap *t = &p->tmaps[ti];
	char *stage;
	char *baddr = bar_addr(e, bi, sc, s->span, &stage);
	char *daddr = buf_addr(e, buf, sc, s->span);
	StrBuf co = {0};
	for (int i = 0; i < t->rank; i++) {
		const Slice *sl = &s->src->slices[t->rank - 1 - i];
		sb_puts(&co, ", ");
		if (sl->kind == SL_ALL)
			sb_puts(&co, "0");
		else
			sb_puts(&co, cexpr(e, sl->start));
	}
	e->need_rank[t->rank] = true;
	ir_comment(e, s->span, NULL);
	const char *pre = "";
	if (!e->elected) {
		line(e, "if (%s) {", elect_cond(e));
		pre = "\t";
	}
	if (!e->armed[bi]) {
		e->armed[bi] = true;
		line(e, "%smbar_arrive_expect_tx(%s, %lldu);   /* %s: %lld bytes per phase */", pre, baddr, p->barriers[bi].tx_bytes,
		     p->barriers[bi].name, p->barriers[bi].tx_bytes);
	}
	line(e, "%stma_load_%dd(%s, &%s, %s%s);", pre, t->rank, daddr, t->var, baddr, sb_str(&co));
	if (!e->elected)
		line(e, "}");
	sb_free(&co);
}

/* Operand check for wgmma: an smem buffer, transposed or not. */
static int wgmma_operand(Em *e, const Expr *x, bool *transposed)
{
	*transposed = false;
	if (x && x->kind == E_TRANSPOSE) {
		*transposed = true;
		x = x->lhs;
	}
	if (!x || x->kind != E_IDENT)
		return -1;
	return plan_buffer_index(e->p, x->name);
}

static void emit_wgmma(Em *e, Stmt *s, Scope sc)
{
	const Plan *p = e->p;
	int fi = plan_frag_index(p, lower_base_name(s->dst));
	if (fi < 0 || !s->src || s->src->kind != E_BINARY || s->src->op != '@') {
		refuse(e, s->span, "CK-LOW-009", "wgmma needs a fragment destination and an `a @ b` product");
		return;
	}
	const PlanFrag *f = &p->frags[fi];
	bool ta, tb;
	int ai = wgmma_operand(e, s->src->lhs, &ta);
	int bi = wgmma_operand(e, s->src->rhs, &tb);
	if (ai < 0 || bi < 0) {
		refuse(e, s->span, "CK-LOW-009", "wgmma with a register-fragment operand is not lowered yet for sm_90a; both operands must be shared buffers");
		return;
	}
	const PlanBuffer *A = &p->buffers[ai], *B = &p->buffers[bi];
	if (ta || !tb) {
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma '%s %s %s @ %s%s' is not lowered yet for sm_90a: only A[M,K] @ B[N,K]^T (both operands K-major) is",
		                 f->name, s->accumulate ? "+=" : "=", A->name, B->name, tb ? "^T" : "");
		diag_set(&d->hint, "store the B operand as [N, K] and write `%s @ %s^T`", A->name, B->name);
		return;
	}
	if (A->rank != 2 || B->rank != 2 || A->dt != B->dt || (A->dt != DT_BF16 && A->dt != DT_F16) || f->dt != DT_F32) {
		refuse(e, s->span, "CK-LOW-009", "wgmma lowering handles bf16 or f16 rank-2 operands of one dtype with an f32 accumulator");
		return;
	}
	if (A->swizzle != SWZ_128B || B->swizzle != SWZ_128B || A->row_bytes != 128 || B->row_bytes != 128) {
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma operands '%s' and '%s' must be K-major with 128-byte rows and swizzle 128B for the sm_90a lowering (have %d B / %s and %d B / %s)",
		                 A->name, B->name, A->row_bytes, swizzle_name(A->swizzle), B->row_bytes, swizzle_name(B->swizzle));
		diag_set(&d->hint, "declare the buffers [rows, 64] bf16 with `swizzle 128B`");
		return;
	}
	const PlanRole *r = &p->roles[e->role];
	if (f->role != e->role || r->nwg < 1) {
		refuse(e, s->span, "CK-LOW-009", "wgmma into '%s' must run in its owning role, made of whole warpgroups", f->name);
		return;
	}
	long long M = A->shape[0], K = A->shape[1], N = B->shape[0];
	int nwg = r->nwg;
	bool ok_shape = f->mtiles >= 1 && f->wg_cols >= 8 && f->wg_cols <= 256 && f->wg_cols % 8 == 0;
	if (f->split == SPLIT_N)
		ok_shape = ok_shape && M == f->wg_rows && N == f->cols;
	else
		ok_shape = ok_shape && M == f->rows && N == f->wg_cols && (f->split == SPLIT_M || nwg == 1);
	if (!ok_shape || B->shape[1] != K || K % 16) {
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma shapes do not map onto m64nNk16 for sm_90a: %s[%lld,%lld] @ %s[%lld,%lld]^T into %s[%lld,%lld]%s over %d warpgroups",
		                 A->name, M, K, B->name, N, B->shape[1], f->name, f->rows, f->cols,
		                 f->split == SPLIT_M ? " split m" : f->split == SPLIT_N ? " split n" : "", nwg);
		diag_set(&d->hint, "each warpgroup needs a multiple of 64 rows and 8..256 columns (multiple of 8)");
		return;
	}
	int n = (int)f->wg_cols;
	bool f16 = A->dt == DT_F16;
	e->need_n[f16][n / 8] = true;
	char *aaddr = buf_addr(e, ai, sc, s->span);
	char *baddr = buf_addr(e, bi, sc, s->span);
	int ksteps = (int)(K / 16);
	ir_comment(e, s->span, NULL);
	line(e, "/* %d x wgmma m64n%dk16 per warpgroup: %d row slice(s) of 64, K = %lld in steps of 16 (descriptor start + 32 B) */",
	     f->mtiles * ksteps, n, f->mtiles, K);
	line(e, "wgmma_fence();");
	line(e, "{");
	e->ind++;
	if (f->split == SPLIT_M && nwg > 1)
		line(e, "const u32 a_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld rows of %s */", aaddr, f->wg_rows * A->row_bytes, f->wg_rows, A->name);
	else
		line(e, "const u32 a_base_ = %s;", aaddr);
	if (f->split == SPLIT_N && nwg > 1)
		line(e, "const u32 b_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld columns */", baddr, f->wg_cols * B->row_bytes, f->wg_cols);
	else
		line(e, "const u32 b_base_ = %s;", baddr);
	line(e, "#pragma unroll");
	line(e, "for (int mt_ = 0; mt_ < %d; ++mt_) {", f->mtiles);
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int kk_ = 0; kk_ < %d; ++kk_)", ksteps);
	line(e, "\t\twgmma_m64n%dk16_%s(%s + mt_ * %d,", n, f16 ? "f16" : "bf16", f->name, n / 2);
	line(e, "\t\t                 wgmma_desc(a_base_ + mt_ * %du + kk_ * 32u, %du, %du, %du),", 64 * A->row_bytes, A->desc_lbo, A->desc_sbo, A->desc_layout);
	line(e, "\t\t                 wgmma_desc(b_base_ + kk_ * 32u, %du, %du, %du),", B->desc_lbo, B->desc_sbo, B->desc_layout);
	line(e, "\t\t                 %s);", s->accumulate ? "1" : "kk_ > 0 ? 1 : 0");
	line(e, "}");
	e->ind--;
	line(e, "}");
	line(e, "wgmma_commit();");
}

static void emit_assign(Em *e, Stmt *s, Scope sc)
{
	if (s->nlhs == 1 && s->src && (s->src->kind == E_INT || s->src->kind == E_FLOAT) &&
	    (s->src->kind == E_INT ? s->src->ival == 0 : s->src->fval == 0.0)) {
		int fi = plan_frag_index(e->p, s->lhs[0] && s->lhs[0]->kind == E_IDENT ? s->lhs[0]->name : NULL);
		if (fi >= 0 && e->p->frags[fi].regs_per_thread > 0 && e->p->frags[fi].role == e->role) {
			const PlanFrag *f = &e->p->frags[fi];
			ir_comment(e, s->span, NULL);
			line(e, "#pragma unroll");
			line(e, "for (int i_ = 0; i_ < %d; ++i_)", f->regs_per_thread);
			line(e, "\t%s[i_] = 0.0f;", f->name);
			return;
		}
	}
	Diag *d = refuse(e, s->span, "CK-LOW-002", "fragment assignment other than `frag = 0` (element-wise math, reductions) is not lowered yet for sm_90a");
	diag_set(&d->hint, "this primitive's sm_90a lowering is planned (Flash-KMeans assign needs rowargmin next)");
}

static void emit_store(Em *e, Stmt *s, Scope sc)
{
	const Plan *p = e->p;
	const Expr *src = s->src;
	DType cast = DT_NONE;
	if (src && src->kind == E_CALL && src->nargs == 1 && src->name) {
		cast = dtype_from(src->name, (int)strlen(src->name));
		src = cast != DT_NONE ? src->args[0] : src;
	}
	int fi = (src && src->kind == E_IDENT) ? plan_frag_index(p, src->name) : -1;
	const char *gname = lower_base_name(s->dst);
	const Decl *g = NULL;
	for (int i = 0; gname && i < e->k->ndecls; i++)
		if (e->k->decls[i]->kind == D_PARAM && e->k->decls[i]->space == SP_GLOBAL && strcmp(e->k->decls[i]->name, gname) == 0)
			g = e->k->decls[i];
	if (fi < 0 || !g || !s->dst || s->dst->kind != E_INDEX || g->rank != 2 || s->dst->nslices != 2) {
		refuse(e, s->span, "CK-LOW-011", "store is lowered for sm_90a only as `store G[r +: R, c +: C] <- [cast(]acc[)]` of a wgmma accumulator into a rank-2 global tensor");
		return;
	}
	const PlanFrag *f = &p->frags[fi];
	DType out = g->dt;
	if (cast != DT_NONE && cast != out) {
		refuse(e, s->span, "CK-LOW-011", "store converts to %s but '%s' holds %s", dtype_name(cast), g->name, dtype_name(out));
		return;
	}
	if (f->regs_per_thread == 0 || f->role != e->role || (out != DT_BF16 && out != DT_F16 && out != DT_F32)) {
		refuse(e, s->span, "CK-LOW-011", "store of '%s' into %s '%s' is not lowered yet for sm_90a (needs a wgmma-layout f32 fragment of this role and a bf16, f16 or f32 tensor)",
		       f->name, dtype_name(out), g->name);
		return;
	}
	long long len0 = -1, len1 = -1;
	const Slice *r0 = &s->dst->slices[0], *c0 = &s->dst->slices[1];
	if (r0->kind != SL_RANGE || c0->kind != SL_RANGE || !eval_expr(r0->len, e->k, NULL, &len0) || !eval_expr(c0->len, e->k, NULL, &len1) ||
	    len0 != f->rows || len1 != f->cols) {
		refuse(e, s->span, "CK-LOW-011", "store of '%s' must cover exactly its %lld x %lld tile with `start +: length` slices", f->name, f->rows, f->cols);
		return;
	}
	const PlanRole *r = &p->roles[e->role];
	char *row0 = cexpr_p(e, r0->start), *col0 = cexpr_p(e, c0->start), *ld = cexpr_p(e, g->shape[1]);
	ir_comment(e, s->span, "wgmma accumulator layout: rows warp*16 + lane/4 (+8), column pairs 8j + 2*(lane%4)");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = threadIdx.x %% 32u;");
	const char *wgrow = (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_rows) : "";
	const char *wgcol = (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_cols) : "";
	line(e, "const int row_ = %s%s + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u);", row0, wgrow);
	line(e, "const int col_ = %s%s + (int)(lane_ %% 4u) * 2;", col0, wgcol);
	line(e, "%s *out_ = %s + (u64)row_ * (u64)%s + col_;", ctype_of(out), g->name, ld);
	line(e, "#pragma unroll");
	line(e, "for (int mt_ = 0; mt_ < %d; ++mt_) {", f->mtiles);
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int j_ = 0; j_ < %lld; ++j_) {", f->wg_cols / 8);
	line(e, "\t\tconst float *d_ = %s + mt_ * %lld + 4 * j_;", f->name, f->wg_cols / 2);
	line(e, "\t\t%s *o0_ = out_ + (u64)(mt_ * 64) * (u64)%s + 8 * j_;", ctype_of(out), ld);
	line(e, "\t\t%s *o1_ = out_ + (u64)(mt_ * 64 + 8) * (u64)%s + 8 * j_;", ctype_of(out), ld);
	if (out == DT_F32) {
		line(e, "\t\t*(float2 *)o0_ = make_float2(d_[0], d_[1]);");
		line(e, "\t\t*(float2 *)o1_ = make_float2(d_[2], d_[3]);");
	} else {
		const char *pk = out == DT_BF16 ? "pack_bf16x2" : "pack_f16x2";
		line(e, "\t\t*(u32 *)o0_ = %s(d_[0], d_[1]);", pk);
		line(e, "\t\t*(u32 *)o1_ = %s(d_[2], d_[3]);", pk);
	}
	line(e, "\t}");
	line(e, "}");
	e->ind--;
	line(e, "}");
}

static void emit_for(Em *e, Stmt *s, Scope sc)
{
	const PlanLoop *pl = s->pipe ? plan_loop_of(e->p, s) : NULL;
	if (s->pipe && !pl) {
		refuse(e, s->span, "CK-LOW-008", "pipelined loop over '%s' has no derived stage/phase", s->pipe);
		return;
	}
	ir_comment(e, s->span, pl ? arena_printf(&e->c->arena, "stage = %s, phase = %s", pl->stage_var, pl->phase_var) : NULL);
	if (s->unroll == 1)
		line(e, "#pragma unroll 1");
	else if (s->unroll > 1)
		line(e, "#pragma unroll %d", s->unroll);
	char *lo = cexpr(e, s->lo), *hi = cexpr_p(e, s->hi);
	char *step = s->step ? cexpr_p(e, s->step) : "1";
	line(e, "for (int %s = %s; %s < %s; %s += %s) {", s->name, lo, s->name, hi, s->name, step);
	e->ind++;
	Scope in = sc;
	in.loop = s;
	if (pl)
		in.ploop = pl;
	/* a fresh iteration re-arms the barriers its TMA loads signal */
	bool *saved = e->armed;
	e->armed = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(e->p->nbarriers + 1));
	emit_list(e, s->body, s->nbody, in);
	e->armed = saved;
	if (pl)
		line(e, "if (++%s == %du) { %s = 0u; %s ^= 1u; }   /* next ring stage */", pl->stage_var, e->p->pipes[pl->pipe].stages, pl->stage_var,
		     pl->phase_var);
	e->ind--;
	line(e, "}");
}

static void emit_stmt(Em *e, Stmt *s, Scope sc)
{
	switch (s->kind) {
	case S_FOR:
		emit_for(e, s, sc);
		return;
	case S_IF:
		ir_comment(e, s->span, NULL);
		line(e, "if (%s) {", cexpr(e, s->cond));
		e->ind++;
		emit_list(e, s->body, s->nbody, sc);
		e->ind--;
		if (s->nels) {
			line(e, "} else {");
			e->ind++;
			emit_list(e, s->els, s->nels, sc);
			e->ind--;
		}
		line(e, "}");
		return;
	case S_LET:
		ir_comment(e, s->span, NULL);
		line(e, "const int %s = %s;", s->name, cexpr(e, s->src));
		return;
	case S_WAIT:
		emit_wait(e, s, sc);
		return;
	case S_ARRIVE:
		emit_arrive(e, s, sc);
		return;
	case S_TMA_LOAD:
		emit_tma_load(e, s, sc);
		return;
	case S_WGMMA:
		emit_wgmma(e, s, sc);
		return;
	case S_WGMMA_WAIT:
		if (s->count < 0 || s->count > 7) {
			refuse(e, s->span, "CK-LOW-009", "wgmma_wait %d: sm_90a allows 0..7 pending groups", s->count);
			return;
		}
		ir_comment(e, s->span, NULL);
		line(e, "wgmma_wait<%d>();", s->count);
		return;
	case S_ASSIGN:
		emit_assign(e, s, sc);
		return;
	case S_STORE:
		emit_store(e, s, sc);
		return;
	case S_FENCE:
		ir_comment(e, s->span, NULL);
		line(e, "%s", s->fence == FENCE_PROXY_ASYNC ? "fence_proxy_async();" : s->fence == FENCE_CTA ? "__threadfence_block();" : "__threadfence();");
		return;
	case S_SYNC: {
		int ri = s->name ? plan_role_index(e->p, s->name) : e->role;
		if (ri < 0) {
			refuse(e, s->span, "CK-LOW-002", "sync names unknown role '%s'", s->name);
			return;
		}
		if (e->p->nroles > 15) {
			refuse(e, s->span, "CK-LOW-002", "named barriers: sm_90a has 16 (id 0 is __syncthreads), this kernel has %d roles", e->p->nroles);
			return;
		}
		ir_comment(e, s->span, NULL);
		line(e, "named_bar_sync(%du, %du);   /* role %s's threads */", ri + 1, e->p->roles[ri].nthreads, e->p->roles[ri].name);
		return;
	}
	default: {
		static const char *names[] = {
			[S_IN] = "nested `in`", [S_TMA_STORE] = "tma store", [S_CP_ASYNC] = "cp_async", [S_MMA] = "mma (sm_80 mma.sync)",
			[S_LOAD] = "load", [S_ATOMIC] = "atomic_add",
		};
		const char *nm = (s->kind < (int)NELEM(names) && names[s->kind]) ? names[s->kind] : "statement";
		Diag *d = refuse(e, s->span, "CK-LOW-002", "%s is not lowered yet for sm_90a", nm);
		diag_set(&d->hint, "the sm_90a lowering covers roles, pipelined loops, wait/arrive, tma loads, wgmma, wgmma_wait, frag = 0 and accumulator stores");
		return;
	}
	}
}

static void emit_list(Em *e, Stmt **ss, int n, Scope sc)
{
	for (int i = 0; i < n; i++)
		emit_stmt(e, ss[i], sc);
}

/* ---- roles ---- */

typedef struct NonRing {
	const Plan *p;
	int role;
	bool *used;
} NonRing;

static void collect_nonring(Stmt **ss, int n, NonRing *q)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = ss[i];
		if (s->kind == S_WAIT) {
			int bi = plan_barrier_index(q->p, s->name);
			if (bi >= 0 && q->p->barriers[bi].pipe < 0)
				q->used[bi] = true;
		}
		collect_nonring(s->body, s->nbody, q);
		collect_nonring(s->els, s->nels, q);
	}
}

static void emit_role(Em *e, Stmt *in)
{
	const Plan *p = e->p;
	int ri = plan_role_index(p, in->name);
	if (ri < 0) {
		refuse(e, in->span, "CK-LOW-002", "`in %s`: unknown role", in->name ? in->name : "?");
		return;
	}
	const PlanRole *r = &p->roles[ri];
	e->role = ri;
	e->elected = r->single_thread;
	sb_putc(e->o, '\n');
	ir_comment(e, in->span, arena_printf(&e->c->arena, "role %s: warps %d..%d, threads %d..%d", r->name, r->warp_lo, r->warp_hi, r->thread_lo,
	                                      r->thread_lo + r->nthreads - 1));
	if (r->warp_lo == 0)
		line(e, "if (warp <= %du) {", r->warp_hi);
	else
		line(e, "if (warp >= %du && warp <= %du) {", r->warp_lo, r->warp_hi);
	e->ind++;
	if (r->regs_dir)
		line(e, "setmaxnreg_%s<%d>();   /* role %s: regs %d (launch budget %d) */", r->regs_dir > 0 ? "inc" : "dec", r->regs, r->name, r->regs,
		     p->base_regs);
	if (r->nwg > 1)
		line(e, "const u32 role_wg = warp / 4u - %du;   /* warpgroup index within role %s */", r->wg_lo, r->name);
	if (e->elected) {
		line(e, "if (threadIdx.x == %du) {   /* one elected thread issues this role's asynchronous work */", r->thread_lo);
		e->ind++;
		for (int i = 0; i < p->ntmaps; i++)
			line(e, "tma_prefetch(&%s);", p->tmaps[i].var);
	}
	/* fragments owned by the role */
	for (int i = 0; i < p->nfrags; i++)
		if (p->frags[i].role == ri && p->frags[i].regs_per_thread > 0)
			line(e, "float %s[%d];   /* frag %s: %lld x %lld per warpgroup, wgmma accumulator layout */", p->frags[i].name,
			     p->frags[i].regs_per_thread, p->frags[i].name, p->frags[i].wg_rows, p->frags[i].wg_cols);
	/* stage/phase registers, one pair per pipeline the role loops over */
	for (int pi = 0; pi < p->npipes; pi++) {
		for (int l = 0; l < p->nloops; l++) {
			if (p->loops[l].role == ri && p->loops[l].pipe == pi) {
				line(e, "u32 %s = 0u, %s = 0u;   /* pipeline %s, %d stages */", p->loops[l].stage_var, p->loops[l].phase_var, p->pipes[pi].name,
				     p->pipes[pi].stages);
				break;
			}
		}
	}
	NonRing q = {p, ri, arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(p->nbarriers + 1))};
	collect_nonring(in->body, in->nbody, &q);
	for (int i = 0; i < p->nbarriers; i++)
		if (q.used[i])
			line(e, "u32 %s_phase = 0u;   /* barrier %s: flips after each wait */", p->barriers[i].name, p->barriers[i].name);
	Scope sc = {NULL, NULL};
	e->armed = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(p->nbarriers + 1));
	if (p->persistent) {
		line(e, "for (int cake_tile = blockIdx.x; cake_tile < cake_tiles; cake_tile += gridDim.x) {   /* persistent: walk the tiles */");
		e->ind++;
		const char **gv = p->kernel->grid ? p->kernel->grid->grid_vars : NULL;
		for (int i = 0; i < p->kernel->ndecls; i++)
			if (p->kernel->decls[i]->kind == D_GRID)
				gv = p->kernel->decls[i]->grid_vars;
		const char *div = "";
		for (int i = 0; i < p->grid_rank; i++) {
			char *ext = cexpr_p(e, p->grid[i]);
			if (gv && gv[i])
				line(e, "const int %s = cake_tile%s %% %s;", gv[i], div, ext);
			div = arena_printf(&e->c->arena, "%s / %s", div, ext);
		}
	}
	emit_list(e, in->body, in->nbody, sc);
	if (p->persistent) {
		e->ind--;
		line(e, "}");
	}
	emit_hang(e, -1, "0u", "0u", sc, in->span, true);
	if (e->elected) {
		e->ind--;
		line(e, "}");
	}
	e->ind--;
	line(e, "}");
	e->role = -1;
}

/* Names the generated code uses for itself; user names must not collide. */
static bool reserved_name(const Plan *p, const char *n)
{
	static const char *fixed[] = {"warp", "role_wg", "smem_base", "int", "float", "double", "char", "u32", "u64", "bf16_t", "f16_t",
	                              "unsigned", "const", "return", "if", "else", "for", "while", "do", "break", "continue", "switch",
	                              "case", "default", "void", "bool", "true", "false", "long", "short", "auto", "new", "delete",
	                              "template", "class", "struct", "signed", "static", "threadIdx", "blockIdx", "gridDim",
	                              "blockDim", "min", "max", "float2", "make_float2"};
	for (size_t i = 0; i < NELEM(fixed); i++)
		if (strcmp(fixed[i], n) == 0)
			return true;
	if (strncmp(n, "smem_", 5) == 0 || strncmp(n, "bar_", 4) == 0 || strncmp(n, "cake_", 5) == 0)
		return true;
	for (int i = 0; i < p->ntmaps; i++)
		if (strcmp(p->tmaps[i].var, n) == 0)
			return true;
	size_t len = strlen(n);
	if ((len > 6 && strcmp(n + len - 6, "_stage") == 0) || (len > 6 && strcmp(n + len - 6, "_phase") == 0))
		return true;
	return len > 0 && n[len - 1] == '_';   /* the emitter's block-local temporaries end in '_' */
}

static void check_names_list(Em *e, Stmt **ss, int n)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = ss[i];
		if ((s->kind == S_FOR || s->kind == S_LET) && s->name && reserved_name(e->p, s->name)) {
			Diag *d = refuse(e, s->name_span, "CK-LOW-013", "name '%s' collides with a name the sm_90a code generator uses", s->name);
			diag_set(&d->hint, "rename '%s'", s->name);
		}
		check_names_list(e, s->body, s->nbody);
		check_names_list(e, s->els, s->nels);
	}
}

static void check_names(Em *e)
{
	const Kernel *k = e->k;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind == D_PARAM && d->name && reserved_name(e->p, d->name)) {
			Diag *g = refuse(e, d->name_span, "CK-LOW-013", "parameter name '%s' collides with a name the sm_90a code generator uses", d->name);
			diag_set(&g->hint, "rename '%s'", d->name);
		}
		if (d->kind == D_GRID)
			for (int j = 0; j < d->nexprs && d->grid_vars; j++)
				if (d->grid_vars[j] && reserved_name(e->p, d->grid_vars[j]))
					refuse(e, d->span, "CK-LOW-013", "grid variable '%s' collides with a name the sm_90a code generator uses", d->grid_vars[j]);
	}
	for (int i = 0; i < k->ndims; i++)
		if (reserved_name(e->p, k->dims[i]))
			refuse(e, k->span, "CK-LOW-013", "dimension name '%s' collides with a name the sm_90a code generator uses", k->dims[i]);
	check_names_list(e, k->body, k->nbody);
}

/* ---- kernel ---- */

bool lower_sm90(Ctx *c, Kernel *k, const Plan *p, StrBuf *cuda, bool debug_hang)
{
	Em e = {0};
	StrBuf body = {0};
	e.c = c;
	e.k = k;
	e.p = p;
	e.o = &body;
	e.dbg = debug_hang;
	e.ok = true;
	e.role = -1;
	e.file = "?";
	if (!p || k->target != TGT_SM90A) {
		diag_add(c->diags, "CK-LOW-001", SEV_ERROR, k->target_span, "lowering for %s is not implemented yet; kernel '%s' cannot be built",
		         target_name(k->target), k->name);
		return false;
	}
	if (k->span.file >= 0 && c->srcs && k->span.file < c->srcs->n) {
		const char *path = c->srcs->files[k->span.file].path;
		const char *slash = path ? strrchr(path, '/') : NULL;
		e.file = slash ? slash + 1 : path ? path : "?";
	}
	check_names(&e);

	/* kernel signature */
	sb_printf(&body, "extern \"C\" __global__ void __launch_bounds__(%d, 1)\n%s(", p->block_threads, k->name);
	for (int i = 0; i < p->nargs; i++) {
		const PlanArg *a = &p->args[i];
		if (i)
			sb_puts(&body, ",\n\t");
		switch (a->kind) {
		case ARG_TMAP: sb_printf(&body, "const __grid_constant__ CUtensorMap %s", a->name); break;
		case ARG_PTR: sb_printf(&body, "%s *__restrict__ %s", ctype_of(a->dt), a->name); break;
		case ARG_DIM: sb_printf(&body, "int %s", a->name); break;
		case ARG_SCALAR: sb_printf(&body, "%s %s", ctype_of(a->dt), a->name); break;
		case ARG_DEBUG: break;
		}
	}
	if (debug_hang)
		sb_printf(&body, "%sCakeHangRecord *cake_dbg", p->nargs ? ",\n\t" : "");
	sb_puts(&body, ")\n{\n");
	e.ind = 1;
	line(&e, "/* ---- shared memory: derived layout, base aligned to %d B (%lld bytes used) ---- */", p->smem_base_align, p->smem_used);
	line(&e, "extern __shared__ __align__(1024) unsigned char cake_smem[];");
	if (p->smem_base_align > 16)
		line(&e, "const u32 smem_base = (smem_u32(cake_smem) + %du) & ~%du;", p->smem_base_align - 1, p->smem_base_align - 1);
	else
		line(&e, "const u32 smem_base = smem_u32(cake_smem);");
	for (int i = 0; i < p->nbuffers; i++) {
		const PlanBuffer *b = &p->buffers[i];
		line(&e, "const u32 smem_%s = smem_base + %lldu;   /* %s: %lld B per stage x %d, align %d, swizzle %s */", b->name, b->offset, b->name,
		     b->bytes_per_stage, b->stages, b->align, swizzle_name(b->swizzle));
	}
	for (int i = 0; i < p->nbarriers; i++) {
		const PlanBarrier *b = &p->barriers[i];
		line(&e, "const u32 bar_%s = smem_base + %lldu;   /* %s: %d mbarrier(s), %d arrival(s)%s */", b->name, b->offset, b->name, b->count, b->arrivals,
		     b->tx_bytes ? arena_printf(&c->arena, " + %lld tx bytes per phase", b->tx_bytes) : "");
	}
	line(&e, "const u32 warp = __shfl_sync(0xffffffffu, threadIdx.x / 32u, 0);   /* warp-uniform */");
	if (p->persistent)
		line(&e, "const int cake_tiles = %s;", cexpr(&e, p->tiles));
	sb_putc(e.o, '\n');
	line(&e, "/* ---- barrier initialisation: one thread, then visible to all threads and the TMA unit ---- */");
	line(&e, "if (threadIdx.x == 0u) {");
	for (int i = 0; i < p->nbarriers; i++) {
		const PlanBarrier *b = &p->barriers[i];
		if (b->count > 1)
			line(&e, "\tfor (u32 s_ = 0; s_ < %du; ++s_)\n\t\t\tmbar_init(bar_%s + 8u * s_, %du);", b->count, b->name, b->arrivals);
		else
			line(&e, "\tmbar_init(bar_%s, %du);", b->name, b->arrivals);
	}
	line(&e, "\tfence_mbarrier_init();");
	line(&e, "\tfence_proxy_async();");
	line(&e, "}");
	line(&e, "__syncthreads();");
	if (!p->persistent) {
		for (int i = 0; i < k->ndecls; i++) {
			Decl *g = k->decls[i];
			if (g->kind != D_GRID)
				continue;
			for (int j = 0; j < g->nexprs && j < 3; j++)
				if (g->grid_vars && g->grid_vars[j])
					line(&e, "const int %s = blockIdx.%c;   /* grid extent %s */", g->grid_vars[j], "xyz"[j], cexpr(&e, g->exprs[j]));
		}
	}
	for (int i = 0; i < k->nbody; i++) {
		Stmt *s = k->body[i];
		if (s->kind != S_IN) {
			refuse(&e, s->span, "CK-LOW-002", "statement outside any `in ROLE` block is not lowered for sm_90a");
			continue;
		}
		emit_role(&e, s);
	}
	sb_puts(&body, "}\n");

	/* assemble: header, helpers the kernel needs, kernel */
	sb_printf(cuda, "// Generated by cake %s from %s: kernel %s for sm_90a.\n", CAKE_VERSION, e.file, k->name);
	sb_printf(cuda, "// Launch: %d threads per block, %lld bytes of dynamic shared memory, grid ", p->block_threads, p->smem_bytes);
	if (p->persistent) {
		sb_puts(cuda, "min(#SMs, ");
		lower_expr_c(cuda, p->tiles, k);
		sb_puts(cuda, ") CTAs (persistent)");
	} else {
		sb_putc(cuda, '(');
		for (int i = 0; i < p->grid_rank; i++) {
			if (i)
				sb_puts(cuda, ", ");
			lower_expr_c(cuda, p->grid[i], k);
		}
		sb_putc(cuda, ')');
	}
	sb_puts(cuda, ".\n// Do not edit: change the .cake schedule and rebuild (`cake build --emit=plan` shows the derivation).\n\n");
	emit_prelude(cuda);
	for (int r = 1; r <= 5; r++)
		if (e.need_rank[r])
			emit_tma_wrapper(cuda, r);
	for (int f = 0; f < 2; f++)
		for (int n = 1; n <= 32; n++)
			if (e.need_n[f][n])
				emit_wgmma_wrapper(cuda, n * 8, f);
	if (debug_hang)
		emit_debug_helper(cuda);
	sb_putc(cuda, '\n');
	sb_puts(cuda, sb_str(&body));
	sb_free(&body);
	return e.ok;
}
