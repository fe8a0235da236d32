#!/bin/bash
# bench/ncu_bottleneck.sh — does the cost model name the bottleneck an Nsight Compute profile
# shows? (docs/COST.md; the cost-model issue asks for agreement on at least 5 hand-picked
# candidates per family, chosen to differ.) On the GPU host, from the repository root:
#
#   OUT=DIR [CAKE=bin/cake] [NCU=ncu] bash bench/ncu_bottleneck.sh [CASES-FILE]
#
# A case is one line "FAMILY FILE KERNEL SHAPE" (the default list below: five GEMM and five
# k-means kernels at shapes where the model predicts different bottlenecks). For each case:
#   1. `cake cost FILE --kernel KERNEL --shape SHAPE --format=json`: the predicted time and
#      bottleneck class (memory, tensor, latency, sync, occupancy, launch);
#   2. `ncu --clock-control none` over `cake run` (its isolated child launches the kernel; the
#      first launch of KERNEL is profiled): duration, SM and memory throughput, DRAM
#      throughput, and the tensor pipe's activity when the GPU exposes such a metric (the script
#      asks `ncu --query-metrics` which ones exist);
#   3. the profile's class, by fixed thresholds stated here and nowhere tuned to the model:
#        launch   duration < 8 us and no unit above 30 % of its peak
#        tensor   tensor pipe >= 50 % of peak (without that metric: SM throughput >= 60 %)
#        memory   DRAM or memory throughput >= 60 % of peak, above the tensor/SM figure
#        latency  otherwise (no unit near its peak: the time goes to waiting)
#      and the model's class mapped onto the same four (sync and occupancy are latency-like:
#      both mean that no unit is kept busy), reported both exactly and mapped.
# Results: $OUT/ncu_<n>.csv (ncu's raw output), $OUT/ncu.jsonl (one line per case), and the
# table printed last with the agreement counts per family.
set -u
CAKE=${CAKE:-bin/cake}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
OUT=${OUT:-/tmp/cake-ncu}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
mkdir -p "$OUT"
CASES=${1:-}
if [ -z "$CASES" ]; then
	CASES=$OUT/cases.txt
	cat > "$CASES" <<'EOF'
gemm kernels/gemm/gemm_persistent.cake gemm_bf16_persistent M=8192,N=8192,K=8192
gemm kernels/gemm/gemm_ws_128x256_s4.cake gemm_bf16 M=8192,N=1024,K=8192
gemm kernels/gemm/gemm_ws_128x128_s5.cake gemm_bf16_128x128 M=512,N=4096,K=4096
gemm kernels/gemm/seed_naive.cake gemm_seed_naive M=4096,N=4096,K=4096
gemm kernels/gemm/gemm_ws_128x128_s5.cake gemm_bf16_128x128 M=256,N=512,K=64
kmeans kernels/kmeans/assign.cake kmeans_assign B=32,N=65536,K=1024
kmeans kernels/kmeans/seed_naive.cake kmeans_assign_seed_naive B=32,N=65536,K=1024
kmeans kernels/kmeans/assign.cake kmeans_assign_d64 B=8,N=65536,K=256
kmeans kernels/kmeans/assign.cake kmeans_assign B=1,N=4096,K=512
kmeans kernels/kmeans/update_sorted.cake kmeans_segsum B=32,N=65536,K=1024
EOF
fi
# the metrics this GPU exposes (a missing one would fail the whole ncu run)
"$NCU" --query-metrics > "$OUT/metrics.txt" 2>&1
want="gpu__time_duration.sum sm__throughput.avg.pct_of_peak_sustained_elapsed"
want="$want gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed dram__throughput.avg.pct_of_peak_sustained_elapsed"
tensor=""
for m in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active sm__inst_executed_pipe_tensor_op_gmma; do
	if grep -q "^$m " "$OUT/metrics.txt"; then tensor=$m.avg.pct_of_peak_sustained_elapsed; break; fi
done
[ -n "$tensor" ] && want="$want $tensor"
metrics=$(echo $want | tr ' ' ',')
echo "ncu_bottleneck: metrics $metrics" >&2
: > "$OUT/ncu.jsonl"
n=0
while read -r fam file kernel shape; do
	[ -z "${fam:-}" ] || [ "${fam#\#}" != "$fam" ] && continue
	n=$((n + 1))
	cost=$("$CAKE" cost "$file" --kernel "$kernel" --shape "$shape" --format=json 2>"$OUT/cost_$n.err")
	dims=$(echo "$shape" | tr ',' ' ')
	# shellcheck disable=SC2086
	timeout 300 "$NCU" --clock-control none --target-processes all -k "regex:^${kernel}\$" -c 1 --metrics "$metrics" --csv \
		"$CAKE" run "$file" --kernel "$kernel" $dims --timeout 60 > "$OUT/ncu_$n.csv" 2> "$OUT/ncu_$n.err"
	rc=$?
	python3 - "$fam" "$file" "$kernel" "$shape" "$OUT/ncu_$n.csv" "$rc" "$tensor" "$cost" >> "$OUT/ncu.jsonl" <<'PY'
import csv, io, json, sys
fam, file, kernel, shape, path, rc, tensor, cost = sys.argv[1:9]
out = {"family": fam, "file": file, "kernel": kernel, "shape": shape, "ncu_rc": int(rc)}
try:
    c = json.loads(cost)
    cc = c.get("cost", c)
    out["predicted_us"] = cc.get("predicted_us")
    out["model"] = cc.get("bottleneck")
except Exception as e:
    out["model"] = None; out["cost_error"] = str(e)
vals = {}
text = open(path, errors="replace").read()
rows = [l for l in text.splitlines() if l.startswith('"')]
for r in csv.DictReader(io.StringIO("\n".join(rows))):
    name, v = r.get("Metric Name"), r.get("Metric Value", "").replace(",", "")
    try: vals[name] = float(v)
    except ValueError: pass
    if name == "gpu__time_duration.sum" and r.get("Metric Unit") in ("nsecond", "ns"): vals[name] /= 1000.0
    if name == "gpu__time_duration.sum" and r.get("Metric Unit") in ("msecond", "ms"): vals[name] *= 1000.0
dur = vals.get("gpu__time_duration.sum")
sm = vals.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")
mem = max(vals.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 0),
          vals.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0))
tp = vals.get(tensor) if tensor else None
out.update(duration_us=dur, sm_pct=sm, mem_pct=mem, tensor_pct=tp)
if dur is None or sm is None:
    out["profile"] = None
else:
    busy = tp if tp is not None else sm
    thr = 50 if tp is not None else 60
    if dur < 8 and max(sm, mem) < 30: out["profile"] = "launch"
    elif busy >= thr and busy >= mem: out["profile"] = "tensor"
    elif mem >= 60: out["profile"] = "memory"
    else: out["profile"] = "latency"
m = out.get("model")
out["model_mapped"] = {"sync": "latency", "occupancy": "latency"}.get(m, m)
out["agree_exact"] = out["profile"] is not None and m == out["profile"]
out["agree_mapped"] = out["profile"] is not None and out["model_mapped"] == out["profile"]
print(json.dumps(out))
PY
done < "$CASES"
python3 - "$OUT/ncu.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, p=1: "-" if v is None else f"{v:.{p}f}"
print(f"{'family':<7} {'kernel':<26} {'shape':<22} {'pred_us':>8} {'ncu_us':>8} {'sm%':>5} {'mem%':>5} {'tc%':>5}  {'model':<9} {'profile':<8} agree")
for r in rows:
    print(f"{r['family']:<7} {r['kernel']:<26} {r['shape']:<22} {f(r.get('predicted_us')):>8} {f(r.get('duration_us')):>8} "
          f"{f(r.get('sm_pct'),0):>5} {f(r.get('mem_pct'),0):>5} {f(r.get('tensor_pct'),0):>5}  {str(r.get('model')):<9} {str(r.get('profile')):<8} "
          f"{'yes' if r['agree_exact'] else 'mapped' if r['agree_mapped'] else 'NO'}")
for fam in sorted({r['family'] for r in rows}):
    rs = [r for r in rows if r['family'] == fam]
    print(f"{fam}: {sum(r['agree_exact'] for r in rs)}/{len(rs)} exact, {sum(r['agree_mapped'] for r in rs)}/{len(rs)} mapped "
          f"({sum(r['profile'] is None for r in rs)} without a profile)")
PY
