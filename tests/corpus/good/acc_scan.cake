# acc_scan — cumsum(x, 0) over accumulator-layout tiles (LOWERING.md §2): a scan down the rows
# of a tile split by rows over two warpgroups (the blocks of 16 rows run across them), of a
# tile split by columns (each warpgroup scans its own columns), of an unsplit tile of two m64
# tiles per warpgroup (both warpgroups scan it; the store is done once), and of an unsplit i32
# tile. Segmented scans (`cumsum(x, 0, S)`, restarting every S rows): S = 16 over the split-m
# tile (a warp's block: no shared memory), S = 8 over the split-n one (a row half), S = 32 over
# the split-m tile (two blocks, within a warpgroup) and S = 64 over the unsplit one (an m64 tile).
# tests/lower/emu.sh runs it on the CPU emulator against tests/lower/acc_emu.c (float64 sums).
kernel acc_scan target sm_90a
  param X:    global f32[B, 128, 128]
  param OutM: global f32[B, 128, 128]
  param OutN: global f32[B, 64, 128]
  param OutU: global f32[B, 128, 64]
  param OutI: global f32[B, 64, 64]
  param S16:  global f32[B, 128, 128]
  param S8:   global f32[B, 64, 128]
  param S32:  global f32[B, 128, 128]
  param S64:  global f32[B, 128, 64]
  grid (B) as (b)
  role work warps 0..7
  frag a: f32[128, 128] in work split m
  frag n: f32[64, 128] in work split n
  frag u: f32[128, 64] in work
  frag q: i32[64, 64] in work
{
  in work {
    load a <- X[b, :, :]
    a = cumsum(a * 2.0 - 1.0, 0)
    store OutM[b, :, :] <- a
    load n <- X[b, 32 +: 64, :]
    n = cumsum(n, 0)
    store OutN[b, :, :] <- n
    load u <- X[b, :, 64 +: 64]
    u = cumsum(u, 0)
    store OutU[b, :, :] <- u
    q = row_idx() * 3 - col_idx() + b
    q = cumsum(q, 0)
    store OutI[b, :, :] <- f32(q)
    load a <- X[b, :, :]
    a = cumsum(a, 0, 16)
    store S16[b, :, :] <- a
    load n <- X[b, 32 +: 64, :]
    n = cumsum(n, 0, 8)
    store S8[b, :, :] <- n
    load a <- X[b, :, :]
    a = cumsum(a * 2.0 - 1.0, 0, 32)
    store S32[b, :, :] <- a
    load u <- X[b, :, 64 +: 64]
    u = cumsum(u, 0, 64)
    store S64[b, :, :] <- u
  }
}
