#!/bin/sh
# store_queries.sh — the store's query commands: cake log, show, best, diff
# and export, in text and JSON, on a store filled by `cake eval --dry-run`
# (no GPU needed): the three gemm kernels at M=N=K=4096, one of them also at
# 8192, a stages:3 rewrite of it (origin tactic:stages:3, parent recorded) and
# a kernel the verifier rejects (its findings are stored). `best` needs timed
# ok evaluations, which only a GPU makes; the script turns three dry runs into
# ok runs with a median by writing the file with Python's sqlite3 (a stand-in
# for a GPU session, done after the "only dry runs" answers are checked).
# Also: id prefixes (unique, ambiguous, not found, not hex), the missing
# store (no file or directory is created), an empty file, a corrupt file
# (refused, byte for byte unchanged), usage errors, and the export's line
# count against the number of evaluations.
. "$(dirname "$0")/lib.inc"

py_field() { # FILE EXPR: print a Python expression over the parsed document d
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); print(eval(sys.argv[2]))' "$1" "$2"
}
# check NAME COMMAND...: ok when the command succeeds, else bad with its stderr
check() {
	name=$1
	shift
	if "$@" 2>"$T/pyerr"; then ok "$name"; else bad "$name" "$(cat "$T/pyerr")"; fi
}
# run_in DIR ARGS...: like run, from DIR
run_in() {
	dir=$1
	shift
	(cd "$dir" && timeout 120 "$CAKE" "$@" >"$T/out" 2>"$T/err" </dev/null)
	RC=$?
}

S=$T/s.db
G=kernels/gemm
SHAPE=M=4096,N=4096,K=4096

# ---- fill the store ----
n=0
for k in gemm_persistent gemm_ws_128x128_s5 gemm_ws_128x256_s4; do
	run eval "$G/$k.cake" --shape $SHAPE --dry-run --store "$S" --format=json
	expect "eval --dry-run $k" 0 out '"verdict":"dry_run"'
	cp "$T/out" "$T/eval_$k.json"
	n=$((n + 1))
done
run eval "$G/gemm_ws_128x128_s5.cake" --shape M=8192,N=8192,K=8192 --dry-run --store "$S"
expect "eval --dry-run at 8192" 0
n=$((n + 1))
P=$(py_field "$T/eval_gemm_ws_128x128_s5.json" 'd["candidate"]')
PERS=$(py_field "$T/eval_gemm_persistent.json" 'd["candidate"]')
run apply stages:3 "$G/gemm_ws_128x128_s5.cake"
expect "apply stages:3" 0 out 'stages 3'
cp "$T/out" "$T/v.cake"
run eval "$T/v.cake" --shape $SHAPE --dry-run --store "$S" --origin tactic:stages:3 --parent "$(echo "$P" | cut -c1-10)" --format=json
expect "eval the tactic's variant with --parent" 0 out '"verdict":"dry_run"'
V=$(py_field "$T/out" 'd["candidate"]')
n=$((n + 1))
run eval tests/corpus/bad/res_regs_launch_pool.cake --shape B=1,N=1024,K=1024 --dry-run --store "$S" --format=json
expect "eval a rejected kernel" 1 out '"verdict":"rejected"'
R=$(py_field "$T/out" 'd["candidate"]')
n=$((n + 1))
run eval "$T/v.cake" --shape $SHAPE --dry-run --store "$S" --parent zz
expect "eval --parent not hex" 2 err "--parent: .*not a candidate id"

# ---- cake log ----
run log --store "$S"
expect "log: text table" 0 out '^ID +TIME +CANDIDATE .*MEDIAN_US +PRED_US +PRED/MEAS +CAMPAIGN$' out 'rejected' out 'dry_run'
rows=$(grep -c '^ *[0-9][0-9]* ' "$T/out")
[ "$rows" -eq "$n" ] && ok "log: one row per evaluation ($n)" || bad "log: one row per evaluation" "$rows rows, expected $n"
first=$(grep -m1 '^ *[0-9][0-9]* ' "$T/out" | awk '{print $1}')
[ "$first" -eq "$n" ] && ok "log: newest first" || bad "log: newest first" "first row is $first"
run log --store "$S" --format=json
expect "log --format=json" 0 out '"schema":"cake-evals/1"'
check "log json: valid, count, predicted and measured fields" \
	test "$(py_field "$T/out" 'd["count"] == '$n' and all("predicted_us" in e and "median_us" in e for e in d["evaluations"])')" = True
run log --store "$S" --family gemm --format=json
check "log --family gemm" test "$(py_field "$T/out" 'd["count"]')" = $((n - 1))
run log --store "$S" --verdict rejected --format=json
check "log --verdict rejected" test "$(py_field "$T/out" '[e["candidate"] for e in d["evaluations"]] == ["'"$R"'"]')" = True
run log --store "$S" --kernel gemm_bf16_128x128 --shape "N=4096, M=4096,K=4096" --format=json
check "log --kernel and an uncanonical --shape" test "$(py_field "$T/out" 'sorted(e["candidate"] for e in d["evaluations"]) == sorted(["'"$P"'", "'"$V"'"])')" = True
run log --store "$S" --limit 2 --format=json
check "log --limit 2: the two newest" test "$(py_field "$T/out" '[e["id"] for e in d["evaluations"]]')" = "[$n, $((n - 1))]"
run log --store "$S" --candidate "$(echo "$V" | cut -c1-8)"
expect "log --candidate PREFIX" 0 out "$(echo "$V" | cut -c1-12)"
run log --store "$S" --verdict bogus
expect "log --verdict bogus: the valid verdicts" 2 err "unknown verdict 'bogus'" err 'ok, mismatch, hang, fault, compile_error, launch_error, refused, rejected, no_gpu, internal_error, dry_run' err "Try 'cake help'"
run log --store "$S" --shape M=
expect "log --shape M=" 2 err "bad --shape 'M='"
run log --store "$S" --limit 0
expect "log --limit 0" 2 err "--limit needs a positive count"
run log --store "$S" --family
expect "log --family without a value" 2 err "option '--family' needs a value"
run log --store "$S" gemm
expect "log with an argument" 2 err "unexpected argument 'gemm'"
run log --store "$S" --format=xml
expect "log --format=xml" 2 err "unknown format 'xml'"
run log --store "$S" --family nosuch
expect "log: nothing matches" 0 out '^no evaluations$'

# ---- cake show ----
run show "$V" --store "$S"
expect "show: full id" 0 out "^candidate $V\$" out '^origin +tactic:stages:3$' out "^parent +$P\$" out '^family +gemm$' \
	out '^  pipeline ab stages 3$' out '^1 evaluation$' out 'dry_run'
run show "$(echo "$V" | cut -c1-6 | tr a-f A-F)" --store "$S"
expect "show: an upper-case prefix" 0 out "^candidate $V\$"
run show "$R" --store "$S"
expect "show: a rejected candidate with its findings" 0 out '^findings of evaluation [0-9]+ \(rejected, kernel kmeans_assign_4wg' \
	out 'error: roles need .* \[CK-RES-002\]$' out '^  hint: ' out '^  condition: '
run show "$R" --store "$S" --format=json
expect "show --format=json" 0 out '"schema":"cake-candidate/1"'
check "show json: candidate, evaluations and stored findings" \
	test "$(py_field "$T/out" 'd["candidate"]["id"] == "'"$R"'" and d["count"] == 1 and d["evaluations"][0]["verdict"] == "rejected" and d["findings"][0]["verdict"] == "rejected" and d["findings"][0]["diags"]["diagnostics"][0]["rule"] == "CK-RES-002"')" = True
run show "$P" --store "$S" --format=json
check "show json: two evaluations, text kept" test "$(py_field "$T/out" 'd["count"] == 2 and "stages 5" in d["candidate"]["text"] and d["candidate"]["parent"] is None')" = True

# a digit that starts two candidate ids, and one that starts none
run log --store "$S" --format=json
ids=$(py_field "$T/out" '" ".join(sorted(set(e["candidate"] for e in d["evaluations"])))')
twice=$(python3 -c 'import sys,collections; c=collections.Counter(i[0] for i in sys.argv[1:]); print(min(k for k in c if c[k] > 1) if any(v > 1 for v in c.values()) else "")' $ids)
none=$(python3 -c 'import sys; used={i[0] for i in sys.argv[1:]}; print(min(set("0123456789abcdef") - used))' $ids)
if [ -n "$twice" ]; then
	run show "$twice" --store "$S"
	expect "show: ambiguous prefix '$twice' lists the matches" 1 err "id prefix '$twice' is ambiguous" \
		err "$(for i in $ids; do case $i in "$twice"*) echo "$i"; break ;; esac; done)"
	run diff "$twice" "$V" --store "$S"
	expect "diff: ambiguous prefix" 1 err "ambiguous"
else
	bad "show: ambiguous prefix" "no two of the $(echo $ids | wc -w) candidates share a first digit ($ids)"
fi
run show "$none" --store "$S"
expect "show: prefix '$none' not found" 1 err "no candidate id starts with '$none'"
run show xyz --store "$S"
expect "show: not hex" 2 err "'xyz' is not a candidate id"
run show --store "$S"
expect "show without an id" 2 err "no candidate ID"
run show "$V" "$P" --store "$S"
expect "show with two ids" 2 err "one candidate at a time"

# ---- cake best, before any timed run ----
run best gemm --shape $SHAPE --store "$S"
expect "best: only dry runs" 1 err "no timed ok evaluation of family gemm, shape K=4096,M=4096,N=4096" err '4 dry_run' err 'without --dry-run'
[ ! -s "$T/out" ] && ok "best: nothing on stdout when there is no best" || bad "best: nothing on stdout" "stdout not empty"
run best gemm --shape M=128,N=128,K=64 --store "$S"
expect "best: a shape never evaluated" 1 err 'no evaluation of it; family gemm was evaluated at: .*K=4096,M=4096,N=4096'
run best gemx --shape $SHAPE --store "$S"
expect "best: an unknown family" 1 err "no evaluation of family 'gemx' \(its families: .*gemm"
run best --frontier --store "$S"
expect "best --frontier: nothing timed" 1 err "no timed ok evaluation in the store; the store has $n evaluations: 1 rejected, $((n - 1)) dry_run"
run best gemm --store "$S"
expect "best without --shape" 2 err "--shape NAME=VALUE,... is required"
run best --shape $SHAPE --store "$S"
expect "best without a family" 2 err "no FAMILY"
run best gemm --shape $SHAPE --verdict ok --store "$S"
expect "best --verdict" 2 err "does not apply"

# ---- stand in for a GPU session: three dry runs become timed ok runs ----
python3 - "$S" "$P" "$V" "$PERS" <<'EOF' 2>"$T/pyerr"
import sqlite3, sys
db, p, v, pers = sys.argv[1:]
c = sqlite3.connect(db)
for cand, med in ((p, 200.0), (v, 190.0), (pers, 250.0)):
    c.execute("UPDATE evals SET verdict='ok', median_us=?, min_us=?, max_us=?, message=NULL "
              "WHERE cand=? AND shape='K=4096,M=4096,N=4096'", (med, med - 1, med + 5, cand))
c.commit()
EOF
[ $? -eq 0 ] && ok "three evaluations timed (sqlite3)" || bad "three evaluations timed (sqlite3)" "$(cat "$T/pyerr")"

# ---- cake best ----
run best gemm --shape $SHAPE --store "$S"
expect "best: the fastest ok" 0 out "^best of family gemm at shape K=4096,M=4096,N=4096: candidate $V, kernel gemm_bf16_128x128, median 190.0 us \(predicted [0-9.]+ us\)$" \
	out 'ok +190\.0 +[0-9.]+ +[0-9]+\.[0-9][0-9] '
run best gemm --shape "K=4096, N=4096,M=4096" --store "$S" --format=json
expect "best --format=json" 0 out '"schema":"cake-best/1"'
check "best json: the variant, its median" test "$(py_field "$T/out" 'd["best"]["candidate"] == "'"$V"'" and d["best"]["median_us"] == 190 and d["shape"] == "K=4096,M=4096,N=4096" and d["kernel"] is None')" = True
run best gemm --shape $SHAPE --kernel gemm_bf16_persistent --store "$S"
expect "best --kernel" 0 out "candidate $PERS, kernel gemm_bf16_persistent, median 250.0 us"
run best --frontier --store "$S" --format=json
expect "best --frontier --format=json" 0 out '"schema":"cake-evals/1"'
check "frontier: one per (family, kernel, shape)" \
	test "$(py_field "$T/out" '[(e["kernel"], e["candidate"], e["median_us"]) for e in d["evaluations"]] == [("gemm_bf16_128x128", "'"$V"'", 190), ("gemm_bf16_persistent", "'"$PERS"'", 250)]')" = True
run best --frontier gemm --store "$S"
expect "best --frontier FAMILY: text" 0 out '^ID +TIME' out 'gemm_bf16_persistent'
run log --store "$S" --verdict ok
expect "log: predicted against measured" 0 out 'ok +200\.0 +[0-9.]+ +[0-9]+\.[0-9][0-9] ' out 'ok +190\.0 '

# ---- cake diff ----
run diff "$P" "$V" --store "$S"
expect "diff A B: unified diff" 0 out "^--- $P \(human, family gemm\)\$" out "^\+\+\+ $V \(tactic:stages:3, family gemm, parent" \
	out '^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@$' out '^-  pipeline ab stages 5$' out '^\+  pipeline ab stages 3$' \
	out '^   role mma warps' out '^KERNEL +SHAPE +A +A_MEDIAN_US +A_PRED_US +B +B_MEDIAN_US +B_PRED_US +B/A_MEDIAN +B/A_PRED$' \
	out '^gemm_bf16_128x128 +K=4096,M=4096,N=4096 +ok +200\.0 +[0-9.]+ +ok +190\.0 +[0-9.]+ +0\.95 ' \
	out '^gemm_bf16_128x128 +K=8192,M=8192,N=8192 +dry_run +- +[0-9.]+ +- +- +- +- +-$'
cp "$T/out" "$T/diff_pv"
run diff "$V" --store "$S"
expect "diff A: against its parent" 0 out "^--- $P "
cmp -s "$T/out" "$T/diff_pv" && ok "diff A = diff parent(A) A" || bad "diff A = diff parent(A) A" "outputs differ"
run diff "$P" "$V" --context 0 --store "$S"
expect "diff --context 0" 0 out '^@@ -[0-9]+ \+[0-9]+ @@$' out '^-  pipeline ab stages 5$'
grep -q '^   role mma' "$T/out" && bad "diff --context 0: no context lines" "a context line" || ok "diff --context 0: no context lines"
run diff "$P" "$V" --store "$S" --format=json
expect "diff --format=json" 0 out '"schema":"cake-diff/1"'
check "diff json: both sides, a script that rebuilds both texts" \
	test "$(py_field "$T/out" 'd["a"]["candidate"]["id"] == "'"$P"'" and d["b"]["candidate"]["id"] == "'"$V"'" and d["a"]["count"] == 2 and len(d["b"]["evaluations"]) == 1 and {"op": "-", "line": "  pipeline ab stages 5"} in d["diff"] and {"op": "+", "line": "  pipeline ab stages 3"} in d["diff"] and set(o["op"] for o in d["diff"]) <= {" ", "-", "+"} and [o["line"] for o in d["diff"] if o["op"] != "+"] == d["a"]["candidate"]["text"].splitlines() and [o["line"] for o in d["diff"] if o["op"] != "-"] == d["b"]["candidate"]["text"].splitlines() and d["deleted"] == sum(o["op"] == "-" for o in d["diff"])')" = True
run diff "$P" "$P" --store "$S"
expect "diff A A: the same IR" 0 out '^\(the IR is the same\)$' out '0 lines deleted, 0 inserted'
run diff "$P" --store "$S"
expect "diff A without a parent" 1 err "candidate $P has no parent \(origin human\)"
run diff "$none" --store "$S"
expect "diff: not found" 1 err "no candidate id starts with"
run diff --store "$S"
expect "diff without candidates" 2 err "no candidate"
run diff "$P" "$V" "$R" --store "$S"
expect "diff with three candidates" 2 err "two candidates at most"
run diff "$P" "$V" --context x --store "$S"
expect "diff --context x" 2 err "--context needs a count"

# ---- cake export ----
run export --store "$S"
expect "export to stdout" 0 out '^\{"format":"cake-measure/1","id":1,'
lines=$(wc -l <"$T/out")
[ "$lines" -eq "$n" ] && ok "export: one line per evaluation ($n)" || bad "export: one line per evaluation" "$lines lines, expected $n"
check "export: every line a cake-measure/1 object, oldest first" python3 -c '
import json, sys
ids = []
for l in open(sys.argv[1], encoding="utf-8"):
    o = json.loads(l)
    assert o["format"] == "cake-measure/1" and "predicted_us" in o and "median_us" in o
    ids.append(o["id"])
assert ids == sorted(ids), ids' "$T/out"
run export --store "$S" -o "$T/m.jsonl"
expect "export -o FILE" 0 err "^cake export: $n evaluations to "
[ ! -s "$T/out" ] && [ "$(wc -l <"$T/m.jsonl")" -eq "$n" ] && ok "export -o: the file has every line, stdout nothing" || bad "export -o" "$(wc -l <"$T/m.jsonl") lines"
run export --store "$S" --verdict ok --family gemm -o "$T/ok.jsonl"
expect "export with filters" 0 err "^cake export: 3 evaluations to "
run export --store "$S" --verdict nope
expect "export --verdict nope" 2 err "unknown verdict 'nope'"
run export --store "$S" --format=json
expect "export --format" 2 err "always JSON lines"
run export --store "$S" -o "$T/no/such/dir/m.jsonl"
expect "export -o into a missing directory" 2 err "cannot write"

# ---- missing, empty and corrupt stores ----
mkdir "$T/w"
for c in log "show $V" "best gemm --shape $SHAPE" "diff $V" export; do
	# shellcheck disable=SC2086
	run_in "$T/w" $c
	expect "$c: no default store" 2 err "no store at '\.cake/store\.db'" err "'cake eval' or 'cake evolve' makes one"
	# shellcheck disable=SC2086
	run $c --store "$T/none.db"
	expect "$c --store missing" 2 err "no store at '$T/none\.db'"
done
[ ! -e "$T/w/.cake" ] && ok "queries create no .cake directory" || bad "queries create no .cake directory" "$(ls -a "$T/w")"
[ -z "$(ls "$T" | grep none)" ] && ok "queries create no store file" || bad "queries create no store file" "$(ls "$T")"
: >"$T/empty.db"
run log --store "$T/empty.db"
expect "log: an empty file is not a store" 2 err "no store at .*the file is empty"
[ ! -s "$T/empty.db" ] && ok "the empty file stays empty" || bad "the empty file stays empty" "it has $(wc -c <"$T/empty.db") bytes"
head -c 8192 /dev/urandom >"$T/bad.db"
cp "$T/bad.db" "$T/bad.orig"
for c in log "show 1" "best gemm --shape $SHAPE" "diff 1 2" export; do
	# shellcheck disable=SC2086
	run $c --store "$T/bad.db"
	expect "$c: a corrupt store is refused" 2 err "store '$T/bad\.db': not a SQLite database" err 'left it untouched'
	cmp -s "$T/bad.db" "$T/bad.orig" && ok "$c: the corrupt file is unchanged" || bad "$c: the corrupt file is unchanged" "cmp differs"
done
[ ! -e "$T/bad.db-wal" ] && [ ! -e "$T/bad.db-shm" ] && ok "no side files next to the corrupt file" || bad "no side files" "$(ls "$T")"

# ---- help ----
run help
expect "help lists the query commands" 0 out 'cake log ' out 'cake show ID' out 'cake best FAMILY' out 'cake diff A \[B\]' out 'cake export '
finish
