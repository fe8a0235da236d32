# expect: CK-DEAD-004
# Per-tile norms staged through a single (non-ring) buffer and barrier with no release barrier: the
# producer completes several phases ahead of the consumer.
kernel kmeans_norms target sm_90a
  param X:     global bf16[N, 64]
  param Cent:  global bf16[K, 64]
  param Out:   global f32[N]
  domain N % 128 == 0, K % 128 == 0, K >= 128
  grid (N / 128) as (bm)
  role load warps 0..3 regs 40
  role dist warps 4..11 regs 232
  pipeline cr stages 2
  smem xs: bf16[128, 64] swizzle 128B
  smem cs: bf16[128, 64] swizzle 128B
  barrier xfull producers load consumers dist arrivals 1
  barrier cfull producers load consumers dist arrivals 1
  frag s:   f32[128, 128] in dist split m
  frag acc: f32[128] in dist split m
{
  in load {
    tma xs <- X[bm * 128 +: 128, 0 +: 64] signal xfull
    for j in 0 .. K / 128 pipelined cr {
      tma cs <- Cent[j * 128 +: 128, 0 +: 64] signal cfull
    }
  }
  in dist {
    acc = 0.0
    wait xfull
    for j in 0 .. K / 128 pipelined cr {
      wait cfull
      wgmma s = xs @ cs^T
      wgmma_wait 0
      acc = acc + rowsum(s)
    }
    store Out[bm * 128 +: 128] <- acc
  }
}
