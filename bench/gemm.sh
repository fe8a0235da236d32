#!/bin/bash
# bench/gemm.sh — Cake GEMM kernels through `cake run --time` and cuBLAS (torch.matmul)
# side by side, in one invocation on the GPU machine. Prints a table last:
#   shape, kernel, ours µs (median), cuBLAS µs (mean of the medians measured before and
#   after ours), ratio = cuBLAS/ours, rel err, verdict.
# usage: bash bench/gemm.sh [FILE.cake ...]
#   env: CAKE (default bin/cake; the command must accept `run`), ITERS (50),
#        SHAPES ("M,N,K ...": every shape is run and checked against the float64 oracle),
#        TIME_SHAPES (the subset that is also timed against cuBLAS; default the four
#        benchmark shapes), OUT (log folder, default /tmp/cake-gemm)
# Shapes not in TIME_SHAPES (the small ones) are correctness runs only: no timing, no cuBLAS.
# The grid column shows the launch (a grouped raster launches a 1-D grid of every tile).
set -u
CAKE=${CAKE:-bin/cake}
ITERS=${ITERS:-50}
SHAPES=${SHAPES:-"8192,8192,8192 4096,4096,4096 8192,1024,8192 2048,2048,2048 256,512,64 1024,3072,192"}
TIME_SHAPES=${TIME_SHAPES:-"8192,8192,8192 4096,4096,4096 8192,1024,8192 2048,2048,2048"}
OUT=${OUT:-/tmp/cake-gemm}
mkdir -p "$OUT"
if [ $# -gt 0 ]; then KERNELS="$*"; else
	KERNELS="kernels/gemm/gemm_ws_128x256_s4.cake kernels/gemm/gemm_persistent.cake kernels/gemm/gemm_ws_128x128_s5.cake"; fi
here=$(cd "$(dirname "$0")" && pwd)
timed() { case " $TIME_SHAPES " in *" $1 "*) return 0 ;; esac; return 1; }
TORCH_SHAPES=""
for s in $SHAPES; do timed "$s" && TORCH_SHAPES="$TORCH_SHAPES $s"; done
[ -n "$TORCH_SHAPES" ] && python3 "$here/proto/torch_gemm.py" "$ITERS" $TORCH_SHAPES > "$OUT/torch.txt" 2>>"$OUT/stderr.txt"
touch "$OUT/torch.txt"
: > "$OUT/ours.jsonl"
for f in $KERNELS; do
	for s in $SHAPES; do
		IFS=, read M N K <<<"$s"
		if timed "$s"; then t="--time --iters $ITERS"; else t=""; fi
		$CAKE run "$f" M=$M N=$N K=$K $t --timeout 20 --format=json >> "$OUT/ours.jsonl" 2>>"$OUT/stderr.txt" ||
			true
	done
done
[ -n "$TORCH_SHAPES" ] && python3 "$here/proto/torch_gemm.py" "$ITERS" $TORCH_SHAPES >> "$OUT/torch.txt" 2>>"$OUT/stderr.txt"
python3 - "$OUT/ours.jsonl" "$OUT/torch.txt" <<'PY'
import json, sys
ref = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "TORCH":
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        ref.setdefault((int(f[1]), int(f[2]), int(f[3])), []).append(float(kv["median_us"]))
print(f"{'shape':>16} {'kernel':>24} {'grid':>10} {'ours_us':>9} {'cublas_us':>9} {'ratio':>6} {'rel_err':>9} verdict")
nok = nall = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    d = r.get("dims", {})
    shape = (d.get("M"), d.get("N"), d.get("K"))
    t = r.get("time_us", {}).get("median")
    c = ref.get(shape)
    c = sum(c) / len(c) if c else None
    err = r.get("check", {}).get("rel_err")
    g = r.get("launch", {}).get("grid") or []
    g = "x".join(str(x) for x in g if x != 1) or ("1" if g else "?")
    nall += 1
    nok += r["verdict"] == "ok"
    print(f"{'x'.join(map(str, shape)):>16} {r['kernel'][:24]:>24} {g:>10} {t if t else float('nan'):9.1f} "
          f"{c if c else float('nan'):9.1f} {(c / t) if (c and t) else float('nan'):6.3f} "
          f"{err if err is not None else float('nan'):9.2e} {r['verdict']}" + (f" ({r['error']})" if r.get("error") else ""))
print(f"{nok} of {nall} runs ok" + ("" if nall else " (no results: see stderr.txt)"))
PY
