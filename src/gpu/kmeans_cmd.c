/*
 * kmeans_cmd.c — `cake kmeans`: Lloyd's k-means end to end on the GPU with
 * the Cake IR kernels of kernels/kmeans/.
 *
 *   cake kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N]
 *               [--tol T] [--seed S] [--input FILE] [--check-rows N] [--no-check]
 *               [--kernels DIR] [--device N] [--format=text|json]
 *
 * Points are seeded uniform values in [-1, 1], or read with --input from a
 * raw file of exactly B*N*D 16-bit values (bf16 or f16 bits per --dtype).
 *
 * One iteration is three phases, launched back to back on one stream, once
 * per batch each:
 *   assign   kmeans_assign (assign.cake): labels = argmin_c ‖c‖² − 2 x·c,
 *            reading the ‖c‖² vector written by the previous update;
 *   update   Sums and Counts cleared, kmeans_scatter (update_atomic.cake)
 *            adds every point into its cluster's row, kmeans_divide writes
 *            the new centroids (an empty cluster keeps its old one) into the
 *            other buffer of a ping-pong pair, their ‖c‖² and the squared
 *            shift of every centroid;
 *   shift    the host reads the K·B shifts and stops when the largest
 *            centroid movement (a Euclidean norm) is <= --tol.
 * CUDA events bracket the assign and update phases of every iteration; the
 * report gives their median and minimum per iteration (all batches), the
 * number of iterations, whether it converged and the final inertia
 * Σ‖x − c_label‖² (float64 on the host, against the centroids the last
 * labels were computed from).
 *
 * Checks (unless --no-check): after the first iteration the labels of batch
 * 0 are compared with the float64 oracle on --check-rows sampled points
 * (exact, except near-ties within ORACLE_KMEANS_TOL, which are counted and
 * reported), and the new centroids, their norms and shifts with the float64
 * update oracle. A failed check is exit status 1.
 *
 * Bad input is refused before anything is launched: N = 0, K > N, D not a
 * multiple of 8, shapes outside the kernels' `domain` (named), a D the
 * kernels were not written for, and non-finite input values (which would
 * otherwise be assigned silently). Without a GPU driver the command says so
 * in one line (gpu_no_driver_msg) with exit status GPU_EXIT_NO_DRIVER,
 * before any compilation. The whole loop runs in this one process (no
 * isolation child): it is a benchmark and a demonstration, not a verdict
 * on an untrusted candidate; `cake run` is the isolated path.
 */
#include "gpu.h"
#include "../lower/lower.h"
#include "../verify/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One compiled Cake kernel ready to launch. */
typedef struct KmKernel {
	const char *file, *name;
	Kernel *k;
	Plan *p;
	long long dimvals[64];
	char *src;              /* generated CUDA C++ (malloc'd) */
	JitResult jit;
	void *mod, *fn;
	unsigned grid[3], block[3], cluster[3];
	bool batched;           /* the kernel has a dim B: one launch covers every batch */
} KmKernel;

/* The argument block of one launch (tensor maps must stay alive and aligned). */
typedef struct KmArgs {
	GpuTensorMap *maps;
	uint64_t *vals;
	void **args;
} KmArgs;

enum { KM_UPDATE_AUTO, KM_UPDATE_SORTED, KM_UPDATE_ATOMIC };

/* Device buffer bound to a kernel parameter name for one launch. */
typedef struct KmBind {
	const char *name;
	GpuPtr p;
} KmBind;

typedef struct KmOpts {
	long long B, N, D, K;
	bool f16, json, check;
	int update;             /* KM_UPDATE_AUTO, _SORTED or _ATOMIC */
	int iters, check_rows, device;
	double tol;
	uint64_t seed;
	const char *dir;
	const char *input;      /* raw [B,N,D] 16-bit points, or NULL: seeded uniform [-1, 1] */
} KmOpts;

static int km_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "cake kmeans: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: cake kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N] [--tol T]\n"
	                "                   [--seed S] [--input FILE] [--check-rows N] [--no-check] [--kernels DIR]\n"
	                "                   [--update auto|sorted|atomic] [--device N] [--format=text|json]\n");
	return 2;
}

/* "B=32,N=65536,D=128,K=1024" (any order, any subset) into o. */
static int parse_shape(const char *s, KmOpts *o)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		if (!eq || eq - t != 1)
			return km_usage("--shape takes B=..,N=..,D=..,K=.. (got '%s')", s);
		long long v = strtoll(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v < 0)
			return km_usage("--shape: '%s' is not NAME=non-negative integer", t);
		switch (*t) {
		case 'B': o->B = v; break;
		case 'N': o->N = v; break;
		case 'D': o->D = v; break;
		case 'K': o->K = v; break;
		default: return km_usage("--shape: unknown dimension in '%s' (B, N, D or K)", t);
		}
	}
	return 0;
}

static int parse_km_args(int argc, char **argv, KmOpts *o)
{
	*o = (KmOpts){.B = 1, .N = 65536, .D = 128, .K = 1024, .check = true, .iters = 20, .check_rows = 4096,
	              .tol = 1e-4, .seed = 1, .dir = "kernels/kmeans"};
	for (int i = 1; i < argc; i++) {
		const char *v, *a = argv[i];
		char *end;
		if ((v = cli_optval(argc, argv, &i, "--shape", NULL))) {
			int st = parse_shape(v, o);
			if (st)
				return st;
		} else if ((v = cli_optval(argc, argv, &i, "--dtype", NULL))) {
			if (strcmp(v, "bf16") && strcmp(v, "f16") && strcmp(v, "fp16"))
				return km_usage("--dtype is bf16 or f16, not '%s'", v);
			o->f16 = v[0] == 'f';
		} else if ((v = cli_optval(argc, argv, &i, "--iters", NULL))) {
			o->iters = (int)strtol(v, &end, 10);
			if (*end || o->iters < 1 || o->iters > 100000)
				return km_usage("--iters takes 1..100000, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--tol", NULL))) {
			o->tol = strtod(v, &end);
			if (*end || !(o->tol >= 0))
				return km_usage("--tol takes a non-negative number, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--seed", NULL))) {
			o->seed = strtoull(v, &end, 10);
			if (*end || !*v)
				return km_usage("--seed takes an integer, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--check-rows", NULL))) {
			o->check_rows = (int)strtol(v, &end, 10);
			if (*end || o->check_rows < 1)
				return km_usage("--check-rows takes a positive integer, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--device", NULL))) {
			o->device = (int)strtol(v, &end, 10);
			if (*end || o->device < 0)
				return km_usage("--device takes a GPU ordinal, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--update", NULL))) {
			if (!strcmp(v, "auto"))
				o->update = KM_UPDATE_AUTO;
			else if (!strcmp(v, "sorted"))
				o->update = KM_UPDATE_SORTED;
			else if (!strcmp(v, "atomic"))
				o->update = KM_UPDATE_ATOMIC;
			else
				return km_usage("--update is auto, sorted or atomic, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--kernels", NULL))) {
			o->dir = v;
		} else if ((v = cli_optval(argc, argv, &i, "--input", NULL))) {
			o->input = v;
		} else if ((v = cli_optval(argc, argv, &i, "--format", NULL))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return km_usage("--format is text or json, not '%s'", v);
			o->json = v[0] == 'j';
		} else if (!strcmp(a, "--no-check")) {
			o->check = false;
		} else
			return km_usage("unknown argument '%s'", a);
	}
	return 0;
}

/* Refusals that need no kernel: the shape must mean a k-means problem. */
static int check_shape(const KmOpts *o)
{
	const char *why = NULL;
	char msg[256];
	if (o->N == 0)
		why = "N = 0: there are no points to cluster";
	else if (o->B == 0)
		why = "B = 0: there is no batch to cluster";
	else if (o->K == 0)
		why = "K = 0: ask for at least one cluster";
	else if (o->K > o->N) {
		snprintf(msg, sizeof msg, "K = %lld clusters > N = %lld points: some clusters could never receive a point; use K <= N",
		         o->K, o->N);
		why = msg;
	} else if (o->D == 0 || o->D % 8) {
		snprintf(msg, sizeof msg, "D = %lld is not a positive multiple of 8 (16-byte rows for TMA and wgmma k-steps); "
		         "pad the points and centroids with zero columns", o->D);
		why = msg;
	}
	if (why)
		fprintf(stderr, "cake kmeans: %s\n", why);
	return why ? 2 : 0;
}

/* Parse, check, verify, derive and lower kernel `name` of `file`; bind dims
 * N and K; check its domain. Diagnostics go to stderr. */
static bool km_prepare(Ctx *c, SourceSet *ss, DiagList *dl, KmKernel *kk, const KmOpts *o, bool probe)
{
	int fi = src_load(ss, kk->file);
	if (fi < 0) {
		if (!probe)
			fprintf(stderr, "cake kmeans: cannot read '%s' (pass --kernels DIR, the folder holding the kmeans .cake files)\n",
			        kk->file);
		return false;
	}
	int before = dl->nerr;
	Program *prog = parse_file(c, fi);
	if (dl->nerr == before)
		sema_program(c, prog);
	if (dl->nerr == before)
		for (int i = 0; i < prog->nkernels; i++)
			if (!strcmp(prog->kernels[i]->name, kk->name)) {
				verify_kernel(c, prog->kernels[i]);
				kk->k = prog->kernels[i];
			}
	if (dl->nerr == before && !kk->k) {
		if (!probe)
			fprintf(stderr, "cake kmeans: '%s' has no kernel named '%s'\n", kk->file, kk->name);
		return false;
	}
	if (dl->nerr == before)
		kk->p = derive_plan(c, kk->k);
	StrBuf cu = {0};
	if (dl->nerr == before && kk->p && lower_sm90(c, kk->k, kk->p, &cu, false))
		kk->src = strdup(sb_str(&cu));
	sb_free(&cu);
	if (!kk->src) {
		StrBuf b = {0};
		diag_sort(dl);
		diag_print_text(&b, ss, dl, false);
		fwrite(b.s, 1, b.len, stderr);
		sb_free(&b);
		fprintf(stderr, "cake kmeans: kernel '%s' of '%s' cannot be lowered; nothing was run\n", kk->name, kk->file);
		return false;
	}
	Kernel *k = kk->k;
	for (int d = 0; d < k->ndims && d < 64; d++) {
		const char *n = k->dims[d];
		kk->dimvals[d] = !strcmp(n, "N") ? o->N : !strcmp(n, "K") ? o->K : !strcmp(n, "B") ? o->B : 0;
		kk->batched |= !strcmp(n, "B");
		if (!kk->dimvals[d]) {
			fprintf(stderr, "cake kmeans: kernel '%s' has a dim '%s' that cake kmeans does not bind (B, N and K only)\n",
			        k->name, n);
			return false;
		}
	}
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind == D_CONST && d->name && !strcmp(d->name, "D") && d->value && d->value->is_const &&
		    d->value->cval != o->D) {
			fprintf(stderr, "cake kmeans: kernel '%s' is written for D = %lld, not D = %lld (no D = %lld variant yet)\n",
			        k->name, d->value->cval, o->D, o->D);
			return false;
		}
	}
	const char *failed = NULL;
	if (!eval_domain(k, kk->dimvals, &failed)) {
		if (probe) {
			free((void *)failed);
			return false;
		}
		fprintf(stderr, "cake kmeans: shape N=%lld K=%lld is outside the domain of '%s': '%s' is false "
		        "(pad N and K to the kernel's tile multiples)\n", o->N, o->K, k->name, failed ? failed : "?");
		free((void *)failed);
		return false;
	}
	for (int a = 0; a < 3; a++) {
		long long e = 1;
		if (kk->p->grid[a] && (!eval_expr(kk->p->grid[a], k, kk->dimvals, &e) || e < 1 || e > 0x7fffffff)) {
			fprintf(stderr, "cake kmeans: grid extent %d of '%s' is not a positive 31-bit integer\n", a, k->name);
			return false;
		}
		kk->grid[a] = (unsigned)e;
		kk->cluster[a] = kk->p->cluster[a] > 0 ? (unsigned)kk->p->cluster[a] : 1;
	}
	kk->block[0] = (unsigned)kk->p->block_threads;
	kk->block[1] = kk->block[2] = 1;
	return true;
}

/* NVRTC + module load on the open device. */
static bool km_load(GpuDev *g, KmKernel *kk)
{
	char err[512] = "";
	JitOptions jo = {0};
	jo.arch = target_info(kk->p->target)->arch;
	if (jit_compile(kk->src, kk->name, &jo, &kk->jit, err, sizeof err) != JIT_OK) {
		fprintf(stderr, "cake kmeans: compiling '%s': %s\n%s", kk->name, err, kk->jit.log ? kk->jit.log : "");
		return false;
	}
	if (gpu_module_load(g, kk->jit.cubin, &kk->mod) || gpu_module_func(g, kk->mod, kk->p->name, &kk->fn) ||
	    gpu_func_set_smem(g, kk->fn, (int)kk->p->smem_bytes)) {
		fprintf(stderr, "cake kmeans: loading '%s': %s\n", kk->name, g->err);
		return false;
	}
	if (kk->p->persistent) {
		long long t = (long long)kk->grid[0] * kk->grid[1] * kk->grid[2];
		kk->grid[0] = (unsigned)(t < g->sm_count ? t : g->sm_count);
		kk->grid[1] = kk->grid[2] = 1;
	}
	return true;
}

/* Build the argument block of kk with parameters bound by name. */
static bool km_args(GpuDev *g, const KmKernel *kk, const KmBind *bind, int nbind, KmArgs *a)
{
	const Plan *p = kk->p;
	const Kernel *k = kk->k;
	a->maps = aligned_alloc(64, sizeof(GpuTensorMap) * (size_t)(p->ntmaps > 0 ? p->ntmaps : 1));
	a->vals = xcalloc((size_t)p->nargs + 1, sizeof *a->vals);
	a->args = xcalloc((size_t)p->nargs + 1, sizeof *a->args);
	if (!a->maps)
		return false;
	for (int i = 0; i < p->nargs; i++) {
		const PlanArg *pa = &p->args[i];
		const char *pname = pa->kind == ARG_TMAP ? p->tmaps[pa->index].param : pa->kind == ARG_PTR ? k->params[pa->index]->name : NULL;
		GpuPtr ptr = 0;
		bool found = pname == NULL;
		for (int b = 0; pname && b < nbind; b++)
			if (!strcmp(bind[b].name, pname))
				ptr = bind[b].p, found = true;
		if (!found) {
			fprintf(stderr, "cake kmeans: kernel '%s' has a parameter '%s' that cake kmeans does not know\n", kk->name, pname);
			return false;
		}
		switch (pa->kind) {
		case ARG_TMAP: {
			const PlanTmap *tm = &p->tmaps[pa->index];
			uint64_t dims[MAX_RANK], strides[MAX_RANK];
			uint32_t box[MAX_RANK];
			for (int d = 0; d < tm->rank; d++) {
				long long v = 0;
				eval_expr(tm->gdims[d], k, kk->dimvals, &v);
				dims[d] = (uint64_t)v;
				box[d] = (uint32_t)tm->box[d];
				if (d > 0) {
					eval_expr(tm->gstrides[d], k, kk->dimvals, &v);
					strides[d - 1] = (uint64_t)v;
				}
			}
			int dt = tm->dt == DT_BF16 ? GPU_TMAP_BF16 : tm->dt == DT_F16 ? GPU_TMAP_F16 : tm->dt == DT_F32 ? GPU_TMAP_F32 : GPU_TMAP_U8;
			int sw = tm->swizzle == SWZ_128B ? GPU_SWZ_128B : tm->swizzle == SWZ_64B ? GPU_SWZ_64B
			       : tm->swizzle == SWZ_32B ? GPU_SWZ_32B : GPU_SWZ_NONE;
			if (gpu_tmap_encode(g, &a->maps[pa->index], dt, tm->rank, ptr, dims, strides, box, sw)) {
				fprintf(stderr, "cake kmeans: tensor map of '%s' for '%s': %s\n", tm->param, kk->name, g->err);
				return false;
			}
			a->args[i] = &a->maps[pa->index];
			break;
		}
		case ARG_PTR:
			a->vals[i] = ptr;
			a->args[i] = &a->vals[i];
			break;
		case ARG_DIM: {
			int32_t v = (int32_t)kk->dimvals[pa->index];
			memcpy(&a->vals[i], &v, 4);
			a->args[i] = &a->vals[i];
			break;
		}
		default:
			fprintf(stderr, "cake kmeans: kernel '%s' takes a scalar parameter; cake kmeans binds none\n", kk->name);
			return false;
		}
	}
	return true;
}

static void km_args_free(KmArgs *a)
{
	free(a->maps);
	free(a->vals);
	free(a->args);
}

/* Launches per phase: one for a batched kernel, else one per batch (argument
 * block b binds the buffers at batch b's offset). */
static long long km_launches(const KmKernel *kk, long long B)
{
	return kk->batched ? 1 : B;
}

static int km_launch(GpuDev *g, const KmKernel *kk, KmArgs *a)
{
	return gpu_launch(g, kk->fn, kk->grid, kk->block, kk->cluster, (unsigned)kk->p->smem_bytes, a->args);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ‖c‖² per centroid of one batch, from the 16-bit values the GPU sees. */
static void host_norms(const uint16_t *C, long long K, long long D, bool f16, float *out)
{
	for (long long j = 0; j < K; j++) {
		double s = 0;
		for (long long d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(C[j * D + d], f16);
			s += v * v;
		}
		out[j] = (float)s;
	}
}

/* Everything the loop allocates, for one cleanup path. */
typedef struct KmRun {
	uint16_t *hX, *hC, *hC2;
	float *hCn, *hSh, *hCn2;
	int32_t *hLab;
	GpuPtr X, C[2], Cn, Lab, Sums, Cnt, Sh, Off, Cur, Ord;
	KmArgs *aa[2], *as, *ad[2], au[4];   /* au: hist, scan, fill, segsum (sorted update) */
	double *t_assign, *t_update, *t_step[5];   /* t_step: the sorted update's steps */
} KmRun;

/* Check iteration 0 on batch 0: labels against the float64 assignment
 * oracle, new centroids / norms / shifts against the update oracle. */
static bool km_check(GpuDev *g, const KmOpts *o, KmRun *R, int cur, StrBuf *rep, bool *ok)
{
	long long N = o->N, K = o->K, D = o->D;
	if (gpu_dtoh(g, R->hC2, R->C[cur ^ 1], sizeof(uint16_t) * (size_t)(K * D)) ||
	    gpu_dtoh(g, R->hCn2, R->Cn, sizeof(float) * (size_t)K) || gpu_dtoh(g, R->hSh, R->Sh, sizeof(float) * (size_t)K)) {
		fprintf(stderr, "cake kmeans: reading results: %s\n", g->err);
		return false;
	}
	int nrows = N < o->check_rows ? (int)N : o->check_rows;
	int *rows = xmalloc(sizeof(int) * (size_t)nrows);
	uint64_t st = o->seed ^ 0x5151u;
	for (int i = 0; i < nrows; i++)
		rows[i] = nrows == N ? i : i == 0 ? 0 : i == 1 ? (int)N - 1 : (int)(oracle_splitmix64(&st) % (uint64_t)N);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	KmeansAssignCheck ac;
	long long bad = oracle_kmeans_assign(R->hX, R->hC, o->f16, NULL, (int)K, (int)D, R->hLab, rows, nrows,
	                                     ORACLE_KMEANS_TOL, (int)(ncpu > 0 ? ncpu : 1), &ac);
	free(rows);
	double *ref = malloc(sizeof(double) * (size_t)(K * D)), *am = malloc(sizeof(double) * (size_t)(K * D));
	long long *cnt = malloc(sizeof(long long) * (size_t)K);
	if (bad < 0 || !ref || !am || !cnt) {
		free(ref), free(am), free(cnt);
		fprintf(stderr, "cake kmeans: host out of memory for the oracles\n");
		return false;
	}
	long long outl = oracle_kmeans_update(R->hX, o->f16, R->hLab, (int)N, (int)D, (int)K, R->hC, ref, cnt, am);
	KmeansUpdateCheck uc;
	long long ubad = oracle_kmeans_update_check(R->hC2, o->f16, ref, am, cnt, R->hC, (int)K, (int)D, ORACLE_KMEANS_TOL, &uc);
	/* norms and shifts of the centroids the GPU wrote, in float64 */
	long long nbad_n = 0, nbad_s = 0;
	for (long long j = 0; j < K; j++) {
		double nn = 0, sh = 0;
		for (long long d = 0; d < D; d++) {
			double v = oracle_elt_to_f32(R->hC2[j * D + d], o->f16), w = oracle_elt_to_f32(R->hC[j * D + d], o->f16);
			nn += v * v;
			sh += (v - w) * (v - w);
		}
		nbad_n += !(fabs(R->hCn2[j] - nn) <= 1e-5 * (1 + nn));
		nbad_s += !(fabs(R->hSh[j] - sh) <= 1e-5 * (1 + nn));
	}
	free(ref), free(am), free(cnt);
	*ok = bad == 0 && outl == 0 && ubad == 0 && nbad_n == 0 && nbad_s == 0 && ac.nan_points == 0;
	if (o->json)
		sb_printf(rep, ",\"check\":{\"ok\":%s,\"points\":%lld,\"mismatches\":%lld,\"ties_excused\":%lld,\"nan_points\":%lld,"
		          "\"labels_out_of_range\":%lld,\"update_bad\":%lld,\"empty_clusters\":%lld,\"update_rel_err\":%.3e,"
		          "\"norm_bad\":%lld,\"shift_bad\":%lld}", *ok ? "true" : "false", ac.checked, ac.mismatches,
		          ac.ties_excused, ac.nan_points, outl, ubad, uc.empty, isfinite(uc.rel_err) ? uc.rel_err : -1.0,
		          nbad_n, nbad_s);
	else {
		sb_printf(rep, "  check:   iteration 1, batch 0: %lld points vs float64 nearest centroid: %lld mismatches, "
		          "%lld near-ties excused (gap <= %.1e x scale), %lld NaN points\n", ac.checked, ac.mismatches,
		          ac.ties_excused, ORACLE_KMEANS_TOL, ac.nan_points);
		if (ac.first_bad >= 0)
			sb_printf(rep, "           first mismatch: point %lld labelled %d, nearest is %d (distance gap %.3e)\n",
			          ac.first_bad, ac.first_bad_out, ac.first_bad_ref, ac.first_bad_gap);
		sb_printf(rep, "           update vs float64 means: %lld bad elements (rel err %.3e, %lld empty clusters kept, "
		          "%lld changed), %lld labels out of range, %lld bad norms, %lld bad shifts\n", ubad, uc.rel_err, uc.empty,
		          uc.empty_changed, outl, nbad_n, nbad_s);
		if (uc.first_bad >= 0)
			sb_printf(rep, "           first bad centroid element: flat %lld got %g, expected %g\n", uc.first_bad,
			          uc.first_bad_out, uc.first_bad_ref);
	}
	return true;
}

/* Open the GPU; without one print the runner's one-line message, *status = 69. */
static bool km_open(GpuDev *g, const KmOpts *o, int *status)
{
	int rc = gpu_open(g, o->device);
	if (rc == GPU_NO_DRIVER || rc == GPU_NO_DEVICE) {
		fprintf(stderr, "cake: %s\n", rc == GPU_NO_DRIVER ? gpu_no_driver_msg() : g->err);
		*status = GPU_EXIT_NO_DRIVER;
		return false;
	}
	if (rc) {
		fprintf(stderr, "cake kmeans: %s\n", g->err);
		return false;
	}
	return true;
}

/* --input FILE: exactly n 16-bit values (bf16 or f16 bits, little-endian), [B, N, D]. */
static bool read_input(const char *path, uint16_t *dst, size_t n, const KmOpts *o)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cake kmeans: cannot read --input '%s'\n", path);
		return false;
	}
	size_t got = fread(dst, sizeof(uint16_t), n, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != n || extra != EOF) {
		fprintf(stderr, "cake kmeans: --input '%s' must hold exactly B*N*D = %zu %s values (%zu bytes)%s\n", path, n,
		        o->f16 ? "f16" : "bf16", n * 2, got != n ? "; it is shorter" : "; it is longer");
		return false;
	}
	return true;
}

int kmeans_main(int argc, char **argv)
{
	KmOpts o;
	int st = parse_km_args(argc, argv, &o);
	if (st || (st = check_shape(&o)))
		return st;
	long long B = o.B, N = o.N, D = o.D, K = o.K;
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	ctx_init(&c, &ss, &dl);
	/* ks: 0 assign, 1 scatter, 2 divide (update_atomic*.cake); 3 hist, 4 scan, 5 fill,
	 * 6 segsum (update_sorted.cake, the sorted update) */
	KmKernel ks[7];
	memset(ks, 0, sizeof ks);
	char path[7][512];
	snprintf(path[0], sizeof path[0], "%s/%s", o.dir, o.f16 ? "assign_f16.cake" : "assign.cake");
	snprintf(path[1], sizeof path[1], "%s/%s", o.dir, o.f16 ? "update_atomic_f16.cake" : "update_atomic.cake");
	snprintf(path[2], sizeof path[2], "%s", path[1]);
	for (int i = 3; i < 7; i++)
		snprintf(path[i], sizeof path[i], "%s/update_sorted.cake", o.dir);
	/* kernel names: kmeans_<phase>[_d64][_f16] (the D = 64 variants sit in the same files);
	 * the scan is written per cluster count: kmeans_scan_k<K> */
	char names[7][64];
	const char *phase[3] = {"assign", "scatter", "divide"};
	for (int i = 0; i < 3; i++)
		snprintf(names[i], sizeof names[i], "kmeans_%s%s%s", phase[i], D == 64 ? "_d64" : "", o.f16 ? "_f16" : "");
	snprintf(names[3], sizeof names[3], "kmeans_hist");
	snprintf(names[4], sizeof names[4], "kmeans_scan_k%lld", K);
	snprintf(names[5], sizeof names[5], "kmeans_fill");
	snprintf(names[6], sizeof names[6], "kmeans_segsum%s%s", D == 64 ? "_d64" : "", o.f16 ? "_f16" : "");
	KmRun R;
	memset(&R, 0, sizeof R);
	GpuDev g;
	memset(&g, 0, sizeof g);
	bool gpu_opened = false;
	void *ev[4] = {NULL, NULL, NULL, NULL};   /* assign start, assign end, update start, update end */
	void *evs[4] = {NULL, NULL, NULL, NULL};   /* sorted update: after clear+hist, scan, fill, segsum (ev[3] ends the divide) */
	int status = 1;
	StrBuf rep = {0};
	for (int i = 0; i < 7; i++) {
		ks[i].file = path[i];
		ks[i].name = names[i];
	}
	/* the sorted update when its kernels exist for this shape (--update auto), else the atomic one */
	bool sorted = o.update != KM_UPDATE_ATOMIC;
	for (int i = 3; i < 7 && sorted; i++)
		if (!km_prepare(&c, &ss, &dl, &ks[i], &o, o.update == KM_UPDATE_AUTO)) {
			if (o.update == KM_UPDATE_SORTED || dl.nerr)
				goto out;   /* asked for, or a kernel that exists but does not compile: reported */
			sorted = false;
			for (int q = 3; q < 7; q++) {   /* nothing of the sorted update is compiled or loaded */
				free(ks[q].src);
				ks[q].src = NULL;
			}
		}
	for (int i = 0; i < 3; i++)
		if ((i != 1 || !sorted) && !km_prepare(&c, &ss, &dl, &ks[i], &o, false))
			goto out;
	if (sorted)
		for (int i = 3; i < 7; i++)
			if (!ks[i].batched) {
				fprintf(stderr, "cake kmeans: the sorted update needs batched kernels (a dim B); '%s' has none\n", ks[i].name);
				goto out;
			}

	/* the data: seeded, or --input; checked for non-finite values before any launch */
	size_t nx = (size_t)(B * N * D), nc = (size_t)(B * K * D);
	R.hX = malloc(sizeof(uint16_t) * nx);
	R.hC = malloc(sizeof(uint16_t) * nc);
	R.hC2 = malloc(sizeof(uint16_t) * (size_t)(K * D));
	R.hCn = malloc(sizeof(float) * (size_t)(B * K));
	R.hCn2 = malloc(sizeof(float) * (size_t)K);
	R.hSh = malloc(sizeof(float) * (size_t)(B * K));
	R.hLab = malloc(sizeof(int32_t) * (size_t)(B * N));
	R.t_assign = xcalloc((size_t)o.iters, sizeof(double));
	R.t_update = xcalloc((size_t)o.iters, sizeof(double));
	for (int i = 0; i < 5; i++)
		R.t_step[i] = xcalloc((size_t)o.iters, sizeof(double));
	if (!R.hX || !R.hC || !R.hC2 || !R.hCn || !R.hCn2 || !R.hSh || !R.hLab) {
		fprintf(stderr, "cake kmeans: host out of memory for B=%lld N=%lld D=%lld K=%lld\n", B, N, D, K);
		goto out;
	}
	if (o.input && !read_input(o.input, R.hX, nx, &o))
		goto out;
	if (!o.input) {
		/* the device first: without one, fail fast instead of generating data */
		if (!km_open(&g, &o, &status))
			goto out;
		gpu_opened = true;
		oracle_fill_bf16(R.hX, nx, o.seed);
		if (o.f16)
			for (size_t i = 0; i < nx; i++)
				R.hX[i] = oracle_f32_to_f16(oracle_bf16_to_f32(R.hX[i]));
	}
	for (size_t i = 0; i < nx; i++)
		if (!isfinite(oracle_elt_to_f32(R.hX[i], o.f16))) {
			fprintf(stderr, "cake kmeans: input point %zu of batch %zu has a non-finite coordinate (%zu); "
			        "NaN/inf points cannot be assigned: clean the data first\n", i / (size_t)D % (size_t)N,
			        i / (size_t)(N * D), i % (size_t)D);
			status = 2;
			goto out;
		}
	if (!gpu_opened) {
		if (!km_open(&g, &o, &status))
			goto out;
		gpu_opened = true;
	}
	/* initial centroids: K evenly spaced points of each batch */
	for (long long b = 0; b < B; b++) {
		for (long long j = 0; j < K; j++)
			memcpy(&R.hC[(size_t)((b * K + j) * D)], &R.hX[(size_t)((b * N + j * (N / K)) * D)], sizeof(uint16_t) * (size_t)D);
		host_norms(&R.hC[(size_t)(b * K * D)], K, D, o.f16, &R.hCn[b * K]);
	}

	for (int i = 0; i < 7; i++)
		if (ks[i].src && !km_load(&g, &ks[i]))
			goto out;
	size_t bx = sizeof(uint16_t) * (size_t)(N * D), bc = sizeof(uint16_t) * (size_t)(K * D);
	if (gpu_alloc(&g, &R.X, bx * (size_t)B) || gpu_alloc(&g, &R.C[0], bc * (size_t)B) || gpu_alloc(&g, &R.C[1], bc * (size_t)B) ||
	    gpu_alloc(&g, &R.Cn, sizeof(float) * (size_t)(B * K)) || gpu_alloc(&g, &R.Lab, sizeof(int32_t) * (size_t)(B * N)) ||
	    gpu_alloc(&g, &R.Sums, sizeof(float) * (size_t)(B * K * D)) || gpu_alloc(&g, &R.Cnt, sizeof(int32_t) * (size_t)(B * K)) ||
	    gpu_alloc(&g, &R.Sh, sizeof(float) * (size_t)(B * K)) ||
	    (sorted && (gpu_alloc(&g, &R.Off, sizeof(int32_t) * (size_t)(B * K)) || gpu_alloc(&g, &R.Cur, sizeof(int32_t) * (size_t)(B * K)) ||
	                gpu_alloc(&g, &R.Ord, sizeof(int32_t) * (size_t)(B * N))))) {
		fprintf(stderr, "cake kmeans: allocating device memory: %s\n", g.err);
		goto out;
	}
	if (gpu_htod(&g, R.X, R.hX, bx * (size_t)B) || gpu_htod(&g, R.C[0], R.hC, bc * (size_t)B) ||
	    gpu_htod(&g, R.Cn, R.hCn, sizeof(float) * (size_t)(B * K))) {
		fprintf(stderr, "cake kmeans: copying inputs: %s\n", g.err);
		goto out;
	}
	/* argument blocks: per batch, per ping-pong parity */
	for (int q = 0; q < 2; q++) {
		R.aa[q] = xcalloc((size_t)B, sizeof(KmArgs));
		R.ad[q] = xcalloc((size_t)B, sizeof(KmArgs));
	}
	R.as = xcalloc((size_t)B, sizeof(KmArgs));
	for (long long b = 0; b < B; b++) {
		GpuPtr xb = R.X + (GpuPtr)(b * (long long)bx), lb = R.Lab + (GpuPtr)(b * N * 4), cnb = R.Cn + (GpuPtr)(b * K * 4);
		GpuPtr sb = R.Sums + (GpuPtr)(b * K * D * 4), kb = R.Cnt + (GpuPtr)(b * K * 4), shb = R.Sh + (GpuPtr)(b * K * 4);
		KmBind sc[] = {{"X", xb}, {"Assign", lb}, {"Sums", sb}, {"Counts", kb}};
		if (!sorted && b < km_launches(&ks[1], B) && !km_args(&g, &ks[1], sc, 4, &R.as[b]))
			goto out;
		for (int q = 0; q < 2; q++) {
			GpuPtr cur = R.C[q] + (GpuPtr)(b * (long long)bc), nxt = R.C[q ^ 1] + (GpuPtr)(b * (long long)bc);
			KmBind as[] = {{"X", xb}, {"Cent", cur}, {"Cnorm", cnb}, {"Out", lb}};
			KmBind ds[] = {{"Sums", sb}, {"Counts", kb}, {"Cent", cur}, {"NewCent", nxt}, {"Cnorm", cnb}, {"Shift", shb}};
			if ((b < km_launches(&ks[0], B) && !km_args(&g, &ks[0], as, 4, &R.aa[q][b])) ||
			    (b < km_launches(&ks[2], B) && !km_args(&g, &ks[2], ds, 6, &R.ad[q][b])))
				goto out;
		}
	}

	if (sorted) {   /* batched kernels: one argument block each */
		KmBind hb[] = {{"Assign", R.Lab}, {"Counts", R.Cnt}};
		KmBind sb[] = {{"Counts", R.Cnt}, {"Offsets", R.Off}, {"Cursor", R.Cur}};
		KmBind fb[] = {{"Assign", R.Lab}, {"Cursor", R.Cur}, {"Order", R.Ord}};
		KmBind gb[] = {{"X", R.X}, {"Order", R.Ord}, {"Offsets", R.Off}, {"Counts", R.Cnt}, {"Sums", R.Sums}};
		if (!km_args(&g, &ks[3], hb, 2, &R.au[0]) || !km_args(&g, &ks[4], sb, 3, &R.au[1]) ||
		    !km_args(&g, &ks[5], fb, 3, &R.au[2]) || !km_args(&g, &ks[6], gb, 5, &R.au[3]))
			goto out;
	}

	/* Lloyd iterations */
	for (int i = 0; i < 4; i++)
		if (gpu_event_create(&g, &ev[i]) || (sorted && gpu_event_create(&g, &evs[i]))) {
			fprintf(stderr, "cake kmeans: %s\n", g.err);
			goto out;
		}
	int cur = 0, it = 0, label_cur = 0;
	bool converged = false, check_ok = true, checked = false;
	double shift = INFINITY;
	StrBuf chk = {0};
	for (it = 0; it < o.iters && !converged; it++) {
		bool fail = gpu_event_record(&g, ev[0]) != 0;
		for (long long b = 0; b < km_launches(&ks[0], B) && !fail; b++)
			fail = km_launch(&g, &ks[0], &R.aa[cur][b]) != 0;
		fail = fail || gpu_event_record(&g, ev[1]);
		if (!fail && it == 0 && o.check) {   /* labels of batch 0 for the oracle */
			if (gpu_dtoh(&g, R.hLab, R.Lab, sizeof(int32_t) * (size_t)N)) {
				fprintf(stderr, "cake kmeans: assignment failed: %s\n", g.err);
				goto out;
			}
		}
		fail = fail || gpu_event_record(&g, ev[2]);   /* after the oracle's copy: not in the update's time */
		if (sorted) {   /* counting sort, then segment sums (every Sums row written) */
			fail = fail || gpu_memset8(&g, R.Cnt, 0, sizeof(int32_t) * (size_t)(B * K));
			for (int i = 0; i < 4 && !fail; i++)
				fail = km_launch(&g, &ks[3 + i], &R.au[i]) != 0 || gpu_event_record(&g, evs[i]);
		} else {
			fail = fail || gpu_memset8(&g, R.Sums, 0, sizeof(float) * (size_t)(B * K * D)) ||
			       gpu_memset8(&g, R.Cnt, 0, sizeof(int32_t) * (size_t)(B * K));
			for (long long b = 0; b < km_launches(&ks[1], B) && !fail; b++)
				fail = km_launch(&g, &ks[1], &R.as[b]) != 0;
		}
		for (long long b = 0; b < km_launches(&ks[2], B) && !fail; b++)
			fail = km_launch(&g, &ks[2], &R.ad[cur][b]) != 0;
		fail = fail || gpu_event_record(&g, ev[3]);
		if (sorted && !fail) {   /* per step: clear + hist, scan, fill, segsum, divide */
			void *from[5] = {ev[2], evs[0], evs[1], evs[2], evs[3]}, *to[5] = {evs[0], evs[1], evs[2], evs[3], ev[3]};
			for (int i = 0; i < 5 && !fail; i++) {
				float ms = 0;
				fail = gpu_event_elapsed_ms(&g, from[i], to[i], &ms) != 0;
				R.t_step[i][it] = ms * 1e3;
			}
		}
		float ms_a = 0, ms_u = 0;
		if (fail || gpu_event_elapsed_ms(&g, ev[0], ev[1], &ms_a) || gpu_event_elapsed_ms(&g, ev[2], ev[3], &ms_u) ||
		    gpu_dtoh(&g, R.hSh, R.Sh, sizeof(float) * (size_t)(B * K))) {
			fprintf(stderr, "cake kmeans: iteration %d failed: %s\n", it + 1, g.err);
			goto out;
		}
		R.t_assign[it] = ms_a * 1e3;
		R.t_update[it] = ms_u * 1e3;
		if (it == 0 && o.check) {
			if (!km_check(&g, &o, &R, cur, &chk, &check_ok)) {
				sb_free(&chk);
				goto out;
			}
			checked = true;
			if (gpu_dtoh(&g, R.hSh, R.Sh, sizeof(float) * (size_t)(B * K))) {
				fprintf(stderr, "cake kmeans: %s\n", g.err);
				goto out;
			}
		}
		double m = 0;
		bool nan = false;
		for (long long j = 0; j < B * K; j++) {
			nan |= !isfinite(R.hSh[j]);
			if (R.hSh[j] > m)
				m = R.hSh[j];
		}
		if (nan) {
			fprintf(stderr, "cake kmeans: iteration %d produced a non-finite centroid shift; stopping\n", it + 1);
			sb_free(&chk);
			goto out;
		}
		shift = sqrt(m);
		label_cur = cur;
		cur ^= 1;
		converged = shift <= o.tol;
	}

	/* inertia of the last labels against the centroids they were computed from */
	if (gpu_dtoh(&g, R.hLab, R.Lab, sizeof(int32_t) * (size_t)(B * N)) ||
	    gpu_dtoh(&g, R.hC, R.C[label_cur], bc * (size_t)B)) {
		fprintf(stderr, "cake kmeans: reading labels: %s\n", g.err);
		sb_free(&chk);
		goto out;
	}
	double inertia = 0;
	long long badlab = 0;
	for (long long b = 0; b < B; b++)
		for (long long i = 0; i < N; i++) {
			int l = R.hLab[b * N + i];
			if (l < 0 || l >= K) {
				badlab++;
				continue;
			}
			const uint16_t *x = &R.hX[(size_t)((b * N + i) * D)], *cc = &R.hC[(size_t)((b * K + l) * D)];
			for (long long d = 0; d < D; d++) {
				double e = (double)oracle_elt_to_f32(x[d], o.f16) - oracle_elt_to_f32(cc[d], o.f16);
				inertia += e * e;
			}
		}
	double *sa = xmalloc(sizeof(double) * (size_t)it), *su = xmalloc(sizeof(double) * (size_t)it);
	memcpy(sa, R.t_assign, sizeof(double) * (size_t)it);
	memcpy(su, R.t_update, sizeof(double) * (size_t)it);
	qsort(sa, (size_t)it, sizeof(double), cmp_dbl);
	qsort(su, (size_t)it, sizeof(double), cmp_dbl);
	double ta = sa[it / 2], tu = su[it / 2], tot = 0, tstep[5] = {0};
	for (int i = 0; i < it; i++)
		tot += R.t_assign[i] + R.t_update[i];
	for (int i = 0; sorted && i < 5; i++) {   /* the median of each step */
		qsort(R.t_step[i], (size_t)it, sizeof(double), cmp_dbl);
		tstep[i] = R.t_step[i][it / 2];
	}
	static const char *stepname[5] = {"clear+hist", "scan", "fill", "segsum", "divide"};
	bool ok = check_ok && badlab == 0;
	if (o.json) {
		sb_printf(&rep, "{\"command\":\"kmeans\",\"shape\":{\"B\":%lld,\"N\":%lld,\"D\":%lld,\"K\":%lld},\"dtype\":\"%s\","
		          "\"device\":", B, N, D, K, o.f16 ? "f16" : "bf16");
		sb_json_str(&rep, g.name);
		sb_printf(&rep, ",\"iterations\":%d,\"converged\":%s,\"shift\":%.6e,\"tol\":%.3e,\"inertia\":%.10e,"
		          "\"labels_out_of_range\":%lld,\"assign_us\":{\"median\":%.2f,\"min\":%.2f},"
		          "\"update\":\"%s\",\"update_us\":{\"median\":%.2f,\"min\":%.2f},\"total_us\":%.2f,\"ok\":%s",
		          it, converged ? "true" : "false", shift, o.tol, inertia, badlab, ta, sa[0], sorted ? "sorted" : "atomic",
		          tu, su[0], tot, ok ? "true" : "false");
		for (int i = 0; sorted && i < 5; i++)
			sb_printf(&rep, "%s\"%s\":%.2f%s", i ? "," : ",\"update_steps_us\":{", stepname[i], tstep[i], i == 4 ? "}" : "");
		if (checked)
			sb_puts(&rep, sb_str(&chk));
		sb_puts(&rep, "}\n");
	} else {
		sb_printf(&rep, "cake kmeans: B=%lld N=%lld D=%lld K=%lld %s on %s (%d SMs) seed=%llu\n", B, N, D, K,
		          o.f16 ? "f16" : "bf16", g.name, g.sm_count, (unsigned long long)o.seed);
		sb_printf(&rep, "  lloyd:   %d iteration%s, %s (largest centroid shift %.3e, tol %.1e), inertia %.6e\n", it,
		          it == 1 ? "" : "s", converged ? "converged" : "not converged", shift, o.tol, inertia);
		sb_printf(&rep, "  time:    assign %.2f us/iter (min %.2f), update (%s) %.2f us/iter (min %.2f), all %d iterations %.3f ms "
		          "(median over iterations, all %lld batches, CUDA events)\n", ta, sa[0], sorted ? "sorted" : "atomic", tu, su[0],
		          it, tot / 1e3, B);
		if (sorted) {
			sb_puts(&rep, "  update:  ");
			for (int i = 0; i < 5; i++)
				sb_printf(&rep, "%s%s %.1f", i ? ", " : "", stepname[i], tstep[i]);
			sb_puts(&rep, " us (medians; events between the launches)\n");
		}
		if (badlab)
			sb_printf(&rep, "  labels:  %lld labels outside [0, K)\n", badlab);
		if (checked)
			sb_puts(&rep, sb_str(&chk));
		sb_printf(&rep, "verdict: %s\n", ok ? "ok" : "mismatch");
	}
	fwrite(rep.s, 1, rep.len, stdout);
	free(sa);
	free(su);
	sb_free(&chk);
	status = ok ? 0 : 1;
out:
	for (int q = 0; q < 2; q++)
		for (long long b = 0; b < B; b++) {
			if (R.aa[q])
				km_args_free(&R.aa[q][b]);
			if (R.ad[q])
				km_args_free(&R.ad[q][b]);
		}
	for (long long b = 0; R.as && b < B; b++)
		km_args_free(&R.as[b]);
	free(R.aa[0]), free(R.aa[1]), free(R.ad[0]), free(R.ad[1]), free(R.as);
	for (int i = 0; i < 4; i++)
		km_args_free(&R.au[i]);
	if (gpu_opened) {
		for (int i = 0; i < 4; i++)
			if (ev[i])
				gpu_event_destroy(&g, ev[i]);
		for (int i = 0; i < 4; i++)
			if (evs[i])
				gpu_event_destroy(&g, evs[i]);
		GpuPtr bufs[] = {R.X, R.C[0], R.C[1], R.Cn, R.Lab, R.Sums, R.Cnt, R.Sh, R.Off, R.Cur, R.Ord};
		for (size_t i = 0; i < NELEM(bufs); i++)
			gpu_free(&g, bufs[i]);
		gpu_close(&g);
	}
	for (int i = 0; i < 7; i++) {
		free(ks[i].src);
		jit_result_free(&ks[i].jit);
	}
	free(R.hX), free(R.hC), free(R.hC2), free(R.hCn), free(R.hCn2), free(R.hSh), free(R.hLab);
	free(R.t_assign), free(R.t_update);
	for (int i = 0; i < 5; i++)
		free(R.t_step[i]);
	sb_free(&rep);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	return status;
}
