#!/bin/bash
# bench/clean_start.sh — the clean-start experiment: `cake evolve` on the GPU from a
# deliberately naive seed, against the best hand-written corpus kernel of its family.
#   FAMILY=gemm|kmeans BUDGET=10m OUT=DIR CAKE=bin/cake [STORE=path] bash bench/clean_start.sh
# gemm:   seed kernels/gemm/seed_naive.cake at M=N=K=8192, baseline kernels/gemm/gemm_persistent.cake
# kmeans: seed kernels/kmeans/seed_naive.cake at B=32,N=65536,K=1024 (D=128, bf16),
#         baseline kmeans_assign of kernels/kmeans/assign.cake
# The store (STORE, default $OUT/store.db) carries the campaign: run again with the same
# store to resume it (budget spent so far counts). Writes $OUT/evolve_FAMILY.jsonl (one JSON
# object per event) and prints the curve (best speedup over the seed and over the baseline
# against GPU minutes) and the verdict counts last.
set -u
CAKE=${CAKE:-bin/cake}
FAMILY=${FAMILY:-gemm}
BUDGET=${BUDGET:-10m}
OUT=${OUT:-/tmp/cake-clean}
STORE=${STORE:-$OUT/store.db}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
mkdir -p "$OUT"
case "$FAMILY" in
gemm) seed=kernels/gemm/seed_naive.cake; shape=M=8192,N=8192,K=8192
	base=(--baseline kernels/gemm/gemm_persistent.cake) ;;
kmeans) seed=kernels/kmeans/seed_naive.cake; shape=B=32,N=65536,K=1024
	base=(--baseline kernels/kmeans/assign.cake --baseline-kernel kmeans_assign) ;;
*) echo "clean_start: FAMILY is gemm or kmeans" >&2; exit 2 ;;
esac
log="$OUT/evolve_$FAMILY.jsonl"
$CAKE evolve "$seed" --shape "$shape" --budget "$BUDGET" --store "$STORE" "${base[@]}" --require-gpu \
	--iters 10 --timeout 10 --format=json >> "$log" 2>>"$OUT/evolve_$FAMILY.stderr"
echo "cake evolve exit status $?"
python3 - "$log" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
if not ev:
    sys.exit("no events")
print(f"{'gpu_min':>8} {'best_us':>10} {'x_seed':>7} {'x_base':>7} {'proposed':>8} {'rejected':>8} {'run':>5} {'failed':>6}")
last = None
for e in ev:
    key = (round(e["gpu_s"] / 30), e.get("best_us"))
    if key != last or e["event"] == "done":
        last = key
        f = lambda v: "-" if v is None else f"{v:.3f}"
        print(f"{e['gpu_s']/60:8.2f} {f(e.get('best_us')):>10} {f(e.get('speedup_seed')):>7} {f(e.get('speedup_baseline')):>7} "
              f"{e['proposed']:8d} {e['rejected']:8d} {e['run']:5d} {e['failed']:6d}")
d = ev[-1]
print("done:", d.get("reason"), "best", d.get("best"), "campaign", d.get("campaign"))
fails = {}
for e in ev:
    if e.get("verdict") in ("hang", "fault", "mismatch", "launch_error", "compile_error") and not e.get("cached"):
        fails[e["verdict"]] = fails.get(e["verdict"], 0) + 1
print("GPU failures by verdict:", fails or "none")
PY
