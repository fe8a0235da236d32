#!/bin/sh
# cost.sh — `cake cost`, `cake check --cost` and `cake calibrate` on the
# command line: text and JSON output, the refusals (an uncalibrated and an
# unknown target, exit 1 naming the calibrated ones), bad shapes and options
# (exit 2), a kernel without a family (work counted off the plan), the GPU
# rows with their sources, and calibration on the committed measurement
# sets: the real one (tests/data/cost/h200-real.jsonl, bench/RESULTS.md) and
# a synthetic one whose true coefficients are known
# (tests/data/cost/synthetic.jsonl, made by tests/data/cost/make_synthetic.sh).
. "$(dirname "$0")/lib.inc"

G=kernels/gemm/gemm_persistent.cake
S=M=8192,N=8192,K=8192
D=tests/data/cost

run cost "$G" --shape "$S"
expect "cost text" 0 out '^cost of kernel gemm_bf16_persistent at K=8192,M=8192,N=8192 \(gemm\)$' \
	out '^predicted: [0-9.]+ us on h200 \(cost model h200-v[0-9]+\)' out '^bottleneck: (memory|tensor|latency|sync|occupancy|launch)$' \
	out '^parts \(us\): tensor [0-9.]+ +memory' out '^main loop: pipeline ab \(4 stages\) in role mma, 128 iterations'

run cost "$G" --shape "$S" --format=json
expect "cost json" 0 out '"schema":"cake-cost/1"' out '"predicted_us":' out '"bottleneck":' out '"suggestions":\['
if json_valid "cost json parses" "$T/out"; then ok "cost json parses"; else bad "cost json parses" "$(cat "$T/pyerr")"; fi
python3 - "$T/out" <<'EOF' >"$T/py" 2>&1 && ok "cost json: tensor part is 2MNK / 781 TFLOP/s / eff_tensor" || bad "cost json: tensor part" "$(cat "$T/py")"
import json, sys
j = json.load(open(sys.argv[1]))
m = json.load(open("data/cost/" + j["cost"]["model"] + ".json"))
want = 2 * 8192**3 / 781e12 * 1e6 / m["coefficients"]["eff_tensor"]
got = j["cost"]["parts"]["tensor_us"]
assert abs(got - want) < 1e-3 * want, (got, want)
assert j["cost"]["launch"]["tiles"] == 2048 and j["cost"]["launch"]["persistent"]
assert j["cost"]["work"]["flops"] == 2 * 8192**3
EOF

run cost "$G" --shape "$S" --target b200
expect "cost --target b200 (declared, not calibrated)" 1 err 'not calibrated' err 'calibrated targets: h200, h100'
run cost "$G" --shape "$S" --target mi300
expect "cost --target mi300 (unknown)" 1 err "unknown cost target 'mi300'; calibrated targets: h200, h100"
run cost "$G" --shape "$S" --target h100
expect "cost --target h100" 0 out 'on h100 \(cost model h100-v2\)'

run cost "$G" --shape M=8192,N=8192
expect "cost: shape misses a dim" 2 err "must bind every dim of kernel 'gemm_bf16_persistent': missing K"
run cost "$G" --shape M=8192,N=8192,K=8192,Q=3
expect "cost: unknown dim" 2 err "'Q' is not a dim of kernel"
run cost "$G" --shape M=x,N=8192,K=8192
expect "cost: bad value" 2 err "dim M must be a positive integer"
run cost "$G"
expect "cost without --shape" 2 err '--shape NAME=VALUE,... is required'
run cost --shape "$S"
expect "cost without FILE" 2 err 'no input FILE'
run cost "$G" --shape "$S" --format=yaml
expect "cost --format=yaml" 2 err "unknown --format 'yaml'"
run cost kernels/kmeans/assign.cake --shape B=32,N=65536,K=1024
expect "cost: two kernels, none named" 2 err 'holds 2 kernels; name one \(--kernel\)'
run cost "$FIX/syntax_error.cake" --shape N=1
expect "cost: a file with errors" 1 err 'error'
run cost "$G" --shape M=8000,N=8192,K=8192
expect "cost: outside the domain still predicts, with a note" 0 out "^note: the shape is outside the kernel's domain \(M % 128 == 0\)"
run cost "$G" --shape "$S" --model /nonexistent.json
expect "cost --model missing" 2 err "cannot read cost model '/nonexistent.json'"

run cost kernels/kmeans/update_sorted.cake --kernel kmeans_fill --shape B=32,N=65536,K=1024
expect "cost: no family (plan-counted work)" 0 out 'no family: work counted off the plan' out '^work: .*\(plan\)$'
run cost kernels/kmeans/update_sorted.cake --kernel kmeans_segsum --shape B=32,N=65536,K=1024
expect "cost: data-dependent trip count is estimated and said" 0 out '^note: trip count of `for t` depends on data: estimated 64'
# --lines: the statements ranked by the work counted for them, the model's time apportioned
run cost kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --shape B=1,T=8192,H=64,NS=128 --lines 4
expect "cost --lines: a table of the heaviest statements" 0 \
	out '^statements, by the work counted per tile \(the 4 heaviest of [0-9]+; vector and tensor time of role math' \
	out '^  [0-9]+:[0-9]+ +math +[1-9][0-9.e+]* +[1-9][0-9.]*% +[1-9][0-9.]* '
run cost kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --shape B=1,T=8192,H=64,NS=128 --lines 2 --format=json
expect "cost --lines --format=json: a lines array" 0 out '"lines":\[\{"line":[0-9]+,"col":[0-9]+,"role":"math","vec_ops":[1-9]'
run cost kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_prep_lb --shape B=1,T=8192,H=64,NS=128 --lines 0
expect "cost --lines 0: a usage error" 2 err "--lines takes a count of statements, 1..128 \(got '0'\)"
# the bounds through lets (n = Ord[q]): the slots over the sequences the grid's q axis walks
run cost kernels/kda/kda_prefill_split_lb.cake --kernel kda_split_state_lb --shape B=8,T=1024,H=64,N=8,N1=9,NS=128,NP=1
expect "cost: a data-bounded loop through lets is the indexed extent over the grid tiles of its bounds" 0 \
	out '^note: trip count of `for c` depends on data: estimated 16 \(the extent it indexes, 128, over the 8 grid tiles' \
	out '^main loop: pipeline ch \(2 stages\) in role math, 16 iterations per tile'

run cost --targets
expect "cost --targets" 0 out '^h200 \(NVIDIA H200 SXM 141 GB\), compile target sm_90a, calibrated' \
	out '^b200 .*declared, not calibrated' out 'hbm_bw +4\.17e\+12 +measured +ANCHORS.md' out 'mma_bf16 +7\.81e\+14 +measured'
run cost --targets --format=json
expect "cost --targets json" 0 out '"schema":"cake-cost-targets/1"'
if json_valid "cost --targets json parses" "$T/out"; then ok "cost --targets json parses"; else bad "cost --targets json parses" "$(cat "$T/pyerr")"; fi

# check --cost
run check --cost --shape "$S" "$G"
expect "check --cost" 0 out '^cost of kernel gemm_bf16_persistent at K=8192,M=8192,N=8192' out '^predicted: '
run check --cost "$G"
expect "check --cost without --shape" 2 err '--cost needs --shape'
run check --shape "$S" "$G"
expect "check --shape without --cost" 2 err '--shape needs --cost'
run check --cost --shape "$S" --format=json "$G"
expect "check --cost --format=json" 2 err '--cost prints text'
run check --cost --shape "$S" --target b200 "$G"
expect "check --cost --target b200" 1 out 'not calibrated'

# calibrate: the real measurements
run calibrate --data "$D/h200-real.jsonl" --sources "$D/src"
expect "calibrate real data" 0 out '^calibrate h200: 17 measurements used of 17 rows' out '^held out' \
	out '^  gemm +[0-9]+ samples?, [0-9]+ groups? of 2\+, [0-9]+ pairs?: tau' out 'median error'
run calibrate --data "$D/h200-real.jsonl" --sources "$D/src" --format=json
expect "calibrate real data json" 0 out '"schema":"cake-calibrate/1"'
if json_valid "calibrate json parses" "$T/out"; then ok "calibrate json parses"; else bad "calibrate json parses" "$(cat "$T/pyerr")"; fi
M=data/measure
ALL="--data $D/h200-real.jsonl --data $M/h200-gemm-clean-start-2026-12-01.jsonl --data $M/h200-gemm-clean-start-v3-2026-12-01.jsonl --data $M/h200-kmeans-clean-start-2026-12-01.jsonl"
ALL="$ALL --data $M/h200-gemm-calib-2026-12-01.jsonl --data $M/h200-kmeans-calib-2026-12-01.jsonl --sources $D/src"
run calibrate $ALL --rank-weight 30 -o "$T/h200-v7.json"
expect "calibrate -o (every committed measurement set)" 0 out "^wrote $T/h200-v7.json \(version h200-v7\)" \
	out '^calibrate h200: 483 measurements used of 483 rows' out '^  kmeans_assign +[0-9]+ samples, 4 groups of 2\+'
cmp -s "$T/h200-v7.json" data/cost/h200-v3.json && bad "v7 differs from v3 only in its version" "identical" || true
sed 's/h200-v7/h200-v3/' "$T/h200-v7.json" | cmp -s - data/cost/h200-v3.json \
	&& ok "the committed h200-v3 is this fit (same coefficients and data hash)" \
	|| bad "the committed h200-v3 is this fit" "$(diff "$T/h200-v7.json" data/cost/h200-v3.json)"
run cost "$G" --shape "$S" --model data/cost/h200-v2.json
expect "cost --model h200-v2 (before handoff_us: it reads neutral)" 0 out 'cost model h200-v2'
run cost "$G" --shape "$S" --model data/cost/h200-v1.json
expect "cost --model h200-v1 (before the v2 coefficients: they read neutral)" 0 out 'cost model h200-v1'
run cost "$G" --shape "$S"
expect "cost: the default is the newest version" 0 out 'cost model h200-v3'
run cost "$G" --shape "$S" --model "$T/h200-v7.json"
expect "cost --model the new version" 0 out 'cost model h200-v7'
mkdir -p "$T/models" && cp "$T/h200-v7.json" "$T/models/"
CAKE_COST_DIR="$T/models" run cost "$G" --shape "$S"
expect "CAKE_COST_DIR: the highest version wins" 0 out 'cost model h200-v7'

# calibrate: the synthetic set recovers its coefficients
run calibrate --data "$D/synthetic.jsonl" --sources "$D/src" --lambda 0.0001 --rank-weight 0 --split group --format=json
expect "calibrate synthetic data" 0 out '"schema":"cake-calibrate/1"'
python3 - "$T/out" "$D/synthetic-truth.json" <<'EOF' >"$T/py" 2>&1 && ok "calibrate recovers the synthetic truth" || bad "calibrate recovers the synthetic truth" "$(cat "$T/py")"
import json, sys
j = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))["coefficients"]
for k, tol in (("eff_tensor", 0.03), ("gmem_lat_scale", 0.06), ("launch_us", 0.05)):
    got = j["coefficients"][k]["fitted"]
    assert abs(got - t[k]) <= tol * t[k], (k, got, t[k])
assert j["heldout"]["mape"] < 0.03, j["heldout"]
assert j["heldout"]["tau"] is None or j["heldout"]["tau"] >= 0.9, j["heldout"]
EOF

# calibrate: refusals and bad input
run calibrate --data "$D/h200-real.jsonl" --target b200
expect "calibrate --target b200" 1 err 'not calibrated'
run calibrate
expect "calibrate without input" 2 err 'give one of --store PATH and --data FILE.jsonl'
run calibrate --data /nonexistent.jsonl
expect "calibrate missing data" 2 err "cannot read '/nonexistent.jsonl'"
printf '{"format":"cake-measure/1","candidate":"00","kernel":"k","shape":"N=1","verdict":"ok","median_us":5}\nnot json\n' >"$T/bad.jsonl"
run calibrate --data "$T/bad.jsonl"
expect "calibrate: no usable row" 1 err 'no usable measurement' 
run calibrate --data "$D/h200-real.jsonl" --sources "$D/src" --holdout 0
expect "calibrate --holdout 0" 2 err 'needs a positive N'
run calibrate --data "$D/h200-real.jsonl" --split sideways
expect "calibrate --split sideways" 2 err "unknown --split 'sideways'"
run calibrate --data "$D/h200-real.jsonl" --sources "$D/src" --split group
expect "calibrate --split group" 0 out '1 in 3 \(family, shape\) groups|held out'
run calibrate --data $M/h200-kmeans-clean-start-2026-12-01.jsonl
expect "calibrate: texts from the .candidates.jsonl beside the data" 0 out '^calibrate h200: 111 measurements used of 111 rows'

finish
