# expect: CK-RES-008
# Loads a 256x256 panel eight times per phase on one barrier: 8 x 128 KB of transaction bytes
# exceeds the 2^20-1 limit.
kernel panel_loader target sm_90a
  param A: global bf16[M, 2048]
  param C: global bf16[M, 256]
  domain M % 256 == 0
  grid (M / 256) as (bm)
  role load warps 0..3
  role red  warps 4..7
  smem a: bf16[256, 256]
  barrier full producers load consumers red arrivals 1
  frag t: bf16[256, 256] in red
{
  in load {
    tma a <- A[bm * 256 +: 256, 0 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 256 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 512 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 768 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 1024 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 1280 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 1536 +: 256] signal full
    tma a <- A[bm * 256 +: 256, 1792 +: 256] signal full
  }
  in red {
    wait full
    load t <- a[:, :]
    store C[bm * 256 +: 256, 0 +: 256] <- t
  }
}
