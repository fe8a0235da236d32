#!/bin/sh
# import.sh — `cake import`: measurement sets (cake-measure/1 + cake-candidate/1) back into a store.
# The worked example of docs/OUTER_LOOP.md from the committed real data: run S of
# bench/RESULTS.md (the regs-120 four-warpgroup assign that hung an H200, and the regs-112 fix
# that ran) with the 111 timed candidates of the k-means clean-start campaign (run C2), imported
# into a fresh store; `cake mine` must point at the register pool and `cake gate --store` must
# find the hang a true positive of CK-RES-002 and no false positive among the 112 ok runs.
# Then the refusals: a damaged line, an unknown verdict, an edited text, a missing text and a
# missing file each refuse the whole import and leave the store as it was.
. "$(dirname "$0")/lib.inc"

RS=data/measure/h200-run-S-2026-11-29.jsonl
C2=data/measure/h200-kmeans-clean-start-2026-12-01.jsonl
S="$T/ws.db"
run import "$RS" "$C2" --store "$S"
expect "import run S and campaign C2" 0 out '114 measurements read from 2 files: 114 new evaluations, 0 already stored; 113 new candidates'
run import "$RS" --store "$S"
expect "a second import adds nothing" 0 out '3 measurements read from 1 file: 0 new evaluations, 3 already stored; 0 new candidates'
run log --store "$S" --verdict hang
expect "the hang is in the store as recorded" 0 out 'kmeans_assign_4wg +B=32,K=1024,N=65536 +hang'
run mine --store "$S"
expect "mine: one cluster, the register pool, no ok run holds it" 0 \
	out '113 work items ran on a GPU: 1 failed' out 'cluster 1: 1 failure \(hang 1\) sharing regs_pool=over -> rule family CK-RES' \
	out 'regs_pool=over +1/1 100% +0/112 +0%'
run gate --store "$S"
expect "gate --store: CK-RES-002 catches the hang, rejects none of the 112 ok runs" 0 \
	out 'CK-RES-002 +1 +0 +0 +0 +0' out '1 true positive, 0 false positives'

# ---- refusals: nothing is written ----
cp "$S" "$T/before.db"
cnt() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('select count(*) from evals').fetchone()[0], c.execute('select count(*) from candidates').fetchone()[0])" "$1"; }
before=$(cnt "$S")
B="$T/bad"
mkdir -p "$B"
cp data/measure/h200-run-S-2026-11-29.candidates.jsonl "$B/x.candidates.jsonl"
{ head -1 "$RS" | sed 's/"time_ms":[0-9]*/"time_ms":1796000000000/'; echo '{"format":"cake-measure/1",'; } > "$B/x.jsonl"
run import "$B/x.jsonl" --store "$S"
expect "a damaged line refuses the import" 1 err 'x.jsonl:2: not a JSON object' err 'nothing was imported'
head -1 "$RS" | sed 's/"verdict":"hang"/"verdict":"melted"/' > "$B/x.jsonl"
run import "$B/x.jsonl" --store "$S"
expect "an unknown verdict refuses the import" 1 err "x.jsonl:1: unknown verdict 'melted'"
sed 's/regs 120/regs 121/' data/measure/h200-run-S-2026-11-29.candidates.jsonl > "$B/x.candidates.jsonl"
head -1 "$RS" | sed 's/"time_ms":[0-9]*/"time_ms":1796000000000/' > "$B/x.jsonl"
run import "$B/x.jsonl" --store "$S"
expect "an edited candidate text refuses the import" 1 err 'x.candidates.jsonl:1: the text of candidate 19742fa78ee99fcd705989c97623cb1c hashes to'
rm "$B/x.candidates.jsonl"
run import "$B/x.jsonl" --store "$S"
expect "a measurement without its text refuses the import" 1 err 'no text for candidate 19742fa78ee99fcd705989c97623cb1c'
head -1 "$RS" | sed 's/"kernel":"[a-z_0-9]*",//' > "$B/y.jsonl"
run import "$B/y.jsonl" --candidates data/measure/h200-run-S-2026-11-29.candidates.jsonl --store "$S"
expect "a measurement without a kernel refuses the import" 1 err 'y.jsonl:1: the measurement has no "kernel"'
run import "$T/none.jsonl" --store "$S"
expect "a missing file" 2 err "cannot read '$T/none.jsonl'"
run import --store "$S"
expect "import without files" 2 err 'name the cake-measure/1 files'
[ "$(cnt "$S")" = "$before" ] && ok "the refused imports left the store as it was ($before)" ||
	bad "the refused imports left the store as it was" "before $before, after $(cnt "$S")"
finish
