/*
 * dispatch.c — the family dispatchers inside cake: `cake library --explain`
 * and the domain tests run the very text the generated libraries run
 * (src/lib/rt/gemm_dispatch.inc, kmeans_dispatch.inc, kda_dispatch.inc),
 * included here after the callbacks it expects:
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
 *
 * Per-family ops. Each family's dispatcher has its own way of naming a shape
 * (gemm M, N, K; kmeans also dtype= and update=; kda flags, and the sequence
 * lengths of cu_seqlens) and its own explanation, one-line route and verdict.
 * Those are one LibFamilyOps table per family (lib.h), so the generic parts
 * (NAME=VALUE parsing, the --store notes, the verdict's reset) never branch on
 * a family's name; a shape travels as a LibShape (variables, the kmeans update,
 * kda's offsets). lib_parse_shape / lib_explain / lib_route_line / lib_verdict
 * keep their plain-array form for gemm and kmeans callers.
 */
#include "lib.h"
#include "../gpu/launch.h"

#include <stdlib.h>
#include <string.h>

#include "rt/cake_gemm.h"
#include "rt/cake_kmeans.h"
#include "rt/cake_kda.h"

static int lib_kernel_domain(const void *lx, int kid, const long long *fd, const char **failed);
static int lib_kernel_param_use(const void *lx, int kid, const char *param);
static int lib_user_domain(const void *lx, const long long *v, const char **failed);

#include "rt/lib_common.inc"
#include "rt/gemm_dispatch.inc"
#include "rt/kmeans_dispatch.inc"
#include "rt/kda_dispatch.inc"

_Static_assert(GEMM_NFD <= LIB_MAX_FD && GEMM_NROUTES <= LIB_MAX_ROUTES, "LibVerdict holds every GEMM dim and route");

/* ---- family descriptors ---- */

static const char *const gemm_vars[] = {"M", "N", "K"};
#define X(d) #d,
static const char *const gemm_dims[] = {GEMM_DIMS(X)};   /* the fd[] order of the dispatcher */
static const char *const km_dims[] = {KM_DIMS(X)};
static const char *const kda_dims[] = {KDA_DIMS(X)};
static const char *const kda_vars[] = {KDA_VARS(X)};
static const char *const kda_fvals[] = {KDA_FVALS(X)};
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
static const char *const kda_kernel_names[] = {
#define X(name, file) #name,
	KDA_KERNELS(X)
#undef X
};
static const char *const kda_kernel_files[] = {
#define X(name, file) file,
	KDA_KERNELS(X)
#undef X
};

_Static_assert(KDA_NFD <= LIB_MAX_FD && KDA_NROUTES <= LIB_MAX_ROUTES && KDA_NVARS <= LIB_MAX_VARS,
               "LibVerdict and LibShape hold every KDA dim, route and variable");

static const LibFamilyOps gemm_ops, km_ops, kda_ops;   /* defined with the shapes, below */

static const LibFamily families[] = {
	{"gemm", "C = A·Bᵀ, bf16, A [M, K], B [N, K], C [M, N] (f32 accumulation)", gemm_vars, 3, gemm_dims, (int)NELEM(gemm_dims),
	 gemm_kernel_names, gemm_kernel_files, GEMM_NKERNELS, "cake_gemm.h", "gemm_dispatch.inc", "gemm_api.inc",
	 "M=..,N=..,K=..", NULL, 0, &gemm_ops},
	{"kmeans", "batched Euclidean k-means (Lloyd), X [B, N, D] bf16/f16, D 64 or 128", km_vars, 5, km_dims, (int)NELEM(km_dims),
	 km_kernel_names, km_kernel_files, KM_NKERNELS, "cake_kmeans.h", "kmeans_dispatch.inc", "kmeans_api.inc",
	 "B=..,N=..,D=..,K=..[,dtype=bf16|f16][,update=sorted|atomic]", NULL, 0, &km_ops},
	{"kda", "Kimi Delta Attention forward: chunked prefill (B x T or cu_seqlens) and decode, K = V = 128, f32/bf16 state",
	 kda_vars, KDA_NVARS, kda_dims, (int)NELEM(kda_dims), kda_kernel_names, kda_kernel_files, KDA_NKERNELS, "cake_kda.h",
	 "kda_dispatch.inc", "kda_api.inc",
	 "B=..,T=..,H=..[,state=f32|bf16][,mode=prefill|decode][,gate=lb|softplus][,seqlens=L:L:..|cu=0:O:..:T][,DK=128][,DV=128]",
	 kda_fvals, (int)NELEM(kda_fvals), &kda_ops},
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
	return "gemm, kmeans, kda";
}

int lib_fval_index(const LibFamily *fam, const char *name)
{
	for (int i = 0; i < fam->nfvals; i++)
		if (!strcmp(fam->fvals[i], name))
			return i;
	return -1;
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
	return !ls || !ls->user || lib_conds_eval(ls->user, v, failed);
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

/* "a:b:c" (':' or '/' between the integers) into out[0 .. *n); false when malformed or longer
 * than max. */
static bool parse_list(const char *val, size_t vl, int64_t *out, long long max, long long *n)
{
	*n = 0;
	const char *p = val, *e = val + vl;
	while (p < e) {
		char *end;
		long long x = strtoll(p, &end, 10);
		if (end == p || end > e || (end < e && *end != ':' && *end != '/') || *n == max)
			return false;
		out[(*n)++] = x;
		p = end < e ? end + 1 : end;
		if (end < e && p == e)
			return false;   /* a trailing separator */
	}
	return *n > 0;
}

static bool key_is(const char *key, size_t kl, const char *name)
{
	return strlen(name) == kl && !strncmp(key, name, kl);
}

static bool val_is(const char *val, size_t vl, const char *name)
{
	return strlen(name) == vl && !strncmp(val, name, vl);
}

bool lib_shape_parse(const LibFamily *fam, const char *spec, LibShape *sh, char *err, size_t n)
{
	bool set[LIB_MAX_VARS] = {false};
	memset(sh->v, 0, sizeof sh->v);
	sh->atomic = 0;
	sh->ncu = 0;
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
		int took = fam->ops->key ? fam->ops->key(s, kl, val, vl, sh, set, err, n) : 0;
		if (took < 0)
			return false;
		if (!took) {
			int vi = -1;
			for (int i = 0; i < fam->nvars; i++)
				if (key_is(s, kl, fam->vars[i]))
					vi = i;
			char *e = NULL;
			long long x = vl ? strtoll(val, &e, 10) : 0;
			if (vi < 0 || !vl || e != end) {
				snprintf(err, n, "'%.*s': shapes look like %s", (int)(end - s), s, fam->shape_help);
				return false;
			}
			sh->v[vi] = x;
			set[vi] = true;
		}
		s = *end ? end + 1 : end;
	}
	if (fam->ops->finish && !fam->ops->finish(fam, sh, set, err, n))
		return false;
	for (int i = 0; i < fam->nvars; i++)
		if (!set[i]) {
			snprintf(err, n, "the shape has no %s (shapes look like %s)", fam->vars[i], fam->shape_help);
			return false;
		}
	return true;
}

int lib_shape_explain(const LibSet *ls, const LibShape *s, StrBuf *out)
{
	char *buf = xmalloc(16384);
	int rc = ls->fam->ops->explain(ls, s, buf, 16384);
	sb_puts(out, buf);
	free(buf);
	LibVerdict *vd = xmalloc(sizeof *vd);
	if (rc >= 0 && lib_shape_verdict(ls, s, vd) == 0 && vd->in_domain)
		for (int i = 0; i < vd->nlaunch; i++) {
			int kid = vd->launch_kid[i];
			bool dup = false;
			for (int j = 0; j < i; j++)
				dup |= vd->launch_kid[j] == kid;
			if (!dup && kid >= 0 && kid < ls->fam->nkernels && ls->note[kid])
				sb_printf(out, "kernel %s: from the store: %s (the route text above describes the corpus kernel)\n", ls->fam->kernels[kid], ls->note[kid]);
		}
	free(vd);
	return rc;
}

int lib_shape_line(const LibSet *ls, const LibShape *s, StrBuf *out)
{
	return ls->fam->ops->line(ls, s, out);
}

int lib_shape_verdict(const LibSet *ls, const LibShape *s, LibVerdict *o)
{
	memset(o, 0, sizeof *o);
	o->route[0] = o->route[1] = -1;
	return ls->fam->ops->verdict(ls, s, o);
}

/* The gemm and kmeans entry points over a plain v. */
static void shape_of(const LibFamily *fam, const long long *v, int atomic, LibShape *s)
{
	memset(s->v, 0, sizeof s->v);
	memcpy(s->v, v, sizeof *v * (size_t)fam->nvars);
	s->atomic = atomic;
	s->ncu = 0;
}

bool lib_parse_shape(const LibFamily *fam, const char *spec, long long *v, int *atomic, char *err, size_t n)
{
	LibShape *s = xmalloc(sizeof *s);
	bool ok = lib_shape_parse(fam, spec, s, err, n);
	if (ok) {
		memcpy(v, s->v, sizeof *v * (size_t)fam->nvars);
		*atomic = s->atomic;
	}
	free(s);
	return ok;
}

int lib_explain(const LibSet *ls, const long long *v, int atomic, StrBuf *out)
{
	LibShape *s = xmalloc(sizeof *s);
	shape_of(ls->fam, v, atomic, s);
	int rc = lib_shape_explain(ls, s, out);
	free(s);
	return rc;
}

int lib_route_line(const LibSet *ls, const long long *v, int atomic, StrBuf *out)
{
	LibShape *s = xmalloc(sizeof *s);
	shape_of(ls->fam, v, atomic, s);
	int rc = lib_shape_line(ls, s, out);
	free(s);
	return rc;
}

int lib_verdict(const LibSet *ls, const long long *v, int atomic, LibVerdict *o)
{
	LibShape *s = xmalloc(sizeof *s);
	shape_of(ls->fam, v, atomic, s);
	int rc = lib_shape_verdict(ls, s, o);
	free(s);
	return rc;
}

/* ---- gemm ---- */

static int gemm_op_explain(const LibSet *ls, const LibShape *s, char *buf, size_t len)
{
	return gemm_explain_into(ls, s->v[0], s->v[1], s->v[2], buf, len);
}

static int gemm_op_line(const LibSet *ls, const LibShape *s, StrBuf *out)
{
	const char *f, *w;
	const long long *v = s->v;
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

static int gemm_op_verdict(const LibSet *ls, const LibShape *s, LibVerdict *o)
{
	const char *f, *w;
	long long M = s->v[0], N = s->v[1], K = s->v[2];
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

static const LibFamilyOps gemm_ops = {NULL, NULL, gemm_op_explain, gemm_op_line, gemm_op_verdict};

/* ---- kmeans ---- */

static int km_op_key(const char *key, size_t kl, const char *val, size_t vl, LibShape *s, bool *set, char *err, size_t n)
{
	if (key_is(key, kl, "dtype")) {
		if (val_is(val, vl, "bf16"))
			s->v[4] = 0;
		else if (val_is(val, vl, "f16"))
			s->v[4] = 1;
		else {
			snprintf(err, n, "dtype '%.*s': use bf16 or f16", (int)vl, val);
			return -1;
		}
		set[4] = true;
		return 1;
	}
	if (key_is(key, kl, "update")) {
		if (val_is(val, vl, "sorted"))
			s->atomic = 0;
		else if (val_is(val, vl, "atomic"))
			s->atomic = 1;
		else {
			snprintf(err, n, "update '%.*s': use sorted or atomic", (int)vl, val);
			return -1;
		}
		return 1;
	}
	return 0;
}

static bool km_op_finish(const LibFamily *fam, LibShape *s, bool *set, char *err, size_t n)
{
	(void)fam, (void)err, (void)n;
	if (!set[4])   /* bf16 unless dtype= says otherwise */
		s->v[4] = 0, set[4] = true;
	return true;
}

static int km_op_explain(const LibSet *ls, const LibShape *s, char *buf, size_t len)
{
	const long long *v = s->v;
	return km_explain_into(ls, v[0], v[1], v[2], v[3], (int)v[4], s->atomic, buf, len);
}

static int km_op_line(const LibSet *ls, const LibShape *s, StrBuf *out)
{
	const char *f, *w;
	const long long *v = s->v;
	if (!km_in_domain(ls, v[0], v[1], v[2], v[3], (int)v[4], &f, &w)) {
		sb_printf(out, "refused: %s", f);
		return -CAKE_KMEANS_E_SHAPE;
	}
	KmPlan p;
	if (km_plan(ls, v[0], v[1], v[2], v[3], (int)v[4], s->atomic, &p)) {
		sb_puts(out, "NONE (dispatcher bug)");
		return -CAKE_KMEANS_E_INTERNAL;
	}
	sb_printf(out, "%s+%s Np=%lld Kp=%lld", km_assign_names[p.assign], km_update_names[p.update], p.Np, p.Kp);
	return 0;
}

static int km_op_verdict(const LibSet *ls, const LibShape *s, LibVerdict *o)
{
	const char *f, *w;
	const long long *v = s->v;
	int atomic = s->atomic;
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

static const LibFamilyOps km_ops = {km_op_key, km_op_finish, km_op_explain, km_op_line, km_op_verdict};

/* ---- kda ---- */

static int kda_op_key(const char *key, size_t kl, const char *val, size_t vl, LibShape *s, bool *set, char *err, size_t n)
{
	static const struct { const char *key, *a, *b; int var; } flags[] = {
		{"state", "f32", "bf16", KDA_V_BF16}, {"mode", "prefill", "decode", KDA_V_DECODE},
		{"gate", "softplus", "lb", KDA_V_LB},
	};
	for (size_t i = 0; i < NELEM(flags); i++)
		if (key_is(key, kl, flags[i].key)) {
			if (val_is(val, vl, flags[i].a) || val_is(val, vl, flags[i].b) ||
			    (flags[i].var == KDA_V_LB && val_is(val, vl, "lower_bound"))) {
				s->v[flags[i].var] = !val_is(val, vl, flags[i].a);
				set[flags[i].var] = true;
				return 1;
			}
			snprintf(err, n, "%s '%.*s': use %s or %s", flags[i].key, (int)vl, val, flags[i].a, flags[i].b);
			return -1;
		}
	bool lens = key_is(key, kl, "seqlens");
	if (lens || key_is(key, kl, "cu")) {
		long long m;
		int64_t *dst = lens ? s->cu + 1 : s->cu;
		if (!parse_list(val, vl, dst, lens ? LIB_MAX_SEQS : LIB_MAX_SEQS + 1, &m)) {
			snprintf(err, n, "%s '%.*s': integers separated by ':' (%s), at most %d sequences", lens ? "seqlens" : "cu", (int)vl,
			         val, lens ? "the sequences' lengths, e.g. seqlens=100:28:7" : "the offsets, e.g. cu=0:100:128:135",
			         LIB_MAX_SEQS);
			return -1;
		}
		if (lens) {   /* lengths into offsets */
			s->cu[0] = 0;
			for (long long i = 1; i <= m; i++)
				s->cu[i] += s->cu[i - 1];
			m++;
		}
		s->ncu = m;
		return 1;
	}
	return 0;
}

static bool kda_op_finish(const LibFamily *fam, LibShape *s, bool *set, char *err, size_t n)
{
	(void)fam, (void)err, (void)n;
	long long *v = s->v;
	static const struct { int var; long long def; } defs[] = {
		{KDA_V_DK, 128}, {KDA_V_DV, 128}, {KDA_V_BF16, 0}, {KDA_V_DECODE, 0}, {KDA_V_LB, 1},
	};
	for (size_t i = 0; i < NELEM(defs); i++)
		if (!set[defs[i].var])
			v[defs[i].var] = defs[i].def, set[defs[i].var] = true;
	v[KDA_V_VARLEN] = s->ncu > 0;
	set[KDA_V_VARLEN] = true;
	if (s->ncu) {   /* packed: B = 1 and T = the last offset unless given; N from the offsets */
		if (!set[KDA_V_B])
			v[KDA_V_B] = 1, set[KDA_V_B] = true;
		if (!set[KDA_V_T])
			v[KDA_V_T] = s->cu[s->ncu - 1], set[KDA_V_T] = true;
		v[KDA_V_N] = s->ncu - 1;
		set[KDA_V_N] = true;
	} else if (!set[KDA_V_N] && set[KDA_V_B]) {
		v[KDA_V_N] = v[KDA_V_B];
		set[KDA_V_N] = true;
	}
	if (!set[KDA_V_PAIR] && set[KDA_V_B] && set[KDA_V_T] && set[KDA_V_H] && set[KDA_V_N]) {
		/* derived for KDA_PAIR_SMS unless given (a call derives it for its own device) */
		KdaShape k = {.cu = s->ncu ? s->cu : NULL, .n1 = s->ncu};
		memcpy(k.v, v, sizeof k.v);
		v[KDA_V_PAIR] = v[KDA_V_N] >= 1 && v[KDA_V_N] <= 65535 && v[KDA_V_H] >= 1 && v[KDA_V_H] <= 65535 && v[KDA_V_T] >= 1
		              ? kda_paired(&k, KDA_PAIR_SMS) : 0;
		set[KDA_V_PAIR] = true;
	}
	return true;
}

static void kda_shape_of(const LibShape *s, KdaShape *k)
{
	memcpy(k->v, s->v, sizeof k->v);
	k->cu = s->ncu ? s->cu : NULL;
	k->n1 = s->ncu;
}

static int kda_op_explain(const LibSet *ls, const LibShape *s, char *buf, size_t len)
{
	KdaShape k;
	kda_shape_of(s, &k);
	return kda_explain_into(ls, &k, buf, len);
}

static int kda_op_line(const LibSet *ls, const LibShape *s, StrBuf *out)
{
	KdaShape k;
	const char *f, *w;
	char b[256];
	kda_shape_of(s, &k);
	if (!kda_in_domain(ls, &k, &f, &w, b, sizeof b)) {
		sb_printf(out, "refused: %s", f);
		if (w == b)   /* a cu_seqlens rule: what the offsets hold */
			sb_printf(out, " (%s)", b);
		return -CAKE_KDA_E_SHAPE;
	}
	long long ns, np;
	int r = kda_route_of(ls, &k, &ns, &np);
	if (r < 0) {
		sb_puts(out, "NONE (dispatcher bug)");
		return -CAKE_KDA_E_INTERNAL;
	}
	sb_puts(out, kda_route_names[r]);
	if (KDA_IS_SPLIT(r))
		sb_printf(out, " NS=%lld NP=%lld", ns, np);
	if (r == KDA_R_PREFILL_BF16_LB_SEQ)
		sb_printf(out, " x%lld", k.v[KDA_V_N]);
	return r;
}

static int kda_op_verdict(const LibSet *ls, const LibShape *s, LibVerdict *o)
{
	KdaShape k;
	const char *f, *w;
	kda_shape_of(s, &k);
	o->naxes = 1;
	o->nroutes[0] = KDA_NROUTES;
	o->in_domain = kda_in_domain(ls, &k, &f, &w, o->failbuf, sizeof o->failbuf);
	o->failed = f;
	if (!o->in_domain)
		return 0;
	long long np, ns = kda_slot_counts(&k, &np);
	for (int r = 0; r < KDA_NROUTES; r++)
		o->guard[0][r] = kda_route_ok(ls, &k, r, ns, np, &f);
	int r = kda_route_of(ls, &k, &ns, &np);
	o->route[0] = r;
	if (r < 0)
		return 0;
	if (r == KDA_R_PREFILL_BF16_LB_SEQ) {
		for (long long n = 0; n < k.v[KDA_V_N] && o->nlaunch < LIB_MAX_LAUNCH; n++) {
			o->launch_kid[o->nlaunch] = kda_route_kid[r][0];
			kda_seq_fd(&k, n, o->launch_dims[o->nlaunch++]);
		}
		return 0;
	}
	for (int i = 0; i < 3; i++)
		if (kda_route_kid[r][i] >= 0) {
			o->launch_kid[o->nlaunch] = kda_route_kid[r][i];
			kda_fd(&k, r, ns, np, o->launch_dims[o->nlaunch++]);
		}
	return 0;
}

static const LibFamilyOps kda_ops = {kda_op_key, kda_op_finish, kda_op_explain, kda_op_line, kda_op_verdict};

int lib_kda_paired(const LibShape *s, long long sms)
{
	KdaShape k;
	kda_shape_of(s, &k);
	return kda_paired(&k, sms);
}

bool lib_kda_slot_tables(const LibShape *s, long long *ns, long long *np, int32_t **sl, int32_t **cs, int32_t **ord,
                         int32_t **ps)
{
	KdaShape k;
	const char *f, *w;
	char b[256];
	kda_shape_of(s, &k);
	*sl = *cs = *ord = *ps = NULL;
	*ns = *np = 0;
	if (!kda_in_domain(NULL, &k, &f, &w, b, sizeof b) || !(*ns = kda_slot_counts(&k, np)))
		return false;
	long long N = k.v[KDA_V_N];
	*sl = xcalloc((size_t)*ns * KDA_SLOT_FIELDS, sizeof **sl);
	*cs = xcalloc((size_t)N + 1, sizeof **cs);
	*ord = xcalloc((size_t)N, sizeof **ord);
	*ps = xcalloc((size_t)*np, sizeof **ps);
	int32_t *cnt = xcalloc((size_t)*ns + 2, sizeof *cnt);
	kda_slots_fill(&k, *ns, *np, *sl, *cs, *ord, *ps, cnt);
	free(cnt);
	return true;
}
