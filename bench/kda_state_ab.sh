#!/bin/sh
# bench/kda_state_ab.sh — A/B of the split prefill's state kernels on the GPU host: the chain
# kda_split_prep_lb + STATE + kda_split_tail (kernels/kda/kda_prefill_split_lb.cake) with
# STATE = kda_split_state_lb (the app's default) and kda_split_statet_lb (the transposed
# products: S^T and v'^T as wgmma register operands, no shared-memory round trip), and their
# bf16-state twins, on the paper's prefill shapes and T = 32768, H = 32. Each case runs both
# chains ROUNDS times, alternating, through `cake kda` (checked against the float64
# recurrence; per-stage medians from --iters extra launches); the table printed last has the
# layer and state-stage medians of each and the ratio.
#
#   [CAKE=bin/cake] [ROUNDS=2] [ITERS=10] [CHECK_HEADS=4] [OUT=DIR] [AB_ONLY=REGEX] [F=FILE] sh bench/kda_state_ab.sh
#
# F: another kda_prefill_split_lb.cake holding the same kernel names (a candidate, e.g. the
# file with bench/proto/s15/statet_3stage.patch applied).
#
# Exit status 1 when any check failed.
set -u
cd "$(dirname "$0")/.." || exit 2
CAKE=${CAKE:-bin/cake}
OUT=${OUT:-/tmp/cake-kda-ab}
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-10}
F=${F:-kernels/kda/kda_prefill_split_lb.cake}
mkdir -p "$OUT"
: > "$OUT/ab.tsv"
bad=0
# one NAME STATE ARGS...: one run of the chain with state kernel STATE, its layer and state medians
one() {
	name=$1 st=$2
	shift 2
	j="$OUT/$name.$st.json"
	if "$CAKE" kda --mode prefill --lower-bound -5 --iters "$ITERS" --check-heads "${CHECK_HEADS:-4}" --format=json "$@" \
		--kernel "$F:kda_split_prep_lb+$st+kda_split_tail" >"$j" 2>"$OUT/$name.$st.err"; then
		python3 - "$j" "$name" "$st" >>"$OUT/ab.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = d.get("stage_us") or {}
print("%s\t%s\t%.1f\t%s\t%s" % (sys.argv[2], sys.argv[3], d["time_us"]["median"],
      ("%.1f" % st[sys.argv[3]]) if sys.argv[3] in st else "-", "ok" if d["check"]["ok"] else "FAIL"))
PY
	else
		echo "$name: $st failed: $(head -3 "$OUT/$name.$st.err")"
		printf '%s\t%s\t-\t-\tFAIL\n' "$name" "$st" >>"$OUT/ab.tsv"
		bad=1
	fi
}
# ab NAME STATE_A STATE_B ARGS...
ab() {
	name=$1 a=$2 b=$3
	shift 3
	[ -n "${AB_ONLY:-}" ] && ! printf '%s\n' "$name" | grep -Eq "$AB_ONLY" && return
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		one "$name" "$a" "$@"
		one "$name" "$b" "$@"
		r=$((r + 1))
	done
}
MIX=1300,547,2048,963,271,3063
for H in 64 96; do
	ab "H${H}_1seq" kda_split_state_lb kda_split_statet_lb --shape B=1,T=8192,H=$H
	ab "H${H}_mixed" kda_split_state_lb kda_split_statet_lb --seqlens $MIX --shape H=$H
	ab "H${H}_8x1024" kda_split_state_lb kda_split_statet_lb --shape B=8,T=1024,H=$H
done
ab "H32_T32768" kda_split_state_lb kda_split_statet_lb --shape B=1,T=32768,H=32
ab "H64_1seq_bf16" kda_split_state_bf16_lb kda_split_statet_bf16_lb --state bf16 --shape B=1,T=8192,H=64
# the table: per case and kernel the best layer and state medians over the rounds, then the ratio
python3 - "$OUT/ab.tsv" <<'PY'
import sys, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    n, k, lay, stg, ok = line.rstrip("\n").split("\t")
    r = rows.setdefault(n, collections.OrderedDict()).setdefault(k, [float("inf"), float("inf"), True])
    if lay != "-": r[0] = min(r[0], float(lay))
    if stg != "-": r[1] = min(r[1], float(stg))
    r[2] = r[2] and ok == "ok"
print("%-16s %-26s %10s %10s   %-26s %10s %10s %7s" % ("case", "A", "layer us", "state us", "B", "layer us", "state us", "A/B"))
for n, ks in rows.items():
    (ka, a), (kb, b) = list(ks.items())[:2]
    print("%-16s %-26s %10.1f %10.1f   %-26s %10.1f %10.1f %7.3f%s" % (n, ka, a[0], a[1], kb, b[0], b[1], a[0] / b[0],
          "" if a[2] and b[2] else "  CHECK FAILED"))
PY
exit $bad
