# s5.14-scatter-index-not-int.cake
# Checks §5.14: a scatter index must be an integer vector fragment.
# Expected: CK-SEM-037
# A scatter index in an atomic_add destination must be an integer vector fragment; an f32
# fragment cannot name rows.
kernel k target sm_90a
  param Sums: global f32[K, 64]
  role work warps 0..3
  frag w:   f32[64] in work
  frag lab: f32[64] in work
{
  in work {
    w = 1.0
    lab = 0.0
    atomic_add Sums[lab, :] <- rows(w) * 1.0
  }
}
