/*
 * eval.c — one candidate, checked, ranked, built, run and recorded (eval.h).
 *
 * The store is the memory: a verdict once recorded for a (candidate,
 * kernel, shape, harness) is served again instead of re-run, and a claim
 * keeps two processes from evaluating the same work item. A dry run is not
 * a verdict about the kernel (store_verdict_conclusive says so), so dry-run
 * results are looked up separately: a second dry run of the same item is
 * served from the first.
 *
 * NVRTC and fork: the GPU path must not compile in this process (the forked
 * child's cuInit would then fail), so the unit is lowered here and the
 * runner's child calls the pipeline's jit stage; the dry-run path forks
 * nothing and compiles here.
 */
#include "eval.h"
#include "tactics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

EvalRequest eval_request(void)
{
	EvalRequest r;
	memset(&r, 0, sizeof r);
	r.run = run_options();
	r.origin = "human";
	return r;
}

StoreHarness eval_harness(const char *tactics)
{
	return (StoreHarness){CAKE_VERSION, verifier_version(), rank_model_version(), tactics ? tactics : tactics_version()};
}

void eval_verifier_version(const char *const *skip_rules, char *buf, size_t n)
{
	StrBuf b = {0};
	sb_puts(&b, verifier_version());
	for (int i = 0; skip_rules && skip_rules[i]; i++)
		sb_printf(&b, "%s%s", i ? "," : "-without:", skip_rules[i]);
	snprintf(buf, n, "%s", sb_str(&b));
	sb_free(&b);
}

bool eval_bind_shape(const Kernel *k, const char *shape, long long *dimvals, char *err, size_t n)
{
	for (int d = 0; d < k->ndims; d++)
		dimvals[d] = 0;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", shape ? shape : "");
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		if (!eq) {
			snprintf(err, n, "shape entry '%s' is not NAME=VALUE", t);
			return false;
		}
		*eq = 0;
		long long v = strtoll(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v < 1) {
			snprintf(err, n, "dim %s must be a positive integer, got '%s'", t, eq + 1);
			return false;
		}
		int d = 0;
		while (d < k->ndims && strcmp(k->dims[d], t))
			d++;
		if (d == k->ndims) {
			snprintf(err, n, "'%s' is not a dim of kernel '%s'", t, k->name);
			return false;
		}
		dimvals[d] = v;
	}
	StrBuf miss = {0};
	for (int d = 0; d < k->ndims; d++)
		if (!dimvals[d])
			sb_printf(&miss, "%s%s", miss.len ? ", " : "", k->dims[d]);
	if (miss.len) {
		snprintf(err, n, "the shape must bind every dim of kernel '%s': missing %s", k->name, sb_str(&miss));
		sb_free(&miss);
		return false;
	}
	return true;
}

char *eval_canonical(SourceSet *ss, const char *name, const char *text, size_t len)
{
	CakeOptions po = cake_options(CAKE_PARSE);
	CakeUnit pu;
	DiagList scratch = {0};
	cake_compile_text(&pu, ss, &scratch, name, text, len, &po);
	StrBuf canon = {0};
	if (!scratch.nerr)
		print_program(&canon, pu.prog);
	else
		sb_putn(&canon, text, len);
	cake_unit_free(&pu);
	diag_free(&scratch);
	char *r = xstrdup(sb_str(&canon));
	sb_free(&canon);
	return r;
}

static StoreVerdict from_run(RunVerdict v)
{
	switch (v) {
	case RUN_OK: return STORE_V_OK;
	case RUN_MISMATCH: return STORE_V_MISMATCH;
	case RUN_HANG: return STORE_V_HANG;
	case RUN_FAULT: return STORE_V_FAULT;
	case RUN_COMPILE_ERROR: return STORE_V_COMPILE_ERROR;
	case RUN_LAUNCH_ERROR: return STORE_V_LAUNCH_ERROR;
	case RUN_REFUSED: return STORE_V_REFUSED;
	case RUN_NO_GPU: return STORE_V_NO_GPU;
	default: return STORE_V_INTERNAL_ERROR;
	}
}

/* The first error finding as one line (for the evaluation's message). */
static void first_error(const DiagList *dl, int from, char *out, size_t n)
{
	for (int i = from; i < dl->n; i++)
		if (dl->items[i]->sev == SEV_ERROR) {
			snprintf(out, n, "%s: %s", dl->items[i]->rule, dl->items[i]->msg);
			return;
		}
	snprintf(out, n, "the compile failed");
}

typedef struct Compile {
	CakeUnit *u;
	CakeOptions o;
} Compile;

static int compile_in_child(void *ctx, JitResult *out, char *err, size_t n)
{
	Compile *c = ctx;
	int rc = cake_jit(c->u, &c->o);
	*out = c->u->jit;
	snprintf(err, n, "%s", c->u->error);
	return rc == GPU_EXIT_NO_DRIVER ? JIT_NO_NVRTC : rc ? JIT_COMPILE_ERROR : JIT_OK;
}

/* Serve a recorded evaluation into res. */
static void serve(EvalResult *res, const StoreEval *e)
{
	res->cached = true;
	res->eval_id = e->id;
	res->verdict = e->verdict;
	snprintf(res->message, sizeof res->message, "%s", e->message ? e->message : "");
	res->median_us = e->median_us, res->min_us = e->min_us, res->max_us = e->max_us;
	res->rel_err = e->rel_err, res->gpu_s = 0;
	if (!isnan(e->predicted_us)) {
		res->has_pred = true;
		res->pred.us = e->predicted_us;
	}
	snprintf(res->device, sizeof res->device, "%s", e->gpu ? e->gpu : "");
}

/* An earlier result for the item: a conclusive verdict, or (dry runs) a dry run. */
static bool lookup(const EvalRequest *req, const StoreHarness *h, EvalResult *res)
{
	Arena a;
	arena_init(&a);
	StoreEval e;
	bool found = store_find_eval(req->store, res->cand, res->kernel, res->shape, h, &a, &e) == STORE_OK;
	if (!found && req->dry_run) {
		StrBuf key = {0};
		store_harness_key(h, &key);
		StoreFilter f = {.cand = res->cand, .kernel = res->kernel, .shape = res->shape, .verdict = "dry_run",
		                 .harness = sb_str(&key), .limit = 1};
		StoreEval *v;
		int n = 0;
		if (store_list_evals(req->store, &f, &a, &v, &n) == STORE_OK && n > 0) {
			e = v[0];
			found = true;
		}
		sb_free(&key);
	}
	if (found)
		serve(res, &e);
	arena_free(&a);
	return found;
}

EvalStatus eval_candidate(const EvalRequest *req, SourceSet *ss, EvalResult *res)
{
	memset(res, 0, sizeof *res);
	DiagList *dl = &res->diags;
	res->median_us = res->min_us = res->max_us = res->rel_err = NAN;
	StoreHarness h = eval_harness(req->tactics);
	char vver[256];
	eval_verifier_version(req->skip_rules, vver, sizeof vver);
	h.verifier = vver;
	char owner[256];
	snprintf(owner, sizeof owner, "%s", req->worker ? req->worker : "");
	if (!owner[0])
		store_default_owner(owner, sizeof owner);

	/* 1. canonical text */
	res->canonical = eval_canonical(ss, req->name ? req->name : "<candidate>", req->text, req->len);
	store_hash_text(res->canonical, res->cand);

	/* 2. compile up to the lowering (its findings are the evaluation's) */
	int from = 0;
	CakeOptions co = cake_options(CAKE_LOWER);
	co.kernel = req->kernel;
	co.skip_rules = req->skip_rules;
	CakeUnit u;
	cake_compile_text(&u, ss, dl, req->name ? req->name : "<candidate>", res->canonical, strlen(res->canonical), &co);
	for (int i = from; i < dl->n; i++) {
		res->nerr += dl->items[i]->sev == SEV_ERROR;
		res->nwarn += dl->items[i]->sev == SEV_WARNING;
	}
	EvalStatus st = EVAL_DONE;
	const Kernel *k = NULL;
	if (u.nkernels > 1) {
		snprintf(res->message, sizeof res->message, "the candidate holds %d kernels; name one (--kernel)", u.nkernels);
		st = res->status = EVAL_BAD_REQUEST;
		goto out;
	}
	if (u.nkernels == 0 && u.failed == CAKE_PARSE && !dl->nerr) {
		snprintf(res->message, sizeof res->message, "%s", u.error[0] ? u.error : "the candidate holds no kernel");
		st = res->status = EVAL_BAD_REQUEST;
		goto out;
	}
	if (u.nkernels == 1) {
		k = u.kernels[0];
		snprintf(res->kernel, sizeof res->kernel, "%s", k->name);
		if (k->family && k->family->name)
			snprintf(res->family, sizeof res->family, "%s", k->family->name);
	} else {
		snprintf(res->kernel, sizeof res->kernel, "%s", req->kernel ? req->kernel : "?");
	}
	StrBuf sh = {0};
	if (store_shape_canon(req->shape ? req->shape : "", &sh) != STORE_OK) {
		snprintf(res->message, sizeof res->message, "the shape '%s' is not NAME=VALUE,...", req->shape ? req->shape : "");
		sb_free(&sh);
		st = res->status = EVAL_BAD_REQUEST;
		goto out;
	}
	snprintf(res->shape, sizeof res->shape, "%s", sb_str(&sh));
	sb_free(&sh);
	long long dims[LAUNCH_MAX_DIMS] = {0};
	bool sema_done = k && k->sema_ok;
	if (sema_done && !eval_bind_shape(k, res->shape, dims, res->message, sizeof res->message)) {
		st = res->status = EVAL_BAD_REQUEST;
		goto out;
	}

	/* 3. the store: the candidate, an earlier verdict, the claim */
	bool claimed = false;
	if (req->store) {
		StoreCandidate c = {.text = res->canonical, .family = res->family[0] ? res->family : NULL,
		                    .parent = req->parent, .origin = req->origin ? req->origin : "human"};
		if (store_add_candidate(req->store, &c, NULL, NULL) != STORE_OK) {
			snprintf(res->message, sizeof res->message, "%s", store_errmsg(req->store));
			st = res->status = EVAL_STORE_ERROR;
			goto out;
		}
		if (!req->force && lookup(req, &h, res))
			goto out;
		StoreStatus cs = store_claim(req->store, res->cand, res->kernel, res->shape, &h, owner, STORE_LEASE_MS);
		if (cs == STORE_BUSY) {
			snprintf(res->message, sizeof res->message, "another process is evaluating this candidate at this shape");
			st = res->status = EVAL_BUSY;
			goto out;
		}
		if (cs == STORE_ALREADY_DONE && !req->force && lookup(req, &h, res))
			goto out;
		if (cs != STORE_CLAIMED && cs != STORE_ALREADY_DONE) {
			snprintf(res->message, sizeof res->message, "%s", store_errmsg(req->store));
			st = res->status = EVAL_STORE_ERROR;
			goto out;
		}
		claimed = cs == STORE_CLAIMED;
		/* another process may have recorded the item between the lookup and
		 * the claim (a dry run is not conclusive, so the claim does not see it) */
		if (claimed && !req->force && lookup(req, &h, res)) {
			store_release(req->store, res->cand, res->kernel, res->shape, &h, owner);
			goto out;
		}
	}

	/* 4. the verdict */
	const Family *fam = family_of_kernel(k);
	RunReport rep;
	memset(&rep, 0, sizeof rep);
	if (u.failed != CAKE_STAGE_NONE && u.failed <= CAKE_VERIFY) {
		res->verdict = STORE_V_REJECTED;
		first_error(dl, from, res->message, sizeof res->message);
	} else if (u.failed != CAKE_STAGE_NONE) {
		res->verdict = STORE_V_REFUSED;
		first_error(dl, from, res->message, sizeof res->message);
	} else {
		RunJob j;
		memset(&j, 0, sizeof j);
		j.plan = u.plans[0];
		j.k = k;
		j.fam = fam;
		memcpy(j.dimvals, dims, sizeof dims);
		j.o = req->run;
		j.scalars = family_scalars(fam, k);
		char err[1024] = "";
		if (run_refusal(&j, err, sizeof err) == RUN_REFUSED) {
			res->verdict = STORE_V_REFUSED;
			snprintf(res->message, sizeof res->message, "%s", err);
		} else {
			res->has_pred = rank_predict(j.plan, dims, fam, &res->pred);
			if (req->dry_run && req->no_jit) {
				res->verdict = STORE_V_DRY_RUN;
				snprintf(res->message, sizeof res->message, "screened: checked, ranked and lowered; not compiled or run");
			} else if (req->dry_run) {
				CakeOptions jo = cake_options(CAKE_JIT);
				int rc = cake_jit(&u, &jo);
				if (rc == GPU_EXIT_NO_DRIVER) {
					res->verdict = STORE_V_DRY_RUN;
					snprintf(res->message, sizeof res->message, "dry run: checked, ranked and lowered; NVRTC not found, so not "
					         "compiled");
				} else if (rc) {
					res->verdict = dl->nerr > 0 ? STORE_V_REFUSED : STORE_V_COMPILE_ERROR;
					if (dl->n > from)
						first_error(dl, from, res->message, sizeof res->message);
					else
						snprintf(res->message, sizeof res->message, "%s", u.error);
				} else {
					res->verdict = STORE_V_DRY_RUN;
					snprintf(res->message, sizeof res->message, "dry run: checked, ranked and compiled (%d registers, %d bytes "
					         "spilled); not run", u.jit.nkern ? u.jit.kern[0].regs : 0,
					         u.jit.nkern ? u.jit.kern[0].spill_stores : 0);
				}
			} else {
				Compile cc = {&u, cake_options(CAKE_JIT)};
				j.compile = compile_in_child;
				j.compile_ctx = &cc;
				StrBuf story = {0};
				RunVerdict v = run_driver_present() ? run_isolated(&j, &rep, &story, err, sizeof err) : RUN_NO_GPU;
				if (v == RUN_NO_GPU && !err[0])
					snprintf(err, sizeof err, "%s", gpu_no_driver_msg());
				res->verdict = from_run(v);
				/* A kernel that spills was refused by the jit stage in the child; its
				 * CK-LOW-014 findings are rebuilt here from the ptxas report that came
				 * back, so that the store keeps them, and the verdict is `refused`,
				 * as on the dry-run path. */
				if (v == RUN_COMPILE_ERROR && cake_spill_findings(&u, dl, rep.kern, rep.nkern) > 0)
					res->verdict = STORE_V_REFUSED;
				StrBuf m = {0};
				sb_printf(&m, "%s%s%s", err, story.len ? "; " : "", sb_str(&story));
				snprintf(res->message, sizeof res->message, "%.*s", (int)sizeof res->message - 1, sb_str(&m));
				sb_free(&m);
				sb_free(&story);
				if (rep.iters)
					res->median_us = rep.med_us, res->min_us = rep.min_us, res->max_us = rep.max_us;
				if (rep.checked)
					res->rel_err = rep.fam.rel_err;
				res->gpu_s = rep.gpu_seconds;
				snprintf(res->device, sizeof res->device, "%s", rep.device);
			}
		}
		free(j.scalars);
	}

	/* 5. record */
	if (req->store) {
		StoreEval e;
		store_eval_init(&e);
		char drv[32] = "";
		if (rep.driver_version)
			snprintf(drv, sizeof drv, "%d.%d", rep.driver_version / 1000, rep.driver_version % 1000 / 10);
		e.cand = res->cand;
		e.kernel = res->kernel;
		e.shape = res->shape;
		e.seed = req->run.seed;
		e.target = k ? target_name(k->target) : NULL;
		e.gpu = res->device[0] ? res->device : NULL;
		e.driver = drv[0] ? drv : NULL;
		e.harness = h;
		e.verdict = res->verdict;
		e.message = res->message[0] ? res->message : NULL;
		e.predicted_us = res->has_pred ? res->pred.us : NAN;
		e.median_us = res->median_us, e.min_us = res->min_us, e.max_us = res->max_us;
		e.rel_err = res->rel_err;
		e.gpu_s = res->gpu_s;
		e.campaign = req->campaign;
		e.worker = owner;
		StoreStatus ss2 = store_add_eval(req->store, &e, ss, dl->n ? dl : NULL, &res->eval_id);
		if (ss2 != STORE_OK) {
			snprintf(res->message, sizeof res->message, "%s", store_errmsg(req->store));
			st = res->status = EVAL_STORE_ERROR;
			if (claimed)
				store_release(req->store, res->cand, res->kernel, res->shape, &h, owner);
		}
	}
out:
	cake_unit_free(&u);
	return st;
}

void eval_result_free(EvalResult *res)
{
	free(res->canonical);
	res->canonical = NULL;
	diag_free(&res->diags);
}
