/*
 * import.c — `cake import`: measurement sets back into a store.
 *
 *   cake import FILE.jsonl... [--candidates FILE.jsonl]... [--store PATH]
 *
 * The inverse of `cake export`. Store files are never committed; what is
 * committed are cake-measure/1 files (one evaluation per line, docs/STORE.md)
 * with, beside each, the cake-candidate/1 file of the texts it measured
 * (FILE.candidates.jsonl, as data/measure/ keeps them; more with
 * --candidates). Importing them rebuilds a store that `cake log`, `cake
 * mine`, `cake gate --store`, `cake report` and `cake calibrate` read as if
 * the campaigns had run into it: the GPU verdicts, times, harness versions,
 * campaigns and timestamps are the recorded ones, never re-judged.
 *
 * Everything is checked before anything is written: every line must parse
 * and name its format, every measurement must have a verdict the store
 * knows, a kernel, a shape and a compiler version, and its candidate's text
 * must be found and hash to the candidate id (xxh3-128 of the canonical
 * text). One bad line refuses the whole import (exit 1, the file and line
 * named), so a store is never left holding half a set. Then the candidates
 * are added (an existing text keeps its first origin and parent) and each
 * evaluation is added unless the store already holds the same measurement:
 * the same (candidate, kernel, shape, harness, time_ms), the identity of a
 * measurement across stores. Importing twice therefore adds nothing the
 * second time. Findings of rejected evaluations are not part of the export,
 * so none are imported.
 *
 * Exit status: 0 imported (or nothing new), 1 a file's content was refused,
 * 2 bad usage, an unreadable file or a store that cannot be opened or written.
 */
#include "cmd.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FILES = 32 };

typedef struct Text {
	char id[STORE_ID_LEN + 1];
	const char *text, *family, *origin, *parent;
} Text;

typedef struct Imp {
	Arena a;
	Text *t;
	int nt, tcap;
	StoreEval *e;
	int ne, ecap;
	char err[1024];
} Imp;

static const char *adup(Imp *x, json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? arena_strdup(&x->a, json_string_value(v)) : NULL;
}

static double num_or_nan(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const Text *find_text(const Imp *x, const char *id)
{
	for (int i = 0; i < x->nt; i++)
		if (!strcmp(x->t[i].id, id))
			return &x->t[i];
	return NULL;
}

/* Read a whole file into the arena; NULL with x->err set (or, for an
 * optional file that does not exist, *absent set and no error). */
static char *slurp(Imp *x, const char *path, bool optional, bool *absent)
{
	size_t n = 0;
	char *t = read_file(path, &n);
	if (!t) {
		if (optional && errno == ENOENT)
			*absent = true;
		else
			snprintf(x->err, sizeof x->err, "cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	char *s = arena_strdup(&x->a, t);
	free(t);
	return s;
}

/* Walk the lines of text; calls fn(x, path, line number, object). Returns 0,
 * or 1 with x->err naming the file and line of a line that is not a JSON
 * object (blank lines are skipped). */
static int each_line(Imp *x, const char *path, char *text, int (*fn)(Imp *, const char *, int, json_t *))
{
	int ln = 0;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		ln++;
		if (strspn(p, " \t\r") != strlen(p)) {
			json_error_t je;
			json_t *o = json_loads(p, 0, &je);
			if (!json_is_object(o)) {
				snprintf(x->err, sizeof x->err, "%s:%d: not a JSON object (%s)", path, ln, o ? "another JSON value" : je.text);
				json_decref(o);
				return 1;
			}
			int r = fn(x, path, ln, o);
			json_decref(o);
			if (r)
				return r;
		}
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* Whether line ln of path names format want; else x->err says what it names. */
static bool has_format(Imp *x, json_t *o, const char *want, const char *path, int ln)
{
	const char *fmt = json_string_value(json_object_get(o, "format"));
	if (fmt && !strcmp(fmt, want))
		return true;
	snprintf(x->err, sizeof x->err, "%s:%d: not a %s line (format %s%s%s)", path, ln, want, fmt ? "'" : "",
	         fmt ? fmt : "missing", fmt ? "'" : "");
	return false;
}

static int add_text(Imp *x, const char *path, int ln, json_t *o)
{
	if (!has_format(x, o, "cake-candidate/1", path, ln))
		return 1;
	const char *id = adup(x, o, "id"), *text = adup(x, o, "text");
	if (!id || !text) {
		snprintf(x->err, sizeof x->err, "%s:%d: a cake-candidate/1 line needs \"id\" and \"text\"", path, ln);
		return 1;
	}
	char h[STORE_ID_LEN + 1];
	store_hash_text(text, h);
	if (strcmp(h, id)) {
		snprintf(x->err, sizeof x->err, "%s:%d: the text of candidate %s hashes to %s: the file was edited or damaged",
		         path, ln, id, h);
		return 1;
	}
	if (find_text(x, id))
		return 0;
	if (x->nt == x->tcap) {
		x->tcap = x->tcap ? 2 * x->tcap : 64;
		x->t = xrealloc(x->t, (size_t)x->tcap * sizeof *x->t);
	}
	Text *t = &x->t[x->nt++];
	memcpy(t->id, id, sizeof t->id);
	t->text = text;
	t->family = adup(x, o, "family");
	t->origin = adup(x, o, "origin");
	t->parent = adup(x, o, "parent");
	if (!t->origin)
		t->origin = "human";
	return 0;
}

static int add_measure(Imp *x, const char *path, int ln, json_t *o)
{
	if (!has_format(x, o, "cake-measure/1", path, ln))
		return 1;
	StoreEval e;
	store_eval_init(&e);
	e.cand = adup(x, o, "candidate");
	e.kernel = adup(x, o, "kernel");
	e.shape = adup(x, o, "shape");
	const char *v = json_string_value(json_object_get(o, "verdict"));
	e.verdict = v ? store_verdict_parse(v) : STORE_V_NONE;
	e.harness.compiler = adup(x, o, "compiler");
	e.harness.verifier = adup(x, o, "verifier");
	e.harness.cost_model = adup(x, o, "cost_model");
	e.harness.tactics = adup(x, o, "tactics");
	const char *miss = !e.cand ? "candidate" : !e.kernel ? "kernel" : !e.shape ? "shape" : !v ? "verdict"
	                   : !e.harness.compiler ? "compiler" : NULL;
	if (miss) {
		snprintf(x->err, sizeof x->err, "%s:%d: the measurement has no \"%s\"", path, ln, miss);
		return 1;
	}
	if (e.verdict == STORE_V_NONE) {
		snprintf(x->err, sizeof x->err, "%s:%d: unknown verdict '%s' (docs/STORE.md lists the verdicts)", path, ln, v);
		return 1;
	}
	json_t *s = json_object_get(o, "seed"), *t = json_object_get(o, "time_ms");
	e.seed = json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0;
	e.time_ms = json_is_integer(t) ? json_integer_value(t) : 0;
	if (e.time_ms <= 0) {
		snprintf(x->err, sizeof x->err, "%s:%d: the measurement has no \"time_ms\" (when it was made)", path, ln);
		return 1;
	}
	e.target = adup(x, o, "target");
	e.gpu = adup(x, o, "gpu");
	e.driver = adup(x, o, "driver");
	e.message = adup(x, o, "message");
	e.campaign = adup(x, o, "campaign");
	e.worker = adup(x, o, "worker");
	e.predicted_us = num_or_nan(o, "predicted_us");
	e.median_us = num_or_nan(o, "median_us");
	e.min_us = num_or_nan(o, "min_us");
	e.max_us = num_or_nan(o, "max_us");
	e.rel_err = num_or_nan(o, "rel_err");
	e.gpu_s = num_or_nan(o, "gpu_s");
	if (isnan(e.gpu_s))
		e.gpu_s = 0;
	if (x->ne == x->ecap) {
		x->ecap = x->ecap ? 2 * x->ecap : 256;
		x->e = xrealloc(x->e, (size_t)x->ecap * sizeof *x->e);
	}
	x->e[x->ne++] = e;
	return 0;
}

static int usage(const char *fmt, const char *arg)
{
	return cmd_usage_error("import", fmt, arg);
}

int cmd_import(int argc, char **argv)
{
	const char *files[MAX_FILES], *cfiles[MAX_FILES], *spath = NULL;
	int nf = 0, ncf = 0;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--candidates", &missing))) {
			if (ncf == MAX_FILES)
				return usage("at most 32 --candidates files (got '%s' past them)", v);
			cfiles[ncf++] = v;
		} else if (missing)
			return usage("option '%s' needs a value", argv[i]);
		else if (argv[i][0] == '-' && argv[i][1])
			return usage("unknown option '%s'", argv[i]);
		else if (nf == MAX_FILES)
			return usage("at most 32 measurement files (got '%s' past them)", argv[i]);
		else
			files[nf++] = argv[i];
	}
	if (!nf)
		return usage("%sname the cake-measure/1 files to import (cake export writes them)", "");
	Imp x;
	memset(&x, 0, sizeof x);
	arena_init(&x.a);
	int rc = 0;
	/* 1. read and check everything */
	for (int i = 0; i < ncf && !rc; i++) {
		bool absent = false;
		char *t = slurp(&x, cfiles[i], false, &absent);
		rc = !t ? 2 : each_line(&x, cfiles[i], t, add_text);
	}
	for (int i = 0; i < nf && !rc; i++) {
		const char *side = files[i];
		size_t n = strlen(side);
		if (n > 6 && !strcmp(side + n - 6, ".jsonl"))
			side = arena_printf(&x.a, "%.*s.candidates.jsonl", (int)(n - 6), files[i]);
		else
			side = arena_printf(&x.a, "%s.candidates.jsonl", files[i]);
		bool absent = false;
		char *t = slurp(&x, side, true, &absent);
		if (t)
			rc = each_line(&x, side, t, add_text);
		else if (!absent)
			rc = 2;
		if (rc)
			break;
		absent = false;
		char *m = slurp(&x, files[i], false, &absent);
		rc = !m ? 2 : each_line(&x, files[i], m, add_measure);
	}
	for (int i = 0; i < x.ne && !rc; i++)
		if (!find_text(&x, x.e[i].cand)) {
			snprintf(x.err, sizeof x.err, "no text for candidate %s (kernel %s at %s): give the cake-candidate/1 file "
			         "with --candidates, or keep it beside the measurements as FILE.candidates.jsonl",
			         x.e[i].cand, x.e[i].kernel, x.e[i].shape);
			rc = 1;
		}
	if (rc) {
		fprintf(stderr, "cake import: %s; nothing was imported\n", x.err);
		goto out;
	}
	/* 2. write */
	Store *st = NULL;
	StrBuf err = {0};
	if (store_open(spath ? spath : STORE_DEFAULT_PATH, STORE_CREATE, &st, &err) != STORE_OK) {
		fprintf(stderr, "cake import: %s\n", sb_str(&err));
		sb_free(&err);
		rc = 2;
		goto out;
	}
	sb_free(&err);
	int newc = 0, newe = 0, dup = 0;
	for (int i = 0; i < x.nt && !rc; i++) {
		bool used = false;
		for (int j = 0; j < x.ne && !used; j++)
			used = !strcmp(x.e[j].cand, x.t[i].id);
		if (!used)
			continue;
		StoreCandidate c = {.text = x.t[i].text, .family = x.t[i].family, .parent = x.t[i].parent,
		                    .origin = x.t[i].origin};
		bool ins = false;
		StoreStatus s = store_add_candidate(st, &c, NULL, &ins);
		if (s != STORE_OK) {
			fprintf(stderr, "cake import: candidate %s: %s\n", x.t[i].id, store_errmsg(st));
			rc = 2;
		}
		newc += ins;
	}
	for (int i = 0; i < x.ne && !rc; i++) {
		const StoreEval *e = &x.e[i];
		StrBuf key = {0};
		bool seen = false;
		if (store_harness_key(&e->harness, &key) == STORE_OK) {
			StoreFilter f = {.cand = e->cand, .kernel = e->kernel, .shape = e->shape, .harness = sb_str(&key)};
			Arena a;
			arena_init(&a);
			StoreEval *have;
			int nh = 0;
			StoreStatus s = store_list_evals(st, &f, &a, &have, &nh);
			for (int k = 0; s == STORE_OK && k < nh && !seen; k++)
				seen = have[k].time_ms == e->time_ms;
			arena_free(&a);
		}
		sb_free(&key);
		if (seen) {
			dup++;
			continue;
		}
		StoreStatus s = store_add_eval(st, e, NULL, NULL, NULL);
		if (s != STORE_OK) {
			fprintf(stderr, "cake import: the measurement of %s (%s at %s): %s\n", e->cand, e->kernel, e->shape,
			        store_errmsg(st));
			rc = 2;
		} else
			newe++;
	}
	if (!rc)
		printf("cake import: %d measurement%s read from %d file%s: %d new evaluation%s, %d already stored; "
		       "%d new candidate%s, in %s\n", x.ne, x.ne == 1 ? "" : "s", nf, nf == 1 ? "" : "s", newe,
		       newe == 1 ? "" : "s", dup, newc, newc == 1 ? "" : "s", store_path(st));
	store_close(st);
out:
	free(x.t);
	free(x.e);
	arena_free(&x.a);
	return rc;
}
