# s5.14-scatter-only-in-destinations.cake
# Checks §5.14: a fragment slice start is a scatter index only in a destination.
# Expected: CK-SEM-037
# A fragment as a slice start is a scatter index in an atomic_add or store destination and in a
# fetch_add reference; a load source (a gather) still needs scalar slice starts.
kernel k target sm_90a
  param In: global i32[K]
  role work warps 0..3
  frag a: i32[64] in work
  frag v: i32[64] in work
{
  in work {
    a = 0
    load v <- In[a]
  }
}
