#!/bin/bash
# bench/proto/s10/device_c3.sh — session 10, device call 3: (1) the GEMM sweep again with the
# dispatcher as landed (stream-K from 4 row blocks, GEMM_SK_FIXED 14: the rule read from call
# 2), every route forced beside it; (2) bench/kda.sh's bf16-state cases at the six paper shapes
# against FlashKDA (the package call 1 built, carried in .baselines/fkda-site) and FLA, same
# inputs. PARTS="lib kda" (default) picks the parts. Logs in c3.tgz.
set -u
RET=${OUT:-/tmp/cake-s10c3}
W=/tmp/cake-s10c3-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/c3.tgz" --exclude=pkg --exclude=site-cake --exclude=smoke --exclude="*.bin" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
t0=$(date +%s)
[[ " ${PARTS:-lib kda} " == *" lib "* ]] && OUT="$W/lib" timeout -k 10 ${LIB_LIMIT:-200} bash bench/library.sh gemm > "$W/library.txt" 2>&1
echo "library.sh exit $? $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
t0=$(date +%s)
[[ " ${PARTS:-lib kda} " == *" kda "* ]] && KDA_CASES=prefill KDA_ONLY=bf16 KDA_BENCH_DIR="$W/kda" timeout -s INT -k 20 ${KDA_LIMIT:-250} sh bench/kda.sh > "$W/kda.txt" 2>&1
echo "kda.sh exit $? $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
cat "$W/times.txt"
grep -A12 '== summary' "$W/library.txt"
tail -12 "$W/kda.txt"
