/*
 * library.c — `cake library`: a family's kernels as a shape-dispatched C
 * library and a Python package (src/lib/, docs/LIBRARY.md).
 *
 *   cake library FAMILY [--domain FILE] [--kernels DIR] [--store PATH [--min-gain F]] -o DIR [--cc CC]
 *                [--no-compile] [-v]
 *   cake library FAMILY [--domain FILE] [--kernels DIR] [--store PATH [--min-gain F]] --explain SHAPE
 *                [--explain SHAPE ...] [--brief]
 *   cake library FAMILY --explain @FILE [--brief]      (one shape per line of FILE)
 *   cake library --list
 *
 * -o generates (NVRTC needed: exit 69 without it). --explain prints the route a
 * shape takes and why, from the same dispatcher text the library runs (no
 * NVRTC, no GPU); --brief prints one line per shape. Both may be given. Exit
 * status: 0, 1 when an explained shape is outside the domain or generation
 * failed, 2 usage or I/O problem, 69 no NVRTC.
 *
 * --store PATH takes, for each kernel with a family, the store candidate that
 * src/lib/frontier.c finds measured faster (by --min-gain, default 0.03) and
 * interchangeable; the choice per kernel, or why the corpus kernel stays, is
 * printed to stderr first, and --explain names the kernels a route runs from
 * the store.
 */
#include "cmd.h"
#include "../lib/lib.h"

#include <stdlib.h>
#include <string.h>

int cmd_library(int argc, char **argv)
{
	const char *family = NULL, *out = NULL, *spath = NULL;
	double min_gain = 0.03;
	LibGenOptions go;
	memset(&go, 0, sizeof go);
	const char *explain[64];
	int nexplain = 0;
	char *listbuf = NULL;   /* --explain @FILE: the file's text, one shape per line */
	bool brief = false, list = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--domain", &missing)))
			go.domain_file = v;
		else if (!missing && (v = cli_optval(argc, argv, &i, "--kernels", &missing)))
			go.kernels_dir = v;
		else if (!missing && (v = cli_optval(argc, argv, &i, "-o", &missing)))
			out = v;
		else if (!missing && (v = cli_optval(argc, argv, &i, "--cc", &missing)))
			go.cc = v;
		else if (!missing && (v = cli_optval(argc, argv, &i, "--store", &missing)))
			spath = v;
		else if (!missing && (v = cli_optval(argc, argv, &i, "--min-gain", &missing))) {
			char *end;
			min_gain = strtod(v, &end);
			if (*end || end == v || !(min_gain >= 0 && min_gain < 1))
				return cmd_usage_error("library", "--min-gain is a fraction in [0, 1), e.g. 0.03 for 3%% (got '%s')", v);
		}
		else if (!missing && (v = cli_optval(argc, argv, &i, "--explain", &missing))) {
			if (nexplain == (int)NELEM(explain))
				return cmd_usage_error("library", "at most 64 --explain shapes (%s)", v);
			explain[nexplain++] = v;
		} else if (missing)
			return cmd_usage_error("library", "option '%s' needs a value", argv[i]);
		else if (!strcmp(argv[i], "--brief"))
			brief = true;
		else if (!strcmp(argv[i], "--no-compile"))
			go.no_compile = true;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			go.verbose = true;
		else if (!strcmp(argv[i], "--list"))
			list = true;
		else if (argv[i][0] == '-')
			return cmd_usage_error("library", "unknown option '%s'", argv[i]);
		else if (!family)
			family = argv[i];
		else
			return cmd_usage_error("library", "unexpected argument '%s' (one family at a time)", argv[i]);
	}
	if (list) {
		static const char *const names[] = {"gemm", "kmeans", "kda"};
		for (size_t i = 0; i < NELEM(names); i++) {
			const LibFamily *f = lib_family(names[i]);
			printf("%-8s %s\n%-8s shapes: %s\n", f->name, f->summary, "", f->shape_help);
		}
		return 0;
	}
	if (!family)
		return cmd_usage_error("library", "name a family (%s)", lib_family_names());
	const LibFamily *fam = lib_family(family);
	if (!fam) {
		fprintf(stderr, "cake library: no library family '%s' (families: %s)\n", family, lib_family_names());
		return 2;
	}
	if (!out && !nexplain)
		return cmd_usage_error("library", "say what to do: -o DIR (generate) or --explain SHAPE (%s)", fam->shape_help);
	int status = 0;
	char kdir[4096];
	snprintf(kdir, sizeof kdir, "%s", go.kernels_dir ? go.kernels_dir : "");
	if (!go.kernels_dir)
		snprintf(kdir, sizeof kdir, "kernels/%s", fam->name);
	LibOverrides ov;
	memset(&ov, 0, sizeof ov);
	if (spath) {   /* the store's winners (src/lib/frontier.c) */
		Store *st;
		if (cmd_open_store("library", spath, &st))
			return 2;
		LibSet cs;
		StrBuf e = {0}, rep = {0};
		char ferr[512] = "";
		int rc = lib_load(&cs, fam, kdir, CAKE_SEMA, NULL, &e);
		if (!rc)
			rc = lib_frontier(&cs, st, min_gain, &ov, &rep, ferr, sizeof ferr) ? 2 : 0;
		if (rc)
			fprintf(stderr, "cake library: %s\n", e.len ? sb_str(&e) : ferr);
		else
			fprintf(stderr, "cake library: kernels from the store %s (--min-gain %g):\n%s", store_path(st), min_gain,
			        sb_str(&rep));
		sb_free(&e);
		sb_free(&rep);
		lib_unload(&cs);
		store_close(st);
		if (rc) {
			lib_overrides_free(&ov);
			return 2;
		}
		go.overrides = &ov;
	}
	if (nexplain) {
		LibConds conds;
		memset(&conds, 0, sizeof conds);
		if (go.domain_file) {
			size_t len = 0;
			char *t = read_file(go.domain_file, &len), e[512];
			if (!t) {
				fprintf(stderr, "cake library: cannot read --domain '%s'\n", go.domain_file);
				return 2;
			}
			bool ok = lib_conds_parse(&conds, t, fam->vars, fam->nvars, e, sizeof e);
			free(t);
			if (!ok) {
				fprintf(stderr, "cake library: --domain %s: %s\n", go.domain_file, e);
				return 2;
			}
		}
		LibSet ls;
		StrBuf err = {0};
		if (lib_load_with(&ls, fam, kdir, CAKE_DERIVE, &conds, go.overrides, &err)) {
			fprintf(stderr, "cake library: %s\n", sb_str(&err));
			sb_free(&err);
			lib_unload(&ls);
			lib_conds_free(&conds);
			lib_overrides_free(&ov);
			return 2;
		}
		sb_free(&err);
		/* the shapes: each --explain value, or the lines of @FILE */
		Vec shapes = {0};
		for (int i = 0; i < nexplain; i++) {
			if (explain[i][0] != '@') {
				vec_push(&shapes, (void *)explain[i]);
				continue;
			}
			size_t len = 0;
			free(listbuf);
			listbuf = read_file(explain[i] + 1, &len);
			if (!listbuf) {
				fprintf(stderr, "cake library: cannot read --explain %s\n", explain[i]);
				status = 2;
				break;
			}
			for (char *l = strtok(listbuf, "\n"); l; l = strtok(NULL, "\n"))
				if (*l && *l != '#')
					vec_push(&shapes, l);
			break;   /* one @FILE (its buffer is reused) */
		}
		StrBuf b = {0};
		LibShape *sh = xmalloc(sizeof *sh);
		for (int i = 0; i < shapes.len && status != 2; i++) {
			const char *shape = shapes.data[i];
			char e[512];
			if (!lib_shape_parse(fam, shape, sh, e, sizeof e)) {
				fprintf(stderr, "cake library: --explain %s\n", e);
				status = 2;
				break;
			}
			int rc;
			if (brief) {
				sb_printf(&b, "%s ", shape);
				rc = lib_shape_line(&ls, sh, &b);
				sb_putc(&b, '\n');
			} else {
				if (i)
					sb_putc(&b, '\n');
				rc = lib_shape_explain(&ls, sh, &b);
			}
			if (rc < 0 && status == 0)
				status = 1;
		}
		free(sh);
		cmd_emit(stdout, &b);
		sb_free(&b);
		vec_free(&shapes);
		free(listbuf);
		lib_unload(&ls);
		lib_conds_free(&conds);
		if (status == 2) {
			lib_overrides_free(&ov);
			return 2;
		}
	}
	if (out) {
		go.out_dir = out;
		StrBuf log = {0};
		char err[8192] = "";
		int rc = lib_generate(fam, &go, &log, err, sizeof err);
		fputs(sb_str(&log), stderr);
		sb_free(&log);
		if (rc) {
			fprintf(stderr, "cake library: %s\n", err);
			lib_overrides_free(&ov);
			return rc;
		}
	}
	lib_overrides_free(&ov);
	return status;
}
