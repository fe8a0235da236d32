#!/bin/bash
# bench/gemm_interleaved.sh — the 8192^3 comparison repeated in ROUNDS alternating rounds
# (cuBLAS, then each Cake kernel, then the hand-written prototype variants), so that clock
# and power drift during the call hit every contender alike. Prints one line per measurement
# and a per-contender median of the round medians last.
# usage (GPU machine, repo root): CAKE=build/dev/cake ROUNDS=3 bash bench/gemm_interleaved.sh
set -u
CAKE=${CAKE:-bin/cake}; ROUNDS=${ROUNDS:-3}; ITERS=${ITERS:-50}; OUT=${OUT:-/tmp/cake-gemm}
M=${M:-8192}; N=${N:-8192}; K=${K:-8192}
mkdir -p "$OUT"; export XDG_CACHE_HOME=/tmp/cake-cache
log=$OUT/interleaved.txt; : > "$log"
for r in $(seq 1 "$ROUNDS"); do
	python3 bench/proto/torch_gemm.py "$ITERS" "$M,$N,$K" | awk -v r=$r '{split($5,a,"=");print "round",r,"cublas",substr(a[2],1)}' >> "$log"
	for f in kernels/gemm/gemm_ws_128x256_s4.cake kernels/gemm/gemm_persistent.cake; do
		us=$($CAKE run "$f" M=$M N=$N K=$K --time --iters "$ITERS" --check-rows 64 --format=json 2>>"$OUT/stderr.txt" |
			python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["time_us"]["median"] if r.get("verdict")=="ok" else "FAIL:"+r.get("verdict","?"))')
		echo "round $r $(basename "$f" .cake) $us" >> "$log"
	done
	if [ -x build/dev/proto/bench_gemm ]; then
		build/dev/proto/bench_gemm $M $N $K "$ITERS" 64 v1=build/dev/proto/v1_np_c1_lag0.cubin:1:0 v9=build/dev/proto/v9_p_c2.cubin:2:1 2>>"$OUT/stderr.txt" |
			awk -v r=$r '/^RESULT /{for(i=1;i<=NF;i++) if($i ~ /^median_us=/){split($i,a,"=");print "round",r,"proto_"$2,a[2]}}' >> "$log"
	fi
done
cat "$log"
python3 - "$log" <<'PY'
import sys, statistics as st
d = {}
for l in open(sys.argv[1]):
    f = l.split()
    try: d.setdefault(f[2], []).append(float(f[3]))
    except (ValueError, IndexError): pass
c = st.median(d.get("cublas", [float("nan")]))
for k, v in d.items():
    m = st.median(v)
    print(f"{k:>24} median of rounds {m:9.1f} us   ratio cuBLAS/ours {c/m:.3f}   rounds {' '.join(f'{x:.0f}' for x in v)}")
PY
