#!/usr/bin/env python3
"""transcript.py - the worked session of docs/AGENTS.md, from a real run of `cake mcp`.

    python3 tests/mcp/transcript.py bin/cake > session.txt

Writes a kernel an agent might write (the 2-stage GEMM of
tests/corpus/good/gemm_128x256_s2.cake with its `arrive empty` forgotten and
a register budget of 236) into a scratch root, starts `cake mcp --root`
there and walks the loop: discover, list the tools, check, check with
fix: true, write the repaired text back, check again, build a cubin report,
try a tactic. Each request is printed as sent ("-->") and each response
("<--") as the fields shown, taken from the server's real answer.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CAKE = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}

root = tempfile.mkdtemp(prefix="cake-session.")
src = open(os.path.join(REPO, "tests/corpus/good/gemm_128x256_s2.cake"), encoding="utf-8").read().split("\n")
src[0] = "# my_gemm: a 2-stage bf16 GEMM, written by an agent"
src = "\n".join(line for line in src if line.strip() != "arrive empty")
src = src.replace("kernel gemm_128x256_s2", "kernel my_gemm").replace("regs 232", "regs 236")
with open(os.path.join(root, "my_gemm.cake"), "w", encoding="utf-8") as f:
    f.write(src)

p = subprocess.Popen([CAKE, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
n = 0


def rpc(method, params, show):
    global n
    n += 1
    line = json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": dict(params, _meta=META)})
    print("-->", line)
    p.stdin.write((line + "\n").encode())
    p.stdin.flush()
    r = json.loads(p.stdout.readline())
    print("<--", json.dumps(show(r), indent=2, ensure_ascii=False))
    print()
    return r


def sc(r):
    return r["result"]["structuredContent"]


rpc("server/discover", {}, lambda r: {k: (v if k != "instructions" else v[:60] + "...") for k, v in r["result"].items()})
rpc("tools/list", {}, lambda r: [t["name"] for t in r["result"]["tools"]])
rpc("tools/call", {"name": "check", "arguments": {"path": "my_gemm.cake"}},
    lambda r: {"ok": sc(r)["ok"], "summary": sc(r)["summary"],
               "diagnostics": [{k: d[k] for k in ("rule", "message", "location", "role", "barrier", "fixes")}
                               for d in sc(r)["diagnostics"]]})
r = rpc("tools/call", {"name": "check", "arguments": {"path": "my_gemm.cake", "fix": True}},
        lambda r: {k: sc(r)["fix"][k] for k in ("applied", "ok", "diagnostics")})
with open(os.path.join(root, "my_gemm.cake"), "w", encoding="utf-8") as f:
    f.write(sc(r)["fix"]["text"])   # the agent writes the repaired text back
rpc("tools/call", {"name": "check", "arguments": {"path": "my_gemm.cake"}},
    lambda r: {k: sc(r)[k] for k in ("ok", "summary")})
rpc("tools/call", {"name": "build", "arguments": {"path": "my_gemm.cake", "emit": "cubin-report"}},
    lambda r: {k: sc(r)[k] for k in ("ok", "kernels")} if not r["result"]["isError"] else r["result"]["content"])
rpc("tools/call", {"name": "apply_tactic", "arguments": {"path": "my_gemm.cake", "spec": "stages:4"}},
    lambda r: {k: sc(r)[k] for k in ("status", "diff")})
p.stdin.close()
p.wait()
shutil.rmtree(root)
