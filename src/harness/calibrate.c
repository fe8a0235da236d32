/*
 * calibrate.c — measurements in, a fitted cost-model version out (calibrate.h).
 *
 * Rows are gathered first (store or file), then each distinct (candidate,
 * kernel) is compiled once through the pipeline and every row of it is
 * bound and counted. Count strings that point into a compilation's arena
 * (pipeline and role names) are cleared before the unit is released: the
 * fit needs only numbers.
 */
#include "calibrate.h"
#include "eval.h"
#include "rank.h"
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>
#include <xxhash.h>

typedef struct Row {
	char *cand, *kernel, *shape, *family, *gpu, *source;
	double median;
	const char *text;           /* resolved candidate text (arena) */
} Row;

typedef struct Known {          /* a .cake file under the source directories */
	char id[STORE_ID_LEN + 1];
	char *text;                 /* canonical */
} Known;

typedef struct Ctx2 {
	Arena *a;
	Row *rows;
	int nrows, caprows;
	Known *known;
	int nknown, capknown;
	bool indexed;
	SourceSet ss;
} Ctx2;

CalRequest cal_request(void)
{
	CalRequest r;
	memset(&r, 0, sizeof r);
	r.target = "h200";
	r.holdout = 3;
	r.lambda = 0.5;
	r.rank_weight = 3;
	return r;
}

static char *adup(Arena *a, const char *s)
{
	return s ? arena_strdup(a, s) : NULL;
}

static void skip(CalReport *rep, const Row *r, const char *why)
{
	rep->skipped++;
	sb_printf(&rep->skips, "%.12s %s %s: %s\n", r->cand ? r->cand : "?", r->kernel ? r->kernel : "?",
	          r->shape ? r->shape : "?", why);
}

static Row *add_row(Ctx2 *x)
{
	if (x->nrows == x->caprows) {
		x->caprows = x->caprows ? 2 * x->caprows : 64;
		x->rows = xrealloc(x->rows, (size_t)x->caprows * sizeof *x->rows);
	}
	Row *r = &x->rows[x->nrows++];
	memset(r, 0, sizeof *r);
	return r;
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void add_known(Ctx2 *x, const char *id, const char *text)
{
	if (x->nknown == x->capknown) {
		x->capknown = x->capknown ? 2 * x->capknown : 64;
		x->known = xrealloc(x->known, (size_t)x->capknown * sizeof *x->known);
	}
	Known *k = &x->known[x->nknown++];
	snprintf(k->id, sizeof k->id, "%s", id);
	k->text = arena_strdup(x->a, text);
}

/* Read a cake-candidate/1 file (id and canonical text per line); a missing
 * file is not an error when `optional`. */
static bool read_candidates(Ctx2 *x, const char *path, bool optional, char *err, size_t n)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		if (optional)
			return true;
		snprintf(err, n, "cannot read '%s': %s", path, strerror(errno));
		return false;
	}
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(l, 0, NULL);
		const char *fmt = o ? jstr(o, "format") : NULL, *id = o ? jstr(o, "id") : NULL, *t = o ? jstr(o, "text") : NULL;
		if (fmt && !strcmp(fmt, "cake-candidate/1") && id && t && strlen(id) == STORE_ID_LEN) {
			/* only a text that hashes to its id is taken */
			char h[STORE_ID_LEN + 1];
			store_hash_text(t, h);
			if (!strcmp(h, id))
				add_known(x, id, t);
		}
		json_decref(o);
	}
	free(text);
	return true;
}

static bool read_data(Ctx2 *x, const char *path, CalReport *rep, char *err, size_t n)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		snprintf(err, n, "cannot read '%s': %s", path, strerror(errno));
		return false;
	}
	int line = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		while (*l == ' ' || *l == '\t' || *l == '\r')
			l++;
		if (!*l)
			continue;
		rep->rows++;
		json_error_t je;
		json_t *o = json_loads(l, 0, &je);
		Row tmp = {0};
		char why[160];
		if (!o || !json_is_object(o)) {
			snprintf(why, sizeof why, "line %d is not a JSON object", line);
			skip(rep, &tmp, why);
			json_decref(o);
			continue;
		}
		const char *fmt = jstr(o, "format"), *verdict = jstr(o, "verdict");
		json_t *med = json_object_get(o, "median_us");
		if (!fmt || strcmp(fmt, "cake-measure/1")) {
			snprintf(why, sizeof why, "line %d: \"format\" is not \"cake-measure/1\"", line);
			skip(rep, &tmp, why);
		} else if (!jstr(o, "candidate") || !jstr(o, "kernel") || !json_is_string(json_object_get(o, "shape"))) {
			snprintf(why, sizeof why, "line %d: needs \"candidate\", \"kernel\" and \"shape\"", line);
			skip(rep, &tmp, why);
		} else if (!verdict || strcmp(verdict, "ok") || !json_is_number(med) || !(json_number_value(med) > 0)) {
			Row r = {.cand = (char *)jstr(o, "candidate"), .kernel = (char *)jstr(o, "kernel"),
			         .shape = (char *)jstr(o, "shape")};
			skip(&*rep, &r, "not an ok evaluation with a measured median");
		} else {
			Row *r = add_row(x);
			r->cand = adup(x->a, jstr(o, "candidate"));
			r->kernel = adup(x->a, jstr(o, "kernel"));
			r->shape = adup(x->a, jstr(o, "shape"));
			r->family = adup(x->a, jstr(o, "family"));
			r->gpu = adup(x->a, jstr(o, "gpu"));
			r->source = adup(x->a, jstr(o, "source"));
			r->median = json_number_value(med);
		}
		json_decref(o);
	}
	free(text);
	return true;
}

static bool read_store(Ctx2 *x, const char *path, const char *family, CalReport *rep, char *err, size_t n)
{
	StrBuf e = {0};
	Store *st = NULL;
	if (store_open(path, 0, &st, &e) != STORE_OK) {
		snprintf(err, n, "%s", sb_str(&e));
		sb_free(&e);
		return false;
	}
	sb_free(&e);
	StoreFilter f = {.family = family, .verdict = "ok"};
	StoreEval *ev;
	int ne = 0;
	if (store_list_evals(st, &f, x->a, &ev, &ne) != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		store_close(st);
		return false;
	}
	for (int i = ne - 1; i >= 0; i--) {       /* oldest first */
		rep->rows++;
		Row tmp = {.cand = (char *)ev[i].cand, .kernel = (char *)ev[i].kernel, .shape = (char *)ev[i].shape};
		if (!(ev[i].median_us > 0)) {
			skip(rep, &tmp, "not timed");
			continue;
		}
		StoreCandidate c;
		if (store_get_candidate(st, ev[i].cand, x->a, &c) != STORE_OK) {
			skip(rep, &tmp, "the candidate is not in the store");
			continue;
		}
		Row *r = add_row(x);
		*r = tmp;
		r->family = (char *)ev[i].family;
		r->gpu = (char *)ev[i].gpu;
		r->median = ev[i].median_us;
		r->text = c.text;
	}
	store_close(st);
	return true;
}

static void index_dir(Ctx2 *x, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d || depth > 8) {
		if (d)
			closedir(d);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%.3800s/%.255s", dir, e->d_name);
		struct stat sb;
		if (stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			index_dir(x, path, depth + 1);
			continue;
		}
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".cake"))
			continue;
		size_t len;
		char *text = read_file(path, &len);
		if (!text)
			continue;
		char *canon = eval_canonical(&x->ss, path, text, len);
		free(text);
		char id[STORE_ID_LEN + 1];
		store_hash_text(canon, id);
		add_known(x, id, canon);
		free(canon);
	}
	closedir(d);
}

/* The text of row r, or NULL with why. */
static const char *resolve(Ctx2 *x, const CalRequest *req, Row *r, char *why, size_t n)
{
	if (r->text)
		return r->text;
	if (!x->indexed) {
		x->indexed = true;
		if (req->nsources == 0) {
			index_dir(x, "kernels", 0);
			index_dir(x, "tests/corpus/good", 0);
		}
		for (int i = 0; i < req->nsources; i++)
			index_dir(x, req->sources[i], 0);
	}
	for (int i = 0; i < x->nknown; i++)
		if (!strcmp(x->known[i].id, r->cand))
			return r->text = x->known[i].text;
	if (r->source) {
		size_t len;
		char *text = read_file(r->source, &len);
		if (!text) {
			snprintf(why, n, "candidate not found in the source directories, and its source '%s' cannot be read",
			         r->source);
			return NULL;
		}
		char *canon = eval_canonical(&x->ss, r->source, text, len);
		free(text);
		char id[STORE_ID_LEN + 1];
		store_hash_text(canon, id);
		if (strcmp(id, r->cand)) {
			snprintf(why, n, "its source '%s' changed since it was measured (id %.12s, now %.12s)", r->source, r->cand,
			         id);
			free(canon);
			return NULL;
		}
		r->text = arena_strdup(x->a, canon);
		free(canon);
		return r->text;
	}
	snprintf(why, n, "candidate not found in the source directories (give --sources DIR)");
	return NULL;
}

static bool gpu_matches(const char *gpu, const GpuInfo *g)
{
	if (!gpu || !gpu[0])
		return true;
	return strcasestr(gpu, g->name) != NULL;
}

static double train_error(CostSample *s, int n, const GpuInfo *g, const CostModel *m)
{
	double sum = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (s[i].heldout)
			continue;
		double d = log(cost_predict_us(&s[i].c, &s[i].w, g, m)) - log(s[i].meas_us);
		sum += d * d;
		k++;
	}
	return k ? sqrt(sum / k) : NAN;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool cal_run(const CalRequest *req, CalReport *rep, char *err, size_t n)
{
	memset(rep, 0, sizeof *rep);
	Arena *a = xcalloc(1, sizeof *a);
	arena_init(a);
	Ctx2 x;
	memset(&x, 0, sizeof x);
	x.a = a;
	bool ok = false;
	rep->gpu = cost_target(req->target ? req->target : "h200", err, n);
	if (!rep->gpu)
		goto out;
	if ((req->store != NULL) == (req->ndata > 0)) {
		snprintf(err, n, "give one of --store PATH and --data FILE.jsonl");
		goto out;
	}
	if (req->store) {
		snprintf(rep->source, sizeof rep->source, "%s", req->store);
		if (!read_store(&x, req->store, req->family, rep, err, n))
			goto out;
	}
	for (int i = 0; i < req->ndata; i++) {
		size_t at = strlen(rep->source);
		snprintf(rep->source + at, sizeof rep->source - at, "%s%s", i ? ", " : "", req->data[i]);
		if (!read_data(&x, req->data[i], rep, err, n))
			goto out;
		size_t l = strlen(req->data[i]);
		char *side = xmalloc(l + 32);
		if (l > 6 && !strcmp(req->data[i] + l - 6, ".jsonl"))
			snprintf(side, l + 32, "%.*s.candidates.jsonl", (int)(l - 6), req->data[i]);
		else
			snprintf(side, l + 32, "%s.candidates.jsonl", req->data[i]);
		bool ok = read_candidates(&x, side, true, err, n);
		free(side);
		if (!ok)
			goto out;
	}
	for (int i = 0; i < req->ncandidates; i++)
		if (!read_candidates(&x, req->candidates[i], false, err, n))
			goto out;

	rep->samples = xcalloc((size_t)x.nrows + 1, sizeof *rep->samples);
	rep->labels = xcalloc((size_t)x.nrows + 1, sizeof *rep->labels);
	/* compile each distinct (text, kernel) once */
	bool *done = xcalloc((size_t)x.nrows + 1, sizeof *done);
	for (int i = 0; i < x.nrows; i++) {
		if (done[i])
			continue;
		Row *r = &x.rows[i];
		char why[512];
		if (!gpu_matches(r->gpu, rep->gpu)) {
			snprintf(why, sizeof why, "measured on '%s', not %s", r->gpu, rep->gpu->name);
			skip(rep, r, why);
			done[i] = true;
			continue;
		}
		const char *text = resolve(&x, req, r, why, sizeof why);
		if (!text) {
			skip(rep, r, why);
			done[i] = true;
			continue;
		}
		DiagList dl = {0};
		CakeOptions o = cake_options(CAKE_DERIVE);
		o.kernel = r->kernel;
		CakeUnit u;
		cake_compile_text(&u, &x.ss, &dl, r->cand, text, strlen(text), &o);
		bool compiled = u.nkernels == 1 && u.failed == CAKE_STAGE_NONE && u.plans && u.plans[0];
		for (int j = i; j < x.nrows; j++) {
			Row *q = &x.rows[j];
			if (done[j] || !gpu_matches(q->gpu, rep->gpu) || strcmp(q->kernel, r->kernel))
				continue;
			const char *qt = q->text ? q->text : (!strcmp(q->cand, r->cand) ? text : NULL);
			if (!qt || strcmp(qt, text))
				continue;
			done[j] = true;
			if (!compiled) {
				skip(rep, q, u.nkernels != 1 ? "the candidate does not hold that kernel" : "it does not compile to a plan");
				continue;
			}
			const Kernel *k = u.kernels[0];
			const char *fam = k->family && k->family->name ? k->family->name : q->family ? q->family : "";
			if (req->family && strcmp(fam, req->family))
				continue;
			long long dims[LAUNCH_MAX_DIMS] = {0};
			if (k->ndims > LAUNCH_MAX_DIMS || !eval_bind_shape(k, q->shape, dims, why, sizeof why)) {
				skip(rep, q, k->ndims > LAUNCH_MAX_DIMS ? "too many dims" : why);
				continue;
			}
			const Family *f = family_of_kernel(k);
			CostSample *s = &rep->samples[rep->nsamples];
			if (!rank_work(u.plans[0], dims, f, &s->c, &s->w, why, sizeof why)) {
				skip(rep, q, why);
				continue;
			}
			s->c.pipe = s->c.loop_role = NULL;
			s->w.source = f ? f->name : "plan";
			s->meas_us = q->median;
			s->family = arena_strdup(a, fam);
			StrBuf sh = {0};
			store_shape_canon(q->shape, &sh);
			s->group = arena_printf(a, "%s|%s", fam, sb_str(&sh));
			rep->labels[rep->nsamples] = arena_printf(a, "%s %s", q->kernel, sb_str(&sh));
			sb_free(&sh);
			s->cand = q->cand;
			rep->nsamples++;
		}
		cake_unit_free(&u);
		diag_free(&dl);
	}
	free(done);
	rep->used = rep->nsamples;
	if (rep->nsamples == 0) {
		snprintf(err, n, "no usable measurement in '%s' (%d rows, %d skipped)", rep->source, rep->rows, rep->skipped);
		goto out;
	}

	/* split, fit, measure */
	CostSample *s = rep->samples;
	int ns = rep->nsamples;
	cost_split(s, ns, req->holdout > 0 ? req->holdout : 3, req->by_group);
	for (int i = 0; i < ns; i++)
		rep->heldout += s[i].heldout;
	rep->train = ns - rep->heldout;
	cost_prior(rep->gpu, &rep->prior);
	rep->fitted = rep->prior;
	rep->obj_prior = train_error(s, ns, rep->gpu, &rep->prior);
	if (rep->train > 0)
		cost_fit(s, ns, rep->gpu, &rep->prior, req->lambda, req->rank_weight, &rep->fitted);
	rep->obj_fit = train_error(s, ns, rep->gpu, &rep->fitted);

	/* the data hash: the rows fitted on, sorted */
	char **lines = xcalloc((size_t)ns + 1, sizeof *lines);
	for (int i = 0; i < ns; i++)
		lines[i] = arena_printf(a, "%s\t%s\t%.6g\n", s[i].cand, rep->labels[i], s[i].meas_us);
	qsort(lines, (size_t)ns, sizeof *lines, cmp_str);
	XXH3_state_t *hs = XXH3_createState();
	XXH3_64bits_reset(hs);
	for (int i = 0; i < ns; i++)
		XXH3_64bits_update(hs, lines[i], strlen(lines[i]));
	snprintf(rep->fitted.data_hash, sizeof rep->fitted.data_hash, "xxh3-64:%016llx",
	         (unsigned long long)XXH3_64bits_digest(hs));
	XXH3_freeState(hs);
	free(lines);
	snprintf(rep->fitted.version, sizeof rep->fitted.version, "%s", req->version ? req->version : "");
	if (!rep->fitted.version[0])
		snprintf(rep->fitted.version, sizeof rep->fitted.version, "%s-fit", rep->gpu->cost_model);
	snprintf(rep->fitted.target, sizeof rep->fitted.target, "%s", rep->gpu->name);
	/* the sources by base name, as many as fit the one-line record; the rest counted, never cut */
	char names[160] = "";
	int nsrc = req->store ? 1 : req->ndata, listed = 0;
	for (int i = 0; i < nsrc; i++) {
		const char *p = req->store ? req->store : req->data[i], *b = strrchr(p, '/');
		const char *nm = b ? b + 1 : p;
		size_t at = strlen(names), need = strlen(nm) + (i ? 2 : 0), tail = i + 1 < nsrc ? 20 : 0;
		if (at + need + tail >= sizeof names)
			break;
		snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", nm);
		listed++;
	}
	if (listed < nsrc) {
		size_t at = strlen(names);
		snprintf(names + at, sizeof names - at, "%sand %d more", listed ? ", " : "", nsrc - listed);
	}
	snprintf(rep->fitted.fitted_on, sizeof rep->fitted.fitted_on, "%d measurements from %s: %d fitted, %d held out "
	         "(1 in %d %s)", ns, names, rep->train, rep->heldout, req->holdout > 0 ? req->holdout : 3,
	         req->by_group ? "(family, shape) groups" : "candidates");
	rep->fitted.rows = ns;
	rep->fitted.train = rep->train;
	rep->fitted.heldout = rep->heldout;

	for (int i = 0; i < ns && rep->nfam < 32; i++) {
		bool seen = false;
		for (int j = 0; j < rep->nfam && !seen; j++)
			seen = !strcmp(rep->fam[j].name, s[i].family);
		if (!seen)
			snprintf(rep->fam[rep->nfam++].name, sizeof rep->fam[0].name, "%s", s[i].family);
	}
	for (int j = 0; j < rep->nfam; j++) {
		CalFamily *f = &rep->fam[j];
		cost_metrics(s, ns, rep->gpu, &rep->prior, true, f->name, &f->held_prior);
		cost_metrics(s, ns, rep->gpu, &rep->fitted, false, f->name, &f->train);
		cost_metrics(s, ns, rep->gpu, &rep->fitted, true, f->name, &f->held);
	}
	cost_metrics(s, ns, rep->gpu, &rep->prior, true, NULL, &rep->all_held_prior);
	cost_metrics(s, ns, rep->gpu, &rep->fitted, true, NULL, &rep->all_held);
	ok = true;
out:
	free(x.rows);
	free(x.known);
	src_free(&x.ss);
	if (!ok) {
		free(rep->samples);
		free(rep->labels);
		rep->samples = NULL;
		rep->labels = NULL;
		arena_free(a);
		free(a);
		sb_free(&rep->skips);
	} else {
		rep->arena = a;
	}
	return ok;
}

static void metrics_text(StrBuf *b, const CostMetrics *m)
{
	if (m->n == 0) {
		sb_puts(b, "no samples");
		return;
	}
	sb_printf(b, "%d sample%s, %d group%s of 2+, %d pair%s: tau ", m->n, m->n == 1 ? "" : "s", m->groups,
	          m->groups == 1 ? "" : "s", m->pairs, m->pairs == 1 ? "" : "s");
	if (isnan(m->tau))
		sb_puts(b, "n/a");
	else
		sb_printf(b, "%.3f", m->tau);   /* three digits: the bar is 0.6, and 0.597 must not print as 0.60 */
	if (!isnan(m->tau3))
		sb_printf(b, " (%.3f over the %d pairs >= 3%% apart)", m->tau3, m->pairs3);
	sb_printf(b, ", median error %.1f%%, top-3 ", 100 * m->mape);
	if (m->top3_groups)
		sb_printf(b, "%d/%d (%d trivial)", m->top3_hits, m->top3_groups, m->top3_trivial);
	else
		sb_puts(b, "n/a");
}

static void metrics_json(StrBuf *b, const CostMetrics *m)
{
	sb_printf(b, "{\"n\":%d,\"groups\":%d,\"pairs\":%d,\"tau\":", m->n, m->groups, m->pairs);
	if (isnan(m->tau))
		sb_puts(b, "null");
	else
		sb_printf(b, "%.4f", m->tau);
	sb_printf(b, ",\"pairs3\":%d,\"tau3\":", m->pairs3);
	if (isnan(m->tau3))
		sb_puts(b, "null");
	else
		sb_printf(b, "%.4f", m->tau3);
	sb_puts(b, ",\"mape\":");
	if (isnan(m->mape))
		sb_puts(b, "null");
	else
		sb_printf(b, "%.4f", m->mape);
	sb_printf(b, ",\"top3_hits\":%d,\"top3_groups\":%d,\"top3_trivial\":%d}", m->top3_hits, m->top3_groups,
	          m->top3_trivial);
}

void cal_print(StrBuf *b, const CalReport *r, bool json)
{
	if (json) {
		sb_puts(b, "{\"schema\":\"cake-calibrate/1\",\"target\":");
		sb_json_str(b, r->gpu ? r->gpu->name : "?");
		sb_puts(b, ",\"source\":");
		sb_json_str(b, r->source);
		sb_printf(b, ",\"rows\":%d,\"used\":%d,\"train\":%d,\"heldout\":%d,\"skipped\":%d", r->rows, r->used, r->train,
		          r->heldout, r->skipped);
		sb_puts(b, ",\"version\":");
		sb_json_str(b, r->fitted.version);
		sb_puts(b, ",\"data_hash\":");
		sb_json_str(b, r->fitted.data_hash);
		sb_puts(b, ",\"coefficients\":{");
		for (int i = 0; i < CC_NCOEF; i++)
			sb_printf(b, "%s\"%s\":{\"prior\":%.6g,\"fitted\":%.6g}", i ? "," : "", cost_coef_name(i), r->prior.c[i],
			          r->fitted.c[i]);
		sb_printf(b, "},\"train_rms_log_error\":{\"prior\":%.6g,\"fitted\":%.6g}", r->obj_prior, r->obj_fit);
		sb_puts(b, ",\"heldout\":");
		metrics_json(b, &r->all_held);
		sb_puts(b, ",\"heldout_prior\":");
		metrics_json(b, &r->all_held_prior);
		sb_puts(b, ",\"families\":[");
		for (int j = 0; j < r->nfam; j++) {
			sb_puts(b, j ? ",{\"family\":" : "{\"family\":");
			sb_json_str(b, r->fam[j].name);
			sb_puts(b, ",\"heldout\":");
			metrics_json(b, &r->fam[j].held);
			sb_puts(b, ",\"heldout_prior\":");
			metrics_json(b, &r->fam[j].held_prior);
			sb_puts(b, ",\"fit_set\":");
			metrics_json(b, &r->fam[j].train);
			sb_puts(b, "}");
		}
		sb_puts(b, "],\"samples\":[");
		for (int i = 0; i < r->nsamples; i++) {
			sb_puts(b, i ? ",{\"label\":" : "{\"label\":");
			sb_json_str(b, r->labels[i]);
			sb_puts(b, ",\"candidate\":");
			sb_json_str(b, r->samples[i].cand ? r->samples[i].cand : "");
			sb_puts(b, ",\"family\":");
			sb_json_str(b, r->samples[i].family);
			sb_printf(b, ",\"heldout\":%s,\"measured_us\":%.6g,\"predicted_us\":%.6g}",
			          r->samples[i].heldout ? "true" : "false", r->samples[i].meas_us, r->samples[i].pred_us);
		}
		sb_puts(b, "]}\n");
		return;
	}
	sb_printf(b, "calibrate %s: %d measurements used of %d rows in %s (%d fitted, %d held out), data %s\n",
	          r->gpu ? r->gpu->name : "?", r->used, r->rows, r->source, r->train, r->heldout, r->fitted.data_hash);
	if (r->skipped) {
		sb_printf(b, "skipped %d:\n", r->skipped);
		const char *s = sb_str((StrBuf *)&r->skips);
		for (const char *l = s; *l;) {
			const char *e = strchr(l, '\n');
			int len = e ? (int)(e - l) : (int)strlen(l);
			sb_printf(b, "  %.*s\n", len, l);
			l += len + (e ? 1 : 0);
		}
	}
	sb_puts(b, "coefficients (prior -> fitted):\n");
	for (int i = 0; i < CC_NCOEF; i++)
		sb_printf(b, "  %-11s %8.4g -> %-8.4g %s\n", cost_coef_name(i), r->prior.c[i], r->fitted.c[i], cost_coef_doc(i));
	sb_printf(b, "fit set: rms log error %.4f -> %.4f\n", r->obj_prior, r->obj_fit);
	sb_puts(b, "held out (fitted model; the prior in brackets):\n");
	for (int j = 0; j < r->nfam; j++) {
		sb_printf(b, "  %-18s ", r->fam[j].name[0] ? r->fam[j].name : "(no family)");
		metrics_text(b, &r->fam[j].held);
		if (r->fam[j].held.n) {
			sb_puts(b, "  [");
			metrics_text(b, &r->fam[j].held_prior);
			sb_puts(b, "]");
		}
		sb_puts(b, "\n");
	}
	sb_printf(b, "  %-18s ", "all");
	metrics_text(b, &r->all_held);
	sb_puts(b, "\nfit set (in-sample, not a quality measure):\n");
	for (int j = 0; j < r->nfam; j++) {
		sb_printf(b, "  %-18s ", r->fam[j].name[0] ? r->fam[j].name : "(no family)");
		metrics_text(b, &r->fam[j].train);
		sb_puts(b, "\n");
	}
	sb_puts(b, "samples (measured / predicted us):\n");
	for (int i = 0; i < r->nsamples; i++)
		sb_printf(b, "  %s %-44s %9.1f %9.1f\n", r->samples[i].heldout ? "held" : "fit ", r->labels[i],
		          r->samples[i].meas_us, r->samples[i].pred_us);
}

void cal_report_free(CalReport *rep)
{
	free(rep->samples);
	free(rep->labels);
	sb_free(&rep->skips);
	if (rep->arena) {
		arena_free(rep->arena);
		free(rep->arena);
	}
	memset(rep, 0, sizeof *rep);
}
