/*
 * build.c — `cake build`: a Cake IR file to a plan, CUDA C++ or a cubin.
 *
 *   cake build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME]
 *                   [--debug-hang] [--no-verify] [--allow-spills] [--dump-after=STAGE]
 *
 * The pipeline (cake_compile) runs up to derive (plan), lower (cuda) or jit
 * (cubin). Every stage's findings are printed gcc-style to stderr and stop
 * the build before the next stage runs. With --emit=cubin the generated
 * source is compiled through NVRTC for the kernel's target; ptxas' register,
 * spill and shared-memory report is printed, and a kernel that spills fails
 * the build with CK-LOW-014 unless --allow-spills is given: the schedule's
 * register budgets are part of its contract, and a silent spill is a
 * performance bug.
 *
 * A file with several kernels builds them all into one translation unit (the
 * helpers are guarded so they appear once) unless --kernel picks one.
 * Output goes to OUT (-o) or stdout; a cubin needs -o or is written to
 * KERNEL.cubin. Exit status: 0 built, 1 the program has errors (or NVRTC
 * rejected the generated code, which is a compiler bug worth reporting),
 * 2 usage or I/O problem; 69 when NVRTC is missing for --emit=cubin.
 */
#include "cmd.h"

#include <string.h>
#include <unistd.h>

typedef enum Emit { EMIT_PLAN, EMIT_CUDA, EMIT_CUBIN } Emit;

static int build_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake build: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME] [--debug-hang] [--no-verify] "
	                "[--allow-spills] [--dump-after=STAGE]\n");
	return 2;
}

static int write_out(const char *path, const void *data, size_t len)
{
	if (!path || strcmp(path, "-") == 0) {
		fwrite(data, 1, len, stdout);
		fflush(stdout);
		return 0;
	}
	if (write_file_atomic(path, data, len) != 0) {
		fprintf(stderr, "cake build: cannot write '%s'\n", path);
		return 2;
	}
	return 0;
}

/* After the jit stage: ptxas' report, then the cubin to OUT. */
static int emit_cubin(CakeUnit *u, const char *out)
{
	for (int i = 0; i < u->jit.nkern; i++) {
		const JitKernelInfo *ki = &u->jit.kern[i];
		fprintf(stderr, "cake build: %s: %d registers, %d bytes stack, %d bytes spill stores, %d bytes spill loads%s%s\n",
		        ki->name, ki->regs, ki->stack_bytes, ki->spill_stores, ki->spill_loads,
		        u->jit_compact ? " (compact forms: the default forms spilled)" : "", u->jit.cache_hit ? " (cached)" : "");
	}
	if (u->failed != CAKE_STAGE_NONE)
		return 1;   /* spills: CK-LOW-014 findings, printed by the caller */
	char def[512];
	if (!out) {
		snprintf(def, sizeof def, "%s.cubin", u->nkernels == 1 ? u->kernels[0]->name : "cake_tu");
		out = def;
	}
	if (strcmp(out, "-") == 0 && isatty(1)) {
		fprintf(stderr, "cake build: refusing to write a cubin to a terminal; use -o FILE\n");
		return 2;
	}
	return write_out(out, u->jit.cubin, u->jit.cubin_len);
}

int cmd_build(int argc, char **argv)
{
	const char *file = NULL, *out = NULL;
	Emit emit = EMIT_CUDA;
	CakeOptions o = cake_options(CAKE_LOWER);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		bool missing = false;
		if (strncmp(a, "--emit=", 7) == 0) {
			if (strcmp(a + 7, "plan") == 0)
				emit = EMIT_PLAN;
			else if (strcmp(a + 7, "cuda") == 0)
				emit = EMIT_CUDA;
			else if (strcmp(a + 7, "cubin") == 0)
				emit = EMIT_CUBIN;
			else
				return build_usage("unknown --emit value '%s' (plan, cuda or cubin)", a + 7);
		} else if (strcmp(a, "-o") == 0) {
			if (i + 1 >= argc)
				return build_usage("%s needs a file name", a);
			out = argv[++i];
		} else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing))) {
			o.kernel = v;
		} else if ((v = cli_optval(argc, argv, &i, "--dump-after", &missing))) {
			if (!cake_stage_from(v, &o.dump_after))
				return build_usage("unknown stage '%s' for --dump-after (parse, sema, verify, derive, lower or jit)", v);
		} else if (missing) {
			return build_usage("%s needs a value", a);
		} else if (strcmp(a, "--debug-hang") == 0) {
			o.debug_hang = true;
		} else if (strcmp(a, "--no-verify") == 0) {
			o.no_verify = true;
		} else if (strcmp(a, "--allow-spills") == 0) {
			o.allow_spills = true;
		} else if (a[0] == '-' && a[1]) {
			return build_usage("unknown option '%s'", a);
		} else if (file) {
			return build_usage("one FILE at a time (got a second: '%s')", a);
		} else {
			file = a;
		}
	}
	if (!file)
		return build_usage("%s", "no input FILE");
	o.until = emit == EMIT_PLAN ? CAKE_DERIVE : emit == EMIT_CUDA ? CAKE_LOWER : CAKE_JIT;
	if (o.dump_after > (int)o.until)
		o.until = (CakeStage)o.dump_after;

	SourceSet ss = {0};
	DiagList dl = {0};
	CakeUnit u;
	int status = cake_compile_path(&u, &ss, &dl, file, &o);
	if (status == 2) {
		fprintf(stderr, "cake build: %s\n", u.error);
	} else if (u.failed == CAKE_PARSE || u.failed == CAKE_SEMA || u.failed == CAKE_VERIFY) {
		cmd_print_diags(&ss, &dl);
		if (u.error[0])
			fprintf(stderr, "cake build: %s\n", u.error);
		else
			fprintf(stderr, "cake build: '%s' has errors; nothing was generated\n", file);
		status = 1;
	} else if (u.failed == CAKE_DERIVE || u.failed == CAKE_LOWER) {
		cmd_print_diags(&ss, &dl);
		status = 1;
	} else if (u.failed == CAKE_JIT && !u.jit.nkern) {
		fprintf(stderr, "cake build: %s\n%s", u.error, u.jit.log && u.status != GPU_EXIT_NO_DRIVER ? u.jit.log : "");
		cmd_print_diags(&ss, &dl);
	} else {
		StrBuf text = {0};
		if (emit == EMIT_PLAN) {
			for (int i = 0; i < u.nkernels; i++) {
				if (i)
					sb_putc(&text, '\n');
				plan_print(&text, u.plans[i]);
			}
			status = write_out(out, text.s ? text.s : "", text.len);
		} else if (emit == EMIT_CUDA) {
			status = write_out(out, u.cuda.s ? u.cuda.s : "", u.cuda.len);
		} else {
			status = emit_cubin(&u, out);
		}
		sb_free(&text);
		cmd_print_diags(&ss, &dl);   /* warnings and notes of the verifier, spill errors */
	}
	cake_unit_free(&u);
	diag_free(&dl);
	src_free(&ss);
	return status;
}
