#!/bin/sh
# make_synthetic.sh — regenerate tests/data/cost/synthetic.jsonl: times that
# the cost model predicts with the known coefficients of synthetic-truth.json
# for the kernels in tests/data/cost/src at many shapes, each perturbed by a
# deterministic -1 .. +1 %. tests/cli/cost.sh calibrates on it and checks that
# the fit recovers those coefficients. Rerun it (from the repository root,
# after `make`) when the model's equations change.
#
#   sh tests/data/cost/make_synthetic.sh [CAKE]     (default bin/cake)
set -eu
CAKE=${1:-bin/cake}
D=tests/data/cost
DB=$(mktemp -u "${TMPDIR:-/tmp}/cake-synth.XXXXXX.db")
trap 'rm -f "$DB" "$DB-wal" "$DB-shm"' EXIT
python3 - "$CAKE" "$D" "$DB" <<'PY'
import json, subprocess, sys
cake, d, db = sys.argv[1:4]
gemm = ["M=8192,N=8192,K=8192", "M=4096,N=4096,K=4096", "M=8192,N=1024,K=8192", "M=2048,N=2048,K=2048",
        "M=1024,N=1024,K=1024", "M=256,N=512,K=64", "M=4096,N=8192,K=2048", "M=16384,N=2048,K=4096",
        "M=512,N=1024,K=8192", "M=2048,N=4096,K=1024"]
assign = ["B=32,N=65536,K=1024", "B=8,N=65536,K=512", "B=4,N=16384,K=2048", "B=1,N=1048576,K=1024"]
items = [(f, None, s, "gemm") for f in ("gemm_ws_128x256_s4", "gemm_persistent", "gemm_ws_128x128_s5") for s in gemm]
items += [(f, k, s, "kmeans_assign") for f, k in (("kmeans_assign", "kmeans_assign"), ("kmeans_assign_2wg", None),
                                                  ("kmeans_assign_f16", "kmeans_assign_f16")) for s in assign]
items += [("kmeans_update_sorted", "kmeans_segsum", "B=%d,N=65536,K=1024" % b, "kmeans_segsum") for b in (2, 8, 32, 64)]
items += [("kmeans_update_segmented", None, "N=%d,K=1024,K1=1025" % n, "kmeans_segmented")
          for n in (262144, 1048576, 2097152, 4194304)]
out = []
for i, (f, k, s, fam) in enumerate(items):
    path = "%s/src/%s.cake" % (d, f)
    kk = ["--kernel", k] if k else []
    c = json.loads(subprocess.run([cake, "cost", path, "--shape", s, "--model", d + "/synthetic-truth.json",
                                   "--format=json"] + kk, check=True, capture_output=True, text=True).stdout)
    e = subprocess.run([cake, "eval", path, "--shape", s, "--dry-run", "--store", db, "--format=json"] + kk,
                       capture_output=True, text=True).stdout.strip().splitlines()[-1]
    e = json.loads(e)
    noise = 1 + 0.01 * ((i * 7919) % 5 - 2) / 2.0
    out.append({"format": "cake-measure/1", "candidate": e["candidate"], "family": fam, "kernel": e["kernel"],
                "shape": e["shape"], "target": "sm_90a", "gpu": "synthetic h200", "verdict": "ok",
                "message": "synthetic: synthetic-truth.json's prediction x %.3f" % noise,
                "median_us": round(c["cost"]["predicted_us"] * noise, 3), "source": path})
with open(d + "/synthetic.jsonl", "w", encoding="utf-8") as fo:
    for r in out:
        fo.write(json.dumps(r) + "\n")
print("%d rows" % len(out))
PY
