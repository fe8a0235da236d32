/*
 * lib_launch.h — the launch check the library's domain tests share (header-only; include it
 * after cmocka.h, lib/lib.h and the evaluator's header): a kernel a route launches accepts
 * the dims it gets by its own `domain` (evaluated on the parsed .cake file), its grid extents
 * evaluate within the hardware's limits (a persistent grid's tile count within 32 bits), every
 * TMA extent evaluates to 1 .. 2^32 with 16-byte strides, and every dim fits the i32 it
 * travels as.
 */
#ifndef CAKE_LIB_LAUNCH_H
#define CAKE_LIB_LAUNCH_H

static void check_launch(const LibSet *ls, int kid, const long long *fd, const char *what)
{
	const Kernel *k = ls->kern[kid];
	const Plan *p = ls->plan[kid];
	assert_non_null(p);
	long long dv[16] = {0};
	for (int d = 0; d < k->ndims; d++)
		dv[d] = fd[lib_dim_index(ls->fam, k->dims[d])];
	const char *f = NULL;
	if (!eval_domain(k, dv, &f))
		fail_msg("%s: kernel %s launched outside its domain ('%s' is false)", what, k->name, f ? f : "?");
	long long tiles = 1;
	for (int a = 0; a < 3; a++) {
		long long e = 1;
		if (p->grid[a] && !eval_expr(p->grid[a], k, dv, &e))
			fail_msg("%s: kernel %s: grid extent %d does not evaluate", what, k->name, a);
		if (e < 1 || e > (a && !p->persistent ? 65535 : 0x7fffffffll))
			fail_msg("%s: kernel %s: grid extent %d is %lld", what, k->name, a, e);
		tiles *= e;
	}
	if (p->persistent && tiles > 0x7fffffffll)
		fail_msg("%s: kernel %s: %lld tiles", what, k->name, tiles);
	for (int t = 0; t < p->ntmaps; t++)
		for (int d = 0; d < p->tmaps[t].rank; d++) {
			long long s = 0, e = 0;
			if (!eval_expr(p->tmaps[t].gdims[d], k, dv, &e) || e < 1 || e > (1ll << 32))
				fail_msg("%s: kernel %s: TMA extent %d of %s is %lld", what, k->name, d, p->tmaps[t].param, e);
			if (d && (!eval_expr(p->tmaps[t].gstrides[d], k, dv, &s) || s % 16))
				fail_msg("%s: kernel %s: TMA stride %d of %s is %lld", what, k->name, d, p->tmaps[t].param, s);
		}
	for (int i = 0; i < k->ndims; i++)   /* dims travel as i32 arguments */
		if (dv[i] > 0x7fffffffll)
			fail_msg("%s: kernel %s: dim %s = %lld does not fit an i32", what, k->name, k->dims[i], dv[i]);
}

#endif
