/*
 * target.c — the rows of the target table (see target.h for every field
 * and its source).
 *
 * One designated-initialiser row per Target, indexed by the enum, so a row
 * reads as a data sheet and a missing field is visibly 0. The rows are
 * const: nothing changes them at run time.
 *
 * The GPU rows follow (gpus[]): one per GPU the cost model knows, each
 * naming its compile row. Each fact carries its source; docs/COST.md lists
 * them, and `cake cost --targets` prints them.
 */
#include "target.h"

#include <string.h>
#include <strings.h>

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
		.max_threads_per_sm = 2048, .max_blocks_per_sm = 32, .simt_lanes_per_sm = 128,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 227 * 1024, .smem_per_sm = 228 * 1024,
		.smem_reserved_per_block = 1024, .reg_alloc_warp = 256,
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
		.max_threads_per_sm = 2048, .max_blocks_per_sm = 32, .simt_lanes_per_sm = 64,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 163 * 1024, .smem_per_sm = 164 * 1024,
		.smem_reserved_per_block = 1024, .reg_alloc_warp = 256,
		.named_barriers = 16, .mbar_max_arrivals = (1 << 20) - 1, .mbar_max_tx = (1 << 20) - 1,
		.mma_m = 16, .mma_n = 8, .mma_k = 16,
		.max_cluster = 1,
	},
	[TGT_SM100A] = {
		.target = TGT_SM100A, .name = "sm_100a", .arch = "sm_100a", .lowered = false,
		.has_mma_sync = true, .has_tma = true, .has_setmaxnreg = true,
		.has_clusters = true, .has_async_proxy = true,
		.warp_size = 32, .warpgroup_warps = 4, .max_threads_per_block = 1024,
		.max_threads_per_sm = 2048, .max_blocks_per_sm = 32, .simt_lanes_per_sm = 128,
		.regs_per_sm = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 8,
		.setmaxnreg_min = 24, .setmaxnreg_max = 256,
		.smem_per_block = 227 * 1024, .smem_per_sm = 228 * 1024,
		.smem_reserved_per_block = 1024, .reg_alloc_warp = 256,
		.named_barriers = 16, .mbar_max_arrivals = (1 << 20) - 1, .mbar_max_tx = (1 << 20) - 1,
		.mma_m = 16, .mma_n = 8, .mma_k = 16,
		.tma_box_max = 256, .tma_max_rank = 5, .tma_inner_align = 16,
		.max_cluster = 8,
	},
};

/* Shorthands for the GPU rows' facts. */
#define MEAS(x, s) {(x), FACT_MEASURED, (s)}
#define SHEET(x, s) {(x), FACT_DATASHEET, (s)}
#define LEAD(x, s) {(x), FACT_LEAD, (s)}

static const GpuInfo gpus[] = {
	{
		.name = "h200", .product = "NVIDIA H200 SXM 141 GB", .target = TGT_SM90A,
		.calibrated = true, .cost_model = "h200",
		.sm_count = MEAS(132, "ANCHORS.md: the H200 of every bench run reports 132 SMs"),
		.sm_clock_ghz = SHEET(1.98, "max boost clock of the H100/H200 SXM (1980 MHz)"),
		.hbm_bw = MEAS(4.17e12, "ANCHORS.md: device-to-device copy of 2 GiB, 4.17 TB/s read + write "
		               "(datasheet 4.8 TB/s)"),
		.l2_bytes = SHEET(50.0 * 1024 * 1024, "50 MB L2 (GH100 in its SXM configuration)"),
		.l2_bw = LEAD(11.0e12, "derived from bench/RESULTS.md run C3: a 128x128-tile GEMM with a grouped raster "
		              "moved 17.2 GB of TMA tiles at 8192^3 in 1557.6 us (11.0 TB/s, a lower bound)"),
		.l2_sm_bw = LEAD(64 * 1.98e9, "64 B/clock per SM at 1.98 GHz; not published for Hopper"),
		.mma_bf16 = MEAS(781e12, "ANCHORS.md: cuBLAS bf16 GEMM 8192^3, 781 TFLOP/s (datasheet 989.4 dense)"),
		.mma_f16 = MEAS(760e12, "ANCHORS.md: cuBLAS fp16 GEMM 8192^3, 760 TFLOP/s (datasheet 989.4 dense)"),
		.mma_f8 = LEAD(1562e12, "2x the measured bf16 rate, as the datasheet's 1979 dense f8 is 2x its bf16"),
		.mma_tf32 = LEAD(390.5e12, "half the measured bf16 rate, as the datasheet's 494.7 dense tf32 is half its bf16"),
		.tma_latency_us = LEAD(1.0, "public Hopper microbenchmarks put a DRAM access at 0.5-0.8 us; a TMA "
		                       "round trip under load, to the mbarrier's completion, about 1 us"),
		.gmem_latency_us = LEAD(0.6, "public Hopper microbenchmarks: 0.5-0.8 us from DRAM"),
		.mbar_latency_us = LEAD(0.03, "an mbarrier try_wait that succeeds or a bar.sync: tens of cycles"),
		.launch_us = LEAD(3.0, "bench/RESULTS.md: 256x512x64 (4 CTAs, one k-step) takes 9.3 us, cuBLAS 5.5 us, "
		                  "per timed launch"),
	},
	{
		.name = "h100", .product = "NVIDIA H100 SXM5 80 GB", .target = TGT_SM90A,
		.calibrated = true, .cost_model = "h100",
		.sm_count = SHEET(132, "H100 SXM5: 132 SMs"),
		.sm_clock_ghz = SHEET(1.98, "max boost clock of the H100 SXM5 (1980 MHz)"),
		.hbm_bw = LEAD(2.91e12, "datasheet 3.35 TB/s x 0.869, the share of its 4.8 TB/s datasheet figure "
		               "the H200's copy reaches; not measured on an H100"),
		.l2_bytes = SHEET(50.0 * 1024 * 1024, "H100 SXM5: 50 MB L2"),
		.l2_bw = LEAD(11.0e12, "the H200's (the same GH100 L2 and clocks); not measured on an H100"),
		.l2_sm_bw = LEAD(64 * 1.98e9, "64 B/clock per SM at 1.98 GHz; not published for Hopper"),
		.mma_bf16 = LEAD(781e12, "the H200's measured cuBLAS ceiling: the same SMs, clocks and 700 W "
		                 "(datasheet 989.4 dense); not measured on an H100"),
		.mma_f16 = LEAD(760e12, "the H200's measured fp16 ceiling (datasheet 989.4 dense)"),
		.mma_f8 = LEAD(1562e12, "2x the bf16 lead (datasheet 1979 dense)"),
		.mma_tf32 = LEAD(390.5e12, "half the bf16 lead (datasheet 494.7 dense)"),
		.tma_latency_us = LEAD(1.0, "as the H200 (HBM3 latency is not lower than HBM3e's)"),
		.gmem_latency_us = LEAD(0.6, "public Hopper microbenchmarks: 0.5-0.8 us from DRAM"),
		.mbar_latency_us = LEAD(0.03, "an mbarrier try_wait that succeeds or a bar.sync: tens of cycles"),
		.launch_us = LEAD(3.0, "as the H200 (the same driver path)"),
	},
	{
		.name = "b200", .product = "NVIDIA B200 (declared, not calibrated)", .target = TGT_SM100A,
		.calibrated = false, .cost_model = "b200",
		.sm_count = SHEET(148, "B200: 148 SMs"),
		.sm_clock_ghz = LEAD(1.965, "public reports of the B200's boost clock"),
		.hbm_bw = SHEET(8.0e12, "B200 datasheet: 8 TB/s HBM3e"),
		.l2_bytes = LEAD(126.0 * 1024 * 1024, "public reports: 126 MB L2 over the two dies"),
		.l2_bw = LEAD(0, "unknown"),
		.l2_sm_bw = LEAD(0, "unknown"),
		.mma_bf16 = SHEET(2.25e15, "B200 datasheet: 2.25 PFLOP/s dense bf16"),
		.mma_f16 = SHEET(2.25e15, "B200 datasheet: 2.25 PFLOP/s dense fp16"),
		.mma_f8 = SHEET(4.5e15, "B200 datasheet: 4.5 PFLOP/s dense fp8"),
		.mma_tf32 = SHEET(1.1e15, "B200 datasheet: 1.1 PFLOP/s dense tf32"),
		.tma_latency_us = LEAD(0, "unknown"),
		.gmem_latency_us = LEAD(0, "unknown"),
		.mbar_latency_us = LEAD(0, "unknown"),
		.launch_us = LEAD(0, "unknown"),
	},
};

const GpuInfo *gpu_info(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
		if (strcasecmp(name, gpus[i].name) == 0)
			return &gpus[i];
	return NULL;
}

const GpuInfo *gpu_rows(int *n)
{
	*n = (int)(sizeof gpus / sizeof gpus[0]);
	return gpus;
}

const char *fact_source_name(FactSource k)
{
	switch (k) {
	case FACT_MEASURED: return "measured";
	case FACT_DATASHEET: return "datasheet";
	case FACT_LEAD: return "lead";
	default: return "none";
	}
}

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
