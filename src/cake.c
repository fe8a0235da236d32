/*
 * cake.c — the pipeline: one flat list of stages (see cake.h).
 *
 * Each stage is a function `static bool st_NAME(CakeUnit *, const
 * CakeOptions *)` that returns false when it stopped the pipeline (it
 * reported an error finding, or it could not run at all and said why in
 * u->error). cake_compile walks the table `stages[]` below in order, one
 * line per stage, dumping the unit after the stage named by o->dump_after.
 * Nothing else in Cake strings the stages together: commands, the store,
 * the search loop, the MCP server, the library generator and the apps all
 * call cake_compile.
 *
 * What each stage adds to the unit:
 *   parse   u->prog; the selected kernels (o->kernel, or all)
 *   sema    names, types and shapes resolved (Kernel.sema_ok); each
 *           `family NAME` must name a registered family (CK-SEM-043) whose
 *           parameter contract the kernel fits (CK-SEM-044)
 *   verify  the verifier's findings for every selected kernel that passed sema
 *           (less those of o->skip_rules, a past harness's view)
 *   derive  u->plans: the Plan of every selected kernel (the runner's ABI)
 *   lower   u->cuda: one CUDA C++ translation unit for the selected kernels
 *   jit     u->jit: the sm_90a cubin through NVRTC, with ptxas' report; a
 *           kernel that spills is a CK-LOW-014 error unless allowed, and one
 *           whose static (lowering scratch) plus dynamic shared memory is over
 *           the block limit a CK-LOW-015 error (the launch would refuse it).
 *           When ptxas spills and the lowering wrote register-lean forms
 *           (`#if CAKE_COMPACT`: trisolve's sweep as a loop, not unrolled;
 *           colsum's reduction where it would pick a row),
 *           the unit is compiled again with -DCAKE_COMPACT=1 and that cubin
 *           kept if nothing in it spills (u->jit_compact)
 *
 * The JIT stage is also exported alone (cake_jit): NVRTC must not run in a
 * process before it forks a CUDA child (the child's cuInit then fails), so
 * the isolated runner lowers in the parent and compiles in the child.
 */
#include "cake.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const stage_names[CAKE_NSTAGES] = {"parse", "sema", "verify", "derive", "lower", "jit"};

const char *cake_stage_name(int stage)
{
	return stage >= 0 && stage < CAKE_NSTAGES ? stage_names[stage] : "none";
}

bool cake_stage_from(const char *s, int *stage)
{
	for (int i = 0; s && i < CAKE_NSTAGES; i++)
		if (!strcmp(s, stage_names[i])) {
			*stage = i;
			return true;
		}
	return false;
}

CakeOptions cake_options(CakeStage until)
{
	CakeOptions o;
	memset(&o, 0, sizeof o);
	o.until = until;
	o.dump_after = CAKE_STAGE_NONE;
	return o;
}

/* ---- the stages ---- */

static bool st_parse(CakeUnit *u, const CakeOptions *o)
{
	int errs = u->diags->nerr;
	u->prog = parse_file(&u->ctx, u->file);
	u->kernels = arena_alloc(&u->ctx.arena, sizeof(Kernel *) * (size_t)(u->prog->nkernels + 1));
	for (int i = 0; i < u->prog->nkernels; i++)
		if (!o->kernel || !strcmp(u->prog->kernels[i]->name, o->kernel))
			u->kernels[u->nkernels++] = u->prog->kernels[i];
	if (u->diags->nerr > errs)
		return false;
	if (!u->nkernels && o->kernel) {
		snprintf(u->error, sizeof u->error, "no kernel named '%s' in '%s'", o->kernel, u->srcs->files[u->file].path);
		return false;
	}
	return true;
}

static bool st_sema(CakeUnit *u, const CakeOptions *o)
{
	int errs = u->diags->nerr, n;
	FamilyTable ft = o->families ? *o->families : family_builtin();
	const char **names = family_names(ft, &n);
	u->ctx.families = names;
	u->ctx.nfamilies = n;
	sema_program(&u->ctx, u->prog);
	u->ctx.families = NULL;
	free(names);
	family_check_program(ft, u->prog, u->diags);
	return u->diags->nerr == errs;
}

static bool st_verify(CakeUnit *u, const CakeOptions *o)
{
	int errs = u->diags->nerr, from = u->diags->n;
	for (int i = 0; !o->no_verify && i < u->nkernels; i++)
		if (u->kernels[i]->sema_ok)
			verify_kernel(&u->ctx, u->kernels[i]);
	if (o->skip_rules)
		diag_remove_rules(u->diags, from, o->skip_rules);
	return u->diags->nerr == errs;
}

static bool st_derive(CakeUnit *u, const CakeOptions *o)
{
	bool ok = true;
	u->plans = arena_alloc(&u->ctx.arena, sizeof(Plan *) * (size_t)(u->nkernels + 1));
	for (int i = 0; i < u->nkernels; i++)
		ok = (u->plans[i] = derive_plan(&u->ctx, u->kernels[i])) != NULL && ok;
	return ok;
}

static bool st_lower(CakeUnit *u, const CakeOptions *o)
{
	bool ok = true;
	for (int i = 0; i < u->nkernels; i++) {
		if (i)
			sb_putc(&u->cuda, '\n');
		ok = lower_sm90(&u->ctx, u->kernels[i], u->plans[i], &u->cuda, o->debug_hang) && ok;
	}
	return ok;
}

static bool st_jit(CakeUnit *u, const CakeOptions *o)
{
	JitOptions jo = {0};
	const char *dbg[] = {"-DCAKE_DEBUG_HANG=1"};
	jo.arch = target_info(u->plans[0]->target)->arch;
	jo.cache_dir = o->cache_dir;
	jo.no_cache = o->no_cache;
	if (o->debug_hang) {
		jo.extra = dbg;
		jo.nextra = 1;
	}
	const char *tu = u->nkernels == 1 ? u->kernels[0]->name : "cake_tu";
	char err[512] = "";
	int rc = jit_compile(sb_str(&u->cuda), tu, &jo, &u->jit, err, sizeof err);
	if (rc == JIT_NO_NVRTC) {
		snprintf(u->error, sizeof u->error, "NVRTC is not available: %s", err);
		u->status = GPU_EXIT_NO_DRIVER;
		return false;
	}
	if (rc != JIT_OK) {
		snprintf(u->error, sizeof u->error, "NVRTC rejected the code generated for '%s' (a Cake lowering bug): %s", tu, err);
		return false;
	}
	/* ptxas spilled: when the lowering wrote register-lean forms (under CAKE_COMPACT), compile
	   again with them and keep that cubin if no kernel of it spills */
	if (!o->allow_spills && jit_spilled(&u->jit) && strstr(sb_str(&u->cuda), "#if CAKE_COMPACT")) {
		const char *cx[] = {"-DCAKE_COMPACT=1", "-DCAKE_DEBUG_HANG=1"};
		JitOptions jc = jo;
		jc.extra = cx;
		jc.nextra = o->debug_hang ? 2 : 1;
		JitResult r2 = {0};
		char err2[512] = "";
		if (jit_compile(sb_str(&u->cuda), tu, &jc, &r2, err2, sizeof err2) == JIT_OK && !jit_spilled(&r2)) {
			jit_result_free(&u->jit);
			u->jit = r2;
			u->jit_compact = true;
		} else {
			jit_result_free(&r2);
		}
	}
	int bad = cake_smem_findings(u, u->diags, u->jit.kern, u->jit.nkern);
	if (!o->allow_spills)
		bad += cake_spill_findings(u, u->diags, u->jit.kern, u->jit.nkern);
	return bad == 0;
}

bool jit_spilled(const JitResult *r)
{
	for (int i = 0; i < r->nkern; i++)
		if (r->kern[i].spill_stores || r->kern[i].spill_loads)
			return true;
	return false;
}

char *cake_kernel_text(const CakeUnit *u, int k)
{
	Program one = *u->prog;
	Kernel *kp = u->kernels[k];
	one.kernels = &kp;
	one.nkernels = 1;
	one.comments = NULL;
	one.ncomments = 0;
	StrBuf t = {0};
	print_program(&t, &one);
	char *r = xstrdup(sb_str(&t));
	sb_free(&t);
	return r;
}

int cake_spill_findings(CakeUnit *u, DiagList *dl, const JitKernelInfo *kern, int n)
{
	int spilled = 0;
	for (int i = 0; i < n; i++) {
		const JitKernelInfo *ki = &kern[i];
		if (!ki->spill_stores && !ki->spill_loads)
			continue;
		int k = cake_kernel_index(u, ki->name);
		Diag *d = diag_add(dl, "CK-LOW-014", SEV_ERROR, u->kernels[k < 0 ? 0 : k]->name_span,
		                   "kernel '%s' spills registers on sm_90a (%d bytes stored, %d loaded to local memory)", ki->name,
		                   ki->spill_stores, ki->spill_loads);
		diag_set(&d->hint, "raise the consumer role's regs, shrink the accumulator tile, or pass --allow-spills");
		if (!spilled++)
			snprintf(u->error, sizeof u->error, "CK-LOW-014: %s", d->msg);
	}
	return spilled;
}

int cake_smem_findings(CakeUnit *u, DiagList *dl, const JitKernelInfo *kern, int n)
{
	int over = 0;
	for (int i = 0; i < n; i++) {
		const JitKernelInfo *ki = &kern[i];
		int k = cake_kernel_index(u, ki->name);
		if (k < 0 || !u->plans || !u->plans[k])
			continue;
		const TargetInfo *ti = target_info(u->plans[k]->target);
		long long dyn = u->plans[k]->smem_bytes, tot = dyn + ki->smem_static;
		if (!ti || tot <= ti->smem_per_block)
			continue;
		Diag *d = diag_add(dl, "CK-LOW-015", SEV_ERROR, u->kernels[k]->name_span,
		                   "kernel '%s' needs %lld bytes of shared memory per block on %s: %lld dynamic (its buffers and "
		                   "barriers, the lowering's scratch) and %d static (the lowering's exchange arrays), over the %lld a block can have",
		                   ki->name, tot, ti->name, dyn, ki->smem_static, ti->smem_per_block);
		diag_set(&d->hint, "drop a ring stage or shrink a buffer by at least %lld bytes", tot - ti->smem_per_block);
		if (!over++)
			snprintf(u->error, sizeof u->error, "CK-LOW-015: %s", d->msg);
	}
	return over;
}

/* ---- dumps ---- */

static void dump(CakeUnit *u, int stage, StrBuf *out)
{
	sb_printf(out, "# --dump-after=%s\n", cake_stage_name(stage));
	switch (stage) {
	case CAKE_PARSE:
	case CAKE_SEMA:
		print_program(out, u->prog);
		break;
	case CAKE_VERIFY: {
		diag_sort(u->diags);
		diag_print_text(out, u->srcs, u->diags, false);
		break;
	}
	case CAKE_DERIVE:
		for (int i = 0; i < u->nkernels; i++) {
			if (i)
				sb_putc(out, '\n');
			if (u->plans[i])
				plan_print(out, u->plans[i]);
		}
		break;
	case CAKE_LOWER:
		sb_puts(out, sb_str(&u->cuda));
		break;
	case CAKE_JIT:
		for (int i = 0; i < u->jit.nkern; i++) {
			const JitKernelInfo *ki = &u->jit.kern[i];
			sb_printf(out, "%s: %d registers, %d bytes stack, %d bytes spill stores, %d bytes spill loads%s%s\n", ki->name,
			          ki->regs, ki->stack_bytes, ki->spill_stores, ki->spill_loads, u->jit_compact ? " (compact forms)" : "",
			          u->jit.cache_hit ? " (cached)" : "");
		}
		break;
	}
}

static void maybe_dump(CakeUnit *u, int stage, const CakeOptions *o)
{
	if (o->dump_after != stage)
		return;
	StrBuf b = {0}, *out = o->dump ? o->dump : &b;
	dump(u, stage, out);
	if (!o->dump) {
		fwrite(b.s, 1, b.len, stderr);
		fflush(stderr);
		sb_free(&b);
	}
}

/* ---- the pipeline ---- */

typedef bool (*StageFn)(CakeUnit *, const CakeOptions *);

static const StageFn stages[CAKE_NSTAGES] = {
	[CAKE_PARSE] = st_parse,
	[CAKE_SEMA] = st_sema,
	[CAKE_VERIFY] = st_verify,
	[CAKE_DERIVE] = st_derive,
	[CAKE_LOWER] = st_lower,
	[CAKE_JIT] = st_jit,
};

/* May stage s run after what happened so far? Only while nothing failed,
 * except that the verifier still runs after a sema error (on the kernels
 * that passed sema), so that every finding is collected. */
static bool may_run(const CakeUnit *u, int s)
{
	return u->failed == CAKE_STAGE_NONE || (s == CAKE_VERIFY && u->failed == CAKE_SEMA);
}

/* Run stages [from, o->until] in order; see may_run for the gating. */
static int run_stages(CakeUnit *u, int from, const CakeOptions *o)
{
	for (int s = from; s <= (int)o->until && s < CAKE_NSTAGES && may_run(u, s); s++) {
		bool ok = stages[s](u, o);
		maybe_dump(u, s, o);
		if (u->failed != CAKE_STAGE_NONE)
			continue;
		if (ok)
			u->reached = s;
		else
			u->failed = s;
	}
	if (u->failed != CAKE_STAGE_NONE && !u->status)
		u->status = 1;
	return u->status;
}

int cake_compile(CakeUnit *u, SourceSet *srcs, DiagList *dl, int file, const CakeOptions *o)
{
	memset(u, 0, sizeof *u);
	u->srcs = srcs;
	u->diags = dl;
	u->file = file;
	u->reached = u->failed = CAKE_STAGE_NONE;
	ctx_init(&u->ctx, srcs, dl);
	return run_stages(u, CAKE_PARSE, o);
}

int cake_jit(CakeUnit *u, const CakeOptions *o)
{
	if (u->reached != CAKE_LOWER || u->failed != CAKE_STAGE_NONE) {
		snprintf(u->error, sizeof u->error, "the unit was not lowered (it reached stage %s)", cake_stage_name(u->reached));
		return u->status = u->status ? u->status : 1;
	}
	CakeOptions j = *o;
	j.until = CAKE_JIT;
	return run_stages(u, CAKE_JIT, &j);
}

int cake_compile_path(CakeUnit *u, SourceSet *srcs, DiagList *dl, const char *path, const CakeOptions *o)
{
	int fi;
	if (!strcmp(path, "-")) {
		StrBuf b = {0};
		char buf[65536];
		size_t r;
		while ((r = fread(buf, 1, sizeof buf, stdin)) > 0)
			sb_putn(&b, buf, r);
		fi = ferror(stdin) ? -1 : src_add(srcs, "<stdin>", b.s ? b.s : "", b.len);
		sb_free(&b);
	} else {
		fi = src_load(srcs, path);
	}
	if (fi < 0) {
		memset(u, 0, sizeof *u);
		u->reached = u->failed = CAKE_STAGE_NONE;
		snprintf(u->error, sizeof u->error, "cannot read '%s': %s", path, strerror(errno));
		return u->status = 2;
	}
	return cake_compile(u, srcs, dl, fi, o);
}

int cake_compile_text(CakeUnit *u, SourceSet *srcs, DiagList *dl, const char *name, const char *text, size_t len,
                      const CakeOptions *o)
{
	return cake_compile(u, srcs, dl, src_add(srcs, name, text, len), o);
}

int cake_kernel_index(const CakeUnit *u, const char *name)
{
	for (int i = 0; name && i < u->nkernels; i++)
		if (!strcmp(u->kernels[i]->name, name))
			return i;
	return -1;
}

void cake_unit_free(CakeUnit *u)
{
	if (!u)
		return;
	if (u->srcs)
		ctx_free(&u->ctx);
	sb_free(&u->cuda);
	jit_result_free(&u->jit);
	u->srcs = NULL;
}
