/*
 * kmeans.h — the k-means app: Lloyd's algorithm end to end on the GPU with
 * the Cake IR kernels of kernels/kmeans/, on the launch layer.
 *
 * An app is a multi-kernel host program: it compiles each kernel through
 * the pipeline (src/cake.h), launches it through the launch layer
 * (src/gpu/launch.h) and checks with the family oracles (src/family/). The
 * `cake kmeans` command (src/cmd/kmeans.c) parses options and calls
 * app_kmeans; the library generator will call it the same way.
 *
 * Module prefix: app_kmeans, Km.
 */
#ifndef CAKE_APP_KMEANS_H
#define CAKE_APP_KMEANS_H

#include "../cake.h"

enum { KM_UPDATE_AUTO, KM_UPDATE_SORTED, KM_UPDATE_ATOMIC };

/* What to run. Bad shapes (N = 0, K > N, D % 8) are the caller's to refuse
 * first (app_kmeans_refusal). */
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

/* Default options: B=1, N=65536, D=128, K=1024, bf16, 20 iterations, tol 1e-4,
 * seed 1, 4096 checked points, the sorted update when it applies, the
 * kernels in kernels/kmeans. */
KmOpts app_kmeans_options(void);
/* A shape k-means cannot mean (N = 0, B = 0, K = 0, K > N, D not a positive
 * multiple of 8): the message, or NULL when the shape is fine. */
const char *app_kmeans_refusal(const KmOpts *o, char *buf, size_t n);
/* Run the Lloyd loop; the report (text or JSON per o->json) is appended to
 * out; errors go to stderr. Returns the exit status: 0 ok, 1 a failed check
 * or a kernel problem, 2 bad input, GPU_EXIT_NO_DRIVER without a GPU. */
int app_kmeans(const KmOpts *o, StrBuf *out);

#endif
