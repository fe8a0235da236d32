# s5.14-two-scatter-indices.cake
# Checks §5.14: at most one scatter index per reference.
# Expected: CK-SEM-026
# At most one scatter index per reference: G[a, b] with two index vectors would be a zip,
# which atomic_add does not define.
kernel k target sm_90a
  param G: global i32[K, K]
  role work warps 0..3
  frag a: i32[64] in work
  frag b: i32[64] in work
{
  in work {
    a = 0
    b = 0
    atomic_add G[a, b] <- 1
  }
}
