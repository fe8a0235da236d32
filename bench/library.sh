#!/bin/bash
# bench/library.sh — the generated libraries on the GPU host: build them with the carried
# bin/cake (`cake library gemm|kmeans|kda -o $OUT/pkg`), pip-install the Python package into a
# target folder, check results on held-out shapes (torch / float64 references; KDA's
# chunk_kda and fused_recurrent_kda against a float64 per-token recurrence), then
# benchmark with the dispatcher included: GEMM vs cuBLAS (torch) over >= 40 LLM-layer
# shapes (geomean, min, five worst), k-means fit end to end vs Flash-KMeans'
# batch_kmeans_Euclid on the ANCHORS shapes and K in {100, 1000, 2048, 5000}. A short table
# comes last (bench/library_bench.py has the method).
#
# usage (from the repository root, on the GPU host):
#   OUT=$OUT bash bench/library.sh [check] [gemm] [kmeans] [kda]   (default: check, gemm, kmeans;
#                                                                   kda: the KDA check alone)
#   env: CAKE (bin/cake), PKG (a package folder already generated: skip `cake library`),
#        WHEELS (.whl: Flash-KMeans' wheel), SITE (/tmp/site), OUT (/tmp/cake-library),
#        ITERS (10), TOL (0.0), REPS (5), CALLS (10), DTYPES (bf16), GEMM_SHAPES, KM_SHAPES,
#        GRAPHS (1: also time the GEMM dispatcher and cuBLAS from CUDA graphs, no host in them),
#        GRAPH_ROUTES (0; 1: every forced GEMM route from CUDA graphs too),
#        SANITIZE (1: also run the C smoke test under compute-sanitizer memcheck, and racecheck and
#        synccheck on the GEMM shapes of SAN_SHAPES, "M,N,K ...": every route of each)
# First, without torch, bench/library_smoke.c runs every route on small shapes against CPU
# references (C, linked against the libraries): $OUT/smoke.log; bench/library_kda_smoke.c
# does the same for every KDA route against a float64 recurrence: $OUT/kda_smoke.log
# (SANITIZE=1: under memcheck too).
# Logs: $OUT/build.log (generation, ptxas report, compiler), $OUT/pip.log, $OUT/bench.log
# (everything printed), $OUT/{check,gemm,kmeans}.jsonl (one JSON line per result).
set -u
CAKE=${CAKE:-bin/cake}
WHEELS=${WHEELS:-.whl}
SITE=${SITE:-/tmp/site}
OUT=${OUT:-/tmp/cake-library}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}   # cubin cache in a writable place
mkdir -p "$OUT" "$SITE"
: > "$OUT/build.log"
t0=$(date +%s)

# Flash-KMeans from the carried wheel (no network on the GPU host)
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
	python3 -m pip install -q --no-index --no-deps --target "$SITE" "$WHEELS"/*.whl > "$OUT/pip.log" 2>&1 ||
		echo "library.sh: installing the wheels failed (see $OUT/pip.log)" >&2
fi

# the libraries: generated here with the carried cake (NVRTC on this host), or carried in $PKG
if [ -z "${PKG:-}" ]; then
	PKG=$OUT/pkg
	rm -rf "$PKG"
	for fam in gemm kmeans kda; do
		if ! $CAKE library $fam -o "$PKG" >> "$OUT/build.log" 2>&1; then
			echo "library.sh: cake library $fam failed:" >&2
			tail -20 "$OUT/build.log" >&2
			exit 1
		fi
	done
	$CAKE library gemm --explain M=1000,N=4096,K=4096 --explain M=8192,N=8192,K=8192 >> "$OUT/build.log" 2>&1
	$CAKE library kmeans --explain B=32,N=75600,D=128,K=1000 --explain B=1,N=1048576,D=128,K=5000 >> "$OUT/build.log" 2>&1
	$CAKE library kda --explain B=1,T=8192,H=64 --explain H=64,seqlens=4000:3000:1192,state=bf16 \
		--explain B=64,T=1,H=32,mode=decode >> "$OUT/build.log" 2>&1
fi
PKG=$(cd "$PKG" && pwd)
echo "library.sh: libraries in $PKG ($(( $(date +%s) - t0 )) s)" >&2

# which parts the arguments ask for: `kda` alone skips the GEMM and k-means smoke test
want_gk=1
case " $* " in
*" check "* | *" gemm "* | *" kmeans "* | "  ") ;;
*) want_gk=0 ;;
esac
# C alone first (no torch): every route on small shapes against CPU references
smoke=skipped
if [ "$want_gk" = 1 ] && ${CC:-cc} -std=c11 -O2 -I"$PKG/include" "$(dirname "$0")/library_smoke.c" -L"$PKG/lib" -Wl,-rpath,"$PKG/lib" \
	-lcake_gemm -lcake_kmeans -ldl -lm -o "$OUT/smoke" >> "$OUT/build.log" 2>&1; then
	timeout 300 "$OUT/smoke" 2>&1 | tee "$OUT/smoke.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] && smoke=ok || smoke=FAILED
	# SANITIZE=1: the same C program under compute-sanitizer memcheck (every route's kernels)
	if [ "${SANITIZE:-0}" = 1 ]; then
		san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
		timeout 400 "$san" --tool memcheck --error-exitcode 99 "$OUT/smoke" > "$OUT/smoke_memcheck.log" 2>&1
		echo "library.sh: smoke under memcheck: exit $?, $(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$OUT/smoke_memcheck.log" | tail -1)" |
			tee -a "$OUT/smoke.log" >&2
		# racecheck and synccheck (slower) on the shapes of SAN_SHAPES, every route each
		for sh in ${SAN_SHAPES:-1024,5120,640 256,1024,4096}; do
			for tool in racecheck synccheck; do
				# shellcheck disable=SC2086
				timeout 300 "$san" --tool $tool --error-exitcode 99 "$OUT/smoke" gemm ${sh//,/ } > "$OUT/smoke_${tool}_$sh.log" 2>&1
				echo "library.sh: smoke gemm $sh under $tool: exit $?, $(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]* [a-z]*' "$OUT/smoke_${tool}_$sh.log" | tail -1)" |
					tee -a "$OUT/smoke.log" >&2
			done
		done
	fi
elif [ "$want_gk" = 1 ]; then
	echo "library.sh: the C smoke test does not build (see $OUT/build.log)" >&2
fi
# the KDA library from C: every route against a float64 recurrence
kda_smoke=skipped
if [ -f "$PKG/lib/libcake_kda.so" ] && ${CC:-cc} -std=c11 -O2 -I"$PKG/include" "$(dirname "$0")/library_kda_smoke.c" \
	-L"$PKG/lib" -Wl,-rpath,"$PKG/lib" -lcake_kda -ldl -lm -o "$OUT/kda_smoke" >> "$OUT/build.log" 2>&1; then
	timeout 300 "$OUT/kda_smoke" 2>&1 | tee "$OUT/kda_smoke.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] && kda_smoke=ok || kda_smoke=FAILED
	if [ "${SANITIZE:-0}" = 1 ]; then
		san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
		timeout 400 "$san" --tool memcheck --error-exitcode 99 "$OUT/kda_smoke" > "$OUT/kda_smoke_memcheck.log" 2>&1
		echo "library.sh: kda smoke under memcheck: exit $?, $(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$OUT/kda_smoke_memcheck.log" | tail -1)" |
			tee -a "$OUT/kda_smoke.log" >&2
	fi
else
	echo "library.sh: the KDA C smoke test does not build or libcake_kda.so is missing (see $OUT/build.log)" >&2
fi

# the package, installed as a user would (offline: the build backend is in the package)
rm -rf "$OUT/site-cake"
if ! python3 -m pip install -q --no-index --no-deps --target "$OUT/site-cake" "$PKG" >> "$OUT/pip.log" 2>&1; then
	echo "library.sh: pip install $PKG failed:" >&2
	tail -20 "$OUT/pip.log" >&2
	exit 1
fi
export PYTHONPATH="$OUT/site-cake:$SITE${PYTHONPATH:+:$PYTHONPATH}"
here=$(cd "$(dirname "$0")" && pwd)
rm -f "$OUT"/check.jsonl "$OUT"/gemm.jsonl "$OUT"/kmeans.jsonl
python3 "$here/library_bench.py" "$OUT" "$@" 2>&1 | tee "$OUT/bench.log"
rc=${PIPESTATUS[0]}
echo "C smoke test (bench/library_smoke.c)  $smoke" | tee -a "$OUT/bench.log"
echo "KDA C smoke test (bench/library_kda_smoke.c)  $kda_smoke" | tee -a "$OUT/bench.log"
[ "$smoke" = FAILED ] && rc=1
[ "$kda_smoke" = FAILED ] && rc=1
echo "library.sh: done in $(( $(date +%s) - t0 )) s, exit $rc; logs in $OUT" >&2
exit "$rc"
