/*
 * run.c — the isolated runner (see run.h): one kernel in a child process
 * under a watchdog, checked by its family's oracle, timed.
 *
 * Isolation: the parent mmaps one anonymous MAP_SHARED region, then forks.
 * The region holds the RunReport the child fills in (verdict, error text,
 * the family's check, timings) and, with --debug-hang, the flight recorder:
 * the child page-locks that part with cuMemHostRegister(DEVICEMAP) and
 * passes its device address as the kernel's last argument, so the kernel's
 * records land in pages the parent can read even while the child is stuck
 * inside cuCtxSynchronize (verified on an H200: bench/proto/hang_probe.c).
 * The parent's watchdog (default 10 s per launch) kills a child that has not
 * finished and reports `hang`, turning the records into a story such as
 * "role mma (warpgroup 1) stuck waiting on full[2] phase 1 at k=6". A child
 * that dies of a signal is a `fault`; a CUDA error at synchronisation
 * (illegal address, misaligned address, illegal instruction) is a `fault`
 * with the driver's error string; an error from the launch itself or an
 * allocation failure is a `launch_error`; a wrong result is a `mismatch`.
 * The parent never initialises CUDA or NVRTC (the child's cuInit would then
 * fail): it only checks that libcuda.so.1 can be loaded.
 *
 * Data: every input is seeded random (splitmix64 from the printed seed;
 * values in [-1, 1], never zero), then the family rewrites the inputs that
 * need structure. Before EVERY launch, the correctness launch and each timed
 * launch alike, each parameter is reset the same way (run_param_reset): an
 * output is poisoned with 0xFF bytes (NaN in bf16/f32) so an element the
 * kernel never writes is caught; an accumulator is zeroed; a parameter the
 * family updates in place gets its input values uploaded again. An output
 * written only by atomic_add or scatter stores may leave elements unwritten:
 * those are counted, not failed.
 *
 * Timing (--time): warm-up launches, then for each of --iters launches a
 * 256 MB memset (L2 flush) and the parameter resets outside a pair of CUDA
 * events around the launch; median, min and max in microseconds.
 */
#include "run.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_BYTES ((size_t)256 << 20)

const char *run_verdict_name(RunVerdict v)
{
	static const char *n[] = {"ok", "mismatch", "hang", "fault", "compile_error",
	                          "launch_error", "refused", "no_gpu", "internal_error"};
	return (unsigned)v < NELEM(n) ? n[v] : "?";
}

RunOptions run_options(void)
{
	RunOptions o;
	memset(&o, 0, sizeof o);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	o.seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	o.seed &= 0xffffffffffffull;
	o.timeout_s = 10;
	o.iters = 50;
	o.warmup = 5;
	o.check_rows = 256;
	return o;
}

RunReset run_param_reset(const Plan *p, const Family *f, int i)
{
	const PlanParam *pp = &p->params[i];
	if (!pp->global)
		return RESET_NONE;
	if (family_is_inout(f, pp->name))
		return RESET_UPLOAD;
	if (!pp->output)
		return RESET_NONE;
	return pp->accum ? RESET_ZERO : RESET_POISON;
}

void run_fill_input(void *h, int dtype, size_t n, uint64_t seed)
{
	DType dt = (DType)dtype;
	uint64_t st = seed;
	if (dt == DT_BF16) {
		oracle_fill_bf16(h, n, seed);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double u = (double)(oracle_splitmix64(&st) >> 40) / (double)(1ull << 24);
		float f = (float)(2.0 * u - 1.0);
		if (f == 0)
			f = 0.5f;
		switch (dt) {
		case DT_F32: ((float *)h)[i] = f; break;
		case DT_I32: ((int32_t *)h)[i] = (int32_t)(u * 64); break;
		case DT_U32: ((uint32_t *)h)[i] = (uint32_t)(u * 64); break;
		case DT_I64: ((int64_t *)h)[i] = (int64_t)(u * 64); break;
		case DT_F16: {
			/* keep inputs in f16's normal range: |f| < 2^-14 becomes ±2^-14, never 0 */
			if (fabsf(f) < 0x1p-14f)
				f = f < 0 ? -0x1p-14f : 0x1p-14f;
			((uint16_t *)h)[i] = oracle_f32_to_f16(f);
			break;
		}
		default: ((uint8_t *)h)[i] = (uint8_t)(oracle_splitmix64(&st) & 0x7f) | 1; break;
		}
	}
}

/* The host-side description of j's parameters under its dims (no host
 * images yet): extents, element counts, bytes. False with err when an
 * extent does not evaluate to a positive integer. */
static bool param_bufs(const RunJob *j, const Launch *L, FamBuf *b, char *err, size_t n)
{
	const Kernel *k = j->k;
	for (int i = 0; i < k->nparams; i++) {
		b[i].decl = k->params[i];
		b[i].rank = k->params[i]->rank;
		if (k->params[i]->space != SP_GLOBAL)
			continue;
		if (!launch_param_extents(L, i, b[i].dims, &b[i].elems)) {
			snprintf(err, n, "an extent of '%s' does not evaluate to a positive integer", k->params[i]->name);
			return false;
		}
		int es = dtype_size(k->params[i]->dt);
		b[i].bytes = b[i].elems * (size_t)(es > 0 ? es : 4);
	}
	return true;
}

RunVerdict run_refusal(const RunJob *j, char *err, size_t n)
{
	Launch L;
	if (!launch_shape(&L, j->plan, j->dimvals, err, n))
		return RUN_REFUSED;
	if (!j->fam || !j->fam->refuse)
		return RUN_OK;
	FamBuf *b = xcalloc((size_t)(j->k->nparams > 0 ? j->k->nparams : 1), sizeof *b);
	RunVerdict v = RUN_OK;
	if (!param_bufs(j, &L, b, err, n))
		v = RUN_REFUSED;
	else {
		FamRun fr = {j->k, j->dimvals, b, j->o.seed, j->o.check_rows, 1, NULL, j->scalars};
		if (j->fam->refuse(&fr, err, n))
			v = RUN_REFUSED;
	}
	free(b);
	return v;
}

/* ---- the child: everything that touches the GPU ---- */

static void rep_err(RunReport *r, RunVerdict v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rep_err(RunReport *r, RunVerdict v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
	r->verdict = v;
	r->done = 1;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* What the child holds for the parameters of one run. */
typedef struct ChildBufs {
	FamBuf *b;                /* host images (FamRun.buf) */
	GpuPtr *dev;              /* device buffers */
	RunReset *reset;
	void **pristine;          /* RESET_UPLOAD: the input values to upload before each launch */
} ChildBufs;

/* Prepare every parameter for a launch (run_param_reset's decision). */
static int reset_params(GpuDev *g, const Kernel *k, const ChildBufs *cb)
{
	for (int i = 0; i < k->nparams; i++) {
		int rc = 0;
		switch (cb->reset[i]) {
		case RESET_NONE: break;
		case RESET_POISON: rc = gpu_memset8(g, cb->dev[i], 0xFF, cb->b[i].bytes); break;
		case RESET_ZERO: rc = gpu_memset8(g, cb->dev[i], 0, cb->b[i].bytes); break;
		case RESET_UPLOAD: rc = gpu_htod(g, cb->dev[i], cb->pristine[i], cb->b[i].bytes); break;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void child_run(const RunJob *j, RunReport *r, void *rec, size_t rec_bytes)
{
	const RunOptions *o = &j->o;
	const Plan *p = j->plan;
	const Kernel *k = j->k;
	JitResult jit = {0};
	char err[512] = "";
	int jr = j->compile(j->compile_ctx, &jit, err, sizeof err);
	r->nkern = jit.nkern < 4 ? jit.nkern : 4;
	memcpy(r->kern, jit.kern, sizeof(JitKernelInfo) * (size_t)r->nkern);
	r->cache_hit = jit.cache_hit;
	r->compile_ms = jit.compile_ms;
	if (jr != JIT_OK) {
		rep_err(r, RUN_COMPILE_ERROR, "%s", err);
		return;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	GpuDev g;
	int rc = gpu_open(&g, o->device);
	if (rc == GPU_NO_DRIVER || rc == GPU_NO_DEVICE) {
		rep_err(r, RUN_NO_GPU, "%s", g.err);
		return;
	}
	if (rc) {
		rep_err(r, RUN_INTERNAL, "%s", g.err);
		return;
	}
	snprintf(r->device, sizeof r->device, "%s", g.name);
	r->sm_count = g.sm_count;
	r->driver_version = g.driver_version;
	r->stage = 1;
	Launch L;
	if (!launch_shape(&L, p, j->dimvals, err, sizeof err)) {
		rep_err(r, RUN_REFUSED, "%s", err);
		return;
	}
	launch_fit(&L, g.sm_count);
	memcpy(r->grid, L.grid, sizeof r->grid);
	memcpy(r->cluster, L.cluster, sizeof r->cluster);
	r->block = L.block[0];
	r->smem = p->smem_bytes;
	if (launch_load(&g, &L, jit.cubin, err, sizeof err)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", err);
		return;
	}
	gpu_func_info(&g, L.fn, &r->regs, &r->local_bytes, &(int){0});

	/* parameters: host images, device buffers, resets */
	int np = k->nparams;
	ChildBufs cb = {xcalloc((size_t)np + 1, sizeof(FamBuf)), xcalloc((size_t)np + 1, sizeof(GpuPtr)),
	                xcalloc((size_t)np + 1, sizeof(RunReset)), xcalloc((size_t)np + 1, sizeof(void *))};
	if (!param_bufs(j, &L, cb.b, err, sizeof err)) {
		rep_err(r, RUN_REFUSED, "%s", err);
		return;
	}
	for (int i = 0; i < np; i++) {
		FamBuf *t = &cb.b[i];
		cb.reset[i] = run_param_reset(p, j->fam, i);
		if (!t->bytes)
			continue;
		t->host = malloc(t->bytes);
		if (!t->host) {
			rep_err(r, RUN_LAUNCH_ERROR, "host out of memory for '%s' (%zu bytes)", t->decl->name, t->bytes);
			return;
		}
		if (gpu_alloc(&g, &cb.dev[i], t->bytes)) {
			rep_err(r, RUN_LAUNCH_ERROR, "allocating '%s' (%zu bytes): %s", t->decl->name, t->bytes, g.err);
			return;
		}
		if (cb.reset[i] == RESET_NONE || cb.reset[i] == RESET_UPLOAD)
			run_fill_input(t->host, t->decl->dt, t->elems, o->seed + 0x9e37u * (uint64_t)(i + 1));
	}
	FamRun fr = {k, j->dimvals, cb.b, o->seed, o->check_rows, 1, NULL, j->scalars};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	fr.nthreads = (int)(ncpu > 0 ? ncpu : 1);
	if (j->fam && j->fam->inputs && !j->fam->inputs(&fr, err, sizeof err)) {
		rep_err(r, RUN_INTERNAL, "%s", err);
		return;
	}
	for (int i = 0; i < np; i++) {
		if (!cb.b[i].bytes || (cb.reset[i] != RESET_NONE && cb.reset[i] != RESET_UPLOAD))
			continue;
		if (cb.reset[i] == RESET_UPLOAD) {
			cb.pristine[i] = malloc(cb.b[i].bytes);
			if (!cb.pristine[i]) {
				rep_err(r, RUN_INTERNAL, "host out of memory for the input values of '%s'", cb.b[i].decl->name);
				return;
			}
			memcpy(cb.pristine[i], cb.b[i].host, cb.b[i].bytes);
		} else if (gpu_htod(&g, cb.dev[i], cb.b[i].host, cb.b[i].bytes)) {
			rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
			return;
		}
	}
	GpuPtr dflush = 0;
	if (o->time && gpu_alloc(&g, &dflush, FLUSH_BYTES)) {
		rep_err(r, RUN_LAUNCH_ERROR, "allocating the L2 flush buffer: %s", g.err);
		return;
	}
	GpuPtr drec = 0;
	if (o->debug_hang && gpu_host_register(&g, rec, rec_bytes, &drec)) {
		rep_err(r, RUN_LAUNCH_ERROR, "mapping the flight recorder: %s", g.err);
		return;
	}
	if (launch_args(&g, &L, cb.dev, j->scalars, drec, err, sizeof err)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", err);
		return;
	}
	r->stage = 2;

	/* the correctness launch */
	if (reset_params(&g, k, &cb)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
		return;
	}
	gpu_sync(&g);
	if (launch_go(&g, &L)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
		return;
	}
	r->stage = 3;
	if (gpu_sync(&g)) {
		rep_err(r, RUN_FAULT, "%s", g.err);
		return;
	}
	r->stage = 4;

	/* check: nothing left poisoned, then the family's oracle */
	r->first_unwritten = -1;
	for (int i = 0; i < np; i++) {
		FamBuf *t = &cb.b[i];
		if (cb.reset[i] == RESET_NONE)
			continue;
		if (gpu_dtoh(&g, t->host, cb.dev[i], t->bytes)) {
			rep_err(r, RUN_FAULT, "%s", g.err);
			return;
		}
		if (cb.reset[i] != RESET_POISON)
			continue;   /* accumulated into zeros or updated in place: never poisoned */
		int es = dtype_size(t->decl->dt);
		for (size_t e = 0; e < t->elems; e++) {
			const unsigned char *b = (const unsigned char *)t->host + e * (size_t)es;
			bool poisoned = true;
			for (int q = 0; q < es; q++)
				poisoned &= b[q] == 0xFF;
			if (poisoned && p->params[i].sparse)
				r->unwritten_sparse++;   /* a scatter need not reach every element */
			else if (poisoned && !r->unwritten++)
				r->first_unwritten = (long long)e;
		}
	}
	int fc = 0;
	r->fam.first_bad = -1;
	if (j->fam && j->fam->check && !o->no_oracle) {
		fc = j->fam->check(&fr, &r->fam);
		r->checked = 1;
	}
	if (j->fam && j->fam->rates)
		j->fam->rates(&fr, &r->fam.flops, &r->fam.bytes);
	if (j->fam && j->fam->release)
		j->fam->release(&fr);
	if (fc < 0) {
		rep_err(r, RUN_INTERNAL, "%s", r->fam.error);
		return;
	}
	if (r->unwritten) {
		rep_err(r, RUN_MISMATCH, "%lld output elements were never written (still poisoned); first at flat index %lld",
		        r->unwritten, r->first_unwritten);
		return;
	}
	if (fc > 0) {
		rep_err(r, RUN_MISMATCH, "%s", r->fam.error);
		return;
	}
	r->stage = 5;

	/* timing: every launch after an L2 flush and the same resets */
	if (o->time) {
		void *e0, *e1;
		if (gpu_event_create(&g, &e0) || gpu_event_create(&g, &e1)) {
			rep_err(r, RUN_INTERNAL, "%s", g.err);
			return;
		}
		for (int w = 0; w < o->warmup; w++)
			if (reset_params(&g, k, &cb) || launch_go(&g, &L)) {
				rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
				return;
			}
		float *ms = xmalloc(sizeof(float) * (size_t)o->iters);
		for (int it = 0; it < o->iters; it++) {
			if (gpu_memset8(&g, dflush, (unsigned char)it, FLUSH_BYTES) || reset_params(&g, k, &cb)) {
				rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
				return;
			}
			gpu_event_record(&g, e0);
			if (launch_go(&g, &L)) {
				rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
				return;
			}
			gpu_event_record(&g, e1);
			if (gpu_event_elapsed_ms(&g, e0, e1, &ms[it])) {
				rep_err(r, RUN_FAULT, "%s", g.err);
				return;
			}
		}
		qsort(ms, (size_t)o->iters, sizeof(float), cmp_float);
		r->med_us = ms[o->iters / 2] * 1e3;
		r->min_us = ms[0] * 1e3;
		r->max_us = ms[o->iters - 1] * 1e3;
		r->iters = o->iters;
		free(ms);
		r->stage = 6;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->gpu_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	r->verdict = RUN_OK;
	r->done = 1;
	/* the process exits right after: the driver and the OS reclaim the rest */
}

/* ---- hang story ---- */

/* Loop variable name of the wait statement at IR line `line`, or "iter". */
static const char *iter_name(Stmt **body, int n, int line)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = body[i];
		if (s->kind == S_WAIT && s->span.line == line && s->loop && s->loop->name)
			return s->loop->name;
		const char *r = iter_name(s->body, s->nbody, line);
		if (!r)
			r = iter_name(s->els, s->nels, line);
		if (r)
			return r;
	}
	return NULL;
}

void run_hang_story(const Plan *p, const Kernel *k, const void *rec, long long ctas, StrBuf *out)
{
	const CakeHangRecord *R = rec;
	int slots = p->nwarpgroups > 0 ? p->nwarpgroups : 1;
	long long stuck = 0, first = -1;
	for (long long c = 0; c < ctas; c++) {
		bool any = false;
		for (int s = 0; s < slots; s++) {
			const CakeHangRecord *h = &R[c * slots + s];
			if (h->magic == CAKE_HANG_MAGIC && h->state == CAKE_HANG_WAITING)
				any = true;
		}
		if (any) {
			stuck++;
			if (first < 0)
				first = c;
		}
	}
	if (first < 0) {
		sb_printf(out, "no role recorded a pending wait (the kernel may be stuck outside a barrier wait, "
		               "or the recorder was not written)");
		return;
	}
	bool sep = false;
	for (int s = 0; s < slots; s++) {
		const CakeHangRecord *h = &R[first * slots + s];
		if (h->magic != CAKE_HANG_MAGIC)
			continue;
		const char *role = h->role < (uint32_t)p->nroles ? p->roles[h->role].name : "?";
		if (sep)
			sb_puts(out, "; ");
		sep = true;
		if (h->state == CAKE_HANG_DONE) {
			sb_printf(out, "role %s (warpgroup %d) finished", role, s);
			continue;
		}
		const char *bar = h->barrier < (uint32_t)p->nbarriers ? p->barriers[h->barrier].name : "?";
		const char *it = iter_name(k->body, k->nbody, (int)h->line);
		sb_printf(out, "role %s (warpgroup %d) stuck waiting on %s[%u] phase %u at %s=%u (line %u", role, s, bar,
		          h->stage, h->phase, it ? it : "iter", h->iter, h->line);
		if (p->persistent)
			sb_printf(out, ", tile %u", h->tile);
		sb_putc(out, ')');
	}
	sb_printf(out, " [CTA %lld; %lld of %lld CTAs stuck]", first, stuck, ctas);
}

/* ---- parent ---- */

bool run_driver_present(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	dlclose(h);
	return true;
}

RunVerdict run_isolated(const RunJob *j, RunReport *r_out, StrBuf *story, char *err, size_t errlen)
{
	const RunOptions *o = &j->o;
	Launch L;
	if (!launch_shape(&L, j->plan, j->dimvals, err, errlen))
		return RUN_REFUSED;
	int slots = j->plan->nwarpgroups > 0 ? j->plan->nwarpgroups : 1;
	size_t rec_bytes = (size_t)L.tiles * (size_t)slots * sizeof(CakeHangRecord);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rep_bytes = (sizeof(RunReport) + page - 1) / page * page;
	rec_bytes = (rec_bytes + page - 1) / page * page;
	if (!o->debug_hang)
		rec_bytes = 0;
	unsigned char *shm = mmap(NULL, rep_bytes + (rec_bytes ? rec_bytes : page), PROT_READ | PROT_WRITE,
	                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the shared report region failed");
		return RUN_INTERNAL;
	}
	RunReport *r = (RunReport *)shm;
	memset(r, 0, sizeof *r);
	r->first_unwritten = -1;
	r->fam.first_bad = -1;
	void *rec = shm + rep_bytes;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork failed");
		munmap(shm, rep_bytes + (rec_bytes ? rec_bytes : page));
		return RUN_INTERNAL;
	}
	if (pid == 0) {
		child_run(j, r, rec, rec_bytes);
		_exit(0);
	}
	/* Watchdog, by phase: device setup and input generation (stage < 3) get a
	 * generous allowance; the kernel itself (stage 3: launched, not yet
	 * synchronised) gets --timeout from the moment the launch is seen; the
	 * check and timing phase gets one --timeout per timed launch plus two
	 * minutes for the oracle. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int status = 0, seen_stage = 0;
	bool exited = false;
	double limit = 300;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			exited = true;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int stg = r->stage;
		if (stg != seen_stage && (stg == 3 || stg == 4)) {
			seen_stage = stg;
			t0 = t1;
			limit = stg == 3 ? o->timeout_s : (o->iters + o->warmup + 2) * (o->timeout_s > 1 ? o->timeout_s : 1) + 120;
		}
		double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		if (el > limit)
			break;
		usleep(2000);
	}
	RunVerdict v;
	if (!exited) {
		if (o->debug_hang) {
			long long ctas = (long long)r->grid[0] * (r->grid[1] ? r->grid[1] : 1) * (r->grid[2] ? r->grid[2] : 1);
			run_hang_story(j->plan, j->k, rec, r->grid[0] ? ctas : L.tiles, story);
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		v = r->stage == 3 ? RUN_HANG : r->stage >= 5 ? RUN_HANG : RUN_INTERNAL;
		if (v == RUN_HANG)
			snprintf(err, errlen, "%s within %.1f s (watchdog)%s",
			         r->stage == 3 ? "the kernel did not complete" : "a timed launch did not complete", o->timeout_s,
			         o->debug_hang ? "" : "; rerun with --debug-hang for a per-role story");
		else
			snprintf(err, errlen, "the runner's child stalled before launching (stage %d)", r->stage);
	} else if (WIFSIGNALED(status)) {
		v = RUN_FAULT;
		snprintf(err, errlen, "the runner's child process died of signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	} else if (!r->done) {
		v = RUN_INTERNAL;
		snprintf(err, errlen, "the runner's child exited (status %d) without a report", WEXITSTATUS(status));
	} else {
		v = (RunVerdict)r->verdict;
		snprintf(err, errlen, "%s", r->error);
	}
	*r_out = *r;
	munmap(shm, rep_bytes + (rec_bytes ? rec_bytes : page));
	return v;
}

