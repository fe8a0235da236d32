#!/bin/bash
# bench/proto/s16/call2.sh — session 16, device call 2 (H200), after call 1's winners were
# adopted on main: (1) the paper's table, `KDA_CASES=paper sh bench/kda.sh` (Cake's default
# chain, FLA's Triton path and FlashKDA side by side on the same inputs; FlashKDA from the
# package call 1 built, .baselines/fkda-site); (2) the kda library's checks
# (`bench/library.sh check kda`); (3) compute-sanitizer on the default split chain while
# the deadline allows. Logs in $OUT; the tables last.
set -u
OUT=${OUT:-/tmp/cake-s16c2}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-575} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper timeout 330 sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
OUT=/tmp/lib timeout $(($(left) - 60 > 60 ? $(left) - 60 : 60)) bash bench/library.sh check kda > "$OUT/lib.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/lib.txt"
cp /tmp/lib/kda_smoke.log "$OUT/" 2>/dev/null
if [ "$(left)" -gt 60 ]; then
	SANITIZE_CASES='kda_split_T200|kda_split_varlen' OUT=/tmp/san timeout $(($(left) - 10)) bash bench/sanitize.sh > "$OUT/san.txt" 2>&1
fi
tar -C /tmp --exclude='*.bin' --exclude='*.npy' --exclude='*.pt' -czf "$OUT/logs.tgz" kb lib san 2>/dev/null
echo "== paper"; tail -30 "$OUT/kda_paper.txt"
echo "== lib"; tail -14 "$OUT/lib.txt"
echo "== san"; tail -8 "$OUT/san.txt" 2>/dev/null
echo "total $(($(date +%s) - T0)) s"
