/*
 * verify.h — the verifier entry point.
 *
 * verify_kernel runs every rule family on a kernel that passed sema and
 * reports through the context's DiagList. The rules themselves (IDs,
 * authorities, versions, rationales) are registered in src/base/registry.h.
 */
#ifndef CAKE_VERIFY_H
#define CAKE_VERIFY_H

#include "../front/front.h"
#include "../base/registry.h"

/* Run every verifier rule on a kernel that passed sema; findings go to c->diags. */
void verify_kernel(Ctx *c, Kernel *k);

#endif
