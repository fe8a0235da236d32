/*
 * library.c — the generator of `cake library FAMILY -o DIR`.
 *
 * 1. The family's kernels go through the pipeline up to the jit (lib_load with
 *    CAKE_JIT): every .cake file the dispatcher names is parsed, checked,
 *    verified, derived, lowered and compiled by NVRTC to an sm_90a cubin; a
 *    finding, a spill (CK-LOW-014) or a missing kernel stops the generation.
 * 2. Each Plan becomes an RtKernel descriptor in C (the ABI the launch layer
 *    reads, src/gpu/launch.c, written out): its tensor maps (dtype, rank, box,
 *    swizzle), its arguments in Plan.args order, block, shared memory, cluster,
 *    persistence, and two generated functions, its `domain` and its geometry
 *    (tensor-map extents and strides and grid extents as C over the dims,
 *    printed by lower_expr_c from the Plan's Exprs). What the runtime does not
 *    bind is refused here: scalar parameters other than i32 ones named after a
 *    family value (the dispatcher computes those, e.g. gemm's IPC, and passes
 *    them like dims) and f32 ones named after a family float value (kda's
 *    lower_bound, passed from the call), a dim the family does not know,
 *    a tensor map of an element type without a TMA data type.
 * 3. The C source is the family's public header, the runtime, the dispatcher
 *    helpers, the --domain clauses, the cubins as byte arrays (one per .cake
 *    file), the descriptors, the dispatcher and the public functions: one
 *    translation unit, compiled by the system C compiler (`$CC`, default cc)
 *    with -shared -fPIC -fvisibility=hidden, linking only libdl, libpthread
 *    and libm. No CUDA header or library is needed to build or link it.
 * 4. Next to it: include/cake_FAMILY.h, lib/libcake_FAMILY.so (a link into
 *    cake_kernels/, where the Python package loads it from),
 *    lib/pkgconfig/cake_FAMILY.pc, and the Python package (pyproject.toml with
 *    its in-tree build backend, the modules in cake_kernels/), so `pip install DIR` works
 *    offline.
 *
 * Why cubins and not CUDA source JIT-compiled at first use: the kernels only
 * run on sm_90a, so a cubin loses no portability; the user needs no NVRTC (a
 * 100 MB toolkit piece absent from most inference images) and no writable
 * cache; the first call costs a module load instead of seconds of NVRTC; and
 * what runs is exactly the binary whose ptxas report (0 spills) was checked here.
 */
#include "lib.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void lib_c_string(StrBuf *o, const char *s)
{
	sb_putc(o, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_printf(o, "\\%c", *p);
		else if (*p == '\n')
			sb_puts(o, "\\n");
		else if (*p < 32 || *p >= 127)
			sb_printf(o, "\\%03o", *p);
		else
			sb_putc(o, (char)*p);
	}
	sb_putc(o, '"');
}

static int gen_fail(char *err, size_t n, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int gen_fail(char *err, size_t n, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return rc;
}

/* C text of e over the kernel's dims; false when the lowering cannot spell it. */
static bool expr_text(StrBuf *o, const Expr *e, const Kernel *k)
{
	StrBuf t = {0};
	lower_expr_c(&t, e, k);
	bool ok = !strstr(sb_str(&t), "unsupported");
	sb_putc(o, '(');
	sb_puts(o, sb_str(&t));
	sb_putc(o, ')');
	sb_free(&t);
	return ok;
}

static int tmap_dtype(DType dt)
{
	switch (dt) {
	case DT_BF16: return 9;
	case DT_F16: return 6;
	case DT_F32: return 7;
	case DT_I32: return 3;
	default: return -1;
	}
}

static int tmap_swizzle(Swizzle s)
{
	return s == SWZ_128B ? 3 : s == SWZ_64B ? 2 : s == SWZ_32B ? 1 : 0;
}

/* `const long long DIM = fd[i];` for every dim of k. */
static void emit_dims(StrBuf *o, const LibFamily *fam, const Kernel *k)
{
	for (int d = 0; d < k->ndims; d++)
		sb_printf(o, "\tconst long long %s = fd[%d];\n\t(void)%s;\n", k->dims[d], lib_dim_index(fam, k->dims[d]),
		          k->dims[d]);
}

/* The descriptor pieces of kernel kid; false with err set when it cannot be bound. */
static bool emit_kernel(StrBuf *o, const LibSet *ls, int kid, char *err, size_t n)
{
	const LibFamily *fam = ls->fam;
	const Kernel *k = ls->kern[kid];
	const Plan *p = ls->plan[kid];
	if (!p) {
		gen_fail(err, n, 1, "kernel '%s' has no plan", k->name);
		return false;
	}
	if (k->nparams > 16 || p->ntmaps > 8 || p->nargs > 32) {
		gen_fail(err, n, 1, "kernel '%s' has more parameters, tensor maps or arguments than the runtime binds "
		         "(16, 8, 32)", k->name);
		return false;
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i]->space != SP_GLOBAL &&
		    !(k->params[i]->dt == DT_I32 && lib_dim_index(fam, k->params[i]->name) >= 0) &&
		    !(k->params[i]->dt == DT_F32 && lib_fval_index(fam, k->params[i]->name) >= 0)) {
			gen_fail(err, n, 1, "kernel '%s' has a scalar parameter '%s': the library binds tensors, dims, i32 "
			         "scalars named after one of its family's values and f32 scalars named after one of its float "
			         "values", k->name, k->params[i]->name);
			return false;
		}
	sb_printf(o, "/* ---- kernel %s (%s): %d threads, %lld bytes of shared memory, %s grid ---- */\n", k->name,
	          fam->files[kid], p->block_threads, p->smem_bytes, p->persistent ? "persistent" : "one CTA per tile");
	sb_printf(o, "static const char *const lib_params_%d[] = {", kid);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i]->space == SP_GLOBAL)
			sb_printf(o, "%s\"%s\"", i ? ", " : "", k->params[i]->name);
		else   /* a scalar: no buffer to bind (its argument comes from the family values) */
			sb_printf(o, "%sNULL", i ? ", " : "");
	sb_puts(o, "};\n");
	if (p->ntmaps) {
		sb_printf(o, "static const RtTmapDesc lib_tmaps_%d[] = {\n", kid);
		for (int t = 0; t < p->ntmaps; t++) {
			const PlanTmap *tm = &p->tmaps[t];
			int pi = -1;
			for (int i = 0; i < k->nparams; i++)
				if (k->params[i] == tm->param_decl)
					pi = i;
			int dt = tmap_dtype(tm->dt);
			if (pi < 0 || dt < 0 || tm->rank > 5) {
				gen_fail(err, n, 1, "kernel '%s': the tensor map of '%s' cannot be encoded (element type or rank)", k->name,
				         tm->param);
				return false;
			}
			sb_printf(o, "\t{%d, %d, %d, %d, {", pi, dt, tm->rank, tmap_swizzle(tm->swizzle));
			for (int d = 0; d < tm->rank; d++)
				sb_printf(o, "%s%du", d ? ", " : "", tm->box[d]);
			sb_printf(o, "}},   /* %s */\n", tm->param);
		}
		sb_puts(o, "};\n");
	}
	sb_printf(o, "static const RtArgDesc lib_args_%d[] = {", kid);
	for (int a = 0; a < p->nargs; a++) {
		const PlanArg *pa = &p->args[a];
		switch (pa->kind) {
		case ARG_TMAP: sb_printf(o, "%s{RT_ARG_TMAP, %d}", a ? ", " : "", pa->index); break;
		case ARG_PTR: sb_printf(o, "%s{RT_ARG_PTR, %d}", a ? ", " : "", pa->index); break;
		case ARG_DIM: sb_printf(o, "%s{RT_ARG_DIM, %d}", a ? ", " : "", lib_dim_index(fam, k->dims[pa->index])); break;
		case ARG_SCALAR:   /* an i32 scalar named after a family value (checked above): passed like a dim; */
			if (k->params[pa->index]->dt == DT_F32)   /* an f32 one: the family's float value of its name */
				sb_printf(o, "%s{RT_ARG_F32, %d}", a ? ", " : "", lib_fval_index(fam, k->params[pa->index]->name));
			else
				sb_printf(o, "%s{RT_ARG_DIM, %d}", a ? ", " : "", lib_dim_index(fam, k->params[pa->index]->name));
			break;
		default:
			gen_fail(err, n, 1, "kernel '%s': argument '%s' is a scalar or debug argument the library does not pass",
			         k->name, pa->name);
			return false;
		}
	}
	sb_puts(o, "};\n");
	/* the kernel's domain */
	sb_printf(o, "static int lib_domain_%d(const long long *fd, const char **failed)\n{\n", kid);
	emit_dims(o, fam, k);
	for (int i = 0; i < k->ndecls; i++) {
		const Decl *d = k->decls[i];
		if (d->kind != D_DOMAIN)
			continue;
		for (int j = 0; j < d->nexprs; j++) {
			StrBuf t = {0};
			lower_expr_c(&t, d->exprs[j], k);
			sb_puts(o, "\tif (!");
			if (!expr_text(o, d->exprs[j], k)) {
				sb_free(&t);
				gen_fail(err, n, 1, "kernel '%s': its domain constraint '%s' cannot be written in C", k->name, sb_str(&t));
				return false;
			}
			sb_puts(o, ") {\n\t\t*failed = ");
			lib_c_string(o, sb_str(&t));
			sb_puts(o, ";\n\t\treturn 0;\n\t}\n");
			sb_free(&t);
		}
	}
	sb_puts(o, "\t*failed = 0;\n\treturn 1;\n}\n");
	/* its geometry */
	sb_printf(o, "static int lib_geom_%d(const long long *fd, RtGeom *g)\n{\n", kid);
	emit_dims(o, fam, k);
	bool ok = true;
	for (int t = 0; t < p->ntmaps; t++) {
		const PlanTmap *tm = &p->tmaps[t];
		for (int d = 0; d < tm->rank; d++) {
			sb_printf(o, "\tg->gdims[%d][%d] = ", t, d);
			ok &= expr_text(o, tm->gdims[d], k);
			sb_puts(o, ";\n");
			if (d > 0) {
				sb_printf(o, "\tg->gstrides[%d][%d] = ", t, d);
				ok &= expr_text(o, tm->gstrides[d], k);
				sb_puts(o, ";\n");
			}
		}
	}
	for (int a = 0; a < 3; a++) {
		sb_printf(o, "\tg->grid[%d] = ", a);
		if (p->grid[a])
			ok &= expr_text(o, p->grid[a], k);
		else
			sb_puts(o, "1");
		sb_puts(o, ";\n");
	}
	sb_puts(o, "\treturn g->grid[0] > 0 && g->grid[1] > 0 && g->grid[2] > 0 ? 0 : -1;\n}\n\n");
	if (!ok) {
		gen_fail(err, n, 1, "kernel '%s': a tensor-map or grid extent cannot be written in C", k->name);
		return false;
	}
	return true;
}

static void emit_cubin(StrBuf *o, int u, const JitResult *j, const char *file)
{
	sb_printf(o, "/* %s: %zu bytes of sm_90a cubin */\nstatic const unsigned char lib_cubin_%d[] __attribute__((aligned(16))) = {",
	          file, j->cubin_len, u);
	const unsigned char *b = j->cubin;
	for (size_t i = 0; i < j->cubin_len; i++)
		sb_printf(o, "%s%u,", i % 24 ? "" : "\n", b[i]);
	sb_puts(o, "\n};\n\n");
}

static bool put_asset(StrBuf *o, const char *name, char *err, size_t n)
{
	size_t len = 0;
	const char *t = lib_asset(name, &len);
	if (!t) {
		gen_fail(err, n, 1, "internal: asset %s is not embedded", name);
		return false;
	}
	sb_printf(o, "/* ======== %s ======== */\n", name);
	sb_putn(o, t, len);
	sb_puts(o, "\n");
	return true;
}

/* Write text to dir/rel (creating folders). */
static bool write_out(const char *dir, const char *rel, const char *text, size_t len, char *err, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = 0;
		if (mkdir_p(path)) {
			gen_fail(err, n, 2, "cannot create folder '%s': %s", path, strerror(errno));
			return false;
		}
		*slash = '/';
	}
	if (write_file_atomic(path, text, len)) {
		gen_fail(err, n, 2, "cannot write '%s': %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* Append s single-quoted for sh. */
static void sh_quote(StrBuf *o, const char *s)
{
	sb_putc(o, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_puts(o, "'\\''");
		else
			sb_putc(o, *s);
	}
	sb_putc(o, '\'');
}

/* Run cmd through sh, output into out; returns its exit status (-1: could not run). */
static int run_cmd(const char *cmd, StrBuf *out)
{
	StrBuf c = {0};
	sb_printf(&c, "%s 2>&1", cmd);
	FILE *f = popen(sb_str(&c), "r");
	sb_free(&c);
	if (!f)
		return -1;
	char buf[4096];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, f)) > 0)
		sb_putn(out, buf, r);
	int st = pclose(f);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int lib_generate(const LibFamily *fam, const LibGenOptions *o, StrBuf *log, char *err, size_t errlen)
{
	char kdir[PATH_MAX];
	snprintf(kdir, sizeof kdir, "%s", o->kernels_dir ? o->kernels_dir : "");
	if (!o->kernels_dir)
		snprintf(kdir, sizeof kdir, "kernels/%s", fam->name);
	LibConds conds;
	memset(&conds, 0, sizeof conds);
	if (o->domain_file) {
		size_t len = 0;
		char *t = read_file(o->domain_file, &len);
		if (!t)
			return gen_fail(err, errlen, 2, "cannot read --domain '%s': %s", o->domain_file, strerror(errno));
		char e[512];
		bool ok = lib_conds_parse(&conds, t, fam->vars, fam->nvars, e, sizeof e);
		free(t);
		if (!ok)
			return gen_fail(err, errlen, 2, "--domain %s: %s (the %s variables are %s)", o->domain_file, e, fam->name,
			                fam->shape_help);
	}
	LibSet ls;
	StrBuf e = {0};
	int rc = lib_load_with(&ls, fam, kdir, CAKE_JIT, &conds, o->overrides, &e);
	if (rc) {
		gen_fail(err, errlen, rc == GPU_EXIT_NO_DRIVER ? GPU_EXIT_NO_DRIVER : 1, "%s", sb_str(&e));
		sb_free(&e);
		lib_unload(&ls);
		lib_conds_free(&conds);
		return rc == GPU_EXIT_NO_DRIVER ? GPU_EXIT_NO_DRIVER : 1;
	}
	sb_free(&e);
	int major = 0, minor = 0;
	char verr[256];
	jit_nvrtc_version(&major, &minor, verr, sizeof verr);

	StrBuf src = {0};
	bool ok = true;
	sb_printf(&src, "/*\n * cake_%s.c — generated by cake %s (`cake library %s`) from %s: %d kernels, NVRTC %d.%d, sm_90a.\n"
	          " * Do not edit: change the .cake schedules or the dispatcher (src/lib/rt/) and regenerate.\n */\n",
	          fam->name, CAKE_VERSION, fam->name, kdir, fam->nkernels, major, minor);
	for (int i = 0; i < fam->nkernels; i++)
		if (ls.note[i]) {   /* provenance of the kernels taken from a store */
			sb_printf(&src, "/* kernel %s: from the store: ", fam->kernels[i]);
			for (const char *p = ls.note[i]; *p; p++)
				sb_putc(&src, *p == '*' && p[1] == '/' ? '+' : *p);
			sb_puts(&src, " */\n");
		}
	sb_puts(&src, "#define _GNU_SOURCE\n");
	sb_printf(&src, "#define LIB_VERSION \"%s (cake %s, NVRTC %d.%d, sm_90a, %d kernels%s)\"\n", CAKE_VERSION, CAKE_VERSION,
	          major, minor, fam->nkernels, conds.n ? ", --domain clauses" : "");
	sb_printf(&src, "#include \"%s\"\n\n", fam->header);
	ok = ok && put_asset(&src, "cake_rt.inc", err, errlen) && put_asset(&src, "lib_common.inc", err, errlen);
	sb_puts(&src, "/* ======== generated: the --domain clauses, the cubins, the kernel descriptors ======== */\n");
	lib_conds_emit_c(&src, &conds, fam->vars, fam->nvars);
	for (int u = 0; ok && u < ls.nunits; u++) {
		emit_cubin(&src, u, &ls.units[u].jit, ls.unit_file[u]);
		bool from_file = strstr(ls.unit_file[u], ".cake") != NULL;   /* else a store candidate's id */
		sb_printf(log, "cake library: %s%s%s: %zu-byte cubin%s\n", from_file ? kdir : "store candidate ",
		          from_file ? "/" : "", ls.unit_file[u], ls.units[u].jit.cubin_len,
		          ls.units[u].jit.cache_hit ? " (cached)" : "");
		for (int i = 0; i < ls.units[u].jit.nkern; i++) {
			const JitKernelInfo *ki = &ls.units[u].jit.kern[i];
			sb_printf(log, "  %s: %d registers, %d bytes spill stores, %d bytes spill loads\n", ki->name, ki->regs,
			          ki->spill_stores, ki->spill_loads);
		}
	}
	sb_puts(&src, "static const RtModule rt_modules[] = {\n");
	for (int u = 0; ok && u < ls.nunits; u++)
		sb_printf(&src, "\t{\"%s\", lib_cubin_%d, sizeof lib_cubin_%d},\n", ls.unit_file[u], u, u);
	sb_puts(&src, "};\n\n");
	for (int kid = 0; ok && kid < fam->nkernels; kid++)
		ok = emit_kernel(&src, &ls, kid, err, errlen);
	if (ok) {
		sb_puts(&src, "static const RtKernel rt_kernels[] = {\n");
		for (int kid = 0; kid < fam->nkernels; kid++) {
			const Plan *p = ls.plan[kid];
			const Kernel *k = ls.kern[kid];
			char tm[32];
			snprintf(tm, sizeof tm, p->ntmaps ? "lib_tmaps_%d" : "NULL", kid);
			unsigned tmask = 0, pmask = 0;
			for (int i = 0; i < k->nparams; i++) {
				int use = lib_param_use(p, k->params[i]->name);
				tmask |= (use & 1) ? 1u << i : 0;
				pmask |= (use & 2) ? 1u << i : 0;
			}
			sb_printf(&src, "\t{\"%s\", %d, %d, lib_params_%d, %d, %lld, {%d, %d, %d}, %d, 0x%xu, 0x%xu, %d, %s, %d, "
			          "lib_args_%d, lib_domain_%d, lib_geom_%d},\n", k->name, ls.unit_of[kid], k->nparams, kid,
			          p->block_threads, p->smem_bytes, p->cluster[0] > 0 ? p->cluster[0] : 1,
			          p->cluster[1] > 0 ? p->cluster[1] : 1, p->cluster[2] > 0 ? p->cluster[2] : 1, p->persistent ? 1 : 0,
			          tmask, pmask, p->ntmaps, tm, p->nargs, kid, kid, kid);
		}
		sb_puts(&src, "};\n");
		sb_printf(&src, "_Static_assert(sizeof rt_kernels / sizeof rt_kernels[0] == %d, \"kernel table\");\n\n",
		          fam->nkernels);
		sb_puts(&src, "static int lib_kernel_domain(const void *lx, int kid, const long long *fd, const char **failed)\n"
		        "{\n\t(void)lx;\n\treturn rt_kernels[kid].domain(fd, failed);\n}\n\n"
		        "__attribute__((unused)) static int lib_kernel_param_use(const void *lx, int kid, const char *param)\n{\n\t(void)lx;\n"
		        "\tconst RtKernel *k = &rt_kernels[kid];\n\tfor (int i = 0; i < k->nparams; i++)\n"
		        "\t\tif (!strcmp(k->params[i], param))\n"
		        "\t\t\treturn (int)((k->tmap_params >> i) & 1u) | (int)(((k->ptr_params >> i) & 1u) << 1);\n"
		        "\treturn 0;\n}\n\n");
		ok = put_asset(&src, fam->dispatch, err, errlen) && put_asset(&src, fam->api, err, errlen);
	}
	if (!ok) {
		sb_free(&src);
		lib_unload(&ls);
		lib_conds_free(&conds);
		return 1;
	}
	char rel[256];
	size_t hl = 0;
	const char *hdr = lib_asset(fam->header, &hl);
	snprintf(rel, sizeof rel, "include/%s", fam->header);
	ok = write_out(o->out_dir, rel, hdr, hl, err, errlen);
	snprintf(rel, sizeof rel, "src/cake_%s.c", fam->name);
	ok = ok && write_out(o->out_dir, rel, src.s, src.len, err, errlen);
	for (const char *const *pa = lib_python_assets(); ok && *pa; pa++) {
		size_t l = 0;
		const char *t = lib_asset(*pa, &l);
		ok = write_out(o->out_dir, *pa + strlen("python/"), t, l, err, errlen);
	}
	sb_free(&src);
	lib_unload(&ls);
	int nconds = conds.n;
	lib_conds_free(&conds);
	if (!ok)
		return 2;
	char absdir[PATH_MAX];
	if (!realpath(o->out_dir, absdir))
		return gen_fail(err, errlen, 2, "cannot resolve '%s': %s", o->out_dir, strerror(errno));
	StrBuf pc = {0};
	sb_printf(&pc, "prefix=%s\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\n"
	          "Name: cake_%s\nDescription: Cake %s kernels for sm_90a: %s\nVersion: %s\n"
	          "Libs: -L${libdir} -Wl,-rpath,${libdir} -lcake_%s\nLibs.private: -ldl -lpthread -lm\nCflags: -I${includedir}\n",
	          absdir, fam->name, fam->name, fam->summary, CAKE_VERSION, fam->name);
	snprintf(rel, sizeof rel, "lib/pkgconfig/cake_%s.pc", fam->name);
	ok = write_out(o->out_dir, rel, pc.s, pc.len, err, errlen);
	sb_free(&pc);
	if (!ok)
		return 2;
	sb_printf(log, "cake library: wrote %s/src/cake_%s.c, %s/include/%s, %s/lib/pkgconfig/cake_%s.pc, the Python package "
	          "(%s/pyproject.toml)%s\n", o->out_dir, fam->name, o->out_dir, fam->header, o->out_dir, fam->name, o->out_dir,
	          nconds ? "; --domain clauses compiled in" : "");
	if (o->no_compile)
		return 0;
	const char *cc = o->cc ? o->cc : getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	const char *extra = o->cflags ? o->cflags : getenv("CAKE_LIB_CFLAGS") ? getenv("CAKE_LIB_CFLAGS") : "";
	StrBuf cmd = {0}, out = {0}, path = {0};
	sb_printf(&cmd, "%s -std=c11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra %s -I", cc, extra);
	sb_printf(&path, "%s/include", absdir);
	sh_quote(&cmd, sb_str(&path));
	sb_puts(&cmd, " -o ");
	sb_free(&path);
	sb_printf(&path, "%s/cake_kernels/libcake_%s.so", absdir, fam->name);
	sh_quote(&cmd, sb_str(&path));
	sb_putc(&cmd, ' ');
	sb_free(&path);
	sb_printf(&path, "%s/src/cake_%s.c", absdir, fam->name);
	sh_quote(&cmd, sb_str(&path));
	sb_puts(&cmd, " -ldl -lpthread -lm");
	sb_free(&path);
	if (o->verbose)
		sb_printf(log, "cake library: %s\n", sb_str(&cmd));
	int st = run_cmd(sb_str(&cmd), &out);
	if (st != 0) {
		gen_fail(err, errlen, 1, "the C compiler failed (exit %d): %s\n%.3000s", st, sb_str(&cmd), sb_str(&out));
		sb_free(&cmd);
		sb_free(&out);
		return 1;
	}
	if (out.len)
		sb_printf(log, "%s", sb_str(&out));
	sb_free(&cmd);
	sb_free(&out);
	char link[PATH_MAX + 64], target[256];
	snprintf(link, sizeof link, "%s/lib/libcake_%s.so", absdir, fam->name);
	snprintf(target, sizeof target, "../cake_kernels/libcake_%s.so", fam->name);
	unlink(link);
	if (symlink(target, link))
		return gen_fail(err, errlen, 2, "cannot link '%s': %s", link, strerror(errno));
	sb_printf(log, "cake library: built %s/cake_kernels/libcake_%s.so (linked from %s/lib)\n", o->out_dir, fam->name,
	          o->out_dir);
	return 0;
}
