#!/bin/sh
# tactics.sh — `cake tactics` (the listing) and `cake apply` (one rewrite):
# output formats, exit statuses 0 / 1 / 2 and their messages, --kernel,
# standard input, and that a result is canonical, checks clean, builds to
# CUDA (and, where NVRTC is installed, to a cubin without spills), and can be
# fed to the next tactic.
. "$(dirname "$0")/lib.inc"

G=kernels/gemm/gemm_ws_128x128_s5.cake
A=tests/corpus/good/kmeans_assign_tile_per_cta.cake

run tactics
expect "tactics lists the registry" 0 out '^tactics t1-[0-9a-f]{8} \([0-9]+\)$' out '^  stages:N\[:PIPE\] ' \
	out '^  regs:ROLE:N ' out '^  split_k:S ' out '^  centroid_tile:W '
n=$(grep -c '^  [a-z_]' "$T/out")
[ "$n" -ge 12 ] && ok "at least 12 tactics ($n)" || bad "at least 12 tactics" "$n listed"
run tactics --format=json
expect "tactics --format=json" 0 out '"schema": "cake-tactics/1"' out '"name": "swap_ab"'
if json_valid "tactics json" "$T/out"; then ok "tactics --format=json is valid JSON"; else bad "tactics --format=json is valid JSON" "$(cat "$T/pyerr")"; fi
run tactics --format=yaml
expect "tactics --format=yaml" 2 err "^cake tactics: unknown format 'yaml' \(expected text or json\)$"
run tactics extra
expect "tactics with an argument" 2 err "unexpected argument 'extra'"
run help
expect "help lists tactics and apply" 0 out 'cake tactics \[--format=text\|json\]' out 'cake apply TACTIC\[:ARGS\] FILE \[--kernel NAME\]'

# ---- a tactic that applies ----
run apply stages:3 "$G"
expect "apply stages:3" 0 out '^  pipeline ab stages 3$' out '^kernel gemm_bf16_128x128 target sm_90a family gemm$'
[ ! -s "$T/err" ] && ok "apply prints nothing on stderr" || bad "apply prints nothing on stderr" "stderr not empty"
grep -q '#' "$T/out" && bad "apply drops comments" "a comment survived" || ok "apply drops comments"
cp "$T/out" "$T/s3.cake"
run fmt --check "$T/s3.cake"
expect "apply output is canonical" 0
run check "$T/s3.cake"
expect "apply output checks clean" 0
run apply unroll:2 "$T/s3.cake"
expect "a tactic applies to a tactic's output" 0 out '^  pipeline ab stages 3$' out 'pipelined ab unroll 2 \{$'
run fmt "$G"
sed -e '/^ *#/d' -e 's/  #.*$//' "$T/out" >"$T/orig.cake"
run apply stages:5 "$T/s3.cake"
cmp -s "$T/out" "$T/orig.cake" && ok "stages:3 then stages:5 gives back the comment-free original" ||
	bad "stages:3 then stages:5 gives back the comment-free original" "$(diff "$T/orig.cake" "$T/out" | head -5)"

# ---- the precondition fails: status 1, the reason on stderr, nothing on stdout ----
run apply stages:5 "$G"
expect "apply a tactic that does not apply" 1 \
	err "^cake apply: stages:5 does not apply: pipeline 'ab' of kernel 'gemm_bf16_128x128' already has 5 stages$"
[ ! -s "$T/out" ] && ok "a refusal prints nothing on stdout" || bad "a refusal prints nothing on stdout" "stdout not empty"
run apply tile_n:64 "$A"
expect "tile_n on the k-means assign" 1 \
	err "^cake apply: tile_n:64 does not apply: kernel 'kmeans_assign' has no ring buffer indexed by the grid's N tile"
run apply stages:7 kernels/gemm/gemm_ws_128x256_s4.cake
expect "a result over the shared-memory limit is refused with the finding" 1 \
	err "does not apply: the result fails the verifier: shared memory needs [0-9]+ B .*\[CK-RES-001\]$"

# ---- usage errors: status 2 with a hint ----
run apply frobnicate "$G"
expect "apply an unknown tactic" 2 err "^cake apply: unknown tactic 'frobnicate' \(see 'cake tactics'\)$" err '^usage: cake apply '
run apply stage:4 "$G"
expect "apply a misspelt tactic" 2 err "did you mean 'stages'\?"
run apply stages:x "$G"
expect "apply with a bad argument" 2 err "^cake apply: the stage count must be an integer in 1..64, not 'x'$"
run apply regs:mma "$G"
expect "apply with too few arguments" 2 err "'regs' takes regs:ROLE:N"
run apply stages:3
expect "apply without a file" 2 err "^cake apply: expected a file after 'stages:3'$"
run apply
expect "apply without arguments" 2 err "^cake apply: expected a tactic and a file$"
run apply stages:3 "$G" extra.cake
expect "apply with an extra argument" 2 err "unexpected argument 'extra.cake'"
run apply stages:3 "$G" --bogus
expect "apply with an unknown option" 2 err "unknown option '--bogus'"
run apply stages:3 "$G" --kernel
expect "apply --kernel without a name" 2 err "option '--kernel' needs a value"
run apply stages:3 "$T/missing.cake"
expect "apply to a missing file" 2 err "^cake: cannot read '.*missing.cake': "

# ---- inputs with errors are refused: status 1 ----
run apply stages:3 "$FIX/syntax_error.cake"
expect "apply to a file with syntax errors" 1 err ': error: ' err "has syntax errors; no tactic applied$"
[ ! -s "$T/out" ] && ok "nothing on stdout for a broken input" || bad "nothing on stdout for a broken input" "stdout not empty"
run apply stages:3 tests/corpus/bad/race_no_wait_full.cake
expect "apply to a kernel with verifier errors" 1 err '\[CK-RACE-001\]' err "has verifier errors; no tactic applied$"
run apply stages:3 "$A" --kernel nope
expect "apply --kernel to a missing kernel" 1 err "has no kernel named 'nope' \(it has 'kmeans_assign', 'kmeans_assign_d64'\)$"

# ---- --kernel and standard input ----
run apply centroid_tile:256 "$A" --kernel kmeans_assign_d64
expect "apply --kernel" 0 out '^  smem c0: bf16\[256, 64\] swizzle 128B ring cr$' out 'targ \+ j \* 256'
grep -q '^  smem c0: bf16\[128, 64\] swizzle 128B ring cr$' "$T/out" && ok "--kernel leaves the other kernel alone" ||
	bad "--kernel leaves the other kernel alone" "kmeans_assign changed"
run_stdin "$G" apply raster_group:8 -
expect "apply reads standard input" 0 out '^  grid \(N / 128, M / 128\) as \(bn, bm\) group 8$'

# ---- warp_specialize: from a naive seed to a producer/consumer split ----
run apply warp_specialize kernels/gemm/seed_naive.cake
expect "warp_specialize on the GEMM seed" 0 out '^  role load warps 0\.\.3 regs 40$' out '^  role mma warps 4\.\.7 regs 240$' \
	out '^  barrier empty ring ab producers mma consumers load arrivals 1$' out '^  in load \{$' out '^      wait empty$' out '^      arrive empty$'
cp "$T/out" "$T/ws.cake"
run check "$T/ws.cake"
expect "the warp-specialized seed checks clean" 0
run build "$T/ws.cake" --emit=cubin -o "$T/ws.cubin"
if [ "$RC" -eq 69 ]; then
	ok "warp_specialize result: cubin skipped (no NVRTC)"
else
	expect "the warp-specialized seed compiles to a cubin without spills" 0 err ' 0 bytes spill stores, 0 bytes spill loads'
fi
run apply stages:4 "$T/ws.cake"
expect "stages:4 on the warp-specialized seed" 0 out '^  pipeline ab stages 4$'
run apply warp_specialize kernels/kmeans/seed_naive.cake
expect "warp_specialize on the assign seed" 0 out '^  barrier xfull producers load consumers dist arrivals 1$' \
	out '^    tma x0 <- X\[b, bm \* 64 \+: 64, 0 \+: 64\] signal xfull$'
run apply warp_specialize kernels/gemm/gemm_ws_128x256_s4.cake
expect "warp_specialize on a warp-specialized kernel" 1 \
	err "^cake apply: warp_specialize does not apply: kernel 'gemm_bf16' has 2 roles \(load, mma\); warp_specialize splits the program of a single role into a TMA producer and its consumer$"

# the chains from the seeds to the hand-written kernels (docs/TACTICS.md, Seeds): every step
# applies, the last one is the corpus kernel but for its name, and (with NVRTC) every step
# compiles to a cubin without spills
chain() {   # chain NAME SEED HANDWRITTEN KERNEL TACTIC...
	cname=$1 cur=$2 hand=$3 kname=$4
	shift 4
	cp "$cur" "$T/chain.cake"
	for spec in "$@"; do
		run apply "$spec" "$T/chain.cake"
		[ "$RC" -eq 0 ] || { bad "$cname chain: $spec applies" "$(cat "$T/err")"; return; }
		cp "$T/out" "$T/chain.cake"
		run build "$T/chain.cake" --emit=cubin -o "$T/chain.cubin"
		[ "$RC" -eq 69 ] || grep -q ' 0 bytes spill stores, 0 bytes spill loads' "$T/err" ||
			{ bad "$cname chain: $spec compiles without spills" "$(grep 'cake build' "$T/err")"; return; }
	done
	run fmt "$hand"
	sed -e '/^ *#/d' -e 's/  #.*$//' "$T/out" | awk -v k="kernel $kname " 'index($0, "kernel ") == 1 { on = index($0, k) == 1 } on' |
		sed -e "s/^kernel $kname /kernel X /" -e '${/^$/d;}' >"$T/hand.cake"
	sed -e '1s/^kernel [A-Za-z0-9_]* /kernel X /' "$T/chain.cake" >"$T/mine.cake"
	cmp -s "$T/hand.cake" "$T/mine.cake" && ok "$cname chain ends at $kname" ||
		bad "$cname chain ends at $kname" "$(diff "$T/hand.cake" "$T/mine.cake" | head -5)"
}
chain gemm kernels/gemm/seed_naive.cake kernels/gemm/gemm_ws_128x256_s4.cake gemm_bf16 \
	warp_specialize stages:4 consumers:2 tile_n:256 raster_group:16
chain assign kernels/kmeans/seed_naive.cake "$A" kmeans_assign \
	warp_specialize stages:4 tile_m:128 consumers:2 tile_m:256 regs:load:24 consumers:4
# ... and on to the persistent assign of kernels/kmeans/assign.cake (the point tile in a ring of
# its own: operand_ring, after a centroid stage gave it room)
chain assign_persistent kernels/kmeans/seed_naive.cake kernels/kmeans/assign.cake kmeans_assign \
	warp_specialize stages:4 tile_m:128 consumers:2 tile_m:256 regs:load:24 consumers:4 stages:3 regs:load:32 operand_ring

# ---- results build ----
run apply split_k:4 "$G"
expect "apply split_k:4" 0 out '^  grid \(N / 128, M / 128, 4\) as \(bn, bm, ks\)$' out '^    atomic_add C\[bm \* 128 \+: 128, bn \* 128 \+: 128\] <- acc$'
cp "$T/out" "$T/sk.cake"
run build "$T/sk.cake" --emit=cuda -o "$T/sk.cu"
expect "a split_k result lowers to CUDA" 0
grep -q 'red_add_v2_f32(o_, v_\[0\], v_\[1\]);' "$T/sk.cu" && ok "split_k adds its tile with red.global.add.v2.f32" ||
	bad "split_k adds its tile with red.global.add.v2.f32" "no red_add_v2_f32 in the CUDA"
for spec in split_k:4 tile_m:64 consumers:1 swizzle:64B persistent; do
	run apply "$spec" "$G"
	cp "$T/out" "$T/r.cake"
	run build "$T/r.cake" --emit=cubin -o "$T/r.cubin"
	if [ "$RC" -eq 69 ]; then
		ok "$spec result: cubin skipped (no NVRTC)"
	else
		expect "$spec result compiles to a cubin without spills" 0
	fi
done

finish
