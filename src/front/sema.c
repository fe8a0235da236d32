/*
 * sema.c — names, scoping, declarations, statements and ownership of Cake IR.
 *
 * The parser hands over a bare tree. Sema walks each kernel once and
 * annotates it in place so that later passes never resolve a name again.
 * This file holds the walk itself; the type rules of expressions (shapes,
 * dtypes, broadcasting, casts, builtin calls, constant folding) live in
 * sema_expr.c, and the two share the Sema state through sema_int.h.
 *
 *   1. Declarations. Every named declaration becomes a Sym in Kernel.syms;
 *      identifiers in the shapes of global params that are not consts become
 *      symbolic dims (SYM_DIM) in order of first appearance; the grid's
 *      coordinate names become SYM_GRIDVAR. Consts are folded on demand (a
 *      const may use a later const; a cycle is an error). Declarations are
 *      then checked: constant shapes, warp ranges that do not overlap,
 *      pipelines with at least one stage, rings that name pipelines,
 *      barrier producers/consumers and fragment owners that name roles.
 *
 *   2. Statements. The kernel body holds only `in ROLE { }` blocks, one per
 *      role. Every statement gets a preorder id, its executing role, its
 *      innermost loop and innermost pipelined loop. Loop variables live in
 *      their body; a `let` lives to the end of its block. A scope stack of
 *      Syms (innermost last) sits on top of the kernel table.
 *
 *   3. Expressions: see sema_expr.c. Statements hand each value to
 *      sema_check_expr and then check it against its target
 *      (sema_value_into, copy shapes and dtypes).
 *
 *   4. Ownership. A fragment is read and written only by its owner role; a
 *      barrier is waited on only by its consumers and arrived on or
 *      signalled only by its producers; a ring buffer or ring barrier of
 *      pipeline P is used only inside a loop pipelined over P.
 *
 * Sema stops at nothing: every finding is reported (CK-SEM-001..040, see
 * docs/sema-rules.txt) and a subexpression that failed to type is
 * "poisoned" (sema_check_expr returns false) so that one mistake does not
 * cascade into many reports. Hardware limits (register budgets, shared
 * memory size, wgmma shapes, warpgroup alignment) are the verifier's.
 */
#include "front.h"
#include "builtins.h"
#include "sema_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* Each suggestion scans every visible name; past this many per kernel the search
 * is skipped, so a file of thousands of unknown names stays linear. */
#define SUGGEST_MAX 256

/* ---- diagnostics ---- */

Diag *sema_err(Sema *s, const char *id, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = arena_vprintf(&s->c->arena, fmt, ap);
	va_end(ap);
	Diag *d = diag_add(s->c->diags, id, SEV_ERROR, sp, "%s", m);
	if (s->role)
		diag_set(&d->role, "%s", s->role->name);
	return d;
}

const char *sema_kind_name(SymKind k)
{
	switch (k) {
	case SYM_DIM: return "dimension";
	case SYM_PARAM: return "param";
	case SYM_CONST: return "const";
	case SYM_GRIDVAR: return "grid coordinate";
	case SYM_ROLE: return "role";
	case SYM_PIPE: return "pipeline";
	case SYM_SMEM: return "smem buffer";
	case SYM_BARRIER: return "barrier";
	case SYM_FRAG: return "fragment";
	case SYM_LOOPVAR: return "loop variable";
	case SYM_LET: return "let binding";
	case SYM_BUILTIN: return "builtin";
	default: return "name";
	}
}

/* Fill the resource/barrier/pipeline localisation from a symbol. */
void sema_loc_sym(Diag *d, Sym *y)
{
	if (!y)
		return;
	switch (y->kind) {
	case SYM_SMEM: case SYM_FRAG: case SYM_PARAM:
		diag_set(&d->resource, "%s", y->name);
		if (y->decl && y->decl->ring)
			diag_set(&d->pipeline, "%s", y->decl->ring);
		break;
	case SYM_BARRIER:
		diag_set(&d->barrier, "%s", y->name);
		if (y->decl && y->decl->ring)
			diag_set(&d->pipeline, "%s", y->decl->ring);
		break;
	case SYM_PIPE:
		diag_set(&d->pipeline, "%s", y->name);
		break;
	case SYM_ROLE:
		if (!d->role)
			diag_set(&d->role, "%s", y->name);
		break;
	default:
		break;
	}
}

/* ---- symbols and scopes ---- */

static void check_tile(Sema *s, Decl *d);
static Sym *find_in(Vec *v, const char *name)
{
	if (!name)
		return NULL;
	for (int i = v->len - 1; i >= 0; i--) {
		Sym *y = v->data[i];
		if (strcmp(y->name, name) == 0)
			return y;
	}
	return NULL;
}

Sym *sema_find(Sema *s, const char *name)
{
	Sym *y = find_in(&s->scope, name);
	return y ? y : find_in(&s->ksyms, name);
}

/* End the scopes opened since `mark`, remembering their names for diagnostics. */
static void scope_pop(Sema *s, int mark)
{
	for (int i = mark; i < s->scope.len; i++)
		vec_push(&s->gone, s->scope.data[i]);
	s->scope.len = mark;
}

/* `family NAME` in the kernel header: NAME must be one of the families the
 * pipeline registered (Ctx.families; unchecked when the context has none). */
static void check_family(Sema *s, const Decl *d)
{
	const Ctx *c = s->c;
	if (!d || !c->families || !d->name)
		return;
	const char *best = NULL;
	int bestd = 3;
	for (int i = 0; i < c->nfamilies; i++) {
		if (!strcmp(c->families[i], d->name))
			return;
		int e = edit_distance(d->name, c->families[i], 2);
		if (e < bestd) {
			bestd = e;
			best = c->families[i];
		}
	}
	Diag *dg = sema_err(s, "CK-SEM-043", d->name_span, "unknown kernel family '%s'", d->name);
	if (best) {
		diag_set(&dg->hint, "did you mean '%s'? `cake families` lists them", best);
		sema_fix_rename(s, dg, d->name_span, d->name, best);
	} else
		diag_set(&dg->hint, "`cake families` lists the families; drop the clause for a kernel without an oracle");
}

/* Closest visible name of an allowed kind (mask of 1<<SymKind; 0 = any). */
static const char *suggest(Sema *s, const char *name, unsigned mask)
{
	if (s->nsuggest >= SUGGEST_MAX)
		return NULL;
	s->nsuggest++;
	const char *best = NULL;
	int bestd = 3;
	Vec *vs[2] = { &s->scope, &s->ksyms };
	for (int v = 0; v < 2; v++)
		for (int i = 0; i < vs[v]->len; i++) {
			Sym *y = vs[v]->data[i];
			if (mask && !(mask & (1u << y->kind)))
				continue;
			int d = edit_distance(name, y->name, 2);
			if (d < bestd && d < (int)strlen(name)) {
				bestd = d;
				best = y->name;
			}
		}
	return best;
}

void sema_fix_rename(Sema *s, Diag *d, Span sp, const char *name, const char *g)
{
	const SourceSet *ss = s->c->srcs;
	size_t n = strlen(name);
	if (!ss || sp.file < 0 || sp.file >= ss->n || sp.off < 0 || (size_t)sp.off + n > ss->files[sp.file].len)
		return;
	const char *t = ss->files[sp.file].text + sp.off;
	char after = (size_t)sp.off + n < ss->files[sp.file].len ? t[n] : 0;
	if (strncmp(t, name, n) != 0 || isalnum((unsigned char)after) || after == '_')
		return;   /* the span does not start with exactly the name */
	Span at = sp;
	at.len = (int)n;
	diag_fix_edit(diag_fix(d, "replace '%s' with '%s'", name, g), at, g);
}

void sema_unknown(Sema *s, const char *name, Span sp, const char *what, unsigned mask)
{
	Diag *d = sema_err(s, "CK-SEM-002", sp, "unknown %s '%s'", what, name);
	const char *g = suggest(s, name, mask);
	Sym *out = find_in(&s->gone, name);
	if (g) {
		diag_set(&d->hint, "did you mean '%s'?", g);
		sema_fix_rename(s, d, sp, name, g);
	} else if (out) {
		diag_set(&d->hint, "'%s' is a %s visible only inside the block that declares it; use it there",
		         name, out->kind == SYM_LOOPVAR ? "loop variable" : "`let`");
		diag_related(d, out->span, "'%s' declared here", name);
	} else
		diag_set(&d->hint, "declare '%s' before the kernel body", name);
}

Sym *sema_new_sym(Sema *s, SymKind k, const char *name, Span sp)
{
	Sym *y = arena_alloc(&s->c->arena, sizeof *y);
	y->kind = k;
	y->name = name;
	y->span = sp;
	return y;
}

/* Declare a kernel-level (scoped = false) or block-level symbol, reporting a
 * clash with any visible name. Returns the new Sym (declared even on clash
 * for kernel symbols, so later uses still resolve). */
static Sym *declare(Sema *s, SymKind k, const char *name, Span sp, bool scoped)
{
	Sym *y = sema_new_sym(s, k, name ? name : "?", sp);
	if (!name)
		return y;   /* a parse error left no name; nothing to declare */
	Sym *old = sema_find(s, name);
	if (old) {
		Diag *d = sema_err(s, "CK-SEM-001", sp, "'%s' is already declared as a %s",
		                   name, sema_kind_name(old->kind));
		diag_related(d, old->span, "'%s' first declared here", name);
		diag_set(&d->hint, "rename one of the two");
		return y;   /* keep the first one visible: fewer follow-on errors */
	}
	vec_push(scoped ? &s->scope : &s->ksyms, y);
	return y;
}

/* Resolve a name that must be of kind `want`; reports and returns NULL. */
static Sym *resolve_kind(Sema *s, const char *name, Span sp, SymKind want)
{
	if (!name)
		return NULL;
	Sym *y = sema_find(s, name);
	if (!y) {
		sema_unknown(s, name, sp, sema_kind_name(want), 1u << want);
		return NULL;
	}
	if (y->kind != want) {
		Diag *d = sema_err(s, "CK-SEM-003", sp, "'%s' is a %s, but a %s is expected here",
		                   name, sema_kind_name(y->kind), sema_kind_name(want));
		diag_related(d, y->span, "'%s' declared here", name);
		const char *g = suggest(s, name, 1u << want);
		if (g) {
			diag_set(&d->hint, "did you mean the %s '%s'?", sema_kind_name(want), g);
			sema_fix_rename(s, d, sp, name, g);
		}
		return NULL;
	}
	return y;
}

/* ---- ownership ---- */

/* Ownership and ring checks for one use of a resource symbol. */
void sema_use_sym(Sema *s, Sym *y, Span sp, bool write)
{
	if (!y || s->cx != CX_STMT)
		return;
	if (y->kind == SYM_FRAG && s->role && y->decl && y->decl->owner_sym &&
	    y->decl->owner_sym != s->role) {
		Diag *d = sema_err(s, "CK-SEM-023", sp, "fragment '%s' is owned by role '%s' but role '%s' %s it",
		                   y->name, y->decl->owner, s->role->name, write ? "writes" : "reads");
		sema_loc_sym(d, y);
		diag_related(d, y->decl->owner_span, "'%s' is declared in role '%s' here", y->name, y->decl->owner);
		diag_set(&d->hint, "move this statement into `in %s { }`, or pass the data through an smem buffer",
		         y->decl->owner);
		diag_set(&d->condition, "owner(%s) == %s", y->name, s->role->name);
	}
	if ((y->kind == SYM_SMEM || y->kind == SYM_BARRIER) && y->decl && y->decl->ring_sym) {
		Sym *p = y->decl->ring_sym;
		for (int i = 0; i < s->loops.len; i++) {
			Stmt *l = s->loops.data[i];
			if (l->pipe_sym == p)
				return;
		}
		Diag *d = sema_err(s, "CK-SEM-017", sp,
		                   "%s '%s' is a ring of pipeline '%s' but is used outside a loop pipelined over '%s'",
		                   sema_kind_name(y->kind), y->name, p->name, p->name);
		sema_loc_sym(d, y);
		diag_related(d, y->decl->ring_span, "'%s' is declared `ring %s` here", y->name, p->name);
		diag_set(&d->hint, "use it inside `for ... pipelined %s { }`, or drop `ring %s` from its declaration",
		         p->name, p->name);
	}
}

/* ---- declarations ---- */

static void collect_dims(Sema *s, Expr *e, Vec *constnames)
{
	if (!e)
		return;
	switch (e->kind) {
	case E_IDENT: {
		for (int i = 0; i < constnames->len; i++)
			if (strcmp(constnames->data[i], e->name) == 0)
				return;
		Sym *y = find_in(&s->ksyms, e->name);
		if (y)
			return;   /* a dim seen before, or a clash reported as CK-SEM-003 later */
		y = declare(s, SYM_DIM, e->name, e->span, false);
		y->index = s->dims.len;
		vec_push(&s->dims, (void *)e->name);
		return;
	}
	case E_UNARY: case E_TRANSPOSE:
		collect_dims(s, e->lhs, constnames);
		return;
	case E_BINARY:
		collect_dims(s, e->lhs, constnames);
		collect_dims(s, e->rhs, constnames);
		return;
	default:
		return;
	}
}

/* A constant, positive shape (smem, frag). */
static void check_const_shape(Sema *s, Decl *d, const char *what)
{
	s->cx = CX_CONST;
	s->cx_what = arena_printf(&s->c->arena, "the shape of %s '%s'", what, d->name);
	if (d->rank > MAX_RANK)
		sema_err(s, "CK-SEM-026", d->span, "%s '%s' has rank %d; at most %d dimensions are supported",
		         what, d->name, d->rank, MAX_RANK);
	for (int i = 0; i < d->rank; i++) {
		Expr *x = d->shape[i];
		if (!sema_check_expr(s, x))
			continue;
		if (!x->is_const) {
			Diag *d2 = sema_err(s, "CK-SEM-004", x->span, "the shape of %s '%s' must be constant", what, d->name);
			diag_set(&d2->hint, "use literals or consts; symbolic sizes belong to global params");
		} else if (x->cval <= 0) {
			sema_err(s, "CK-SEM-004", x->span, "extent %lld of %s '%s' must be a positive constant",
			         x->cval, what, d->name);
		}
	}
	s->cx = CX_STMT;
}

static Sym *resolve_ring(Sema *s, Decl *d)
{
	if (!d->ring)
		return NULL;
	return resolve_kind(s, d->ring, d->ring_span, SYM_PIPE);
}

static Sym **resolve_roles(Sema *s, Decl *d, const char **names, Span *spans, int n, const char *list)
{
	Sym **r = arena_alloc(&s->c->arena, sizeof(Sym *) * (size_t)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++) {
		r[i] = resolve_kind(s, names[i], spans[i], SYM_ROLE);
		for (int j = 0; j < i && r[i]; j++)
			if (r[j] == r[i]) {
				Diag *dg = sema_err(s, "CK-SEM-019", spans[i], "role '%s' is listed twice in the %s of barrier '%s'",
				                    names[i], list, d->name);
				diag_related(dg, spans[j], "first listed here");
				diag_set(&dg->barrier, "%s", d->name);
				diag_set(&dg->hint, "list each role once; `arrivals` counts the arrivals per phase");
				break;
			}
	}
	return r;
}

static void check_decls(Sema *s)
{
	Kernel *k = s->k;
	Vec constnames = {0};
	Vec roles = {0}, pipes = {0}, smems = {0}, bars = {0}, frags = {0}, params = {0}, domains = {0};
	int nconst = 0;
	for (int i = 0; i < k->ndecls; i++)
		if (k->decls[i]->kind == D_CONST && k->decls[i]->name) {
			vec_push(&constnames, (void *)k->decls[i]->name);
			nconst++;
		}
	s->const_state = arena_alloc(&s->c->arena, (size_t)nconst + 1);
	int ci = 0;
	/* pass 1: names, in source order */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		Sym *y = NULL;
		switch (d->kind) {
		case D_PARAM:
			if (d->space == SP_GLOBAL)
				for (int j = 0; j < d->rank; j++)
					collect_dims(s, d->shape[j], &constnames);
			y = declare(s, SYM_PARAM, d->name, d->name_span, false);
			d->id = params.len;
			vec_push(&params, d);
			break;
		case D_CONST:
			y = declare(s, SYM_CONST, d->name, d->name_span, false);
			y->index = ci++;
			break;
		case D_ROLE:
			y = declare(s, SYM_ROLE, d->name, d->name_span, false);
			d->id = roles.len;
			vec_push(&roles, d);
			break;
		case D_PIPELINE:
			y = declare(s, SYM_PIPE, d->name, d->name_span, false);
			d->id = pipes.len;
			vec_push(&pipes, d);
			break;
		case D_SMEM:
			y = declare(s, SYM_SMEM, d->name, d->name_span, false);
			d->id = smems.len;
			vec_push(&smems, d);
			break;
		case D_BARRIER:
			y = declare(s, SYM_BARRIER, d->name, d->name_span, false);
			d->id = bars.len;
			vec_push(&bars, d);
			break;
		case D_FRAG:
			y = declare(s, SYM_FRAG, d->name, d->name_span, false);
			d->id = frags.len;
			vec_push(&frags, d);
			break;
		case D_DOMAIN:
			d->id = domains.len;
			vec_push(&domains, d);
			break;
		case D_FAMILY:
			break;   /* in the kernel header, not among the declarations */
		case D_GRID: case D_CLUSTER: {
			Decl **slot = d->kind == D_GRID ? &k->grid : &k->cluster;
			if (*slot) {
				Diag *dg = sema_err(s, "CK-SEM-013", d->span, "a second `%s` declaration",
				                    d->kind == D_GRID ? "grid" : "cluster");
				diag_related(dg, (*slot)->span, "the first one is here");
				diag_set(&dg->hint, "a kernel has one %s; merge the two", d->kind == D_GRID ? "grid" : "cluster");
				break;
			}
			*slot = d;
			if (d->kind == D_GRID)
				for (int j = 0; d->grid_vars && d->grid_vars[j]; j++) {
					Sym *g = declare(s, SYM_GRIDVAR, d->grid_vars[j], d->grid_var_spans[j], false);
					g->index = j;
					g->decl = d;
				}
			break;
		}
		}
		if (y)
			y->decl = d;
	}
	vec_free(&constnames);
	/* pass 2: check each declaration */
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		switch (d->kind) {
		case D_PARAM:
			if (d->space == SP_GLOBAL) {
				s->cx = CX_DIMS;
				s->cx_rule = "CK-SEM-003";
				s->cx_what = arena_printf(&s->c->arena, "the shape of param '%s'", d->name);
				if (d->rank > MAX_RANK)
					sema_err(s, "CK-SEM-026", d->span, "param '%s' has rank %d; at most %d dimensions are supported",
					         d->name, d->rank, MAX_RANK);
				for (int j = 0; j < d->rank; j++)
					if (sema_check_expr(s, d->shape[j]) && d->shape[j]->type.dt == DT_BOOL)
						sema_err(s, "CK-SEM-011", d->shape[j]->span, "an extent of param '%s' must be an integer",
						         d->name);
				s->cx = CX_STMT;
			}
			break;
		case D_CONST: {
			Sym *y = find_in(&s->ksyms, d->name);
			if (y && y->decl == d)
				sema_const_value(s, y);
			break;
		}
		case D_DOMAIN:
			s->cx = CX_DIMS;
			s->cx_rule = "CK-SEM-010";
			s->cx_what = "a domain constraint";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (sema_check_expr(s, x) && x->type.dt != DT_BOOL) {
					Diag *dg = sema_err(s, "CK-SEM-010", x->span, "a domain constraint must be a boolean condition");
					diag_set(&dg->hint, "write a comparison such as `M %% 128 == 0` or `K >= 64`");
				}
			}
			s->cx = CX_STMT;
			break;
		case D_GRID:
			if (d != k->grid)
				break;
			s->cx = CX_DIMS;
			s->cx_rule = "CK-SEM-011";
			s->cx_what = "a grid extent";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (sema_check_expr(s, x) && !sema_dt_is_int(x->type.dt)) {
					Diag *dg = sema_err(s, "CK-SEM-011", x->span, "a grid extent must be an integer expression");
					diag_set(&dg->hint, "e.g. `grid (N / 128, M / 128) as (bn, bm)`");
				}
			}
			s->cx = CX_STMT;
			/* a name count that differs from the extent count is CK-SYN-009 */
			if (d->nexprs < 1 || d->nexprs > 3) {
				Diag *dg = sema_err(s, "CK-SEM-012", d->span, "a grid has 1 to 3 dimensions, not %d", d->nexprs);
				diag_set(&dg->hint, "fold extra dimensions into one extent");
			}
			/* grouped tile raster (§4.5): G >= 1, and only over a 2-D tile space */
			if (d->group_stated || d->group) {
				Span gs = d->group_span.file >= 0 && d->group_span.len ? d->group_span : d->span;
				if (d->group < 1) {
					Diag *dg = sema_err(s, "CK-SEM-041", gs, "a tile group must be at least 1, not %d", d->group);
					diag_set(&dg->hint, "write `group 8` (8 rows of the second grid axis per group) or drop the clause; `group 1` is the natural order");
				}
				if (d->nexprs != 2) {
					Diag *dg = sema_err(s, "CK-SEM-042", gs, "`group` needs a 2-D grid, but this grid has %d dimension%s", d->nexprs,
					                    d->nexprs == 1 ? "" : "s");
					diag_set(&dg->hint, "the grouped raster maps a tile index onto (x, y) tiles; declare `grid (X, Y) as (bn, bm) group G` or drop `group`");
				}
			}
			break;
		case D_CLUSTER:
			if (d != k->cluster)
				break;
			s->cx = CX_CONST;
			s->cx_what = "a cluster extent";
			for (int j = 0; j < d->nexprs; j++) {
				Expr *x = d->exprs[j];
				if (sema_check_expr(s, x) && (!x->is_const || x->cval < 1))
					sema_err(s, "CK-SEM-004", x->span, "a cluster extent must be a positive constant");
			}
			s->cx = CX_STMT;
			if (d->nexprs < 1 || d->nexprs > 3)
				sema_err(s, "CK-SEM-012", d->span, "a cluster has 1 to 3 dimensions, not %d", d->nexprs);
			break;
		case D_ROLE:
			if (d->warp_lo > d->warp_hi) {
				Diag *dg = sema_err(s, "CK-SEM-006", d->span, "role '%s' has warp range %d..%d with the first above the last",
				                    d->name, d->warp_lo, d->warp_hi);
				diag_set(&dg->hint, "ranges are inclusive and ascending: write `warps %d..%d`", d->warp_hi, d->warp_lo);
				diag_set(&dg->role, "%s", d->name);
			}
			break;
		case D_PIPELINE:
			if (d->stages < 1) {
				Diag *dg = sema_err(s, "CK-SEM-008", d->span, "pipeline '%s' has %d stages; at least 1 is needed",
				                    d->name, d->stages);
				diag_set(&dg->pipeline, "%s", d->name);
				diag_set(&dg->hint, "write `stages 2` or more to overlap loads with compute");
			}
			break;
		case D_SMEM:
			check_const_shape(s, d, "smem buffer");
			d->ring_sym = resolve_ring(s, d);
			break;
		case D_BARRIER:
			d->ring_sym = resolve_ring(s, d);
			d->producer_syms = resolve_roles(s, d, d->producers, d->producer_spans, d->nproducers, "producers");
			d->consumer_syms = resolve_roles(s, d, d->consumers, d->consumer_spans, d->nconsumers, "consumers");
			if (d->arrivals < 1) {
				Diag *dg = sema_err(s, "CK-SEM-038", d->span, "barrier '%s' declares %d arrivals; at least 1 is needed",
				                    d->name, d->arrivals);
				diag_set(&dg->barrier, "%s", d->name);
				diag_set(&dg->hint, "count one arrival per arriving warpgroup (or TMA issuing role) per phase");
			}
			break;
		case D_FRAG:
			check_const_shape(s, d, "fragment");
			if (d->owner)
				d->owner_sym = resolve_kind(s, d->owner, d->owner_span, SYM_ROLE);
			if ((d->split == SPLIT_N && d->rank < 2) || (d->split == SPLIT_M && d->rank < 1)) {
				Diag *dg = sema_err(s, "CK-SEM-009", d->span, "fragment '%s' of rank %d cannot be `split %s`",
				                    d->name, d->rank, d->split == SPLIT_M ? "m" : "n");
				diag_set(&dg->resource, "%s", d->name);
				diag_set(&dg->hint, "split n divides columns and needs rank 2; use split m or no split");
			}
			if (d->lanes)
				check_tile(s, d);
			break;
		case D_FAMILY:
			break;   /* in the kernel header (check_family) */
		}
	}
	/* roles must not share warps */
	for (int i = 0; i < roles.len; i++)
		for (int j = 0; j < i; j++) {
			Decl *a = roles.data[j], *b = roles.data[i];
			if (a->warp_lo > a->warp_hi || b->warp_lo > b->warp_hi)
				continue;
			if (b->warp_lo <= a->warp_hi && a->warp_lo <= b->warp_hi) {
				Diag *dg = sema_err(s, "CK-SEM-007", b->span, "roles '%s' (warps %d..%d) and '%s' (warps %d..%d) overlap",
				                    b->name, b->warp_lo, b->warp_hi, a->name, a->warp_lo, a->warp_hi);
				diag_related(dg, a->span, "role '%s' declared here", a->name);
				diag_set(&dg->role, "%s", b->name);
				diag_set(&dg->hint, "give each role its own warps, e.g. `warps %d..%d`",
				         a->warp_hi + 1, a->warp_hi + 1 + (b->warp_hi - b->warp_lo));
			}
		}
	k->nroles = roles.len;     k->roles = (Decl **)vec_freeze(&roles, &s->c->arena);
	k->npipes = pipes.len;     k->pipes = (Decl **)vec_freeze(&pipes, &s->c->arena);
	k->nsmems = smems.len;     k->smems = (Decl **)vec_freeze(&smems, &s->c->arena);
	k->nbarriers = bars.len;   k->barriers = (Decl **)vec_freeze(&bars, &s->c->arena);
	k->nfrags = frags.len;     k->frags = (Decl **)vec_freeze(&frags, &s->c->arena);
	k->nparams = params.len;   k->params = (Decl **)vec_freeze(&params, &s->c->arena);
	k->ndomains = domains.len; k->domains = (Decl **)vec_freeze(&domains, &s->c->arena);
}

/* ---- statements ---- */

static const char *role_list(Sema *s, Sym **syms, const char **names, int n)
{
	StrBuf b = {0};
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
	char *r = arena_strdup(&s->c->arena, n ? sb_str(&b) : "none");
	sb_free(&b);
	return r;
}

static bool role_in(Sym *role, Sym **syms, int n)
{
	for (int i = 0; i < n; i++)
		if (syms && syms[i] == role)
			return true;
	return false;
}

/* Resolve the barrier of a wait/arrive/signal and check the role may use it. */
static void check_barrier_use(Sema *s, Stmt *st, const char *verb, bool producer, const char *rule)
{
	Sym *y = resolve_kind(s, st->name, st->name_span, SYM_BARRIER);
	st->sym = y;
	if (!y)
		return;
	sema_use_sym(s, y, st->name_span, false);
	Decl *d = y->decl;
	if (!s->role || !d)
		return;
	Sym **list = producer ? d->producer_syms : d->consumer_syms;
	const char **names = producer ? d->producers : d->consumers;
	int n = producer ? d->nproducers : d->nconsumers;
	if (role_in(s->role, list, n))
		return;
	Diag *dg = sema_err(s, rule, st->span, "role '%s' %s barrier '%s', but its %s are: %s",
	                    s->role->name, verb, y->name, producer ? "producers" : "consumers",
	                    role_list(s, list, names, n));
	sema_loc_sym(dg, y);
	diag_related(dg, d->span, "barrier '%s' declared here", y->name);
	diag_set(&dg->hint, "add '%s' to the %s of '%s', or move this statement to one of its %s",
	         s->role->name, producer ? "producers" : "consumers", y->name, producer ? "producers" : "consumers");
	diag_set(&dg->condition, "%s in %s(%s)", s->role->name, producer ? "producers" : "consumers", y->name);
}

/* A TMA load into, or store from, part of a buffer: `buf[:, c +: W]`, one whole column panel of
 * a 2-D swizzled buffer whose rows are wider than the swizzle span S (W = S / element size, c a
 * constant multiple of W): the layout the lowering keeps such buffers in (LANGUAGE.md §4.9), one
 * TMA box per panel. False with CK-SEM-027 otherwise. */
static bool tma_panel_ok(Sema *s, Expr *ref, bool load)
{
	const Decl *b = ref->sym->decl;
	int span = b ? swizzle_bytes(b->swizzle) : 0;
	int esz = b ? dtype_size(b->dt) : 0;
	long long rows = -1, cols = -1;
	if (b && b->rank == 2 && b->shape[0]->is_const && b->shape[1]->is_const)
		rows = b->shape[0]->cval, cols = b->shape[1]->cval;
	long long w = span && esz ? span / esz : 0, c = -1, len = -1;
	bool ok = span && cols > 0 && cols * esz > span && ref->nslices == 2;
	if (ok) {
		const Slice *r0 = &ref->slices[0], *r1 = &ref->slices[1];
		ok = r0->kind == SL_ALL ||
		     (r0->kind == SL_RANGE && r0->start->is_const && r0->start->cval == 0 && r0->len->is_const && r0->len->cval == rows);
		if (ok && r1->kind == SL_RANGE && r1->start->is_const && r1->len->is_const)
			c = r1->start->cval, len = r1->len->cval;
		ok = ok && len == w && c >= 0 && c % w == 0 && c + len <= cols;
	}
	if (ok)
		return true;
	Diag *d = sema_err(s, "CK-SEM-027", ref->span, "tma %s part of '%s': only one whole column panel of a swizzled "
	                   "buffer wider than its swizzle span can be named", load ? "load into" : "store from", ref->sym->name);
	sema_loc_sym(d, ref->sym);
	if (b && w > 0 && cols * esz > span)
		diag_related(d, b->span, "'%s' declared here: %lld columns, %d-byte swizzle span, so panels of %lld columns",
		             ref->sym->name, cols, span, w);
	else if (b)
		diag_related(d, b->span, "'%s' declared here: %s", ref->sym->name,
		             !span ? "no swizzle, so no panels" : "rows no wider than the swizzle span, so one panel");
	if (w > 0 && cols * esz > span && load)
		diag_set(&d->hint, "write `tma %s[:, p * %lld +: %lld] <- ...` (panel p of %lld), or load the whole buffer",
		         ref->sym->name, w, w, cols / w);
	else if (w > 0 && cols * esz > span)
		diag_set(&d->hint, "write `tma G[...] <- %s[:, p * %lld +: %lld]` (panel p of %lld), or store the whole buffer",
		         ref->sym->name, w, w, cols / w);
	else if (load)
		diag_set(&d->hint, "load the whole buffer (`tma %s <- ...`); a panel needs `swizzle` and rows wider than its span",
		         ref->sym->name);
	else
		diag_set(&d->hint, "store the whole buffer (`tma G[...] <- %s`); a panel needs `swizzle` and rows wider than its span",
		         ref->sym->name);
	return false;
}

/* Compare a copy's two shapes after dropping extents of 1. */
static bool copy_shapes(Sema *s, Stmt *st, const char *what, Expr *dst, Expr *src)
{
	Type a = sema_drop1(dst->type), b = sema_drop1(src->type);
	bool same = a.rank == b.rank;
	for (int i = 0; same && i < a.rank; i++) {
		if (a.cdims[i] != b.cdims[i])
			same = false;
		else if (a.cdims[i] == -1 && !sema_expr_same(a.dims[i], b.dims[i]))
			same = false;
	}
	if (same)
		return true;
	Diag *d;
	if (st->kind == S_TMA_STORE)
		d = sema_err(s, "CK-SEM-024", st->span, "%s copies smem buffer '%s' of shape %s into a %s tile of '%s'",
		             what, src->sym ? src->sym->name : "?", sema_shape_str(s, &src->type), sema_shape_str(s, &dst->type),
		             dst->sym ? dst->sym->name : "?");
	else
		d = sema_err(s, "CK-SEM-024", st->span, "%s copies a %s tile into %s of shape %s",
		             what, sema_shape_str(s, &src->type), dst->sym ? dst->sym->name : "the destination",
		             sema_shape_str(s, &dst->type));
	sema_loc_sym(d, dst->sym && dst->sym->kind == SYM_SMEM ? dst->sym : src->sym);
	Sym *smem = dst->sym && dst->sym->kind == SYM_SMEM ? dst->sym : src->sym;
	if (smem && smem->decl)
		diag_related(d, smem->decl->span, "'%s' declared here", smem->name);
	diag_set(&d->hint, "make the box lengths (after dropping extents of 1) equal the buffer shape");
	Sym *gl = smem == src->sym ? dst->sym : src->sym;
	diag_set(&d->condition, "box(%s) == shape(%s)", gl ? gl->name : "?", smem ? smem->name : "?");
	return false;
}

static bool copy_dtypes(Sema *s, Stmt *st, const char *what, Expr *dst, Expr *src)
{
	if (dst->type.dt == src->type.dt)
		return true;
	Diag *d = sema_err(s, "CK-SEM-025", st->span, "%s moves %s data into %s '%s' without conversion",
	                   what, dtype_name(src->type.dt), dtype_name(dst->type.dt), dst->sym ? dst->sym->name : "?");
	sema_loc_sym(d, dst->sym);
	if (dst->sym && dst->sym->decl)
		diag_related(d, dst->sym->decl->span, "'%s' declared here", dst->sym->name);
	diag_set(&d->hint, "copies never convert: declare '%s' as %s, then convert with a cast in an assignment",
	         dst->sym ? dst->sym->name : "the destination", dtype_name(src->type.dt));
	return false;
}

static Sym *frag_target(Sema *s, Expr *e, const char *what, bool write)
{
	if (e->kind != E_IDENT) {
		Diag *d = sema_err(s, "CK-SEM-040", e->span, "%s must be a fragment name", what);
		diag_set(&d->hint, "declare `frag x: f32[M, N] in ROLE` and assign to x");
		return NULL;
	}
	Sym *y = sema_find(s, e->name);
	if (!y) {
		sema_unknown(s, e->name, e->span, "fragment", 1u << SYM_FRAG);
		return NULL;
	}
	e->sym = y;
	if (y->kind != SYM_FRAG) {
		Diag *d = sema_err(s, "CK-SEM-040", e->span, "%s must be a fragment, but '%s' is a %s",
		                   what, e->name, sema_kind_name(y->kind));
		diag_related(d, y->span, "'%s' declared here", e->name);
		sema_loc_sym(d, y);
		if (y->kind == SYM_SMEM || y->kind == SYM_PARAM)
			diag_set(&d->hint, "write memory with `store %s[...] <- value`", e->name);
		else
			diag_set(&d->hint, "only fragments can be assigned; lets and loop variables are immutable");
		return NULL;
	}
	sema_use_sym(s, y, e->span, write);
	e->type = sema_decl_type(y->decl);
	return y;
}

static Expr *mm_operand(Expr *e, bool *trans)
{
	*trans = false;
	if (e && e->kind == E_TRANSPOSE) {
		*trans = true;
		e = e->lhs;
	}
	return e;
}

/* A thread tile (`frag T: DT[R, C] in ROLE lanes L`, LANGUAGE.md 4.11): rank 2,
 * L a power of two dividing C, never split. */
static void check_tile(Sema *s, Decl *d)
{
	const char *why = NULL;
	char buf[160];
	if (d->rank != 2)
		why = "a thread tile (`lanes`) has rank 2: rows over warps, each row over L lanes";
	else if (d->split != SPLIT_NONE)
		why = "a thread tile is spread over every thread of its role already; it cannot also be `split`";
	else if (d->lanes & (d->lanes - 1))
		why = "`lanes` must be a power of two (1, 2, 4, 8, 16 or 32) so that the lanes of a row form an aligned group of a warp";
	else if (d->shape[1] && d->shape[1]->is_const && d->shape[1]->cval % d->lanes) {
		snprintf(buf, sizeof buf, "`lanes %d` does not divide the %lld columns of '%s'; every lane holds the same number of columns",
		         d->lanes, d->shape[1]->cval, d->name);
		why = buf;
	}
	if (!why)
		return;
	Diag *dg = sema_err(s, "CK-SEM-045", d->lanes_span, "fragment '%s': %s", d->name, why);
	diag_set(&dg->resource, "%s", d->name);
	diag_set(&dg->hint, "write e.g. `frag S: f32[32, 128] in ROLE lanes 32` (one row per warp at a time, 4 columns per lane)");
}

/* A thread tile as an MMA accumulator or operand: its layout is not the MMA's. */
static bool tile_operand(Sema *s, Sym *y, Span sp, const char *op)
{
	if (!y || y->kind != SYM_FRAG || !y->decl || !y->decl->lanes)
		return false;
	Diag *d = sema_err(s, "CK-SEM-045", sp, "%s cannot use thread tile '%s' (declared with `lanes`): tensor-core operands and accumulators have the MMA's register layout",
	                   op, y->name);
	sema_loc_sym(d, y);
	diag_related(d, y->decl->span, "'%s' declared here", y->name);
	diag_set(&d->hint, "declare the fragment without `lanes`, or move the tile through shared memory");
	return true;
}

static void check_mma(Sema *s, Stmt *st)
{
	const char *op = st->kind == S_WGMMA ? "wgmma" : "mma";
	Sym *acc = st->dst ? frag_target(s, st->dst, "the accumulator", true) : NULL;
	Expr *src = st->src;
	if (!src || src->kind != E_BINARY || src->op != '@') {
		sema_err(s, "CK-SEM-027", src ? src->span : st->span, "%s needs `a @ b` on the right", op);
		return;
	}
	if (st->negate && st->kind == S_MMA) {   /* wgmma negates A in the instruction; mma.sync cannot */
		Diag *d = sema_err(s, "CK-SEM-027", st->span, "`mma acc -= a @ b` is not available: mma.sync only adds its product");
		diag_set(&d->hint, "negate a fragment operand first (`x = x * -1.0`) and write `+=`, or use wgmma");
		return;
	}
	bool ta, tb;
	Expr *a = mm_operand(src->lhs, &ta), *b = mm_operand(src->rhs, &tb);
	Expr *ops[2] = { a, b };
	bool tr[2] = { ta, tb };
	Type T[2];
	bool ok = acc != NULL && !tile_operand(s, acc, st->dst->span, op);
	for (int i = 0; i < 2; i++) {
		Expr *x = ops[i];
		const char *nm = i ? "b" : "a";
		if (!x || x->kind != E_IDENT) {
			sema_err(s, "CK-SEM-027", x ? x->span : src->span, "%s operand %s must be the name of an smem buffer%s",
			         op, nm, i == 0 || st->kind == S_MMA ? " or fragment" : "");
			ok = false;
			continue;
		}
		Sym *y = sema_find(s, x->name);
		if (!y) {
			sema_unknown(s, x->name, x->span, "operand", (1u << SYM_SMEM) | (1u << SYM_FRAG));
			ok = false;
			continue;
		}
		x->sym = y;
		if (tile_operand(s, y, x->span, op)) {
			ok = false;
			continue;
		}
		bool frag_ok = i == 0 || st->kind == S_MMA;
		if (y->kind == SYM_SMEM || (y->kind == SYM_FRAG && frag_ok)) {
			sema_use_sym(s, y, x->span, false);
			if (y->kind == SYM_FRAG && tr[i]) {
				Diag *d = sema_err(s, "CK-SEM-027", x->span, "%s operand %s: fragment '%s' cannot be transposed",
				                   op, nm, y->name);
				sema_loc_sym(d, y);
				diag_set(&d->hint, "register operands are used as laid out; transpose through an smem buffer");
				ok = false;
			}
			x->type = sema_decl_type(y->decl);
			if (x->type.rank != 2) {
				sema_err(s, "CK-SEM-029", x->span, "%s operand %s '%s' must have rank 2, but it has shape %s",
				         op, nm, y->name, sema_shape_str(s, &x->type));
				ok = false;
			}
			T[i] = x->type;
			if (tr[i] && x->type.rank == 2) {
				T[i].cdims[0] = x->type.cdims[1];
				T[i].cdims[1] = x->type.cdims[0];
			}
			src->lhs->type = i == 0 ? T[0] : src->lhs->type;
			if (i == 1)
				src->rhs->type = T[1];
		} else {
			Diag *d = sema_err(s, "CK-SEM-027", x->span, "%s operand %s must be %s, but '%s' is a %s", op, nm,
			                   frag_ok ? "an smem buffer or a fragment" : "an smem buffer", x->name, sema_kind_name(y->kind));
			diag_related(d, y->span, "'%s' declared here", x->name);
			sema_loc_sym(d, y);
			if (y->kind == SYM_FRAG)
				diag_set(&d->hint, "wgmma reads B from shared memory; store the fragment to an smem buffer first");
			ok = false;
		}
	}
	if (!ok)
		return;
	Type C = st->dst->type;
	if (C.rank != 2) {
		sema_err(s, "CK-SEM-029", st->dst->span, "%s accumulator '%s' must have rank 2, but it has shape %s",
		         op, acc->name, sema_shape_str(s, &C));
		return;
	}
	if (C.dt != DT_F32 && C.dt != DT_F16) {
		Diag *d = sema_err(s, "CK-SEM-028", st->dst->span, "%s accumulator '%s' is %s; it must be f32 or f16",
		                   op, acc->name, dtype_name(C.dt));
		sema_loc_sym(d, acc);
		diag_related(d, acc->decl->span, "'%s' declared here", acc->name);
		diag_set(&d->hint, "declare the accumulator as f32 and cast when storing: bf16(%s)", acc->name);
	}
	DType da = a->type.dt, db = b->type.dt;
	bool okdt = (da == DT_BF16 || da == DT_F16 || da == DT_F8E4M3);
	if (!okdt || da != db) {
		Diag *d = sema_err(s, "CK-SEM-028", src->span, "%s operands are %s and %s; they must be the same type, one of bf16, f16, f8e4m3",
		                   op, dtype_name(da), dtype_name(db));
		diag_set(&d->hint, "declare both operand buffers with the same 16- or 8-bit float type");
	}
	long long M = C.cdims[0], N = C.cdims[1];
	long long Ma = T[0].cdims[0], Ka = T[0].cdims[1], Kb = T[1].cdims[0], Nb = T[1].cdims[1];
	if (M != Ma || N != Nb || Ka != Kb) {
		Diag *d = sema_err(s, "CK-SEM-029", src->span,
		                   "%s shapes disagree: %s is [%lld, %lld] (M x N) but %s%s gives [%lld, %lld] (M x K) and %s%s gives [%lld, %lld] (K x N)",
		                   op, acc->name, M, N, a->name, ta ? "^T" : "", Ma, Ka, b->name, tb ? "^T" : "", Kb, Nb);
		diag_set(&d->condition, "acc [M,N] = a [M,K] @ b [K,N]");
		diag_set(&d->hint, "%s", Ka != Kb && Ka == Nb ? "b is probably stored [N, K]: write b^T"
		                         : "check the tile shapes of the operands and the accumulator");
		if (b->sym && b->sym->decl)
			diag_related(d, b->sym->decl->span, "'%s' declared here", b->name);
		sema_loc_sym(d, acc);
	}
}

static void check_block(Sema *s, Stmt **body, int n);
static void check_stmt(Sema *s, Stmt *st, bool top);

static void enter_loop(Sema *s, Stmt *st)
{
	vec_push(&s->loops, st);
}

static void check_for(Sema *s, Stmt *st)
{
	sema_need_int(s, st->lo, "the loop start");
	sema_need_int(s, st->hi, "the loop end");
	if (st->step && sema_need_int(s, st->step, "the loop step") && st->step->is_const && st->step->cval <= 0) {
		Diag *d = sema_err(s, "CK-SEM-039", st->step->span, "loop step %lld is not positive", st->step->cval);
		diag_set(&d->hint, "loops count upward over lo .. hi; use a positive step");
	}
	if (st->pipe) {
		st->pipe_sym = resolve_kind(s, st->pipe, st->pipe_span, SYM_PIPE);
		if (st->pipe_sym)
			for (int i = 0; i < s->loops.len; i++) {
				Stmt *o = s->loops.data[i];
				if (o->pipe_sym == st->pipe_sym) {
					Diag *d = sema_err(s, "CK-SEM-018", st->pipe_span,
					                   "loop over '%s' is pipelined over '%s', which an enclosing loop already pipelines",
					                   st->name, st->pipe);
					diag_related(d, o->pipe_span, "the enclosing loop over '%s' is pipelined over '%s' here",
					             o->name, st->pipe);
					diag_set(&d->pipeline, "%s", st->pipe);
					diag_set(&d->hint, "pipeline only one loop per pipeline (usually the innermost), or declare a second pipeline");
					break;
				}
			}
	}
	int mark = s->scope.len;
	st->sym = declare(s, SYM_LOOPVAR, st->name, st->name_span, true);
	st->sym->stmt = st;
	enter_loop(s, st);
	check_block(s, st->body, st->nbody);
	s->loops.len--;
	scope_pop(s, mark);
}

static Stmt *cur_ploop(Sema *s)
{
	for (int i = s->loops.len - 1; i >= 0; i--) {
		Stmt *l = s->loops.data[i];
		if (l->pipe_sym)
			return l;
	}
	return NULL;
}

static void check_stmt(Sema *s, Stmt *st, bool top)
{
	st->id = s->nstmt++;
	st->role = s->role;
	st->loop = s->loops.len ? s->loops.data[s->loops.len - 1] : NULL;
	st->ploop = cur_ploop(s);
	if (top && st->kind != S_IN) {
		Diag *d = sema_err(s, "CK-SEM-014", st->span, "only `in ROLE { }` blocks may appear at the top of the kernel body");
		diag_set(&d->hint, "put this statement inside the `in` block of the role that executes it");
	}
	switch (st->kind) {
	case S_IN:
		if (!top) {
			Diag *d = sema_err(s, "CK-SEM-016", st->span, "`in %s` is nested inside another role's program",
			                   st->name ? st->name : "?");
			diag_set(&d->hint, "`in` blocks appear only at the top level of the kernel body");
		}
		break;   /* handled by check_body */
	case S_FOR:
		check_for(s, st);
		break;
	case S_IF: {
		sema_need_bool(s, st->cond, "an `if` condition", true);
		int mark = s->scope.len;
		check_block(s, st->body, st->nbody);
		scope_pop(s, mark);
		check_block(s, st->els, st->nels);
		scope_pop(s, mark);
		break;
	}
	case S_WAIT:
		check_barrier_use(s, st, "waits on", false, "CK-SEM-020");
		break;
	case S_ARRIVE:
		check_barrier_use(s, st, "arrives on", true, "CK-SEM-021");
		break;
	case S_TMA_LOAD: case S_TMA_STORE: case S_CP_ASYNC: {
		bool load = st->kind != S_TMA_STORE;
		const char *what = st->kind == S_CP_ASYNC ? "cp_async" : load ? "tma load" : "tma store";
		Expr *smem = load ? st->dst : st->src, *glob = load ? st->src : st->dst;
		bool ok = true;
		if (!smem || !glob)
			break;
		if (st->kind != S_CP_ASYNC && smem->kind == E_INDEX && glob->kind == E_INDEX) {
			/* both sides indexed: `signal` made it a load, its absence a store (parse_tma); when the
			 * buffer is on the other side than that form needs, say which form was meant */
			Sym *gs = smem->base && smem->base->name ? sema_find(s, smem->base->name) : NULL;
			Sym *bs = glob->base && glob->base->name ? sema_find(s, glob->base->name) : NULL;
			if (gs && gs->kind == SYM_PARAM && bs && bs->kind == SYM_SMEM) {
				Diag *d;
				if (load) {
					d = sema_err(s, "CK-SEM-027", st->name_span.line ? st->name_span : glob->span,
					             "tma store from '%s' takes no `signal`: a store completes through its bulk group, which "
					             "the compiler waits on", bs->name);
					diag_set(&d->hint, "drop `signal %s`: `tma %s[...] <- %s[...]`", st->name ? st->name : "B", gs->name, bs->name);
				} else {
					d = sema_err(s, "CK-SEM-027", st->span, "tma load into a panel of '%s' needs `signal B`: the copy "
					             "completes on a barrier", bs->name);
					diag_set(&d->hint, "write `tma %s[...] <- %s[...] signal B`, B a barrier whose producers include this role",
					         bs->name, gs->name);
				}
				sema_loc_sym(d, bs);
				if (bs->decl)
					diag_related(d, bs->decl->span, "'%s' declared here", bs->name);
				break;
			}
		}
		/* (the box rules are the global side's: a panel of a buffer may say `:` for its rows) */
		if (!sema_check_ref(s, smem, load, st->kind != S_CP_ASYNC && smem->kind != E_INDEX))
			ok = false;
		else if (st->kind != S_CP_ASYNC && smem->sym->kind == SYM_SMEM && smem->kind == E_INDEX) {
			if (!tma_panel_ok(s, smem, load))   /* a column panel of a swizzled buffer, or an error */
				ok = false;
		} else if (smem->sym->kind != SYM_SMEM || (st->kind != S_CP_ASYNC && smem->kind != E_IDENT)) {
			Diag *d = sema_err(s, "CK-SEM-027", smem->span, "%s needs a whole smem buffer on the %s side, but '%s' is %s",
			                   what, load ? "destination" : "source", smem->sym->name,
			                   smem->sym->kind == SYM_SMEM ? "indexed" : "a global param");
			sema_loc_sym(d, smem->sym);
			diag_set(&d->hint, load ? "write `tma buf <- Global[i +: m, j +: n] signal bar`"
			                        : "write `tma Global[i +: m, j +: n] <- buf`");
			ok = false;
		}
		if (!sema_check_ref(s, glob, !load, st->kind != S_CP_ASYNC))
			ok = false;
		else if (glob->sym->kind != SYM_PARAM || glob->kind != E_INDEX) {
			Diag *d = sema_err(s, "CK-SEM-027", glob->span, "%s needs an indexed global param on the %s side",
			                   what, load ? "source" : "destination");
			sema_loc_sym(d, glob->sym);
			diag_set(&d->hint, "name the global tile: Param[i +: m, j +: n]");
			ok = false;
		}
		if (ok && (load ? st->clip_dst : st->clip_src)) {
			/* `clip` relaxes the bounds of the global box (LANGUAGE.md §5.4); a buffer has none */
			Diag *d = sema_err(s, "CK-SEM-027", st->clip_span, "`clip` follows the global tensor of a TMA copy, but "
			                   "here it follows the shared buffer '%s'", smem->sym->name);
			diag_set(&d->hint, load ? "write `tma %s <- %s[...] clip signal B`" : "write `tma %s[...] clip <- %s`",
			         load ? smem->sym->name : glob->sym->name, load ? glob->sym->name : smem->sym->name);
			diag_related(d, glob->span, "the box of '%s', which `clip` lets run past the tensor's end",
			             glob->sym->name);
			ok = false;
		}
		if (ok) {
			if (load)
				copy_shapes(s, st, what, smem, glob);
			else
				copy_shapes(s, st, what, glob, smem);
			if (load)
				copy_dtypes(s, st, what, smem, glob);
			else
				copy_dtypes(s, st, what, glob, smem);
		}
		if (st->kind == S_TMA_LOAD && st->name)
			check_barrier_use(s, st, "signals", true, "CK-SEM-022");
		break;
	}
	case S_WGMMA: case S_MMA:
		check_mma(s, st);
		break;
	case S_WGMMA_WAIT: case S_FENCE:
		break;
	case S_SYNC:
		if (st->name)
			st->sym = resolve_kind(s, st->name, st->name_span, SYM_ROLE);
		break;
	case S_LOAD: {
		Sym *f = st->dst ? frag_target(s, st->dst, "the destination of load", true) : NULL;
		if (!st->src || !sema_check_ref(s, st->src, false, false) || !f)
			break;
		if (st->src->kind != E_INDEX) {
			Diag *d = sema_err(s, "CK-SEM-027", st->src->span, "load needs an indexed tile, e.g. %s[i +: m, j +: n]",
			                   st->src->sym->name);
			sema_loc_sym(d, st->src->sym);
			break;
		}
		Type a = sema_drop1(st->dst->type), b = sema_drop1(st->src->type);
		Type r;
		if (!sema_unify_shape(&a, &b, &r) || a.rank != b.rank) {
			sema_shape_err(s, st->span, "load", &st->dst->type, &st->src->type);
			break;
		}
		copy_dtypes(s, st, "load", st->dst, st->src);
		break;
	}
	case S_STORE: case S_ATOMIC: {
		const char *what = st->kind == S_STORE ? "store" : "atomic_add";
		s->scatter_ok = true;   /* G[b, idx, ..]: a scatter store or atomic */
		bool ok = st->dst && sema_check_ref(s, st->dst, true, false);
		s->scatter_ok = false;
		if (ok && st->dst->kind != E_INDEX) {
			sema_err(s, "CK-SEM-027", st->dst->span, "%s needs an indexed destination, e.g. %s[i +: m, j +: n]",
			         what, st->dst->sym->name);
			ok = false;
		}
		bool okv = st->src && sema_check_expr(s, st->src);
		if (!ok || !okv)
			break;
		Type t = sema_drop1(st->dst->type);
		if (st->transposed) {   /* store G[..] <- v^T: v [N, M] into an [M, N] tile of a global tensor */
			const Decl *g = st->dst->sym ? st->dst->sym->decl : NULL;
			if (!g || g->kind != D_PARAM || g->space != SP_GLOBAL || t.rank != 2) {
				Diag *d = sema_err(s, "CK-SEM-027", st->src->span,
				                   "a transposed value (`v^T`) is stored only into a rank-2 tile of a global tensor, but the destination is %s",
				                   g && g->space == SP_SMEM ? "a shared buffer" : sema_shape_str(s, &t));
				diag_set(&d->hint, "store the value as it is (`store %s[...] <- v`), or into a tile of a global tensor whose two dimensions are the value's swapped",
				         st->dst->sym ? st->dst->sym->name : "G");
				break;
			}
			if (st->src->type.rank != 2 && st->src->type.rank != RANK_CTX) {
				Diag *d = sema_err(s, "CK-SEM-027", st->src->span, "a transposed store needs a rank-2 value, but this one is %s",
				                   sema_shape_str(s, &st->src->type));
				diag_set(&d->hint, "drop the `^T`: a scalar or vector is stored the same either way");
				break;
			}
			Expr *d0 = t.dims[0];
			long long c0 = t.cdims[0];
			t.dims[0] = t.dims[1], t.cdims[0] = t.cdims[1];
			t.dims[1] = d0, t.cdims[1] = c0;
			what = "store <- v^T, the tile's dimensions swapped and the value";
		}
		sema_value_into(s, st->src, &t, st->span, what, true);
		break;
	}
	case S_LET: {
		bool ok = sema_check_expr(s, st->src);
		if (ok && st->src->type.rank == 0) {
			char what[96];
			snprintf(what, sizeof what, "`let %s`", st->name ? st->name : "?");
			if (sema_uniform_err(s, st->src, what)) {
				st->src->type.dt = DT_NONE;
				ok = false;
			}
		}
		if (ok && st->src->type.rank != 0) {
			Diag *d = sema_err(s, "CK-SEM-037", st->src->span, "`let %s` binds a scalar, but the value has shape %s",
			                   st->name, sema_shape_str(s, &st->src->type));
			diag_set(&d->hint, "hold tiles in a declared fragment: frag %s: f32[...] in ROLE", st->name);
			st->src->type.dt = DT_NONE;
		}
		if (ok && sema_lit_kind(st->src) == 2)
			sema_settle_dt(st->src, DT_F32);
		else if (!ok && st->src)
			st->src->type.dt = DT_NONE;
		st->sym = declare(s, SYM_LET, st->name, st->name_span, true);
		st->sym->stmt = st;
		break;
	}
	case S_ASSIGN: {
		Sym *lhs[8] = {0};
		bool ok = true;
		for (int i = 0; i < st->nlhs; i++) {
			Sym *y = frag_target(s, st->lhs[i], "the left side of '='", true);
			if (i < 8)
				lhs[i] = y;
			ok &= y != NULL;
		}
		if (st->nlhs > 0)
			st->sym = st->lhs[0]->sym;
		Expr *v = st->src;
		if (!v)
			break;
		const Builtin *b = v->kind == E_CALL ? builtin_find(v->name) : NULL;
		int nres = b ? b->nresults : 1;
		s->multi_ok = v;
		bool okv = sema_check_expr(s, v);
		s->multi_ok = NULL;
		if (nres != st->nlhs) {
			Diag *d = sema_err(s, "CK-SEM-032", st->span, "%d name%s on the left of '=' but the value has %d result%s",
			                   st->nlhs, st->nlhs == 1 ? "" : "s", nres, nres == 1 ? "" : "s");
			if (nres == 2)
				diag_set(&d->hint, "write `v, i = %s(...)`: the values and their i32 column indices", b->name);
			else
				diag_set(&d->hint, "assign one value per statement");
			break;
		}
		if (!ok || !okv)
			break;
		if (nres == 1) {
			sema_value_into(s, v, &st->lhs[0]->type, st->span, "assignment", false);
			break;
		}
		/* two results: (value, i32 index) */
		Type vt = v->type;
		Type it = vt;
		it.dt = DT_I32;
		Type want[2] = { vt, it };
		for (int i = 0; i < 2; i++) {
			Type lt = st->lhs[i]->type;
			Type r;
			if (!sema_unify_shape(&lt, &want[i], &r) || lt.rank != want[i].rank) {
				sema_shape_err(s, st->lhs[i]->span, i ? "index result" : "value result", &lt, &want[i]);
				continue;
			}
			if (lt.dt != want[i].dt) {
				Diag *d = sema_err(s, "CK-SEM-031", st->lhs[i]->span,
				                   "the %s result of %s() is %s but fragment '%s' is %s",
				                   i ? "index" : "value", b->name, dtype_name(want[i].dt), lhs[i]->name,
				                   dtype_name(lt.dt));
				diag_set(&d->hint, "declare '%s' as %s", lhs[i]->name, dtype_name(want[i].dt));
			}
		}
		break;
	}
	}
}

static void check_block(Sema *s, Stmt **body, int n)
{
	int mark = s->scope.len;
	for (int i = 0; i < n; i++)
		if (body[i])
			check_stmt(s, body[i], false);
	scope_pop(s, mark);
}

static void check_body(Sema *s)
{
	Kernel *k = s->k;
	Stmt **first = arena_alloc(&s->c->arena, sizeof(Stmt *) * (size_t)(k->nroles + 1));
	for (int i = 0; i < k->nbody; i++) {
		Stmt *st = k->body[i];
		if (!st)
			continue;
		s->role = NULL;
		if (st->kind != S_IN) {
			check_stmt(s, st, true);
			continue;
		}
		check_stmt(s, st, true);
		Sym *r = st->name ? resolve_kind(s, st->name, st->name_span, SYM_ROLE) : NULL;
		st->sym = r;
		if (r) {
			int id = r->decl->id;
			if (first[id]) {
				Diag *d = sema_err(s, "CK-SEM-015", st->span, "role '%s' has a second `in` block", r->name);
				diag_related(d, first[id]->span, "its first `in` block is here");
				diag_set(&d->role, "%s", r->name);
				diag_set(&d->hint, "merge the two blocks: a role has one program");
			} else {
				first[id] = st;
			}
		}
		s->role = r;
		st->role = r;
		check_block(s, st->body, st->nbody);
		s->role = NULL;
	}
}

static void sema_kernel(Sema *s, Kernel *k)
{
	int nerr0 = s->c->diags->nerr;
	s->k = k;
	k->grid = k->cluster = NULL;
	check_family(s, k->family);
	check_decls(s);
	check_body(s);
	k->nsyms = s->ksyms.len;
	k->syms = (Sym **)vec_freeze(&s->ksyms, &s->c->arena);
	k->ndims = s->dims.len;
	k->dims = (const char **)vec_freeze(&s->dims, &s->c->arena);
	k->nstmts = s->nstmt;
	k->sema_ok = s->c->diags->nerr == nerr0;
}

/* Check every kernel of p; true when no error was found. */
bool sema_program(Ctx *c, Program *p)
{
	int nerr0 = c->diags->nerr;
	for (int i = 0; i < p->nkernels; i++) {
		Sema s;
		memset(&s, 0, sizeof s);
		s.c = c;
		s.cx = CX_STMT;
		s.cx_rule = "CK-SEM-011";
		s.cx_what = "this expression";
		if (p->kernels[i])
			sema_kernel(&s, p->kernels[i]);
		vec_free(&s.ksyms);
		vec_free(&s.scope);
		vec_free(&s.gone);
		vec_free(&s.loops);
		vec_free(&s.dims);
	}
	return c->diags->nerr == nerr0;
}

/* Kernel-level symbol named `name`, or NULL. */
Sym *sema_lookup(Kernel *k, const char *name)
{
	if (!k || !name)
		return NULL;
	for (int i = 0; i < k->nsyms; i++)
		if (strcmp(k->syms[i]->name, name) == 0)
			return k->syms[i];
	return NULL;
}
