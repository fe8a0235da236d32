#!/usr/bin/env python3
"""tools/cost_builtin.py — copy the newest committed cost models into src/cost/coef.c.

    python3 tools/cost_builtin.py        (from the repository root)

The binary carries the highest-numbered data/cost/h200-vN.json and
data/cost/h100-vN.json as its built-in models (so it predicts from any
directory). This rewrites the block between the BEGIN/END builtin markers of
src/cost/coef.c from those files; a coefficient a file lacks (one added after
it was fitted) is written as its neutral value; tests/unit/test_cost.c checks
that the two agree value for value.
"""
import glob
import json
import re
import sys

NAMES = ["h200", "h100"]
KEYS = {"eff_tensor": "CC_EFF_TENSOR", "eff_l2": "CC_EFF_L2", "eff_hbm": "CC_EFF_HBM", "eff_vec": "CC_EFF_VEC",
        "overlap": "CC_OVERLAP", "tma_lat_scale": "CC_LAT_SCALE", "sync_scale": "CC_SYNC_SCALE",
        "launch_us": "CC_LAUNCH_US", "cta_us": "CC_CTA_US", "mem_serial": "CC_MEM_SERIAL",
        "l2_reuse": "CC_L2_REUSE", "gmem_lat_scale": "CC_GMEM_LAT_SCALE", "wgmma_n0": "CC_WGMMA_N0",
        "eff_atomic": "CC_EFF_ATOMIC", "vstmt_us": "CC_VSTMT_US", "tile_us": "CC_TILE_US",
        "overlap_max": "CC_OVERLAP_MAX", "shfl_cost": "CC_SHFL_COST", "epi_post": "CC_EPI_POST",
        "handoff_us": "CC_HANDOFF_US"}
# the coefficients added in v2 and v3 and the value that leaves the earlier equations (coef.c's neutral)
NEUTRAL = {"tile_us": 0, "overlap_max": 1, "shfl_cost": 0, "epi_post": 0, "handoff_us": 0}


def newest(name):
    best = None
    for f in glob.glob("data/cost/%s-v*.json" % name):
        m = re.fullmatch(r"data/cost/%s-v([0-9]+)\.json" % re.escape(name), f)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), f)
    if best is None:
        sys.exit("cost_builtin: no data/cost/%s-vN.json" % name)
    return best[1]


def cstr(s):
    return json.dumps(s, ensure_ascii=True)


def block():
    out = ["static const CostModel builtin[] = {"]
    for n in NAMES:
        m = json.load(open(newest(n), encoding="utf-8"))
        co = dict(m["coefficients"])
        for k, v in NEUTRAL.items():
            co.setdefault(k, v)
        out.append("\t{")
        out.append("\t\t.version = %s," % cstr(m["version"]))
        out.append("\t\t.target = %s," % cstr(m["target"]))
        out.append("\t\t.c = {")
        for k, v in co.items():
            out.append("\t\t\t[%s] = %s," % (KEYS[k], repr(float(v)) if v != int(v) else "%d" % v))
        out.append("\t\t},")
        out.append("\t\t.data_hash = %s," % cstr(m["data_hash"]))
        out.append("\t\t.fitted_on = %s," % cstr(m["fitted_on"]))
        out.append("\t\t.rows = %d, .train = %d, .heldout = %d," % (m["rows"], m["train"], m["heldout"]))
        out.append("\t},")
    out.append("};")
    return "\n".join(out)


def main():
    path = "src/cost/coef.c"
    src = open(path, encoding="utf-8").read()
    pat = re.compile(r"(/\* BEGIN builtin[^\n]*\n).*?(/\* END builtin \*/)", re.S)
    if not pat.search(src):
        sys.exit("cost_builtin: no BEGIN/END builtin markers in " + path)
    src = pat.sub(lambda mo: mo.group(1) + block() + "\n" + mo.group(2), src)
    open(path, "w", encoding="utf-8").write(src)


if __name__ == "__main__":
    main()
