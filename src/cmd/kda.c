/*
 * kda.c — `cake kda`: one Kimi Delta Attention layer on the GPU (the app src/app/kda.c).
 *
 *   cake kda [--shape B=..,H=..,T=..[,K=..,V=..]] [--mode decode|prefill] [--state f32|bf16]
 *            [--seqlens a,b,c] [--lower-bound L] [--kernel FILE[:NAME[+NAME...]]] [--kernels DIR]
 *            [--iters N] [--warmup N] [--graph-launches N] [--no-graph] [--check-heads N]
 *            [--no-check] [--allow-spills] [--seed S] [--poison INPUT=INDEX] [--dump DIR] [--device N]
 *            [--format=text|json]
 *
 * Parses the options, refuses what they cannot mean, runs the app and prints
 * its report. --kernel FILE:A+B runs kernels A then B of FILE as one layer
 * (a chain over buffers shared by name); the string is the app's to split and
 * refuse. Everything else (the kernels, the check, the timing) is the app's;
 * see docs/KDA.md.
 */
#include "cmd.h"
#include "../app/kda.h"

#include <stdlib.h>
#include <string.h>

static int kda_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "cake kda: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: cake kda [--shape B=..,H=..,T=..[,K=..,V=..]] [--mode decode|prefill] [--state f32|bf16]\n"
	                "                [--seqlens a,b,c] [--lower-bound L] [--kernel FILE[:NAME[+NAME...]]] [--kernels DIR]\n"
	                "                [--iters N] [--warmup N] [--graph-launches N] [--no-graph] [--check-heads N] [--no-check]\n"
	                "                [--seed S] [--allow-spills] [--poison INPUT=INDEX] [--dump DIR] [--device N]\n"
	                "                [--format=text|json]\n");
	return 2;
}

/* "B=8,H=32,T=1" (any order, any subset of B, H, T, K, V) into o. */
static int parse_shape(const char *s, KdaOpts *o)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		if (!eq || eq - t != 1)
			return kda_usage("--shape takes B=..,H=..,T=.. (and K=.., V=..) (got '%s')", s);
		long long v = strtoll(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v < 0)
			return kda_usage("--shape: '%s' is not NAME=non-negative integer", t);
		switch (*t) {
		case 'B': o->B = v; break;
		case 'H': o->H = v; break;
		case 'T': o->T = v; break;
		case 'K': o->K = v; break;
		case 'V': o->V = v; break;
		default: return kda_usage("--shape: unknown dimension in '%s' (B, H, T, K or V)", t);
		}
	}
	return 0;
}

static int parse_seqlens(const char *s, KdaOpts *o)
{
	o->nseq = 0;
	for (const char *p = s; *p;) {
		char *end;
		long long v = strtoll(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return kda_usage("--seqlens takes comma-separated token counts, e.g. 1300,547,2048 (got '%s')", s);
		if (o->nseq >= KDA_MAX_SEQS)
			return kda_usage("--seqlens: at most 4096 sequences (got more in '%s')", s);
		o->seqlens[o->nseq++] = v;
		p = *end ? end + 1 : end;
	}
	if (!o->nseq)
		return kda_usage("--seqlens needs at least one sequence length%s", "");
	return 0;
}

static int int_opt(const char *v, int lo, int hi, const char *what, int *out)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || !*v || x < lo || x > hi) {
		fprintf(stderr, "cake kda: %s takes %d..%d, not '%s'\n", what, lo, hi, v);
		return 2;
	}
	*out = (int)x;
	return 0;
}

static int parse_kda_args(int argc, char **argv, KdaOpts *o)
{
	*o = app_kda_options();
	for (int i = 1; i < argc; i++) {
		const char *v, *a = argv[i];
		char *end;
		int st = 0;
		if ((v = cli_optval(argc, argv, &i, "--shape", NULL)))
			st = parse_shape(v, o);
		else if ((v = cli_optval(argc, argv, &i, "--mode", NULL))) {
			if (strcmp(v, "decode") && strcmp(v, "prefill"))
				return kda_usage("--mode is decode or prefill, not '%s'", v);
			o->mode = v[0] == 'd' ? KDA_MODE_DECODE : KDA_MODE_PREFILL;
		} else if ((v = cli_optval(argc, argv, &i, "--state", NULL))) {
			if (strcmp(v, "f32") && strcmp(v, "bf16"))
				return kda_usage("--state is f32 or bf16, not '%s'", v);
			o->state_bf16 = v[0] == 'b';
		} else if ((v = cli_optval(argc, argv, &i, "--seqlens", NULL)))
			st = parse_seqlens(v, o);
		else if ((v = cli_optval(argc, argv, &i, "--lower-bound", NULL))) {
			o->lower_bound = strtod(v, &end);
			if (*end || !*v)
				return kda_usage("--lower-bound takes a number in [-5, 0), not '%s'", v);
			o->lower_bound_gate = true;
		} else if ((v = cli_optval(argc, argv, &i, "--kernel", NULL)))
			o->kernel = v;
		else if ((v = cli_optval(argc, argv, &i, "--kernels", NULL)))
			o->dir = v;
		else if ((v = cli_optval(argc, argv, &i, "--iters", NULL)))
			st = int_opt(v, 1, 100000, "--iters", &o->iters);
		else if ((v = cli_optval(argc, argv, &i, "--warmup", NULL)))
			st = int_opt(v, 0, 100000, "--warmup", &o->warmup);
		else if ((v = cli_optval(argc, argv, &i, "--graph-launches", NULL)))
			st = int_opt(v, 1, 10000, "--graph-launches", &o->graph_launches);
		else if ((v = cli_optval(argc, argv, &i, "--check-heads", NULL)))
			st = int_opt(v, 1, 1 << 24, "--check-heads", &o->check_heads);
		else if ((v = cli_optval(argc, argv, &i, "--device", NULL)))
			st = int_opt(v, 0, 1023, "--device", &o->device);
		else if ((v = cli_optval(argc, argv, &i, "--seed", NULL))) {
			o->seed = strtoull(v, &end, 10);
			if (*end || !*v)
				return kda_usage("--seed takes an integer, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--poison", NULL)))
			o->poison = v;
		else if ((v = cli_optval(argc, argv, &i, "--dump", NULL)))
			o->dump = v;
		else if ((v = cli_optval(argc, argv, &i, "--format", NULL))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return kda_usage("--format is text or json, not '%s'", v);
			o->json = v[0] == 'j';
		} else if (!strcmp(a, "--no-check"))
			o->check = false;
		else if (!strcmp(a, "--no-graph"))
			o->graph = false;
		else if (!strcmp(a, "--allow-spills"))
			o->allow_spills = true;
		else
			return kda_usage("unknown argument '%s'", a);
		if (st)
			return st;
	}
	return 0;
}

int cmd_kda(int argc, char **argv)
{
	KdaOpts *o = xmalloc(sizeof *o);
	char why[512];
	int st = parse_kda_args(argc, argv, o);
	if (!st && app_kda_refusal(o, why, sizeof why)) {
		fprintf(stderr, "cake kda: %s\n", why);
		st = 2;
	}
	if (!st) {
		StrBuf out = {0};
		st = app_kda(o, &out);
		cmd_emit(stdout, &out);
		sb_free(&out);
	}
	free(o);
	return st;
}
