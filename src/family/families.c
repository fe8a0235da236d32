/*
 * families.c — the registry of kernel families and the helpers family
 * modules share (see family.h).
 *
 * The built-in table is a flat list, one line per descriptor. A module
 * defines its descriptors as `const Family family_NAME` and nothing else is
 * exported from it; the extern declarations below are the registry's only
 * knowledge of the modules.
 */
#include "family.h"

#include <stdlib.h>
#include <string.h>

extern const Family family_gemm;
extern const Family family_kmeans_assign, family_kmeans_divide, family_kmeans_segmented, family_kmeans_segsum;
extern const Family family_kda, family_kda_decode;

static const Family *const builtin[] = {
	&family_gemm,               /* gemm.c */
	&family_kmeans_assign,      /* kmeans.c */
	&family_kmeans_divide,      /* kmeans.c */
	&family_kmeans_segmented,   /* kmeans.c */
	&family_kmeans_segsum,      /* kmeans.c */
	&family_kda,                /* kda.c */
	&family_kda_decode,         /* kda.c */
};

FamilyTable family_builtin(void)
{
	return (FamilyTable){builtin, (int)NELEM(builtin)};
}

const Family *family_of_kernel(const Kernel *k)
{
	return k && k->family && !k->family->stage ? family_find(family_builtin(), k->family->name) : NULL;
}

const Family *family_find(FamilyTable t, const char *name)
{
	for (int i = 0; name && i < t.n; i++)
		if (!strcmp(t.f[i]->name, name))
			return t.f[i];
	return NULL;
}

const char **family_names(FamilyTable t, int *n)
{
	const char **v = xmalloc(sizeof(char *) * (size_t)(t.n + 1));
	for (int i = 0; i < t.n; i++)
		v[i] = t.f[i]->name;
	v[t.n] = NULL;
	*n = t.n;
	return v;
}

int family_check_program(FamilyTable t, const Program *prog, DiagList *dl)
{
	int errs = 0;
	for (int i = 0; prog && i < prog->nkernels; i++) {
		const Kernel *k = prog->kernels[i];
		const Family *f = k->family ? family_find(t, k->family->name) : NULL;
		char why[256];
		if (f && k->sema_ok && k->family->stage && !f->fits_stage) {
			Diag *d = diag_add(dl, "CK-SEM-044", SEV_ERROR, k->family->stage_span, "kernel '%s': family '%s' runs no chains of stages", k->name,
			                   f->name);
			diag_set(&d->hint, "drop `stage`: the kernel must then hold the whole contract (%s)", f->params);
			errs++;
			continue;
		}
		if (!f || !k->sema_ok || (k->family->stage ? f->fits_stage(k, why, sizeof why) : f->fits(k, why, sizeof why)))
			continue;
		Diag *d = diag_add(dl, "CK-SEM-044", SEV_ERROR, k->family->name_span, "kernel '%s' does not fit family '%s': %s", k->name,
		                   f->name, why);
		diag_set(&d->hint, "family %s binds %s", f->name, f->params);
		errs++;
	}
	return errs;
}

double *family_scalars(const Family *f, const Kernel *k)
{
	double *v = xcalloc((size_t)(k->nparams > 0 ? k->nparams : 1) + 1, sizeof(double));
	if (f && f->scalar_defaults)
		f->scalar_defaults(k, v);
	return v;
}

bool family_is_inout(const Family *f, const char *name)
{
	for (int i = 0; f && f->inout && f->inout[i]; i++)
		if (!strcmp(f->inout[i], name))
			return true;
	return false;
}

/* ---- helpers for modules ---- */

int fam_param(const Kernel *k, const char *name)
{
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i]->space == SP_GLOBAL && !strcmp(k->params[i]->name, name))
			return i;
	return -1;
}

bool fam_need(const Kernel *k, const char *name, const DType *dts, int ndts, int rank_lo, int rank_hi, char *why, size_t n)
{
	int i = fam_param(k, name);
	if (i < 0) {
		snprintf(why, n, "it has no global parameter '%s'", name);
		return false;
	}
	const Decl *d = k->params[i];
	bool dt_ok = false;
	for (int j = 0; j < ndts; j++)
		dt_ok |= d->dt == dts[j];
	if (!dt_ok) {
		StrBuf b = {0};
		for (int j = 0; j < ndts; j++)
			sb_printf(&b, "%s%s", j ? (j == ndts - 1 ? " or " : ", ") : "", dtype_name(dts[j]));
		snprintf(why, n, "parameter '%s' is %s, not %s", name, dtype_name(d->dt), sb_str(&b));
		sb_free(&b);
		return false;
	}
	if (d->rank < rank_lo || d->rank > rank_hi) {
		if (rank_hi > rank_lo)
			snprintf(why, n, "parameter '%s' has rank %d, not %d (or %d with a leading batch dim)", name, d->rank, rank_lo,
			         rank_hi);
		else
			snprintf(why, n, "parameter '%s' has rank %d, not %d", name, d->rank, rank_lo);
		return false;
	}
	return true;
}

FamBuf *fam_buf(const FamRun *r, const char *name)
{
	int i = fam_param(r->k, name);
	return i < 0 ? NULL : &r->buf[i];
}

void fam_field(FamReport *rep, const char *key, long long val)
{
	if (rep->nfields >= (int)NELEM(rep->fields))
		return;
	FamField *f = &rep->fields[rep->nfields++];
	snprintf(f->key, sizeof f->key, "%s", key);
	f->val = val;
}

int *fam_sample_rows(long long n, int want, uint64_t seed, int *nrows)
{
	int m = n <= want ? (int)n : want;
	int *rows = xmalloc(sizeof(int) * (size_t)(m > 0 ? m : 1));
	uint64_t st = seed;
	for (int i = 0; i < m; i++)
		rows[i] = m == n ? i : i == 0 ? 0 : i == 1 ? (int)(n - 1) : (int)(oracle_splitmix64(&st) % (uint64_t)n);
	*nrows = m;
	return rows;
}
