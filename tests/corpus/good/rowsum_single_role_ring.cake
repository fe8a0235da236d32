# Single-role ring: one role streams row tiles through a 2-stage TMA ring and reduces them.
# Its `wait full` waits for the phase the TMA completes (a barrier TMA signals never starts
# free), so the read is ordered after the load even though the same role issued it.
kernel rowsum_ring target sm_90a
  param A: global f32[M, K]
  param C: global f32[M]
  domain M % 128 == 0, K % 64 == 0, K >= 256
  grid (M / 128) as (bm)
  role main warps 0..3
  pipeline p stages 2
  smem a: f32[128, 64] ring p
  barrier full ring p producers main consumers main arrivals 1
  frag x: f32[128, 64] in main
  frag r: f32[128] in main
{
  in main {
    r = 0.0
    for k in 0 .. K / 64 pipelined p {
      tma a <- A[bm * 128 +: 128, k * 64 +: 64] signal full
      wait full
      load x <- a[:, :]
      r = r + rowsum(x)
    }
    store C[bm * 128 +: 128] <- r
  }
}
