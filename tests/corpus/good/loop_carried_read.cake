# loop_carried_read — a fragment read under `if j > 0` and written later in the loop body is
# initialised by the previous iteration (CK-SCHED-001 must not fire; LANGUAGE.md §5.9).
kernel carry target sm_90a
  param Out: global f32[N]
  domain N % 128 == 0
  grid (N / 128) as (bn)
  role work warps 0..3
  frag a: f32[128] in work
  frag t: f32[128] in work
{
  in work {
    a = 0.0
    for j in 0 .. 8 {
      if j > 0 {
        a = a + t
      }
      t = a + 1.0
    }
    store Out[bn * 128 +: 128] <- a
  }
}
