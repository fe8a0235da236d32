/*
 * bench_gemm.c — host harness for the hand-written sm_90a GEMM prototype.
 *
 * Loads one or more cubins of bench/proto/gemm_sm90.cu (each built with a
 * different variant macro set) through src/gpu/driver.c, and for one shape
 * M x N x K: fills A and B with seeded random bf16 in [-1,1] (never zero),
 * poisons C with 0xFF (NaN), launches once, checks sampled rows against the
 * float64 oracle (src/gpu/oracle.c), then times `iters` launches with CUDA
 * events around each launch and a 256 MB L2-flush memset between launches.
 *
 * usage: bench_gemm M N K ITERS CHECK_ROWS name=file.cubin:cluster:persistent ...
 * prints one line per variant:
 *   RESULT name M N K rel_err nan first_bad median_us min_us max_us tflops
 */
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMEM_BYTES_FOR(stages) ((stages) * (128 * 64 * 2 + 256 * 64 * 2) + 2 * (stages) * 8 + 1024)

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)

int main(int argc, char **argv)
{
	if (argc < 7)
		DIE("usage: %s M N K ITERS CHECK_ROWS name=file.cubin:cluster:persistent[:stages] ...", argv[0]);
	int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
	int iters = atoi(argv[4]), check_rows = atoi(argv[5]);
	uint64_t seed = getenv("SEED") ? strtoull(getenv("SEED"), NULL, 0) : 0x5eedull;
	GpuDev g;
	int rc = gpu_open(&g, 0);
	if (rc == GPU_NO_DRIVER) {
		fprintf(stderr, "cake: %s\n", g.err);
		return GPU_EXIT_NO_DRIVER;
	}
	if (rc)
		DIE("gpu_open: %s", g.err);
	fprintf(stderr, "device %s, %d SMs, cc %d.%d, smem optin %d, L2 %d, seed 0x%llx\n", g.name, g.sm_count,
	        g.cc_major, g.cc_minor, g.smem_optin, g.l2_bytes, (unsigned long long)seed);

	size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
	uint16_t *hA = malloc(na * 2), *hB = malloc(nb * 2), *hC = malloc(nc * 2);
	if (!hA || !hB || !hC)
		DIE("host out of memory");
	oracle_fill_bf16(hA, na, seed);
	oracle_fill_bf16(hB, nb, seed ^ 0xabcdef12345ull);
	GpuPtr dA, dB, dC, dFlush;
	size_t flush_bytes = 256u << 20;
	if (gpu_alloc(&g, &dA, na * 2) || gpu_alloc(&g, &dB, nb * 2) || gpu_alloc(&g, &dC, nc * 2) ||
	    gpu_alloc(&g, &dFlush, flush_bytes))
		DIE("%s", g.err);
	if (gpu_htod(&g, dA, hA, na * 2) || gpu_htod(&g, dB, hB, nb * 2))
		DIE("%s", g.err);

	/* sampled rows: first, last and random ones */
	int nrows = check_rows < M ? check_rows : M;
	int *rows = malloc(sizeof(int) * (size_t)(nrows > 0 ? nrows : 1));
	uint64_t st = seed + 7;
	for (int i = 0; i < nrows; i++)
		rows[i] = nrows == M ? i : i == 0 ? 0 : i == 1 ? M - 1 : (int)(oracle_splitmix64(&st) % (uint64_t)M);
	double *ref = malloc(sizeof(double) * (size_t)nrows * N);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	oracle_gemm_abt_bf16(hA, hB, M, N, K, rows, nrows, ref, (int)(ncpu > 0 ? ncpu : 1));

	void *e0, *e1;
	if (gpu_event_create(&g, &e0) || gpu_event_create(&g, &e1))
		DIE("%s", g.err);

	for (int v = 6; v < argc; v++) {
		char name[64], file[512];
		int cluster = 1, persistent = 1, stages = 4;
		const char *eq = strchr(argv[v], '=');
		if (!eq || sscanf(eq + 1, "%511[^:]:%d:%d:%d", file, &cluster, &persistent, &stages) < 3)
			DIE("bad variant '%s'", argv[v]);
		snprintf(name, sizeof name, "%.*s", (int)(eq - argv[v]), argv[v]);
		char *img = slurp(file, NULL);
		if (!img)
			DIE("cannot read %s", file);
		void *mod, *fn;
		if (gpu_module_load(&g, img, &mod) || gpu_module_func(&g, mod, "gemm_bf16_sm90", &fn))
			DIE("%s: %s", name, g.err);
		int smem = SMEM_BYTES_FOR(stages);
		if (gpu_func_set_smem(&g, fn, smem))
			DIE("%s: %s", name, g.err);
		GpuTensorMap ta, tb;
		uint64_t dimsA[2] = {(uint64_t)K, (uint64_t)M}, dimsB[2] = {(uint64_t)K, (uint64_t)N};
		uint64_t strd[1] = {(uint64_t)K * 2};
		uint32_t boxA[2] = {64, 128}, boxB[2] = {64, (uint32_t)(256 / cluster)};
		if (gpu_tmap_encode(&g, &ta, GPU_TMAP_BF16, 2, dA, dimsA, strd, boxA, GPU_SWZ_128B) ||
		    gpu_tmap_encode(&g, &tb, GPU_TMAP_BF16, 2, dB, dimsB, strd, boxB, GPU_SWZ_128B))
			DIE("%s: %s", name, g.err);
		int ntiles = (M / 128) * (N / 256);
		unsigned grid[3] = {(unsigned)ntiles, 1, 1}, block[3] = {384, 1, 1}, cl[3] = {(unsigned)cluster, 1, 1};
		if (persistent) {
			int maxc = g.sm_count / cluster * cluster;
			grid[0] = (unsigned)(ntiles < maxc ? ntiles : maxc);
		}
		GpuPtr dbg = 0;
		int Mi = M, Ni = N, Ki = K;
		void *args[] = {&ta, &tb, &dC, &Mi, &Ni, &Ki, &dbg};
		/* correctness: poison, launch, check */
		if (gpu_memset8(&g, dC, 0xFF, nc * 2))
			DIE("%s", g.err);
		if (gpu_launch(&g, fn, grid, block, cl, (unsigned)smem, args) || gpu_sync(&g)) {
			printf("RESULT %s %d %d %d FAULT %s\n", name, M, N, K, g.err);
			fflush(stdout);
			exit(3);
		}
		if (gpu_dtoh(&g, hC, dC, nc * 2))
			DIE("%s", g.err);
		OracleCmp c;
		oracle_compare_bf16_rows(hC, N, rows, nrows, ref, &c);
		/* every element written? (whole C, not just sampled rows) */
		long long unwritten = 0;
		for (size_t i = 0; i < nc; i++)
			if (hC[i] == 0xFFFF)
				unwritten++;
		/* timing */
		float *ms = malloc(sizeof(float) * (size_t)iters);
		for (int w = 0; w < 3; w++)
			gpu_launch(&g, fn, grid, block, cl, (unsigned)smem, args);
		for (int i = 0; i < iters; i++) {
			gpu_memset8(&g, dFlush, (unsigned char)i, flush_bytes);
			gpu_event_record(&g, e0);
			gpu_launch(&g, fn, grid, block, cl, (unsigned)smem, args);
			gpu_event_record(&g, e1);
			if (gpu_event_elapsed_ms(&g, e0, e1, &ms[i]))
				DIE("%s: %s", name, g.err);
		}
		qsort(ms, (size_t)iters, sizeof(float), cmp_float);
		double med = ms[iters / 2] * 1e3, mn = ms[0] * 1e3, mx = ms[iters - 1] * 1e3;
		double tflops = 2.0 * M * N * (double)K / (med * 1e-6) / 1e12;
		printf("RESULT %s %d %d %d rel_err=%.3e nan=%lld unwritten=%lld first_bad=%lld median_us=%.1f min_us=%.1f max_us=%.1f tflops=%.1f %s\n",
		       name, M, N, K, c.rel_err, c.n_nan, unwritten, c.first_bad, med, mn, mx, tflops,
		       (c.rel_err <= 1e-2 && !c.n_nan && !unwritten && c.first_bad < 0) ? "PASS" : "FAIL");
		fflush(stdout);
		free(ms);
		free(img);
		gpu_module_unload(&g, mod);
	}
	gpu_close(&g);
	return 0;
}
