#!/usr/bin/env python3
"""sdk_client.py - `cake mcp` driven by the official MCP Python SDK (driven by tests/cli/mcp.sh).

    build/venv/bin/python tests/mcp/sdk_client.py CAKE

Runs the same session twice through the SDK's stdio client: mode="auto"
(the SDK probes server/discover and must settle on 2026-07-28, the stateless
revision) and mode="legacy" (the initialize handshake, 2025-11-25). Each
session lists the tools, calls `check` on a kernel with a missing release
barrier and checks the structured findings and their fixes, applies the
fixes two ways (the server's fix: true, and the client applying the edits
itself from their byte offsets) and re-checks the result clean, calls
`format`, `build`, `explain_rule` and `apply_tactic`, and checks that an
unknown tool is a protocol error and bad arguments a tool error. Every
structured result is validated against the tool's outputSchema with
jsonschema (the SDK also validates it). Prints "ok NAME" / "FAIL NAME: why".
"""
import asyncio
import json
import os
import sys

import jsonschema
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

CAKE = sys.argv[1]
failed = 0
BROKEN = "tests/fix/arrive_after_wgmma_wait.cake"
GOOD = "tests/corpus/good/gemm_128x256_s2.cake"
TOOLS = ["check", "format", "build", "rules", "explain_rule", "history", "best", "diff", "tactics", "apply_tactic", "evaluate", "run", "cost"]


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, str(why)[:1500]))
    return cond


def apply_edits(text, diagnostics):
    """Apply the first fix of every finding, as docs/DIAGNOSTICS.md specifies (bytes, not characters):
    in finding order, skipping a fix that clashes with an edit taken; an identical edit is made once."""
    def clash(a, b):
        (o1, l1), (o2, l2) = a[:2], b[:2]
        if l1 == 0 or l2 == 0:
            return o1 == o2 if l1 == l2 == 0 else (o2 <= o1 <= o2 + l2 if l1 == 0 else o1 <= o2 <= o1 + l1)
        return o1 < o2 + l2 and o2 < o1 + l1

    data = text.encode()
    taken = []
    for d in diagnostics:
        if not d["fixes"]:
            continue
        edits = [(e["offset"], e["length"], e["replacement"].encode()) for e in d["fixes"][0]["edits"]]
        fresh = [e for e in edits if e not in taken]
        if any(clash(e, t) for e in fresh for t in taken):
            continue
        taken += fresh
    for off, length, rep in sorted(taken, reverse=True):
        data = data[:off] + rep + data[off + length:]
    return data.decode()


async def session(mode, want_version):
    params = StdioServerParameters(command=CAKE, args=["mcp"], cwd=os.getcwd())
    tag = "[%s] " % mode
    async with Client(params, mode=mode) as c:
        check(tag + "negotiated protocol " + want_version, c.protocol_version == want_version, c.protocol_version)
        check(tag + "server info and instructions", c.server_info and c.server_info.name == "cake"
              and c.instructions and "Cake IR" in c.instructions, c.server_info)
        listed = await c.list_tools()
        tools = {t.name: t for t in listed.tools}
        check(tag + "tools/list: every tool, in order", [t.name for t in listed.tools] == TOOLS,
              [t.name for t in listed.tools])
        check(tag + "every tool has an input and an output schema",
              all(t.input_schema and t.output_schema for t in listed.tools))

        async def call(name, args):
            r = await c.call_tool(name, args)
            if not r.is_error:
                try:
                    jsonschema.Draft202012Validator(tools[name].output_schema).validate(r.structured_content)
                    check(tag + "%s output validates against its outputSchema" % name, True)
                except jsonschema.ValidationError as e:
                    check(tag + "%s output validates against its outputSchema" % name, False, e.message)
                check(tag + "%s: the text block is the JSON of the structured content" % name,
                      json.loads(r.content[0].text) == r.structured_content)
            return r

        # check a broken kernel: the structured findings and their fixes
        r = await call("check", {"path": BROKEN})
        sc = r.structured_content
        check(tag + "check: not ok, errors counted", not r.is_error and sc["ok"] is False
              and sc["summary"]["errors"] >= 2, sc["summary"])
        bar = [d for d in sc["diagnostics"] if d["rule"] == "CK-BAR-003"]
        dead = [d for d in sc["diagnostics"] if d["rule"] == "CK-DEAD-003"]
        check(tag + "check: CK-BAR-003 localised (span, role, barrier, pipeline, condition, hint, related)",
              bar and bar[0]["location"]["file"] == BROKEN and bar[0]["location"]["line"] == 21
              and bar[0]["location"]["col"] == 7 and bar[0]["role"] == "load" and bar[0]["barrier"] == "empty"
              and bar[0]["pipeline"] == "ab" and bar[0]["condition"] and bar[0]["hint"]
              and bar[0]["related"]["line"] == 16, bar)
        check(tag + "check: CK-DEAD-003 has the stage, phase and iteration of the deadlock",
              dead and dead[0]["stage"] == 0 and dead[0]["phase"] == 0 and dead[0]["iteration"], dead)
        fx = bar[0]["fixes"][0] if bar and bar[0]["fixes"] else None
        check(tag + "check: the fix inserts `arrive empty` after the wgmma_wait",
              fx and "arrive empty" in fx["description"] and fx["edits"][0]["length"] == 0
              and fx["edits"][0]["replacement"] == "      arrive empty\n" and fx["edits"][0]["line"] == 32, fx)
        src = open(BROKEN, encoding="utf-8").read()
        mine = apply_edits(src, sc["diagnostics"])
        good = open(GOOD, encoding="utf-8").read()
        check(tag + "the client applies the edits by byte offset and gets the corpus kernel back",
              mine.split("\n")[3:] == good.split("\n")[1:], mine[:400])

        # the server applies them too, and the result checks clean
        r = await call("check", {"path": BROKEN, "fix": True})
        f = r.structured_content["fix"]
        check(tag + "check fix:true: the same text, clean", f["text"] == mine and f["ok"] and f["diagnostics"] == [],
              f)
        r = await call("check", {"text": mine, "name": "fixed.cake"})
        check(tag + "re-check of the fixed text: clean", r.structured_content["ok"]
              and r.structured_content["diagnostics"] == [] and r.structured_content["files"] == ["fixed.cake"],
              r.structured_content)

        # format
        messy = "kernel   k target sm_90a\n  param A:   global f32[N]\n  domain N % 128 == 0\n" \
                "  grid (N / 128) as (b)\n  role w warps 0..3\n{\n  in w {\n  }\n}\n"
        r = await call("format", {"text": messy})
        check(tag + "format: canonical text", not r.is_error and r.structured_content["ok"]
              and r.structured_content["changed"] and "kernel k target sm_90a\n" in r.structured_content["text"],
              r.structured_content)
        r2 = await call("format", {"text": r.structured_content["text"]})
        check(tag + "format is idempotent", r2.structured_content["changed"] is False)

        # build
        r = await call("build", {"path": GOOD, "emit": "cuda"})
        check(tag + "build emit=cuda: CUDA C++", not r.is_error and r.structured_content["ok"]
              and "__global__" in r.structured_content["cuda"], r.structured_content.get("error"))
        r = await c.call_tool("build", {"path": GOOD, "emit": "cubin-report"})
        if r.is_error:
            check(tag + "build emit=cubin-report without NVRTC: a tool error that says so",
                  "NVRTC" in r.content[0].text, r.content[0].text)
        else:
            k = r.structured_content["kernels"]
            check(tag + "build emit=cubin-report: registers and spills per kernel",
                  k and k[0]["name"] == "gemm_128x256_s2" and k[0]["registers"] > 0 and k[0]["spill_stores"] == 0,
                  k)

        # rules and explain_rule
        r = await call("explain_rule", {"rule": "ck-bar-001"})
        sc = r.structured_content
        check(tag + "explain_rule: rationale, domain and both examples",
              sc["id"] == "CK-BAR-001" and "arrival" in sc["rationale"] and sc["domain"]
              and sc["must_reject"]["path"].startswith("tests/corpus/bad/") and sc["must_reject"]["findings"] >= 1
              and sc["must_accept"]["path"].startswith("tests/corpus/good/"), sc)
        r = await call("rules", {})
        check(tag + "rules: the registry", r.structured_content["count"] > 100)

        # tactics
        r = await call("tactics", {"path": GOOD})
        props = [p["spec"] for p in r.structured_content["proposals"]]
        check(tag + "tactics: proposals for the kernel", "stages:3" in props, props)
        r = await call("apply_tactic", {"path": GOOD, "spec": "stages:3"})
        sc = r.structured_content
        check(tag + "apply_tactic stages:3: the rewritten program", sc["status"] == "ok"
              and "pipeline ab stages 3" in sc["text"] and sc["diff"], sc)
        r = await call("check", {"text": sc["text"]})
        check(tag + "the rewritten program checks clean", r.structured_content["ok"], r.structured_content)

        # errors
        try:
            await c.call_tool("no_such_tool", {})
            check(tag + "unknown tool: a JSON-RPC error", False, "no error")
        except MCPError as e:
            check(tag + "unknown tool: JSON-RPC error -32602", e.error.code == -32602, e.error)
        r = await c.call_tool("explain_rule", {"rule": 42, "extra": 1})
        check(tag + "bad arguments: a tool error (isError) naming each violation", r.is_error
              and "/rule: expected string" in r.content[0].text and "/extra: unknown property" in r.content[0].text,
              r.content)
        r = await c.call_tool("check", {"path": "../../etc/passwd"})
        check(tag + "a path outside the root: a tool error", r.is_error and "outside the server root" in r.content[0].text,
              r.content)


async def main():
    await session("auto", "2026-07-28")
    await session("legacy", "2025-11-25")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:
        import traceback
        check("sdk client", False, "%s\n%s" % (e, traceback.format_exc()[-2000:]))
    sys.exit(1 if failed else 0)
