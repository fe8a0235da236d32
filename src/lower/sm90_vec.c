/*
 * sm90_vec.c — plain (non-tensor-core) SIMT vector work for sm_90a.
 *
 * Not every role of a Cake kernel feeds tensor cores. A role that owns no
 * accumulator-layout fragment (the segmented k-means update, row-wise
 * epilogues) does ordinary per-thread work: it reads single elements of
 * global tensors to steer itself (`let lo = Offsets[c]`, `let p = Order[t]`)
 * and streams whole rows through registers (`load x <- X[p, :]`, `acc = acc +
 * f32(x)`, `store Cent[c, :] <- bf16(acc / n)`). This file lowers exactly
 * that; sm90.c dispatches to it (sm90_int.h).
 *
 * Element reads. `G[i, j]` with one point index per dimension, in any scalar
 * context (let, loop bounds, if conditions, slice starts, scalars in
 * fragment math), is one load computed by every thread that evaluates it
 * (the value is uniform, so no broadcast is needed). The address is
 * `G + (long long)i * stride0 + (long long)j`: 64-bit index arithmetic, so
 * a tensor of more than 2^31 elements is addressed correctly. A tensor the
 * kernel never writes (no store, atomic_add or tma store names it) is read
 * through the non-coherent path (ld.global.nc, what __ldg does); one it
 * writes is read with a plain ld.global, ordered after the kernel's own
 * stores. A `let` of an element read takes the tensor's type (16-bit floats
 * are held as f32, like fragment registers).
 *
 * Thread vectors (FRAG_VEC, lower.h). A rank-1 fragment of such a role is
 * spread over the role's threads in contiguous runs: role thread t holds
 * elements t*P .. t*P + P-1, P = ceil(len / threads). A row load or store of
 * the fragment is therefore coalesced (consecutive threads touch consecutive
 * runs), and each thread moves its run in the widest piece the alignment
 * allows: W bytes with W the largest power of two <= 16 that divides the run
 * (P * element size) and every part of the start offset (the row stride
 * times the point indices, the slice start — constant factors are tracked,
 * a bare dim counts as 1). The base pointer is assumed 16-byte aligned (what
 * cuMemAlloc returns). When P * threads exceeds the length, the threads past
 * the end skip the access (their registers are zeroed by a load); a length
 * that is not a multiple of P falls back to element accesses with a bound
 * check per element. Element-wise math over these fragments is the generic
 * register loop of sm90.c with index `v_`.
 *
 * Scatter forms and counters (the device counting sort of the k-means update).
 * A thread vector of integers can index the last dimension of a reference:
 * `atomic_add G[b, idx] <- v` (red.global.add per element), `store G[b, idx]
 * <- v` (a plain store per element) and `v = fetch_add(G[b, idx], x)`
 * (atomicAdd returning the old value); indices outside the extent are skipped
 * (fetch_add yields -1). On a plain shared buffer of 4-byte elements the same
 * forms are red/atom.shared, and whole rows move between a thread vector and
 * the buffer with ld/st.shared (a per-CTA histogram). `v = cumsum(x, 0)` is a
 * role-wide scan: per thread, a shuffle ladder per warp, warp totals through a
 * __shared__ array between named barriers over the role.
 *
 * Refused with CK-LOW-002 (loads) or CK-LOW-011 (stores), naming the
 * construct: slices other than leading point indices followed by one
 * `start +: len` / `:` over the innermost dimension, a length different
 * from the fragment's, element types other than bf16/f16/f32/i32/u32, a
 * dtype change in a load, reads of shared buffers or fragments in a scalar
 * context.
 */
#include "sm90_int.h"

#include <string.h>

/* ---- small lookups ---- */

static const Decl *global_param(const Em *e, const char *name)
{
	for (int i = 0; name && i < e->k->ndecls; i++) {
		const Decl *d = e->k->decls[i];
		if (d->kind == D_PARAM && d->space == SP_GLOBAL && d->name && strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

/* Does any statement in ss store into, atomically update or tma-store into `name`? */
static bool written_in(Stmt **ss, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		const Stmt *s = ss[i];
		if ((s->kind == S_STORE || s->kind == S_ATOMIC || s->kind == S_TMA_STORE) && s->dst) {
			const char *b = lower_base_name(s->dst);
			if (b && strcmp(b, name) == 0)
				return true;
		}
		if (written_in(s->body, s->nbody, name) || written_in(s->els, s->nels, name))
			return true;
	}
	return false;
}

static bool read_only(const Em *e, const char *name)
{
	return !written_in(e->k->body, e->k->nbody, name);
}

static bool plain_dtype(DType t)
{
	return t == DT_BF16 || t == DT_F16 || t == DT_F32 || t == DT_I32 || t == DT_U32;
}

static long long gcd_ll(long long a, long long b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		long long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The largest c with a constraint `name % c == 0` in the kernel's domain (1 if none):
 * what the launch guarantees about a dim. */
static long long domain_multiple(const Kernel *k, const char *name)
{
	long long best = 1, c;
	for (int i = 0; i < k->ndecls; i++) {
		const Decl *d = k->decls[i];
		for (int j = 0; d->kind == D_DOMAIN && j < d->nexprs; j++) {
			const Expr *x = d->exprs[j];   /* name % c == 0 */
			if (x && x->kind == E_BINARY && x->op == OP_EQ && x->rhs && x->rhs->kind == E_INT && x->rhs->ival == 0 &&
			    x->lhs && x->lhs->kind == E_BINARY && x->lhs->op == '%' && x->lhs->lhs && x->lhs->lhs->kind == E_IDENT &&
			    x->lhs->lhs->name && !strcmp(x->lhs->lhs->name, name) && eval_expr(x->lhs->rhs, k, NULL, &c) && c > best)
				best = c;
		}
	}
	return best;
}

/* A positive number that provably divides the value of scalar expression x
 * (1 when nothing is known): literals and consts exactly, a dim by its domain
 * constraints (`K % 128 == 0`), products multiply, sums and differences take
 * the gcd. Used to prove vector alignment. */
long long sm90_known_multiple(const Em *e, const Expr *x)
{
	long long v;
	if (!x)
		return 1;
	if (eval_expr(x, e->k, NULL, &v))
		return v ? (v < 0 ? -v : v) : 0;   /* 0 is a multiple of everything */
	if (x->kind == E_IDENT && x->name)
		return domain_multiple(e->k, x->name);
	if (x->kind == E_BINARY) {
		long long a = sm90_known_multiple(e, x->lhs), b = sm90_known_multiple(e, x->rhs);
		if (x->op == '*')
			return a && b ? a * b : 0;
		if (x->op == '+' || x->op == '-')
			return gcd_ll(a, b) ? gcd_ll(a, b) : 1;
		if (x->op == OP_SHL && x->rhs && eval_expr(x->rhs, e->k, NULL, &v) && v >= 0 && v < 30)
			return a ? a << v : 0;
	}
	return 1;
}

/* ---- element reads in scalar expressions ---- */

bool sm90_vec_has_reads(const Expr *x)
{
	if (!x)
		return false;
	if (x->kind == E_INDEX)
		return true;
	if (sm90_vec_has_reads(x->lhs) || sm90_vec_has_reads(x->rhs))
		return true;
	for (int i = 0; i < x->nargs; i++)
		if (sm90_vec_has_reads(x->args[i]))
			return true;
	return false;
}

const Expr *sm90_vec_reads_bad(Em *e, const Expr *x, const Expr *(*bad)(Em *, const Expr *))
{
	if (!x || x->kind != E_INDEX || !x->base || x->base->kind != E_IDENT)
		return x;
	const Decl *g = global_param(e, x->base->name);
	if (!g || g->rank != x->nslices || (!plain_dtype(g->dt) && g->dt != DT_I64))
		return x;
	for (int i = 0; i < x->nslices; i++) {
		if (x->slices[i].kind != SL_POINT)
			return x;
		const Expr *b = bad(e, x->slices[i].start);
		if (b)
			return b;
	}
	return NULL;
}

/* "(long long)(i) * stride + ..." : the element offset of the point indices of
 * x's first npoints dimensions in row-major tensor g (C text, 64-bit). */
static void point_offset(Em *e, StrBuf *o, const Expr *x, const Decl *g, int npoints)
{
	for (int i = 0; i < npoints; i++) {
		if (i)
			sb_puts(o, " + ");
		sb_printf(o, "(long long)%s", sm90_cexpr_p(e, x->slices[i].start));
		long long cst = 1;
		bool folded = true;
		for (int j = i + 1; j < g->rank; j++) {
			long long v;
			if (eval_expr(g->shape[j], e->k, NULL, &v))
				cst *= v;
			else
				folded = false;
		}
		for (int j = i + 1; j < g->rank && !folded; j++) {
			long long v;
			if (!eval_expr(g->shape[j], e->k, NULL, &v))
				sb_printf(o, " * (long long)%s", sm90_cexpr_p(e, g->shape[j]));
		}
		if (cst != 1)
			sb_printf(o, " * %lld", cst);
	}
}

/* C text of one element read G[i, ..] as a value of G's (register) type. */
static char *read_text(Em *e, const Expr *x)
{
	const Decl *g = global_param(e, x->base->name);
	StrBuf b = {0};
	point_offset(e, &b, x, g, g->rank);
	bool nc = read_only(e, g->name);
	const char *ld = nc ? "ld_global_nc" : "ld_global";
	e->need_gmem = true;
	char *r;
	const char *addr = arena_printf(&e->c->arena, "%s + %s", g->name, sb_str(&b));
	switch (g->dt) {
	case DT_BF16: r = arena_printf(&e->c->arena, "bf16lo_f32(%s_b16(%s))", ld, addr); break;
	case DT_F16: r = arena_printf(&e->c->arena, "f16lo_f32(%s_b16(%s))", ld, addr); break;
	case DT_F32: r = arena_printf(&e->c->arena, "__uint_as_float(%s_b32(%s))", ld, addr); break;
	case DT_I32: r = arena_printf(&e->c->arena, "(int)%s_b32(%s)", ld, addr); break;
	case DT_U32: r = arena_printf(&e->c->arena, "%s_b32(%s)", ld, addr); break;
	default: r = arena_printf(&e->c->arena, "(long long)%s_b64(%s)", ld, addr); break;
	}
	sb_free(&b);
	return r;
}

/* Fully parenthesised C text of x; subtrees without element reads go through
 * the ordinary scalar spelling of sm90.c. */
static void sc_emit(Em *e, StrBuf *o, const Expr *x)
{
	if (!sm90_vec_has_reads(x)) {
		sb_puts(o, sm90_cexpr_p(e, x));
		return;
	}
	switch (x->kind) {
	case E_INDEX:
		sb_printf(o, "(%s)", read_text(e, x));
		return;
	case E_UNARY:
		sb_printf(o, "(%s", op_spelling(x->op));
		sc_emit(e, o, x->lhs);
		sb_putc(o, ')');
		return;
	case E_BINARY:
		sb_putc(o, '(');
		sc_emit(e, o, x->lhs);
		sb_printf(o, " %s ", op_spelling(x->op));
		sc_emit(e, o, x->rhs);
		sb_putc(o, ')');
		return;
	case E_CALL: {   /* min/max, float math, casts: the calls scalar_bad lets through */
		StrBuf a[2] = {{0}, {0}};
		const char *args[2] = {"", ""};
		for (int i = 0; i < x->nargs && i < 2; i++) {
			sc_emit(e, &a[i], x->args[i]);
			args[i] = sb_str(&a[i]);
		}
		if (!lower_call_spell(o, x, args))
			sb_puts(o, "0");
		sb_free(&a[0]);
		sb_free(&a[1]);
		return;
	}
	default:
		sb_puts(o, "0");
		return;
	}
}

char *sm90_vec_cexpr(Em *e, const Expr *x)
{
	if (x && x->kind == E_INDEX)
		return read_text(e, x);   /* a bare read needs no parentheses */
	StrBuf b = {0};
	sc_emit(e, &b, x);
	char *r = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	return r;
}

const char *sm90_vec_let_type(Em *e, const Expr *x)
{
	DType t = x ? x->type.dt : DT_NONE;
	if (x && x->kind == E_INDEX && x->base && x->base->kind == E_IDENT) {
		const Decl *g = global_param(e, x->base->name);
		if (g)
			t = g->dt;
	}
	switch (t) {
	case DT_BF16: case DT_F16: case DT_F32: return "float";
	case DT_U32: return "u32";
	case DT_I64: return "long long";
	case DT_BOOL: return "bool";
	default: return "int";
	}
}

/* ---- row loads and stores of thread vectors ---- */

/* The access shape shared by loads and stores: G[i0, .., s +: len] with one
 * range (or `:`) over the innermost dimension. */
typedef struct RowAcc {
	const Decl *g;
	long long len;      /* elements covered by the range */
	char *start;        /* C text of the first element's offset (64-bit) */
	long long align;    /* bytes the start offset provably is a multiple of */
	int W;              /* bytes per access */
	int per;            /* elements per thread (P) */
	int nchunks;        /* accesses per thread (P * esz / W) */
	int epc;            /* elements per access */
	int mode;           /* 0 every thread full, 1 thread-level guard, 2 element guard */
} RowAcc;

static bool row_access(Em *e, const Expr *x, const PlanFrag *f, RowAcc *a)
{
	memset(a, 0, sizeof *a);
	if (!x || x->kind != E_INDEX || !x->base || x->base->kind != E_IDENT)
		return false;
	a->g = global_param(e, x->base->name);
	const Decl *g = a->g;
	if (!g || g->rank != x->nslices || g->rank < 1 || !plain_dtype(g->dt))
		return false;
	int r = g->rank;
	for (int i = 0; i < r - 1; i++)
		if (x->slices[i].kind != SL_POINT)
			return false;
	const Slice *sl = &x->slices[r - 1];
	if (sl->kind == SL_RANGE) {
		if (!eval_expr(sl->len, e->k, NULL, &a->len))
			return false;
	} else if (sl->kind == SL_ALL) {
		if (!eval_expr(g->shape[r - 1], e->k, NULL, &a->len))
			return false;
	} else {
		return false;
	}
	if (a->len != f->rows)
		return false;
	int esz = dtype_size(g->dt);
	/* start offset text and its provable alignment */
	StrBuf b = {0};
	point_offset(e, &b, x, g, r - 1);
	long long mult = 0;   /* the offset is a multiple of this many elements (0: it is 0) */
	for (int i = 0; i < r - 1; i++) {
		long long m = sm90_known_multiple(e, x->slices[i].start);
		for (int j = i + 1; j < r; j++)
			m *= sm90_known_multiple(e, g->shape[j]);
		mult = gcd_ll(mult, m);
	}
	if (sl->kind == SL_RANGE) {
		long long v;
		if (!(eval_expr(sl->start, e->k, NULL, &v) && v == 0)) {
			sb_printf(&b, "%s%s", b.len ? " + " : "", sm90_cexpr_p(e, sl->start));
			mult = gcd_ll(mult, sm90_known_multiple(e, sl->start));
		}
	}
	if (!b.len)
		sb_puts(&b, "0");
	a->start = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	a->align = mult == 0 ? 16 : gcd_ll(mult * esz, 16);
	const PlanRole *ro = &e->p->roles[f->role];
	a->per = f->regs_per_thread;
	long long run = (long long)a->per * esz;
	a->mode = (long long)a->per * ro->nthreads == a->len ? 0 : a->len % a->per == 0 ? 1 : 2;
	int W = 16;
	while (W > esz && (run % W || a->align % W))
		W /= 2;
	if (a->mode == 2 || W < esz)
		W = esz;
	a->W = W;
	a->epc = W / esz;
	a->nchunks = (int)(run / W);
	return true;
}

/* The helper suffix of a W-byte access. */
static const char *wsuffix(int W)
{
	return W == 2 ? "b16" : W == 4 ? "b32" : W == 8 ? "v2" : "v4";
}

/* "element t" or "elements P*t .. P*t + P-1": the run a role thread holds. */
static const char *run_text(Em *e, int per)
{
	return per == 1 ? "element t" : arena_printf(&e->c->arena, "elements %d*t .. %d*t + %d", per, per, per - 1);
}

/* "const int vt_ = ..." (the thread's index within the role) and the pointer to
 * its first element. */
static void vec_prologue(Em *e, const PlanRole *ro, const RowAcc *a, bool load)
{
	if (ro->thread_lo)
		sm90_line(e, "const int vt_ = (int)threadIdx.x - %d;   /* thread within role %s */", ro->thread_lo, ro->name);
	else
		sm90_line(e, "const int vt_ = (int)threadIdx.x;   /* thread within role %s */", ro->name);
	const char *t = a->per == 1 ? "vt_" : arena_printf(&e->c->arena, "(long long)vt_ * %d", a->per);
	if (strcmp(a->start, "0") == 0)
		sm90_line(e, "%s%s *%s = %s + %s;", load ? "const " : "", sm90_ctype(a->g->dt), load ? "src_" : "dst_", a->g->name, t);
	else
		sm90_line(e, "%s%s *%s = %s + %s + %s;", load ? "const " : "", sm90_ctype(a->g->dt), load ? "src_" : "dst_", a->g->name, a->start, t);
}

void sm90_vec_load(Em *e, Stmt *s, const PlanFrag *f)
{
	RowAcc a;
	if (f->role != e->role || f->regs_per_thread == 0 || !row_access(e, s->src, f, &a) || a.g->dt != f->dt) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002",
		                      "load into thread vector '%s' (%s[%lld]) is lowered for sm_90a only as `load %s <- G[i, .., start +: %lld]` (or `:`) from a global bf16, f16, f32, i32 or u32 tensor of the same dtype: point indices, then one range over the innermost dimension",
		                      f->name, dtype_name(f->dt), f->rows, f->name, f->rows);
		diag_set(&d->resource, "%s", f->name);
		diag_set(&d->hint, "load a whole row (or a contiguous piece of one) of the fragment's length and dtype");
		return;
	}
	const Decl *g = a.g;
	const PlanRole *ro = &e->p->roles[e->role];
	e->need_gmem = true;
	const char *ld = read_only(e, g->name) ? "ld_global_nc" : "ld_global";
	int words = a.W <= 4 ? 1 : a.W / 4;
	sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "%lld %s over %d threads: thread t loads %s (%d-byte loads, coalesced)", a.len,
	                                         dtype_name(g->dt), ro->nthreads, run_text(e, a.per), a.W));
	sm90_line(e, "{");
	e->ind++;
	vec_prologue(e, ro, &a, true);
	if (a.mode == 2) {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int k_ = 0; k_ < %d; ++k_) {", a.per);
		sm90_line(e, "\tu32 w_[1] = {0u};");
		sm90_line(e, "\tif (vt_ * %d + k_ < %lld)", a.per, a.len);
		sm90_line(e, "\t\tw_[0] = %s_%s(src_ + k_);", ld, wsuffix(a.W));
		const char *u = g->dt == DT_BF16 ? "bf16lo_f32(w_[0])" : g->dt == DT_F16 ? "f16lo_f32(w_[0])" : g->dt == DT_F32 ? "__uint_as_float(w_[0])" :
		                g->dt == DT_I32 ? "(int)w_[0]" : "w_[0]";
		sm90_line(e, "\t%s[k_] = %s;", f->name, u);
		sm90_line(e, "}");
		e->ind--;
		sm90_line(e, "}");
		return;
	}
	if (a.mode == 1) {
		sm90_line(e, "if (vt_ < %lld) {   /* threads past the end hold nothing */", a.len / a.per);
		e->ind++;
	}
	const char *unpack;
	switch (g->dt) {
	case DT_BF16: unpack = a.epc == 1 ? "bf16lo_f32(w_[0])" : "bf16lo_f32(w_[k_ / 2] >> (16 * (k_ % 2)))"; break;
	case DT_F16: unpack = a.epc == 1 ? "f16lo_f32(w_[0])" : "f16lo_f32(w_[k_ / 2] >> (16 * (k_ % 2)))"; break;
	case DT_F32: unpack = "__uint_as_float(w_[k_])"; break;
	case DT_I32: unpack = "(int)w_[k_]"; break;
	default: unpack = "w_[k_]"; break;
	}
	if (a.nchunks == 1 && a.epc == 1 && a.W <= 4) {   /* one element per thread, one load */
		sm90_line(e, "const u32 w_[1] = {%s_%s(src_)};", ld, wsuffix(a.W));
		const char *k0 = unpack;
		if (g->dt == DT_F32)
			k0 = "__uint_as_float(w_[0])";
		else if (g->dt == DT_I32)
			k0 = "(int)w_[0]";
		else if (g->dt == DT_U32)
			k0 = "w_[0]";
		sm90_line(e, "%s[0] = %s;", f->name, k0);
	} else {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int q_ = 0; q_ < %d; ++q_) {", a.nchunks);
		sm90_line(e, "\tu32 w_[%d];", words);
		if (a.W <= 4)
			sm90_line(e, "\tw_[0] = %s_%s(src_ + q_ * %d);", ld, wsuffix(a.W), a.epc);
		else
			sm90_line(e, "\t%s_%s(src_ + q_ * %d, w_);", ld, wsuffix(a.W), a.epc);
		sm90_line(e, "\t#pragma unroll");
		sm90_line(e, "\tfor (int k_ = 0; k_ < %d; ++k_)", a.epc);
		sm90_line(e, "\t\t%s[q_ * %d + k_] = %s;", f->name, a.epc, unpack);
		sm90_line(e, "}");
	}
	if (a.mode == 1) {
		e->ind--;
		sm90_line(e, "} else {");
		sm90_line(e, "\t#pragma unroll");
		sm90_line(e, "\tfor (int k_ = 0; k_ < %d; ++k_)", a.per);
		sm90_line(e, "\t\t%s[k_] = 0;", f->name);
		sm90_line(e, "}");
	}
	e->ind--;
	sm90_line(e, "}");
}

void sm90_vec_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *f)
{
	RowAcc a;
	bool shape = f->role == e->role && f->regs_per_thread > 0 && row_access(e, s->dst, f, &a);
	if (!shape || (cast != DT_NONE && cast != a.g->dt)) {
		const char *gname = lower_base_name(s->dst);
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-011",
		                      "store of thread-vector expression over '%s' (%lld elements) is lowered for sm_90a only as `store G[i, .., start +: %lld] <- [cast(]expr[)]` (or `:`) into a global bf16, f16, f32, i32 or u32 tensor: point indices, then one range of the vector's length over the innermost dimension%s",
		                      f->name, f->rows, f->rows, shape ? ", converting to the tensor's own dtype" : "");
		diag_set(&d->resource, "%s", gname ? gname : f->name);
		return;
	}
	const Decl *g = a.g;
	Fx c = {FRAG_VEC, f, NULL, 0};
	StrBuf val = {0};
	if (!sm90_fx_emit(e, &val, src, &c)) {
		sb_free(&val);
		return;
	}
	const PlanRole *ro = &e->p->roles[e->role];
	e->need_gmem = true;
	const char *pack;
	switch (g->dt) {
	case DT_BF16: pack = "(u32)bf16_bits(%s)"; break;
	case DT_F16: pack = "(u32)f16_bits(%s)"; break;
	case DT_F32: pack = "__float_as_uint((float)(%s))"; break;
	case DT_I32: pack = "(u32)(int)(%s)"; break;
	default: pack = "(u32)(%s)"; break;
	}
	char *pv = arena_printf(&e->c->arena, pack, sb_str(&val));
	sb_free(&val);
	int esz = dtype_size(g->dt);
	int words = a.W <= 4 ? 1 : a.W / 4;
	sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "%lld %s over %d threads: thread t stores %s (%d-byte stores, coalesced)", a.len,
	                                         dtype_name(g->dt), ro->nthreads, run_text(e, a.per), a.W));
	sm90_line(e, "{");
	e->ind++;
	vec_prologue(e, ro, &a, false);
	if (a.mode == 2) {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int v_ = 0; v_ < %d; ++v_)", a.per);
		sm90_line(e, "\tif (vt_ * %d + v_ < %lld)", a.per, a.len);
		sm90_line(e, "\t\tst_global_%s(dst_ + v_, %s);", wsuffix(a.W), pv);
		e->ind--;
		sm90_line(e, "}");
		return;
	}
	if (a.mode == 1) {
		sm90_line(e, "if (vt_ < %lld) {   /* threads past the end hold nothing */", a.len / a.per);
		e->ind++;
	}
	if (a.nchunks == 1 && a.epc == 1 && a.W <= 4) {   /* one element per thread, one store */
		sm90_line(e, "const int v_ = 0;");
		sm90_line(e, "st_global_%s(dst_, %s);", wsuffix(a.W), pv);
	} else {
		sm90_line(e, "#pragma unroll");
		sm90_line(e, "for (int q_ = 0; q_ < %d; ++q_) {", a.nchunks);
		sm90_line(e, "\tu32 w_[%d] = {0u};", words);
		sm90_line(e, "\t#pragma unroll");
		sm90_line(e, "\tfor (int k_ = 0; k_ < %d; ++k_) {", a.epc);
		sm90_line(e, "\t\tconst int v_ = q_ * %d + k_;", a.epc);
		if (esz == 2)
			sm90_line(e, "\t\tw_[k_ / 2] |= %s << (16 * (k_ %% 2));", pv);
		else
			sm90_line(e, "\t\tw_[k_] = %s;", pv);
		sm90_line(e, "\t}");
		if (a.W <= 4)
			sm90_line(e, "\tst_global_%s(dst_ + q_ * %d, w_[0]);", wsuffix(a.W), a.epc);
		else
			sm90_line(e, "\tst_global_%s(dst_ + q_ * %d, w_);", wsuffix(a.W), a.epc);
		sm90_line(e, "}");
	}
	if (a.mode == 1) {
		e->ind--;
		sm90_line(e, "}");
	}
	e->ind--;
	sm90_line(e, "}");
}

/* ---- scatter forms and scans over thread vectors ---- */

char *sm90_vec_elem_index(Em *e, const PlanFrag *f)
{
	const PlanRole *ro = &e->p->roles[f->role];
	const char *t = ro->thread_lo ? arena_printf(&e->c->arena, "((int)threadIdx.x - %d)", ro->thread_lo) : "(int)threadIdx.x";
	return f->regs_per_thread == 1 ? arena_printf(&e->c->arena, "(%s + v_)", t)
	                               : arena_printf(&e->c->arena, "(%s * %d + v_)", t, f->regs_per_thread);
}

/* G[i, .., ix]: point indices, the last one the thread-vector index ix. Sets
 * the tensor, the C text of its base pointer at the point indices, and the
 * extent of the indexed dimension. */
static bool scatter_ref(Em *e, const Expr *ref, const PlanFrag *ix, const Decl **g, char **base, char **extent)
{
	if (!ref || ref->kind != E_INDEX || !ref->base || ref->base->kind != E_IDENT)
		return false;
	*g = global_param(e, ref->base->name);
	int r = *g ? (*g)->rank : 0;
	if (!*g || r != ref->nslices || ref->slices[r - 1].kind != SL_POINT || sm90_frag_of(e, ref->slices[r - 1].start) != ix)
		return false;
	for (int i = 0; i < r - 1; i++)
		if (ref->slices[i].kind != SL_POINT || sm90_frag_of(e, ref->slices[i].start))
			return false;
	StrBuf b = {0};
	point_offset(e, &b, ref, *g, r - 1);
	*base = arena_printf(&e->c->arena, "%s%s%s", (*g)->name, b.len ? " + " : "", sb_str(&b));
	sb_free(&b);
	*extent = sm90_cexpr_p(e, (*g)->shape[r - 1]);
	return true;
}

/* The loop over the elements this thread holds, with the bounds guard of a
 * vector shorter than P * threads; closes with vec_loop_end. */
static void vec_loop_begin(Em *e, const PlanFrag *f)
{
	const PlanRole *ro = &e->p->roles[f->role];
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int v_ = 0; v_ < %d; ++v_) {", f->regs_per_thread);
	e->ind++;
	if ((long long)f->regs_per_thread * ro->nthreads != f->rows)
		sm90_line(e, "if (%s >= %lld) continue;   /* past the end of the vector */", sm90_vec_elem_index(e, f), f->rows);
}

static void vec_loop_end(Em *e)
{
	e->ind--;
	sm90_line(e, "}");
}

/* The C value of s->src (or `src`) per element, in the loop context of f. */
static bool vec_value(Em *e, const Expr *src, const PlanFrag *f, StrBuf *val)
{
	Fx c = {FRAG_VEC, f, NULL, 0};
	return sm90_fx_emit(e, val, src, &c);
}

/* The frame shared by the scatter forms: a block holding `base_` (when base is
 * given), the loop over the elements of loopf, and `row_` = the index element. */
static void scatter_begin(Em *e, Span sp, const char *comment, const char *ct, const char *base, const PlanFrag *loopf, const PlanFrag *ix)
{
	sm90_ir_comment(e, sp, comment);
	sm90_line(e, "{");
	e->ind++;
	if (base)
		sm90_line(e, "%s *const base_ = %s;", ct, base);
	vec_loop_begin(e, loopf);
	sm90_line(e, "const int row_ = (int)%s[v_];", ix->name);
}

static void scatter_end(Em *e)
{
	vec_loop_end(e);
	e->ind--;
	sm90_line(e, "}");
}

void sm90_vec_atomic(Em *e, Stmt *s, const PlanFrag *ix)
{
	const Decl *g;
	char *base, *ext;
	StrBuf val = {0};
	if (ix->role != e->role || !scatter_ref(e, s->dst, ix, &g, &base, &ext) || (g->dt != DT_I32 && g->dt != DT_U32 && g->dt != DT_F32)) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002", "atomic_add with the thread-vector index '%s' is lowered for sm_90a only as `atomic_add G[i, .., %s] <- v` into a global i32, u32 or f32 tensor (point indices, the index vector last)",
		                      ix->name, ix->name);
		diag_set(&d->resource, "%s", ix->name);
		return;
	}
	if (!vec_value(e, s->src, ix, &val)) {
		sb_free(&val);
		return;
	}
	e->need_red = true;
	scatter_begin(e, s->span, "scatter: each thread adds its elements to the entries its index elements name", sm90_ctype(g->dt), base, ix, ix);
	sm90_line(e, "if ((unsigned)row_ < (unsigned)%s)", ext);
	sm90_line(e, "\t%s(base_ + row_, (%s)(%s));", g->dt == DT_F32 ? "red_add_f32" : "red_add_s32", g->dt == DT_F32 ? "float" : "int", sb_str(&val));
	scatter_end(e);
	sb_free(&val);
}

/* atomic_add G[i, .., s +: len] <- expr (or `:`): a thread vector added element-wise into one
 * row of a global f32 or i32 tensor, each thread adding its own run of elements (the layout
 * of sm90_vec_store) with one red.global.add per element. Partial sums of a row from several
 * CTAs meet here: the split segment sums of kernels/kmeans/update_sorted.cake. */
void sm90_vec_atomic_row(Em *e, Stmt *s, const PlanFrag *f)
{
	RowAcc a;
	bool shape = f->role == e->role && f->regs_per_thread > 0 && row_access(e, s->dst, f, &a);
	if (!shape || (a.g->dt != DT_F32 && a.g->dt != DT_I32)) {
		const char *gname = lower_base_name(s->dst);
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-002",
		                      "atomic_add of thread-vector expression over '%s' (%lld elements) is lowered for sm_90a only as `atomic_add G[i, .., start +: %lld] <- expr` (or `:`) into a global f32 or i32 tensor: point indices, then one range of the vector's length over the innermost dimension",
		                      f->name, f->rows, f->rows);
		diag_set(&d->resource, "%s", gname ? gname : f->name);
		return;
	}
	StrBuf val = {0};
	if (!vec_value(e, s->src, f, &val)) {
		sb_free(&val);
		return;
	}
	const PlanRole *ro = &e->p->roles[e->role];
	e->need_red = true;
	e->need_gmem = true;
	sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "%lld %s over %d threads: thread t adds %s (one red.global.add each)", a.len,
	                                         dtype_name(a.g->dt), ro->nthreads, run_text(e, a.per)));
	sm90_line(e, "{");
	e->ind++;
	vec_prologue(e, ro, &a, false);
	if (a.mode == 1) {
		sm90_line(e, "if (vt_ < %lld) {   /* threads past the end hold nothing */", a.len / a.per);
		e->ind++;
	}
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int v_ = 0; v_ < %d; ++v_)", a.per);
	if (a.mode == 2)
		sm90_line(e, "	if (vt_ * %d + v_ < %lld)", a.per, a.len);
	sm90_line(e, "	%s(dst_ + v_, (%s)(%s));", a.g->dt == DT_F32 ? "red_add_f32" : "red_add_s32", a.g->dt == DT_F32 ? "float" : "int",
	          sb_str(&val));
	sb_free(&val);
	if (a.mode == 1) {
		e->ind--;
		sm90_line(e, "}");
	}
	e->ind--;
	sm90_line(e, "}");
}

void sm90_vec_scatter_store(Em *e, Stmt *s, const Expr *src, DType cast, const PlanFrag *ix)
{
	const Decl *g;
	char *base, *ext;
	StrBuf val = {0};
	if (ix->role != e->role || !scatter_ref(e, s->dst, ix, &g, &base, &ext) || (g->dt != DT_I32 && g->dt != DT_U32 && g->dt != DT_F32) ||
	    (cast != DT_NONE && cast != g->dt)) {
		Diag *d = sm90_refuse(e, s->span, "CK-LOW-011", "a store with the thread-vector index '%s' is lowered for sm_90a only as `store G[i, .., %s] <- v` into a global i32, u32 or f32 tensor (point indices, the index vector last)",
		                      ix->name, ix->name);
		diag_set(&d->resource, "%s", ix->name);
		return;
	}
	if (!vec_value(e, src, ix, &val)) {
		sb_free(&val);
		return;
	}
	const char *ct = sm90_ctype(g->dt);
	scatter_begin(e, s->span, "scatter store: element r goes to the entry index element r names (out of range: skipped)", ct, base, ix, ix);
	sm90_line(e, "if ((unsigned)row_ < (unsigned)%s)", ext);
	sm90_line(e, "\tbase_[row_] = (%s)(%s);", ct, sb_str(&val));
	scatter_end(e);
	sb_free(&val);
}

void sm90_vec_fetch_add(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	const Expr *ref = call->nargs == 2 ? call->args[0] : NULL;
	const PlanFrag *ix = NULL;
	if (ref && ref->kind == E_INDEX && ref->nslices >= 1)
		ix = sm90_frag_of(e, ref->slices[ref->nslices - 1].start);
	if (ix && sm90_vec_is_smem(e, ref)) {
		sm90_vec_smem_atomic(e, s, ref, call->args[1], ix, dst);
		return;
	}
	const Decl *g = NULL;
	char *base = NULL, *ext = NULL;
	StrBuf val = {0};
	if (!ix || ix->layout != FRAG_VEC || ix->role != e->role || ix->rows != dst->rows || !scatter_ref(e, ref, ix, &g, &base, &ext) ||
	    (g->dt != DT_I32 && g->dt != DT_U32 && g->dt != DT_F32) || dst->dt != g->dt) {
		sm90_refuse(e, s->span, "CK-LOW-002", "fetch_add is lowered for sm_90a only as `v = fetch_add(G[i, .., idx], x)` with v and idx thread vectors of one length and v of G's dtype (i32, u32 or f32)");
		return;
	}
	if (!vec_value(e, call->args[1], ix, &val)) {
		sb_free(&val);
		return;
	}
	const char *ct = sm90_ctype(g->dt);
	scatter_begin(e, s->span, "each element: atomicAdd returning the old value (-1 where the index is out of range)", ct, base, dst, ix);
	sm90_line(e, "%s[v_] = (unsigned)row_ < (unsigned)%s ? atomicAdd(base_ + row_, (%s)(%s)) : (%s)-1;", dst->name, ext, ct, sb_str(&val), ct);
	scatter_end(e);
	sb_free(&val);
}

/* Inclusive scan of `var` across the 32 lanes of a warp (shuffle-up ladder). */
static void warp_scan(Em *e, const char *ft, const char *var)
{
	sm90_line(e, "#pragma unroll");
	sm90_line(e, "for (int d_ = 1; d_ < 32; d_ <<= 1) {");
	sm90_line(e, "\tconst %s y_ = __shfl_up_sync(0xffffffffu, %s, d_);", ft, var);
	sm90_line(e, "\tif (lane_ >= d_)");
	sm90_line(e, "\t\t%s += y_;", var);
	sm90_line(e, "}");
}

void sm90_vec_cumsum(Em *e, Stmt *s, const PlanFrag *dst)
{
	const Expr *call = s->src;
	long long dim = -1;
	if (call->nargs != 2 || !eval_expr(call->args[1], e->k, NULL, &dim) || dim != 0 ||
	    (dst->dt != DT_I32 && dst->dt != DT_U32 && dst->dt != DT_F32)) {
		sm90_refuse(e, s->span, "CK-LOW-002", "cumsum over a thread vector is lowered for sm_90a only as `v = cumsum(x, 0)` into an i32, u32 or f32 thread vector");
		return;
	}
	StrBuf val = {0};
	if (!vec_value(e, call->args[0], dst, &val)) {
		sb_free(&val);
		return;
	}
	const PlanRole *ro = &e->p->roles[dst->role];
	int ri = (int)(ro - e->p->roles);
	int nw = ro->nthreads / 32;
	const char *ft = sm90_ftype(dst->dt);
	int id = e->nscan++;   /* distinct shared scratch per scan of the kernel */
	sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "inclusive scan over %lld elements: per thread, then the warp (shuffles), then the %d warps (shared memory)",
	                                         dst->rows, nw));
	sm90_line(e, "{");
	e->ind++;
	sm90_line(e, "const int lane_ = (int)(threadIdx.x %% 32u), w_ = %s / 32;", ro->thread_lo ? arena_printf(&e->c->arena, "((int)threadIdx.x - %d)", ro->thread_lo) : "(int)threadIdx.x");
	sm90_line(e, "%s run_ = 0;", ft);
	vec_loop_begin(e, dst);
	sm90_line(e, "run_ += (%s)(%s);", ft, sb_str(&val));
	sm90_line(e, "%s[v_] = run_;", dst->name);
	vec_loop_end(e);
	sm90_line(e, "%s x_ = run_;", ft);
	warp_scan(e, ft, "x_");
	sm90_line(e, "%s pre_ = x_ - run_;   /* sum of the earlier threads of this warp */", ft);
	if (nw > 1) {
		sm90_xchg_begin(e);
		sm90_xchg(e, ri, ft, arena_printf(&e->c->arena, "scan%d_", id), 1, (long long[]){nw}, NULL);
		sm90_line(e, "if (lane_ == 31)");
		sm90_line(e, "\tscan%d_[w_] = x_;", id);
		sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, ro->nthreads);
		sm90_line(e, "if (w_ == 0) {");
		sm90_line(e, "\t%s t_ = lane_ < %d ? scan%d_[lane_] : (%s)0;", ft, nw, id, ft);
		e->ind++;
		warp_scan(e, ft, "t_");
		e->ind--;
		sm90_line(e, "\tif (lane_ < %d)", nw);
		sm90_line(e, "\t\tscan%d_[lane_] = t_;", id);
		sm90_line(e, "}");
		sm90_line(e, "named_bar_sync(%du, %du);", ri + 1, ro->nthreads);
		sm90_line(e, "if (w_ > 0)");
		sm90_line(e, "\tpre_ += scan%d_[w_ - 1];", id);
		sm90_line(e, "named_bar_sync(%du, %du);   /* the scratch is free again (a scan in a loop) */", ri + 1, ro->nthreads);
	}
	vec_loop_begin(e, dst);
	sm90_line(e, "%s[v_] += pre_;", dst->name);
	vec_loop_end(e);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&val);
}

/* ---- thread vectors and shared buffers: rows, scatters, counters ---- */

/* buf[i, .., s +: len] or buf[i, .., idx] of a plain (unswizzled, single-stage)
 * shared buffer of 4-byte elements: the buffer, and the C text of the u32
 * shared address of element 0 of the indexed row (point indices folded in). */
static const PlanBuffer *smem_ref(Em *e, const Expr *ref, char **row_addr)
{
	int bi = ref && ref->kind == E_INDEX && ref->base && ref->base->kind == E_IDENT ? plan_buffer_index(e->p, ref->base->name) : -1;
	const PlanBuffer *b = bi >= 0 ? &e->p->buffers[bi] : NULL;
	if (!b || b->swizzle != SWZ_NONE || b->stages != 1 || dtype_size(b->dt) != 4 || ref->nslices != b->rank)
		return NULL;
	long long stride = 1;
	StrBuf a = {0};
	sb_printf(&a, "smem_%s", b->name);
	for (int i = b->rank - 2; i >= 0; i--) {
		stride *= b->shape[i + 1];
		if (ref->slices[i].kind != SL_POINT || sm90_frag_of(e, ref->slices[i].start)) {
			sb_free(&a);
			return NULL;
		}
		sb_printf(&a, " + (u32)(%s) * %lldu", sm90_cexpr_p(e, ref->slices[i].start), stride * 4);
	}
	*row_addr = arena_strdup(&e->c->arena, sb_str(&a));
	sb_free(&a);
	return b;
}

bool sm90_vec_is_smem(Em *e, const Expr *ref)
{
	return ref && ref->kind == E_INDEX && ref->base && ref->base->kind == E_IDENT && plan_buffer_index(e->p, ref->base->name) >= 0;
}

/* load v <- buf[.., s +: len] / store buf[.., s +: len] <- expr: element t*P + k of the
 * vector is element s + t*P + k of the row (one 4-byte shared access each). */
void sm90_vec_smem_rows(Em *e, Stmt *s, const Expr *src, const PlanFrag *f, bool load)
{
	const Expr *ref = load ? s->src : s->dst;
	char *row;
	const PlanBuffer *b = f->role == e->role && f->regs_per_thread > 0 ? smem_ref(e, ref, &row) : NULL;
	const Slice *sl = b ? &ref->slices[b->rank - 1] : NULL;
	long long len = -1;
	bool ok = b && (sl->kind == SL_RANGE ? eval_expr(sl->len, e->k, NULL, &len) : sl->kind == SL_ALL ? (len = b->shape[b->rank - 1], true) : false) &&
	          len == f->rows && (!load || f->dt == b->dt);
	if (!ok) {
		Diag *d = sm90_refuse(e, s->span, load ? "CK-LOW-002" : "CK-LOW-011",
		                      "%s of thread vector '%s' and a shared buffer is lowered for sm_90a only for a plain (unswizzled, not a ring) buffer of 4-byte elements, as `buf[i, .., start +: %lld]` (or `:`) of the vector's length%s",
		                      load ? "a load" : "a store", f->name, f->rows, load ? " and dtype" : "");
		diag_set(&d->resource, "%s", ref && ref->base && ref->base->kind == E_IDENT ? ref->base->name : f->name);
		return;
	}
	StrBuf val = {0};
	if (!load && !vec_value(e, src, f, &val)) {
		sb_free(&val);
		return;
	}
	const char *start = sl->kind == SL_RANGE ? sm90_cexpr_p(e, sl->start) : "0";
	e->need_gmem = true;
	sm90_ir_comment(e, s->span, arena_printf(&e->c->arena, "%lld %s over %d threads and shared memory: thread t %s %s", f->rows,
	                                         dtype_name(b->dt), e->p->roles[f->role].nthreads, load ? "loads" : "stores", run_text(e, f->regs_per_thread)));
	sm90_line(e, "{");
	e->ind++;
	vec_loop_begin(e, f);
	sm90_line(e, "const u32 a_ = %s + (u32)((%s) + %s) * 4u;", row, start, sm90_vec_elem_index(e, f));
	if (load) {
		const char *u = b->dt == DT_F32 ? "__uint_as_float(ld_shared_u32(a_))" : b->dt == DT_I32 ? "(int)ld_shared_u32(a_)" : "ld_shared_u32(a_)";
		sm90_line(e, "%s[v_] = %s;", f->name, u);
	} else {
		sm90_line(e, "st_shared_u32(a_, %s);", b->dt == DT_F32 ? arena_printf(&e->c->arena, "__float_as_uint((float)(%s))", sb_str(&val))
		                                                     : arena_printf(&e->c->arena, "(u32)(%s)(%s)", sm90_ctype(b->dt), sb_str(&val)));
	}
	vec_loop_end(e);
	e->ind--;
	sm90_line(e, "}");
	sb_free(&val);
}

/* atomic_add buf[.., idx] <- v and dst = fetch_add(buf[.., idx], v) on a shared buffer
 * (dst NULL for atomic_add): red / atom .shared.add per element, indices outside
 * the row skipped (fetch_add yields -1 there). */
void sm90_vec_smem_atomic(Em *e, Stmt *s, const Expr *ref, const Expr *v, const PlanFrag *ix, const PlanFrag *dst)
{
	char *row;
	const PlanBuffer *b = ix && ix->layout == FRAG_VEC && ix->role == e->role ? smem_ref(e, ref, &row) : NULL;
	bool ok = b && ref->slices[b->rank - 1].kind == SL_POINT && sm90_frag_of(e, ref->slices[b->rank - 1].start) == ix &&
	          (b->dt == DT_I32 || b->dt == DT_U32 || b->dt == DT_F32) && (!dst || (dst->layout == FRAG_VEC && dst->rows == ix->rows && dst->dt == b->dt));
	if (!ok) {
		sm90_refuse(e, s->span, "CK-LOW-002", "%s on a shared buffer is lowered for sm_90a only as `%sbuf[i, .., idx]%s` with idx a thread vector of this role and a plain (unswizzled, not a ring) i32, u32 or f32 buffer",
		            dst ? "fetch_add" : "atomic_add", dst ? "v = fetch_add(" : "atomic_add ", dst ? ", x)" : " <- x");
		return;
	}
	StrBuf val = {0};
	if (!vec_value(e, v, ix, &val)) {
		sb_free(&val);
		return;
	}
	const char *t = b->dt == DT_F32 ? "f32" : b->dt == DT_U32 ? "u32" : "s32";
	const char *ct = sm90_ctype(b->dt);
	e->need_gmem = true;
	scatter_begin(e, s->span, dst ? "each element: a shared-memory atomic add returning the old value (-1 where the index is out of range)"
	                              : "each element: a shared-memory reduction into the entry its index names", ct, NULL, ix, ix);
	sm90_line(e, "const bool in_ = (unsigned)row_ < %lldu;", b->shape[b->rank - 1]);
	if (dst)
		sm90_line(e, "%s[v_] = in_ ? atom_shared_add_%s(%s + (u32)row_ * 4u, (%s)(%s)) : (%s)-1;", dst->name, t, row, ct, sb_str(&val), ct);
	else
	{
		sm90_line(e, "if (in_)");
		sm90_line(e, "\tred_shared_add_%s(%s + (u32)row_ * 4u, (%s)(%s));", t, row, ct, sb_str(&val));
	}
	scatter_end(e);
	sb_free(&val);
}

/* ---- shared with sm90_tile.c ---- */

const Decl *sm90_global(const Em *e, const char *name)
{
	return global_param(e, name);
}

bool sm90_read_only(const Em *e, const char *name)
{
	return read_only(e, name);
}

void sm90_point_offset(Em *e, StrBuf *o, const Expr *x, const Decl *g, int npoints)
{
	point_offset(e, o, x, g, npoints);
}

long long sm90_gcd(long long a, long long b)
{
	return gcd_ll(a, b);
}

/* The element stride of dimension d of row-major g: the product of the later
 * extents, as C text (constants folded) and its provable multiple. */
static const char *dim_stride(Em *e, const Decl *g, int d, long long *mult)
{
	long long cst = 1;
	StrBuf b = {0};
	*mult = 1;
	for (int j = d + 1; j < g->rank; j++) {
		long long v;
		if (eval_expr(g->shape[j], e->k, NULL, &v))
			cst *= v;
		else
			sb_printf(&b, "%s(long long)%s", b.len ? " * " : "", sm90_cexpr_p(e, g->shape[j]));
		*mult *= sm90_known_multiple(e, g->shape[j]);
	}
	if (cst != 1 || !b.len)
		sb_printf(&b, "%s%lld", b.len ? " * " : "", cst);
	const char *r = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	return r;
}

bool sm90_gref(Em *e, const Expr *x, GRef *r)
{
	memset(r, 0, sizeof *r);
	if (!x || x->kind != E_INDEX || !x->base || x->base->kind != E_IDENT)
		return false;
	r->g = global_param(e, x->base->name);
	const Decl *g = r->g;
	if (!g || g->rank != x->nslices || !plain_dtype(g->dt))
		return false;
	StrBuf b = {0};
	for (int i = 0; i < g->rank; i++) {
		const Slice *sl = &x->slices[i];
		long long ms, v;
		const char *st = dim_stride(e, g, i, &ms);
		if (sl->kind == SL_POINT) {
			if (sm90_frag_of(e, sl->start)) {
				sb_free(&b);
				return false;   /* a scatter index */
			}
			if (!(eval_expr(sl->start, e->k, NULL, &v) && v == 0)) {
				sb_printf(&b, "%s(long long)%s * %s", b.len ? " + " : "", sm90_cexpr_p(e, sl->start), st);
				r->mbase = gcd_ll(r->mbase, sm90_known_multiple(e, sl->start) * ms);
			}
			continue;
		}
		if (r->nr == 2) {
			sb_free(&b);
			return false;
		}
		int t = r->nr++;
		r->rdim[t] = i;
		r->stride[t] = st;
		r->mstride[t] = ms;
		r->unit[t] = i == g->rank - 1;
		if (sl->kind == SL_RANGE) {
			if (!eval_expr(sl->len, e->k, NULL, &r->len[t])) {
				sb_free(&b);
				return false;
			}
			bool zero = eval_expr(sl->start, e->k, NULL, &v) && v == 0;
			r->start[t] = zero ? "0" : sm90_cexpr_p(e, sl->start);
			r->mstart[t] = zero ? 0 : sm90_known_multiple(e, sl->start);
		} else if (sl->kind == SL_ALL) {
			if (!eval_expr(g->shape[i], e->k, NULL, &r->len[t])) {
				sb_free(&b);
				return false;
			}
			r->start[t] = "0";
			r->mstart[t] = 0;
		} else {
			sb_free(&b);
			return false;
		}
	}
	r->base = arena_strdup(&e->c->arena, sb_str(&b));
	sb_free(&b);
	return true;
}

/* ---- helper library ---- */

void sm90_vec_helpers(StrBuf *o)
{
	sb_puts(o, "\n#ifndef CAKE_SM90_GMEM   /* plain global loads and stores (SIMT vectors, element reads) */\n"
	        "#define CAKE_SM90_GMEM\n"
	        "/* Read-only data (the kernel never writes the tensor): the non-coherent path, like __ldg. */\n"
	        "__device__ __forceinline__ u32 ld_global_nc_b16(const void *p)\n"
	        "{\n"
	        "\tunsigned short v;\n"
	        "\tasm(\"ld.global.nc.u16 %0, [%1];\\n\" : \"=h\"(v) : \"l\"(p));\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ u32 ld_global_nc_b32(const void *p)\n"
	        "{\n"
	        "\tu32 v;\n"
	        "\tasm(\"ld.global.nc.b32 %0, [%1];\\n\" : \"=r\"(v) : \"l\"(p));\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ u64 ld_global_nc_b64(const void *p)\n"
	        "{\n"
	        "\tu64 v;\n"
	        "\tasm(\"ld.global.nc.b64 %0, [%1];\\n\" : \"=l\"(v) : \"l\"(p));\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ void ld_global_nc_v2(const void *p, u32 *w)   /* p 8-byte aligned */\n"
	        "{\n"
	        "\tasm(\"ld.global.nc.v2.b32 {%0, %1}, [%2];\\n\" : \"=r\"(w[0]), \"=r\"(w[1]) : \"l\"(p));\n"
	        "}\n"
	        "__device__ __forceinline__ void ld_global_nc_v4(const void *p, u32 *w)   /* p 16-byte aligned */\n"
	        "{\n"
	        "\tasm(\"ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];\\n\" : \"=r\"(w[0]), \"=r\"(w[1]), \"=r\"(w[2]), \"=r\"(w[3]) : \"l\"(p));\n"
	        "}\n"
	        "/* Data the kernel also writes: ordinary loads, kept in order with its stores. */\n"
	        "__device__ __forceinline__ u32 ld_global_b16(const void *p)\n"
	        "{\n"
	        "\tunsigned short v;\n"
	        "\tasm volatile(\"ld.global.u16 %0, [%1];\\n\" : \"=h\"(v) : \"l\"(p) : \"memory\");\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ u32 ld_global_b32(const void *p)\n"
	        "{\n"
	        "\tu32 v;\n"
	        "\tasm volatile(\"ld.global.b32 %0, [%1];\\n\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ u64 ld_global_b64(const void *p)\n"
	        "{\n"
	        "\tu64 v;\n"
	        "\tasm volatile(\"ld.global.b64 %0, [%1];\\n\" : \"=l\"(v) : \"l\"(p) : \"memory\");\n"
	        "\treturn v;\n"
	        "}\n"
	        "__device__ __forceinline__ void ld_global_v2(const void *p, u32 *w)\n"
	        "{\n"
	        "\tasm volatile(\"ld.global.v2.b32 {%0, %1}, [%2];\\n\" : \"=r\"(w[0]), \"=r\"(w[1]) : \"l\"(p) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void ld_global_v4(const void *p, u32 *w)\n"
	        "{\n"
	        "\tasm volatile(\"ld.global.v4.b32 {%0, %1, %2, %3}, [%4];\\n\" : \"=r\"(w[0]), \"=r\"(w[1]), \"=r\"(w[2]), \"=r\"(w[3]) : \"l\"(p) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void st_global_b16(void *p, u32 v)\n"
	        "{\n"
	        "\tasm volatile(\"st.global.u16 [%0], %1;\\n\" :: \"l\"(p), \"h\"((unsigned short)v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void st_global_b32(void *p, u32 v)\n"
	        "{\n"
	        "\tasm volatile(\"st.global.b32 [%0], %1;\\n\" :: \"l\"(p), \"r\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void st_global_v2(void *p, const u32 *w)   /* p 8-byte aligned */\n"
	        "{\n"
	        "\tasm volatile(\"st.global.v2.b32 [%0], {%1, %2};\\n\" :: \"l\"(p), \"r\"(w[0]), \"r\"(w[1]) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void st_global_v4(void *p, const u32 *w)   /* p 16-byte aligned */\n"
	        "{\n"
	        "\tasm volatile(\"st.global.v4.b32 [%0], {%1, %2, %3, %4};\\n\" :: \"l\"(p), \"r\"(w[0]), \"r\"(w[1]), \"r\"(w[2]), \"r\"(w[3]) : \"memory\");\n"
	        "}\n"
	        "/* Shared memory by u32 address: stores, reductions and atomics of thread vectors. */\n"
	        "__device__ __forceinline__ void st_shared_u32(u32 a, u32 v)\n"
	        "{\n"
	        "\tasm volatile(\"st.shared.b32 [%0], %1;\\n\" :: \"r\"(a), \"r\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void red_shared_add_s32(u32 a, int v)\n"
	        "{\n"
	        "\tasm volatile(\"red.shared.add.s32 [%0], %1;\\n\" :: \"r\"(a), \"r\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void red_shared_add_u32(u32 a, u32 v)\n"
	        "{\n"
	        "\tasm volatile(\"red.shared.add.u32 [%0], %1;\\n\" :: \"r\"(a), \"r\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void red_shared_add_f32(u32 a, float v)\n"
	        "{\n"
	        "\tasm volatile(\"red.shared.add.f32 [%0], %1;\\n\" :: \"r\"(a), \"f\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ int atom_shared_add_s32(u32 a, int v)\n"
	        "{\n"
	        "\tint r;\n"
	        "\tasm volatile(\"atom.shared.add.s32 %0, [%1], %2;\\n\" : \"=r\"(r) : \"r\"(a), \"r\"(v) : \"memory\");\n"
	        "\treturn r;\n"
	        "}\n"
	        "__device__ __forceinline__ u32 atom_shared_add_u32(u32 a, u32 v)\n"
	        "{\n"
	        "\tu32 r;\n"
	        "\tasm volatile(\"atom.shared.add.u32 %0, [%1], %2;\\n\" : \"=r\"(r) : \"r\"(a), \"r\"(v) : \"memory\");\n"
	        "\treturn r;\n"
	        "}\n"
	        "__device__ __forceinline__ float atom_shared_add_f32(u32 a, float v)\n"
	        "{\n"
	        "\tfloat r;\n"
	        "\tasm volatile(\"atom.shared.add.f32 %0, [%1], %2;\\n\" : \"=f\"(r) : \"r\"(a), \"f\"(v) : \"memory\");\n"
	        "\treturn r;\n"
	        "}\n"
	        "#endif\n");
}
