#!/usr/bin/env python3
"""raw_client.py - `cake mcp` over raw JSON-RPC lines, no SDK (driven by tests/cli/mcp.sh).

    python3 tests/mcp/raw_client.py CAKE WORKDIR

Starts the server as a subprocess and speaks newline-delimited JSON-RPC to
it by hand, to test what an SDK would never send: malformed lines, oversize
lines, batches, bad ids, notifications, version mismatches, unknown tools,
bad arguments, paths that escape the root (by '..' and by symlink), a FIFO,
the store tools on a real store. Prints "ok NAME" / "FAIL NAME: why" per
case and nothing else on stdout; the shell driver counts them.
"""
import json
import os
import select
import subprocess
import sys

CAKE, WORK = sys.argv[1], sys.argv[2]
REPO = os.getcwd()
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw_client", "version": "1"}}
failed = 0


def ok(name):
    print("ok   " + name)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def check(name, cond, why=""):
    if cond:
        ok(name)
    else:
        bad(name, why)
    return cond


class Server:
    def __init__(self, *args):
        self.p = subprocess.Popen([CAKE, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(WORK, "server.err"), "ab"), cwd=REPO)
        self.next_id = 100

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def read(self, timeout=60):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        line = self.p.stdout.readline()
        if not line:
            return None
        assert line.endswith(b"\n"), "response not newline-terminated"
        return json.loads(line)

    def pending(self, timeout=0.3):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        return bool(r)

    def line(self, obj_or_text):
        data = obj_or_text if isinstance(obj_or_text, (bytes, bytearray)) else (
            obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)).encode()
        self.send_raw(data + b"\n")
        return self.read()

    def req(self, method, params=None, modern=True, rid=None):
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None or modern:
            params = dict(params or {})
            if modern:
                params["_meta"] = dict(META)
            msg["params"] = params
        resp = self.line(msg)
        assert resp is not None, "no response to " + method
        assert resp.get("id") == rid, "response id %r for request %r" % (resp.get("id"), rid)
        return resp

    def call(self, tool, args, modern=True):
        return self.req("tools/call", {"name": tool, "arguments": args}, modern)

    def close(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = -9
        return rc


def err_code(resp):
    return resp.get("error", {}).get("code")


def tool_text(resp):
    res = resp.get("result", {})
    return res.get("isError"), "".join(c.get("text", "") for c in res.get("content", []))


def main():
    s = Server("--root", REPO, "--store", os.path.join(WORK, "no-store.db"))

    # ---- the 2026-07-28 revision ----
    r = s.req("server/discover")["result"]
    check("discover: resultType complete", r.get("resultType") == "complete", r)
    check("discover: supportedVersions has 2026-07-28", MODERN in r.get("supportedVersions", []), r)
    check("discover: capabilities.tools", "tools" in r.get("capabilities", {}), r)
    check("discover: instructions", isinstance(r.get("instructions"), str) and len(r["instructions"]) > 40, r)
    check("discover: ttlMs >= 0 and cacheScope", isinstance(r.get("ttlMs"), int) and r["ttlMs"] >= 0
          and r.get("cacheScope") in ("public", "private"), r)
    si = r.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
    check("discover: _meta serverInfo name and version", si.get("name") == "cake" and si.get("version"), r)

    r = s.req("tools/list")["result"]
    names = [t["name"] for t in r["tools"]]
    check("tools/list (2026-07-28): resultType, ttlMs, cacheScope, serverInfo",
          r.get("resultType") == "complete" and isinstance(r.get("ttlMs"), int) and r.get("cacheScope") == "public"
          and "io.modelcontextprotocol/serverInfo" in r.get("_meta", {}), {k: r[k] for k in r if k != "tools"})
    want = ["check", "format", "build", "rules", "explain_rule", "history", "best", "diff", "tactics", "apply_tactic",
            "evaluate", "run", "cost"]
    check("tools/list: the tools in table order", names == want, names)
    check("tools/list: deterministic order", [t["name"] for t in s.req("tools/list")["result"]["tools"]] == names)
    allowed = {"type", "properties", "required", "additionalProperties", "items", "enum", "minimum", "maximum",
               "minLength", "maxLength", "description", "title", "default", "examples", "$schema"}

    def keywords(sch, path):
        out = []
        if isinstance(sch, dict):
            for k, v in sch.items():
                if k not in allowed:
                    out.append(path + "/" + k)
                if k == "properties":
                    for pk, pv in v.items():
                        out += keywords(pv, path + "/" + pk)
                elif k in ("items", "additionalProperties"):
                    out += keywords(v, path + "/" + k)
        return out
    for t in r["tools"]:
        isch, osch = t.get("inputSchema"), t.get("outputSchema")
        check("tool %s: input and output schemas are objects" % t["name"],
              isinstance(isch, dict) and isch.get("type") == "object" and isinstance(osch, dict)
              and osch.get("type") == "object", t)
        extra = keywords(isch, "")
        check("tool %s: the input schema uses only the validated keywords" % t["name"], not extra, extra)
        check("tool %s: annotations say read-only" % t["name"],
              t.get("annotations", {}).get("readOnlyHint") is True, t.get("annotations"))

    e = s.req("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01",
                                       "io.modelcontextprotocol/clientCapabilities": {}}}, modern=False)
    check("version mismatch: -32022 with data.supported and data.requested",
          err_code(e) == -32022 and MODERN in e["error"]["data"]["supported"]
          and e["error"]["data"]["requested"] == "1900-01-01", e)
    e = s.req("server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": LEGACY,
                                            "io.modelcontextprotocol/clientCapabilities": {}}}, modern=False)
    check("the envelope at 2025-11-25: -32022 naming the handshake", err_code(e) == -32022
          and "initialize" in e["error"]["message"], e)
    e = s.req("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}, modern=False)
    check("envelope without clientCapabilities: -32602", err_code(e) == -32602
          and "clientCapabilities" in e["error"]["message"], e)
    e = s.req("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728,
                                       "io.modelcontextprotocol/clientCapabilities": {}}}, modern=False)
    check("envelope with a non-string version: -32602", err_code(e) == -32602, e)
    e = s.req("ping")
    check("ping at 2026-07-28: -32601 (removed in that revision)", err_code(e) == -32601, e)
    e = s.req("server/discover", {}, modern=False)
    check("server/discover without the envelope: -32602", err_code(e) == -32602, e)

    # ---- the 2025-11-25 revision ----
    r = s.req("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "1"}}, modern=False)["result"]
    check("initialize 2025-11-25: same version, tools capability, serverInfo",
          r.get("protocolVersion") == LEGACY and "tools" in r.get("capabilities", {})
          and r.get("serverInfo", {}).get("name") == "cake" and "resultType" not in r, r)
    s.send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    r = s.req("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}}, modern=False)["result"]
    check("initialize 2024-11-05: answered with 2025-11-25", r.get("protocolVersion") == LEGACY, r)
    r = s.req("initialize", {"protocolVersion": MODERN, "capabilities": {}, "_meta": META}, modern=False)["result"]
    check("initialize carrying the envelope is still the handshake", r.get("protocolVersion") == LEGACY, r)
    e = s.req("initialize", {"capabilities": {}}, modern=False)
    check("initialize without protocolVersion: -32602", err_code(e) == -32602, e)
    r = s.req("ping", modern=False)
    check("ping (2025-11-25): empty result", r.get("result") == {}, r)
    r = s.req("tools/list", modern=False)["result"]
    check("tools/list (2025-11-25): no resultType, no ttlMs", "resultType" not in r and "ttlMs" not in r
          and len(r["tools"]) == len(want), list(r))
    e = s.req("tools/list", {"cursor": "x"})
    check("tools/list with a cursor never issued: -32602", err_code(e) == -32602, e)

    # ---- framing and JSON-RPC errors ----
    r = s.line(b"this is not json")
    check("malformed line: -32700 with id null", err_code(r) == -32700 and r.get("id") is None, r)
    check("the server keeps serving after a malformed line", s.req("ping", modern=False).get("result") == {})
    r = s.line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"')
    check("truncated JSON: -32700", err_code(r) == -32700, r)
    r = s.line(b'\xff\xfe{"jsonrpc"}')
    check("invalid UTF-8: -32700", err_code(r) == -32700, r)
    r = s.line([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}])
    check("batch array: one -32600 (batching was removed in 2025-06-18)",
          err_code(r) == -32600 and "batch" in r["error"]["message"] and not s.pending(), r)
    r = s.line(b"42")
    check("a JSON scalar: -32600", err_code(r) == -32600, r)
    r = s.line({"jsonrpc": "2.0", "id": None, "method": "ping"})
    check("id null: -32600", err_code(r) == -32600 and r.get("id") is None, r)
    r = s.line({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
    check("fractional id: -32600", err_code(r) == -32600, r)
    r = s.line({"id": 7, "method": "ping"})
    check("missing \"jsonrpc\": -32600 with the id", err_code(r) == -32600 and r.get("id") == 7, r)
    r = s.line({"jsonrpc": "2.0", "id": 8, "method": 5})
    check("non-string method: -32600", err_code(r) == -32600, r)
    r = s.line({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": [1]})
    check("params not an object: -32602", err_code(r) == -32602, r)
    r = s.line({"jsonrpc": "2.0", "id": "s-1", "method": "no/such/method"})
    check("unknown method: -32601, string id echoed", err_code(r) == -32601 and r.get("id") == "s-1", r)
    r = s.line(b'{"jsonrpc":"2.0","id":10,"id":11,"method":"ping"}')
    check("duplicate keys: -32700", err_code(r) == -32700, r)
    s.send_raw(b'\n   \n')
    s.send_raw(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}\n')
    s.send_raw(b'{"jsonrpc":"2.0","method":"no/such/notification","params":[1,2]}\n')
    s.send_raw(b'{"jsonrpc":"2.0","method":"tools/call"}\n')
    s.send_raw(b'{"jsonrpc":"2.0","id":77,"result":{}}\n')
    check("notifications, blank lines and client responses get no response", not s.pending(0.5))
    r = s.req("ping", modern=False)
    check("... and the next request is answered in order", r.get("result") == {}, r)
    r = s.line(b'{"jsonrpc":"2.0","id":12,"method":"ping"}\r')
    check("a CRLF line is one message", r.get("id") == 12 and r.get("result") == {}, r)

    big = b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"check","arguments":{"text":"' + \
        b"x" * (4 << 20) + b'"}}}'
    r = s.line(big)
    check("a line over 4 MiB: -32600 naming the limit", err_code(r) == -32600 and "4194304" in r["error"]["message"],
          r)
    check("the server keeps serving after an oversize line", s.req("ping", modern=False).get("result") == {})

    # ---- tools: protocol errors and tool errors ----
    e = s.call("no_such_tool", {})
    check("unknown tool: -32602 listing the tools", err_code(e) == -32602 and "no_such_tool" in e["error"]["message"]
          and "check" in e["error"]["data"]["tools"], e)
    e = s.req("tools/call", {"arguments": {}})
    check("tools/call without a name: -32602", err_code(e) == -32602, e)
    e = s.req("tools/call", {"name": "rules", "arguments": [1]})
    check("tools/call with array arguments: -32602", err_code(e) == -32602, e)
    is_err, text = tool_text(s.call("explain_rule", {}))
    check("missing required argument: isError naming it", is_err and "/rule: required property is missing" in text,
          text)
    is_err, text = tool_text(s.call("check", {"text": 5, "bogus": True, "fix": "yes"}))
    check("wrong types and unknown properties: isError listing every violation",
          is_err and "/text: expected string, got integer" in text and "/bogus: unknown property" in text
          and "/fix: expected boolean" in text, text)
    is_err, text = tool_text(s.call("build", {"text": "x", "emit": "ptx"}))
    check("enum violation: isError", is_err and '"ptx" is not one of' in text, text)
    is_err, text = tool_text(s.call("history", {"limit": 0}))
    check("minimum violation: isError", is_err and "below the minimum" in text, text)
    is_err, text = tool_text(s.call("check", {}))
    check("no text and no path: isError saying what to pass", is_err and "`text`" in text and "`path`" in text, text)
    is_err, text = tool_text(s.call("check", {"text": "x", "path": "y"}))
    check("both text and path: isError", is_err and "not both" in text, text)

    # ---- paths confined to the root ----
    root = os.path.join(WORK, "root")
    os.makedirs(os.path.join(root, "sub"), exist_ok=True)
    outside = os.path.join(WORK, "outside.cake")
    with open(outside, "w") as f:
        f.write(open(os.path.join(REPO, "tests/corpus/good/gemm_128x256_s2.cake")).read())
    with open(os.path.join(root, "sub", "in.cake"), "w") as f:
        f.write(open(outside).read())
    for name, target in (("escape.cake", outside), ("dirlink", WORK), ("inlink.cake", os.path.join(root, "sub", "in.cake"))):
        try:
            os.symlink(target, os.path.join(root, name))
        except FileExistsError:
            pass
    fifo = os.path.join(root, "fifo.cake")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    s2 = Server("--root", root, "--quiet")
    for p in ("../outside.cake", "sub/../../outside.cake", "sub/../../../../../../etc/passwd", outside):
        is_err, text = tool_text(s2.call("check", {"path": p}))
        check("path %r: refused as outside the root" % p, is_err and "outside the server root" in text, text)
    is_err, text = tool_text(s2.call("check", {"path": "escape.cake"}))
    check("symlink to a file outside the root: refused", is_err and "symbolic link" in text, text)
    is_err, text = tool_text(s2.call("format", {"path": "dirlink/outside.cake"}))
    check("symlinked directory leading outside: refused", is_err and "symbolic link" in text, text)
    r = s2.call("check", {"path": "inlink.cake"})
    check("symlink that stays inside the root: allowed", not r["result"]["isError"]
          and r["result"]["structuredContent"]["ok"], r)
    r = s2.call("check", {"path": "sub/../sub/./in.cake"})
    check("'..' that stays inside the root: allowed", not r["result"]["isError"], r)
    r = s2.call("check", {"path": os.path.join(os.path.realpath(root), "sub", "in.cake")})
    check("absolute path inside the root: allowed", not r["result"]["isError"], r)
    is_err, text = tool_text(s2.call("check", {"path": "sub"}))
    check("a directory: refused", is_err and "not a regular file" in text, text)
    is_err, text = tool_text(s2.call("check", {"path": "fifo.cake"}))
    check("a FIFO: refused without blocking", is_err and "not a regular file" in text, text)
    is_err, text = tool_text(s2.call("check", {"path": "nope.cake"}))
    check("a missing file: isError", is_err and "No such file" in text, text)
    is_err, text = tool_text(s2.call("check", {"path": "sub/in.cake\u0000.txt"}))
    check("a NUL byte in a path: refused", is_err and "NUL" in text, text)
    rc = s2.close()
    check("the --root server exits 0 at end of input", rc == 0, rc)

    # ---- the tools ----
    r = s.call("check", {"path": "tests/fix/arrive_after_wgmma_wait.cake"})["result"]
    sc = r["structuredContent"]
    d = [x for x in sc["diagnostics"] if x["rule"] == "CK-BAR-003"]
    check("check: structured finding with role, barrier, pipeline, location, hint, related, fixes",
          d and d[0]["role"] == "load" and d[0]["barrier"] == "empty" and d[0]["pipeline"] == "ab"
          and d[0]["location"]["line"] > 0 and d[0]["hint"] and d[0]["related"] and d[0]["fixes"]
          and d[0]["fixes"][0]["edits"][0]["length"] == 0, d)
    check("check: the text block is the structured content serialised",
          json.loads(r["content"][0]["text"]) == sc)
    r = s.call("check", {"path": "tests/fix/arrive_after_wgmma_wait.cake", "fix": True})["result"]["structuredContent"]
    check("check fix:true: applied, repaired text checks clean", r["fix"]["applied"] == 2 and r["fix"]["ok"]
          and r["fix"]["diagnostics"] == [] and "      arrive empty\n" in r["fix"]["text"], r["fix"])
    r = s.call("check", {"text": "kernel k target sm_90a\n{", "name": "mine.cake"})["result"]["structuredContent"]
    check("check text with a name: findings name it", r["files"] == ["mine.cake"] and not r["ok"], r)
    is_err, text = tool_text(s.call("check", {"path": "tests/corpus/good/gemm_128x256_s2.cake", "kernel": "nope"}))
    check("check with a kernel that does not exist: isError", is_err and "no kernel named 'nope'" in text, text)
    r = s.call("format", {"text": "kernel k target sm_90a\n{"})["result"]["structuredContent"]
    check("format: syntax errors instead of text", r["ok"] is False and r["text"] is None and r["diagnostics"], r)
    r = s.call("build", {"path": "tests/corpus/good/gemm_128x256_s2.cake", "emit": "plan"})["result"]
    check("build emit=plan", not r["isError"] and r["structuredContent"]["ok"] and r["structuredContent"]["plan"], r)
    r = s.call("build", {"path": "tests/fix/arrive_after_wgmma_wait.cake"})["result"]["structuredContent"]
    check("build of a program with errors: ok false with its findings", r["ok"] is False and r["cuda"] is None
          and r["diagnostics"], r)
    r = s.call("rules", {"category": "hardware contract"})["result"]["structuredContent"]
    check("rules filtered by category", r["count"] > 0 and all(x["category"] == "hardware contract" for x in r["rules"]),
          r["count"])
    is_err, text = tool_text(s.call("explain_rule", {"rule": "CK-RES-999"}))
    check("explain_rule of an unknown rule: isError with the family's rules", is_err and "CK-RES-001" in text, text)
    r = s.call("explain_rule", {"rule": "CK-SYN-004"})["result"]["structuredContent"]
    check("explain_rule: a front-end rule's must-reject example from tests/diag",
          r["must_reject"] and r["must_reject"]["path"].startswith("tests/diag/"), r)
    is_err, text = tool_text(s.call("history", {}))
    check("history without a store: isError naming the store and --store", is_err and "no candidate store" in text
          and "--store" in text, text)
    check("the missing store was not created", not os.path.exists(os.path.join(WORK, "no-store.db")))
    r = s.call("apply_tactic", {"path": "tests/corpus/good/gemm_128x256_s2.cake", "spec": "nonsense:1"})
    is_err, text = tool_text(r)
    check("apply_tactic with an unknown tactic: isError pointing at `tactics`", is_err and "tactics" in text, text)
    r = s.call("apply_tactic", {"path": "tests/corpus/good/gemm_128x256_s2.cake", "spec": "stages:3"})
    sc = r["result"]["structuredContent"]
    check("apply_tactic stages:3: ok, with a diff", sc["status"] == "ok" and "+  pipeline ab stages 3" in sc["diff"], sc)

    # ---- the store tools on a real store ----
    store = os.path.join(WORK, "store.db")
    parent = []
    for f in ("tests/corpus/good/gemm_128x256_s2.cake", "tests/corpus/good/gemm_128x128_s6.cake"):
        ev = subprocess.run([CAKE, "eval", f, "--shape", "M=1024,N=1024,K=1024", "--store", store, "--dry-run",
                             "--format=json"] + (["--parent", parent[0]] if parent else []),
                            capture_output=True, text=True, cwd=REPO)
        if not check("cake eval --dry-run records %s" % os.path.basename(f), ev.returncode == 0,
                     ev.stderr[-500:]):
            continue
        if not parent:
            h = subprocess.run([CAKE, "log", "--store", store, "--format=json"], capture_output=True, text=True,
                               cwd=REPO)
            try:
                parent.append(json.loads(h.stdout)["evaluations"][0]["candidate"])
            except (ValueError, KeyError, IndexError):
                bad("cake log names the first candidate", h.stdout[-300:] + h.stderr[-300:])
    s3 = Server("--store", store, "--quiet")
    r = s3.call("history", {"family": "gemm"})["result"]
    sc = r.get("structuredContent", {})
    check("history lists the recorded evaluations", not r["isError"] and sc.get("count") == 2
          and all(e["verdict"] == "dry_run" for e in sc["evaluations"]), r)
    ids = [e["candidate"] for e in sc.get("evaluations", [])]
    r = s3.call("best", {})["result"]
    check("best without a shape: the frontier (empty: nothing ran)", not r["isError"]
          and r["structuredContent"]["best"] == [], r)
    is_err, text = tool_text(s3.call("best", {"shape": "M=1024,N=1024,K=1024"}))
    check("best with a shape but no family or candidate: isError", is_err and "family" in text, text)
    if len(ids) == 2:
        r = s3.call("diff", {"a": ids[1][:8], "b": ids[0][:8]})["result"]
        sc = r.get("structuredContent", {})
        check("diff of two candidates by prefix", not r["isError"] and not sc["identical"]
              and "@@" in sc["diff"] and sc["a"]["candidate"]["id"] == ids[1], r)
        r = s3.call("diff", {"a": ids[0], "b": ids[0]})["result"]["structuredContent"]
        check("diff of a candidate with itself: identical, empty diff", r["identical"] and r["diff"] == "", r)
        r = s3.call("diff", {"a": ids[0]})["result"]
        sc = r.get("structuredContent", {})
        check("diff of one candidate: against its parent", not r["isError"] and sc["a"]["candidate"]["id"] == ids[1]
              and sc["b"]["candidate"]["id"] == ids[0] and sc["deleted"] > 0 and sc["inserted"] > 0, r)
        is_err, text = tool_text(s3.call("diff", {"a": ids[1]}))
        check("diff of one candidate without a parent: isError", is_err and "no parent" in text, text)
    is_err, text = tool_text(s3.call("diff", {"a": "ffffffff", "b": "0"}))
    check("diff of an unknown candidate: isError", is_err and "no candidate" in text, text)
    # evaluate and run record in the store (created when missing); run needs a GPU
    r = s3.call("evaluate", {"path": "kernels/gemm/gemm_ws_128x128_s5.cake", "shape": "M=4096,N=4096,K=4096",
                             "dry_run": True})["result"]
    sc = r.get("structuredContent", {})
    check("evaluate dry_run: recorded, with a prediction", not r["isError"] and sc.get("verdict") == "dry_run"
          and sc.get("predicted_us") and not sc.get("cached") and sc.get("eval_id", 0) > 0, r)
    r = s3.call("evaluate", {"path": "kernels/gemm/gemm_ws_128x128_s5.cake", "shape": "M=4096,N=4096,K=4096",
                             "dry_run": True})["result"]
    check("evaluate again: served from the store", r.get("structuredContent", {}).get("cached") is True, r)
    r = s3.call("evaluate", {"path": "tests/corpus/bad/res_regs_launch_pool.cake", "shape": "B=1,N=1024,K=1024",
                             "dry_run": True})["result"]
    sc = r.get("structuredContent", {})
    check("evaluate a kernel the verifier rejects: verdict rejected with its findings", not r["isError"]
          and sc.get("verdict") == "rejected" and any(f["rule"] == "CK-RES-002" for f in sc.get("findings", [])), r)
    is_err, text = tool_text(s3.call("evaluate", {"path": "kernels/gemm/gemm_ws_128x128_s5.cake", "shape": "M=4096",
                                                  "dry_run": True}))
    check("evaluate with a shape missing dims: isError naming them", is_err and "missing" in text, text)
    if not os.path.exists("/dev/nvidia0"):
        is_err, text = tool_text(s3.call("run", {"path": "kernels/gemm/gemm_ws_128x128_s5.cake",
                                                 "shape": "M=4096,N=4096,K=4096"}))
        check("run without a GPU: a tool error saying so", is_err and "no GPU" in text, text)
    r = s3.call("cost", {"path": "kernels/gemm/gemm_persistent.cake", "shape": "M=8192,N=8192,K=8192"})["result"]
    sc = r.get("structuredContent", {})
    check("cost: a prediction with a bottleneck", not r["isError"] and sc.get("cost", {}).get("bottleneck"), r)
    is_err, text = tool_text(s3.call("cost", {"path": "kernels/gemm/gemm_persistent.cake",
                                              "shape": "M=8192,N=8192,K=8192", "target": "b200"}))
    check("cost on an uncalibrated GPU: isError naming the calibrated ones", is_err and "h200" in text, text)
    r = s3.call("cost", {"path": "kernels/gemm/gemm_persistent.cake", "shape": "M=8192,N=8192,K=8192", "lines": 3})["result"]
    ln = r.get("structuredContent", {}).get("lines")
    check("cost with lines: the three heaviest statements, each with its line and tensor share",
          not r["isError"] and isinstance(ln, list) and len(ln) == 3 and all("line" in x and "tensor_share" in x for x in ln)
          and ln[0]["tensor_share"] > 0, r)
    is_err, text = tool_text(s3.call("cost", {"path": "kernels/gemm/gemm_persistent.cake",
                                              "shape": "M=8192,N=8192,K=8192", "lines": 0}))
    check("cost with lines 0: refused by the schema (minimum 1)", is_err and "minimum" in text, text)
    check("the store server exits 0", s3.close() == 0)

    rc = s.close()
    check("the server exits 0 at end of input", rc == 0, rc)
    with open(os.path.join(WORK, "server.err"), errors="replace") as f:
        log = f.read()
    check("no sanitizer report on the server's stderr", "Sanitizer" not in log and "runtime error:" not in log,
          log[-3000:])
    check("the server logs to stderr", "cake mcp: serving MCP on stdio" in log, log[-500:])


if __name__ == "__main__":
    try:
        main()
    except Exception as e:   # a protocol violation (no response, bad framing) ends the run
        import traceback
        bad("raw client", "%s: %s" % (type(e).__name__, traceback.format_exc()[-1500:]))
    sys.exit(1 if failed else 0)
