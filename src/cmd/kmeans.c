/*
 * kmeans.c — `cake kmeans`: Lloyd's k-means on the GPU (the app src/app/kmeans.c).
 *
 *   cake kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N]
 *               [--tol T] [--seed S] [--input FILE] [--check-rows N] [--no-check]
 *               [--kernels DIR] [--update auto|sorted|atomic] [--device N]
 *               [--format=text|json]
 *
 * Parses the options, refuses shapes k-means cannot mean, runs the app and
 * prints its report. Everything else (the kernels, the loop, the checks, the
 * timing) is the app's; see docs/KMEANS.md.
 */
#include "cmd.h"
#include "../app/kmeans.h"

#include <stdlib.h>
#include <string.h>



static int km_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "cake kmeans: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: cake kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N] [--tol T]\n"
	                "                   [--seed S] [--input FILE] [--check-rows N] [--no-check] [--kernels DIR]\n"
	                "                   [--update auto|sorted|atomic] [--device N] [--format=text|json]\n");
	return 2;
}

/* "B=32,N=65536,D=128,K=1024" (any order, any subset) into o. */
static int parse_shape(const char *s, KmOpts *o)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		if (!eq || eq - t != 1)
			return km_usage("--shape takes B=..,N=..,D=..,K=.. (got '%s')", s);
		long long v = strtoll(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v < 0)
			return km_usage("--shape: '%s' is not NAME=non-negative integer", t);
		switch (*t) {
		case 'B': o->B = v; break;
		case 'N': o->N = v; break;
		case 'D': o->D = v; break;
		case 'K': o->K = v; break;
		default: return km_usage("--shape: unknown dimension in '%s' (B, N, D or K)", t);
		}
	}
	return 0;
}

static int parse_km_args(int argc, char **argv, KmOpts *o)
{
	*o = app_kmeans_options();
	for (int i = 1; i < argc; i++) {
		const char *v, *a = argv[i];
		char *end;
		if ((v = cli_optval(argc, argv, &i, "--shape", NULL))) {
			int st = parse_shape(v, o);
			if (st)
				return st;
		} else if ((v = cli_optval(argc, argv, &i, "--dtype", NULL))) {
			if (strcmp(v, "bf16") && strcmp(v, "f16") && strcmp(v, "fp16"))
				return km_usage("--dtype is bf16 or f16, not '%s'", v);
			o->f16 = v[0] == 'f';
		} else if ((v = cli_optval(argc, argv, &i, "--iters", NULL))) {
			o->iters = (int)strtol(v, &end, 10);
			if (*end || o->iters < 1 || o->iters > 100000)
				return km_usage("--iters takes 1..100000, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--tol", NULL))) {
			o->tol = strtod(v, &end);
			if (*end || !(o->tol >= 0))
				return km_usage("--tol takes a non-negative number, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--seed", NULL))) {
			o->seed = strtoull(v, &end, 10);
			if (*end || !*v)
				return km_usage("--seed takes an integer, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--check-rows", NULL))) {
			o->check_rows = (int)strtol(v, &end, 10);
			if (*end || o->check_rows < 1)
				return km_usage("--check-rows takes a positive integer, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--device", NULL))) {
			o->device = (int)strtol(v, &end, 10);
			if (*end || o->device < 0)
				return km_usage("--device takes a GPU ordinal, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--update", NULL))) {
			if (!strcmp(v, "auto"))
				o->update = KM_UPDATE_AUTO;
			else if (!strcmp(v, "sorted"))
				o->update = KM_UPDATE_SORTED;
			else if (!strcmp(v, "atomic"))
				o->update = KM_UPDATE_ATOMIC;
			else
				return km_usage("--update is auto, sorted or atomic, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--kernels", NULL))) {
			o->dir = v;
		} else if ((v = cli_optval(argc, argv, &i, "--input", NULL))) {
			o->input = v;
		} else if ((v = cli_optval(argc, argv, &i, "--format", NULL))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return km_usage("--format is text or json, not '%s'", v);
			o->json = v[0] == 'j';
		} else if (!strcmp(a, "--no-check")) {
			o->check = false;
		} else
			return km_usage("unknown argument '%s'", a);
	}
	return 0;
}

int cmd_kmeans(int argc, char **argv)
{
	KmOpts o;
	char why[256];
	int st = parse_km_args(argc, argv, &o);
	if (st)
		return st;
	if (app_kmeans_refusal(&o, why, sizeof why)) {
		fprintf(stderr, "cake kmeans: %s\n", why);
		return 2;
	}
	StrBuf out = {0};
	st = app_kmeans(&o, &out);
	cmd_emit(stdout, &out);
	sb_free(&out);
	return st;
}
