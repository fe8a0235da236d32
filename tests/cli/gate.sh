#!/bin/sh
# gate.sh — `cake gate`, the corpus gate: green on the repository (counts per class, JSON),
# and red on copies of the corpus with one regression planted (--root): a known-bad file whose
# `# expect:` names another rule, a valid program broken, a kernel that spills; each exit 1
# naming the file, what was expected and what came back. Also: no corpus, usage errors, and
# --gpu on a machine without a GPU (exit 69, a small shape per family kernel).
. "$(dirname "$0")/lib.inc"

# ---- the repository's corpus is green ----
run gate
expect "cake gate on the repository is green" 0 \
	out '^gate: green: [0-9]+ checks passed' \
	out '^  valid +[0-9]+ pass, 0 fail' \
	out '^  bad +[0-9]+ pass, 0 fail' \
	out '^  build +[0-9]+ (pass|pass, 0 fail, [0-9]+ skipped)' \
	out 'note: not asked'
nbad=$(ls tests/corpus/bad/*.cake | wc -l)
grep -q -E "^  bad +$nbad pass, 0 fail" "$T/out" && ok "every known-bad file is counted ($nbad)" ||
	bad "every known-bad file is counted ($nbad)" "$(grep '^  bad' "$T/out")"
nvalid=$(( $(find kernels -name '*.cake' | wc -l) + $(ls tests/corpus/good/*.cake | wc -l) ))
grep -q -E "^  valid +$nvalid pass, 0 fail" "$T/out" && ok "every valid program is counted ($nvalid)" ||
	bad "every valid program is counted ($nvalid)" "$(grep '^  valid' "$T/out")"
run gate --format=json
expect "cake gate --format=json" 0 out '"schema":"cake-gate/1"'
if json_valid "json" "$T/out"; then
	python3 - "$T/out" > "$T/j" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["classes"]
print(d["green"], d["regressions"], c["bad"]["pass"], c["valid"]["fail"], len(d["failures"]),
      all(i["status"] in ("pass", "skip") for i in d["items"]))
PY
	read green reg pbad fvalid nfail allok < "$T/j"
	[ "$green" = True ] && [ "$reg" -eq 0 ] && [ "$pbad" -eq "$nbad" ] && [ "$fvalid" -eq 0 ] && [ "$nfail" -eq 0 ] && [ "$allok" = True ] &&
		ok "the JSON agrees (green, $pbad bad caught, no failures)" || bad "the JSON agrees" "$(cat "$T/j")"
else
	bad "cake gate --format=json parses" "not JSON"
fi

# ---- planted regressions in a copy of the corpus ----
mkroot() {
	rm -rf "$T/root"
	mkdir -p "$T/root/tests"
	cp -r kernels "$T/root/kernels"
	cp -r tests/corpus "$T/root/tests/corpus"
}
mkroot
sed -i '1s/^# expect: CK-RES-002$/# expect: CK-BAR-001/' "$T/root/tests/corpus/bad/res_regs_launch_pool.cake"
run gate --root "$T/root"
expect "a known-bad file expecting another rule: exit 1, named" 1 \
	out '^REGRESSION bad tests/corpus/bad/res_regs_launch_pool.cake: expected CK-BAR-001 \(error\), got CK-RES-002 \(error\)' \
	out '^  bad +[0-9]+ pass, 1 fail' out '^gate: RED: 1 regression'
run gate --root "$T/root" --format=json
python3 - "$T/out" > "$T/j" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["failures"]
print(d["green"], len(f), f[0]["class"], f[0]["file"], f[0]["expected"], f[0]["got"].replace(" ", "_"))
PY
grep -q "^False 1 bad tests/corpus/bad/res_regs_launch_pool.cake CK-BAR-001 (error) CK-RES-002_(error)$" "$T/j" &&
	ok "the JSON names the regression" || bad "the JSON names the regression" "$(cat "$T/j")"

mkroot
sed -i '1d' "$T/root/tests/corpus/bad/res_regs_launch_pool.cake"
run gate --root "$T/root"
expect "a known-bad file without its expect line: exit 1, named" 1 \
	out "^REGRESSION bad tests/corpus/bad/res_regs_launch_pool.cake: expected a first line '# expect: CK-XXX-NNN'"

mkroot
g="$T/root/tests/corpus/good/gemm_128x128_s6.cake"
grep -q 'arrivals 2' "$g" || { bad "the good file to break has 'arrivals 2'" "$(grep arrivals "$g")"; }
sed -i '0,/arrivals 2/s//arrivals 3/' "$g"
run gate --root "$T/root"
expect "a broken valid program: exit 1, named with its error" 1 \
	out '^REGRESSION valid tests/corpus/good/gemm_128x128_s6.cake: expected no errors, got CK-BAR-001 line [0-9]+' \
	out '^  valid +[0-9]+ pass, 1 fail'

mkroot
cp tests/corpus/bad/res_regs_launch_pool.cake "$T/root/kernels/kmeans/assign_4wg_120.cake"
run gate --root "$T/root"
expect "a kernel that the verifier rejects fails the valid and the build classes" 1 \
	out '^REGRESSION valid kernels/kmeans/assign_4wg_120.cake: expected no errors, got CK-RES-002' \
	out '^REGRESSION build kernels/kmeans/assign_4wg_120.cake: expected sm_90a cubin, 0 spills, got CK-RES-002'

# a kernel that spills (regs 104 for the four consumer warpgroups: ptxas spills at the launch budget)
mkroot
sed 's/regs 120/regs 104/; 1d' tests/corpus/bad/res_regs_launch_pool.cake > "$T/root/kernels/kmeans/assign_4wg_104.cake"
run gate --root "$T/root"
if grep -q 'NVRTC not found' "$T/out"; then
	expect "without NVRTC the build class is skipped with a note" 0 out 'note: NVRTC not found'
else
	expect "a kernel that spills: exit 1, named (CK-LOW-014)" 1 \
		out '^REGRESSION build kernels/kmeans/assign_4wg_104.cake: expected sm_90a cubin, 0 spills, got CK-LOW-014'
fi

# ---- no corpus, usage ----
run help
expect "cake help lists gate, mine and report" 0 out 'cake gate \[--root DIR\]' out 'cake gate --store PATH' out 'cake mine ' out 'cake report '
mkdir -p "$T/empty"
run gate --root "$T/empty"
expect "a root without a corpus" 2 err 'holds no corpus'
run gate --trace abc
expect "--trace needs --store" 2 err 'needs --store'
run gate --store "$T/none.db" --gpu
expect "--store with --gpu" 2 err 'corpus gate'
run gate --bogus
expect "an unknown option" 2 err "unknown option '--bogus'"
run gate --store "$T/none.db"
expect "a missing store is not created" 2 err "no store at"
[ ! -e "$T/none.db" ] && ok "the missing store was not created" || bad "the missing store was not created" "it exists"

# ---- --gpu without a GPU: every family kernel gets a small shape, nothing runs ----
if ! "$CAKE" run kernels/gemm/gemm_persistent.cake M=128 N=256 K=64 >/dev/null 2>&1; then
	run gate --gpu --format=json
	expect "--gpu without a GPU: exit 69" 69 out '"gpu":\{"pass":0,"fail":0,"skip":[1-9]'
	python3 - "$T/out" > "$T/j" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = [i for i in d["items"] if i["class"] == "gpu"]
cased = [i for i in g if not i.get("got", "").startswith("skipped: no GPU case")]
print(len(g), sum(1 for i in cased if i["shape"]) + len(g) - len(cased), sum(1 for i in g if i["status"] == "skip"),
      sorted({i["kernel"] for i in g if i["file"] == "kernels/kmeans/assign.cake"}))
PY
	read ng nshape nskip rest < "$T/j"
	[ "$ng" -ge 10 ] && [ "$nshape" -eq "$ng" ] && [ "$nskip" -eq "$ng" ] &&
		ok "--gpu: $ng family kernels, each with a shape (or no GPU case, said so), each skipped" || bad "--gpu shapes" "$(cat "$T/j")"
fi
# ---- --gpu on the stand-in driver (tests/cli/fake_cuda.c): the GPU part end to end ----
# Every family kernel is compiled, its inputs made and uploaded, launched through the driver
# API and checked by its family's oracle; the stand-in runs nothing, so every output is still
# poisoned and every case must come out a mismatch: the gate goes red naming each one.
FAKE=$T/fake
mkdir -p "$FAKE"
if cc -shared -fPIC -o "$FAKE/libcuda.so.1" tests/cli/fake_cuda.c 2>"$T/cc"; then
	LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$CAKE" gate --gpu > "$T/out" 2> "$T/err"
	rc=$?
	if grep -q 'cannot load NVRTC' "$T/out" "$T/err"; then
		ok "--gpu on the stand-in driver (skipped: no NVRTC)"
	else
		ng=$(grep -c '^REGRESSION gpu .*got mismatch' "$T/out")
		[ "$rc" -eq 1 ] && [ "$ng" -ge 10 ] && grep -q "gpu       0 pass, $ng fail" "$T/out" &&
			ok "--gpu on the stand-in driver: $ng family kernels launched and checked, each caught as a mismatch, exit 1" ||
			bad "--gpu on the stand-in driver" "exit $rc, $ng mismatches; $(tail -3 "$T/out")"
	fi
else
	ok "--gpu on the stand-in driver (skipped: no C compiler)"
fi
finish
