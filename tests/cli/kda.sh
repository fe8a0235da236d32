#!/bin/sh
# kda.sh — `cake kda`: every refusal that needs no GPU, the no-driver path, and (with a
# stand-in libcuda, tests/cli/fake_cuda.c) the GPU-side control flow.
# Refused before any launch with a message naming the problem (exit 2): T = 0, a head
# dimension other than 128, --seqlens with a zero-length sequence or not adding up to T,
# decode with more than 16 tokens or with --seqlens, a lower bound outside [-5, 0), a NaN
# planted in an input; a kernel of another family or a dim the app does not bind (exit 1).
# A valid run on a machine without libcuda.so.1 fails fast with the one-line message and
# exit status 69. With the fake driver the kernels are compiled, the buffers allocated, the
# decode step captured into a CUDA graph and timed, and the untouched (NaN) outputs must be
# reported as a mismatch; --dump must write every tensor and a valid meta.json.
# Chains (--kernel FILE:A+B, fixtures in tests/cli/fixtures/kda_chain*.cake): refused before
# the GPU with exit 1 for an unknown or empty stage name, a repeated '+', stages of different
# families, a buffer whose dtype or shape differs between stages, a workspace that only one
# stage names, a workspace read before a stage writes it (or written by none), a gate the chain
# does not take, stages that together miss a family buffer, a stage without a family buffer (the family's
# contract, CK-SEM-044); on the fake driver a chain runs every stage on every launch of the
# layer (FAKE_CUDA_LAUNCHES counts them) and reports the chain and its stages.
# The default prefill with --lower-bound and T >= 64 is the split chain over chunk slots (its
# bf16-state twin with --state bf16), packed sequences included: on the fake driver it is
# chosen, its slot tables bound and dumped with cu_seqlens; a slot table cannot be poisoned;
# the bf16-state prefill without the lower-bound gate, or of packed sequences under 64 tokens,
# is refused (exit 1).
. "$(dirname "$0")/lib.inc"

run kda --shape B=1,H=8,T=0
expect "kda T = 0" 2 err 'T = 0: there are no tokens'
run kda --shape K=64
expect "kda head dimension" 2 err 'head dimension K = 64, but the kernel is written for K = 128'
run kda --mode prefill --seqlens 100,0,5
expect "kda zero-length sequence" 2 err 'sequence 1 has length 0'
run kda --mode prefill --seqlens 100,50 --shape T=300
expect "kda seqlens not ending at T" 2 err 'add up to 150 tokens, but --shape says T = 300'
run kda --mode decode --seqlens 1,1
expect "kda decode with seqlens" 2 err 'is for --mode prefill'
run kda --shape T=20
expect "kda decode window too long" 2 err 'runs 1 .. 16 tokens per sequence'
run kda --lower-bound -7
expect "kda lower bound out of range" 2 err 'outside \[-5, 0)'
run kda --poison V=3
expect "kda NaN input" 2 err 'input V has a non-finite value at flat index 3'
run kda --poison X=3
expect "kda poison of no input" 2 err '--poison takes INPUT=INDEX'
run kda --mode sideways
expect "kda bad mode" 2 err 'decode or prefill'
run kda --shape Q=1
expect "kda bad shape name" 2 err 'unknown dimension'
run kda --kernel kernels/gemm/gemm_ws_128x256_s4.cake
expect "kda kernel of another family" 1 err 'is not of the kda or kda_decode family'
run kda --kernels /nonexistent-dir
expect "kda missing kernels" 1 err 'cannot read'
run kda --mode prefill --state bf16 --shape T=64,H=2
expect "kda bf16-state prefill without the lower-bound gate" 1 err "bf16-state prefill kernels \\(kda_split32_state_bf16_lb, kda_prefill_bf16_lb\\) are written for the lower-bound gate"
run kda --mode prefill --state bf16 --seqlens 30,20 --shape H=2 --lower-bound -5
expect "kda bf16-state prefill of packed sequences under one chunk window" 1 err "need at least 64 tokens in all \\(--seqlens add up to 50\\)"
run kda --mode prefill --state bf16 --shape T=64,H=2 --kernel kernels/kda/kda_prefill.cake:kda_prefill_lb
expect "kda f32-state kernel asked for a bf16 state" 1 err "keeps an f32 state, but --state bf16 was asked for"

# ---- chains of kernels (--kernel FILE:A+B) ----
CH=$FIX/kda_chain.cake
PF="--mode prefill --shape B=1,H=2,T=64"
run kda $PF --kernel $CH:chain_prep+nope
expect "kda chain with an unknown stage" 1 err "'$CH' has no kernel named 'nope' \\(the chain chain_prep\\+nope\\)"
run kda $PF --kernel $CH:chain_prep++chain_state
expect "kda chain with a repeated separator" 1 err "the chain 'chain_prep\\+\\+chain_state' repeats the separator"
run kda $PF --kernel $CH:chain_prep+
expect "kda chain with an empty stage name" 1 err "the chain 'chain_prep\\+' has an empty stage name"
run kda $PF --kernel $CH:chain_prep+chain_decode
expect "kda chain of two families" 1 err "the chain chain_prep\\+chain_decode mixes families: stage 'chain_prep' is of family kda, stage 'chain_decode' of kda_decode"
run kda $PF --kernel $CH:chain_prep+chain_state_wide
expect "kda chain with a mismatched shared buffer" 1 \
	err "buffer 'Wk' is f32\[1, 64, 2, 128\] in stage 'chain_prep' but f32\[1, 64, 2, 64\] in stage 'chain_state_wide'"
run kda $PF --kernel $CH:chain_prep+chain_state+chain_lone
expect "kda chain with a workspace of one stage" 1 err "'Lone' of kernel 'chain_lone' is a workspace" err "no other stage of the chain names it"
run kda $PF --kernel $CH:chain_state+chain_prep
expect "kda chain reading a workspace before it is written" 1 err "stage 'chain_state' reads the workspace 'Wk' before stage 'chain_prep' writes it"
run kda $PF --kernel $CH:chain_state+chain_state
expect "kda chain whose workspace no stage writes" 1 err "no stage of chain_state\\+chain_state writes the workspace 'Wk'"
run kda --mode prefill --shape B=1,H=2,T=256 --lower-bound -5 --kernel kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_prep_lb
expect "kda chain whose stages together miss a family buffer" 1 err "the stages of kda_split_prep_lb\\+kda_split_prep_lb together do not fit family kda: it has no global parameter 'O'"
run kda $PF --kernel $CH:chain_prep
expect "kda one stage run alone" 1 err "kernel 'chain_prep' is one stage of a chain" err "run it with the other stages of its layer"
run kda $PF --kernel $CH:chain_prep+chain_whole
expect "kda chain with a whole layer in it" 1 err "kernel 'chain_whole' is a whole layer" err "not a stage of a chain"
run kda $PF --kernel $CH:chain_prep+chain_state --lower-bound -5
expect "kda chain without the lower-bound gate" 1 err "the chain chain_prep\\+chain_state uses the softplus gate, but --lower-bound was given"
run kda $PF --kernel $FIX/kda_chain_no_out.cake:chain_no_out+chain_no_out
expect "kda chain stage without O" 1 err "has no global parameter 'O' \[CK-SEM-044\]" err "cannot be lowered; nothing was run"

FAKE=$T/fake
mkdir -p "$FAKE"
if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	run kda --shape B=2,H=4
	expect "kda without a GPU" 69 err 'no CUDA driver found'
	run kda --mode prefill --seqlens 30,20 --shape H=2
	expect "kda prefill without a GPU" 69 err 'no CUDA driver found'
fi
if cc -shared -fPIC -o "$FAKE/libcuda.so.1" tests/cli/fake_cuda.c 2>"$T/cc"; then
	SAVED_LD=${LD_LIBRARY_PATH:-}
	LD_LIBRARY_PATH="$FAKE${SAVED_LD:+:$SAVED_LD}"
	export LD_LIBRARY_PATH
	run kda --shape B=2,H=4 --iters 3 --graph-launches 4 --check-heads 4
	if grep -q 'cannot load NVRTC' "$T/err"; then
		ok "kda on the fake driver (skipped: no NVRTC)"
	else
		expect "kda decode on the fake driver: untouched outputs are a mismatch" 1 out 'a CUDA graph of 4 launches' out 'verdict: mismatch' out '1024 NaN in O'
		mkdir -p "$T/dump"
		run kda --mode prefill --seqlens 30,20 --shape H=2 --lower-bound -5 \
			--iters 2 --check-heads 4 --format=json --dump "$T/dump"
		expect "kda prefill on the fake driver, json" 1 out '"kernel":"kda_prefill_varlen_lb"' out '"ok":false' out '"method":"events"'
		cp "$T/out" "$T/prefill.json"
		# packed sequences of 64 tokens or more: the split chain over chunk slots, its tables bound
		# and dumped (i32: Sl [NS, 8], Cs [N + 1], Ord [N], Ps [NP]; lengths 100, 60: slots 2 + 1, padded
		# to 4; two partial entries)
		mkdir -p "$T/sdump"
		run kda --mode prefill --seqlens 100,60 --shape H=2 --lower-bound -5 --iters 1 --check-heads 2 --format=json --dump "$T/sdump"
		expect "kda packed prefill on the fake driver: the split chain" 1 \
			out '"kernel":"kda_split32_prep_lb\+kda_split32_state_lb\+kda_split_tail"' out '"sequences":2' out '"ok":false'
		if [ "$(wc -c <"$T/sdump/Sl.bin" 2>/dev/null)" = $((4 * 8 * 4)) ] && [ "$(wc -c <"$T/sdump/Cs.bin" 2>/dev/null)" = 12 ] &&
		   [ "$(wc -c <"$T/sdump/Ps.bin" 2>/dev/null)" = 8 ] && [ ! -e "$T/sdump/OP.bin" ] &&
		   [ "$(wc -c <"$T/sdump/Cu.bin" 2>/dev/null)" = 24 ] && grep -q '"Cu":{"dtype":"i64","shape":\[3\]}' "$T/sdump/meta.json" &&
		   json_valid "kda split chain meta.json" "$T/sdump/meta.json"; then
			ok "kda split chain: the slot tables and cu_seqlens dumped, the workspace OP not"
		else
			bad "kda split chain: the slot tables and cu_seqlens dumped, the workspace OP not" "$(ls -l "$T/sdump" 2>&1)"
		fi
		run kda --mode prefill --state bf16 --seqlens 30,34 --shape H=2 --lower-bound -5 --iters 1 --check-heads 2 --format=json
		expect "kda bf16-state packed prefill on the fake driver: the split chain's bf16 twin" 1 \
			out '"kernel":"kda_split32_prep_lb\+kda_split32_state_bf16_lb\+kda_split_tail"' out '"state":"bf16"' out '"ok":false'
		run kda --mode prefill --seqlens 100,60 --shape H=2 --lower-bound -5 --poison Sl=0
		expect "kda poison of a slot table" 2 err '--poison takes INPUT=INDEX'
		run kda --mode prefill --shape B=2,H=2,T=40 --lower-bound -5 --kernel kernels/kda/kda_prefill_split_lb.cake:kda_split_prep_lb+kda_split_state_lb+kda_split_tail
		expect "kda split chain below one chunk window" 2 err "outside the domain of 'kda_split_prep_lb': 'T >= 64' is false"
		run kda --mode prefill --state bf16 --shape B=1,H=2,T=40 --lower-bound -5 --iters 1 --check-heads 2 --format=json
		expect "kda bf16-state prefill on the fake driver" 1 out '"kernel":"kda_prefill_bf16_lb"' out '"state":"bf16"' out '"ok":false'
		# a chain: every stage on every launch of the layer (1 checked + 1 warm-up + 3 timed + a graph of 4
		# + 3 with the stages timed apart)
		FAKE_CUDA_LAUNCHES=$T/launches; export FAKE_CUDA_LAUNCHES
		run kda --kernel $CH:chain_dprep+chain_dstate --shape B=2,H=4 --iters 3 --warmup 1 \
			--graph-launches 4 --check-heads 4
		expect "kda decode chain on the fake driver" 1 out "decode chain_dprep\\+chain_dstate \\($CH\\)" \
			out 'a CUDA graph of 4 launches' out 'stages:  chain_dprep [0-9.]* us, chain_dstate [0-9.]* us' out 'verdict: mismatch'
		n=$(wc -l <"$T/launches" 2>/dev/null || echo 0)
		if [ "$n" -eq 24 ]; then ok "kda decode chain launches both stages each time (24)"; else bad "kda decode chain launch count" "$n launches, not 24"; fi
		rm -f "$T/launches"
		mkdir -p "$T/cdump"
		run kda $PF --kernel $CH:chain_prep+chain_state --iters 2 --warmup 1 --check-heads 2 --format=json --dump "$T/cdump"
		expect "kda prefill chain with a workspace on the fake driver" 1 out '"kernel":"chain_prep\+chain_state"' \
			out '"stages":\["chain_prep","chain_state"\]' out '"stage_us":\{"chain_prep":[0-9.]*,"chain_state":[0-9.]*\}' out '"ok":false'
		n=$(wc -l <"$T/launches" 2>/dev/null || echo 0)
		if [ "$n" -eq 12 ] && json_valid "kda chain json" "$T/out" && json_valid "kda chain meta.json" "$T/cdump/meta.json" &&
		   [ -f "$T/cdump/O.bin" ] && [ ! -e "$T/cdump/Wk.bin" ]; then
			ok "kda prefill chain: 12 launches (2 timed apart), the dump without the workspace"
		else
			bad "kda prefill chain: 12 launches (2 timed apart), the dump without the workspace" "$n launches; $(ls "$T/cdump" 2>&1)"
		fi
		unset FAKE_CUDA_LAUNCHES
		run kda $PF --kernel $CH:chain_prep+chain_state --poison Wk=0
		expect "kda poison of a workspace" 2 err '--poison takes INPUT=INDEX'
		cp "$T/prefill.json" "$T/out"
		if json_valid "kda json" "$T/out" && json_valid "kda meta.json" "$T/dump/meta.json" && [ -f "$T/dump/Cu.bin" ] &&
		   [ "$(wc -c <"$T/dump/Q.bin")" -eq $((50 * 2 * 128 * 2)) ] && [ "$(wc -c <"$T/dump/SN.bin")" -eq $((2 * 2 * 128 * 128 * 4)) ]; then
			ok "kda --dump writes every tensor and meta.json"
		else
			bad "kda --dump writes every tensor and meta.json" "$(ls -l "$T/dump" 2>&1)"
		fi
	fi
	LD_LIBRARY_PATH=$SAVED_LD
	[ -n "$SAVED_LD" ] || unset LD_LIBRARY_PATH
else
	ok "kda on the fake driver (skipped: no C compiler: $(head -1 "$T/cc"))"
fi
finish
