#!/usr/bin/env python3
"""gen_tma_variants.py - the GEMM schedules of session 11's epilogue A/B (bench/proto/s11):
each library route's tile shape with its epilogue through shared memory and TMA stores (the
accumulator stored bf16 into a 128B-swizzled staging buffer `cs`, then one TMA store per 64-column
panel), one CTA per tile or persistent. Writes DIR/<name>.cake; prints name, tile and stages.
    python3 bench/proto/s11/gen_tma_variants.py DIR"""
import os
import sys

TEMPLATE = """# {name} - session 11 epilogue A/B variant (bench/proto/s11/gen_tma_variants.py)
kernel {name} target sm_90a family gemm
  param A: global bf16[M, K]
  param B: global bf16[N, K]
  param C: global bf16[M, N]
  domain M % {TM} == 0, N % {TN} == 0, K % 64 == 0, K >= 64
  grid {persistent}(N / {TN}, M / {TM}) as (bn, bm){group}
  role load warps 0..3 regs 40
  role mma  warps 4..{last} regs 232
  pipeline ab stages {S}
  smem a: bf16[{TM}, 64] swizzle 128B ring ab
  smem b: bf16[{TN}, 64] swizzle 128B ring ab
  smem cs: bf16[{TM}, {TN}] swizzle 128B
  barrier full  ring ab producers load consumers mma  arrivals 1
  barrier empty ring ab producers mma  consumers load arrivals {WG}
  frag acc: f32[{TM}, {TN}] in mma split m
{{
  in load {{
    for k in 0 .. K / 64 pipelined ab {{
      wait empty
      tma a <- A[bm * {TM} +: {TM}, k * 64 +: 64] signal full
      tma b <- B[bn * {TN} +: {TN}, k * 64 +: 64] signal full
    }}
  }}
  in mma {{
    acc = 0
    for k in 0 .. K / 64 pipelined ab {{
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

VARIANTS = [   # name, TM, TN, stages, persistent, group
    ("t_p256_s3", 128, 256, 3, True, 16),
    ("t_ws256_s3", 128, 256, 3, False, 0),
    ("t_p192_s4", 128, 192, 4, True, 0),
    ("t_ws192_s4", 128, 192, 4, False, 0),
    ("t_p128_s5", 128, 128, 5, True, 8),
    ("t_ws128_s5", 128, 128, 5, False, 0),
    ("t_ws64_s8", 64, 128, 8, False, 0),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, tm, tn, s, pers, grp in VARIANTS:
        stores = "".join("    tma C[bm * %d +: %d, bn * %d + %d +: 64] <- cs[:, %d +: 64]\n" % (tm, tm, tn, c, c)
                         for c in range(0, tn, 64))
        wg = tm // 64
        text = TEMPLATE.format(name=name, TM=tm, TN=tn, S=s, persistent="persistent " if pers else "",
                               group=" group %d" % grp if grp else "", last=3 + 4 * wg, WG=wg, stores=stores)
        open(os.path.join(out, name + ".cake"), "w").write(text)
        print(name, "%dx%d" % (tm, tn), "stages", s, "persistent" if pers else "")


main()
