/*
 * gpu.h — Cake's GPU side, lowest layer: NVRTC JIT with a cubin cache
 * (jit.c) and the CUDA driver API reached through dlopen (driver.c). The
 * launch layer (launch.h) and the isolated runner (run.h) build on these.
 *
 * Nothing here needs CUDA headers at build time: the few driver and NVRTC
 * types are declared below as opaque handles and plain integers, and the
 * libraries are opened at run time. A machine without NVRTC can still build
 * and test every CPU-side part of Cake; a machine without a GPU can still JIT.
 *
 * Module prefixes: jit_ (NVRTC + cache), gpu_ (driver).
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
/* Device ordinal's SM count from the driver, without a context (cuInit and one attribute); 0
 * without a driver or that device. For choices made before the device is opened (the KDA
 * state pass's layout, kda_state_paired), so a CPU-side refusal still comes first. */
int gpu_sm_count(int ordinal);
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

/* Streams and CUDA graphs (driver.c). A created stream (CU_STREAM_DEFAULT, so
 * the synchronous copies still order with it) can be made g->stream; capture
 * needs one. gpu_graph_begin starts capturing g->stream (relaxed mode),
 * gpu_graph_end stops and instantiates the graph into *exec, gpu_graph_launch
 * replays it on g->stream. */
int gpu_stream_create(GpuDev *g, void **s);
int gpu_stream_destroy(GpuDev *g, void *s);
/* Wait for everything enqueued on g->stream. */
int gpu_stream_sync(GpuDev *g);
int gpu_graph_begin(GpuDev *g);
int gpu_graph_end(GpuDev *g, void **exec);
int gpu_graph_launch(GpuDev *g, void *exec);
int gpu_graph_destroy(GpuDev *g, void *exec);

/* Encode a tiled TMA descriptor: rank dims (innermost first) dims[],
 * byte strides of dims 1..rank-1 in strides[], box[] elements per dim,
 * swizzle GPU_SWZ_*, dtype GPU_TMAP_*. L2 promotion 256B, no OOB fill. */
int gpu_tmap_encode(GpuDev *g, GpuTensorMap *m, int dtype, int rank, GpuPtr gaddr,
                    const uint64_t *dims, const uint64_t *strides, const uint32_t *box, int swizzle);

#endif
