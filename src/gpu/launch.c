/*
 * launch.c — the launch layer (see launch.h).
 *
 * Tensor maps. A PlanTmap gives, innermost first, the global extents and
 * byte strides as symbolic expressions, the box in elements and the swizzle
 * matching the shared-memory buffer it fills; they are evaluated under the
 * bound dims and encoded with cuTensorMapEncodeTiled for the device buffer
 * of the tensor parameter. Scalars are marshalled in their own dtype into
 * 8-byte slots; dims as 32-bit ints, in Plan.args order.
 */
#include "launch.h"
#include "../family/oracle.h"

#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return GPU_ERROR;
}

bool launch_shape(Launch *L, const Plan *p, const long long *dimvals, char *err, size_t n)
{
	memset(L, 0, sizeof *L);
	L->p = p;
	L->k = p->kernel;
	const Kernel *k = p->kernel;
	if (k->ndims > LAUNCH_MAX_DIMS) {
		snprintf(err, n, "kernel '%s' has %d dims; the launch layer supports %d", k->name, k->ndims, LAUNCH_MAX_DIMS);
		return false;
	}
	memcpy(L->dimvals, dimvals, sizeof(long long) * (size_t)k->ndims);
	const char *failed = NULL;
	if (!eval_domain(k, L->dimvals, &failed)) {
		snprintf(err, n, "domain constraint '%s' is false for this shape", failed ? failed : "?");
		free((void *)failed);
		return false;
	}
	for (int t = 0; t < p->ntmaps; t++) {
		const PlanTmap *tm = &p->tmaps[t];
		for (int d = 1; d < tm->rank; d++) {
			long long s = 0;
			if (!eval_expr(tm->gstrides[d], k, L->dimvals, &s) || s % 16) {
				snprintf(err, n, "TMA contract: global stride %d of '%s' is %lld bytes, not a multiple of 16 (make the inner "
				         "extent a multiple of %d elements)", d, tm->param, s, 16 / dtype_size(tm->dt));
				return false;
			}
		}
		for (int d = 0; d < tm->rank; d++) {
			long long e = 0;
			eval_expr(tm->gdims[d], k, L->dimvals, &e);
			if (e < 1 || e > (1ll << 32)) {
				snprintf(err, n, "TMA contract: extent %d of '%s' is %lld (must be 1..2^32)", d, tm->param, e);
				return false;
			}
		}
	}
	L->tiles = 1;
	for (int a = 0; a < 3; a++) {
		long long e = 1;
		if (p->grid[a] && (!eval_expr(p->grid[a], k, L->dimvals, &e) || e < 1 || e > 0x7fffffff)) {
			snprintf(err, n, "grid extent %d does not evaluate to a positive 31-bit integer for this shape", a);
			return false;
		}
		L->grid[a] = (unsigned)e;
		L->cluster[a] = p->cluster[a] > 0 ? (unsigned)p->cluster[a] : 1;
		if (!p->persistent && L->grid[a] % L->cluster[a]) {
			snprintf(err, n, "grid extent %d (%u) is not a multiple of the cluster extent %u", a, L->grid[a], L->cluster[a]);
			return false;
		}
		L->tiles *= e;
	}
	L->ctas = L->tiles;
	L->block[0] = (unsigned)p->block_threads;
	L->block[1] = L->block[2] = 1;
	return true;
}

bool launch_param_extents(const Launch *L, int i, long long *dims, size_t *elems)
{
	const Decl *d = L->k->params[i];
	*elems = 1;
	for (int r = 0; r < d->rank; r++) {
		long long v = 0;
		if (!eval_expr(d->shape[r], L->k, L->dimvals, &v) || v <= 0)
			return false;
		dims[r] = v;
		*elems *= (size_t)v;
	}
	return true;
}

int launch_param_index(const Launch *L, const char *name)
{
	for (int i = 0; name && i < L->k->nparams; i++)
		if (!strcmp(L->k->params[i]->name, name))
			return i;
	return -1;
}

int launch_load(GpuDev *g, Launch *L, const void *cubin, char *err, size_t n)
{
	const Plan *p = L->p;
	if (gpu_module_load(g, cubin, &L->mod) || gpu_module_func(g, L->mod, p->name, &L->fn))
		return fail(err, n, "%s", g->err);
	if (p->smem_bytes > g->smem_optin)
		return fail(err, n, "kernel needs %lld bytes of dynamic shared memory; %s allows %d per block", p->smem_bytes, g->name,
		            g->smem_optin);
	if (gpu_func_set_smem(g, L->fn, (int)p->smem_bytes))
		return fail(err, n, "%s", g->err);
	return 0;
}

void launch_fit(Launch *L, int sm_count)
{
	if (!L->p->persistent)
		return;
	long long per = (long long)L->cluster[0] * L->cluster[1] * L->cluster[2];
	long long c = L->tiles < sm_count ? L->tiles : sm_count;
	c = c / per * per;
	if (c < per)
		c = per;
	L->grid[0] = (unsigned)c;
	L->grid[1] = L->grid[2] = 1;
	L->ctas = c;
}

/* Store scalar value v of dtype dt into an 8-byte slot. */
static void put_scalar(void *buf, DType dt, double v)
{
	switch (dt) {
	case DT_F32: { float f = (float)v; memcpy(buf, &f, 4); break; }
	case DT_BF16: { uint16_t h = oracle_f32_to_bf16((float)v); memcpy(buf, &h, 2); break; }
	case DT_F16: { uint16_t h = oracle_f32_to_f16((float)v); memcpy(buf, &h, 2); break; }
	case DT_I64: { int64_t x = (int64_t)v; memcpy(buf, &x, 8); break; }
	case DT_U32: { uint32_t x = (uint32_t)v; memcpy(buf, &x, 4); break; }
	case DT_BOOL: case DT_F8E4M3: { uint8_t x = (uint8_t)v; memcpy(buf, &x, 1); break; }
	default: { int32_t x = (int32_t)v; memcpy(buf, &x, 4); break; }
	}
}

int launch_args(GpuDev *g, Launch *L, const GpuPtr *ptr, const double *scalars, GpuPtr debug_rec, char *err, size_t n)
{
	const Plan *p = L->p;
	const Kernel *k = L->k;
	int na = p->nargs + 1;
	L->args = xcalloc((size_t)na, sizeof *L->args);
	L->vals = xcalloc((size_t)na, sizeof *L->vals);
	L->maps = aligned_alloc(64, sizeof(GpuTensorMap) * (size_t)(p->ntmaps > 0 ? p->ntmaps : 1));
	if (!L->maps)
		return fail(err, n, "host out of memory for %d tensor maps", p->ntmaps);
	for (int a = 0; a < p->nargs; a++) {
		const PlanArg *pa = &p->args[a];
		switch (pa->kind) {
		case ARG_TMAP: {
			const PlanTmap *tm = &p->tmaps[pa->index];
			int pi = 0;
			while (pi < k->nparams - 1 && k->params[pi] != tm->param_decl)
				pi++;
			uint64_t dims[MAX_RANK], strides[MAX_RANK];
			uint32_t box[MAX_RANK];
			for (int d = 0; d < tm->rank; d++) {
				long long v = 0;
				eval_expr(tm->gdims[d], k, L->dimvals, &v);
				dims[d] = (uint64_t)v;
				box[d] = (uint32_t)tm->box[d];
				if (d > 0) {
					eval_expr(tm->gstrides[d], k, L->dimvals, &v);
					strides[d - 1] = (uint64_t)v;
				}
			}
			int dt = tm->dt == DT_BF16 ? GPU_TMAP_BF16 : tm->dt == DT_F16 ? GPU_TMAP_F16 : tm->dt == DT_F32 ? GPU_TMAP_F32
			       : GPU_TMAP_U8;
			int sw = tm->swizzle == SWZ_128B ? GPU_SWZ_128B : tm->swizzle == SWZ_64B ? GPU_SWZ_64B
			       : tm->swizzle == SWZ_32B ? GPU_SWZ_32B : GPU_SWZ_NONE;
			if (gpu_tmap_encode(g, &L->maps[pa->index], dt, tm->rank, ptr[pi], dims, strides, box, sw))
				return fail(err, n, "tensor map of '%s': %s", tm->param, g->err);
			L->args[a] = &L->maps[pa->index];
			break;
		}
		case ARG_PTR:
			L->vals[a] = ptr[pa->index];
			L->args[a] = &L->vals[a];
			break;
		case ARG_DIM: {
			int32_t v = (int32_t)L->dimvals[pa->index];
			memcpy(&L->vals[a], &v, 4);
			L->args[a] = &L->vals[a];
			break;
		}
		case ARG_SCALAR:
			put_scalar(&L->vals[a], pa->dt, scalars ? scalars[pa->index] : 0);
			L->args[a] = &L->vals[a];
			break;
		case ARG_DEBUG:
			break;
		}
	}
	if (debug_rec) {
		L->vals[p->nargs] = debug_rec;
		L->args[p->nargs] = &L->vals[p->nargs];
	}
	return 0;
}

int launch_go(GpuDev *g, const Launch *L)
{
	return gpu_launch(g, L->fn, L->grid, L->block, L->cluster, (unsigned)L->p->smem_bytes, L->args);
}

void launch_free(GpuDev *g, Launch *L)
{
	free(L->maps);
	free(L->vals);
	free(L->args);
	L->maps = NULL;
	L->vals = NULL;
	L->args = NULL;
	if (L->mod && g)
		gpu_module_unload(g, L->mod);
	L->mod = L->fn = NULL;
}
