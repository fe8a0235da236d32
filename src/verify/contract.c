/*
 * contract.c — hardware contracts of the target's instructions (CK-HW-*).
 *
 * Each check is the documented constraint of one instruction as the
 * lowering will emit it:
 *
 *   wgmma (sm_90a)   m64nNk16 per warpgroup: accumulator rows per warpgroup
 *                    a multiple of 64, N a multiple of 8 in 8..256, K a
 *                    multiple of 16 (bf16/f16) or 32 (f8); f32 accumulators
 *                    (f16 allowed with f16 operands); B in shared memory;
 *                    MN-major operands only for 16-bit types.
 *   mma.sync (sm_80) m16n8k16 tiles.
 *   TMA (sm_90a)     box extents 1..256, inner box bytes a multiple of 16
 *                    and within the swizzle span, global strides multiples
 *                    of 16 bytes (proved from the domain, or a note).
 *   cp.async         4/8/16-byte chunks.
 *   availability     wgmma/TMA/setmaxnreg/clusters/fence.proxy.async need
 *                    sm_90a; wgmma is absent on sm_100a.
 *   clusters         at most 8 blocks.
 */
#include "verify_int.h"

static const char *kmajor_name(bool kmajor)
{
	return kmajor ? "K-major" : "MN-major";
}

/* dtype, rank and dims of a matmul operand (smem buffer or fragment). */
static bool operand_info(const Sched *v, const Expr *e, DType *dt, long long dims[2], bool *smem)
{
	const char *n = sched_refname(e);
	int m = sched_smem(v, n);
	if (m >= 0) {
		*dt = v->smems[m].d->dt;
		*smem = true;
		if (v->smems[m].rank != 2 || !v->smems[m].cshape)
			return false;
		dims[0] = v->smems[m].dims[0];
		dims[1] = v->smems[m].dims[1];
		return true;
	}
	int f = sched_frag(v, n);
	if (f >= 0) {
		*dt = v->frags[f].d->dt;
		*smem = false;
		if (v->frags[f].rank != 2 || !v->frags[f].cshape)
			return false;
		dims[0] = v->frags[f].dims[0];
		dims[1] = v->frags[f].dims[1];
		return true;
	}
	*dt = DT_NONE;
	*smem = false;
	return false;
}

static bool dtype_ok(DType a, DType b, DType acc, bool wgmma)
{
	if (a != b)
		return false;
	if (a == DT_BF16)
		return acc == DT_F32;
	if (a == DT_F16)
		return acc == DT_F32 || acc == DT_F16;
	if (a == DT_F8E4M3)
		return wgmma && acc == DT_F32;
	return false;
}

static void not_available(Sched *v, SchedStmt *e, const char *what, const char *hint)
{
	Diag *d = v_report(v, "CK-HW-010", e->s->span, e->role, NULL, -1, -1,
	                   "%s is not available on target %s", what, target_name(v->tgt));
	diag_set(&d->condition, "target %s supports %s", target_name(v->tgt), what);
	diag_set(&d->hint, "%s", hint);
}

static void check_matmul(Sched *v, SchedStmt *e)
{
	const TargetInfo *ti = target_info(v->tgt);
	Stmt *s = e->s;
	bool wg = s->kind == S_WGMMA;
	const char *insn = wg ? "wgmma" : "mma";
	if (wg && !ti->has_wgmma) {
		not_available(v, e, "wgmma", v->tgt == TGT_SM80 ?
		              "use `mma` (mma.sync) on sm_80, or target sm_90a" :
		              "sm_100a replaces wgmma with tcgen05 (not yet supported); target sm_90a");
		return;
	}
	const Expr *A, *B;
	if (!sched_matmul_ops(s, &A, &B))
		return;
	int acc = sched_frag(v, sched_refname(s->dst));
	if (acc < 0)
		return; /* CK-SEM-027/040 */
	SchedFrag *af = &v->frags[acc];
	DType da, db;
	long long ad[2], bd[2];
	bool asm_, bsm; /* operand placement is sema's CK-SEM-027 */
	bool aok = operand_info(v, A, &da, ad, &asm_);
	bool bok = operand_info(v, B, &db, bd, &bsm);
	if (da != DT_NONE && db != DT_NONE && !dtype_ok(da, db, af->d->dt, wg)) {
		Diag *d = v_report(v, "CK-HW-004", s->span, e->role, af->name, -1, -1,
		                   "%s does not support %s x %s -> %s", insn, dtype_name(da), dtype_name(db),
		                   dtype_name(af->d->dt));
		diag_set(&d->condition, "(A, B, acc) in {bf16,bf16,f32} {f16,f16,f32|f16}%s",
		         wg ? " {f8e4m3,f8e4m3,f32}" : "");
		diag_set(&d->hint, "use the same 16-bit dtype for both operands and an f32 accumulator");
		diag_related(d, af->d->span, "accumulator '%s' declared %s here", af->name,
		             dtype_name(af->d->dt));
	}
	if (!aok || !bok || af->rank != 2 || !af->cshape)
		return;
	bool at = sched_is_transposed(A), bt = sched_is_transposed(B);
	long long K = at ? ad[0] : ad[1];
	long long M = af->dims[0], N = af->dims[1];
	int wgs = e->role >= 0 ? v->roles[e->role].wgs : 1;
	if (!wg) {
		if (M % ti->mma_m || N % ti->mma_n || K % ti->mma_k) {
			Diag *d = v_report(v, "CK-HW-012", s->span, e->role, af->name, -1, -1,
			                   "mma.sync m%dn%dk%d cannot tile a %lldx%lld accumulator with K=%lld",
			                   ti->mma_m, ti->mma_n, ti->mma_k, M, N, K);
			diag_set(&d->condition, "M (%lld) %% %d == 0 && N (%lld) %% %d == 0 && K (%lld) %% %d == 0",
			         M, ti->mma_m, N, ti->mma_n, K, ti->mma_k);
			diag_set(&d->hint, "round the tile to multiples of %d x %d x %d", ti->mma_m, ti->mma_n, ti->mma_k);
		}
		return;
	}
	long long wm = ti->wgmma_m;
	long long rows = af->d->split == SPLIT_M ? M / wgs : M;
	if ((af->d->split == SPLIT_M && M % (wm * wgs)) || rows % wm || rows <= 0) {
		Diag *d = v_report(v, "CK-HW-001", s->span, e->role, af->name, -1, -1,
		                   "wgmma needs %lld accumulator rows per warpgroup, but '%s' gives each of "
		                   "role '%s''s %d warpgroup(s) %lld rows", wm, af->name,
		                   v->roles[e->role].name, wgs, af->d->split == SPLIT_M ? M / wgs : M);
		diag_set(&d->condition, "rows per warpgroup (%lld / %d) %% %lld == 0",
		         M, af->d->split == SPLIT_M ? wgs : 1, wm);
		diag_set(&d->hint, "use %lld accumulator rows (%lld per warpgroup) or change the role's warps",
		         wm * (af->d->split == SPLIT_M ? wgs : 1), wm);
		diag_related(d, af->d->span, "accumulator '%s' declared here", af->name);
	}
	long long nw = af->d->split == SPLIT_N ? N / wgs : N;
	int nstep = ti->wgmma_n_step, nmin = ti->wgmma_n_min, nmax = ti->wgmma_n_max;
	if (nw % nstep || nw < nmin || nw > nmax) {
		Diag *d = v_report(v, "CK-HW-002", s->span, e->role, af->name, -1, -1,
		                   "wgmma N must be a multiple of %d in %d..%d, but each warpgroup computes %lld "
		                   "columns of '%s'", nstep, nmin, nmax, nw, af->name);
		diag_set(&d->condition, "N (%lld) %% %d == 0 && %d <= N <= %d", nw, nstep, nmin, nmax);
		if (nw > nmax)
			diag_set(&d->hint, "split the accumulator over warpgroups with `split n` or use a narrower tile");
		else
			diag_set(&d->hint, "round N up to a multiple of %d", nstep);
		diag_related(d, af->d->span, "accumulator '%s' declared here", af->name);
	}
	int kstep = dtype_size(da) == 1 ? ti->wgmma_k_8bit : ti->wgmma_k_16bit;
	if (K % kstep || K <= 0) {
		Diag *d = v_report(v, "CK-HW-003", s->span, e->role, sched_refname(A), -1, -1,
		                   "wgmma consumes K in steps of %d for %s, but the tile has K=%lld", kstep,
		                   dtype_name(da), K);
		diag_set(&d->condition, "K (%lld) %% %d == 0", K, kstep);
		diag_set(&d->hint, "make the shared tile's K extent a multiple of %d", kstep);
	}
	bool akm = !at, bkm = bt;
	if (dtype_size(da) != 2 && (!akm || !bkm)) {
		const Expr *bad = !akm ? A : B;
		Diag *d = v_report(v, "CK-HW-005", bad->span, e->role, sched_refname(bad), -1, -1,
		                   "operand '%s' is %s, which wgmma supports only for 16-bit types (it is %s)",
		                   sched_refname(bad), kmajor_name(false), dtype_name(da));
		diag_set(&d->condition, "%s operands are K-major", dtype_name(da));
		diag_set(&d->hint, !akm ? "store A as [M, K] and use it without ^T" :
		         "store B as [N, K] and write b^T");
	}
}

static void check_tma(Sched *v, SchedStmt *e)
{
	const TargetInfo *ti = target_info(v->tgt);
	Stmt *s = e->s;
	bool load = s->kind == S_TMA_LOAD;
	if (!ti->has_tma) {
		not_available(v, e, "TMA", "use `cp_async` on sm_80, or target sm_90a");
		return;
	}
	const Expr *ref = load ? s->src : s->dst;
	const char *smn = sched_refname(load ? s->dst : s->src);
	int m = sched_smem(v, smn);
	Decl *p = sched_param(v, sched_refname(ref));
	if (!p)
		return;
	SchedEnv env;
	sched_env_sample(v, &env, 0);
	long long box[8];
	int n = sched_box(v, &env, ref, box, 8);
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		if (box[i] < 1 || box[i] > ti->tma_box_max) {
			Diag *d = v_report(v, "CK-HW-006", ref->slices[i].span, e->role, p->name, -1, -1,
			                   "TMA box dimension %d of '%s' is %lld elements; the hardware allows 1..%d",
			                   i, p->name, box[i], ti->tma_box_max);
			diag_set(&d->condition, "1 <= box[%d] (%lld) <= %d", i, box[i], ti->tma_box_max);
			diag_set(&d->hint, "split the copy into boxes of at most %d along that dimension", ti->tma_box_max);
		}
	int sz = dtype_size(m >= 0 ? v->smems[m].d->dt : p->dt);
	long long inner = box[n - 1] * sz;
	int span = m >= 0 ? swizzle_bytes(v->smems[m].d->swizzle) : 0;
	int al = ti->tma_inner_align;
	if (inner % al || (span > 0 && inner > span)) {
		Diag *d = v_report(v, "CK-HW-007", ref->slices[n - 1].span, e->role, smn, -1, -1,
		                   "TMA inner box is %lld B (%lld x %s); it must be a multiple of %d%s",
		                   inner, box[n - 1], dtype_name(m >= 0 ? v->smems[m].d->dt : p->dt), al,
		                   span ? " and at most the swizzle span" : "");
		if (span)
			diag_set(&d->condition, "inner_bytes (%lld) %% %d == 0 && inner_bytes <= %d (swizzle %s)",
			         inner, al, span, swizzle_name(v->smems[m].d->swizzle));
		else
			diag_set(&d->condition, "inner_bytes (%lld) %% %d == 0", inner, al);
		if (span && inner > span)
			diag_set(&d->hint, "use an inner box of %d B (%lld elements) and more boxes along K",
			         span, (long long)span / sz);
		else
			diag_set(&d->hint, "round the inner box to a multiple of %d bytes", al);
		if (m >= 0)
			diag_related(d, v->smems[m].d->span, "shared buffer '%s' declared with swizzle %s",
			             smn, swizzle_name(v->smems[m].d->swizzle));
	}
}

static void check_strides(Sched *v)
{
	int al = target_info(v->tgt)->tma_inner_align;   /* global strides: multiples of 16 bytes */
	for (int i = 0; i < v->nparams; i++) {
		Decl *p = v->params[i];
		if (p->space != SP_GLOBAL || p->rank < 2)
			continue;
		SchedStmt *use = NULL;
		for (int j = 0; j < v->nst && !use; j++) {
			Stmt *s = v->st[j].s;
			if ((s->kind == S_TMA_LOAD && sched_param(v, sched_refname(s->src)) == p) ||
			    (s->kind == S_TMA_STORE && sched_param(v, sched_refname(s->dst)) == p))
				use = &v->st[j];
		}
		if (!use)
			continue;
		int sz = dtype_size(p->dt);
		int ns = sched_nsamples(v), good = 0, bad = 0;
		long long badval = -1;
		Expr *inner = p->shape[p->rank - 1];
		for (int q = 0; q < ns; q++) {
			SchedEnv env;
			sched_env_sample(v, &env, q);
			long long x;
			if (!sched_eval(v, &env, inner, &x))
				continue;
			if ((x * sz) % al == 0)
				good++;
			else {
				bad++;
				if (badval < 0)
					badval = x;
			}
		}
		const char *ext = sched_exprstr(v, inner);
		if (bad && !good) {
			Diag *d = v_report(v, "CK-HW-008", p->span, use->role, p->name, -1, -1,
			                   "rows of '%s' are %s x %d B, not a multiple of %d B, so TMA cannot "
			                   "address them", p->name, ext, sz, al);
			diag_set(&d->condition, "(%s * %d) %% %d == 0 (fails at %s = %lld)", ext, sz, al, ext, badval);
			diag_set(&d->hint, "pad the innermost dimension to a multiple of %d elements", al / (sz ? sz : 1));
			diag_related(d, use->s->span, "TMA on '%s' here", p->name);
		} else if (bad) {
			Diag *d = v_report(v, "CK-HW-013", p->span, use->role, p->name, -1, -1,
			                   "the domain does not prove that rows of '%s' (%s x %d B) are %d-byte "
			                   "aligned, which TMA requires", p->name, ext, sz, al);
			diag_set(&d->condition, "(%s * %d) %% %d == 0 (fails at %s = %lld)", ext, sz, al, ext, badval);
			diag_set(&d->hint, "add `domain %s %% %d == 0`", ext, al / (sz ? sz : 1));
		}
	}
}

static void check_cp_async(Sched *v, SchedStmt *e)
{
	Stmt *s = e->s;
	Decl *p = sched_param(v, sched_refname(s->src));
	if (!p)
		return;
	SchedEnv env;
	sched_env_sample(v, &env, 0);
	long long box[8];
	int n = sched_box(v, &env, s->src, box, 8);
	if (n <= 0)
		return;
	long long inner = box[n - 1] * dtype_size(p->dt);
	if (inner % 4) {
		Diag *d = v_report(v, "CK-HW-009", s->span, e->role, p->name, -1, -1,
		                   "cp.async moves 4, 8 or 16 B per thread, but the contiguous run of '%s' is "
		                   "%lld B", p->name, inner);
		diag_set(&d->condition, "inner_bytes (%lld) %% 4 == 0", inner);
		diag_set(&d->hint, "copy a multiple of %d elements along the innermost dimension",
		         4 / dtype_size(p->dt) ? 4 / dtype_size(p->dt) : 1);
	}
}

static void check_cluster(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	for (int i = 0; i < v->k->ndecls; i++) {
		Decl *d0 = v->k->decls[i];
		if (!d0 || d0->kind != D_CLUSTER)
			continue;
		if (!ti->has_clusters) {
			Diag *d = v_report(v, "CK-HW-010", d0->span, -1, NULL, -1, -1,
			                   "thread-block clusters are not available on target %s", ti->name);
			diag_set(&d->condition, "target %s supports clusters", ti->name);
			diag_set(&d->hint, "remove the cluster declaration or target sm_90a");
			continue;
		}
		long long prod = 1;
		bool ok = true;
		for (int j = 0; j < d0->nexprs; j++) {
			long long x;
			if (!sched_eval(v, NULL, d0->exprs[j], &x)) {
				ok = false;
				break;
			}
			if (x < 1) {
				prod = -1;
				break;
			}
			prod *= x;
			if (prod > 1024)
				break;
		}
		if (ok && (prod < 1 || prod > ti->max_cluster)) {
			Diag *d = v_report(v, "CK-HW-011", d0->span, -1, NULL, -1, -1,
			                   "a cluster of %lld blocks exceeds the portable maximum of %d", prod, ti->max_cluster);
			diag_set(&d->condition, "1 <= cluster size (%lld) <= %d", prod, ti->max_cluster);
			diag_set(&d->hint, "use a cluster of at most %d blocks, e.g. cluster (2, 1)", ti->max_cluster);
		}
	}
}

void verify_contract(Sched *v)
{
	const TargetInfo *ti = target_info(v->tgt);
	if (!ti->has_setmaxnreg) {
		for (int r = 0; r < v->nroles; r++)
			if (v->roles[r].d->regs > 0) {
				Diag *d = v_report(v, "CK-HW-010", v->roles[r].d->span, r, NULL, -1, -1,
				                   "per-role register budgets (setmaxnreg) are not available on "
				                   "target %s", ti->name);
				diag_set(&d->condition, "target %s supports setmaxnreg", ti->name);
				diag_set(&d->hint, "drop `regs %d` from role '%s' or target sm_90a",
				         v->roles[r].d->regs, v->roles[r].name);
			}
	}
	for (int i = 0; i < v->nst; i++) {
		SchedStmt *e = &v->st[i];
		switch (e->s->kind) {
		case S_WGMMA:
		case S_MMA:
			check_matmul(v, e);
			break;
		case S_WGMMA_WAIT:
			if (!ti->has_wgmma)
				not_available(v, e, "wgmma_wait", "wgmma exists only on sm_90a");
			break;
		case S_TMA_LOAD:
		case S_TMA_STORE:
			check_tma(v, e);
			break;
		case S_CP_ASYNC:
			check_cp_async(v, e);
			break;
		case S_FENCE:
			if (e->s->fence == FENCE_PROXY_ASYNC && !ti->has_async_proxy)
				not_available(v, e, "fence.proxy.async", "no async proxy on sm_80: drop the fence");
			break;
		default:
			break;
		}
	}
	if (ti->has_tma)
		check_strides(v);
	check_cluster(v);
}
