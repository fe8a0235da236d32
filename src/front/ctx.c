/*
 * ctx.c — the per-compilation context.
 *
 * A Ctx bundles what every pass needs: the arena that owns the syntax tree
 * and all strings made while compiling, the source set (owned by the caller,
 * because diagnostics outlive the compilation when they are printed), the
 * diagnostic list (also caller-owned) and the parser's nesting limit. There
 * is no global state: two Ctx values can compile two files side by side.
 */
#include "front.h"

#include <string.h>

void ctx_init(Ctx *c, SourceSet *srcs, DiagList *diags)
{
	memset(c, 0, sizeof *c);
	arena_init(&c->arena);
	c->srcs = srcs;
	c->diags = diags;
	c->max_depth = 256;
}

void ctx_free(Ctx *c)
{
	arena_free(&c->arena);
}
