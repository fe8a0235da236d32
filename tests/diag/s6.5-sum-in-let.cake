# s6.5-sum-in-let.cake
# Checks §6.5: sum() is fragment math; a let (uniform over the role) cannot read fragments.
# Expected: CK-SEM-037
kernel sum_let target sm_90a
  param X: global f32[N, 128]
  param Y: global f32[N]
  grid (N / 32) as (b)
  role work warps 0..3
  frag S: f32[32, 128] in work lanes 32
  frag k: f32[128] in work
  frag d: f32[32] in work
{
  in work {
    load S <- X[b * 32 +: 32, :]
    load k <- X[0, :]
    let n = sum(k * k)
    d = rowsum(S * cols(k)) * n
    store Y[b * 32 +: 32] <- d
  }
}
