#!/bin/bash
# bench/arch_check.sh — the GPU side of the architecture restructuring (one pipeline call,
# family modules, the launch layer, the k-means app): every family's kernels through
# `cake run` (verdicts, and times where they are benchmarks), `cake eval` recording into a
# store and serving the second call from it, then bench/gemm.sh (cuBLAS side by side) and
# bench/kmeans.sh (Flash-KMeans side by side). Prints a verdict table, then the two
# benchmark tables. Compare with the runs before the restructuring in bench/RESULTS.md.
# usage: OUT=DIR CAKE=bin/cake bash bench/arch_check.sh      (on the GPU machine)
set -u
CAKE=${CAKE:-bin/cake}
OUT=${OUT:-/tmp/cake-arch}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
runs=(
	"kernels/gemm/gemm_persistent.cake M=4096 N=4096 K=4096 --time --iters 30"
	"kernels/gemm/gemm_ws_128x128_s5.cake M=256 N=512 K=64"
	"tests/corpus/good/gemm_splitk_atomic.cake M=1024 N=1024 K=4096 --time --iters 20"
	"kernels/kmeans/assign.cake --kernel kmeans_assign B=32 N=65536 K=1024 --time --iters 30 --check-rows 2048"
	"kernels/kmeans/assign_f16.cake --kernel kmeans_assign_f16 B=2 N=65536 K=1024"
	"kernels/kmeans/assign.cake --kernel kmeans_assign_d64 B=8 N=65536 K=256"
	"kernels/kmeans/update_atomic.cake --kernel kmeans_divide B=4 K=4096"
	"kernels/kmeans/update_atomic_f16.cake --kernel kmeans_divide_f16 B=4 K=4096"
	"kernels/kmeans/update_segmented.cake N=2097152 K=1024 K1=1025 --time --iters 20"
	"kernels/kmeans/update_sorted.cake --kernel kmeans_segsum B=32 N=65536 K=1024 --time --iters 20"
	"kernels/kmeans/update_sorted.cake --kernel kmeans_fill B=2 N=65536 K=1024"
	"kernels/gemm/gemm_persistent.cake M=8000 N=8192 K=8192"
)
: > "$OUT/runs.jsonl"
for r in "${runs[@]}"; do
	# shellcheck disable=SC2086
	$CAKE run $r --format=json --timeout 20 >> "$OUT/runs.jsonl" 2>>"$OUT/stderr.txt" || true
done
# cake eval: recorded, then served from the store
rm -f "$OUT/store.db"*
$CAKE eval kernels/gemm/gemm_persistent.cake --shape M=8192,N=8192,K=8192 --store "$OUT/store.db" --format=json \
	> "$OUT/eval.jsonl" 2>>"$OUT/stderr.txt"
$CAKE eval kernels/gemm/gemm_persistent.cake --shape M=8192,N=8192,K=8192 --store "$OUT/store.db" --format=json \
	>> "$OUT/eval.jsonl" 2>>"$OUT/stderr.txt"
python3 - "$OUT/runs.jsonl" "$OUT/eval.jsonl" <<'PY'
import json, sys
print(f"{'kernel':>28} {'family':>16} {'dims':>34} {'verdict':>9} {'median_us':>10} {'oracle':>22} {'rel_err':>9}")
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    d = ",".join(f"{k}={v}" for k, v in r.get("dims", {}).items())
    t = r.get("time_us", {}).get("median")
    c = r.get("check", {})
    e = c.get("rel_err")
    print(f"{r.get('kernel',''):>28} {str(r.get('family')):>16} {d:>34} {r['verdict']:>9} "
          f"{('%.1f' % t) if t else '-':>10} {str(c.get('oracle')):>22} {('%.2e' % e) if e is not None else '-':>9}"
          + ("" if r['verdict'] == 'ok' else "  " + (r.get('error') or '')[:90]))
for line in open(sys.argv[2]):
    if line.startswith("{"):
        r = json.loads(line)
        print(f"eval {r['candidate'][:12]} {r['kernel']} {r['shape']}: {r['verdict']} median {r['median_us']} us, "
              f"predicted {r['predicted_us']} us, cached {r['cached']}")
PY
OUT="$OUT/gemm" CAKE=$CAKE bash "$here/gemm.sh" 2>&1 | tail -25
OUT="$OUT/km" CAKE=$CAKE bash "$here/kmeans.sh" 2>&1 | tail -30
