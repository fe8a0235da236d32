#!/bin/sh
# library.sh — `cake library` without a GPU: usage, --explain, --domain, the generated
# libraries (gemm, kmeans, kda; they build, their headers compile in C and C++, pkg-config finds them, a C
# program links against them), the library's dispatcher against cake's over a grid of
# shapes (the same explanation text, byte for byte: generated C domains vs the parsed
# kernels'), the C error paths without a driver, the runtime's cuda.h layouts (when cuda.h
# is installed) and the Python package (pip install DIR offline; it imports without torch
# or a GPU and raises clear errors on call). Generation needs NVRTC: without it (exit 69)
# those cases are skipped with a note.
. "$(dirname "$0")/lib.inc"

CCX=${CC:-cc}
run library --list
expect "library --list" 0 out '^gemm ' out '^kmeans ' out '^kda '
run library
expect "library without a family" 2 err 'name a family'
run library conv -o "$T/x"
expect "library unknown family" 2 err "no library family 'conv'"
run library gemm
expect "library without -o or --explain" 2 err 'say what to do'
run library gemm --explain M=1,N=2
expect "library --explain missing K" 2 err 'the shape has no K'

run library gemm --explain M=1000,N=4096,K=4096
expect "explain gemm ragged M" 0 out 'route: padded' out 'M 1000 -> 1024' out 'then ws_128x256_s3' out 'A in place'
run library gemm --explain M=8192,N=8192,K=8192
expect "explain gemm large" 0 out 'route: persistent_128x256'
run library gemm --explain M=4096,N=1408,K=64
expect "explain gemm N % 256 != 0" 0 out 'route: persistent_128x128'
run library gemm --explain M=256,N=3072,K=3072
expect "explain gemm small M, short K, N % 96 == 0: 64x96 tiles" 0 out 'route: ws_64x96_s8'
run library gemm --explain M=256,N=4096,K=4096
expect "explain gemm small M, short K: 64x128 tiles" 0 out 'route: ws_64x128_s8'
run library gemm --explain M=1024,N=14336,K=8192
expect "explain gemm a partial last wave: stream-K" 0 out 'route: streamk_128x256' out '16 groups of 8 CTAs, 448 K steps each' \
	out 'against 4 waves of 448 tiles'
run library gemm --explain M=1024,N=5120,K=5120
expect "explain gemm 1.2 waves of 128x256, 1.94 of 128x160: persistent 128x160 tiles" 0 out 'route: persistent_128x160'
run library gemm --explain M=2048,N=1408,K=64
expect "explain gemm one wave of 128x192 tiles, the last column clipped" 0 out 'route: ws_128x192_s4'
run library gemm --explain M=256,N=11008,K=4096
expect "explain gemm two row blocks: 58 clipped columns of 128x192 tiles, not 86 of 128x256" 0 out 'route: ws_128x192_s4'
run library gemm --explain M=4096,N=768,K=3072
expect "explain gemm N = 768: one wave of 128x192 tiles" 0 out 'route: ws_128x192_s4'
run library gemm --explain M=1024,N=4096,K=72
expect "explain gemm ragged K" 0 out 'K 72 -> 128' out 'C written in place' out 'workspace 0 bytes'
run library gemm --explain M=64,N=64,K=12
expect "explain gemm outside the domain" 1 out "'K % 8 == 0' is false" out 'route: none'
run library kmeans --explain B=32,N=75600,D=128,K=1000
expect "explain kmeans ANCHORS shape" 0 out 'N 75600 -> 75776' out 'K 1000 -> 1024' out 'update sorted_scan_k1024'
run library kmeans --explain B=1,N=100000,D=128,K=5000,dtype=f16
expect "explain kmeans K > 4096" 0 out 'assign assign_f16_d128' out 'update sorted_global' out 'kmeans_hist_global'
run library kmeans --explain B=4,N=10000,D=64,K=2048,update=atomic
expect "explain kmeans atomic" 0 out 'update atomic' out 'kmeans_scatter_d64'
run library kmeans --explain B=1,N=1000,D=96,K=4
expect "explain kmeans D = 96" 1 out "'D == 64 \|\| D == 128' is false"
run library kda --explain B=2,T=100,H=4
expect "explain kda: the split chain from 64 tokens" 0 out 'route: split — the chunked tensor-core prefill' \
	out 'chunk slots: 4 of 64 tokens \(2 partial entries\)' out '^kernels: kda_split32_prep_lb \+ kda_split32_state_lb \+ kda_split_tail$'
run library kda --explain H=8,seqlens=7:1:40,state=bf16
expect "explain kda: packed, bf16 state, under 64 tokens: once per sequence" 0 out 'route: prefill_bf16_lb_per_seq' \
	out '3 sequences packed through cu_seqlens' out 'once per sequence \(3 launches\)'
run library kda --explain B=4,T=1,H=32,mode=decode,gate=softplus --brief --explain B=1,T=63,H=64 --explain B=1,T=300,H=2,gate=softplus
expect "explain kda --brief: decode, the short and the softplus fallbacks" 0 out '^B=4,T=1,H=32,mode=decode,gate=softplus decode$' \
	out '^B=1,T=63,H=64 prefill_lb$' out '^B=1,T=300,H=2,gate=softplus prefill$'
run library kda --explain B=1,T=64,H=4,DK=64
expect "explain kda: head dimension 64 refused" 1 out "'DK == 128' is false" out 'route: none \(CAKE_KDA_E_SHAPE\)'
run library kda --explain H=2,cu=0:5:3:10 --brief --explain H=2,seqlens=4:0:5 --explain H=2,T=12,seqlens=4:5 --explain B=1,T=0,H=2
expect "explain kda: cu_seqlens and T refusals name the rule" 1 \
	out 'refused: cu_seqlens\[n\] < cu_seqlens\[n \+ 1\] \(cu_seqlens\[1\] = 5 > cu_seqlens\[2\] = 3: cu_seqlens is not monotone\)' \
	out 'sequence 1 has no token' out 'refused: cu_seqlens\[N\] == T \(cu_seqlens ends at 9, not at T = 12' out 'refused: T >= 1$'
run library kda --explain B=1,T=64,H=4,state=f16
expect "explain kda: a bad key value" 2 err "state 'f16': use f32 or bf16"
printf 'H <= 64\nDECODE == 1 || T >= 64\n' > "$T/kdom.txt"
run library kda --domain "$T/kdom.txt" --explain B=1,T=63,H=4 --brief --explain B=1,T=64,H=128 --explain B=1,T=64,H=64 \
	--explain B=2,T=3,H=4,mode=decode
expect "explain kda with --domain over its variables" 1 out '^B=1,T=63,H=4 refused: DECODE == 1 \|\| T >= 64$' \
	out '^B=1,T=64,H=128 refused: H <= 64$' out '^B=1,T=64,H=64 split NS=2 NP=1$' out '^B=2,T=3,H=4,mode=decode decode_lb$'
run library gemm --explain M=100,N=256,K=64 --brief --explain M=128,N=256,K=64
expect "explain --brief" 0 out '^M=100,N=256,K=64 padded>ws_64x128_s8 128x256x64$' out '^M=128,N=256,K=64 ws_64x128_s8$'
run library gemm --explain M=1024,N=4096,K=64 --brief --explain M=4096,N=4096,K=64 --explain M=256,N=4096,K=64
expect "explain --brief: the tile-count heuristics" 0 out '^M=1024,N=4096,K=64 ws_128x256_s3$' \
	out '^M=4096,N=4096,K=64 persistent_128x256$' out '^M=256,N=4096,K=64 ws_64x128_s8$'

printf '# narrow\nM %% 128 == 0, K <= 8192\n' > "$T/dom.txt"
run library gemm --domain "$T/dom.txt" --explain M=100,N=256,K=64
expect "explain with --domain" 1 out "'M % 128 == 0' is false: a clause of the domain file"
printf 'Q > 1\n' > "$T/bad.txt"
run library gemm --domain "$T/bad.txt" --explain M=128,N=256,K=64
expect "bad --domain" 2 err 'line 1' err 'unknown variable'

# ---- --store: the store's winners (src/lib/frontier.c), from the real k-means campaign C2 ----
# Its best candidate (a 2-stage ring instead of 4) was timed at 1015.2 us against the corpus
# kmeans_assign's 1032.3 us (1.017x), one shape: below the default --min-gain 0.03, above 0.01.
SS="$T/lib_store.db"
run import data/measure/h200-kmeans-clean-start-2026-12-01.jsonl --store "$SS"
expect "import the k-means campaign" 0 out '111 new evaluations'
# The campaign timed the corpus kmeans_assign of its day (one CTA per tile, now
# tests/corpus/good/kmeans_assign_tile_per_cta.cake); the corpus kernel is persistent since
# session 12, a different text the campaign never timed, so the library would keep it for want
# of a timing. To exercise the selection, this test plants that day's corpus time (1032.3 us)
# as a timing of today's corpus kernel: the numbers below are the campaign's, the kernel
# compared is today's (planted, like the narrow kernel's 900 us further down).
# (the kernel alone, without comments: the id the library looks a corpus kernel up by)
sed -n '/^kernel kmeans_assign target/,/^}/p' kernels/kmeans/assign.cake | sed 's/ *#.*$//' > "$T/corpus_assign.cake"
run eval "$T/corpus_assign.cake" --kernel kmeans_assign --shape B=32,N=65536,K=1024 --dry-run --store "$SS" --format=json
python3 - "$SS" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = c.execute("update evals set verdict = 'ok', gpu = 'NVIDIA H200', median_us = 1032.3 where verdict = 'dry_run' and kernel = 'kmeans_assign'").rowcount
c.commit()
print("planted", n)
PY
run library kmeans --store "$SS" --explain B=32,N=65536,D=128,K=1024 --brief
expect "--store: a 1.7% gain stays below --min-gain 0.03" 0 \
	err 'kmeans_assign +corpus kernel kept: the best store candidate \(eb04148bfe8e\) is 1.017x over 1 shape, below the required 1.030x' \
	err 'corpus kernels kept, the store has no ok timing of them .*kmeans_assign_d64' out 'assign_bf16_d128\+sorted_scan_k1024'
run library kmeans --store "$SS" --min-gain 0.01 --explain B=32,N=65536,D=128,K=1024
expect "--store --min-gain 0.01: the campaign's winner replaces kmeans_assign" 0 \
	err 'kmeans_assign +store candidate eb04148bfe8e \(kernel kmeans_assign_seed_naive, origin tactic:consumers:4\): 1.017x' \
	err 'at B=32,K=1024,N=65536: 1015.2 us against 1032.3 us \(NVIDIA H200\)' \
	out '^kernel kmeans_assign: from the store: store candidate eb04148bfe8e'
run library kmeans --store "$SS" --min-gain 0.01 --explain B=32,N=65536,D=128,K=1024,dtype=f16
expect "--store: the f16 route runs the corpus kernels" 0 out 'assign_f16_d128'
grep -q 'from the store' "$T/out" && bad "--store: the f16 route says nothing of the store" "$(grep 'from the store' "$T/out")" ||
	ok "--store: the f16 route says nothing of the store"
# planted (this test has no GPU): a faster timing of a kernel whose domain differs is refused
sed 's/domain N % 256 == 0, K % 128 == 0, K >= 512/domain N % 512 == 0, K % 128 == 0, K >= 512/' kernels/kmeans/assign.cake |
	sed 's/pipeline cr stages 4/pipeline cr stages 3/' > "$T/narrow.cake"
run eval "$T/narrow.cake" --kernel kmeans_assign --shape B=32,N=65536,K=1024 --dry-run --store "$SS" --format=json
python3 - "$SS" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("update evals set verdict = 'ok', gpu = 'NVIDIA H200', median_us = 900.0 where verdict = 'dry_run' and kernel = 'kmeans_assign'")
c.commit()
PY
run library kmeans --store "$SS" --explain B=32,N=65536,D=128,K=1024 --brief
expect "--store: a faster kernel with another domain is not taken" 0 \
	err 'corpus kernel kept: the fastest store candidate \([0-9a-f]{12}, 1.147x\) is not usable: its const, param or domain lines differ'
run library kmeans --store "$SS" --min-gain 1.5 --explain B=1,N=1024,D=128,K=10
expect "--store: a bad --min-gain" 2 err 'min-gain is a fraction in \[0, 1\)'
run library kmeans --store "$T/no_store.db" --explain B=1,N=1024,D=128,K=10
expect "--store: a missing store" 2 err 'no store at'

PKG=$T/pkg
run library gemm -o "$PKG"
if [ "$RC" -eq 69 ]; then
	echo "note: NVRTC not available; the generated libraries are not built or checked"
	finish
	exit $?
fi
expect "generate gemm" 0 err 'built .*libcake_gemm.so' err '0 bytes spill stores'
run library kmeans -o "$PKG"
expect "generate kmeans into the same folder" 0 err 'built .*libcake_kmeans.so'
run library kmeans --store "$SS" --min-gain 0.01 -o "$T/pkg_store"
expect "generate kmeans with the store's winner" 0 err 'store candidate eb04148bfe8ebf5cdc4f32e06afdfb96: [0-9]+-byte cubin' \
	err 'built .*libcake_kmeans.so'
grep -q '^/\* kernel kmeans_assign: from the store: store candidate eb04148bfe8e' "$T/pkg_store/src/cake_kmeans.c" &&
	ok "the generated source records the kernel's provenance" || bad "the generated source records the kernel's provenance" \
	"$(head -6 "$T/pkg_store/src/cake_kmeans.c")"
missing=""
for f in include/cake_gemm.h include/cake_kmeans.h src/cake_gemm.c src/cake_kmeans.c cake_kernels/libcake_gemm.so \
	cake_kernels/libcake_kmeans.so lib/libcake_gemm.so lib/pkgconfig/cake_gemm.pc lib/pkgconfig/cake_kmeans.pc \
	pyproject.toml _cake_build.py cake_kernels/__init__.py cake_kernels/_native.py cake_kernels/gemm.py cake_kernels/kmeans.py; do
	[ -e "$PKG/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "generated files"; else RC=1; bad "generated files" "missing:$missing"; fi

# the generated sources compile with -Werror; with cuda.h, the runtime's layouts are cuda.h's
RC=0
for fam in gemm kmeans; do
	$CCX -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$PKG/include" "$PKG/src/cake_$fam.c" >"$T/out" 2>"$T/err" || RC=1
done
expect "generated sources compile with -Werror" 0
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ -f "$CUDA_INC/cuda.h" ]; then
	RC=0
	$CCX -std=c11 -Wall -Wextra -Werror -fsyntax-only -DCAKE_RT_CHECK_CUDA_H -I"$CUDA_INC" -I"$PKG/include" \
		"$PKG/src/cake_gemm.c" >"$T/out" 2>"$T/err" || RC=1
	expect "runtime layouts match cuda.h" 0
else
	echo "note: no cuda.h; the runtime's struct layouts are not checked against it"
fi
RC=0
for h in cake_gemm.h cake_kmeans.h; do
	$CCX -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c "$PKG/include/$h" >"$T/out" 2>"$T/err" || RC=1
	if command -v c++ >/dev/null 2>&1; then
		c++ -Wall -Wextra -Werror -fsyntax-only -x c++ "$PKG/include/$h" >>"$T/out" 2>>"$T/err" || RC=1
	fi
done
expect "headers compile alone (C11 -pedantic, C++)" 0
nm -D --defined-only "$PKG/cake_kernels/libcake_gemm.so" > "$T/out" 2>"$T/err"
RC=0
grep -v ' cake_gemm_' "$T/out" | grep -q ' T ' && RC=1
expect "only cake_gemm_* is exported" 0 out 'T cake_gemm_bf16$' out 'T cake_gemm_explain$'

# a C program linked through pkg-config
if command -v pkg-config >/dev/null 2>&1; then
	FLAGS=$(PKG_CONFIG_PATH="$PKG/lib/pkgconfig" pkg-config --cflags --libs cake_gemm cake_kmeans)
else
	FLAGS="-I$PKG/include -L$PKG/lib -Wl,-rpath,$PKG/lib -lcake_gemm -lcake_kmeans"
fi
RC=0
$CCX -std=c11 -Wall -Wextra -Werror -DWITH_GEMM -DWITH_KMEANS -o "$T/driver" tests/cli/fixtures/lib_driver.c $FLAGS \
	>"$T/out" 2>"$T/err" || RC=1
expect "a C program links against both libraries" 0

# the library's dispatcher against cake's, over a grid of shapes
: > "$T/gemm_shapes"
for M in 1 2 127 128 129 1000 4096 16511 16896 17024; do
	for N in 1 128 255 256 257 384 4096 5120 11008; do
		for K in 7 8 64 72 4096 4104; do echo "M=$M,N=$N,K=$K" >> "$T/gemm_shapes"; done
	done
done
"$T/driver" gemm explain < "$T/gemm_shapes" > "$T/lib_explain" 2>"$T/err"
run library gemm --explain @"$T/gemm_shapes"
if [ "$RC" -le 1 ] && cmp -s "$T/out" "$T/lib_explain"; then ok "gemm: library and cake agree on $(wc -l < "$T/gemm_shapes") shapes"
else bad "gemm: library and cake disagree" "$(diff "$T/out" "$T/lib_explain" | head -20)"; fi
: > "$T/km_shapes"
for B in 1 3 65536; do
	for N in 1 255 1024 1025 75600; do
		for K in 1 100 128 256 257 1000 1024 2048 4096 4097 5000; do
			for D in 64 128; do
				echo "B=$B,N=$N,D=$D,K=$K" >> "$T/km_shapes"
				echo "B=$B,N=$N,D=$D,K=$K,dtype=f16,update=atomic" >> "$T/km_shapes"
			done
		done
	done
done
"$T/driver" kmeans explain < "$T/km_shapes" > "$T/lib_explain" 2>"$T/err"
run library kmeans --explain @"$T/km_shapes"
if [ "$RC" -le 1 ] && cmp -s "$T/out" "$T/lib_explain"; then ok "kmeans: library and cake agree on $(wc -l < "$T/km_shapes") shapes"
else bad "kmeans: library and cake disagree" "$(diff "$T/out" "$T/lib_explain" | head -20)"; fi

# the error paths, without a driver (or without a GPU)
"$T/driver" gemm calls > "$T/out" 2>"$T/err"
RC=$?
expect "gemm error paths" 0 out '^shape rc=2 .*K % 8 == 0' out '^align rc=1 .*16-byte aligned' \
	out '^route rc=1 .*route 11 does not exist' out "^forced rc=3 .*'M % 128 == 0' is false" \
	out '^forced-sk rc=3 .*streamk_128x256 cannot take M=17024 .*M / 128 <= 132' \
	out '^run rc=(5|6) .*(libcuda|device)' out '^routes 11: persistent_128x256 ws_128x256_s3 persistent_128x128 splitk_128x128 ws_128x192_s4 ws_64x128_s8 streamk_128x256 streamk_128x128 persistent_128x160 ws_64x96_s8 padded; route\(1000,4096,4096\)=10 ws=0; route\(0,1,8\)=-2' \
	out '^version cake_gemm '
"$T/driver" kmeans calls > "$T/out" 2>"$T/err"
RC=$?
expect "kmeans error paths" 0 out '^shape rc=2 .*N >= K' out '^dtype rc=1 .*dtype 7' out '^iters rc=1 .*max_iters' \
	out '^run rc=(5|6) ' out '^assign rc=(5|6) ' out '^update rc=(5|6) ' \
	out '^route rc=0 assign_bf16_d128\+sorted_scan_k1024 Np=75776 Kp=1024 ws=[0-9]+' out '^version cake_kmeans '

# every route of both libraries on the stand-in driver (tests/cli/fake_cuda.c), which refuses
# what the real one would (tensor-map extents, strides and boxes, grid and block sizes): each
# call of bench/library_smoke.c --launch-only must succeed, tiny and ragged shapes included
# (M or N below one tile failed on an H200 before the padded launch read only the true
# shape's tensor-map extents). Results are not read: kernels do not run on the stand-in.
mkdir -p "$T/fake"
if $CCX -shared -fPIC -o "$T/fake/libcuda.so.1" tests/cli/fake_cuda.c 2>"$T/err" &&
	$CCX -std=c11 -O1 -I"$PKG/include" -o "$T/smoke" bench/library_smoke.c -L"$PKG/lib" -Wl,-rpath,"$PKG/lib" \
		-lcake_gemm -lcake_kmeans -ldl -lm 2>>"$T/err"; then
	LD_LIBRARY_PATH="$T/fake" "$T/smoke" --launch-only > "$T/out" 2>"$T/err"
	RC=$?
	expect "every route launches on the stand-in driver" 0 out '^ok   gemm 1x1x8 route padded ' \
		out '^ok   gemm 7x300x72 route auto ' out '^ok   kmeans B=1 N=1 D=128 K=1 bf16 atomic' out '^smoke: all ok \(0 failures\)'
else
	RC=1
	expect "the stand-in driver and the smoke program build" 0
fi

# --domain compiled into the library
run library gemm --domain "$T/dom.txt" -o "$T/narrow"
expect "generate with --domain" 0 err 'domain clauses compiled in'
RC=0
$CCX -std=c11 -DWITH_GEMM -I"$T/narrow/include" -o "$T/driver2" tests/cli/fixtures/lib_driver.c -L"$T/narrow/lib" \
	-Wl,-rpath,"$T/narrow/lib" -lcake_gemm >"$T/out" 2>"$T/err" || RC=1
printf 'M=100,N=256,K=64\nM=128,N=256,K=16384\nM=128,N=256,K=64\n' > "$T/nshapes"
[ "$RC" -eq 0 ] && "$T/driver2" gemm explain < "$T/nshapes" > "$T/lib_explain"
run library gemm --domain "$T/dom.txt" --explain @"$T/nshapes"
if [ "$RC" -eq 1 ] && cmp -s "$T/out" "$T/lib_explain" && grep -q "'K <= 8192' is false" "$T/out"; then
	ok "--domain: the library refuses what cake refuses"
else bad "--domain: library and cake disagree" "$(diff "$T/out" "$T/lib_explain" | head -20)"; fi

# ---- kda: the library, its dispatcher against cake's, its error paths, every route on the stand-in driver ----
run library kda -o "$PKG"
expect "generate kda into the same folder" 0 err 'built .*libcake_kda.so' err 'kda_split32_prep_lb: [0-9]+ registers, 0 bytes spill stores' \
	err 'kda_decode_bf16_lb: [0-9]+ registers, 0 bytes spill stores'
if grep -E 'bytes spill (stores|loads)' "$T/err" | grep -qv ' 0 bytes spill'; then bad "kda kernels: no spills" "$(grep spill "$T/err")"
else ok "kda kernels: no spills"; fi
missing=""
for f in include/cake_kda.h src/cake_kda.c cake_kernels/libcake_kda.so lib/libcake_kda.so lib/pkgconfig/cake_kda.pc cake_kernels/kda.py; do
	[ -e "$PKG/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "kda generated files"; else bad "kda generated files" "missing:$missing"; fi
RC=0
$CCX -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$PKG/include" "$PKG/src/cake_kda.c" >"$T/out" 2>"$T/err" || RC=1
$CCX -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c "$PKG/include/cake_kda.h" >>"$T/out" 2>>"$T/err" || RC=1
if command -v c++ >/dev/null 2>&1; then
	c++ -Wall -Wextra -Werror -fsyntax-only -x c++ "$PKG/include/cake_kda.h" >>"$T/out" 2>>"$T/err" || RC=1
fi
expect "kda: the source compiles with -Werror, the header alone (C11 -pedantic, C++)" 0
nm -D --defined-only "$PKG/cake_kernels/libcake_kda.so" > "$T/out" 2>"$T/err"
RC=0
grep -v ' cake_kda_' "$T/out" | grep -q ' T ' && RC=1
expect "only cake_kda_* is exported" 0 out 'T cake_kda_prefill$' out 'T cake_kda_decode$' out 'T cake_kda_explain$'
if command -v pkg-config >/dev/null 2>&1; then
	FLAGS=$(PKG_CONFIG_PATH="$PKG/lib/pkgconfig" pkg-config --cflags --libs cake_kda)
else
	FLAGS="-I$PKG/include -L$PKG/lib -Wl,-rpath,$PKG/lib -lcake_kda"
fi
RC=0
$CCX -std=c11 -Wall -Wextra -Werror -o "$T/kda_driver" tests/cli/fixtures/lib_kda_driver.c $FLAGS >"$T/out" 2>"$T/err" || RC=1
expect "a C program links against libcake_kda through pkg-config" 0
: > "$T/kda_shapes"
for B in 1 2 65536; do
	for T0 in 1 16 17 63 64 65 200 8192; do
		for H in 1 64 65536; do
			for o in '' ',state=bf16' ',gate=softplus' ',state=bf16,gate=softplus' ',mode=decode' ',mode=decode,state=bf16,gate=softplus'; do
				echo "B=$B,T=$T0,H=$H$o" >> "$T/kda_shapes"
			done
		done
	done
done
for sl in 1 63 64 65 1:1 70:1:64:9 100:5:40 7:1:40 0:5 5:0 3:-1:5; do
	for o in '' ',state=bf16' ',gate=softplus' ',mode=decode'; do
		echo "H=4,seqlens=$sl$o" >> "$T/kda_shapes"
	done
done
printf 'H=2,cu=1:5:10\nH=2,T=12,seqlens=4:5\nB=2,H=2,seqlens=4:5\nB=1,T=64,H=4,DK=64\nB=1,T=64,H=4,DV=256\nB=1,T=0,H=4\n' >> "$T/kda_shapes"
"$T/kda_driver" explain < "$T/kda_shapes" > "$T/lib_explain" 2>"$T/err"
run library kda --explain @"$T/kda_shapes"
if [ "$RC" -le 1 ] && cmp -s "$T/out" "$T/lib_explain"; then ok "kda: library and cake agree on $(wc -l < "$T/kda_shapes") shapes"
else bad "kda: library and cake disagree" "$(diff "$T/out" "$T/lib_explain" | head -20)"; fi
"$T/kda_driver" calls > "$T/out" 2>"$T/err"
RC=$?
expect "kda error paths" 0 out "^headdim rc=2 .*'DK == 128' is false" out "^t0 rc=2 .*'T >= 1' is false" \
	out '^monotone rc=2 .*cu_seqlens is not monotone' out '^zerolen rc=2 .*sequence 1 has no token' \
	out '^end rc=2 .*cu_seqlens must end at T' out "^varlen-b rc=2 .*'VARLEN == 0 \|\| B == 1' is false" \
	out "^bf16-softplus rc=2 .*needs the lower-bound gate" out '^dtype rc=1 .*state dtype 3' out '^gate rc=1 .*gate 7' \
	out '^lower-bound rc=1 .*lower_bound -6 is outside \[-5, 0\)' out '^align rc=1 .*16-byte aligned' \
	out "^decode-t rc=2 .*'DECODE == 0 \|\| T <= 16' is false" out '^run rc=(5|6) ' out '^run-decode rc=(5|6) ' \
	out '^routes 14: split split_bf16 split_paired split_bf16_paired prefill_lb prefill_varlen_lb prefill_bf16_lb prefill_bf16_lb_per_seq prefill prefill_varlen decode decode_lb decode_bf16 decode_bf16_lb; route\(prefill 1x135 packed\)=split route\(prefill 2x63\)=prefill_lb route\(decode 2x1 bf16\)=decode_bf16_lb route\(bad\)=-2$' \
	out '^ws split=1328128 split\+states=2376704 decode=0 decode\+zero=262144 bad=0$' out '^version cake_kda '
# every route on the stand-in driver: tensor maps, grids, the slot tables' upload, the workspace
# (bench/library_kda_smoke.c --launch-only; its cases name the routes they take), and the
# launches counted: 3 per split call, 1 per per-token or decode call, 1 per sequence for the
# per-sequence route (36 for its 18 cases)
if [ -f "$T/fake/libcuda.so.1" ] && $CCX -std=c11 -O1 -I"$PKG/include" -o "$T/kda_smoke" bench/library_kda_smoke.c -L"$PKG/lib" \
		-Wl,-rpath,"$PKG/lib" -lcake_kda -ldl -lm 2>"$T/err"; then
	rm -f "$T/launches"
	FAKE_CUDA_LAUNCHES="$T/launches" LD_LIBRARY_PATH="$T/fake" "$T/kda_smoke" --launch-only > "$T/out" 2>"$T/err"
	RC=$?
	expect "kda: every route launches on the stand-in driver" 0 out 'route split$' out 'seqlens=70:1:64:9 f32 lb init route split$' \
		out 'bf16 lb init ws route split_bf16$' out 'route split_paired$' out 'route split_bf16_paired$' out 'route prefill_lb$' out 'route prefill_varlen_lb$' out 'route prefill_bf16_lb$' \
		out 'route prefill_bf16_lb_per_seq$' out 'route prefill$' out 'route prefill_varlen$' out 'route decode$' \
		out 'route decode_lb$' out 'route decode_bf16$' out 'route decode_bf16_lb$' out '^kda smoke: all ok \(0 failures\)'
	n=$(wc -l < "$T/launches" 2>/dev/null || echo 0)
	if [ "$n" -eq 36 ]; then ok "kda: 36 launches for the 18 smoke calls"; else bad "kda: launches" "$n launches, expected 36"; fi
	# the call derives PAIR for its device: B=3 T=100 H=96 pairs on 132 SMs (the state pass on
	# grid (H, N) of 384 threads) and not on 1000 (grid (2, H, N) of 256), where one wave holds
	# its 576 half chains
	rm -f "$T/launches1000"
	FAKE_CUDA_SMS=1000 FAKE_CUDA_LAUNCHES="$T/launches1000" LD_LIBRARY_PATH="$T/fake" "$T/kda_smoke" --launch-only > /dev/null 2>&1
	if grep -q '^96 3 1 384 1 1$' "$T/launches" && ! grep -q '^2 96 3 256 1 1$' "$T/launches" &&
	   grep -q '^2 96 3 256 1 1$' "$T/launches1000" && ! grep -q '^96 3 1 384 1 1$' "$T/launches1000"; then
		ok "kda: a call pairs the state pass by its device's SM count (132: paired, 1000: not)"
	else
		bad "kda: the state pass's layout by SM count" "$(grep -c . "$T/launches" 2>/dev/null) / $(grep -c . "$T/launches1000" 2>/dev/null) launches"
	fi
else
	RC=1
	expect "the stand-in driver and the kda smoke program build" 0
fi

# the GPU-side checks (bench/library_bench.py: check_kda and the others) at least compile here
RC=0
python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' bench/library_bench.py >"$T/out" 2>"$T/err" || RC=1
grep -q '^def check_kda' bench/library_bench.py || RC=1
expect "bench/library_bench.py parses (check_kda included)" 0

# the Python package: pip install DIR (offline), import without torch or a GPU, clear errors
if python3 -m pip --version >/dev/null 2>&1; then
	python3 -m pip install -q --no-index --target "$T/site" "$PKG" >"$T/out" 2>"$T/err"
	RC=$?
	expect "pip install DIR (offline)" 0
	if python3 -c 'import torch' >/dev/null 2>&1; then
		echo "note: torch is installed here; the import-without-torch check still runs in a clean interpreter"
	fi
	PYTHONPATH="$T/site" python3 tests/cli/fixtures/lib_python_check.py >"$T/out" 2>"$T/err"
	RC=$?
	expect "python package without torch or a GPU" 0 out '^ok import without torch' out '^ok gemm without a GPU: cake_gemm: no CUDA' \
		out '^ok kmeans shape error' out '^ok library not built' out '^ok gemm workspace' out '^ok kda route and explain' \
		out '^ok kda argument checks' out '^ok kda without a GPU: cake_kda: no CUDA' out '^all checks passed'
else
	echo "note: pip is not available; the Python package is not installed or checked"
fi
finish
