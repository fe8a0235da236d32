/*
 * sm90_acc.c — the accumulator-layout primitives that move data between threads.
 *
 * Element-wise math over an accumulator-layout fragment (lower.h, FRAG_ACC) never moves
 * data: each thread computes the elements it holds. The primitives here are the ones whose
 * result at an element depends on elements other threads hold, so they are built from
 * warp shuffles, a little `__shared__` scratch and named barriers over the role. The
 * layout they work against (per warpgroup, per 64-row tile mt): thread (warp w, lane l)
 * holds rows w·16 + l/4 (+8 for the second row half h) and column pairs 8j + 2(l%4) (+e).
 * So a column's 64 rows of one m64 tile are spread over the 8 row groups of a lane
 * quad-column (lanes 4 apart), the two row halves each thread holds, and the 4 warps;
 * a tile's further rows live in further m64 tiles (mt) and, for `split m`, in the other
 * warpgroups.
 *
 *   cumsum(x, 0)   an inclusive scan down the rows, done in the order the rows are laid
 *                  out: a shfl_up ladder over the row groups (offsets 4, 8, 16 lanes), the
 *                  second row half adds the first half's total (one shfl from the last row
 *                  group), then every 16-row block adds the totals of the blocks above it
 *                  (the warps of the warpgroup, the m64 tiles, for `split m` the earlier
 *                  warpgroups): the last row group of each block leaves its totals in a
 *                  `__shared__ [slabs][blocks][columns]` array between two named barriers.
 *                  An unsplit or `split n` tile has one slab per warpgroup (each computes
 *                  its own columns, or the same ones redundantly); `split m` one slab
 *                  whose blocks run across the warpgroups.
 *   cumsum(x, 0, S) the same scan restarting every S rows: S = 8 stops after the ladder (a row
 *                  half), S = 16 after the row halves (a warp's block: no shared memory, no
 *                  barrier), a larger multiple of 16 adds only the totals of the blocks above
 *                  in the same segment.
 *
 *   trisolve(L, B) forward substitution L X = B (L lower triangular, [R, R], R <= 64, R % 4 == 0; B and
 *                  X [R, C]) through the role's part of the lowering's shared scratch
 *                  (Plan.scratch_role, derive_scratch). The holders of L's lower triangle write
 *                  it as f32 in four row groups (rows 4 m + q in group q, row m padded to 4 m + 4
 *                  entries, plan_trisolve_group), the holders of B write it row-major (one
 *                  warpgroup for an unsplit operand, each warpgroup its rows or columns of a split
 *                  one), a named barrier. Then a lane quad per column of B (the role's quads take
 *                  the C columns in turn, one at a time): thread q of the quad holds rows q,
 *                  q + 4, ... of the column and the quad sweeps it four rows at a time. In block
 *                  b the four threads finish rows 4b .. 4b + 3 with four shuffles (the owner of
 *                  row 4b + t scales it by 1 / L_ii, rcp.approx, and hands it on; the others take
 *                  L_r,4b+t x off their row of the block), every later row takes the block's four
 *                  x off at once (one 4-column read of its row of L), the finished row goes back
 *                  over B, and the rows move up one. Every thread of the role runs the sweep (a
 *                  quad past C sweeps zeros and stores nothing), so the shuffles take the full
 *                  mask; the block loop is not unrolled, so ptxas does not hoist the triangle's
 *                  loads into registers. A barrier, every thread reads the elements of X it
 *                  holds, and a last barrier frees the scratch. The strictly upper part of L is
 *                  loaded with its block but never used. (Session 6's solve, one thread per
 *                  column summing each row, took 46% of the chunked KDA prefill's time on the
 *                  H200: 64 of 256 threads worked, each through a 2080-FMA chain.)
 *   trisolve(L, S) the inverses of L's S x S diagonal blocks: B the identity, and each column
 *                  sweeps only the four-row blocks of its own diagonal block (S a multiple of
 *                  8, so a warp's eight columns share one; the unrolled form has one copy of
 *                  the sweep per diagonal block, chosen by the warp's first block). Rows
 *                  outside the column's block read back as 0. S = 16 over 64 rows: a chain of
 *                  4 row blocks instead of 16 (the 16-token-chunk KDA prep).
 *
 * Everything else of the accumulator layout (row reductions, column reductions, loads,
 * stores, wgmma) is in sm90.c; these functions are called from its statement dispatch and
 * share its expression emitter (sm90_fx_emit). Refused with CK-LOW-002: a scan along the
 * rows (dim 1), an argument whose tile does not have the destination's shape and split,
 * dtypes other than f32 and i32 (scan) or f32 (solve), L other than [R, R] with R <= 64.
 */
#include "sm90_int.h"

#include <string.h>

static void acc_cumsum_blocks(Em *e, const PlanFrag *dst, int id, int n, const char *ty, long long seg, bool across, int nslab, int nblk);

void sm90_acc_cumsum(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	long long dim = -1, seg = 0;
	if (call->nargs < 2 || call->nargs > 3 || !eval_expr(call->args[1], e->k, NULL, &dim) || (dim != 0 && dim != 1) ||
	    (call->nargs == 3 && !eval_expr(call->args[2], e->k, NULL, &seg))) {
		sm90_refuse(e, s->span, "CK-LOW-002", "cumsum needs a constant dimension, 0 or 1 (and a constant segment length)");
		return;
	}
	if (seg == dst->rows)
		seg = 0;   /* one segment: the plain scan */
	if (seg && seg != 8 && (seg % 16 || dst->rows % seg)) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "cumsum(x, 0, %lld) over %lld rows is not lowered for sm_90a: segments of 8 rows, or a multiple of 16 dividing the rows, are",
		                      seg, dst->rows);
		diag_set(&d->hint, "segment the rows by 8, 16, 32, ... (the accumulator layout's row halves and 16-row blocks)");
		return;
	}
	if (dim != 0) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "cumsum(x, 1) (along the rows of an accumulator-layout tile) is not lowered yet for sm_90a; only the scan down the rows, cumsum(x, 0), is");
		diag_set(&d->hint, "scan down the columns of the transposed tile, or use a thread tile (`lanes`)");
		return;
	}
	const PlanFrag *ref = sm90_find_acc(e, call->args[0]);
	if (!ref || ref->role != e->role || ref->regs_per_thread == 0 || ref->rows != dst->rows || ref->cols != dst->cols || ref->split != dst->split ||
	    (dst->dt != DT_F32 && dst->dt != DT_I32)) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "cumsum(x, 0) is lowered for sm_90a into an f32 or i32 accumulator-layout fragment from an expression over tiles of its shape and split");
		diag_set(&d->resource, "%s", dst->name);
		return;
	}
	Fx c = {FRAG_ACC, dst, NULL, 0};
	StrBuf el = {0};
	if (!sm90_fx_emit(e, &el, call->args[0], &c)) {
		sb_free(&el);
		return;
	}
	const PlanRole *r = &e->p->roles[e->role];
	int n = dst->regs_per_thread, id = e->nscan++;
	bool flt = dst->dt == DT_F32;
	const char *ty = flt ? "float" : "int";
	bool across = dst->split == SPLIT_M && r->nwg > 1;      /* the blocks run across the warpgroups */
	int nslab = across ? 1 : (r->nwg > 1 ? r->nwg : 1);
	int nblk = dst->mtiles * 4 * (across ? r->nwg : 1);
	if (seg)
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "inclusive scan down %lld rows restarting every %lld: the 8 row groups of a warp (shfl_up)%s%s",
		                                         dst->rows, seg, seg >= 16 ? ", the row halves" : "",
		                                         seg > 16 ? arena_printf(&e->c->arena, ", then the %lld blocks of 16 rows of each segment (shared memory)", seg / 16) : ""));
	else
		sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "inclusive scan down %lld rows: the 8 row groups of a warp (shfl_up), the row halves, then %d blocks of 16 rows (shared memory)",
		                                         dst->rows, nblk));
	sm90_line(e, "{");
	e->ind++;
	sm90_line(e, "const u32 lane_ = lane_id();");
	sm90_line(e, "%s v_[%d];", ty, n);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_) {", n);
	sm90_acc_decode(e, dst);
	sm90_line(e, "\tv_[a_] = %s;", sb_str(&el));
	sm90_line(e, "}");
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int o_ = 4; o_ < 32; o_ <<= 1)   /* the row groups of each row half: lanes 4, 8, 16 apart */");
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int a_ = 0; a_ < %d; ++a_) {", n);
	sm90_line(e, "\t\tconst %s w_ = __shfl_up_sync(0xffffffffu, v_[a_], o_);", ty);
	sm90_line(e, "\t\tif ((int)lane_ >= o_)");
	sm90_line(e, "\t\t\tv_[a_] += w_;");
	sm90_line(e, "\t}");
	if (seg != 8) {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_)   /* rows 8..15 of a block follow rows 0..7: add their total (the last row group's) */", n);
		sm90_line(e, "\tif (a_ %% 4 >= 2)");
		sm90_line(e, "\t\tv_[a_] += __shfl_sync(0xffffffffu, v_[a_ - 2], 28 + (int)(lane_ %% 4u));");
	}
	if (seg != 8 && seg != 16)   /* the segments span 16-row blocks: add the blocks' totals */
		acc_cumsum_blocks(e, dst, id, n, ty, seg, across, nslab, nblk);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_)", n);
	sm90_line(e, "\t%s[a_] = v_[a_];", dst->name);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&el);
}

/* cumsum's block step: the last row group of each 16-row block leaves its totals in a
 * [slab][block][column] array, a named barrier, every row adds the totals of the blocks above
 * it (in its segment of seg rows when seg is not 0), a second barrier frees the array. */
static void acc_cumsum_blocks(Em *e, const PlanFrag *dst, int id, int n, const char *ty, long long seg, bool across, int nslab, int nblk)
{
	const PlanRole *r = &e->p->roles[e->role];
	int ri = e->role;
	long long half = dst->wg_cols / 2;
	const char *wr = r->warp_lo ? arena_printf(&e->c->arena, "((int)warp - %d)", r->warp_lo) : "(int)warp";
	const char *slab = nslab > 1 ? "(int)role_wg" : "0";
	const char *blk0 = across ? arena_printf(&e->c->arena, "(int)role_wg * %d + ", dst->mtiles * 4) : "";
	sm90_xchg_begin(e);
	sm90_xchg(e, ri, ty, arena_printf(&e->c->arena, "cu%d_", id), 3, (long long[]){nslab, nblk, dst->wg_cols}, "[slab][16-row block][column]: the blocks' totals");
	sm90_line(e, "if (lane_ >= 28u) {   /* the last row group holds each block's totals */");
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int a_ = 0; a_ < %d; ++a_) {", n);
	sm90_line(e, "\t\tconst int mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2, e_ = a_ %% 2;", half, half);
	sm90_line(e, "\t\tif (h_ == 1)");
	sm90_line(e, "\t\t\tcu%d_[%s][%smt_ * 4 + %s %% 4][8 * j_ + 2 * (int)(lane_ %% 4u) + e_] = v_[a_];", id, slab, blk0, wr);
	sm90_line(e, "\t}");
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_) {   /* the two row halves of a column pair share its prefix: one sum for both */", n);
	sm90_line(e, "\tconst int mt_ = a_ / %lld, j_ = a_ %% %lld / 4, h_ = a_ %% 4 / 2, e_ = a_ %% 2;", half, half);
	sm90_line(e, "\tif (h_ == 0) {");
	sm90_line(e, "\t\tconst int col_ = 8 * j_ + 2 * (int)(lane_ %% 4u) + e_, blk_ = %smt_ * 4 + %s %% 4;", blk0, wr);
	sm90_line(e, "\t\t%s pre_ = 0;", ty);
	sm90_line(e, "\t\t#pragma unroll");
	sm90_line(e, "\t\tfor (int b_ = 0; b_ < %d; ++b_)   /* the blocks above this one (unrolled, predicated) */", nblk - 1);
	if (seg)   /* ... in its segment of seg / 16 blocks */
		sm90_line(e, "\t\t\tif (b_ < blk_ && b_ >= blk_ / %lld * %lld)", seg / 16, seg / 16);
	else
		sm90_line(e, "\t\t\tif (b_ < blk_)");
	sm90_line(e, "\t\t\t\tpre_ += cu%d_[%s][b_][col_];", id, slab);
	sm90_line(e, "\t\tv_[a_] += pre_;");
	sm90_line(e, "\t\tv_[a_ + 2] += pre_;");
	sm90_line(e, "\t}");
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);   /* the scratch is free again (a scan in a loop) */", ri + 1, r->nthreads);
}

/* The element loop writing acc-layout value `val` (over tile ref) into the f32 array at C
 * expression `arr` with row stride ld: one warpgroup writes a replicated (unsplit) tile.
 * With pass (a C expression) the columns pass * P .. pass * P + P - 1 only, at column - pass * P.
 * ld 0: the lower triangle only, packed by rows (element (i, j <= i) at i (i + 1) / 2 + j). */
static void acc_scatter(Em *e, const char *val, const PlanFrag *ref, const char *arr, long long ld, long long grp, const char *pass, long long P)
{
	const PlanRole *r = &e->p->roles[e->role];
	bool once = ref->split == SPLIT_NONE && r->nwg > 1;
	const char *r0 = ref->split == SPLIT_M && r->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_rows) : "";
	const char *c0 = ref->split == SPLIT_N && r->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", ref->wg_cols) : "";
	sm90_line(e, "%s{", once ? "if (role_wg == 0u) " : "");
	e->ind++;
	if (pass)
		sm90_line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u), col0_ = %s2 * (int)(lane_ %% 4u) - %s * %lld;", r0, c0, pass, P);
	else
		sm90_line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u), col0_ = %s2 * (int)(lane_ %% 4u);", r0, c0);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_) {", ref->regs_per_thread);
	sm90_acc_decode(e, ref);
	if (grp) {
		sm90_line(e, "\tconst int i_ = row0_ + mt_ * 64 + 8 * h_, c_ = col0_ + 8 * j_ + e_, m_ = i_ / 4;");
		sm90_line(e, "\tif (c_ <= i_)   /* the lower triangle: row i_ in group i_ %% 4, at 2 m (m + 1) in it, m = i_ / 4 */");
		sm90_line(e, "\t\t%s[(i_ %% 4) * %lld + 2 * m_ * (m_ + 1) + c_] = %s;", arr, grp, val);
	} else if (pass) {
		sm90_line(e, "\tif ((unsigned)(col0_ + 8 * j_ + e_) < %lldu)   /* this pass's columns */", P);
		sm90_line(e, "\t\t%s[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_] = %s;", arr, ld, val);
	} else {
		sm90_line(e, "\t%s[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_] = %s;", arr, ld, val);
	}
	sm90_line(e, "}");
	e->ind--;
	sm90_line(e, "}");
}

/* The parts of trisolve's sweep that its two forms share. quad_block: the quad finishes rows
 * 4 b_ .. 4 b_ + 3 of its column into xb_[4] (thread q_'s row in register x; the owner of row
 * 4 b_ + t_ scales it by 1 / L_ii and hands it on, four shuffles). quad_update: a later row
 * (`row`, in register xr) takes the block's four values off with one 16-byte read of L.
 * quad_store: the finished row back over B (under cst when some quad has no column). */
static void quad_block(Em *e, const char *x, bool pre)
{
	sm90_line(e, "const float4 lb_ = *(const float4 *)(lq_ + 2 * b_ * (b_ + 1) + 4 * b_);   /* row 4 b_ + q_ of L, columns 4 b_ .. 4 b_ + 3 (past the diagonal: unused) */");
	if (pre)   /* the unrolled sweep: every 1 / L_ii taken before it, off the chain */
		sm90_line(e, "const float ri_ = rd_[b_];   /* 1 / L_ii */");
	else
		sm90_line(e, "const float ri_ = __fdividef(1.0f, q_ == 0 ? lb_.x : q_ == 1 ? lb_.y : q_ == 2 ? lb_.z : lb_.w);   /* 1 / L_ii, rcp.approx */");
	sm90_line(e, "float xb_[4];   /* the block's four results */");
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int t_ = 0; t_ < 4; ++t_) {");
	sm90_line(e, "\tconst float lt_ = t_ == 0 ? lb_.x : t_ == 1 ? lb_.y : t_ == 2 ? lb_.z : lb_.w;");
	sm90_line(e, "\txb_[t_] = __shfl_sync(0xffffffffu, %s * ri_, (int)(lane_ & 28u) + t_);   /* every lane: no partial mask */", x);
	sm90_line(e, "\t%s = q_ == t_ ? xb_[t_] : q_ > t_ ? %s - lt_ * xb_[t_] : %s;", x, x, x);
	sm90_line(e, "}");
}

static void quad_update(Em *e, const char *ind, const char *row, const char *xr)
{
	sm90_line(e, "%sconst float4 lr_ = *(const float4 *)(lq_ + 2 * (%s) * (%s + 1) + 4 * b_);   /* row 4 (%s) + q_, columns 4 b_ .. 4 b_ + 3 */", ind, row, row, row);
	sm90_line(e, "%s%s = fmaf(-lr_.w, xb_[3], fmaf(-lr_.z, xb_[2], fmaf(-lr_.y, xb_[1], fmaf(-lr_.x, xb_[0], %s))));   /* four FFMA */", ind, xr, xr);
}

static void quad_store(Em *e, const char *cst, long long ldx, const char *x)
{
	if (cst)   /* some quad has no column in its last turn */
		sm90_line(e, "%s", cst);
	sm90_line(e, "%stx_[(4 * b_ + q_) * %lld + col_] = %s;   /* X over B: each column is read and written by its quad */", cst ? "\t" : "", ldx, x);
}

void sm90_acc_trisolve(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	/* trisolve(L, S): the inverses of L's S x S diagonal blocks (a scalar second argument) */
	long long S = 0;
	bool blocks = call->nargs == 2 && call->args[1]->type.rank == 0;
	if (blocks && !eval_expr(call->args[1], e->k, NULL, &S))
		S = -1;
	bool inv = call->nargs == 1 || blocks;   /* trisolve(L) = L^-1: B is the identity, never written to the scratch */
	const PlanFrag *lf = call->nargs >= 1 ? sm90_find_acc(e, call->args[0]) : NULL;
	const PlanFrag *bf = call->nargs == 2 && !blocks ? sm90_find_acc(e, call->args[1]) : NULL;
	const PlanRole *r = &e->p->roles[e->role];
	long long R = dst->rows, C = dst->cols;
	if (blocks && S == R)
		blocks = false;   /* one block: the plain inverse */
	if (blocks && (S < 8 || S % 8 || R % S)) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "trisolve(L, %lld) over %lld rows is not lowered for sm_90a: the blocks are a multiple of 8 rows dividing L's (a warp's eight columns in one block)", S, R);
		diag_set(&d->hint, "blocks of 8, 16, 32 ... rows dividing %lld, or the whole L (trisolve(L))", R);
		return;
	}
	long long S4 = blocks ? S / 4 : 0;   /* four-row sweep blocks per diagonal block */
	long long off = e->p->scratch_role ? e->p->scratch_role[e->role] : -1;
	bool rhs_ok = inv ? C == R : bf && bf->role == e->role && bf->regs_per_thread != 0 && bf->rows == R && bf->cols == C;
	if (!lf || !rhs_ok || lf->role != e->role || lf->regs_per_thread == 0 || lf->rows != R ||
	    lf->cols != R || dst->dt != DT_F32 || R > 64 || R % 4 || off < 0 || r->thread_lo % 32) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "trisolve(L, B) is lowered for sm_90a into an f32 accumulator-layout fragment [R, C] from L [R, R] and B [R, C], accumulator-layout expressions of this role, R at most 64 and a multiple of 4");
		diag_set(&d->resource, "%s", dst->name);
		diag_set(&d->hint, "solve 64 rows at a time (a blocked solve with wgmma updates between the blocks)");
		return;
	}
	Fx cl = {FRAG_ACC, lf, NULL, 0}, cb = {FRAG_ACC, bf, NULL, 0};
	StrBuf lv = {0}, bv = {0};
	if (!sm90_fx_emit(e, &lv, call->args[0], &cl) || (!inv && !sm90_fx_emit(e, &bv, call->args[1], &cb))) {
		sb_free(&lv), sb_free(&bv);
		return;
	}
	int ri = e->role;
	long long P = e->p->scratch_cols[ri] && e->p->scratch_cols[ri] < C ? e->p->scratch_cols[ri] : C;
	while (C % P)
		P /= 2;
	long long npass = C / P;
	long long ldx = P + 1;                /* a padded row: the column reads of consecutive rows stay conflict-free */
	long long R4 = R / 4;                 /* rows per thread: a lane quad per column, thread q_ holds rows 4 m_ + q_ */
	long long grp = plan_trisolve_group(R);    /* L's rows 4 m + q, q fixed, one after the other (rows padded to 4 m + 4) */
	int ncolq = r->nthreads / 4;          /* the role's quads */
	long long nc = (P + ncolq - 1) / ncolq;   /* columns per quad and pass */
	const char *tl = r->thread_lo ? arena_printf(&e->c->arena, "(int)threadIdx.x - %d", r->thread_lo) : "(int)threadIdx.x";
	const char *pass = npass > 1 ? "ps_" : NULL;
	const char *what = arena_printf(&e->c->arena, "forward substitution: %s, a lane quad per column sweeps %lld rows, X back%s",
	                                blocks ? arena_printf(&e->c->arena, "L to shared memory, B the identity, the %lld diagonal blocks of %lld rows apart (each column sweeps its own block; L's entries outside them are never read)", R / S, S)
	                                : inv ? "L to shared memory, B the identity (X = L^-1 is lower triangular: each warp starts at the block of its first column)" : "L and B to shared memory",
	                                blocks ? S : R,
	                                npass > 1 ? arena_printf(&e->c->arena, "; %lld passes of %lld columns (the scratch that fits)", npass, P) : "");
	sm90_ir_comment(e, s->span, what);
	sm90_line(e, "{");
	e->ind++;
	sm90_line(e, "const u32 lane_ = lane_id();");
	sm90_line(e, "float *const tl_ = (float *)(cake_smem + (smem_base - smem_u32(cake_smem)) + %lldu);   /* L's lower triangle: 4 groups of %lld f32, rows 4 m + q in group q (the lowering's scratch) */",
	          off, grp);
	sm90_line(e, "float *const tx_ = tl_ + %lld;   /* B, then X: %lld x %lld f32 (rows padded by one) */", 4 * grp, R, ldx);
	sm90_line(e, "const int q_ = (int)(lane_ %% 4u), cq_ = (%s) / 4;   /* rows 4 m_ + q_ of the columns cq_ + %d k_ */", tl, ncolq);
	sm90_line(e, "const float *const lq_ = tl_ + q_ * %lld;   /* row 4 m_ + q_ of L at lq_ + 2 m_ (m_ + 1) */", grp);
	acc_scatter(e, sb_str(&lv), lf, "tl_", 0, grp, NULL, 0);
	if (npass > 1) {
		sm90_line(e, "#pragma unroll 1");
		sm90_line(e, "for (int ps_ = 0; ps_ < %lld; ++ps_) {   /* columns ps_ * %lld .. ps_ * %lld + %lld */", npass, P, P, P - 1);
		e->ind++;
	}
	if (!inv)
		acc_scatter(e, sb_str(&bv), bf, "tx_", ldx, 0, pass, P);
	sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	sm90_line(e, "#pragma unroll 1");
	sm90_line(e, "for (int k_ = 0; k_ < %lld; ++k_) {   /* this quad's columns, one at a time */", nc);
	e->ind++;
	sm90_line(e, "const int col_ = cq_ + %d * k_;   /* past P: a quad with no column sweeps zeros, its stores skipped */", ncolq);
	sm90_line(e, "float x_[%lld];   /* rows 4 m_ + q_ of the column */", R4);
	if (inv) {
		/* the identity's column gc_; the quads of a warp hold 8 consecutive columns, the warp's first
		   at cq_ - cq_ % 8, and every row above a column is 0 in X, so the warp skips the blocks
		   above its first column (bs_ is warp-uniform: the shuffles keep the full mask) */
		sm90_line(e, "const int gc_ = %scol_;   /* the column of X (and of the identity) */", pass ? arena_printf(&e->c->arena, "ps_ * %lld + ", P) : "");
		sm90_line(e, "const int bs_ = min(%lld, (%s(cq_ - cq_ %% 8) + %d * k_) / 4);   /* the warp's first block that is not all 0 */",
		          R4, pass ? arena_printf(&e->c->arena, "ps_ * %lld + ", P) : "", ncolq);
	} else {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int m_ = 0; m_ < %lld; ++m_)", R4);
		sm90_line(e, "\tx_[m_] = col_ < %lld ? tx_[(4 * m_ + q_) * %lld + col_] : 0.0f;", P, ldx);
	}
	/* two forms of the sweep: the unrolled one (fewest instructions) and, under CAKE_COMPACT (the JIT
	   stage's retry when ptxas spills, cake.c), a loop that holds fewer registers */
	const char *cst = ncolq * nc != P ? arena_printf(&e->c->arena, "if (col_ < %lld)", P) : NULL;
	sm90_line(e, "#if CAKE_COMPACT");
	sm90_line(e, "/* the block loop not unrolled: x_[m_] holds row 4 (b_ + m_) + q_ and the rows move up one register");
	sm90_line(e, "   per block; a small loop body keeps ptxas from hoisting the whole triangle's reads of L */");
	if (inv) {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int m_ = 0; m_ < %lld; ++m_)", R4);
		sm90_line(e, "\tx_[m_] = col_ < %lld && 4 * (bs_ + m_) + q_ == gc_ ? 1.0f : 0.0f;   /* rows 4 (bs_ + m_) + q_ of the identity */", P);
	}
	const char *be = arena_printf(&e->c->arena, "%lld", R4);
	if (blocks) {   /* a column's sweep ends with its block */
		sm90_line(e, "const int be_ = min(%lld, (bs_ / %lld + 1) * %lld);", R4, S4, S4);
		be = "be_";
	}
	sm90_line(e, "#pragma unroll 1");
	sm90_line(e, "for (int b_ = %s; b_ < %s; ++b_) {", inv ? "bs_" : "0", be);
	e->ind++;
	quad_block(e, "x_[0]", false);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int m_ = 1; m_ < %lld; ++m_)", R4);
	sm90_line(e, "\tif (b_ + m_ < %s) {", be);
	quad_update(e, "\t\t", "b_ + m_", "x_[m_]");
	sm90_line(e, "\t}");
	quad_store(e, cst, ldx, "x_[0]");
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int m_ = 0; m_ + 1 < %lld; ++m_)", R4);
	sm90_line(e, "\tx_[m_] = x_[m_ + 1];");
	e->ind--;
	sm90_line(e, "}");
	sm90_line(e, "#else");
	sm90_line(e, "/* block sweep, four rows at a time (rows 4 b_ .. 4 b_ + 3, one per thread of the quad, in x_[b_]): the");
	sm90_line(e, "   quad solves its block with four shuffles (the owner of row 4 b_ + t_ scales it by 1 / L_ii and hands");
	sm90_line(e, "   it on), every later row takes the block's four x off at once with one 16-byte read of L, and the");
	sm90_line(e, "   finished row goes back to the scratch. Unrolled: static register indices, no moves, and ptxas issues");
	sm90_line(e, "   the next block's reads of L during this block's shuffles. */");
	if (inv) {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int m_ = 0; m_ < %lld; ++m_)", R4);
		sm90_line(e, "\tx_[m_] = col_ < %lld && 4 * m_ + q_ == gc_ ? 1.0f : 0.0f;   /* rows 4 m_ + q_ of the identity */", P);
	}
	/* the inverse: warps whose first column lies in the lower half run a second copy of the sweep
	   that starts at the middle block (their upper half is 0). A uniform branch per block instead
	   cost the KDA prep 1-2 % on the H200 (bench/RESULTS.md, session 13 call 4): it keeps ptxas
	   from issuing a block's reads of L under the previous block's shuffles; the two copies
	   gained 4-5 % over an identity tile through the scratch (call 5) */
	/* each block's 1 / L_ii (rcp.approx) read and taken before the sweep, not at the head of its block:
	   on the chain they cost the KDA prep 4-5 % (session 13 call 7: 1271 -> 1213 us at H = 64) */
	sm90_line(e, "float rd_[%lld];   /* 1 / L_ii of this thread's rows 4 m_ + q_ */", R4);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int m_ = 0; m_ < %lld; ++m_)", R4);
	sm90_line(e, "\trd_[m_] = __fdividef(1.0f, lq_[2 * m_ * (m_ + 1) + 4 * m_ + q_]);   /* row 4 m_ + q_ at 2 m_ (m_ + 1), its diagonal at column 4 m_ + q_ */");
	/* with blocks, one copy per diagonal block: the warp's columns lie in one (S % 8 == 0), and
	   each column sweeps its block's rows only */
	long long ncopy = blocks ? R / S : inv && R4 >= 4 ? 2 : 1;
	for (long long cp = ncopy - 1; cp >= 0; cp--) {
		long long from = blocks ? cp * S4 : cp ? R4 / 2 : 0, end = blocks ? from + S4 : R4;
		if (ncopy > 1 && cp == ncopy - 1)
			sm90_line(e, "if (bs_ >= %lld) {   /* %s */", from, blocks ? "this warp's columns lie in the last block" : "the upper half of this warp's columns is 0");
		else if (ncopy > 1 && cp > 0)
			sm90_line(e, "} else if (bs_ >= %lld) {   /* ... in block %lld */", from, cp);
		else if (ncopy > 1)
			sm90_line(e, "} else {");
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int b_ = %lld; b_ < %lld; ++b_) {", from, end);
		e->ind++;
		quad_block(e, "x_[b_]", true);
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int m_ = b_ + 1; m_ < %lld; ++m_) {", end);
		quad_update(e, "\t", "m_", "x_[m_]");
		sm90_line(e, "}");
		e->ind--;
		sm90_line(e, "}");
	}
	if (ncopy > 1)
		sm90_line(e, "}");
	/* the finished column goes back to the scratch after the sweep, not block by block: a store into
	   the scratch between two blocks kept ptxas from issuing the next block's reads of L (the same
	   shared memory, for all it can tell) before it, so every block waited for its loads */
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int b_ = 0; b_ < %lld; ++b_) {", R4);
	e->ind++;
	quad_store(e, cst, ldx, "x_[b_]");
	e->ind--;
	sm90_line(e, "}");
	sm90_line(e, "#endif");
	e->ind--;
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	sm90_line(e, "{");
	e->ind++;
	const char *r0 = dst->split == SPLIT_M && r->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", dst->wg_rows) : "";
	const char *c0 = dst->split == SPLIT_N && r->nwg > 1 ? arena_printf(&e->c->arena, "(int)role_wg * %lld + ", dst->wg_cols) : "";
	sm90_line(e, "const int row0_ = %s(int)(warp %% 4u) * 16 + (int)(lane_ / 4u), col0_ = %s2 * (int)(lane_ %% 4u)%s;", r0, c0,
	          pass ? arena_printf(&e->c->arena, " - ps_ * %lld", P) : "");
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_) {", dst->regs_per_thread);
	sm90_acc_decode(e, dst);
	/* the inverse's rows above the diagonal are 0 and were never swept (the scratch holds other data there) */
	/* ... and with blocks, every row outside the column's block (the compact sweep stops storing at its end) */
	const char *lowleft = blocks ? arena_printf(&e->c->arena, " || (row0_ + mt_ * 64 + 8 * h_) / %lld != (col0_ + 8 * j_ + e_%s) / %lld", S,
	                                            pass ? arena_printf(&e->c->arena, " + ps_ * %lld", P) : "", S) : "";
	const char *val = inv ? arena_printf(&e->c->arena, "row0_ + mt_ * 64 + 8 * h_ < col0_ + 8 * j_ + e_%s%s ? 0.0f : tx_[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_]",
	                                     pass ? arena_printf(&e->c->arena, " + ps_ * %lld", P) : "", lowleft, ldx)
	                      : arena_printf(&e->c->arena, "tx_[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_]", ldx);
	if (pass) {
		sm90_line(e, "\tif ((unsigned)(col0_ + 8 * j_ + e_) < %lldu)", P);
		sm90_line(e, "\t\t%s[a_] = %s;", dst->name, val);
	} else {
		sm90_line(e, "\t%s[a_] = %s;", dst->name, val);
	}
	sm90_line(e, "}");
	e->ind--;
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);   /* the scratch is free again */", ri + 1, r->nthreads);
	if (npass > 1) {
		e->ind--;
		sm90_line(e, "}");
	}
	e->ind--;
	sm90_line(e, "}");
	sb_free(&lv), sb_free(&bv);
}
