#!/bin/bash
# bench/outer_example.sh — the outer loop's worked example (docs/OUTER_LOOP.md), rebuilt from
# real GPU runs in one device call: the CK-RES-002 v1 -> v2 history of bench/RESULTS.md run S.
#
#   OUT=DIR [CAKE=bin/cake] [SHAPE=B=32,N=65536,K=1024] [GATE_GPU=1] bash bench/outer_example.sh
#
# On the GPU host, from the repository root (builds bin/cake with `make` when CAKE is missing):
#   1. history under a v1-style harness: `cake eval --skip-rule CK-RES-002` (the verifier
#      without the launch-pool rule, recorded as verifier "v1-...-without:CK-RES-002") runs on
#      the GPU, into a fresh store: the four-warpgroup assign with regs 120
#      (tests/corpus/bad/res_regs_launch_pool.cake; it hangs: the watchdog fires), the human
#      fix regs 112 (its child), two tactic variants of the fix (`cake apply stages:3`,
#      `stages:2`), the fix on two consumer warpgroups (`cake apply consumers:2`), and the
#      corpus kernel kmeans_assign (the adopted four-warpgroup assign, checked by its oracle);
#   2. `cake mine`: the failures grouped by shared schedule features (the register pool);
#   3. the v2 rule: `cake rules` on CK-RES-002 and `cake check` of the hanging kernel;
#   4. `cake gate --store`: today's harness re-judges the history (the hang is a true
#      positive of CK-RES-002, no ok run is rejected), recorded as a gate run; `--trace` of the
#      hang; then `cake eval` of the hang with today's harness: rejected, no GPU run;
#   5. `cake report` of the store; with GATE_GPU=1 (default) also `cake gate --gpu`.
# Everything lands in $OUT: the store (outer_example.db), each command's text and JSON output,
# report.html, and summary.txt (also printed last). Exit status 0 when the history came out as
# run S did (hang for regs 120, ok for the rest, one true positive, no false positive).
set -u
OUT=${OUT:-/tmp/cake-outer}
CAKE=${CAKE:-bin/cake}
SHAPE=${SHAPE:-B=32,N=65536,K=1024}
GATE_GPU=${GATE_GPU:-1}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
mkdir -p "$OUT/kernels"
if ! "$CAKE" --version > /dev/null 2>&1; then   # missing, or built for another host
	rm -f bin/cake
	make -j"$(nproc)" bin/cake > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 2; }
	CAKE=bin/cake
fi
S="$OUT/outer_example.db"
rm -f "$S" "$S-wal" "$S-shm" "$OUT/evals.jsonl"
K="$OUT/kernels"
HANG=tests/corpus/bad/res_regs_launch_pool.cake
V1=(--skip-rule CK-RES-002)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
"$CAKE" --version >> "$OUT/gpu.txt"

# eval FILE ARGS...: one GPU evaluation, its JSON line kept; prints the candidate id
ev() {
	local f=$1
	shift
	"$CAKE" eval "$f" --shape "$SHAPE" --store "$S" --timeout 10 --iters 30 --format=json "$@" \
		2>>"$OUT/evals.stderr" | tee -a "$OUT/evals.jsonl" |
		python3 -c 'import json,sys; l=sys.stdin.readline(); print(json.loads(l)["candidate"] if l.startswith("{") else "")'
}

# ---- 1. the v1 history, on the GPU ----
h=$(ev "$HANG" "${V1[@]}")
sed 's/role dist warps 4..19 regs 120 /role dist warps 4..19 regs 112 /' "$HANG" | sed '1d' > "$K/assign_4wg_r112.cake"
r=$(ev "$K/assign_4wg_r112.cake" "${V1[@]}" --parent "$h")
for t in stages:3 stages:2 consumers:2; do
	"$CAKE" apply "$t" "$K/assign_4wg_r112.cake" > "$K/assign_4wg_r112_${t/:/}.cake" 2>>"$OUT/evals.stderr"
	ev "$K/assign_4wg_r112_${t/:/}.cake" "${V1[@]}" --parent "$r" --origin "tactic:$t" > /dev/null
done
ev kernels/kmeans/assign.cake --kernel kmeans_assign "${V1[@]}" > /dev/null
"$CAKE" log --store "$S" > "$OUT/log.txt" 2>&1

# ---- 2. mining, 3. the v2 rule, 4. the gate on the store ----
"$CAKE" mine --store "$S" > "$OUT/mine.txt" 2>&1
"$CAKE" mine --store "$S" --format=json > "$OUT/mine.json" 2>&1
{
	"$CAKE" rules --format=json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in (d["rules"] if isinstance(d, dict) else d):
    if r["id"] == "CK-RES-002":
        print(r["id"], "version", r["version"], "(" + r["authority"] + "):", r["title"]); print(r["rationale"])'
	"$CAKE" check "$HANG"
} > "$OUT/rule.txt" 2>&1
"$CAKE" gate --store "$S" > "$OUT/gate_store.txt" 2>&1
echo "exit $?" >> "$OUT/gate_store.txt"
"$CAKE" gate --store "$S" --no-record --format=json > "$OUT/gate_store.json" 2>&1
"$CAKE" gate --store "$S" --trace "$h" > "$OUT/trace.txt" 2>&1
"$CAKE" eval "$HANG" --shape "$SHAPE" --store "$S" > "$OUT/eval_v2.txt" 2>&1
echo "exit $?" >> "$OUT/eval_v2.txt"

# ---- 5. the report, and the GPU part of the corpus gate ----
"$CAKE" report --store "$S" -o "$OUT/report.html" --title "Outer loop: the CK-RES-002 v1 -> v2 history" \
	> "$OUT/report.txt" 2>&1
if [ "$GATE_GPU" = 1 ]; then
	"$CAKE" gate --gpu > "$OUT/gate_gpu.txt" 2>&1
	echo "exit $?" >> "$OUT/gate_gpu.txt"
fi

# ---- summary ----
python3 - "$OUT" "$h" > "$OUT/summary.txt" <<'PY'
import json, os, sys
out, hang = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(os.path.join(out, "evals.jsonl")) if l.startswith("{")]
print(open(os.path.join(out, "gpu.txt")).read().strip())
print("== 1. the v1 history (verifier without CK-RES-002), on the GPU")
good = True
for e in ev:
    t = "-" if e["median_us"] is None else "%.1f us" % e["median_us"]
    print(f"  {e['candidate'][:12]} {e['kernel']:<18} {e['verdict']:<8} {t:>10}  {e['message'][:90]}")
    want = "hang" if e["candidate"] == hang else "ok"
    good = good and e["verdict"] == want
g = json.load(open(os.path.join(out, "gate_store.json")))
t = g["totals"]
good = good and t["true_positive"] == 1 and t["false_positive"] == 0
for name in ("mine.txt", "rule.txt", "gate_store.txt", "trace.txt", "eval_v2.txt", "report.txt", "gate_gpu.txt"):
    p = os.path.join(out, name)
    if os.path.exists(p):
        print(f"== {name}")
        print(open(p).read().rstrip())
print("outer_example:", "as in run S (hang for regs 120, ok for the rest; 1 true positive, 0 false positives)"
      if good else "DIFFERS from run S: see above")
sys.exit(0 if good else 1)
PY
rc=$?
cat "$OUT/summary.txt"
exit $rc
