#!/bin/sh
# report.sh — `cake report`: one static HTML page from a store, checked twice: its text (parsed
# with Python's html.parser: the numbers in the cells with stable ids agree with the store, every
# in-page link has its anchor, no script) and its rendering (headless Chromium draws it to a PNG,
# decoded here with zlib alone, which must not be blank and must hold the charts' colours).
#
# The store: the CK-RES-002 history of tests/cli/outer.sh (regs-120 assign and its regs-112
# variants through a v1-style harness, `cake eval --dry-run --skip-rule CK-RES-002`), the same
# hang judged by today's harness (a real rejection), a short `cake evolve --dry-run` campaign from
# the regs-112 kernel, and a gate run. THE GPU VERDICTS AND TIMES ARE PLANTED with SQL (hang for
# regs 120; ok with medians for the rest, improving along the campaign), because this test has no
# GPU; everything else is what cake recorded.
. "$(dirname "$0")/lib.inc"

B=tests/corpus/bad/res_regs_launch_pool.cake
SH=B=32,N=65536,K=1024
S="$T/report.db"
H="$T/report.html"
py() { python3 - "$@"; }
cid() { py "$T/out" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["candidate"])
PY
}

run eval "$B" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --format=json
hang=$(cid)
sed 's/regs 120/regs 112/' "$B" > "$T/r112.cake"
run eval "$T/r112.cake" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --parent "$hang" --format=json
r112=$(cid)
sed 's/pipeline cr stages 4/pipeline cr stages 3/' "$T/r112.cake" > "$T/s3.cake"
run eval "$T/s3.cake" --shape "$SH" --dry-run --store "$S" --skip-rule CK-RES-002 --parent "$r112"
run eval "$B" --shape "$SH" --dry-run --store "$S"
expect "today's harness rejects the hang (no GPU run)" 1 out 'rejected: CK-RES-002'
run evolve "$T/r112.cake" --shape "$SH" --budget 6c --dry-run --store "$S" --campaign assign-4wg --format=json
expect "a short dry-run campaign" 0 out '"event":"done"'
# planted: GPU verdicts and times (see the header)
py "$S" "$hang" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select id, cand from evals where verdict = 'dry_run' order by id").fetchall()
t = 1029.1
for eid, cand in rows:
    if cand == sys.argv[2]:
        c.execute("update evals set verdict = 'hang', gpu = 'NVIDIA H200', gpu_s = 10.4, message = 'watchdog (planted)' where id = ?", (eid,))
    else:
        c.execute("update evals set verdict = 'ok', gpu = 'NVIDIA H200', gpu_s = 2.5, median_us = ?, min_us = ?, max_us = ? where id = ?",
                  (t, t - 3, t + 9, eid))
        t *= 0.97
c.commit()
PY
# a second campaign with a baseline (planted times slower than the first campaign's)
run evolve kernels/kmeans/seed_naive.cake --shape "$SH" --budget 8c --dry-run --store "$S" --campaign with-base \
	--baseline kernels/kmeans/assign.cake --baseline-kernel kmeans_assign --format=json
expect "a dry-run campaign with a baseline" 0 out '"event":"done"'
py "$S" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = 1300.0
for eid, in c.execute("select id from evals where verdict = 'dry_run' and campaign = 'with-base' order by id").fetchall():
    c.execute("update evals set verdict = 'ok', gpu = 'NVIDIA H200', gpu_s = 2.5, median_us = ?, min_us = ?, max_us = ? where id = ?",
              (t, t - 3, t + 9, eid))
    t -= 7
c.commit()
PY
run gate --store "$S"
expect "a gate run for the impact table" 0 out '1 true positive, 0 false positives'

run report --store "$S" -o "$H" --title "Outer loop test report"
expect "cake report writes the page" 0 err "wrote $H"
[ -s "$H" ] && ok "the page is not empty" || bad "the page is not empty" "missing or empty"

# ---- the text: numbers agree with the store ----
py "$H" "$S" > "$T/check" 2>&1 <<'PY'
import html.parser, sqlite3, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.ids = {}; self.stack = []; self.hrefs = []; self.anchors = set()
        self.scripts = 0; self.svgs = 0; self.tags = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script": self.scripts += 1
        if tag == "svg": self.svgs += 1
        if "id" in a: self.anchors.add(a["id"])
        if tag == "a" and a.get("href", "").startswith("#"): self.hrefs.append(a["href"][1:])
        self.stack.append(a.get("id")); self.ids.setdefault(a.get("id"), "")
    def handle_endtag(self, tag):
        if self.stack: self.stack.pop()
    def handle_data(self, d):
        for i in self.stack:
            if i: self.ids[i] = self.ids.get(i, "") + d
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
c = sqlite3.connect(sys.argv[2])
q = lambda s: c.execute(s).fetchone()[0]
problems = []
def want(i, v):
    got = p.ids.get(i, "<missing>").strip()
    if got != str(v): problems.append(f"{i}: page says {got!r}, store says {v!r}")
want("total-evals", q("select count(*) from evals"))
want("verdict-ok", q("select count(*) from evals where verdict = 'ok'"))
want("verdict-hang", 1)
want("verdict-rejected", q("select count(*) from evals where verdict = 'rejected'"))
want("saved-runs", q("select count(*) from evals where verdict in ('rejected', 'refused')"))
want("impact-CK-RES-002-tp", 1)
want("impact-CK-RES-002-fp", 0)
want("frontier-1-median", "%.1f" % q("select min(median_us) from evals where verdict = 'ok'"))
want("total-cands", q("select count(distinct cand) from evals"))
want("scatter-n", q("select count(*) from evals where verdict = 'ok' and predicted_us is not null and median_us is not null"))
# the baseline of campaign with-base: a root that nothing was derived from, drawn as a reference
base = c.execute("""select min(e.median_us) from evals e join candidates k on k.id = e.cand
                     where e.campaign = 'with-base' and e.verdict = 'ok' and k.parent is null
                     and not exists (select 1 from candidates x where x.parent = k.id)""").fetchone()[0]
refs = [v.strip() for i, v in p.ids.items() if i and i.startswith("curve-") and i.endswith("-baseline") and not i.endswith("-vs-baseline") and v.strip() not in ("", "\u2013")]
if base is None or refs != ["%.1f" % base]:
    problems.append(f"baseline reference: page {refs}, store {base}")
missing = [h for h in p.hrefs if h not in p.anchors]
if missing: problems.append("links without an anchor: " + ", ".join(missing[:5]))
if p.scripts: problems.append(f"{p.scripts} script elements")
if p.svgs < 3: problems.append(f"only {p.svgs} svg charts")
if "class=\"add\"" not in open(sys.argv[1]).read(): problems.append("no diff line was rendered")
print("\n".join(problems) if problems else "OK")
PY
[ "$(cat "$T/check")" = OK ] && ok "the page's numbers agree with the store (the baseline drawn as a reference), links resolve, no script, 3 charts, a diff" ||
	bad "the page's numbers agree with the store" "$(cat "$T/check")"

# ---- the rendering: headless Chromium to a PNG that is not blank ----
if command -v chromium >/dev/null 2>&1; then
	timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$T/report.png" \
		--window-size=1200,2000 "file://$H" >"$T/chromium.log" 2>&1
	py "$T/report.png" > "$T/png" 2>&1 <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(d):
    n, = struct.unpack(">I", d[pos:pos + 4]); t = d[pos + 4:pos + 8]; c = d[pos + 8:pos + 8 + n]
    if t == b"IHDR": w, h, bd, ct = struct.unpack(">IIBB", c[:10])
    if t == b"IDAT": idat += c
    pos += 12 + n
bpp = {6: 4, 2: 3}[ct]; stride = w * bpp; raw = zlib.decompress(idat)
prev = bytearray(stride); i = 0; nonwhite = colour = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if min(r, g, bl) < 240: nonwhite += 1
        if max(r, g, bl) - min(r, g, bl) > 80: colour += 1
    prev = line
print(w, h, "%.4f" % (nonwhite / (w * h)), colour)
PY
	read pw ph frac colour < "$T/png"
	if [ "${pw:-0}" = 1200 ] && [ "${ph:-0}" = 2000 ] && python3 -c "import sys; sys.exit(0 if float('$frac') > 0.03 and $colour > 2000 else 1)" 2>/dev/null; then
		ok "Chromium renders it: ${pw}x${ph}, $frac of the pixels not white, $colour coloured"
	else
		bad "Chromium renders a page that is not blank" "$(cat "$T/png") $(tail -3 "$T/chromium.log")"
	fi
else
	echo "skip the Chromium rendering: chromium is not installed (.ci/run installs it)"
fi

# ---- errors ----
run report --store "$T/none.db" -o "$T/x.html"
expect "report on a missing store" 2 err 'no store at'
run report --store "$S" -o "$T/no/such/dir/x.html"
expect "report to an unwritable path" 2 err 'cannot write'
run report --store "$S" -o -
expect "report -o - writes to standard output" 0 out '^<!DOCTYPE html>'
run report --store "$S" --bogus
expect "report with an unknown option" 2 err "unknown argument '--bogus'"
finish
