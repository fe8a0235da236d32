/*
 * params.c — derive step: how the kernel uses each parameter.
 *
 * The runner must know, before it launches, which global tensors a kernel
 * writes and how: a plain store or TMA store (a dense output, poisoned so
 * that an unwritten element is caught), atomic_add (an accumulator, zeroed
 * first), or a store whose element index is an index vector fragment (a
 * scatter, which need not reach every element). These facts are properties
 * of the schedule, so they are derived here once and recorded in the Plan
 * (PlanParam) instead of being rediscovered by every host program.
 */
#include "lower.h"

#include <string.h>

/* Does the destination of s name parameter d? */
static bool dst_is(const Stmt *s, const Decl *d)
{
	if ((s->kind != S_STORE && s->kind != S_TMA_STORE && s->kind != S_ATOMIC) || !s->dst)
		return false;
	const char *b = lower_base_name(s->dst);
	return b && !strcmp(b, d->name);
}

/* A store whose destination names its element by an index vector (a
 * fragment as a point slice start) is a scatter. */
static bool is_scatter(const Kernel *k, const Stmt *s)
{
	for (int q = 0; s->dst->kind == E_INDEX && q < s->dst->nslices; q++) {
		const Expr *st = s->dst->slices[q].start;
		for (int f = 0; s->dst->slices[q].kind == SL_POINT && st && st->kind == E_IDENT && f < k->ndecls; f++)
			if (k->decls[f]->kind == D_FRAG && !strcmp(k->decls[f]->name, st->name))
				return true;
	}
	return false;
}

static void walk(const Kernel *k, Stmt **body, int n, const Decl *d, bool *dense, bool *atomic, bool *scatter)
{
	for (int i = 0; i < n; i++) {
		const Stmt *s = body[i];
		if (dst_is(s, d)) {
			if (s->kind == S_ATOMIC)
				*atomic = true;
			else if (is_scatter(k, s))
				*scatter = true;
			else
				*dense = true;
		}
		walk(k, s->body, s->nbody, d, dense, atomic, scatter);
		walk(k, s->els, s->nels, d, dense, atomic, scatter);
	}
}

void derive_param_uses(Ctx *c, Plan *p)
{
	const Kernel *k = p->kernel;
	p->nparams = k->nparams;
	p->params = arena_alloc(&c->arena, sizeof(PlanParam) * (size_t)(k->nparams > 0 ? k->nparams : 1));
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		PlanParam *pp = &p->params[i];
		pp->name = d->name;
		pp->decl = d;
		pp->global = d->space == SP_GLOBAL;
		if (!pp->global)
			continue;
		bool dense = false, atomic = false, scatter = false;
		walk(k, k->body, k->nbody, d, &dense, &atomic, &scatter);
		pp->output = dense || atomic || scatter;
		pp->accum = atomic;
		pp->sparse = pp->output && !dense;
	}
}
