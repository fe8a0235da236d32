#!/usr/bin/env python3
"""bench/proto/s13_prep_lines.py DIR [TOP] — the ncu SASS samples of one kernel, summed per Cake
statement. DIR holds (bench/proto/s13_call6.sh): sass.csv (ncu --page source --csv --print-source
sass: per instruction address, the warp-stall samples and the instructions executed), prep.dis
(nvdisasm -g of the -lineinfo cubin: each instruction's line of the generated CUDA) and prep.cu
(that CUDA, whose `// FILE.cake:LINE: STATEMENT` comments name the Cake statement each block of
code lowers). Each CUDA line is charged to the nearest Cake comment above it; instructions
inlined from the prelude's helpers (lines before the kernel body) are charged to the helper."""
import csv, re, sys
from collections import defaultdict

d = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
addr_line, cur = {}, None
for ln in open(f"{d}/prep.dis"):
    m = re.search(r'//## File ".*", line (\d+)', ln)
    if m:
        cur = int(m.group(1))
        continue
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", ln)
    if m and cur is not None:
        addr_line[int(m.group(1), 16)] = cur
cu = open(f"{d}/prep.cu").read().split("\n")
stmt_of, cur = {}, "(prelude)"
for i, t in enumerate(cu, 1):
    m = re.search(r"// (\S+\.cake:\d+): (.*)", t)
    if m:
        cur = f"{m.group(1)}: {m.group(2).strip()[:90]}"
    elif cur.startswith("(prelude"):   # a helper of the prelude: charged to the helper by name
        f = re.match(r"(?:static )?__device__.*?(\w+)\(", t)
        if f:
            cur = f"(prelude) {f.group(1)}"
    stmt_of[i] = cur
rows = list(csv.reader(open(f"{d}/sass.csv")))
hdr = next(r for r in rows if r and r[0] == "Address")
ia, isamp, iexe = hdr.index("Address"), hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
base = None
samp, exe = defaultdict(float), defaultdict(float)
tot_s = tot_e = 0.0
for r in rows[rows.index(hdr) + 1:]:
    if len(r) <= iexe or not r[ia].startswith("0x"):
        continue
    a = int(r[ia], 16)
    base = a if base is None else min(base, a)
for r in rows[rows.index(hdr) + 1:]:
    if len(r) <= iexe or not r[ia].startswith("0x"):
        continue
    off = int(r[ia], 16) - base
    line = addr_line.get(off)
    key = stmt_of.get(line, "(no line)") if line else "(no line)"
    s, e = float(r[isamp] or 0), float(r[iexe] or 0)
    samp[key] += s
    exe[key] += e
    tot_s += s
    tot_e += e
print(f"{'samples %':>9} {'instr %':>8}  statement   (total {tot_s:.0f} samples, {tot_e:.0f} warp instructions)")
for k in sorted(samp, key=samp.get, reverse=True)[:top]:
    print(f"{100 * samp[k] / tot_s:9.1f} {100 * exe[k] / tot_e:8.1f}  {k}")
