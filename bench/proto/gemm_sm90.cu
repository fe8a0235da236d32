/*
 * gemm_sm90.cu — hand-written warp-specialised bf16 GEMM for sm_90a (H100/H200).
 *
 * C[M,N] (bf16) = A[M,K] · B[N,K]^T, both operands K-major, f32 accumulation.
 * This is the reference the Cake lowering (src/lower/) reproduces from the
 * GEMM schedule in kernels/gemm/gemm_ws_128x256_s4.cake; every mechanism here is one the
 * lowering derives: smem ring offsets, full/empty mbarrier rings with
 * "empty starts free" phases, expect_tx byte counts, 128B-swizzle wgmma
 * descriptors, setmaxnreg per role, cluster multicast.
 *
 * Compiles with NVRTC (no CUDA headers): nvrtc --gpu-architecture=sm_90a
 * -std=c++17, or nvcc -cubin -gencode arch=compute_90a,code=sm_90a.
 *
 * Structure (one CTA = 3 warpgroups, 384 threads, __launch_bounds__(384,1)):
 *   warpgroup 0  "load": setmaxnreg.dec 40; one elected thread walks the
 *                same tile sequence as the consumers and, per k-step, waits
 *                empty[s], arms full[s] with the stage's bytes and issues two
 *                cp.async.bulk.tensor.2d loads (A box 64x128, B box 64x256 or,
 *                in a cluster of 2, its half of B multicast to both CTAs).
 *   warpgroups 1,2 "mma": setmaxnreg.inc 232; each owns 64 rows x 256 cols of
 *                the 128x256 tile (frag acc split m), 128 f32 registers.
 *                Per k-step: wait full[s]; wgmma.fence; 4 x wgmma m64n256k16
 *                (K=16 each, descriptor start advanced by 32 B); commit;
 *                wait_group 1 (RELEASE_LAG=1) so the previous stage's MMAs are
 *                retired, then lane 0 of each warp arrives on empty[prev]
 *                (locally and, in a cluster, on the peer CTA's empty[prev]).
 *                Epilogue: cvt.rn.bf16x2.f32 and 4-byte st.global per pair.
 *
 * Variants (compile-time macros, see NOTES.md for the measurements):
 *   STAGES      ring depth (4 fits 128x256x64 bf16: 48 KB/stage)
 *   PERSISTENT  1 = grid of #SM CTAs (clusters) looping over tiles
 *   CLUSTER_M   1 or 2: CTAs (bm, bm+1) of one cluster share the B tile;
 *               each loads half of it with .multicast::cluster
 *   RASTER      1 grouped raster (below), 0 natural order (bn fastest)
 *   GROUP_M     grouped raster: GROUP_M tile-rows (in cluster units) swept
 *               column by column, for L2 reuse of B
 *   RELEASE_LAG 0: wait_group 0 each step; 1: keep one wgmma group in flight
 *   CLUSTER_ARRIVE_RELEASE / CLUSTER_ARRIVE_SPREAD: how consumers signal the
 *               peer CTA's empty barrier (see NOTES.md, run 1 vs run 2)
 */
typedef unsigned int u32;
typedef unsigned long long u64;

#ifndef STAGES
#define STAGES 4
#endif
#ifndef PERSISTENT
#define PERSISTENT 1
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef RASTER
#define RASTER 1      /* 1: grouped raster (GROUP_M); 0: natural row order, bn fastest */
#endif
#ifndef RELEASE_LAG
#define RELEASE_LAG 1
#endif
#ifndef CLUSTER_ARRIVE_RELEASE
#define CLUSTER_ARRIVE_RELEASE 0   /* 1: remote arrive with .release.cluster (run 1: 1.6x slower) */
#endif
#ifndef CLUSTER_ARRIVE_SPREAD
#define CLUSTER_ARRIVE_SPREAD 1    /* 1: lanes 0..CLUSTER_M-1 each signal one CTA; 0: lane 0 loops */
#endif
#ifndef CAKE_DEBUG_HANG
#define CAKE_DEBUG_HANG 0
#endif

#define BM 128
#define BN 256
#define BK 64
#define A_STAGE_BYTES (BM * BK * 2)              /* 16 KB */
#define B_STAGE_BYTES (BN * BK * 2)              /* 32 KB */
#define STAGE_TX      (A_STAGE_BYTES + B_STAGE_BYTES)
#define SMEM_BAR_OFF  (STAGES * (A_STAGE_BYTES + B_STAGE_BYTES))
#define SMEM_BYTES    (SMEM_BAR_OFF + 2 * STAGES * 8 + 1024)   /* +1024: manual 1 KB alignment */
#define EMPTY_ARRIVALS (2 * 4 * CLUSTER_M)       /* lane 0 of each consumer warp, every CTA of the cluster */

/* The 128-byte tensor map, passed by value as a __grid_constant__ parameter. */
struct __align__(64) TensorMap { u64 opaque[16]; };

/* ---- shared-memory / barrier primitives (inline PTX) ---- */

__device__ __forceinline__ u32 smem_u32(const void *p)
{
	return (u32)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)
{
	asm volatile(
		"{\n"
		".reg .pred done;\n"
		"WAIT_%=:\n"
		"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
		"@!done bra WAIT_%=;\n"
		"}\n" :: "r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void mbar_arrive_local(u32 bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}

/* Arrive on the barrier at the same smem offset in CTA `rank` of the cluster. */
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank)
{
	asm volatile(
		"{\n"
		".reg .b32 remote;\n"
		"mapa.shared::cluster.u32 remote, %0, %1;\n"
#if CLUSTER_ARRIVE_RELEASE
		"mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
#else
		"mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
#endif
		"}\n" :: "r"(bar), "r"(rank) : "memory");
}

__device__ __forceinline__ u32 cluster_rank(void)
{
	u32 r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

__device__ __forceinline__ void cluster_sync(void)
{
	asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* ---- TMA ---- */

__device__ __forceinline__ void tma_load_2d(u32 dst, const TensorMap *map, u32 bar, int c0, int c1)
{
	asm volatile(
		"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		" [%0], [%1, {%3, %4}], [%2];\n"
		:: "r"(dst), "l"((u64)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}

__device__ __forceinline__ void tma_load_2d_mc(u32 dst, const TensorMap *map, u32 bar, int c0, int c1, unsigned short mask)
{
	asm volatile(
		"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
		" [%0], [%1, {%3, %4}], [%2], %5;\n"
		:: "r"(dst), "l"((u64)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
}

__device__ __forceinline__ void tma_prefetch_desc(const TensorMap *map)
{
	asm volatile("prefetch.tensormap [%0];\n" :: "l"((u64)map) : "memory");
}

/* ---- wgmma ---- */

/* Shared-memory matrix descriptor for a K-major tile whose rows are exactly
 * 128 B (64 bf16) with the 128B swizzle: start>>4 in bits 0-13, leading byte
 * offset (unused for this layout, 1) in 16-29, stride byte offset 1024>>4
 * (8 rows x 128 B) in 32-45, layout type 1 (128B swizzle) in bits 62-63.
 * The tile base must be 1024-byte aligned (base_offset = 0). */
__device__ __forceinline__ u64 desc_sw128(u32 saddr)
{
	u64 d = 0;
	d |= (u64)((saddr & 0x3FFFF) >> 4);
	d |= (u64)1 << 16;
	d |= (u64)(1024 >> 4) << 32;
	d |= (u64)1 << 62;
	return d;
}

__device__ __forceinline__ void wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}

template <int R>
__device__ __forceinline__ void setmaxnreg_inc(void)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(R));
}

template <int R>
__device__ __forceinline__ void setmaxnreg_dec(void)
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(R));
}

__device__ __forceinline__ void wgmma_m64n256k16(float *d, u64 da, u64 db, int scale_d)
{
  asm volatile(
    "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
      "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
      "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
      "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
      "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
      "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
      "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
      "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
      "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
      "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
      "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
      "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
    : "l"(da), "l"(db), "r"(scale_d));
}

/* bf16x2 pack: lo goes to the lower 16 bits (the lower address). */
__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi)
{
	u32 r;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}

/* Grouped raster: linear tile t -> (cluster row cm, column bn). GROUP_M
 * cluster-rows are swept column-major so concurrently running CTAs share B
 * columns and A rows in L2. */
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int *cm, int *bn)
{
#if RASTER == 0
	/* natural order of a 2D grid (bn, bm): bn fastest, as blockIdx.x/.y give it */
	*cm = t / tiles_n;
	*bn = t % tiles_n;
	return;
#endif
	int per_group = GROUP_M * tiles_n;
	int g = t / per_group;
	int first = g * GROUP_M;
	int gs = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
	int r = t - g * per_group;
	*cm = first + r % gs;
	*bn = r / gs;
}

/* Flight recorder (CAKE_DEBUG_HANG): before each wait a role writes
 * {barrier id (1 = full, 2 = empty), stage, phase, iteration, tile} into its
 * 8-word slot of a host-mapped buffer; word 5 is a completion flag. Slot index
 * = blockIdx.x * 3 + warpgroup. Compiled out unless CAKE_DEBUG_HANG=1. */
#if CAKE_DEBUG_HANG
#define REC(slot, bar, s, ph, k, t) do { volatile u32 *r_ = (slot); r_[0] = (bar); r_[1] = (s); r_[2] = (ph); r_[3] = (k); r_[4] = (t); __threadfence_system(); } while (0)
#define REC_DONE(slot) do { volatile u32 *r_ = (slot); r_[5] = 1; __threadfence_system(); } while (0)
#else
#define REC(slot, bar, s, ph, k, t) do { } while (0)
#define REC_DONE(slot) do { } while (0)
#endif

/* Deliberate defect for testing the watchdog and the hang story: the
 * consumers skip their first release of stage 2, so on the second pass the
 * producer blocks on empty[2] and the consumers on full[2]. */
#ifndef CAKE_PLANT_HANG
#define CAKE_PLANT_HANG 0
#endif

/* Consumer release of ring stage s: lane 0 of each consumer warp arrives on
 * empty[s] of every CTA in the cluster (EMPTY_ARRIVALS per phase). */
__device__ __forceinline__ void release_stage(u32 empty, u32 s, int lane, u32 it)
{
	if (CAKE_PLANT_HANG && s == 2 && it < STAGES)
		return;
#if CLUSTER_M > 1 && CLUSTER_ARRIVE_SPREAD
	/* lane r signals CTA r: one arrive instruction per warp covers the cluster */
	if (lane < CLUSTER_M)
		mbar_arrive_cluster(empty + 8 * s, (u32)lane);
	return;
#endif
	if (lane == 0) {
#if CLUSTER_M > 1
		for (int r = 0; r < CLUSTER_M; r++)
			mbar_arrive_cluster(empty + 8 * s, r);
#else
		mbar_arrive_local(empty + 8 * s);
#endif
	}
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_bf16_sm90(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,
               unsigned short *__restrict__ C, int M, int N, int K, u32 *dbg)
{
	extern __shared__ unsigned char smem_raw[];
	const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
	const u32 sA = base;
	const u32 sB = base + STAGES * A_STAGE_BYTES;
	const u32 full = base + SMEM_BAR_OFF;
	const u32 empty = full + STAGES * 8;
	const int wg = threadIdx.x / 128;
	const int tid = threadIdx.x % 128;
#if CLUSTER_M > 1
	const u32 rank = cluster_rank();
#else
	const u32 rank = 0;
#endif
#if CAKE_DEBUG_HANG
	u32 *slot = dbg + (blockIdx.x * 3 + wg) * 8;
#endif

	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			mbar_init(full + 8 * s, 1);
			mbar_init(empty + 8 * s, EMPTY_ARRIVALS);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
		tma_prefetch_desc(&tmA);
		tma_prefetch_desc(&tmB);
	}
#if CLUSTER_M > 1
	cluster_sync();
#else
	__syncthreads();
#endif

	const int tiles_m = M / (BM * CLUSTER_M);
	const int tiles_n = N / BN;
	const int ntiles = tiles_m * tiles_n;
	const int kt = K / BK;
#if PERSISTENT
	const int t0 = blockIdx.x / CLUSTER_M;
	const int tstride = gridDim.x / CLUSTER_M;
#else
	const int t0 = blockIdx.x / CLUSTER_M;
	const int tstride = ntiles;
#endif

	if (wg == 0) {
		/* ---- role load (warpgroup 0) ---- */
		setmaxnreg_dec<40>();
		if (tid == 0) {
			u32 s = 0, ph = 0;
			for (int t = t0; t < ntiles; t += tstride) {
				int cm, bn;
				tile_coords(t, tiles_m, tiles_n, &cm, &bn);
				const int row_a = (cm * CLUSTER_M + (int)rank) * BM;
				const int row_b = bn * BN;
				for (int k = 0; k < kt; k++) {
					REC(slot, 2, s, ph ^ 1, k, t);
					mbar_wait(empty + 8 * s, ph ^ 1);         /* empty starts free */
					mbar_expect_tx(full + 8 * s, STAGE_TX);
					tma_load_2d(sA + s * A_STAGE_BYTES, &tmA, full + 8 * s, k * BK, row_a);
#if CLUSTER_M > 1
					tma_load_2d_mc(sB + s * B_STAGE_BYTES + rank * (B_STAGE_BYTES / CLUSTER_M), &tmB,
					               full + 8 * s, k * BK, row_b + (int)rank * (BN / CLUSTER_M),
					               (unsigned short)((1u << CLUSTER_M) - 1));
#else
					tma_load_2d(sB + s * B_STAGE_BYTES, &tmB, full + 8 * s, k * BK, row_b);
#endif
					if (++s == STAGES) { s = 0; ph ^= 1; }
				}
			}
			REC_DONE(slot);
		}
	} else {
		/* ---- role mma (warpgroups 1, 2) ---- */
		setmaxnreg_inc<232>();
		const int cw = wg - 1;
		const int warp = tid / 32, lane = tid % 32;
		float d[128];
		u32 s = 0, ph = 0, prev_s = 0, it = 0;
		for (int t = t0; t < ntiles; t += tstride) {
			int cm, bn;
			tile_coords(t, tiles_m, tiles_n, &cm, &bn);
			for (int k = 0; k < kt; k++) {
				REC(slot, 1, s, ph, k, t);
mbar_wait(full + 8 * s, ph);
				const u32 a = sA + s * A_STAGE_BYTES + cw * (64 * 128);
				const u32 b = sB + s * B_STAGE_BYTES;
				wgmma_fence();
#pragma unroll
				for (int kk = 0; kk < BK / 16; kk++)
					wgmma_m64n256k16(d, desc_sw128(a + kk * 32), desc_sw128(b + kk * 32), (k | kk) != 0);
				wgmma_commit();
#if RELEASE_LAG
				wgmma_wait<1>();                 /* the previous stage's wgmma group has retired */
				if (k > 0)
					release_stage(empty, prev_s, lane, it - 1);
#else
				wgmma_wait<0>();
				release_stage(empty, s, lane, it);
#endif
				prev_s = s;
				it++;
				if (++s == STAGES) { s = 0; ph ^= 1; }
			}
#if RELEASE_LAG
			wgmma_wait<0>();
			release_stage(empty, prev_s, lane, it - 1);
#endif
			/* epilogue: rows warp*16 + lane/4 (+8), cols 8j + 2(lane%4) (+1) */
			const int row = (cm * CLUSTER_M + (int)rank) * BM + cw * 64 + warp * 16 + lane / 4;
			const int col = bn * BN + (lane % 4) * 2;
			u32 *c0 = (u32 *)(C + (size_t)row * N + col);
			u32 *c1 = (u32 *)(C + (size_t)(row + 8) * N + col);
#pragma unroll
			for (int j = 0; j < 32; j++) {
				c0[j * 4] = pack_bf16x2(d[4 * j + 0], d[4 * j + 1]);
				c1[j * 4] = pack_bf16x2(d[4 * j + 2], d[4 * j + 3]);
			}
		}
		if (tid == 0) REC_DONE(slot);
	}
#if CLUSTER_M > 1
	cluster_sync();   /* no CTA leaves while its peer may still multicast into it or arrive on its barriers */
#endif
}
