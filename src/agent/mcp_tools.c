/*
 * mcp_tools.c — the tools of `cake mcp`: one table entry per tool.
 *
 * Each entry is a name, a title, a description written for a model, the
 * input and output JSON Schemas (JSON text; tools/list prints them as they
 * are, mcp_schema.c enforces the input one) and a handler. tools/list lists
 * the table in order, so the order is the table's. Adding a tool is one
 * handler and one entry (`evaluate`, `run` and `cost` came that way). Never add an entry whose handler
 * does not work: the server advertises every entry.
 *
 * Inputs. Every tool that reads IR takes it either as `text` (with an
 * optional display `name`) or as `path`, relative to the server's --root.
 * A path is confined to the root twice over: lexically (a ".." that climbs
 * above the root is refused before anything is opened) and physically (the
 * realpath of the file must lie under the realpath of the root, so a
 * symbolic link cannot lead out). Only regular files up to 16 MiB are read,
 * opened non-blocking so a FIFO cannot stall the server. No tool runs a
 * shell command, writes a file or reaches the network.
 *
 * Outputs. Findings are the cake-diagnostics/1 objects of `cake check
 * --format=json` (docs/DIAGNOSTICS.md), produced by the same printer and
 * parsed back, so the CLI and the server can never disagree. The store
 * tools reuse the store's JSON printers the same way.
 */
#include "mcp_int.h"
#include "../cake.h"
#include "../base/registry.h"
#include "../harness/store.h"
#include "../harness/tactics.h"
#include "../harness/textdiff.h"
#include "../harness/eval.h"
#include "../harness/costreport.h"

#include <ctype.h>
#include <math.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (16u << 20)
#define DEFAULT_NAME "input.cake"

/* ---- schema fragments (JSON text) ---- */

#define S_SOURCE                                                                                          \
	"\"text\": {\"type\": \"string\", \"description\": \"Cake IR source text (give text or path)\"},"    \
	"\"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"a Cake IR file, relative to " \
	"the server root (give text or path)\"},"                                                             \
	"\"name\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 255, \"description\": \"the file "  \
	"name findings show when text is given (default input.cake)\"}"

#define S_KERNEL "\"kernel\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"only this kernel of the file\"}"

#define S_NSTR "{\"type\": [\"string\", \"null\"]}"
#define S_NINT "{\"type\": [\"integer\", \"null\"]}"
#define S_NNUM "{\"type\": [\"number\", \"null\"]}"

#define S_LOCATION                                                                                        \
	"{\"type\": \"object\", \"required\": [\"file\", \"line\", \"col\", \"offset\", \"length\"], "        \
	"\"properties\": {\"file\": " S_NSTR ", \"line\": {\"type\": \"integer\"}, \"col\": {\"type\": "      \
	"\"integer\"}, \"offset\": {\"type\": \"integer\"}, \"length\": {\"type\": \"integer\"}, "            \
	"\"message\": {\"type\": \"string\"}}}"

#define S_EDIT                                                                                           \
	"{\"type\": \"object\", \"required\": [\"file\", \"offset\", \"length\", \"line\", \"col\", "         \
	"\"replacement\"], \"properties\": {\"file\": " S_NSTR ", \"offset\": {\"type\": \"integer\", "     \
	"\"description\": \"0-based byte offset of the replaced bytes\"}, \"length\": {\"type\": "           \
	"\"integer\", \"description\": \"bytes replaced (0 inserts)\"}, \"line\": {\"type\": \"integer\"}, " \
	"\"col\": {\"type\": \"integer\"}, \"replacement\": {\"type\": \"string\"}}}"

#define S_FIX                                                                                            \
	"{\"type\": \"object\", \"required\": [\"description\", \"edits\"], \"properties\": "                \
	"{\"description\": {\"type\": \"string\"}, \"edits\": {\"type\": \"array\", \"items\": " S_EDIT "}}}"

#define S_DIAG                                                                                           \
	"{\"type\": \"object\", \"required\": [\"rule\", \"severity\", \"message\", \"location\", \"role\", " \
	"\"resource\", \"barrier\", \"pipeline\", \"stage\", \"phase\", \"iteration\", \"condition\", "      \
	"\"hint\", \"related\", \"fixes\"], \"properties\": {"                                                \
	"\"rule\": {\"type\": \"string\"}, "                                                                  \
	"\"severity\": {\"enum\": [\"error\", \"warning\", \"note\"]}, "                                     \
	"\"message\": {\"type\": \"string\"}, "                                                               \
	"\"location\": {\"anyOf\": [" S_LOCATION ", {\"type\": \"null\"}]}, "                               \
	"\"role\": " S_NSTR ", \"resource\": " S_NSTR ", \"barrier\": " S_NSTR ", \"pipeline\": " S_NSTR ", " \
	"\"stage\": " S_NINT ", \"phase\": " S_NINT ", \"iteration\": " S_NSTR ", \"condition\": " S_NSTR    \
	", \"hint\": " S_NSTR ", "                                                                            \
	"\"related\": {\"anyOf\": [" S_LOCATION ", {\"type\": \"null\"}]}, "                                \
	"\"fixes\": {\"type\": \"array\", \"items\": " S_FIX "}}}"

#define S_SUMMARY                                                                                        \
	"{\"type\": \"object\", \"required\": [\"errors\", \"warnings\", \"notes\", \"dropped\"], "          \
	"\"properties\": {\"errors\": {\"type\": \"integer\"}, \"warnings\": {\"type\": \"integer\"}, "       \
	"\"notes\": {\"type\": \"integer\"}, \"dropped\": {\"type\": \"integer\"}}}"

#define S_DIAGS "{\"type\": \"array\", \"items\": " S_DIAG "}"

#define S_EVAL                                                                                           \
	"{\"type\": \"object\", \"required\": [\"id\", \"candidate\", \"kernel\", \"shape\", \"verdict\"], "  \
	"\"properties\": {\"id\": {\"type\": \"integer\"}, \"candidate\": {\"type\": \"string\"}, "          \
	"\"family\": " S_NSTR ", \"kernel\": {\"type\": \"string\"}, \"shape\": " S_NSTR ", "                \
	"\"seed\": {\"type\": \"integer\"}, \"target\": " S_NSTR ", \"gpu\": " S_NSTR ", \"driver\": " S_NSTR \
	", \"compiler\": " S_NSTR ", \"verifier\": " S_NSTR ", \"cost_model\": " S_NSTR ", \"tactics\": "    \
	S_NSTR ", \"harness\": " S_NSTR ", \"verdict\": {\"type\": \"string\"}, \"message\": " S_NSTR ", "   \
	"\"predicted_us\": " S_NNUM ", \"median_us\": " S_NNUM ", \"min_us\": " S_NNUM ", \"max_us\": "      \
	S_NNUM ", \"rel_err\": " S_NNUM ", \"gpu_s\": " S_NNUM ", \"time\": {\"type\": \"string\"}, "        \
	"\"time_ms\": {\"type\": \"integer\"}, \"campaign\": " S_NSTR ", \"worker\": " S_NSTR "}}"

#define S_EVALS "{\"type\": \"array\", \"items\": " S_EVAL "}"

#define S_CANDIDATE                                                                                      \
	"{\"type\": \"object\", \"required\": [\"candidate\", \"evaluations\"], \"properties\": {"            \
	"\"candidate\": {\"type\": \"object\", \"required\": [\"id\", \"text\"], \"properties\": {"           \
	"\"id\": {\"type\": \"string\"}, \"family\": " S_NSTR ", \"parent\": " S_NSTR ", \"origin\": "       \
	S_NSTR ", \"created\": {\"type\": \"string\"}, \"created_ms\": {\"type\": \"integer\"}, \"text\": "  \
	S_NSTR "}}, \"count\": {\"type\": \"integer\"}, \"evaluations\": " S_EVALS "}}"

#define S_EXAMPLE                                                                                        \
	"{\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"object\", \"required\": [\"path\", \"text\", "       \
	"\"findings\"], \"properties\": {\"path\": {\"type\": \"string\", \"description\": \"relative to the " \
	"examples tree\"}, \"text\": {\"type\": \"string\"}, \"findings\": {\"type\": \"integer\", "          \
	"\"description\": \"findings of this rule in the example\"}, \"why\": {\"type\": \"string\"}}}]}"

#define S_FILTERS                                                                                        \
	"\"family\": {\"type\": \"string\"}, \"kernel\": {\"type\": \"string\"}, "                            \
	"\"shape\": {\"type\": \"string\", \"description\": \"NAME=VALUE pairs, e.g. M=4096,N=4096,K=4096\"}, " \
	"\"candidate\": {\"type\": \"string\", \"description\": \"a candidate id or a unique prefix\"}, "      \
	"\"gpu\": {\"type\": \"string\"}"

/* ---- common helpers ---- */

bool mcp_diff(const char *a, const char *name_a, const char *b, const char *name_b, StrBuf *out, int *deleted,
              int *inserted)
{
	TextDiff d;
	textdiff_run(&d, a ? a : "", a ? strlen(a) : 0, b ? b : "", b ? strlen(b) : 0);
	bool differ = d.ndel + d.nadd > 0;
	if (differ) {
		sb_printf(out, "--- %s\n+++ %s\n", name_a, name_b);
		textdiff_unified(out, &d, 3);
	}
	if (deleted)
		*deleted = d.ndel;
	if (inserted)
		*inserted = d.nadd;
	textdiff_free(&d);
	return differ;
}

static const char *arg_str(const McpCall *c, const char *key)
{
	return json_string_value(json_object_get(c->args, key));
}

static bool arg_bool(const McpCall *c, const char *key)
{
	return json_is_true(json_object_get(c->args, key));
}

/* Whether real (an absolute path without symlinks) lies under root. */
static bool under(const char *root, const char *real)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return real[0] == '/';
	return !strncmp(real, root, n) && (real[n] == '/' || real[n] == 0);
}

/* Lexical normal form of path p (absolute, or relative to root) into out:
 * "." dropped, ".." pops a component; false when ".." climbs past "/". */
static bool normalise(const char *root, const char *p, char *out, size_t cap)
{
	StrBuf b = {0};
	if (p[0] != '/')
		sb_printf(&b, "%s/", root);
	sb_puts(&b, p);
	const char *s = sb_str(&b);
	char *o = out;
	size_t n = 0;
	bool ok = true;
	o[n++] = '/';
	for (const char *q = s; *q;) {
		while (*q == '/')
			q++;
		const char *e = q;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - q);
		if (len == 0 || (len == 1 && q[0] == '.')) {
			/* nothing */
		} else if (len == 2 && q[0] == '.' && q[1] == '.') {
			if (n == 1) {
				ok = false;
				break;
			}
			n--;
			while (n > 1 && o[n - 1] != '/')
				n--;
			if (n > 1)
				n--;   /* drop the separator too */
		} else {
			if (n + len + 2 >= cap) {
				ok = false;
				break;
			}
			if (n > 1)
				o[n++] = '/';
			memcpy(o + n, q, len);
			n += len;
		}
		q = e;
	}
	o[n] = 0;
	sb_free(&b);
	return ok;
}

/* Read the file named by argument `path` under the root into ss (named as
 * given); the file index, or -1 with c->err set. */
static int load_path(McpCall *c, SourceSet *ss, const char *path, size_t arglen)
{
	const char *root = c->srv->root;
	char norm[PATH_MAX], real[PATH_MAX];
	if (strlen(path) != arglen) {
		sb_puts(&c->err, "path contains a NUL byte");
		return -1;
	}
	if (!normalise(root, path, norm, sizeof norm) || !under(root, norm)) {
		sb_printf(&c->err, "path '%s' is outside the server root %s: paths are relative to the root and '..' "
		          "may not leave it (give the IR as `text` instead, or restart the server with --root)", path, root);
		return -1;
	}
	if (!realpath(norm, real)) {
		int e = errno;
		sb_printf(&c->err, "cannot read '%s' (under root %s): %s", path, root, strerror(e));
		return -1;
	}
	if (!under(root, real)) {
		sb_printf(&c->err, "path '%s' resolves through a symbolic link to %s, outside the server root %s; "
		          "refused", path, real, root);
		return -1;
	}
	int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		sb_printf(&c->err, "cannot read '%s': %s", path, strerror(e));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		sb_printf(&c->err, "'%s' is not a regular file", path);
		return -1;
	}
	if ((size_t)st.st_size > MAX_FILE) {
		close(fd);
		sb_printf(&c->err, "'%s' has %lld bytes, more than the %u this server reads", path,
		          (long long)st.st_size, MAX_FILE);
		return -1;
	}
	StrBuf b = {0};
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0 && b.len <= MAX_FILE)
		sb_putn(&b, buf, (size_t)r);
	int e = errno;
	close(fd);
	if (r < 0) {
		sb_free(&b);
		sb_printf(&c->err, "cannot read '%s': %s", path, strerror(e));
		return -1;
	}
	int fi = src_add(ss, path, b.s ? b.s : "", b.len);
	sb_free(&b);
	return fi;
}

/* Load the tool's IR (argument text or path) into ss: the file index, or -1
 * with c->err set. */
static int load_source(McpCall *c, SourceSet *ss)
{
	json_t *text = json_object_get(c->args, "text"), *path = json_object_get(c->args, "path");
	if (text && path) {
		sb_puts(&c->err, "give either `text` or `path`, not both");
		return -1;
	}
	if (text) {
		const char *name = arg_str(c, "name");
		return src_add(ss, name ? name : DEFAULT_NAME, json_string_value(text), json_string_length(text));
	}
	if (path)
		return load_path(c, ss, json_string_value(path), json_string_length(path));
	sb_puts(&c->err, "no IR given: pass `text` (the Cake IR source) or `path` (a file relative to the server root)");
	return -1;
}

/* The findings document of dl as printed by `cake check --format=json`, parsed. */
static json_t *diag_doc(McpCall *c, SourceSet *ss, DiagList *dl)
{
	diag_sort(dl);
	StrBuf b = {0};
	diag_print_json(&b, ss, dl, verifier_version());
	json_t *j = mcp_parse_printed(b.s, b.len, &c->err);
	sb_free(&b);
	return j;
}

/* A json array of the diagnostics of dl (a new reference), or NULL on a bug. */
static json_t *diag_array(McpCall *c, SourceSet *ss, DiagList *dl)
{
	json_t *doc = diag_doc(c, ss, dl);
	if (!doc)
		return NULL;
	json_t *a = json_incref(json_object_get(doc, "diagnostics"));
	json_decref(doc);
	return a;
}

/* ---- check ---- */

static bool tool_check(McpCall *c)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0)
		goto out;
	CakeOptions o = cake_options(CAKE_VERIFY);
	o.kernel = arg_str(c, "kernel");
	o.no_verify = arg_bool(c, "no_verify");
	CakeUnit u;
	cake_compile(&u, &ss, &dl, fi, &o);
	if (u.error[0]) {
		sb_printf(&c->err, "%s", u.error);
		cake_unit_free(&u);
		goto out;
	}
	cake_unit_free(&u);
	json_t *doc = diag_doc(c, &ss, &dl);
	if (!doc)
		goto out;
	json_object_set_new(doc, "ok", json_boolean(dl.nerr == 0));
	json_t *fix = json_null();
	if (arg_bool(c, "fix")) {
		StrBuf fixed = {0};
		int applied = diag_apply_fixes(&ss, &dl, fi, &fixed);
		SourceSet ss2 = {0};
		DiagList dl2 = {0};
		int f2 = src_add(&ss2, ss.files[fi].path, fixed.s ? fixed.s : "", fixed.len);
		CakeUnit u2;
		cake_compile(&u2, &ss2, &dl2, f2, &o);
		cake_unit_free(&u2);
		json_t *d2 = diag_doc(c, &ss2, &dl2);
		if (d2) {
			fix = json_pack("{s:i, s:o, s:O, s:O, s:b}", "applied", applied, "text", mcp_str(fixed.s, fixed.len),
			                "diagnostics", json_object_get(d2, "diagnostics"), "summary",
			                json_object_get(d2, "summary"), "ok", dl2.nerr == 0);
			json_decref(d2);
		}
		diag_free(&dl2);
		src_free(&ss2);
		sb_free(&fixed);
		if (!d2) {
			json_decref(doc);
			goto out;
		}
	}
	json_object_set_new(doc, "fix", fix);
	c->result = doc;
	ok = true;
out:
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static const char check_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_SOURCE ", " S_KERNEL ", "
	"\"no_verify\": {\"type\": \"boolean\", \"description\": \"skip the verifier rules (front-end findings "
	"only)\"}, "
	"\"fix\": {\"type\": \"boolean\", \"description\": \"also apply the first fix of every fixable finding "
	"and return the repaired text with the findings that remain (nothing is written to disk)\"}}}";

static const char check_out[] =
	"{\"type\": \"object\", \"required\": [\"schema\", \"verifier\", \"files\", \"diagnostics\", "
	"\"summary\", \"ok\", \"fix\"], \"properties\": {"
	"\"schema\": {\"const\": \"cake-diagnostics/1\"}, \"verifier\": " S_NSTR ", "
	"\"files\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
	"\"diagnostics\": " S_DIAGS ", \"summary\": " S_SUMMARY ", "
	"\"ok\": {\"type\": \"boolean\", \"description\": \"no error findings\"}, "
	"\"fix\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"object\", \"required\": [\"applied\", "
	"\"text\", \"diagnostics\", \"summary\", \"ok\"], \"properties\": {\"applied\": {\"type\": "
	"\"integer\", \"description\": \"findings whose fix was applied\"}, \"text\": {\"type\": \"string\", "
	"\"description\": \"the repaired source\"}, \"diagnostics\": " S_DIAGS ", \"summary\": " S_SUMMARY
	", \"ok\": {\"type\": \"boolean\"}}}]}}}";

/* ---- format ---- */

static bool tool_format(McpCall *c)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0)
		goto out;
	CakeOptions o = cake_options(CAKE_PARSE);
	CakeUnit u;
	cake_compile(&u, &ss, &dl, fi, &o);
	json_t *diags = diag_array(c, &ss, &dl);
	if (!diags) {
		cake_unit_free(&u);
		goto out;
	}
	if (dl.nerr > 0) {
		c->result = json_pack("{s:b, s:b, s:n, s:o}", "ok", 0, "changed", 0, "text", "diagnostics", diags);
	} else {
		StrBuf t = {0};
		print_program(&t, u.prog);
		const Source *s = &ss.files[fi];
		bool same = t.len == s->len && !memcmp(sb_str(&t), s->text, s->len);
		c->result = json_pack("{s:b, s:b, s:o, s:o}", "ok", 1, "changed", !same, "text", mcp_str(t.s, t.len),
		                      "diagnostics", diags);
		sb_free(&t);
	}
	cake_unit_free(&u);
	ok = true;
out:
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static const char format_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_SOURCE "}}";

static const char format_out[] =
	"{\"type\": \"object\", \"required\": [\"ok\", \"changed\", \"text\", \"diagnostics\"], \"properties\": {"
	"\"ok\": {\"type\": \"boolean\", \"description\": \"false when the input has syntax errors (then text is "
	"null)\"}, \"changed\": {\"type\": \"boolean\", \"description\": \"the canonical text differs from the "
	"input\"}, \"text\": " S_NSTR ", \"diagnostics\": " S_DIAGS "}}";

/* ---- build ---- */

static bool tool_build(McpCall *c)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0)
		goto out;
	const char *emit = arg_str(c, "emit");
	if (!emit)
		emit = "cuda";
	CakeOptions o = cake_options(!strcmp(emit, "plan") ? CAKE_DERIVE : !strcmp(emit, "cuda") ? CAKE_LOWER : CAKE_JIT);
	o.kernel = arg_str(c, "kernel");
	o.no_verify = arg_bool(c, "no_verify");
	o.allow_spills = arg_bool(c, "allow_spills");
	o.debug_hang = arg_bool(c, "debug_hang");
	CakeUnit u;
	cake_compile(&u, &ss, &dl, fi, &o);
	bool jit_failed = u.failed == CAKE_JIT && !u.jit.nkern;
	if (jit_failed || (u.error[0] && u.failed == CAKE_PARSE && !dl.nerr)) {
		if (u.status == GPU_EXIT_NO_DRIVER)
			sb_printf(&c->err, "%s; emit 'cuda' and 'plan' work without NVRTC", u.error);
		else
			sb_printf(&c->err, "%s%s%s", u.error, u.jit.log && *u.jit.log ? "\n" : "", u.jit.log ? u.jit.log : "");
		cake_unit_free(&u);
		goto out;
	}
	bool built = u.failed == CAKE_STAGE_NONE;
	json_t *res = json_pack("{s:b, s:s}", "ok", built, "emit", emit);
	StrBuf plan = {0};
	if (built && !strcmp(emit, "plan"))
		for (int i = 0; i < u.nkernels; i++) {
			if (i)
				sb_putc(&plan, '\n');
			plan_print(&plan, u.plans[i]);
		}
	json_object_set_new(res, "plan", built && !strcmp(emit, "plan") ? mcp_str(plan.s, plan.len) : json_null());
	json_object_set_new(res, "cuda", built && !strcmp(emit, "cuda") ? mcp_str(u.cuda.s, u.cuda.len) : json_null());
	sb_free(&plan);
	json_t *kern = json_null();
	if (u.reached >= CAKE_LOWER && u.jit.nkern) {
		kern = json_array();
		for (int i = 0; i < u.jit.nkern; i++) {
			const JitKernelInfo *k = &u.jit.kern[i];
			json_array_append_new(kern, json_pack("{s:o, s:i, s:i, s:i, s:i, s:i, s:i}", "name",
			                                      mcp_strz(k->name), "registers", k->regs, "stack_bytes",
			                                      k->stack_bytes, "spill_stores", k->spill_stores, "spill_loads",
			                                      k->spill_loads, "smem_static", k->smem_static, "barriers",
			                                      k->barriers));
		}
	}
	json_object_set_new(res, "kernels", kern);
	json_object_set_new(res, "cache_hit", json_is_array(kern) ? json_boolean(u.jit.cache_hit) : json_null());
	json_object_set_new(res, "error", u.error[0] ? mcp_strz(u.error) : json_null());
	cake_unit_free(&u);
	json_t *doc = diag_doc(c, &ss, &dl);
	if (!doc) {
		json_decref(res);
		goto out;
	}
	json_object_set(res, "diagnostics", json_object_get(doc, "diagnostics"));
	json_object_set(res, "summary", json_object_get(doc, "summary"));
	json_decref(doc);
	c->result = res;
	ok = true;
out:
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static const char build_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_SOURCE ", " S_KERNEL ", "
	"\"emit\": {\"enum\": [\"plan\", \"cuda\", \"cubin-report\"], \"description\": \"plan: the derived "
	"plan (roles, smem layout, barriers, launch); cuda: the generated CUDA C++ (default); cubin-report: "
	"compile through NVRTC for the kernel's target and report ptxas registers and spills per kernel\"}, "
	"\"no_verify\": {\"type\": \"boolean\"}, "
	"\"allow_spills\": {\"type\": \"boolean\", \"description\": \"cubin-report: report spills without "
	"making them CK-LOW-014 errors\"}, "
	"\"debug_hang\": {\"type\": \"boolean\", \"description\": \"lower with the flight recorder\"}}}";

static const char build_out[] =
	"{\"type\": \"object\", \"required\": [\"ok\", \"emit\", \"plan\", \"cuda\", \"kernels\", \"cache_hit\", "
	"\"error\", \"diagnostics\", \"summary\"], \"properties\": {"
	"\"ok\": {\"type\": \"boolean\", \"description\": \"every requested stage ran; false: see diagnostics\"}, "
	"\"emit\": {\"type\": \"string\"}, \"plan\": " S_NSTR ", \"cuda\": " S_NSTR ", "
	"\"kernels\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"array\", \"items\": {\"type\": \"object\", "
	"\"required\": [\"name\", \"registers\", \"spill_stores\", \"spill_loads\"], \"properties\": {"
	"\"name\": {\"type\": \"string\"}, \"registers\": {\"type\": \"integer\"}, \"stack_bytes\": {\"type\": "
	"\"integer\"}, \"spill_stores\": {\"type\": \"integer\"}, \"spill_loads\": {\"type\": \"integer\"}, "
	"\"smem_static\": {\"type\": \"integer\"}, \"barriers\": {\"type\": \"integer\"}}}}]}, "
	"\"cache_hit\": {\"type\": [\"boolean\", \"null\"]}, \"error\": " S_NSTR ", "
	"\"diagnostics\": " S_DIAGS ", \"summary\": " S_SUMMARY "}}";

/* ---- rules ---- */

static json_t *rule_json(const Rule *r, bool rationale)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:s}", "id", r->id, "category", rule_cat_name(r->cat), "severity",
	                      sev_name(r->sev), "version", r->version, "title", r->title);
	if (rationale)
		json_object_set_new(j, "rationale", mcp_strz(r->rationale));
	return j;
}

static bool tool_rules(McpCall *c)
{
	int n;
	const Rule *r = rules_all(&n);
	const char *cat = arg_str(c, "category");
	bool rat = arg_bool(c, "with_rationale");
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		if (!cat || !strcmp(cat, rule_cat_name(r[i].cat)))
			json_array_append_new(a, rule_json(&r[i], rat));
	c->result = json_pack("{s:s, s:i, s:o}", "verifier", verifier_version(), "count", (int)json_array_size(a),
	                      "rules", a);
	return true;
}

#define S_CATEGORIES                                                                                     \
	"[\"language\", \"program safety\", \"hardware contract\", \"data consistency\", \"schedule "         \
	"semantics\", \"lowering\"]"

static const char rules_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
	"\"category\": {\"enum\": " S_CATEGORIES "}, "
	"\"with_rationale\": {\"type\": \"boolean\", \"description\": \"include each rule's rationale "
	"(explain_rule gives one rule in full)\"}}}";

#define S_RULE                                                                                           \
	"{\"type\": \"object\", \"required\": [\"id\", \"category\", \"severity\", \"version\", \"title\"], " \
	"\"properties\": {\"id\": {\"type\": \"string\"}, \"category\": {\"enum\": " S_CATEGORIES "}, "     \
	"\"severity\": {\"enum\": [\"error\", \"warning\", \"note\"]}, \"version\": {\"type\": \"integer\"}, " \
	"\"title\": {\"type\": \"string\"}, \"rationale\": {\"type\": \"string\"}}}"

static const char rules_out[] =
	"{\"type\": \"object\", \"required\": [\"verifier\", \"count\", \"rules\"], \"properties\": {"
	"\"verifier\": {\"type\": \"string\"}, \"count\": {\"type\": \"integer\"}, "
	"\"rules\": {\"type\": \"array\", \"items\": " S_RULE "}}}";

/* ---- explain_rule ---- */

/* Sorted names of the *.cake files of dir; NULL when it cannot be read. */
static char **list_cake(const char *dir, int *n)
{
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".cake") != 0)
			continue;
		v = xrealloc(v, sizeof(char *) * (size_t)(*n + 1));
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	for (int i = 1; i < *n; i++)   /* insertion sort: a few hundred names */
		for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Findings of rule id in file rel (under the examples tree), and whether
 * the file had any error at all; -1 when it cannot be read. */
static int count_rule(const char *exroot, const char *rel, const char *id, int *errors, char **text)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/%s", exroot, rel);
	size_t len;
	char *t = read_file(p, &len);
	if (!t)
		return -1;
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeOptions o = cake_options(CAKE_LOWER);
	CakeUnit u;
	cake_compile(&u, &ss, &dl, src_add(&ss, rel, t, len), &o);
	cake_unit_free(&u);
	int n = 0;
	for (int i = 0; i < dl.n; i++)
		if (!strcmp(dl.items[i]->rule, id))
			n++;
	*errors = dl.nerr;
	diag_free(&dl);
	src_free(&ss);
	*text = t;
	return n;
}

/* Whether file rel names rule id: a bad-corpus "# expect: ID" first line, or
 * a golden .err next to it that reports [ID]. */
static bool names_rule(const char *exroot, const char *rel, const char *id, bool golden)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/%s", exroot, rel);
	if (golden) {
		size_t l = strlen(p);
		if (l > 5)
			strcpy(p + l - 5, ".err");
	}
	size_t len;
	char *t = read_file(p, &len);
	if (!t)
		return false;
	char tag[64];
	bool hit;
	if (golden) {
		snprintf(tag, sizeof tag, "[%s]", id);
		hit = strstr(t, tag) != NULL;
	} else {
		char *nl = strchr(t, '\n');
		if (nl)
			*nl = 0;
		hit = !strncmp(t, "# expect:", 9) && strstr(t, id) != NULL;
	}
	free(t);
	return hit;
}

/* Whether word (n bytes) is one of the '_'/'.'-separated tokens of name. */
static bool has_token(const char *name, const char *word, size_t n)
{
	for (const char *p = name; *p;) {
		size_t k = strcspn(p, "_.");
		if (k == n && !strncmp(p, word, n))
			return true;
		p += k;
		if (*p)
			p++;
	}
	return false;
}

/* Tokens ("res", "smem", ...) the two file names share ("cake" aside). */
static int shared_tokens(const char *a, const char *b)
{
	int n = 0;
	for (const char *p = a; *p;) {
		size_t k = strcspn(p, "_.");
		if (k && !(k == 4 && !strncmp(p, "cake", 4)) && has_token(b, p, k))
			n++;
		p += k;
		if (*p)
			p++;
	}
	return n;
}

static json_t *example(const char *rel, char *text, int findings, const char *why)
{
	json_t *j = json_pack("{s:s, s:o, s:i, s:s}", "path", rel, "text", mcp_strz(text), "findings", findings, "why",
	                      why);
	free(text);
	return j;
}

/* The first bad-corpus or golden file that names rule id and reproduces it. */
static json_t *find_reject(const char *ex, const char *id, char *relout, size_t cap)
{
	static const struct {
		const char *dir;
		bool golden;
		const char *why;
	} where[] = {
		{"tests/corpus/bad", false, "bad-corpus kernel whose '# expect:' line names the rule"},
		{"tests/diag", true, "golden diagnostic test whose expected output reports the rule"},
	};
	for (size_t w = 0; w < NELEM(where); w++) {
		char dir[PATH_MAX * 2];
		snprintf(dir, sizeof dir, "%s/%s", ex, where[w].dir);
		int n;
		char **v = list_cake(dir, &n);
		json_t *got = NULL;
		for (int i = 0; v && i < n && !got; i++) {
			char rel[PATH_MAX];
			snprintf(rel, sizeof rel, "%s/%s", where[w].dir, v[i]);
			if (!names_rule(ex, rel, id, where[w].golden))
				continue;
			int errs;
			char *text = NULL;
			int k = count_rule(ex, rel, id, &errs, &text);
			if (k > 0) {
				snprintf(relout, cap, "%s", v[i]);
				got = example(rel, text, k, where[w].why);
			} else {
				free(text);
			}
		}
		free_list(v, n);
		if (got)
			return got;
	}
	return NULL;
}

/* A good-corpus kernel that checks clean: one that mentions the rule first,
 * then the one whose name is closest to the rejected example's. */
static json_t *find_accept(const char *ex, const char *id, const char *reject_name)
{
	char dir[PATH_MAX * 2];
	snprintf(dir, sizeof dir, "%s/tests/corpus/good", ex);
	int n;
	char **v = list_cake(dir, &n);
	if (!v)
		return NULL;
	int *score = xcalloc((size_t)n + 1, sizeof(int));
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX * 3];
		snprintf(p, sizeof p, "%s/%s", dir, v[i]);
		size_t len;
		char *t = read_file(p, &len);
		score[i] = (t && strstr(t, id) ? 1000 : 0) + (reject_name[0] ? shared_tokens(reject_name, v[i]) : 0);
		free(t);
	}
	json_t *got = NULL;
	for (int tries = 0; tries < 8 && !got; tries++) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (score[i] >= 0 && (best < 0 || score[i] > score[best]))
				best = i;
		if (best < 0)
			break;
		char rel[PATH_MAX];
		snprintf(rel, sizeof rel, "tests/corpus/good/%s", v[best]);
		int errs;
		char *text = NULL;
		int k = count_rule(ex, rel, id, &errs, &text);
		if (k == 0 && errs == 0)
			got = example(rel, text, 0, score[best] >= 1000 ? "good-corpus kernel that mentions the rule and checks clean"
			                                                 : "good-corpus kernel closest to the rejected one; checks clean");
		else
			free(text);
		score[best] = -1;
	}
	free(score);
	free_list(v, n);
	return got;
}

static bool tool_explain_rule(McpCall *c)
{
	char id[64];
	snprintf(id, sizeof id, "%s", arg_str(c, "rule"));
	for (char *p = id; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	const Rule *r = rule_find(id);
	if (!r) {
		sb_printf(&c->err, "no rule '%s'", arg_str(c, "rule"));
		int n;
		const Rule *all = rules_all(&n);
		char fam[64];
		snprintf(fam, sizeof fam, "%s", id);
		char *dash = strrchr(fam, '-');
		if (dash && dash != fam)
			*dash = 0;
		int shown = 0;
		for (int i = 0; i < n; i++)
			if (!strncmp(all[i].id, fam, strlen(fam)) && shown < 12)
				sb_printf(&c->err, "%s%s", shown++ ? ", " : "; rules of that family: ", all[i].id);
		sb_puts(&c->err, shown ? "" : "; call the `rules` tool for the list");
		return false;
	}
	json_t *res = rule_json(r, true);
	const char *dom = r->rationale ? strstr(r->rationale, "Domain: ") : NULL;
	json_object_set_new(res, "domain", dom ? mcp_strz(dom + 8) : json_null());
	json_t *notes = json_array();
	const char *ex = c->srv->examples;
	json_t *rej = NULL, *acc = NULL;
	char rejname[PATH_MAX] = "";
	if (!ex[0]) {
		json_array_append_new(notes, json_string("no examples tree: start the server with --examples pointing at "
		                                         "a Cake checkout (tests/corpus, tests/diag)"));
	} else {
		rej = find_reject(ex, r->id, rejname, sizeof rejname);
		/* the rejected kernel's name says what it is (kmeans_assign_4wg) as much as its file does */
		const char *rt = rej ? json_string_value(json_object_get(rej, "text")) : NULL;
		const char *kw = rt ? strstr(rt, "\nkernel ") : NULL;
		char kname[128];
		if (kw && sscanf(kw, "\nkernel %127[A-Za-z0-9_]", kname) == 1) {
			size_t l = strlen(rejname);
			snprintf(rejname + l, sizeof rejname - l, "_%s", kname);
		}
		acc = find_accept(ex, r->id, rejname);
		if (!rej)
			json_array_append_new(notes, mcp_strz("no must-reject example: no file of tests/corpus/bad (by its "
			                                      "'# expect:' line) or tests/diag (by its .err) reports this rule"));
		if (!acc)
			json_array_append_new(notes, json_string("no must-accept example: no kernel of tests/corpus/good "
			                                         "checks clean"));
	}
	json_object_set_new(res, "must_reject", rej ? rej : json_null());
	json_object_set_new(res, "must_accept", acc ? acc : json_null());
	json_object_set_new(res, "notes", notes);
	c->result = res;
	return true;
}

static const char explain_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"rule\"], \"properties\": {"
	"\"rule\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 40, \"description\": \"a rule ID such "
	"as CK-RES-002 (case does not matter)\"}}}";

static const char explain_out[] =
	"{\"type\": \"object\", \"required\": [\"id\", \"category\", \"severity\", \"version\", \"title\", "
	"\"rationale\", \"domain\", \"must_reject\", \"must_accept\", \"notes\"], \"properties\": {"
	"\"id\": {\"type\": \"string\"}, \"category\": {\"type\": \"string\"}, \"severity\": {\"type\": "
	"\"string\"}, \"version\": {\"type\": \"integer\"}, \"title\": {\"type\": \"string\"}, "
	"\"rationale\": {\"type\": \"string\", \"description\": \"what the rule checks and the domain it "
	"models\"}, \"domain\": " S_NSTR ", \"must_reject\": " S_EXAMPLE ", \"must_accept\": " S_EXAMPLE ", "
	"\"notes\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}";

/* ---- the store ---- */

/* Open the store read-only-ish (never created); NULL with c->err set. */
static Store *open_store(McpCall *c)
{
	const char *path = c->srv->o.store ? c->srv->o.store : STORE_DEFAULT_PATH;
	Store *st = NULL;
	StrBuf e = {0};
	StoreStatus r = store_open(path, 0, &st, &e);
	if (r == STORE_MISSING)
		sb_printf(&c->err, "no candidate store at '%s': evaluations are recorded there by `cake eval` / "
		          "`cake evolve`; start the server with --store PATH to read another one", path);
	else if (r != STORE_OK)
		sb_printf(&c->err, "cannot open the candidate store '%s': %s", path, sb_str(&e));
	sb_free(&e);
	return r == STORE_OK ? st : NULL;
}

static void fill_filter(const McpCall *c, StoreFilter *f)
{
	memset(f, 0, sizeof *f);
	f->family = arg_str(c, "family");
	f->kernel = arg_str(c, "kernel");
	f->shape = arg_str(c, "shape");
	f->cand = arg_str(c, "candidate");
	f->gpu = arg_str(c, "gpu");
	f->campaign = arg_str(c, "campaign");
	f->verdict = arg_str(c, "verdict");
}

static bool store_failed(McpCall *c, Store *st, StoreStatus r, const char *what)
{
	if (r == STORE_OK)
		return false;
	sb_printf(&c->err, "%s: %s", what, store_errmsg(st)[0] ? store_errmsg(st) : store_status_name(r));
	return true;
}

static json_t *parse_into(McpCall *c, StrBuf *b)
{
	json_t *j = mcp_parse_printed(b->s, b->len, &c->err);
	sb_free(b);
	return j;
}

static bool tool_history(McpCall *c)
{
	Store *st = open_store(c);
	if (!st)
		return false;
	StoreFilter f;
	fill_filter(c, &f);
	json_t *lim = json_object_get(c->args, "limit");
	f.limit = lim ? (int)json_integer_value(lim) : 20;
	Arena a;
	arena_init(&a);
	StoreEval *e;
	int n;
	StoreStatus r = store_list_evals(st, &f, &a, &e, &n);
	bool ok = false;
	if (!store_failed(c, st, r, "history")) {
		StrBuf b = {0};
		store_print_evals(&b, e, n, STORE_FMT_JSON);
		json_t *j = parse_into(c, &b);
		if (j) {
			json_object_set_new(j, "store", mcp_strz(store_path(st)));
			c->result = j;
			ok = true;
		}
	}
	arena_free(&a);
	store_close(st);
	return ok;
}

static const char history_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_FILTERS ", "
	"\"verdict\": {\"enum\": [\"ok\", \"mismatch\", \"hang\", \"fault\", \"compile_error\", \"launch_error\", "
	"\"refused\", \"rejected\", \"no_gpu\", \"internal_error\", \"dry_run\"]}, "
	"\"campaign\": {\"type\": \"string\"}, "
	"\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 1000, \"description\": \"newest "
	"evaluations first; default 20\"}}}";

static const char history_out[] =
	"{\"type\": \"object\", \"required\": [\"schema\", \"count\", \"evaluations\", \"store\"], \"properties\": {"
	"\"schema\": {\"const\": \"cake-evals/1\"}, \"count\": {\"type\": \"integer\"}, \"evaluations\": " S_EVALS
	", \"store\": {\"type\": \"string\"}}}";

static bool tool_best(McpCall *c)
{
	Store *st = open_store(c);
	if (!st)
		return false;
	StoreFilter f;
	fill_filter(c, &f);
	Arena a;
	arena_init(&a);
	bool ok = false;
	StoreEval one, *e = &one;
	int n = 1;
	StoreStatus r;
	if (f.shape) {
		if (!f.family && !f.cand) {
			sb_puts(&c->err, "best with a shape needs `family` or `candidate` (without a shape it lists the "
			        "frontier: the best evaluation of every family, kernel and shape)");
			goto out;
		}
		r = store_best(st, &f, &a, &one);
		if (r == STORE_NOT_FOUND)
			n = 0, r = STORE_OK;
	} else {
		r = store_frontier(st, &f, &a, &e, &n);
	}
	if (store_failed(c, st, r, "best"))
		goto out;
	StrBuf b = {0};
	store_print_evals(&b, e, n, STORE_FMT_JSON);
	json_t *j = parse_into(c, &b);
	if (!j)
		goto out;
	json_t *text = json_null();
	if (f.shape && n == 1) {
		StoreCandidate cand;
		if (store_get_candidate(st, one.cand, &a, &cand) == STORE_OK)
			text = mcp_strz(cand.text);
	}
	c->result = json_pack("{s:O, s:o, s:o}", "best", json_object_get(j, "evaluations"), "text", text, "store",
	                      mcp_strz(store_path(st)));
	json_decref(j);
	ok = true;
out:
	arena_free(&a);
	store_close(st);
	return ok;
}

static const char best_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_FILTERS "}}";

static const char best_out[] =
	"{\"type\": \"object\", \"required\": [\"best\", \"text\", \"store\"], \"properties\": {"
	"\"best\": " S_EVALS ", \"text\": " S_NSTR ", \"store\": {\"type\": \"string\"}}}";

/* The cake-candidate/1 object of a candidate (id or prefix), or NULL with c->err set. */
static json_t *candidate_json(McpCall *c, Store *st, const char *prefix, Arena *a, const char **text)
{
	StoreCandidate cand;
	StoreStatus r = store_get_candidate(st, prefix, a, &cand);
	if (r == STORE_NOT_FOUND) {
		sb_printf(&c->err, "no candidate '%s' in the store (use history to list candidate ids)", prefix);
		return NULL;
	}
	if (store_failed(c, st, r, "diff"))
		return NULL;
	StoreFilter f = {.cand = cand.id};
	StoreEval *e;
	int n;
	if (store_failed(c, st, store_list_evals(st, &f, a, &e, &n), "diff"))
		return NULL;
	StrBuf b = {0};
	store_print_candidate(&b, &cand, e, n, STORE_FMT_JSON);
	*text = cand.text;
	return parse_into(c, &b);
}

static bool tool_diff(McpCall *c)
{
	Store *st = open_store(c);
	if (!st)
		return false;
	Arena a;
	arena_init(&a);
	bool ok = false;
	const char *ta = NULL, *tb = NULL, *bid = arg_str(c, "b");
	json_t *jb = NULL, *ja = NULL;
	/* with one candidate: its parent is the old side, as `cake diff A` */
	json_t *jnew = candidate_json(c, st, arg_str(c, "a"), &a, bid ? &ta : &tb);
	if (jnew && !bid) {
		const char *parent = json_string_value(json_object_get(json_object_get(jnew, "candidate"), "parent"));
		if (!parent)
			sb_printf(&c->err, "candidate %s has no parent; give `b` to compare it with another candidate",
			          arg_str(c, "a"));
		else
			ja = candidate_json(c, st, parent, &a, &ta);
		jb = jnew;
	} else if (jnew) {
		ja = jnew;
		jb = candidate_json(c, st, bid, &a, &tb);
	}
	if (ja && jb) {
		StrBuf d = {0};
		char na[64], nb[64];
		snprintf(na, sizeof na, "%.12s", json_string_value(json_object_get(json_object_get(ja, "candidate"), "id")));
		snprintf(nb, sizeof nb, "%.12s", json_string_value(json_object_get(json_object_get(jb, "candidate"), "id")));
		int del = 0, ins = 0;
		bool differ = mcp_diff(ta, na, tb, nb, &d, &del, &ins);
		c->result = json_pack("{s:O, s:O, s:b, s:i, s:i, s:o}", "a", ja, "b", jb, "identical", !differ, "deleted", del,
		                      "inserted", ins, "diff", mcp_str(d.s, d.len));
		sb_free(&d);
		ok = true;
	}
	json_decref(ja);
	json_decref(jb);
	arena_free(&a);
	store_close(st);
	return ok;
}

static const char diff_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"a\"], \"properties\": {"
	"\"a\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"candidate id or unique prefix (the new side "
	"when b is omitted)\"}, "
	"\"b\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"candidate id or unique prefix; omitted: "
	"compare a with its parent\"}}}";

static const char diff_out[] =
	"{\"type\": \"object\", \"required\": [\"a\", \"b\", \"identical\", \"deleted\", \"inserted\", \"diff\"], "
	"\"properties\": {\"a\": " S_CANDIDATE ", \"b\": " S_CANDIDATE ", \"identical\": {\"type\": \"boolean\"}, "
	"\"deleted\": {\"type\": \"integer\"}, \"inserted\": {\"type\": \"integer\"}, "
	"\"diff\": {\"type\": \"string\", \"description\": \"unified diff of the two texts, a to b\"}}}";

/* ---- tactics ---- */

static const char *tactic_status_name(TacticStatus t)
{
	switch (t) {
	case TACTIC_OK: return "ok";
	case TACTIC_NOT_APPLICABLE: return "not_applicable";
	case TACTIC_REJECTED: return "rejected";
	case TACTIC_BAD_SPEC: return "bad_spec";
	case TACTIC_BAD_INPUT: return "bad_input";
	case TACTIC_BROKEN: return "broken";
	}
	return "?";
}

static bool tool_tactics(McpCall *c)
{
	StrBuf b = {0};
	tactics_print(&b, "json");
	json_t *res = parse_into(c, &b);
	if (!res)
		return false;
	json_t *props = json_null();
	if (json_object_get(c->args, "text") || json_object_get(c->args, "path")) {
		SourceSet ss = {0};
		int fi = load_source(c, &ss);
		if (fi < 0) {
			src_free(&ss);
			json_decref(res);
			return false;
		}
		TacticProposals ps = {0};
		json_t *only = json_object_get(c->args, "only_applicable");
		int n = tactics_propose(ss.files[fi].text, ss.files[fi].len, arg_str(c, "kernel"), only ? json_is_true(only) : true,
		                        &ps);
		if (n < 0) {
			sb_printf(&c->err, "'%s' has errors or no kernel %s%s: run `check` on it first", ss.files[fi].path,
			          arg_str(c, "kernel") ? "named " : "", arg_str(c, "kernel") ? arg_str(c, "kernel") : "");
			src_free(&ss);
			json_decref(res);
			return false;
		}
		props = json_array();
		for (int i = 0; i < ps.n; i++) {
			const TacticProposal *p = &ps.items[i];
			const char *spec = !strncmp(p->origin, "tactic:", 7) ? p->origin + 7 : p->origin;
			json_array_append_new(props, json_pack("{s:o, s:s, s:o}", "spec", mcp_strz(spec), "status",
			                                       tactic_status_name(p->status), "reason", mcp_strz(p->reason)));
		}
		tactic_proposals_free(&ps);
		src_free(&ss);
	}
	json_object_set_new(res, "proposals", props);
	c->result = res;
	return true;
}

static const char tactics_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {" S_SOURCE ", " S_KERNEL ", "
	"\"only_applicable\": {\"type\": \"boolean\", \"description\": \"with IR: list only the proposals that "
	"apply (default true)\"}}}";

static const char tactics_out[] =
	"{\"type\": \"object\", \"required\": [\"schema\", \"version\", \"tactics\", \"proposals\"], \"properties\": {"
	"\"schema\": {\"const\": \"cake-tactics/1\"}, \"version\": {\"type\": \"string\"}, "
	"\"tactics\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": [\"name\", \"version\", "
	"\"params\", \"summary\"], \"properties\": {\"name\": {\"type\": \"string\"}, \"version\": {\"type\": "
	"\"integer\"}, \"params\": {\"type\": \"string\"}, \"summary\": {\"type\": \"string\"}}}}, "
	"\"proposals\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"array\", \"items\": {\"type\": \"object\", "
	"\"required\": [\"spec\", \"status\", \"reason\"], \"properties\": {\"spec\": {\"type\": \"string\", "
	"\"description\": \"pass to apply_tactic\"}, \"status\": {\"type\": \"string\"}, \"reason\": " S_NSTR
	"}}}]}}}";

static bool tool_apply_tactic(McpCall *c)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0)
		goto out;
	StrBuf text = {0}, why = {0};
	TacticStatus t = tactic_apply_source(&ss, fi, &dl, arg_str(c, "spec"), arg_str(c, "kernel"), &text, &why);
	if (t == TACTIC_BAD_SPEC || t == TACTIC_BROKEN) {
		sb_printf(&c->err, "%s%s", sb_str(&why),
		          t == TACTIC_BAD_SPEC ? " (call the `tactics` tool for the tactics and their arguments)"
		                               : " (a bug in the tactic; please report it)");
		sb_free(&text);
		sb_free(&why);
		goto out;
	}
	json_t *diags = diag_array(c, &ss, &dl);
	if (!diags) {
		sb_free(&text);
		sb_free(&why);
		goto out;
	}
	bool has_text = t == TACTIC_OK || t == TACTIC_REJECTED;
	json_t *diff = json_null();
	if (has_text) {
		/* against the input's canonical form: the tactic prints canonical
		 * text, so the diff shows the rewrite, not the reformatting */
		StrBuf d = {0}, canon = {0};
		SourceSet s1 = {0};
		DiagList d1 = {0};
		CakeOptions po = cake_options(CAKE_PARSE);
		CakeUnit pu;
		cake_compile(&pu, &s1, &d1, src_add(&s1, ss.files[fi].path, ss.files[fi].text, ss.files[fi].len), &po);
		print_program(&canon, pu.prog);
		cake_unit_free(&pu);
		diag_free(&d1);
		src_free(&s1);
		char before[PATH_MAX + 16], rewritten[PATH_MAX + 16];
		snprintf(before, sizeof before, "%s (canonical)", ss.files[fi].path);
		snprintf(rewritten, sizeof rewritten, "%s (%s)", ss.files[fi].path, arg_str(c, "spec"));
		mcp_diff(sb_str(&canon), before, sb_str(&text), rewritten, &d, NULL, NULL);
		sb_free(&canon);
		diff = mcp_str(d.s, d.len);
		sb_free(&d);
		if (t == TACTIC_REJECTED) {
			/* what the verifier or the lowering says about the rewritten program */
			SourceSet s2 = {0};
			DiagList d2 = {0};
			CakeOptions o = cake_options(CAKE_LOWER);
			CakeUnit u;
			cake_compile(&u, &s2, &d2, src_add(&s2, "<rewritten>", sb_str(&text), text.len), &o);
			cake_unit_free(&u);
			json_decref(diags);
			diags = diag_array(c, &s2, &d2);
			diag_free(&d2);
			src_free(&s2);
			if (!diags) {
				json_decref(diff);
				sb_free(&text);
				sb_free(&why);
				goto out;
			}
		}
	}
	c->result = json_pack("{s:s, s:o, s:o, s:o, s:o}", "status", tactic_status_name(t), "text",
	                      has_text ? mcp_str(text.s, text.len) : json_null(), "diff", diff, "reason",
	                      why.len ? mcp_str(why.s, why.len) : json_null(), "diagnostics", diags);
	sb_free(&text);
	sb_free(&why);
	ok = true;
out:
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static const char apply_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"spec\"], \"properties\": {"
	S_SOURCE ", " S_KERNEL ", "
	"\"spec\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 200, \"description\": \"NAME or "
	"NAME:ARG[:ARG], e.g. stages:5, tile_n:128, regs:mma:224 (see the tactics tool)\"}}}";

static const char apply_out[] =
	"{\"type\": \"object\", \"required\": [\"status\", \"text\", \"diff\", \"reason\", \"diagnostics\"], "
	"\"properties\": {\"status\": {\"enum\": [\"ok\", \"not_applicable\", \"rejected\", \"bad_input\"], "
	"\"description\": \"ok: text is the rewritten program (canonical, comments dropped), verified; "
	"not_applicable: reason says why; rejected: the rewrite is refused by the verifier or the lowering "
	"(text and its diagnostics); bad_input: the input has errors (diagnostics)\"}, "
	"\"text\": " S_NSTR ", \"diff\": " S_NSTR ", \"reason\": " S_NSTR ", \"diagnostics\": " S_DIAGS "}}";

/* ---- the table ---- */


/* ---- evaluate and run: the search loop's unit of work (src/harness/eval.c) ---- */

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* Evaluate the tool's IR at its shape and record it in the store (created
 * when missing). gpu: run on the GPU even if the store has a verdict (the
 * `run` tool); otherwise dry_run decides. A GPU run goes through the
 * isolated runner's child process, so a hanging kernel is a verdict, not a
 * stuck server. */
static bool evaluate_common(McpCall *c, bool gpu)
{
	SourceSet ss = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0) {
		src_free(&ss);
		return false;
	}
	const char *path = c->srv->o.store ? c->srv->o.store : STORE_DEFAULT_PATH;
	Store *st = NULL;
	StrBuf e = {0};
	if (store_open(path, STORE_CREATE, &st, &e) != STORE_OK) {
		sb_printf(&c->err, "cannot open the candidate store '%s': %s", path, sb_str(&e));
		sb_free(&e);
		src_free(&ss);
		return false;
	}
	sb_free(&e);
	EvalRequest r = eval_request();
	r.text = ss.files[fi].text;
	r.len = ss.files[fi].len;
	r.name = ss.files[fi].path;
	r.kernel = arg_str(c, "kernel");
	r.shape = arg_str(c, "shape");
	r.origin = arg_str(c, "origin") ? arg_str(c, "origin") : "agent:mcp";
	r.parent = arg_str(c, "parent");
	r.dry_run = !gpu && arg_bool(c, "dry_run");
	r.force = gpu || arg_bool(c, "force");
	r.run.time = !arg_bool(c, "no_time");
	json_t *it = json_object_get(c->args, "iters");
	r.run.iters = it ? (int)json_integer_value(it) : 20;
	r.store = st;
	if (!r.dry_run && !run_driver_present()) {
		sb_printf(&c->err, "no GPU here: %s; evaluate with dry_run: true to check, rank and compile without running",
		          gpu_no_driver_msg());
		goto out;
	}
	SourceSet es = {0};
	EvalResult res;
	EvalStatus est = eval_candidate(&r, &es, &res);
	if (est != EVAL_DONE) {
		sb_printf(&c->err, "%s", res.message[0] ? res.message : "the evaluation failed");
	} else {
		json_t *diags = diag_array(c, &es, &res.diags);
		c->result = json_pack("{s:s, s:s, s:s?, s:s, s:s, s:b, s:I, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o}", "candidate",
		                      res.cand, "kernel", res.kernel, "family", res.family[0] ? res.family : NULL, "shape",
		                      res.shape, "verdict", store_verdict_name(res.verdict), "cached", res.cached, "eval_id",
		                      (json_int_t)res.eval_id, "predicted_us", num_or_null(res.has_pred ? res.pred.us : NAN),
		                      "median_us", num_or_null(res.median_us), "min_us", num_or_null(res.min_us), "max_us",
		                      num_or_null(res.max_us), "rel_err", num_or_null(res.rel_err), "message", res.message,
		                      "store", store_path(st), "findings", diags ? diags : json_array());
		ok = c->result != NULL;
		if (!ok)
			sb_puts(&c->err, "internal error: could not build the result");
	}
	eval_result_free(&res);
	src_free(&es);
out:
	store_close(st);
	src_free(&ss);
	return ok;
}

static bool tool_evaluate(McpCall *c)
{
	return evaluate_common(c, false);
}

static bool tool_run(McpCall *c)
{
	return evaluate_common(c, true);
}

#define S_EVAL_IN_COMMON                                                                                  \
	S_SOURCE ", " S_KERNEL ", "                                                                           \
	"\"shape\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"every dim of the kernel, e.g. "   \
	"M=8192,N=8192,K=8192\"}, "                                                                            \
	"\"origin\": {\"type\": \"string\", \"description\": \"who proposed it: agent:NAME (default agent:mcp), "   \
	"human, tactic:NAME:ARGS\"}, "                                                                         \
	"\"parent\": {\"type\": \"string\", \"description\": \"the stored candidate it was derived from (full id "  \
	"or unique prefix)\"}, "                                                                               \
	"\"iters\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 1000, \"description\": \"timed launches "  \
	"(default 20)\"}, "                                                                                    \
	"\"no_time\": {\"type\": \"boolean\", \"description\": \"check correctness only, no timing\"}"

static const char evaluate_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"shape\"], \"properties\": {"
	S_EVAL_IN_COMMON ", "
	"\"dry_run\": {\"type\": \"boolean\", \"description\": \"check, rank and compile; do not run on the GPU\"}, "
	"\"force\": {\"type\": \"boolean\", \"description\": \"evaluate again even when the store has a verdict\"}}}";

static const char run_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"shape\"], \"properties\": {"
	S_EVAL_IN_COMMON "}}";

static const char evaluate_out[] =
	"{\"type\": \"object\", \"required\": [\"candidate\", \"kernel\", \"shape\", \"verdict\", \"cached\", "
	"\"eval_id\", \"predicted_us\", \"median_us\", \"message\", \"store\", \"findings\"], \"properties\": {"
	"\"candidate\": {\"type\": \"string\"}, \"kernel\": {\"type\": \"string\"}, \"family\": " S_NSTR ", "
	"\"shape\": {\"type\": \"string\"}, \"verdict\": {\"type\": \"string\"}, \"cached\": {\"type\": \"boolean\"}, "
	"\"eval_id\": {\"type\": \"integer\"}, \"predicted_us\": " S_NNUM ", \"median_us\": " S_NNUM ", "
	"\"min_us\": " S_NNUM ", \"max_us\": " S_NNUM ", \"rel_err\": " S_NNUM ", \"message\": {\"type\": \"string\"}, "
	"\"store\": {\"type\": \"string\"}, \"findings\": {\"type\": \"array\", \"items\": " S_DIAG "}}}";


/* ---- cost: the cost model's prediction (src/harness/costreport.c) ---- */

static bool tool_cost(McpCall *c)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	bool ok = false;
	int fi = load_source(c, &ss);
	if (fi < 0)
		goto out;
	CakeOptions o = cake_options(CAKE_DERIVE);
	o.kernel = arg_str(c, "kernel");
	CakeUnit u;
	cake_compile(&u, &ss, &dl, fi, &o);
	if (u.failed != CAKE_STAGE_NONE || u.nkernels != 1) {
		if (u.nkernels > 1)
			sb_printf(&c->err, "the file holds %d kernels: name one with `kernel`", u.nkernels);
		else if (u.error[0])
			sb_printf(&c->err, "%s", u.error);
		else {
			json_t *d = diag_array(c, &ss, &dl);
			sb_puts(&c->err, "the program has errors; nothing was predicted (call `check` for the findings)");
			json_decref(d);
		}
	} else {
		StrBuf b = {0};
		char err[512] = "";
		json_t *ln = json_object_get(c->args, "lines");
		int rc = cost_report(&b, u.plans[0], arg_str(c, "shape"), arg_str(c, "target"), NULL, true, ln ? (int)json_integer_value(ln) : 0,
		                     err, sizeof err);
		if (rc)
			sb_printf(&c->err, "%s", err);
		else if ((c->result = mcp_parse_printed(b.s, b.len, &c->err)))
			ok = true;
		sb_free(&b);
	}
	cake_unit_free(&u);
out:
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static const char cost_in[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"shape\"], \"properties\": {"
	S_SOURCE ", " S_KERNEL ", "
	"\"shape\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"every dim of the kernel, e.g. "
	"M=8192,N=8192,K=8192\"}, "
	"\"target\": {\"type\": \"string\", \"description\": \"a calibrated GPU: h200 (default) or h100\"}, "
	"\"lines\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 128, \"description\": \"also rank this many "
	"statements by the work the model counts for them per tile, with its vector and tensor time apportioned "
	"(where the model thinks the time goes, line by line)\"}}}";

static const char cost_out[] =
	"{\"type\": \"object\", \"required\": [\"kernel\", \"shape\", \"cost\"], \"properties\": {"
	"\"kernel\": {\"type\": \"string\"}, \"shape\": {\"type\": \"string\"}, \"family\": " S_NSTR ", "
	"\"in_domain\": {\"type\": \"boolean\"}, \"cost\": {\"type\": \"object\"}, \"lines\": {\"type\": \"array\"}}}";

static const McpTool tools[] = {
	{"check", "Check Cake IR",
	 "Parse, type-check and verify Cake IR; return every finding (rule ID, severity, message, span with "
	 "file/line/col/byte offset/length, role, resource, barrier, pipeline, stage, phase, iteration, the "
	 "violated condition, a hint, the related span at the other end of a handoff) and machine-applicable "
	 "`fixes` (byte-offset text edits). With fix: true, also the repaired text and what remains.",
	 check_in, check_out, tool_check},
	{"format", "Format Cake IR",
	 "The canonical text of Cake IR (what `cake fmt` prints), or the syntax errors that prevent it.",
	 format_in, format_out, tool_format},
	{"build", "Build Cake IR",
	 "Derive and lower a kernel: emit 'plan' (roles, shared-memory layout, barriers, launch geometry), "
	 "'cuda' (the generated CUDA C++, default) or 'cubin-report' (compile through NVRTC and report ptxas "
	 "registers and spills per kernel; needs NVRTC). A program with errors returns ok: false and its findings.",
	 build_in, build_out, tool_build},
	{"rules", "List rules",
	 "Every rule Cake can report (front end, verifier, lowering): ID, category, severity (authority), "
	 "version and title, optionally the rationale; filter by category.",
	 rules_in, rules_out, tool_rules},
	{"explain_rule", "Explain a rule",
	 "One rule in full: its rationale and the domain it models, with a must-reject example (a kernel that "
	 "triggers it) and a must-accept example (a kernel that checks clean), each with its path and text.",
	 explain_in, explain_out, tool_explain_rule},
	{"history", "Evaluation history",
	 "Evaluations recorded in the candidate store (newest first), filtered by family, kernel, shape, "
	 "candidate, verdict, campaign or GPU.",
	 history_in, history_out, tool_history},
	{"best", "Best candidates",
	 "With family (or candidate) and shape: the fastest correct evaluation and its candidate's text. "
	 "Without a shape: the frontier, the best evaluation of every family, kernel and shape.",
	 best_in, best_out, tool_best},
	{"diff", "Diff two candidates",
	 "Two stored candidates (ids or unique prefixes; one: it and its parent): their metadata and "
	 "evaluations, and a unified diff of their texts (the shortest line diff, as `cake diff`).",
	 diff_in, diff_out, tool_diff},
	{"tactics", "List tactics",
	 "The tactics: named, parameterized rewrites of a kernel's schedule (tile sizes, stages, consumers, "
	 "persistence, swizzle, registers, ...). Given IR, also the concrete tactic specs that apply to it.",
	 tactics_in, tactics_out, tool_tactics},
	{"apply_tactic", "Apply a tactic",
	 "Apply one tactic spec (e.g. stages:5) to a kernel: the rewritten program (canonical Cake IR, "
	 "re-verified), a unified diff from the input's canonical form, or why it does not apply.",
	 apply_in, apply_out, tool_apply_tactic},
	{"evaluate", "Evaluate a candidate",
	 "The search loop's unit of work (`cake eval`): canonicalise and hash the IR, serve a verdict the store "
	 "already has for this candidate, shape and harness, else verify (a rejection is recorded with its "
	 "findings, no GPU spent), rank, and run it on the GPU through the isolated runner (correctness against "
	 "its family's float64 oracle, then timing), recording the verdict, times, GPU and harness versions. "
	 "dry_run: true stops before the GPU run (works on a machine without one).",
	 evaluate_in, evaluate_out, tool_evaluate},
	{"run", "Run on the GPU",
	 "Run the kernel on the GPU now at the shape (never served from the store), isolated in a child process "
	 "with a watchdog (a hang or fault is a verdict), checked against its family's oracle and timed; the "
	 "result is recorded in the store like `evaluate`. Without a GPU this is a tool error.",
	 run_in, evaluate_out, tool_run},
	{"cost", "Predict the time",
	 "The cost model's prediction for one kernel at one shape on a calibrated GPU (h200 default, h100): the "
	 "time and its parts (tensor, memory, pipeline fill, exposed latency, sync and epilogue, waves and "
	 "occupancy), the bottleneck class and one or two suggestions tied to IR constructs, with numbers. It "
	 "predicts, it never rejects; an uncalibrated or unknown GPU is a tool error naming the calibrated ones.",
	 cost_in, cost_out, tool_cost},
};

const McpTool *mcp_tool_table(int *n)
{
	*n = (int)NELEM(tools);
	return tools;
}
