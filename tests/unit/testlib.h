/*
 * testlib.h — source text shared by the unit tests (header-only, no code).
 *
 * The contract GEMM of docs/LANGUAGE.md §10.1 is written here once, as string
 * literal pieces, so that each test file builds exactly the bytes it always
 * used (line numbers, columns and byte offsets are asserted on):
 *
 *   TL_GEMM_DECLS(NOTE)  every declaration line after the `kernel` header;
 *                        NOTE is appended to the `role mma` line ("" for none)
 *   TL_GEMM_BODY_HEAD    "{" through `wgmma_wait 0` inside the mma loop
 *   TL_GEMM_BODY_TAIL    the end of the mma loop, the store and the closing braces
 *   TL_GEMM_SRC(NOTE)    the whole kernel gemm_bf16: header, DECLS(NOTE),
 *                        BODY_HEAD, `arrive empty`, BODY_TAIL
 *
 * In TL_GEMM_SRC("") `wait empty` is on line 18 and `wait full` on line 26.
 * A variant (another name, another release) is spelled as
 *   "kernel NAME target sm_90a\n" TL_GEMM_DECLS("") TL_GEMM_BODY_HEAD "...\n" TL_GEMM_BODY_TAIL
 */
#ifndef CAKE_TESTLIB_H
#define CAKE_TESTLIB_H

#define TL_GEMM_DECLS(NOTE) \
	"  param A: global bf16[M, K]\n" \
	"  param B: global bf16[N, K]\n" \
	"  param C: global bf16[M, N]\n" \
	"  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64\n" \
	"  grid (N / 256, M / 128) as (bn, bm)\n" \
	"  role load warps 0..3 regs 40\n" \
	"  role mma  warps 4..11 regs 232" NOTE "\n" \
	"  pipeline ab stages 4\n" \
	"  smem a: bf16[128, 64] swizzle 128B ring ab\n" \
	"  smem b: bf16[256, 64] swizzle 128B ring ab\n" \
	"  barrier full  ring ab producers load consumers mma  arrivals 1\n" \
	"  barrier empty ring ab producers mma  consumers load arrivals 2\n" \
	"  frag acc: f32[128, 256] in mma split m\n"

#define TL_GEMM_BODY_HEAD \
	"{\n" \
	"  in load {\n" \
	"    for k in 0 .. K / 64 pipelined ab {\n" \
	"      wait empty\n" \
	"      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full\n" \
	"      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full\n" \
	"    }\n" \
	"  }\n" \
	"  in mma {\n" \
	"    acc = 0\n" \
	"    for k in 0 .. K / 64 pipelined ab {\n" \
	"      wait full\n" \
	"      wgmma acc += a @ b^T\n" \
	"      wgmma_wait 0\n"

#define TL_GEMM_BODY_TAIL \
	"    }\n" \
	"    store C[bm * 128 +: 128, bn * 256 +: 256] <- bf16(acc)\n" \
	"  }\n" \
	"}\n"

#define TL_GEMM_SRC(NOTE) \
	"kernel gemm_bf16 target sm_90a\n" \
	TL_GEMM_DECLS(NOTE) \
	TL_GEMM_BODY_HEAD \
	"      arrive empty\n" \
	TL_GEMM_BODY_TAIL

#endif
