#!/bin/bash
# bench/proto/s17/call3.sh — session 17, device call 3: (1) the 16-token chain with
# trisolve(akk, 16) and the state's o^T products left in flight (wgmma_wait 2), the 32-token
# chain (kda_prefill_split32_lb.cake) against main
# (2rounds+blocksolve), and main's chain with kda_split_statet_lb in the state's place,
# alternating on H = 64 one sequence and 8 x 1024; (2) the rest of the paper table that call 2's
# 330 s did not reach: `KDA_CASES=paper KDA_ONLY='H64|T32768' sh bench/kda.sh` (Cake, FLA's
# Triton path and FlashKDA on the same inputs). Logs under $OUT; tables last.
set -u
OUT=${OUT:-/tmp/cake-s17c3}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((${DEADLINE:-560} - ($(date +%s) - T0))); }
export XDG_CACHE_HOME=/tmp/cake-cache
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
C16=bench/proto/s17/kda_prefill_split16_lb.cake:kda_split16_prep_lb+kda_split16_state_lb+kda_split_tail
C32=kernels/kda/kda_prefill_split_lb.cake:kda_split32_prep_lb+kda_split32_state_lb+kda_split_tail
CT=kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_statet_lb+kda_split_tail
one() {
	v=$1; shift
	kd=()
	[ "$v" = s16 ] && kd=(--kernel "$C16")
	[ "$v" = s32 ] && kd=(--kernel "$C32")
	[ "$v" = statet ] && kd=(--kernel "$CT")
	r=$(timeout 90 bin/cake kda --mode prefill --lower-bound -5 "$@" --iters 10 --check-heads 4 "${kd[@]}" 2>&1 |
		grep -E 'time|stage|check|FAIL|error' | tr '\n' ' ')
	echo "$v $*: $r"
}
for round in $(seq 1 "${ROUNDS:-2}"); do
	for s in "--shape B=1,H=64,T=8192" "--shape B=8,H=64,T=1024"; do
		for v in main s16 s32 statet; do
			# shellcheck disable=SC2086
			one $v $s >> "$OUT/ab.log" 2>&1
		done
	done
done
echo "A/B done at $(($(date +%s) - T0)) s"
KDA_BENCH_DIR=/tmp/kb KDA_CASES=paper KDA_ONLY="${KDA_ONLY:-H64|T32768}" timeout $(($(left) - 15)) sh bench/kda.sh > "$OUT/kda_paper.txt" 2>&1
echo "rc $? at $(($(date +%s) - T0)) s" >> "$OUT/kda_paper.txt"
grep -h '"case"' "$OUT/kda_paper.txt" > "$OUT/fla.jsonl"
echo "== A/B"; sed -E 's/ +/ /g; s/\(medians, timed apart\)//; s/CUDA events, median of 10 launches//' "$OUT/ab.log"
echo "== paper"; python3 - "$OUT/fla.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try: d = json.loads(l)
    except Exception: continue
    print(d["case"], "cake", round(d["cake_us"], 1), "fla", round(d["fla_us"], 1), "fkda", d.get("flashkda_us") and round(d["flashkda_us"], 1),
          "vsFLA", round(d["speedup"], 3), "vsFKDA", d.get("speedup_flashkda") and round(d["speedup_flashkda"], 3), "ok", d["cake_vs_fla_ok"])
PY
tail -3 "$OUT/kda_paper.txt"
echo "total $(($(date +%s) - T0)) s"
