#!/bin/bash
# bench/proto/s19/call2.sh — session 19, device call 2: the paper table's six T = 8192 shapes
# (H = 96 and 64; one sequence, six mixed lengths, 8 x 1024; lambda = -5, f32 state) with main's
# new default chain (32-token chunks), FLA 0.6.0's Triton path (FLA_FLASH_KDA=0) and FlashKDA
# (the package call 1 built, carried as .baselines/fkda-site) on the same inputs:
# `KDA_CASES=paper KDA_ONLY=T8192 sh bench/kda.sh`. Logs under $OUT; the table last.
set -u
OUT=${OUT:-/tmp/cake-s19c2}
mkdir -p "$OUT"
T0=$(date +%s)
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY="${KDA_ONLY:-T8192}" timeout $((${DEADLINE:-575} - ($(date +%s) - T0))) \
	sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
echo "== paper"; python3 bench/proto/s19/paper_table.py "$OUT/fla.jsonl"
tail -3 "$OUT/kda_paper.txt"
echo "total $(($(date +%s) - T0)) s"
