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
 *
 *   trisolve(L, B) forward substitution L X = B (L lower triangular, [R, R], R <= 64; B and
 *                  X [R, C]) through the role's part of the lowering's shared scratch
 *                  (Plan.scratch_role, derive_scratch): the holders of L's lower triangle
 *                  (packed by rows, R (R + 1) / 2 values) and of B write them as f32 (one
 *                  warpgroup for an unsplit operand, each
 *                  warpgroup its rows or columns of a split one), a named barrier, then one
 *                  thread per column of B (the role's threads take the C columns in turn)
 *                  loads its column into R registers and solves it down the rows, fully
 *                  unrolled: x_i = (b_i - sum_{j<i} L_ij x_j) / L_ii, with L read as
 *                  broadcasts and four partial sums per row to keep the FMA chains short;
 *                  it writes the column back, a barrier, every thread reads the elements
 *                  of X it holds, and a last barrier frees the scratch. The strictly upper
 *                  part of L is never read.
 *
 * Everything else of the accumulator layout (row reductions, column reductions, loads,
 * stores, wgmma) is in sm90.c; these functions are called from its statement dispatch and
 * share its expression emitter (sm90_fx_emit). Refused with CK-LOW-002: a scan along the
 * rows (dim 1), an argument whose tile does not have the destination's shape and split,
 * dtypes other than f32 and i32 (scan) or f32 (solve), L other than [R, R] with R <= 64.
 */
#include "sm90_int.h"

#include <string.h>

void sm90_acc_cumsum(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	long long dim = -1;
	if (call->nargs != 2 || !eval_expr(call->args[1], e->k, NULL, &dim) || (dim != 0 && dim != 1)) {
		sm90_refuse(e, s->span, "CK-LOW-002", "cumsum needs a constant dimension, 0 or 1");
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
	int ri = e->role, n = dst->regs_per_thread, id = e->nscan++;
	long long half = dst->wg_cols / 2;
	bool flt = dst->dt == DT_F32;
	const char *ty = flt ? "float" : "int";
	bool across = dst->split == SPLIT_M && r->nwg > 1;      /* the blocks run across the warpgroups */
	int nslab = across ? 1 : (r->nwg > 1 ? r->nwg : 1);
	int nblk = dst->mtiles * 4 * (across ? r->nwg : 1);
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
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_)   /* rows 8..15 of a block follow rows 0..7: add their total (the last row group's) */", n);
	sm90_line(e, "\tif (a_ %% 4 >= 2)");
	sm90_line(e, "\t\tv_[a_] += __shfl_sync(0xffffffffu, v_[a_ - 2], 28 + (int)(lane_ %% 4u));");
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
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_) {", n);
	sm90_line(e, "\tconst int mt_ = a_ / %lld, j_ = a_ %% %lld / 4, e_ = a_ %% 2;", half, half);
	sm90_line(e, "\tconst int col_ = 8 * j_ + 2 * (int)(lane_ %% 4u) + e_, blk_ = %smt_ * 4 + %s %% 4;", blk0, wr);
	sm90_line(e, "\t%s pre_ = 0;", ty);
	sm90_line(e, "\tfor (int b_ = 0; b_ < blk_; ++b_)   /* the blocks above this one */");
	sm90_line(e, "\t\tpre_ += cu%d_[%s][b_][col_];", id, slab);
	sm90_line(e, "\tv_[a_] += pre_;");
	sm90_line(e, "}");
	sm90_line(e, "named_bar_sync(%du, %du);   /* the scratch is free again (a scan in a loop) */", ri + 1, r->nthreads);
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int a_ = 0; a_ < %d; ++a_)", n);
	sm90_line(e, "\t%s[a_] = v_[a_];", dst->name);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&el);
}

/* The element loop writing acc-layout value `val` (over tile ref) into the f32 array at C
 * expression `arr` with row stride ld: one warpgroup writes a replicated (unsplit) tile.
 * With pass (a C expression) the columns pass * P .. pass * P + P - 1 only, at column - pass * P.
 * ld 0: the lower triangle only, packed by rows (element (i, j <= i) at i (i + 1) / 2 + j). */
static void acc_scatter(Em *e, const char *val, const PlanFrag *ref, const char *arr, long long ld, const char *pass, long long P)
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
	if (!ld) {
		sm90_line(e, "\tconst int i_ = row0_ + mt_ * 64 + 8 * h_, c_ = col0_ + 8 * j_ + e_;");
		sm90_line(e, "\tif (c_ <= i_)   /* the lower triangle, packed */");
		sm90_line(e, "\t\t%s[i_ * (i_ + 1) / 2 + c_] = %s;", arr, val);
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

void sm90_acc_trisolve(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	const PlanFrag *lf = call->nargs == 2 ? sm90_find_acc(e, call->args[0]) : NULL;
	const PlanFrag *bf = call->nargs == 2 ? sm90_find_acc(e, call->args[1]) : NULL;
	const PlanRole *r = &e->p->roles[e->role];
	long long R = dst->rows, C = dst->cols;
	long long off = e->p->scratch_role ? e->p->scratch_role[e->role] : -1;
	if (!lf || !bf || lf->role != e->role || bf->role != e->role || lf->regs_per_thread == 0 || bf->regs_per_thread == 0 || lf->rows != R ||
	    lf->cols != R || bf->rows != R || bf->cols != C || dst->dt != DT_F32 || R > 64 || off < 0) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "trisolve(L, B) is lowered for sm_90a into an f32 accumulator-layout fragment [R, C] from L [R, R] and B [R, C], accumulator-layout expressions of this role, R at most 64");
		diag_set(&d->resource, "%s", dst->name);
		diag_set(&d->hint, "solve 64 rows at a time (a blocked solve with wgmma updates between the blocks)");
		return;
	}
	Fx cl = {FRAG_ACC, lf, NULL, 0}, cb = {FRAG_ACC, bf, NULL, 0};
	StrBuf lv = {0}, bv = {0};
	if (!sm90_fx_emit(e, &lv, call->args[0], &cl) || !sm90_fx_emit(e, &bv, call->args[1], &cb)) {
		sb_free(&lv), sb_free(&bv);
		return;
	}
	int ri = e->role;
	long long P = e->p->scratch_cols[ri] && e->p->scratch_cols[ri] < C ? e->p->scratch_cols[ri] : C;
	while (C % P)
		P /= 2;
	long long npass = C / P;
	long long ldx = P + 1;   /* a padded row: the column reads of consecutive threads stay conflict-free */
	const char *tl = r->thread_lo ? arena_printf(&e->c->arena, "(int)threadIdx.x - %d", r->thread_lo) : "(int)threadIdx.x";
	const char *pass = npass > 1 ? "ps_" : NULL;
	sm90_ir_comment(e, s->span, npass > 1 ? arena_printf(&e->c->arena, "forward substitution: L and B to shared memory, one thread per column solves %lld rows, X back; %lld passes of %lld columns (the scratch that fits)", R, npass, P)
	                                      : arena_printf(&e->c->arena, "forward substitution: L and B to shared memory, one thread per column solves %lld rows, X back", R));
	sm90_line(e, "{");
	e->ind++;
	sm90_line(e, "const u32 lane_ = lane_id();");
	sm90_line(e, "float *const tl_ = (float *)(cake_smem + (smem_base - smem_u32(cake_smem)) + %lldu);   /* L's lower triangle, %lld rows packed: %lld f32 (the lowering's scratch) */", off, R, R * (R + 1) / 2);
	sm90_line(e, "float *const tx_ = tl_ + %lld;   /* B, then X: %lld x %lld f32 (rows padded by one) */", R * (R + 1) / 2, R, ldx);
	acc_scatter(e, sb_str(&lv), lf, "tl_", 0, NULL, 0);
	if (npass > 1) {
		sm90_line(e, "#pragma unroll 1");
		sm90_line(e, "for (int ps_ = 0; ps_ < %lld; ++ps_) {   /* columns ps_ * %lld .. ps_ * %lld + %lld */", npass, P, P, P - 1);
		e->ind++;
	}
	acc_scatter(e, sb_str(&bv), bf, "tx_", ldx, pass, P);
	sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, r->nthreads);
	sm90_line(e, "for (int col_ = %s; col_ < %lld; col_ += %d) {   /* this thread's columns */", tl, P, r->nthreads);
	sm90_line(e, "\tfloat x_[%lld];", R);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int i_ = 0; i_ < %lld; ++i_)", R);
	sm90_line(e, "\t\tx_[i_] = tx_[i_ * %lld + col_];", ldx);
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int i_ = 0; i_ < %lld; ++i_) {", R);
	sm90_line(e, "\t\tconst float *li_ = tl_ + i_ * (i_ + 1) / 2;   /* row i_ of L, packed */");
	sm90_line(e, "\t\tfloat p_[4] = {x_[i_], 0.0f, 0.0f, 0.0f};");
	sm90_line(e, "\t\t#pragma unroll");
	sm90_line(e, "\t\tfor (int j_ = 0; j_ < i_; ++j_)");
	sm90_line(e, "\t\t\tp_[j_ %% 4] -= li_[j_] * x_[j_];");
	sm90_line(e, "\t\tx_[i_] = ((p_[0] + p_[1]) + (p_[2] + p_[3])) / li_[i_];");
	sm90_line(e, "\t}");
	sm90_line(e, "\t#pragma unroll");
	sm90_line(e, "\tfor (int i_ = 0; i_ < %lld; ++i_)", R);
	sm90_line(e, "\t\ttx_[i_ * %lld + col_] = x_[i_];", ldx);
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
	if (pass) {
		sm90_line(e, "\tif ((unsigned)(col0_ + 8 * j_ + e_) < %lldu)", P);
		sm90_line(e, "\t\t%s[a_] = tx_[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_];", dst->name, ldx);
	} else {
		sm90_line(e, "\t%s[a_] = tx_[(row0_ + mt_ * 64 + 8 * h_) * %lld + col0_ + 8 * j_ + e_];", dst->name, ldx);
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
