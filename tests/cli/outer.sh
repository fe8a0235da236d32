#!/bin/sh
# outer.sh — the outer loop's commands on the CK-RES-002 v1 -> v2 history, without a GPU:
# `cake eval --skip-rule` (a v1-style harness), `cake mine`, `cake gate --store` (rule impact,
# recorded as a gate run) and `cake gate --store --trace`.
#
# The store is built the way bench/outer_example.sh builds it on the GPU host, with the real
# pipeline (`cake eval --dry-run --skip-rule CK-RES-002`), and then THE GPU VERDICTS ARE PLANTED
# with SQL: `hang` for the regs-120 assign and `ok` for its variants, as the H200 returned them in
# bench/RESULTS.md runs S1 and S2. Nothing in cake is faked; only the verdicts a GPU would have
# written are written by this script.
. "$(dirname "$0")/lib.inc"

B=tests/corpus/bad/res_regs_launch_pool.cake
SH=B=32,N=65536,K=1024
CSH=B=32,K=1024,N=65536   # canonical
S="$T/outer.db"
py() { python3 - "$@"; }

# ---- eval --skip-rule: the v1-style harness lets the hang through and says so ----
run eval "$B" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --format=json
expect "eval --skip-rule CK-RES-002 lets the four-warpgroup assign through" 0 out '"verdict":"dry_run"'
hang=$(py "$T/out" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["candidate"])
PY
)
v=$(py "$S" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select verifier from evals order by id desc limit 1").fetchone()[0])
PY
)
case "$v" in v1-*-without:CK-RES-002) ok "the recorded verifier version names the skipped rule ($v)" ;;
*) bad "the recorded verifier version names the skipped rule" "$v" ;; esac
run eval "$B" --shape "$SH" --dry-run --store "$S"
expect "without --skip-rule the same candidate is rejected (another harness)" 1 out 'rejected: CK-RES-002'
run eval "$B" --shape "$SH" --dry-run --store "$S" --skip-rule CK-NOPE-001
expect "--skip-rule with an unknown rule" 2 err 'verifier rule ID'
run eval "$B" --shape "$SH" --dry-run --store "$S" --skip-rule CK-LOW-014
expect "--skip-rule with a lowering rule" 2 err 'verifier rule ID'

# ---- the variants that ran ok: regs 112, and two stage counts ----
sed 's/regs 120/regs 112/' "$B" > "$T/r112.cake"
run eval "$T/r112.cake" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --parent "$hang" --format=json
expect "the regs-112 variant" 0 out '"verdict":"dry_run"'
r112=$(py "$T/out" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["candidate"])
PY
)
for st in 3 2; do
	sed "s/pipeline cr stages 4/pipeline cr stages $st/" "$T/r112.cake" > "$T/s$st.cake"
	run eval "$T/s$st.cake" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --parent "$r112"
	expect "the regs-112 variant with $st stages" 0 out '^verdict: dry_run'
done

# planted: the verdicts the H200 returned (runs S1, S2), written over the dry runs of the v1 harness
py "$S" "$hang" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select id, cand from evals where verifier like '%-without:CK-RES-002' and verdict = 'dry_run'").fetchall()
for i, (eid, cand) in enumerate(rows):
    if cand == sys.argv[2]:
        c.execute("update evals set verdict = 'hang', gpu = 'NVIDIA H200', gpu_s = 10.4, message = "
                  "'the watchdog fired after 10 s (planted by tests/cli/outer.sh)' where id = ?", (eid,))
    else:
        c.execute("update evals set verdict = 'ok', gpu = 'NVIDIA H200', gpu_s = 2.1, median_us = ?, min_us = ?, "
                  "max_us = ?, message = NULL where id = ?", (1029.1 + 10 * i, 1025.0 + 10 * i, 1040.0 + 10 * i, eid))
c.commit()
PY

# ---- cake mine: the register pool ----
run mine --store "$S"
expect "cake mine finds the register-pool cluster" 0 \
	out '^cake mine: 4 work items ran on a GPU: 1 failed' \
	out '^cluster 1: 1 failure \(hang 1\) sharing regs_pool=over -> rule family CK-RES' \
	out 'regs\.dist=120 +1/1 100% +0/3 +0%' \
	out "today's harness blocks 1 of 1 \(CK-RES-002\)"
grep -q 'launch_pool=61440' "$T/out" && bad "a feature every ok run holds is not shared" "launch_pool listed" ||
	ok "a feature every ok run holds (launch_pool=61440) is not listed as shared"
run mine --store "$S" --format=json
expect "cake mine --format=json" 0 out '"schema":"cake-mine/1"'
json_valid "mine json" "$T/out" && ok "cake mine JSON parses" || bad "cake mine JSON parses" "not JSON"
run mine --store "$S" --max-ok 150
expect "cake mine --max-ok out of range" 2 err 'percentage'
run mine --store "$S" --verdict ok
expect "cake mine on ok runs only: nothing to mine" 0 out 'no GPU failure to mine'

# ---- cake gate --store: v2 catches the hang, rejects none of the ok runs ----
run gate --store "$S"
expect "gate --store: one true positive of CK-RES-002, no false positive" 0 \
	out '^  CK-RES-002 +1 +0 +0 +0 +0$' \
	out "^  true_positive +$(printf %.12s "$hang") kmeans_assign_4wg $CSH: accepted .*-without:CK-RES-002\) -> rejected by CK-RES-002; GPU: hang" \
	out '^gate --store: 1 true positive, 0 false positives, 0 unrun, 0 newly accepted' \
	out '^  recorded: gate run 1$'
n=$(py "$S" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select count(*) from gate_runs").fetchone()[0],
      c.execute("select count(*) from gate_impact where rule = 'CK-RES-002' and impact = 'true_positive' and gpu_verdict = 'hang'").fetchone()[0])
PY
)
[ "$n" = "1 1" ] && ok "the gate run and its impact row are in the store" || bad "the gate run and its impact row are in the store" "$n"
run gate --store "$S" --format=json --no-record
expect "gate --store --format=json --no-record" 0 out '"schema":"cake-gate-impact/1"' out '"recorded":false'
json_valid "impact json" "$T/out" && ok "the impact JSON parses" || bad "the impact JSON parses" "not JSON"
[ "$(py "$S" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from gate_runs").fetchone()[0])
PY
)" = 1 ] && ok "--no-record records nothing" || bad "--no-record records nothing" "a run was recorded"

# ---- --trace: where did the candidate go? ----
run gate --store "$S" --trace "$(printf %.8s "$hang")"
expect "gate --trace names the rule that removed the hang" 0 \
	out "^candidate $hang" \
	out '-without:CK-RES-002  hang: the watchdog fired' \
	out 'accepted -> rejected by CK-RES-002 \(true_positive; GPU: hang\)' \
	out '^now: kmeans_assign_4wg .* is rejected \(removed from the search by CK-RES-002 in gate run 1'
run gate --store "$S" --trace "$r112" --format=json
expect "gate --trace --format=json" 0 out '"schema":"cake-gate-trace/1"' out '"gate_runs":\[\]'
run gate --store "$S" --trace ffff0000
expect "gate --trace of an unknown candidate" 1 err 'no candidate id starts with'

# ---- a false positive: a rule that rejects what ran ok fails the gate ----
sed 's/pipeline cr stages 4/pipeline cr stages 3/' "$B" > "$T/r120s3.cake"
run eval "$T/r120s3.cake" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002
expect "regs 120 with 3 stages, through the v1-style harness" 0 out '^verdict: dry_run'
py "$S" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
# planted: pretend the regs-120, 3-stage kernel ran ok (it would hang), so that CK-RES-002 has a false positive
c.execute("update evals set verdict = 'ok', median_us = 999, gpu = 'NVIDIA H200' where verdict = 'dry_run' and "
          "verifier like '%-without:CK-RES-002'")
c.commit()
PY
run gate --store "$S" --no-record
expect "a false positive fails gate --store" 1 out '^  CK-RES-002 +1 +1 ' out '^  false_positive ' \
	out '1 true positive, 1 false positive'
finish
