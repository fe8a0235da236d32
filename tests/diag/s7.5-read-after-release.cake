# s7.5-read-after-release.cake
# Checks §7.5: once a role arrives on a stage's empty barrier the producer may refill the stage; reading it later in the same step is a race.
# Expected: CK-MEM-004
# The consumer releases the stage of `a` before it loads the tile into registers: the producer's
# TMA for step k + 2 may already be overwriting it.
kernel rowsum_stream target sm_90a
  param A: global f32[M, K]
  param C: global f32[M]
  domain M % 128 == 0, K % 64 == 0, K >= 256
  grid (M / 128) as (bm)
  role load warps 0..3
  role work warps 4..7
  pipeline p stages 2
  smem a: f32[128, 64] ring p
  barrier full  ring p producers load consumers work arrivals 1
  barrier empty ring p producers work consumers load arrivals 1
  frag x: f32[128, 64] in work
  frag r: f32[128] in work
{
  in load {
    for k in 0 .. K / 64 pipelined p {
      wait empty
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
    }
  }
  in work {
    r = 0.0
    for k in 0 .. K / 64 pipelined p {
      wait full
      arrive empty
      load x <- a[:, :]
      r = r + rowsum(x)
    }
    store C[bm * 128 +: 128] <- r
  }
}
