# scale_ragged_tail — Y = 2·X over a ragged 1-D grid: N is a multiple of 64 only, the grid rounds
# N / 128 up, and the last CTA, when only 64 elements remain, takes the `else` branch and moves
# a 64-element half tile. The condition is on the block coordinate, so the memory rules evaluate
# it per CTA: every access stays inside X and Y (CK-MEM-003) and Y is written exactly once
# (CK-MEM-001/002) at every checked N.
kernel scale_ragged_tail target sm_90a
  param X: global f32[N]
  param Y: global f32[N]
  domain N % 64 == 0
  grid ((N + 127) / 128) as (bn)
  role work warps 0..3
  frag x: f32[128] in work
  frag h: f32[64] in work
{
  in work {
    if bn * 128 + 128 <= N {
      load x <- X[bn * 128 +: 128]
      store Y[bn * 128 +: 128] <- 2.0 * x
    } else {
      load h <- X[bn * 128 +: 64]
      store Y[bn * 128 +: 64] <- 2.0 * h
    }
  }
}
