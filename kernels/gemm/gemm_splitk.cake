# gemm_splitk — C = A · Bᵀ, bf16 in/out, for few output tiles and a long K: the K loop of every
# 128x128 tile is cut into S slices, one CTA each (grid (N / 128, M / 128, S)), so a shape with
# 16 tiles still fills an H200's 132 SMs. Each CTA runs the schedule of gemm_ws_128x128_s5 (one
# TMA producer warpgroup, two wgmma consumer warpgroups of 64 rows, a 5-stage ring) over its
# slice of K and stores its f32 partial tile into P [S, M, N], no atomics; gemm_splitk_reduce
# then sums the S partials of each element in a fixed order and writes C in bf16. S is a dim of
# the shape: the library chooses it (src/lib/rt/gemm_dispatch.inc, gemm_splits) and passes a
# workspace of S·M·N·4 bytes for P.
# Shape domain: M % 128 == 0, N % 128 == 0, K % 64 == 0, at least 8 K steps of 64 per slice.
kernel gemm_bf16_splitk target sm_90a
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param P: global f32[S, M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 512, S >= 1, K >= 512 * S
  grid (N / 128, M / 128, S) as (bn, bm, ks)
  role load warps 0..3 regs 56
  role mma  warps 4..11 regs 224
  pipeline ab stages 5
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in ks * (K / 64) / S .. (ks + 1) * (K / 64) / S pipelined ab unroll 1 {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in ks * (K / 64) / S .. (ks + 1) * (K / 64) / S pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store P[ks, bm * 128 +: 128, bn * 128 +: 128] <- acc
  }
}

# gemm_splitk_reduce — C [M, N] bf16 = the sum over s of P [s, M, N] f32, in the order s = 0, 1, ...:
# one warp per 128-column segment of a row, 4 columns per lane.
kernel gemm_splitk_reduce target sm_90a
  param P: global f32[S, M, N]
  param C: global bf16[M, N]
  domain N % 128 == 0, S >= 1
  grid (N / 128, M) as (bn, m)
  role work warps 0..0
  frag x:   f32[128] in work
  frag acc: f32[128] in work
{
  in work {
    acc = 0.0
    for s in 0 .. S {
      load x <- P[s, m, bn * 128 +: 128]
      acc = acc + x
    }
    store C[m, bn * 128 +: 128] <- bf16(acc)
  }
}
