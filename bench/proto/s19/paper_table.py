#!/usr/bin/env python3
"""bench/proto/s19/paper_table.py JSONL: bench/kda.sh's JSON lines (bench/kda_fla.py's, one per
case) as a short table: Cake, FLA's Triton path and FlashKDA in microseconds, the ratios, and
whether Cake's o and final state agree with FLA's within the family tolerance."""
import json
import sys

for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    fk = d.get("flashkda_us")
    sf = d.get("speedup_flashkda")
    print(d["case"], "cake", round(d["cake_us"], 1), "fla", round(d["fla_us"], 1),
          "fkda", fk and round(fk, 1), "vsFLA", round(d["speedup"], 3),
          "vsFKDA", sf and round(sf, 3), "ok", d["cake_vs_fla_ok"])
