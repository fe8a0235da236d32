# gemm_two_consumer_roles_halves — bf16 GEMM whose two consumer warpgroups are separate roles:
# c0 owns rows 0..63 of the 128x128 tile and c1 rows 64..127 (their own A panels, one shared B
# panel), and each stores its half of C. The two epilogue stores are disjoint and together cover
# the tile (CK-MEM-001/002 model both roles of every CTA); `group 8` rasters the tiles.
kernel gemm_two_consumer_roles target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % 128 == 0, N % 128 == 0, K % 64 == 0, K >= 256
  grid (N / 128, M / 128) as (bn, bm) group 8
  role load warps 0..3 regs 40
  role c0   warps 4..7 regs 232
  role c1   warps 8..11 regs 232
  pipeline ab stages 4
  smem a0: bf16[64, 64] swizzle 128B ring ab
  smem a1: bf16[64, 64] swizzle 128B ring ab
  smem b:  bf16[128, 64] swizzle 128B ring ab
  barrier full  ring ab producers load consumers c0, c1 arrivals 1
  barrier empty ring ab producers c0, c1 consumers load arrivals 2
  frag acc0: f32[64, 128] in c0
  frag acc1: f32[64, 128] in c1
{
  in load {
    for k in 0 .. K / 64 pipelined ab {
      wait empty
      tma a0 <- A[bm * 128 +: 64, k * 64 +: 64] signal full
      tma a1 <- A[bm * 128 + 64 +: 64, k * 64 +: 64] signal full
      tma b  <- B[bn * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in c0 {
    acc0 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc0 += a0 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 +: 64, bn * 128 +: 128] <- bf16(acc0)
  }
  in c1 {
    acc1 = 0
    for k in 0 .. K / 64 pipelined ab {
      wait full
      wgmma acc1 += a1 @ b^T
      wgmma_wait 0
      arrive empty
    }
    store C[bm * 128 + 64 +: 64, bn * 128 +: 128] <- bf16(acc1)
  }
}
