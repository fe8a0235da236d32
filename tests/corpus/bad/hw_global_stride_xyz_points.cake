# expect: CK-HW-008
# kNN points stored as f32 xyz triples loaded with TMA: 12-byte rows are not a multiple of 16 bytes.
kernel knn_xyz target sm_90a
  param P:   global f32[N, 3]
  param Out: global f32[N]
  domain N % 128 == 0
  grid (N / 128) as (bm)
  role load warps 0..3
  role math warps 4..7
  smem ps: f32[128, 3]
  barrier pfull producers load consumers math arrivals 1
  frag p: f32[128, 3] in math
{
  in load {
    tma ps <- P[bm * 128 +: 128, 0 +: 3] signal pfull
  }
  in math {
    wait pfull
    load p <- ps[:, :]
    store Out[bm * 128 +: 128] <- rowsum(p * p)
  }
}
