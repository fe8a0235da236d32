/*
 * sm90_tile.c — thread tiles for sm_90a: rank-2 SIMT fragments (`lanes L`)
 * and their row and column vectors.
 *
 * A thread tile `frag S: f32[R, C] in ROLE lanes L` is plain per-thread data
 * laid out for row work (lower.h, FRAG_TILE): the role's W warps take the rows
 * in turn, G = 32 / L rows per warp at a time, and each row is spread over L
 * consecutive lanes holding P = C / L contiguous columns each. Thread (warp w
 * of the role, lane l) holds rows (i W + w) G + l / L for i < R / (W G), at
 * register index i P + j for its column (l % L) P + j. Consequences, which are
 * why the layout exists (the KDA decode step, row-wise epilogues):
 *
 *   loads/stores  a row of a global tile is one contiguous piece per lane: each
 *                 lane moves its P elements in the widest access (up to 16
 *                 bytes) that divides P * size and every provable factor of the
 *                 offset, so a warp covers G whole rows per instruction,
 *                 coalesced; a column vector (FRAG_TCOL, [C]) loads the same
 *                 pieces (replicated over rows and warps); a row vector
 *                 (FRAG_TROW, [R]) one element per held row;
 *   rowsum etc.   per thread over its P columns, then log2(L) xor shuffles
 *                 inside the L lanes of the row: no shared memory;
 *   colsum etc.   per thread over its rows, xor shuffles across the G row
 *                 groups, then across the warps through a __shared__ array
 *                 between two named barriers over the role;
 *   sum(x)        a full reduction to one value in every thread: for a column
 *                 vector only the L lanes of a row group (it is replicated
 *                 elsewhere), for a row vector, a tile or a thread vector the
 *                 warp, then the warps through shared memory;
 *   broadcasts    rows(v) reads the row vector at i, cols(v) the column vector
 *                 at j; both take any vector expression (cols(alpha * k)).
 *
 * Element-wise math over these layouts is the generic register loop of sm90.c
 * (index a_ = i_ P + j_ for a tile, r_ for a row vector, c_ for a column
 * vector). Refused with CK-LOW-002 (loads), CK-LOW-011 (stores): references
 * other than point indices followed by the tile's two ranges (or the vector's
 * one range) over the innermost dimensions, lengths other than the
 * fragment's, shared-memory tiles, dtype changes in a load.
 */
#include "sm90_int.h"

#include <string.h>

static const PlanRole *role_of(const Em *e, const PlanFrag *f)
{
	return &e->p->roles[f->role];
}

int sm90_tile_pc(const Em *e, const PlanFrag *f)
{
	(void)e;
	return f->layout == FRAG_TCOL ? f->regs_per_thread : (int)(f->cols / f->lanes);
}

/* Rows a thread holds (tiles and row vectors). */
static int tile_rt(const Em *e, const PlanFrag *f)
{
	return f->layout == FRAG_TILE ? f->regs_per_thread / sm90_tile_pc(e, f) : f->regs_per_thread;
}

static const char *warp_in_role(Em *e, const PlanRole *r)
{
	return r->warp_lo ? arena_printf(&e->c->arena, "((int)warp - %d)", r->warp_lo) : "(int)warp";
}

char *sm90_tile_row(Em *e, const PlanFrag *f, const char *i)
{
	const PlanRole *r = role_of(e, f);
	int W = r->nwarps, G = 32 / f->lanes;
	const char *base = W == 1 ? arena_printf(&e->c->arena, "(%s)", i)
	                          : arena_printf(&e->c->arena, "(%s) * %d + %s", i, W, warp_in_role(e, r));
	if (G == 1)
		return arena_printf(&e->c->arena, "(%s)", base);
	return arena_printf(&e->c->arena, "((%s) * %d + (int)(threadIdx.x %% 32u) / %d)", base, G, f->lanes);
}

char *sm90_tile_col(Em *e, const PlanFrag *f, const char *j)
{
	if (f->lanes == 1)
		return arena_printf(&e->c->arena, "(%s)", j);
	return arena_printf(&e->c->arena, "((int)(threadIdx.x %% %du) * %d + (%s))", (unsigned)f->lanes, sm90_tile_pc(e, f), j);
}

/* ---- references ---- */

static bool plain(DType t)
{
	return t == DT_BF16 || t == DT_F16 || t == DT_F32 || t == DT_I32 || t == DT_U32;
}

/* A global reference with point indices, then `nr` ranges (or `:`) over the
 * innermost dimensions: the pieces of its element offset as C text and their
 * provable multiples (0: provably 0). */
typedef struct TRef {
	const Decl *g;
	const char *lead;           /* the point indices' offset ("" when none) */
	long long mlead;
	const char *start[2];       /* the starts of the ranges ("0") */
	long long mstart[2];
	long long len[2];
	const char *ld;             /* the innermost extent (the row stride of a tile) */
	long long mld;
} TRef;

static bool tref(Em *e, const Expr *x, int nr, TRef *a)
{
	memset(a, 0, sizeof *a);
	if (!x || x->kind != E_INDEX || !x->base || x->base->kind != E_IDENT)
		return false;
	a->g = sm90_global(e, x->base->name);
	const Decl *g = a->g;
	if (!g || g->rank != x->nslices || g->rank < nr || !plain(g->dt))
		return false;
	int r = g->rank, np = r - nr;
	for (int i = 0; i < np; i++)
		if (x->slices[i].kind != SL_POINT || sm90_frag_of(e, x->slices[i].start))
			return false;
	StrBuf b = {0};
	sm90_point_offset(e, &b, x, g, np);
	a->lead = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	for (int i = 0; i < np; i++) {
		long long m = sm90_known_multiple(e, x->slices[i].start);
		for (int j = i + 1; j < r; j++)
			m *= sm90_known_multiple(e, g->shape[j]);
		a->mlead = sm90_gcd(a->mlead, m);
	}
	for (int t = 0; t < nr; t++) {
		const Slice *sl = &x->slices[np + t];
		long long v;
		if (sl->kind == SL_RANGE) {
			if (!eval_expr(sl->len, e->k, NULL, &a->len[t]))
				return false;
			bool zero = eval_expr(sl->start, e->k, NULL, &v) && v == 0;
			a->start[t] = zero ? "0" : sm90_cexpr_p(e, sl->start);
			a->mstart[t] = zero ? 0 : sm90_known_multiple(e, sl->start);
		} else if (sl->kind == SL_ALL) {
			if (!eval_expr(g->shape[np + t], e->k, NULL, &a->len[t]))
				return false;
			a->start[t] = "0";
			a->mstart[t] = 0;
		} else {
			return false;
		}
	}
	a->ld = sm90_cexpr_p(e, g->shape[r - 1]);
	a->mld = sm90_known_multiple(e, g->shape[r - 1]);
	return true;
}

/* The widest access (bytes) for runs of `run` elements of size esz at an offset that is a
 * multiple of `mult` elements (0: the offset is 0). */
static int access_width(long long run, int esz, long long mult)
{
	long long align = mult == 0 ? 16 : sm90_gcd(mult * esz, 16);
	int W = 16;
	while (W > esz && ((run * esz) % W || align % W))
		W /= 2;
	return W < esz ? esz : W;
}

static const char *wsuffix(int W)
{
	return W == 2 ? "b16" : W == 4 ? "b32" : W == 8 ? "v2" : "v4";
}

static const char *unpack(DType t, int epc)
{
	switch (t) {
	case DT_BF16: return epc == 1 ? "bf16lo_f32(wv_[0])" : "bf16lo_f32(wv_[k_ / 2] >> (16 * (k_ % 2)))";
	case DT_F16: return epc == 1 ? "f16lo_f32(wv_[0])" : "f16lo_f32(wv_[k_ / 2] >> (16 * (k_ % 2)))";
	case DT_F32: return "__uint_as_float(wv_[k_])";
	case DT_I32: return "(int)wv_[k_]";
	default: return "wv_[k_]";
	}
}

static const char *pack_fmt(DType t)
{
	switch (t) {
	case DT_BF16: return "(u32)bf16_bits(%s)";
	case DT_F16: return "(u32)f16_bits(%s)";
	case DT_F32: return "__float_as_uint((float)(%s))";
	case DT_I32: return "(u32)(int)(%s)";
	default: return "(u32)(%s)";
	}
}

/* "G + lead + extra" as C text (the leading terms that are not empty). */
static const char *base_ptr(Em *e, const TRef *a, const char *extra)
{
	StrBuf b = {0};
	sb_puts(&b, a->g->name);
	if (*a->lead)
		sb_printf(&b, " + %s", a->lead);
	if (extra && *extra)
		sb_printf(&b, " + %s", extra);
	const char *r = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	return r;
}

/* Emit the P-element run of one row (pointer p_) as chunked loads into dst[base + q_ epc + k_]. */
static void run_load(Em *e, const char *ld, int W, int esz, int P, DType dt, const char *dst, const char *base)
{
	int epc = W / esz, nch = P / epc, words = W <= 4 ? 1 : W / 4;
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int q_ = 0; q_ < %d; ++q_) {", nch);
	sm90_line(e, "\tu32 wv_[%d];", words);
	if (W <= 4)
		sm90_line(e, "\twv_[0] = %s_%s(p_ + q_ * %d);", ld, wsuffix(W), epc);
	else
		sm90_line(e, "\t%s_%s(p_ + q_ * %d, wv_);", ld, wsuffix(W), epc);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int k_ = 0; k_ < %d; ++k_)", epc);
	sm90_line(e, "\t\t%s[%s + q_ * %d + k_] = %s;", dst, base, epc, unpack(dt, epc));
	sm90_line(e, "}");
}

void sm90_tile_load(Em *e, Stmt *s, const PlanFrag *f)
{
	int nr = f->layout == FRAG_TILE ? 2 : 1;
	TRef a;
	bool ok = f->role == e->role && f->regs_per_thread > 0 && tref(e, s->src, nr, &a) && a.g->dt == f->dt &&
	          (nr == 2 ? a.len[0] == f->rows && a.len[1] == f->cols : a.len[0] == f->rows);
	if (!ok) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "load into %s '%s' is lowered for sm_90a only as `load %s <- G[i, .., %s]` from a global bf16, f16, f32, i32 or u32 tensor of the same dtype: point indices, then %s",
		                      f->layout == FRAG_TILE ? "thread tile" : "thread-tile vector", f->name, f->name,
		                      nr == 2 ? "r +: R, c +: C" : "s +: n", nr == 2 ? "the tile's rows and columns over the two innermost dimensions" : "one range of the vector's length over the innermost dimension");
		diag_set(&d->resource, "%s", f->name);
		return;
	}
	const PlanRole *ro = role_of(e, f);
	const char *ld = sm90_read_only(e, a.g->name) ? "ld_global_nc" : "ld_global";
	int esz = dtype_size(a.g->dt);
	e->need_gmem = true;
	sm90_line(e, "{");
	e->ind++;
	if (f->layout == FRAG_TILE) {
		int P = sm90_tile_pc(e, f), Rt = tile_rt(e, f);
		long long mult = sm90_gcd(sm90_gcd(sm90_gcd(a.mlead, a.mstart[0] * a.mld), a.mld), sm90_gcd(a.mstart[1], P));
		int W = access_width(P, esz, mult);
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread tile %lld x %lld over %d threads: each lane loads %d contiguous %s of each of its %d rows (%d-byte loads; a warp covers %d whole row%s per load)",
		                                         f->rows, f->cols, ro->nthreads, P, dtype_name(a.g->dt), Rt, W, 32 / f->lanes, f->lanes == 32 ? "" : "s"));
		const char *rowoff = strcmp(a.start[0], "0") ? arena_printf(&e->c->arena, "(long long)%s * %s", a.start[0], a.ld) : "";
		StrBuf x = {0};
		if (*rowoff)
			sb_puts(&x, rowoff);
		if (strcmp(a.start[1], "0"))
			sb_printf(&x, "%s%s", x.len ? " + " : "", a.start[1]);
		if (f->lanes > 1)
			sb_printf(&x, "%s%s", x.len ? " + " : "", sm90_tile_col(e, f, "0"));
		sm90_line(e, "const %s *src_ = %s;", sm90_ctype(a.g->dt), base_ptr(e, &a, sb_str(&x)));
		sb_free(&x);
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int i_ = 0; i_ < %d; ++i_) {", Rt);
		e->ind++;
		sm90_line(e, "const %s *p_ = src_ + (long long)%s * %s;", sm90_ctype(a.g->dt), sm90_tile_row(e, f, "i_"), a.ld);
		run_load(e, ld, W, esz, P, a.g->dt, f->name, arena_printf(&e->c->arena, "i_ * %d", P));
		e->ind--;
		sm90_line(e, "}");
	} else if (f->layout == FRAG_TCOL) {
		int P = f->regs_per_thread;
		long long mult = sm90_gcd(sm90_gcd(a.mlead, a.mstart[0]), P);
		int W = access_width(P, esz, mult);
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread-tile column vector of %lld: each lane loads its %d contiguous %s (%d-byte loads, the same in every row group)",
		                                         f->rows, P, dtype_name(a.g->dt), W));
		StrBuf x = {0};
		if (strcmp(a.start[0], "0"))
			sb_puts(&x, a.start[0]);
		if (f->lanes > 1)
			sb_printf(&x, "%s%s", x.len ? " + " : "", sm90_tile_col(e, f, "0"));
		sm90_line(e, "const %s *p_ = %s;", sm90_ctype(a.g->dt), base_ptr(e, &a, sb_str(&x)));
		sb_free(&x);
		run_load(e, ld, W, esz, P, a.g->dt, f->name, "0");
	} else {
		int Rt = f->regs_per_thread;
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread-tile row vector of %lld: each thread loads the %d element%s of its rows", f->rows, Rt, Rt == 1 ? "" : "s"));
		sm90_line(e, "const %s *p_ = %s;", sm90_ctype(a.g->dt), base_ptr(e, &a, strcmp(a.start[0], "0") ? a.start[0] : ""));
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int i_ = 0; i_ < %d; ++i_) {", Rt);
		const char *u = a.g->dt == DT_BF16 ? "bf16lo_f32(wv_)" : a.g->dt == DT_F16 ? "f16lo_f32(wv_)" : a.g->dt == DT_F32 ? "__uint_as_float(wv_)" :
		                a.g->dt == DT_I32 ? "(int)wv_" : "wv_";
		sm90_line(e, "\tconst u32 wv_ = %s_%s(p_ + %s);", ld, esz == 2 ? "b16" : "b32", sm90_tile_row(e, f, "i_"));
		sm90_line(e, "\t%s[i_] = %s;", f->name, u);
		sm90_line(e, "}");
	}
	e->ind--;
	sm90_line(e, "}");
}

/* The P-element run of one row (pointer p_) as chunked stores of the value val
 * (C text using a_ / j_ / c_, defined per element by `defs`). */
static void run_store(Em *e, int W, int esz, int P, DType dt, const char *defs, const char *val)
{
	int epc = W / esz, nch = P / epc, words = W <= 4 ? 1 : W / 4;
	char *pv = arena_printf(&e->c->arena, pack_fmt(dt), val);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int q_ = 0; q_ < %d; ++q_) {", nch);
	sm90_line(e, "\tu32 wv_[%d] = {0u};", words);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int k_ = 0; k_ < %d; ++k_) {", epc);
	sm90_line(e, "\t\t%s", arena_printf(&e->c->arena, defs, epc, epc));
	if (esz == 2)
		sm90_line(e, "\t\twv_[k_ / 2] |= %s << (16 * (k_ %% 2));", pv);
	else
		sm90_line(e, "\t\twv_[k_] = %s;", pv);
	sm90_line(e, "\t}");
	if (W <= 4)
		sm90_line(e, "\tst_global_%s(p_ + q_ * %d, wv_[0]);", wsuffix(W), epc);
	else
		sm90_line(e, "\tst_global_%s(p_ + q_ * %d, wv_);", wsuffix(W), epc);
	sm90_line(e, "}");
}

void sm90_tile_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *f)
{
	int nr = f->layout == FRAG_TILE ? 2 : 1;
	TRef a;
	bool ok = f->role == e->role && f->regs_per_thread > 0 && tref(e, s->dst, nr, &a) && (cast == DT_NONE || cast == a.g->dt) &&
	          (nr == 2 ? a.len[0] == f->rows && a.len[1] == f->cols : a.len[0] == f->rows);
	if (!ok) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-011", "store of a %s expression over '%s' is lowered for sm_90a only as `store G[i, .., %s] <- [cast(]expr[)]` into a global bf16, f16, f32, i32 or u32 tensor (its own dtype): point indices, then %s",
		                      f->layout == FRAG_TILE ? "thread-tile" : "thread-tile vector", f->name, nr == 2 ? "r +: R, c +: C" : "s +: n",
		                      nr == 2 ? "the tile's rows and columns" : "one range of the vector's length");
		diag_set(&d->resource, "%s", f->name);
		return;
	}
	Fx c = {f->layout, f, NULL, 0};
	StrBuf val = {0};
	if (!sm90_fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		return;
	}
	const PlanRole *ro = role_of(e, f);
	int esz = dtype_size(a.g->dt);
	e->need_gmem = true;
	const char *ct = sm90_ctype(a.g->dt);
	if (f->layout == FRAG_TILE) {
		int P = sm90_tile_pc(e, f), Rt = tile_rt(e, f);
		long long mult = sm90_gcd(sm90_gcd(sm90_gcd(a.mlead, a.mstart[0] * a.mld), a.mld), sm90_gcd(a.mstart[1], P));
		int W = access_width(P, esz, mult);
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread tile %lld x %lld over %d threads: each lane stores its %d contiguous %s of each of its %d rows (%d-byte stores)",
		                                         f->rows, f->cols, ro->nthreads, P, dtype_name(a.g->dt), Rt, W));
		sm90_line(e, "{");
		e->ind++;
		StrBuf x = {0};
		if (strcmp(a.start[0], "0"))
			sb_printf(&x, "(long long)%s * %s", a.start[0], a.ld);
		if (strcmp(a.start[1], "0"))
			sb_printf(&x, "%s%s", x.len ? " + " : "", a.start[1]);
		if (f->lanes > 1)
			sb_printf(&x, "%s%s", x.len ? " + " : "", sm90_tile_col(e, f, "0"));
		sm90_line(e, "%s *dst_ = %s;", ct, base_ptr(e, &a, sb_str(&x)));
		sb_free(&x);
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int i_ = 0; i_ < %d; ++i_) {", Rt);
		e->ind++;
		sm90_line(e, "%s *p_ = dst_ + (long long)%s * %s;", ct, sm90_tile_row(e, f, "i_"), a.ld);
		run_store(e, W, esz, P, a.g->dt, arena_printf(&e->c->arena, "const int j_ = q_ * %%d + k_, a_ = i_ * %d + q_ * %%d + k_; (void)j_; (void)a_;", P), sb_str(&val));
		e->ind--;
		sm90_line(e, "}");
		e->ind--;
		sm90_line(e, "}");
	} else if (f->layout == FRAG_TCOL) {
		int P = f->regs_per_thread;
		long long mult = sm90_gcd(sm90_gcd(a.mlead, a.mstart[0]), P);
		int W = access_width(P, esz, mult);
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread-tile column vector of %lld: the first row group of the role's first warp stores it (%d-byte stores)", f->rows, W));
		const PlanRole *r = role_of(e, f);
		sm90_line(e, "if (%s == 0%s) {", warp_in_role(e, r), f->lanes < 32 ? arena_printf(&e->c->arena, " && (int)(threadIdx.x %% 32u) / %d == 0", f->lanes) : "");
		e->ind++;
		StrBuf x = {0};
		if (strcmp(a.start[0], "0"))
			sb_puts(&x, a.start[0]);
		if (f->lanes > 1)
			sb_printf(&x, "%s%s", x.len ? " + " : "", sm90_tile_col(e, f, "0"));
		sm90_line(e, "%s *p_ = %s;", ct, base_ptr(e, &a, sb_str(&x)));
		sb_free(&x);
		run_store(e, W, esz, P, a.g->dt, "const int c_ = q_ * %d + k_; (void)c_; (void)%d;", sb_str(&val));
		e->ind--;
		sm90_line(e, "}");
	} else {
		int Rt = f->regs_per_thread;
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "thread-tile row vector of %lld: the first lane of each row stores the row's value", f->rows));
		sm90_line(e, "if ((int)(threadIdx.x %% %du) == 0) {", (unsigned)f->lanes);
		e->ind++;
		sm90_line(e, "%s *p_ = %s;", ct, base_ptr(e, &a, strcmp(a.start[0], "0") ? a.start[0] : ""));
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int r_ = 0; r_ < %d; ++r_)", Rt);
		const char *st = esz == 2 ? "st_global_b16" : "st_global_b32";
		sm90_line(e, "\t%s(p_ + %s, %s);", st, sm90_tile_row(e, f, "r_"), arena_printf(&e->c->arena, pack_fmt(a.g->dt), sb_str(&val)));
		e->ind--;
		sm90_line(e, "}");
	}
	sb_free(&val);
}

/* ---- reductions ---- */

/* The first fragment of layout lay read in x (outside nothing: a plain walk). */
static const PlanFrag *first_of(Em *e, const Expr *x, FragLayout lay)
{
	if (!x)
		return NULL;
	const PlanFrag *f = sm90_frag_of(e, x);
	if (f)
		return f->layout == lay ? f : NULL;
	const PlanFrag *r = first_of(e, x->lhs, lay);
	if (!r)
		r = first_of(e, x->rhs, lay);
	for (int i = 0; !r && i < x->nargs; i++)
		r = first_of(e, x->args[i], lay);
	return r;
}

static const char *red_init(DType t, int kind)   /* kind 0 sum, 1 max, 2 min */
{
	bool f = t == DT_F32 || t == DT_BF16 || t == DT_F16;
	if (kind == 0)
		return f ? "0.0f" : "0";
	if (kind == 1)
		return f ? "-__int_as_float(0x7f800000)" : "(-0x7fffffff - 1)";
	return f ? "__int_as_float(0x7f800000)" : "0x7fffffff";
}

static const char *red_op(Em *e, DType t, int kind, const char *a, const char *b)
{
	bool f = t == DT_F32 || t == DT_BF16 || t == DT_F16;
	if (kind == 0)
		return arena_printf(&e->c->arena, "%s + %s", a, b);
	return arena_printf(&e->c->arena, "%s(%s, %s)", kind == 1 ? (f ? "fmaxf" : "max") : (f ? "fminf" : "min"), a, b);
}

/* v_[0 .. n) combined across the role's warps through shared memory: the threads
 * where `cond` holds write their values to slot `slot` (C text over u_) of their
 * warp's row of an [W][nslots] array; every thread then reads the same slots of
 * all the warps. Two named barriers over the role bracket the exchange. */
static void across_warps(Em *e, const PlanRole *r, const char *ty, int n, int nslots, int kind, DType t, const char *cond, const char *slot)
{
	int id = e->nscan++, ri = (int)(r - e->p->roles), W = r->nwarps;
	sm90_xchg_begin(e);
	sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "xw%d_", id), 2, (long long[]){W, nslots}, arena_printf(&e->c->arena, "one row per warp of role %s", r->name));
	sm90_line(e, "if (%s) {", cond);
	sm90_line(e, "	#pragma unroll");
	sm90_line(e, "	for (int u_ = 0; u_ < %d; ++u_)", n);
	sm90_line(e, "		xw%d_[%s][%s] = v_[u_];", id, warp_in_role(e, r), slot);
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int u_ = 0; u_ < %d; ++u_) {", n);
	sm90_line(e, "	%s t_ = xw%d_[0][%s];", ty, id, slot);
	sm90_line(e, "	#pragma unroll");
	sm90_line(e, "	for (int w_ = 1; w_ < %d; ++w_)", W);
	sm90_line(e, "		t_ = %s;", red_op(e, t, kind, "t_", arena_printf(&e->c->arena, "xw%d_[w_][%s]", id, slot)));
	sm90_line(e, "	v_[u_] = t_;");
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);   /* the slots are free again (a reduction in a loop) */", ri + 1, r->nthreads);
}

/* xor shuffles of v_[0 .. n) over lane offsets lo, 2 lo, .. < hi. */
static void shuffles(Em *e, const char *ty, int n, int kind, DType t, int lo, int hi, const char *what)
{
	if (lo >= hi)
		return;
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int o_ = %d; o_ < %d; o_ <<= 1)   /* %s */", lo, hi, what);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int u_ = 0; u_ < %d; ++u_)", n);
	sm90_line(e, "\t\tv_[u_] = %s;", red_op(e, t, kind, "v_[u_]", arena_printf(&e->c->arena, "(%s)__shfl_xor_sync(0xffffffffu, v_[u_], o_)", ty)));
}

bool sm90_tile_reduce(Em *e, const Expr *call, const char *name, DType dt, const PlanFrag *ctx, bool declare, Span sp)
{
	const char *n = call->name;
	bool row = strncmp(n, "row", 3) == 0;
	int kind = !strcmp(n + 3, "sum") ? 0 : !strcmp(n + 3, "max") ? 1 : 2;
	const PlanFrag *t = call->nargs == 1 ? first_of(e, call->args[0], FRAG_TILE) : NULL;
	if (!t)
		t = ctx && ctx->layout == FRAG_TILE ? ctx : NULL;
	if (!t || t->role != e->role || t->regs_per_thread == 0 || (strcmp(n + 3, "sum") && strcmp(n + 3, "max") && strcmp(n + 3, "min")) ||
	    (!row && kind == 2)) {
		sm90_refuse(e, sp, "CK-LOW-002", "%s is lowered for sm_90a over a thread tile only as rowsum/rowmax/rowmin (into a row vector) or colsum/colmax (into a column vector) of a tile expression of this role", n);
		return false;
	}
	const PlanRole *r = role_of(e, t);
	int P = sm90_tile_pc(e, t), Rt = tile_rt(e, t), L = t->lanes, G = 32 / L;
	Fx c = {FRAG_TILE, t, NULL, 0};
	StrBuf el = {0};
	if (!sm90_fx_emit(e, &el, call->args[0], &c)) {
		sb_free(&el);
		return false;
	}
	const char *ty = sm90_ftype(dt == DT_BF16 || dt == DT_F16 ? DT_F32 : dt);
	int nout = row ? Rt : P;
	if (declare)
		sm90_line(e, "%s %s[%d];", ty, name, nout);
	sm90_line(e, "{   /* %s over thread tile %s: %s */", n, t->name,
	          row ? arena_printf(&e->c->arena, "per thread over its %d columns, then the %d lanes of the row (shuffles)", P, L)
	              : arena_printf(&e->c->arena, "per thread over its %d rows, then the %d row groups of the warp (shuffles), then the %d warps (shared memory)", Rt, G, r->nwarps));
	e->ind++;
	sm90_line(e, "%s v_[%d];", ty, nout);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int u_ = 0; u_ < %d; ++u_)", nout);
	sm90_line(e, "\tv_[u_] = %s;", red_init(dt, kind));
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int i_ = 0; i_ < %d; ++i_) {", Rt);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int j_ = 0; j_ < %d; ++j_) {", P);
	sm90_line(e, "\t\tconst int a_ = i_ * %d + j_; (void)a_;", P);
	sm90_line(e, "\t\tconst %s x_ = %s;", ty, sb_str(&el));
	sm90_line(e, "\t\tv_[%s] = %s;", row ? "i_" : "j_", red_op(e, dt, kind, arena_printf(&e->c->arena, "v_[%s]", row ? "i_" : "j_"), "x_"));
	sm90_line(e, "\t}");
	sm90_line(e, "}");
	if (row) {
		shuffles(e, ty, nout, kind, dt, 1, L, "the lanes of a row");
	} else {
		shuffles(e, ty, nout, kind, dt, L, 32, "the row groups of the warp");
		if (r->nwarps > 1)
			across_warps(e, r, ty, nout, (int)t->cols, kind, dt, L < 32 ? arena_printf(&e->c->arena, "(int)(threadIdx.x %% 32u) < %d", L) : "true",
			             L > 1 ? arena_printf(&e->c->arena, "(int)(threadIdx.x %% %du) * %d + u_", (unsigned)L, P) : "u_");
	}
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int u_ = 0; u_ < %d; ++u_)", nout);
	sm90_line(e, "\t%s[u_] = v_[u_];", name);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&el);
	return true;
}

static bool has_bcast(const Expr *x)
{
	if (!x)
		return false;
	if (x->kind == E_CALL && x->name && (!strcmp(x->name, "rows") || !strcmp(x->name, "cols")))
		return true;
	if (has_bcast(x->lhs) || has_bcast(x->rhs))
		return true;
	for (int i = 0; i < x->nargs; i++)
		if (has_bcast(x->args[i]))
			return true;
	return false;
}

/* The layout a sum() argument's value has, and the fragment that fixes its shape. */
static const PlanFrag *value_layout(Em *e, const Expr *x, FragLayout *lay)
{
	static const FragLayout order[] = {FRAG_TILE, FRAG_ACC, FRAG_VEC, FRAG_TROW, FRAG_TCOL, FRAG_ROW, FRAG_COL};
	for (size_t i = 0; i < NELEM(order); i++) {
		const PlanFrag *f = first_of(e, x, order[i]);
		if (f) {
			*lay = order[i];
			return f;
		}
	}
	return NULL;
}

bool sm90_sum_emit(Em *e, const Expr *call, const char *name, Span sp)
{
	FragLayout lay = FRAG_ACC;
	const PlanFrag *f = call->nargs == 1 ? value_layout(e, call->args[0], &lay) : NULL;
	/* a rows()/cols() broadcast makes a tile value, whose shape a tile fragment must fix */
	if (f && lay != FRAG_TILE && has_bcast(call->args[0]))
		f = NULL;
	if (!f || f->role != e->role || f->regs_per_thread == 0 || (lay != FRAG_TILE && lay != FRAG_TROW && lay != FRAG_TCOL && lay != FRAG_VEC)) {
		sm90_refuse(e, sp, "CK-LOW-002", "sum() is lowered for sm_90a over thread tiles, their row and column vectors and thread vectors of this role");
		return false;
	}
	const PlanRole *r = role_of(e, f);
	DType dt = call->type.dt == DT_BF16 || call->type.dt == DT_F16 || call->type.dt == DT_NONE ? DT_F32 : call->type.dt;
	const char *ty = sm90_ftype(dt);
	Fx c = {lay, f, NULL, 0};
	StrBuf el = {0};
	if (!sm90_fx_emit(e, &el, call->args[0], &c)) {
		sb_free(&el);
		return false;
	}
	const char *ix = lay == FRAG_TILE ? "a_" : lay == FRAG_TROW ? "r_" : lay == FRAG_TCOL ? "c_" : "v_";
	sm90_line(e, "%s %s;", ty, name);
	sm90_line(e, "{   /* sum over %s '%s' (a %s): per thread, then %s */", lay == FRAG_TILE ? "thread tile" : "vector", f->name,
	          lay == FRAG_TILE ? "tile" : lay == FRAG_TROW ? "tile row vector" : lay == FRAG_TCOL ? "tile column vector" : "thread vector",
	          lay == FRAG_TCOL ? "the lanes of a row group (the vector is replicated over rows and warps)" : "the warp (shuffles), then the warps (shared memory)");
	e->ind++;
	sm90_line(e, "%s v_[1] = {%s};", ty, red_init(dt, 0));
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int %s = 0; %s < %d; ++%s) {", ix, ix, f->regs_per_thread, ix);
	if (lay == FRAG_TILE)
		sm90_line(e, "\tconst int i_ = a_ / %d, j_ = a_ %% %d; (void)i_; (void)j_;", sm90_tile_pc(e, f), sm90_tile_pc(e, f));
	if (lay == FRAG_VEC && (long long)f->regs_per_thread * r->nthreads != f->rows)
		sm90_line(e, "\tif (%s >= %lld) continue;   /* past the end of the vector */", sm90_vec_elem_index(e, f), f->rows);
	sm90_line(e, "\tv_[0] += %s;", sb_str(&el));
	sm90_line(e, "}");
	if (lay == FRAG_TCOL) {
		shuffles(e, ty, 1, 0, dt, 1, f->lanes, "the lanes of a row group hold the columns");
	} else {
		int lo = lay == FRAG_TROW ? f->lanes : 1;   /* a row vector is replicated over its row's lanes */
		shuffles(e, ty, 1, 0, dt, lo, 32, "the warp");
		if (r->nwarps > 1)
			across_warps(e, r, ty, 1, 1, 0, dt, "(threadIdx.x % 32u) == 0u", "u_");
	}
	sm90_line(e, "%s = v_[0];", name);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&el);
	return true;
}
