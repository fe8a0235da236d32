#!/bin/bash
# bench/proto/s13_call6.sh — session 13 call 6: where the KDA prep's time goes now (the persistent
# prep with trisolve(L)). ncu --set full over one prep launch at B = 1, H = 64, T = 1024 (512 tiles
# on the persistent CTAs), the cubin built with -lineinfo (CAKE_NVRTC_LINEINFO=1) and disassembled
# with its line table (nvdisasm -g), so that each SASS instruction's samples map to a line of the
# generated CUDA and from there to a Cake statement (the `// file:line:` comments; done here by
# bench/proto/s13_prep_lines.py). Files in $OUT: details.txt, sass.csv, prep.dis, prep.cu.
set -u
OUT=${OUT:-/tmp/s13c6}
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cake-cache-li CAKE_NVRTC_LINEINFO=1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
NVD=$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)
bin/cake build kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --emit=cubin -o "$OUT/prep.cubin" > "$OUT/cubin.log" 2>&1
bin/cake build kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --emit=cuda -o "$OUT/prep.cu" >> "$OUT/cubin.log" 2>&1
"$NVD" -g -c "$OUT/prep.cubin" > "$OUT/prep.dis" 2>&1
timeout 300 "$NCU" --launch-count 1 -k regex:split_prep --set full --import-source yes -o "$OUT/prep" -f \
	bin/cake kda --mode prefill --shape B=1,H=64,T=1024 --lower-bound -5 --no-check --iters 1 --warmup 0 > "$OUT/ncu_run.txt" 2>&1
"$NCU" --import "$OUT/prep.ncu-rep" --page details > "$OUT/details.txt" 2>&1
"$NCU" --import "$OUT/prep.ncu-rep" --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1
rm -f "$OUT/prep.ncu-rep"
tail -3 "$OUT/ncu_run.txt"
grep -E "Duration|Registers Per|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Memory Throughput|Compute \(SM\) Th" "$OUT/details.txt" | head -12
wc -l "$OUT/sass.csv" "$OUT/prep.dis"; head -c 400 "$OUT/sass.csv"; echo; grep -m3 "line" "$OUT/prep.dis"
