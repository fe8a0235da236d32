#!/usr/bin/env python3
"""bench/cost_score.py — score the current cost model (bin/cake cost, its built-in version) on
measurement sets it was not fitted on: Kendall tau per (family, shape) group between measured
and predicted, top-3 (is the measured best among the three fastest predictions?) and the
median absolute error. Usage: python3 bench/cost_score.py data/measure/SET [SET...] (each SET
names SET.jsonl and SET.candidates.jsonl). `cake calibrate` always refits; this only predicts."""
import json, subprocess, sys, itertools, collections
def load(prefix):
    cands = {}
    for l in open(prefix + ".candidates.jsonl"):
        d = json.loads(l); cands[d["id"]] = d["text"]
    rows = [json.loads(l) for l in open(prefix + ".jsonl")]
    return cands, rows
groups = collections.defaultdict(list)
for prefix in sys.argv[1:]:
    cands, rows = load(prefix)
    for r in rows:
        open("/tmp/oos.cake", "w").write(cands[r["candidate"]])
        out = subprocess.run(["bin/cake", "cost", "/tmp/oos.cake", "--kernel", r["kernel"], "--shape", r["shape"], "--format=json"], capture_output=True, text=True).stdout
        try:
            c = json.loads(out); c = c.get("cost", c); p = c["predicted_us"]
        except Exception as e:
            print("cost failed", r["candidate"][:12], out[:200]); continue
        groups[(r["family"], r["shape"])].append((r["median_us"], p, r["candidate"]))
def tau(v):
    conc = disc = 0
    for (m1, p1, _), (m2, p2, _) in itertools.combinations(v, 2):
        s = (m1 - m2) * (p1 - p2)
        if s > 0: conc += 1
        elif s < 0: disc += 1
    return (conc - disc) / max(1, conc + disc), conc + disc

for g, v in sorted(groups.items()):
    # dedupe candidates measured twice: keep median of measurements
    t, n = tau(v)
    best = min(v)[2]
    top3 = [c for _, _, c in sorted(v, key=lambda x: x[1])[:3]]
    med = sorted(abs(p / m - 1) for m, p, _ in v)[len(v) // 2]
    print(g, len(v), "samples, tau %.2f over %d pairs, top-3 %s, median error %.1f%%" % (t, n, "hit" if best in top3 else "MISS", 100 * med))
