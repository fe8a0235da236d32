/*
 * tile_emu.c — inputs for, and the float64 check of, tests/corpus/good/tile_ops.cake run
 * on the CPU emulator (tests/lower/emu.sh): every thread-tile primitive that the KDA
 * kernels do not exercise (colsum across warps, sum() of a row vector and of a tile,
 * row_idx()/col_idx(), the stores of a column vector).
 *
 *   tile_emu gen   DIR N SEED    write DIR/X.bin and NaN-poisoned DIR/{Y,Z,C}.bin
 *   tile_emu check DIR N SEED    recompute in float64 and compare DIR/{Y,Z,C}.out
 */
#include "family/oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void wr(const char *dir, const char *n, const void *p, size_t b)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.bin", dir, n);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, b, f) != b)
		exit(2);
	fclose(f);
}

static float *rd(const char *dir, const char *n, size_t cnt)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.out", dir, n);
	FILE *f = fopen(path, "rb");
	float *p = malloc(cnt * 4);
	if (!f || !p || fread(p, 4, cnt, f) != cnt)
		exit(2);
	fclose(f);
	return p;
}

/* |out - ref| <= 1e-4 (|ref| + scale): f32 against float64 over sums of up to 4096 terms */
static long long cmp(const float *out, const double *ref, size_t n, double scale, const char *what)
{
	long long bad = 0;
	for (size_t i = 0; i < n; i++)
		if (!(fabs(out[i] - ref[i]) <= 1e-4 * (fabs(ref[i]) + scale))) {
			if (!bad)
				printf("%s[%zu]: got %.7g, expected %.7g\n", what, i, out[i], ref[i]);
			bad++;
		}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *dir = argv[2];
	long long N = atoll(argv[3]);
	uint64_t st = strtoull(argv[4], NULL, 10);
	float *X = malloc(sizeof(float) * (size_t)(N * 128));
	for (long long i = 0; i < N * 128; i++)
		X[i] = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
	if (!strcmp(argv[1], "gen")) {
		wr(dir, "X", X, sizeof(float) * (size_t)(N * 128));
		float *nan = malloc(sizeof(float) * (size_t)(N * 128));
		memset(nan, 0xff, sizeof(float) * (size_t)(N * 128));
		wr(dir, "Y", nan, sizeof(float) * (size_t)N);
		wr(dir, "Z", nan, sizeof(float) * (size_t)(N * 128));
		wr(dir, "C", nan, sizeof(float) * (size_t)(N / 32 * 128));
		free(nan);
		free(X);
		return 0;
	}
	float *Y = rd(dir, "Y", (size_t)N), *Z = rd(dir, "Z", (size_t)(N * 128)), *C = rd(dir, "C", (size_t)(N / 32 * 128));
	double *y = calloc((size_t)N, sizeof(double)), *z = calloc((size_t)(N * 128), sizeof(double)), *c = calloc((size_t)(N * 128), sizeof(double));
	double kk = 0;
	for (int j = 0; j < 128; j++)
		kk += (double)X[j] * X[j];
	for (long long b = 0; b < N / 32; b++) {
		const float *S = X + b * 32 * 128;
		double d[32], sd = 0, ss = 0;
		for (int i = 0; i < 32; i++) {
			d[i] = kk;
			for (int j = 0; j < 128; j++)
				d[i] += (double)S[i * 128 + j] * X[j] * 0.5;
			sd += d[i];
		}
		for (int j = 0; j < 128; j++) {
			c[b * 128 + j] = 0;
			for (int i = 0; i < 32; i++)
				c[b * 128 + j] += (double)S[i * 128 + j] * d[i];
		}
		for (int i = 0; i < 32; i++)
			for (int j = 0; j < 128; j++) {
				double v = S[i * 128 + j] - d[i] * c[b * 128 + j] * 0.001 + (double)(i * 128 + j) * 0.0001;
				z[(b * 32 + i) * 128 + j] = v;
				ss += v;
			}
		for (int i = 0; i < 32; i++)
			y[b * 32 + i] = d[i] + sd + ss;
	}
	long long bad = cmp(Y, y, (size_t)N, 100, "Y") + cmp(Z, z, (size_t)(N * 128), 10, "Z") + cmp(C, c, (size_t)(N / 32 * 128), 100, "C");
	printf("tile_ops: %lld rows, %lld bad elements%s\n", N, bad, bad ? " FAIL" : "");
	free(X), free(Y), free(Z), free(C), free(y), free(z), free(c);
	return bad ? 1 : 0;
}
