#!/bin/sh
# bench/export_measure.sh — a store's measurement set for data/measure/: `cake export --verdict ok`
# per family (cake-measure/1) and, beside each, the canonical IR of every candidate it names
# (cake-candidate/1, one line each, from `cake show --format=json`), which `cake calibrate`
# and `cake import` read.
#
#   sh bench/export_measure.sh STORE PREFIX [FAMILY...]     (default families: gemm kmeans_assign)
#
# writes PREFIX-gemm.jsonl, PREFIX-gemm.candidates.jsonl, ... (a family with no ok rows is skipped).
set -u
CAKE=${CAKE:-bin/cake}
store=${1:?usage: export_measure.sh STORE PREFIX [FAMILY...]}
prefix=${2:?usage: export_measure.sh STORE PREFIX [FAMILY...]}
shift 2
[ $# -gt 0 ] || set -- gemm kmeans_assign
for fam in "$@"; do
	out="$prefix-${fam%%_*}.jsonl"
	"$CAKE" export --store "$store" --verdict ok --family "$fam" -o "$out" || exit 1
	if [ ! -s "$out" ]; then rm -f "$out"; continue; fi
	python3 - "$CAKE" "$store" "$out" <<'PY' || exit 1
import json, subprocess, sys
cake, store, path = sys.argv[1:4]
ids = []
for line in open(path):
    c = json.loads(line)["candidate"]
    if c not in ids:
        ids.append(c)
with open(path[:-len(".jsonl")] + ".candidates.jsonl", "w") as o:
    for i in ids:
        d = json.loads(subprocess.check_output([cake, "show", i, "--store", store, "--format=json"]))
        c = d.get("candidate", d)
        o.write(json.dumps({"format": "cake-candidate/1", "id": c["id"], "family": c["family"], "origin": c.get("origin"),
                            "parent": c.get("parent"), "text": c["text"]}) + "\n")
print(f"{path}: {len(ids)} candidates beside it", file=sys.stderr)
PY
done
