/*
 * fake_cuda.c — a stand-in libcuda.so.1 for testing host programs without a GPU.
 *
 * Built by tests/cli/kda.sh into a temporary directory that is put first on
 * LD_LIBRARY_PATH, so src/gpu/driver.c's dlopen("libcuda.so.1") finds it. Every
 * entry point driver.c resolves is here and succeeds: device memory is host memory
 * (calloc: zeros, so what a program reads back from memory no kernel wrote is the same on
 * every run, not whatever the heap held), copies are memcpy, events time nothing (0.01 ms), streams, modules and
 * graphs are dummy handles, and a kernel launch does nothing: so a host program's
 * control flow (allocation, argument blocks, stream capture, timing, checking,
 * reporting) runs under the sanitizers while its outputs keep whatever the host put
 * there (the poison), which the program's check must then report. With
 * FAKE_CUDA_LAUNCHES=FILE set, every accepted cuLaunchKernelEx appends its grid and
 * block ("gx gy gz bx by bz") as a line to FILE, so a test can count launches. Not a
 * CUDA implementation; never installed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static int handle_;   /* any non-NULL address */
static void *current_; /* the current context */

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *s, int n, int d) { (void)d; strncpy(s, "Fake GPU (tests/cli/fake_cuda.c)", (size_t)n); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
	(void)d;
	const char *sms = getenv("FAKE_CUDA_SMS");   /* the SM count, 132 unless set */
	*v = a == 16 ? (sms ? atoi(sms) : 132) : a == 75 ? 9 : a == 76 ? 0 : a == 13 ? 1980000 : a == 97 ? 232448 : a == 38 ? 50331648 : 1;
	return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &handle_; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *c) { current_ = c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake error"; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { void *m = calloc(1, n ? n : 1); *p = (uint64_t)(uintptr_t)m; return m ? 0 : 2; }
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
/* CUlaunchConfig's leading fields; a launch the real driver would refuse is refused */
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, smem;
	void *stream;
	void *attrs;
	unsigned nattrs;
} FakeLaunchConfig;
CUresult cuLaunchKernelEx(const void *cfg, void *f, void **p, void **x)
{
	const FakeLaunchConfig *c = cfg;
	(void)f, (void)x;
	if (!c->gx || !c->gy || !c->gz || c->gy > 65535 || c->gz > 65535 || !c->bx || !c->by || !c->bz ||
	    (unsigned long long)c->bx * c->by * c->bz > 1024 || c->smem > 232448 || !p)
		return 1;   /* CUDA_ERROR_INVALID_VALUE */
	const char *log = getenv("FAKE_CUDA_LAUNCHES");
	FILE *lf = log && *log ? fopen(log, "a") : NULL;
	if (lf) {
		fprintf(lf, "%u %u %u %u %u %u\n", c->gx, c->gy, c->gz, c->bx, c->by, c->bz);
		fclose(lf);
	}
	return 0;
}
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = malloc(8); return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e, (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0.01f; return 0; }
CUresult cuTensorMapEncodeTiled(void *m, int dt, unsigned r, void *g, const uint64_t *d, const uint64_t *s, const uint32_t *b,
                                const uint32_t *e, int il, int sw, int l2, int oob)
{
	(void)dt, (void)il, (void)sw, (void)l2, (void)oob;
	/* the driver's documented limits: rank 1..5, a 16-byte aligned address, extents in
	 * 1..2^32, strides of dims 1.. multiples of 16 below 2^40, boxes of 1..256 elements,
	 * element strides 1..8 */
	if (r < 1 || r > 5 || (uintptr_t)g % 16 || (uintptr_t)m % 64)
		return 1;
	for (unsigned i = 0; i < r; i++) {
		if (d[i] < 1 || d[i] > (1ull << 32) || b[i] < 1 || b[i] > 256 || e[i] < 1 || e[i] > 8)
			return 1;
		if (i + 1 < r && (s[i] % 16 || s[i] >= (1ull << 40)))
			return 1;
	}
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
/* what the generated libraries (src/lib/rt/cake_rt.inc) use beyond the above: contexts,
 * stream-ordered allocation, and asynchronous copies and fills (host memory here) */
CUresult cuCtxGetCurrent(void **c) { *c = current_; return 0; }
CUresult cuCtxPushCurrent_v2(void *c) { current_ = c; return 0; }
CUresult cuCtxPopCurrent_v2(void **c) { if (c) *c = current_; current_ = NULL; return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuStreamGetCtx(void *s, void **c) { (void)s; *c = current_; return current_ ? 0 : 201; }
CUresult cuPointerGetAttribute(void *v, int a, uint64_t p) { (void)a; if (!p) return 1; *(int *)v = 0; return 0; }
CUresult cuMemAllocAsync(uint64_t *p, size_t n, void *s) { (void)s; return cuMemAlloc_v2(p, n); }
CUresult cuMemFreeAsync(uint64_t p, void *s) { (void)s; return cuMemFree_v2(p); }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *s) { (void)s; memset((void *)(uintptr_t)d, v, n); return 0; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *s)
{
	(void)s;
	for (size_t i = 0; i < n; i++)
		memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
	return 0;
}
CUresult cuMemsetD2D8Async(uint64_t d, size_t pitch, unsigned char v, size_t w, size_t h, void *s)
{
	(void)s;
	for (size_t y = 0; y < h; y++)
		memset((char *)(uintptr_t)d + y * pitch, v, w);
	return 0;
}
CUresult cuMemsetD2D32Async(uint64_t d, size_t pitch, unsigned v, size_t w, size_t h, void *s)
{
	(void)s;
	for (size_t y = 0; y < h; y++)
		for (size_t x = 0; x < w; x++)
			memcpy((char *)(uintptr_t)d + y * pitch + 4 * x, &v, 4);
	return 0;
}
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st) { (void)st; memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st) { (void)st; memcpy(d, (const void *)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st) { (void)st; memcpy((void *)(uintptr_t)d, s, n); return 0; }
typedef struct {   /* CUDA_MEMCPY2D */
	size_t sx, sy;
	int stype;
	const void *shost;
	uint64_t sdev;
	void *sarr;
	size_t spitch;
	size_t dx, dy;
	int dtype;
	void *dhost;
	uint64_t ddev;
	void *darr;
	size_t dpitch;
	size_t w, h;
} FakeMemcpy2D;
CUresult cuMemcpy2DAsync_v2(const FakeMemcpy2D *c, void *st)
{
	(void)st;
	const char *src = c->stype == 1 ? c->shost : (const char *)(uintptr_t)c->sdev;
	char *dst = c->dtype == 1 ? c->dhost : (char *)(uintptr_t)c->ddev;
	if (!src || !dst || c->w > c->spitch || c->w > c->dpitch)
		return 1;
	for (size_t y = 0; y < c->h; y++)
		memcpy(dst + (c->dy + y) * c->dpitch + c->dx, src + (c->sy + y) * c->spitch + c->sx, c->w);
	return 0;
}
