/*
 * gpu_gemm_check.c — run a lowered GEMM kernel on the GPU, driven only by its Plan.
 *
 * This is the end-to-end check of the Plan ABI (src/lower/lower.h): the host
 * side knows nothing about the kernel except what derive_plan() says. It binds
 * the dims by name, checks the domain, allocates every global tensor, encodes
 * each tensor map from PlanTmap (extents, strides, box, swizzle evaluated over
 * the dims), marshals the arguments in Plan.args order, sizes the grid from
 * Plan.grid (persistent: min(#SMs, tiles)) and the dynamic shared memory from
 * Plan.smem_bytes, launches the cubin built by `cake build --emit=cubin`, and
 * compares C = A * B^T against the float64 oracle (sampled rows, whole C
 * scanned for unwritten poison). With --debug-hang it also passes the flight
 * recorder and prints every record after the run.
 *
 * usage: gpu_gemm_check FILE.cake FILE.cubin M N K [ITERS] [--debug-hang]
 * prints: RESULT kernel M N K rel_err=... unwritten=... median_us=... tflops=... PASS|FAIL
 */
#include "lower/lower.h"
#include "gpu/gpu.h"
#include "verify/verify.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static long long ev(const Expr *e, const Kernel *k, const long long *dv)
{
	long long v = 0;
	if (!e)
		return 1;
	if (!eval_expr(e, k, dv, &v))
		DIE("cannot evaluate an extent of the plan");
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 6)
		DIE("usage: %s FILE.cake FILE.cubin M N K [ITERS] [--debug-hang]", argv[0]);
	int iters = 20;
	bool dbg = false;
	for (int i = 6; i < argc; i++) {
		if (strcmp(argv[i], "--debug-hang") == 0)
			dbg = true;
		else
			iters = atoi(argv[i]);
	}
	long long M = atoll(argv[3]), N = atoll(argv[4]), K = atoll(argv[5]);

	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	ctx_init(&c, &ss, &dl);
	int fi = src_load(&ss, argv[1]);
	if (fi < 0)
		DIE("cannot read %s", argv[1]);
	Program *prog = parse_file(&c, fi);
	sema_program(&c, prog);
	if (dl.nerr || prog->nkernels != 1)
		DIE("%s does not pass the front end", argv[1]);
	Kernel *k = prog->kernels[0];
	Plan *p = derive_plan(&c, k);
	if (!p)
		DIE("derive_plan failed");
	long long dv[16] = {0};
	for (int i = 0; i < p->ndims && i < 16; i++)
		dv[i] = strcmp(p->dims[i], "M") == 0 ? M : strcmp(p->dims[i], "N") == 0 ? N : strcmp(p->dims[i], "K") == 0 ? K : 0;
	const char *why = NULL;
	if (!eval_domain(k, dv, &why)) {
		printf("RESULT %s %lld %lld %lld REFUSED domain: %s\n", k->name, M, N, K, why ? why : "?");
		return 0;
	}

	GpuDev g;
	int rc = gpu_open(&g, 0);
	if (rc)
		DIE("gpu_open: %s", g.err);
	size_t len = 0;
	char *img = read_file(argv[2], &len);
	if (!img)
		DIE("cannot read %s", argv[2]);
	void *mod, *fn;
	if (gpu_module_load(&g, img, &mod) || gpu_module_func(&g, mod, p->name, &fn))
		DIE("%s", g.err);
	if (gpu_func_set_smem(&g, fn, (int)p->smem_bytes))
		DIE("%s", g.err);

	/* global tensors */
	GpuPtr dptr[16] = {0};
	uint16_t *host[16] = {0};
	size_t nel[16] = {0};
	int ia = -1, ib = -1, ic = -1;
	int np = 0;
	for (int i = 0; i < k->ndecls; i++) {
		Decl *d = k->decls[i];
		if (d->kind != D_PARAM)
			continue;
		int pi = np++;
		if (d->space != SP_GLOBAL)
			continue;
		size_t n = 1;
		for (int j = 0; j < d->rank; j++)
			n *= (size_t)ev(d->shape[j], k, dv);
		nel[pi] = n;
		host[pi] = malloc(n * 2);
		if (gpu_alloc(&g, &dptr[pi], n * 2))
			DIE("%s", g.err);
		if (strcmp(d->name, "A") == 0)
			ia = pi;
		if (strcmp(d->name, "B") == 0)
			ib = pi;
		if (strcmp(d->name, "C") == 0)
			ic = pi;
	}
	if (ia < 0 || ib < 0 || ic < 0)
		DIE("kernel is not a C = A * B^T GEMM (params A, B, C)");
	oracle_fill_bf16(host[ia], nel[ia], 0x5eed);
	oracle_fill_bf16(host[ib], nel[ib], 0x5eed ^ 0xabcdef12345ull);
	gpu_htod(&g, dptr[ia], host[ia], nel[ia] * 2);
	gpu_htod(&g, dptr[ib], host[ib], nel[ib] * 2);

	/* tensor maps from the plan */
	GpuTensorMap *maps = calloc((size_t)(p->ntmaps ? p->ntmaps : 1), sizeof(GpuTensorMap));
	for (int t = 0; t < p->ntmaps; t++) {
		const PlanTmap *m = &p->tmaps[t];
		uint64_t dims[5], strides[5];
		uint32_t box[5];
		for (int j = 0; j < m->rank; j++) {
			dims[j] = (uint64_t)ev(m->gdims[j], k, dv);
			box[j] = (uint32_t)m->box[j];
			if (j)
				strides[j - 1] = (uint64_t)ev(m->gstrides[j], k, dv);
		}
		int pi = -1, q = 0;
		for (int i = 0; i < k->ndecls; i++)
			if (k->decls[i]->kind == D_PARAM) {
				if (k->decls[i] == m->param_decl)
					pi = q;
				q++;
			}
		int dt = m->dt == DT_BF16 ? GPU_TMAP_BF16 : m->dt == DT_F16 ? GPU_TMAP_F16 : GPU_TMAP_F32;
		int sw = m->swizzle == SWZ_128B ? GPU_SWZ_128B : m->swizzle == SWZ_64B ? GPU_SWZ_64B : m->swizzle == SWZ_32B ? GPU_SWZ_32B : GPU_SWZ_NONE;
		if (gpu_tmap_encode(&g, &maps[t], dt, m->rank, dptr[pi], dims, strides, box, sw))
			DIE("%s", g.err);
	}
	/* arguments in plan order */
	void *args[40];
	int ival[40];
	int na = 0;
	for (int i = 0; i < p->nargs; i++) {
		const PlanArg *a = &p->args[i];
		switch (a->kind) {
		case ARG_TMAP: args[na++] = &maps[a->index]; break;
		case ARG_PTR: args[na++] = &dptr[a->index]; break;
		case ARG_DIM: ival[i] = (int)dv[a->index]; args[na++] = &ival[i]; break;
		default: DIE("unexpected argument kind");
		}
	}
	unsigned grid[3] = {1, 1, 1};
	for (int i = 0; i < p->grid_rank; i++)
		grid[i] = (unsigned)ev(p->grid[i], k, dv);
	long long tiles = ev(p->tiles, k, dv);
	if (p->persistent) {
		grid[0] = (unsigned)(tiles < g.sm_count ? tiles : g.sm_count);
		grid[1] = grid[2] = 1;
	}
	unsigned ctas = grid[0] * grid[1] * grid[2];
	CakeHangRecord *rec = NULL;
	GpuPtr drec = 0;
	if (dbg) {
		size_t rb = sizeof(CakeHangRecord) * ctas * (size_t)p->nwarpgroups;
		rec = aligned_alloc(4096, (rb + 4095) / 4096 * 4096);
		memset(rec, 0, rb);
		if (gpu_host_register(&g, rec, (rb + 4095) / 4096 * 4096, &drec))
			DIE("%s", g.err);
		args[na++] = &drec;
	}
	unsigned block[3] = {(unsigned)p->block_threads, 1, 1};
	gpu_memset8(&g, dptr[ic], 0xFF, nel[ic] * 2);
	if (gpu_launch(&g, fn, grid, block, NULL, (unsigned)p->smem_bytes, args) || gpu_sync(&g)) {
		printf("RESULT %s %lld %lld %lld FAULT %s\n", k->name, M, N, K, g.err);
		return 3;
	}
	gpu_dtoh(&g, host[ic], dptr[ic], nel[ic] * 2);
	int nrows = M < 64 ? (int)M : 64;
	int *rows = malloc(sizeof(int) * (size_t)nrows);
	uint64_t st = 7;
	for (int i = 0; i < nrows; i++)
		rows[i] = i == 0 ? 0 : i == 1 ? (int)M - 1 : (int)(oracle_splitmix64(&st) % (uint64_t)M);
	double *ref = malloc(sizeof(double) * (size_t)nrows * (size_t)N);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	oracle_gemm_abt_bf16(host[ia], host[ib], (int)M, (int)N, (int)K, rows, nrows, ref, (int)(ncpu > 0 ? ncpu : 1));
	OracleCmp cmp;
	oracle_compare_bf16_rows(host[ic], (int)N, rows, nrows, ref, &cmp);
	long long unwritten = 0;
	for (size_t i = 0; i < nel[ic]; i++)
		unwritten += host[ic][i] == 0xFFFF;
	if (dbg) {
		for (unsigned i = 0; i < ctas * (unsigned)p->nwarpgroups && i < 12; i++)
			printf("REC slot %u magic=%x role=%u bar=%d stage=%u phase=%u iter=%u state=%u line=%u tile=%d seq=%u\n", i, rec[i].magic, rec[i].role,
			       (int)rec[i].barrier, rec[i].stage, rec[i].phase, rec[i].iter, rec[i].state, rec[i].line, (int)rec[i].tile, rec[i].seq);
	}
	/* timing */
	void *e0, *e1;
	GpuPtr flush;
	size_t fb = 256u << 20;
	gpu_event_create(&g, &e0);
	gpu_event_create(&g, &e1);
	gpu_alloc(&g, &flush, fb);
	float *ms = malloc(sizeof(float) * (size_t)(iters > 0 ? iters : 1));
	for (int i = 0; i < 3; i++)
		gpu_launch(&g, fn, grid, block, NULL, (unsigned)p->smem_bytes, args);
	for (int i = 0; i < iters; i++) {
		gpu_memset8(&g, flush, (unsigned char)i, fb);
		gpu_event_record(&g, e0);
		gpu_launch(&g, fn, grid, block, NULL, (unsigned)p->smem_bytes, args);
		gpu_event_record(&g, e1);
		if (gpu_event_elapsed_ms(&g, e0, e1, &ms[i]))
			DIE("%s", g.err);
	}
	double med = 0;
	if (iters > 0) {
		qsort(ms, (size_t)iters, sizeof(float), cmp_float);
		med = ms[iters / 2] * 1e3;
	}
	bool pass = cmp.rel_err <= 1e-2 && !cmp.n_nan && !unwritten && cmp.first_bad < 0;
	printf("RESULT %s %lld %lld %lld grid=%u,%u,%u smem=%lld rel_err=%.3e nan=%lld unwritten=%lld first_bad=%lld median_us=%.1f tflops=%.1f %s\n",
	       k->name, M, N, K, grid[0], grid[1], grid[2], p->smem_bytes, cmp.rel_err, cmp.n_nan, unwritten, cmp.first_bad, med,
	       med > 0 ? 2.0 * M * N * (double)K / (med * 1e-6) / 1e12 : 0.0, pass ? "PASS" : "FAIL");
	gpu_close(&g);
	return pass ? 0 : 1;
}
