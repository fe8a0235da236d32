/*
 * dispatch.c — the family dispatchers inside cake: `cake library --explain`
 * and the domain tests run the very text the generated libraries run
 * (src/lib/rt/gemm_dispatch.inc, kmeans_dispatch.inc), included here after
 * the two callbacks it expects:
 *   lib_kernel_domain  a kernel's own `domain`, evaluated on its parsed
 *                      .cake file (eval_domain) at the family dims bound by
 *                      name; the generated library evaluates the same
 *                      constraints as C it generated from the same Exprs, and
 *                      the CLI test compares the two over a grid of shapes;
 *   lib_kernel_param_use  how a kernel reaches a tensor (tensor map, pointer),
 *                      from its Plan (the sets load with CAKE_DERIVE or later);
 *   lib_user_domain    the --domain clauses (cond.c).
 * The context pointer of the dispatchers is the LibSet.
 *
 * Also here: the family descriptors (built from the dispatchers' kernel
 * lists, so the generator emits its tables in the dispatchers' KID order),
 * loading a family's kernels through the pipeline, and shape parsing.
 */
#include "lib.h"
#include "../gpu/launch.h"

#include <stdlib.h>
#include <string.h>

#include "rt/cake_gemm.h"
#include "rt/cake_kmeans.h"

static int lib_kernel_domain(const void *lx, int kid, const long long *fd, const char **failed);
static int lib_kernel_param_use(const void *lx, int kid, const char *param);
static int lib_user_domain(const void *lx, const long long *v, const char **failed);

#include "rt/lib_common.inc"
#include "rt/gemm_dispatch.inc"
#include "rt/kmeans_dispatch.inc"

_Static_assert(GEMM_NFD <= LIB_MAX_FD && GEMM_NROUTES <= LIB_MAX_ROUTES, "LibVerdict holds every GEMM dim and route");

/* ---- family descriptors ---- */

static const char *const gemm_vars[] = {"M", "N", "K"};
#define X(d) #d,
static const char *const gemm_dims[] = {GEMM_DIMS(X)};   /* the fd[] order of the dispatcher */
static const char *const km_dims[] = {KM_DIMS(X)};
#undef X
static const char *const gemm_kernel_names[] = {
#define X(name, file) #name,
	GEMM_KERNELS(X)
#undef X
};
static const char *const gemm_kernel_files[] = {
#define X(name, file) file,
	GEMM_KERNELS(X)
#undef X
};
static const char *const km_vars[] = {"B", "N", "D", "K", "F16"};
static const char *const km_kernel_names[] = {
#define X(name, file) #name,
	KM_KERNELS(X)
#undef X
};
static const char *const km_kernel_files[] = {
#define X(name, file) file,
	KM_KERNELS(X)
#undef X
};

static const LibFamily families[] = {
	{"gemm", "C = A·Bᵀ, bf16, A [M, K], B [N, K], C [M, N] (f32 accumulation)", gemm_vars, 3, gemm_dims, (int)NELEM(gemm_dims),
	 gemm_kernel_names, gemm_kernel_files, GEMM_NKERNELS, "cake_gemm.h", "gemm_dispatch.inc", "gemm_api.inc",
	 "M=..,N=..,K=.."},
	{"kmeans", "batched Euclidean k-means (Lloyd), X [B, N, D] bf16/f16, D 64 or 128", km_vars, 5, km_dims, (int)NELEM(km_dims),
	 km_kernel_names, km_kernel_files, KM_NKERNELS, "cake_kmeans.h", "kmeans_dispatch.inc", "kmeans_api.inc",
	 "B=..,N=..,D=..,K=..[,dtype=bf16|f16][,update=sorted|atomic]"},
};

const LibFamily *lib_family(const char *name)
{
	for (size_t i = 0; name && i < NELEM(families); i++)
		if (!strcmp(families[i].name, name))
			return &families[i];
	return NULL;
}

const char *lib_family_names(void)
{
	return "gemm, kmeans";
}

int lib_dim_index(const LibFamily *fam, const char *dim)
{
	for (int i = 0; i < fam->ndims; i++)
		if (!strcmp(fam->dims[i], dim))
			return i;
	return -1;
}

/* ---- the dispatchers' callbacks ---- */

static int lib_kernel_domain(const void *lx, int kid, const long long *fd, const char **failed)
{
	const LibSet *ls = lx;
	const Kernel *k = ls->kern[kid];
	long long dv[LAUNCH_MAX_DIMS] = {0};
	*failed = NULL;
	for (int d = 0; d < k->ndims && d < LAUNCH_MAX_DIMS; d++) {
		int i = lib_dim_index(ls->fam, k->dims[d]);
		dv[d] = i >= 0 ? fd[i] : 0;
	}
	const char *f = NULL;
	if (eval_domain(k, dv, &f))
		return 1;
	LibScratch *s = ls->scratch;
	char *slot = s->failed[s->next++ % 4];
	snprintf(slot, sizeof s->failed[0], "%s", f ? f : "?");
	free((void *)f);
	*failed = slot;
	return 0;
}

int lib_param_use(const Plan *p, const char *param)
{
	int use = 0;
	if (!p)
		return 0;
	for (int t = 0; t < p->ntmaps; t++)
		if (!strcmp(p->tmaps[t].param, param))
			use |= 1;
	for (int a = 0; a < p->nargs; a++)
		if (p->args[a].kind == ARG_PTR && !strcmp(p->kernel->params[p->args[a].index]->name, param))
			use |= 2;
	return use;
}

static int lib_kernel_param_use(const void *lx, int kid, const char *param)
{
	const LibSet *ls = lx;
	return lib_param_use(ls->plan[kid], param);
}

static int lib_user_domain(const void *lx, const long long *v, const char **failed)
{
	const LibSet *ls = lx;
	*failed = NULL;
	return !ls->user || lib_conds_eval(ls->user, v, failed);
}

/* ---- loading a family's kernels ---- */

int lib_load(LibSet *ls, const LibFamily *fam, const char *dir, CakeStage until, const LibConds *user, StrBuf *err)
{
	return lib_load_with(ls, fam, dir, until, user, NULL, err);
}

int lib_load_with(LibSet *ls, const LibFamily *fam, const char *dir, CakeStage until, const LibConds *user,
                  const LibOverrides *ov, StrBuf *err)
{
	memset(ls, 0, sizeof *ls);
	ls->fam = fam;
	ls->user = user;
	ls->scratch = xcalloc(1, sizeof *ls->scratch);
	if (fam->nkernels > (int)NELEM(ls->kern)) {
		sb_printf(err, "family %s has more than %d kernels", fam->name, (int)NELEM(ls->kern));
		return 1;
	}
	for (int i = 0; i < fam->nkernels; i++) {
		int u = -1;
		const char *otext = ov ? ov->text[i] : NULL;
		for (int j = 0; j < ls->nunits && !otext; j++)
			if (!strcmp(ls->unit_file[j], fam->files[i]))
				u = j;
		if (u < 0) {   /* a new unit: the kernel's file, or a store candidate's text in its place */
			if (ls->nunits == (int)NELEM(ls->units)) {
				sb_printf(err, "family %s uses more than %d kernel sources", fam->name, (int)NELEM(ls->units));
				return 1;
			}
			u = ls->nunits++;
			CakeOptions co = cake_options(until);
			int before = ls->diags.nerr, rc;
			char where[4096];
			if (otext) {
				ls->unit_file[u] = ov->id[i];   /* never matches a file name: no other kernel shares it */
				ls->note[i] = ov->note[i];
				snprintf(where, sizeof where, "store:%s", ov->id[i]);
				rc = cake_compile_text(&ls->units[u], &ls->srcs, &ls->diags, where, otext, strlen(otext), &co);
			} else {
				ls->unit_file[u] = fam->files[i];
				snprintf(where, sizeof where, "%s/%s", dir, fam->files[i]);
				rc = cake_compile_path(&ls->units[u], &ls->srcs, &ls->diags, where, &co);
				if (rc == 2) {
					sb_printf(err, "cannot read '%s' (pass --kernels DIR, the folder holding the %s .cake files)", where,
					          fam->name);
					return 1;
				}
			}
			if (rc == GPU_EXIT_NO_DRIVER) {
				sb_printf(err, "%s: %s", where, ls->units[u].error);
				return GPU_EXIT_NO_DRIVER;
			}
			if (rc || ls->diags.nerr > before || ls->units[u].failed != CAKE_STAGE_NONE) {
				StrBuf d = {0};
				diag_sort(&ls->diags);
				diag_print_text(&d, &ls->srcs, &ls->diags, false);
				if (otext)
					sb_printf(err, "the store candidate for %s (%s) does not compile%s%s:\n%s(build without --store to "
					          "use the corpus kernel)", fam->kernels[i], ov->id[i], ls->units[u].error[0] ? ": " : "",
					          ls->units[u].error, sb_str(&d));
				else
					sb_printf(err, "%s does not compile%s%s:\n%s", where, ls->units[u].error[0] ? ": " : "",
					          ls->units[u].error, sb_str(&d));
				sb_free(&d);
				return 1;
			}
		}
		int ki = cake_kernel_index(&ls->units[u], fam->kernels[i]);
		if (ki < 0) {
			sb_printf(err, "%s/%s has no kernel named '%s' (the %s library needs it)", dir, fam->files[i], fam->kernels[i],
			          fam->name);
			return 1;
		}
		ls->kern[i] = ls->units[u].kernels[ki];
		ls->plan[i] = until >= CAKE_DERIVE && ls->units[u].plans ? ls->units[u].plans[ki] : NULL;
		ls->unit_of[i] = u;
		Kernel *k = ls->kern[i];
		for (int d = 0; d < k->ndims; d++)
			if (lib_dim_index(fam, k->dims[d]) < 0) {
				sb_printf(err, "kernel '%s' has a dim '%s' the %s library does not bind (it binds:", k->name, k->dims[d],
				          fam->name);
				for (int j = 0; j < fam->ndims; j++)
					sb_printf(err, " %s", fam->dims[j]);
				sb_puts(err, ")");
				return 1;
			}
	}
	return 0;
}

void lib_unload(LibSet *ls)
{
	for (int i = 0; i < ls->nunits; i++)
		cake_unit_free(&ls->units[i]);
	diag_free(&ls->diags);
	src_free(&ls->srcs);
	free(ls->scratch);
	memset(ls, 0, sizeof *ls);
}

/* ---- shapes ---- */

bool lib_parse_shape(const LibFamily *fam, const char *spec, long long *v, int *atomic, char *err, size_t n)
{
	bool set[8] = {false};
	bool km = !strcmp(fam->name, "kmeans");
	*atomic = 0;
	const char *s = spec;
	while (*s) {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if (!eq || eq > end) {
			snprintf(err, n, "'%.*s' is not NAME=VALUE (shapes look like %s)", (int)(end - s), s, fam->shape_help);
			return false;
		}
		size_t kl = (size_t)(eq - s);
		const char *val = eq + 1;
		size_t vl = (size_t)(end - val);
		if (km && kl == 5 && !strncmp(s, "dtype", 5)) {
			if (vl == 4 && !strncmp(val, "bf16", 4))
				v[4] = 0;
			else if (vl == 3 && !strncmp(val, "f16", 3))
				v[4] = 1;
			else {
				snprintf(err, n, "dtype '%.*s': use bf16 or f16", (int)vl, val);
				return false;
			}
			set[4] = true;
		} else if (km && kl == 6 && !strncmp(s, "update", 6)) {
			if (vl == 6 && !strncmp(val, "sorted", 6))
				*atomic = 0;
			else if (vl == 6 && !strncmp(val, "atomic", 6))
				*atomic = 1;
			else {
				snprintf(err, n, "update '%.*s': use sorted or atomic", (int)vl, val);
				return false;
			}
		} else {
			int vi = -1;
			for (int i = 0; i < fam->nvars; i++)
				if (strlen(fam->vars[i]) == kl && !strncmp(fam->vars[i], s, kl))
					vi = i;
			char *e = NULL;
			long long x = vl ? strtoll(val, &e, 10) : 0;
			if (vi < 0 || !vl || e != end) {
				snprintf(err, n, "'%.*s': shapes look like %s", (int)(end - s), s, fam->shape_help);
				return false;
			}
			v[vi] = x;
			set[vi] = true;
		}
		s = *end ? end + 1 : end;
	}
	if (km && !set[4]) {
		v[4] = 0;
		set[4] = true;
	}
	for (int i = 0; i < fam->nvars; i++)
		if (!set[i]) {
			snprintf(err, n, "the shape has no %s (shapes look like %s)", fam->vars[i], fam->shape_help);
			return false;
		}
	return true;
}

static bool is_gemm(const LibSet *ls)
{
	return !strcmp(ls->fam->name, "gemm");
}

int lib_explain(const LibSet *ls, const long long *v, int atomic, StrBuf *out)
{
	char *buf = xmalloc(16384);
	int rc = is_gemm(ls) ? gemm_explain_into(ls, v[0], v[1], v[2], buf, 16384)
	                     : km_explain_into(ls, v[0], v[1], v[2], v[3], (int)v[4], atomic, buf, 16384);
	sb_puts(out, buf);
	free(buf);
	LibVerdict vd;
	if (rc >= 0 && lib_verdict(ls, v, atomic, &vd) == 0 && vd.in_domain)
		for (int i = 0; i < vd.nlaunch; i++) {
			int kid = vd.launch_kid[i];
			bool dup = false;
			for (int j = 0; j < i; j++)
				dup |= vd.launch_kid[j] == kid;
			if (!dup && kid >= 0 && kid < ls->fam->nkernels && ls->note[kid])
				sb_printf(out, "kernel %s: from the store: %s (the route text above describes the corpus kernel)\n", ls->fam->kernels[kid], ls->note[kid]);
		}
	return rc;
}

int lib_route_line(const LibSet *ls, const long long *v, int atomic, StrBuf *out)
{
	const char *f, *w;
	if (is_gemm(ls)) {
		if (!gemm_in_domain(ls, v[0], v[1], v[2], &f, &w)) {
			sb_printf(out, "refused: %s", f);
			return -CAKE_GEMM_E_SHAPE;
		}
		int r = gemm_route_of(ls, v[0], v[1], v[2]);
		sb_puts(out, gemm_route_names[r]);
		if (r == GEMM_R_PADDED) {
			long long Mp, Np, Kp;
			gemm_padded_shape(v[0], v[1], v[2], &Mp, &Np, &Kp);
			int sub = gemm_first_direct(ls, Mp, Np, Kp);
			sb_printf(out, ">%s %lldx%lldx%lld", sub >= 0 ? gemm_route_names[sub] : "NONE", Mp, Np, Kp);
		}
		return r;
	}
	if (!km_in_domain(ls, v[0], v[1], v[2], v[3], (int)v[4], &f, &w)) {
		sb_printf(out, "refused: %s", f);
		return -CAKE_KMEANS_E_SHAPE;
	}
	KmPlan p;
	if (km_plan(ls, v[0], v[1], v[2], v[3], (int)v[4], atomic, &p)) {
		sb_puts(out, "NONE (dispatcher bug)");
		return -CAKE_KMEANS_E_INTERNAL;
	}
	sb_printf(out, "%s+%s Np=%lld Kp=%lld", km_assign_names[p.assign], km_update_names[p.update], p.Np, p.Kp);
	return 0;
}

int lib_verdict(const LibSet *ls, const long long *v, int atomic, LibVerdict *o)
{
	const char *f, *w;
	memset(o, 0, sizeof *o);
	o->route[0] = o->route[1] = -1;
	if (is_gemm(ls)) {
		long long M = v[0], N = v[1], K = v[2];
		o->naxes = 1;
		o->nroutes[0] = GEMM_NROUTES;
		o->in_domain = gemm_in_domain(ls, M, N, K, &f, &w);
		o->failed = f;
		if (!o->in_domain)
			return 0;
		bool any = false;
		for (int r = 0; r < GEMM_R_PADDED; r++)
			any |= o->guard[0][r] = gemm_direct(ls, r, M, N, K, &f);
		o->guard[0][GEMM_R_PADDED] = !any;
		o->route[0] = gemm_route_of(ls, M, N, K);
		o->ws_bytes = gemm_ws_bytes(ls, o->route[0], M, N, K);
		long long d[GEMM_NFD], Mp = M, Np = N, Kp = K;
		int sub = o->route[0];
		if (o->route[0] == GEMM_R_PADDED) {
			gemm_padded_shape(M, N, K, &Mp, &Np, &Kp);
			sub = gemm_first_direct(ls, Mp, Np, Kp);
			if (sub < 0)
				return 0;   /* no launch recorded: the test reports the gap */
		}
		gemm_fd(Mp, Np, Kp, d);
		o->launch_kid[o->nlaunch] = gemm_route_kid[sub];
		memcpy(o->launch_dims[o->nlaunch++], d, sizeof d);
		if (sub == GEMM_R_SPLITK || sub == GEMM_R_STREAMK || sub == GEMM_R_STREAMK_128X128) {   /* the partials' sum, at the same dims */
			o->launch_kid[o->nlaunch] = sub == GEMM_R_SPLITK ? KID_gemm_splitk_reduce
			                          : sub == GEMM_R_STREAMK ? KID_gemm_streamk_fixup : KID_gemm_streamk128_fixup;
			memcpy(o->launch_dims[o->nlaunch++], d, sizeof d);
		}
		return 0;
	}
	o->naxes = 2;
	o->nroutes[0] = KM_NASSIGN;
	o->nroutes[1] = KM_NUPDATE;
	o->in_domain = km_in_domain(ls, v[0], v[1], v[2], v[3], (int)v[4], &f, &w);
	o->failed = f;
	if (!o->in_domain)
		return 0;
	KmPlan p;
	memset(&p, 0, sizeof p);
	p.B = v[0], p.N = v[1], p.D = v[2], p.K = v[3], p.f16 = (int)v[4];
	km_padding(p.N, p.K, &p.Np, &p.Kp);
	for (int r = 0; r < KM_NASSIGN; r++)
		o->guard[0][r] = km_assign_ok(ls, &p, r, &f);
	for (int r = 0; r < KM_U_ATOMIC; r++)
		o->guard[1][r] = !atomic && km_update_ok(ls, &p, r, &f);
	o->guard[1][KM_U_ATOMIC] = atomic && km_update_ok(ls, &p, KM_U_ATOMIC, &f);
	if (km_plan(ls, p.B, p.N, p.D, p.K, p.f16, atomic, &p))
		return 0;
	o->route[0] = p.assign;
	o->route[1] = p.update;
	int ks[7] = {p.k_assign, p.k_hist, p.k_scan, p.k_fill, p.k_segsum, p.k_scatter, p.k_divide};
	for (int i = 0; i < 7; i++)
		if (ks[i] >= 0) {
			o->launch_kid[o->nlaunch] = ks[i];
			o->launch_dims[o->nlaunch][0] = p.B;
			o->launch_dims[o->nlaunch][1] = p.Np;
			o->launch_dims[o->nlaunch][2] = p.Kp;
			o->nlaunch++;
		}
	return 0;
}
