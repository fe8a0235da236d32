/*
 * evolve.c — the inner loop (see evolve.h).
 *
 * State. Everything the loop decides from lives in the store: the campaign's
 * evaluations give each candidate its predicted and measured time per shape
 * and whether it failed. The in-memory table (Cand) is rebuilt from the store
 * at the start of every generation, so a killed run, a rerun with the same
 * arguments and a second process on the same campaign all see the same
 * frontier. Only "this process already expanded that candidate" is local,
 * and so is what the store served: an evaluation already judged (the same
 * candidate, shape and harness, recorded by another campaign) is not
 * recorded again, so the campaign's own rows do not hold it; the process
 * keeps the served results and puts them back into every rebuilt table (a
 * second campaign from the same seed would otherwise lose its seed after
 * the first generation and stop with nothing expanded).
 *
 * Scores. A candidate's score is the geometric mean of its times over the
 * shapes: measured medians on a GPU, predicted times in a dry run. Lower is
 * better; speedups are the best seed's score over the best candidate's.
 *
 * Seeds and the campaign name. A seed is one kernel, printed alone in
 * canonical form (a file with several kernels gives several seeds), so that
 * every candidate is a one-kernel program whose id is the hash of its text.
 * Unless named, the campaign is "evolve-" + 12 hex digits of a hash over the
 * seeds, the shapes, the baseline and the mode: the same arguments name the
 * same campaign, which is how a rerun resumes.
 */
#include "evolve.h"
#include "tactics.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

typedef struct Cand {
	char id[STORE_ID_LEN + 1];
	char *text;                 /* canonical, one kernel */
	char *origin;
	char parent[STORE_ID_LEN + 1];
	double pred[EVOLVE_MAX_SHAPES], meas[EVOLVE_MAX_SHAPES];
	bool tried[EVOLVE_MAX_SHAPES];  /* a conclusive GPU verdict exists at this shape */
	bool bad;                   /* rejected, refused, or a GPU failure at some shape */
	bool seed, baseline, expanded;
} Cand;

/* An evaluation the store served (recorded by another campaign). */
typedef struct Served {
	char id[STORE_ID_LEN + 1], parent[STORE_ID_LEN + 1];
	char *text, *origin;
	int shape;
	StoreVerdict verdict;
	double pred, med;
} Served;

typedef struct Ev {
	const EvolveOptions *o;
	Cand *c;
	int n, cap;
	char campaign[64];
	char shape[EVOLVE_MAX_SHAPES][256];   /* canonical */
	char **seed_ids;
	int nseeds;
	char baseline_id[STORE_ID_LEN + 1];
	char **expanded;            /* ids this process expanded */
	int nexpanded, capexpanded;
	Served *served;             /* what the store served this process */
	int nserved, capserved;
	EvolveProgress p;
	struct timespec t0;
	const char *stop_reason;
	char err[1024];
} Ev;

EvolveOptions evolve_options(void)
{
	EvolveOptions o;
	memset(&o, 0, sizeof o);
	o.kernels_dir = "kernels";
	o.width = 3;
	o.top = 6;
	o.run = run_options();
	o.run.time = true;
	o.run.iters = 20;
	o.run.warmup = 3;
	return o;
}

static double now_s(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* ---- candidates ---- */

static Cand *find(Ev *E, const char *id)
{
	for (int i = 0; i < E->n; i++)
		if (!strcmp(E->c[i].id, id))
			return &E->c[i];
	return NULL;
}

static Cand *add(Ev *E, const char *id, const char *text, const char *origin, const char *parent)
{
	Cand *c = find(E, id);
	if (c)
		return c;
	if (E->n == E->cap) {
		E->cap = E->cap ? E->cap * 2 : 64;
		E->c = xrealloc(E->c, sizeof(Cand) * (size_t)E->cap);
	}
	c = &E->c[E->n++];
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s", id);
	c->text = xstrdup(text);
	c->origin = xstrdup(origin ? origin : "human");
	snprintf(c->parent, sizeof c->parent, "%s", parent ? parent : "");
	for (int s = 0; s < EVOLVE_MAX_SHAPES; s++)
		c->pred[s] = c->meas[s] = NAN;
	for (int i = 0; i < E->nseeds; i++)
		c->seed |= !strcmp(E->seed_ids[i], id);
	c->baseline = !strcmp(E->baseline_id, id);
	for (int i = 0; i < E->nexpanded; i++)
		c->expanded |= !strcmp(E->expanded[i], id);
	return c;
}

static void free_cands(Ev *E)
{
	for (int i = 0; i < E->n; i++) {
		free(E->c[i].text);
		free(E->c[i].origin);
	}
	E->n = 0;
}

static int shape_index(const Ev *E, const char *shape)
{
	for (int s = 0; s < E->o->nshapes; s++)
		if (!strcmp(E->shape[s], shape ? shape : ""))
			return s;
	return -1;
}

/* A verdict only a GPU run gives (a compile error is NVRTC's, before any GPU work). */
static bool gpu_verdict(StoreVerdict v)
{
	return v == STORE_V_OK || v == STORE_V_MISMATCH || v == STORE_V_HANG || v == STORE_V_FAULT ||
	       v == STORE_V_LAUNCH_ERROR;
}

/* A verdict that rejects the candidate before any GPU work. */
static bool rejection(StoreVerdict v)
{
	return v == STORE_V_REJECTED || v == STORE_V_REFUSED || v == STORE_V_COMPILE_ERROR;
}

/* What one evaluation says about its candidate at shape s. */
static void note(Cand *c, int s, StoreVerdict v, double pred, double med)
{
	if (!isnan(pred))
		c->pred[s] = pred;
	if (v == STORE_V_OK && !isnan(med))
		c->meas[s] = isnan(c->meas[s]) || med < c->meas[s] ? med : c->meas[s];
	if (gpu_verdict(v))
		c->tried[s] = true;
	if (rejection(v) || (gpu_verdict(v) && v != STORE_V_OK) || v == STORE_V_INTERNAL_ERROR)
		c->bad = true;
}

/* Rebuild the table and the counts from the store's evaluations of the campaign. */
static bool refresh(Ev *E)
{
	free_cands(E);
	Arena a;
	arena_init(&a);
	StoreFilter f = {.campaign = E->campaign};
	StoreEval *ev;
	int n = 0;
	bool ok = store_list_evals(E->o->store, &f, &a, &ev, &n) == STORE_OK;
	E->p.rejected = E->p.run = E->p.failed = 0;
	E->p.gpu_s = 0;
	for (int i = n - 1; ok && i >= 0; i--) {   /* oldest first */
		Cand *c = find(E, ev[i].cand);
		if (!c) {
			StoreCandidate sc;
			if (store_get_candidate(E->o->store, ev[i].cand, &a, &sc) != STORE_OK)
				continue;
			c = add(E, ev[i].cand, sc.text, sc.origin, sc.parent);
		}
		int s = shape_index(E, ev[i].shape);
		if (s >= 0)
			note(c, s, ev[i].verdict, ev[i].predicted_us, ev[i].median_us);
		E->p.rejected += rejection(ev[i].verdict);
		E->p.run += gpu_verdict(ev[i].verdict);
		E->p.failed += gpu_verdict(ev[i].verdict) && ev[i].verdict != STORE_V_OK;
		E->p.gpu_s += isnan(ev[i].gpu_s) ? 0 : ev[i].gpu_s;
	}
	for (int i = 0; ok && i < E->nserved; i++) {
		const Served *v = &E->served[i];
		note(add(E, v->id, v->text, v->origin, v->parent[0] ? v->parent : NULL), v->shape, v->verdict, v->pred, v->med);
	}
	if (!ok)
		snprintf(E->err, sizeof E->err, "%s", store_errmsg(E->o->store));
	arena_free(&a);
	E->p.proposed = E->n;
	return ok;
}

/* The candidate's score: the geometric mean over the shapes of its measured
 * (or, in a dry run, predicted) times; NAN when a shape has none. */
static double score(const Ev *E, const Cand *c, bool measured)
{
	double l = 0;
	for (int s = 0; s < E->o->nshapes; s++) {
		double t = measured ? c->meas[s] : c->pred[s];
		if (isnan(t) || t <= 0)
			return NAN;
		l += log(t);
	}
	return exp(l / E->o->nshapes);
}

static void update_best(Ev *E)
{
	bool m = !E->o->dry_run;
	E->p.measured = m;
	E->p.seed_score = E->p.best_score = E->p.baseline_score = NAN;
	E->p.best[0] = 0;
	for (int i = 0; i < E->n; i++) {
		const Cand *c = &E->c[i];
		double sc = score(E, c, m);
		if (isnan(sc) || c->bad)
			continue;
		if (c->baseline) {
			E->p.baseline_score = sc;
			continue;
		}
		if (c->seed && (isnan(E->p.seed_score) || sc < E->p.seed_score))
			E->p.seed_score = sc;
		if (isnan(E->p.best_score) || sc < E->p.best_score) {
			E->p.best_score = sc;
			snprintf(E->p.best, sizeof E->p.best, "%s", c->id);
		}
	}
}

static void report(Ev *E, const char *event, const EvalResult *last, const char *origin)
{
	update_best(E);
	E->p.proposed = E->n;
	E->p.event = event;
	snprintf(E->p.campaign, sizeof E->p.campaign, "%s", E->campaign);
	E->p.wall_s = now_s(&E->t0);
	E->p.last = last;
	E->p.last_origin = origin;
	if (E->o->progress)
		E->o->progress(E->o->progress_ctx, &E->p);
}

/* Why the loop must stop now, or NULL. */
static const char *over(Ev *E)
{
	const EvolveOptions *o = E->o;
	if (o->stop && *o->stop)
		return "interrupted";
	if (o->budget_gpu_s > 0 && E->p.gpu_s >= o->budget_gpu_s)
		return "budget (GPU seconds) spent";
	if (o->budget_cands > 0 && E->p.proposed > o->budget_cands)
		return "budget (candidates) spent";
	if (o->budget_wall_s > 0 && now_s(&E->t0) >= o->budget_wall_s)
		return "budget (time) spent";
	return NULL;
}

/* Evaluate c at shape s (dry or on the GPU); updates c and the counts. False
 * when the loop must stop (a store failure, or no GPU for a GPU campaign). */
static bool evaluate(Ev *E, Cand *c, int s, bool dry)
{
	const EvolveOptions *o = E->o;
	EvalRequest r = eval_request();
	r.text = c->text;
	r.len = strlen(c->text);
	r.name = "<candidate>";
	r.shape = E->shape[s];
	r.origin = c->origin;
	r.parent = c->parent[0] ? c->parent : NULL;
	r.campaign = E->campaign;
	r.worker = o->worker;
	r.run = o->run;
	r.dry_run = dry;
	r.no_jit = dry && !o->dry_run;   /* a GPU campaign's screening pass: the GPU run compiles */
	r.store = o->store;
	SourceSet ss = {0};
	EvalResult res;
	EvalStatus st = eval_candidate(&r, &ss, &res);
	bool go = true;
	if (st == EVAL_BUSY) {
		E->p.busy++;
	} else if (st != EVAL_DONE) {
		snprintf(E->err, sizeof E->err, "evaluating candidate %.12s at %.200s: %.700s", c->id, E->shape[s], res.message);
		go = false;
	} else {
		bool fresh = !res.cached;
		note(c, s, res.verdict, res.has_pred ? res.pred.us : NAN, res.median_us);
		if (!fresh) {   /* kept for the rebuilt tables (see the file comment) */
			if (E->nserved == E->capserved) {
				E->capserved = E->capserved ? E->capserved * 2 : 32;
				E->served = xrealloc(E->served, sizeof(Served) * (size_t)E->capserved);
			}
			Served *v = &E->served[E->nserved++];
			snprintf(v->id, sizeof v->id, "%s", c->id);
			snprintf(v->parent, sizeof v->parent, "%s", c->parent);
			v->text = xstrdup(c->text);
			v->origin = xstrdup(c->origin);
			v->shape = s;
			v->verdict = res.verdict;
			v->pred = res.has_pred ? res.pred.us : NAN;
			v->med = res.median_us;
		}
		if (fresh) {
			E->p.rejected += rejection(res.verdict);
			E->p.run += gpu_verdict(res.verdict);
			E->p.failed += gpu_verdict(res.verdict) && res.verdict != STORE_V_OK;
			E->p.gpu_s += isnan(res.gpu_s) ? 0 : res.gpu_s;
		}
		if (res.verdict == STORE_V_NO_GPU) {
			snprintf(E->err, sizeof E->err, "no GPU: %.900s (use --dry-run on a machine without one)", res.message);
			go = false;
		}
		report(E, c->seed ? "seed" : "eval", &res, c->origin);
	}
	eval_result_free(&res);
	src_free(&ss);
	return go;
}

/* Evaluate c at every shape: dry first (prediction, rejection), then on the
 * GPU unless a dry run or already measured. */
static bool evaluate_all(Ev *E, Cand *c, bool gpu)
{
	for (int s = 0; s < E->o->nshapes && !c->bad; s++) {
		if (over(E))
			return true;
		if (isnan(c->pred[s]) && !evaluate(E, c, s, true))
			return false;
	}
	for (int s = 0; gpu && s < E->o->nshapes && !c->bad; s++) {
		if (over(E))
			return true;
		if (!c->tried[s] && !evaluate(E, c, s, false))
			return false;
	}
	return true;
}

/* ---- seeds ---- */

/* Canonical one-kernel texts of the kernels of file `path` (all, or the one
 * named kernel; only those of family `family` when non-NULL), appended to v. */
static bool seeds_of(const char *path, const char *kernel, const char *family, Vec *v, char *err, size_t n)
{
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeOptions o = cake_options(CAKE_VERIFY);
	o.kernel = kernel;
	CakeUnit u;
	int rc = cake_compile_path(&u, &ss, &dl, path, &o);
	bool ok = true;
	if (rc == 2 || u.failed != CAKE_STAGE_NONE) {
		StrBuf b = {0};
		diag_sort(&dl);
		diag_print_text(&b, &ss, &dl, false);
		snprintf(err, n, "%s%s%s", u.error[0] ? u.error : "", u.error[0] ? "\n" : "",
		         b.len ? sb_str(&b) : "the seed has errors");
		sb_free(&b);
		ok = false;
	}
	for (int i = 0; ok && i < u.nkernels; i++) {
		Kernel *k = u.kernels[i];
		if (family && (!k->family || strcmp(k->family->name, family)))
			continue;
		vec_push(v, cake_kernel_text(&u, i));
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The seed texts: a file's kernels, or every corpus kernel of a family. */
static bool load_seeds(const EvolveOptions *o, Vec *v, char *err, size_t n)
{
	FILE *f = fopen(o->seed, "r");
	if (f) {
		fclose(f);
		return seeds_of(o->seed, o->kernel, NULL, v, err, n);
	}
	if (!family_find(family_builtin(), o->seed)) {
		int nf;
		const char **names = family_names(family_builtin(), &nf);
		StrBuf b = {0};
		for (int i = 0; i < nf; i++)
			sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
		snprintf(err, n, "'%s' is neither a readable .cake file nor a kernel family (families: %s)", o->seed, sb_str(&b));
		sb_free(&b);
		free(names);
		return false;
	}
	/* every kernels/<dir>/<file>.cake with a kernel of this family, in path order */
	Vec paths = {0};
	DIR *top = opendir(o->kernels_dir);
	struct dirent *d;
	while (top && (d = readdir(top))) {
		if (d->d_name[0] == '.')
			continue;
		char sub[1024];
		snprintf(sub, sizeof sub, "%s/%s", o->kernels_dir, d->d_name);
		DIR *in = opendir(sub);
		struct dirent *e;
		while (in && (e = readdir(in))) {
			size_t l = strlen(e->d_name);
			if (l > 5 && !strcmp(e->d_name + l - 5, ".cake")) {
				char *p = xmalloc(strlen(sub) + l + 2);
				sprintf(p, "%s/%s", sub, e->d_name);
				vec_push(&paths, p);
			}
		}
		if (in)
			closedir(in);
	}
	if (top)
		closedir(top);
	qsort(paths.data, (size_t)paths.len, sizeof(char *), cmp_str);
	bool ok = true;
	for (int i = 0; i < paths.len && ok; i++)
		ok = seeds_of(paths.data[i], NULL, o->seed, v, err, n);
	for (int i = 0; i < paths.len; i++)
		free(paths.data[i]);
	vec_free(&paths);
	if (ok && !v->len) {
		snprintf(err, n, "no kernel of family '%s' under %s/", o->seed, o->kernels_dir);
		ok = false;
	}
	return ok;
}

/* ---- the loop ---- */

/* A candidate by its index in the table (the table grows while parents are
 * expanded, so pointers into it would dangle). */
typedef struct Ranked {
	int i;
	double s;
} Ranked;

static int cmp_ranked(const void *a, const void *b)
{
	double x = ((const Ranked *)a)->s, y = ((const Ranked *)b)->s;
	return (x > y) - (x < y);
}

/* Candidates ordered by score (measured or predicted), skipping the bad and
 * the baseline; filter keeps those the caller wants. */
static int ranked(Ev *E, bool measured, bool (*keep)(const Ev *, const Cand *), Ranked **out)
{
	Ranked *r = xmalloc(sizeof(Ranked) * (size_t)(E->n + 1));
	int m = 0;
	for (int i = 0; i < E->n; i++) {
		Cand *c = &E->c[i];
		double s = score(E, c, measured);
		if (c->bad || c->baseline || isnan(s) || (keep && !keep(E, c)))
			continue;
		r[m++] = (Ranked){i, s};
	}
	qsort(r, (size_t)m, sizeof *r, cmp_ranked);
	*out = r;
	return m;
}

static bool unexpanded(const Ev *E, const Cand *c)
{
	return !c->expanded;
}

/* Was c made by an enabling tactic (tactics.h) and not yet expanded? */
static bool unexpanded_enabling(const Ev *E, const Cand *c)
{
	if (c->expanded || strncmp(c->origin, "tactic:", 7))
		return false;
	const Tactic *t = tactic_find(c->origin + 7);
	return t && t->enabling;
}

static bool unmeasured(const Ev *E, const Cand *c)
{
	for (int s = 0; s < E->o->nshapes; s++)
		if (!c->tried[s])
			return true;
	return false;
}

static void mark_expanded(Ev *E, Cand *c)
{
	c->expanded = true;
	if (E->nexpanded == E->capexpanded) {
		E->capexpanded = E->capexpanded ? E->capexpanded * 2 : 32;
		E->expanded = xrealloc(E->expanded, sizeof(char *) * (size_t)E->capexpanded);
	}
	E->expanded[E->nexpanded++] = xstrdup(c->id);
}

/* Expand parent: evaluate every tactic proposal the campaign has not seen
 * yet, without a GPU. Returns false when the loop must stop. */
static bool expand(Ev *E, Cand *parent, int *fresh)
{
	mark_expanded(E, parent);
	char pid[STORE_ID_LEN + 1];
	snprintf(pid, sizeof pid, "%s", parent->id);   /* the table may move below */
	char *ptext = xstrdup(parent->text);
	TacticProposals ps;
	tactics_propose(ptext, strlen(ptext), NULL, false, &ps);
	bool go = true;
	for (int i = 0; i < ps.n && go && !over(E); i++) {
		const TacticProposal *pr = &ps.items[i];
		if (!pr->text)
			continue;   /* the tactic did not apply: nothing was produced */
		char id[STORE_ID_LEN + 1];
		store_hash_text(pr->text, id);
		if (find(E, id))
			continue;   /* the campaign has it already */
		Cand *c = add(E, id, pr->text, pr->origin, pid);
		E->p.proposed = E->n;
		(*fresh)++;
		go = evaluate_all(E, c, false);
	}
	tactic_proposals_free(&ps);
	free(ptext);
	return go;
}

static void campaign_name(Ev *E, Vec *seeds, const char *baseline_text)
{
	XXH3_state_t *st = XXH3_createState();
	XXH3_64bits_reset(st);
	for (int i = 0; i < seeds->len; i++)
		XXH3_64bits_update(st, seeds->data[i], strlen(seeds->data[i]) + 1);
	for (int s = 0; s < E->o->nshapes; s++)
		XXH3_64bits_update(st, E->shape[s], strlen(E->shape[s]) + 1);
	if (baseline_text)
		XXH3_64bits_update(st, baseline_text, strlen(baseline_text) + 1);
	XXH3_64bits_update(st, E->o->dry_run ? "dry" : "gpu", 4);
	unsigned long long h = (unsigned long long)XXH3_64bits_digest(st);
	XXH3_freeState(st);
	snprintf(E->campaign, sizeof E->campaign, "evolve-%012llx", h & 0xffffffffffffull);
}

int evolve_run(const EvolveOptions *o, EvolveProgress *final, char *err, size_t n)
{
	Ev E;
	memset(&E, 0, sizeof E);
	E.o = o;
	clock_gettime(CLOCK_MONOTONIC, &E.t0);
	int rc = 0;
	Vec seeds = {0};
	char *btext = NULL;
	if (!o->store || o->nshapes < 1 || o->nshapes > EVOLVE_MAX_SHAPES) {
		snprintf(err, n, "evolve needs a store and 1 to %d shapes", EVOLVE_MAX_SHAPES);
		return 2;
	}
	for (int s = 0; s < o->nshapes; s++) {
		StrBuf b = {0};
		if (store_shape_canon(o->shapes[s], &b) != STORE_OK) {
			snprintf(err, n, "the shape '%s' is not NAME=VALUE,...", o->shapes[s]);
			sb_free(&b);
			return 2;
		}
		snprintf(E.shape[s], sizeof E.shape[s], "%s", sb_str(&b));
		sb_free(&b);
	}
	if (!load_seeds(o, &seeds, err, n)) {
		rc = 2;
		goto out;
	}
	if (o->baseline) {
		Vec b = {0};
		if (!seeds_of(o->baseline, o->baseline_kernel, NULL, &b, err, n) || b.len != 1) {
			if (b.len > 1)
				snprintf(err, n, "the baseline '%s' holds %d kernels: name one with --baseline-kernel", o->baseline, b.len);
			for (int i = 0; i < b.len; i++)
				free(b.data[i]);
			vec_free(&b);
			rc = 2;
			goto out;
		}
		btext = b.data[0];
		vec_free(&b);
		store_hash_text(btext, E.baseline_id);
	}
	if (o->campaign)
		snprintf(E.campaign, sizeof E.campaign, "%s", o->campaign);
	else
		campaign_name(&E, &seeds, btext);
	E.seed_ids = xcalloc((size_t)seeds.len + 1, sizeof(char *));
	for (int i = 0; i < seeds.len; i++) {
		E.seed_ids[i] = xmalloc(STORE_ID_LEN + 1);
		store_hash_text(seeds.data[i], E.seed_ids[i]);
	}
	E.nseeds = seeds.len;
	bool gpu = !o->dry_run;

	/* the seeds and the baseline (served from the store on a rerun) */
	if (!refresh(&E)) {
		snprintf(err, n, "%s", E.err);
		rc = 2;
		goto out;
	}
	bool go = true;
	for (int i = 0; i < seeds.len && go && !over(&E); i++) {
		Cand *c = add(&E, E.seed_ids[i], seeds.data[i], "human", NULL);
		go = evaluate_all(&E, c, gpu);
	}
	if (btext && go && !over(&E)) {
		Cand *c = add(&E, E.baseline_id, btext, "human", NULL);
		go = evaluate_all(&E, c, gpu);
	}

	/* generations */
	const char *why = NULL;
	while (go && !(why = over(&E))) {
		if (!refresh(&E)) {
			go = false;
			break;
		}
		E.p.generation++;
		report(&E, "generation", NULL, NULL);
		/* parents: the best by measured time (on a GPU), the best by predicted
		 * time, and the results of enabling tactics (expanded once whatever
		 * their own time: a producer role is slower than the kernel it came
		 * from until its ring is deepened) */
		Ranked *r;
		int fresh = 0, expanded = 0;
		bool (*const pick[3])(const Ev *, const Cand *) = {unexpanded, unexpanded, unexpanded_enabling};
		const bool by_meas[3] = {true, false, false};
		for (int q = 0; q < 3 && go; q++) {
			if (by_meas[q] && !gpu)
				continue;
			int m = ranked(&E, by_meas[q], pick[q], &r), done = 0;
			for (int i = 0; i < m && done < o->width && go && !over(&E); i++) {
				if (E.c[r[i].i].expanded)
					continue;   /* picked by an earlier list this generation */
				go = expand(&E, &E.c[r[i].i], &fresh);
				done++, expanded++;
			}
			free(r);
		}
		if (go && gpu && !over(&E)) {
			/* the GPU runs: the best-predicted unmeasured candidate of each
			 * tactic first (the placeholder ranking ties often, and one run per
			 * kind of rewrite explores more than six of one kind), then by
			 * prediction alone */
			int mm = ranked(&E, false, unmeasured, &r), ran = 0;
			char **seen = xcalloc((size_t)mm + 1, sizeof(char *));
			int nseen = 0;
			for (int pass = 0; pass < 2 && go; pass++)
				for (int i = 0; i < mm && ran < o->top && go && !over(&E); i++) {
					Cand *c = &E.c[r[i].i];
					if (!unmeasured(&E, c))
						continue;   /* run in the first pass */
					char kind[64];
					const char *t = !strncmp(c->origin, "tactic:", 7) ? c->origin + 7 : c->origin;
					snprintf(kind, sizeof kind, "%.*s", (int)strcspn(t, ":"), t);
					bool dup = false;
					for (int q = 0; q < nseen && pass == 0; q++)
						dup |= !strcmp(seen[q], kind);
					if (dup)
						continue;
					seen[nseen++] = xstrdup(kind);
					go = evaluate_all(&E, c, true);
					ran++;
				}
			for (int q = 0; q < nseen; q++)
				free(seen[q]);
			free(seen);
			free(r);
			fresh += mm > 0;
		}
		if (go && !fresh && expanded == 0) {
			why = "frontier exhausted: every candidate worth expanding has been expanded";
			break;
		}
	}
	if (!go) {
		snprintf(err, n, "%s", E.err);
		rc = 2;
	}
	refresh(&E);
	E.p.reason = go ? (why ? why : over(&E)) : "error";
	if (!E.p.reason)
		E.p.reason = "stopped";
	report(&E, "done", NULL, NULL);
	char owner[256];
	snprintf(owner, sizeof owner, "%s", o->worker ? o->worker : "");
	if (!owner[0])
		store_default_owner(owner, sizeof owner);
	store_release_all(o->store, owner, NULL);
out:
	if (final) {
		*final = E.p;
		snprintf(final->campaign, sizeof final->campaign, "%s", E.campaign);
		final->last = NULL;
	}
	free_cands(&E);
	free(E.c);
	for (int i = 0; i < seeds.len; i++)
		free(seeds.data[i]);
	vec_free(&seeds);
	for (int i = 0; i < E.nseeds; i++)
		free(E.seed_ids[i]);
	free(E.seed_ids);
	for (int i = 0; i < E.nexpanded; i++)
		free(E.expanded[i]);
	free(E.expanded);
	for (int i = 0; i < E.nserved; i++) {
		free(E.served[i].text);
		free(E.served[i].origin);
	}
	free(E.served);
	free(btext);
	return rc;
}
