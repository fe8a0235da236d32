/*
 * gate_store.c — rule impact on the store's real history (gate.h):
 * gate_judge, gate_store, gate_trace.
 *
 * A work item is (candidate, kernel, shape). Its evaluations each say what
 * the harness that judged them decided before any GPU run, their *old
 * outcome*: `rejected` (verdict rejected; the rule is the first error among
 * its stored findings), `refused` (verdict refused: the lowering, the
 * domain, the launch layer or the family), or `accepted` (every other
 * verdict: the candidate got past both and was compiled, run, or dry-run).
 * The current harness judges the item once (gate_judge: the pipeline to
 * the lowering, then run_refusal at the shape; no NVRTC, no GPU), its *new
 * outcome*. Each distinct old outcome (with its rule) that differs from the
 * new one is an impact row, charged to a rule and classified by the item's
 * worst GPU verdict over all its evaluations (hang > fault > mismatch >
 * launch_error > ok):
 *
 *   accepted -> rejected/refused   true_positive when the item had failed on
 *                                  the GPU, false_positive when it had run ok,
 *                                  unrun when it never ran;
 *   rejected/refused -> accepted   newly_accepted (a rule relaxed or fixed);
 *   blocked -> blocked otherwise   rule_changed.
 *
 * Two things are out of the judge's reach and are not compared: refusals
 * found by NVRTC itself (CK-LOW-014 spills, seen by a dry run's compile), and
 * nothing at all about GPU behaviour, which only the recorded verdicts know.
 * An impact row whose old evaluation carries the current harness key means
 * the harness changed its decisions without changing its version (the
 * verifier version hashes rule IDs and versions only): it is flagged, since
 * the dedup of work items relies on that version.
 */
#include "gate.h"

#include <stdlib.h>
#include <string.h>

void gate_judge(const char *text, const char *kernel, const char *shape, GateJudgement *out)
{
	memset(out, 0, sizeof *out);
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	CakeOptions o = cake_options(CAKE_LOWER);
	o.kernel = kernel;
	cake_compile_text(&u, &ss, &dl, "<stored candidate>", text, strlen(text), &o);
	const Diag *first = NULL;
	for (int i = 0; i < dl.n && !first; i++)
		if (dl.items[i]->sev == SEV_ERROR)
			first = dl.items[i];
	if (u.failed != CAKE_STAGE_NONE || u.nkernels != 1) {
		out->outcome = u.failed == CAKE_STAGE_NONE || u.failed <= CAKE_VERIFY ? STORE_OUT_REJECTED : STORE_OUT_REFUSED;
		if (first) {
			snprintf(out->rule, sizeof out->rule, "%s", first->rule ? first->rule : "");
			snprintf(out->message, sizeof out->message, "%s: %s", first->rule ? first->rule : "?", first->msg);
		} else
			snprintf(out->message, sizeof out->message, "%.500s", u.error[0] ? u.error : "the compile failed");
	} else {
		const Kernel *k = u.kernels[0];
		long long dims[LAUNCH_MAX_DIMS] = {0};
		char err[512] = "";
		RunJob j;
		memset(&j, 0, sizeof j);
		if (!eval_bind_shape(k, shape, dims, err, sizeof err)) {
			out->outcome = STORE_OUT_REFUSED;
		} else {
			j.plan = u.plans[0];
			j.k = k;
			j.fam = family_of_kernel(k);
			memcpy(j.dimvals, dims, sizeof dims);
			j.o = run_options();
			out->outcome = run_refusal(&j, err, sizeof err) == RUN_REFUSED ? STORE_OUT_REFUSED : STORE_OUT_ACCEPTED;
		}
		if (out->outcome != STORE_OUT_ACCEPTED)
			snprintf(out->message, sizeof out->message, "%s", err);
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
}

/* ---- old outcomes ---- */

/* The old outcome of e and its rule (in a); STORE_OUT_NONE when the judge cannot compare it. */
static StoreOutcome old_outcome(Store *st, const StoreEval *e, Arena *a, const char **rule)
{
	*rule = NULL;
	if (e->verdict != STORE_V_REJECTED && e->verdict != STORE_V_REFUSED)
		return e->verdict == STORE_V_NONE ? STORE_OUT_NONE : STORE_OUT_ACCEPTED;
	StoreDiag *d = NULL;
	int n = 0;
	if (store_eval_diags(st, e->id, a, &d, &n) == STORE_OK)
		for (int i = 0; i < n && !*rule; i++)
			if (d[i].sev == SEV_ERROR)
				*rule = d[i].rule;
	if (!*rule && e->message && strncmp(e->message, "CK-", 3) == 0) {   /* "CK-XXX-NNN: message" */
		size_t k = strcspn(e->message, ":");
		*rule = arena_strndup(a, e->message, k);
	}
	if (e->verdict == STORE_V_REFUSED && *rule && strcmp(*rule, "CK-LOW-014") == 0)
		return STORE_OUT_NONE;   /* spills: NVRTC's finding, beyond the judge */
	return e->verdict == STORE_V_REJECTED ? STORE_OUT_REJECTED : STORE_OUT_REFUSED;
}

static bool same_str(const char *a, const char *b)
{
	if (!a || !*a)
		return !b || !*b;
	return b && strcmp(a, b) == 0;
}

static int cmp_rule(const void *x, const void *y)
{
	const GateRuleImpact *a = x, *b = y;
	if (!a->rule || !b->rule)
		return (a->rule == NULL) - (b->rule == NULL);
	return strcmp(a->rule, b->rule);
}

static GateRuleImpact *rule_slot(GateImpact *g, const char *rule, int *cap)
{
	for (int i = 0; i < g->nrules; i++)
		if (same_str(g->rules[i].rule, rule))
			return &g->rules[i];
	if (g->nrules == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		g->rules = xrealloc(g->rules, (size_t)*cap * sizeof *g->rules);
	}
	GateRuleImpact *r = &g->rules[g->nrules++];
	memset(r, 0, sizeof *r);
	r->rule = rule && *rule ? rule : NULL;
	return r;
}

int gate_store(Store *st, bool record, GateImpact *g, char *err, size_t n)
{
	memset(g, 0, sizeof *g);
	arena_init(&g->arena);
	Arena *a = &g->arena;
	StoreEval *ev = NULL;
	int ne = 0;
	StoreStatus s = store_list_evals(st, NULL, a, &ev, &ne);
	if (s != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		return 2;
	}
	g->evals = ne;
	qsort(ev, (size_t)ne, sizeof *ev, store_eval_cmp_item);
	StoreHarness h = eval_harness(NULL);
	StrBuf key = {0};
	store_harness_key(&h, &key);
	const char *cur_key = arena_strdup(a, sb_str(&key));
	sb_free(&key);
	g->run.harness = h;
	g->run.harness_key = cur_key;
	char owner[256];
	store_default_owner(owner, sizeof owner);
	g->run.worker = arena_strdup(a, owner);
	int cap = 0, rcap = 0;
	const char *text_of = NULL, *text = NULL;
	for (int i = 0; i < ne;) {
		int j = i;
		while (j < ne && !strcmp(ev[j].cand, ev[i].cand) && !strcmp(ev[j].kernel, ev[i].kernel) &&
		       !strcmp(ev[j].shape, ev[i].shape))
			j++;
		/* one work item: ev[i .. j), oldest first */
		if (!text_of || strcmp(text_of, ev[i].cand) != 0) {
			StoreCandidate c;
			if ((s = store_get_candidate(st, ev[i].cand, a, &c)) != STORE_OK) {
				snprintf(err, n, "%s", store_errmsg(st));
				return 2;
			}
			text = c.text;
			text_of = ev[i].cand;
		}
		g->run.items++;
		GateJudgement now;
		gate_judge(text, ev[i].kernel, ev[i].shape, &now);
		StoreVerdict gpu = STORE_V_NONE;
		for (int k = i; k < j; k++)
			if (store_gpu_rank(ev[k].verdict) > store_gpu_rank(gpu))
				gpu = ev[k].verdict;
		/* each distinct old outcome, newest evaluation first */
		StoreOutcome seen_o[16];
		const char *seen_r[16];
		int nseen = 0;
		for (int k = j - 1; k >= i; k--) {
			const char *orule;
			StoreOutcome oo = old_outcome(st, &ev[k], a, &orule);
			if (oo == STORE_OUT_NONE)
				continue;
			bool dup = false;
			for (int q = 0; q < nseen && !dup; q++)
				dup = seen_o[q] == oo && same_str(seen_r[q], orule);
			if (dup || nseen == 16)
				continue;
			seen_o[nseen] = oo;
			seen_r[nseen++] = orule;
			if (oo == now.outcome && same_str(orule, now.rule))
				continue;
			if (g->n == cap) {
				cap = cap ? cap * 2 : 16;
				g->rows = xrealloc(g->rows, (size_t)cap * sizeof *g->rows);
			}
			StoreImpact *r = &g->rows[g->n++];
			memset(r, 0, sizeof *r);
			r->cand = ev[k].cand;
			r->kernel = ev[k].kernel;
			r->shape = ev[k].shape;
			r->eval = ev[k].id;
			r->old_harness = ev[k].harness_key;
			r->old_outcome = oo;
			r->old_rule = orule;
			r->new_outcome = now.outcome;
			r->new_rule = now.rule[0] ? arena_strdup(a, now.rule) : NULL;
			r->gpu_verdict = gpu;
			r->message = now.message[0] ? arena_strdup(a, now.message) : NULL;
			if (oo == STORE_OUT_ACCEPTED) {
				r->rule = r->new_rule;
				r->impact = store_gpu_rank(gpu) > 1 ? STORE_IMP_TRUE_POSITIVE
				          : gpu == STORE_V_OK ? STORE_IMP_FALSE_POSITIVE : STORE_IMP_UNRUN;
			} else if (now.outcome == STORE_OUT_ACCEPTED) {
				r->rule = orule;
				r->impact = STORE_IMP_NEWLY_ACCEPTED;
			} else {
				r->rule = r->new_rule;
				r->impact = STORE_IMP_RULE_CHANGED;
			}
			if (r->old_harness && !strcmp(r->old_harness, cur_key))
				g->same_harness++;
			GateRuleImpact *ri = rule_slot(g, r->rule, &rcap);
			switch (r->impact) {
			case STORE_IMP_TRUE_POSITIVE: ri->tp++, g->tp++; break;
			case STORE_IMP_FALSE_POSITIVE: ri->fp++, g->fp++; break;
			case STORE_IMP_UNRUN: ri->unrun++, g->unrun++; break;
			case STORE_IMP_NEWLY_ACCEPTED: ri->accepted++, g->accepted++; break;
			default: ri->changed++, g->changed++; break;
			}
		}
		i = j;
	}
	if (g->nrules > 1)
		qsort(g->rules, (size_t)g->nrules, sizeof *g->rules, cmp_rule);
	/* the rows live in the arena like everything else */
	StoreImpact *rows = arena_alloc(a, (size_t)(g->n ? g->n : 1) * sizeof *rows);
	if (g->n)
		memcpy(rows, g->rows, (size_t)g->n * sizeof *rows);
	free(g->rows);
	g->rows = rows;
	GateRuleImpact *rules = arena_alloc(a, (size_t)(g->nrules ? g->nrules : 1) * sizeof *rules);
	if (g->nrules)
		memcpy(rules, g->rules, (size_t)g->nrules * sizeof *rules);
	free(g->rules);
	g->rules = rules;
	g->run.changed = g->n;
	if (record) {
		if (store_add_gate_run(st, &g->run, g->rows, g->n, &g->run.id) != STORE_OK) {
			snprintf(err, n, "%s", store_errmsg(st));
			return 2;
		}
		g->recorded = true;
		StoreGateRun *runs;
		int nr = 0;
		if (store_list_gate_runs(st, 1, a, &runs, &nr) == STORE_OK && nr == 1 && runs[0].id == g->run.id)
			g->run.time_ms = runs[0].time_ms;
	}
	return g->fp ? 1 : 0;
}

void gate_impact_free(GateImpact *g)
{
	arena_free(&g->arena);
	memset(g, 0, sizeof *g);
}

/* ---- printing ---- */

static void json_str_or_null(StrBuf *b, const char *s)
{
	if (s)
		sb_json_str(b, s);
	else
		sb_puts(b, "null");
}

/* "verifier=V" of a harness key, for short lines */
static void put_verifier(StrBuf *b, const char *key)
{
	const char *v = key ? strstr(key, "verifier=") : NULL;
	if (!v) {
		sb_puts(b, key ? key : "?");
		return;
	}
	sb_putn(b, v, strcspn(v, ";"));
}

static void outcome_text(StrBuf *b, StoreOutcome o, const char *rule)
{
	sb_puts(b, store_outcome_name(o));
	if (rule && *rule)
		sb_printf(b, " by %s", rule);
}

static void impact_json(StrBuf *b, const StoreImpact *r, const char *cur_key)
{
	sb_puts(b, "{\"candidate\":");
	sb_json_str(b, r->cand);
	sb_puts(b, ",\"kernel\":");
	sb_json_str(b, r->kernel);
	sb_puts(b, ",\"shape\":");
	sb_json_str(b, r->shape);
	sb_printf(b, ",\"eval\":%lld,\"old_harness\":", (long long)r->eval);
	json_str_or_null(b, r->old_harness);
	sb_puts(b, ",\"old_outcome\":");
	sb_json_str(b, store_outcome_name(r->old_outcome));
	sb_puts(b, ",\"old_rule\":");
	json_str_or_null(b, r->old_rule);
	sb_puts(b, ",\"new_outcome\":");
	sb_json_str(b, store_outcome_name(r->new_outcome));
	sb_puts(b, ",\"new_rule\":");
	json_str_or_null(b, r->new_rule);
	sb_puts(b, ",\"rule\":");
	json_str_or_null(b, r->rule);
	sb_puts(b, ",\"impact\":");
	sb_json_str(b, store_impact_name(r->impact));
	sb_puts(b, ",\"gpu_verdict\":");
	json_str_or_null(b, r->gpu_verdict ? store_verdict_name(r->gpu_verdict) : NULL);
	sb_puts(b, ",\"message\":");
	json_str_or_null(b, r->message);
	if (r->run) {
		sb_printf(b, ",\"run\":%lld,\"run_time\":\"", (long long)r->run);
		store_print_time(b, r->run_ms);
		sb_puts(b, "\",\"run_harness\":");
		json_str_or_null(b, r->run_harness);
	}
	if (cur_key)
		sb_printf(b, ",\"same_harness\":%s", r->old_harness && !strcmp(r->old_harness, cur_key) ? "true" : "false");
	sb_puts(b, "}");
}

void gate_impact_print(StrBuf *b, const GateImpact *g, StoreFormat fmt)
{
	if (fmt == STORE_FMT_JSON) {
		sb_printf(b, "{\"schema\":\"cake-gate-impact/1\",\"run\":{\"id\":%lld,\"recorded\":%s,\"harness\":",
		          (long long)g->run.id, g->recorded ? "true" : "false");
		sb_json_str(b, g->run.harness_key);
		sb_printf(b, ",\"items\":%d,\"evals\":%d},\"totals\":{\"true_positive\":%d,\"false_positive\":%d,"
		             "\"unrun\":%d,\"newly_accepted\":%d,\"rule_changed\":%d,\"same_harness\":%d},\"rules\":[",
		          g->run.items, g->evals, g->tp, g->fp, g->unrun, g->accepted, g->changed, g->same_harness);
		for (int i = 0; i < g->nrules; i++) {
			const GateRuleImpact *r = &g->rules[i];
			sb_puts(b, i ? ",{\"rule\":" : "{\"rule\":");
			json_str_or_null(b, r->rule);
			sb_printf(b, ",\"true_positive\":%d,\"false_positive\":%d,\"unrun\":%d,\"newly_accepted\":%d,"
			             "\"rule_changed\":%d}", r->tp, r->fp, r->unrun, r->accepted, r->changed);
		}
		sb_puts(b, "],\"changes\":[");
		for (int i = 0; i < g->n; i++) {
			if (i)
				sb_putc(b, ',');
			impact_json(b, &g->rows[i], g->run.harness_key);
		}
		sb_puts(b, "]}\n");
		return;
	}
	sb_printf(b, "cake gate --store: re-judged %d work item%s (%d evaluation%s) with ", g->run.items,
	          g->run.items == 1 ? "" : "s", g->evals, g->evals == 1 ? "" : "s");
	put_verifier(b, g->run.harness_key);
	sb_printf(b, " (%s)\n", g->run.harness_key);
	if (g->nrules) {
		sb_printf(b, "  %-14s %4s %4s %6s %9s %8s\n", "RULE", "TP", "FP", "UNRUN", "ACCEPTED", "CHANGED");
		for (int i = 0; i < g->nrules; i++) {
			const GateRuleImpact *r = &g->rules[i];
			sb_printf(b, "  %-14s %4d %4d %6d %9d %8d\n", r->rule ? r->rule : "(shape)", r->tp, r->fp, r->unrun,
			          r->accepted, r->changed);
		}
		sb_puts(b, "  TP: newly rejected, it had failed on the GPU; FP: newly rejected, it had run ok; UNRUN: newly\n"
		           "  rejected, never run; ACCEPTED: rejected before, accepted now; CHANGED: blocked by another rule\n");
	}
	for (int i = 0; i < g->n; i++) {
		const StoreImpact *r = &g->rows[i];
		sb_printf(b, "  %-14s %.12s %s %s: ", store_impact_name(r->impact), r->cand, r->kernel, r->shape[0] ? r->shape : "-");
		outcome_text(b, r->old_outcome, r->old_rule);
		sb_puts(b, " (evaluation ");
		sb_printf(b, "%lld, ", (long long)r->eval);
		put_verifier(b, r->old_harness);
		sb_puts(b, ") -> ");
		outcome_text(b, r->new_outcome, r->new_rule);
		sb_printf(b, "; GPU: %s", r->gpu_verdict ? store_verdict_name(r->gpu_verdict) : "never run");
		if (r->old_harness && !strcmp(r->old_harness, g->run.harness_key))
			sb_puts(b, " [same harness key: the harness changed without a version change]");
		sb_putc(b, '\n');
	}
	if (!g->n)
		sb_puts(b, "  no work item changes its outcome\n");
	if (g->recorded)
		sb_printf(b, "  recorded: gate run %lld\n", (long long)g->run.id);
	sb_printf(b, "gate --store: %d true positive%s, %d false positive%s, %d unrun, %d newly accepted, %d rule changed\n",
	          g->tp, g->tp == 1 ? "" : "s", g->fp, g->fp == 1 ? "" : "s", g->unrun, g->accepted, g->changed);
}

/* ---- trace ---- */

int gate_trace(Store *st, const char *cand, StrBuf *b, StoreFormat fmt, char *err, size_t n)
{
	Arena a;
	arena_init(&a);
	StoreCandidate c;
	StoreStatus s = store_get_candidate(st, cand, &a, &c);
	if (s != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		arena_free(&a);
		return s == STORE_NOT_FOUND || s == STORE_AMBIGUOUS ? 1 : 2;
	}
	StoreFilter f = {.cand = c.id};
	StoreEval *ev = NULL;
	StoreImpact *im = NULL;
	int ne = 0, ni = 0;
	if ((s = store_list_evals(st, &f, &a, &ev, &ne)) != STORE_OK ||
	    (s = store_list_impact(st, c.id, 0, &a, &im, &ni)) != STORE_OK) {
		snprintf(err, n, "%s", store_errmsg(st));
		arena_free(&a);
		return 2;
	}
	/* where it stands: the newest impact row of each work item */
	if (fmt == STORE_FMT_JSON) {
		sb_puts(b, "{\"schema\":\"cake-gate-trace/1\",\"candidate\":");
		sb_json_str(b, c.id);
		sb_puts(b, ",\"family\":");
		json_str_or_null(b, c.family);
		sb_puts(b, ",\"origin\":");
		json_str_or_null(b, c.origin);
		sb_puts(b, ",\"parent\":");
		json_str_or_null(b, c.parent);
		sb_puts(b, ",\"evaluations\":[");
		for (int i = ne - 1; i >= 0; i--) {
			store_eval_json(b, &ev[i]);
			if (i)
				sb_putc(b, ',');
		}
		sb_puts(b, "],\"gate_runs\":[");
		for (int i = 0; i < ni; i++) {
			if (i)
				sb_putc(b, ',');
			impact_json(b, &im[i], NULL);
		}
		sb_puts(b, "]}\n");
		arena_free(&a);
		return 0;
	}
	sb_printf(b, "candidate %s (family %s, origin %s, parent %s)\n", c.id, c.family ? c.family : "-", c.origin,
	          c.parent ? c.parent : "-");
	sb_printf(b, "evaluations (%d, oldest first):\n", ne);
	for (int i = ne - 1; i >= 0; i--) {
		const StoreEval *e = &ev[i];
		sb_printf(b, "  %lld  ", (long long)e->id);
		store_print_time(b, e->time_ms);
		sb_printf(b, "  %s %s  ", e->kernel, e->shape[0] ? e->shape : "-");
		put_verifier(b, e->harness_key);
		sb_printf(b, "  %s", store_verdict_name(e->verdict));
		if (e->message)
			sb_printf(b, ": %.160s", e->message);
		sb_putc(b, '\n');
	}
	sb_printf(b, "gate runs that changed its outcome (%d):\n", ni);
	for (int i = 0; i < ni; i++) {
		const StoreImpact *r = &im[i];
		sb_printf(b, "  run %lld  ", (long long)r->run);
		store_print_time(b, r->run_ms);
		sb_puts(b, "  ");
		put_verifier(b, r->run_harness);
		sb_printf(b, "  %s %s: ", r->kernel, r->shape[0] ? r->shape : "-");
		outcome_text(b, r->old_outcome, r->old_rule);
		sb_puts(b, " -> ");
		outcome_text(b, r->new_outcome, r->new_rule);
		sb_printf(b, " (%s; GPU: %s)\n", store_impact_name(r->impact),
		          r->gpu_verdict ? store_verdict_name(r->gpu_verdict) : "never run");
	}
	/* now: per work item, the newest row */
	bool any = false;
	for (int i = ni - 1; i >= 0; i--) {
		bool later = false;
		for (int j = i + 1; j < ni && !later; j++)
			later = !strcmp(im[j].kernel, im[i].kernel) && !strcmp(im[j].shape, im[i].shape);
		if (later)
			continue;
		any = true;
		const StoreImpact *r = &im[i];
		sb_printf(b, "now: %s %s is %s", r->kernel, r->shape[0] ? r->shape : "-", store_outcome_name(r->new_outcome));
		if (r->new_outcome != STORE_OUT_ACCEPTED)
			sb_printf(b, " (removed from the search by %s in gate run %lld, ", r->rule ? r->rule : "a shape refusal",
			          (long long)r->run);
		else
			sb_printf(b, " (let back in by gate run %lld, ", (long long)r->run);
		put_verifier(b, r->run_harness);
		sb_puts(b, ")\n");
	}
	if (!any)
		sb_puts(b, "now: no gate run changed its outcome\n");
	arena_free(&a);
	return 0;
}
