# expect: CK-RES-008
# Loads a 256x256 panel eight times per phase on one barrier: 8 x 128 KB of transaction bytes
# exceeds the 2^20-1 limit.
kernel panel_loader target sm_90a
  param A: global bf16[M, K]
  param C: global f32[M]
  domain M % 256 == 0, K % 2048 == 0, K >= 2048
  grid (M / 256) as (bm)
  role load warps 0..3 regs 40
  role red  warps 4..7 regs 232
  smem a: bf16[256, 256]
  barrier full producers load consumers red arrivals 1
  frag r: f32[256] in red
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
    r = rowsum(f32(a))
    store C[bm * 256 +: 256] <- r
  }
}
