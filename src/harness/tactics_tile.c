/*
 * tactics_tile.c — the tile tactics: tile_m, tile_n, tile_k, centroid_tile,
 * swizzle and split_k.
 *
 * All of them start from the kernel's main matrix product (tac_gemm: the
 * first wgmma/mma in a pipelined loop) and the extent classes of its M, N
 * and K axes (tactic_axes.c), so "the M tile" means exactly the extents that
 * must equal the accumulator's rows — never another 128 that happens to have
 * the same value.
 *
 *   tile_m:S, tile_n:S   resize the M / N class, which a grid coordinate must
 *                        step (`bm * 128`); accumulator splits are repaired
 *                        (tac_fix_splits) when the rows per warpgroup change;
 *   centroid_tile:W      resize the N class when a pipelined loop steps it
 *                        (the k-means assign streams centroid tiles through
 *                        its ring): buffers, the ‖c‖² slice, the distance
 *                        tile, `targ + j * 128`, `K / 128`, `K % 128 == 0`;
 *   tile_k:S             resize the K class (a loop steps it); a swizzled
 *                        wgmma operand's row must be exactly one swizzle span,
 *                        so the operands' swizzle becomes S x dtype bytes;
 *   swizzle:MODE         the same rewrite seen from the other side: the
 *                        operands get MODE and the K step becomes span /
 *                        dtype bytes; with :BUF, a buffer that is not a wgmma
 *                        operand just changes its swizzle (its rows must fit
 *                        the span);
 *   split_k:S            a third grid axis of S CTAs, each running K / S of
 *                        the K loop (`ks * (K / (c S)) .. (ks + 1) * (K / (c S))`,
 *                        the form of tests/corpus/good/gemm_splitk_atomic.cake);
 *                        the epilogue `store C <- bf16(acc)` becomes
 *                        `atomic_add C <- acc` with C in f32, and a `group`
 *                        clause is dropped (it needs a 2-D grid). C must be
 *                        zero before the launch (cake run zeroes atomic outputs).
 */
#include "tactics_int.h"

#include <string.h>

static bool tile_size_parse(TacCtx *t)
{
	if (!tac_int_arg(t, 0, 8, 256, "the tile size"))
		return false;
	if (t->num[0] % 8)
		return tac_fail(t, "the tile size must be a multiple of 8, not %lld", t->num[0]);
	return true;
}

static const char *first_var(const TileInfo *ti)
{
	return ti->nvars ? ti->vars[0]->name : "?";
}

static void propose_sizes(TacCtx *t, int slot, const long long *sizes, int n)
{
	TileInfo ti;
	if (!ax_tile_info(t, slot, "the tile", &ti))
		return;
	for (int i = 0; i < n; i++)
		if (sizes[i] != ti.size)
			tac_propose(t, "%lld", sizes[i]);
}

static const long long mn_sizes[] = {64, 128, 256};

/* ---- tile_m:SIZE ---- */

/* Decode tile_m's arguments (Tactic.parse). */
bool tile_m_parse(TacCtx *t)
{
	return tile_size_parse(t);
}

/* tile_m's precondition (Tactic.pre). */
bool tile_m_pre(TacCtx *t)
{
	if (!tac_gemm(t))
		return false;
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.m, "the M tile", &ti))
		return false;
	if (!ti.grid)
		return tac_fail(t, "the M tile of kernel '%s' (%s) is stepped by loop '%s', not by a grid coordinate",
		                t->k->name, ti.names, first_var(&ti));
	if (ti.size == t->num[0])
		return tac_fail(t, "the M tile of kernel '%s' is already %lld", t->k->name, ti.size);
	if (t->gemm.mm->kind == S_WGMMA && t->num[0] % 64)
		return tac_fail(t, "wgmma takes the M tile in rows of 64 per warpgroup; %lld is not a multiple of 64", t->num[0]);
	return true;
}

/* tile_m's rewrite of the AST (Tactic.apply). */
bool tile_m_apply(TacCtx *t)
{
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.m, "the M tile", &ti))
		return false;
	ax_tile_resize(t, &ti, t->num[0]);
	return tac_fix_splits(t, t->gemm.role, tac_role_wgs(t->gemm.role), true);
}

/* Push tile_m's proposal arguments for this kernel (Tactic.propose). */
void tile_m_propose(TacCtx *t)
{
	if (tac_gemm(t))
		propose_sizes(t, t->gemm.m, mn_sizes, 3);
}

/* ---- tile_n:SIZE ---- */

/* Decode tile_n's arguments (Tactic.parse). */
bool tile_n_parse(TacCtx *t)
{
	return tile_size_parse(t);
}

/* tile_n's precondition (Tactic.pre). */
bool tile_n_pre(TacCtx *t)
{
	if (!tac_gemm(t))
		return false;
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.n, "the N tile", &ti))
		return false;
	if (!ti.grid)
		return tac_fail(t, "kernel '%s' has no ring buffer indexed by the grid's N tile: the N axis of its matrix product (%s) is stepped by loop '%s' (see centroid_tile)",
		                t->k->name, ti.names, first_var(&ti));
	if (ti.size == t->num[0])
		return tac_fail(t, "the N tile of kernel '%s' is already %lld", t->k->name, ti.size);
	return true;
}

/* tile_n's rewrite of the AST (Tactic.apply). */
bool tile_n_apply(TacCtx *t)
{
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.n, "the N tile", &ti))
		return false;
	ax_tile_resize(t, &ti, t->num[0]);
	return tac_fix_splits(t, t->gemm.role, tac_role_wgs(t->gemm.role), true);
}

/* Push tile_n's proposal arguments for this kernel (Tactic.propose). */
void tile_n_propose(TacCtx *t)
{
	if (tac_gemm(t))
		propose_sizes(t, t->gemm.n, mn_sizes, 3);
}

/* ---- centroid_tile:W ---- */

/* Decode centroid_tile's arguments (Tactic.parse). */
bool centroid_tile_parse(TacCtx *t)
{
	return tile_size_parse(t);
}

/* centroid_tile's precondition (Tactic.pre). */
bool centroid_tile_pre(TacCtx *t)
{
	if (!tac_gemm(t))
		return false;
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.n, "the centroid tile", &ti))
		return false;
	if (!ti.loop || !ti.ring)
		return tac_fail(t, "kernel '%s' has no ring buffer indexed by a loop over centroid tiles: the N axis of its matrix product (%s) is tiled by grid coordinate '%s'",
		                t->k->name, ti.names, first_var(&ti));
	if (ti.size == t->num[0])
		return tac_fail(t, "the centroid tile of kernel '%s' is already %lld", t->k->name, ti.size);
	return true;
}

/* centroid_tile's rewrite of the AST (Tactic.apply). */
bool centroid_tile_apply(TacCtx *t)
{
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.n, "the centroid tile", &ti))
		return false;
	ax_tile_resize(t, &ti, t->num[0]);
	return tac_fix_splits(t, t->gemm.role, tac_role_wgs(t->gemm.role), true);
}

/* Push centroid_tile's proposal arguments for this kernel (Tactic.propose). */
void centroid_tile_propose(TacCtx *t)
{
	if (tac_gemm(t))
		propose_sizes(t, t->gemm.n, mn_sizes, 3);
}

/* ---- tile_k:SIZE (and the swizzle it implies) ---- */

static Swizzle span_mode(long long bytes)
{
	return bytes == 32 ? SWZ_32B : bytes == 64 ? SWZ_64B : bytes == 128 ? SWZ_128B : SWZ_NONE;
}

/* Check that the K class can step by `size`; fills ti. */
static bool k_step_ok(TacCtx *t, long long size, const char *what, TileInfo *ti)
{
	if (!tac_gemm(t))
		return false;
	if (!ax_tile_info(t, t->gemm.kk, what, ti))
		return false;
	if (!ti->loop || ti->grid)
		return tac_fail(t, "%s of kernel '%s' (%s) is not stepped by the main loop", what, t->k->name, ti->names);
	Decl *bufs[16];
	int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
	for (int i = 0; i < nb; i++) {
		int el = dtype_size(bufs[i]->dt);
		int gran = el == 1 ? 32 : 16;
		if (size % gran)
			return tac_fail(t, "matrix products take K in steps of %d %s elements; %lld is not a multiple", gran,
			                dtype_name(bufs[i]->dt), size);
		if (bufs[i]->swizzle != SWZ_NONE && span_mode(size * el) == SWZ_NONE)
			return tac_fail(t, "a K step of %lld makes the rows of '%s' %lld bytes, which no swizzle span (32B, 64B, 128B) matches, and swizzled matrix-product operands need rows of exactly one span",
			                size, bufs[i]->name, size * el);
	}
	return true;
}

static bool k_step_apply(TacCtx *t, long long size)
{
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.kk, "the K step", &ti))
		return false;
	Decl *bufs[16];
	int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
	ax_tile_resize(t, &ti, size);
	for (int i = 0; i < nb; i++)
		if (bufs[i]->swizzle != SWZ_NONE)
			bufs[i]->swizzle = span_mode(size * dtype_size(bufs[i]->dt));
	return true;
}

/* Decode tile_k's arguments (Tactic.parse). */
bool tile_k_parse(TacCtx *t)
{
	return tile_size_parse(t);
}

/* tile_k's precondition (Tactic.pre). */
bool tile_k_pre(TacCtx *t)
{
	TileInfo ti;
	if (!k_step_ok(t, t->num[0], "the K step", &ti))
		return false;
	if (ti.size == t->num[0])
		return tac_fail(t, "the K step of kernel '%s' is already %lld", t->k->name, ti.size);
	return true;
}

/* tile_k's rewrite of the AST (Tactic.apply). */
bool tile_k_apply(TacCtx *t)
{
	return k_step_apply(t, t->num[0]);
}

/* Push tile_k's proposal arguments for this kernel (Tactic.propose). */
void tile_k_propose(TacCtx *t)
{
	static const long long sizes[] = {16, 32, 64, 128};
	if (tac_gemm(t))
		propose_sizes(t, t->gemm.kk, sizes, 4);
}

/* ---- swizzle:MODE[:BUF] ---- */

/* Decode swizzle's arguments (Tactic.parse). */
bool swizzle_parse(TacCtx *t)
{
	static const char *const names[] = {"none", "32B", "64B", "128B"};
	for (int i = 0; i < 4; i++)
		if (strcmp(t->arg[0], names[i]) == 0) {
			t->num[0] = i;   /* the Swizzle enum order */
			if (i == SWZ_NONE && t->nargs < 2)
				return tac_fail(t, "swizzle none needs a buffer (swizzle:none:BUF); wgmma operands must be swizzled");
			return true;
		}
	return tac_fail(t, "the swizzle must be 128B, 64B or 32B (or none, for one buffer), not '%s'", t->arg[0]);
}

/* The buffer named by swizzle's second argument, when it is not a wgmma operand. */
static bool plain_buffer(TacCtx *t, Decl **out)
{
	*out = NULL;
	if (t->nargs < 2)
		return false;
	Decl *b = tac_decl(t->k, D_SMEM, t->arg[1]);
	*out = b;
	if (!b)
		return false;
	StrBuf *why = t->why;
	StrBuf scratch = {0};
	t->why = &scratch;
	bool operand = false;
	if (tac_gemm(t)) {
		Decl *bufs[16];
		int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
		for (int i = 0; i < nb; i++)
			operand = operand || bufs[i] == b;
	}
	t->why = why;
	sb_free(&scratch);
	return !operand;
}

static bool operand_step(TacCtx *t, long long *size)
{
	if (!tac_gemm(t))
		return false;
	Decl *bufs[16];
	int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
	if (nb == 0)
		return tac_fail(t, "the matrix product of kernel '%s' reads no shared buffer", t->k->name);
	int el = dtype_size(bufs[0]->dt);
	for (int i = 0; i < nb; i++) {
		if (bufs[i]->swizzle == SWZ_NONE)
			return tac_fail(t, "operand '%s' of kernel '%s' is not swizzled; the swizzle tactic changes swizzled wgmma operands",
			                bufs[i]->name, t->k->name);
		if (dtype_size(bufs[i]->dt) != el)
			return tac_fail(t, "the operands of kernel '%s' have different element sizes", t->k->name);
	}
	int span = swizzle_bytes((Swizzle)t->num[0]);
	if (span % el)
		return tac_fail(t, "a %s span does not hold whole %s elements", swizzle_name((Swizzle)t->num[0]), dtype_name(bufs[0]->dt));
	*size = span / el;
	bool same = true;
	for (int i = 0; i < nb; i++)
		same = same && bufs[i]->swizzle == (Swizzle)t->num[0];
	if (same)
		return tac_fail(t, "the operands of kernel '%s' already use swizzle %s", t->k->name, swizzle_name((Swizzle)t->num[0]));
	return true;
}

/* swizzle's precondition (Tactic.pre). */
bool swizzle_pre(TacCtx *t)
{
	Decl *b;
	if (plain_buffer(t, &b)) {
		long long inner = 0;
		tac_const(b->shape[b->rank - 1], &inner);
		long long row = inner * dtype_size(b->dt);
		Swizzle m = (Swizzle)t->num[0];
		if (b->swizzle == m)
			return tac_fail(t, "buffer '%s' already has swizzle %s", b->name, swizzle_name(m));
		if (m != SWZ_NONE && (row > swizzle_bytes(m) || row % 16))
			return tac_fail(t, "rows of buffer '%s' are %lld bytes, which a %s swizzle cannot hold (at most the span, a multiple of 16)",
			                b->name, row, swizzle_name(m));
		return true;
	}
	if (t->nargs > 1 && !b)
		return tac_fail(t, "kernel '%s' has no shared buffer '%s'", t->k->name, t->arg[1]);
	long long size;
	TileInfo ti;
	return operand_step(t, &size) && k_step_ok(t, size, "the K step", &ti);
}

/* swizzle's rewrite of the AST (Tactic.apply). */
bool swizzle_apply(TacCtx *t)
{
	Decl *b;
	if (plain_buffer(t, &b)) {
		b->swizzle = (Swizzle)t->num[0];
		return true;
	}
	long long size;
	if (!operand_step(t, &size) || !k_step_apply(t, size))
		return false;
	Decl *bufs[16];
	int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
	for (int i = 0; i < nb; i++)
		bufs[i]->swizzle = (Swizzle)t->num[0];
	return true;
}

/* Push swizzle's proposal arguments for this kernel (Tactic.propose). */
void swizzle_propose(TacCtx *t)
{
	if (!tac_gemm(t))
		return;
	Decl *bufs[16];
	int nb = ax_class_buffers(tac_axes(t), t->gemm.kk, bufs, 16);
	if (nb == 0)
		return;
	static const char *const modes[] = {"32B", "64B", "128B"};
	for (int i = 0; i < 3; i++)
		if (strcmp(swizzle_name(bufs[0]->swizzle), modes[i]) != 0)
			tac_propose(t, "%s", modes[i]);
}

/* ---- split_k:S ---- */

typedef struct Epilogue {
	const Decl *acc;
	Stmt *store;         /* the one statement writing the accumulator to global memory */
	int nstores;
	Stmt *tma_store;
	Decl *out;           /* its global param */
	int out_writes;      /* statements writing that param */
} Epilogue;

static bool mentions(const Expr *e, const Decl *d)
{
	if (!e)
		return false;
	if (e->kind == E_IDENT && e->sym && e->sym->decl == d)
		return true;
	if (mentions(e->lhs, d) || mentions(e->rhs, d) || mentions(e->base, d))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (mentions(e->args[i], d))
			return true;
	return false;
}

static Decl *global_of(const Expr *ref)
{
	const Expr *b = ref && ref->kind == E_INDEX ? ref->base : NULL;
	Decl *d = b && b->sym ? b->sym->decl : NULL;
	return d && d->kind == D_PARAM && d->space == SP_GLOBAL ? d : NULL;
}

static void scan_epilogue(Stmt *s, void *arg)
{
	Epilogue *e = arg;
	if (s->kind == S_TMA_STORE && global_of(s->dst))
		e->tma_store = s;
	if ((s->kind == S_STORE || s->kind == S_ATOMIC) && global_of(s->dst) && mentions(s->src, e->acc)) {
		e->store = s;
		e->nstores++;
	}
}

typedef struct Writes {
	const Decl *param;
	int n;
} Writes;

static void scan_writes(Stmt *s, void *arg)
{
	Writes *w = arg;
	if ((s->kind == S_STORE || s->kind == S_ATOMIC || s->kind == S_TMA_STORE) && global_of(s->dst) == w->param)
		w->n++;
}

/* The accumulator itself, or the argument of a cast of it. */
static bool acc_value(const Expr *e, const Decl *acc)
{
	if (e && e->kind == E_CALL && e->nargs == 1 && builtin_find(e->name) &&
	    builtin_find(e->name)->rule == BR_CAST)
		e = e->args[0];
	return e && e->kind == E_IDENT && e->sym && e->sym->decl == acc;
}

/* Decode split_k's arguments (Tactic.parse). */
bool split_k_parse(TacCtx *t)
{
	return tac_int_arg(t, 0, 2, 64, "the number of K splits");
}

/* split_k's precondition (Tactic.pre). */
bool split_k_pre(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *g = tac_grid(k);
	if (!g)
		return tac_fail(t, "kernel '%s' has no grid", k->name);
	if (g->nexprs >= 3)
		return tac_fail(t, "the grid of kernel '%s' already has %d axes; split_k adds a third", k->name, g->nexprs);
	TileInfo ti;
	if (!tac_gemm(t) || !ax_tile_info(t, t->gemm.kk, "the K step", &ti))
		return false;
	if (!ti.loop || ti.grid)
		return tac_fail(t, "the K step of kernel '%s' (%s) is not stepped by a loop", k->name, ti.names);
	const char *hi = NULL;
	for (int i = 0; i < ti.nvars; i++) {
		Stmt *f = ti.vars[i]->stmt;
		long long lo;
		bool whole = f && tac_const(f->lo, &lo) && lo == 0 && f->hi && f->hi->kind == E_BINARY && f->hi->op == '/' &&
		             f->hi->lhs->kind == E_IDENT && f->hi->rhs->kind == E_INT;
		if (!whole)
			return tac_fail(t, "loop '%s' of kernel '%s' does not run over the whole K dimension as `0 .. K / c` (is it split already?)",
			                ti.vars[i]->name, k->name);
		if (hi && strcmp(hi, f->hi->lhs->name) != 0)
			return tac_fail(t, "the K loops of kernel '%s' run over different dims", k->name);
		hi = f->hi->lhs->name;
	}
	Epilogue e = {t->gemm.acc, NULL, 0, NULL, NULL, 0};
	tac_each_stmt(k, scan_epilogue, &e);
	if (e.tma_store)
		return tac_fail(t, "the epilogue of kernel '%s' writes global memory with a TMA store (line %d), which cannot add partial tiles atomically",
		                k->name, e.tma_store->span.line);
	if (e.nstores != 1 || e.store->kind != S_STORE || !acc_value(e.store->src, t->gemm.acc))
		return tac_fail(t, "kernel '%s' does not write its accumulator '%s' with exactly one `store C[...] <- %s` (or a cast of it)",
		                k->name, t->gemm.acc->name, t->gemm.acc->name);
	if (e.store->ploop)
		return tac_fail(t, "the store of accumulator '%s' (line %d) is inside the pipelined loop", t->gemm.acc->name, e.store->span.line);
	Decl *out = global_of(e.store->dst);
	if (out->dt != DT_BF16 && out->dt != DT_F16 && out->dt != DT_F32)
		return tac_fail(t, "output '%s' of kernel '%s' is %s; split_k accumulates into f32", out->name, k->name, dtype_name(out->dt));
	Writes w = {out, 0};
	tac_each_stmt(k, scan_writes, &w);
	if (w.n != 1)
		return tac_fail(t, "output '%s' of kernel '%s' is written by %d statements; split_k needs the epilogue to be the only one", out->name, k->name, w.n);
	return true;
}

/* split_k's rewrite of the AST (Tactic.apply). */
bool split_k_apply(TacCtx *t)
{
	Kernel *k = t->k;
	Decl *g = tac_grid(k);
	long long S = t->num[0];
	TileInfo ti;
	if (!ax_tile_info(t, t->gemm.kk, "the K step", &ti))
		return false;
	/* a fresh coordinate name */
	const char *ks = "ks";
	for (int i = 2; tac_name_used(k, ks); i++)
		ks = arena_printf(&t->c->arena, "ks%d", i);
	int n = g->nexprs;
	Expr **ex = arena_alloc(&t->c->arena, sizeof(Expr *) * (size_t)(n + 1));
	const char **vars = arena_alloc(&t->c->arena, sizeof(char *) * (size_t)(n + 1));
	Span *spans = arena_alloc(&t->c->arena, sizeof(Span) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		ex[i] = g->exprs[i];
		vars[i] = g->grid_vars[i];
		spans[i] = g->grid_var_spans ? g->grid_var_spans[i] : NOSPAN;
	}
	ex[n] = tac_int(t, S);
	vars[n] = ks;
	spans[n] = NOSPAN;
	g->exprs = ex;
	g->grid_vars = vars;
	g->grid_var_spans = spans;
	g->nexprs = n + 1;
	g->group = 0;
	g->group_stated = false;
	const char *dim = NULL;
	long long c = 0;
	for (int i = 0; i < ti.nvars; i++) {
		Stmt *f = ti.vars[i]->stmt;
		dim = f->hi->lhs->name;
		c = f->hi->rhs->ival;
		f->lo = tac_bin(t, '*', tac_ident(t, ks), tac_bin(t, '/', tac_ident(t, dim), tac_int(t, c * S)));
		f->hi = tac_bin(t, '*', tac_bin(t, '+', tac_ident(t, ks), tac_int(t, 1)),
		                tac_bin(t, '/', tac_ident(t, dim), tac_int(t, c * S)));
	}
	if (dim)
		ax_scale_domain(t, dim, c, c * S, false);
	Epilogue e = {t->gemm.acc, NULL, 0, NULL, NULL, 0};
	tac_each_stmt(k, scan_epilogue, &e);
	e.store->kind = S_ATOMIC;
	e.store->src = tac_ident(t, t->gemm.acc->name);
	global_of(e.store->dst)->dt = DT_F32;
	return true;
}

/* Push split_k's proposal arguments for this kernel (Tactic.propose). */
void split_k_propose(TacCtx *t)
{
	tac_propose(t, "2");
	tac_propose(t, "4");
	tac_propose(t, "8");
}
