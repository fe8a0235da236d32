# greedy_argmax — greedy sampling: the arg-max token of each row of logits, with a running
# (value, index) pair across vocabulary tiles of 1024 (plain vector loads, no shared memory).
# Ties go to the lower token id.
kernel greedy_argmax target sm_90a
  param Logits: global bf16[B, V]
  param Tok:    global i32[B]
  domain B % 4 == 0, V % 1024 == 0, V >= 1024
  grid (B / 4) as (bb)
  role work warps 0..3
  frag x:  bf16[4, 1024] in work
  frag tv: f32[4] in work
  frag ti: i32[4] in work
  frag bv: f32[4] in work
  frag bi: i32[4] in work
{
  in work {
    bv = -inf
    bi = 0
    for j in 0 .. V / 1024 {
      load x <- Logits[bb * 4 +: 4, j * 1024 +: 1024]
      tv, ti = rowargmax(f32(x))
      bi = where(tv > bv, ti + j * 1024, bi)
      bv = max(bv, tv)
    }
    store Tok[bb * 4 +: 4] <- bi
  }
}
