#!/bin/bash
# bench/proto/s9/device_ab.sh — session 9, one device call: the split prefill over chunk slots
# (the app's default since session 9: packed sequences and any T >= 64) checked and timed at
# the paper's shapes, the six mixed lengths included, T = 32768 and a T that 64 does not
# divide, for each binary of CAKES (an A/B: main against the ex2.approx.ftz exp of
# bench/proto/s8/exp_ftz.patch), alternating binaries shape by shape; the per-token varlen
# kernel at the six mixed lengths (what the six-mixed shapes ran before); then
# compute-sanitizer over the split cases for each binary. Logs in s9.tgz; a table last.
#   OUT=$OUT CAKES="bin/cake .abbin/cake-exp" bash bench/proto/s9/device_ab.sh
set -u
CAKES=${CAKES:-bin/cake}
RET=${OUT:-/tmp/cake-s9}
W=/tmp/cake-s9-work
mkdir -p "$W" "$RET"
trap 'tar czf "$RET/s9.tgz" -C "$W" .' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
MIX=1300,547,2048,963,271,3063
SHAPES="H64_1seq:--shape=B=1,H=64,T=8192 H64_6mixed:--seqlens=$MIX,--shape=H=64 H64_8x1024:--shape=B=8,H=64,T=1024
H96_1seq:--shape=B=1,H=96,T=8192 H96_6mixed:--seqlens=$MIX,--shape=H=96 H96_8x1024:--shape=B=8,H=96,T=1024
H32_T32768:--shape=B=1,H=32,T=32768 H64_T8000:--shape=B=1,H=64,T=8000"
run() {   # run TAG BIN ARGS...: one checked, timed cake kda run into $W/TAG.json
	local tag=$1 bin=$2
	shift 2
	timeout 120 "$bin" kda --mode prefill --lower-bound -5 --iters 10 --check-heads 8 --format=json "$@" > "$W/$tag.json" 2> "$W/$tag.err"
}
for s in $SHAPES; do
	name=${s%%:*}
	args=$(echo "${s#*:}" | sed 's/^--seqlens=\([0-9,]*\),--shape=/--seqlens \1 --shape /; s/^--shape=/--shape /')
	i=0
	for c in $CAKES; do
		# shellcheck disable=SC2086
		run "${name}_b$i" "$c" $args
		i=$((i + 1))
	done
done
run H64_6mixed_pertoken bin/cake --seqlens $MIX --shape H=64 --kernel kernels/kda/kda_prefill.cake:kda_prefill_varlen_lb
run H96_6mixed_pertoken bin/cake --seqlens $MIX --shape H=96 --kernel kernels/kda/kda_prefill.cake:kda_prefill_varlen_lb
i=0
for c in $CAKES; do
	OUT="$W/san_b$i" CAKE=$c SANITIZE_CASES=split timeout 200 bash bench/sanitize.sh > "$W/san_b$i.txt" 2>&1
	i=$((i + 1))
done
echo "binaries: $CAKES"
for f in "$W"/*.json; do
	python3 - "$f" <<'PY' 2>/dev/null || echo "$(basename "$f") FAIL: $(head -c 300 "${f%.json}.err")"
import json, sys
d = json.load(open(sys.argv[1])); c = d.get('check', {})
st = ' '.join('%.1f' % v for v in d.get('stage_us', {}).values())
print('%-26s %9.1f us  [%s]  %s o %s st %s' % (sys.argv[1].split('/')[-1][:-5], d['time_us']['median'], st,
      'ok' if d['ok'] else 'MISMATCH', c.get('o_rel_err'), c.get('state_rel_err')))
PY
done
for f in "$W"/san_b*.txt; do echo "== $f"; tail -14 "$f"; done
