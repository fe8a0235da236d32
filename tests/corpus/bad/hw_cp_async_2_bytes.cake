# expect: CK-HW-009
# sm_80 kernel copying one bf16 element per row with cp.async: 2-byte transfers are not supported
# (4, 8 or 16).
kernel gather_col target sm_80
  param A: global bf16[M, K]
  param Out: global f32[M]
  domain M % 128 == 0, K % 8 == 0, K >= 8
  grid (M / 128) as (bm)
  role load warps 0..3
  role math warps 4..7
  smem col: bf16[128, 1]
  barrier full producers load consumers math arrivals 1
  frag c: bf16[128, 1] in math
{
  in load {
    cp_async col <- A[bm * 128 +: 128, 0 +: 1]
    arrive full
  }
  in math {
    wait full
    load c <- col[:, :]
    store Out[bm * 128 +: 128] <- rowsum(f32(c))
  }
}
