/*
 * model.c — the schedule model of a kernel (see sched.h), built once and
 * read by the verifier and by the lowering's derive step.
 *
 * Names are resolved against the declarations directly, so every rule and
 * the derive step work from the same facts whether or not sema filled a
 * given annotation. The statement list is a preorder walk of each `in`
 * block; each entry records its role, innermost loop, innermost pipelined
 * loop (and that loop's pipeline), innermost `if` and the end of its
 * subtree, which is all the program-order reasoning the race and barrier
 * rules and the derive step need.
 *
 * Domain sampling. For every symbolic dim the domain constraints that
 * mention only that dim are collected; the step is the lcm of the `d % c ==
 * 0` moduli and the start the largest `d >= c` / `d > c` bound; the first
 * SCHED_SAMPLES values that satisfy every single-dim constraint become the
 * samples, smallest first. Sample i binds every dim to its i-th value (the
 * last one when a dim has fewer), which is how the deadlock checker and the
 * trip-count rules pick concrete points inside the domain.
 *
 * Evaluation is front/eval.c's checked 64-bit arithmetic (overflow and
 * division by zero are "not computable", never undefined behaviour), with
 * names bound by an environment (dims, grid and loop variables) and consts
 * by their declarations.
 *
 * Conventions the lowering implements and the verifier must assume are
 * decided here, once: the shared-memory layout (layout_smem: alignments,
 * ring strides, offsets, barriers after buffers, the bytes a launch asks
 * for) and which barrier waits "start free" (sched_starts_free).
 */
#include "sched.h"
#include "../front/eval.h"

#include <stdlib.h>
#include <string.h>

/* ---- lookups ---- */

int sched_role(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->nroles; i++)
		if (strcmp(v->roles[i].name, name) == 0)
			return i;
	return -1;
}

int sched_pipe(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->npipes; i++)
		if (strcmp(v->pipes[i].name, name) == 0)
			return i;
	return -1;
}

int sched_smem(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->nsmems; i++)
		if (strcmp(v->smems[i].name, name) == 0)
			return i;
	return -1;
}

int sched_bar(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->nbars; i++)
		if (strcmp(v->bars[i].name, name) == 0)
			return i;
	return -1;
}

int sched_frag(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->nfrags; i++)
		if (strcmp(v->frags[i].name, name) == 0)
			return i;
	return -1;
}

Decl *sched_param(const Sched *v, const char *name)
{
	for (int i = 0; name && i < v->nparams; i++)
		if (v->params[i]->name && strcmp(v->params[i]->name, name) == 0)
			return v->params[i];
	return NULL;
}

static size_t ptr_hash(const void *p, int cap)
{
	uintptr_t x = (uintptr_t)p;
	x ^= x >> 17;
	x *= (uintptr_t)0x9E3779B97F4A7C15ull;
	x ^= x >> 29;
	return (size_t)x & (size_t)(cap - 1);
}

int sched_stmt_index(const Sched *v, const Stmt *s)
{
	if (!s || v->sidx_cap == 0)
		return -1;
	for (size_t h = ptr_hash(s, v->sidx_cap);; h = (h + 1) & (size_t)(v->sidx_cap - 1)) {
		if (!v->sidx_key[h])
			return -1;
		if (v->sidx_key[h] == s)
			return v->sidx_val[h];
	}
}

bool sched_inside(const Sched *v, int i, int j)
{
	return i >= 0 && j > i && j < v->st[i].end;
}

/* ---- evaluation ---- */

void sched_env_set(SchedEnv *env, const char *name, long long val)
{
	for (int i = env->n - 1; i >= 0; i--)
		if (strcmp(env->names[i], name) == 0) {
			env->vals[i] = val;
			return;
		}
	if (env->n < SCHED_ENV_MAX) {
		env->names[env->n] = name;
		env->vals[env->n] = val;
		env->n++;
	}
}

static bool env_get(const SchedEnv *env, const char *name, long long *out)
{
	if (!env)
		return false;
	for (int i = env->n - 1; i >= 0; i--)
		if (strcmp(env->names[i], name) == 0) {
			*out = env->vals[i];
			return true;
		}
	return false;
}

/* The model's names: an env binding first (dims, grid and loop variables),
 * then a const, whose value is evaluated with no env (consts are constant). */
typedef struct Scope {
	const Sched *v;
	const SchedEnv *env;
} Scope;

static bool scope_lookup(const void *sc, const Expr *id, int depth, long long *out)
{
	const Scope *s = sc;
	if (env_get(s->env, id->name, out))
		return true;
	for (int i = 0; i < s->v->nconsts; i++)
		if (s->v->consts[i]->name && strcmp(s->v->consts[i]->name, id->name) == 0) {
			Scope cs = {s->v, NULL};
			return eval_int_at(s->v->consts[i]->value, scope_lookup, &cs, depth + 1, out);
		}
	return false;
}

bool sched_eval(const Sched *v, const SchedEnv *env, const Expr *e, long long *out)
{
	Scope sc = {v, env};
	return eval_int(e, scope_lookup, &sc, out);
}

int sched_nsamples(const Sched *v)
{
	int n = 1;
	for (int i = 0; i < v->ndims; i++)
		if (v->ndimvals[i] > n)
			n = v->ndimvals[i];
	return n;
}

void sched_env_sample(const Sched *v, SchedEnv *env, int i)
{
	env->n = 0;
	for (int d = 0; d < v->ndims; d++) {
		int n = v->ndimvals[d];
		if (n <= 0)
			continue;
		sched_env_set(env, v->dims[d], v->dimvals[d][i < n ? i : n - 1]);
	}
	for (int g = 0; g < v->ngridvars; g++)
		sched_env_set(env, v->gridvars[g], 0);
}

bool sched_trip(const Sched *v, const SchedEnv *env, const Stmt *f, long long *trip)
{
	long long lo, hi, step = 1;
	if (!f || f->kind != S_FOR)
		return false;
	if (!sched_eval(v, env, f->lo, &lo) || !sched_eval(v, env, f->hi, &hi))
		return false;
	if (f->step && !sched_eval(v, env, f->step, &step))
		return false;
	if (step <= 0)
		return false;
	*trip = hi <= lo ? 0 : (hi - lo + step - 1) / step;
	return true;
}

/* ---- expression helpers ---- */

const char *sched_refname(const Expr *e)
{
	for (int guard = 0; e && guard < 32; guard++) {
		switch (e->kind) {
		case E_IDENT:
			return e->name;
		case E_TRANSPOSE:
			e = e->lhs;
			break;
		case E_INDEX:
			if (e->base)
				e = e->base;
			else
				return e->name;
			break;
		case E_CALL:
			if (e->nargs == 1 && e->name && dtype_from(e->name, (int)strlen(e->name)) != DT_NONE)
				e = e->args[0];
			else
				return NULL;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

bool sched_is_transposed(const Expr *e)
{
	return e && e->kind == E_TRANSPOSE;
}

static void idents_rec(const Expr *e, const char **out, int max, int *n, int depth)
{
	if (!e || depth > 200)
		return;
	if (e->kind == E_IDENT && e->name) {
		for (int i = 0; i < *n; i++)
			if (strcmp(out[i], e->name) == 0)
				return;
		if (*n < max)
			out[(*n)++] = e->name;
		return;
	}
	idents_rec(e->lhs, out, max, n, depth + 1);
	idents_rec(e->rhs, out, max, n, depth + 1);
	idents_rec(e->base, out, max, n, depth + 1);
	for (int i = 0; i < e->nargs; i++)
		idents_rec(e->args[i], out, max, n, depth + 1);
	for (int i = 0; i < e->nslices; i++) {
		idents_rec(e->slices[i].start, out, max, n, depth + 1);
		idents_rec(e->slices[i].len, out, max, n, depth + 1);
	}
}

int sched_idents(const Expr *e, const char **out, int max)
{
	int n = 0;
	idents_rec(e, out, max, &n, 0);
	return n;
}

bool sched_mentions(const Expr *e, const char *name)
{
	const char *ids[64];
	int n = sched_idents(e, ids, 64);
	for (int i = 0; i < n; i++)
		if (strcmp(ids[i], name) == 0)
			return true;
	return false;
}

int sched_smem_written(const Sched *v, const Stmt *s)
{
	switch (s->kind) {
	case S_TMA_LOAD:
	case S_CP_ASYNC:
	case S_STORE:
	case S_ATOMIC:
		return sched_smem(v, sched_refname(s->dst));
	default:
		return -1;
	}
}

static int add_unique(int *out, int n, int max, int x)
{
	if (x < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (out[i] == x)
			return n;
	if (n < max)
		out[n++] = x;
	return n;
}

int sched_smem_read(const Sched *v, const Stmt *s, int *out, int max)
{
	int n = 0;
	const char *ids[64];
	int m;
	switch (s->kind) {
	case S_TMA_STORE:
		return add_unique(out, n, max, sched_smem(v, sched_refname(s->src)));
	case S_WGMMA:
	case S_MMA: {
		const Expr *a, *b;
		if (sched_matmul_ops(s, &a, &b)) {
			n = add_unique(out, n, max, sched_smem(v, sched_refname(a)));
			n = add_unique(out, n, max, sched_smem(v, sched_refname(b)));
		}
		return n;
	}
	case S_LOAD:
	case S_STORE:
	case S_ATOMIC:
	case S_ASSIGN:
	case S_LET:
	case S_IF:
		m = sched_idents(s->kind == S_IF ? s->cond : s->src, ids, 64);
		for (int i = 0; i < m; i++)
			n = add_unique(out, n, max, sched_smem(v, ids[i]));
		return n;
	default:
		return 0;
	}
}

int sched_bar_arrived(const Sched *v, const Stmt *s)
{
	if (s->kind == S_ARRIVE || s->kind == S_TMA_LOAD)
		return sched_bar(v, s->name);
	return -1;
}

int sched_bar_waited(const Sched *v, const Stmt *s)
{
	return s->kind == S_WAIT ? sched_bar(v, s->name) : -1;
}

bool sched_matmul_ops(const Stmt *s, const Expr **a, const Expr **b)
{
	const Expr *e = s->src;
	if (!e || e->kind != E_BINARY || e->op != '@' || !e->lhs || !e->rhs)
		return false;
	*a = e->lhs;
	*b = e->rhs;
	return true;
}

int sched_box(const Sched *v, const SchedEnv *env, const Expr *ref, long long *box, int max)
{
	if (!ref || ref->kind != E_INDEX)
		return -1;
	Decl *p = sched_param(v, sched_refname(ref));
	int n = 0;
	for (int i = 0; i < ref->nslices && n < max; i++) {
		const Slice *sl = &ref->slices[i];
		long long x;
		if (sl->kind == SL_POINT) {
			x = 1;
		} else if (sl->kind == SL_RANGE) {
			if (!sched_eval(v, env, sl->len, &x))
				return -1;
		} else {
			if (!p || i >= p->rank || !sched_eval(v, env, p->shape[i], &x))
				return -1;
		}
		box[n++] = x;
	}
	return n;
}

const char *sched_exprstr(const Sched *v, const Expr *e)
{
	StrBuf b = {0};
	print_expr(&b, e);
	char *r = arena_strdup(v->a, sb_str(&b));
	sb_free(&b);
	return r;
}

bool sched_role_uses(const Sched *v, int r, StmtKind kind)
{
	for (int i = 0; i < v->nst; i++)
		if (v->st[i].role == r && v->st[i].s->kind == kind)
			return true;
	return false;
}

/* ---- building ---- */

static void walk(Sched *v, Vec *list, Stmt **body, int n, int role, int depth, Stmt *loop,
                 int loop_idx, Stmt *ploop, int ploop_idx, int ppipe, Stmt *ifs, int if_idx,
                 int rdepth);

static void walk_one(Sched *v, Vec *list, Stmt *s, int role, int depth, Stmt *loop, int loop_idx,
                     Stmt *ploop, int ploop_idx, int ppipe, Stmt *ifs, int if_idx, int rdepth)
{
	if (!s || rdepth > 512)
		return;
	SchedStmt *e = arena_alloc(v->a, sizeof *e);
	e->s = s;
	e->role = role;
	e->depth = depth;
	e->loop = loop;
	e->loop_idx = loop_idx;
	e->ploop = ploop;
	e->ploop_idx = ploop_idx;
	e->ppipe = ppipe;
	e->ifs = ifs;
	e->if_idx = if_idx;
	int me = list->len;
	vec_push(list, e);
	switch (s->kind) {
	case S_IN: {
		int r = sched_role(v, s->name);
		walk(v, list, s->body, s->nbody, r, 0, NULL, -1, NULL, -1, -1, NULL, -1, rdepth + 1);
		break;
	}
	case S_FOR: {
		Stmt *pl = ploop;
		int pli = ploop_idx, pp = ppipe;
		if (s->pipe) {
			pl = s;
			pli = me;
			pp = sched_pipe(v, s->pipe);
		}
		walk(v, list, s->body, s->nbody, role, depth + 1, s, me, pl, pli, pp, ifs, if_idx,
		     rdepth + 1);
		break;
	}
	case S_IF:
		walk(v, list, s->body, s->nbody, role, depth, loop, loop_idx, ploop, ploop_idx, ppipe,
		     s, me, rdepth + 1);
		walk(v, list, s->els, s->nels, role, depth, loop, loop_idx, ploop, ploop_idx, ppipe,
		     s, me, rdepth + 1);
		break;
	default:
		break;
	}
	e->end = list->len;
}

static void walk(Sched *v, Vec *list, Stmt **body, int n, int role, int depth, Stmt *loop,
                 int loop_idx, Stmt *ploop, int ploop_idx, int ppipe, Stmt *ifs, int if_idx,
                 int rdepth)
{
	for (int i = 0; i < n; i++)
		walk_one(v, list, body[i], role, depth, loop, loop_idx, ploop, ploop_idx, ppipe, ifs,
		         if_idx, rdepth);
}

static long long gcdll(long long a, long long b)
{
	while (b) {
		long long t = a % b;
		a = b;
		b = t;
	}
	return a < 0 ? -a : a;
}

static void split_and(Sched *v, Vec *out, Expr *e, int depth)
{
	if (!e || depth > 100)
		return;
	if (e->kind == E_BINARY && e->op == OP_AND) {
		split_and(v, out, e->lhs, depth + 1);
		split_and(v, out, e->rhs, depth + 1);
		return;
	}
	vec_push(out, e);
}

static bool is_dim_ident(const Expr *e, const char *d)
{
	return e && e->kind == E_IDENT && e->name && strcmp(e->name, d) == 0;
}

/* Does constraint e mention only dim d among the dims (consts allowed)? */
static bool only_dim(const Sched *v, const Expr *e, const char *d, bool *mentions)
{
	const char *ids[64];
	int n = sched_idents(e, ids, 64);
	*mentions = false;
	for (int i = 0; i < n; i++) {
		if (strcmp(ids[i], d) == 0) {
			*mentions = true;
			continue;
		}
		for (int j = 0; j < v->ndims; j++)
			if (strcmp(ids[i], v->dims[j]) == 0)
				return false;
	}
	return true;
}

static void sample_dim(Sched *v, int di)
{
	const char *d = v->dims[di];
	long long step = 1, start = 1, exact = -1, limit = 20000;
	Expr *cons[64];
	int ncons = 0;
	for (int i = 0; i < v->ndomain; i++) {
		Expr *e = v->domain[i];
		bool m;
		if (!only_dim(v, e, d, &m) || !m)
			continue;
		if (ncons < 64)
			cons[ncons++] = e;
		long long c;
		/* d % c == 0 */
		if (e->kind == E_BINARY && e->op == OP_EQ && e->lhs && e->lhs->kind == E_BINARY &&
		    e->lhs->op == '%' && is_dim_ident(e->lhs->lhs, d) &&
		    sched_eval(v, NULL, e->lhs->rhs, &c) && c > 0 && sched_eval(v, NULL, e->rhs, NULL)) {
			long long r;
			sched_eval(v, NULL, e->rhs, &r);
			if (r == 0) {
				long long g = gcdll(step, c);
				if (step / g <= (1LL << 40) / c)
					step = step / g * c;
			}
		}
		/* d >= c, d > c */
		if (e->kind == E_BINARY && (e->op == OP_GE || e->op == '>') && is_dim_ident(e->lhs, d) &&
		    sched_eval(v, NULL, e->rhs, &c)) {
			long long lo = e->op == '>' ? c + 1 : c;
			if (lo > start)
				start = lo;
		}
		/* d == c: the only candidate */
		if (e->kind == E_BINARY && e->op == OP_EQ && is_dim_ident(e->lhs, d) &&
		    sched_eval(v, NULL, e->rhs, &c))
			exact = c;
	}
	if (exact >= 0) {
		start = exact;
		step = 1;
		limit = 1;
	}
	long long x = ((start + step - 1) / step) * step;
	if (x <= 0)
		x = step;
	int got = 0;
	for (long iter = 0; iter < limit && got < SCHED_SAMPLES && x < (1LL << 40); iter++, x += step) {
		SchedEnv env = {.n = 0};
		sched_env_set(&env, d, x);
		bool ok = true;
		for (int i = 0; i < ncons && ok; i++) {
			long long r;
			if (sched_eval(v, &env, cons[i], &r) && !r)
				ok = false;
		}
		if (ok)
			v->dimvals[di][got++] = x;
	}
	v->ndimvals[di] = got;
}

static bool is_const_name(const Sched *v, const char *name)
{
	for (int i = 0; i < v->nconsts; i++)
		if (v->consts[i]->name && strcmp(v->consts[i]->name, name) == 0)
			return true;
	return false;
}

static void add_dim(Sched *v, Vec *dims, const char *name)
{
	if (is_const_name(v, name))
		return;
	for (int i = 0; i < dims->len; i++)
		if (strcmp(dims->data[i], name) == 0)
			return;
	vec_push(dims, (void *)name);
}

static long long elems_of(const Sched *v, Expr **shape, int rank, long long *dims, bool *cshape)
{
	long long n = 1;
	*cshape = true;
	for (int i = 0; i < rank && i < MAX_RANK; i++) {
		long long x;
		if (!sched_eval(v, NULL, shape[i], &x) || x < 0) {
			*cshape = false;
			dims[i] = -1;
			continue;
		}
		dims[i] = x;
		if (__builtin_mul_overflow(n, x, &n))
			*cshape = false;
	}
	return *cshape ? n : -1;
}

/* ---- shared-memory layout (sched.h, "Shared-memory layout") ---- */

enum {
	ALIGN_SWIZZLE = 1024,   /* swizzled buffers */
	ALIGN_ASYNC = 128,      /* TMA destinations, wgmma operands */
	ALIGN_MIN = 16,         /* everything else */
	MBAR_BYTES = 8,         /* one mbarrier */
};

static long long round_up(long long x, long long a)
{
	return (x + a - 1) / a * a;
}

/* Copies of a buffer or barrier on ring pipe (1 when none or malformed). */
static int ring_stages(const Sched *v, int pipe)
{
	if (pipe < 0 || pipe >= v->npipes)
		return 1;
	return v->pipes[pipe].stages > 0 ? v->pipes[pipe].stages : 1;
}

/* Which buffers a TMA load fills, a TMA store reads and wgmma reads: their alignment. */
static void mark_smem_uses(Sched *v)
{
	for (int i = 0; i < v->nst; i++) {
		const Stmt *s = v->st[i].s;
		const Expr *a, *b;
		if (s->kind == S_TMA_LOAD) {
			int m = sched_smem(v, sched_refname(s->dst));
			if (m >= 0)
				v->smems[m].tma_dst = true;
		} else if (s->kind == S_TMA_STORE) {
			int m = sched_smem(v, sched_refname(s->src));
			if (m >= 0)
				v->smems[m].tma_src = true;
		} else if (s->kind == S_WGMMA && sched_matmul_ops(s, &a, &b)) {
			int ma = sched_smem(v, sched_refname(a)), mb = sched_smem(v, sched_refname(b));
			if (ma >= 0)
				v->smems[ma].wgmma_operand = true;
			if (mb >= 0)
				v->smems[mb].wgmma_operand = true;
		}
	}
}

/* The one place the dynamic shared memory is laid out. */
static void layout_smem(Sched *v)
{
	mark_smem_uses(v);
	for (int m = 0; m < v->nsmems; m++) {
		SchedSmem *b = &v->smems[m];
		b->stages = ring_stages(v, b->pipe);
		b->align = b->d->swizzle != SWZ_NONE ? ALIGN_SWIZZLE
		         : b->tma_dst || b->tma_src || b->wgmma_operand ? ALIGN_ASYNC : ALIGN_MIN;
		b->stride = b->bytes >= 0 ? round_up(b->bytes, b->align) : 0;
		b->offset = -1;
	}
	/* largest alignment first, declaration order within */
	v->smem_order = arena_alloc(v->a, sizeof(int) * (size_t)(v->nsmems + 1));
	long long off = 0;
	int maxalign = ALIGN_MIN;
	for (int al = ALIGN_SWIZZLE; al >= ALIGN_MIN; al /= 2)
		for (int m = 0; m < v->nsmems; m++) {
			SchedSmem *b = &v->smems[m];
			if (b->bytes < 0 || b->align != al)
				continue;
			off = round_up(off, al);
			b->offset = off;
			off += b->stride * b->stages;
			if (al > maxalign)
				maxalign = al;
			v->smem_order[v->nsmem_order++] = m;
		}
	/* then the mbarriers, one per ring stage */
	off = round_up(off, MBAR_BYTES);
	v->smem_bar_base = off;
	for (int i = 0; i < v->nbars; i++) {
		v->bars[i].count = ring_stages(v, v->bars[i].pipe);
		v->bars[i].offset = off;
		off += (long long)MBAR_BYTES * v->bars[i].count;
	}
	v->smem_used = off;
	v->smem_base_align = maxalign;
	v->smem_bytes = off + (maxalign > ALIGN_MIN ? maxalign : 0);
}

void sched_build(Sched *v, Ctx *c, Kernel *k)
{
	memset(v, 0, sizeof *v);
	v->c = c;
	v->k = k;
	v->a = &c->arena;
	v->tgt = k->target;
	const TargetInfo *ti = target_info(k->target);
	int wgw = ti->warpgroup_warps;
	Vec roles = {0}, pipes = {0}, smems = {0}, bars = {0}, frags = {0}, params = {0},
	    consts = {0}, dom = {0}, dims = {0};
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (!d)
			continue;
		switch (d->kind) {
		case D_ROLE: vec_push(&roles, d); break;
		case D_PIPELINE: vec_push(&pipes, d); break;
		case D_SMEM: vec_push(&smems, d); break;
		case D_BARRIER: vec_push(&bars, d); break;
		case D_FRAG: vec_push(&frags, d); break;
		case D_PARAM: vec_push(&params, d); break;
		case D_CONST: vec_push(&consts, d); break;
		case D_DOMAIN:
			for (int j = 0; j < d->nexprs; j++)
				split_and(v, &dom, d->exprs[j], 0);
			break;
		case D_GRID:
			v->gridvars = d->grid_vars;
			v->ngridvars = d->grid_vars ? d->nexprs : 0;
			v->persistent = d->persistent;
			break;
		default:
			break;
		}
	}
	v->nconsts = consts.len;
	v->consts = (Decl **)vec_freeze(&consts, v->a);
	v->nparams = params.len;
	v->params = (Decl **)vec_freeze(&params, v->a);
	v->ndomain = dom.len;
	v->domain = (Expr **)vec_freeze(&dom, v->a);

	v->nroles = roles.len;
	v->roles = arena_alloc(v->a, sizeof(SchedRole) * (size_t)(roles.len + 1));
	for (int i = 0; i < roles.len; i++) {
		Decl *d = roles.data[i];
		SchedRole *r = &v->roles[i];
		r->d = d;
		r->name = d->name ? d->name : "?";
		r->lo = d->warp_lo;
		r->hi = d->warp_hi;
		r->warps = d->warp_hi >= d->warp_lo ? d->warp_hi - d->warp_lo + 1 : 0;
		r->threads = r->warps * ti->warp_size;
		r->wgs = r->warps >= wgw ? (r->warps + wgw - 1) / wgw : 1;
		r->arrive_weight = r->wgs;
	}
	vec_free(&roles);
	v->npipes = pipes.len;
	v->pipes = arena_alloc(v->a, sizeof(SchedPipe) * (size_t)(pipes.len + 1));
	for (int i = 0; i < pipes.len; i++) {
		Decl *d = pipes.data[i];
		v->pipes[i] = (SchedPipe){d, d->name ? d->name : "?", d->stages};
	}
	vec_free(&pipes);
	v->nsmems = smems.len;
	v->smems = arena_alloc(v->a, sizeof(SchedSmem) * (size_t)(smems.len + 1));
	for (int i = 0; i < smems.len; i++) {
		Decl *d = smems.data[i];
		SchedSmem *m = &v->smems[i];
		m->d = d;
		m->name = d->name ? d->name : "?";
		m->pipe = sched_pipe(v, d->ring);
		m->rank = d->rank < MAX_RANK ? d->rank : MAX_RANK;
		m->elems = elems_of(v, d->shape, m->rank, m->dims, &m->cshape);
		m->bytes = m->elems >= 0 ? m->elems * dtype_size(d->dt) : -1;
	}
	vec_free(&smems);
	v->nbars = bars.len;
	v->bars = arena_alloc(v->a, sizeof(SchedBar) * (size_t)(bars.len + 1));
	for (int i = 0; i < bars.len; i++) {
		Decl *d = bars.data[i];
		v->bars[i] = (SchedBar){.d = d, .name = d->name ? d->name : "?", .pipe = sched_pipe(v, d->ring)};
	}
	vec_free(&bars);
	v->nfrags = frags.len;
	v->frags = arena_alloc(v->a, sizeof(SchedFrag) * (size_t)(frags.len + 1));
	for (int i = 0; i < frags.len; i++) {
		Decl *d = frags.data[i];
		SchedFrag *f = &v->frags[i];
		f->d = d;
		f->name = d->name ? d->name : "?";
		f->role = sched_role(v, d->owner);
		f->rank = d->rank < MAX_RANK ? d->rank : MAX_RANK;
		elems_of(v, d->shape, f->rank, f->dims, &f->cshape);
	}
	vec_free(&frags);

	/* symbolic dims: identifiers in global param shapes that are not consts */
	for (int i = 0; i < v->nparams; i++) {
		Decl *p = v->params[i];
		for (int j = 0; j < p->rank; j++) {
			const char *ids[16];
			int n = sched_idents(p->shape[j], ids, 16);
			for (int q = 0; q < n; q++)
				add_dim(v, &dims, ids[q]);
		}
		/* scalar params (rank 0) stay unknown: loops bounded by them are not sampled */
	}
	v->ndims = dims.len;
	v->dims = (const char **)vec_freeze(&dims, v->a);
	v->dimvals = arena_alloc(v->a, sizeof(*v->dimvals) * (size_t)(v->ndims + 1));
	v->ndimvals = arena_alloc(v->a, sizeof(int) * (size_t)(v->ndims + 1));
	v->domain_ok = true;
	for (int i = 0; i < v->ndims; i++) {
		sample_dim(v, i);
		if (v->ndimvals[i] == 0)
			v->domain_ok = false;
	}

	/* statements */
	Vec list = {0};
	for (int i = 0; i < k->nbody; i++) {
		Stmt *s = k->body[i];
		if (!s)
			continue;
		if (s->kind == S_IN) {
			int r = sched_role(v, s->name);
			if (r >= 0) {
				if (!v->roles[r].prog)
					v->roles[r].prog = s;
				v->roles[r].nprogs++;
			}
		}
		walk_one(v, &list, s, -1, 0, NULL, -1, NULL, -1, -1, NULL, -1, 0);
	}
	v->nst = list.len;
	v->st = arena_alloc(v->a, sizeof(SchedStmt) * (size_t)(list.len + 1));
	for (int i = 0; i < list.len; i++)
		v->st[i] = *(SchedStmt *)list.data[i];
	vec_free(&list);
	v->sidx_cap = 16;
	while (v->sidx_cap < 2 * v->nst + 2)
		v->sidx_cap *= 2;
	v->sidx_key = arena_alloc(v->a, sizeof(Stmt *) * (size_t)v->sidx_cap);
	v->sidx_val = arena_alloc(v->a, sizeof(int) * (size_t)v->sidx_cap);
	for (int i = 0; i < v->nst; i++) {
		size_t h = ptr_hash(v->st[i].s, v->sidx_cap);
		while (v->sidx_key[h] && v->sidx_key[h] != v->st[i].s)
			h = (h + 1) & (size_t)(v->sidx_cap - 1);
		v->sidx_key[h] = v->st[i].s;
		v->sidx_val[h] = i;
	}
	layout_smem(v);
}

void sched_free(Sched *v)
{
	(void)v; /* everything lives in the compilation arena */
}

long long sched_tma_bytes(const Sched *v, const Stmt *s)
{
	const Expr *ref = s->kind == S_TMA_LOAD ? s->src : s->kind == S_TMA_STORE ? s->dst : NULL;
	if (!ref)
		return -1;
	SchedEnv env;
	sched_env_sample(v, &env, 0);
	long long box[8];
	int n = sched_box(v, &env, ref, box, 8);
	if (n < 0)
		return -1;
	Decl *p = sched_param(v, sched_refname(ref));
	int sm = sched_smem(v, sched_refname(s->kind == S_TMA_LOAD ? s->dst : s->src));
	DType dt = sm >= 0 ? v->smems[sm].d->dt : p ? p->dt : DT_NONE;
	long long bytes = dtype_size(dt);
	for (int i = 0; i < n; i++)
		if (box[i] < 0 || __builtin_mul_overflow(bytes, box[i], &bytes))
			return -1;
	return bytes;
}

void sched_loop_env(const Sched *v, SchedEnv *env, int sample, int idx)
{
	sched_env_sample(v, env, sample);
	int chain[64], n = 0;
	for (int i = v->st[idx].loop_idx; i >= 0 && n < 64; i = v->st[i].loop_idx)
		chain[n++] = i;
	for (int q = n - 1; q >= 0; q--) {
		Stmt *f = v->st[chain[q]].s;
		long long lo;
		if (f->name && sched_eval(v, env, f->lo, &lo))
			sched_env_set(env, f->name, lo);
	}
}

/* ---- starts free ---- */

/* The lowering's convention (docs/LOWERING.md, "Starts free"): a ring
 * barrier that no TMA signals, waited by a role that writes buffers of the
 * same ring (TMA destination, cp.async destination, store or atomic), is a
 * "slot is free" barrier whose first wait on each stage passes; every other
 * wait (a barrier TMA completes, a ring the role only reads, any non-ring
 * barrier) needs a completed phase. */
bool sched_starts_free(const Sched *v, int r, int b)
{
	int p = v->bars[b].pipe;
	if (p < 0)
		return false;
	bool writes = false;
	for (int i = 0; i < v->nst; i++) {
		const Stmt *s = v->st[i].s;
		if (s->kind == S_TMA_LOAD && s->name && strcmp(s->name, v->bars[b].name) == 0)
			return false;
		if (v->st[i].role != r)
			continue;
		int m = sched_smem_written(v, s);
		if (m >= 0 && v->smems[m].pipe == p)
			writes = true;
	}
	return writes;
}
