#!/bin/sh
# tools/corpus.sh — the first half of Cake's main job (the README's first command runs
# `cake evolve` after it): check every kernel
# of the corpus with the verifier, then lower each one to CUDA and compile it
# through NVRTC to an sm_90a cubin (build/corpus/), printing registers, spills
# and shared memory per kernel. Kernels whose constructs are not lowered yet are
# listed with the lowering's refusal. Without NVRTC the build step is skipped
# with a note (checking still runs). Exit status: non-zero when a kernel has a
# verifier error, fails to compile, or spills.
#   usage: sh tools/corpus.sh [CAKE]      (default bin/cake)
set -u
cd "$(dirname "$0")/.." || exit 2
CAKE=${1:-bin/cake}
status=0
echo "== cake check kernels/*/*.cake"
$CAKE check kernels/*/*.cake || status=1
mkdir -p build/corpus
echo "== cake build --emit=cubin (sm_90a, NVRTC)"
for f in kernels/*/*.cake; do
	name=$(basename "$(dirname "$f")")_$(basename "$f" .cake)
	out=$($CAKE build "$f" --emit=cubin -o "build/corpus/$name.cubin" 2>&1 >/dev/null)
	rc=$?
	report=$(printf '%s\n' "$out" | grep '^cake build:' | sed 's/^cake build: //' | paste -sd';' -)
	if [ "$rc" -eq 69 ]; then
		echo "   skipped: NVRTC not found (install the CUDA toolkit or set CUDA_HOME); build step not run"
		break
	elif [ "$rc" -eq 0 ]; then
		printf '   %-34s ok   %s\n' "$name" "$report"
	elif printf '%s\n' "$out" | grep -q 'CK-LOW-00[12]'; then
		printf '   %-34s not lowered yet: %s\n' "$name" \
			"$(printf '%s\n' "$out" | grep -m1 'error:' | sed 's/.*error: //')"
	else
		printf '   %-34s FAILED\n' "$name"
		printf '%s\n' "$out" | sed 's/^/      /'
		status=1
	fi
done
exit $status
