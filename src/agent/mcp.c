/*
 * mcp.c — the MCP protocol: stdio framing, JSON-RPC 2.0, two revisions.
 *
 * Framing (stdio transport, both revisions). One JSON-RPC message per line
 * on stdin; each response is one line on stdout, written and flushed as a
 * whole; nothing else ever goes to stdout (logs go to stderr). A line
 * longer than the limit (4 MiB by default) is read to its end and
 * discarded, and answered with -32600 (id null: it was never parsed); the
 * server keeps serving. Blank lines are skipped; a trailing '\r' is
 * dropped. End of input ends the server (the spec's shutdown signal).
 *
 * JSON-RPC. A line that is not JSON gets -32700 with id null. A JSON array
 * is a batch, which MCP removed in 2025-06-18 (changelog: "Remove support
 * for JSON-RPC batching"); neither revision served here has it, so an array
 * gets one -32600 saying so. An object with "method" and no "id" is a
 * notification and never gets a response, whatever it says; an object with
 * "result" or "error" is a response from the client (we send no requests)
 * and is ignored. A request id must be a string or an integer (MCP: "MUST
 * NOT be null"); anything else gets -32600 with id null. `params` must be
 * an object (-32602 otherwise).
 *
 * Revisions (docs/AGENTS.md quotes the spec text each rule follows). Every
 * request is classified on its own:
 *   - it carries params._meta["io.modelcontextprotocol/protocolVersion"]:
 *     a 2026-07-28 request. A version other than 2026-07-28 gets -32022
 *     (UnsupportedProtocolVersion) with data {supported, requested}; a
 *     request without io.modelcontextprotocol/clientCapabilities (an
 *     object) is malformed, -32602. Methods: server/discover, tools/list,
 *     tools/call (ping was removed in 2026-07-28). Every result carries
 *     resultType "complete" and _meta io.modelcontextprotocol/serverInfo;
 *     discover and tools/list also ttlMs and cacheScope "public".
 *   - otherwise a 2025-11-25 request: initialize (answers 2025-11-25 when
 *     asked for it and also when asked for anything else, as version
 *     negotiation prescribes), ping, tools/list, tools/call; results have
 *     the 2025-11-25 shape. The handshake is recorded but not enforced: a
 *     request before initialize is served (the spec puts the duty on the
 *     client). server/discover without the envelope lacks its required
 *     _meta fields: -32602.
 * Nothing about the protocol is inferred from earlier requests, so both
 * eras can interleave on one connection (allowed by the 2026-07-28
 * versioning page: "A dual-era server MAY serve both eras concurrently").
 *
 * Tool calls. An unknown tool is a protocol error, -32602, as both
 * revisions' tools pages show. Arguments that violate the tool's input
 * schema are *tool execution errors* (isError: true, one line per
 * violation), which is what SEP-1303 made normative in 2025-11-25 so that
 * the model sees the message and can correct the call. A tool that fails
 * (a path outside the root, a missing store) returns isError: true with a
 * message that says what to do. A successful call returns the structured
 * result as structuredContent and, as the spec recommends for backward
 * compatibility, the same JSON serialised in a text content block.
 */
#include "mcp_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROTO_MODERN "2026-07-28"
#define PROTO_LEGACY "2025-11-25"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER "io.modelcontextprotocol/serverInfo"
/* Tools never change while the process runs; clients may cache the list
 * this long (and must re-fetch after restarting the server anyway). */
#define LIST_TTL_MS 300000

enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	MCP_UNSUPPORTED_VERSION = -32022,
};

static const char *const instructions =
	"Cake compiles GPU kernels written in Cake IR (a schedule language for sm_90a: roles, "
	"pipelines, barriers, TMA and wgmma) and verifies them before lowering. Pass IR as `text`, "
	"or as a `path` relative to the server's root. `check` returns every finding with its rule, "
	"span, role/barrier/stage context, a hint and, when the repair is mechanical, `fixes` "
	"(byte-offset text edits; `fix: true` returns the repaired text and what remains). "
	"`explain_rule` gives a rule's rationale with a rejected and an accepted example; "
	"`format` canonicalises; `build` returns the plan, the CUDA C++ and (emit cubin-report) "
	"ptxas registers and spills. `history`, `best` and `diff` read the candidate store. "
	"Loop: write IR, check, apply fixes or edit, check again until clean, then build.";

/* ---- strings ---- */


json_t *mcp_str(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : ""), *end = p + (s ? n : 0);
	StrBuf b = {0};
	const unsigned char *q = p;
	while (q < end) {
		int k = utf8_seq_len(q, end);
		if (k) {
			q += k;
			continue;
		}
		sb_putn(&b, (const char *)p, (size_t)(q - p));
		sb_puts(&b, "\xef\xbf\xbd");
		p = ++q;
	}
	json_t *j;
	if (!b.s) {
		j = json_stringn((const char *)p, (size_t)(end - p));
	} else {
		sb_putn(&b, (const char *)p, (size_t)(end - p));
		j = json_stringn(b.s, b.len);
	}
	sb_free(&b);
	return j ? j : json_string("");
}

json_t *mcp_strz(const char *s)
{
	return s ? mcp_str(s, strlen(s)) : json_null();
}

json_t *mcp_parse_printed(const char *text, size_t len, StrBuf *err)
{
	json_error_t je;
	json_t *j = json_loadb(text ? text : "", text ? len : 0, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!j)
		sb_printf(err, "internal error: Cake printed invalid JSON (%d:%d: %s); please report this", je.line,
		          je.column, je.text);
	return j;
}

static void mcp_log(McpServer *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mcp_log(McpServer *s, const char *fmt, ...)
{
	if (!s->log || s->o.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("cake mcp: ", s->log);
	vfprintf(s->log, fmt, ap);
	fputc('\n', s->log);
	va_end(ap);
	fflush(s->log);
}

/* ---- server ---- */

static json_t *server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", "cake", "title", "Cake GPU-kernel compiler", "version",
	                 CAKE_VERSION);
}

static json_t *tool_entry(const McpTool *t, json_t *in, json_t *out)
{
	json_t *e = json_pack("{s:s, s:s, s:s, s:O, s:O}", "name", t->name, "title", t->title, "description",
	                      t->description, "inputSchema", in, "outputSchema", out);
	/* no tool writes a file or reaches the network; the same call gives the same answer */
	json_object_set_new(e, "annotations",
	                    json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint", 1,
	                              "destructiveHint", 0, "idempotentHint", 1, "openWorldHint", 0));
	return e;
}

McpServer *mcp_server_new(const McpOptions *o, StrBuf *err)
{
	McpServer *s = xcalloc(1, sizeof *s);
	s->o = *o;
	if (!s->o.max_line)
		s->o.max_line = MCP_DEFAULT_MAX_LINE;
	const char *root = o->root ? o->root : ".";
	struct stat st;
	errno = 0;
	bool found = realpath(root, s->root) && stat(s->root, &st) == 0;
	if (!found || !S_ISDIR(st.st_mode)) {
		int e = found ? ENOTDIR : errno;
		sb_printf(err, "root '%s' is not a directory: %s", root, strerror(e));
		free(s);
		return NULL;
	}
	const char *ex = o->examples ? o->examples : s->root;
	if (!realpath(ex, s->examples))
		s->examples[0] = 0;
	int n;
	const McpTool *t = mcp_tool_table(&n);
	s->ntools = n;
	s->in_schema = xcalloc((size_t)n + 1, sizeof(json_t *));
	s->tools = json_array();
	for (int i = 0; i < n; i++) {
		json_error_t je;
		json_t *in = json_loads(t[i].input_schema, JSON_REJECT_DUPLICATES, &je);
		json_t *out = in ? json_loads(t[i].output_schema, JSON_REJECT_DUPLICATES, &je) : NULL;
		if (!in || !out) {
			sb_printf(err, "tool '%s': %s schema does not parse (%d:%d: %s)", t[i].name, in ? "output" : "input",
			          je.line, je.column, je.text);
			json_decref(in);
			mcp_server_free(s);
			return NULL;
		}
		s->in_schema[i] = in;
		json_array_append_new(s->tools, tool_entry(&t[i], in, out));
		json_decref(out);
	}
	return s;
}

void mcp_server_free(McpServer *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->ntools; i++)
		json_decref(s->in_schema[i]);
	free(s->in_schema);
	json_decref(s->tools);
	free(s);
}

/* ---- messages ---- */

/* Append msg (consumed) as one line. */
static void emit(StrBuf *out, json_t *msg)
{
	char *t = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
	if (t) {
		sb_puts(out, t);
		sb_putc(out, '\n');
		free(t);
	}
	json_decref(msg);
}

/* An error response; id is borrowed (NULL: null), data consumed (may be NULL). */
static void reply_error(StrBuf *out, json_t *id, int code, const char *message, json_t *data)
{
	json_t *e = json_pack("{s:i, s:o}", "code", code, "message", mcp_strz(message));
	if (data)
		json_object_set_new(e, "data", data);
	emit(out, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", e));
}

static void reply_errorf(StrBuf *out, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply_errorf(StrBuf *out, json_t *id, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	reply_error(out, id, code, msg, NULL);
}

typedef struct Req {
	json_t *id;          /* borrowed */
	const char *method;
	json_t *params;      /* borrowed; NULL when absent */
	bool modern;         /* carries the 2026-07-28 envelope */
} Req;

/* A result (consumed); modern results get resultType and serverInfo, and
 * cacheable ones ttlMs and cacheScope. */
static void reply_result(StrBuf *out, const Req *r, json_t *result, bool cacheable)
{
	if (r->modern) {
		json_object_set_new(result, "resultType", json_string("complete"));
		if (cacheable) {
			json_object_set_new(result, "ttlMs", json_integer(LIST_TTL_MS));
			json_object_set_new(result, "cacheScope", json_string("public"));
		}
		json_t *meta = json_object_get(result, "_meta");
		if (!meta) {
			meta = json_object();
			json_object_set_new(result, "_meta", meta);
		}
		json_object_set_new(meta, META_SERVER, server_info());
	}
	emit(out, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", r->id, "result", result));
}

static json_t *supported_versions(void)
{
	return json_pack("[s, s]", PROTO_MODERN, PROTO_LEGACY);
}

/* ---- methods ---- */

static void do_discover(McpServer *s, StrBuf *out, const Req *r)
{
	if (!r->modern) {
		reply_error(out, r->id, RPC_INVALID_PARAMS,
		            "server/discover is a 2026-07-28 request and needs params._meta with "
		            "'" META_VERSION "' and '" META_CAPS "'",
		            json_pack("{s:o}", "supported", supported_versions()));
		return;
	}
	json_t *res = json_pack("{s:[s], s:{s:{s:b}}, s:s}", "supportedVersions", PROTO_MODERN, "capabilities",
	                        "tools", "listChanged", 0, "instructions", instructions);
	reply_result(out, r, res, true);
}

static void do_initialize(McpServer *s, StrBuf *out, const Req *r)
{
	json_t *v = r->params ? json_object_get(r->params, "protocolVersion") : NULL;
	if (!json_is_string(v)) {
		reply_error(out, r->id, RPC_INVALID_PARAMS, "initialize needs params.protocolVersion (a string)",
		            json_pack("{s:o}", "supported", supported_versions()));
		return;
	}
	/* version negotiation: the same version when supported, otherwise the
	 * latest we support; the client decides whether to go on */
	snprintf(s->legacy_version, sizeof s->legacy_version, "%s", PROTO_LEGACY);
	s->legacy_ready = false;
	if (strcmp(json_string_value(v), PROTO_LEGACY) != 0)
		mcp_log(s, "initialize asked for protocol %s; answering %s", json_string_value(v), PROTO_LEGACY);
	Req legacy = *r;
	legacy.modern = false;
	reply_result(out, &legacy,
	             json_pack("{s:s, s:{s:{s:b}}, s:o, s:s}", "protocolVersion", PROTO_LEGACY, "capabilities",
	                       "tools", "listChanged", 0, "serverInfo", server_info(), "instructions", instructions),
	             false);
}

static void do_tools_list(McpServer *s, StrBuf *out, const Req *r)
{
	json_t *cur = r->params ? json_object_get(r->params, "cursor") : NULL;
	if (cur) {
		/* every tool is on the first page, so no cursor was ever handed out */
		reply_error(out, r->id, RPC_INVALID_PARAMS, "invalid cursor: tools/list has a single page (omit the cursor)",
		            NULL);
		return;
	}
	reply_result(out, r, json_pack("{s:O}", "tools", s->tools), true);
}

/* A tools/call result: isError and one text block, plus structuredContent on success. */
static json_t *call_result(json_t *structured, const char *error)
{
	json_t *res;
	if (error) {
		res = json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text", mcp_strz(error), "isError", 1);
	} else {
		char *t = json_dumps(structured, JSON_COMPACT | JSON_ENCODE_ANY);
		res = json_pack("{s:[{s:s, s:o}], s:O, s:b}", "content", "type", "text", "text", mcp_strz(t ? t : "null"),
		                "structuredContent", structured, "isError", 0);
		free(t);
	}
	return res;
}

static void do_tools_call(McpServer *s, StrBuf *out, const Req *r)
{
	json_t *name = r->params ? json_object_get(r->params, "name") : NULL;
	json_t *args = r->params ? json_object_get(r->params, "arguments") : NULL;
	if (!json_is_string(name)) {
		reply_error(out, r->id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)", NULL);
		return;
	}
	if (args && !json_is_object(args) && !json_is_null(args)) {
		reply_error(out, r->id, RPC_INVALID_PARAMS, "tools/call: params.arguments must be an object", NULL);
		return;
	}
	int n;
	const McpTool *t = mcp_tool_table(&n);
	int k = -1;
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].name, json_string_value(name)))
			k = i;
	if (k < 0) {
		json_t *names = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(names, json_string(t[i].name));
		StrBuf m = {0};
		sb_puts(&m, "Unknown tool: ");
		sb_putn(&m, json_string_value(name), strnlen(json_string_value(name), 200));
		reply_error(out, r->id, RPC_INVALID_PARAMS, sb_str(&m), json_pack("{s:o}", "tools", names));
		sb_free(&m);
		return;
	}
	json_t *owned = NULL;
	if (!json_is_object(args))
		args = owned = json_object();
	StrBuf why = {0};
	json_t *res;
	if (mcp_schema_check(s->in_schema[k], args, &why) > 0) {
		StrBuf m = {0};
		sb_printf(&m, "invalid arguments for tool '%s' (see its inputSchema in tools/list):\n%s", t[k].name,
		          sb_str(&why));
		res = call_result(NULL, sb_str(&m));
		sb_free(&m);
	} else {
		McpCall c = {.srv = s, .args = args};
		bool ok = t[k].run(&c);
		if (!ok && !c.err.len)
			sb_printf(&c.err, "tool '%s' failed", t[k].name);
		res = call_result(ok ? c.result : NULL, ok ? NULL : sb_str(&c.err));
		json_decref(c.result);
		sb_free(&c.err);
		if (!ok)
			mcp_log(s, "tool %s: error", t[k].name);
	}
	sb_free(&why);
	json_decref(owned);
	reply_result(out, r, res, false);
}

static void do_ping(McpServer *s, StrBuf *out, const Req *r)
{
	if (r->modern) {
		reply_error(out, r->id, RPC_METHOD_NOT_FOUND, "Method not found: ping (removed in protocol 2026-07-28)", NULL);
		return;
	}
	reply_result(out, r, json_object(), false);
}

static const struct Method {
	const char *name;
	void (*run)(McpServer *s, StrBuf *out, const Req *r);
} methods[] = {
	{"server/discover", do_discover},
	{"initialize", do_initialize},
	{"ping", do_ping},
	{"tools/list", do_tools_list},
	{"tools/call", do_tools_call},
};

/* Check the 2026-07-28 envelope of a request that has one; false after
 * replying with the error. */
static bool envelope_ok(StrBuf *out, const Req *r)
{
	json_t *meta = json_object_get(r->params, "_meta");
	json_t *v = json_object_get(meta, META_VERSION);
	if (!json_is_string(v)) {
		reply_error(out, r->id, RPC_INVALID_PARAMS, "_meta['" META_VERSION "'] must be a string such as \"" PROTO_MODERN "\"",
		            NULL);
		return false;
	}
	if (strcmp(json_string_value(v), PROTO_MODERN) != 0) {
		const char *msg = !strcmp(json_string_value(v), PROTO_LEGACY)
		                  ? "Unsupported protocol version: " PROTO_LEGACY " is served through the initialize handshake "
		                    "(send requests without the _meta envelope); per-request _meta is served at " PROTO_MODERN
		                  : "Unsupported protocol version";
		reply_error(out, r->id, MCP_UNSUPPORTED_VERSION, msg,
		            json_pack("{s:o, s:O}", "supported", supported_versions(), "requested", v));
		return false;
	}
	json_t *caps = json_object_get(meta, META_CAPS);
	if (!json_is_object(caps)) {
		reply_error(out, r->id, RPC_INVALID_PARAMS,
		            caps ? "_meta['" META_CAPS "'] must be an object"
		                 : "_meta is missing the required '" META_CAPS "' (an object, {} when the client has none)",
		            NULL);
		return false;
	}
	return true;
}

void mcp_handle_line(McpServer *s, const char *line, size_t len, StrBuf *out)
{
	json_error_t je;
	json_t *msg = json_loadb(line, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!msg) {
		reply_error(out, NULL, RPC_PARSE_ERROR, "Parse error",
		            json_pack("{s:s, s:i}", "detail", je.text, "column", je.column));
		mcp_log(s, "parse error at column %d: %s", je.column, je.text);
		return;
	}
	if (json_is_array(msg)) {
		reply_error(out, NULL, RPC_INVALID_REQUEST,
		            "Invalid Request: JSON-RPC batches are not supported (MCP removed batching in 2025-06-18; "
		            "send one message per line)",
		            NULL);
		json_decref(msg);
		return;
	}
	if (!json_is_object(msg)) {
		reply_error(out, NULL, RPC_INVALID_REQUEST, "Invalid Request: a message is a JSON object", NULL);
		json_decref(msg);
		return;
	}
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	json_t *jv = json_object_get(msg, "jsonrpc");
	bool id_ok = json_is_string(id) || json_is_integer(id);
	if (!method && id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
		mcp_log(s, "ignoring a response from the client (this server sends no requests)");
		json_decref(msg);
		return;
	}
	if (!json_is_string(jv) || strcmp(json_string_value(jv), "2.0") != 0) {
		reply_error(out, id_ok ? id : NULL, RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"", NULL);
		json_decref(msg);
		return;
	}
	if (!json_is_string(method)) {
		reply_error(out, id_ok ? id : NULL, RPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string", NULL);
		json_decref(msg);
		return;
	}
	if (!id) {
		/* a notification: never answered */
		const char *m = json_string_value(method);
		if (!strcmp(m, "notifications/initialized"))
			s->legacy_ready = true;
		json_decref(msg);
		return;
	}
	if (!id_ok) {
		reply_error(out, NULL, RPC_INVALID_REQUEST, "Invalid Request: \"id\" must be a string or an integer (not null)",
		            NULL);
		json_decref(msg);
		return;
	}
	Req r = {.id = id, .method = json_string_value(method), .params = json_object_get(msg, "params")};
	if (r.params && !json_is_object(r.params)) {
		reply_error(out, id, RPC_INVALID_PARAMS, "Invalid params: \"params\" must be an object", NULL);
		json_decref(msg);
		return;
	}
	json_t *meta = r.params ? json_object_get(r.params, "_meta") : NULL;
	r.modern = json_is_object(meta) && json_object_get(meta, META_VERSION) && strcmp(r.method, "initialize") != 0;
	if (r.modern && !envelope_ok(out, &r)) {
		json_decref(msg);
		return;
	}
	size_t i;
	for (i = 0; i < NELEM(methods); i++)
		if (!strcmp(methods[i].name, r.method))
			break;
	if (i == NELEM(methods))
		reply_errorf(out, id, RPC_METHOD_NOT_FOUND, "Method not found: %.200s", r.method);
	else
		methods[i].run(s, out, &r);
	json_decref(msg);
}

/* ---- stdio ---- */

enum { LINE_OK, LINE_EOF, LINE_OVERSIZE };

/* Read one line (without its newline) into b; an oversize line is consumed
 * to its end and reported as LINE_OVERSIZE with *total its length. */
static int read_line(FILE *in, StrBuf *b, size_t max, size_t *total)
{
	b->len = 0;
	*total = 0;
	int c;
	bool any = false;
	while ((c = getc(in)) != EOF) {
		any = true;
		if (c == '\n')
			break;
		if (*total < max)
			sb_putc(b, (char)c);
		(*total)++;
	}
	if (!any)
		return LINE_EOF;
	if (*total > max)
		return LINE_OVERSIZE;
	if (b->len && b->s[b->len - 1] == '\r')
		b->len--;
	return LINE_OK;
}

static bool blank(const StrBuf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->s[i] != ' ' && b->s[i] != '\t' && b->s[i] != '\r')
			return false;
	return true;
}

int mcp_serve(McpServer *s, FILE *in, FILE *out, FILE *log)
{
	s->log = log;
	mcp_log(s, "serving MCP on stdio (protocols %s and %s; root %s)", PROTO_MODERN, PROTO_LEGACY, s->root);
	StrBuf line = {0}, resp = {0};
	int rc = 0;
	for (;;) {
		size_t total;
		int r = read_line(in, &line, s->o.max_line, &total);
		if (r == LINE_EOF)
			break;
		resp.len = 0;
		if (r == LINE_OVERSIZE) {
			mcp_log(s, "refused a request line of %zu bytes (limit %zu)", total, s->o.max_line);
			reply_errorf(&resp, NULL, RPC_INVALID_REQUEST,
			             "Invalid Request: a request line of %zu bytes exceeds the limit of %zu bytes", total,
			             s->o.max_line);
		} else if (!blank(&line)) {
			mcp_handle_line(s, line.s, line.len, &resp);
		}
		if (resp.len && (fwrite(resp.s, 1, resp.len, out) != resp.len || fflush(out) != 0)) {
			rc = 2;
			break;
		}
	}
	sb_free(&line);
	sb_free(&resp);
	mcp_log(s, "end of input; exiting");
	return rc;
}
