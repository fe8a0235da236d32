/*
 * mine.c — failure mining (mine.h): schedule features of stored
 * candidates, failures grouped by the features they share, and the rule
 * family where a check is missing.
 *
 * Features come from the Plan (src/lower/lower.h), the compiler's own view
 * of the schedule: derive_plan runs without the verifier (CakeOptions.
 * no_verify), because the candidates worth mining are exactly the ones some
 * verifier let through, and today's may reject them. The derived arrival
 * count of a barrier is counted here the way CK-BAR-001 describes it (one
 * arrival per warpgroup of the role, PlanRole.arrivals_per_arrive, for each
 * `arrive` executed per iteration, if/else by its larger side, plus one per
 * role whose TMA loads signal it), but from the lowering's numbers, so a
 * disagreement between the verifier's model and the lowering would show.
 *
 * Values are exact where they are small integers (regs, stages, trips,
 * warpgroups) and bucketed where they are not (shared memory in 16 KiB
 * steps), so that features recur across candidates. Aggregate features
 * (regs_pool, bar_arrivals, stages_vs_trips, ...) say in one word what the
 * specific ones say in numbers; they rank first in a cluster because they
 * name the condition a rule would check.
 */
#include "mine.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

MineOptions mine_options(void)
{
	MineOptions o;
	memset(&o, 0, sizeof o);
	o.max_ok_freq = 0.25;
	o.examples = 3;
	return o;
}

/* ---- feature kinds: rule family, rank, meaning ---- */

static const struct {
	const char *prefix;          /* up to '=' or '.' */
	const char *family;
	int rank;                    /* higher: more telling */
	const char *what;
} KIND[] = {
	{"regs_pool", "CK-RES", 10, "the registers the roles ask for (sum of regs x threads) against the CTA's launch pool "
	                            "(threads x the multiple of 8 at or below 65536 / threads); setmaxnreg only moves "
	                            "registers inside the pool"},
	{"regs_file", "CK-RES", 9, "the registers the roles ask for against the SM's register file (65536)"},
	{"bar_arrivals", "CK-BAR/CK-DEAD", 10, "declared mbarrier arrivals against the arrivals the role programs give"},
	{"stages_vs_trips", "CK-SCHED/CK-DEAD", 10, "pipeline stages against the loop's trip count at the shape"},
	{"regs_asked", "CK-RES", 6, "the registers the roles ask for (sum of regs x threads)"},
	{"launch_pool", "CK-RES", 6, "the registers a CTA is launched with"},
	{"regs", "CK-RES", 5, "a role's register budget (setmaxnreg)"},
	{"bar", "CK-BAR/CK-DEAD", 5, "a barrier's declared/derived arrivals"},
	{"stages", "CK-SCHED/CK-DEAD", 4, "a pipeline's stage count"},
	{"trips", "CK-SCHED/CK-DEAD", 4, "a pipelined loop's trip count at the shape"},
	{"smem", "CK-RES", 4, "dynamic shared memory (16 KiB buckets)"},
	{"acc", "CK-RES/CK-DATA", 3, "an accumulator tile (rows x columns)"},
	{"threads", "CK-RES", 3, "threads per CTA"},
	{"warpgroups", "CK-RES", 3, "warpgroups per CTA"},
	{"role", "CK-RES", 3, "a role's warpgroups (or warps, under one warpgroup)"},
	{"persistent", "CK-DEAD/CK-RACE", 3, "a persistent grid (role programs loop over tiles, phases carry across tiles)"},
	{"cluster", "CK-HW", 3, "the thread-block cluster shape"},
};

static int kind_of(const char *feat)
{
	size_t n = strcspn(feat, "=.");
	for (size_t i = 0; i < NELEM(KIND); i++)
		if (strlen(KIND[i].prefix) == n && strncmp(KIND[i].prefix, feat, n) == 0)
			return (int)i;
	return -1;
}

static const char *family_of(const char *feat)
{
	int k = kind_of(feat);
	return k < 0 ? "?" : KIND[k].family;
}

static int rank_of(const char *feat)
{
	int k = kind_of(feat);
	return k < 0 ? 0 : KIND[k].rank;
}

/* ---- features ---- */

typedef struct Feats {
	const char **v;
	int n, cap;
	Arena *a;
} Feats;

__attribute__((format(printf, 2, 3))) static void feat(Feats *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = arena_vprintf(f->a, fmt, ap);
	va_end(ap);
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 32;
		f->v = xrealloc(f->v, (size_t)f->cap * sizeof *f->v);
	}
	f->v[f->n++] = s;
}

/* Arrivals one block gives barrier `bar` per pass: `arrive` statements, or
 * (tma) whether a TMA load signals it; if/else counts its larger side. */
static int count_arrivals(Stmt **body, int n, const char *bar, bool tma, int depth)
{
	int c = 0;
	for (int i = 0; i < n && depth < 200; i++) {
		const Stmt *s = body[i];
		if (!s)
			continue;
		if (!tma && s->kind == S_ARRIVE && s->name && !strcmp(s->name, bar))
			c++;
		else if (tma && s->kind == S_TMA_LOAD && s->name && !strcmp(s->name, bar))
			c = 1;
		else if (s->kind == S_IF) {
			int t = count_arrivals(s->body, s->nbody, bar, tma, depth + 1);
			int e = count_arrivals(s->els, s->nels, bar, tma, depth + 1);
			int m = t > e ? t : e;
			c = tma ? (c || m) : c + m;
		}
	}
	return c;
}

/* The largest count over a block and every loop body inside it. */
static int max_arrivals(Stmt **body, int n, const char *bar, bool tma, int depth)
{
	int best = count_arrivals(body, n, bar, tma, depth);
	for (int i = 0; i < n && depth < 200; i++) {
		const Stmt *s = body[i];
		if (!s)
			continue;
		int c = 0;
		if (s->kind == S_FOR)
			c = max_arrivals(s->body, s->nbody, bar, tma, depth + 1);
		else if (s->kind == S_IF) {
			int t = max_arrivals(s->body, s->nbody, bar, tma, depth + 1);
			int e = max_arrivals(s->els, s->nels, bar, tma, depth + 1);
			c = t > e ? t : e;
		}
		if (c > best)
			best = c;
	}
	return best;
}

static int derived_arrivals(const Kernel *k, const Plan *p, const char *bar)
{
	int total = 0;
	for (int r = 0; r < p->nroles; r++) {
		int na = 0, nt = 0;
		for (int i = 0; i < k->nbody; i++) {
			const Stmt *in = k->body[i];
			if (!in || in->kind != S_IN || !in->name || strcmp(in->name, p->roles[r].name) != 0)
				continue;
			int a = max_arrivals(in->body, in->nbody, bar, false, 0);
			int t = max_arrivals(in->body, in->nbody, bar, true, 0);
			na = a > na ? a : na;
			nt = t > nt ? t : nt;
		}
		total += na * p->roles[r].arrivals_per_arrive + (nt ? 1 : 0);
	}
	return total;
}

static int cmp_cstr(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void plan_features(Feats *f, const Kernel *k, const Plan *p, const long long *dims, bool bound)
{
	const TargetInfo *ti = target_info(p->target);
	int threads = p->block_threads;
	feat(f, "threads=%d", threads);
	feat(f, "warpgroups=%d", p->nwarpgroups);
	bool all = p->nroles > 0;
	long long asked = 0;
	for (int r = 0; r < p->nroles; r++) {
		const PlanRole *ro = &p->roles[r];
		if (ro->nwg)
			feat(f, "role.%s=%dwg", ro->name, ro->nwg);
		else
			feat(f, "role.%s=%dw", ro->name, ro->nwarps);
		int regs = ro->decl ? ro->decl->regs : ro->regs;
		if (regs > 0)
			feat(f, "regs.%s=%d", ro->name, regs);
		else
			all = false;
		asked += (long long)regs * ro->nthreads;
	}
	if (all && threads > 0) {
		long long per = ti->regs_per_sm / threads / ti->reg_alloc_unit * ti->reg_alloc_unit;
		if (per > ti->setmaxnreg_max)
			per = ti->setmaxnreg_max;
		long long pool = per * threads;
		feat(f, "regs_asked=%lld", asked);
		feat(f, "launch_pool=%lld", pool);
		feat(f, "regs_pool=%s", asked > pool ? "over" : "within");
		feat(f, "regs_file=%s", asked > ti->regs_per_sm ? "over" : "within");
	}
	bool mismatch = false;
	for (int b = 0; b < p->nbarriers; b++) {
		const PlanBarrier *B = &p->barriers[b];
		int declared = B->decl ? B->decl->arrivals : B->arrivals;
		int derived = derived_arrivals(k, p, B->name);
		feat(f, "bar.%s=%d/%d", B->name, declared, derived);
		mismatch = mismatch || (derived > 0 && derived != declared);
	}
	if (p->nbarriers)
		feat(f, "bar_arrivals=%s", mismatch ? "mismatch" : "match");
	for (int pi = 0; pi < p->npipes; pi++)
		feat(f, "stages.%s=%d", p->pipes[pi].name, p->pipes[pi].stages);
	bool over = false, any = false;
	for (int l = 0; l < p->nloops && bound; l++) {
		const PlanLoop *L = &p->loops[l];
		const Stmt *s = L->loop;
		long long lo, hi, step = 1;
		if (!s || !eval_expr(s->lo, k, dims, &lo) || !eval_expr(s->hi, k, dims, &hi) ||
		    (s->step && !eval_expr(s->step, k, dims, &step)) || step <= 0)
			continue;
		long long trips = hi > lo ? (hi - lo + step - 1) / step : 0;
		const PlanPipe *pp = &p->pipes[L->pipe];
		feat(f, "trips.%s=%lld", pp->name, trips);
		any = true;
		over = over || pp->stages > trips;
	}
	if (any)
		feat(f, "stages_vs_trips=%s", over ? "over" : "within");
	for (int i = 0; i < p->nfrags; i++)
		if (p->frags[i].layout == FRAG_ACC)
			feat(f, "acc.%s=%lldx%lld", p->frags[i].name, p->frags[i].rows, p->frags[i].cols);
	long long kib = (p->smem_bytes + 1023) / 1024;
	long long hi16 = (kib + 15) / 16 * 16;
	feat(f, "smem=%lld-%lldKiB", hi16 > 16 ? hi16 - 15 : 0, hi16);
	feat(f, "persistent=%s", p->persistent ? "yes" : "no");
	feat(f, "cluster=%dx%dx%d", p->cluster[0], p->cluster[1], p->cluster[2]);
}

int mine_features(const char *text, const char *kernel, const char *shape, Arena *a, const char ***out)
{
	*out = NULL;
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_DERIVE);
	o.no_verify = true;
	o.kernel = kernel;
	cake_compile_text(&u, &ss, &dl, "<stored candidate>", text, strlen(text), &o);
	int n = -1;
	if (u.failed == CAKE_STAGE_NONE && u.nkernels == 1 && u.plans && u.plans[0]) {
		const Kernel *k = u.kernels[0];
		long long dims[LAUNCH_MAX_DIMS] = {0};
		char err[256];
		bool bound = eval_bind_shape(k, shape ? shape : "", dims, err, sizeof err);
		Feats f = {.a = a};
		plan_features(&f, k, u.plans[0], dims, bound);
		qsort(f.v, (size_t)f.n, sizeof *f.v, cmp_cstr);
		*out = arena_alloc(a, (size_t)(f.n ? f.n : 1) * sizeof **out);
		if (f.n)
			memcpy(*out, f.v, (size_t)f.n * sizeof *f.v);
		free(f.v);
		n = f.n;
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return n;
}

/* ---- mining ---- */

/* Distinct features and their counts. */
typedef struct Dict {
	const char **name;
	int *nfail, *nok;
	int n, cap;
} Dict;

static int dict_id(Dict *d, const char *s)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->name[i], s) == 0)
			return i;
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->name = xrealloc(d->name, (size_t)d->cap * sizeof *d->name);
		d->nfail = xrealloc(d->nfail, (size_t)d->cap * sizeof *d->nfail);
		d->nok = xrealloc(d->nok, (size_t)d->cap * sizeof *d->nok);
	}
	d->name[d->n] = s;
	d->nfail[d->n] = d->nok[d->n] = 0;
	return d->n++;
}

static bool holds(const MineItem *it, const char *f)
{
	for (int i = 0; i < it->nfeat; i++)
		if (strcmp(it->feat[i], f) == 0)
			return true;
	return false;
}

static double share(int k, int n)
{
	return n > 0 ? (double)k / n : 0;
}

typedef struct SharedSort {
	MineShared s;
	int rank;
} SharedSort;

static int cmp_shared(const void *x, const void *y)
{
	const SharedSort *a = x, *b = y;
	if (a->rank != b->rank)
		return b->rank - a->rank;
	if (a->s.ok_n != b->s.ok_n)
		return a->s.ok_n - b->s.ok_n;
	if (a->s.fail_n != b->s.fail_n)
		return b->s.fail_n - a->s.fail_n;
	return strcmp(a->s.feature, b->s.feature);
}

int mine_store(Store *st, const MineOptions *o, MineResult *r, char *err, size_t n)
{
	memset(r, 0, sizeof *r);
	arena_init(&r->arena);
	Arena *a = &r->arena;
	MineOptions def = mine_options();
	if (!o)
		o = &def;
	r->max_ok_freq = o->max_ok_freq;
	StoreEval *ev = NULL;
	int ne = 0;
	if (store_list_evals(st, &o->filter, a, &ev, &ne) != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		return 2;
	}
	qsort(ev, (size_t)ne, sizeof *ev, store_eval_cmp_item);
	r->items = arena_alloc(a, (size_t)(ne ? ne : 1) * sizeof *r->items);
	const char *text_of = NULL, *text = NULL;
	for (int i = 0; i < ne;) {
		int j = i, worst = -1;
		while (j < ne && !strcmp(ev[j].cand, ev[i].cand) && !strcmp(ev[j].kernel, ev[i].kernel) &&
		       !strcmp(ev[j].shape, ev[i].shape)) {
			if (store_gpu_rank(ev[j].verdict) > 0 && (worst < 0 || store_gpu_rank(ev[j].verdict) > store_gpu_rank(ev[worst].verdict)))
				worst = j;
			j++;
		}
		if (worst >= 0) {
			if (!text_of || strcmp(text_of, ev[i].cand) != 0) {
				StoreCandidate c;
				if (store_get_candidate(st, ev[i].cand, a, &c) != STORE_OK) {
					snprintf(err, n, "%s", store_errmsg(st));
					return 2;
				}
				text = c.text;
				text_of = ev[i].cand;
			}
			MineItem *it = &r->items[r->nitems++];
			memset(it, 0, sizeof *it);
			it->cand = ev[worst].cand;
			it->kernel = ev[worst].kernel;
			it->shape = ev[worst].shape;
			it->verdict = ev[worst].verdict;
			it->message = ev[worst].message;
			it->eval = ev[worst].id;
			it->failed = store_gpu_rank(it->verdict) > 1;
			it->nfeat = mine_features(text, it->kernel, it->shape, a, &it->feat);
			if (it->nfeat < 0) {
				it->nfeat = 0;
				it->feat = NULL;
				r->nunfeatured++;
			}
			if (it->failed)
				r->nfail++;
			else
				r->nok++;
		}
		i = j;
	}
	/* counts per distinct feature */
	Dict d = {0};
	for (int i = 0; i < r->nitems; i++)
		for (int f = 0; f < r->items[i].nfeat; f++) {
			int id = dict_id(&d, r->items[i].feat[f]);
			if (r->items[i].failed)
				d.nfail[id]++;
			else
				d.nok[id]++;
		}
	/* greedy clusters */
	bool *covered = xcalloc((size_t)(r->nitems ? r->nitems : 1), sizeof *covered);
	int *cover = xcalloc((size_t)(d.n ? d.n : 1), sizeof *cover);
	MineCluster *cl = NULL;
	int ncl = 0, ccap = 0;
	for (;;) {
		memset(cover, 0, (size_t)(d.n ? d.n : 1) * sizeof *cover);
		for (int i = 0; i < r->nitems; i++) {
			const MineItem *it = &r->items[i];
			if (!it->failed || covered[i])
				continue;
			for (int f = 0; f < it->nfeat; f++)
				cover[dict_id(&d, it->feat[f])]++;
		}
		int best = -1;
		for (int f = 0; f < d.n; f++) {
			if (!cover[f] || share(d.nok[f], r->nok) > o->max_ok_freq)
				continue;
			if (best < 0 || cover[f] > cover[best] ||
			    (cover[f] == cover[best] &&
			     (d.nok[f] < d.nok[best] ||
			      (d.nok[f] == d.nok[best] &&
			       (rank_of(d.name[f]) > rank_of(d.name[best]) ||
			        (rank_of(d.name[f]) == rank_of(d.name[best]) && strcmp(d.name[f], d.name[best]) < 0))))))
				best = f;
		}
		if (best < 0)
			break;
		if (ncl == ccap) {
			ccap = ccap ? ccap * 2 : 8;
			cl = xrealloc(cl, (size_t)ccap * sizeof *cl);
		}
		MineCluster *c = &cl[ncl++];
		memset(c, 0, sizeof *c);
		c->key = d.name[best];
		c->family = family_of(c->key);
		int k = kind_of(c->key);
		c->what = k < 0 ? "" : KIND[k].what;
		c->members = arena_alloc(a, (size_t)cover[best] * sizeof *c->members);
		for (int i = 0; i < r->nitems; i++)
			if (r->items[i].failed && !covered[i] && holds(&r->items[i], c->key)) {
				c->members[c->nmembers++] = i;
				covered[i] = true;
				c->verdicts[r->items[i].verdict]++;
			}
		/* shared: held by every member, rare among ok runs */
		const MineItem *m0 = &r->items[c->members[0]];
		SharedSort *ss = xcalloc((size_t)(m0->nfeat ? m0->nfeat : 1), sizeof *ss);
		int nss = 0;
		for (int f = 0; f < m0->nfeat; f++) {
			bool all = true;
			for (int m = 1; m < c->nmembers && all; m++)
				all = holds(&r->items[c->members[m]], m0->feat[f]);
			int id = dict_id(&d, m0->feat[f]);
			if (!all || share(d.nok[id], r->nok) > o->max_ok_freq)
				continue;
			SharedSort *s = &ss[nss++];
			s->s.feature = d.name[id];
			s->s.family = family_of(d.name[id]);
			s->s.fail_n = d.nfail[id];
			s->s.ok_n = d.nok[id];
			s->s.fail_freq = share(d.nfail[id], r->nfail);
			s->s.ok_freq = share(d.nok[id], r->nok);
			s->rank = rank_of(d.name[id]);
		}
		qsort(ss, (size_t)nss, sizeof *ss, cmp_shared);
		c->shared = arena_alloc(a, (size_t)(nss ? nss : 1) * sizeof *c->shared);
		for (int s = 0; s < nss; s++)
			c->shared[s] = ss[s].s;
		c->nshared = nss;
		free(ss);
		/* what today's harness already blocks */
		StrBuf rules = {0};
		for (int m = 0; m < c->nmembers; m++) {
			const MineItem *it = &r->items[c->members[m]];
			StoreCandidate cand;
			if (store_get_candidate(st, it->cand, a, &cand) != STORE_OK)
				continue;
			GateJudgement now;
			gate_judge(cand.text, it->kernel, it->shape, &now);
			if (now.outcome == STORE_OUT_ACCEPTED)
				continue;
			c->caught_now++;
			const char *rule = now.rule[0] ? now.rule : "a shape refusal";
			if (!strstr(sb_str(&rules), rule))
				sb_printf(&rules, "%s%s", rules.len ? ", " : "", rule);
		}
		c->caught_rules = arena_strdup(a, sb_str(&rules));
		sb_free(&rules);
	}
	for (int i = 0; i < r->nitems; i++)
		r->unexplained += r->items[i].failed && !covered[i];
	r->clusters = arena_alloc(a, (size_t)(ncl ? ncl : 1) * sizeof *r->clusters);
	if (ncl)
		memcpy(r->clusters, cl, (size_t)ncl * sizeof *cl);
	r->nclusters = ncl;
	free(cl);
	free(cover);
	free(covered);
	free(d.name);
	free(d.nfail);
	free(d.nok);
	return 0;
}

void mine_free(MineResult *r)
{
	arena_free(&r->arena);
	memset(r, 0, sizeof *r);
}

/* ---- printing ---- */

static void verdict_mix(StrBuf *b, const int *v)
{
	bool first = true;
	for (int k = 1; k < STORE_NVERDICT; k++)
		if (v[k]) {
			sb_printf(b, "%s%s %d", first ? "" : ", ", store_verdict_name((StoreVerdict)k), v[k]);
			first = false;
		}
}

static void one_line(StrBuf *b, const char *s, int max)
{
	int n = 0;
	for (const char *p = s ? s : ""; *p && n < max; p++, n++)
		sb_putc(b, (unsigned char)*p < ' ' ? ' ' : *p);
	if (s && (int)strlen(s) > max)
		sb_puts(b, "...");
}

void mine_print(StrBuf *b, const MineResult *r, StoreFormat fmt)
{
	int ex = 3;
	if (fmt == STORE_FMT_JSON) {
		sb_printf(b, "{\"schema\":\"cake-mine/1\",\"items\":%d,\"failures\":%d,\"ok\":%d,\"unfeatured\":%d,"
		             "\"unexplained\":%d,\"max_ok_freq\":%g,\"clusters\":[",
		          r->nitems, r->nfail, r->nok, r->nunfeatured, r->unexplained, r->max_ok_freq);
		for (int c = 0; c < r->nclusters; c++) {
			const MineCluster *k = &r->clusters[c];
			sb_printf(b, "%s{\"id\":%d,\"key\":", c ? "," : "", c + 1);
			sb_json_str(b, k->key);
			sb_puts(b, ",\"rule_family\":");
			sb_json_str(b, k->family);
			sb_puts(b, ",\"what\":");
			sb_json_str(b, k->what);
			sb_printf(b, ",\"size\":%d,\"verdicts\":{", k->nmembers);
			bool first = true;
			for (int v = 1; v < STORE_NVERDICT; v++)
				if (k->verdicts[v]) {
					sb_printf(b, "%s\"%s\":%d", first ? "" : ",", store_verdict_name((StoreVerdict)v), k->verdicts[v]);
					first = false;
				}
			sb_puts(b, "},\"shared\":[");
			for (int s = 0; s < k->nshared; s++) {
				const MineShared *f = &k->shared[s];
				sb_puts(b, s ? ",{\"feature\":" : "{\"feature\":");
				sb_json_str(b, f->feature);
				sb_puts(b, ",\"rule_family\":");
				sb_json_str(b, f->family);
				sb_printf(b, ",\"failures\":%d,\"ok\":%d,\"fail_freq\":%.4f,\"ok_freq\":%.4f}", f->fail_n, f->ok_n,
				          f->fail_freq, f->ok_freq);
			}
			sb_puts(b, "],\"examples\":[");
			for (int m = 0; m < k->nmembers && m < ex; m++) {
				const MineItem *it = &r->items[k->members[m]];
				sb_puts(b, m ? ",{\"candidate\":" : "{\"candidate\":");
				sb_json_str(b, it->cand);
				sb_puts(b, ",\"kernel\":");
				sb_json_str(b, it->kernel);
				sb_puts(b, ",\"shape\":");
				sb_json_str(b, it->shape);
				sb_puts(b, ",\"verdict\":");
				sb_json_str(b, store_verdict_name(it->verdict));
				sb_printf(b, ",\"eval\":%lld,\"message\":", (long long)it->eval);
				if (it->message)
					sb_json_str(b, it->message);
				else
					sb_puts(b, "null");
				sb_puts(b, "}");
			}
			sb_printf(b, "],\"caught_now\":%d,\"caught_by\":", k->caught_now);
			sb_json_str(b, k->caught_rules);
			sb_puts(b, "}");
		}
		sb_puts(b, "]}\n");
		return;
	}
	sb_printf(b, "cake mine: %d work item%s ran on a GPU: %d failed (hang, fault, mismatch, launch_error), %d ok", r->nitems,
	          r->nitems == 1 ? "" : "s", r->nfail, r->nok);
	if (r->nunfeatured)
		sb_printf(b, "; %d without features (no Plan even without the verifier)", r->nunfeatured);
	sb_printf(b, "\n  features from each candidate's Plan, derived without the verifier; a shared feature is held by "
	             "every failure of its cluster and by at most %.0f%% of the ok runs\n", r->max_ok_freq * 100);
	for (int c = 0; c < r->nclusters; c++) {
		const MineCluster *k = &r->clusters[c];
		sb_printf(b, "cluster %d: %d failure%s (", c + 1, k->nmembers, k->nmembers == 1 ? "" : "s");
		verdict_mix(b, k->verdicts);
		sb_printf(b, ") sharing %s -> rule family %s\n", k->key, k->family);
		sb_printf(b, "  %s\n", k->what);
		sb_printf(b, "  %-34s %14s %14s  %s\n", "shared feature", "failures", "ok runs", "rule family");
		for (int s = 0; s < k->nshared; s++) {
			const MineShared *f = &k->shared[s];
			char fa[32], ok[32];
			snprintf(fa, sizeof fa, "%d/%d %3.0f%%", f->fail_n, r->nfail, f->fail_freq * 100);
			snprintf(ok, sizeof ok, "%d/%d %3.0f%%", f->ok_n, r->nok, f->ok_freq * 100);
			sb_printf(b, "  %-34s %14s %14s  %s\n", f->feature, fa, ok, f->family);
		}
		sb_puts(b, "  examples:\n");
		for (int m = 0; m < k->nmembers && m < ex; m++) {
			const MineItem *it = &r->items[k->members[m]];
			sb_printf(b, "    %.12s %s %s  %s: ", it->cand, it->kernel, it->shape[0] ? it->shape : "-",
			          store_verdict_name(it->verdict));
			one_line(b, it->message, 100);
			sb_putc(b, '\n');
		}
		if (k->caught_now)
			sb_printf(b, "  today's harness blocks %d of %d (%s)%s\n", k->caught_now, k->nmembers, k->caught_rules,
			          k->caught_now == k->nmembers ? ": the check exists now" : ": the rest need a check");
		else
			sb_printf(b, "  today's harness blocks none of them: a %s check is missing\n", k->family);
	}
	if (!r->nfail)
		sb_puts(b, "no GPU failure to mine\n");
	else if (r->unexplained)
		sb_printf(b, "unexplained: %d failure%s share no feature that is rare among the ok runs\n", r->unexplained,
		          r->unexplained == 1 ? "" : "s");
}
