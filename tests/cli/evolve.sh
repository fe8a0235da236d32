#!/bin/sh
# evolve.sh — `cake eval` and `cake evolve` against a real store, without a GPU (--dry-run):
# recording and serving from the store, verifier rejections recorded with their findings,
# resume, SIGKILL at random moments (integrity, no lost evaluation, no duplicated work),
# two processes on one store, and refusals of corrupt, foreign and newer stores (never
# overwritten).
. "$(dirname "$0")/lib.inc"

G=kernels/gemm/gemm_ws_128x128_s5.cake
SH=M=4096,N=4096,K=4096
S="$T/store.db"
py() { python3 - "$@"; }

# ---- cake eval ----
run eval "$G" --shape "$SH" --dry-run --store "$S"
expect "eval --dry-run records" 0 out '^verdict: dry_run' out 'predicted: '
run eval "$G" --shape "$SH" --dry-run --store "$S" --format=json
expect "a second eval is served from the store" 0 out '"cached":true'
run eval tests/corpus/bad/res_regs_launch_pool.cake --shape B=1,N=1024,K=1024 --dry-run --store "$S"
expect "a verifier rejection is recorded" 1 out '^verdict: rejected: CK-RES-002' err 'CK-RES-002'
n=$(py "$S" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select count(*) from diags d join evals e on d.eval = e.id where e.verdict = 'rejected' and d.rule = 'CK-RES-002'").fetchone()[0])
PY
)
[ "$n" -ge 1 ] && ok "the rejection's findings are stored" || bad "the rejection's findings are stored" "count $n"
run eval "$G" --shape M=4096 --dry-run --store "$S"
expect "eval with a shape missing dims" 2 err 'missing'
run eval "$G" --dry-run --store "$S"
expect "eval without --shape" 2 err 'shape'

# ---- cake evolve: a dry run, then a resume ----
E="$T/evolve.db"
run evolve "$G" --shape "$SH" --budget 12c --dry-run --store "$E" --format=json
expect "evolve --dry-run" 0 out '"event":"done"' out '"reason":"budget \(candidates\) spent"'
c1=$(py "$E" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(distinct cand) from evals").fetchone()[0])
PY
)
[ "$c1" -eq 12 ] && ok "the candidate budget is honoured (12)" || bad "the candidate budget is honoured (12)" "$c1 candidates"
run evolve "$G" --shape "$SH" --budget 20c --dry-run --store "$E" --format=json
expect "a rerun with a larger budget resumes" 0 out '"event":"done"'
py "$E" > "$T/dup" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select count(distinct cand) from evals").fetchone()[0],
      c.execute("select count(*) from (select cand, shape, harness, count(*) n from evals group by cand, shape, harness having n > 1)").fetchone()[0])
PY
read nc nd < "$T/dup"
[ "$nc" -eq 20 ] && [ "$nd" -eq 0 ] && ok "resume: 20 candidates, nothing evaluated twice" || bad "resume: 20 candidates, nothing evaluated twice" "$nc candidates, $nd duplicates"
# a second campaign from the same seed (another name): what the store serves it (judged by the
# first) must still count, or it loses its seed after one generation and stops with nothing new
run evolve "$G" --shape "$SH" --budget 30c --dry-run --store "$E" --campaign second --format=json
expect "a second campaign from the same seed searches on past what the store served" 0 \
	out '"reason":"budget \(candidates\) spent"' out '"campaign":"second","generation":[1-9][0-9]*,"proposed":30,'
run evolve "$G" --shape "$SH" --budget 12c --dry-run --store "$E" --format=text
expect "evolve text summary" 0 out 'budget \(candidates\) spent' out 'rejected by the verifier'
run evolve no_such_family --shape "$SH" --budget 5c --dry-run --store "$E"
expect "evolve: unknown seed" 2 err 'neither a readable .cake file nor a kernel family'
run evolve "$G" --shape "$SH" --dry-run --store "$E"
expect "evolve: no budget" 2 err 'budget is required'
run evolve "$G" --shape "$SH" --budget 10x --dry-run --store "$E"
expect "evolve: bad budget" 2 err "not '10x'"

# ---- SIGKILL at random moments, until 20 kills have landed on a running process ----
K="$T/kill.db"
prev=0
kills=0
lost=0
i=0
while [ "$kills" -lt 20 ] && [ "$i" -lt 40 ]; do
	i=$((i + 1))
	"$CAKE" evolve "$G" --shape "$SH" --budget 400c --dry-run --store "$K" --format=json >/dev/null 2>&1 &
	pid=$!
	sleep "$(py "$i" <<'PY'
import random, sys
random.seed(int(sys.argv[1]))
print("%.2f" % random.uniform(0.05, 1.2))
PY
)"
	kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null
	py "$K" "$prev" > "$T/k" <<'PY'
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    ic = c.execute("pragma integrity_check").fetchone()[0]
    n = c.execute("select count(*) from evals").fetchone()[0]
    d = c.execute("select count(*) from (select cand, shape, harness, count(*) n from evals group by cand, shape, harness having n > 1)").fetchone()[0]
except sqlite3.DatabaseError as e:   # the very first kill may land before the file exists
    ic, n, d = "missing" if "no such table" in str(e) else str(e), int(sys.argv[2]), 0
print(ic.replace(" ", "_"), n, d)
PY
	read ic n d < "$T/k"
	if [ "$ic" != ok ] && [ "$ic" != missing ]; then lost=$((lost + 1)); echo "    kill $i: integrity_check: $ic"; fi
	if [ "$n" -lt "$prev" ]; then lost=$((lost + 1)); echo "    kill $i: evaluations went from $prev to $n"; fi
	if [ "$d" -ne 0 ]; then lost=$((lost + 1)); echo "    kill $i: $d work items evaluated twice"; fi
	prev=$n
done
[ "$lost" -eq 0 ] && [ "$kills" -ge 20 ] && ok "$kills SIGKILLs landed ($i runs): integrity ok, no evaluation lost, nothing evaluated twice" ||
	bad "20 SIGKILLs: integrity, no loss, no duplicates" "$lost problems, $kills kills landed in $i runs"
run evolve "$G" --shape "$SH" --budget 60c --dry-run --store "$K" --format=json
expect "after the kills a rerun finishes the budget" 0 out '"event":"done"'
py "$K" > "$T/k" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select count(*) from (select cand, shape, harness, count(*) n from evals group by cand, shape, harness having n > 1)").fetchone()[0])
PY
[ "$(cat "$T/k")" -eq 0 ] && ok "the resumed campaign duplicated nothing" || bad "the resumed campaign duplicated nothing" "$(cat "$T/k") duplicates"

# ---- Ctrl-C (SIGINT): stops after the evaluation in flight, exit 130, resumable ----
# A budget far larger than the test lets it spend, so the signal always lands mid-campaign;
# an empty JIT cache, so that NVRTC really compiles and the signal can land mid-compile too
# (nvrtcCompileProgram installs its own SIGINT handler, which ends the process with status 4,
# unless the JIT holds the signal back for the caller's handler). Three interrupts at
# different moments after the first evaluation.
I="$T/int.db"
for d in 0 0.3 0.8; do
	rm -rf "$T/int.db" "$T/int.db-wal" "$T/int.db-shm" "$T/jitcache"
	XDG_CACHE_HOME="$T/jitcache" "$CAKE" evolve "$G" --shape "$SH" --budget 3000c --dry-run --store "$I" --format=json > "$T/int.out" 2>&1 &
	ip=$!
	w=0
	while ! grep -q '"event":"eval"' "$T/int.out" 2>/dev/null && [ $w -lt 600 ]; do sleep 0.05; w=$((w + 1)); done
	sleep "$d"
	kill -INT "$ip" 2>/dev/null
	wait "$ip"
	irc=$?
	grep -q '"reason":"interrupted"' "$T/int.out" && [ "$irc" -eq 130 ] && ok "SIGINT ${d}s after the first evaluation stops cleanly (exit 130, a done event saying interrupted)" ||
		bad "SIGINT ${d}s after the first evaluation stops cleanly" "exit $irc; $(grep -v '"event"' "$T/int.out" | head -3) $(tail -1 "$T/int.out" | cut -c1-200)"
done
run evolve "$G" --shape "$SH" --budget 20c --dry-run --store "$I" --format=json
expect "after Ctrl-C the same command resumes" 0 out '"event":"done"'

# ---- two processes on one store ----
P="$T/pair.db"
"$CAKE" evolve "$G" --shape "$SH" --budget 40c --dry-run --store "$P" --format=json > "$T/p1" 2>&1 &
p1=$!
"$CAKE" evolve "$G" --shape "$SH" --budget 40c --dry-run --store "$P" --format=json > "$T/p2" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
py "$P" > "$T/pp" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("pragma integrity_check").fetchone()[0],
      c.execute("select count(*) from (select cand, shape, harness, count(*) n from evals group by cand, shape, harness having n > 1)").fetchone()[0],
      c.execute("select count(distinct cand) from evals").fetchone()[0])
PY
read ic d nc < "$T/pp"
[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [ "$ic" = ok ] && [ "$d" -eq 0 ] && ok "two evolves on one store: both finish, integrity ok, nothing evaluated twice ($nc candidates)" ||
	bad "two evolves on one store" "rc $r1/$r2, integrity $ic, $d duplicates; $(tail -2 "$T/p1") $(tail -2 "$T/p2")"

# ---- stores that must be refused and left alone ----
head -c 8192 /dev/urandom > "$T/junk.db"
cp "$T/junk.db" "$T/junk.orig"
run evolve "$G" --shape "$SH" --budget 5c --dry-run --store "$T/junk.db"
expect "a corrupt store is refused" 2 err 'junk.db'
cmp -s "$T/junk.db" "$T/junk.orig" && ok "the corrupt store is unchanged" || bad "the corrupt store is unchanged" "bytes differ"
py "$T/foreign.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("create table t(x)"); c.execute("insert into t values (1)"); c.commit(); c.close()
PY
cp "$T/foreign.db" "$T/foreign.orig"
run eval "$G" --shape "$SH" --dry-run --store "$T/foreign.db"
expect "a foreign SQLite file is refused" 2 err 'not a Cake store|foreign'
cmp -s "$T/foreign.db" "$T/foreign.orig" && ok "the foreign file is unchanged" || bad "the foreign file is unchanged" "bytes differ"
cp "$E" "$T/newer.db"
py "$T/newer.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("pragma user_version = 99"); c.commit(); c.close()
PY
cp "$T/newer.db" "$T/newer.orig"
run evolve "$G" --shape "$SH" --budget 5c --dry-run --store "$T/newer.db"
expect "a newer store is refused" 2 err 'newer|version'
cmp -s "$T/newer.db" "$T/newer.orig" && ok "the newer store is unchanged" || bad "the newer store is unchanged" "bytes differ"
# ---- a kernel that spills, evaluated on the (stand-in) GPU path: refused with its finding ----
# The jit stage runs in the isolated runner's child; the CK-LOW-014 finding must come back to
# the store (verdict refused, as on the dry-run path, the message and a diags row).
FAKE=$T/fake
mkdir -p "$FAKE"
if cc -shared -fPIC -o "$FAKE/libcuda.so.1" tests/cli/fake_cuda.c 2>"$T/cc"; then
	SP="$T/spill.db"
	LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$CAKE" eval tests/data/eval/spill_assign.cake \
		--shape B=2,N=1024,K=512 --store "$SP" > "$T/out" 2> "$T/err"
	rc=$?
	if grep -q 'cannot load NVRTC' "$T/out" "$T/err"; then
		ok "a spilling kernel on the GPU path (skipped: no NVRTC)"
	else
		n=$(py "$SP" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
v, m = c.execute("select verdict, message from evals").fetchone()
d = c.execute("select count(*) from diags where rule = 'CK-LOW-014'").fetchone()[0]
print(v, d, "CK-LOW-014" in (m or ""))
PY
)
		[ "$rc" -eq 1 ] && [ "$n" = "refused 1 True" ] && ok "a spilling kernel on the GPU path: refused, CK-LOW-014 in the message and the findings" ||
			bad "a spilling kernel on the GPU path" "exit $rc, store: $n; $(tail -2 "$T/out")"
	fi
else
	ok "a spilling kernel on the GPU path (skipped: no C compiler)"
fi

finish
