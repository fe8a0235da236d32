# gemm_tma — the GEMM library's tiles with the epilogue through shared memory: C = A · Bᵀ, bf16
# in/out, f32 accumulation, A [M, K] and B [N, K] K-major (the layout of kernels/gemm/README.md).
#
# Every kernel here is one of the library's tile shapes (docs/LIBRARY.md) with the same main loop
# as its direct-store twin (gemm_persistent.cake, gemm_ws_*.cake): one TMA producer warpgroup
# feeds a ring of A and B tiles, the wgmma consumer warpgroups (64 rows each, `split m`) take
# them. What differs is the epilogue. The direct kernels store the accumulator to C from
# registers: 4-byte stores in the accumulator layout, each warp instruction half-filling eight
# 32-byte sectors, issued by the same warps that must then start the next tile's products. Here
# the consumers write the tile once, as bf16, into `cs` (128B-swizzled, so the eight rows a warp
# writes at once land in eight different banks), publish it to the async proxy (fence + the
# role's named barrier), and one thread hands it to the TMA unit, one box per 64-column panel
# (`tma C[...] <- cs[:, c +: 64]`, LANGUAGE.md §5.4). The stores run while the consumers go on:
# in the persistent kernels the producer has already filled the ring for the next tile, so the
# epilogue of one tile overlaps the main loop of the next. The compiler derives the rest
# (LOWERING.md, "TMA stores"): the bulk-group commit, the wait that keeps `cs` from being
# rewritten before the previous tile's stores have read it, and the wait before the CTA exits.
#
# The staging buffer costs shared memory, so each kernel has one ring stage fewer than its
# direct twin where the twin used it all (128x256: 3 stages + 64 KiB; 128x192: 4 + 48 KiB).
# On an H200 (bench/RESULTS.md, session 11 call 2, `cake run --time`, cuBLAS in the same call)
# the persistent 128x256 kernel ran 8192x3072x768 in 59.7 us against 84.6 for the direct
# persistent kernel (cuBLAS 59.8), 4096x8192x2048 in 181.2 against 211.7 (cuBLAS 182.4) and
# 8192^3 in 1369 against 1463 (cuBLAS 1408).
#
# Shape domains: the tile divides M and N (128x192: N % 8 == 0, the last tile clipped), K % 64 == 0,
# K >= 64 (each kernel's `domain` line).

# 128x256 tiles, persistent (one CTA per SM walks the tiles, grouped raster of 16 row blocks so
# the CTAs in flight share A and B in L2), a 3-stage ring (48 KiB per stage) + 64 KiB of cs.
kernel gemm_bf16_tma_p128x256 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 256, M / 128) as (bn, bm) group 16
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 3
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  smem cs: bf16[128, 256] swizzle 128B     # the epilogue's staging tile, 4 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 256 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 64 +: 64] <- cs[:, 64 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 128 +: 64] <- cs[:, 128 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 192 +: 64] <- cs[:, 192 +: 64]
  }
}

# 128x256 tiles, one CTA per tile (for at most one wave of tiles), the same ring and cs.
kernel gemm_bf16_tma_128x256 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 256 == 0, K % 64 == 0, K >= 64
  grid (N / 256, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 3
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[256, 64] swizzle 128B ring ab
  smem cs: bf16[128, 256] swizzle 128B     # the epilogue's staging tile, 4 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 256] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 256 +: 256, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 256 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 64 +: 64] <- cs[:, 64 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 128 +: 64] <- cs[:, 128 +: 64]
    tma C[bm * 128 +: 128, bn * 256 + 192 +: 64] <- cs[:, 192 +: 64]
  }
}

# 128x128 tiles, persistent, grouped raster of 8, a 5-stage ring (32 KiB per stage) + 32 KiB of cs.
kernel gemm_bf16_tma_p128x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 128, M / 128) as (bn, bm) group 8
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 5
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  smem cs: bf16[128, 128] swizzle 128B     # the epilogue's staging tile, 2 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 128 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 128 + 64 +: 64] <- cs[:, 64 +: 64]
  }
}

# 128x160 tiles, persistent (N = 5120: 1024x5120 is 256 of them, 1.94 waves on 132 SMs, where
# 128x256 tiles make 160, 1.21 waves), grouped raster of 8, a 4-stage ring (36 KiB per stage) +
# 40 KiB of cs. 160 columns are five 32-column panels, so cs has the 64B swizzle (a panel row is
# 64 bytes) and the tile leaves in five TMA stores.
kernel gemm_bf16_tma_p128x160 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 160 == 0, K % 64 == 0, K >= 64
  grid persistent (N / 160, M / 128) as (bn, bm) group 8
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[160, 64] swizzle 128B ring ab
  smem cs: bf16[128, 160] swizzle 64B      # the epilogue's staging tile, 5 panels of 32 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 160] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 160 +: 160, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 160 +: 32] <- cs[:, 0 +: 32]
    tma C[bm * 128 +: 128, bn * 160 + 32 +: 32] <- cs[:, 32 +: 32]
    tma C[bm * 128 +: 128, bn * 160 + 64 +: 32] <- cs[:, 64 +: 32]
    tma C[bm * 128 +: 128, bn * 160 + 96 +: 32] <- cs[:, 96 +: 32]
    tma C[bm * 128 +: 128, bn * 160 + 128 +: 32] <- cs[:, 128 +: 32]
  }
}

# 128x192 tiles (N = 768: 4096x768 is 128 of them where 128x256 tiles make 96), one CTA per
# tile, a 4-stage ring (40 KiB per stage) + 48 KiB of cs. N need not be a multiple of 192: the
# last column of CTAs reads B and writes C through clipped boxes (`clip`, LANGUAGE.md §5.4), so
# TMA fills the rows of B past N with zeros (their columns of the product are zero) and drops
# the columns of C past N. At M = 256, N = 11008 that is 58 columns of CTAs, 116 CTAs on the
# 132 SMs, where 128x256 tiles make 86 (bench/RESULTS.md, session 12).
kernel gemm_bf16_tma_128x192 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 8 == 0, K % 64 == 0, K >= 64
  grid ((N + 191) / 192, M / 128) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..11 regs 232
  pipeline ab stages 4
  smem a: bf16[128, 64] swizzle 128B ring ab
  smem b: bf16[192, 64] swizzle 128B ring ab
  smem cs: bf16[128, 192] swizzle 128B     # the epilogue's staging tile, 3 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 2
  frag acc: f32[128, 192] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      tma b <- B[bn * 192 +: 192, k * 64 +: 64] clip signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 128 +: 128, bn * 192 +: 64] clip <- cs[:, 0 +: 64]
    tma C[bm * 128 +: 128, bn * 192 + 64 +: 64] clip <- cs[:, 64 +: 64]
    tma C[bm * 128 +: 128, bn * 192 + 128 +: 64] clip <- cs[:, 128 +: 64]
  }
}

# 64x128 tiles for small M: one consumer warpgroup, an 8-stage ring (24 KiB per stage) + 16 KiB of cs.
kernel gemm_bf16_tma_64x128 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 128 == 0, K % 64 == 0, K >= 64
  grid (N / 128, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 8
  smem a: bf16[64, 64] swizzle 128B ring ab
  smem b: bf16[128, 64] swizzle 128B ring ab
  smem cs: bf16[64, 128] swizzle 128B     # the epilogue's staging tile, 2 panels of 64 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 128] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 64 +: 64, bn * 128 +: 64] <- cs[:, 0 +: 64]
    tma C[bm * 64 +: 64, bn * 128 + 64 +: 64] <- cs[:, 64 +: 64]
  }
}

# 64x96 tiles for small M where N is a multiple of 96 but 64x128 tiles leave SMs idle: 256x3072
# is 128 of them where 64x128 tiles make 96 (16.8 us at 256x3072x3072 against 17.8 for
# the 64x128 kernel, session 12 call 1, `cake run --time`). One consumer warpgroup, an 8-stage
# ring (20 KiB per stage) + 12 KiB of cs, three 32-column store panels (64B swizzle).
kernel gemm_bf16_tma_64x96 target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 64 == 0, N % 96 == 0, K % 64 == 0, K >= 64
  grid (N / 96, M / 64) as (bn, bm)
  role load warps 0..3 regs 40
  role mma  warps 4..7 regs 232
  pipeline ab stages 8
  smem a: bf16[64, 64] swizzle 128B ring ab
  smem b: bf16[96, 64] swizzle 128B ring ab
  smem cs: bf16[64, 96] swizzle 64B       # the epilogue's staging tile, 3 panels of 32 columns
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals 1
  frag acc: f32[64, 96] in mma split m
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a <- A[bm * 64 +: 64, k * 64 +: 64] signal full
      tma b <- B[bn * 96 +: 96, k * 64 +: 64] signal full
    }
  }
  in mma {
    acc = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
    tma C[bm * 64 +: 64, bn * 96 +: 32] <- cs[:, 0 +: 32]
    tma C[bm * 64 +: 64, bn * 96 + 32 +: 32] <- cs[:, 32 +: 32]
    tma C[bm * 64 +: 64, bn * 96 + 64 +: 32] <- cs[:, 64 +: 32]
  }
}
