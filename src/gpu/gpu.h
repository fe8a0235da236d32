/*
 * gpu.h — Cake's GPU side: NVRTC JIT with a cubin cache (jit.c), the CUDA
 * driver API reached through dlopen (driver.c), float64 oracles (oracle.c)
 * and the isolated runner behind `cake run` (run.c).
 *
 * Nothing here needs CUDA headers at build time: the few driver and NVRTC
 * types are declared below as opaque handles and plain integers, and the
 * libraries are opened at run time. A machine without NVRTC can still build
 * and test every CPU-side part of Cake; a machine without a GPU can still JIT.
 *
 * Module prefixes: jit_ (NVRTC + cache), gpu_ (driver), oracle_ (CPU
 * references), run_ (runner, verdicts, timing).
 */
#ifndef CAKE_GPU_H
#define CAKE_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit status of a command that needs a GPU on a machine without a driver
 * (EX_UNAVAILABLE from sysexits.h). */
#define GPU_EXIT_NO_DRIVER 69

/* ================================================================ JIT ==== */

/* Per-kernel resource usage as reported by ptxas (through NVRTC's log). */
typedef struct JitKernelInfo {
	char name[128];
	int regs;            /* registers per thread */
	int stack_bytes;     /* stack frame */
	int spill_stores;    /* bytes */
	int spill_loads;     /* bytes */
	int smem_static;     /* bytes of static shared memory */
	int barriers;        /* named barriers used */
} JitKernelInfo;

typedef struct JitResult {
	void *cubin;         /* malloc'd ELF image; free with jit_result_free */
	size_t cubin_len;
	char *log;           /* malloc'd NVRTC log (ptxas -v report), may be "" */
	bool cache_hit;
	char key[33];        /* hex xxh3-128 of source + options + NVRTC version */
	JitKernelInfo kern[32];   /* ptxas report per kernel of the translation unit */
	int nkern;
	double compile_ms;   /* 0 on a cache hit */
} JitResult;

/* Result codes of jit_compile. */
enum { JIT_OK = 0, JIT_NO_NVRTC = 1, JIT_COMPILE_ERROR = 2, JIT_IO_ERROR = 3 };

/* Options for one compilation. arch defaults to "sm_90a"; extra holds more
 * NVRTC options (e.g. "-DSTAGES=4"); cache_dir NULL = $XDG_CACHE_HOME/cake
 * or ~/.cache/cake; no_cache skips reading (the result is still stored). */
typedef struct JitOptions {
	const char *arch;
	const char *const *extra;
	int nextra;
	const char *cache_dir;
	bool no_cache;
} JitOptions;

/* Compile CUDA C++ `src` (named `name` in messages) to a cubin through NVRTC,
 * using the content-addressed cache. Returns JIT_*; on failure `err` holds a
 * one-line reason and out->log the compiler's log when there is one. */
int jit_compile(const char *src, const char *name, const JitOptions *o, JitResult *out, char *err, size_t errlen);
/* Free what jit_compile allocated in r (safe on a zeroed r). */
void jit_result_free(JitResult *r);
/* NVRTC version, or -1 with err filled when NVRTC cannot be loaded. */
int jit_nvrtc_version(int *major, int *minor, char *err, size_t errlen);
/* Parse ptxas -v text into per-kernel infos (the first max kernels); returns how
 * many kernels the text reports, which exceeds max when some did not fit
 * (jit_compile then fails rather than hide a kernel's spills). */
int jit_parse_ptxas(const char *log, JitKernelInfo *k, int max);
/* Directory used for the cubin cache (into buf); returns buf. */
const char *jit_cache_dir(const JitOptions *o, char *buf, size_t len);

/* ============================================================= driver ==== */

typedef uint64_t GpuPtr;            /* CUdeviceptr */

/* CUtensorMap: 128 opaque bytes, 64-byte aligned. */
typedef struct GpuTensorMap {
	_Alignas(64) uint64_t opaque[16];
} GpuTensorMap;

/* CUtensorMapDataType values used by Cake. */
enum { GPU_TMAP_U8 = 0, GPU_TMAP_F16 = 6, GPU_TMAP_F32 = 7, GPU_TMAP_BF16 = 9 };
/* CUtensorMapSwizzle values. */
enum { GPU_SWZ_NONE = 0, GPU_SWZ_32B = 1, GPU_SWZ_64B = 2, GPU_SWZ_128B = 3 };

typedef struct GpuApi GpuApi;       /* dlsym'd entry points (driver.c) */

typedef struct GpuDev {
	void *lib;          /* dlopen handle of libcuda.so.1 */
	GpuApi *api;
	int dev;            /* CUdevice */
	void *ctx;          /* primary CUcontext */
	void *stream;       /* CUstream used for everything (0 = legacy) */
	char name[256];
	int sm_count, cc_major, cc_minor, clock_khz;
	int smem_optin;     /* max dynamic smem per block after opt-in, bytes */
	int l2_bytes;
	int driver_version;
	char err[512];      /* last error: "cuXxx: CUDA_ERROR_...: text" */
	int last_cu;        /* last CUresult */
} GpuDev;

/* Result codes of gpu_open. */
enum { GPU_OK = 0, GPU_NO_DRIVER = 1, GPU_NO_DEVICE = 2, GPU_ERROR = 3 };

/* Load libcuda, cuInit, pick device `ordinal`, retain its primary context and
 * make it current. Returns GPU_*; on failure g->err says why. */
int gpu_open(GpuDev *g, int ordinal);
/* Release the context and the library (safe on a failed open). */
void gpu_close(GpuDev *g);
/* The message for "no driver": names the library and what to do. */
const char *gpu_no_driver_msg(void);

/* The functions below return 0 on success or the CUresult (g->err set). */
/* Allocate `bytes` of device memory into *p (cuMemAlloc). */
int gpu_alloc(GpuDev *g, GpuPtr *p, size_t bytes);
/* Free device memory (0 is a no-op). */
int gpu_free(GpuDev *g, GpuPtr p);
/* Copy host -> device, synchronous. */
int gpu_htod(GpuDev *g, GpuPtr dst, const void *src, size_t bytes);
/* Copy device -> host, synchronous; reports a pending kernel fault. */
int gpu_dtoh(GpuDev *g, void *dst, GpuPtr src, size_t bytes);
/* Fill `bytes` bytes with v (asynchronous on g->stream). */
int gpu_memset8(GpuDev *g, GpuPtr dst, unsigned char v, size_t bytes);
/* Wait for all work; a kernel fault surfaces here (illegal address, ...). */
int gpu_sync(GpuDev *g);
/* Page-lock host memory [p, p+bytes) (e.g. a MAP_SHARED region) and map it
 * for the device; *dptr receives the device-side address. */
int gpu_host_register(GpuDev *g, void *p, size_t bytes, GpuPtr *dptr);
/* Undo gpu_host_register. */
int gpu_host_unregister(GpuDev *g, void *p);

/* Load a cubin image; *mod receives the CUmodule. */
int gpu_module_load(GpuDev *g, const void *image, void **mod);
/* Unload a module loaded by gpu_module_load. */
int gpu_module_unload(GpuDev *g, void *mod);
/* Look up kernel `name` in mod. */
int gpu_module_func(GpuDev *g, void *mod, const char *name, void **fn);
/* Raise a kernel's dynamic shared-memory limit to `bytes`. */
int gpu_func_set_smem(GpuDev *g, void *fn, int bytes);
/* Registers per thread and local (stack) bytes of a loaded kernel. */
int gpu_func_info(GpuDev *g, void *fn, int *regs, int *local_bytes, int *static_smem);

/* Launch fn. cluster may be NULL or {1,1,1} for an ordinary launch; args is
 * the kernelParams array (one pointer per parameter). */
int gpu_launch(GpuDev *g, void *fn, const unsigned grid[3], const unsigned block[3],
               const unsigned *cluster, unsigned smem_bytes, void **args);

/* Create a timing event. */
int gpu_event_create(GpuDev *g, void **ev);
/* Destroy an event. */
int gpu_event_destroy(GpuDev *g, void *ev);
/* Record ev on g->stream. */
int gpu_event_record(GpuDev *g, void *ev);
/* Wait for `stop`, then *ms = time between the two recorded events. */
int gpu_event_elapsed_ms(GpuDev *g, void *start, void *stop, float *ms);

/* Encode a tiled TMA descriptor: rank dims (innermost first) dims[],
 * byte strides of dims 1..rank-1 in strides[], box[] elements per dim,
 * swizzle GPU_SWZ_*, dtype GPU_TMAP_*. L2 promotion 256B, no OOB fill. */
int gpu_tmap_encode(GpuDev *g, GpuTensorMap *m, int dtype, int rank, GpuPtr gaddr,
                    const uint64_t *dims, const uint64_t *strides, const uint32_t *box, int swizzle);

/* ============================================================= oracle ==== */

/* bf16 <-> float (round to nearest even; NaN preserved). */
uint16_t oracle_f32_to_bf16(float f);
/* bf16 bits -> float (exact). */
float oracle_bf16_to_f32(uint16_t h);

/* Reference for C = A·B^T over the rows listed in rows[0..nrows): A [M,K] and
 * B [N,K] bf16 row-major, result ref[nrows*N] in float64. nthreads > 1 splits
 * the rows over POSIX threads. */
void oracle_gemm_abt_bf16(const uint16_t *A, const uint16_t *B, int M, int N, int K,
                          const int *rows, int nrows, double *ref, int nthreads);

/* Comparison of an output against a reference. */
typedef struct OracleCmp {
	double rel_err;          /* ||out-ref|| / ||ref|| over the compared elements */
	long long n_nan;         /* NaN/inf outputs (poison still there, or produced) */
	long long first_bad;     /* flat index into the full output of the first NaN or
	                            element with |out-ref| > 0.1 + 0.1*|ref|; -1 if none */
	double first_bad_out, first_bad_ref;
} OracleCmp;

/* Compare bf16 output rows `rows` of C[M,N] against ref (as produced above). */
void oracle_compare_bf16_rows(const uint16_t *C, int N, const int *rows, int nrows,
                              const double *ref, OracleCmp *cmp);

/* Check a k-means assignment on the rows listed in rows[]: X [N,D] and
 * C [K,D] bf16, cnorm[K] f32, out[N] i32 the kernel's labels. The float64
 * score of centroid j for point i is cnorm[j] - 2 x_i·c_j; out[i] passes when
 * it is in [0,K) and its score is within tol*(1+|best|) of the best score
 * (near-ties may resolve either way in f32). cmp->rel_err receives the largest
 * normalised gap, first_bad the first failing point (first_bad_out = its
 * label, first_bad_ref = the float64 argmin). Returns the number of failing rows. */
long long oracle_kmeans_assign_check(const uint16_t *X, const uint16_t *C, const float *cnorm, int K, int D,
                                     const int32_t *out, const int *rows, int nrows, double tol, OracleCmp *cmp);

/* f16 <-> float (round to nearest even; NaN, inf and subnormals handled). */
uint16_t oracle_f32_to_f16(float f);
/* f16 bits -> float (exact). */
float oracle_f16_to_f32(uint16_t h);
/* A 16-bit element (f16 when f16, else bf16) -> float, and back. */
float oracle_elt_to_f32(uint16_t h, bool f16);
/* float -> 16-bit element (f16 when f16, else bf16), round to nearest even. */
uint16_t oracle_f32_to_elt(float f, bool f16);

/* Tolerance of the k-means checks for bf16/f16 data: 2^-8, the bf16 unit
 * roundoff (labels: relative gap between two nearest scores; centroids:
 * relative error of an element). */
#define ORACLE_KMEANS_TOL 0x1p-8

/* Outcome of oracle_kmeans_assign. */
typedef struct KmeansAssignCheck {
	long long checked;       /* points compared (finite inputs) */
	long long mismatches;    /* labels that are not the float64 argmin and not within tol of it */
	long long ties_excused;  /* labels != argmin whose score is within tol·scale of the best */
	long long nan_points;    /* points with a NaN/inf coordinate (excluded, reported) */
	long long nan_centroids; /* centroids with a NaN/inf coordinate (never nearest) */
	double max_tie_gap;      /* largest score gap among the excused ties */
	long long first_bad;     /* point index of the first mismatch, -1 if none */
	int first_bad_out, first_bad_ref;  /* its label and the float64 argmin */
	double first_bad_gap;    /* its score minus the best score (inf: label out of range) */
} KmeansAssignCheck;

/* Check k-means labels out[] on the points rows[0..nrows) of X [N,D] against
 * centroids C [K,D] (bf16, or f16 when f16). cnorm NULL: score = ‖x−c‖² in
 * float64; else score = cnorm[j] − 2·x·c_j (the kernel's form). A label must
 * be the argmin (lowest index on exact ties) unless its score is within
 * tol·scale of the best (an excused tie, counted). nthreads > 1 splits the
 * rows over POSIX threads. Returns the number of mismatches, -1 on OOM. */
long long oracle_kmeans_assign(const uint16_t *X, const uint16_t *C, bool f16, const float *cnorm, int K, int D,
                               const int32_t *out, const int *rows, int nrows, double tol, int nthreads,
                               KmeansAssignCheck *res);

/* Float64 centroid update: Cnew[K*D] = mean of the points labelled c, or
 * the old centroid Cold (bf16/f16) when cluster c is empty; counts[K] the
 * cluster sizes; absmean[K*D] (may be NULL) the mean |x| per element, used
 * to size the summation tolerance. Returns the number of labels outside
 * [0,K) (ignored). */
long long oracle_kmeans_update(const uint16_t *X, bool f16, const int32_t *labels, int N, int D, int K,
                               const uint16_t *Cold, double *Cnew, long long *counts, double *absmean);

/* Outcome of oracle_kmeans_update_check. */
typedef struct KmeansUpdateCheck {
	double rel_err;          /* ‖out−ref‖/‖ref‖ over the non-empty clusters (NaN if any NaN) */
	long long bad;           /* elements outside tolerance (incl. NaN and changed empties) */
	long long n_nan;         /* NaN/inf elements of non-empty clusters */
	long long empty;         /* clusters without members */
	long long empty_changed; /* elements of empty clusters that differ from the old centroid */
	long long first_bad;     /* flat index of the first bad element, -1 if none */
	double first_bad_out, first_bad_ref;
	long long norm_bad;      /* oracle_kmeans_divide_check: wrong ‖c‖² entries */
	long long shift_bad;     /* oracle_kmeans_divide_check: wrong ‖c_new − c_old‖² entries */
} KmeansUpdateCheck;

/* Compare new centroids Cout [K,D] (bf16/f16) against oracle_kmeans_update's
 * ref: element error <= tol·(|ref| + absmean·2^-10); empty clusters must hold
 * Cold bit for bit. Returns the number of bad elements. */
long long oracle_kmeans_update_check(const uint16_t *Cout, bool f16, const double *ref, const double *absmean,
                                     const long long *counts, const uint16_t *Cold, int K, int D, double tol,
                                     KmeansUpdateCheck *res);

/* Check the divide step alone: Cout [K,D] must be sums/counts rounded to the
 * 16-bit type where counts > 0 (tolerance as above) and Cold bit for bit
 * where counts <= 0; cnorm[K] must be ‖Cout‖² and shift[K] ‖Cout − Cold‖²
 * (relative 1e-5). Returns the number of bad elements and entries, -1 on OOM. */
long long oracle_kmeans_divide_check(const float *sums, const int32_t *counts, const uint16_t *Cold, bool f16, int K,
                                     int D, const uint16_t *Cout, const float *cnorm, const float *shift, double tol,
                                     KmeansUpdateCheck *res);

/* Inputs of the segmented update (kernels/kmeans/update_segmented.cake): labels
 * uniform over the clusters left non-empty (about one cluster in 8, and at
 * least one when K >= 2, receives no point), order[N] = the point ids grouped
 * by label (a counting sort, ids ascending within a cluster), offsets[K+1] =
 * the exclusive prefix sum of the cluster sizes, offsets[K] = N. labels may
 * be NULL. Reproducible from seed. */
void oracle_kmeans_segments(long long N, int K, uint64_t seed, int32_t *labels, int32_t *order, int32_t *offsets);

/* Check a segmented update: cluster c is the segment order[offsets[c] ..
 * offsets[c+1]); Cout [K,D] (bf16/f16) must be the float64 mean of its
 * points X [N,D] rounded to the 16-bit type (tolerance of
 * oracle_kmeans_update_check) and Cold bit for bit for an empty segment.
 * Returns the number of bad elements, -1 on OOM, -2 when the segments are
 * malformed (offsets not non-decreasing from 0 to N, an id outside [0,N)). */
long long oracle_kmeans_segmented_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                        const int32_t *offsets, const uint16_t *Cold, const uint16_t *Cout, double tol,
                                        KmeansUpdateCheck *res);

/* Check segment sums (kmeans_segsum of kernels/kmeans/update_sorted.cake):
 * cluster c is the segment order[offsets[c] .. offsets[c] + counts[c]); sums
 * [K,D] (f32) must be the float64 sum of its points X [N,D] within the
 * rigorous bound of an f32 running sum, max(n,1)·2⁻²⁴·Σ|x| (+1e-30), and
 * exactly 0 for an empty segment. res->empty counts the empty segments.
 * Returns the number of bad elements, -1 on OOM, -2 when the segments are
 * malformed (a segment outside [0,N), an id outside [0,N)). */
long long oracle_kmeans_segsum_check(const uint16_t *X, bool f16, long long N, int D, int K, const int32_t *order,
                                     const int32_t *offsets, const int32_t *counts, const float *sums,
                                     KmeansUpdateCheck *res);

/* Deterministic generator (splitmix64). */
uint64_t oracle_splitmix64(uint64_t *state);
/* Fill n bf16 values uniform in [-1,1], never exactly zero. */
void oracle_fill_bf16(uint16_t *dst, size_t n, uint64_t seed);

/* ============================================================= runner ==== */

/* Verdicts of one isolated candidate run. */
typedef enum RunVerdict {
	RUN_OK = 0, RUN_MISMATCH, RUN_HANG, RUN_FAULT, RUN_COMPILE_ERROR,
	RUN_LAUNCH_ERROR, RUN_REFUSED, RUN_NO_GPU, RUN_INTERNAL
} RunVerdict;

/* Name of a verdict ("ok", "mismatch", "hang", ...). */
const char *run_verdict_name(RunVerdict v);

struct Plan;
struct Kernel;
struct StrBuf;
/* Turn a --debug-hang flight recorder (ctas * plan->nwarpgroups CakeHangRecord
 * slots, layout in src/lower/lower.h) into a one-line story naming, for the
 * first CTA with a pending wait, each role's barrier[stage], phase, loop
 * iteration and IR line, plus how many CTAs are stuck. Appends to out. */
void run_hang_story(const struct Plan *p, const struct Kernel *k, const void *rec, long long ctas, struct StrBuf *out);

/* `cake run`: parse argv (after the subcommand), lower, JIT, run isolated,
 * print the verdict (text or --format=json). Returns the process exit code. */
int run_main(int argc, char **argv);
/* Fill n elements of dtype `dtype` (a DType of src/front/ast.h) with seeded random
 * values: floats finite, non-zero, in [-1, 1] (f16 kept in its normal range); integers
 * in [0, 64). The same seed gives the same bytes. */
void run_fill_input(void *h, int dtype, size_t n, uint64_t seed);

/* `cake kmeans`: Lloyd iterations (assign -> update -> shift check) on the GPU
 * with the kernels/kmeans Cake IR kernels; argv[0] is the subcommand. Prints
 * iterations, inertia and time per phase (text or --format=json). Returns
 * the exit code (GPU_EXIT_NO_DRIVER without a GPU, 2 on bad input). */
int kmeans_main(int argc, char **argv);

#endif
