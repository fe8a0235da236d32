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
 * Everything else of the accumulator layout (row reductions, column reductions, loads,
 * stores, wgmma) is in sm90.c; these functions are called from its statement dispatch and
 * share its expression emitter (sm90_fx_emit). Refused with CK-LOW-002: a scan along the
 * rows (dim 1), an argument whose tile does not have the destination's shape and split,
 * dtypes other than f32 and i32.
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
	sm90_line(e, "const u32 lane_ = threadIdx.x %% 32u;");
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
	sm90_line(e, "__shared__ %s cu%d_[%d][%d][%lld];   /* [slab][16-row block][column]: the blocks' totals */", ty, id, nslab, nblk, dst->wg_cols);
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
