/*
 * driver.c — the CUDA driver API, reached through dlopen("libcuda.so.1").
 *
 * Cake must build and run every CPU-side command on machines without a GPU,
 * so it never links libcuda. gpu_open() loads the library, resolves the
 * handful of entry points Cake uses (by their versioned symbol names, since
 * cuda.h's macros are not in play), initialises the driver and retains the
 * device's primary context. Every wrapper returns 0 or the CUresult and, on
 * error, writes "cuXxx: CUDA_ERROR_NAME: description" into g->err using the
 * driver's own cuGetErrorName/cuGetErrorString, so a fault in a kernel is
 * reported in the driver's words (e.g. "an illegal memory access was
 * encountered").
 *
 * Types are mirrored minimally: handles are void *, CUdeviceptr is uint64_t,
 * CUtensorMap is 128 opaque bytes aligned to 64, and the launch config for
 * cuLaunchKernelEx is re-declared with the same layout as cuda.h (a 64-byte
 * attribute value union after an 8-byte id slot).
 *
 * CUDA graphs: gpu_graph_begin() captures what is then enqueued on g->stream
 * (a stream of Cake's own, gpu_stream_create: the legacy stream cannot be
 * captured) until gpu_graph_end(), which instantiates it; gpu_graph_launch()
 * replays it. A decode step is a few microseconds of kernel, so per-call
 * launch overhead would dominate a timing of single launches; a graph of
 * many launches times the kernels themselves (what ANCHORS.md's decode
 * numbers are).
 */
#include "gpu.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

/* cuda.h layouts we need to reproduce exactly. */
typedef struct CuLaunchAttr {
	int id;
	char pad[4];
	union {
		char pad[64];
		struct { unsigned x, y, z; } dim;
	} value;
} CuLaunchAttr;

typedef struct CuLaunchConfig {
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	void *hStream;
	CuLaunchAttr *attrs;
	unsigned numAttrs;
} CuLaunchConfig;

enum {
	CU_ATTR_CLOCK_RATE = 13, CU_ATTR_SM_COUNT = 16, CU_ATTR_L2_SIZE = 38,
	CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76, CU_ATTR_SMEM_OPTIN = 97,
	CU_FUNC_SHARED_SIZE = 1, CU_FUNC_LOCAL_SIZE = 3, CU_FUNC_NUM_REGS = 4,
	CU_FUNC_MAX_DYN_SMEM = 8,
	CU_LAUNCH_ATTR_CLUSTER_DIM = 4,
	CU_MEMHOSTREGISTER_DEVICEMAP = 2, CU_MEMHOSTREGISTER_PORTABLE = 1,
	CU_ERROR_NO_DEVICE = 100,
};

struct GpuApi {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(int *, int);
	CUresult (*DeviceGetName)(char *, int, int);
	CUresult (*DeviceGetAttribute)(int *, int, int);
	CUresult (*PrimaryCtxRetain)(void **, int);
	CUresult (*PrimaryCtxRelease)(int);
	CUresult (*CtxSetCurrent)(void *);
	CUresult (*CtxSynchronize)(void);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*MemAlloc)(GpuPtr *, size_t);
	CUresult (*MemFree)(GpuPtr);
	CUresult (*MemcpyHtoD)(GpuPtr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, GpuPtr, size_t);
	CUresult (*MemsetD8)(GpuPtr, unsigned char, size_t);
	CUresult (*MemHostRegister)(void *, size_t, unsigned);
	CUresult (*MemHostUnregister)(void *);
	CUresult (*MemHostGetDevicePointer)(GpuPtr *, void *, unsigned);
	CUresult (*ModuleLoadData)(void **, const void *);
	CUresult (*ModuleUnload)(void *);
	CUresult (*ModuleGetFunction)(void **, void *, const char *);
	CUresult (*FuncSetAttribute)(void *, int, int);
	CUresult (*FuncGetAttribute)(int *, int, void *);
	CUresult (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         unsigned, void *, void **, void **);
	CUresult (*LaunchKernelEx)(const CuLaunchConfig *, void *, void **, void **);
	CUresult (*EventCreate)(void **, unsigned);
	CUresult (*EventDestroy)(void *);
	CUresult (*EventRecord)(void *, void *);
	CUresult (*EventSynchronize)(void *);
	CUresult (*EventElapsedTime)(float *, void *, void *);
	CUresult (*TensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
	                                 const uint32_t *, const uint32_t *, int, int, int, int);
	/* streams and CUDA graphs (stream capture) */
	CUresult (*StreamCreate)(void **, unsigned);
	CUresult (*StreamDestroy)(void *);
	CUresult (*StreamSynchronize)(void *);
	CUresult (*StreamBeginCapture)(void *, int);
	CUresult (*StreamEndCapture)(void *, void **);
	CUresult (*GraphInstantiateWithFlags)(void **, void *, unsigned long long);
	CUresult (*GraphLaunch)(void *, void *);
	CUresult (*GraphExecDestroy)(void *);
	CUresult (*GraphDestroy)(void *);
};

const char *gpu_no_driver_msg(void)
{
	return "no CUDA driver found (libcuda.so.1): this command needs an NVIDIA GPU";
}

/* Record a failed call as "fn: NAME: description" and return the code. */
static int fail(GpuDev *g, const char *fn, CUresult r)
{
	const char *name = NULL, *str = NULL;
	if (g->api && g->api->GetErrorName)
		g->api->GetErrorName(r, &name);
	if (g->api && g->api->GetErrorString)
		g->api->GetErrorString(r, &str);
	snprintf(g->err, sizeof g->err, "%s: %s: %s", fn, name ? name : "CUDA_ERROR_UNKNOWN",
	         str ? str : "unknown error");
	g->last_cu = r;
	return r;
}

#define CK(g, fn, call) do { CUresult r_ = (call); if (r_ != 0) return fail((g), (fn), r_); } while (0)

static void *sym(void *lib, const char *name, int *missing)
{
	void *p = dlsym(lib, name);
	if (!p)
		(*missing)++;
	return p;
}

int gpu_open(GpuDev *g, int ordinal)
{
	memset(g, 0, sizeof *g);
	g->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		snprintf(g->err, sizeof g->err, "%s", gpu_no_driver_msg());
		return GPU_NO_DRIVER;
	}
	GpuApi *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(g->err, sizeof g->err, "out of memory");
		return GPU_ERROR;
	}
	g->api = a;
	int miss = 0;
	void *L = g->lib;
#define S(field, name) *(void **)&a->field = sym(L, name, &miss)
	S(Init, "cuInit");
	S(DriverGetVersion, "cuDriverGetVersion");
	S(DeviceGetCount, "cuDeviceGetCount");
	S(DeviceGet, "cuDeviceGet");
	S(DeviceGetName, "cuDeviceGetName");
	S(DeviceGetAttribute, "cuDeviceGetAttribute");
	S(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	S(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
	S(CtxSetCurrent, "cuCtxSetCurrent");
	S(CtxSynchronize, "cuCtxSynchronize");
	S(GetErrorString, "cuGetErrorString");
	S(GetErrorName, "cuGetErrorName");
	S(MemAlloc, "cuMemAlloc_v2");
	S(MemFree, "cuMemFree_v2");
	S(MemcpyHtoD, "cuMemcpyHtoD_v2");
	S(MemcpyDtoH, "cuMemcpyDtoH_v2");
	S(MemsetD8, "cuMemsetD8_v2");
	S(MemHostRegister, "cuMemHostRegister_v2");
	S(MemHostUnregister, "cuMemHostUnregister");
	S(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
	S(ModuleLoadData, "cuModuleLoadData");
	S(ModuleUnload, "cuModuleUnload");
	S(ModuleGetFunction, "cuModuleGetFunction");
	S(FuncSetAttribute, "cuFuncSetAttribute");
	S(FuncGetAttribute, "cuFuncGetAttribute");
	S(LaunchKernel, "cuLaunchKernel");
	S(LaunchKernelEx, "cuLaunchKernelEx");
	S(EventCreate, "cuEventCreate");
	S(EventDestroy, "cuEventDestroy_v2");
	S(EventRecord, "cuEventRecord");
	S(EventSynchronize, "cuEventSynchronize");
	S(EventElapsedTime, "cuEventElapsedTime");
	S(TensorMapEncodeTiled, "cuTensorMapEncodeTiled");
	S(StreamCreate, "cuStreamCreate");
	S(StreamDestroy, "cuStreamDestroy_v2");
	S(StreamSynchronize, "cuStreamSynchronize");
	S(StreamBeginCapture, "cuStreamBeginCapture_v2");
	S(StreamEndCapture, "cuStreamEndCapture");
	S(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
	S(GraphLaunch, "cuGraphLaunch");
	S(GraphExecDestroy, "cuGraphExecDestroy");
	S(GraphDestroy, "cuGraphDestroy");
#undef S
	if (miss) {
		snprintf(g->err, sizeof g->err,
		         "libcuda.so.1 is too old: %d driver entry points are missing (Cake needs CUDA 12+ drivers)", miss);
		return GPU_ERROR;
	}
	CUresult r = a->Init(0);
	if (r == CU_ERROR_NO_DEVICE) {
		fail(g, "cuInit", r);
		return GPU_NO_DEVICE;
	}
	if (r)
		return fail(g, "cuInit", r), GPU_ERROR;
	a->DriverGetVersion(&g->driver_version);
	int n = 0;
	if ((r = a->DeviceGetCount(&n)))
		return fail(g, "cuDeviceGetCount", r), GPU_ERROR;
	if (n <= ordinal) {
		snprintf(g->err, sizeof g->err, "no CUDA device %d (the driver reports %d)", ordinal, n);
		return GPU_NO_DEVICE;
	}
	if ((r = a->DeviceGet(&g->dev, ordinal)))
		return fail(g, "cuDeviceGet", r), GPU_ERROR;
	a->DeviceGetName(g->name, sizeof g->name, g->dev);
	a->DeviceGetAttribute(&g->sm_count, CU_ATTR_SM_COUNT, g->dev);
	a->DeviceGetAttribute(&g->cc_major, CU_ATTR_CC_MAJOR, g->dev);
	a->DeviceGetAttribute(&g->cc_minor, CU_ATTR_CC_MINOR, g->dev);
	a->DeviceGetAttribute(&g->clock_khz, CU_ATTR_CLOCK_RATE, g->dev);
	a->DeviceGetAttribute(&g->smem_optin, CU_ATTR_SMEM_OPTIN, g->dev);
	a->DeviceGetAttribute(&g->l2_bytes, CU_ATTR_L2_SIZE, g->dev);
	if ((r = a->PrimaryCtxRetain(&g->ctx, g->dev)))
		return fail(g, "cuDevicePrimaryCtxRetain", r), GPU_ERROR;
	if ((r = a->CtxSetCurrent(g->ctx)))
		return fail(g, "cuCtxSetCurrent", r), GPU_ERROR;
	return GPU_OK;
}

int gpu_sm_count(int ordinal)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 0;
	CUresult (*init)(unsigned) = NULL, (*get)(int *, int) = NULL, (*attr)(int *, int, int) = NULL;
	*(void **)&init = dlsym(lib, "cuInit");
	*(void **)&get = dlsym(lib, "cuDeviceGet");
	*(void **)&attr = dlsym(lib, "cuDeviceGetAttribute");
	int dev = 0, n = 0;
	if (!init || !get || !attr || init(0) || get(&dev, ordinal) || attr(&n, CU_ATTR_SM_COUNT, dev))
		return 0;
	return n > 0 ? n : 0;   /* libcuda stays loaded, as after gpu_close */
}

void gpu_close(GpuDev *g)
{
	if (g->ctx && g->api)
		g->api->PrimaryCtxRelease(g->dev);
	g->ctx = NULL;
	free(g->api);
	g->api = NULL;
	/* libcuda is not dlclose'd: the driver keeps process-lifetime state and
	 * threads that unloading would pull out from under it. */
	g->lib = NULL;
}

int gpu_alloc(GpuDev *g, GpuPtr *p, size_t bytes)
{
	CK(g, "cuMemAlloc", g->api->MemAlloc(p, bytes));
	return 0;
}

int gpu_free(GpuDev *g, GpuPtr p)
{
	if (!p)
		return 0;
	CK(g, "cuMemFree", g->api->MemFree(p));
	return 0;
}

int gpu_htod(GpuDev *g, GpuPtr dst, const void *src, size_t bytes)
{
	CK(g, "cuMemcpyHtoD", g->api->MemcpyHtoD(dst, src, bytes));
	return 0;
}

int gpu_dtoh(GpuDev *g, void *dst, GpuPtr src, size_t bytes)
{
	CK(g, "cuMemcpyDtoH", g->api->MemcpyDtoH(dst, src, bytes));
	return 0;
}

int gpu_memset8(GpuDev *g, GpuPtr dst, unsigned char v, size_t bytes)
{
	CK(g, "cuMemsetD8", g->api->MemsetD8(dst, v, bytes));
	return 0;
}

int gpu_sync(GpuDev *g)
{
	CK(g, "cuCtxSynchronize", g->api->CtxSynchronize());
	return 0;
}

int gpu_host_register(GpuDev *g, void *p, size_t bytes, GpuPtr *dptr)
{
	CK(g, "cuMemHostRegister", g->api->MemHostRegister(p, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
	CK(g, "cuMemHostGetDevicePointer", g->api->MemHostGetDevicePointer(dptr, p, 0));
	return 0;
}

int gpu_host_unregister(GpuDev *g, void *p)
{
	CK(g, "cuMemHostUnregister", g->api->MemHostUnregister(p));
	return 0;
}

int gpu_module_load(GpuDev *g, const void *image, void **mod)
{
	CK(g, "cuModuleLoadData", g->api->ModuleLoadData(mod, image));
	return 0;
}

int gpu_module_unload(GpuDev *g, void *mod)
{
	CK(g, "cuModuleUnload", g->api->ModuleUnload(mod));
	return 0;
}

int gpu_module_func(GpuDev *g, void *mod, const char *name, void **fn)
{
	CUresult r = g->api->ModuleGetFunction(fn, mod, name);
	if (r) {
		fail(g, "cuModuleGetFunction", r);
		size_t l = strlen(g->err);
		snprintf(g->err + l, sizeof g->err - l, " (kernel '%s')", name);
		return r;
	}
	return 0;
}

int gpu_func_set_smem(GpuDev *g, void *fn, int bytes)
{
	CK(g, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", g->api->FuncSetAttribute(fn, CU_FUNC_MAX_DYN_SMEM, bytes));
	return 0;
}

int gpu_func_info(GpuDev *g, void *fn, int *regs, int *local_bytes, int *static_smem)
{
	CK(g, "cuFuncGetAttribute", g->api->FuncGetAttribute(regs, CU_FUNC_NUM_REGS, fn));
	CK(g, "cuFuncGetAttribute", g->api->FuncGetAttribute(local_bytes, CU_FUNC_LOCAL_SIZE, fn));
	CK(g, "cuFuncGetAttribute", g->api->FuncGetAttribute(static_smem, CU_FUNC_SHARED_SIZE, fn));
	return 0;
}

int gpu_launch(GpuDev *g, void *fn, const unsigned grid[3], const unsigned block[3],
               const unsigned *cluster, unsigned smem_bytes, void **args)
{
	CuLaunchConfig cfg;
	CuLaunchAttr attr;
	memset(&cfg, 0, sizeof cfg);
	memset(&attr, 0, sizeof attr);
	cfg.gridDimX = grid[0];
	cfg.gridDimY = grid[1];
	cfg.gridDimZ = grid[2];
	cfg.blockDimX = block[0];
	cfg.blockDimY = block[1];
	cfg.blockDimZ = block[2];
	cfg.sharedMemBytes = smem_bytes;
	cfg.hStream = g->stream;
	if (cluster && cluster[0] * cluster[1] * cluster[2] > 1) {
		attr.id = CU_LAUNCH_ATTR_CLUSTER_DIM;
		attr.value.dim.x = cluster[0];
		attr.value.dim.y = cluster[1];
		attr.value.dim.z = cluster[2];
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
	}
	CK(g, "cuLaunchKernelEx", g->api->LaunchKernelEx(&cfg, fn, args, NULL));
	return 0;
}

int gpu_event_create(GpuDev *g, void **ev)
{
	CK(g, "cuEventCreate", g->api->EventCreate(ev, 0));
	return 0;
}

int gpu_event_destroy(GpuDev *g, void *ev)
{
	CK(g, "cuEventDestroy", g->api->EventDestroy(ev));
	return 0;
}

int gpu_event_record(GpuDev *g, void *ev)
{
	CK(g, "cuEventRecord", g->api->EventRecord(ev, g->stream));
	return 0;
}

int gpu_event_elapsed_ms(GpuDev *g, void *start, void *stop, float *ms)
{
	CK(g, "cuEventSynchronize", g->api->EventSynchronize(stop));
	CK(g, "cuEventElapsedTime", g->api->EventElapsedTime(ms, start, stop));
	return 0;
}

int gpu_stream_create(GpuDev *g, void **s)
{
	CK(g, "cuStreamCreate", g->api->StreamCreate(s, 0 /* CU_STREAM_DEFAULT: ordered with the legacy stream's copies */));
	return 0;
}

int gpu_stream_destroy(GpuDev *g, void *s)
{
	if (s)
		CK(g, "cuStreamDestroy", g->api->StreamDestroy(s));
	return 0;
}

int gpu_stream_sync(GpuDev *g)
{
	CK(g, "cuStreamSynchronize", g->api->StreamSynchronize(g->stream));
	return 0;
}

int gpu_graph_begin(GpuDev *g)
{
	if (!g->stream) {
		snprintf(g->err, sizeof g->err, "cuStreamBeginCapture: the legacy stream cannot be captured; create a stream first (gpu_stream_create)");
		return GPU_ERROR;
	}
	CK(g, "cuStreamBeginCapture", g->api->StreamBeginCapture(g->stream, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */));
	return 0;
}

int gpu_graph_end(GpuDev *g, void **exec)
{
	void *graph = NULL;
	*exec = NULL;
	CK(g, "cuStreamEndCapture", g->api->StreamEndCapture(g->stream, &graph));
	CUresult r = g->api->GraphInstantiateWithFlags(exec, graph, 0);
	g->api->GraphDestroy(graph);   /* the executable graph keeps what it needs */
	if (r)
		return fail(g, "cuGraphInstantiateWithFlags", r);
	return 0;
}

int gpu_graph_launch(GpuDev *g, void *exec)
{
	CK(g, "cuGraphLaunch", g->api->GraphLaunch(exec, g->stream));
	return 0;
}

int gpu_graph_destroy(GpuDev *g, void *exec)
{
	if (exec)
		CK(g, "cuGraphExecDestroy", g->api->GraphExecDestroy(exec));
	return 0;
}

int gpu_tmap_encode(GpuDev *g, GpuTensorMap *m, int dtype, int rank, GpuPtr gaddr,
                    const uint64_t *dims, const uint64_t *strides, const uint32_t *box, int swizzle)
{
	uint32_t estr[5] = {1, 1, 1, 1, 1};
	if (rank < 1 || rank > 5) {
		snprintf(g->err, sizeof g->err, "cuTensorMapEncodeTiled: rank %d outside 1..5", rank);
		return 1;
	}
	CK(g, "cuTensorMapEncodeTiled",
	   g->api->TensorMapEncodeTiled(m, dtype, (unsigned)rank, (void *)(uintptr_t)gaddr, dims, strides, box, estr,
	                                0 /* interleave none */, swizzle, 3 /* L2 promotion 256B */, 0 /* no OOB NaN fill */));
	return 0;
}
