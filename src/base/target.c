/*
 * target.c — the rows of the target table (see target.h for every field
 * and its source).
 *
 * One designated-initialiser row per Target, indexed by the enum, so a row
 * reads as a data sheet and a missing field is visibly 0. The rows are
 * const: nothing changes them at run time.
 */
#include "target.h"

#include <string.h>

static const TargetInfo rows[] = {
	[TGT_NONE] = {
		.target = TGT_NONE, .name = "?", .arch = NULL, .lowered = false,
		.warp_size = 32, .warpgroup_warps = 4,
	},
	[TGT_SM90A] = {
		.target = TGT_SM90A, .name = "sm_90a", .arch = "sm_90a", .lowered = true,
		.has_wgmma = true, .has_mma_sync = true, .has_tma = true, .has_setmaxnreg = true,
		.has_clusters = true, .has_async_proxy = true,
		.warp_size = 32, .warpgroup_warps = 4, .max_threads_per_block = 1024,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 227 * 1024, .smem_per_sm = 228 * 1024,
		.named_barriers = 16, .mbar_max_arrivals = (1 << 20) - 1, .mbar_max_tx = (1 << 20) - 1,
		.wgmma_m = 64, .wgmma_n_min = 8, .wgmma_n_max = 256, .wgmma_n_step = 8,
		.wgmma_k_16bit = 16, .wgmma_k_8bit = 32,
		.mma_m = 16, .mma_n = 8, .mma_k = 16,
		.tma_box_max = 256, .tma_max_rank = 5, .tma_inner_align = 16,
		.max_cluster = 8,
	},
	[TGT_SM80] = {
		.target = TGT_SM80, .name = "sm_80", .arch = "sm_80", .lowered = false,
		.has_mma_sync = true,
		.warp_size = 32, .warpgroup_warps = 4, .max_threads_per_block = 1024,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 163 * 1024, .smem_per_sm = 164 * 1024,
		.named_barriers = 16, .mbar_max_arrivals = (1 << 20) - 1, .mbar_max_tx = (1 << 20) - 1,
		.mma_m = 16, .mma_n = 8, .mma_k = 16,
		.max_cluster = 1,
	},
	[TGT_SM100A] = {
		.target = TGT_SM100A, .name = "sm_100a", .arch = "sm_100a", .lowered = false,
		.has_mma_sync = true, .has_tma = true, .has_setmaxnreg = true,
		.has_clusters = true, .has_async_proxy = true,
		.warp_size = 32, .warpgroup_warps = 4, .max_threads_per_block = 1024,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 227 * 1024, .smem_per_sm = 228 * 1024,
		.named_barriers = 16, .mbar_max_arrivals = (1 << 20) - 1, .mbar_max_tx = (1 << 20) - 1,
		.mma_m = 16, .mma_n = 8, .mma_k = 16,
		.tma_box_max = 256, .tma_max_rank = 5, .tma_inner_align = 16,
		.max_cluster = 8,
	},
};

const TargetInfo *target_info(Target t)
{
	if ((unsigned)t >= sizeof rows / sizeof rows[0])
		t = TGT_NONE;
	return &rows[t];
}

const char *target_name(Target t)
{
	return target_info(t)->name;
}

Target target_from(const char *s, int n)
{
	if (!s || n < 0)
		return TGT_NONE;
	for (unsigned t = TGT_NONE + 1; t < sizeof rows / sizeof rows[0]; t++)
		if (strlen(rows[t].name) == (size_t)n && memcmp(s, rows[t].name, (size_t)n) == 0)
			return (Target)t;
	return TGT_NONE;
}
