/*
 * sm90.c — CUDA C++ with inline PTX for Hopper (sm_90a) from a kernel + Plan.
 *
 * The output is one self-contained translation unit that NVRTC compiles
 * without any #include: the few types it needs (u32, u64, bf16 bits, the
 * 128-byte CUtensorMap) are declared at the top, followed by one small
 * __device__ __forceinline__ function per PTX instruction the kernel uses
 * (mbarrier init/arrive/expect_tx/try_wait loop, cp.async.bulk.tensor,
 * wgmma fence/commit/wait and one mma_async wrapper per N, setmaxnreg,
 * fences, named barriers, bf16 packing). That helper library is written by
 * sm90_prelude.c (sm90_prelude_emit); this file emits the kernel body first
 * and records in Em which helpers it used (TMA ranks, wgmma shapes, ...),
 * so the wgmma wrappers are generated, operand list and all, for exactly
 * the N values the kernel needs.
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
 *              memory descriptors advanced by 32 bytes, commit (an overwrite
 *              inside a loop starts with the wrapper's write-only _z twin, so
 *              the previous iteration's accumulator is not kept live); store of a
 *              wgmma accumulator -> the m64nNk16 fragment layout (thread t
 *              holds rows warp*16 + lane/4 and +8, column pairs 8j +
 *              2*(lane%4)), converted and stored as 4-byte pairs. Every
 *              statement that needs the lane reads it with lane_id() (a
 *              volatile read of %laneid), so the address arithmetic built on
 *              it stays in the statement and is not hoisted out of a loop to
 *              hold registers across every iteration.
 *
 *   fragments  element-wise math, broadcasts and row reductions (with quad
 *              shuffles; across the warpgroups of a `split n` tile through
 *              shared memory) over the accumulator-derived register layouts of
 *              lower.h (FragLayout); the row values a statement reads from
 *              other threads (nested reductions, l2norm's scale, vectors
 *              broadcast in the other orientation) computed before its loop;
 *              vector loads/stores of row and column vectors; whole shared
 *              buffers read into registers with the swizzle undone, in column
 *              panels when the rows are wider than the span (the wgmma operand
 *              layout). The scan and the triangular solve are in sm90_acc.c.
 *   SIMT       element reads of global tensors in scalar expressions and the
 *              thread-distributed vectors (FRAG_VEC) of roles without an
 *              accumulator are emitted by sm90_vec.c (sm90_int.h); this file
 *              dispatches to it.
 *
 * Anything else (sm_80 instructions, TMA stores, atomics, triangular masks,
 * register-operand wgmma, SIMT fragments of partial-warpgroup roles, ...) is
 * refused with CK-LOW-002/009/011 naming the statement; the emitter is
 * organised per statement kind so each new primitive is one more case.
 */
#include "sm90_int.h"

#include <string.h>


/* ---- small output helpers ---- */

static void vline(Em *e, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	for (int i = 0; i < e->ind; i++)
		sb_putc(e->o, '\t');
	sb_puts(e->o, buf);
	sb_putc(e->o, '\n');
}

static void line(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Em *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(e, fmt, ap);
	va_end(ap);
}

void sm90_line(Em *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(e, fmt, ap);
	va_end(ap);
}

static Diag *vrefuse(Em *e, Span sp, const char *id, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	e->ok = false;
	Diag *d = diag_add(e->c->diags, id, SEV_ERROR, sp, "%s", buf);
	if (e->role >= 0)
		diag_set(&d->role, "%s", e->p->roles[e->role].name);
	return d;
}

static Diag *refuse(Em *e, Span sp, const char *id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static Diag *refuse(Em *e, Span sp, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	Diag *d = vrefuse(e, sp, id, fmt, ap);
	va_end(ap);
	return d;
}

Diag *sm90_refuse(Em *e, Span sp, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	Diag *d = vrefuse(e, sp, id, fmt, ap);
	va_end(ap);
	return d;
}

/* ---- exchange arrays ----
 *
 * The primitives that move values between threads (relayouts of vectors, row reductions
 * across warpgroups, column reductions, scans, the thread-tile and thread-vector
 * reductions) pass them through a small shared array: the holders write it, a named
 * barrier over the role, every thread reads, and a last barrier over the role frees it
 * before the role goes on. So two exchanges of one role never hold their arrays at the
 * same time, and none overlaps the role's trisolve, which uses its part of the lowering's
 * scratch (derive_scratch) under the same discipline. When the role has such a part, an
 * exchange's arrays are placed in it (16-byte aligned, while they fit): dynamic shared
 * memory the plan already counts, instead of static arrays that ptxas adds on top of it
 * (CK-LOW-015). Otherwise each array is a static __shared__ one. The address is a
 * constant offset from cake_smem, not from the runtime-aligned smem_base, so it costs
 * no register (a static array's address is an immediate too): the base lies 0 ..
 * align - 16 bytes above cake_smem (the runtime guarantees 16), so the arrays start
 * align - 16 bytes into the part, where they are inside it wherever the base fell. */

/* Bytes of role ri's part of the lowering's scratch, and its offset (-1: none). */
static long long role_scratch(const Plan *p, int ri, long long *bytes)
{
	*bytes = 0;
	if (!p->scratch_role || ri < 0 || ri >= p->nroles || p->scratch_role[ri] < 0)
		return -1;
	long long at = p->scratch_role[ri], end = p->scratch_offset + p->scratch_bytes;
	for (int r = 0; r < p->nroles; r++)
		if (p->scratch_role[r] > at && p->scratch_role[r] < end)
			end = p->scratch_role[r];
	*bytes = end - at;
	return at;
}

void sm90_xchg_begin(Em *e)
{
	e->xchg_at = 0;
}

void sm90_xchg(Em *e, int role, const char *ty, const char *name, int rank, const long long *dims, const char *note)
{
	long long n = strcmp(ty, "double") == 0 || strcmp(ty, "long long") == 0 ? 8 : 4;
	char inner[96] = "";
	int w = 0;
	for (int i = 0; i < rank; i++) {
		n *= dims[i];
		if (i)
			w += snprintf(inner + w, sizeof inner - (size_t)w, "[%lld]", dims[i]);
	}
	long long room, base = role_scratch(e->p, role, &room), at = (e->xchg_at + 15) / 16 * 16;
	long long shift = e->p->smem_base_align > 16 ? e->p->smem_base_align - 16 : 0;   /* the base's largest offset from cake_smem */
	const char *cm = note ? arena_printf(&e->c->arena, "   /* %s */", note) : "";
	if (base >= 0 && shift + at + n <= room) {
		e->xchg_at = at + n;
		const char *addr = arena_printf(&e->c->arena, "cake_smem + %lldu", shift + base + at);
		const char *sc = arena_printf(&e->c->arena, "   /* %s%sin the lowering's scratch */", note ? note : "", note ? "; " : "");
		if (rank == 1)
			line(e, "%s *const %s = (%s *)(%s);%s", ty, name, ty, addr, sc);
		else
			line(e, "%s (*const %s)%s = (%s (*)%s)(%s);%s", ty, name, inner, ty, inner, addr, sc);
		return;
	}
	line(e, "__shared__ %s %s[%lld]%s;%s", ty, name, dims[0], inner, cm);
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
 * grid/loop variables, lets and scalar params; arithmetic; min/max; element
 * reads G[i, j] of global tensors, spelled by sm90_vec.c). */
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
	case E_INDEX:
		return sm90_vec_reads_bad(e, x, scalar_bad);
	case E_UNARY:
		return scalar_bad(e, x->lhs);
	case E_BINARY: {
		if (x->op == '@')
			return x;
		const Expr *b = scalar_bad(e, x->lhs);
		return b ? b : scalar_bad(e, x->rhs);
	}
	case E_CALL:
		if (lower_scalar_call_ok(x)) {   /* min/max, float math, casts */
			for (int i = 0; i < x->nargs; i++) {
				const Expr *b = scalar_bad(e, x->args[i]);
				if (b)
					return b;
			}
			return NULL;
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
		Diag *d = refuse(e, bad->span, "CK-LOW-002", "this expression is not lowered yet for sm_90a in a scalar context (only dims, consts, grid and loop variables, lets, scalar params, arithmetic, min/max, float math builtins, casts and element reads G[i, j] of global tensors with one point index per dimension are)");
		diag_set(&d->hint, "compute the value from dims and loop variables, or wait for the primitive's lowering");
		return arena_strdup(&e->c->arena, "0");
	}
	if (sm90_vec_has_reads(x))
		return sm90_vec_cexpr(e, x);
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

static const char *ctype_of(DType t);

/* Register type of a fragment element: 16-bit floats are held as f32. */
static const char *ftype_of(DType t)
{
	return (t == DT_BF16 || t == DT_F16) ? "float" : ctype_of(t);
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

/* ---- statements ---- */

#define SCOPE_PIPES 8
typedef struct Scope {
	const PlanLoop *ploop;   /* innermost pipelined loop */
	const Stmt *loop;        /* innermost loop */
	/* the innermost enclosing loop pipelined on each pipeline (the first SCOPE_PIPES): a ring
	 * buffer of an outer loop's pipeline, read inside an inner loop pipelined on another one
	 * (a point tile per outer step, centroid tiles per inner step), takes the outer loop's stage */
	const PlanLoop *by_pipe[SCOPE_PIPES];
} Scope;

/* The loop whose stage and phase a ring buffer or barrier of pipeline `pipe` takes here. */
static const PlanLoop *ring_loop(Scope sc, int pipe)
{
	if (sc.ploop && sc.ploop->pipe == pipe)
		return sc.ploop;
	return pipe >= 0 && pipe < SCOPE_PIPES ? sc.by_pipe[pipe] : NULL;
}

static void emit_list(Em *e, Stmt **ss, int n, Scope sc);

/* Address expression of buffer b at the current stage. */
static char *buf_addr(Em *e, int bi, Scope sc, Span sp)
{
	const PlanBuffer *b = &e->p->buffers[bi];
	if (b->pipe < 0)
		return arena_printf(&e->c->arena, "smem_%s", b->name);
	const PlanLoop *L = ring_loop(sc, b->pipe);
	if (!L) {
		Diag *d = refuse(e, sp, "CK-LOW-008", "ring buffer '%s' is used outside a loop pipelined on '%s'; its stage cannot be derived", b->name,
		                 e->p->pipes[b->pipe].name);
		diag_set(&d->resource, "%s", b->name);
		return arena_strdup(&e->c->arena, "0u");
	}
	return arena_printf(&e->c->arena, "smem_%s + %lldu * %s", b->name, b->stage_stride, L->stage_var);
}

static char *bar_addr(Em *e, int bi, Scope sc, Span sp, char **stage_out)
{
	const PlanBarrier *b = &e->p->barriers[bi];
	if (b->pipe < 0) {
		*stage_out = "0u";
		return arena_printf(&e->c->arena, "bar_%s", b->name);
	}
	const PlanLoop *L = ring_loop(sc, b->pipe);
	if (!L) {
		Diag *d = refuse(e, sp, "CK-LOW-008", "ring barrier '%s' is used outside a loop pipelined on '%s'; its stage cannot be derived", b->name,
		                 e->p->pipes[b->pipe].name);
		diag_set(&d->barrier, "%s", b->name);
		*stage_out = "0u";
		return arena_strdup(&e->c->arena, "0u");
	}
	*stage_out = (char *)L->stage_var;
	return arena_printf(&e->c->arena, "bar_%s + 8u * %s", b->name, L->stage_var);
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
	const PlanLoop *L = b->pipe >= 0 ? ring_loop(sc, b->pipe) : NULL;
	const char *ph = b->pipe >= 0 ? L ? L->phase_var : "0u" : arena_printf(&e->c->arena, "%s_phase", b->name);
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

/* Shared operands of wgmma, and the `store`/`load` of accumulator tiles into them, use one
 * layout per swizzled buffer: rows one swizzle span S wide are the swizzle atom's rows
 * (8 rows x S bytes, the XOR pattern of TMA); a buffer whose rows are wider is held as
 * column panels of one span each, panel p holding the bytes p S .. p S + S - 1 of every row
 * as a [rows, S] swizzled tile, the panels one after the other (rows x S bytes apart) —
 * what TMA writes box by box into such a buffer (one `tma buf[:, c +: W]` per panel), and the canonical layout the descriptors
 * address: K-major, a K step of 16 elements moves 32 bytes along a row and a new panel every
 * S / 32 steps (LBO unused); MN-major, the M or N direction is contiguous within a panel's
 * rows and LBO is the panel stride (from one S-wide atom column to the next), a K step is
 * 16 rows (16 S bytes). SBO is 8 S, the 8-row groups of a panel. */
static int span_of(const PlanBuffer *b)
{
	int S = swizzle_bytes(b->swizzle);
	return S && b->row_bytes > S ? S : b->row_bytes;
}

static long long panel_bytes(const PlanBuffer *b)
{
	return b->shape[0] * span_of(b);
}

/* The shared address of a TMA copy's buffer side `ref` (a whole buffer, or one column panel
 * `buf[:, c +: W]` that sema checked: panel c / W, rows x span bytes each), or NULL after a
 * refusal. what names the copy for the message ("tma load into", "tma store from"). */
static char *tma_smem_addr(Em *e, int buf, const Expr *ref, Scope sc, Span sp, const char *what)
{
	char *addr = buf_addr(e, buf, sc, sp);
	if (ref->kind != E_INDEX)
		return addr;
	const PlanBuffer *b = &e->p->buffers[buf];
	long long c = 0, pcols = span_of(b) / dtype_size(b->dt);
	if (!eval_expr(ref->slices[1].start, e->k, NULL, &c) || span_of(b) == b->row_bytes) {
		refuse(e, sp, "CK-LOW-006", "%s a panel of '%s': the panel's first column is not a constant", what, b->name);
		return NULL;
	}
	return arena_printf(&e->c->arena, "%s + %lldu /* panel %lld */", addr, c / pcols * panel_bytes(b), c / pcols);
}

/* ", c0, c1, ..." : a TMA box's coordinates from the global slice starts, innermost first. */
static void tma_coords(Em *e, StrBuf *co, const Expr *gref, int rank)
{
	for (int i = 0; i < rank; i++) {
		const Slice *sl = &gref->slices[rank - 1 - i];
		sb_puts(co, ", ");
		sb_puts(co, sl->kind == SL_ALL ? "0" : cexpr(e, sl->start));
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
	char *daddr = tma_smem_addr(e, buf, s->dst, sc, s->span, "tma load into");
	if (!daddr)
		return;
	StrBuf co = {0};
	tma_coords(e, &co, s->src, t->rank);
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

/* ---- TMA stores ----
 * `tma G[...] <- buf` (or one column panel, `buf[:, c +: W]`) is issued by one thread of the
 * role, its first (the role's elected thread when it only issues asynchronous work), as
 * cp.async.bulk.tensor into a bulk group, then commit_group. The copy reads the buffer
 * asynchronously, so two waits are derived, both by that thread (bulk groups are per thread):
 * before the role rewrites the buffer while a store from it may still be reading it
 * (wait_group.read 0, then the role's named barrier, so no thread writes before the wait), and
 * at the end of the role program, so the CTA does not exit before its stores have read shared
 * memory. "May still be reading" is decided statically and conservatively: the role has already
 * issued a store of the buffer, or the write is inside a loop or a persistent tile loop. A
 * buffer a TMA store reads may be written only by the storing role: another role's writes would
 * need the wait ordered through a barrier, which is not derived (refused, CK-LOW-006). */

static const char *tstore_issuer(Em *e)
{
	return arena_printf(&e->c->arena, "threadIdx.x == %du", e->p->roles[e->role].thread_lo);
}

/* The shared buffer a statement writes (a store, atomic, TMA load or cp_async into it), or -1. */
static int smem_written_by(const Plan *p, const Stmt *s)
{
	if ((s->kind == S_STORE || s->kind == S_ATOMIC || s->kind == S_TMA_LOAD || s->kind == S_CP_ASYNC) && s->dst)
		return plan_buffer_index(p, lower_base_name(s->dst));
	return -1;
}

/* Mark in src[] the buffers the TMA stores of a statement list read. */
static void collect_tstores(const Plan *p, Stmt **ss, int n, bool *src)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = ss[i];
		if (s->kind == S_TMA_STORE && s->src) {
			int b = plan_buffer_index(p, lower_base_name(s->src));
			if (b >= 0)
				src[b] = true;
		}
		collect_tstores(p, s->body, s->nbody, src);
		collect_tstores(p, s->els, s->nels, src);
	}
}

/* The first statement of a list that writes one of the buffers marked in src[], or NULL. */
static Stmt *find_write(const Plan *p, Stmt **ss, int n, const bool *src)
{
	for (int i = 0; i < n; i++) {
		int b = smem_written_by(p, ss[i]);
		if (b >= 0 && src[b])
			return ss[i];
		Stmt *w = find_write(p, ss[i]->body, ss[i]->nbody, src);
		if (!w)
			w = find_write(p, ss[i]->els, ss[i]->nels, src);
		if (w)
			return w;
	}
	return NULL;
}

/* Refuse a TMA-store source buffer another role writes (see the note above). */
static void check_tstore_writers(Em *e)
{
	const Kernel *k = e->k;
	for (int i = 0; i < k->nbody; i++) {
		Stmt *in = k->body[i];
		if (in->kind != S_IN)
			continue;
		bool *src = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(e->p->nbuffers + 1));
		collect_tstores(e->p, in->body, in->nbody, src);
		for (int j = 0; j < k->nbody; j++) {
			Stmt *other = k->body[j];
			if (j == i || other->kind != S_IN)
				continue;
			Stmt *w = find_write(e->p, other->body, other->nbody, src);
			if (!w)
				continue;
			int b = smem_written_by(e->p, w);
			Diag *d = refuse(e, w->span, "CK-LOW-006", "role '%s' writes '%s', which role '%s' stores through TMA: the wait for a TMA "
			                 "store's read is derived only inside the storing role", other->name, e->p->buffers[b].name, in->name);
			diag_set(&d->resource, "%s", e->p->buffers[b].name);
			diag_set(&d->hint, "fill '%s' in role '%s', or give the other role its own buffer", e->p->buffers[b].name, in->name);
			return;
		}
	}
}

/* Before a write of buffer b: the role's earlier TMA stores from it must have read it. */
static void emit_tstore_wait(Em *e, int b, Span sp)
{
	const PlanRole *r = &e->p->roles[e->role];
	ir_comment(e, sp, arena_printf(&e->c->arena, "derived: the TMA stores from %s issued before have read it before it is rewritten",
	                               e->p->buffers[b].name));
	if (e->elected) {
		line(e, "bulk_wait_read<0>();");
		return;
	}
	line(e, "if (%s)", tstore_issuer(e));
	line(e, "	bulk_wait_read<0>();");
	line(e, "named_bar_sync(%du, %du);   /* role %s's threads wait for it */", e->role + 1, r->nthreads, r->name);
}

static void emit_tma_store(Em *e, Stmt *s, Scope sc)
{
	const Plan *p = e->p;
	int ti = plan_tmap_of(p, s);
	int buf = s->src ? plan_buffer_index(p, lower_base_name(s->src)) : -1;
	if (ti < 0 || buf < 0) {
		refuse(e, s->span, "CK-LOW-006", "tma store could not be matched to a tensor map and a buffer");
		return;
	}
	const PlanTmap *t = &p->tmaps[ti];
	char *saddr = tma_smem_addr(e, buf, s->src, sc, s->span, "tma store from");
	if (!saddr)
		return;
	StrBuf co = {0};
	tma_coords(e, &co, s->dst, t->rank);
	e->need_store_rank[t->rank] = true;
	ir_comment(e, s->span, "one thread issues the copy into a bulk group");
	const char *pre = "";
	if (!e->elected) {
		line(e, "if (%s) {", tstore_issuer(e));
		pre = "\t";
	}
	line(e, "%stma_store_%dd(&%s, %s%s);", pre, t->rank, t->var, saddr, sb_str(&co));
	line(e, "%sbulk_commit();", pre);
	if (!e->elected)
		line(e, "}");
	e->tstore_issued[buf] = true;
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
	if (f->layout != FRAG_ACC || f->dt != DT_F32) {
		refuse(e, s->span, "CK-LOW-009", "wgmma destination '%s' must be a rank-2 f32 accumulator fragment", f->name);
		return;
	}
	const PlanRole *r = &p->roles[e->role];
	if (f->role != e->role || r->nwg < 1) {
		refuse(e, s->span, "CK-LOW-009", "wgmma into '%s' must run in its owning role, made of whole warpgroups", f->name);
		return;
	}
	bool ta, tb;
	int ai = wgmma_operand(e, s->src->lhs, &ta);
	int bi = wgmma_operand(e, s->src->rhs, &tb);
	/* A: a shared buffer, K-major [M, K] (a) or MN-major [K, M] (a^T), or a register fragment in the accumulator layout */
	const Expr *al = s->src->lhs;
	int afi = (al && al->kind == E_IDENT) ? plan_frag_index(p, al->name) : -1;
	const PlanFrag *AF = afi >= 0 ? &p->frags[afi] : NULL;
	if ((ai < 0 && !AF) || bi < 0) {
		refuse(e, s->span, "CK-LOW-009", "wgmma operands must be A = a shared buffer ([M, K] written a, or [K, M] written a^T) or a register fragment, and B = a shared buffer ([N, K] written b^T, or [K, N]) for sm_90a");
		return;
	}
	const PlanBuffer *A = ai >= 0 ? &p->buffers[ai] : NULL, *B = &p->buffers[bi];
	DType adt = A ? A->dt : AF->dt;
	if (B->rank != 2 || (A && A->rank != 2) || adt != B->dt || (adt != DT_BF16 && adt != DT_F16)) {
		refuse(e, s->span, "CK-LOW-009", "wgmma lowering handles bf16 or f16 rank-2 operands of one dtype with an f32 accumulator");
		return;
	}
	int SB = span_of(B), SA = A ? span_of(A) : 0;
	if (B->swizzle == SWZ_NONE || B->row_bytes % SB || (A && (A->swizzle == SWZ_NONE || A->row_bytes % SA))) {
		const PlanBuffer *X = B->swizzle == SWZ_NONE || B->row_bytes % SB ? B : A;
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma shared operands must be swizzled buffers whose rows are whole swizzle spans for the sm_90a lowering (%s: %d B / %s)",
		                 X->name, X->row_bytes, swizzle_name(X->swizzle));
		diag_set(&d->hint, "declare the buffers [rows, 64 k] bf16 with `swizzle 128B` (or [rows, 32 k] with 64B, [rows, 16 k] with 32B)");
		return;
	}
	/* logical shapes: A [M, K], B [K, N] */
	long long N = tb ? B->shape[0] : B->shape[1];
	long long KB = tb ? B->shape[1] : B->shape[0];
	long long M, K;
	int nwg = r->nwg;
	if (A) {
		M = ta ? A->shape[1] : A->shape[0];
		K = ta ? A->shape[0] : A->shape[1];
	} else {
		/* each warpgroup needs the rows of its part of the destination and every column (K) */
		bool rows_ok = AF->wg_rows == f->wg_rows && (nwg == 1 || (AF->split == SPLIT_M) == (f->split == SPLIT_M));
		if (AF->layout != FRAG_ACC || AF->role != e->role || AF->regs_per_thread == 0 || !rows_ok || (AF->split == SPLIT_N && nwg > 1)) {
			refuse(e, s->span, "CK-LOW-009", "register A operand '%s' must be an accumulator-layout fragment of this role holding, in each warpgroup, the destination's rows and all of its columns",
			       AF->name);
			return;
		}
		M = AF->rows;
		K = AF->wg_cols;
	}
	const TargetInfo *ti = target_info(p->target);   /* wgmma m64nNk16 shape limits */
	long long n0mult = f->split == SPLIT_N && nwg > 1 ? f->wg_cols : 0;   /* the warpgroup's first column (a multiple of) */
	bool ok_shape = f->mtiles >= 1 && f->wg_cols >= ti->wgmma_n_min && f->wg_cols <= ti->wgmma_n_max && f->wg_cols % ti->wgmma_n_step == 0 &&
	                M == f->rows && N == f->cols;
	/* an N-major B is read from the warpgroup's first column in whole atoms, or (a warpgroup
	 * narrower than an atom, whose width divides it) from inside one atom: the descriptor's
	 * start then lies 16-byte chunks into the atom's rows, as a K-major operand's K steps do,
	 * and the swizzle still applies to the address (the pattern's row phase is unchanged) */
	bool nsub = n0mult > 0 && f->wg_cols * 2 < SB && SB % (f->wg_cols * 2) == 0 && (f->wg_cols * 2) % 16 == 0;
	bool nmaj_ok = tb || nsub || ((n0mult * 2) % SB == 0 && (f->wg_cols * 2 <= SB || (f->wg_cols * 2) % SB == 0));
	if (ok_shape && KB == K && !nmaj_ok) {
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma reads an N-major B in whole swizzle atoms of %d columns, but each warpgroup's %lld columns of %s start inside one",
		                 SB / 2, f->wg_cols, B->name);
		diag_set(&d->hint, "give each warpgroup a multiple of %d columns or a divisor of it (a multiple of 8), or store the transposed tile and read it K-major (written %s^T)",
		         SB / 2, B->name);
		return;
	}
	if (!ok_shape || KB != K || K % ti->wgmma_k_16bit || !nmaj_ok) {
		Diag *d = refuse(e, s->span, "CK-LOW-009", "wgmma shapes do not map onto m64nNk16 for sm_90a: A [%lld, %lld] @ %s (N %lld, K %lld) into %s[%lld,%lld]%s over %d warpgroups",
		                 M, K, B->name, N, KB, f->name, f->rows, f->cols, f->split == SPLIT_M ? " split m" : f->split == SPLIT_N ? " split n" : "", nwg);
		diag_set(&d->hint, "each warpgroup needs a multiple of %d rows and %d..%d columns (multiple of %d, an N-major B whole swizzle atoms of them); K a multiple of %d",
		         ti->wgmma_m, ti->wgmma_n_min, ti->wgmma_n_max, ti->wgmma_n_step, ti->wgmma_k_16bit);
		return;
	}
	int n = (int)f->wg_cols;
	bool f16 = adt == DT_F16;
	e->need_w[f16][n / 8] |= (unsigned short)(1u << ((AF ? 2 : 0) + (tb ? 0 : 1) + (ta ? 4 : 0) + (s->negate ? 8 : 0)));
	char *baddr = buf_addr(e, bi, sc, s->span);
	int ksteps = (int)(K / 16);
	const char *ty = f16 ? "f16" : "bf16";
	const char *suffix = AF ? (tb ? "_rs" : "_rs_tb") : ta ? (tb ? "_ta" : "_ta_tb") : (tb ? "" : "_tb");
	if (s->negate)   /* `-=`: the wrapper with imm-scale-a = -1 */
		suffix = arena_printf(&e->c->arena, "%s_n", suffix);
	bool bpan = B->row_bytes > SB, apan = A && A->row_bytes > SA;
	/* B descriptor: K-major steps 32 B along the row (a new panel every SB / 32 steps); N-major steps 16 rows */
	int bstep = tb ? 32 : 16 * SB;
	int blbo = tb ? B->desc_lbo : bpan ? (int)panel_bytes(B) : 0;
	int bsbo = 8 * SB;
	const char *bk = tb && bpan ? arena_printf(&e->c->arena, "kk_ / %d * %lldu + kk_ %% %d * 32u", SB / 32, panel_bytes(B), SB / 32)
	                            : arena_printf(&e->c->arena, "kk_ * %du", bstep);
	ir_comment(e, s->span, NULL);
	line(e, "/* %d x wgmma m64n%dk16 per warpgroup: %d row slice(s) of 64, K = %lld in steps of 16; A %s, B %s */", f->mtiles * ksteps, n,
	     f->mtiles, K, AF ? "from registers (accumulator layout packed to 16-bit pairs)" :
	     ta ? "M-major, transposed by the instruction (descriptor + 16 rows per step)" :
	     apan ? "K-major in panels of 64 columns (descriptor + 32 B per step, the next panel every 4)" : "K-major (descriptor + 32 B per step)",
	     tb ? (bpan ? "K-major in panels (descriptor + 32 B per step, the next panel every 4)" : "K-major (descriptor + 32 B per step)")
	        : "N-major, transposed by the instruction (descriptor + 16 rows per step)");
	line(e, "wgmma_fence();");
	line(e, "{");
	e->ind++;
	if (A) {
		char *aaddr = buf_addr(e, ai, sc, s->span);
		if (f->split == SPLIT_M && nwg > 1) {
			if (ta)
				line(e, "const u32 a_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld rows of %s^T: its panels */", aaddr,
				     f->wg_rows * 2 / SA * panel_bytes(A), f->wg_rows, A->name);
			else
				line(e, "const u32 a_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld rows of %s */", aaddr, f->wg_rows * SA, f->wg_rows, A->name);
		} else {
			line(e, "const u32 a_base_ = %s;", aaddr);
		}
	}
	if (f->split == SPLIT_N && nwg > 1) {
		if (tb)
			line(e, "const u32 b_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld columns */", baddr, f->wg_cols * SB, f->wg_cols);
		else if (nsub)
			line(e, "const u32 b_base_ = %s + role_wg / %lldu * %lldu + role_wg %% %lldu * %lldu;   /* this warpgroup's %lld columns: %lld B into a panel of %s */",
			     baddr, SB / (f->wg_cols * 2), panel_bytes(B), SB / (f->wg_cols * 2), f->wg_cols * 2, f->wg_cols, f->wg_cols * 2, B->name);
		else
			line(e, "const u32 b_base_ = %s + role_wg * %lldu;   /* this warpgroup's %lld columns: its panels of %s */", baddr,
			     f->wg_cols * 2 / SB * panel_bytes(B), f->wg_cols, B->name);
	} else {
		line(e, "const u32 b_base_ = %s;", baddr);
	}
	line(e, "#pragma unroll");
	line(e, "for (int mt_ = 0; mt_ < %d; ++mt_) {", f->mtiles);
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int kk_ = 0; kk_ < %d; ++kk_) {", ksteps);
	/* the operands after d, written once. An overwrite (`=`) inside a loop calls the _z twin of
	 * the wrapper at kk_ == 0 (scale-d = 0, d written only), so the fragment's old value is not
	 * read: with the "+f" wrapper the value of the previous iteration would stay live from its
	 * last use across the back edge up to here. Outside loops the "+f" form is kept (an
	 * in-place overwrite, which ptxas allocates better there: acc_wgmma spills 48 bytes
	 * with the twin and none without). */
	bool zf = !s->accumulate && e->loops > 0;
	const char *ops;
	if (AF) {
		const char *pk = f16 ? "pack_f16x2" : "pack_bf16x2";
		line(e, "\t\tconst float *pa_ = %s + mt_ * %lld + 8 * kk_;   /* columns 16kk .. 16kk+15 of %s */", AF->name, AF->wg_cols / 2, AF->name);
		ops = arena_printf(&e->c->arena, "%s(pa_[0], pa_[1]), %s(pa_[2], pa_[3]), %s(pa_[4], pa_[5]), %s(pa_[6], pa_[7])", pk, pk, pk, pk);
	} else if (ta) {
		ops = arena_printf(&e->c->arena, "wgmma_desc(a_base_ + mt_ * %lldu + kk_ * %du, %lldu, %du, %du)", 64 * 2 / SA * panel_bytes(A), 16 * SA,
		                   apan ? panel_bytes(A) : 0, 8 * SA, A->desc_layout);
	} else if (apan) {
		ops = arena_printf(&e->c->arena, "wgmma_desc(a_base_ + mt_ * %du + kk_ / %d * %lldu + kk_ %% %d * 32u, %du, %du, %du)", 64 * SA, SA / 32,
		                   panel_bytes(A), SA / 32, A->desc_lbo, 8 * SA, A->desc_layout);
	} else {
		ops = arena_printf(&e->c->arena, "wgmma_desc(a_base_ + mt_ * %du + kk_ * 32u, %du, %du, %du)", 64 * A->row_bytes, A->desc_lbo, A->desc_sbo, A->desc_layout);
	}
	const char *bd = arena_printf(&e->c->arena, "wgmma_desc(b_base_ + %s, %du, %du, %du)", bk, blbo, bpan ? bsbo : B->desc_sbo, B->desc_layout);
	for (int z = zf ? 0 : 1; z < 2; z++) {
		const char *in = zf ? "\t\t\t" : "\t\t";
		if (zf)
			line(e, "\t\t%s", z ? "else" : "if (kk_ == 0)   /* overwrite: d is not read */");
		line(e, "%swgmma_m64n%dk16_%s%s%s(%s + mt_ * %d,", in, n, ty, suffix, z ? "" : "_z", f->name, n / 2);
		line(e, "%s                 %s,", in, ops);
		line(e, "%s                 %s,", in, bd);
		line(e, "%s                 %s);", in, z == 0 ? "0" : zf || s->accumulate ? "1" : "kk_ > 0 ? 1 : 0");
	}
	line(e, "\t}");
	line(e, "}");
	e->ind--;
	line(e, "}");
	line(e, "wgmma_commit();");
}

/* ---- fragment math: element-wise expressions and row reductions ----
 *
 * Every fragment lives in a layout derived from the wgmma accumulator
 * (lower.h, FragLayout), so element-wise math is a fully unrolled loop over
 * the thread's registers with compile-time indices (the registers stay
 * registers): an accumulator element a_ decodes to (mt_, j_, h_, e_) =
 * (64-row tile, 8-column group, row half, column parity); rows(v) reads the
 * row vector at mt_*2 + h_, cols(v) the column vector at 2*j_ + e_. A row
 * reduction folds the 2*N/8 values a thread holds of each of its rows, then
 * combines the 4 lanes of the quad that share the row with two xor shuffles. */


static const PlanFrag *frag_of(Em *e, const Expr *x)
{
	if (!x || x->kind != E_IDENT)
		return NULL;
	int fi = plan_frag_index(e->p, x->name);
	return fi >= 0 ? &e->p->frags[fi] : NULL;
}

/* First accumulator-layout fragment read by x (NULL if none). */
static const PlanFrag *find_acc(Em *e, const Expr *x)
{
	if (!x || (x->kind == E_CALL && x->name && strcmp(x->name, "sum") == 0))
		return NULL;
	const PlanFrag *f = frag_of(e, x);
	if (f)
		return f->layout == FRAG_ACC ? f : NULL;
	const PlanFrag *r = find_acc(e, x->lhs);
	if (!r)
		r = find_acc(e, x->rhs);
	for (int i = 0; !r && i < x->nargs; i++)
		r = find_acc(e, x->args[i]);
	return r;
}

static bool is_call(const Expr *x, const char *name)
{
	return x && x->kind == E_CALL && x->name && strcmp(x->name, name) == 0;
}

/* Element type of a fragment expression (floats win over ints). */
static DType fx_dtype(Em *e, const Expr *x)
{
	if (!x)
		return DT_I32;
	const PlanFrag *f = frag_of(e, x);
	if (f)
		return (f->dt == DT_BF16 || f->dt == DT_F16) ? DT_F32 : f->dt;
	switch (x->kind) {
	case E_FLOAT: case E_INF:
		return DT_F32;
	case E_INT: case E_IDENT:
		return DT_I32;
	case E_UNARY:
		return x->op == '!' ? DT_BOOL : fx_dtype(e, x->lhs);
	case E_BINARY: {
		int op = x->op;
		if (op == '<' || op == '>' || op == OP_LE || op == OP_GE || op == OP_EQ || op == OP_NE || op == OP_AND || op == OP_OR)
			return DT_BOOL;
		DType a = fx_dtype(e, x->lhs), b = fx_dtype(e, x->rhs);
		return (a == DT_F32 || b == DT_F32) ? DT_F32 : a;
	}
	case E_CALL: {
		if (!x->name)
			return DT_F32;
		DType c = dtype_from(x->name, (int)strlen(x->name));
		if (c == DT_BF16 || c == DT_F16)
			return DT_F32;
		if (c != DT_NONE)
			return c;
		if (strcmp(x->name, "where") == 0 && x->nargs == 3) {
			DType a = fx_dtype(e, x->args[1]), b = fx_dtype(e, x->args[2]);
			return (a == DT_F32 || b == DT_F32) ? DT_F32 : a;
		}
		if ((strcmp(x->name, "min") == 0 || strcmp(x->name, "max") == 0) && x->nargs == 2) {
			DType a = fx_dtype(e, x->args[0]), b = fx_dtype(e, x->args[1]);
			return (a == DT_F32 || b == DT_F32) ? DT_F32 : a;
		}
		if ((strcmp(x->name, "rows") == 0 || strcmp(x->name, "cols") == 0 || strcmp(x->name, "abs") == 0) && x->nargs == 1)
			return fx_dtype(e, x->args[0]);
		return DT_F32;
	}
	default:
		return DT_F32;
	}
}

static bool fx_emit(Em *e, StrBuf *o, const Expr *x, const Fx *c);
static const PlanFrag *find_layout(Em *e, const Expr *x, FragLayout lay);
static bool col_split(Em *e, const PlanFrag *f);
/* kinds of the precomputed values of an accumulator-layout statement (acc_pre_collect) */
enum { PRE_L2 = 1, PRE_RELAY };

static bool fx_args(Em *e, StrBuf *o, const Expr *x, const Fx *c)
{
	for (int i = 0; i < x->nargs; i++) {
		if (i)
			sb_puts(o, ", ");
		if (!fx_emit(e, o, x->args[i], c))
			return false;
	}
	return true;
}

/* A thread tile owned by the current role (its layout fixes the role's vectors), or NULL. */
static const PlanFrag *tile_of_role(Em *e)
{
	for (int i = 0; i < e->p->nfrags; i++)
		if (e->p->frags[i].role == e->role && e->p->frags[i].lanes)
			return &e->p->frags[i];
	return NULL;
}

/* Does f hold only its warpgroup's columns (a `split n` tile or column vector of a role of
 * several warpgroups)? */
static bool col_split(Em *e, const PlanFrag *f)
{
	return f->split == SPLIT_N && e->p->roles[f->role].nwg > 1;
}

/* The register index variable of a loop context. */
static const char *fx_index(const Fx *c)
{
	if (c->ix)
		return c->ix;
	switch (c->lay) {
	case FRAG_ACC: case FRAG_TILE: return "a_";
	case FRAG_ROW: case FRAG_TROW: return "r_";
	case FRAG_VEC: return "v_";
	default: return "c_";
	}
}

/* C text of element x at the current index of loop layout c->lay. */
static bool fx_emit(Em *e, StrBuf *o, const Expr *x, const Fx *c)
{
	if (!x)
		return false;
	const PlanFrag *f = frag_of(e, x);
	if (f) {
		if (f->role != e->role || f->regs_per_thread == 0) {
			refuse(e, x->span, "CK-LOW-002", "fragment '%s' cannot be read here (another role's, or not representable in registers)", f->name);
			return false;
		}
		long long want = c->n ? c->n : c->ref ? c->ref->rows : -1;   /* the length a tile vector must have */
		if (f->layout != c->lay || (f->layout == FRAG_ACC && c->ref && (f->wg_cols != c->ref->wg_cols || f->mtiles != c->ref->mtiles)) ||
		    (f->layout == FRAG_COL && c->ref && (f->wg_cols != c->ref->wg_cols || col_split(e, f) != col_split(e, c->ref))) ||
		    (f->layout == FRAG_ROW && c->ref && c->ref->layout == FRAG_ACC && f->mtiles != c->ref->mtiles) ||
		    (f->layout == FRAG_VEC && c->ref && (f->rows != c->ref->rows || f->role != c->ref->role)) ||
		    (f->layout == FRAG_TILE && c->ref && (f->rows != c->ref->rows || f->cols != c->ref->cols)) ||
		    ((f->layout == FRAG_TROW || f->layout == FRAG_TCOL) && want >= 0 && f->rows != want)) {
			Diag *d = refuse(e, x->span, "CK-LOW-002", "fragment '%s' does not match the shape of this element-wise expression; broadcast a vector with rows(%s) or cols(%s)",
			                 f->name, f->name, f->name);
			diag_set(&d->resource, "%s", f->name);
			return false;
		}
		sb_printf(o, "%s[%s]", f->name, fx_index(c));
		return true;
	}
	switch (x->kind) {
	case E_INDEX:   /* an element read of a global tensor: a scalar, the same for every element */
		if (scalar_bad(e, x)) {
			refuse(e, x->span, "CK-LOW-002", "only element reads of global tensors (one point index per dimension) can be used as scalars in fragment math");
			return false;
		}
		sb_printf(o, "%s", cexpr_p(e, x));
		return true;
	case E_INT: case E_FLOAT: case E_INF:
		lower_expr_c(o, x, e->k);
		return true;
	case E_IDENT:
		if (scalar_bad(e, x)) {
			refuse(e, x->span, "CK-LOW-002", "'%s' cannot be used in fragment math (only fragments of this role and scalars)", x->name);
			return false;
		}
		lower_expr_c(o, x, e->k);
		return true;
	case E_UNARY:
		sb_printf(o, "(%s", x->op == '!' ? "!" : "-");
		if (!fx_emit(e, o, x->lhs, c))
			return false;
		sb_putc(o, ')');
		return true;
	case E_BINARY: {
		static const struct { int op; const char *s; } ops[] = {
			{'+', "+"}, {'-', "-"}, {'*', "*"}, {'/', "/"}, {'%', "%"}, {'<', "<"}, {'>', ">"}, {OP_LE, "<="}, {OP_GE, ">="},
			{OP_EQ, "=="}, {OP_NE, "!="}, {OP_AND, "&&"}, {OP_OR, "||"}, {OP_SHL, "<<"}, {OP_SHR, ">>"},
		};
		const char *os = NULL;
		for (size_t i = 0; i < NELEM(ops); i++)
			if (ops[i].op == x->op)
				os = ops[i].s;
		if (!os) {
			refuse(e, x->span, "CK-LOW-002", "operator not lowered in fragment math for sm_90a");
			return false;
		}
		sb_putc(o, '(');
		if (!fx_emit(e, o, x->lhs, c))
			return false;
		sb_printf(o, " %s ", os);
		if (!fx_emit(e, o, x->rhs, c))
			return false;
		sb_putc(o, ')');
		return true;
	}
	case E_CALL: {
		const char *n = x->name ? x->name : "?";
		bool flt = fx_dtype(e, x) == DT_F32;
		for (int i = 0; i < e->npre; i++)
			if (e->pre_expr[i] == x && c->lay == FRAG_ACC) {
				if (e->pre_kind[i] != PRE_L2) {
					sb_printf(o, "%s[%s]", e->pre_name[i], e->pre_ix[i]);
					return true;
				}
				sb_putc(o, '(');
				if (!fx_emit(e, o, x->args[0], c))
					return false;
				sb_printf(o, " * %s[%s])", e->pre_name[i], e->pre_ix[i]);
				return true;
			}
		for (int i = 0; i < e->nred; i++)
			if (e->red_expr[i] == x && (c->lay == FRAG_ROW || c->lay == FRAG_TROW || c->lay == FRAG_TCOL)) {
				sb_printf(o, "%s[%s]", e->red_name[i], fx_index(c));
				return true;
			}
		if (strcmp(n, "sum") == 0) {
			for (int i = 0; i < e->nsum; i++)
				if (e->sum_expr[i] == x) {
					sb_puts(o, e->sum_name[i]);
					return true;
				}
			refuse(e, x->span, "CK-LOW-002", "sum(...) is lowered for sm_90a only inside the value of a fragment assignment or a store");
			return false;
		}
		if ((strcmp(n, "rows") == 0 || strcmp(n, "cols") == 0) && x->nargs == 1 && c->lay == FRAG_TILE && c->ref) {
			/* a broadcast over a thread tile: the vector expression at the element's row (i_) or column (j_) */
			bool r = n[0] == 'r';
			Fx sub = {r ? FRAG_TROW : FRAG_TCOL, NULL, r ? "i_" : "j_", r ? c->ref->rows : c->ref->cols};
			return fx_emit(e, o, x->args[0], &sub);
		}
		if ((strcmp(n, "rows") == 0 || strcmp(n, "cols") == 0) && x->nargs == 1 && c->lay == FRAG_ACC && c->ref && !frag_of(e, x->args[0])) {
			/* a broadcast of a vector expression over an accumulator tile: the expression at the
			 * element's row (mt_, h_) or column pair (j_, e_) */
			bool r = n[0] == 'r';
			Fx sub = {r ? FRAG_ROW : FRAG_COL, c->ref, r ? "mt_ * 2 + h_" : "2 * j_ + e_", 0};
			return fx_emit(e, o, x->args[0], &sub);
		}
		if ((strcmp(n, "rows") == 0 || strcmp(n, "cols") == 0) && x->nargs == 1) {
			const PlanFrag *v = frag_of(e, x->args[0]);
			FragLayout want = n[0] == 'r' ? FRAG_ROW : FRAG_COL;
			if (!v || v->layout != want || v->role != e->role || c->lay != FRAG_ACC || !c->ref ||
			    (want == FRAG_ROW ? v->mtiles != c->ref->mtiles : v->wg_cols != c->ref->wg_cols)) {
				refuse(e, x->span, "CK-LOW-002", "%s(...) is lowered for sm_90a only as a broadcast of a %s-vector fragment of this role across an accumulator of matching shape",
				       n, want == FRAG_ROW ? "row" : "column");
				return false;
			}
			sb_printf(o, "%s[%s]", v->name, want == FRAG_ROW ? "mt_ * 2 + h_" : "2 * j_ + e_");
			return true;
		}
		if ((strcmp(n, "row_idx") == 0 || strcmp(n, "col_idx") == 0) && x->nargs == 0) {
			/* coordinates of the element within the context tile */
			const PlanFrag *ref = c->ref;
			const PlanRole *ro = &e->p->roles[e->role];
			bool row = n[0] == 'r';
			if (c->lay == FRAG_ACC && ref) {
				if (row)
					sb_printf(o, "(%s(int)(warp %% 4u) * 16 + (int)(threadIdx.x %% 32u) / 4 + mt_ * 64 + 8 * h_)",
					          ref->split == SPLIT_M && ro->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_rows) : "");
				else
					sb_printf(o, "(%s8 * j_ + 2 * (int)(threadIdx.x %% 4u) + e_)",
					          ref->split == SPLIT_N && ro->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_cols) : "");
				return true;
			}
			if (c->lay == FRAG_VEC && ref && row) {   /* a thread vector: the element's index */
				sb_puts(o, sm90_vec_elem_index(e, ref));
				return true;
			}
			const PlanFrag *tl = tile_of_role(e);
			if (tl && (c->lay == FRAG_TILE || ((c->lay == FRAG_TROW || c->lay == FRAG_TCOL) && row))) {
				if (c->lay == FRAG_TILE)
					sb_puts(o, row ? sm90_tile_row(e, tl, "i_") : sm90_tile_col(e, tl, "j_"));
				else   /* rank 1: the element's own index */
					sb_puts(o, c->lay == FRAG_TCOL ? sm90_tile_col(e, tl, fx_index(c)) : sm90_tile_row(e, tl, fx_index(c)));
				return true;
			}
			refuse(e, x->span, "CK-LOW-002", "%s() is lowered for sm_90a only in an element-wise expression over an accumulator-layout fragment or a thread vector (row_idx)", n);
			return false;
		}
		static const struct { const char *ir, *cf, *ci; } fns[] = {
			{"exp2", "exp2f", NULL}, {"log", "logf", NULL}, {"log2", "log2f", NULL},
			{"sqrt", "sqrtf", NULL}, {"rsqrt", "rsqrtf", NULL}, {"tanh", "tanhf", NULL}, {"abs", "fabsf", "abs"},
			{"min", "fminf", "min"}, {"max", "fmaxf", "max"},
		};
		if (strcmp(n, "exp") == 0 && flt) {   /* ex2.approx.ftz on x log2(e) (MUFU): see LANGUAGE.md on its precision */
			sb_puts(o, "cake_exp(");
			if (!fx_args(e, o, x, c))
				return false;
			sb_putc(o, ')');
			return true;
		}
		for (size_t i = 0; i < NELEM(fns); i++) {
			if (strcmp(fns[i].ir, n) != 0)
				continue;
			const char *fn = flt ? fns[i].cf : fns[i].ci;
			if (!fn)
				break;
			sb_printf(o, "%s(", fn);
			if (!fx_args(e, o, x, c))
				return false;
			sb_putc(o, ')');
			return true;
		}
		if (strcmp(n, "where") == 0 && x->nargs == 3) {
			sb_putc(o, '(');
			if (!fx_emit(e, o, x->args[0], c))
				return false;
			sb_puts(o, " ? ");
			if (!fx_emit(e, o, x->args[1], c))
				return false;
			sb_puts(o, " : ");
			if (!fx_emit(e, o, x->args[2], c))
				return false;
			sb_putc(o, ')');
			return true;
		}
		if ((strcmp(n, "sigmoid") == 0 || strcmp(n, "silu") == 0 || strcmp(n, "softplus") == 0) && x->nargs == 1) {
			StrBuf a = {0};
			bool ok = fx_emit(e, &a, x->args[0], c);
			if (ok) {
				if (n[1] == 'i' && n[0] == 's' && n[2] == 'g')
					sb_printf(o, "__fdividef(1.0f, 1.0f + cake_exp(-(%s)))", sb_str(&a));
				else if (n[0] == 's' && n[1] == 'i')
					sb_printf(o, "__fdividef((%s), 1.0f + cake_exp(-(%s)))", sb_str(&a), sb_str(&a));
				else   /* torch's threshold: x above 20 is its own softplus */
					sb_printf(o, "((%s) > 20.0f ? (%s) : log1pf(cake_exp(%s)))", sb_str(&a), sb_str(&a), sb_str(&a));
			}
			sb_free(&a);
			return ok;
		}
		DType cast = dtype_from(n, (int)strlen(n));
		if ((cast == DT_BF16 || cast == DT_F16) && x->nargs == 1) {
			sb_printf(o, "%s(", cast == DT_BF16 ? "round_bf16" : "round_f16");
			if (!fx_emit(e, o, x->args[0], c))
				return false;
			sb_putc(o, ')');
			return true;
		}
		if ((cast == DT_F32 || cast == DT_I32 || cast == DT_U32 || cast == DT_I64 || cast == DT_BOOL) && x->nargs == 1) {
			sb_printf(o, "((%s)", ctype_of(cast));
			if (!fx_emit(e, o, x->args[0], c))
				return false;
			sb_putc(o, ')');
			return true;
		}
		if (strcmp(n, "cumsum") == 0 || strcmp(n, "trisolve") == 0) {
			Diag *d = refuse(e, x->span, "CK-LOW-002", "%s(...) is lowered for sm_90a only as the whole value of an assignment to an accumulator-layout fragment", n);
			diag_set(&d->hint, "assign it to a fragment first (`G = %s`), then use the fragment", strcmp(n, "cumsum") == 0 ? "cumsum(x, 0)" : "trisolve(L, B)");
			return false;
		}
		Diag *d = refuse(e, x->span, "CK-LOW-002", "%s(...) is not lowered yet for sm_90a in fragment math", n);
		diag_set(&d->hint, "element-wise math, casts to f32/i32, where, min/max, rows/cols broadcasts and row reductions are lowered");
		return false;
	}
	default:
		refuse(e, x->span, "CK-LOW-002", "this expression is not lowered yet for sm_90a in fragment math");
		return false;
	}
}

/* "const int mt_ = ..., j_ = ..., h_ = ..., e_ = ...;" decoding accumulator index a_. */
static void acc_decode(Em *e, const PlanFrag *ref)
{
	long long half = ref->wg_cols / 2;
	line(e, "\tconst int mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2, e_ = a_ %% 2;", half, half);
	line(e, "\t(void)mt_; (void)j_; (void)h_; (void)e_;");
}

static bool emit_reduce_into(Em *e, const Expr *call, const char *vname, DType vdt, int mtiles, const char *iname, Span sp);
static bool emit_row_fold(Em *e, const char *n, const Expr *arg, bool square, const char *vname, DType vdt, int mtiles, const char *iname, Span sp);
static void find_nested_reductions(Em *e, const Expr *x, bool top);

/* ---- row values of an accumulator-layout statement, computed before its element loop ----
 *
 * An element of an accumulator-layout value may read a value per row or per column that
 * other threads hold: a row reduction broadcast back (`x - rows(rowmax(x))`), l2norm's
 * per-row scale, or a vector in the other orientation (rows() of a column vector, cols()
 * of a row vector: `rows(exp(gc)) * S` with gc a column vector of another tile). They are
 * collected from the value (acc_pre_collect), the value is spelled reading them as
 * temporaries, and acc_pre_begin computes the temporaries in a block around the loop:
 *   reductions   emit_row_fold into name[2 mtiles];
 *   l2norm(x)    the row sums of x² the same way, then name[r] = rsqrt(name[r] + 1e-6):
 *                an element is x · name[mt_ * 2 + h_] (an all-zero row stays 0);
 *   relayouts    the holders of the vector (one quad per warpgroup for a column vector,
 *                lane 0 of each quad for a row vector) write it to a __shared__ array of
 *                its length, a named barrier, every thread reads the rows (columns) it
 *                holds of the context tile, a second barrier frees the array. */
/* The layout of the vector fragments x reads directly (not through reductions,
 * broadcasts, sum() or l2norm): FRAG_ROW, FRAG_COL, or -1 (none, or both). */
static int vec_layout_of(Em *e, const Expr *x)
{
	if (!x)
		return -1;
	const PlanFrag *f = frag_of(e, x);
	if (f)
		return f->layout == FRAG_ROW || f->layout == FRAG_COL ? (int)f->layout : -1;
	if (x->kind == E_CALL && x->name && (is_call(x, "rows") || is_call(x, "cols") || is_call(x, "sum") || is_call(x, "l2norm") ||
	                                     strncmp(x->name, "row", 3) == 0 || strncmp(x->name, "col", 3) == 0))
		return -1;
	int l = -1;
	const Expr *kid[2] = {x->lhs, x->rhs};
	for (int i = 0; i < 2 + x->nargs; i++) {
		int k = vec_layout_of(e, i < 2 ? kid[i] : x->args[i - 2]);
		if (k >= 0 && l >= 0 && k != l)
			return -2;
		if (k >= 0)
			l = k;
	}
	return l;
}

static void pre_add(Em *e, const Expr *x, int kind, const char *stem, const char *ix)
{
	if (e->npre >= (int)NELEM(e->pre_expr))
		return;
	e->pre_expr[e->npre] = x;
	e->pre_kind[e->npre] = kind;
	e->pre_name[e->npre] = arena_printf(&e->c->arena, "%s%d_", stem, e->nscan++);
	e->pre_ix[e->npre] = ix;
	e->npre++;
}

/* Collect what an accumulator-layout value x reads per row or column from other threads. */
static void acc_pre_collect(Em *e, const Expr *x)
{
	if (!x || is_call(x, "sum"))
		return;
	if (x->kind == E_CALL && x->name) {
		if (is_call(x, "l2norm") && x->nargs == 1) {
			pre_add(e, x, PRE_L2, "l2n", "mt_ * 2 + h_");
			return;
		}
		if ((is_call(x, "rows") || is_call(x, "cols")) && x->nargs == 1) {
			bool r = x->name[0] == 'r';
			if (vec_layout_of(e, x->args[0]) == (r ? FRAG_COL : FRAG_ROW)) {
				pre_add(e, x, PRE_RELAY, r ? "rl" : "cl", r ? "mt_ * 2 + h_" : "2 * j_ + e_");
				return;
			}
			/* cols() of a column vector that holds only its warpgroup's columns, against a
			 * tile whose columns every warpgroup holds (or the other way round) */
			const PlanFrag *vf = !r && e->acc_ref && vec_layout_of(e, x->args[0]) == FRAG_COL ? find_layout(e, x->args[0], FRAG_COL) : NULL;
			if (vf && col_split(e, vf) != col_split(e, e->acc_ref)) {
				pre_add(e, x, PRE_RELAY, "cl", "2 * j_ + e_");
				return;
			}
		}
		if ((is_call(x, "rowsum") || is_call(x, "rowmax") || is_call(x, "rowmin")) && e->nred < (int)NELEM(e->red_expr)) {
			e->red_expr[e->nred] = x;
			e->red_name[e->nred] = arena_printf(&e->c->arena, "red%d_", e->nred);
			e->nred++;
			return;
		}
	}
	acc_pre_collect(e, x->lhs);
	acc_pre_collect(e, x->rhs);
	for (int i = 0; i < x->nargs; i++)
		acc_pre_collect(e, x->args[i]);
}

/* rows(v) of a column-vector expression v / cols(v) of a row-vector one, against tile ref:
 * through a __shared__ array of v's length into name[]. */
static bool emit_relayout(Em *e, const Expr *call, const char *name, const PlanFrag *ref, Span sp)
{
	bool r = call->name[0] == 'r';
	const Expr *v = call->args[0];
	const PlanFrag *vf = find_layout(e, v, r ? FRAG_COL : FRAG_ROW);
	if (!r && !vf)   /* cols() of a column vector split unlike the tile (acc_pre_collect) */
		vf = find_layout(e, v, FRAG_COL);
	bool vcol = vf && vf->layout == FRAG_COL;   /* written the way a column vector is held */
	const PlanRole *ro = &e->p->roles[e->role];
	long long want = r ? ref->rows : ref->cols;
	if (!vf || vf->role != e->role || vf->regs_per_thread == 0 || vf->rows != want) {
		refuse(e, sp, "CK-LOW-002", "%s(...) of a %s vector is lowered for sm_90a against a tile whose %s it covers (length %lld)", call->name,
		       r ? "column" : "row", r ? "rows" : "columns", want);
		return false;
	}
	Fx c = {vf->layout, vf, vcol ? "c_" : "r_", 0};
	StrBuf val = {0};
	if (!fx_emit(e, &val, v, &c)) {
		sb_free(&val);
		return false;
	}
	DType t = fx_dtype(e, v);
	const char *ty = ftype_of(t);
	int id = e->nscan++, ri = e->role;
	int n = r ? 2 * ref->mtiles : (int)(ref->wg_cols / 4);
	line(e, "%s %s[%d];   /* %s: the %s vector's values at the %s this thread holds */", ty, name, n, r ? "rows()" : "cols()", vcol ? "column" : "row",
	     r ? "rows" : "columns");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	sm90_xchg_begin(e);
	sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "rv%d_", id), 1, (long long[]){vf->rows}, NULL);
	const char *tl = ro->thread_lo ? arena_printf(&e->c->arena, "(threadIdx.x - %du)", ro->thread_lo) : "threadIdx.x";
	if (vcol) {   /* column vector: one quad (per warpgroup when it is split) writes it */
		bool split = vf->split == SPLIT_N && ro->nwg > 1;
		line(e, "if (%s%s < 4u) {", tl, split ? " % 128u" : "");
		line(e, "\t#pragma unroll");
		line(e, "\tfor (int c_ = 0; c_ < %d; ++c_)", vf->regs_per_thread);
		line(e, "\t\trv%d_[%s8 * (c_ / 2) + 2 * (int)lane_ + c_ %% 2] = %s;", id,
		     split ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", vf->wg_cols) : "", sb_str(&val));
		line(e, "}");
	} else {   /* row vector: lane 0 of each quad (of one warpgroup when it is replicated) writes its rows */
		bool split = vf->split == SPLIT_M && ro->nwg > 1;
		line(e, "if (lane_ %% 4u == 0u%s) {", split || ro->nwg < 2 ? "" : " && role_wg == 0u");
		line(e, "\t#pragma unroll");
		line(e, "\tfor (int r_ = 0; r_ < %d; ++r_)", vf->regs_per_thread);
		line(e, "\t\trv%d_[%s(r_ / 2) * 64 + (r_ %% 2) * 8 + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u)] = %s;", id,
		     split ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", vf->wg_rows) : "", sb_str(&val));
		line(e, "}");
	}
	line(e, "named_bar_sync(%du, %du);", ri + 1, ro->nthreads);
	line(e, "#pragma unroll");
	if (r) {
		line(e, "for (int r_ = 0; r_ < %d; ++r_)", n);
		line(e, "\t%s[r_] = rv%d_[%s(r_ / 2) * 64 + (r_ %% 2) * 8 + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u)];", name, id,
		     ref->split == SPLIT_M && ro->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_rows) : "");
	} else {
		line(e, "for (int c_ = 0; c_ < %d; ++c_)", n);
		line(e, "\t%s[c_] = rv%d_[%s8 * (c_ / 2) + 2 * (int)(lane_ %% 4u) + c_ %% 2];", name, id,
		     col_split(e, ref) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_cols) : "");
	}
	line(e, "named_bar_sync(%du, %du);   /* the array is free again */", ri + 1, ro->nthreads);
	e->ind--;
	line(e, "}");
	sb_free(&val);
	return true;
}

/* Open a block computing what acc_pre_collect found (false, and nothing emitted, when it
 * found nothing); the value's element loop follows inside the block. */
static bool acc_pre_begin(Em *e, const PlanFrag *ref, Span sp)
{
	int nred = e->nred, npre = e->npre;
	if (!nred && !npre)
		return false;
	line(e, "{   /* the row and column values this statement reads from other threads, first */");
	e->ind++;
	e->nred = 0;
	e->npre = 0;   /* the temporaries' own values hold none of them */
	for (int i = 0; i < nred; i++) {
		DType t = fx_dtype(e, e->red_expr[i]->args[0]);
		line(e, "%s %s[%d];", ftype_of(t), e->red_name[i], 2 * ref->mtiles);
		emit_reduce_into(e, e->red_expr[i], e->red_name[i], t, ref->mtiles, NULL, sp);
	}
	for (int i = 0; i < npre; i++) {
		const Expr *x = e->pre_expr[i];
		if (e->pre_kind[i] == PRE_L2) {
			const PlanFrag *af = find_acc(e, x->args[0]);
			if (!af || af->rows != ref->rows || af->cols != ref->cols || af->split != ref->split) {
				refuse(e, x->span, "CK-LOW-002", "l2norm(...) is lowered for sm_90a over an accumulator-layout expression of the statement's shape and split");
				continue;
			}
			line(e, "float %s[%d];   /* l2norm: 1 / sqrt(the row's sum of squares + 1e-6) */", e->pre_name[i], 2 * ref->mtiles);
			if (emit_row_fold(e, "rowsum", x->args[0], true, e->pre_name[i], DT_F32, ref->mtiles, NULL, sp)) {
				line(e, "#pragma unroll");
				line(e, "for (int r_ = 0; r_ < %d; ++r_)", 2 * ref->mtiles);
				line(e, "\t%s[r_] = rsqrtf(%s[r_] + 1e-6f);", e->pre_name[i], e->pre_name[i]);
			}
		} else {
			emit_relayout(e, x, e->pre_name[i], ref, sp);
		}
	}
	e->nred = nred;
	e->npre = npre;
	return true;
}

static void acc_pre_end(Em *e, bool opened)
{
	if (opened) {
		e->ind--;
		line(e, "}");
	}
	e->npre = 0;
	e->nred = 0;
}

/* lhs = elementwise(src) over the layout of lhs. */
static void emit_elementwise(Em *e, Stmt *s, const PlanFrag *dst)
{
	Fx c = {dst->layout, dst->layout == FRAG_ACC ? dst : NULL, NULL, 0};
	if (dst->layout == FRAG_COL || dst->layout == FRAG_VEC || dst->layout == FRAG_TILE || dst->layout == FRAG_TROW || dst->layout == FRAG_TCOL)
		c.ref = dst;
	bool tiled = dst->layout == FRAG_TILE || dst->layout == FRAG_TROW || dst->layout == FRAG_TCOL;
	e->nred = 0;
	if (dst->layout == FRAG_ROW || tiled)
		find_nested_reductions(e, s->src, true);
	if (dst->layout == FRAG_ACC) {
		e->acc_ref = dst;
		acc_pre_collect(e, s->src);
	}
	int nred = e->nred;
	StrBuf rhs = {0};
	bool ok = fx_emit(e, &rhs, s->src, &c);
	if (!ok) {
		sb_free(&rhs);
		e->nred = 0;
		e->npre = 0;
		return;
	}
	ir_comment(e, s->span, dst->layout == FRAG_ACC ? "element-wise over the accumulator layout" : dst->layout == FRAG_ROW ? "element-wise over row values" :
	                       dst->layout == FRAG_VEC ? "element-wise over the elements this thread holds" :
	                       dst->layout == FRAG_TILE ? "element-wise over the thread tile's registers" :
	                       dst->layout == FRAG_TROW ? "element-wise over the tile rows this thread holds" :
	                       dst->layout == FRAG_TCOL ? "element-wise over the tile columns this thread holds" : "element-wise over column values");
	bool pre = dst->layout == FRAG_ACC && acc_pre_begin(e, dst, s->span);
	if (pre)
		nred = 0;   /* acc_pre_begin computed them */
	if (nred) {
		line(e, "%s", tiled ? "{   /* row/column reductions first, into temporaries */" : "{   /* row reductions first, into per-row temporaries */");
		e->ind++;
		for (int i = 0; i < nred; i++) {
			DType t = fx_dtype(e, e->red_expr[i]->args[0]);
			e->nred = 0;   /* the reduction's own argument holds no nested reduction */
			if (tiled) {
				ok = sm90_tile_reduce(e, e->red_expr[i], e->red_name[i], t, dst->layout == FRAG_TILE ? dst : tile_of_role(e), true, s->span) && ok;
			} else {
				line(e, "%s %s[%d];", ftype_of(t), e->red_name[i], dst->regs_per_thread);
				ok = emit_reduce_into(e, e->red_expr[i], e->red_name[i], t, dst->mtiles, NULL, s->span) && ok;
			}
			e->nred = nred;
		}
	}
	const char *ix = fx_index(&c);
	line(e, "#pragma unroll");
	line(e, "for (int %s = 0; %s < %d; ++%s) {", ix, ix, dst->regs_per_thread, ix);
	if (dst->layout == FRAG_ACC)
		acc_decode(e, dst);
	if (dst->layout == FRAG_TILE)
		line(e, "	const int i_ = a_ / %d, j_ = a_ %% %d; (void)i_; (void)j_;", sm90_tile_pc(e, dst), sm90_tile_pc(e, dst));
	/* a 16-bit fragment holds rounded values: round the value unless it is already the cast to
	 * this dtype (`p16 = bf16(x)`), whose rounding fx_emit wrote (an asm the compiler keeps) */
	bool cast_already = s->src && s->src->kind == E_CALL && s->src->nargs == 1 && s->src->name &&
	                    dtype_from(s->src->name, (int)strlen(s->src->name)) == dst->dt;
	if ((dst->dt == DT_BF16 || dst->dt == DT_F16) && !cast_already)
		line(e, "\t%s[%s] = %s(%s);", dst->name, ix, dst->dt == DT_BF16 ? "round_bf16" : "round_f16", sb_str(&rhs));
	else
		line(e, "\t%s[%s] = %s;", dst->name, ix, sb_str(&rhs));
	line(e, "}");
	if (nred) {
		e->ind--;
		line(e, "}");
	}
	acc_pre_end(e, pre);
	e->nred = 0;
	sb_free(&rhs);
}

static bool is_row_reduction(const Expr *x)
{
	return x && x->kind == E_CALL && x->name &&
	       (is_call(x, "rowsum") || is_call(x, "rowmax") || is_call(x, "rowmin") || is_call(x, "rowargmin") || is_call(x, "rowargmax") ||
	        is_call(x, "colsum") || is_call(x, "colmax"));
}

/* Emit a block computing call = rowsum/rowmax/rowmin/rowargmin/rowargmax(acc-expr)
 * into vname[0..regs) (and the column index into iname for the arg variants). */
static bool emit_reduce_into(Em *e, const Expr *call, const char *vname, DType vdt, int mtiles, const char *iname, Span sp)
{
	return emit_row_fold(e, call->name, call->nargs == 1 ? call->args[0] : NULL, false, vname, vdt, mtiles, iname, sp);
}

/* The row reduction `n` (rowsum ... rowargmax) of acc-expression arg (of its squares when
 * square: l2norm) into vname[0 .. 2 mtiles), the arg variants' columns into iname: each
 * thread folds its columns of each of its rows, two xor shuffles combine the quad that
 * shares the row, and for a `split n` tile of several warpgroups (each holding its
 * columns of every row) the warpgroups' partial results meet in a __shared__
 * [warpgroups][rows] array between two named barriers, combined in warpgroup order (so
 * the arg variants keep the lowest column on ties). */
static bool emit_row_fold(Em *e, const char *n, const Expr *arg, bool square, const char *vname, DType vdt, int mtiles, const char *iname, Span sp)
{
	bool argv = strncmp(n, "rowarg", 6) == 0;
	bool isMin = strcmp(n, "rowmin") == 0 || strcmp(n, "rowargmin") == 0;
	bool isSum = strcmp(n, "rowsum") == 0;
	const PlanFrag *ref = arg ? find_acc(e, arg) : NULL;
	if (!ref || ref->role != e->role || ref->regs_per_thread == 0 || mtiles != ref->mtiles) {
		refuse(e, sp, "CK-LOW-002", "%s is lowered for sm_90a only over an accumulator-layout expression of this role, into row vectors split like it", n);
		return false;
	}
	Fx c = {FRAG_ACC, ref, NULL, 0};
	StrBuf el = {0};
	if (!fx_emit(e, &el, arg, &c)) {
		sb_free(&el);
		return false;
	}
	const char *ty = ftype_of(vdt);
	const PlanRole *r = &e->p->roles[e->role];
	bool across = ref->split == SPLIT_N && r->nwg > 1;   /* the row's columns are in several warpgroups */
	const char *coloff = across ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", ref->wg_cols) : "";
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "#pragma unroll");
	line(e, "for (int r_ = 0; r_ < %d; ++r_) {", 2 * mtiles);
	line(e, "\tconst int mt_ = r_ / 2, h_ = r_ %% 2;");
	const char *init = isSum ? "0" : isMin ? "__int_as_float(0x7f800000)" : "-__int_as_float(0x7f800000)";
	if (vdt != DT_F32)
		init = isSum ? "0" : isMin ? "0x7fffffff" : "(-0x7fffffff - 1)";
	line(e, "\t%s v_ = %s;", ty, init);
	if (argv)
		line(e, "\tint ix_ = 0;");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int j_ = 0; j_ < %lld; ++j_) {", ref->wg_cols / 8);
	line(e, "\t\t#pragma unroll");
	line(e, "\t\tfor (int e_ = 0; e_ < 2; ++e_) {");
	line(e, "\t\t\tconst int a_ = mt_ * %lld + 4 * j_ + 2 * h_ + e_;", ref->wg_cols / 2);
	line(e, "\t\t\tconst %s x_ = %s;", ty, sb_str(&el));
	if (isSum)
		line(e, square ? "\t\t\tv_ += x_ * x_;" : "\t\t\tv_ += x_;");
	else if (argv)
		line(e, "\t\t\tif (x_ %s v_) { v_ = x_; ix_ = 8 * j_ + 2 * (int)(lane_ %% 4u) + e_%s; }   /* strict: lowest column on ties */", isMin ? "<" : ">", coloff);
	else
		line(e, "\t\t\tv_ = %s(v_, x_);", vdt == DT_F32 ? (isMin ? "fminf" : "fmaxf") : (isMin ? "min" : "max"));
	line(e, "\t\t}");
	line(e, "\t}");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int o_ = 1; o_ < 4; o_ <<= 1) {   /* the quad's 4 lanes share the row */");
	line(e, "\t\tconst %s w_ = __shfl_xor_sync(0xffffffffu, v_, o_);", ty);
	if (isSum) {
		line(e, "\t\tv_ += w_;");
	} else if (argv) {
		line(e, "\t\tconst int iw_ = __shfl_xor_sync(0xffffffffu, ix_, o_);");
		line(e, "\t\tif (w_ %s v_ || (w_ == v_ && iw_ < ix_)) { v_ = w_; ix_ = iw_; }", isMin ? "<" : ">");
	} else {
		line(e, "\t\tv_ = %s(v_, w_);", vdt == DT_F32 ? (isMin ? "fminf" : "fmaxf") : (isMin ? "min" : "max"));
	}
	line(e, "\t}");
	line(e, "\t%s[r_] = v_;", vname);
	if (argv)
		line(e, "\t%s[r_] = ix_;", iname);
	line(e, "}");
	if (across) {
		int id = e->nscan++, ri = e->role;
		const char *row = "(r_ / 2) * 64 + (r_ % 2) * 8 + (int)(warp % 4u) * 16 + (int)(lane_ / 4u)";
		line(e, "/* the %d warpgroups hold different columns of every row: their partial results through shared memory */", r->nwg);
		sm90_xchg_begin(e);
		sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "rw%d_", id), 2, (long long[]){r->nwg, ref->wg_rows}, NULL);
		if (argv)
			sm90_xchg(e, ri, "int", arena_printf(&e->c->arena, "rwi%d_", id), 2, (long long[]){r->nwg, ref->wg_rows}, NULL);
		line(e, "if (lane_ %% 4u == 0u) {");
		line(e, "\t#pragma unroll");
		line(e, "\tfor (int r_ = 0; r_ < %d; ++r_) {", 2 * mtiles);
		line(e, "\t\trw%d_[role_wg][%s] = %s[r_];", id, row, vname);
		if (argv)
			line(e, "\t\trwi%d_[role_wg][%s] = %s[r_];", id, row, iname);
		line(e, "\t}");
		line(e, "}");
		line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
		line(e, "#pragma unroll");
		line(e, "for (int r_ = 0; r_ < %d; ++r_) {", 2 * mtiles);
		line(e, "\t%s v_ = rw%d_[0][%s];", ty, id, row);
		if (argv)
			line(e, "\tint ix_ = rwi%d_[0][%s];", id, row);
		line(e, "\tfor (int w_ = 1; w_ < %d; ++w_) {   /* in warpgroup order */", r->nwg);
		line(e, "\t\tconst %s x_ = rw%d_[w_][%s];", ty, id, row);
		if (isSum)
			line(e, "\t\tv_ += x_;");
		else if (argv)
			line(e, "\t\tif (x_ %s v_) { v_ = x_; ix_ = rwi%d_[w_][%s]; }   /* strict: the lower warpgroup's (lower) column on ties */", isMin ? "<" : ">", id, row);
		else
			line(e, "\t\tv_ = %s(v_, x_);", vdt == DT_F32 ? (isMin ? "fminf" : "fmaxf") : (isMin ? "min" : "max"));
		line(e, "\t}");
		line(e, "\t%s[r_] = v_;", vname);
		if (argv)
			line(e, "\t%s[r_] = ix_;", iname);
		line(e, "}");
		line(e, "named_bar_sync(%du, %du);   /* the array is free again (a reduction in a loop) */", ri + 1, r->nthreads);
	}
	e->ind--;
	line(e, "}");
	sb_free(&el);
	return true;
}

/* lhs[, idx] = rowsum/rowmax/rowmin/rowargmin/rowargmax(acc-expr). */
static void emit_row_reduce(Em *e, Stmt *s, const PlanFrag *dst, const PlanFrag *dsti)
{
	if (dst->layout != FRAG_ROW || (dsti && (dsti->layout != FRAG_ROW || dsti->mtiles != dst->mtiles))) {
		refuse(e, s->span, "CK-LOW-002", "%s must assign row-vector fragments", s->src->name);
		return;
	}
	ir_comment(e, s->span, "per thread over its columns of each row, then across the 4 lanes of the quad");
	emit_reduce_into(e, s->src, dst->name, dst->dt, dst->mtiles, dsti ? dsti->name : NULL, s->span);
}

/* Whether x is a scalar integer expression of the kernel's scalars and loop variables (no
 * fragment, no row_idx()/col_idx(), no call): a row number every thread computes alike. */
static bool scalar_int_expr(Em *e, const Expr *x)
{
	if (!x || frag_of(e, x))
		return false;
	switch (x->kind) {
	case E_INT: return true;
	case E_IDENT: return true;
	case E_UNARY: return x->op == '-' && scalar_int_expr(e, x->lhs);
	case E_BINARY: return (x->op == '+' || x->op == '-' || x->op == '*' || x->op == '/' || x->op == '%') && scalar_int_expr(e, x->lhs) && scalar_int_expr(e, x->rhs);
	default: return false;
	}
}

/* colsum(where(row_idx() == E, X, 0)) with E a scalar row number: row E of X as a column
 * vector. Returns E's expression, and X in *val, or NULL when the call is not of that form. */
static const Expr *row_pick(Em *e, const Expr *call, const Expr **val)
{
	const Expr *w = call->nargs == 1 ? call->args[0] : NULL;
	if (!w || !is_call(w, "where") || w->nargs != 3 || !w->args[0] || w->args[0]->kind != E_BINARY || w->args[0]->op != OP_EQ)
		return NULL;
	const Expr *z = w->args[2];
	if (!z || !((z->kind == E_FLOAT && z->fval == 0.0) || (z->kind == E_INT && z->ival == 0)))
		return NULL;
	const Expr *a = w->args[0]->lhs, *b = w->args[0]->rhs;
	if (is_call(b, "row_idx") && b->nargs == 0) {
		const Expr *t = a;
		a = b;
		b = t;
	}
	if (!is_call(a, "row_idx") || a->nargs != 0 || !scalar_int_expr(e, b))
		return NULL;
	*val = w->args[1];
	return b;
}

/* dst = colsum/colmax(acc-expr): a column vector (index 2j + e holds column 8j + 2(lane%4) + e)
 * from an accumulator-layout expression. Per thread over its rows (2 per 64-row tile), then
 * xor shuffles over lanes 4, 8, 16 (the 8 lanes that hold the same columns), then across the
 * warps holding other rows of the same columns through a __shared__ [warps][columns] array
 * between two named barriers over the role: the warpgroup's 4 warps, or every warp of the
 * role for a `split m` tile. */
static void emit_col_reduce(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	bool isSum = is_call(call, "colsum");
	const PlanFrag *ref = call->nargs == 1 ? find_acc(e, call->args[0]) : NULL;
	const PlanRole *r = &e->p->roles[e->role];
	if (!ref || ref->role != e->role || ref->regs_per_thread == 0 || dst->wg_cols != ref->wg_cols || dst->regs_per_thread != ref->wg_cols / 4 ||
	    (ref->split == SPLIT_N && r->nwg > 1) != (dst->split == SPLIT_N && r->nwg > 1)) {
		refuse(e, s->span, "CK-LOW-002", "%s is lowered for sm_90a over an accumulator-layout expression of this role into a column vector of its columns (split like the tile)", call->name);
		return;
	}
	Fx c = {FRAG_ACC, ref, NULL, 0};
	StrBuf el = {0};
	if (!fx_emit(e, &el, call->args[0], &c)) {
		sb_free(&el);
		return;
	}
	DType dt = dst->dt;
	const char *ty = ftype_of(dt);
	bool flt = dt == DT_F32 || dt == DT_BF16 || dt == DT_F16;
	/* colsum(where(row_idx() == E, X, 0)) picks one row: the 4 lanes that hold it write it out and
	   every thread reads its columns, no reduction. It holds more registers than the reduction
	   (the sum over the rows streams), so the reduction stays as the CAKE_COMPACT form. */
	const Expr *pv = NULL, *pe = isSum && flt && ref->split != SPLIT_M ? row_pick(e, call, &pv) : NULL;
	if (pe) {
		StrBuf pvs = {0};
		if (!fx_emit(e, &pvs, pv, &c)) {
			sb_free(&pvs), sb_free(&el);
			return;
		}
		int n = dst->regs_per_thread, id = e->nscan++, ri = (int)(r - e->p->roles);
		const char *wr = r->warp_lo ? arena_printf(&e->c->arena, "((int)warp - %d)", r->warp_lo) : "(int)warp";
		const char *slab = r->nwg > 1 ? "(int)role_wg" : "0";
		ir_comment(e, s->span, "one row (the where picks it): the 4 lanes holding it write it to shared memory, every thread reads its columns; "
		           "the column reduction under CAKE_COMPACT");
		line(e, "#if !CAKE_COMPACT");
		line(e, "{");
		e->ind++;
		line(e, "const u32 lane_ = lane_id();");
		line(e, "const int pr_ = %s;   /* the row */", cexpr_p(e, pe));
		sm90_xchg_begin(e);
		sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "rp%d_", id), 2, (long long[]){r->nwg, ref->wg_cols}, "per warpgroup: the row's values at its columns");
		line(e, "if (pr_ >= 0 && pr_ < %lld && %s %% 4 == pr_ %% 64 / 16 && (int)(lane_ / 4u) == pr_ %% 8) {", ref->rows, wr);
		line(e, "\t#pragma unroll");
		line(e, "\tfor (int a_ = 0; a_ < %d; ++a_) {", ref->regs_per_thread);
		acc_decode(e, ref);
		line(e, "\t\tif (mt_ == pr_ / 64 && h_ == pr_ %% 16 / 8)");
		line(e, "\t\t\trp%d_[%s][8 * j_ + 2 * (int)(lane_ %% 4u) + e_] = %s;", id, slab, sb_str(&pvs));
		line(e, "\t}");
		line(e, "}");
		line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
		line(e, "#pragma unroll");
		line(e, "for (int c_ = 0; c_ < %d; ++c_)   /* a row past the tile picks nothing: 0 */", n);
		line(e, "\t%s[c_] = pr_ >= 0 && pr_ < %lld ? rp%d_[%s][8 * (c_ / 2) + 2 * (int)(lane_ %% 4u) + c_ %% 2] : 0.0f;", dst->name, ref->rows, id, slab);
		line(e, "named_bar_sync(%du, %du);   /* the array is free again (a pick in a loop) */", ri + 1, r->nthreads);
		e->ind--;
		line(e, "}");
		line(e, "#else");
		sb_free(&pvs);
	}
	const char *op = isSum ? "+" : NULL;
	const char *mx = flt ? "fmaxf" : "max";
	int n = dst->regs_per_thread, id = e->nscan++, ri = (int)(r - e->p->roles);
	bool all_warps = ref->split == SPLIT_M && r->nwg > 1;   /* the role's warps hold different rows */
	int W = all_warps ? r->nwarps : 4;
	ir_comment(e, s->span, arena_printf(&e->c->arena, "per thread over its rows, the 8 lanes of a column pair (shuffles), then %d warps (shared memory)", W));
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "%s v_[%d];", ty, n);
	line(e, "#pragma unroll");
	line(e, "for (int c_ = 0; c_ < %d; ++c_)", n);
	line(e, "\tv_[c_] = %s;", isSum ? (flt ? "0.0f" : "0") : (flt ? "-__int_as_float(0x7f800000)" : "(-0x7fffffff - 1)"));
	line(e, "#pragma unroll");
	line(e, "for (int a_ = 0; a_ < %d; ++a_) {", ref->regs_per_thread);
	acc_decode(e, ref);
	line(e, "\tconst %s x_ = %s;", ty, sb_str(&el));
	if (op)
		line(e, "\tv_[2 * j_ + e_] += x_;");
	else
		line(e, "\tv_[2 * j_ + e_] = %s(v_[2 * j_ + e_], x_);", mx);
	line(e, "}");
	line(e, "#pragma unroll");
	line(e, "for (int o_ = 4; o_ < 32; o_ <<= 1)   /* the lanes holding the same columns */");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int c_ = 0; c_ < %d; ++c_) {", n);
	line(e, "\t\tconst %s w_ = __shfl_xor_sync(0xffffffffu, v_[c_], o_);", ty);
	if (op)
		line(e, "\t\tv_[c_] += w_;");
	else
		line(e, "\t\tv_[c_] = %s(v_[c_], w_);", mx);
	line(e, "\t}");
	const char *wr = r->warp_lo ? arena_printf(&e->c->arena, "((int)warp - %d)", r->warp_lo) : "(int)warp";
	const char *w0 = all_warps ? "0" : arena_printf(&e->c->arena, "(%s / 4 * 4)", wr);
	sm90_xchg_begin(e);
	sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "cs%d_", id), 2, (long long[]){r->nwarps, ref->wg_cols},
	          arena_printf(&e->c->arena, "per warp of role %s: its column totals", r->name));
	line(e, "if (lane_ < 4u) {");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int c_ = 0; c_ < %d; ++c_)", n);
	line(e, "\t\tcs%d_[%s][8 * (c_ / 2) + 2 * (int)lane_ + c_ %% 2] = v_[c_];", id, wr);
	line(e, "}");
	line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	line(e, "#pragma unroll");
	line(e, "for (int c_ = 0; c_ < %d; ++c_) {", n);
	line(e, "\tconst int col_ = 8 * (c_ / 2) + 2 * (int)(lane_ %% 4u) + c_ %% 2;");
	line(e, "\t%s t_ = cs%d_[%s][col_];", ty, id, w0);
	line(e, "\tfor (int w_ = 1; w_ < %d; ++w_)", W);
	if (op)
		line(e, "\t\tt_ += cs%d_[%s + w_][col_];", id, w0);
	else
		line(e, "\t\tt_ = %s(t_, cs%d_[%s + w_][col_]);", mx, id, w0);
	line(e, "\t%s[c_] = t_;", dst->name);
	line(e, "}");
	line(e, "named_bar_sync(%du, %du);   /* the array is free again (a reduction in a loop) */", ri + 1, r->nthreads);
	e->ind--;
	line(e, "}");
	if (pe)
		line(e, "#endif");
	sb_free(&el);
}

/* Collect row reductions nested in x (not x itself) for precomputation. */
static void find_nested_reductions(Em *e, const Expr *x, bool top)
{
	if (!x)
		return;
	if (!top && is_row_reduction(x) && strncmp(x->name, "rowarg", 6) != 0) {
		if (e->nred < (int)NELEM(e->red_expr)) {
			e->red_expr[e->nred] = x;
			e->red_name[e->nred] = arena_printf(&e->c->arena, "red%d_", e->nred);
			e->nred++;
		}
		return;
	}
	find_nested_reductions(e, x->lhs, false);
	find_nested_reductions(e, x->rhs, false);
	for (int i = 0; i < x->nargs; i++)
		find_nested_reductions(e, x->args[i], false);
}

static void emit_assign(Em *e, Stmt *s, Scope sc)
{
	const PlanFrag *d0 = s->nlhs >= 1 ? frag_of(e, s->lhs[0]) : NULL;
	const PlanFrag *d1 = s->nlhs == 2 ? frag_of(e, s->lhs[1]) : NULL;
	if (!d0 || (s->nlhs == 2 && !d1) || s->nlhs > 2 || !s->src) {
		refuse(e, s->span, "CK-LOW-002", "assignment is lowered for sm_90a only into fragments (one, or two for rowargmin/rowargmax)");
		return;
	}
	if (d0->role != e->role || d0->regs_per_thread == 0 || (d1 && (d1->role != e->role || d1->regs_per_thread == 0))) {
		Diag *d = refuse(e, s->span, "CK-LOW-002", "fragment '%s' has no register layout the sm_90a lowering supports here (owned by another role, or not a multiple of the m64nNk16 tile)",
		                 d0->name);
		diag_set(&d->resource, "%s", d0->name);
		return;
	}
	/* frag = 0: clear the registers */
	if (s->nlhs == 1 && (s->src->kind == E_INT || s->src->kind == E_FLOAT) && (s->src->kind == E_INT ? s->src->ival == 0 : s->src->fval == 0.0)) {
		ir_comment(e, s->span, NULL);
		line(e, "#pragma unroll");
		line(e, "for (int i_ = 0; i_ < %d; ++i_)", d0->regs_per_thread);
		line(e, "\t%s[i_] = %s;", d0->name, d0->dt == DT_F32 ? "0.0f" : "0");
		return;
	}
	const Expr *x = s->src;
	if (s->nlhs == 1 && d0->layout == FRAG_ACC && is_call(x, "cumsum")) {
		sm90_acc_cumsum(e, s, d0);
		return;
	}
	if (s->nlhs == 1 && d0->layout == FRAG_ACC && is_call(x, "trisolve")) {
		sm90_acc_trisolve(e, s, d0);
		return;
	}
	if (s->nlhs == 1 && d0->layout == FRAG_VEC && (is_call(x, "fetch_add") || is_call(x, "cumsum"))) {
		if (is_call(x, "fetch_add"))
			sm90_vec_fetch_add(e, s, d0);
		else
			sm90_vec_cumsum(e, s, d0);
		return;
	}
	bool red = x->kind == E_CALL && x->name &&
	           (is_call(x, "rowsum") || is_call(x, "rowmax") || is_call(x, "rowmin") || is_call(x, "rowargmin") || is_call(x, "rowargmax"));
	if (s->nlhs == 1 && (d0->layout == FRAG_TROW || d0->layout == FRAG_TCOL) && x->kind == E_CALL &&
	    (is_call(x, "rowsum") || is_call(x, "rowmax") || is_call(x, "rowmin") || is_call(x, "colsum") || is_call(x, "colmax"))) {
		bool row = x->name[0] == 'r';
		if (row != (d0->layout == FRAG_TROW)) {
			refuse(e, s->span, "CK-LOW-002", "%s of a thread tile assigns a %s vector of the tile, but '%s' is a %s vector", x->name, row ? "row" : "column",
			       d0->name, d0->layout == FRAG_TROW ? "row" : "column");
			return;
		}
		ir_comment(e, s->span, NULL);
		sm90_tile_reduce(e, x, d0->name, d0->dt, tile_of_role(e), false, s->span);
		return;
	}
	if (s->nlhs == 1 && d0->layout == FRAG_COL && (is_call(x, "colsum") || is_call(x, "colmax"))) {
		emit_col_reduce(e, s, d0);
		return;
	}
	if (red) {
		bool arg = strncmp(x->name, "rowarg", 6) == 0;
		if (arg != (s->nlhs == 2)) {
			refuse(e, s->span, "CK-LOW-002", "%s assigns %s", x->name, arg ? "two fragments (value, index)" : "one fragment");
			return;
		}
		emit_row_reduce(e, s, d0, d1);
		return;
	}
	if (s->nlhs != 1) {
		refuse(e, s->span, "CK-LOW-002", "a tuple assignment is lowered for sm_90a only from rowargmin/rowargmax");
		return;
	}
	emit_elementwise(e, s, d0);
}

/* Row-major element offset of the leading point indices slices[0 .. nlead) of
 * an index into g (as C text, "" when nlead is 0), or NULL when one of them is
 * not a point index. Batched tensors put their batch index here: X[b, r +: R]. */
static const char *lead_offset(Em *e, const Expr *idx, const Decl *g, int nlead)
{
	StrBuf b = {0};
	for (int i = 0; i < nlead; i++) {
		if (idx->slices[i].kind != SL_POINT) {
			sb_free(&b);
			return NULL;
		}
		sb_printf(&b, "%s(u64)(%s)", i ? " + " : "", cexpr_p(e, idx->slices[i].start));
		for (int j = i + 1; j < g->rank; j++)
			sb_printf(&b, " * (u64)%s", cexpr_p(e, g->shape[j]));
	}
	const char *r = arena_printf(&e->c->arena, "%s", b.len ? sb_str(&b) : "");
	sb_free(&b);
	return r;
}

/* load FRAG <- G[start +: len]: a row or column vector from a rank-1 global tensor. */
static void emit_load_smem(Em *e, Stmt *s, const PlanFrag *f, int bi, Scope sc);
static void emit_load_smem_cols(Em *e, Stmt *s, const PlanFrag *f, int bi, Scope sc);
static void emit_load_acc_global(Em *e, Stmt *s, const PlanFrag *f);

/* The function that turns a loaded element of dtype t into its register value ("" for none:
 * 16-bit floats are stored as bits). */
static const char *ctype_to_f(DType t)
{
	return t == DT_BF16 ? "bf16lo_f32" : t == DT_F16 ? "f16lo_f32" : "";
}

static void emit_load(Em *e, Stmt *s, Scope sc)
{
	const PlanFrag *f = frag_of(e, s->dst);
	const Expr *src = s->src;
	int sbi = plan_buffer_index(e->p, lower_base_name(src));
	if (f && (f->layout == FRAG_TILE || f->layout == FRAG_TROW || f->layout == FRAG_TCOL)) {
		if (sbi >= 0) {
			Diag *d = refuse(e, s->span, "CK-LOW-002", "a load of thread tile or tile vector '%s' from shared memory is not lowered yet for sm_90a (global tensors only)", f->name);
			diag_set(&d->resource, "%s", f->name);
			return;
		}
		sm90_tile_load(e, s, f);
		return;
	}
	if (f && sbi >= 0 && f->layout == FRAG_VEC) {
		sm90_vec_smem_rows(e, s, NULL, f, true);
		return;
	}
	if (f && sbi >= 0 && f->layout == FRAG_COL) {
		emit_load_smem_cols(e, s, f, sbi, sc);
		return;
	}
	if (f && sbi >= 0) {
		emit_load_smem(e, s, f, sbi, sc);
		return;
	}
	if (f && f->layout == FRAG_VEC) {
		sm90_vec_load(e, s, f);
		return;
	}
	if (f && f->layout == FRAG_ACC) {
		emit_load_acc_global(e, s, f);
		return;
	}
	GRef a;
	bool okref = f && sm90_gref(e, src, &a) && a.nr == 1;
	const Decl *g = okref ? a.g : NULL;
	if (!f || !g || f->role != e->role || f->regs_per_thread == 0 || g->dt != f->dt || a.len[0] != f->rows) {
		Diag *d = refuse(e, s->span, "CK-LOW-002", "load is lowered for sm_90a only as `load v <- G[i, .., s +: len, .., j]` of a row- or column-vector fragment (point indices and one range of the vector's length, in any dimension)");
		diag_set(&d->hint, "a tile goes into a rank-2 fragment: `load F <- G[.., r +: R, .., c +: C]`");
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	StrBuf sb0 = {0};
	if (*a.base)
		sb_printf(&sb0, "%s", a.base);
	if (strcmp(a.start[0], "0"))
		sb_printf(&sb0, "%s%s%s", sb0.len ? " + " : "", a.unit[0] ? "" : "(long long)", a.unit[0] ? a.start[0] :
		          arena_printf(&e->c->arena, "%s * %s", a.start[0], a.stride[0]));
	char *start = arena_strdup(&e->c->arena, sb0.len ? sb_str(&sb0) : "0");
	sb_free(&sb0);
	const char *stride = a.unit[0] ? NULL : a.stride[0];
	ir_comment(e, s->span, f->layout == FRAG_COL ? "each thread loads the columns it holds" : "each thread loads the rows it holds");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	/* is the first element's offset provably even (pairs 8-byte aligned)? */
	long long mult = sm90_gcd(a.mbase, a.mstart[0]);
	if (f->layout == FRAG_COL && !stride && g->dt == DT_F32 && f->regs_per_thread % 2 == 0 && mult % 2 == 0) {
		const char *wg = (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_cols) : "";
		line(e, "const float2 *src_ = (const float2 *)(%s + %s + 2 * (int)(lane_ %% 4u)%s);   /* pairs: 8-byte aligned */", g->name, start, wg);
		line(e, "#pragma unroll");
		line(e, "for (int c_ = 0; c_ < %d; c_ += 2) {", f->regs_per_thread);
		line(e, "\tconst float2 v_ = src_[4 * (c_ / 2)];");
		line(e, "\t%s[c_] = v_.x;", f->name);
		line(e, "\t%s[c_ + 1] = v_.y;", f->name);
		line(e, "}");
	} else if (f->layout == FRAG_COL) {
		const char *wg = (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_cols) : "";
		line(e, "const %s *src_ = %s + %s;", ctype_of(g->dt), g->name, start);
		line(e, "#pragma unroll");
		line(e, "for (int c_ = 0; c_ < %d; ++c_)", f->regs_per_thread);
		if (stride)
			line(e, "\t%s[c_] = %s(src_[(long long)(8 * (c_ / 2) + c_ %% 2 + 2 * (int)(lane_ %% 4u)%s) * %s]);", f->name, ctype_to_f(g->dt), wg, stride);
		else
			line(e, "\t%s[c_] = %s(src_[8 * (c_ / 2) + c_ %% 2 + 2 * (int)(lane_ %% 4u)%s]);", f->name, ctype_to_f(g->dt), wg);
	} else {
		const char *wg = (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_rows) : "";
		line(e, "const %s *src_ = %s + %s;", ctype_of(g->dt), g->name, start);
		line(e, "#pragma unroll");
		line(e, "for (int r_ = 0; r_ < %d; ++r_)", f->regs_per_thread);
		const char *row = arena_printf(&e->c->arena, "(r_ / 2) * 64 + (r_ %% 2) * 8 + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u)%s", wg);
		if (stride)
			line(e, "\t%s[r_] = %s(src_[(long long)(%s) * %s]);", f->name, ctype_to_f(g->dt), row, stride);
		else
			line(e, "\t%s[r_] = %s(src_[%s]);", f->name, ctype_to_f(g->dt), row);
	}
	e->ind--;
	line(e, "}");
}

/* store G[start +: len] <- v: a row-vector fragment into a rank-1 global tensor. */
/* First fragment of layout `lay` read in x (NULL if none). */
static const PlanFrag *find_layout(Em *e, const Expr *x, FragLayout lay)
{
	if (!x || is_call(x, "sum"))   /* a sum() is a scalar: its argument fixes no layout */
		return NULL;
	const PlanFrag *f = frag_of(e, x);
	if (f)
		return f->layout == lay ? f : NULL;
	const PlanFrag *r = find_layout(e, x->lhs, lay);
	if (!r)
		r = find_layout(e, x->rhs, lay);
	for (int i = 0; !r && i < x->nargs; i++)
		r = find_layout(e, x->args[i], lay);
	return r;
}

/* store G[.., s +: n, ..] <- expr over column vectors (index 2j + e holds column
 * 8j + 2(lane%4) + e): the first quad of the role's first warp writes (every warpgroup holds
 * the same columns). */
static bool emit_store_cols(Em *e, Stmt *s, const Expr *src, const PlanFrag *f, DType cast)
{
	GRef a;
	if (!sm90_gref(e, s->dst, &a) || a.nr != 1 || a.len[0] != f->rows || f->role != e->role || f->regs_per_thread == 0 ||
	    (cast != DT_NONE && cast != a.g->dt)) {
		refuse(e, s->span, "CK-LOW-011", "a store of a column-vector expression over '%s' is lowered for sm_90a as `G[.., s +: %lld, ..]` (point indices and one range of its length) into a global tensor of its own dtype",
		       f->name, f->rows);
		return false;
	}
	Fx c = {FRAG_COL, f, NULL, 0};
	StrBuf val = {0};
	if (!fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		return false;
	}
	const PlanRole *r = &e->p->roles[e->role];
	const char *conv = a.g->dt == DT_BF16 ? "bf16_bits" : a.g->dt == DT_F16 ? "f16_bits" : arena_printf(&e->c->arena, "(%s)", ctype_of(a.g->dt));
	StrBuf o = {0};
	if (*a.base)
		sb_printf(&o, "%s + ", a.base);
	if (strcmp(a.start[0], "0"))
		sb_printf(&o, "(long long)%s * %s + ", a.start[0], a.stride[0]);
	sb_puts(&o, "0");
	bool split = f->split == SPLIT_N && r->nwg > 1;   /* each warpgroup holds its columns */
	ir_comment(e, s->span, split ? "the first quad of each warpgroup stores the columns it holds" : "the first quad of the role's first warp stores the columns it holds");
	if (split)
		line(e, "if ((threadIdx.x - %du) %% 128u < 4u) {", (unsigned)r->thread_lo);
	else
		line(e, "if (threadIdx.x - %du < 4u) {", (unsigned)r->thread_lo);
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "%s *dst_ = %s + %s;", ctype_of(a.g->dt), a.g->name, sb_str(&o));
	sb_free(&o);
	line(e, "#pragma unroll");
	line(e, "for (int c_ = 0; c_ < %d; ++c_)", f->regs_per_thread);
	line(e, "\tdst_[(long long)(%s8 * (c_ / 2) + 2 * (int)lane_ + c_ %% 2) * %s] = %s(%s);",
	     split ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_cols) : "", a.stride[0], conv, sb_str(&val));
	e->ind--;
	line(e, "}");
	sb_free(&val);
	return true;
}

/* store G[start +: len] <- expr over row vectors, into a rank-1 global tensor. */
static bool emit_store_rows(Em *e, Stmt *s, const Expr *src, const Decl *g, DType cast)
{
	long long len = -1;
	int last = g->rank - 1;
	const Slice *sl = &s->dst->slices[last];
	const char *lead = lead_offset(e, s->dst, g, last);
	const PlanFrag *f = find_layout(e, src, FRAG_ROW);
	bool lenok = sl->kind == SL_RANGE ? eval_expr(sl->len, e->k, NULL, &len) : sl->kind == SL_ALL && eval_expr(g->shape[last], e->k, NULL, &len);
	if (!f || !lead || f->role != e->role || f->regs_per_thread == 0 || !lenok || len != f->rows || (cast != DT_NONE && cast != g->dt)) {
		refuse(e, s->span, "CK-LOW-011", "store into '%s' is lowered for sm_90a here only as `G[i, .., start +: len] <- expr` over row-vector fragments of this role covering exactly the stored rows",
		       g->name);
		return false;
	}
	Fx c = {FRAG_ROW, NULL, NULL, 0};
	StrBuf val = {0};
	if (!fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		return false;
	}
	const PlanRole *r = &e->p->roles[e->role];
	const char *wg = (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_rows) : "";
	const char *conv = g->dt == DT_BF16 ? "bf16_bits" : g->dt == DT_F16 ? "f16_bits" : arena_printf(&e->c->arena, "(%s)", ctype_of(g->dt));
	ir_comment(e, s->span, "one lane of each quad stores its two rows per 64-row tile");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "%s *dst_ = %s%s%s + %s%s + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u);", ctype_of(g->dt), g->name, *lead ? " + " : "", lead,
	     sl->kind == SL_ALL ? "0" : cexpr_p(e, sl->start), wg);
	/* a replicated (unsplit) row vector of a role of several warpgroups is stored once */
	line(e, "if (lane_ %% 4u == 0u%s) {", f->split != SPLIT_M && r->nwg > 1 ? " && role_wg == 0u" : "");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int r_ = 0; r_ < %d; ++r_)", f->regs_per_thread);
	line(e, "\t\tdst_[(r_ / 2) * 64 + (r_ %% 2) * 8] = %s(%s);", conv, sb_str(&val));
	line(e, "}");
	e->ind--;
	line(e, "}");
	sb_free(&val);
	return true;
}

/* load F <- G[.., r +: R, .., c +: C, ..]: a tile of a global tensor into an
 * accumulator-layout fragment. Point indices and two ranges (the tile's rows, then its
 * columns) in any dimensions (`Gin[b, c * 64 +: 64, h, :]` reads 64 tokens of one head);
 * each thread loads the elements it holds (rows w*16 + lane/4 (+8) of every 64-row tile,
 * column pairs 8j + 2*(lane%4), the warpgroup's part of a split fragment), a pair at a
 * time when the columns are the innermost dimension and the pair's offset is provably
 * even, else one element at a time. */
static void emit_load_acc_global(Em *e, Stmt *s, const PlanFrag *f)
{
	GRef a;
	bool ok = f->role == e->role && f->regs_per_thread > 0 && sm90_gref(e, s->src, &a) && a.nr == 2 && a.g->dt == f->dt &&
	          a.len[0] == f->rows && a.len[1] == f->cols && (f->dt == DT_BF16 || f->dt == DT_F16 || f->dt == DT_F32 || f->dt == DT_I32);
	if (!ok) {
		Diag *d = refuse(e, s->span, "CK-LOW-002", "a load into accumulator-layout fragment '%s' is lowered for sm_90a from a global bf16, f16, f32 or i32 tensor of its dtype as `G[.., r +: %lld, .., c +: %lld, ..]`: point indices and two ranges covering the fragment's rows and columns",
		                 f->name, f->rows, f->cols);
		diag_set(&d->resource, "%s", f->name);
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	long long half = f->wg_cols / 2;
	int esz = dtype_size(a.g->dt);
	long long mult = sm90_gcd(sm90_gcd(a.mbase, a.mstart[0] * a.mstride[0]), sm90_gcd(a.mstride[0], a.mstart[1]));
	bool pair = a.unit[1] && mult % 2 == 0;
	StrBuf o = {0};
	if (*a.base)
		sb_printf(&o, "%s + ", a.base);
	if (strcmp(a.start[0], "0"))
		sb_printf(&o, "(long long)%s * %s + ", a.start[0], a.stride[0]);
	if (strcmp(a.start[1], "0"))
		sb_printf(&o, "%s%s + ", a.unit[1] ? "" : "(long long)", a.unit[1] ? a.start[1] : arena_printf(&e->c->arena, "%s * %s", a.start[1], a.stride[1]));
	sb_puts(&o, "0");
	ir_comment(e, s->span, pair ? "each thread loads its accumulator-layout pairs (adjacent columns, one access each)"
	                            : "each thread loads its accumulator-layout elements");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "const %s *src_ = %s + %s;", ctype_of(a.g->dt), a.g->name, sb_str(&o));
	sb_free(&o);
	line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u);",
	     (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_rows) : "");
	line(e, "const int col0_ = %s2 * (int)(lane_ %% 4u);",
	     (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_cols) : "");
	line(e, "#pragma unroll");
	line(e, "for (int p_ = 0; p_ < %d; ++p_) {", f->regs_per_thread / 2);
	line(e, "\tconst int a_ = 2 * p_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2;", half, half);
	const char *col = a.unit[1] ? "(col0_ + 8 * j_)" : arena_printf(&e->c->arena, "(long long)(col0_ + 8 * j_) * %s", a.stride[1]);
	line(e, "\tconst %s *at_ = src_ + (long long)(row0_ + mt_ * 64 + 8 * h_) * %s + %s;", ctype_of(a.g->dt), a.stride[0], col);
	if (pair && esz == 4) {
		line(e, "\tconst uint2 v_ = *(const uint2 *)at_;   /* 8-byte aligned: the offset is even */");
		line(e, "\t%s[a_] = %s;", f->name, f->dt == DT_F32 ? "__uint_as_float(v_.x)" : "(int)v_.x");
		line(e, "\t%s[a_ + 1] = %s;", f->name, f->dt == DT_F32 ? "__uint_as_float(v_.y)" : "(int)v_.y");
	} else if (pair) {
		const char *cv = a.g->dt == DT_BF16 ? "bf16" : "f16";
		line(e, "\tconst u32 v_ = *(const u32 *)at_;   /* 4-byte aligned: the offset is even */");
		line(e, "\t%s[a_] = %slo_f32(v_);", f->name, cv);
		line(e, "\t%s[a_ + 1] = %shi_f32(v_);", f->name, cv);
	} else {
		const char *cv = ctype_to_f(a.g->dt);
		const char *next = a.unit[1] ? "1" : a.stride[1];
		line(e, "\t%s[a_] = %s(at_[0]);", f->name, cv);
		line(e, "\t%s[a_ + 1] = %s(at_[%s]);", f->name, cv, next);
	}
	line(e, "}");
	e->ind--;
	line(e, "}");
}

/* "const u32 o_ = ..." the byte offset, before the swizzle, of the pair at (row0_ + mt_ * 64
 * + 8 h_, col0_ + 8 j_) of 2-D buffer b: row-major, or in column panels one swizzle span
 * wide when the rows are wider (the wgmma operand layout, span_of()). */
static void smem_acc_offset(Em *e, const PlanBuffer *b, int esz)
{
	int S = span_of(b);
	if (S == b->row_bytes) {
		line(e, "\tconst u32 o_ = (u32)(row0_ + mt_ * 64 + 8 * h_) * %du + (u32)(col0_ + 8 * j_) * %du;", b->row_bytes, esz);
		return;
	}
	line(e, "\tconst u32 c_ = (u32)(col0_ + 8 * j_) * %du;   /* panels of %d bytes per row, %lld bytes each */", esz, S, panel_bytes(b));
	line(e, "\tconst u32 o_ = c_ / %du * %lldu + (u32)(row0_ + mt_ * 64 + 8 * h_) * %du + c_ %% %du;", S, panel_bytes(b), S, S);
}

/* load v <- buf[i, s +: n]: a column-vector fragment (index 2j + e holds column 8j +
 * 2(lane%4) + e, the warpgroup's part of a split one) from one row of an unswizzled 2-D
 * shared buffer of its dtype (a ring's per-stage vectors: the KDA state pass's decays). */
static void emit_load_smem_cols(Em *e, Stmt *s, const PlanFrag *f, int bi, Scope sc)
{
	const PlanBuffer *b = &e->p->buffers[bi];
	const Expr *src = s->src;
	long long len = -1;
	bool ok = src->kind == E_INDEX && src->nslices == 2 && b->rank == 2 && b->swizzle == SWZ_NONE && b->dt == f->dt &&
	          (f->dt == DT_F32 || f->dt == DT_I32) && f->role == e->role && f->regs_per_thread > 0 &&
	          src->slices[0].kind == SL_POINT && src->slices[1].kind == SL_RANGE && eval_expr(src->slices[1].len, e->k, NULL, &len) &&
	          len == f->rows;
	if (!ok) {
		Diag *d = refuse(e, s->span, "CK-LOW-002", "a load of column vector '%s' from shared memory is lowered for sm_90a as `buf[i, s +: %lld]`: one row of an unswizzled 2-D buffer of its dtype (f32 or i32)",
		                 f->name, f->rows);
		diag_set(&d->resource, "%s", f->name);
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	const char *wg = (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_cols) : "";
	char *addr = buf_addr(e, bi, sc, s->span);
	ir_comment(e, s->span, "each thread reads the columns it holds from the buffer's row");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "const u32 base_ = %s + (u32)((%s) * %lld + (%s)) * %du;", addr, cexpr_p(e, src->slices[0].start), b->shape[1],
	     cexpr_p(e, src->slices[1].start), dtype_size(b->dt));
	line(e, "#pragma unroll");
	line(e, "for (int c_ = 0; c_ < %d; ++c_)", f->regs_per_thread);
	line(e, "	%s[c_] = %s(ld_shared_u32(base_ + (u32)(8 * (c_ / 2) + c_ %% 2 + 2 * (int)(lane_ %% 4u)%s) * %du));", f->name,
	     f->dt == DT_F32 ? "__uint_as_float" : "(int)", wg, dtype_size(b->dt));
	e->ind--;
	line(e, "}");
}

/* Whether x (a shared buffer named whole, or indexed) covers all of b's rows and n columns
 * from a start column: `buf`, `buf[:, :]`, `buf[:, c +: n]` (or `0 +: rows` for the rows).
 * *cstart is the start's expression, NULL when it is 0. A start the lowering can evaluate must
 * be a multiple of 8 inside the buffer; one it cannot must be a loop variable's multiple,
 * `p * 64`, with a constant factor that is a multiple of 8 (every thread's column pair stays
 * inside one 16-byte chunk of one swizzle panel) and the loop's bounds constants that keep
 * every panel inside the buffer. */
static bool smem_col_slice(Em *e, const Expr *x, const PlanBuffer *b, long long n, const Expr **cstart)
{
	*cstart = NULL;
	if (x->kind == E_IDENT)
		return b->rank == 2 && b->shape[1] == n;
	if (x->kind != E_INDEX || x->nslices != 2 || b->rank != 2)
		return false;
	const Slice *r = &x->slices[0], *c = &x->slices[1];
	long long st = -1, ln = -1;
	if (r->kind != SL_ALL && !(r->kind == SL_RANGE && eval_expr(r->start, e->k, NULL, &st) && eval_expr(r->len, e->k, NULL, &ln) &&
	                           st == 0 && ln == b->shape[0]))
		return false;
	if (c->kind == SL_ALL)
		return b->shape[1] == n;
	if (c->kind != SL_RANGE || !eval_expr(c->len, e->k, NULL, &ln) || ln != n)
		return false;
	if (eval_expr(c->start, e->k, NULL, &st)) {
		if (st < 0 || st % 8 != 0 || st + n > b->shape[1])
			return false;
		*cstart = st ? c->start : NULL;
		return true;
	}
	/* v * k or k * v: v a loop variable with constant bounds, so that the start's every value
	 * is known: each inside the buffer */
	const Expr *m = c->start;
	long long k = -1;
	if (m->kind != E_BINARY || m->op != '*')
		return false;
	const Expr *v = eval_expr(m->rhs, e->k, NULL, &k) ? m->lhs : eval_expr(m->lhs, e->k, NULL, &k) ? m->rhs : NULL;
	if (!v || v->kind != E_IDENT || !v->name || k <= 0 || k % 8 != 0)
		return false;
	for (int i = (e->loops < 16 ? e->loops : 16) - 1; i >= 0; i--) {
		const Stmt *l = e->loop_at[i];
		if (!l->name || strcmp(l->name, v->name))
			continue;
		long long lo = 0, hi = 0, step = 1;
		if (!eval_expr(l->lo, e->k, NULL, &lo) || !eval_expr(l->hi, e->k, NULL, &hi) || (l->step && !eval_expr(l->step, e->k, NULL, &step)) ||
		    step <= 0 || lo < 0 || (hi > lo && (hi - 1) * k + n > b->shape[1]))
			return false;
		*cstart = m;
		return true;
	}
	return false;
}

/* load FRAG <- buf[:, :]: a whole shared buffer into an accumulator-layout fragment,
 * undoing the buffer's swizzle (the TMA pattern: 16-byte chunk ^= (offset >> 7) & mask). */
static void emit_load_smem(Em *e, Stmt *s, const PlanFrag *f, int bi, Scope sc)
{
	const PlanBuffer *b = &e->p->buffers[bi];
	const Expr *cst = NULL;
	bool whole = smem_col_slice(e, s->src, b, f->cols, &cst);
	int esz = dtype_size(b->dt);
	if (!whole || f->layout != FRAG_ACC || f->role != e->role || f->regs_per_thread == 0 || b->rank != 2 || b->shape[0] != f->rows ||
	    (b->dt != DT_BF16 && b->dt != DT_F16 && b->dt != DT_F32)) {
		refuse(e, s->span, "CK-LOW-002", "load from shared memory is lowered for sm_90a only into an accumulator-layout fragment from a 16-bit or f32 buffer of its rows: the whole buffer, or a column panel `buf[:, c +: n]` of the fragment's width inside the buffer (c a multiple of 8: a constant, or a loop variable times one over a loop with constant bounds)");
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	int mask = b->swizzle == SWZ_128B ? 7 : b->swizzle == SWZ_64B ? 3 : b->swizzle == SWZ_32B ? 1 : 0;
	char *addr = buf_addr(e, bi, sc, s->span);
	ir_comment(e, s->span, "each thread reads its accumulator-layout pairs, swizzle undone");
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "const u32 base_ = %s;", addr);
	line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u);",
	     (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_rows) : "");
	line(e, "const int col0_ = %s%s2 * (int)(lane_ %% 4u);", cst ? arena_printf(&e->c->arena, "(int)(%s) + ", cexpr_p(e, cst)) : "",
	     (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_cols) : "");
	line(e, "#pragma unroll");
	line(e, "for (int p_ = 0; p_ < %d; ++p_) {", f->regs_per_thread / 2);
	line(e, "\tconst int a_ = 2 * p_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2;", f->wg_cols / 2, f->wg_cols / 2);
	smem_acc_offset(e, b, esz);
	if (mask)
		line(e, "\tconst u32 so_ = o_ ^ (((o_ >> 7) & %du) << 4);   /* %s swizzle */", mask, swizzle_name(b->swizzle));
	else
		line(e, "\tconst u32 so_ = o_;");
	if (esz == 2) {
		const char *cv = b->dt == DT_BF16 ? "bf16" : "f16";
		line(e, "\tconst u32 v_ = ld_shared_u32(base_ + so_);");
		line(e, "\t%s[a_] = %slo_f32(v_);", f->name, cv);
		line(e, "\t%s[a_ + 1] = %shi_f32(v_);", f->name, cv);
	} else {
		line(e, "\t%s[a_] = __uint_as_float(ld_shared_u32(base_ + so_));", f->name);
		line(e, "\t%s[a_ + 1] = __uint_as_float(ld_shared_u32(base_ + so_ + 4u));", f->name);
	}
	line(e, "}");
	e->ind--;
	line(e, "}");
}

/* store buf[:, :] <- expr over accumulator-layout fragments: the whole tile into a shared
 * buffer of its shape (the current stage of a ring buffer), in the buffer's dtype and with
 * its swizzle (the same 16-byte-chunk XOR as the loads undo): each thread writes its pairs
 * of adjacent columns, one 4-byte store for 16-bit types, 8 bytes for f32. This is how
 * values born in registers become wgmma B operands (after `fence proxy_async` and `sync`). */
static void emit_store_smem_acc(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *f, Scope sc)
{
	int bi = plan_buffer_index(e->p, lower_base_name(s->dst));
	const PlanBuffer *b = bi >= 0 ? &e->p->buffers[bi] : NULL;
	const Expr *cst = NULL;
	bool whole = b && smem_col_slice(e, s->dst, b, f->cols, &cst);
	if (!whole || b->rank != 2 || b->shape[0] != f->rows || f->role != e->role || f->regs_per_thread == 0 ||
	    (b->dt != DT_BF16 && b->dt != DT_F16 && b->dt != DT_F32) || (cast != DT_NONE && cast != b->dt)) {
		refuse(e, s->span, "CK-LOW-011", "a store of an accumulator-layout value into shared memory is lowered for sm_90a only into a bf16, f16 or f32 buffer of the value's rows, in the buffer's dtype: the whole buffer (`store buf[:, :] <- [cast(]expr[)]`) or a column panel `buf[:, c +: n]` of the value's width inside the buffer (c a multiple of 8: a constant, or a loop variable times one over a loop with constant bounds)");
		return;
	}
	Fx c = {FRAG_ACC, f, NULL, 0};
	StrBuf val = {0};
	e->nred = e->npre = 0;
	e->acc_ref = f;
	acc_pre_collect(e, src);
	if (!fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		e->nred = e->npre = 0;
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	int mask = b->swizzle == SWZ_128B ? 7 : b->swizzle == SWZ_64B ? 3 : b->swizzle == SWZ_32B ? 1 : 0;
	int esz = dtype_size(b->dt);
	long long half = f->wg_cols / 2;
	char *addr = buf_addr(e, bi, sc, s->span);
	ir_comment(e, s->span, mask ? "each thread writes its accumulator-layout pairs, swizzled" : "each thread writes its accumulator-layout pairs");
	bool pre = acc_pre_begin(e, f, s->span);
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	line(e, "const u32 base_ = %s;", addr);
	line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u);",
	     (f->split == SPLIT_M && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_rows) : "");
	line(e, "const int col0_ = %s%s2 * (int)(lane_ %% 4u);", cst ? arena_printf(&e->c->arena, "(int)(%s) + ", cexpr_p(e, cst)) : "",
	     (f->split == SPLIT_N && r->nwg > 1) ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", f->wg_cols) : "");
	line(e, "#pragma unroll");
	line(e, "for (int p_ = 0; p_ < %d; ++p_) {", f->regs_per_thread / 2);
	line(e, "\tfloat v_[2];");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int q_ = 0; q_ < 2; ++q_) {");
	line(e, "\t\tconst int a_ = 2 * p_ + q_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2, e_ = a_ %% 2;", half, half);
	line(e, "\t\t(void)mt_; (void)j_; (void)h_; (void)e_;");
	line(e, "\t\tv_[q_] = %s;", sb_str(&val));
	line(e, "\t}");
	line(e, "\tconst int a_ = 2 * p_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2;", half, half);
	smem_acc_offset(e, b, esz);
	if (mask)
		line(e, "\tconst u32 so_ = o_ ^ (((o_ >> 7) & %du) << 4);   /* %s swizzle */", mask, swizzle_name(b->swizzle));
	else
		line(e, "\tconst u32 so_ = o_;");
	if (esz == 2)
		line(e, "\tst_shared_u32(base_ + so_, %s(v_[0], v_[1]));", b->dt == DT_BF16 ? "pack_bf16x2" : "pack_f16x2");
	else {
		line(e, "\tst_shared_u32(base_ + so_, __float_as_uint(v_[0]));");
		line(e, "\tst_shared_u32(base_ + so_ + 4u, __float_as_uint(v_[1]));");
	}
	line(e, "}");
	e->ind--;
	line(e, "}");
	acc_pre_end(e, pre);
	e->need_gmem = true;   /* st_shared_u32 lives with the SIMT helpers */
	sb_free(&val);
}

/* store G[i, .., r +: R, c +: C] <- expr over accumulator-layout fragments: leading
 * point indices, the last two dims covering exactly the fragment's tile. With
 * `atomic` (atomic_add of a whole tile into an f32 G, as split-K does) each
 * column pair is added with one red.global.add.v2.f32 instead of stored. With `tr`
 * (`store G[..] <- v^T`, LANGUAGE.md §5.6) the destination tile is the fragment's
 * columns by its rows: element (row r, column c) goes to G[r0 + c, c0 + r], so a
 * thread's column pair lands in two consecutive rows of G as two scalar stores
 * (16 lanes of a warp write 8 consecutive rows' worth of 8 contiguous elements). */
static void emit_store_tile(Em *e, Stmt *s, const Expr *src, const Decl *g, DType cast, bool atomic, bool tr)
{
	const PlanFrag *f = find_layout(e, src, FRAG_ACC);
	int r = g->rank;
	DType out = g->dt;
	bool ok = f && f->role == e->role && f->regs_per_thread > 0 && (cast == DT_NONE || cast == out) &&
	          (out == DT_BF16 || out == DT_F16 || out == DT_F32);
	long long len[2] = {-1, -1};
	const char *start[2] = {"0", "0"};
	for (int i = 0; ok && i < r; i++) {
		const Slice *sl = &s->dst->slices[i];
		if (i < r - 2) {
			ok = sl->kind == SL_POINT;
			continue;
		}
		int t = i - (r - 2);
		if (sl->kind == SL_RANGE) {
			ok = eval_expr(sl->len, e->k, NULL, &len[t]);
			start[t] = cexpr_p(e, sl->start);
		} else if (sl->kind == SL_ALL) {
			ok = eval_expr(g->shape[i], e->k, NULL, &len[t]);
		} else {
			ok = false;
		}
	}
	const char *base = NULL, *ld = NULL;
	GRef a;
	const long long want0 = f ? (tr ? f->cols : f->rows) : -1, want1 = f ? (tr ? f->rows : f->cols) : -1;
	if ((!ok || len[0] != want0 || len[1] != want1) && f && f->role == e->role && f->regs_per_thread > 0 && (cast == DT_NONE || cast == out) &&
	    (out == DT_BF16 || out == DT_F16 || out == DT_F32) && sm90_gref(e, s->dst, &a) && a.nr == 2 && a.unit[1] && a.len[0] == want0 &&
	    a.len[1] == want1) {
		/* the tile's rows and columns in other dimensions (`O[b, c * 64 +: 64, h, :]`): the row
		 * stride is the product of the later extents, the columns innermost */
		ok = true;
		len[0] = a.len[0], len[1] = a.len[1];
		start[0] = a.start[0], start[1] = a.start[1];
		base = *a.base ? arena_printf(&e->c->arena, "(%s)", a.base) : "";
		ld = arena_printf(&e->c->arena, "(%s)", a.stride[0]);
	}
	if (!ok || len[0] != want0 || len[1] != want1) {
		if (tr && f)
			refuse(e, s->span, "CK-LOW-011", "a transposed store into '%s' is lowered for sm_90a as a full accumulator tile swapped (point indices, then the tile's %lld columns by its %lld rows) of a bf16, f16 or f32 tensor",
			       g->name, f->cols, f->rows);
		else
			refuse(e, s->span, "CK-LOW-011", "store into '%s' is lowered for sm_90a as a full accumulator tile (point indices and the tile's rows and columns, the columns innermost) of a bf16, f16 or f32 tensor",
			       g->name);
		return;
	}
	Fx c = {FRAG_ACC, f, NULL, 0};
	StrBuf val = {0};
	e->nred = e->npre = 0;
	e->acc_ref = f;
	acc_pre_collect(e, src);
	if (!fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		e->nred = e->npre = 0;
		return;
	}
	if (!base)
		base = lead_offset(e, s->dst, g, r - 2);   /* checked to be point indices above */
	const PlanRole *ro = &e->p->roles[e->role];
	if (!ld)
		ld = cexpr_p(e, g->shape[r - 1]);
	long long half = f->wg_cols / 2;
	ir_comment(e, s->span, "accumulator layout: rows warp*16 + lane/4 (+8), column pairs 8j + 2*(lane%4)");
	bool pre = acc_pre_begin(e, f, s->span);
	line(e, "{");
	e->ind++;
	line(e, "const u32 lane_ = lane_id();");
	/* the fragment's row and column of the thread's first element; transposed, G's row is
	 * the fragment's column and G's column its row */
	line(e, "const int row_ = %s%s + (int)(warp %% 4u) * 16 + (int)(lane_ / 4u);", tr ? start[1] : start[0],
	     (f->split == SPLIT_M && ro->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_rows) : "");
	line(e, "const int col_ = %s%s + (int)(lane_ %% 4u) * 2;", tr ? start[0] : start[1],
	     (f->split == SPLIT_N && ro->nwg > 1) ? arena_printf(&e->c->arena, " + (int)role_wg * %lld", f->wg_cols) : "");
	if (tr)
		line(e, "%s *out_ = %s%s%s + (u64)col_ * (u64)%s + row_;", ctype_of(out), g->name, *base ? " + " : "", base, ld);
	else
		line(e, "%s *out_ = %s%s%s + (u64)row_ * (u64)%s + col_;", ctype_of(out), g->name, *base ? " + " : "", base, ld);
	line(e, "#pragma unroll");
	line(e, "for (int p_ = 0; p_ < %d; ++p_) {", f->regs_per_thread / 2);
	line(e, "\tfloat v_[2];");
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int q_ = 0; q_ < 2; ++q_) {");
	line(e, "\t\tconst int a_ = 2 * p_ + q_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2, e_ = a_ %% 2;", half, half);
	line(e, "\t\t(void)mt_; (void)j_; (void)h_; (void)e_;");
	line(e, "\t\tv_[q_] = %s;", sb_str(&val));
	line(e, "\t}");
	line(e, "\tconst int mt_ = 2 * p_ / %lld, j_ = 2 * p_ %% %lld / 4, h_ = 2 * p_ %% 4 / 2;", half, half);
	if (tr) {
		line(e, "\t%s *o_ = out_ + (u64)(8 * j_) * (u64)%s + (mt_ * 64 + 8 * h_);", ctype_of(out), ld);
		const char *cv = out == DT_BF16 ? "bf16_bits" : out == DT_F16 ? "f16_bits" : "";
		line(e, "\to_[0] = %s(v_[0]);", cv);
		line(e, "\to_[%s] = %s(v_[1]);", ld, cv);
	} else {
		line(e, "\t%s *o_ = out_ + (u64)(mt_ * 64 + 8 * h_) * (u64)%s + 8 * j_;", ctype_of(out), ld);
	}
	if (tr)
		;   /* stored above */
	else if (atomic)
		line(e, "\tred_add_v2_f32(o_, v_[0], v_[1]);");
	else if (out == DT_F32)
		line(e, "\t*(float2 *)o_ = make_float2(v_[0], v_[1]);");
	else
		line(e, "\t*(u32 *)o_ = %s(v_[0], v_[1]);", out == DT_BF16 ? "pack_bf16x2" : "pack_f16x2");
	line(e, "}");
	e->ind--;
	line(e, "}");
	acc_pre_end(e, pre);
	sb_free(&val);
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
	if (s->transposed) {   /* store G[..] <- v^T: accumulator-layout values into a global tile only */
		const char *tn = lower_base_name(s->dst);
		const Decl *tg = NULL;
		for (int i = 0; tn && i < e->k->ndecls; i++)
			if (e->k->decls[i]->kind == D_PARAM && e->k->decls[i]->space == SP_GLOBAL && strcmp(e->k->decls[i]->name, tn) == 0)
				tg = e->k->decls[i];
		if (!tg || !find_layout(e, src, FRAG_ACC) || !s->dst || s->dst->kind != E_INDEX || s->dst->nslices != tg->rank || tg->rank < 2) {
			refuse(e, s->span, "CK-LOW-011", "a transposed store (`store G[...] <- v^T`) is lowered for sm_90a only for values in the wgmma accumulator layout stored into a tile of a global tensor");
			return;
		}
		emit_store_tile(e, s, src, tg, cast, false, true);
		return;
	}
	const PlanFrag *tf = find_layout(e, src, FRAG_TILE);
	if (!tf)
		tf = find_layout(e, src, FRAG_TROW);
	if (!tf)
		tf = find_layout(e, src, FRAG_TCOL);
	if (tf) {   /* a thread tile or one of its vectors */
		if (sm90_vec_is_smem(e, s->dst)) {
			refuse(e, s->span, "CK-LOW-011", "a store of thread-tile values into shared memory is not lowered yet for sm_90a (global tensors only)");
			return;
		}
		sm90_tile_store(e, s, src, cast, tf);
		return;
	}
	const char *gname = lower_base_name(s->dst);
	const Decl *g = NULL;
	for (int i = 0; gname && i < e->k->ndecls; i++)
		if (e->k->decls[i]->kind == D_PARAM && e->k->decls[i]->space == SP_GLOBAL && strcmp(e->k->decls[i]->name, gname) == 0)
			g = e->k->decls[i];
	for (int i = 0; s->dst && s->dst->kind == E_INDEX && i < s->dst->nslices; i++) {
		const PlanFrag *ix = s->dst->slices[i].kind == SL_POINT ? frag_of(e, s->dst->slices[i].start) : NULL;
		if (ix && ix->layout == FRAG_VEC) {   /* a scatter store: G[b, idx] <- v */
			sm90_vec_scatter_store(e, s, src, cast, ix);
			return;
		}
	}
	const PlanFrag *af = find_layout(e, src, FRAG_ACC);
	if (af && sm90_vec_is_smem(e, s->dst)) {   /* an accumulator-layout tile into a shared buffer */
		emit_store_smem_acc(e, s, src, cast, af, sc);
		return;
	}
	const PlanFrag *vf = find_layout(e, src, FRAG_VEC);
	if (sm90_vec_is_smem(e, s->dst)) {   /* a thread vector into a shared buffer */
		const PlanFrag *rf = vf;
		for (int i = 0; !rf && i < e->p->nfrags; i++)   /* a scalar value: any thread vector of this role sets the layout */
			if (e->p->frags[i].layout == FRAG_VEC && e->p->frags[i].role == e->role)
				rf = &e->p->frags[i];
		if (rf && cast == DT_NONE) {
			sm90_vec_smem_rows(e, s, src, rf, false);
			return;
		}
	}
	if (vf) {
		sm90_vec_store(e, s, src, cast, vf);
		return;
	}
	const PlanFrag *colf = !af && !find_layout(e, src, FRAG_ROW) ? find_layout(e, src, FRAG_COL) : NULL;
	if (g && colf) {
		emit_store_cols(e, s, src, colf, cast);
		return;
	}
	if (g && s->dst && s->dst->kind == E_INDEX && s->dst->nslices == g->rank &&
	    (g->rank == 1 || (s->dst->slices[g->rank - 2].kind == SL_POINT && !find_layout(e, src, FRAG_ACC)))) {
		emit_store_rows(e, s, src, g, cast);
		return;
	}
	if (g && s->dst && s->dst->kind == E_INDEX && g->rank >= 2 && s->dst->nslices == g->rank && (fi < 0 || g->rank > 2)) {
		emit_store_tile(e, s, src, g, cast, false, false);
		return;
	}
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
	if (f->regs_per_thread == 0 || f->layout != FRAG_ACC || f->role != e->role || (out != DT_BF16 && out != DT_F16 && out != DT_F32)) {
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
	line(e, "const u32 lane_ = lane_id();");
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
	if (pl) {
		in.ploop = pl;
		if (pl->pipe >= 0 && pl->pipe < SCOPE_PIPES)
			in.by_pipe[pl->pipe] = pl;
	}
	/* a fresh iteration re-arms the barriers its TMA loads signal */
	bool *saved = e->armed;
	e->armed = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(e->p->nbarriers + 1));
	if (e->loops < 16)
		e->loop_at[e->loops] = s;
	e->loops++;
	emit_list(e, s->body, s->nbody, in);
	e->loops--;
	e->armed = saved;
	if (pl)
		line(e, "if (++%s == %du) { %s = 0u; %s ^= 1u; }   /* next ring stage */", pl->stage_var, e->p->pipes[pl->pipe].stages, pl->stage_var,
		     pl->phase_var);
	e->ind--;
	line(e, "}");
}

/* atomic_add G[i, .., c +: n] <- vec-expr: a thread vector into one row (sm90_vec_atomic_row).
 * atomic_add G[idx, c +: n] <- acc-expr and atomic_add G[idx] <- row-expr: a scatter by an
 * i32 row-vector fragment idx (row r of the value goes to row idx[r] of G). The index
 * vector and the value share the accumulator's row layout, so each thread adds the
 * elements it holds to the rows its own index registers name: pairs of adjacent
 * columns as one red.global.add.v2.f32 when the address is provably 8-byte aligned,
 * and for a rank-1 G one lane per quad adds the row's value. Rows whose index lies
 * outside [0, extent) are skipped, never written out of bounds. */
static void emit_atomic(Em *e, Stmt *s, Scope sc)
{
	const Expr *dst = s->dst;
	const char *gname = lower_base_name(dst);
	const Decl *g = NULL;
	for (int i = 0; gname && i < e->k->ndecls; i++)
		if (e->k->decls[i]->kind == D_PARAM && e->k->decls[i]->space == SP_GLOBAL && strcmp(e->k->decls[i]->name, gname) == 0)
			g = e->k->decls[i];
	/* leading point indices (a batch), then the scatter index, then at most one column slice */
	int nl = 0;
	while (dst && dst->kind == E_INDEX && nl < dst->nslices && dst->slices[nl].kind == SL_POINT && !frag_of(e, dst->slices[nl].start))
		nl++;
	const PlanFrag *ix = dst && dst->kind == E_INDEX && nl < dst->nslices && dst->slices[nl].kind == SL_POINT
	                     ? frag_of(e, dst->slices[nl].start) : NULL;
	if (ix && ix->layout == FRAG_VEC && sm90_vec_is_smem(e, dst)) {
		sm90_vec_smem_atomic(e, s, dst, s->src, ix, NULL);
		return;
	}
	if (ix && ix->layout == FRAG_VEC) {
		sm90_vec_atomic(e, s, ix);
		return;
	}
	if (!ix && g && g->dt == DT_F32 && g->rank >= 2 && dst->nslices == g->rank && find_layout(e, s->src, FRAG_ACC)) {
		e->need_red = true;   /* a whole accumulator tile added into f32 (split-K) */
		emit_store_tile(e, s, s->src, g, DT_NONE, true, false);
		return;
	}
	const PlanFrag *vrow = !ix ? find_layout(e, s->src, FRAG_VEC) : NULL;
	if (vrow && !sm90_vec_is_smem(e, dst)) {   /* a thread vector added into one row of G */
		sm90_vec_atomic_row(e, s, vrow);
		return;
	}
	const char *lead = ix && g && g->rank == dst->nslices ? lead_offset(e, dst, g, nl) : NULL;
	if (!g || !ix || !lead || ix->layout != FRAG_ROW || ix->role != e->role || ix->regs_per_thread == 0 ||
	    (ix->dt != DT_I32 && ix->dt != DT_U32) || g->rank - nl > 2 || (g->dt != DT_F32 && g->dt != DT_I32)) {
		Diag *d = refuse(e, s->span, "CK-LOW-002", "atomic_add is lowered for sm_90a only as a scatter into an f32 or i32 global tensor: leading point indices, then an i32 row-vector fragment of this role as the row index, then at most one column slice");
		diag_set(&d->hint, "write `atomic_add G[idx, c +: n] <- tile` or `atomic_add G[b, idx] <- v` with `frag idx: i32[rows] in ROLE`");
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	char *rows = cexpr_p(e, g->shape[nl]);
	const char *gbase = *lead ? arena_printf(&e->c->arena, "(%s + %s)", g->name, lead) : g->name;
	const char *ct = g->dt == DT_F32 ? "float" : "int";
	const char *red = g->dt == DT_F32 ? "red_add_f32" : "red_add_s32";
	e->need_red = true;
	if (g->rank - nl == 1) {
		Fx c = {FRAG_ROW, NULL, NULL, 0};
		StrBuf val = {0};
		if (find_acc(e, s->src) || !fx_emit(e, &val, s->src, &c)) {
			if (find_acc(e, s->src))
				refuse(e, s->src->span, "CK-LOW-002", "atomic_add into rank-1 '%s' takes a scalar or an expression over row vectors", g->name);
			sb_free(&val);
			return;
		}
		ir_comment(e, s->span, "scatter: one lane of each quad adds its rows' values");
		/* a replicated (unsplit) index in a multi-warpgroup role: one warpgroup adds */
		line(e, "if (threadIdx.x %% 4u == 0u%s) {", ix->split != SPLIT_M && r->nwg > 1 ? " && role_wg == 0u" : "");
		line(e, "\t#pragma unroll");
		line(e, "\tfor (int r_ = 0; r_ < %d; ++r_) {", ix->regs_per_thread);
		line(e, "\t\tconst int row_ = (int)%s[r_];", ix->name);
		line(e, "\t\tif ((unsigned)row_ < (unsigned)%s)", rows);
		line(e, "\t\t\t%s(%s + row_, (%s)(%s));", red, gbase, ct, sb_str(&val));
		line(e, "\t}");
		line(e, "}");
		sb_free(&val);
		return;
	}
	const Slice *cs = &dst->slices[nl + 1];
	const PlanFrag *f = find_acc(e, s->src);
	long long len = -1, c0 = -1, ld = -1;
	if (cs->kind == SL_ALL)
		len = eval_expr(g->shape[nl + 1], e->k, NULL, &len) ? len : -1;
	else if (cs->kind == SL_RANGE)
		eval_expr(cs->len, e->k, NULL, &len);
	if (!f || f->role != e->role || f->regs_per_thread == 0 || f->mtiles != ix->mtiles || f->split == SPLIT_N ||
	    (r->nwg > 1 && ix->split != f->split) || len != f->cols || cs->kind == SL_POINT) {
		refuse(e, s->span, "CK-LOW-002", "atomic_add into rank-2 '%s' is lowered for sm_90a only from an accumulator-layout expression of this role whose rows match the index vector and whose columns cover the column slice exactly",
		       g->name);
		return;
	}
	Fx c = {FRAG_ACC, f, NULL, 0};
	StrBuf val = {0};
	if (!fx_emit(e, &val, s->src, &c)) {
		sb_free(&val);
		return;
	}
	bool c0k = cs->kind == SL_ALL ? (c0 = 0, true) : eval_expr(cs->start, e->k, NULL, &c0);
	bool v2 = g->dt == DT_F32 && c0k && c0 % 2 == 0 && eval_expr(g->shape[nl + 1], e->k, NULL, &ld) && ld % 2 == 0;
	const char *cstart = cs->kind == SL_ALL ? "0" : cexpr_p(e, cs->start);
	ir_comment(e, s->span, v2 ? "scatter: each thread adds its column pairs to the rows its index registers name"
	                          : "scatter: each thread adds its elements to the rows its index registers name");
	line(e, "{");
	e->ind++;
	line(e, "%s *const col_ = %s + %s + 2 * (int)(threadIdx.x %% 4u);", ct, gbase, cstart);
	line(e, "#pragma unroll");
	line(e, "for (int p_ = 0; p_ < %d; ++p_) {", f->regs_per_thread / 2);
	line(e, "\t%s v_[2];", ct);
	line(e, "\t#pragma unroll");
	line(e, "\tfor (int q_ = 0; q_ < 2; ++q_) {");
	line(e, "\t\tconst int a_ = 2 * p_ + q_;");
	e->ind++;
	acc_decode(e, f);
	e->ind--;
	line(e, "\t\tv_[q_] = (%s)(%s);", ct, sb_str(&val));
	line(e, "\t}");
	line(e, "\tconst int a_ = 2 * p_, mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2;", f->wg_cols / 2, f->wg_cols / 2);
	line(e, "\tconst int row_ = (int)%s[mt_ * 2 + h_];", ix->name);
	line(e, "\tif ((unsigned)row_ < (unsigned)%s%s) {", rows, ix->split != SPLIT_M && r->nwg > 1 && f->split != SPLIT_N ? " && role_wg == 0u" : "");
	line(e, "\t\t%s *const p = col_ + (long long)row_ * %s + 8 * j_;", ct, cexpr_p(e, g->shape[nl + 1]));
	if (v2)
		line(e, "\t\tred_add_v2_f32(p, v_[0], v_[1]);");
	else {
		line(e, "\t\t%s(p, v_[0]);", red);
		line(e, "\t\t%s(p + 1, v_[1]);", red);
	}
	line(e, "\t}");
	line(e, "}");
	e->ind--;
	line(e, "}");
	sb_free(&val);
	(void)sc;
}

/* Record the sum() calls in x (outermost first) in e->sum_expr, naming their temporaries. */
static void collect_sums(Em *e, const Expr *x, int *n)
{
	if (!x)
		return;
	if (is_call(x, "sum") && *n < (int)NELEM(e->sum_expr)) {
		e->sum_expr[*n] = x;
		e->sum_name[*n] = arena_printf(&e->c->arena, "sum%d_", e->nscan++);
		(*n)++;
		return;   /* a sum's argument is a fragment expression without another sum */
	}
	collect_sums(e, x->lhs, n);
	collect_sums(e, x->rhs, n);
	for (int i = 0; i < x->nargs; i++)
		collect_sums(e, x->args[i], n);
}

static void emit_stmt(Em *e, Stmt *s, Scope sc)
{
	int wb = smem_written_by(e->p, s);
	if (wb >= 0 && e->tstore_src && e->tstore_src[wb] && (e->loops > 0 || e->p->persistent || e->tstore_issued[wb]))
		emit_tstore_wait(e, wb, s->span);
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
		line(e, "const %s %s = %s;", sm90_vec_let_type(e, s->src), s->name, cexpr(e, s->src));
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
	case S_TMA_STORE:
		emit_tma_store(e, s, sc);
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
	case S_ASSIGN: case S_STORE: {
		/* sum() calls first, each into a scalar temporary the statement then reads */
		int nsum = 0;
		collect_sums(e, s->src, &nsum);
		if (nsum) {
			ir_comment(e, s->span, "the full reductions (sum) of this statement first");
			line(e, "{");
			e->ind++;
			for (int i = 0; i < nsum; i++)
				if (!sm90_sum_emit(e, e->sum_expr[i], e->sum_name[i], s->span))
					break;
			e->nsum = nsum;
		}
		if (s->kind == S_ASSIGN)
			emit_assign(e, s, sc);
		else
			emit_store(e, s, sc);
		if (nsum) {
			e->ind--;
			line(e, "}");
		}
		e->nsum = 0;
		return;
	}
	case S_LOAD:
		emit_load(e, s, sc);
		return;
	case S_ATOMIC:
		emit_atomic(e, s, sc);
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
			[S_IN] = "nested `in`", [S_CP_ASYNC] = "cp_async", [S_MMA] = "mma (sm_80 mma.sync)",
			[S_LOAD] = "load", [S_ATOMIC] = "atomic_add",
		};
		const char *nm = (s->kind < (int)NELEM(names) && names[s->kind]) ? names[s->kind] : "statement";
		Diag *d = refuse(e, s->span, "CK-LOW-002", "%s is not lowered yet for sm_90a", nm);
		diag_set(&d->hint, "the sm_90a lowering covers roles, pipelined loops, wait/arrive, tma loads and stores, wgmma, wgmma_wait, frag = 0 and accumulator stores");
		return;
	}
	}
}

static void emit_list(Em *e, Stmt **ss, int n, Scope sc)
{
	for (int i = 0; i < n; i++)
		emit_stmt(e, ss[i], sc);
}

/* The grid declaration of the kernel (NULL when there is none). */
static const Decl *grid_decl_of(const Kernel *k)
{
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_GRID)
			return k->decls[i];
	return NULL;
}

/* Bind the grid coordinates of a grouped raster (`grid ... group G`, LANGUAGE.md
 * §4.5) from the linear tile index t (blockIdx.x or the persistent tile):
 * groups of G consecutive rows of the second axis, second axis fastest inside
 * a group, the last group possibly shorter. The same mapping as the hand-tuned
 * prototype (bench/proto/gemm_sm90.cu, tile_coords). */
static void emit_raster(Em *e, const char *t)
{
	const Plan *p = e->p;
	const Decl *g = grid_decl_of(p->kernel);
	const char *x = g && g->grid_vars ? g->grid_vars[0] : NULL, *y = g && g->grid_vars ? g->grid_vars[1] : NULL;
	char *tx = cexpr_p(e, p->space[0]), *ty = cexpr_p(e, p->space[1]);
	int G = p->group;
	if (g)
		ir_comment(e, g->span, arena_printf(&e->c->arena, "grouped raster: %d rows of %s per group, %s fastest inside a group", G,
		                                    y ? y : "y", y ? y : "y"));
	line(e, "const int cake_grp_tiles = %d * %s;   /* tiles per group: G * tiles_x */", G, tx);
	line(e, "const int cake_first = %s / cake_grp_tiles * %d;   /* first %s row of this group */", t, G, y ? y : "y");
	line(e, "const int cake_gs = %s - cake_first < %d ? %s - cake_first : %d;   /* rows in this group (the last may be short) */", ty, G, ty, G);
	line(e, "const int cake_r = %s %% cake_grp_tiles;", t);
	if (y)
		line(e, "const int %s = cake_first + cake_r %% cake_gs;", y);
	if (x)
		line(e, "const int %s = cake_r / cake_gs;", x);
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
		if (p->frags[i].role == ri && p->frags[i].regs_per_thread > 0) {
			const PlanFrag *f = &p->frags[i];
			if (f->layout == FRAG_ACC)
				line(e, "%s %s[%d];   /* frag %s: %lld x %lld per warpgroup, wgmma accumulator layout */", ftype_of(f->dt), f->name,
				     f->regs_per_thread, f->name, f->wg_rows, f->wg_cols);
			else if (f->layout == FRAG_TILE)
				line(e, "%s %s[%d];   /* frag %s: thread tile %lld x %lld, %d rows of %d columns per thread (lanes %d) */", ftype_of(f->dt), f->name,
				     f->regs_per_thread, f->name, f->rows, f->cols, f->regs_per_thread / sm90_tile_pc(e, f), sm90_tile_pc(e, f), f->lanes);
			else if (f->layout == FRAG_TROW || f->layout == FRAG_TCOL)
				line(e, "%s %s[%d];   /* frag %s: %lld %s of the role's thread tiles, %s */", ftype_of(f->dt), f->name, f->regs_per_thread, f->name,
				     f->rows, f->layout == FRAG_TROW ? "rows" : "columns",
				     f->layout == FRAG_TROW ? "the rows this thread holds" : "the columns this lane holds (the same in every row group)");
			else if (f->layout == FRAG_VEC)
				line(e, "%s %s[%d];   /* frag %s: %lld elements over the role's %d threads, %s */", ftype_of(f->dt), f->name,
				     f->regs_per_thread, f->name, f->rows, r->nthreads,
				     f->regs_per_thread == 1 ? "thread t holds element t"
				                             : arena_printf(&e->c->arena, "thread t holds elements %d*t .. %d*t + %d", f->regs_per_thread,
				                                            f->regs_per_thread, f->regs_per_thread - 1));
			else
				line(e, "%s %s[%d];   /* frag %s: %lld %s per warpgroup, %s */", ftype_of(f->dt), f->name, f->regs_per_thread, f->name,
				     f->layout == FRAG_ROW ? f->wg_rows : f->wg_cols, f->layout == FRAG_ROW ? "rows" : "columns",
				     f->layout == FRAG_ROW ? "2 rows per thread per 64-row tile" : "columns 8j + 2*(lane%4) + {0,1}");
		}
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
	Scope sc = {0};
	e->armed = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(p->nbarriers + 1));
	e->tstore_src = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(p->nbuffers + 1));
	e->tstore_issued = arena_alloc(&e->c->arena, sizeof(bool) * (size_t)(p->nbuffers + 1));
	collect_tstores(p, in->body, in->nbody, e->tstore_src);
	if (p->persistent) {
		line(e, "for (int cake_tile = blockIdx.x; cake_tile < cake_tiles; cake_tile += gridDim.x) {   /* persistent: walk the tiles */");
		e->ind++;
		const Decl *gd = grid_decl_of(p->kernel);
		const char **gv = gd ? gd->grid_vars : NULL;
		if (p->group) {
			emit_raster(e, "cake_tile");
		} else {
			const char *div = "";
			for (int i = 0; i < p->space_rank; i++) {
				char *ext = cexpr_p(e, p->space[i]);
				if (gv && gv[i])
					line(e, "const int %s = cake_tile%s %% %s;", gv[i], div, ext);
				div = arena_printf(&e->c->arena, "%s / %s", div, ext);
			}
		}
	}
	emit_list(e, in->body, in->nbody, sc);
	if (p->persistent) {
		e->ind--;
		line(e, "}");
	}
	bool stores = false;
	for (int b = 0; b < p->nbuffers; b++)
		stores |= e->tstore_issued[b];
	if (stores) {
		ir_comment(e, in->span, "derived: the role's TMA stores have read shared memory before the CTA exits");
		if (e->elected) {
			line(e, "bulk_wait_read<0>();");
		} else {
			line(e, "if (%s)", tstore_issuer(e));
			line(e, "\tbulk_wait_read<0>();");
		}
	}
	e->tstore_src = e->tstore_issued = NULL;
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
	check_tstore_writers(&e);

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
	if (!p->persistent && p->group) {
		emit_raster(&e, "(int)blockIdx.x");
	} else if (!p->persistent) {
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
		if (p->group)
			sb_printf(cuda, ", tiles in grouped raster order (group %d)", p->group);
	} else {
		sb_putc(cuda, '(');
		for (int i = 0; i < p->grid_rank; i++) {
			if (i)
				sb_puts(cuda, ", ");
			lower_expr_c(cuda, p->grid[i], k);
		}
		sb_putc(cuda, ')');
		if (p->group)
			sb_printf(cuda, " (1-D: every tile, in grouped raster order, group %d)", p->group);
	}
	sb_puts(cuda, ".\n// Do not edit: change the .cake schedule and rebuild (`cake build --emit=plan` shows the derivation).\n\n");
	sm90_prelude_emit(cuda, &e, debug_hang);
	sb_putc(cuda, '\n');
	sb_puts(cuda, sb_str(&body));
	sb_free(&body);
	return e.ok;
}

/* ---- the helpers sm90_vec.c shares (sm90_int.h) ---- */

void sm90_ir_comment(Em *e, Span sp, const char *extra)
{
	ir_comment(e, sp, extra);
}

char *sm90_cexpr(Em *e, const Expr *x)
{
	return cexpr(e, x);
}

char *sm90_cexpr_p(Em *e, const Expr *x)
{
	return cexpr_p(e, x);
}

const char *sm90_ctype(DType t)
{
	return ctype_of(t);
}

const char *sm90_ftype(DType t)
{
	return ftype_of(t);
}

const PlanFrag *sm90_frag_of(Em *e, const Expr *x)
{
	return frag_of(e, x);
}

bool sm90_fx_emit(Em *e, StrBuf *o, const Expr *x, const Fx *c)
{
	return fx_emit(e, o, x, c);
}

void sm90_acc_decode(Em *e, const PlanFrag *ref)
{
	acc_decode(e, ref);
}

const PlanFrag *sm90_find_acc(Em *e, const Expr *x)
{
	return find_acc(e, x);
}
