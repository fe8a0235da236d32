# expect: CK-RES-010
# A KDA decode tile of 20 value rows over 4 warps with lanes 16 (2 rows per warp per pass,
# 8 per pass): 20 is not a multiple of 8, so some threads would hold rows that do not exist.
kernel tile_rows target sm_90a
  param S0: global f32[B, 20, 128]
  param SN: global f32[B, 20, 128]
  grid (B) as (b)
  role upd warps 0..3
  frag S: f32[20, 128] in upd lanes 16
{
  in upd {
    load S <- S0[b, :, :]
    store SN[b, :, :] <- S * 0.5
  }
}
