/*
 * mcp_int.h — what the files of the MCP server share (not for other layers).
 *
 * mcp.c is the protocol (framing, the two revisions, JSON-RPC errors);
 * mcp_tools.c is the tool table and the handlers; mcp_schema.c validates
 * tool arguments against the tools' input schemas. A tool is one McpTool entry: its name, a
 * description written for a model, its input and output JSON Schemas as
 * JSON text, and a handler. tools/list prints the table in order.
 *
 * A handler reads c->args (already validated against its input schema),
 * and either sets c->result to the structured result (which must conform to
 * its output schema) and returns true, or writes a message an agent can act
 * on to c->err and returns false (a result with isError: true).
 */
#ifndef CAKE_MCP_INT_H
#define CAKE_MCP_INT_H

#include "mcp.h"

#include <jansson.h>
#include <limits.h>

struct McpServer {
	McpOptions o;
	char root[PATH_MAX];        /* realpath of the root, no trailing slash (but "/") */
	char examples[PATH_MAX];    /* realpath of the examples tree ("" when none) */
	json_t *tools;              /* the tools/list array, built once in table order */
	json_t **in_schema;         /* parsed input schema of each tool */
	int ntools;
	char legacy_version[16];    /* negotiated by initialize ("" before) */
	bool legacy_ready;          /* notifications/initialized seen */
	FILE *log;
};

typedef struct McpCall {
	McpServer *srv;
	json_t *args;               /* the arguments object (borrowed) */
	json_t *result;             /* out: structuredContent (owned reference) */
	StrBuf err;                 /* out: the isError message */
} McpCall;

typedef bool (*McpToolFn)(McpCall *c);

typedef struct McpTool {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;   /* JSON Schema (2020-12 subset, see mcp_schema.c) as JSON text */
	const char *output_schema;
	McpToolFn run;
} McpTool;

/* The tool table in tools/list order; *n receives the count. */
const McpTool *mcp_tool_table(int *n);

/* Validate value against schema (the subset documented in mcp_schema.c);
 * append one "PATH: problem" line per violation to why (at most 20).
 * Returns the number of violations. */
int mcp_schema_check(const json_t *schema, const json_t *value, StrBuf *why);

/* Append a unified diff (3 lines of context; the shortest line diff of
 * src/harness/textdiff.h) turning text a into text b, with "--- name_a" /
 * "+++ name_b" headers, to out; nothing when they are equal. *deleted and
 * *inserted (may be NULL) get the line counts. Returns whether they differ. */
bool mcp_diff(const char *a, const char *name_a, const char *b, const char *name_b, StrBuf *out, int *deleted,
              int *inserted);

/* A JSON string of n bytes of s, invalid UTF-8 replaced by U+FFFD (NUL
 * bytes kept); never NULL. */
json_t *mcp_str(const char *s, size_t n);
/* mcp_str of a NUL-terminated string; JSON null for NULL. */
json_t *mcp_strz(const char *s);
/* Parse JSON text produced by one of Cake's printers; NULL (and a message
 * in err) when it does not parse, which is a bug. */
json_t *mcp_parse_printed(const char *text, size_t len, StrBuf *err);

#endif
