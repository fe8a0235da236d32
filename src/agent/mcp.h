/*
 * mcp.h — `cake mcp`: a Model Context Protocol server on stdio.
 *
 * An agent (Claude Code, Codex, Cursor, any MCP client) starts `cake mcp`
 * as a subprocess and talks JSON-RPC 2.0 to it, one message per line on
 * standard input and output. The server exposes Cake's tools (check,
 * format, build, rules, explain_rule, the store queries, ...) as MCP tools
 * with JSON Schemas for their input and output; every tool compiles through
 * the one pipeline call (src/cake.h), so an agent sees exactly what
 * `cake check` and `cake build` would say.
 *
 * Two protocol revisions are served, each request on its own terms (a
 * "dual-era" server in the words of the 2026-07-28 versioning page):
 *   - 2026-07-28, stateless: a request carrying the per-request `_meta`
 *     envelope (io.modelcontextprotocol/protocolVersion and
 *     io.modelcontextprotocol/clientCapabilities); `server/discover`,
 *     `tools/list`, `tools/call`; results carry resultType and serverInfo.
 *   - 2025-11-25, the legacy handshake: `initialize`,
 *     `notifications/initialized`, `ping`, `tools/list`, `tools/call`.
 * docs/AGENTS.md records which spec text each behaviour follows.
 *
 * The server holds no global state: everything lives in the McpServer a
 * caller creates. mcp_handle_line is the whole protocol (one request line
 * in, zero or one response line out), so unit tests drive it directly;
 * mcp_serve adds the stdio loop with its line-size limit.
 *
 * Module prefix: mcp_.
 */
#ifndef CAKE_MCP_H
#define CAKE_MCP_H

#include "../base/base.h"

/* Largest request line read (bytes, newline excluded) unless configured. */
#define MCP_DEFAULT_MAX_LINE (4u << 20)

typedef struct McpOptions {
	const char *root;        /* directory `path` arguments are confined to (NULL: ".") */
	const char *store;       /* candidate store (NULL: STORE_DEFAULT_PATH) */
	const char *examples;    /* Cake tree whose tests/ hold the rule examples (NULL: root) */
	size_t max_line;         /* request size limit in bytes (0: MCP_DEFAULT_MAX_LINE) */
	bool quiet;              /* no log lines on the log stream */
} McpOptions;

typedef struct McpServer McpServer;

/* Create a server for options o (copied; the strings must outlive it).
 * Returns NULL with a one-line reason in err when the root is not a
 * directory or a tool schema does not parse (a bug). */
McpServer *mcp_server_new(const McpOptions *o, StrBuf *err);
/* Free the server (NULL is a no-op). */
void mcp_server_free(McpServer *s);
/* Handle one request line of len bytes (no newline): append the response
 * message, one line with its newline, to out; nothing for a notification
 * or a client response. Never fails: a bad line gets a JSON-RPC error. */
void mcp_handle_line(McpServer *s, const char *line, size_t len, StrBuf *out);
/* Serve `in` until end of file, writing responses to `out` (flushed after
 * each) and log lines to `log` (may be NULL). An oversize line gets an
 * error and is skipped. Returns 0 at end of input, 2 on a write error. */
int mcp_serve(McpServer *s, FILE *in, FILE *out, FILE *log);

#endif
