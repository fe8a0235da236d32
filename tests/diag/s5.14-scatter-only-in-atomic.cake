# s5.14-scatter-only-in-atomic.cake
# Checks §5.14: a fragment slice start is a scatter index only in atomic_add.
# Expected: CK-SEM-037
# A fragment as a slice start is a scatter index only in an atomic_add destination; a store
# (whose rows would race) still needs scalar slice starts.
kernel k target sm_90a
  param Out: global i32[K]
  role work warps 0..3
  frag a: i32[64] in work
{
  in work {
    a = 0
    store Out[a] <- 1
  }
}
