/*
 * fmt.c — `cake fmt`: the canonical text of Cake IR files.
 *
 *   cake fmt [-w|--write] [--check] FILE...
 *
 * Each file goes through the pipeline's parse stage only; the canonical
 * printer (print_program) gives the text. -w rewrites a file in place
 * (atomically, and only when it changes); --check lists the files that are
 * not canonical (exit 1). A file with syntax errors is never printed or
 * rewritten: a partially recovered tree is not the author's program.
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_fmt(int argc, char **argv)
{
	bool write = false, check = false, only_files = false;
	const char **files = xmalloc(sizeof(char *) * (size_t)argc);
	int nfiles = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0)
			files[nfiles++] = a;
		else if (strcmp(a, "--") == 0)
			only_files = true;
		else if (strcmp(a, "-w") == 0 || strcmp(a, "--write") == 0)
			write = true;
		else if (strcmp(a, "--check") == 0)
			check = true;
		else {
			rc = cmd_usage_error("fmt", "unknown option '%s'", a);
			goto out;
		}
	}
	if (nfiles == 0) {
		rc = cmd_usage_error("fmt", "no input files%s", "");
		goto out;
	}
	if (write && check) {
		rc = cmd_usage_error("fmt", "-w and --check cannot be combined%s", "");
		goto out;
	}

	SourceSet ss = {0};
	CakeOptions o = cake_options(CAKE_PARSE);
	for (int i = 0; i < nfiles; i++) {
		if (write && strcmp(files[i], "-") == 0) {
			rc = cmd_usage_error("fmt", "cannot rewrite standard input in place (drop -w)%s", "");
			continue;
		}
		DiagList dl = {0};
		CakeUnit u;
		if (cake_compile_path(&u, &ss, &dl, files[i], &o) == 2) {
			fprintf(stderr, "cake: %s\n", u.error);
			rc = 2;
		} else if (dl.nerr > 0) {
			cmd_print_diags(&ss, &dl);
			fprintf(stderr, "cake fmt: '%s' has syntax errors; left unchanged\n", files[i]);
			if (rc < 1)
				rc = 1;
		} else {
			StrBuf t = {0};
			print_program(&t, u.prog);
			const Source *s = &ss.files[u.file];
			bool same = t.len == s->len && memcmp(sb_str(&t), s->text, s->len) == 0;
			if (check) {
				if (!same) {
					printf("%s\n", files[i]);
					if (rc < 1)
						rc = 1;
				}
			} else if (write) {
				if (!same && write_file_atomic(files[i], t.s ? t.s : "", t.len) != 0) {
					fprintf(stderr, "cake fmt: cannot write '%s': %s\n", files[i], strerror(errno));
					rc = 2;
				}
			} else {
				cmd_emit(stdout, &t);
			}
			sb_free(&t);
		}
		cake_unit_free(&u);
		diag_free(&dl);
	}
	fflush(stdout);
	src_free(&ss);
out:
	free(files);
	return rc;
}
