#!/bin/sh
# bench/kda.sh — Cake's Kimi Delta Attention kernels against FLA on a GPU host, side by side.
#
#   make && sh bench/kda.sh [--quick]            (from the repository root, on the H200)
#
# Needs bin/cake (built there or carried), python3 with torch and triton (the GPU image has
# them) and fla-core 0.6.0: installed, or its wheel in .whl/ (the only wheel needed; its one
# dependency, einops, is in the image):
#     python3 -m pip download --no-deps fla-core==0.6.0 -d .whl      (here, once; carry .whl)
# FLA_FLASH_KDA=0 is set, so chunk_kda times FLA's own Triton path even where flash_kda is
# installed (ANCHORS.md: fla-core 0.6 routes to FlashKDA otherwise).
#
# For every case `cake kda` runs a Cake kernel on seeded inputs, checks it against the
# float64 recurrence (its family's tolerance) and times it, dumping every tensor; then one
# python3 process (bench/kda_fla.py) runs FLA on exactly those inputs, times it the same way
# and compares Cake's o and final state with FLA's within the same tolerance.
#   decode   B in {1, 8, 64, 256} x H in {32, 64}, T = 1, f32 state: kda_decode against
#            fused_recurrent_kda, both timed from a CUDA graph of 20 calls (per call); plus a
#            speculative window (T = 4) and a bf16 state at B = 64, H = 32, and the 16-row
#            value split (kda_decode_v16) at B = 1 and 8;
#   prefill  the CAKE paper's shapes (T = 8192, H = 96 and 64: one sequence, six mixed
#            1300,547,2048,963,271,3063, and 8 x 1024), gate lower bound -5 (the paper's form,
#            FlashKDA's only one; timed too when .baselines/flashkda is there): the app's default,
#            the split chunked prefill (kda_prefill_split_lb.cake: the chunk-parallel prep kernel
#            kda_split32_prep_lb, the serial state kernel kda_split32_state_lb stepping every 32
#            tokens and the tail, over 64-token chunk slots on the tensor cores)
#            for every one of them, the six mixed lengths included (packed through cu_seqlens),
#            and the long single sequence of ANCHORS.md (T = 32768, H = 32), against chunk_kda,
#            events; plus the bf16 state, and at H = 64 and one sequence the per-token
#            kda_prefill_lb (what the chunks buy), the plain recurrence (kda_recurrent: what the
#            pipelining buys) and the 16-row value split (kda_prefill_v16), the per-token
#            kda_prefill_varlen_lb at the six mixed lengths, and the fused chunked
#            kda_prefill_chunk_lb at the fixed-length shapes.
# --quick runs two decode and two small prefill cases; KDA_CASES=decode only the decode cases, KDA_CASES=prefill only
# the prefill ones, KDA_CASES=paper only the paper's shapes and T = 32768 with the defaults (no decode), KDA_ONLY=REGEX
# only the cases whose names match (the whole run, FlashKDA's build and FLA's autotuning included, takes over 560 s:
# two device calls). Results: $KDA_BENCH_DIR (default
# /tmp/cake-kda-bench): per case cake.json and FLA's JSON line; the table is printed last.
# Exit status 1 when any Cake check or Cake-vs-FLA comparison failed, 2 for a missing tool.
set -u
cd "$(dirname "$0")/.." || exit 2
CAKE=${CAKE:-bin/cake}
OUT=${KDA_BENCH_DIR:-/tmp/cake-kda-bench}
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
export FLA_FLASH_KDA=0
export PYTHONUNBUFFERED=1
[ -x "$CAKE" ] || { echo "bench/kda.sh: $CAKE is not built (run make)"; exit 2; }
if ! python3 -c 'import fla' 2>/dev/null; then
	if ls .whl/fla_core-*.whl >/dev/null 2>&1; then
		python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/cake-fla-site \
			.whl/fla_core-*.whl || exit 2
		PYTHONPATH=/tmp/cake-fla-site${PYTHONPATH:+:$PYTHONPATH}
		export PYTHONPATH
	fi
fi
python3 -c 'import torch, fla; assert torch.cuda.is_available()' || {
	echo "bench/kda.sh: needs python3 with torch on a GPU and fla-core (pip download --no-deps fla-core==0.6.0 -d .whl)"
	exit 2
}
# FlashKDA, the paper's baseline: built here (about 100 s) from its public source when
# .baselines/flashkda holds it (git-ignored, never committed: see .baselines/build_flashkda.sh,
# a copy of ../shared/tools/build_flashkda.sh; .baselines/fkda-site, the package an earlier
# call built and brought back, skips the build), then timed by kda_fla.py on the same inputs
if [ -d .baselines/fkda-site/flash_kda ] && ! python3 -c 'import flash_kda' 2>/dev/null; then
	# a package built by an earlier call and brought back (git-ignored): no build
	PYTHONPATH=$PWD/.baselines/fkda-site${PYTHONPATH:+:$PYTHONPATH}
	export PYTHONPATH
fi
if [ "${KDA_CASES:-all}" != decode ] && ! python3 -c 'import flash_kda' 2>/dev/null && [ -d .baselines/flashkda ] && [ -f .baselines/build_flashkda.sh ]; then
	echo "== building FlashKDA from .baselines/flashkda"
	bash .baselines/build_flashkda.sh .baselines/flashkda /tmp/cake-fkda-site 2>&1 | tail -3
	PYTHONPATH=/tmp/cake-fkda-site${PYTHONPATH:+:$PYTHONPATH}
	export PYTHONPATH
fi
rm -rf "$OUT"
mkdir -p "$OUT"
python3 -c 'import torch, fla; print("torch", torch.__version__, "fla-core", getattr(fla, "__version__", "?"), torch.cuda.get_device_name())'
"$CAKE" --version 2>/dev/null | head -1

CASES=""
FAILS=0
# case NAME CAKE-ARGS...: run cake kda with --dump into $OUT/NAME
case_() {
	name=$1
	shift
	[ -n "${KDA_ONLY:-}" ] && ! printf '%s\n' "$name" | grep -Eq "$KDA_ONLY" && return   # KDA_ONLY=REGEX: those cases only
	d=$OUT/$name
	mkdir -p "$d"
	echo "== $name: cake kda $*"
	if "$CAKE" kda "$@" --format=json --dump "$d" >"$d/cake.json" 2>"$d/cake.err"; then
		:
	else
		rc=$?
		echo "   cake kda exited $rc: $(head -3 "$d/cake.err")"
		FAILS=$((FAILS + 1))
		[ -f "$d/meta.json" ] || return   # nothing to compare
	fi
	head -c 400 "$d/cake.json"
	CASES="$CASES $d"
}

if [ $QUICK -eq 1 ]; then
	case_ decode_B1_H32 --mode decode --shape B=1,H=32,T=1
	case_ decode_B64_H32 --mode decode --shape B=64,H=32,T=1
	case_ prefill_T2048_H8 --mode prefill --shape B=1,H=8,T=2048
	case_ prefill_mixed_H8 --mode prefill --seqlens 700,300,1048 --shape H=8
else
	if [ "${KDA_CASES:-all}" != prefill ] && [ "${KDA_CASES:-all}" != paper ]; then
	for H in 32 64; do
		for B in 1 8 64 256; do
			case_ decode_B${B}_H${H} --mode decode --shape B=$B,H=$H,T=1
		done
	done
	for H in 32 64; do
		for B in 1 8; do
			case_ decode_v16_B${B}_H${H} --mode decode --shape B=$B,H=$H,T=1 --kernel kernels/kda/kda_decode.cake:kda_decode_v16
		done
	done
	case_ decode_spec4_B64_H32 --mode decode --shape B=64,H=32,T=4
	case_ decode_bf16_B64_H32 --mode decode --state bf16 --shape B=64,H=32,T=1
	case_ decode_bf16_B256_H64 --mode decode --state bf16 --shape B=256,H=64,T=1
	fi
	# KDA_CASES=paper: the paper's six shapes and T = 32768 with the app's default only (the
	# validation and timing run against FLA and FlashKDA); prefill adds the comparisons below
	pre() { [ "${KDA_CASES:-all}" != decode ]; }
	extra() { [ "${KDA_CASES:-all}" = all ] || [ "${KDA_CASES:-all}" = prefill ]; }
	# the state in bf16 as FlashKDA keeps it (the recurrence in f32 registers): like for like
	extra && case_ prefill_bf16_T8192_H64_1seq --mode prefill --state bf16 --shape B=1,H=64,T=8192 --lower-bound -5 --iters 5 \
		--check-heads 16
	# and at the other five paper shapes (KDA_CASES=prefill KDA_ONLY=bf16 runs the six)
	extra && for H in 96 64; do
		[ $H = 96 ] && case_ prefill_bf16_T8192_H96_1seq --mode prefill --state bf16 --shape B=1,H=96,T=8192 --lower-bound -5 \
			--iters 5 --check-heads 16
		case_ prefill_bf16_T8192_H${H}_6mixed --mode prefill --state bf16 --seqlens 1300,547,2048,963,271,3063 --shape H=$H \
			--lower-bound -5 --iters 5 --check-heads 16
		case_ prefill_bf16_T8192_H${H}_8x1024 --mode prefill --state bf16 --shape B=8,H=$H,T=1024 --lower-bound -5 --iters 5 \
			--check-heads 16
	done
	# the paper's shapes in the paper's gate form (lower_bound = -5: FlashKDA's only form)
	pre && for H in 96 64; do
		case_ prefill_T8192_H${H}_1seq --mode prefill --shape B=1,H=$H,T=8192 --lower-bound -5 --iters 5 --check-heads 16
		case_ prefill_T8192_H${H}_6mixed --mode prefill --seqlens 1300,547,2048,963,271,3063 --shape H=$H --lower-bound -5 \
			--iters 5 --check-heads 16
		case_ prefill_T8192_H${H}_8x1024 --mode prefill --shape B=8,H=$H,T=1024 --lower-bound -5 --iters 5 --check-heads 16
	done
	pre && case_ prefill_T32768_H32_1seq --mode prefill --shape B=1,H=32,T=32768 --lower-bound -5 --iters 3 --check-heads 8
	extra && case_ prefill_T8192_H64_1seq_pertoken --mode prefill --shape B=1,H=64,T=8192 --lower-bound -5 --iters 5 \
		--check-heads 16 --kernel kernels/kda/kda_prefill.cake:kda_prefill_lb
	extra && case_ prefill_T8192_H64_1seq_plain --mode prefill --shape B=1,H=64,T=8192 --iters 5 --check-heads 16 \
		--kernel kernels/kda/kda_recurrent.cake:kda_recurrent
	extra && case_ prefill_T8192_H64_1seq_v16 --mode prefill --shape B=1,H=64,T=8192 --iters 5 --check-heads 16 \
		--kernel kernels/kda/kda_prefill.cake:kda_prefill_v16
	extra && case_ prefill_T8192_H64_6mixed_pertoken --mode prefill --seqlens 1300,547,2048,963,271,3063 --shape H=64 \
		--lower-bound -5 --iters 5 --check-heads 16 --kernel kernels/kda/kda_prefill.cake:kda_prefill_varlen_lb
	# the fused chunked prefill (kernels/kda/kda_prefill_chunk_lb.cake: prep and state on one
	# kernel, no varlen) against the split default at the fixed-length shapes
	extra && for H in 96 64; do
		case_ prefill_T8192_H${H}_1seq_fused --mode prefill --shape B=1,H=$H,T=8192 --lower-bound -5 --iters 5 --check-heads 16 \
			--kernel kernels/kda/kda_prefill_chunk_lb.cake
		case_ prefill_T8192_H${H}_8x1024_fused --mode prefill --shape B=8,H=$H,T=1024 --lower-bound -5 --iters 5 --check-heads 16 \
			--kernel kernels/kda/kda_prefill_chunk_lb.cake
	done
fi

echo "== FLA (fla-core, FLA_FLASH_KDA=0) on the same inputs"
# shellcheck disable=SC2086
{ python3 bench/kda_fla.py --clean $CASES; echo $? >"$OUT/fla.rc"; } | tee "$OUT/fla.txt"
rc=$(cat "$OUT/fla.rc" 2>/dev/null || echo 1)
[ "$FAILS" -eq 0 ] && [ "$rc" -eq 0 ] || exit 1
