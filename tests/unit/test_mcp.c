/*
 * test_mcp.c — the MCP server's pieces, without a process in between.
 *
 * The line diff of the `diff` tool (exact hunks, including the edge cases
 * diff(1) has conventions for: empty sides, a missing final newline), the
 * input-schema checker (each keyword of its subset, every violation
 * collected), and mcp_handle_line for the framing rules that need no tool:
 * one response line per request, none for a notification. The protocol
 * and the tools end to end are tests/mcp/raw_client.py and sdk_client.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/mcp_int.h"

static char *diff(const char *a, const char *b)
{
	StrBuf out = {0};
	mcp_diff(a, "a", b, "b", &out, NULL, NULL);
	char *s = xstrdup(sb_str(&out));
	sb_free(&out);
	return s;
}

static void test_diff(void **state)
{
	char *d = diff("1\n2\n3\n", "1\n2\n3\n");
	assert_string_equal(d, "");
	free(d);
	d = diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n");
	assert_string_equal(d, "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	free(d);
	d = diff("", "x\n");
	assert_string_equal(d, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
	free(d);
	d = diff("x\n", "");
	assert_string_equal(d, "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
	free(d);
	d = diff("a\nb", "a\nb\n");
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
	free(d);
	/* two changes far apart: two hunks */
	d = diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n");
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -10,3 +11,4 @@\n 10\n 11\n 12\n+13\n");
	free(d);
}

static int violations(const char *schema, const char *value, StrBuf *why)
{
	json_t *s = json_loads(schema, 0, NULL), *v = json_loads(value, JSON_DECODE_ANY, NULL);
	assert_non_null(s);
	assert_non_null(v);
	int n = mcp_schema_check(s, v, why);
	json_decref(s);
	json_decref(v);
	return n;
}

static void test_schema(void **state)
{
	const char *sch = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"a\"], "
	                  "\"properties\": {\"a\": {\"type\": \"string\", \"minLength\": 2, \"maxLength\": 3}, "
	                  "\"n\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 9}, "
	                  "\"e\": {\"enum\": [\"x\", \"y\"]}, \"l\": {\"type\": \"array\", \"items\": {\"type\": \"boolean\"}}, "
	                  "\"o\": {\"type\": [\"string\", \"null\"]}}}";
	StrBuf why = {0};
	assert_int_equal(violations(sch, "{\"a\": \"ab\", \"n\": 3, \"e\": \"y\", \"l\": [true], \"o\": null}", &why), 0);
	assert_int_equal(why.len, 0);
	assert_int_equal(violations(sch, "{\"n\": 1.5, \"e\": \"z\", \"l\": [1], \"zz\": 0, \"o\": 3}", &why), 6);
	const char *w = sb_str(&why);
	assert_non_null(strstr(w, "/a: required property is missing\n"));
	assert_non_null(strstr(w, "/n: expected integer, got number\n"));
	assert_non_null(strstr(w, "/e: \"z\" is not one of \"x\", \"y\"\n"));
	assert_non_null(strstr(w, "/l/0: expected boolean, got integer\n"));
	assert_non_null(strstr(w, "/zz: unknown property (allowed: a, n, e, l, o)\n"));
	assert_non_null(strstr(w, "/o: expected string or null, got integer\n"));
	sb_free(&why);
	assert_int_equal(violations(sch, "{\"a\": \"abcd\", \"n\": 10}", &why), 2);
	assert_non_null(strstr(sb_str(&why), "longer than 3"));
	assert_non_null(strstr(sb_str(&why), "above the maximum 9"));
	sb_free(&why);
	assert_int_equal(violations(sch, "[]", &why), 1);
	assert_string_equal(sb_str(&why), "/: expected object, got array\n");
	sb_free(&why);
}

static void test_handle_line(void **state)
{
	McpOptions o = {.root = ".", .quiet = true};
	StrBuf err = {0};
	McpServer *s = mcp_server_new(&o, &err);
	assert_non_null(s);
	StrBuf out = {0};
	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	mcp_handle_line(s, ping, strlen(ping), &out);
	assert_string_equal(sb_str(&out), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
	out.len = 0;
	const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	mcp_handle_line(s, note, strlen(note), &out);
	assert_int_equal(out.len, 0);
	mcp_handle_line(s, "{", 1, &out);
	assert_non_null(strstr(sb_str(&out), "\"code\":-32700"));
	assert_non_null(strstr(sb_str(&out), "\"id\":null"));
	assert_non_null(strchr(sb_str(&out), '\n'));
	assert_true(strchr(sb_str(&out), '\n') == sb_str(&out) + out.len - 1);   /* one line */
	sb_free(&out);
	mcp_server_free(s);
	sb_free(&err);

	McpOptions none = {.root = "/nonexistent/for/sure"};
	assert_null(mcp_server_new(&none, &err));
	assert_non_null(strstr(sb_str(&err), "is not a directory"));
	sb_free(&err);
}

static void test_str(void **state)
{
	json_t *j = mcp_str("a\xff" "b\0c", 5);
	assert_int_equal(json_string_length(j), 7);
	assert_memory_equal(json_string_value(j), "a\xef\xbf\xbd" "b\0c", 7);
	json_decref(j);
	assert_true(json_is_null(mcp_strz(NULL)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_handle_line),
		cmocka_unit_test(test_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
