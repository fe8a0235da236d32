/*
 * evolve.c — `cake evolve`: the search loop (src/harness/evolve.c).
 *
 *   cake evolve FILE|FAMILY --shape NAME=V,... [--shape ...] [--budget 10m|90s|200c]
 *               [--store PATH] [--dry-run] [--require-gpu] [--kernel NAME]
 *               [--baseline FILE [--baseline-kernel NAME]] [--width N] [--top N] [--campaign NAME]
 *               [--seed N] [--iters N] [--timeout SEC] [--kernels DIR] [--format=text|json]
 *
 * On a terminal it keeps one live progress line (candidates proposed,
 * rejected by the verifier, run, failed on the GPU, the best so far and its
 * speedup over the seed and over --baseline) and prints a summary; otherwise
 * (or with --format=json) it writes one JSON object per event.
 *
 * Without a GPU driver it runs the dry-run path (everything but the GPU
 * runs) and says so in one line, unless --require-gpu. Ctrl-C stops after
 * the evaluation in flight (exit 130); a rerun with the same arguments
 * resumes from the store. The ranking is the cost model's (src/harness/rank.h,
 * src/cost/cost.h).
 *
 * The one piece of static state outside main.c: the SIGINT flag, because a
 * signal handler can reach nothing else.
 */
#include "cmd.h"
#include "../harness/evolve.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int evolve_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake evolve: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake evolve FILE|FAMILY --shape NAME=V,... [--shape ...] [--budget 10m|90s|200c] [--store PATH]\n"
	                "                   [--dry-run] [--require-gpu] [--kernel NAME] [--baseline FILE [--baseline-kernel NAME]]\n"
	                "                   [--width N] [--top N]\n"
	                "                   [--campaign NAME] [--seed N] [--iters N] [--timeout SEC] [--kernels DIR]\n"
	                "                   [--format=text|json]\n");
	return 2;
}

/* "10m", "90s", "1.5h" -> seconds; "200c" -> candidates. False when malformed. */
static bool parse_budget(const char *v, double *secs, int *cands)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || !(x > 0) || end[0] == 0 || end[1] != 0)
		return false;
	switch (*end) {
	case 's': *secs = x; return true;
	case 'm': *secs = x * 60; return true;
	case 'h': *secs = x * 3600; return true;
	case 'c':
		if (x != floor(x) || x > 1e9)
			return false;
		*cands = (int)x;
		return true;
	default: return false;
	}
}

typedef struct Out {
	bool json, tty;
	int last_len;
} Out;

static void num(StrBuf *b, const char *k, double v)
{
	if (isnan(v))
		sb_printf(b, ",\"%s\":null", k);
	else
		sb_printf(b, ",\"%s\":%.3f", k, v);
}

static void progress(void *ctx, const EvolveProgress *p)
{
	Out *o = ctx;
	double sp_seed = p->seed_score / p->best_score, sp_base = p->baseline_score / p->best_score;
	StrBuf b = {0};
	if (o->json) {
		sb_puts(&b, "{\"event\":");
		sb_json_str(&b, p->event);
		sb_puts(&b, ",\"campaign\":");
		sb_json_str(&b, p->campaign);
		sb_printf(&b, ",\"generation\":%d,\"proposed\":%d,\"rejected\":%d,\"run\":%d,\"failed\":%d,\"busy\":%d", p->generation,
		          p->proposed, p->rejected, p->run, p->failed, p->busy);
		num(&b, "gpu_s", p->gpu_s);
		num(&b, "wall_s", p->wall_s);
		sb_printf(&b, ",\"measured\":%s", p->measured ? "true" : "false");
		num(&b, "seed_us", p->seed_score);
		num(&b, "best_us", p->best_score);
		num(&b, "baseline_us", p->baseline_score);
		num(&b, "speedup_seed", sp_seed);
		num(&b, "speedup_baseline", sp_base);
		sb_puts(&b, ",\"best\":");
		if (p->best[0])
			sb_json_str(&b, p->best);
		else
			sb_puts(&b, "null");
		if (p->last) {
			const EvalResult *r = p->last;
			sb_puts(&b, ",\"candidate\":");
			sb_json_str(&b, r->cand);
			sb_puts(&b, ",\"origin\":");
			sb_json_str(&b, p->last_origin ? p->last_origin : "");
			sb_puts(&b, ",\"shape\":");
			sb_json_str(&b, r->shape);
			sb_puts(&b, ",\"verdict\":");
			sb_json_str(&b, store_verdict_name(r->verdict));
			sb_printf(&b, ",\"cached\":%s", r->cached ? "true" : "false");
			num(&b, "predicted_us", r->has_pred ? r->pred.us : NAN);
			num(&b, "median_us", r->median_us);
			sb_puts(&b, ",\"message\":");
			sb_json_str(&b, r->message);
		}
		if (p->reason) {
			sb_puts(&b, ",\"reason\":");
			sb_json_str(&b, p->reason);
		}
		sb_puts(&b, "}\n");
		cmd_emit(stdout, &b);
	} else {
		sb_printf(&b, "\r[gen %d] proposed %d, rejected %d, run %d, failed %d | best %s%.1f us", p->generation, p->proposed,
		          p->rejected, p->run, p->failed, p->measured ? "" : "predicted ", p->best_score);
		if (!isnan(sp_seed))
			sb_printf(&b, " (%.2fx seed", sp_seed);
		if (!isnan(sp_base))
			sb_printf(&b, ", %.2fx baseline", sp_base);
		if (!isnan(sp_seed))
			sb_putc(&b, ')');
		sb_printf(&b, " | gpu %.1f s", p->gpu_s);
		int len = (int)b.len;
		for (int i = len; i < o->last_len; i++)
			sb_putc(&b, ' ');
		o->last_len = len;
		if (o->tty)
			cmd_emit(stdout, &b);
	}
	sb_free(&b);
}

int cmd_evolve(int argc, char **argv)
{
	EvolveOptions o = evolve_options();
	const char *spath = NULL;
	bool require_gpu = false;
	Out out = {false, isatty(STDOUT_FILENO) != 0, 0};
	bool fmt_given = false;
	double secs = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		char *end;
		if ((v = cli_optval(argc, argv, &i, "--shape", &missing))) {
			if (o.nshapes == EVOLVE_MAX_SHAPES)
				return evolve_usage("at most 8 --shape options (got another: '%s')", v);
			o.shapes[o.nshapes++] = v;
		} else if ((v = cli_optval(argc, argv, &i, "--budget", &missing))) {
			if (!parse_budget(v, &secs, &o.budget_cands))
				return evolve_usage("--budget takes a time (90s, 10m, 1h) or a candidate count (200c), not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing)))
			o.kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--baseline-kernel", &missing)))
			o.baseline_kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--baseline", &missing)))
			o.baseline = v;
		else if ((v = cli_optval(argc, argv, &i, "--campaign", &missing)))
			o.campaign = v;
		else if ((v = cli_optval(argc, argv, &i, "--kernels", &missing)))
			o.kernels_dir = v;
		else if ((v = cli_optval(argc, argv, &i, "--width", &missing))) {
			o.width = (int)strtol(v, &end, 10);
			if (*end || o.width < 1)
				return evolve_usage("--width takes a positive count, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--top", &missing))) {
			o.top = (int)strtol(v, &end, 10);
			if (*end || o.top < 1)
				return evolve_usage("--top takes a positive count, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--seed", &missing)))
			o.run.seed = strtoull(v, NULL, 0);
		else if ((v = cli_optval(argc, argv, &i, "--iters", &missing))) {
			o.run.iters = (int)strtol(v, &end, 10);
			if (*end || o.run.iters < 1)
				return evolve_usage("--iters takes a positive count, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--timeout", &missing))) {
			o.run.timeout_s = strtod(v, &end);
			if (*end || !(o.run.timeout_s > 0))
				return evolve_usage("--timeout takes a positive number of seconds, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return evolve_usage("--format is text or json, not '%s'", v);
			out.json = !strcmp(v, "json");
			fmt_given = true;
		} else if (missing)
			return evolve_usage("option '%s' needs a value", a);
		else if (!strcmp(a, "--dry-run"))
			o.dry_run = true;
		else if (!strcmp(a, "--require-gpu"))
			require_gpu = true;
		else if (a[0] == '-' && a[1])
			return evolve_usage("unknown option '%s'", a);
		else if (o.seed)
			return evolve_usage("one seed (FILE or FAMILY) at a time (got a second: '%s')", a);
		else
			o.seed = a;
	}
	if (!o.seed)
		return evolve_usage("%s", "no seed: give a .cake FILE or a FAMILY (see cake families)");
	if (!o.nshapes)
		return evolve_usage("%s", "--shape NAME=VALUE,... is required (every dim of the seed's kernel)");
	if (!secs && !o.budget_cands)
		return evolve_usage("%s", "--budget is required: a time (10m: GPU minutes; wall time in a dry run) or candidates (200c)");
	if (!fmt_given && !out.tty)
		out.json = true;
	if (!o.dry_run && !run_driver_present()) {
		if (require_gpu) {
			fprintf(stderr, "cake: %s\n", gpu_no_driver_msg());
			return GPU_EXIT_NO_DRIVER;
		}
		fprintf(stderr, "cake evolve: no GPU driver found: running the dry-run path (verify, rank and compile every "
		                "candidate; nothing is run)\n");
		o.dry_run = true;
	}
	if (o.dry_run)
		o.budget_wall_s = secs;
	else
		o.budget_gpu_s = secs;
	StrBuf err = {0};
	Store *st = NULL;
	if (store_open(spath, STORE_CREATE, &st, &err) != STORE_OK) {
		fprintf(stderr, "cake evolve: %s\n", sb_str(&err));
		sb_free(&err);
		return 2;
	}
	o.store = st;
	o.stop = &interrupted;
	o.progress = progress;
	o.progress_ctx = &out;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	EvolveProgress fin;
	char msg[1024] = "";
	int rc = evolve_run(&o, &fin, msg, sizeof msg);
	sigaction(SIGINT, &old, NULL);
	if (rc) {
		if (out.tty && !out.json)
			fputc('\n', stdout);
		fprintf(stderr, "cake evolve: %s\n", msg);
	} else if (!out.json) {
		StrBuf b = {0};
		sb_printf(&b, "%scake evolve: %s\n", out.tty ? "\n" : "", fin.reason ? fin.reason : "stopped");
		sb_printf(&b, "  campaign %s in %s: %d candidates, %d rejected by the verifier (no GPU spent), %d run on the GPU, "
		          "%d failed there, %.1f GPU seconds\n", fin.campaign, store_path(st), fin.proposed,
		          fin.rejected, fin.run, fin.failed, fin.gpu_s);
		if (fin.best[0])
			sb_printf(&b, "  best %s: %s%.1f us (%.2fx the seed%s)\n", fin.best, fin.measured ? "" : "predicted ",
			          fin.best_score, fin.seed_score / fin.best_score, o.dry_run ? "; a dry run ranks by prediction only" : "");
		if (!isnan(fin.baseline_score))
			sb_printf(&b, "  baseline: %.1f us (best / baseline speedup %.2fx)\n", fin.baseline_score,
			          fin.baseline_score / fin.best_score);
		cmd_emit(stdout, &b);
		sb_free(&b);
	}
	store_close(st);
	sb_free(&err);
	if (!rc && interrupted)
		return 130;
	return rc;
}
