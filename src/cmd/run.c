/*
 * run.c — `cake run`: compile a Cake IR kernel, run it isolated on the GPU,
 * check it against its family's oracle and time it.
 *
 *   cake run FILE [NAME=VALUE ...] [--kernel NAME] [--seed N] [--timeout SEC]
 *            [--time] [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]
 *            [--format=text|json] [--debug-hang] [--no-verify] [--device N]
 *            [--dump-after=STAGE]
 *
 * NAME=VALUE binds a symbolic dim (M=8192) or a scalar parameter.
 *
 * The pipeline (cake_compile) runs in this process up to the lowering;
 * anything that fails up to here, or a shape the launch layer or the
 * kernel's family refuses, is reported without touching the GPU. The jit
 * stage (cake_jit) and the run happen in the isolated runner's child
 * (src/gpu/run.c). Without a driver, the kernel is still compiled here so
 * that compile errors are reported, then the command says that no GPU is
 * present (exit 69).
 *
 * The family comes from the kernel's `family` clause (src/family/); a
 * kernel without one runs with the poison checks only ("no oracle").
 */
#include "cmd.h"
#include "../gpu/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BIND 32

typedef struct RunArgs {
	const char *file;
	const char *bind_name[MAX_BIND];   /* points into argv; bind_len bytes */
	int bind_len[MAX_BIND];
	double bind_val[MAX_BIND];
	int nbind;
	bool json;
	RunOptions ro;
	CakeOptions co;
} RunArgs;

static int run_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake run: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake run FILE [NAME=VALUE ...] [--kernel NAME] [--seed N] [--timeout SEC] [--time]\n"
	                "                [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]\n"
	                "                [--format=text|json] [--debug-hang] [--no-verify] [--device N] [--dump-after=STAGE]\n");
	return 2;
}

/* True when binding b of a names `name`. */
static bool bind_is(const RunArgs *a, int b, const char *name)
{
	return (int)strlen(name) == a->bind_len[b] && !strncmp(a->bind_name[b], name, (size_t)a->bind_len[b]);
}

static int parse_args(int argc, char **argv, RunArgs *o)
{
	memset(o, 0, sizeof *o);
	o->ro = run_options();
	o->co = cake_options(CAKE_LOWER);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if ((v = cli_optval(argc, argv, &i, "--kernel", NULL)))
			o->co.kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--seed", NULL)))
			o->ro.seed = strtoull(v, NULL, 0);
		else if ((v = cli_optval(argc, argv, &i, "--timeout", NULL))) {
			o->ro.timeout_s = atof(v);
			if (o->ro.timeout_s <= 0)
				return run_usage("--timeout needs a positive number of seconds, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--iters", NULL))) {
			o->ro.iters = atoi(v);
			if (o->ro.iters < 1)
				return run_usage("--iters needs a positive count, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--warmup", NULL)))
			o->ro.warmup = atoi(v) < 0 ? 0 : atoi(v);
		else if ((v = cli_optval(argc, argv, &i, "--check-rows", NULL))) {
			o->ro.check_rows = atoi(v);
			if (o->ro.check_rows < 1)
				return run_usage("--check-rows needs a positive count, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--device", NULL)))
			o->ro.device = atoi(v);
		else if ((v = cli_optval(argc, argv, &i, "--format", NULL))) {
			if (!strcmp(v, "json"))
				o->json = true;
			else if (strcmp(v, "text"))
				return run_usage("unknown --format '%s' (text or json)", v);
		} else if ((v = cli_optval(argc, argv, &i, "--oracle", NULL))) {
			if (!strcmp(v, "none"))
				o->ro.no_oracle = true;
			else if (strcmp(v, "auto"))
				return run_usage("unknown --oracle '%s' (auto or none)", v);
		} else if ((v = cli_optval(argc, argv, &i, "--dump-after", NULL))) {
			if (!cake_stage_from(v, &o->co.dump_after) || o->co.dump_after > CAKE_LOWER)
				return run_usage("unknown stage '%s' for --dump-after (parse, sema, verify, derive or lower)", v);
		} else if (!strcmp(a, "--time"))
			o->ro.time = true;
		else if (!strcmp(a, "--debug-hang"))
			o->ro.debug_hang = o->co.debug_hang = true;
		else if (!strcmp(a, "--no-verify"))
			o->co.no_verify = true;
		else if (a[0] == '-' && a[1])
			return run_usage("unknown option '%s'", a);
		else if (strchr(a, '=')) {
			if (o->nbind >= MAX_BIND)
				return run_usage("too many NAME=VALUE bindings (at most 32): '%s'", a);
			const char *eq = strchr(a, '=');
			char *end;
			double val = strtod(eq + 1, &end);
			if (eq == a || *end || end == eq + 1)
				return run_usage("binding '%s' is not NAME=NUMBER", a);
			o->bind_name[o->nbind] = a;
			o->bind_len[o->nbind] = (int)(eq - a);
			o->bind_val[o->nbind++] = val;
		} else if (o->file)
			return run_usage("one FILE at a time (got a second: '%s')", a);
		else
			o->file = a;
	}
	if (!o->file)
		return run_usage("%s", "no input FILE");
	return 0;
}

/* Bind dims and scalars of k from the NAME=VALUE list; false after printing why. */
static bool bind(const RunArgs *o, const Kernel *k, RunJob *j)
{
	if (k->ndims > LAUNCH_MAX_DIMS) {
		fprintf(stderr, "cake run: kernel '%s' has %d dims; the runner supports %d\n", k->name, k->ndims, LAUNCH_MAX_DIMS);
		return false;
	}
	for (int b = 0; b < o->nbind; b++) {
		bool used = false;
		for (int d = 0; d < k->ndims; d++)
			if (bind_is(o, b, k->dims[d])) {
				if (o->bind_val[b] != floor(o->bind_val[b]) || o->bind_val[b] < 1) {
					fprintf(stderr, "cake run: dim %s must be a positive integer, got %g\n", k->dims[d], o->bind_val[b]);
					return false;
				}
				j->dimvals[d] = (long long)o->bind_val[b];
				used = true;
			}
		for (int i = 0; i < k->nparams; i++)
			if (k->params[i]->space != SP_GLOBAL && bind_is(o, b, k->params[i]->name)) {
				j->scalars[i] = o->bind_val[b];
				used = true;
			}
		if (!used) {
			fprintf(stderr, "cake run: '%.*s' is neither a dim nor a scalar parameter of kernel '%s'\n", o->bind_len[b],
			        o->bind_name[b], k->name);
			return false;
		}
	}
	StrBuf miss = {0};
	for (int d = 0; d < k->ndims; d++)
		if (!j->dimvals[d])
			sb_printf(&miss, "%s%s=...", miss.len ? " " : "", k->dims[d]);
	if (miss.len) {
		fprintf(stderr, "cake run: bind every dim of kernel '%s': missing %s\n", k->name, sb_str(&miss));
		sb_free(&miss);
		return false;
	}
	for (int i = 0; i < k->nparams; i++) {
		bool set = k->params[i]->space == SP_GLOBAL;
		for (int b = 0; !set && b < o->nbind; b++)
			set = bind_is(o, b, k->params[i]->name);
		if (!set) {
			fprintf(stderr, "cake run: scalar parameter '%s' needs a value: pass %s=NUMBER\n", k->params[i]->name,
			        k->params[i]->name);
			return false;
		}
	}
	return true;
}

/* The child's compile step: the pipeline's jit stage on the lowered unit. */
typedef struct Compile {
	CakeUnit *u;
	const CakeOptions *o;
} Compile;

static int compile_unit(void *ctx, JitResult *out, char *err, size_t n)
{
	Compile *c = ctx;
	int rc = cake_jit(c->u, c->o);
	*out = c->u->jit;
	snprintf(err, n, "%s", c->u->error);
	if (rc == GPU_EXIT_NO_DRIVER)
		return JIT_NO_NVRTC;
	return rc ? JIT_COMPILE_ERROR : JIT_OK;
}

/* ---- output ---- */

static void print_json(StrBuf *b, const RunArgs *o, const RunJob *j, const RunReport *r, RunVerdict v, const char *err,
                       const char *story)
{
	const Kernel *k = j->k;
	sb_puts(b, "{\"verdict\":");
	sb_json_str(b, run_verdict_name(v));
	sb_puts(b, ",\"kernel\":");
	sb_json_str(b, k ? k->name : "");
	sb_puts(b, ",\"family\":");
	if (j->fam)
		sb_json_str(b, j->fam->name);
	else
		sb_puts(b, "null");
	sb_puts(b, ",\"file\":");
	sb_json_str(b, o->file);
	sb_puts(b, ",\"dims\":{");
	for (int i = 0; k && i < k->ndims; i++)
		sb_printf(b, "%s\"%s\":%lld", i ? "," : "", k->dims[i], j->dimvals[i]);
	sb_printf(b, "},\"seed\":%llu", (unsigned long long)o->ro.seed);
	sb_puts(b, ",\"error\":");
	if (err && *err)
		sb_json_str(b, err);
	else
		sb_puts(b, "null");
	if (story && *story) {
		sb_puts(b, ",\"hang_story\":");
		sb_json_str(b, story);
	}
	if (r) {
		sb_puts(b, ",\"device\":");
		sb_json_str(b, r->device);
		sb_printf(b, ",\"launch\":{\"grid\":[%u,%u,%u],\"block\":%u,\"cluster\":[%u,%u,%u],\"smem_bytes\":%lld}", r->grid[0],
		          r->grid[1], r->grid[2], r->block, r->cluster[0], r->cluster[1], r->cluster[2], r->smem);
	}
	if (r && r->nkern)
		sb_printf(b, ",\"compile\":{\"regs\":%d,\"stack_bytes\":%d,\"spill_stores\":%d,\"spill_loads\":%d,\"cache_hit\":%s}",
		          r->kern[0].regs, r->kern[0].stack_bytes, r->kern[0].spill_stores, r->kern[0].spill_loads,
		          r->cache_hit ? "true" : "false");
	if (r && r->checked) {
		const FamReport *f = &r->fam;
		sb_puts(b, ",\"check\":{\"oracle\":");
		sb_json_str(b, f->oracle);
		sb_printf(b, ",\"rows\":%lld,\"rel_err\":", f->rows);
		if (isfinite(f->rel_err))
			sb_printf(b, "%.6e", f->rel_err);
		else
			sb_puts(b, "null");
		for (int i = 0; i < f->nfields; i++)
			sb_printf(b, ",\"%s\":%lld", f->fields[i].key, f->fields[i].val);
		sb_printf(b, ",\"tolerance\":%.0e,\"nan\":%lld,\"unwritten\":%lld,\"first_bad\":%lld}", f->tol, f->n_nan, r->unwritten,
		          f->first_bad >= 0 ? f->first_bad : r->first_unwritten);
	} else if (r && r->stage >= 4) {
		sb_printf(b, ",\"check\":{\"oracle\":null,\"unwritten\":%lld,\"unwritten_sparse\":%lld,\"first_bad\":%lld}", r->unwritten,
		          r->unwritten_sparse, r->first_unwritten);
	}
	if (r && r->iters) {
		sb_printf(b, ",\"time_us\":{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f,\"iters\":%d}", r->med_us, r->min_us, r->max_us,
		          r->iters);
		if (r->fam.flops > 0)
			sb_printf(b, ",\"tflops\":%.1f", r->fam.flops / (r->med_us * 1e-6) / 1e12);
		if (r->fam.bytes > 0)
			sb_printf(b, ",\"tbps\":%.3f", r->fam.bytes / (r->med_us * 1e-6) / 1e12);
	}
	sb_puts(b, "}\n");
}

static void print_text(StrBuf *b, const RunArgs *o, const RunJob *j, const RunReport *r, RunVerdict v, const char *err,
                       const char *story)
{
	const Kernel *k = j->k;
	sb_printf(b, "cake run: %s", k ? k->name : o->file);
	for (int i = 0; k && i < k->ndims; i++)
		sb_printf(b, " %s=%lld", k->dims[i], j->dimvals[i]);
	sb_printf(b, " seed=%llu", (unsigned long long)o->ro.seed);
	if (r && r->device[0])
		sb_printf(b, " on %s (%d SMs)", r->device, r->sm_count);
	sb_putc(b, '\n');
	if (r && r->nkern)
		sb_printf(b, "  compile: %d registers, %d bytes stack, %d/%d bytes spilled (stores/loads)%s\n", r->kern[0].regs,
		          r->kern[0].stack_bytes, r->kern[0].spill_stores, r->kern[0].spill_loads, r->cache_hit ? ", cached cubin" : "");
	if (r && r->stage >= 1 && r->block)
		sb_printf(b, "  launch:  grid %ux%ux%u%s, block %u, cluster %ux%ux%u, %lld bytes dynamic smem\n", r->grid[0], r->grid[1],
		          r->grid[2], j->plan && j->plan->persistent ? " (persistent)" : "", r->block, r->cluster[0], r->cluster[1],
		          r->cluster[2], r->smem);
	if (r && r->checked && r->fam.summary[0])
		sb_printf(b, "  check:   %s, %lld unwritten\n", r->fam.summary, r->unwritten);
	else if (r && !r->checked && r->stage >= 4) {
		sb_printf(b, "  check:   no oracle for this kernel (%s); %lld outputs unwritten",
		          j->fam ? "--oracle=none" : "it names no family", r->unwritten);
		if (r->unwritten_sparse)
			sb_printf(b, " (and %lld elements of scatter/atomic-only outputs not reached, which a scatter may leave)",
			          r->unwritten_sparse);
		sb_putc(b, '\n');
	}
	if (r && r->iters) {
		sb_printf(b, "  time:    median %.1f us, min %.1f, max %.1f over %d launches (L2 flushed)", r->med_us, r->min_us,
		          r->max_us, r->iters);
		if (r->fam.flops > 0)
			sb_printf(b, ", %.1f TFLOP/s", r->fam.flops / (r->med_us * 1e-6) / 1e12);
		else if (r->fam.bytes > 0)
			sb_printf(b, ", %.2f TB/s", r->fam.bytes / (r->med_us * 1e-6) / 1e12);
		sb_putc(b, '\n');
	}
	if (story && *story)
		sb_printf(b, "  hang:    %s\n", story);
	sb_printf(b, "verdict: %s%s%s\n", run_verdict_name(v), err && *err ? ": " : "", err ? err : "");
}

int cmd_run(int argc, char **argv)
{
	RunArgs o;
	int st = parse_args(argc, argv, &o);
	if (st)
		return st;
	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	RunJob j;
	memset(&j, 0, sizeof j);
	j.o = o.ro;
	RunReport rep;
	memset(&rep, 0, sizeof rep);
	char err[1024] = "";
	RunVerdict v = RUN_INTERNAL;
	int status = 2;
	StrBuf story = {0};

	cake_compile_path(&u, &ss, &dl, o.file, &o.co);
	if (u.status == 2) {
		fprintf(stderr, "cake run: %s\n", u.error);
		goto out;
	}
	if (u.failed == CAKE_PARSE && u.error[0] && !dl.nerr) {
		fprintf(stderr, "cake run: %s\n", u.error);
		status = 1;
		goto out;
	}
	if (u.failed != CAKE_STAGE_NONE && u.failed <= CAKE_DERIVE) {
		cmd_print_diags(&ss, &dl);
		fprintf(stderr, "cake run: '%s' has errors; nothing was run\n", o.file);
		status = 1;
		goto out;
	}
	if (u.nkernels > 1) {
		fprintf(stderr, "cake run: '%s' holds several kernels; pick one with --kernel NAME\n", o.file);
		goto out;
	}
	if (u.nkernels == 0) {
		fprintf(stderr, "cake run: no kernel in '%s'\n", o.file);
		status = 1;
		goto out;
	}
	j.k = u.kernels[0];
	j.plan = u.plans[0];
	j.fam = family_of_kernel(j.k);
	if (j.k->family && j.k->family->stage)
		fprintf(stderr, "cake run: note: kernel '%s' is a stage of a %s chain: run on its own it has no oracle (run the chain, e.g. cake kda --kernel FILE:A+B)\n",
		        j.k->name, j.k->family->name);
	j.scalars = family_scalars(j.fam, j.k);   /* the family's defaults; NAME=VALUE overrides */
	if (!bind(&o, j.k, &j))
		goto out;
	v = run_refusal(&j, err, sizeof err);
	if (v == RUN_REFUSED)
		goto verdict;
	if (u.failed == CAKE_LOWER) {
		cmd_print_diags(&ss, &dl);
		fprintf(stderr, "cake run: kernel '%s' cannot be lowered for %s\n", j.k->name, target_name(j.k->target));
		status = 1;
		goto out;
	}
	Compile cc = {&u, &o.co};
	j.compile = compile_unit;
	j.compile_ctx = &cc;
	if (!run_driver_present()) {
		/* NVRTC must not run in this process before the fork; without a
		 * driver there is no fork, so compile here to report compile errors */
		JitResult jr;
		int rc = compile_unit(&cc, &jr, err, sizeof err);
		if (rc == JIT_NO_NVRTC) {
			fprintf(stderr, "cake run: %s\n", err);
			status = GPU_EXIT_NO_DRIVER;
			goto out;
		}
		if (rc != JIT_OK) {
			v = RUN_COMPILE_ERROR;
			goto verdict;
		}
		fprintf(stderr, "cake: %s\n", gpu_no_driver_msg());
		status = GPU_EXIT_NO_DRIVER;
		goto out;
	}
	v = run_isolated(&j, &rep, &story, err, sizeof err);
	if (v == RUN_NO_GPU) {
		fprintf(stderr, "cake: %s\n", err[0] ? err : gpu_no_driver_msg());
		status = GPU_EXIT_NO_DRIVER;
		goto out;
	}
verdict: {
		StrBuf b = {0};
		const RunReport *r = rep.stage || rep.done ? &rep : NULL;
		if (o.json)
			print_json(&b, &o, &j, r, v, err, sb_str(&story));
		else
			print_text(&b, &o, &j, r, v, err, sb_str(&story));
		cmd_emit(stdout, &b);
		sb_free(&b);
		status = v == RUN_OK ? 0 : 1;
	}
out:
	free(j.scalars);
	sb_free(&story);
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return status;
}
