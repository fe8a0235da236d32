# s4.12-loop-var-out-of-scope.cake
# Checks §4.12: a loop variable is visible only inside its loop; the hint says so and points at it.
# Expected: CK-SEM-002
kernel k target sm_90a
  param C: global f32[N]
  grid (N / 128) as (b)
  role w warps 0..3
  frag x: f32[128] in w
{
  in w {
    for k in 0 .. 4 {
      x = 1.0
    }
    let z = k + 1
  }
}
