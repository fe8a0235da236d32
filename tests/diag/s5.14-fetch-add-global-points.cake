# s5.14-fetch-add-global-points.cake
# Checks §5.14: fetch_add takes an element reference into a global tensor, point indices only.
# Expected: CK-SEM-035
# A range slice in the reference of fetch_add is refused: each element of the result is the old
# value of one entry, named by a point index (or the index vector).
kernel k target sm_90a
  param Cursor: global i32[K]
  param Order:  global i32[K]
  role work warps 0..3
  frag slot: i32[128] in work
{
  in work {
    slot = fetch_add(Cursor[0 +: 128], 1)
    store Order[0 +: 128] <- slot
  }
}
