#!/usr/bin/env python3
"""bench/proto/s12/gen_smallm.py OUTDIR — session 12's small-M GEMM candidates (experiment, not
library kernels): the 64-row one-warpgroup tile with 128-wide K stages (half the per-stage
wgmma_wait bubbles), the 64-row tile on two consumer warpgroups (split n), 64x96 tiles (N = 3072
in 32 column blocks: 128 CTAs at M = 256), and a persistent 128x160 tile whose epilogue panels are
32 columns (64B swizzle). Each is written from one template; prints the file names."""
import os, sys

T = """kernel {name} target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % {bm} == 0, N % {bn} == 0, K % {bk} == 0, K >= {bk}
  grid {grid}
  role load warps 0..3 regs 40
  role mma  warps 4..{lastw} regs 232
  pipeline ab stages {st}
  smem a: bf16[{bm}, {bk}] swizzle 128B ring ab
  smem b: bf16[{bn}, {bk}] swizzle 128B ring ab
  smem cs: bf16[{bm}, {bn}] swizzle {cswz}
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals {nwg}
  frag acc: f32[{bm}, {bn}] in mma split {split}
{{
  in load {{
    for k in 0 .. K / {bk} pipelined ab {{
      wait empty
{loads}    }}
  }}
  in mma {{
    acc = 0
    for k in 0 .. K / {bk} pipelined ab {{
      wait full
      wgmma acc += a @ b^T
      wgmma_wait 0
      arrive empty
    }}
    store cs[:, :] <- bf16(acc)
    fence proxy_async
    sync mma
{stores}  }}
}}
"""

def gen(name, bm, bn, bk, st, nwg, split, persistent=False, panel=64, cswz="128B"):
    grid = (f"persistent (N / {bn}, M / {bm}) as (bn, bm) group 8" if persistent
            else f"(N / {bn}, M / {bm}) as (bn, bm)")
    loads = "".join(f"      tma {o}[:, {c} +: 64] <- {O}[b{d} * {t} +: {t}, k * {bk} + {c} +: 64] signal full\n"
                    for o, O, d, t in (("a", "A", "m", bm), ("b", "B", "n", bn)) for c in range(0, bk, 64))
    if bk == 64:
        loads = loads.replace("[:, 0 +: 64] <-", " <-").replace(" + 0 +: 64]", " +: 64]")
    stores = "".join(f"    tma C[bm * {bm} +: {bm}, bn * {bn} + {c} +: {panel}] <- cs[:, {c} +: {panel}]\n"
                     for c in range(0, bn, panel))
    return T.format(name=name, bm=bm, bn=bn, bk=bk, st=st, lastw=3 + 4 * nwg, nwg=nwg, split=split,
                    grid=grid, stores=stores, loads=loads, cswz=cswz)

V = [
    gen("s12_ref_64x128_s8", 64, 128, 64, 8, 1, "m"),   # the library's gemm_bf16_tma_64x128
    gen("s12_64x128_bk128_s4", 64, 128, 128, 4, 1, "m"),
    gen("s12_64x128_2wg_s8", 64, 128, 64, 8, 2, "n"),
    gen("s12_64x96_s8", 64, 96, 64, 8, 1, "m", panel=32, cswz="64B"),
    gen("s12_64x96_bk128_s4", 64, 96, 128, 4, 1, "m", panel=32, cswz="64B"),
    gen("s12_64x96_2wg_s8", 64, 96, 64, 8, 2, "n", panel=32, cswz="64B"),
    gen("s12_p128x160_s4", 128, 160, 64, 4, 2, "m", persistent=True, panel=32, cswz="64B"),
    gen("s12_128x192_s4", 128, 192, 64, 4, 2, "m"),
]
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for src in V:
    name = src.split()[1]
    with open(os.path.join(out, name + ".cake"), "w") as f:
        f.write(src)
    print(name)
