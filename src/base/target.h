/*
 * target.h — the target table: one row of hardware facts per GPU target.
 *
 * A kernel names its target (`kernel K target sm_90a`). Every number the
 * compiler checks or derives from the hardware — shared memory per block,
 * the register file, instruction shapes, TMA box limits, mbarrier counts —
 * comes from that target's TargetInfo row here, never from a literal in a
 * pass: the verifier's resource and contract rules (src/verify/), the
 * lowering's derive step (src/lower/derive.c) and the JIT's NVRTC
 * architecture (src/gpu/) all read the same row, so a limit is written once
 * and cannot drift between the stage that rejects a schedule and the stage
 * that lowers it.
 *
 * Each field says what it is and where the number comes from. The sources:
 *   [CG]  CUDA C++ Programming Guide, "Compute Capabilities": technical
 *         specifications per compute capability (8.0, 9.0, 10.0);
 *   [PTX] PTX ISA 8.x: wgmma.mma_async (9.7.15), mma (9.7.14), setmaxnreg,
 *         mbarrier (9.7.13.15), cp.async.bulk.tensor, bar.sync;
 *   [DRV] CUDA Driver API, cuTensorMapEncodeTiled.
 *
 * Extending. A field that makes no sense for a target is 0 (or false) in
 * its row, and the feature flags say which instruction families exist.
 *
 * GPU rows. One compile target is shared by several GPUs: sm_90a is both
 * the H100 and the H200, which differ in memory (HBM3 against HBM3e) but
 * not in their SMs. The performance facts the cost model reads (SM count,
 * clocks, bandwidths, L2, dense MMA rates, latencies) therefore live in a
 * second kind of row of this same table, GpuInfo, keyed by a GPU name
 * ("h100", "h200", "b200") and naming its compile row. What belongs to the
 * SM (registers, shared memory, threads per SM, SIMT lanes) stays in the
 * TargetInfo row and is written once; what belongs to the chip is in the
 * GpuInfo row. Every GpuInfo number is a GpuFact: the value and the source
 * it comes from, marked as one of
 *   measured   measured on that GPU (shared/ANCHORS.md, bench/RESULTS.md),
 *   datasheet  NVIDIA's published specification,
 *   lead       an estimate from public microbenchmarks or derived from
 *              another row; the cost model's coefficients absorb the error.
 * A GPU row with calibrated = false is declared only: the cost model
 * refuses to predict for it (docs/COST.md).
 *
 * The TGT_NONE row is "no target": no features and zero limits except the
 * programming-model constants (warp size, warps per warpgroup). The parser
 * never gives a kernel that target; target_info() returns it for TGT_NONE
 * and for out-of-range values, so it never returns NULL.
 *
 * Module prefix: target_.
 */
#ifndef CAKE_TARGET_H
#define CAKE_TARGET_H

#include <stdbool.h>

typedef enum Target { TGT_NONE = 0, TGT_SM90A, TGT_SM80, TGT_SM100A } Target;

typedef struct TargetInfo {
	Target target;
	const char *name;            /* keyword in the source: "sm_90a" */
	const char *arch;            /* NVRTC --gpu-architecture value ("sm_90a"); NULL for TGT_NONE */
	bool lowered;                /* Cake lowers it to CUDA (derive.c + sm90.c); only sm_90a today */

	/* instruction families present [PTX target requirements] */
	bool has_wgmma;              /* wgmma.mma_async (+ wgmma.wait_group): sm_90a only */
	bool has_mma_sync;           /* mma.sync m16n8k16: sm_80 and later */
	bool has_tma;                /* cp.async.bulk.tensor with tensor maps: sm_90 and later */
	bool has_setmaxnreg;         /* setmaxnreg.inc/dec: sm_90a, sm_100a */
	bool has_clusters;           /* thread-block clusters: sm_90 and later */
	bool has_async_proxy;        /* fence.proxy.async: sm_90 and later */

	/* execution [CG] */
	int warp_size;               /* threads per warp: 32 */
	int warpgroup_warps;         /* warps per warpgroup (4 consecutive warps, the first a
	                              * multiple of 4) [PTX wgmma, setmaxnreg]; sm_80 has no
	                              * warpgroup instructions but the grouping is the same */
	int max_threads_per_block;   /* 1024 */
	int max_threads_per_sm;      /* resident threads per SM: 2048 (sm_80, sm_90, sm_100) */
	int max_blocks_per_sm;       /* resident blocks per SM: 32 */
	int simt_lanes_per_sm;       /* fp32 results per clock per SM (4 schedulers x 32 lanes): 128
	                              * [CG "Arithmetic Instructions" throughput table, 8.0 is 64] */

	/* registers [CG, PTX] */
	int regs_per_sm;             /* 32-bit registers per SM (and per block): 65536 */
	int max_regs_per_thread;     /* what ptxas gives one thread at most: 255 */
	int reg_alloc_unit;          /* per-thread register allocation granularity: 8; setmaxnreg
	                              * counts are multiples of it too [PTX setmaxnreg] */
	int setmaxnreg_min;          /* setmaxnreg immediate range: 24 .. */
	int setmaxnreg_max;          /* .. 256 [PTX setmaxnreg]. sm_80 has no setmaxnreg; its row
	                              * repeats the range, which CK-RES-003 checks `regs` against on
	                              * every target (CK-HW-010 reports the missing instruction) */

	/* shared memory [CG] */
	long long smem_per_block;    /* max dynamic shared memory one block may opt in to:
	                              * 227 KiB = 232448 (sm_90a, sm_100a), 163 KiB = 166912 (sm_80) */
	long long smem_per_sm;       /* shared memory per SM: 228 KiB (sm_90a, sm_100a), 164 KiB (sm_80) */
	int smem_reserved_per_block; /* shared memory the system reserves per resident block: 1 KiB
	                              * [CG "Shared Memory" 8.x / 9.0]; counted in CTAs per SM */
	int reg_alloc_warp;          /* registers are allocated per warp in units of 256 [CG occupancy] */

	/* barriers [PTX bar.sync, mbarrier] */
	int named_barriers;          /* named barriers per block (bar.sync 0..15): 16; barrier 0 is
	                              * __syncthreads, so 15 are free for roles */
	int mbar_max_arrivals;       /* mbarrier expected arrival count: 1 .. 2^20 - 1 */
	long long mbar_max_tx;       /* mbarrier tx-count per phase: at most 2^20 - 1 bytes */

	/* wgmma.mma_async m64nNkK, per warpgroup [PTX 9.7.15]; 0 where has_wgmma is false */
	int wgmma_m;                 /* 64 accumulator rows per warpgroup */
	int wgmma_n_min;             /* N in 8 .. */
	int wgmma_n_max;             /* .. 256 */
	int wgmma_n_step;            /* .. in steps of 8 */
	int wgmma_k_16bit;           /* K per instruction for bf16/f16 operands: 16 */
	int wgmma_k_8bit;            /* K per instruction for f8 operands: 32 */

	/* mma.sync [PTX 9.7.14], the m16n8k16 shape the verifier checks on sm_80 */
	int mma_m, mma_n, mma_k;     /* 16, 8, 16 */

	/* TMA [DRV cuTensorMapEncodeTiled]; 0 where has_tma is false */
	int tma_box_max;             /* boxDim[i] in 1 .. 256 elements */
	int tma_max_rank;            /* tensor rank 1 .. 5 */
	int tma_inner_align;         /* boxDim[0] x element size a multiple of 16 bytes; global
	                              * strides multiples of 16 bytes */

	/* clusters [CG "Thread Block Clusters"] */
	int max_cluster;             /* portable cluster size: 8 blocks (1 where has_clusters is false) */
} TargetInfo;

/* ---- GPU rows: the performance facts of one GPU (see "GPU rows" above) ---- */

typedef enum FactSource { FACT_NONE = 0, FACT_MEASURED, FACT_DATASHEET, FACT_LEAD } FactSource;

typedef struct GpuFact {
	double v;                    /* the value, in the unit its field names */
	FactSource kind;
	const char *src;             /* where it comes from, one line */
} GpuFact;

typedef struct GpuInfo {
	const char *name;            /* "h200": the --target spelling of the cost commands */
	const char *product;         /* "NVIDIA H200 SXM 141 GB" */
	Target target;               /* its compile row (TGT_SM90A) */
	bool calibrated;             /* the cost model predicts for it (else it refuses) */
	const char *cost_model;      /* the model name; versions are data/cost/NAME-vN.json */
	GpuFact sm_count;            /* SMs */
	GpuFact sm_clock_ghz;        /* SM clock under load, GHz */
	GpuFact hbm_bw;              /* DRAM bandwidth, bytes/s (the ceiling a copy reaches) */
	GpuFact l2_bytes;            /* L2 capacity, bytes */
	GpuFact l2_bw;               /* L2 -> SM bandwidth, all SMs together, bytes/s */
	GpuFact l2_sm_bw;            /* L2 -> SM bandwidth one SM can draw, bytes/s */
	GpuFact mma_bf16;            /* dense tensor-core rate, FLOP/s, bf16 operands */
	GpuFact mma_f16;             /* f16 operands */
	GpuFact mma_f8;              /* f8 (e4m3/e5m2) operands */
	GpuFact mma_tf32;            /* tf32 (f32 operands) */
	GpuFact tma_latency_us;      /* TMA load issue to mbarrier completion, from DRAM, microseconds */
	GpuFact gmem_latency_us;     /* a dependent global load, from DRAM, microseconds */
	GpuFact mbar_latency_us;     /* an mbarrier wait that finds its phase complete (try_wait
	                              * round trip), or a named-barrier sync, microseconds */
	GpuFact launch_us;           /* launch overhead one timed launch pays, microseconds */
} GpuInfo;

/* The GPU row named name ("h100", "h200", "b200"; case-insensitive), or NULL. */
const GpuInfo *gpu_info(const char *name);
/* The GPU rows in table order; *n the count. */
const GpuInfo *gpu_rows(int *n);
/* Spelling of a fact source ("measured", "datasheet", "lead"). */
const char *fact_source_name(FactSource k);

/* The row of target t; the TGT_NONE row for TGT_NONE or an unknown value. Never NULL. */
const TargetInfo *target_info(Target t);
/* Keyword spelling of t ("sm_90a"); "?" for TGT_NONE. */
const char *target_name(Target t);
/* Parse a target keyword of n bytes at s (not NUL-terminated); TGT_NONE if s is not one. */
Target target_from(const char *s, int n);

#endif
