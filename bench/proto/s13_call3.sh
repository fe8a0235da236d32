#!/bin/bash
# bench/proto/s13_call3.sh — session 13 call 3: (1) the KDA prep on a persistent grid against main
# (bench/proto/s12/device_next.sh PART=2: bench/proto/s12/kda_prep_persistent.patch, main and
# the patched set alternating, two rounds, every run checked against the float64 recurrence),
# then (2) the whole GEMM sweep with GRAPHS=1 (host-inclusive and graph-replayed ratios) with
# the retired-workspace fix. Logs in $OUT.
set -u
OUT=${OUT:-/tmp/s13c3}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache
t0=$(date +%s)
PART=2 timeout 300 bash bench/proto/s12/device_next.sh > "$OUT/kda_pers.log" 2>&1
echo "kda part: $(( $(date +%s) - t0 )) s"
OUT=$OUT/lib GRAPHS=1 timeout $(( 570 - ($(date +%s) - t0) )) bash bench/library.sh gemm > "$OUT/gemm.log" 2>&1
rm -rf "$OUT/lib/pkg" "$OUT/lib/smoke" "$OUT/lib/site-cake"
cat "$OUT/kda_pers.log"
grep -A12 "== summary ==" "$OUT/gemm.log"
