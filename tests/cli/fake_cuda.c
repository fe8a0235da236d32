/*
 * fake_cuda.c — a stand-in libcuda.so.1 for testing host programs without a GPU.
 *
 * Built by tests/cli/kda.sh into a temporary directory that is put first on
 * LD_LIBRARY_PATH, so src/gpu/driver.c's dlopen("libcuda.so.1") finds it. Every
 * entry point driver.c resolves is here and succeeds: device memory is host memory
 * (malloc), copies are memcpy, events time nothing (0.01 ms), streams, modules and
 * graphs are dummy handles, and a kernel launch does nothing: so a host program's
 * control flow (allocation, argument blocks, stream capture, timing, checking,
 * reporting) runs under the sanitizers while its outputs keep whatever the host put
 * there (the poison), which the program's check must then report. Not a CUDA
 * implementation; never installed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static int handle_;   /* any non-NULL address */

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *s, int n, int d) { (void)d; strncpy(s, "Fake GPU (tests/cli/fake_cuda.c)", (size_t)n); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
	(void)d;
	*v = a == 16 ? 132 : a == 75 ? 9 : a == 76 ? 0 : a == 13 ? 1980000 : a == 97 ? 232448 : a == 38 ? 50331648 : 1;
	return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &handle_; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake error"; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { void *m = malloc(n ? n : 1); *p = (uint64_t)(uintptr_t)m; return m ? 0 : 2; }
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { memcpy(d, (const void *)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return 0; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { (void)p, (void)n, (void)f; return 0; }
CUresult cuMemHostUnregister(void *p) { (void)p; return 0; }
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *p, unsigned f) { (void)f; *d = (uint64_t)(uintptr_t)p; return 0; }
CUresult cuModuleLoadData(void **m, const void *img) { (void)img; *m = &handle_; return 0; }
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *n) { (void)m, (void)n; *f = &handle_; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f, (void)a, (void)v; return 0; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { (void)a, (void)f; *v = 0; return 0; }
CUresult cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned s, void *st, void **p, void **x)
{
	(void)f, (void)a, (void)b, (void)c, (void)d, (void)e, (void)g, (void)s, (void)st, (void)p, (void)x;
	return 0;
}
CUresult cuLaunchKernelEx(const void *cfg, void *f, void **p, void **x) { (void)cfg, (void)f, (void)p, (void)x; return 0; }
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = malloc(8); return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e, (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0.01f; return 0; }
CUresult cuTensorMapEncodeTiled(void *m, int dt, unsigned r, void *g, const uint64_t *d, const uint64_t *s, const uint32_t *b,
                                const uint32_t *e, int il, int sw, int l2, int oob)
{
	(void)dt, (void)r, (void)g, (void)d, (void)s, (void)b, (void)e, (void)il, (void)sw, (void)l2, (void)oob;
	memset(m, 0, 128);
	return 0;
}
CUresult cuStreamCreate(void **s, unsigned f) { (void)f; *s = malloc(8); return 0; }
CUresult cuStreamDestroy_v2(void *s) { free(s); return 0; }
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
static int capturing_;
CUresult cuStreamBeginCapture_v2(void *s, int mode) { (void)s, (void)mode; capturing_ = 1; return 0; }
CUresult cuStreamEndCapture(void *s, void **g) { (void)s; *g = capturing_ ? malloc(8) : NULL; capturing_ = 0; return *g ? 0 : 900; }
CUresult cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) { (void)g, (void)f; *e = malloc(8); return 0; }
CUresult cuGraphLaunch(void *e, void *s) { (void)e, (void)s; return 0; }
CUresult cuGraphExecDestroy(void *e) { free(e); return 0; }
CUresult cuGraphDestroy(void *g) { free(g); return 0; }
/* NVRTC looks for a driver in the process and asks it for its private tables; having none
 * (an error), it compiles on its own. */
CUresult cuGetExportTable(const void **tbl, const void *id) { (void)id; *tbl = NULL; return 801; /* CUDA_ERROR_NOT_SUPPORTED */ }
