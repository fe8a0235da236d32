/*
 * simt_emu.h — run Cake's generated sm_90a CUDA for SIMT kernels on the CPU.
 *
 * A testing aid (tests/lower/emu.sh, tests/lower/kmeans_emu.sh), not a product: it lets a
 * machine without a GPU execute the kernels that use SIMT work — thread tiles, thread
 * vectors, element reads, warp shuffles, named barriers, `__shared__` scratch, global and
 * shared-memory atomics, TMA box loads completing on mbarriers, TMA stores — so their layouts, shuffle
 * trees, index arithmetic and synchronisation are checked against the float64 oracles, not
 * just compiled. wgmma is modelled too (emu_wgmma below, wrapped per variant by mkdriver.py):
 * its operands are read from shared memory by the PTX ISA's canonical layouts — the
 * descriptor's start address, leading and stride byte offsets and swizzle mode, K-major or
 * MN-major — independently of how the Cake lowering wrote them, and the product is formed at
 * once (the asynchrony, fences and wait_group are no-ops: a program that waits before it
 * reads sees the same values); so it checks the descriptors and the layouts of `store`d
 * operands, not the hardware. Anything a cluster shares is out of scope.
 *
 * Model. The CTAs of the grid run one after another. Inside a CTA every thread is a
 * cooperative coroutine with its own stack, so a kernel's per-thread registers are ordinary
 * locals and `__shared__` arrays (block-scope statics) are shared by the CTA's threads. A
 * thread runs until it must wait: warp shuffles are exchanges through a per-warp slot array
 * between two barriers of the warp; named barriers and __syncthreads count arrivals like the
 * hardware (the first n arrivals at an id complete it); an mbarrier wait blocks until the
 * barrier's phase has moved on. The scheduler resumes only threads whose wait is over; when
 * every live thread waits, the CTA is reported as a deadlock. Control flow must be what the
 * hardware requires anyway (every lane of a warp reaches the same shuffles).
 *
 * Memory is the host's. Because threads switch only at waits, every atomic is trivially
 * atomic; what the emulator cannot show is a race that needs two threads (or two CTAs) to
 * interleave between waits. To shake out order assumptions instead, SIMT_EMU_SHUFFLE=SEED
 * (environment) runs the CTAs of a grid in a seeded random order and resumes the runnable
 * threads of each round in a seeded random order, so atomics hand out slots differently.
 *
 * TMA. A tensor map (CUtensorMap here: base, rank, element size, extents, byte strides, box,
 * swizzle) is built by the driver from the kernel's Plan (`cake build --emit=plan`,
 * tools/emu/mkdriver.py). tma_load_<R>d is asynchronous, as on the hardware: it queues the
 * copy, which lands when the scheduler's current round of threads ends, so a thread that reads
 * the buffer without waiting on the mbarrier first sees what was there before (the previous
 * CTA's tile, or zeros), not the new box. Landing copies the box into shared memory — elements
 * outside the tensor read as zero, as the hardware's out-of-bounds fill does — applying the
 * buffer's swizzle to the destination address (16-byte chunk ^= (address >> 7) & mask, the
 * pattern of CU_TENSOR_MAP_SWIZZLE_128B/64B/32B), and completes the box's bytes as
 * transactions on its mbarrier. The map's encoding rules (16-byte aligned base and strides,
 * box extents <= 256, a swizzled row no wider than the swizzle span) are checked, because
 * cuTensorMapEncodeTiled would refuse a map that breaks them. A TMA store reads its shared
 * source only when the issuing thread waits for its bulk group (bulk_wait_read), the latest
 * moment the hardware allows, so a kernel that rewrites the source before that wait stores the
 * new data; a store never waited for when the CTA exits is reported as an error.
 *
 * Threads switch by a few instructions of assembly on x86-64 (the callee-saved registers,
 * MXCSR and the x87 control word), ucontext elsewhere and under AddressSanitizer: glibc's
 * swapcontext makes a system call per switch, which made large grids too slow to test. Each
 * stack is mmap'd once with a guard page below it (an overflow faults instead of corrupting
 * a neighbour) and reused by every later CTA. The shared state lives in C++17 inline
 * variables, so several translation units (one per kernel, mkdriver.py --unit) share it, and
 * the header pulls in no heavy standard headers (no <functional>, <map>, <string>): a test
 * compiles one unit per kernel, and the header was most of each unit's compile time.
 */
#ifndef CAKE_SIMT_EMU_H
#define CAKE_SIMT_EMU_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <type_traits>
#include <ucontext.h>
#include <utility>
#include <vector>

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(SIMT_EMU_UCONTEXT)
#define EMU_ASM_SWITCH 1
#else
#define EMU_ASM_SWITCH 0
#endif

typedef uint32_t u32;
typedef uint64_t u64;
typedef uint16_t bf16_t;
typedef uint16_t f16_t;

struct dim3e { unsigned x, y, z; };
struct uint2 { u32 x, y; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }

/* A TMA descriptor as the emulator reads it (the driver fills it from the Plan). */
struct CUtensorMap {
	const unsigned char *base;
	int rank, esize;
	u32 swz_mask;                 /* 7 (128B), 3 (64B), 1 (32B), 0 (none) */
	long long dims[5];            /* extents, innermost first */
	long long strides[5];         /* byte strides; strides[0] = esize */
	int box[5];
};

#if EMU_ASM_SWITCH
/* emu_swap(save, next): push the callee-saved state, store the stack pointer in *save,
 * switch to the stack next and pop its state (returning into that coroutine). Weak, so
 * every translation unit may carry the same definition. */
extern "C" void emu_swap(void **save, void *next);
asm(".pushsection .text\n"
    ".weak emu_swap\n"
    ".type emu_swap, @function\n"
    "emu_swap:\n"
    "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
    "\tsubq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n"
    "\tmovq %rsp, (%rdi)\n"
    "\tmovq %rsi, %rsp\n"
    "\tldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n"
    "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
    "\tret\n"
    ".size emu_swap, .-emu_swap\n"
    ".popsection\n");
#endif

namespace emu {
static const size_t STACK = 256 << 10;
struct Bar { int arrived = 0; long long gen = 0; int need = 0; };
struct MBar { int count = 0, pending = 0; long long tx = 0; u32 phase = 0; };
struct Thread {
	char *stack = nullptr;        /* mmap'd: a guard page, then STACK bytes */
#if EMU_ASM_SWITCH
	void *sp = nullptr;
#else
	ucontext_t ctx;
#endif
	bool done = false;
	unsigned tid = 0;
	/* what the thread waits for: a barrier generation or an mbarrier phase to change */
	const Bar *wbar = nullptr;
	long long wgen = 0;
	const MBar *wmbar = nullptr;
	u32 wphase = 0;
	int bulk_groups = 0;          /* bulk groups of TMA stores this thread has committed */
};
inline std::vector<Thread> th;
inline int cur = 0;
#if EMU_ASM_SWITCH
inline void *sched_sp = nullptr;
#else
inline ucontext_t sched;
#endif
inline void (*body)(void *) = nullptr;   /* the kernel call of the launch, on body_ctx */
inline void *body_ctx = nullptr;
inline dim3e block_idx, grid_dim, block_dim;
static const int NBARS = 128;           /* named barriers 0-15, warps 32 + w, warpgroups 96 + g */
inline Bar bars[NBARS];
inline uint64_t slots[32][32];
static const int MAXMBAR = 64;
inline u32 mbar_addr[MAXMBAR];           /* the CTA's initialised mbarriers, by address */
inline MBar mbar_state[MAXMBAR];
inline int nmbars = 0;
struct TmaOp { u32 dst, bar; CUtensorMap map; int c[5]; };
inline std::vector<TmaOp> tma_pending;   /* issued, not landed */
/* TMA stores issued and not yet read: a store reads its shared source only when its thread
 * waits for the group (bulk_wait_read), the latest moment the hardware allows, so a kernel
 * that rewrites the source before that wait stores the new data and fails its check */
struct TmaStoreOp { u32 src; CUtensorMap map; int c[5]; unsigned tid; int group; };
inline std::vector<TmaStoreOp> tstore_pending;
static void land_tma();
inline uint64_t shuffle_state = 0;   /* SIMT_EMU_SHUFFLE: 0 = natural order */
inline bool shuffle_read = false;

static inline uint64_t rng()
{
	uint64_t z = (shuffle_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void fail(const char *what)
{
	fprintf(stderr, "simt_emu: CTA (%u, %u, %u) thread %u: %s\n", block_idx.x, block_idx.y, block_idx.z,
	        th.empty() ? 0u : th[cur].tid, what);
	exit(3);
}

static inline void yield()
{
#if EMU_ASM_SWITCH
	emu_swap(&th[cur].sp, sched_sp);
#else
	swapcontext(&th[cur].ctx, &sched);
#endif
}

static inline void barrier(int id, int need)
{
	Bar &b = bars[id];
	if (b.arrived == 0)
		b.need = need;
	long long g = b.gen;
	if (++b.arrived == b.need) {
		b.arrived = 0;
		b.gen++;
		return;
	}
	th[cur].wbar = &b;
	th[cur].wgen = g;
	while (b.gen == g)
		yield();
	th[cur].wbar = nullptr;
}

static inline bool runnable(const Thread &t)
{
	if (t.done)
		return false;
	if (t.wbar && t.wbar->gen == t.wgen)
		return false;
	if (t.wmbar && t.wmbar->phase == t.wphase)
		return false;
	return true;
}

static void entry()
{
	body(body_ctx);
	th[cur].done = true;
#if EMU_ASM_SWITCH
	emu_swap(&th[cur].sp, sched_sp);
#else
	swapcontext(&th[cur].ctx, &sched);
#endif
	abort();   /* a finished thread is never resumed */
}

#if !EMU_ASM_SWITCH
static void trampoline() { entry(); }
#endif

/* Run one CTA of nthreads threads. */
static bool run_cta(unsigned nthreads)
{
	if (th.size() < nthreads)
		th.resize(nthreads);
	for (int i = 0; i < NBARS; i++)
		bars[i] = Bar();
	nmbars = 0;
	tma_pending.clear();
	tstore_pending.clear();
	for (unsigned i = 0; i < nthreads; i++) {
		Thread &t = th[i];
		if (!t.stack) {
			void *m = mmap(nullptr, STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (m == MAP_FAILED) {
				fprintf(stderr, "simt_emu: cannot map a thread stack\n");
				exit(3);
			}
			mprotect(m, 4096, PROT_NONE);   /* the guard page */
			t.stack = (char *)m + 4096;
		}
		t.tid = i;
		t.done = false;
		t.wbar = nullptr;
		t.wmbar = nullptr;
		t.bulk_groups = 0;
#if EMU_ASM_SWITCH
		/* the frame emu_swap pops: MXCSR and the x87 control word, r15..r12, rbx, rbp, then
		 * entry() as the return address; above it a zero "return address" of entry(), so the
		 * stack is aligned as after a call */
		uintptr_t top = ((uintptr_t)t.stack + STACK) & ~(uintptr_t)15;
		uint64_t *s = (uint64_t *)top;
		*--s = 0;
		*--s = (uint64_t)(uintptr_t)&entry;
		for (int r = 0; r < 6; r++)
			*--s = 0;
		u32 csr;
		uint16_t cw;
		asm volatile("stmxcsr %0" : "=m"(csr));
		asm volatile("fnstcw %0" : "=m"(cw));
		*--s = (uint64_t)csr | ((uint64_t)cw << 32);
		t.sp = s;
#else
		getcontext(&t.ctx);
		t.ctx.uc_stack.ss_sp = t.stack;
		t.ctx.uc_stack.ss_size = STACK;
		t.ctx.uc_link = nullptr;
		makecontext(&t.ctx, trampoline, 0);
#endif
	}
	std::vector<unsigned> order(nthreads);
	for (unsigned i = 0; i < nthreads; i++)
		order[i] = i;
	for (;;) {
		bool any = false, all = true;
		if (shuffle_state)
			for (unsigned i = nthreads; i > 1; i--)
				std::swap(order[i - 1], order[rng() % i]);
		for (unsigned k = 0; k < nthreads; k++) {
			unsigned i = order[k];
			if (th[i].done)
				continue;
			all = false;
			if (!runnable(th[i]))
				continue;
			any = true;
			cur = (int)i;
#if EMU_ASM_SWITCH
			emu_swap(&sched_sp, th[i].sp);
#else
			swapcontext(&sched, &th[i].ctx);
#endif
		}
		if (!tma_pending.empty()) {   /* the round's TMA loads land */
			land_tma();
			continue;
		}
		if (all) {
			if (!tstore_pending.empty()) {
				fprintf(stderr, "simt_emu: CTA (%u, %u, %u): thread %u exits with a TMA store whose read of shared memory was "
				        "never waited for (cp.async.bulk.wait_group.read)\n", block_idx.x, block_idx.y, block_idx.z,
				        tstore_pending[0].tid);
				return false;
			}
			return true;
		}
		if (!any) {
			fprintf(stderr, "simt_emu: CTA (%u, %u, %u): every thread waits at a barrier; deadlock\n", block_idx.x, block_idx.y,
			        block_idx.z);
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
/* __syncwarp: the warp's own barrier (id 32 + warp, as the shuffles use) */
static inline void __syncwarp(unsigned = 0xffffffffu) { emu::barrier(32 + (int)(threadIdx.x / 32u), 32); }
static inline void named_bar_sync(u32 id, u32 n) { emu::barrier((int)id, (int)n); }
template <int R> static inline void setmaxnreg_inc() {}
template <int R> static inline void setmaxnreg_dec() {}

/* bit casts and math (CUDA's integer and float min/max overloads) */
static inline float __uint_as_float(u32 u) { float f; memcpy(&f, &u, 4); return f; }
static inline u32 __float_as_uint(float f) { u32 u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float cake_emu_expf(float x) { return expf(x); }   /* CUDA's __expf (glibc declares its own) */
#define __expf cake_emu_expf
/* the prelude's cake_exp: ex2.approx.ftz of x log2(e), a result below 2^-126 flushed to 0 */
static inline float cake_exp(float x)
{
	float y = exp2f(x * 1.4426950408889634f);
	return y < 1.17549435e-38f ? 0.0f : y;
}
template <typename A, typename B> static inline typename std::common_type<A, B>::type max(A a, B b)
{
	typedef typename std::common_type<A, B>::type T;
	return (T)a > (T)b ? (T)a : (T)b;
}
template <typename A, typename B> static inline typename std::common_type<A, B>::type min(A a, B b)
{
	typedef typename std::common_type<A, B>::type T;
	return (T)a < (T)b ? (T)a : (T)b;
}

/* the Cake prelude's helpers that SIMT kernels use; shared memory is one CTA-wide array
 * addressed by the u32 offsets the generated code computes from smem_u32() = 0 */
inline unsigned char emu_smem[256 << 10];
static inline unsigned char *emu_sptr(u32 a, u32 n)
{
	if ((u64)a + n > sizeof emu_smem)
		emu::fail("shared-memory access past 256 KiB");
	return emu_smem + a;
}
static inline u32 smem_u32(const void *) { return 0; }
static inline u32 lane_id(void) { return threadIdx.x % 32u; }
static inline u32 ld_shared_u32(u32 a) { u32 v; memcpy(&v, emu_sptr(a, 4), 4); return v; }
static inline void st_shared_u32(u32 a, u32 v) { memcpy(emu_sptr(a, 4), &v, 4); }
template <typename T> static inline T emu_shared_add(u32 a, T v)
{
	T old;
	memcpy(&old, emu_sptr(a, sizeof(T)), sizeof(T));
	T nv = (T)(old + v);
	memcpy(emu_sptr(a, sizeof(T)), &nv, sizeof(T));
	return old;
}
static inline void red_shared_add_s32(u32 a, int v) { emu_shared_add<int>(a, v); }
static inline void red_shared_add_u32(u32 a, u32 v) { emu_shared_add<u32>(a, v); }
static inline void red_shared_add_f32(u32 a, float v) { emu_shared_add<float>(a, v); }
static inline int atom_shared_add_s32(u32 a, int v) { return emu_shared_add<int>(a, v); }
static inline u32 atom_shared_add_u32(u32 a, u32 v) { return emu_shared_add<u32>(a, v); }
static inline float atom_shared_add_f32(u32 a, float v) { return emu_shared_add<float>(a, v); }
static inline void fence_mbarrier_init() {}
static inline void fence_proxy_async() {}

/* 16-bit floats */
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
/* float -> f16 bits, round to nearest even (cvt.rn.f16.f32): subnormals, overflow to inf */
static inline f16_t f16_bits(float x)
{
	u32 u = __float_as_uint(x), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (f16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
	if (a >= 0x477ff000u)   /* at or past the midpoint between 65504 and 65536 */
		return (f16_t)(s | 0x7c00u);
	if (a < 0x38800000u)    /* below 2^-14: a multiple of 2^-24, rounded to nearest even */
		return (f16_t)(s | (u32)nearbyintf(__uint_as_float(a) * 16777216.0f));
	a -= 112u << 23;
	a += 0xfffu + ((a >> 13) & 1u);
	return (f16_t)(s | (a >> 13));
}
static inline float round_bf16(float x) { return bf16lo_f32(bf16_bits(x)); }
static inline float round_f16(float x) { return f16lo_f32(f16_bits(x)); }
static inline u32 pack_bf16x2(float lo, float hi) { return (u32)bf16_bits(lo) | ((u32)bf16_bits(hi) << 16); }
static inline u32 pack_f16x2(float lo, float hi) { return (u32)f16_bits(lo) | ((u32)f16_bits(hi) << 16); }

/* global memory */
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
static inline void red_add_v2_f32(float *p, float a, float b) { p[0] += a; p[1] += b; }
static inline void red_add_s32(int *p, int v) { *p += v; }
template <typename T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = (T)(old + v); return old; }

/* mbarriers, by shared-memory address: a phase completes when its arrivals are all in and
 * its transaction bytes are all done */
static inline emu::MBar &emu_mbar(u32 bar)
{
	for (int i = 0; i < emu::nmbars; i++)
		if (emu::mbar_addr[i] == bar)
			return emu::mbar_state[i];
	emu::fail("mbarrier used before mbar_init");
	abort();
}
static inline void emu_mbar_check(emu::MBar &m)
{
	if (m.pending < 0)
		emu::fail("more mbarrier arrivals than its count in one phase");
	if (m.pending == 0 && m.tx == 0) {
		m.phase++;
		m.pending = m.count;
	}
}
static inline void mbar_init(u32 bar, u32 count)
{
	int i = 0;
	while (i < emu::nmbars && emu::mbar_addr[i] != bar)
		i++;
	if (i == emu::MAXMBAR)
		emu::fail("more than 64 mbarriers");
	if (i == emu::nmbars)
		emu::mbar_addr[emu::nmbars++] = bar;
	emu::MBar &m = emu::mbar_state[i];
	m = emu::MBar();
	m.count = m.pending = (int)count;
}
static inline void mbar_arrive_expect_tx(u32 bar, u32 bytes)
{
	emu::MBar &m = emu_mbar(bar);
	m.tx += bytes;
	m.pending--;
	emu_mbar_check(m);
}
static inline void mbar_arrive(u32 bar)
{
	emu::MBar &m = emu_mbar(bar);
	m.pending--;
	emu_mbar_check(m);
}
static inline void mbar_arrive_cnt(u32 bar, u32 count)
{
	emu::MBar &m = emu_mbar(bar);
	m.pending -= (int)count;
	emu_mbar_check(m);
}
/* wait until the phase of this parity has completed (try_wait.parity) */
static inline void mbar_wait(u32 bar, u32 parity)
{
	emu::MBar &m = emu_mbar(bar);
	emu::Thread &t = emu::th[emu::cur];
	while ((m.phase & 1u) == (parity & 1u)) {
		t.wmbar = &m;
		t.wphase = m.phase;
		emu::yield();
	}
	t.wmbar = nullptr;
}

/* TMA */
static inline CUtensorMap emu_tensor_map(const void *base, int esize, int rank, const long long *dims,
                                         const long long *strides, const int *box, int swizzle_bytes)
{
	CUtensorMap m;
	memset(&m, 0, sizeof m);
	m.base = (const unsigned char *)base;
	m.rank = rank;
	m.esize = esize;
	m.swz_mask = swizzle_bytes == 128 ? 7u : swizzle_bytes == 64 ? 3u : swizzle_bytes == 32 ? 1u : 0u;
	bool ok = (uintptr_t)base % 16 == 0 && rank >= 1 && rank <= 5;
	for (int i = 0; i < rank && ok; i++) {
		m.dims[i] = dims[i];
		m.strides[i] = i ? strides[i] : esize;
		m.box[i] = box[i];
		ok = dims[i] >= 1 && box[i] >= 1 && box[i] <= 256 && (i == 0 || strides[i] % 16 == 0);
	}
	if (ok && (long long)box[0] * esize % 16 != 0)
		ok = false;
	if (ok && swizzle_bytes && (long long)box[0] * esize > swizzle_bytes)
		ok = false;
	if (!ok) {
		fprintf(stderr, "simt_emu: a tensor map cuTensorMapEncodeTiled would refuse (rank %d, base %p)\n", rank, base);
		exit(3);
	}
	return m;
}
static inline void tma_prefetch(const CUtensorMap *) {}
static inline void emu_tma_load(u32 dst, const CUtensorMap *map, u32 bar, const int *c)
{
	emu_mbar(bar);   /* the barrier must exist when the copy is issued */
	emu::TmaOp op;
	op.dst = dst, op.bar = bar, op.map = *map;
	for (int i = 0; i < 5; i++)
		op.c[i] = i < map->rank ? c[i] : 0;
	emu::tma_pending.push_back(op);
}
static void emu_tma_land(u32 dst, const CUtensorMap *map, u32 bar, const int *c)
{
	const CUtensorMap &m = *map;
	long long n = 1;
	for (int i = 0; i < m.rank; i++)
		n *= m.box[i];
	if (dst % 128 != 0)
		emu::fail("TMA destination not 128-byte aligned");
	int idx[5] = {0, 0, 0, 0, 0};
	for (long long e = 0; e < n; e++) {
		/* box element e (innermost first) -> global coordinate c + idx */
		long long off = 0;
		bool in = true;
		for (int i = 0; i < m.rank; i++) {
			long long g = (long long)c[i] + idx[i];
			in = in && g >= 0 && g < m.dims[i];
			off += g * m.strides[i];
		}
		u32 a = dst + (u32)(e * m.esize);
		a ^= ((a >> 7) & m.swz_mask) << 4;
		unsigned char *d = emu_sptr(a, (u32)m.esize);
		if (in)
			memcpy(d, m.base + off, (size_t)m.esize);
		else
			memset(d, 0, (size_t)m.esize);
		for (int i = 0; i < m.rank && ++idx[i] == m.box[i]; i++)
			idx[i] = 0;
	}
	emu::MBar &mb = emu_mbar(bar);
	mb.tx -= n * m.esize;
	emu_mbar_check(mb);
}
void emu::land_tma()
{
	std::vector<TmaOp> ops;
	ops.swap(tma_pending);
	for (const TmaOp &op : ops)
		emu_tma_land(op.dst, &op.map, op.bar, op.c);
}
static inline void tma_load_1d(u32 d, const CUtensorMap *m, u32 b, int c0) { int c[1] = {c0}; emu_tma_load(d, m, b, c); }
static inline void tma_load_2d(u32 d, const CUtensorMap *m, u32 b, int c0, int c1) { int c[2] = {c0, c1}; emu_tma_load(d, m, b, c); }
static inline void tma_load_3d(u32 d, const CUtensorMap *m, u32 b, int c0, int c1, int c2)
{
	int c[3] = {c0, c1, c2};
	emu_tma_load(d, m, b, c);
}
static inline void tma_load_4d(u32 d, const CUtensorMap *m, u32 b, int c0, int c1, int c2, int c3)
{
	int c[4] = {c0, c1, c2, c3};
	emu_tma_load(d, m, b, c);
}
static inline void tma_load_5d(u32 d, const CUtensorMap *m, u32 b, int c0, int c1, int c2, int c3, int c4)
{
	int c[5] = {c0, c1, c2, c3, c4};
	emu_tma_load(d, m, b, c);
}

/* The number of "SMs" a persistent grid is launched on (SIMT_EMU_SMS, default 3). */
static inline long long emu_sms()
{
	const char *e = getenv("SIMT_EMU_SMS");
	long long n = e ? atoll(e) : 3;
	return n > 0 ? n : 3;
}

/* TMA stores: queued by the issuing thread into its open bulk group; read (and written to the
 * tensor, elements outside it dropped as the hardware drops them) when that thread waits for
 * the group. The map's base is the output tensor, which the driver allocated writable. */
static inline void emu_tma_store(const CUtensorMap *map, u32 src, const int *c)
{
	emu::TmaStoreOp op;
	op.src = src, op.map = *map, op.tid = emu::th[emu::cur].tid, op.group = emu::th[emu::cur].bulk_groups;
	for (int i = 0; i < 5; i++)
		op.c[i] = i < map->rank ? c[i] : 0;
	if (src % 128 != 0)
		emu::fail("TMA store source not 128-byte aligned");
	emu::tstore_pending.push_back(op);
}
static void emu_tma_store_land(const emu::TmaStoreOp &op)
{
	const CUtensorMap &m = op.map;
	long long n = 1;
	for (int i = 0; i < m.rank; i++)
		n *= m.box[i];
	int idx[5] = {0, 0, 0, 0, 0};
	for (long long e = 0; e < n; e++) {
		long long off = 0;
		bool in = true;
		for (int i = 0; i < m.rank; i++) {
			long long g = (long long)op.c[i] + idx[i];
			in = in && g >= 0 && g < m.dims[i];
			off += g * m.strides[i];
		}
		u32 a = op.src + (u32)(e * m.esize);
		a ^= ((a >> 7) & m.swz_mask) << 4;
		const unsigned char *sp = emu_sptr(a, (u32)m.esize);
		if (in)
			memcpy((unsigned char *)m.base + off, sp, (size_t)m.esize);
		for (int i = 0; i < m.rank && ++idx[i] == m.box[i]; i++)
			idx[i] = 0;
	}
}
static inline void bulk_commit() { emu::th[emu::cur].bulk_groups++; }
/* Read every store of this thread's committed groups but the newest N. */
template <int N> static inline void bulk_wait_read()
{
	unsigned tid = emu::th[emu::cur].tid;
	int upto = emu::th[emu::cur].bulk_groups - N;
	std::vector<emu::TmaStoreOp> keep;
	for (const emu::TmaStoreOp &op : emu::tstore_pending) {
		if (op.tid == tid && op.group < upto)
			emu_tma_store_land(op);
		else
			keep.push_back(op);
	}
	emu::tstore_pending.swap(keep);
}
static inline void tma_store_1d(const CUtensorMap *m, u32 s, int c0) { int c[1] = {c0}; emu_tma_store(m, s, c); }
static inline void tma_store_2d(const CUtensorMap *m, u32 s, int c0, int c1) { int c[2] = {c0, c1}; emu_tma_store(m, s, c); }
static inline void tma_store_3d(const CUtensorMap *m, u32 s, int c0, int c1, int c2)
{
	int c[3] = {c0, c1, c2};
	emu_tma_store(m, s, c);
}
static inline void tma_store_4d(const CUtensorMap *m, u32 s, int c0, int c1, int c2, int c3)
{
	int c[4] = {c0, c1, c2, c3};
	emu_tma_store(m, s, c);
}
static inline void tma_store_5d(const CUtensorMap *m, u32 s, int c0, int c1, int c2, int c3, int c4)
{
	int c[5] = {c0, c1, c2, c3, c4};
	emu_tma_store(m, s, c);
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
	if (!S)
		emu::fail("wgmma descriptor without a swizzle (interleaved layout) is not modelled");
	u32 off = mn_major ? (u32)(mn % (int)(S / 2)) * 2u + (u32)(mn / (int)(S / 2)) * lbo + (u32)(k % 8) * S + (u32)(k / 8) * sbo
	                   : (u32)(mn % 8) * S + (u32)(mn / 8) * sbo + (u32)k * 2u;
	u32 a = start + off;
	a ^= ((a >> 7) & (S == 128 ? 7u : S == 64 ? 3u : 1u)) << 4;
	uint16_t v;
	memcpy(&v, emu_sptr(a, 2), 2);
	return f16 ? f16lo_f32(v) : bf16lo_f32(v);
}

namespace emu {
inline u32 wg_areg[8][128][4];   /* register A operands of each warpgroup's threads */
}

/* One thread's call of a wgmma of its warpgroup: D[64 x N] (+)= A[64 x 16] B[16 x N]. A from
 * registers (areg: the m64k16 fragment, a0 rows w*16 + l/4, a1 8 rows lower, a2/a3 the same at
 * k + 8; each the pair k = 2(l%4), +1) or shared memory (da; M-major when ta); B from shared
 * memory (db; N-major when tb). The threads of the warpgroup exchange their A registers
 * between two barriers (ids 96 + warpgroup); each then forms the accumulator elements it
 * holds (rows w*16 + l/4 (+8), columns 8j + 2(l%4) (+1)) in f32. scale_a is the
 * instruction's imm-scale-a (1, or -1: the product subtracted). */
static void emu_wgmma(float *d, int N, bool f16, const u32 *areg, u64 da, bool ta, u64 db, bool tb, int scale_d, int scale_a = 1)
{
	unsigned t = threadIdx.x, wg = t / 128u, lt = t % 128u, w = lt / 32u, l = lt % 32u;
	if (wg >= 8)
		emu::fail("wgmma from a warpgroup past the eighth");
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
					acc += (float)scale_a * a * emu_desc_elem(db, tb, col, k, f16);
				}
				d[4 * j + 2 * h + e] = acc;
			}
	emu::barrier(96 + (int)wg, 128);
}

/* Launch: every CTA of grid (gx, gy, gz) with nthreads threads, one after another (in a
 * seeded random order under SIMT_EMU_SHUFFLE). */
template <typename F> static bool emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned nthreads, F kernel)
{
	if (!emu::shuffle_read) {
		const char *s = getenv("SIMT_EMU_SHUFFLE");
		emu::shuffle_state = s ? strtoull(s, nullptr, 10) : 0;
		emu::shuffle_read = true;
	}
	emu::grid_dim = {gx, gy, gz};
	emu::block_dim = {nthreads, 1, 1};
	emu::body = [](void *c) { (*(F *)c)(); };
	emu::body_ctx = &kernel;
	u64 n = (u64)gx * gy * gz;
	std::vector<u64> ctas;
	if (emu::shuffle_state) {
		ctas.resize(n);
		for (u64 i = 0; i < n; i++)
			ctas[i] = i;
		for (u64 i = n; i > 1; i--)
			std::swap(ctas[i - 1], ctas[emu::rng() % i]);
	}
	for (u64 i = 0; i < n; i++) {
		u64 k = ctas.empty() ? i : ctas[i];
		emu::block_idx = {(unsigned)(k % gx), (unsigned)(k / gx % gy), (unsigned)(k / gx / gy)};
		if (!emu::run_cta(nthreads))
			return false;
	}
	return true;
}

/* Kernels by name (mkdriver.py --unit registers one launcher per translation unit): the
 * buffers and values a launcher binds, by parameter name, like the library's runtime. */
struct EmuArgs {
	static const int MAX = 64;
	int np = 0, nv = 0;
	const char *pname[MAX];
	void *pval[MAX];
	const char *vname[MAX];
	double vval[MAX];
	void bind(const char *name, void *p) { if (np < MAX) pname[np] = name, pval[np++] = p; }
	void set(const char *name, double v) { if (nv < MAX) vname[nv] = name, vval[nv++] = v; }
	void *ptr(const char *kernel, const char *name) const
	{
		for (int i = 0; i < np; i++)
			if (!strcmp(pname[i], name))
				return pval[i];
		fprintf(stderr, "simt_emu: %s: no buffer bound to '%s'\n", kernel, name);
		exit(3);
	}
	double val(const char *kernel, const char *name) const
	{
		for (int i = 0; i < nv; i++)
			if (!strcmp(vname[i], name))
				return vval[i];
		fprintf(stderr, "simt_emu: %s: no value bound to '%s'\n", kernel, name);
		exit(3);
	}
};
typedef bool (*EmuKernelFn)(const EmuArgs &);
/* One registered kernel: its launcher and its pointer parameters (what it may write). */
struct EmuRegister {
	const char *name;
	EmuKernelFn fn;
	const char *const *ptrs;
	int nptrs;
	EmuRegister *next;
	EmuRegister(const char *n, EmuKernelFn f, const char *const *p, int np);
};
inline EmuRegister *emu_kernels = nullptr;
inline EmuRegister::EmuRegister(const char *n, EmuKernelFn f, const char *const *p, int np)
	: name(n), fn(f), ptrs(p), nptrs(np), next(emu_kernels)
{
	emu_kernels = this;
}
static inline const EmuRegister *emu_kernel(const char *name)
{
	for (const EmuRegister *r = emu_kernels; r; r = r->next)
		if (!strcmp(r->name, name))
			return r;
	return nullptr;
}

#endif
