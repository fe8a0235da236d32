/*
 * tactics.c — the tactic registry and the pipeline every application runs.
 *
 * One application of a tactic is a straight line:
 *
 *   spec "NAME:ARGS" -> registry row -> parse hook (argument usage errors)
 *   input text -> parse -> sema -> verify the chosen kernel (refused if any error)
 *   -> precondition hook -> rewrite hook (the AST, in place)
 *   -> drop the comments -> print_program (canonical text)
 *   -> re-parse, sema, print again (must be identical), verify the kernel
 *      (no error, no CK-RES-009 the input did not have), and — when the input kernel lowers for
 *      sm_90a — derive_plan + lower_sm90 must succeed on the result too
 *
 * The last step turns "the tactic produced something illegal" into a refusal
 * whose reason is the finding, so results are legal as far as the verifier
 * and the lowering can tell; a result that does not even re-parse or pass
 * sema is TACTIC_BROKEN, a bug in the tactic that the unit tests look for.
 * Every step has its own Ctx over its own arena; nothing is global, and the
 * registry below is read-only data.
 *
 * Comments are dropped from results: they describe the seed (its tile, its
 * stage count) and would be wrong about the rewrite, and without them two
 * routes to one schedule are one candidate in the content-addressed store.
 *
 * The registry is the flat table `registry[]`: name, version, parameter
 * spelling, summary, argument count and the four hooks, which live in
 * tactics_sched.c, tactics_tile.c and tactics_ws.c. tactics_propose() asks each tactic's
 * propose hook for a few sensible arguments for the kernel at hand and applies
 * each, which is what `cake evolve` calls to expand a candidate.
 */
#include "tactics_int.h"
#include "../cake.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the registry ---- */


#define ROW(n, ver, params, lo, hi, summary) \
	{#n, ver, params, summary, lo, hi, n##_parse, n##_pre, n##_apply, n##_propose, false}
/* an enabling tactic: its result pays off through the tactics it opens up */
#define ENABLING(n, ver, params, lo, hi, summary) \
	{#n, ver, params, summary, lo, hi, n##_parse, n##_pre, n##_apply, n##_propose, true}

static const Tactic registry[] = {
	ROW(tile_m, 1, "SIZE", 1, 1,
	    "change the M extent of the CTA tile (rows of the matrix product) to SIZE"),
	ROW(tile_n, 1, "SIZE", 1, 1,
	    "change the N extent of the CTA tile (columns, a grid axis) to SIZE"),
	ROW(tile_k, 1, "SIZE", 1, 1,
	    "change the K step of the main loop to SIZE (the operands' swizzle follows: SIZE x dtype bytes)"),
	ROW(centroid_tile, 1, "W", 1, 1,
	    "k-means assign: stream centroid tiles of W rows through the ring (the N axis stepped by a loop)"),
	ROW(stages, 1, "N[:PIPE]", 1, 2,
	    "give a pipeline (its ring buffers and ring barriers) N stages"),
	ENABLING(consumers, 1, "N", 1, 1,
	    "give the wgmma role N consumer warpgroups (warps, release arrivals, fragment split, regs)"),
	ROW(persistent, 1, "", 0, 0,
	    "make the grid persistent: one CTA per SM walks the tiles, rings carry across tiles"),
	ROW(ragged, 1, "DIM", 1, 1,
	    "let the grid axis that covers DIM in whole tiles cover any DIM: its last tile's TMA boxes clipped"),
	ROW(operand_ring, 1, "", 0, 0,
	    "persistent grid, each once-per-tile operand in a 2-stage ring of its own: the next tile's copy loads while the current one is in use"),
	ROW(nonpersistent, 1, "", 0, 0,
	    "make a persistent grid one CTA per tile again"),
	ROW(raster_group, 1, "G", 1, 1,
	    "visit the tiles in groups of G rows of the second grid axis (L2 reuse); 0 removes `group`"),
	ROW(split_k, 1, "S", 1, 1,
	    "split K over S CTAs (a third grid axis) that add their partial tiles into an f32 C atomically"),
	ROW(swap_ab, 1, "", 0, 0,
	    "swap the roles of the A and B tiles in the raster: exchange the grid axes (and the TMA issue order)"),
	ROW(swizzle, 1, "128B|64B|32B[:BUF]", 1, 2,
	    "change the swizzle of the wgmma operands (their K step follows) or of one TMA buffer"),
	ROW(regs, 1, "ROLE:N", 2, 2,
	    "set the register budget (setmaxnreg) of one role to N"),
	ROW(unroll, 1, "N[:VAR]", 1, 2,
	    "set `unroll N` on the pipelined loops (or the loops over VAR); 0 removes it"),
	ENABLING(warp_specialize, 1, "", 0, 0,
	    "split a single-role kernel into a TMA producer warpgroup and its consumer (empty ring barrier, regs)"),
};

const Tactic *tactics_all(int *n)
{
	*n = (int)NELEM(registry);
	return registry;
}

const Tactic *tactic_find(const char *name)
{
	size_t len = strcspn(name, ":");
	for (size_t i = 0; i < NELEM(registry); i++)
		if (strlen(registry[i].name) == len && strncmp(registry[i].name, name, len) == 0)
			return &registry[i];
	return NULL;
}

void tactics_version_str(char buf[32])
{
	uint32_t h = 2166136261u;
	char tmp[96];
	for (size_t i = 0; i < NELEM(registry); i++) {
		int n = snprintf(tmp, sizeof tmp, "%s:%d\n", registry[i].name, registry[i].version);
		for (int j = 0; j < n && j < (int)sizeof tmp; j++) {
			h ^= (unsigned char)tmp[j];
			h *= 16777619u;
		}
	}
	snprintf(buf, 32, "t1-%08x", (unsigned)h);
}

/* Like verifier_version: a function-local buffer written once through
 * pthread_once with the same deterministic bytes, so it acts as a constant. */
static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static char version_buf[32];

static void version_init(void)
{
	tactics_version_str(version_buf);
}

const char *tactics_version(void)
{
	pthread_once(&version_once, version_init);
	return version_buf;
}

void tactics_print(StrBuf *out, const char *format)
{
	char ver[32];
	tactics_version_str(ver);
	if (format && strcmp(format, "json") == 0) {
		sb_puts(out, "{\"schema\": \"cake-tactics/1\", \"version\": ");
		sb_json_str(out, ver);
		sb_puts(out, ", \"tactics\": [");
		for (size_t i = 0; i < NELEM(registry); i++) {
			const Tactic *t = &registry[i];
			sb_puts(out, i ? ",\n  " : "\n  ");
			sb_puts(out, "{\"name\": ");
			sb_json_str(out, t->name);
			sb_printf(out, ", \"version\": %d, \"params\": ", t->version);
			sb_json_str(out, t->params);
			sb_puts(out, ", \"summary\": ");
			sb_json_str(out, t->summary);
			sb_putc(out, '}');
		}
		sb_puts(out, "\n]}\n");
		return;
	}
	sb_printf(out, "tactics %s (%d)\n", ver, (int)NELEM(registry));
	for (size_t i = 0; i < NELEM(registry); i++) {
		const Tactic *t = &registry[i];
		char head[64];
		snprintf(head, sizeof head, "%s%s%s", t->name, t->params[0] ? ":" : "", t->params);
		sb_printf(out, "  %-30s %s\n", head, t->summary);
	}
}

/* ---- helpers for the tactic files ---- */

bool tac_fail(TacCtx *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = arena_vprintf(&t->c->arena, fmt, ap);
	va_end(ap);
	if (t->why) {
		t->why->len = 0;
		sb_puts(t->why, s);
	}
	return false;
}

bool tac_int_arg(TacCtx *t, int i, long long lo, long long hi, const char *what)
{
	const char *s = i < t->nargs ? t->arg[i] : "";
	char *end = NULL;
	long long v = s[0] >= '0' && s[0] <= '9' ? strtoll(s, &end, 10) : -1;
	if (!end || *end || v < lo || v > hi)
		return tac_fail(t, "%s must be an integer in %lld..%lld, not '%s'", what, lo, hi, s);
	t->num[i] = v;
	return true;
}

void tac_propose(TacCtx *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = arena_vprintf(&t->c->arena, fmt, ap);
	va_end(ap);
	for (int i = 0; i < t->props->len; i++)
		if (strcmp(t->props->data[i], s) == 0)
			return;
	vec_push(t->props, s);
}

Expr *tac_int(TacCtx *t, long long v)
{
	Expr *e = arena_alloc(&t->c->arena, sizeof *e);
	e->kind = E_INT;
	e->span = NOSPAN;
	e->ival = v;
	e->is_const = true;
	e->cval = v;
	e->height = 1;
	return e;
}

Expr *tac_ident(TacCtx *t, const char *name)
{
	Expr *e = arena_alloc(&t->c->arena, sizeof *e);
	e->kind = E_IDENT;
	e->span = NOSPAN;
	e->name = arena_strdup(&t->c->arena, name);
	e->height = 1;
	return e;
}

Expr *tac_bin(TacCtx *t, int op, Expr *l, Expr *r)
{
	Expr *e = arena_alloc(&t->c->arena, sizeof *e);
	e->kind = E_BINARY;
	e->span = NOSPAN;
	e->op = op;
	e->lhs = l;
	e->rhs = r;
	e->height = 1 + (l->height > r->height ? l->height : r->height);
	return e;
}

bool tac_const(const Expr *e, long long *v)
{
	if (!e)
		return false;
	if (e->kind == E_INT) {
		*v = e->ival;
		return true;
	}
	if (e->is_const) {
		*v = e->cval;
		return true;
	}
	return false;
}

Decl *tac_decl(Kernel *k, DeclKind kind, const char *name)
{
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind == kind && d->name && name && strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

Decl *tac_grid(Kernel *k)
{
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_GRID)
			return k->decls[i];
	return NULL;
}

Stmt *tac_role_body(Kernel *k, const char *name)
{
	for (int i = 0; i < k->nbody; i++) {
		Stmt *s = k->body[i];
		if (s && s->kind == S_IN && s->name && strcmp(s->name, name) == 0)
			return s;
	}
	return NULL;
}

static void each(Stmt **b, int n, void (*fn)(Stmt *, void *), void *arg)
{
	for (int i = 0; i < n; i++) {
		if (!b[i])
			continue;
		fn(b[i], arg);
		each(b[i]->body, b[i]->nbody, fn, arg);
		each(b[i]->els, b[i]->nels, fn, arg);
	}
}

void tac_each_stmt(Kernel *k, void (*fn)(Stmt *s, void *arg), void *arg)
{
	each(k->body, k->nbody, fn, arg);
}

int tac_stmt_exprs(Stmt *s, Expr ***slots, int max)
{
	int n = 0;
	Expr **f[] = {&s->lo, &s->hi, &s->step, &s->cond, &s->dst, &s->src};
	for (size_t i = 0; i < NELEM(f) && n < max; i++)
		if (*f[i])
			slots[n++] = f[i];
	for (int i = 0; i < s->nlhs && n < max; i++)
		if (s->lhs[i])
			slots[n++] = &s->lhs[i];
	return n;
}

bool tac_expr_uses(const Expr *e, const char *name)
{
	if (!e)
		return false;
	if ((e->kind == E_IDENT || e->kind == E_CALL) && e->name && strcmp(e->name, name) == 0)
		return true;
	if (tac_expr_uses(e->lhs, name) || tac_expr_uses(e->rhs, name) || tac_expr_uses(e->base, name))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (tac_expr_uses(e->args[i], name))
			return true;
	for (int i = 0; i < e->nslices; i++)
		if (tac_expr_uses(e->slices[i].start, name) || tac_expr_uses(e->slices[i].len, name))
			return true;
	return false;
}

typedef struct NameScan {
	const char *name;
	bool used;
} NameScan;

static void scan_name(Stmt *s, void *arg)
{
	NameScan *ns = arg;
	if (s->name && strcmp(s->name, ns->name) == 0)
		ns->used = true;
	Expr **slots[16];
	int n = tac_stmt_exprs(s, slots, 16);
	for (int i = 0; i < n; i++)
		ns->used = ns->used || tac_expr_uses(*slots[i], ns->name);
}

bool tac_name_used(Kernel *k, const char *name)
{
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->name && strcmp(d->name, name) == 0)
			return true;
		for (int q = 0; d->kind == D_GRID && q < d->nexprs; q++)
			if (d->grid_vars[q] && strcmp(d->grid_vars[q], name) == 0)
				return true;
	}
	for (int i = 0; i < k->ndims; i++)
		if (strcmp(k->dims[i], name) == 0)
			return true;
	NameScan ns = {name, false};
	tac_each_stmt(k, scan_name, &ns);
	return ns.used || builtin_find(name) != NULL;
}

const char *tac_fresh_name(TacCtx *t, const char *base, const char *also)
{
	const char *n = base;
	for (int i = 2; tac_name_used(t->k, n) || (also && strcmp(n, also) == 0); i++)
		n = arena_printf(&t->c->arena, "%s%d", base, i);
	return n;
}

Stmt *tac_new_stmt(TacCtx *t, StmtKind kind, const char *name)
{
	Stmt *s = arena_alloc(&t->c->arena, sizeof *s);
	s->kind = kind;
	s->span = s->name_span = s->pipe_span = s->body_end = s->els_end = NOSPAN;
	s->name = name;
	return s;
}

const char **tac_name_list(TacCtx *t, const char *name)
{
	const char **l = arena_alloc(&t->c->arena, sizeof *l);
	l[0] = name;
	return l;
}

void tac_insert_decl(TacCtx *t, Decl *d, int at)
{
	Kernel *k = t->k;
	Decl **ds = arena_alloc(&t->c->arena, sizeof(Decl *) * (size_t)(k->ndecls + 1));
	for (int i = 0, j = 0; i <= k->ndecls; i++)
		ds[i] = i == at ? d : k->decls[j++];
	k->decls = ds;
	k->ndecls++;
}

int tac_role_wgs(const Decl *r)
{
	int warps = r->warp_hi - r->warp_lo + 1;
	return warps >= 4 ? warps / 4 : 1;
}

int tac_role_threads(const Decl *r)
{
	return (r->warp_hi - r->warp_lo + 1) * 32;
}

long long tac_frag_words(Kernel *k, const Decl *r)
{
	long long words = 0;
	int threads = tac_role_threads(r);
	for (int i = 0; i < k->ndecls; i++) {
		Decl *f = k->decls[i];
		if (f->kind != D_FRAG || !f->owner || strcmp(f->owner, r->name) != 0)
			continue;
		long long el = 1, v;
		for (int q = 0; q < f->rank; q++)
			el *= tac_const(f->shape[q], &v) ? v : 1;
		int holders = f->split != SPLIT_NONE || threads < 128 ? threads : 128;
		long long w = (el * dtype_size(f->dt) + 3) / 4;
		words += (w + holders - 1) / holders;
	}
	return words;
}

int tac_regs_fit(Kernel *k, const Decl *r)
{
	long long threads = 0, others = 0;
	int hi = 0;
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_ROLE && k->decls[i]->warp_hi + 1 > hi)
			hi = k->decls[i]->warp_hi + 1;
	threads = (long long)hi * 32;
	if (threads <= 0)
		return 0;
	long long per = 65536 / threads / 8 * 8;
	per = per > 256 ? 256 : per;
	long long pool = per * threads;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind != D_ROLE || d == r)
			continue;
		others += (long long)(d->regs > 0 ? d->regs : per) * tac_role_threads(d);
	}
	long long fit = (pool - others) / tac_role_threads(r) / 8 * 8;
	return (int)(fit > 256 ? 256 : fit < 0 ? 0 : fit);
}

typedef struct MmScan {
	Stmt *mm;
} MmScan;

static void find_mm(Stmt *s, void *arg)
{
	MmScan *m = arg;
	if (!m->mm && (s->kind == S_WGMMA || s->kind == S_MMA) && s->ploop)
		m->mm = s;
}

bool tac_gemm(TacCtx *t)
{
	if (t->gemm_state > 0)
		return true;
	if (t->gemm_state < 0)
		return tac_fail(t, "kernel '%s' has no wgmma or mma inside a pipelined loop", t->k->name);
	t->gemm_state = -1;
	MmScan m = {NULL};
	tac_each_stmt(t->k, find_mm, &m);
	Stmt *s = m.mm;
	if (!s || !s->src || s->src->kind != E_BINARY || !s->role)
		return tac_fail(t, "kernel '%s' has no wgmma or mma inside a pipelined loop", t->k->name);
	Gemm *g = &t->gemm;
	memset(g, 0, sizeof *g);
	g->mm = s;
	g->role = s->role->decl;
	Expr *a = s->src->lhs, *b = s->src->rhs;
	g->a_t = a->kind == E_TRANSPOSE;
	g->b_t = b->kind == E_TRANSPOSE;
	Expr *ai = g->a_t ? a->lhs : a, *bi = g->b_t ? b->lhs : b;
	g->acc = s->dst && s->dst->sym ? s->dst->sym->decl : NULL;
	g->a = ai && ai->sym ? ai->sym->decl : NULL;
	g->b = bi && bi->sym ? bi->sym->decl : NULL;
	if (!g->role || !g->acc || !g->a || !g->b || g->acc->rank != 2 || g->a->rank != 2 || g->b->rank != 2)
		return tac_fail(t, "the matrix product of kernel '%s' does not have rank-2 operands", t->k->name);
	Axes *A = tac_axes(t);
	g->m = ax_decl_slot(A, g->acc, 0);
	g->n = ax_decl_slot(A, g->acc, 1);
	g->kk = ax_decl_slot(A, g->a, g->a_t ? 0 : 1);
	t->gemm_state = 1;
	return true;
}

/* ---- the pipeline ---- */

static Kernel *pick_kernel(Program *p, const char *name)
{
	for (int i = 0; i < p->nkernels; i++)
		if (!name || (p->kernels[i]->name && strcmp(p->kernels[i]->name, name) == 0))
			return p->kernels[i];
	return NULL;
}

static void kernel_names(StrBuf *b, const Program *p)
{
	for (int i = 0; i < p->nkernels; i++)
		sb_printf(b, "%s'%s'", i ? ", " : "", p->kernels[i]->name ? p->kernels[i]->name : "?");
}

/* "line L: MSG [RULE]" of the first finding of severity sev (sorted order). */
static bool first_finding(DiagList *dl, Severity sev, const char *rule, StrBuf *out)
{
	diag_sort(dl);
	for (int i = 0; i < dl->n; i++) {
		Diag *d = dl->items[i];
		if (d->sev != sev || (rule && strcmp(d->rule, rule) != 0))
			continue;
		sb_printf(out, "%s (line %d) [%s]", d->msg, d->span.line, d->rule);
		return true;
	}
	return false;
}

/* Does kernel `kernel` of file `file` derive a plan and lower for sm_90a?
 * The pipeline runs to the lowering with its findings in a scratch list:
 * only the answer matters. */
static bool lowers(SourceSet *ss, int file, const char *kernel)
{
	DiagList scratch = {0};
	CakeOptions o = cake_options(CAKE_LOWER);
	o.kernel = kernel;
	CakeUnit u;
	cake_compile(&u, ss, &scratch, file, &o);
	bool ok = u.reached == CAKE_LOWER && u.nkernels == 1 && u.kernels[0]->target == TGT_SM90A;
	cake_unit_free(&u);
	diag_free(&scratch);
	return ok;
}

/* Check a rewritten program through the pipeline: it must parse, pass sema
 * and be a fixed point of the canonical printer (else the tactic is broken),
 * then pass the verifier without errors and without a new CK-RES-009, and
 * lower when the input lowered (else the tactic does not apply). */
static TacticStatus check_result(const char *text, size_t len, const char *kname, bool lower, bool spilled,
                                 StrBuf *why)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeOptions o = cake_options(lower ? CAKE_LOWER : CAKE_VERIFY);
	o.kernel = kname;
	CakeUnit u;
	cake_compile_text(&u, &ss, &dl, "<tactic output>", text, len, &o);
	TacticStatus st = TACTIC_OK;
	StrBuf msg = {0};
	if (u.failed == CAKE_PARSE && !u.nkernels && !dl.nerr) {
		sb_printf(why, "internal error: the rewritten program lost kernel '%s'", kname);
		st = TACTIC_BROKEN;
		goto out;
	}
	if (u.failed == CAKE_PARSE || u.failed == CAKE_SEMA) {
		first_finding(&dl, SEV_ERROR, NULL, &msg);
		sb_printf(why, "internal error: the rewritten program %s: %s", u.failed == CAKE_PARSE ? "does not parse" : "fails sema",
		          sb_str(&msg));
		st = TACTIC_BROKEN;
		goto out;
	}
	StrBuf again = {0};
	print_program(&again, u.prog);
	bool same = again.len == len && memcmp(sb_str(&again), text, len) == 0;
	sb_free(&again);
	if (!same) {
		sb_puts(why, "internal error: the rewritten program is not a fixed point of the canonical printer");
		st = TACTIC_BROKEN;
		goto out;
	}
	if (u.failed == CAKE_VERIFY) {
		first_finding(&dl, SEV_ERROR, NULL, &msg);
		sb_printf(why, "the result fails the verifier: %s", sb_str(&msg));
		st = TACTIC_REJECTED;
		goto out;
	}
	if (!spilled && first_finding(&dl, SEV_WARNING, "CK-RES-009", &msg)) {
		sb_printf(why, "the result would spill registers: %s", sb_str(&msg));
		st = TACTIC_NOT_APPLICABLE;
		goto out;
	}
	if (lower && u.failed != CAKE_STAGE_NONE) {
		first_finding(&dl, SEV_ERROR, NULL, &msg);
		sb_printf(why, "the result cannot be lowered for sm_90a: %s", sb_str(&msg));
		st = TACTIC_REJECTED;
	}
out:
	sb_free(&msg);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return st;
}

/* Split spec into t's arguments (copies in the arena); returns the tactic. */
static const Tactic *decode_spec(TacCtx *t, const char *spec, StrBuf *why)
{
	const Tactic *tac = tactic_find(spec);
	if (!tac) {
		size_t n = strcspn(spec, ":");
		char *name = arena_strndup(&t->c->arena, spec, n);
		const char *best = NULL;
		int bd = 3;
		for (size_t i = 0; i < NELEM(registry); i++) {
			int d = edit_distance(name, registry[i].name, 2);
			if (d < bd) {
				bd = d;
				best = registry[i].name;
			}
		}
		sb_printf(why, "unknown tactic '%s'%s%s%s (see 'cake tactics')", name, best ? "; did you mean '" : "",
		          best ? best : "", best ? "'?" : "");
		return NULL;
	}
	t->tac = tac;
	const char *p = strchr(spec, ':');
	while (p) {
		const char *q = strchr(p + 1, ':');
		size_t n = q ? (size_t)(q - p - 1) : strlen(p + 1);
		if (t->nargs == TAC_MAXARGS) {
			t->nargs++;
			break;
		}
		t->arg[t->nargs++] = arena_strndup(&t->c->arena, p + 1, n);
		p = q;
	}
	if (t->nargs < tac->min_args || t->nargs > tac->max_args) {
		if (tac->max_args == 0)
			sb_printf(why, "'%s' takes no arguments", tac->name);
		else
			sb_printf(why, "'%s' takes %s:%s", tac->name, tac->name, tac->params);
		return NULL;
	}
	for (int i = 0; i < t->nargs; i++)
		if (!t->arg[i][0]) {
			sb_printf(why, "'%s' has an empty argument (expected %s:%s)", tac->name, tac->name, tac->params);
			return NULL;
		}
	return tac;
}

static int count_rule(const DiagList *dl, const char *rule)
{
	int n = 0;
	for (int i = 0; i < dl->n; i++)
		n += strcmp(dl->items[i]->rule, rule) == 0;
	return n;
}

/* The input through the pipeline to the verifier (u, caller frees); returns
 * the kernel or NULL (why set). *spilled: the kernel already has a CK-RES-009
 * warning (a tactic may keep it, not introduce it). */
static Kernel *load_input(CakeUnit *u, SourceSet *ss, int file, DiagList *dl, const char *kernel, bool *spilled,
                          StrBuf *why)
{
	const char *path = ss->files[file].path;
	int spills = count_rule(dl, "CK-RES-009");
	CakeOptions o = cake_options(CAKE_VERIFY);
	o.kernel = kernel;
	char first[256] = "";
	if (!kernel) {   /* no name: the file's first kernel */
		DiagList scratch = {0};
		CakeOptions po = cake_options(CAKE_PARSE);
		CakeUnit pu;
		cake_compile(&pu, ss, &scratch, file, &po);
		if (pu.prog && pu.prog->nkernels && pu.prog->kernels[0]->name)
			snprintf(first, sizeof first, "%s", pu.prog->kernels[0]->name);
		cake_unit_free(&pu);
		diag_free(&scratch);
		o.kernel = first[0] ? first : NULL;
	}
	cake_compile(u, ss, dl, file, &o);
	if (u->failed == CAKE_PARSE && u->prog && !u->nkernels && !dl->nerr) {
		sb_printf(why, "'%s' has no kernel named '%s' (it has ", path, kernel ? kernel : "?");
		kernel_names(why, u->prog);
		sb_putc(why, ')');
		return NULL;
	}
	if (u->failed == CAKE_PARSE) {
		sb_printf(why, "'%s' has syntax errors; no tactic applied", path);
		return NULL;
	}
	if (u->failed == CAKE_SEMA) {
		sb_printf(why, "'%s' has errors; no tactic applied", path);
		return NULL;
	}
	Kernel *k = pick_kernel(u->prog, o.kernel);
	if (!k) {
		sb_printf(why, "'%s' has no kernel named '%s' (it has ", path, kernel ? kernel : "?");
		kernel_names(why, u->prog);
		sb_putc(why, ')');
		return NULL;
	}
	*spilled = count_rule(dl, "CK-RES-009") > spills;
	if (u->failed == CAKE_VERIFY) {
		sb_printf(why, "kernel '%s' in '%s' has verifier errors; no tactic applied", k->name, path);
		return NULL;
	}
	return k;
}

TacticStatus tactic_apply_source(SourceSet *ss, int file, DiagList *dl, const char *spec,
                                 const char *kernel, StrBuf *out, StrBuf *why)
{
	CakeUnit u;
	memset(&u, 0, sizeof u);
	Ctx spec_ctx;   /* the arena of the spec's arguments */
	ctx_init(&spec_ctx, ss, dl);
	StrBuf reason = {0};
	TacCtx t;
	memset(&t, 0, sizeof t);
	t.c = &spec_ctx;
	t.why = &reason;
	TacticStatus st = TACTIC_OK;
	Program *p = NULL;
	const Tactic *tac = decode_spec(&t, spec, &reason);
	if (!tac || !tac->parse(&t)) {
		st = TACTIC_BAD_SPEC;
		goto out;
	}
	bool spilled = false;
	t.k = load_input(&u, ss, file, dl, kernel, &spilled, &reason);
	if (!t.k) {
		st = TACTIC_BAD_INPUT;
		goto out;
	}
	t.c = &u.ctx;   /* the rewrite allocates in the program's arena */
	p = t.prog = u.prog;
	/* a rewrite must not break the lowering of a kernel that lowered */
	bool input_lowers = lowers(ss, file, t.k->name);
	if (!tac->pre(&t) || !tac->apply(&t)) {
		st = TACTIC_NOT_APPLICABLE;
		goto out;
	}
	p->comments = NULL;
	p->ncomments = 0;
	StrBuf text = {0};
	print_program(&text, p);
	st = check_result(sb_str(&text), text.len, t.k->name, input_lowers, spilled, &reason);
	if (st == TACTIC_OK || st == TACTIC_REJECTED)
		sb_putn(out, sb_str(&text), text.len);
	sb_free(&text);
out:
	if (st != TACTIC_OK)
		sb_puts(why, reason.len ? sb_str(&reason) : "no reason given");
	sb_free(&reason);
	cake_unit_free(&u);
	ctx_free(&spec_ctx);
	return st;
}

TacticStatus tactic_apply_text(const char *src, size_t len, const char *spec,
                               const char *kernel, StrBuf *out, StrBuf *why)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	int f = src_add(&ss, "<candidate>", src, len);
	TacticStatus st = tactic_apply_source(&ss, f, &dl, spec, kernel, out, why);
	diag_free(&dl);
	src_free(&ss);
	return st;
}

int tactics_propose(const char *src, size_t len, const char *kernel, bool only_ok,
                    TacticProposals *out)
{
	memset(out, 0, sizeof *out);
	SourceSet ss = {0};
	DiagList dl = {0};
	int f = src_add(&ss, "<candidate>", src, len);
	CakeUnit u;
	memset(&u, 0, sizeof u);
	StrBuf why = {0};
	bool spilled = false;
	Kernel *k = load_input(&u, &ss, f, &dl, kernel, &spilled, &why);
	Program *p = u.prog;
	int cap = 0;
	if (k) {
		const char *kname = arena_strdup(&u.ctx.arena, k->name);
		for (size_t i = 0; i < NELEM(registry); i++) {
			const Tactic *tac = &registry[i];
			Vec props = {0};
			TacCtx t;
			memset(&t, 0, sizeof t);
			t.c = &u.ctx;
			t.prog = p;
			t.k = k;
			t.tac = tac;
			t.why = &why;
			t.props = &props;
			tac->propose(&t);
			for (int q = 0; q < props.len; q++) {
				const char *args = props.data[q];
				char *spec = args[0] ? arena_printf(&u.ctx.arena, "%s:%s", tac->name, args)
				                     : arena_strdup(&u.ctx.arena, tac->name);
				StrBuf text = {0}, reason = {0};
				TacticStatus st = tactic_apply_text(src, len, spec, kname, &text, &reason);
				if (st == TACTIC_OK || !only_ok) {
					if (out->n == cap) {
						cap = cap ? cap * 2 : 32;
						out->items = xrealloc(out->items, sizeof(TacticProposal) * (size_t)cap);
					}
					TacticProposal *pr = &out->items[out->n++];
					size_t ol = strlen(spec) + 8;
					pr->origin = xmalloc(ol);
					snprintf(pr->origin, ol, "tactic:%s", spec);
					pr->status = st;
					pr->text = st == TACTIC_OK || st == TACTIC_REJECTED ? xstrdup(sb_str(&text)) : NULL;
					pr->reason = st == TACTIC_OK ? NULL : xstrdup(sb_str(&reason));
				}
				sb_free(&text);
				sb_free(&reason);
			}
			vec_free(&props);
		}
	}
	sb_free(&why);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return k ? out->n : -1;
}

void tactic_proposals_free(TacticProposals *ps)
{
	for (int i = 0; i < ps->n; i++) {
		free(ps->items[i].origin);
		free(ps->items[i].text);
		free(ps->items[i].reason);
	}
	free(ps->items);
	ps->items = NULL;
	ps->n = 0;
}
