/*
 * simt_emu.h — run Cake's generated sm_90a CUDA for plain SIMT kernels on the CPU.
 *
 * A testing aid (tests/lower/emu.sh), not a product: it lets a machine without a
 * GPU execute the kernels that use only SIMT work — thread tiles, thread vectors,
 * element reads, warp shuffles, named barriers, __shared__ scratch — so their
 * layouts, shuffle trees and index arithmetic are checked against the float64
 * oracles, not just compiled. TMA loads and mbarriers are modelled too (below):
 * a TMA copies its box at once, zero-filling what lies outside the tensor and
 * swizzling like the hardware, and completes its transaction bytes on the barrier;
 * an mbarrier counts arrivals and bytes per phase and flips its phase bit, and a wait
 * yields until the phase it waits for has completed. The tensor maps are built by
 * the driver from the kernel's plan (mkdriver.py). wgmma is modelled (emu_wgmma below): the operands are read from shared memory by the PTX
 * ISA's canonical layouts — the descriptor's start address, leading and stride byte
 * offsets and swizzle mode, K-major or MN-major — independently of how the Cake
 * lowering wrote them, and the product is formed at once (the asynchrony, fences and
 * wait_group are no-ops: a program that waits before it reads sees the same values).
 * It checks the descriptors and the layouts of `store`d operands, not the hardware.
 *
 * Model. The CTAs of the grid run one after another. Inside a CTA every thread is
 * a cooperative coroutine (ucontext) with its own stack, so a kernel's per-thread
 * registers are ordinary locals and `__shared__` arrays (block-scope statics) are
 * shared by the CTA's threads. A thread runs until it reaches a barrier; warp
 * shuffles are exchanges through a per-warp slot array between two barriers of
 * the warp, named barriers and __syncthreads count arrivals like the hardware
 * (the first n arrivals at an id complete it). Control flow must be what the
 * hardware requires anyway (every lane of a warp reaches the same shuffles); a
 * CTA whose threads all wait without progress is reported as a deadlock.
 * Memory is the host's; the ld/st helpers are plain loads and stores.
 */
#ifndef CAKE_SIMT_EMU_H
#define CAKE_SIMT_EMU_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>

typedef uint32_t u32;
typedef uint64_t u64;
typedef uint16_t bf16_t;
typedef uint16_t f16_t;

struct dim3e { unsigned x, y, z; };
struct uint2 { u32 x, y; };
struct float2 { float x, y; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }

namespace emu {
struct Thread {
	ucontext_t ctx;
	std::vector<char> stack;
	bool done = false;
	unsigned tid = 0;
};
static std::vector<Thread> th;
static ucontext_t sched;
static int cur = 0;
static std::function<void()> body;
static dim3e block_idx, grid_dim, block_dim;
static long long progress = 0;
/* barriers: id -> (arrived, generation); slot storage for shuffles per warp */
struct Bar { int arrived = 0; long long gen = 0; int need = 0; };
static Bar bars[128];
/* mbarriers (modelled below), by shared-memory offset */
struct Mbar { int count = 0, pending = 0; long long tx = 0; u32 phase = 0; };
static std::vector<std::pair<u32, Mbar>> mbars;
static uint64_t slots[32][32];

static inline void yield() { swapcontext(&th[cur].ctx, &sched); }

static void barrier(int id, int need)
{
	Bar &b = bars[id];
	if (b.arrived == 0)
		b.need = need;
	long long g = b.gen;
	if (++b.arrived == b.need) {
		b.arrived = 0;
		b.gen++;
		progress++;
		return;
	}
	while (b.gen == g)
		yield();
}

static void trampoline() { body(); th[cur].done = true; progress++; swapcontext(&th[cur].ctx, &sched); }

/* Run one CTA of nthreads threads. */
static bool run_cta(unsigned nthreads)
{
	th.assign(nthreads, Thread());
	for (int i = 0; i < 128; i++)
		bars[i] = Bar();
	mbars.clear();
	for (unsigned i = 0; i < nthreads; i++) {
		Thread &t = th[i];
		t.tid = i;
		t.stack.resize(256 << 10);
		getcontext(&t.ctx);
		t.ctx.uc_stack.ss_sp = t.stack.data();
		t.ctx.uc_stack.ss_size = t.stack.size();
		t.ctx.uc_link = nullptr;
		makecontext(&t.ctx, trampoline, 0);
	}
	for (;;) {
		bool all = true;
		long long before = progress;
		for (unsigned i = 0; i < nthreads; i++) {
			if (th[i].done)
				continue;
			all = false;
			cur = (int)i;
			swapcontext(&sched, &th[i].ctx);
		}
		if (all)
			return true;
		if (progress == before) {
			fprintf(stderr, "simt_emu: CTA (%u, %u, %u): every thread waits at a barrier; deadlock\n", block_idx.x, block_idx.y, block_idx.z);
			return false;
		}
	}
}
}  // namespace emu

#define threadIdx (dim3e{emu::th[emu::cur].tid, 0u, 0u})
#define blockIdx (emu::block_idx)
#define gridDim (emu::grid_dim)
#define blockDim (emu::block_dim)
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(a, b)
#define __restrict__ __restrict
#define __align__(n)
#define __shared__ static
#define __grid_constant__

/* warp shuffles: an exchange between two barriers of the warp (ids 32 + warp) */
template <typename T> static T emu_shfl(T v, int src_lane)
{
	unsigned t = threadIdx.x, w = t / 32u, l = t % 32u;
	static_assert(sizeof(T) <= 8, "shuffle of a wide type");
	uint64_t bits = 0;
	memcpy(&bits, &v, sizeof(T));
	emu::slots[w][l] = bits;
	emu::barrier(32 + (int)w, 32);
	uint64_t r = emu::slots[w][src_lane & 31];
	emu::barrier(32 + (int)w, 32);
	T out;
	memcpy(&out, &r, sizeof(T));
	return out;
}
template <typename T> static T __shfl_xor_sync(unsigned, T v, int o) { return emu_shfl(v, (int)(threadIdx.x % 32u) ^ o); }
template <typename T> static T __shfl_sync(unsigned, T v, int src) { return emu_shfl(v, src); }
template <typename T> static T __shfl_up_sync(unsigned, T v, int d)
{
	int l = (int)(threadIdx.x % 32u);
	T r = emu_shfl(v, l >= d ? l - d : l);
	return r;
}
static inline void __syncthreads() { emu::barrier(0, (int)emu::block_dim.x); }
static inline void named_bar_sync(u32 id, u32 n) { emu::barrier((int)id, (int)n); }

/* bit casts and math */
static inline float __uint_as_float(u32 u) { float f; memcpy(&f, &u, 4); return f; }
static inline u32 __float_as_uint(float f) { u32 u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }

/* the Cake prelude's helpers that SIMT kernels use; shared memory is one CTA-wide array
 * addressed by the u32 offsets the generated code computes from smem_u32() = 0 */
static unsigned char emu_smem[256 << 10];
static inline u32 smem_u32(const void *) { return 0; }
static inline u32 ld_shared_u32(u32 a) { u32 v; memcpy(&v, emu_smem + a, 4); return v; }
static inline void st_shared_u32(u32 a, u32 v) { memcpy(emu_smem + a, &v, 4); }
static inline void fence_mbarrier_init() {}
static inline void fence_proxy_async() {}

/* ---- mbarriers: per shared address, the arrivals still expected in the current phase, the
 * transaction bytes still expected, the phase bit ---- */
namespace emu {
static Mbar &mbar(u32 a)
{
	for (auto &m : mbars)
		if (m.first == a)
			return m.second;
	fprintf(stderr, "simt_emu: mbarrier at shared offset %u used before mbar_init\n", a);
	exit(3);
}
static void mbar_step(Mbar &m)
{
	progress++;
	if (m.pending <= 0 && m.tx <= 0) {   /* the phase completes */
		m.phase ^= 1u;
		m.pending = m.count;
		m.tx = 0;
	}
}
}  // namespace emu
static inline void mbar_init(u32 bar, u32 count)
{
	for (auto &m : emu::mbars)
		if (m.first == bar) {
			m.second = emu::Mbar{(int)count, (int)count, 0, 0};
			return;
		}
	emu::mbars.push_back({bar, emu::Mbar{(int)count, (int)count, 0, 0}});
}
static inline void mbar_arrive_cnt(u32 bar, u32 n) { emu::Mbar &m = emu::mbar(bar); m.pending -= (int)n; emu::mbar_step(m); }
static inline void mbar_arrive(u32 bar) { mbar_arrive_cnt(bar, 1); }
static inline void mbar_arrive_expect_tx(u32 bar, u32 bytes) { emu::Mbar &m = emu::mbar(bar); m.tx += bytes; m.pending -= 1; emu::mbar_step(m); }
static inline void mbar_wait(u32 bar, u32 parity)
{
	while (emu::mbar(bar).phase == parity)   /* the phase of this parity has not completed yet */
		emu::yield();
}
template <int R> static inline void setmaxnreg_inc() {}
template <int R> static inline void setmaxnreg_dec() {}
static inline float bf16lo_f32(u32 v) { return __uint_as_float(v << 16); }
static inline float bf16hi_f32(u32 v) { return __uint_as_float(v & 0xffff0000u); }
static inline float f16lo_f32(u32 v)
{
	u32 h = v & 0xffffu, s = (h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
	if (e == 0)
		return (s ? -1.0f : 1.0f) * ldexpf((float)m, -24);
	if (e == 31)
		return __uint_as_float(s | 0x7f800000u | (m << 13));
	return __uint_as_float(s | ((e + 112) << 23) | (m << 13));
}
static inline float f16hi_f32(u32 v) { return f16lo_f32(v >> 16); }
static inline bf16_t bf16_bits(float x)
{
	u32 u = __float_as_uint(x);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (bf16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (bf16_t)(u >> 16);
}
static inline float round_bf16(float x) { return bf16lo_f32(bf16_bits(x)); }
static inline u32 pack_bf16x2(float lo, float hi) { return (u32)bf16_bits(lo) | ((u32)bf16_bits(hi) << 16); }
static inline u32 ld_global_nc_b16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline u32 ld_global_nc_b32(const void *p) { u32 v; memcpy(&v, p, 4); return v; }
static inline u64 ld_global_nc_b64(const void *p) { u64 v; memcpy(&v, p, 8); return v; }
static inline void ld_global_nc_v2(const void *p, u32 *w) { memcpy(w, p, 8); }
static inline void ld_global_nc_v4(const void *p, u32 *w) { memcpy(w, p, 16); }
#define ld_global_b16 ld_global_nc_b16
#define ld_global_b32 ld_global_nc_b32
#define ld_global_b64 ld_global_nc_b64
#define ld_global_v2 ld_global_nc_v2
#define ld_global_v4 ld_global_nc_v4
static inline void st_global_b16(void *p, u32 v) { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); }
static inline void st_global_b32(void *p, u32 v) { memcpy(p, &v, 4); }
static inline void st_global_v2(void *p, const u32 *w) { memcpy(p, w, 8); }
static inline void st_global_v4(void *p, const u32 *w) { memcpy(p, w, 16); }
static inline void red_add_f32(float *p, float v) { *p += v; }
static inline void red_add_s32(int *p, int v) { *p += v; }

/* ---- TMA loads: a tensor map as the driver builds it from the plan (mkdriver.py) ---- */
struct CUtensorMap {
	const unsigned char *base;   /* the tensor */
	int rank, esz;               /* dimensions, bytes per element */
	long long dims[5];           /* extents, innermost first */
	long long strides[5];        /* byte strides, innermost first (strides[0] = esz) */
	int box[5];                  /* box extents, innermost first */
	int swizzle;                 /* 0, 32, 64 or 128 bytes */
};
static inline void tma_prefetch(const CUtensorMap *) {}
static void emu_tma(u32 dst, const CUtensorMap *m, u32 bar, const int *c)
{
	long long n = 1, bytes;
	for (int d = 0; d < m->rank; d++)
		n *= m->box[d];
	bytes = n * m->esz;
	u32 mask = m->swizzle == 128 ? 7u : m->swizzle == 64 ? 3u : m->swizzle == 32 ? 1u : 0u;
	for (long long i = 0; i < n; i++) {
		long long r = i, off = 0;
		bool in = true;
		for (int d = 0; d < m->rank; d++) {
			long long x = c[d] + r % m->box[d];
			r /= m->box[d];
			in = in && x >= 0 && x < m->dims[d];
			off += x * m->strides[d];
		}
		u32 o = (u32)(i * m->esz);
		o ^= ((o >> 7) & mask) << 4;
		if (in)
			memcpy(emu_smem + dst + o, m->base + off, (size_t)m->esz);
		else
			memset(emu_smem + dst + o, 0, (size_t)m->esz);
	}
	emu::Mbar &b = emu::mbar(bar);
	b.tx -= bytes;
	emu::mbar_step(b);
}
static inline void tma_load_1d(u32 dst, const CUtensorMap *m, u32 bar, int c0) { int c[1] = {c0}; emu_tma(dst, m, bar, c); }
static inline void tma_load_2d(u32 dst, const CUtensorMap *m, u32 bar, int c0, int c1) { int c[2] = {c0, c1}; emu_tma(dst, m, bar, c); }
static inline void tma_load_3d(u32 dst, const CUtensorMap *m, u32 bar, int c0, int c1, int c2) { int c[3] = {c0, c1, c2}; emu_tma(dst, m, bar, c); }
static inline void tma_load_4d(u32 dst, const CUtensorMap *m, u32 bar, int c0, int c1, int c2, int c3)
{
	int c[4] = {c0, c1, c2, c3};
	emu_tma(dst, m, bar, c);
}
static inline void tma_load_5d(u32 dst, const CUtensorMap *m, u32 bar, int c0, int c1, int c2, int c3, int c4)
{
	int c[5] = {c0, c1, c2, c3, c4};
	emu_tma(dst, m, bar, c);
}

/* ---- wgmma.mma_async m64nNk16 (bf16 / f16 inputs, f32 accumulators): a model ---- */
static inline u64 wgmma_desc(u32 saddr, u32 lbo, u32 sbo, u32 layout)
{
	return (u64)((saddr & 0x3FFFFu) >> 4) | ((u64)((lbo >> 4) & 0x3FFFu) << 16) | ((u64)((sbo >> 4) & 0x3FFFu) << 32) | ((u64)layout << 62);
}
static inline void wgmma_fence() {}
static inline void wgmma_commit() {}
template <int N> static inline void wgmma_wait() {}

/* Element (mn, k) of a 16-bit operand tile described by desc (mn: the M row of A or the N
 * column of B; k < 16), by the canonical layouts of the PTX ISA (swizzle atoms of 8 rows x
 * S bytes, S = 128, 64, 32 for layouts 1, 2, 3):
 *   K-major   rows along mn, S bytes apart, 8-row groups SBO apart; k contiguous in a row;
 *   MN-major  mn contiguous in an atom row (S / 2 elements), the next atom along mn LBO
 *             apart; k rows S bytes apart, 8-row groups SBO apart;
 * then the swizzle of the address (the 16-byte chunk XOR the row within the 8-row pattern). */
static float emu_desc_elem(u64 desc, bool mn_major, int mn, int k, bool f16)
{
	u32 start = (u32)(desc & 0x3FFFu) << 4, lbo = (u32)((desc >> 16) & 0x3FFFu) << 4, sbo = (u32)((desc >> 32) & 0x3FFFu) << 4;
	int layout = (int)(desc >> 62);
	u32 S = layout == 1 ? 128u : layout == 2 ? 64u : layout == 3 ? 32u : 0u;
	if (!S) {
		fprintf(stderr, "simt_emu: wgmma descriptor without a swizzle (interleaved layout) is not modelled\n");
		exit(3);
	}
	u32 off = mn_major ? (u32)(mn % (int)(S / 2)) * 2u + (u32)(mn / (int)(S / 2)) * lbo + (u32)(k % 8) * S + (u32)(k / 8) * sbo
	                   : (u32)(mn % 8) * S + (u32)(mn / 8) * sbo + (u32)k * 2u;
	u32 a = start + off;
	a ^= ((a >> 7) & (S == 128 ? 7u : S == 64 ? 3u : 1u)) << 4;
	uint16_t v;
	memcpy(&v, emu_smem + a, 2);
	return f16 ? f16lo_f32(v) : bf16lo_f32(v);
}

namespace emu {
static u32 wg_areg[8][128][4];   /* register A operands of each warpgroup's threads */
}

/* One thread's call of a wgmma of its warpgroup: D[64 x N] (+)= A[64 x 16] B[16 x N]. A from
 * registers (areg: the m64k16 fragment, a0 rows w*16 + l/4, a1 8 rows lower, a2/a3 the same at
 * k + 8; each the pair k = 2(l%4), +1) or shared memory (da; M-major when ta); B from shared
 * memory (db; N-major when tb). The threads of the warpgroup exchange their A registers
 * between two barriers (ids 96 + warpgroup); each then forms the accumulator elements it
 * holds (rows w*16 + l/4 (+8), columns 8j + 2(l%4) (+1)) in f32. */
static void emu_wgmma(float *d, int N, bool f16, const u32 *areg, u64 da, bool ta, u64 db, bool tb, int scale_d)
{
	unsigned t = threadIdx.x, wg = t / 128u, lt = t % 128u, w = lt / 32u, l = lt % 32u;
	if (areg)
		memcpy(emu::wg_areg[wg][lt], areg, 16);
	emu::barrier(96 + (int)wg, 128);
	for (int j = 0; j < N / 8; j++)
		for (int h = 0; h < 2; h++)
			for (int e = 0; e < 2; e++) {
				int row = (int)(w * 16 + l / 4) + 8 * h, col = 8 * j + 2 * (int)(l % 4) + e;
				float acc = scale_d ? d[4 * j + 2 * h + e] : 0.0f;
				for (int k = 0; k < 16; k++) {
					float a;
					if (areg) {
						const u32 *src = emu::wg_areg[wg][(row / 16) * 32 + (row % 8) * 4 + (k % 8) / 2];
						u32 pair = src[(row % 16 >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)];
						u32 bits = k % 2 ? pair >> 16 : pair & 0xFFFFu;
						a = f16 ? f16lo_f32(bits) : bf16lo_f32(bits);
					} else {
						a = emu_desc_elem(da, ta, row, k, f16);
					}
					acc += a * emu_desc_elem(db, tb, col, k, f16);
				}
				d[4 * j + 2 * h + e] = acc;
			}
	emu::barrier(96 + (int)wg, 128);
}

/* Launch: every CTA of grid (gx, gy, gz) with nthreads threads, one after another. */
static bool emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned nthreads, std::function<void()> kernel)
{
	emu::grid_dim = {gx, gy, gz};
	emu::block_dim = {nthreads, 1, 1};
	emu::body = kernel;
	for (unsigned z = 0; z < gz; z++)
		for (unsigned y = 0; y < gy; y++)
			for (unsigned x = 0; x < gx; x++) {
				emu::block_idx = {x, y, z};
				if (!emu::run_cta(nthreads))
					return false;
			}
	return true;
}

#endif
