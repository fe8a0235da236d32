#!/bin/bash
# bench/proto/s21/call5.sh — session 21, device call 5: main with the paired state pass chosen
# by kda_state_paired: (1) `bench/library.sh kda` (every route of libcake_kda.so, the two paired
# split routes included, from C and from torch, against a float64 recurrence); (2) the paper
# table side by side: Cake's default chain (now kda_split32_state2_lb where one CTA per value half
# would take more than a wave of the SMs), FLA 0.6.0's Triton path and FlashKDA on the same
# inputs (`KDA_CASES=paper sh bench/kda.sh`, T = 8192 six shapes and T = 32768). Carry bin, .whl
# and .baselines (with fkda-site, the FlashKDA package call 1 built). Logs under $OUT; table last.
set -u
OUT=${OUT:-/tmp/cake-s21c5}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-580} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
OUT=$OUT/lib timeout "${LIB_S:-120}" bash bench/library.sh kda > "$OUT/library.txt" 2>&1
echo "library rc $? at $(($(date +%s) - T0)) s" >> "$OUT/library.txt"
grep -E "route split|paired|kda smoke|check kda|summary" "$OUT/library.txt" | tail -8
KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY="${KDA_ONLY:-T8192|T32768}" timeout "$(left)" \
	sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
grep -o '"kernel":"[^"]*"' "$OUT/kda_paper.txt" | sort | uniq -c
echo "== paper"; python3 bench/proto/s19/paper_table.py "$OUT/fla.jsonl"
tail -2 "$OUT/kda_paper.txt"
echo "total $(($(date +%s) - T0)) s"
