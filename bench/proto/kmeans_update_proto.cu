// kmeans_update_proto.cu -- hand-written microbenchmark: k-means centroid UPDATE step on H200 (sm_90a).
//
// Shape: B=32 batches, N=65536 points/batch, D=128, K=1024 clusters, bf16 points, i32 labels in [0,K).
// Output per (batch, cluster): f32 sum of member rows (D columns) and i32 member count.
// X is 32*65536*128*2 B = 537 MB, read once; Sums (16.8 MB) fits in the 50 MB L2.
// Goal: <= ~390 us end to end (Flash-KMeans baseline ~792 us).
//
// Variants (each: one or a few launches, batch is a grid dimension, all clearing/sorting is timed):
//  A atomic_v2  memset Sums/Counts; CTA = 128 points x 256 threads; a thread owns one column pair,
//               loads bf16x2 (4 B), red.global.add.v2.f32; counts by red.global.add.s32 (1 thread/point).
//  B atomic_v4  same, 4 columns/thread: 8 B load, red.global.add.v4.f32 (one warp = one 256 B row).
//  C atomic_v1  same, 1 column/thread: 2 B load, scalar red.global.add.f32.
//     (A-C issue 8 points' loads before their reds so 8 loads are in flight per thread.)
//  D smem_priv  grid (4 column quarters, S chunks, B), 1024 threads, smem f32[1024][33] + i32[1024]
//               (~136 KB, 1 CTA/SM). A warp takes 32 points: lane loads 32 labels, then per point
//               lane = column, 2 B load, shared atomicAdd (NB: on sm_90 f32 shared atomicAdd is a
//               LDS + ATOMS.CAST.SPIN loop, not a native op). Flush: S=1 plain stores (no memset
//               needed), S>1 red.global.add.f32 after a memset. S in {1,2,4}.
//  E sorted     (1) memset Counts + shared-memory histogram per 4096-point chunk -> atomicAdd Counts
//               (2) one 1024-thread CTA per batch: exclusive scan -> Offsets[B][K+1], Cursor = copy
//               (3) fill: slot = atomicAdd(&Cursor[b][lab],1); Order[b][slot] = p
//               (4) segmented sum, one warp per (b,k): lanes read Order 32 at a time (coalesced),
//                   half-warp = one row (16 lanes x 16 B = 8 bf16 each), 4 rows per half-warp in
//                   flight; shfl_xor(16) to combine the halves, 2 x float4 stores (no atomics, no
//                   memset: empty clusters write zeros).
// Timing: CUDA events, 3 warm-ups, 20 timed runs enqueued back to back, median and min.
// Check: batches 0 and B-1, all clusters, against a CPU float64 reference; rel err per element
//        |got-ref| / (|ref| + 1e-3*count) < 1e-4, counts exact, NaN/Inf rejected. Outputs are
//        poisoned (NaN / -1) before each variant so unwritten entries fail.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x)                                                                                    \
	do {                                                                                         \
		cudaError_t e_ = (x);                                                                    \
		if (e_ != cudaSuccess) {                                                                 \
			fprintf(stderr, "CUDA error %s (%s) at %s:%d in: %s\n", cudaGetErrorName(e_),        \
			        cudaGetErrorString(e_), __FILE__, __LINE__, #x);                             \
			exit(1);                                                                             \
		}                                                                                        \
	} while (0)

constexpr int B = 32, N = 65536, D = 128, K = 1024;
constexpr int NREP = 20, NWARM = 3;
constexpr unsigned FULL = 0xffffffffu;
typedef uint16_t bf16_t;  // raw bf16 bits
static_assert(K == 1024, "scan_kernel assumes K == blockDim == 1024");
static_assert(D == 128, "kernels assume D == 128");

// ---------------------------------------------------------------- helpers
__host__ __device__ inline uint32_t hash32(uint32_t x) {
	x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
	return x;
}
__device__ __forceinline__ float bf_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float bf_1(uint32_t h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ void red_f32(float* a, float x) {
	asm volatile("red.global.add.f32 [%0], %1;" ::"l"(a), "f"(x));
}
__device__ __forceinline__ void red_v2(float* a, float x, float y) {
	asm volatile("red.global.add.v2.f32 [%0], {%1,%2};" ::"l"(a), "f"(x), "f"(y));
}
__device__ __forceinline__ void red_v4(float* a, float x, float y, float z, float w) {
	asm volatile("red.global.add.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(a), "f"(x), "f"(y), "f"(z), "f"(w));
}
__device__ __forceinline__ void red_s32(int* a, int x) {
	asm volatile("red.global.add.s32 [%0], %1;" ::"l"(a), "r"(x));
}

// ---------------------------------------------------------------- data generation
// X[i] = bf16(RNE(u in [-1,1))), labels[i] = hash % K. i < 2^28 so 32-bit hashing of i is injective.
__global__ void gen_kernel(bf16_t* __restrict__ X, int* __restrict__ lab, uint32_t seed) {
	const size_t tot = (size_t)B * N * D, nl = (size_t)B * N;
	const uint32_t sx = hash32(seed * 2u + 1u), sl = hash32(seed * 2u + 2u);
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < tot; i += (size_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ sx);
		float f = (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
		uint32_t u = __float_as_uint(f);
		u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
		X[i] = (bf16_t)(u >> 16);
		if (i < nl) lab[i] = (int)(hash32((uint32_t)i * 0x9e3779b1u + sl) % (uint32_t)K);
	}
}

// ---------------------------------------------------------------- A/B/C: global vector atomics
constexpr int PTS = 128;  // points per CTA
template <int VEC>
__global__ void __launch_bounds__(256) atomic_kernel(const bf16_t* __restrict__ X, const int* __restrict__ lab,
                                                     float* __restrict__ sums, int* __restrict__ counts) {
	constexpr int TPR = D / VEC;     // threads per row: 128 / 64 / 32
	constexpr int RPP = 256 / TPR;   // rows per pass: 2 / 4 / 8
	constexpr int ITER = PTS / RPP;  // 64 / 32 / 16
	constexpr int U = 8;             // points in flight per thread
	static_assert(ITER % U == 0, "");
	const int t = threadIdx.x, cv = t % TPR, sub = t / TPR, b = blockIdx.y;
	const size_t p0 = (size_t)b * N + (size_t)blockIdx.x * PTS;  // global point index of the CTA's first point
	float* sb = sums + (size_t)b * K * D + cv * VEC;
	const bf16_t* xb = X + cv * VEC;
	for (int i0 = 0; i0 < ITER; i0 += U) {
		int l[U];
		uint2 v[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			const size_t p = p0 + sub + (size_t)(i0 + u) * RPP;
			l[u] = __ldg(lab + p);
			if constexpr (VEC == 4) v[u] = __ldg((const uint2*)(xb + p * D));
			else if constexpr (VEC == 2) v[u].x = __ldg((const unsigned int*)(xb + p * D));
			else v[u].x = __ldg((const unsigned short*)(xb + p * D));
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			float* a = sb + (size_t)l[u] * D;
			if constexpr (VEC == 4) red_v4(a, bf_lo(v[u].x), bf_hi(v[u].x), bf_lo(v[u].y), bf_hi(v[u].y));
			else if constexpr (VEC == 2) red_v2(a, bf_lo(v[u].x), bf_hi(v[u].x));
			else red_f32(a, bf_1(v[u].x));
		}
	}
	if (t < PTS) red_s32(counts + (size_t)b * K + __ldg(lab + p0 + t), 1);
}

// ---------------------------------------------------------------- D: shared-memory privatisation
constexpr int SP_LD = 33;                                     // padded row length (floats)
constexpr int SP_SMEM = K * SP_LD * 4 + K * 4;                // 139264 B
constexpr int SP_U = 16;                                      // points loaded before their atomics
__global__ void __launch_bounds__(1024, 1) smem_priv_kernel(const bf16_t* __restrict__ X, const int* __restrict__ lab,
                                                            float* __restrict__ sums, int* __restrict__ counts, int S) {
	extern __shared__ float sm[];
	int* sc = (int*)(sm + K * SP_LD);
	const int q = blockIdx.x, s = blockIdx.y, b = blockIdx.z, t = threadIdx.x, lane = t & 31, w = t >> 5;
	for (int i = t; i < K * SP_LD; i += 1024) sm[i] = 0.f;
	for (int i = t; i < K; i += 1024) sc[i] = 0;
	__syncthreads();
	const int ppc = N / S, groups = ppc / 32;
	const size_t base = (size_t)b * N + (size_t)s * ppc;
	const bf16_t* xb = X + base * D + 32 * q + lane;
	const int* lb = lab + base;
	for (int g = w; g < groups; g += 32) {
		const int my = __ldg(lb + g * 32 + lane);
		if (q == 0) atomicAdd(&sc[my], 1);  // native ATOMS.ADD (i32)
#pragma unroll
		for (int h = 0; h < 32; h += SP_U) {
			unsigned short v[SP_U];
			int k[SP_U];  // shuffles hoisted out of the CAS loops (which make the warp divergent)
#pragma unroll
			for (int i = 0; i < SP_U; i++) {
				v[i] = __ldg((const unsigned short*)(xb + (size_t)(g * 32 + h + i) * D));
				k[i] = __shfl_sync(FULL, my, h + i);
			}
#pragma unroll
			for (int i = 0; i < SP_U; i++) atomicAdd(&sm[k[i] * SP_LD + lane], bf_1(v[i]));
		}
	}
	__syncthreads();
	float* sb = sums + (size_t)b * K * D + 32 * q;
	for (int i = t; i < K * 32; i += 1024) {
		const int k = i >> 5, c = i & 31;
		const float v = sm[k * SP_LD + c];
		if (S == 1) sb[(size_t)k * D + c] = v;
		else red_f32(sb + (size_t)k * D + c, v);
	}
	if (q == 0)
		for (int k = t; k < K; k += 1024) {
			if (S == 1) counts[(size_t)b * K + k] = sc[k];
			else if (sc[k]) red_s32(counts + (size_t)b * K + k, sc[k]);
		}
}

// ---------------------------------------------------------------- E: counting sort + segmented sum
constexpr int HCH = 4096;  // points per histogram CTA
__global__ void __launch_bounds__(256) hist_kernel(const int* __restrict__ lab, int* __restrict__ counts) {
	__shared__ int h[K];
	const int t = threadIdx.x, b = blockIdx.y;
	for (int i = t; i < K; i += 256) h[i] = 0;
	__syncthreads();
	const int* lb = lab + (size_t)b * N + (size_t)blockIdx.x * HCH;
	for (int i = t; i < HCH; i += 256) atomicAdd(&h[__ldg(lb + i)], 1);
	__syncthreads();
	for (int i = t; i < K; i += 256)
		if (h[i]) atomicAdd(&counts[(size_t)b * K + i], h[i]);
}

__global__ void __launch_bounds__(1024) scan_kernel(const int* __restrict__ counts, int* __restrict__ off,
                                                    int* __restrict__ cur) {
	__shared__ int ws[32];
	const int b = blockIdx.x, t = threadIdx.x, lane = t & 31, w = t >> 5;
	const int v = counts[(size_t)b * K + t];
	int x = v;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const int y = __shfl_up_sync(FULL, x, o);
		if (lane >= o) x += y;
	}
	if (lane == 31) ws[w] = x;
	__syncthreads();
	if (w == 0) {
		int s = ws[lane];
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const int y = __shfl_up_sync(FULL, s, o);
			if (lane >= o) s += y;
		}
		ws[lane] = s;
	}
	__syncthreads();
	const int incl = x + (w ? ws[w - 1] : 0);
	off[(size_t)b * (K + 1) + t] = incl - v;
	cur[(size_t)b * K + t] = incl - v;
	if (t == K - 1) off[(size_t)b * (K + 1) + K] = incl;
}

__global__ void __launch_bounds__(256) fill_kernel(const int* __restrict__ lab, int* __restrict__ cur,
                                                   int* __restrict__ order) {
	const int b = blockIdx.y, p = blockIdx.x * 256 + threadIdx.x;
	const int l = __ldg(lab + (size_t)b * N + p);
	const int slot = atomicAdd(&cur[(size_t)b * K + l], 1);  // < N since counts sum to N
	order[(size_t)b * N + slot] = p;
}

__global__ void __launch_bounds__(256) segsum_kernel(const bf16_t* __restrict__ X, const int* __restrict__ order,
                                                     const int* __restrict__ off, float* __restrict__ sums) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, b = blockIdx.y, k = blockIdx.x * 8 + w;
	const int h = lane >> 4, c8 = (lane & 15) * 8;
	const int beg = off[(size_t)b * (K + 1) + k], end = off[(size_t)b * (K + 1) + k + 1];
	const bf16_t* xb = X + (size_t)b * N * D + c8;
	const int* ob = order + (size_t)b * N;
	float acc[8];
#pragma unroll
	for (int j = 0; j < 8; j++) acc[j] = 0.f;
	for (int base = beg; base < end; base += 32) {
		const int n = min(32, end - base);  // warp-uniform
		const int my = lane < n ? __ldg(ob + base + lane) : 0;
		for (int r = 0; r < n; r += 8) {
			uint4 v[4];
#pragma unroll
			for (int u = 0; u < 4; u++) {
				const int rr = r + 2 * u + h;  // <= 31
				const int idx = __shfl_sync(FULL, my, rr);
				v[u] = rr < n ? __ldg((const uint4*)(xb + (size_t)idx * D)) : make_uint4(0, 0, 0, 0);
			}
#pragma unroll
			for (int u = 0; u < 4; u++) {
				acc[0] += bf_lo(v[u].x); acc[1] += bf_hi(v[u].x);
				acc[2] += bf_lo(v[u].y); acc[3] += bf_hi(v[u].y);
				acc[4] += bf_lo(v[u].z); acc[5] += bf_hi(v[u].z);
				acc[6] += bf_lo(v[u].w); acc[7] += bf_hi(v[u].w);
			}
		}
	}
#pragma unroll
	for (int j = 0; j < 8; j++) acc[j] += __shfl_xor_sync(FULL, acc[j], 16);
	if (lane < 16) {
		float4* o = (float4*)(sums + ((size_t)b * K + k) * D + c8);
		o[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
		o[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
	}
}

// ---------------------------------------------------------------- host
static bf16_t* dX;
static int *dLab, *dCounts, *dOrder, *dOff, *dCur;
static float* dSums;
static cudaStream_t st;
static const size_t SUMS_BYTES = (size_t)B * K * D * sizeof(float), CNT_BYTES = (size_t)B * K * sizeof(int);

static void launch_check(const char* what) {
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		fprintf(stderr, "launch of %s failed: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
		exit(1);
	}
}

template <int VEC>
static void run_atomic(cudaEvent_t*) {
	CK(cudaMemsetAsync(dSums, 0, SUMS_BYTES, st));
	CK(cudaMemsetAsync(dCounts, 0, CNT_BYTES, st));
	atomic_kernel<VEC><<<dim3(N / PTS, B), 256, 0, st>>>(dX, dLab, dSums, dCounts);
	launch_check("atomic_kernel");
}

template <int S>
static void run_smem(cudaEvent_t*) {
	static_assert(N % (S * 32) == 0, "");
	if (S > 1) {
		CK(cudaMemsetAsync(dSums, 0, SUMS_BYTES, st));
		CK(cudaMemsetAsync(dCounts, 0, CNT_BYTES, st));
	}
	smem_priv_kernel<<<dim3(D / 32, S, B), 1024, SP_SMEM, st>>>(dX, dLab, dSums, dCounts, S);
	launch_check("smem_priv_kernel");
}

// mid: if non-null, 3 events recorded between the 4 steps
static void run_sorted(cudaEvent_t* mid) {
	CK(cudaMemsetAsync(dCounts, 0, CNT_BYTES, st));
	hist_kernel<<<dim3(N / HCH, B), 256, 0, st>>>(dLab, dCounts);
	launch_check("hist_kernel");
	if (mid) CK(cudaEventRecord(mid[0], st));
	scan_kernel<<<B, K, 0, st>>>(dCounts, dOff, dCur);
	launch_check("scan_kernel");
	if (mid) CK(cudaEventRecord(mid[1], st));
	fill_kernel<<<dim3(N / 256, B), 256, 0, st>>>(dLab, dCur, dOrder);
	launch_check("fill_kernel");
	if (mid) CK(cudaEventRecord(mid[2], st));
	segsum_kernel<<<dim3(K / 8, B), 256, 0, st>>>(dX, dOrder, dOff, dSums);
	launch_check("segsum_kernel");
}

// CPU float64 reference for the checked batches
static const int CHECK_B[2] = {0, B - 1};
static std::vector<double> refSums[2];
static std::vector<int> refCnt[2];

static float bf2f(bf16_t h) {
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static void build_reference() {
	std::vector<bf16_t> hx((size_t)N * D);
	std::vector<int> hl(N);
	for (int c = 0; c < 2; c++) {
		const int b = CHECK_B[c];
		CK(cudaMemcpy(hx.data(), dX + (size_t)b * N * D, (size_t)N * D * sizeof(bf16_t), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hl.data(), dLab + (size_t)b * N, (size_t)N * sizeof(int), cudaMemcpyDeviceToHost));
		refSums[c].assign((size_t)K * D, 0.0);
		refCnt[c].assign(K, 0);
		int nz = 0;
		for (int p = 0; p < N; p++) {
			const int l = hl[p];
			if (l < 0 || l >= K) { fprintf(stderr, "bad label %d\n", l); exit(1); }
			refCnt[c][l]++;
			for (int d = 0; d < D; d++) {
				const float f = bf2f(hx[(size_t)p * D + d]);
				nz += f != 0.f;
				refSums[c][(size_t)l * D + d] += f;
			}
		}
		if (nz < N * D / 2) { fprintf(stderr, "generated data looks degenerate (%d nonzeros)\n", nz); exit(1); }
	}
}

static bool check(double* maxerr_out) {
	std::vector<float> hs((size_t)K * D);
	std::vector<int> hc(K);
	double maxerr = 0;
	long bad_cnt = 0, nonfinite = 0;
	for (int c = 0; c < 2; c++) {
		const int b = CHECK_B[c];
		CK(cudaMemcpy(hs.data(), dSums + (size_t)b * K * D, (size_t)K * D * sizeof(float), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hc.data(), dCounts + (size_t)b * K, (size_t)K * sizeof(int), cudaMemcpyDeviceToHost));
		for (int k = 0; k < K; k++) {
			if (hc[k] != refCnt[c][k]) bad_cnt++;
			for (int d = 0; d < D; d++) {
				const double g = hs[(size_t)k * D + d], r = refSums[c][(size_t)k * D + d];
				if (!std::isfinite(g)) { nonfinite++; continue; }
				const double den = fabs(r) + 1e-3 * refCnt[c][k];
				const double e = den > 0 ? fabs(g - r) / den : (g == 0 ? 0.0 : INFINITY);
				maxerr = std::max(maxerr, e);
			}
		}
	}
	*maxerr_out = maxerr;
	if (bad_cnt || nonfinite) printf("    check: %ld count mismatches, %ld non-finite sums\n", bad_cnt, nonfinite);
	return bad_cnt == 0 && nonfinite == 0 && maxerr < 1e-4;
}

struct Result { const char* name; float med, mn; bool ok; double err; };

static float median_of(std::vector<float> v) {
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static Result bench(const char* name, int nsteps, void (*run)(cudaEvent_t*)) {
	CK(cudaMemset(dSums, 0xFF, SUMS_BYTES));  // NaN
	CK(cudaMemset(dCounts, 0xFF, CNT_BYTES)); // -1
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < NWARM; i++) run(nullptr);
	CK(cudaStreamSynchronize(st));
	const int ne = nsteps + 1;
	std::vector<cudaEvent_t> ev((size_t)NREP * ne);
	for (auto& e : ev) CK(cudaEventCreate(&e));
	for (int r = 0; r < NREP; r++) {  // enqueued back to back: no host gaps inside the measurement
		cudaEvent_t* e = &ev[(size_t)r * ne];
		CK(cudaEventRecord(e[0], st));
		run(nsteps > 1 ? e + 1 : nullptr);
		CK(cudaEventRecord(e[nsteps], st));
	}
	CK(cudaStreamSynchronize(st));
	std::vector<float> tot(NREP);
	std::vector<std::vector<float>> step(nsteps, std::vector<float>(NREP));
	for (int r = 0; r < NREP; r++) {
		cudaEvent_t* e = &ev[(size_t)r * ne];
		CK(cudaEventElapsedTime(&tot[r], e[0], e[nsteps]));
		for (int s = 0; s < nsteps; s++) CK(cudaEventElapsedTime(&step[s][r], e[s], e[s + 1]));
	}
	for (auto& e : ev) CK(cudaEventDestroy(e));
	Result res;
	res.name = name;
	res.med = median_of(tot) * 1000.f;
	res.mn = *std::min_element(tot.begin(), tot.end()) * 1000.f;
	res.ok = check(&res.err);
	printf("%-14s median %8.1f us  min %8.1f us  %7.0f GB/s  maxrel %.2e  %s\n", name, res.med, res.mn,
	       (double)B * N * D * 2 / (res.med * 1e3), res.err, res.ok ? "ok" : "FAIL");
	if (nsteps > 1) {
		static const char* sn[4] = {"memset+hist", "scan", "fill", "segsum"};
		for (int s = 0; s < nsteps; s++)
			printf("    step %d %-12s median %8.1f us\n", s + 1, nsteps == 4 ? sn[s] : "", median_of(step[s]) * 1000.f);
	}
	fflush(stdout);
	return res;
}

int main() {
	int dev = 0;
	CK(cudaSetDevice(dev));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, dev));
	printf("device %s, cc %d.%d, %d SMs, L2 %d MB, smem/block optin %zu B\n", prop.name, prop.major, prop.minor,
	       prop.multiProcessorCount, prop.l2CacheSize >> 20, prop.sharedMemPerBlockOptin);
	if (prop.major != 9) { fprintf(stderr, "needs sm_90 (built for sm_90a)\n"); return 1; }
	if (prop.sharedMemPerBlockOptin < (size_t)SP_SMEM) { fprintf(stderr, "not enough shared memory\n"); return 1; }
	printf("shape B=%d N=%d D=%d K=%d, X = %.1f MB bf16\n", B, N, D, K, (double)B * N * D * 2 / 1e6);
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaMalloc(&dX, (size_t)B * N * D * sizeof(bf16_t)));
	CK(cudaMalloc(&dLab, (size_t)B * N * sizeof(int)));
	CK(cudaMalloc(&dSums, SUMS_BYTES));
	CK(cudaMalloc(&dCounts, CNT_BYTES));
	CK(cudaMalloc(&dOrder, (size_t)B * N * sizeof(int)));
	CK(cudaMalloc(&dOff, (size_t)B * (K + 1) * sizeof(int)));
	CK(cudaMalloc(&dCur, (size_t)B * K * sizeof(int)));
	CK(cudaFuncSetAttribute(smem_priv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SP_SMEM));

	gen_kernel<<<prop.multiProcessorCount * 8, 256, 0, st>>>(dX, dLab, 1234u);
	launch_check("gen_kernel");
	CK(cudaStreamSynchronize(st));
	build_reference();

	std::vector<Result> rs;
	rs.push_back(bench("atomic_v1", 1, run_atomic<1>));
	rs.push_back(bench("atomic_v2", 1, run_atomic<2>));
	rs.push_back(bench("atomic_v4", 1, run_atomic<4>));
	rs.push_back(bench("smem_priv_S1", 1, run_smem<1>));
	rs.push_back(bench("smem_priv_S2", 1, run_smem<2>));
	rs.push_back(bench("smem_priv_S4", 1, run_smem<4>));
	rs.push_back(bench("sorted", 4, run_sorted));

	printf("\n%-14s %10s %10s  %s\n", "variant", "median_us", "min_us", "check");
	for (auto& r : rs) printf("%-14s %10.1f %10.1f  %s\n", r.name, r.med, r.mn, r.ok ? "ok" : "FAIL");
	bool all = true;
	for (auto& r : rs) all = all && r.ok;
	CK(cudaDeviceSynchronize());
	return all ? 0 : 2;
}
