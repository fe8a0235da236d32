/*
 * launch.h — the launch layer: from a Plan, bound dims and device buffers
 * to a kernel launch.
 *
 * Everything a host program needs to launch a Cake kernel is derived from
 * its Plan (src/lower/lower.h, the compiler's ABI): the shape checks (the
 * `domain`, the TMA contract on global strides and extents, the grid), the
 * grid/block/cluster geometry (persistent grids clamped to the SM count),
 * the tensor maps (cuTensorMapEncodeTiled from PlanTmap), and the argument
 * block in Plan.args order. `cake run` (run.c), the apps (src/app/), the
 * library generator and the search loop all launch through these functions;
 * none of them marshals arguments itself.
 *
 * Usage: launch_shape() (no GPU needed: refusals come from here), then, on
 * an open device, launch_load() with the cubin, launch_fit() for the SM
 * count, launch_args() with one device pointer per parameter, then
 * launch_go() as often as needed; launch_free() at the end.
 *
 * Module prefix: launch_.
 */
#ifndef CAKE_LAUNCH_H
#define CAKE_LAUNCH_H

#include "gpu.h"
#include "../lower/lower.h"

#define LAUNCH_MAX_DIMS 64

typedef struct Launch {
	const Plan *p;
	const Kernel *k;
	long long dimvals[LAUNCH_MAX_DIMS];   /* indexed like Kernel.dims */
	unsigned grid[3], block[3], cluster[3];
	long long tiles;            /* product of the grid extents (the tile count) */
	long long ctas;             /* CTAs launched (after launch_fit) */
	void *mod, *fn;             /* CUmodule, CUfunction (after launch_load) */
	GpuTensorMap *maps;         /* the argument block (after launch_args) */
	uint64_t *vals;
	void **args;
} Launch;

/* Bind dimvals to p, check the shape and compute the geometry. Refusals
 * (false, err set): a domain constraint false for this shape, a TMA global
 * stride not a multiple of 16 bytes or an extent outside 1..2^32, a grid
 * extent that is not a positive 31-bit integer, a grid not a multiple of
 * the cluster. No GPU is touched. */
bool launch_shape(Launch *L, const Plan *p, const long long *dimvals, char *err, size_t n);
/* Extents (outermost first) and element count of global parameter i under
 * L's dims; false when an extent is not a positive integer. */
bool launch_param_extents(const Launch *L, int i, long long *dims, size_t *elems);
/* Index of the parameter named `name` in L's kernel, or -1. */
int launch_param_index(const Launch *L, const char *name);
/* Load the cubin, find the kernel and raise its dynamic shared memory limit.
 * Returns 0, or GPU_ERROR with err set (a kernel needing more shared memory
 * than the device allows is refused here, naming both numbers). */
int launch_load(GpuDev *g, Launch *L, const void *cubin, char *err, size_t n);
/* Size a persistent grid for this device: min(#SMs, tiles) CTAs, a multiple
 * of the cluster size. No-op for other grids. */
void launch_fit(Launch *L, int sm_count);
/* Build the argument block: ptr[i] is the device buffer of parameter i
 * (global tensors), scalars[i] its value (scalar parameters; may be NULL
 * when there are none); debug_rec, when non-zero, is passed as the last
 * argument of a --debug-hang build. Returns 0, or GPU_ERROR with err set. */
int launch_args(GpuDev *g, Launch *L, const GpuPtr *ptr, const double *scalars, GpuPtr debug_rec, char *err, size_t n);
/* Launch on g's stream (asynchronous). Returns 0 or the CUresult (g->err). */
int launch_go(GpuDev *g, const Launch *L);
/* Free the argument block and unload the module (safe on a zeroed Launch). */
void launch_free(GpuDev *g, Launch *L);

#endif
