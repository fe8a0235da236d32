/*
 * dataflow.c — data consistency traced from producer to consumer (CK-DATA-*).
 *
 * A value's representation is fixed at its producer (the TMA box that
 * fills a shared buffer, with the buffer's dtype and swizzle; the fragment
 * a matmul writes) and assumed by its consumer (the wgmma descriptor, the
 * store region). This family follows each shared buffer and fragment from
 * the statement that produces it to every statement that consumes it and
 * reports a mismatch at the consumer with the producer as related span:
 *
 *   001  wgmma operand swizzle span == bytes of one row of the tile's
 *        contiguous (K for K-major) extent;
 *   002  TMA global dtype == shared dtype (no conversion);
 *   003  TMA box (leading unit dims dropped) == one stage of the buffer;
 *   004  stored region == fragment shape;
 *   005  ring buffers used only inside loops pipelined on their ring;
 *   006  matmul shapes [M,K] @ [K,N] -> [M,N].
 */
#include "verify_int.h"

static int tma_filling(const VCtx *v, int m)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].s->kind == S_TMA_LOAD && v_smem(v, v_refname(v->st[i].s->dst)) == m)
			return i;
	return -1;
}

static void check_swizzle(VCtx *v, VStmt *e)
{
	const Expr *ops[2];
	if (!v_matmul_ops(e->s, &ops[0], &ops[1]))
		return;
	for (int k = 0; k < 2; k++) {
		int m = v_smem(v, v_refname(ops[k]));
		if (m < 0)
			continue;
		VSmem *M = &v->smems[m];
		if (!M->cshape || M->rank != 2)
			continue;
		long long row = M->dims[1] * dtype_size(M->d->dt);
		int span = swizzle_bytes(M->d->swizzle);
		int want = row >= 128 ? 128 : row == 64 ? 64 : row == 32 ? 32 : 0;
		if (want == 0 || span == want)
			continue; /* odd rows are CK-HW-003/008's business; longer rows: CK-HW-008 */
		int t = tma_filling(v, m);
		Diag *d = v_report(v, "CK-DATA-001", ops[k]->span, e->role, M->name, -1, M->pipe,
		                   "wgmma reads '%s' as rows of %lld B (%lld x %s) but the buffer is "
		                   "laid out with swizzle %s", M->name, row, M->dims[1], dtype_name(M->d->dt),
		                   swizzle_name(M->d->swizzle));
		diag_set(&d->condition, "swizzle span (%d) == row bytes of %s (%lld)", span, M->name, row);
		if (want)
			diag_set(&d->hint, "declare '%s' with `swizzle %dB`%s", M->name, want,
			         row > 128 ? " and a K extent of 128 B" : "");
		else
			diag_set(&d->hint, "widen the K extent of '%s' to at least 16 elements", M->name);
		if (t >= 0)
			diag_related(d, v->st[t].s->span, "the TMA producing '%s' writes it with swizzle %s",
			             M->name, swizzle_name(M->d->swizzle));
		else
			diag_related(d, M->d->span, "'%s' declared here", M->name);
	}
}

static void check_tma(VCtx *v, VStmt *e)
{
	Stmt *s = e->s;
	bool load = s->kind == S_TMA_LOAD;
	const Expr *ref = load ? s->src : s->dst;
	int m = v_smem(v, v_refname(load ? s->dst : s->src));
	Decl *p = v_param(v, v_refname(ref));
	if (m < 0 || !p)
		return;
	VSmem *M = &v->smems[m];
	if (p->dt != M->d->dt) {
		Diag *d = v_report(v, "CK-DATA-002", s->span, e->role, M->name, -1, M->pipe,
		                   "TMA copies %s '%s' %s %s buffer '%s' but TMA does not convert types",
		                   dtype_name(p->dt), p->name, load ? "into" : "from", dtype_name(M->d->dt),
		                   M->name);
		diag_set(&d->condition, "dtype(%s) (%s) == dtype(%s) (%s)", p->name, dtype_name(p->dt),
		         M->name, dtype_name(M->d->dt));
		diag_set(&d->hint, "declare '%s' as %s (convert in registers if needed)", M->name,
		         dtype_name(p->dt));
		diag_related(d, load ? M->d->span : p->span, "'%s' declared here",
		             load ? M->name : p->name);
	}
	VEnv env;
	venv_sample(v, &env, 0);
	long long box[8];
	int n = v_box(v, &env, ref, box, 8);
	if (n <= 0 || !M->cshape)
		return;
	int off = 0;
	while (n - off > M->rank && box[off] == 1)
		off++;
	bool same = n - off == M->rank;
	for (int i = 0; same && i < M->rank; i++)
		if (box[off + i] != M->dims[i])
			same = false;
	if (same)
		return;
	StrBuf bs = {0}, ms = {0};
	for (int i = off; i < n; i++)
		sb_printf(&bs, "%s%lld", i > off ? ", " : "", box[i]);
	for (int i = 0; i < M->rank; i++)
		sb_printf(&ms, "%s%lld", i ? ", " : "", M->dims[i]);
	Diag *d = v_report(v, "CK-DATA-003", ref->span, e->role, M->name, -1, M->pipe,
	                   "TMA box [%s] does not match %s'%s' [%s]", sb_str(&bs),
	                   M->pipe >= 0 ? "one stage of " : "", M->name, sb_str(&ms));
	diag_set(&d->condition, "box [%s] == shape(%s) [%s]", sb_str(&bs), M->name, sb_str(&ms));
	diag_set(&d->hint, "make the slice lengths match '%s' (or reshape the buffer)", M->name);
	diag_related(d, M->d->span, "'%s' declared here", M->name);
	sb_free(&bs);
	sb_free(&ms);
}

static void check_store_shape(VCtx *v, VStmt *e)
{
	Stmt *s = e->s;
	if (!s->dst || s->dst->kind != E_INDEX || !s->src)
		return;
	const Expr *src = s->src;
	while (src && src->kind == E_CALL && src->nargs == 1 && src->name &&
	       dtype_from(src->name, (int)strlen(src->name)) != DT_NONE)
		src = src->args[0];
	if (!src || src->kind != E_IDENT)
		return;
	int f = v_frag(v, src->name);
	if (f < 0 || !v->frags[f].cshape)
		return;
	VFrag *F = &v->frags[f];
	VEnv env;
	venv_sample(v, &env, 0);
	long long box[8];
	int n;
	int m = v_smem(v, v_refname(s->dst));
	if (m >= 0) {
		n = 0;
		for (int i = 0; i < s->dst->nslices && n < 8; i++) {
			const Slice *sl = &s->dst->slices[i];
			long long x;
			if (sl->kind == SL_POINT)
				x = 1;
			else if (sl->kind == SL_RANGE) {
				if (!v_eval(v, &env, sl->len, &x))
					return;
			} else {
				if (i >= v->smems[m].rank || v->smems[m].dims[i] < 0)
					return;
				x = v->smems[m].dims[i];
			}
			box[n++] = x;
		}
	} else {
		n = v_box(v, &env, s->dst, box, 8);
	}
	if (n <= 0)
		return;
	int off = 0;
	while (n - off > F->rank && box[off] == 1)
		off++;
	bool same = n - off == F->rank;
	for (int i = 0; same && i < F->rank; i++)
		if (box[off + i] != F->dims[i])
			same = false;
	/* a fragment of one row/col stored as a vector is fine when the element counts agree */
	if (!same) {
		long long a = 1, b = 1;
		for (int i = off; i < n; i++)
			a *= box[i];
		for (int i = 0; i < F->rank; i++)
			b *= F->dims[i];
		if (a == b && (n - off == 1 || F->rank == 1))
			same = true;
	}
	if (same)
		return;
	StrBuf bs = {0}, fs = {0};
	for (int i = off; i < n; i++)
		sb_printf(&bs, "%s%lld", i > off ? ", " : "", box[i]);
	for (int i = 0; i < F->rank; i++)
		sb_printf(&fs, "%s%lld", i ? ", " : "", F->dims[i]);
	Diag *d = v_report(v, "CK-DATA-004", s->dst->span, e->role, F->name, -1, -1,
	                   "the region [%s] written here does not match fragment '%s' [%s]", sb_str(&bs),
	                   F->name, sb_str(&fs));
	diag_set(&d->condition, "region [%s] == shape(%s) [%s]", sb_str(&bs), F->name, sb_str(&fs));
	diag_set(&d->hint, "store exactly the fragment's tile (slice lengths %s)", sb_str(&fs));
	diag_related(d, F->d->span, "fragment '%s' declared here", F->name);
	sb_free(&bs);
	sb_free(&fs);
}

static void check_ring_use(VCtx *v, int i)
{
	VStmt *e = &v->st[i];
	int ms[10];
	int n = v_smem_read(v, e->s, ms, 8);
	int w = v_smem_written(v, e->s);
	if (w >= 0 && n < 10)
		ms[n++] = w;
	for (int q = 0; q < n; q++) {
		VSmem *M = &v->smems[ms[q]];
		if (M->pipe < 0 || (e->ploop && e->ppipe == M->pipe))
			continue;
		Diag *d;
		if (!e->ploop)
			d = v_report(v, "CK-DATA-005", e->s->span, e->role, M->name, -1, M->pipe,
			             "ring buffer '%s' of pipeline '%s' is used outside a loop pipelined on "
			             "'%s', so its stage is undefined", M->name, v->pipes[M->pipe].name,
			             v->pipes[M->pipe].name);
		else
			d = v_report(v, "CK-DATA-005", e->s->span, e->role, M->name, -1, M->pipe,
			             "ring buffer '%s' of pipeline '%s' is used in a loop pipelined on '%s'",
			             M->name, v->pipes[M->pipe].name, e->ploop->pipe ? e->ploop->pipe : "?");
		diag_set(&d->condition, "use of %s inside `for ... pipelined %s`", M->name,
		         v->pipes[M->pipe].name);
		diag_set(&d->hint, "move the access into the loop pipelined on '%s', or drop `ring` from '%s'",
		         v->pipes[M->pipe].name, M->name);
		diag_related(d, M->d->span, "'%s' declared with ring %s", M->name, v->pipes[M->pipe].name);
	}
}

static bool op_shape(const VCtx *v, const Expr *e, long long d[2])
{
	const char *n = v_refname(e);
	int m = v_smem(v, n), f = v_frag(v, n);
	const long long *dims;
	if (m >= 0 && v->smems[m].rank == 2 && v->smems[m].cshape)
		dims = v->smems[m].dims;
	else if (f >= 0 && v->frags[f].rank == 2 && v->frags[f].cshape)
		dims = v->frags[f].dims;
	else
		return false;
	bool t = v_is_transposed(e);
	d[0] = t ? dims[1] : dims[0];
	d[1] = t ? dims[0] : dims[1];
	return true;
}

static void check_matmul_shapes(VCtx *v, VStmt *e)
{
	const Expr *A, *B;
	if (!v_matmul_ops(e->s, &A, &B))
		return;
	int f = v_frag(v, v_refname(e->s->dst));
	long long a[2], b[2];
	if (f < 0 || v->frags[f].rank != 2 || !v->frags[f].cshape || !op_shape(v, A, a) ||
	    !op_shape(v, B, b))
		return;
	VFrag *F = &v->frags[f];
	if (a[0] == F->dims[0] && b[1] == F->dims[1] && a[1] == b[0])
		return;
	Diag *d = v_report(v, "CK-DATA-006", e->s->src->span, e->role, F->name, -1, -1,
	                   "matmul shapes disagree: [%lld, %lld] @ [%lld, %lld] into '%s' [%lld, %lld]",
	                   a[0], a[1], b[0], b[1], F->name, F->dims[0], F->dims[1]);
	diag_set(&d->condition, "A [M,K] @ B [K,N] -> acc [M,N]: M %lld==%lld, K %lld==%lld, N %lld==%lld",
	         a[0], F->dims[0], a[1], b[0], b[1], F->dims[1]);
	diag_set(&d->hint, a[1] != b[0] && a[1] == b[1] ? "B is stored [N, K]: write it as %s^T" :
	         "fix the tile shapes so that the inner dimensions and the accumulator agree",
	         v_refname(B) ? v_refname(B) : "b");
	diag_related(d, F->d->span, "accumulator '%s' declared here", F->name);
}

void verify_dataflow(VCtx *v)
{
	for (int i = 0; i < v->nst; i++) {
		VStmt *e = &v->st[i];
		switch (e->s->kind) {
		case S_WGMMA:
			if (v->tgt == TGT_SM90A)
				check_swizzle(v, e);
			check_matmul_shapes(v, e);
			break;
		case S_MMA:
			check_matmul_shapes(v, e);
			break;
		case S_TMA_LOAD:
		case S_TMA_STORE:
			check_tma(v, e);
			break;
		case S_STORE:
		case S_ATOMIC:
			check_store_shape(v, e);
			break;
		default:
			break;
		}
		if (e->role >= 0)
			check_ring_use(v, i);
	}
}
