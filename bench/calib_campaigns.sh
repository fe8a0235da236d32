#!/bin/bash
# bench/calib_campaigns.sh — the cost model's calibration data (docs/COST.md): `cake evolve`
# on the GPU host from the naive seeds at several shapes per family, into one store, so that
# `cake calibrate` has measured candidates spread over shapes (issue: at least 60 per family
# over at least 4 shapes; the clean-start campaigns of data/measure/ give the 8192³ GEMM and
# the 32,65536,128,1024 assign shapes).
#
#   OUT=DIR [CAKE=bin/cake] [STORE=$OUT/calib.db] [BUDGET=40s] bash bench/calib_campaigns.sh
#     env CALIB_GEMM_SHAPES, CALIB_KM_SHAPES (space-separated NAME=V,... lists; set and empty:
#     none of that family) override the shapes; PREFIX (calib) names the campaigns
#     PREFIX-FAMILY-N. (Not GEMM_SHAPES: bench/library.sh reads that, as M,N,K lists.)
#
# Every campaign is bounded twice: by its GPU-seconds budget and by `timeout -s INT` (a clean
# stop: the store stays consistent and the campaign resumes). Each campaign's JSON events go
# to $OUT/evolve_<family>_<n>.jsonl; a short table (campaign, shape, measured candidates,
# best over the seed and over the hand-written baseline) is printed last.
set -u
CAKE=${CAKE:-bin/cake}
OUT=${OUT:-/tmp/cake-calib}
STORE=${STORE:-$OUT/calib.db}
BUDGET=${BUDGET:-40s}
WALL=${WALL:-100}
GEMM_SHAPES=${CALIB_GEMM_SHAPES-"M=4096,N=4096,K=4096 M=2048,N=2048,K=4096 M=8192,N=4096,K=1024"}
KM_SHAPES=${CALIB_KM_SHAPES-"B=1,N=1048576,K=1024 B=32,N=16384,K=512 B=8,N=131072,K=2048"}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
mkdir -p "$OUT"
: > "$OUT/campaigns.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1

n=0
camp() {   # camp FAMILY SEED SHAPE BASELINE-ARGS...
	local fam=$1 seed=$2 shape=$3
	shift 3
	n=$((n + 1))
	local log="$OUT/evolve_${fam}_$n.jsonl"
	echo "${PREFIX:-calib}-$fam-$n $shape" >> "$OUT/campaigns.txt"
	echo "== $fam $shape: cake evolve $seed --budget $BUDGET" >&2
	timeout -s INT "$WALL" "$CAKE" evolve "$seed" --shape "$shape" --budget "$BUDGET" --store "$STORE" \
		--campaign "${PREFIX:-calib}-$fam-$n" "$@" --require-gpu --iters 10 --timeout 10 --format=json \
		> "$log" 2>> "$OUT/evolve.stderr"
	echo "   exit $?" >&2
}
for s in $GEMM_SHAPES; do
	camp gemm kernels/gemm/seed_naive.cake "$s" --baseline kernels/gemm/gemm_persistent.cake
done
for s in $KM_SHAPES; do
	camp kmeans kernels/kmeans/seed_naive.cake "$s" --baseline kernels/kmeans/assign.cake --baseline-kernel kmeans_assign
done

python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
shapes = dict(l.split() for l in open(os.path.join(out, "campaigns.txt")) if l.strip())
print(f"{'campaign':<16} {'shape':<24} {'run':>4} {'failed':>6} {'gpu_s':>6} {'seed_us':>9} {'best_us':>9} {'x_seed':>7} {'base_us':>9} {'x_base':>7}  reason")
for p in sorted(glob.glob(os.path.join(out, "evolve_*.jsonl"))):
    ev = [json.loads(l) for l in open(p) if l.startswith("{")]
    if not ev:
        print(os.path.basename(p), "no events"); continue
    d = ev[-1]
    shape = shapes.get(d["campaign"], "?")
    f = lambda v, w=9, p=1: ("-" if v is None else f"{v:.{p}f}").rjust(w)
    print(f"{d['campaign']:<16} {str(shape):<24} {d['run']:>4} {d['failed']:>6} {d['gpu_s']:6.1f} {f(d.get('seed_us'))} "
          f"{f(d.get('best_us'))} {f(d.get('speedup_seed'), 7, 3)} {f(d.get('baseline_us'))} {f(d.get('speedup_baseline'), 7, 3)}  {d.get('reason')}")
PY
