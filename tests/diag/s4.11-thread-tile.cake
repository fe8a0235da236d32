# s4.11-thread-tile.cake
# Checks §4.11: a thread tile (`lanes L`) is rank 2 with L a power of two dividing its
# columns, is never split, is not an MMA operand, and its rows divide over the role.
# Expected: CK-SEM-045 (three times), CK-RES-010 (once: 12 rows over 4 warps of 2 rows each)
kernel tiles_bad target sm_90a
  param X: global f32[N, 128]
  grid (N / 32) as (b)
  role work warps 0..3
  frag S: f32[32, 128] in work lanes 6
  frag R: f32[32, 128] in work split m lanes 32
  frag v: f32[128] in work lanes 4
{
  in work {
    load S <- X[b * 32 +: 32, :]
    load R <- X[b * 32 +: 32, :]
    load v <- X[0, :]
  }
}

kernel tiles_short target sm_90a
  param X: global f32[N, 128]
  grid (N / 12) as (b)
  role work warps 0..3
  frag S: f32[12, 128] in work lanes 16
{
  in work {
    load S <- X[b * 12 +: 12, :]
    store X[b * 12 +: 12, :] <- S * 2.0
  }
}
