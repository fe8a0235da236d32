/*
 * mcp_schema.c — checking tool arguments against the tools' input schemas.
 *
 * The input schemas of Cake's tools are JSON Schema 2020-12 documents
 * (MCP's default dialect), written by hand in mcp_tools.c, and they use a
 * small subset of the vocabulary. This file implements exactly that subset,
 * so that what tools/list advertises is what tools/call enforces:
 *
 *   type                  "object" "array" "string" "integer" "number"
 *                         "boolean" "null", or an array of those ("integer"
 *                         is a JSON number written without a fraction or
 *                         exponent: 3.0 is refused, so handlers read exact values)
 *   properties, required, additionalProperties (false, or a schema)
 *   items                 one schema for every element
 *   enum                  a list of allowed values (compared with json_equal)
 *   minimum, maximum      on numbers
 *   minLength, maxLength  on strings (counted in bytes)
 *   description, title, default, examples, $schema   annotations, ignored
 *
 * Any other keyword in an input schema is a bug (tests/mcp checks that the
 * advertised input schemas use only these). Output schemas are free to use
 * more (anyOf, const): they are checked, with the reference Python
 * implementation of JSON Schema, against every output the tests produce.
 *
 * Violations are collected, not stopped at: an agent fixing its call wants
 * all of them, each as "/path/to/value: what is wrong".
 */
#include "mcp_int.h"

#include <string.h>

#define MAX_VIOLATIONS 20

typedef struct Check {
	StrBuf *why;
	int n;
} Check;

static void violation(Check *k, const char *path, const char *fmt, const char *a, const char *b)
{
	k->n++;
	if (k->n > MAX_VIOLATIONS)
		return;
	sb_printf(k->why, "%s: ", *path ? path : "/");
	sb_printf(k->why, fmt, a, b);
	sb_putc(k->why, '\n');
}

static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static bool type_is(const json_t *v, const char *t)
{
	if (!strcmp(t, "number"))
		return json_is_number(v);
	return !strcmp(type_of(v), t);
}

/* Append the JSON text of v, shortened, for a message. */
static void show(StrBuf *b, const json_t *v)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!s) {
		sb_puts(b, "?");
		return;
	}
	if (strlen(s) > 60)
		sb_printf(b, "%.57s...", s);
	else
		sb_puts(b, s);
	free(s);
}

static void check_value(Check *k, const json_t *sch, const json_t *v, const char *path);

static void check_object(Check *k, const json_t *sch, const json_t *v, const char *path)
{
	const json_t *props = json_object_get(sch, "properties");
	const json_t *req = json_object_get(sch, "required");
	const json_t *addl = json_object_get(sch, "additionalProperties");
	size_t i;
	const json_t *r;
	json_array_foreach(req, i, r) {
		if (json_is_string(r) && !json_object_get(v, json_string_value(r))) {
			StrBuf p = {0};
			sb_printf(&p, "%s/%s", path, json_string_value(r));
			violation(k, sb_str(&p), "required property is missing%s%s", "", "");
			sb_free(&p);
		}
	}
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)v, key, val) {
		StrBuf p = {0};
		sb_printf(&p, "%s/%s", path, key);
		const json_t *ps = props ? json_object_get(props, key) : NULL;
		if (ps) {
			check_value(k, ps, val, sb_str(&p));
		} else if (json_is_false(addl)) {
			StrBuf allowed = {0};
			const char *pk;
			const json_t *pv;
			json_object_foreach((json_t *)props, pk, pv) {
				(void)pv;
				sb_printf(&allowed, "%s%s", allowed.len ? ", " : "", pk);
			}
			violation(k, sb_str(&p), "unknown property (allowed: %s)%s",
			          allowed.len ? sb_str(&allowed) : "none", "");
			sb_free(&allowed);
		} else if (json_is_object(addl)) {
			check_value(k, addl, val, sb_str(&p));
		}
		sb_free(&p);
	}
}

static void check_value(Check *k, const json_t *sch, const json_t *v, const char *path)
{
	if (json_is_true(sch) || !json_is_object(sch))
		return;
	const json_t *t = json_object_get(sch, "type");
	if (t) {
		bool ok = false;
		StrBuf want = {0};
		if (json_is_string(t)) {
			ok = type_is(v, json_string_value(t));
			sb_puts(&want, json_string_value(t));
		} else {
			size_t i;
			const json_t *e;
			json_array_foreach(t, i, e) {
				if (json_is_string(e) && type_is(v, json_string_value(e)))
					ok = true;
				sb_printf(&want, "%s%s", i ? " or " : "", json_string_value(e));
			}
		}
		if (!ok) {
			violation(k, path, "expected %s, got %s", sb_str(&want), type_of(v));
			sb_free(&want);
			return;   /* the other keywords would only repeat it */
		}
		sb_free(&want);
	}
	const json_t *en = json_object_get(sch, "enum");
	if (en) {
		bool found = false;
		size_t i;
		const json_t *e;
		json_array_foreach(en, i, e)
			if (json_equal((json_t *)e, (json_t *)v))
				found = true;
		if (!found) {
			StrBuf got = {0}, allowed = {0};
			show(&got, v);
			json_array_foreach(en, i, e) {
				if (i)
					sb_puts(&allowed, ", ");
				show(&allowed, e);
			}
			violation(k, path, "%s is not one of %s", sb_str(&got), sb_str(&allowed));
			sb_free(&got);
			sb_free(&allowed);
		}
	}
	if (json_is_number(v)) {
		double x = json_number_value(v);
		const json_t *mn = json_object_get(sch, "minimum"), *mx = json_object_get(sch, "maximum");
		char a[64], b[64];
		if (mn && x < json_number_value(mn)) {
			snprintf(a, sizeof a, "%g", x);
			snprintf(b, sizeof b, "%g", json_number_value(mn));
			violation(k, path, "%s is below the minimum %s", a, b);
		}
		if (mx && x > json_number_value(mx)) {
			snprintf(a, sizeof a, "%g", x);
			snprintf(b, sizeof b, "%g", json_number_value(mx));
			violation(k, path, "%s is above the maximum %s", a, b);
		}
	}
	if (json_is_string(v)) {
		size_t n = json_string_length(v);
		const json_t *mn = json_object_get(sch, "minLength"), *mx = json_object_get(sch, "maxLength");
		char a[32], b[32];
		snprintf(a, sizeof a, "%zu", n);
		if (json_is_integer(mn) && (json_int_t)n < json_integer_value(mn)) {
			snprintf(b, sizeof b, "%lld", (long long)json_integer_value(mn));
			violation(k, path, "string of %s bytes is shorter than %s", a, b);
		}
		if (json_is_integer(mx) && (json_int_t)n > json_integer_value(mx)) {
			snprintf(b, sizeof b, "%lld", (long long)json_integer_value(mx));
			violation(k, path, "string of %s bytes is longer than %s", a, b);
		}
	}
	if (json_is_object(v))
		check_object(k, sch, v, path);
	if (json_is_array(v)) {
		const json_t *items = json_object_get(sch, "items");
		size_t i;
		const json_t *e;
		if (items)
			json_array_foreach(v, i, e) {
				char p[64 + PATH_MAX];
				snprintf(p, sizeof p, "%s/%zu", path, i);
				check_value(k, items, e, p);
			}
	}
}

int mcp_schema_check(const json_t *schema, const json_t *value, StrBuf *why)
{
	Check k = {why, 0};
	check_value(&k, schema, value, "");
	if (k.n > MAX_VIOLATIONS)
		sb_printf(why, "(%d more)\n", k.n - MAX_VIOLATIONS);
	return k.n;
}
