/*
 * build_cmd.c — `cake build`: a Cake IR file to a plan, CUDA C++ or a cubin.
 *
 *   cake build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME]
 *                   [--debug-hang] [--no-verify] [--allow-spills]
 *
 * The pipeline is the flat list of the design: load -> parse -> sema ->
 * verify -> derive -> lower -> (NVRTC). Every stage's findings are printed
 * gcc-style to stderr and stop the build before the next stage runs. With
 * --emit=cubin the generated source is compiled through NVRTC for sm_90a
 * (src/gpu/jit.c); ptxas' register, spill and shared-memory report is printed,
 * and a kernel that spills (local-memory stores or loads) fails the build with
 * CK-LOW-014 unless --allow-spills is given: the schedule's register budgets
 * are part of its contract, and a silent spill is a performance bug.
 *
 * A file with several kernels builds them all into one translation unit (the
 * helpers are guarded so they appear once) unless --kernel picks one.
 * Output goes to OUT (-o) or stdout; a cubin needs -o or is written to
 * KERNEL.cubin. Exit status: 0 built, 1 the program has errors (or NVRTC
 * rejected the generated code, which is a compiler bug worth reporting),
 * 2 usage or I/O problem; 69 when NVRTC is missing for --emit=cubin.
 */
#include "lower.h"
#include "../gpu/gpu.h"
#include "../verify/verify.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum Emit { EMIT_PLAN, EMIT_CUDA, EMIT_CUBIN } Emit;

static int build_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake build: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME] [--debug-hang] [--no-verify] [--allow-spills]\n");
	return 2;
}

static void print_diags(SourceSet *ss, DiagList *dl)
{
	StrBuf b = {0};
	diag_sort(dl);
	diag_print_text(&b, ss, dl, isatty(2) && !getenv("NO_COLOR"));
	if (b.len)
		fwrite(b.s, 1, b.len, stderr);
	sb_free(&b);
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

/* NVRTC compile of the generated source; prints ptxas' report. */
static int build_cubin(Ctx *c, Kernel *k, const char *tuname, const char *src, const char *out, bool allow_spills)
{
	JitOptions o = {0};
	JitResult r = {0};
	char err[512] = "";
	o.arch = target_info(k->target)->arch;
	int rc = jit_compile(src, tuname ? tuname : "cake_tu", &o, &r, err, sizeof err);
	if (rc == JIT_NO_NVRTC) {
		fprintf(stderr, "cake build: NVRTC is not available: %s\n", err);
		jit_result_free(&r);
		return 69;
	}
	if (rc != JIT_OK) {
		fprintf(stderr, "cake build: NVRTC rejected the code generated for '%s' (a Cake lowering bug): %s\n%s", tuname ? tuname : k->name, err,
		        r.log ? r.log : "");
		jit_result_free(&r);
		return 1;
	}
	int status = 0;
	for (int i = 0; i < r.nkern; i++) {
		JitKernelInfo *ki = &r.kern[i];
		fprintf(stderr, "cake build: %s: %d registers, %d bytes stack, %d bytes spill stores, %d bytes spill loads%s\n", ki->name, ki->regs,
		        ki->stack_bytes, ki->spill_stores, ki->spill_loads, r.cache_hit ? " (cached)" : "");
		if ((ki->spill_stores || ki->spill_loads) && !allow_spills) {
			Diag *d = diag_add(c->diags, "CK-LOW-014", SEV_ERROR, k->name_span,
			                   "kernel '%s' spills registers on sm_90a (%d bytes stored, %d loaded to local memory)", ki->name, ki->spill_stores,
			                   ki->spill_loads);
			diag_set(&d->hint, "raise the consumer role's regs, shrink the accumulator tile, or pass --allow-spills");
			status = 1;
		}
	}
	if (!status) {
		char def[512];
		if (!out) {
			snprintf(def, sizeof def, "%s.cubin", tuname ? tuname : k->name);
			out = def;
		}
		if (strcmp(out, "-") == 0 && isatty(1)) {
			fprintf(stderr, "cake build: refusing to write a cubin to a terminal; use -o FILE\n");
			status = 2;
		} else {
			status = write_out(out, r.cubin, r.cubin_len);
		}
	}
	jit_result_free(&r);
	return status;
}

int build_main(int argc, char **argv)
{
	const char *file = NULL, *out = NULL, *kname = NULL;
	Emit emit = EMIT_CUDA;
	bool debug = false, noverify = false, allow_spills = false;
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
			kname = v;
		} else if (missing) {
			return build_usage("%s needs a kernel name", a);
		} else if (strcmp(a, "--debug-hang") == 0) {
			debug = true;
		} else if (strcmp(a, "--no-verify") == 0) {
			noverify = true;
		} else if (strcmp(a, "--allow-spills") == 0) {
			allow_spills = true;
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

	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	ctx_init(&c, &ss, &dl);
	int status = 0;
	int fi = src_load(&ss, file);
	if (fi < 0) {
		fprintf(stderr, "cake build: cannot read '%s'\n", file);
		ctx_free(&c);
		src_free(&ss);
		return 2;
	}
	/* load -> parse -> sema -> verify */
	Program *prog = parse_file(&c, fi);
	if (!dl.nerr)
		sema_program(&c, prog);
	if (!dl.nerr && !noverify)
		for (int i = 0; i < prog->nkernels; i++)
			verify_kernel(&c, prog->kernels[i]);
	if (dl.nerr) {
		print_diags(&ss, &dl);
		fprintf(stderr, "cake build: '%s' has errors; nothing was generated\n", file);
		status = 1;
		goto done;
	}
	/* the kernels to build: --kernel NAME, or every kernel of the file */
	Kernel **ks = arena_alloc(&c.arena, sizeof(Kernel *) * (size_t)(prog->nkernels + 1));
	int nk = 0;
	for (int i = 0; i < prog->nkernels; i++)
		if (!kname || strcmp(prog->kernels[i]->name, kname) == 0)
			ks[nk++] = prog->kernels[i];
	if (nk == 0) {
		fprintf(stderr, "cake build: no kernel %s%s in '%s'\n", kname ? "named " : "", kname ? kname : "", file);
		status = 1;
		goto done;
	}
	/* derive -> lower, every kernel into one translation unit */
	StrBuf text = {0};
	bool ok = true;
	for (int i = 0; i < nk; i++) {
		Plan *plan = derive_plan(&c, ks[i]);
		if (!plan) {
			ok = false;
			continue;
		}
		if (emit == EMIT_PLAN) {
			if (i)
				sb_putc(&text, '\n');
			plan_print(&text, plan);
		} else {
			if (i)
				sb_putc(&text, '\n');
			ok = lower_sm90(&c, ks[i], plan, &text, debug) && ok;
		}
	}
	if (!ok) {
		print_diags(&ss, &dl);
		status = 1;
	} else if (emit == EMIT_CUBIN) {
		status = build_cubin(&c, ks[0], nk > 1 ? NULL : ks[0]->name, sb_str(&text), out, allow_spills);
		if (status && dl.n)
			print_diags(&ss, &dl);
	} else {
		status = write_out(out, text.s ? text.s : "", text.len);
	}
	sb_free(&text);
	if (!status && dl.n)
		print_diags(&ss, &dl); /* warnings and notes of the verifier */
done:
	diag_free(&dl);
	ctx_free(&c);
	src_free(&ss);
	return status;
}
