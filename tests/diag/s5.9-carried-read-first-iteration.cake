# s5.9-carried-read-first-iteration.cake
# Checks §5.9: a fragment read under a condition that holds on the first iteration is read uninitialised.
# Expected: CK-SCHED-001
# `if j >= 0` is true when j = 0, so `t` (written later in the body) has no earlier iteration
# to come from; `if j > 0` would be accepted (tests/corpus/good/loop_carried_read.cake).
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
      if j >= 0 {
        a = a + t
      }
      t = a + 1.0
    }
    store Out[bn * 128 +: 128] <- a
  }
}
