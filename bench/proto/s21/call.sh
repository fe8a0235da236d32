#!/bin/bash
# bench/proto/s21/call.sh — session 21, one device call: (1) FlashKDA built in the background from
# .baselines (public source, git-ignored; returned as $OUT/fkda-site.tgz for later calls), (2) the
# kda library's GPU checks (`bench/library.sh kda`: every route of libcake_kda.so, the 32-token
# chain, from C and from torch, against a float64 recurrence), (3) the paper table side by side:
# Cake's default chain, FLA 0.6.0's Triton path and FlashKDA on the same inputs
# (`KDA_CASES=paper sh bench/kda.sh`, T = 8192 six shapes, then T = 32768 with the time left).
# Logs under $OUT; the table last.
set -u
OUT=${OUT:-/tmp/cake-s21}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-580} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ -d .baselines/fkda-site/flash_kda ]; then BG=
else
	( cd .baselines && MAX_JOBS=12 NVCC_THREADS=1 bash build_flashkda.sh flashkda /tmp/fkda-site > "$OUT/fkda_build.log" 2>&1 &&
		tar -C /tmp -czf "$OUT/fkda-site.tgz" fkda-site && echo "built at $(($(date +%s) - T0)) s" >> "$OUT/fkda_build.log" ) &
	BG=$!
fi
OUT=$OUT/lib timeout "${LIB_S:-150}" bash bench/library.sh kda > "$OUT/library.txt" 2>&1
echo "library rc $? at $(($(date +%s) - T0)) s" >> "$OUT/library.txt"
tail -4 "$OUT/library.txt"
if [ -n "$BG" ]; then wait "$BG"; [ -d /tmp/fkda-site/flash_kda ] && ln -sfn /tmp/fkda-site .baselines/fkda-site; fi
tail -2 "$OUT/fkda_build.log" 2>/dev/null
KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY="${KDA_ONLY:-T8192|T32768}" timeout "$(left)" \
	sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
echo "== paper"; python3 bench/proto/s19/paper_table.py "$OUT/fla.jsonl"
tail -3 "$OUT/kda_paper.txt"
echo "total $(($(date +%s) - T0)) s"
