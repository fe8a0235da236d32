/*
 * sm90_prelude.c — the PTX helper library at the top of an sm_90a kernel.
 *
 * The CUDA text lower_sm90 produces must compile under NVRTC with no
 * #include, so every type and every PTX instruction wrapper the kernel body
 * calls is written out in front of it. This file writes that library; the
 * kernel body itself (and the decision which helpers it needs, recorded in
 * the Em need_* flags while the body is emitted) stays in sm90.c.
 *
 * What is written, in this order (the order is part of the golden output):
 *
 *   prelude    always: the u32 / u64 / bf16_t / f16_t typedefs, the
 *              128-byte CUtensorMap, and one small wrapper per fixed PTX
 *              instruction (lane_id from %laneid, mbarrier init / arrive /
 *              expect_tx / try_wait loop, fences, named barriers, setmaxnreg, wgmma fence /
 *              commit / wait and smem descriptors, 16-bit float packing and
 *              rounding);
 *   TMA        one tma_load_<R>d per tensor rank R the kernel loads
 *              (cp.async.bulk.tensor, completes on an mbarrier), one
 *              tma_store_<R>d per rank it stores (into a bulk group) and then
 *              bulk_commit / bulk_wait_read<N> (commit_group, wait_group.read);
 *   wgmma      one mma_async wrapper per (A/B dtype, N, A in registers?,
 *              B N-major?) combination used, with the operand list
 *              generated for exactly that N (N/2 f32 accumulators), and
 *              its _z twin, whose accumulators are outputs only ("=f"):
 *              the first K step of an overwrite in a loop calls it;
 *   red        red_add_* for atomic_add without a result;
 *   gmem       the ld/st.global helpers of sm90_vec.c (sm90_vec_helpers);
 *   hang_note  the --debug-hang flight recorder, only when asked for.
 *
 * Every block sits behind its own #ifndef guard (CAKE_SM90_PRELUDE,
 * CAKE_TMA_LOAD_<R>D, CAKE_TMA_STORE_<R>D, CAKE_BULK_GROUP, CAKE_WGMMA_..., CAKE_RED_ADD, CAKE_SM90_GMEM,
 * CAKE_HANG_NOTE), so kernels can share one translation unit without
 * duplicate definitions. Nothing here looks at the kernel itself: the
 * functions are pure text generators over their parameters, and
 * sm90_prelude_emit is the only entry point (sm90_int.h).
 */
#include "sm90_int.h"

#include <stdio.h>

static void emit_prelude(StrBuf *o)
{
	sb_puts(o,
	        "#ifndef CAKE_SM90_PRELUDE   /* shared by every kernel of one translation unit */\n"
	        "#define CAKE_SM90_PRELUDE\n"
	        "typedef unsigned int u32;\n"
	        "typedef unsigned long long u64;\n"
	        "typedef unsigned short bf16_t;   /* bf16 bits */\n"
	        "typedef unsigned short f16_t;    /* f16 bits */\n"
	        "\n"
	        "/* The 128-byte TMA descriptor, passed by value as a __grid_constant__ parameter. */\n"
	        "struct __align__(64) CUtensorMap { u64 opaque[16]; };\n"
	        "\n"
	        "__device__ __forceinline__ u32 smem_u32(const void *p)\n"
	        "{\n"
	        "\treturn (u32)__cvta_generic_to_shared(p);\n"
	        "}\n"
	        "\n"
	        "/* The lane, read from %laneid by a volatile asm: the compiler cannot hoist it, nor the\n"
	        " * per-statement address arithmetic built on it, out of a loop, where those values\n"
	        " * would hold registers across every iteration (recomputing them is a few integer ops). */\n"
	        "__device__ __forceinline__ u32 lane_id(void)\n"
	        "{\n"
	        "\tu32 l;\n"
	        "\tasm volatile(\"mov.u32 %0, %%laneid;\\n\" : \"=r\"(l));\n"
	        "\treturn l;\n"
	        "}\n"
	        "\n"
	        "/* ---- mbarrier ---- */\n"
	        "__device__ __forceinline__ void mbar_init(u32 bar, u32 count)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(bar), \"r\"(count) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* Make barrier initialisation visible to the other threads and the async (TMA) proxy. */\n"
	        "__device__ __forceinline__ void fence_mbarrier_init(void)\n"
	        "{\n"
	        "\tasm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void fence_proxy_async(void)\n"
	        "{\n"
	        "\tasm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* One arrival that also raises the phase's expected transaction bytes. */\n"
	        "__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void mbar_arrive(u32 bar)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(bar) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* `count` arrivals at once (one elected thread arriving for several warpgroups). */\n"
	        "__device__ __forceinline__ void mbar_arrive_cnt(u32 bar, u32 count)\n"
	        "{\n"
	        "\tasm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(bar), \"r\"(count) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* Spin until the phase with the given parity has completed. */\n"
	        "__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)\n"
	        "{\n"
	        "\tasm volatile(\n"
	        "\t\t\"{\\n\"\n"
	        "\t\t\".reg .pred done;\\n\"\n"
	        "\t\t\"WAIT_%=:\\n\"\n"
	        "\t\t\"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n\"\n"
	        "\t\t\"@!done bra WAIT_%=;\\n\"\n"
	        "\t\t\"}\\n\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- named barriers, register budget ---- */\n"
	        "__device__ __forceinline__ void named_bar_sync(u32 id, u32 nthreads)\n"
	        "{\n"
	        "\tasm volatile(\"bar.sync %0, %1;\\n\" :: \"r\"(id), \"r\"(nthreads) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "template <int R>\n"
	        "__device__ __forceinline__ void setmaxnreg_inc(void)\n"
	        "{\n"
	        "\tasm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\\n\" :: \"n\"(R));\n"
	        "}\n"
	        "\n"
	        "template <int R>\n"
	        "__device__ __forceinline__ void setmaxnreg_dec(void)\n"
	        "{\n"
	        "\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\\n\" :: \"n\"(R));\n"
	        "}\n"
	        "\n"
	        "/* ---- TMA ---- */\n"
	        "__device__ __forceinline__ void tma_prefetch(const CUtensorMap *map)\n"
	        "{\n"
	        "\tasm volatile(\"prefetch.tensormap [%0];\\n\" :: \"l\"((u64)map) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- wgmma ---- */\n"
	        "/* Shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading byte\n"
	        " * offset >> 4 (16-29), stride byte offset >> 4 (32-45), layout (62-63: 1 = 128B,\n"
	        " * 2 = 64B, 3 = 32B swizzle). Buffers are aligned to the swizzle pattern, so the\n"
	        " * base-offset field (49-51) stays 0. */\n"
	        "__device__ __forceinline__ u64 wgmma_desc(u32 saddr, u32 lbo, u32 sbo, u32 layout)\n"
	        "{\n"
	        "\treturn (u64)((saddr & 0x3FFFFu) >> 4) | ((u64)((lbo >> 4) & 0x3FFFu) << 16) |\n"
	        "\t       ((u64)((sbo >> 4) & 0x3FFFu) << 32) | ((u64)layout << 62);\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void wgmma_fence(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ void wgmma_commit(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "template <int N>\n"
	        "__device__ __forceinline__ void wgmma_wait(void)\n"
	        "{\n"
	        "\tasm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* ---- conversions ---- */\n"
	        "/* Two floats -> packed bf16x2 (lo in the low half), round to nearest even. */\n"
	        "__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi)\n"
	        "{\n"
	        "\tu32 r;\n"
	        "\tasm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\\n\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
	        "\treturn r;\n"
	        "}\n"
	        "\n"
	        "/* 16-bit float fragments live in f32 registers holding exactly representable values. */\n"
	        "__device__ __forceinline__ float round_bf16(float x)\n"
	        "{\n"
	        "\tunsigned short h;\n"
	        "\tasm(\"cvt.rn.bf16.f32 %0, %1;\\n\" : \"=h\"(h) : \"f\"(x));\n"
	        "\treturn __uint_as_float((u32)h << 16);\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ float round_f16(float x)\n"
	        "{\n"
	        "\tunsigned short h;\n"
	        "\tfloat r;\n"
	        "\tasm(\"cvt.rn.f16.f32 %0, %1;\\n\" : \"=h\"(h) : \"f\"(x));\n"
	        "\tasm(\"cvt.f32.f16 %0, %1;\\n\" : \"=f\"(r) : \"h\"(h));\n"
	        "\treturn r;\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ bf16_t bf16_bits(float x)\n"
	        "{\n"
	        "\tunsigned short h;\n"
	        "\tasm(\"cvt.rn.bf16.f32 %0, %1;\\n\" : \"=h\"(h) : \"f\"(x));\n"
	        "\treturn h;\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ f16_t f16_bits(float x)\n"
	        "{\n"
	        "\tunsigned short h;\n"
	        "\tasm(\"cvt.rn.f16.f32 %0, %1;\\n\" : \"=h\"(h) : \"f\"(x));\n"
	        "\treturn h;\n"
	        "}\n"
	        "\n"
	        "/* exp(x) for Cake's exp, sigmoid, silu and softplus: the hardware's 2^x of x log2(e), results\n"
	        "   below 2^-126 flushed to 0 (ex2.approx.ftz: one FMUL and one MUFU, without __expf's fix-ups\n"
	        "   for subnormal results). */\n"
	        "__device__ __forceinline__ float cake_exp(float x)\n"
	        "{\n"
	        "\tfloat y;\n"
	        "\tasm(\"ex2.approx.ftz.f32 %0, %1;\\n\" : \"=f\"(y) : \"f\"(x * 1.4426950408889634f));\n"
	        "\treturn y;\n"
	        "}\n"
	        "\n"
	        "/* Two packed 16-bit floats -> f32 (lo = low half). */\n"
	        "__device__ __forceinline__ float bf16lo_f32(u32 v) { return __uint_as_float(v << 16); }\n"
	        "__device__ __forceinline__ float bf16hi_f32(u32 v) { return __uint_as_float(v & 0xFFFF0000u); }\n"
	        "__device__ __forceinline__ float f16lo_f32(u32 v)\n"
	        "{\n"
	        "\tfloat r;\n"
	        "\tasm(\"cvt.f32.f16 %0, %1;\\n\" : \"=f\"(r) : \"h\"((unsigned short)(v & 0xFFFFu)));\n"
	        "\treturn r;\n"
	        "}\n"
	        "__device__ __forceinline__ float f16hi_f32(u32 v) { return f16lo_f32(v >> 16); }\n"
	        "\n"
	        "__device__ __forceinline__ u32 ld_shared_u32(u32 addr)\n"
	        "{\n"
	        "\tu32 v;\n"
	        "\tasm volatile(\"ld.shared.b32 %0, [%1];\\n\" : \"=r\"(v) : \"r\"(addr) : \"memory\");\n"
	        "\treturn v;\n"
	        "}\n"
	        "\n"
	        "__device__ __forceinline__ u32 pack_f16x2(float lo, float hi)\n"
	        "{\n"
	        "\tu32 r;\n"
	        "\tasm(\"cvt.rn.f16x2.f32 %0, %1, %2;\\n\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
	        "\treturn r;\n"
	        "}\n"
	        "#endif\n");
}

/* Reductions in global memory for atomic_add (no result): relaxed, gpu scope. */
static void emit_red_wrappers(StrBuf *o)
{
	sb_puts(o, "\n#ifndef CAKE_RED_ADD\n#define CAKE_RED_ADD\n"
	        "/* atomic_add without a result: relaxed, gpu-scope reductions in global memory. */\n"
	        "__device__ __forceinline__ void red_add_f32(float *p, float v)\n"
	        "{\n"
	        "\tasm volatile(\"red.global.add.f32 [%0], %1;\\n\" :: \"l\"(p), \"f\"(v) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void red_add_v2_f32(float *p, float a, float b)   /* p 8-byte aligned */\n"
	        "{\n"
	        "\tasm volatile(\"red.global.add.v2.f32 [%0], {%1, %2};\\n\" :: \"l\"(p), \"f\"(a), \"f\"(b) : \"memory\");\n"
	        "}\n"
	        "__device__ __forceinline__ void red_add_s32(int *p, int v)\n"
	        "{\n"
	        "\tasm volatile(\"red.global.add.s32 [%0], %1;\\n\" :: \"l\"(p), \"r\"(v) : \"memory\");\n"
	        "}\n"
	        "#endif\n");
}

static void emit_tma_wrapper(StrBuf *o, int rank)
{
	sb_printf(o, "\n#ifndef CAKE_TMA_LOAD_%dD\n#define CAKE_TMA_LOAD_%dD\n", rank, rank);
	sb_printf(o, "/* TMA load of one box of a rank-%d tensor into shared memory; completes on `bar`\n"
	             " * with the box's bytes as transactions. Coordinates innermost first. */\n", rank);
	sb_printf(o, "__device__ __forceinline__ void tma_load_%dd(u32 dst, const CUtensorMap *map, u32 bar", rank);
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", int c%d", i);
	sb_puts(o, ")\n{\n\tasm volatile(\n");
	sb_printf(o, "\t\t\"cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes\"\n", rank);
	sb_puts(o, "\t\t\" [%0], [%1, {");
	for (int i = 0; i < rank; i++)
		sb_printf(o, "%s%%%d", i ? ", " : "", 3 + i);
	sb_puts(o, "}], [%2];\\n\"\n\t\t:: \"r\"(dst), \"l\"((u64)map), \"r\"(bar)");
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", \"r\"(c%d)", i);
	sb_puts(o, " : \"memory\");\n}\n#endif\n");
}

/* TMA store of one box from shared memory into a rank-R tensor, into the issuing thread's bulk
 * group; the bulk-group commit and the wait for the group's reads, shared by every rank. */
static void emit_tma_store_wrapper(StrBuf *o, int rank)
{
	sb_printf(o, "\n#ifndef CAKE_TMA_STORE_%dD\n#define CAKE_TMA_STORE_%dD\n", rank, rank);
	sb_printf(o, "/* TMA store of one box of a rank-%d tensor from shared memory, into this thread's bulk\n"
	             " * group (bulk_commit closes it). Coordinates innermost first. */\n", rank);
	sb_printf(o, "__device__ __forceinline__ void tma_store_%dd(const CUtensorMap *map, u32 src", rank);
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", int c%d", i);
	sb_puts(o, ")\n{\n\tasm volatile(\n");
	sb_printf(o, "\t\t\"cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group\"\n", rank);
	sb_puts(o, "\t\t\" [%0, {");
	for (int i = 0; i < rank; i++)
		sb_printf(o, "%s%%%d", i ? ", " : "", 2 + i);
	sb_puts(o, "}], [%1];\\n\"\n\t\t:: \"l\"((u64)map), \"r\"(src)");
	for (int i = 0; i < rank; i++)
		sb_printf(o, ", \"r\"(c%d)", i);
	sb_puts(o, " : \"memory\");\n}\n#endif\n");
}

static void emit_bulk_group(StrBuf *o)
{
	sb_puts(o,
	        "\n#ifndef CAKE_BULK_GROUP\n#define CAKE_BULK_GROUP\n"
	        "/* Close this thread's bulk group of TMA stores. */\n"
	        "__device__ __forceinline__ void bulk_commit(void)\n"
	        "{\n"
	        "\tasm volatile(\"cp.async.bulk.commit_group;\\n\" ::: \"memory\");\n"
	        "}\n"
	        "\n"
	        "/* Wait until at most N of this thread's bulk groups still read their shared-memory source. */\n"
	        "template <int N> __device__ __forceinline__ void bulk_wait_read(void)\n"
	        "{\n"
	        "\tasm volatile(\"cp.async.bulk.wait_group.read %0;\\n\" :: \"n\"(N) : \"memory\");\n"
	        "}\n"
	        "#endif\n");
}

/* wgmma.mma_async m64nNk16, f32 accumulators d[0 .. N/2), scale_d = 0 overwrites,
 * 1 accumulates. A from shared memory (descriptor; K-major, or M-major with trans-a = 1)
 * or registers (4 x b32 of packed 16-bit pairs); B from shared memory, K-major or N-major
 * (trans-b = 1). With neg (`acc -= a @ b`, the _n wrappers) imm-scale-a is -1: the
 * instruction subtracts the product. */
static void emit_wgmma_wrapper(StrBuf *o, int n, bool f16, bool areg, bool tnspb, bool tnspa, bool neg)
{
	const char *ab = f16 ? "f16" : "bf16";
	const char *suffix0 = areg ? (tnspb ? "_rs_tb" : "_rs") : tnspa ? (tnspb ? "_ta_tb" : "_ta") : (tnspb ? "_tb" : "");
	char suffix[16];
	snprintf(suffix, sizeof suffix, "%s%s", suffix0, neg ? "_n" : "");
	const int sca = neg ? -1 : 1;
	int nd = n / 2;
	int na = areg ? 4 : 1;                 /* A operands */
	int ib = nd + na, isc = ib + 1;        /* operand numbers of descB and scale_d */
	char guard[64];
	snprintf(guard, sizeof guard, "CAKE_WGMMA_M64N%dK16_%s%s%s", n, f16 ? "F16" : "BF16",
	         areg ? (tnspb ? "_RS_TB" : "_RS") : tnspa ? (tnspb ? "_TA_TB" : "_TA") : (tnspb ? "_TB" : ""), neg ? "_N" : "");
	sb_printf(o, "\n#ifndef %s\n#define %s\n", guard, guard);
	for (int z = 0; z < 2; z++) {   /* the wrapper, then its _z twin for the first K step of an overwrite */
		if (z)
			sb_printf(o, "/* The same for scale_d = 0 (pass 0): d is written only (\"=f\"), so its old value is not an input. */\n");
		else
			sb_printf(o, "/* D[64 x %d] (f32, %d registers per thread) %s= A[64 x 16] * B[16 x %d], %s; A %s, B %s. */\n", n, nd, neg ? "(-)" : "(+)", n, ab,
			          areg ? "in registers" : tnspa ? "M-major in shared memory" : "K-major in shared memory",
			          tnspb ? "N-major in shared memory" : "K-major in shared memory");
		if (areg)
			sb_printf(o, "__device__ __forceinline__ void wgmma_m64n%dk16_%s%s%s(float *d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db, int scale_d)\n{\n", n, ab, suffix,
			          z ? "_z" : "");
		else
			sb_printf(o, "__device__ __forceinline__ void wgmma_m64n%dk16_%s%s%s(float *d, u64 da, u64 db, int scale_d)\n{\n", n, ab, suffix, z ? "_z" : "");
		sb_puts(o, "\tasm volatile(\n");
		sb_printf(o, "\t\t\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", isc);
		sb_printf(o, "\t\t\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s \"\n\t\t\"{", n, ab, ab);
		for (int i = 0; i < nd; i++) {
			sb_printf(o, "%s%%%d", i ? ", " : "", i);
			if (i % 16 == 15 && i + 1 < nd)
				sb_puts(o, "\"\n\t\t\"");
		}
		if (areg)
			sb_printf(o, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, %d, 1, %d;\\n}\\n\"\n\t\t: ", nd, nd + 1, nd + 2, nd + 3, ib, sca, tnspb ? 1 : 0);
		else
			sb_printf(o, "}, %%%d, %%%d, p, %d, 1, %d, %d;\\n}\\n\"\n\t\t: ", nd, ib, sca, tnspa ? 1 : 0, tnspb ? 1 : 0);
		for (int i = 0; i < nd; i++) {
			sb_printf(o, "%s\"%sf\"(d[%d])", i ? ", " : "", z ? "=" : "+", i);
			if (i % 8 == 7 && i + 1 < nd)
				sb_puts(o, "\n\t\t  ");
		}
		if (areg)
			sb_puts(o, "\n\t\t: \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(db), \"r\"(scale_d));\n}\n");
		else
			sb_puts(o, "\n\t\t: \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}\n");
	}
	sb_puts(o, "#endif\n");
}

static void emit_debug_helper(StrBuf *o)
{
	sb_puts(o,
	        "\n#ifndef CAKE_HANG_NOTE\n#define CAKE_HANG_NOTE\n"
	        "/* --debug-hang flight recorder: one 64-byte record per warpgroup per CTA in\n"
	        " * host-mapped memory (layout = CakeHangRecord in src/lower/lower.h). */\n"
	        "struct CakeHangRecord { u32 magic, role, barrier, stage, phase, iter, state, line, tile, seq, reserved[6]; };\n"
	        "\n"
	        "__device__ __forceinline__ void hang_note(CakeHangRecord *dbg, u32 slots, u32 role, u32 bar, u32 stage,\n"
	        "                                          u32 phase, u32 iter, u32 state, u32 line, u32 tile)\n"
	        "{\n"
	        "\tu32 cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
	        "\tvolatile u32 *r = (volatile u32 *)(dbg + (u64)cta * slots + threadIdx.x / 128u);\n"
	        "\tr[1] = role;\n"
	        "\tr[2] = bar;\n"
	        "\tr[3] = stage;\n"
	        "\tr[4] = phase;\n"
	        "\tr[5] = iter;\n"
	        "\tr[6] = state;\n"
	        "\tr[7] = line;\n"
	        "\tr[8] = tile;\n"
	        "\tr[9] = r[9] + 1u;\n"
	        "\tr[0] = 0xCA4E0001u;\n"
	        "\t__threadfence_system();\n"
	        "}\n"
	        "#endif\n");
}

/* ---- entry point (sm90_int.h) ---- */

void sm90_prelude_emit(StrBuf *o, const Em *e, bool debug_hang)
{
	emit_prelude(o);
	bool stores = false;
	for (int r = 1; r <= 5; r++) {
		if (e->need_rank[r])
			emit_tma_wrapper(o, r);
		if (e->need_store_rank[r])
			emit_tma_store_wrapper(o, r);
		stores |= e->need_store_rank[r];
	}
	if (stores)
		emit_bulk_group(o);
	for (int f = 0; f < 2; f++)
		for (int n = 1; n <= 32; n++)
			for (int v = 0; v < 16; v++)   /* bit 0: B N-major, 1: A in registers, 2: A M-major, 3: A negated */
				if (e->need_w[f][n] & (1u << v))
					emit_wgmma_wrapper(o, n * 8, f, v & 2, v & 1, v & 4, v & 8);
	if (e->need_red)
		emit_red_wrappers(o);
	if (e->need_gmem)
		sm90_vec_helpers(o);
	if (debug_hang)
		emit_debug_helper(o);
}
