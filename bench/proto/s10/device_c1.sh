#!/bin/bash
# bench/proto/s10/device_c1.sh — session 10, device call 1: (1) FlashKDA built from
# .baselines/flashkda and its installed package packed into $OUT/fkda_site.tgz (git-ignored when
# brought back: later calls carry it instead of building); (2) compute-sanitizer over the split
# prefill's cases, the bf16-state twin included (SANITIZE_CASES=split); (3) bench/kda.sh's
# bf16-state cases at the six paper shapes against FlashKDA and FLA, same inputs; (4) ncu of one
# prep launch (details page: throughput, occupancy, stalls). Logs in c1.tgz; tables last.
set -u
RET=${OUT:-/tmp/cake-s10c1}
W=/tmp/cake-s10c1-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/c1.tgz" --exclude="*.bin" --exclude="*.ncu-rep" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
t0=$(date +%s)
if [ -d .baselines/fkda-site/flash_kda ]; then
	cp -r .baselines/fkda-site /tmp/cake-fkda-site
else
	bash .baselines/build_flashkda.sh .baselines/flashkda /tmp/cake-fkda-site > "$W/fkda_build.txt" 2>&1
	tar czf "$RET/fkda_site.tgz" -C /tmp/cake-fkda-site .
fi
export PYTHONPATH=/tmp/cake-fkda-site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import flash_kda; print("flash_kda", flash_kda.__file__)' >> "$W/fkda_build.txt" 2>&1
echo "fkda $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
t0=$(date +%s)
OUT="$W/san" SANITIZE_CASES=split timeout 200 bash bench/sanitize.sh > "$W/sanitize.txt" 2>&1
echo "sanitize exit $? $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
t0=$(date +%s)
KDA_CASES=prefill KDA_ONLY=bf16 KDA_BENCH_DIR="$W/kda" timeout -s INT -k 20 200 sh bench/kda.sh > "$W/kda.txt" 2>&1
echo "kda.sh exit $? $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
t0=$(date +%s)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SPLIT=kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail
timeout 150 "$NCU" --launch-count 1 -k regex:split_prep --set full -o "$W/prep" -f \
	bin/cake kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --kernel $SPLIT --no-check --iters 1 --warmup 0 \
	> "$W/ncu_run.txt" 2>&1
"$NCU" --import "$W/prep.ncu-rep" --page details > "$W/ncu_details.txt" 2>&1
"$NCU" --import "$W/prep.ncu-rep" --page raw --csv > "$W/ncu_raw.csv" 2>&1
echo "ncu $(( $(date +%s) - t0 )) s" >> "$W/times.txt"
cat "$W/times.txt"
tail -25 "$W/sanitize.txt"
grep -E "Duration|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Theoretical Occ|Memory Throughput|DRAM Throughput|Compute \(SM\) Th|L2 Hit|Stall" "$W/ncu_details.txt" | head -30
tail -22 "$W/kda.txt"
