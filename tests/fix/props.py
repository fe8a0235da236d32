#!/usr/bin/env python3
"""props.py - the properties every machine-applicable fix must have (driven by tests/cli/fix.sh).

    props.py sweep  CAKE TMPDIR FILE...   every file with a fixable finding
    props.py delete CAKE TMPDIR FILE...   clean kernels with one `arrive` line deleted

sweep: copy the file, run `cake check --fix` on the copy, check it again. Every
rule whose finding carried a fix must have lost at least those findings, and no
rule may have more findings than before (nothing that was clean before breaks).
A file under tests/fix/ names the rules it is about on a first line
"# fix: RULE..."; those must have had a fix and be gone afterwards. The last
line lists the rules whose fixes were exercised, as "exercised: RULE...".

delete: for each `arrive BAR` line of a clean kernel, delete it; when the
result has a fix, apply it: the repaired file must have no finding the
original kernel did not have (the original's warnings may remain).

Each case prints "ok NAME" or "FAIL NAME: why"; a crash, a timeout or a
sanitizer report of cake is a failure.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys


def run(cake, *args):
    try:
        r = subprocess.run([cake, *args], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise RuntimeError("cake %s timed out" % " ".join(args))
    if r.returncode > 128 or r.returncode < 0:
        raise RuntimeError("cake %s crashed (status %d)" % (" ".join(args), r.returncode))
    if "Sanitizer" in r.stderr or "runtime error:" in r.stderr:
        raise RuntimeError("sanitizer report: " + r.stderr[-2000:])
    return r


def findings(cake, path):
    r = run(cake, "check", "--format=json", path)
    return json.loads(r.stdout)["diagnostics"]


def fix(cake, path):
    r = run(cake, "check", "--fix", path)
    if "applied" not in r.stderr:
        raise RuntimeError("--fix did not say what it applied: " + r.stderr[-500:])


def sweep(cake, tmp, files):
    exercised = set()
    for f in files:
        name = os.path.relpath(f)
        try:
            before = findings(cake, f)
            fixable = collections.Counter(d["rule"] for d in before if d["fixes"])
            with open(f, encoding="utf-8", errors="replace") as fh:
                first = fh.readline()
            wanted = first[len("# fix:"):].split() if first.startswith("# fix:") else []
            if not fixable:
                if wanted:
                    print("FAIL %s: no finding has a fix (expected fixes for %s)" % (name, " ".join(wanted)))
                continue
            copy = os.path.join(tmp, os.path.basename(f))
            shutil.copyfile(f, copy)
            fix(cake, copy)
            after = findings(cake, copy)
            b = collections.Counter(d["rule"] for d in before)
            a = collections.Counter(d["rule"] for d in after)
            new = {r: a[r] - b[r] for r in a if a[r] > b[r]}
            left = {r: a[r] for r in fixable if a[r] > b[r] - fixable[r]}
            missing = [r for r in wanted if r not in fixable or a[r] > 0]
            if new or left or missing:
                print("FAIL %s: new findings %s, fixed findings left %s, expected fixes not effective %s"
                      % (name, new, left, missing))
                continue
            exercised |= set(fixable)
            print("ok   %s: fixed %s" % (name, ", ".join("%s x%d" % kv for kv in sorted(fixable.items()))))
        except (RuntimeError, ValueError, KeyError) as e:
            print("FAIL %s: %s" % (name, e))
    print("exercised: " + " ".join(sorted(exercised)))


def delete(cake, tmp, files):
    for f in files:
        with open(f, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        try:
            orig = collections.Counter(d["rule"] for d in findings(cake, f))
        except (RuntimeError, ValueError) as e:
            print("FAIL %s: %s" % (f, e))
            continue
        for i, line in enumerate(lines):
            if not re.match(r"\s*arrive \w+\s*(#.*)?$", line):
                continue
            name = "%s without line %d (%s)" % (os.path.relpath(f), i + 1, line.strip())
            copy = os.path.join(tmp, "%s_%d.cake" % (os.path.basename(f)[:-5], i + 1))
            with open(copy, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines[:i] + lines[i + 1:]))
            try:
                broken = findings(cake, copy)
                if not any(d["fixes"] for d in broken):
                    continue   # not every deletion is mechanically repairable (two producers, ...)
                fix(cake, copy)
                a = collections.Counter(d["rule"] for d in findings(cake, copy))
                new = {r: a[r] - orig[r] for r in a if a[r] > orig[r]}
                if new:
                    print("FAIL %s: after the fix it has findings the kernel did not have: %s" % (name, new))
                else:
                    print("ok   %s: repaired" % name)
            except (RuntimeError, ValueError) as e:
                print("FAIL %s: %s" % (name, e))


if __name__ == "__main__":
    mode, cake, tmp = sys.argv[1:4]
    {"sweep": sweep, "delete": delete}[mode](cake, tmp, sys.argv[4:])
