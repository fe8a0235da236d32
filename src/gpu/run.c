/*
 * run.c — `cake run`: compile a Cake IR kernel, run it isolated on the GPU,
 * check it against an oracle and time it.
 *
 *   cake run FILE [NAME=VALUE ...] [--kernel NAME] [--seed N] [--timeout SEC]
 *            [--time] [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]
 *            [--format=text|json] [--debug-hang] [--no-verify] [--device N]
 *
 * NAME=VALUE binds a symbolic dim (M=8192) or a scalar parameter.
 *
 * The pipeline in the parent is a flat list: load, parse, sema, verify,
 * derive_plan (src/lower), bind dims, check the domain and the TMA contract
 * (global strides must be multiples of 16 bytes), lower_sm90, jit_compile.
 * Anything that fails up to here is a verdict (`refused`, `compile_error`)
 * without touching the GPU. The parent never initialises CUDA: it only
 * checks that libcuda.so.1 can be loaded so that a machine without a GPU
 * gets a one-line answer and exit status GPU_EXIT_NO_DRIVER.
 *
 * Isolation: the parent mmaps one anonymous MAP_SHARED region, then forks.
 * The region holds the RunReport the child fills in (verdict, error text,
 * comparison, timings) and, with --debug-hang, the flight recorder: the
 * child page-locks that part with cuMemHostRegister(DEVICEMAP) and passes its
 * device address as the kernel's last argument, so the kernel's records land
 * in pages the parent can read even while the child is stuck inside
 * cuCtxSynchronize (verified on an H200: bench/proto/hang_probe.c). The
 * parent's watchdog (default 10 s) kills a child that has not finished and
 * reports `hang`, turning the records into a story such as "role mma
 * (warpgroup 1) stuck waiting on full[2] phase 1 at k=6". A child that dies
 * of a signal is a `fault`; a CUDA error at synchronisation (illegal address,
 * misaligned address, illegal instruction) is a `fault` with the driver's
 * error string; an error from the launch itself or an allocation failure is
 * a `launch_error`; a wrong result is a `mismatch` with the error and the
 * first bad index.
 *
 * Data: inputs are seeded (splitmix64; the seed is printed and settable)
 * random values in [-1, 1], never zero; outputs are poisoned with 0xFF bytes
 * (NaN in bf16/f32) before every launch, so an element the kernel never
 * writes is caught. An output updated by atomic_add is zeroed instead (it is
 * an accumulator), and one written only by atomic_add or scatter stores may
 * legitimately leave elements unwritten: those are counted, not failed. Oracle: the GEMM C = A·Bᵀ is recognised structurally
 * (outputs P[X,Y], inputs Q[X,R], S[Y,R]) and checked in float64 on sampled
 * rows (all rows when small). Other kernels run with the NaN/unwritten
 * checks only and are reported as "unchecked".
 *
 * Timing (--time): warm-up launches, then for each of --iters launches a
 * 256 MB memset (L2 flush, plus output poison) outside a pair of CUDA events
 * around the launch; median, min and max in microseconds, TFLOP/s where the
 * oracle knows the operation count.
 */
#include "gpu.h"
#include "../lower/lower.h"
#include "../verify/verify.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_BIND 32
#define FLUSH_BYTES ((size_t)256 << 20)

typedef struct RunOpts {
	const char *file, *kname;
	const char *bind_name[MAX_BIND];   /* points into argv; bind_len bytes */
	int bind_len[MAX_BIND];
	double bind_val[MAX_BIND];
	int nbind;
	uint64_t seed;
	double timeout_s;
	bool time, json, debug_hang, no_verify, oracle_none;
	int iters, warmup, check_rows, device;
} RunOpts;

/* Written by the child into shared memory, read by the parent. */
typedef struct RunReport {
	int verdict;             /* RunVerdict, valid when done */
	int done;
	int stage;               /* progress: 1 device open, 2 inputs ready, 3 launched, 4 synced, 5 checked, 6 timed */
	char error[512];
	char device[256];
	int sm_count;
	unsigned grid[3], block, cluster[3];
	long long smem;
	int regs, local_bytes;
	int checked;             /* an oracle compared the output */
	double rel_err, tol;
	long long n_nan, unwritten, first_bad;
	long long unwritten_sparse;  /* unwritten elements of scatter/atomic-only outputs (expected, not a failure) */
	double bad_out, bad_ref;
	int rows_checked;
	long long ties_excused;  /* k-means: labels accepted as near-ties (reported) */
	double med_us, min_us, max_us;
	int iters;
	double flops;            /* operation count known to the oracle (0 = unknown) */
	/* JIT (done in the child: see run_isolated) */
	JitKernelInfo kern[4];
	int nkern, cache_hit;
} RunReport;

const char *run_verdict_name(RunVerdict v)
{
	static const char *n[] = {"ok", "mismatch", "hang", "fault", "compile_error",
	                          "launch_error", "refused", "no_gpu", "internal_error"};
	return (unsigned)v < NELEM(n) ? n[v] : "?";
}

/* ---- argument parsing ---- */

static int run_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "cake run: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: cake run FILE [NAME=VALUE ...] [--kernel NAME] [--seed N] [--timeout SEC] [--time]\n"
	                "                [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]\n"
	                "                [--format=text|json] [--debug-hang] [--no-verify] [--device N]\n");
	return 2;
}

/* True when binding b of o names `name`. */
static bool bind_is(const RunOpts *o, int b, const char *name)
{
	return (int)strlen(name) == o->bind_len[b] && !strncmp(o->bind_name[b], name, (size_t)o->bind_len[b]);
}

static int parse_args(int argc, char **argv, RunOpts *o)
{
	memset(o, 0, sizeof *o);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	o->seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	o->seed &= 0xffffffffffffull;
	o->timeout_s = 10;
	o->iters = 50;
	o->warmup = 5;
	o->check_rows = 256;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if ((v = cli_optval(argc, argv, &i, "--kernel", NULL)))
			o->kname = v;
		else if ((v = cli_optval(argc, argv, &i, "--seed", NULL)))
			o->seed = strtoull(v, NULL, 0);
		else if ((v = cli_optval(argc, argv, &i, "--timeout", NULL))) {
			o->timeout_s = atof(v);
			if (o->timeout_s <= 0)
				return run_usage("--timeout needs a positive number of seconds, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--iters", NULL))) {
			o->iters = atoi(v);
			if (o->iters < 1)
				return run_usage("--iters needs a positive count, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--warmup", NULL)))
			o->warmup = atoi(v) < 0 ? 0 : atoi(v);
		else if ((v = cli_optval(argc, argv, &i, "--check-rows", NULL))) {
			o->check_rows = atoi(v);
			if (o->check_rows < 1)
				return run_usage("--check-rows needs a positive count, got '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--device", NULL)))
			o->device = atoi(v);
		else if ((v = cli_optval(argc, argv, &i, "--format", NULL))) {
			if (!strcmp(v, "json"))
				o->json = true;
			else if (strcmp(v, "text"))
				return run_usage("unknown --format '%s' (text or json)", v);
		} else if ((v = cli_optval(argc, argv, &i, "--oracle", NULL))) {
			if (!strcmp(v, "none"))
				o->oracle_none = true;
			else if (strcmp(v, "auto"))
				return run_usage("unknown --oracle '%s' (auto or none)", v);
		} else if (!strcmp(a, "--time"))
			o->time = true;
		else if (!strcmp(a, "--debug-hang"))
			o->debug_hang = true;
		else if (!strcmp(a, "--no-verify"))
			o->no_verify = true;
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

/* ---- what the runner derives from the plan ---- */

typedef struct TensorInfo {
	Decl *decl;
	bool output;
	bool accum;               /* written by atomic_add: zeroed before a launch, not poisoned */
	bool sparse;              /* written only by atomic_add or scatter stores: unwritten elements are expected */
	long long dims[MAX_RANK];
	size_t elems, bytes;
} TensorInfo;

typedef struct Job {
	const RunOpts *o;
	Plan *plan;
	Kernel *k;
	long long dimvals[64];
	TensorInfo *tens;         /* per Kernel.params index (scalars: bytes = 0) */
	double *scalars;          /* per Kernel.params index */
	unsigned grid[3], block[3], cluster[3];
	long long ctas;           /* CTAs launched (for the recorder) */
	JitResult jit;
	const char *src;          /* generated CUDA C++ */
	/* oracle */
	int oracle;               /* 0 none, 1 gemm_abt, 2 kmeans_assign, 3 kmeans_divide, 4 kmeans_segmented,
	                           * 5 kmeans_segsum */
	int o_a, o_b, o_c, o_n;   /* param indices (kmeans: X, Cent, Out, Cnorm;
	                           * divide: Sums, Counts, Cent, NewCent;
	                           * segmented: X, Order, Offsets, Cent;
	                           * segsum: X, Order, Offsets, Sums, with o_d = Counts) */
	int o_d, o_e;             /* divide: the ‖c‖² and shift outputs */
	long long om, on, ok;     /* gemm: M N K; kmeans: N K D */
	long long ob;             /* kmeans assign/divide: batches (a leading dim shared by every tensor), else 1 */
} Job;

/* True if statement tree writes global param `d` (store / tma store / atomic). */
static bool writes_param(Stmt **body, int n, const Decl *d)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = body[i];
		if ((s->kind == S_STORE || s->kind == S_TMA_STORE || s->kind == S_ATOMIC) && s->dst) {
			const char *b = lower_base_name(s->dst);
			if (b && !strcmp(b, d->name))
				return true;
		}
		if (writes_param(s->body, s->nbody, d) || writes_param(s->els, s->nels, d))
			return true;
	}
	return false;
}

/* How the statements write global param d: *dense when some store writes a
 * plain tile, *atomic when some atomic_add updates it, *scatter when some
 * store names its element by an index vector (a fragment slice start). */
static void write_kinds(const Kernel *k, Stmt **body, int n, const Decl *d, bool *dense, bool *atomic, bool *scatter)
{
	for (int i = 0; i < n; i++) {
		Stmt *s = body[i];
		const char *b = (s->kind == S_STORE || s->kind == S_TMA_STORE || s->kind == S_ATOMIC) && s->dst ? lower_base_name(s->dst) : NULL;
		if (b && !strcmp(b, d->name)) {
			bool vec = false;
			for (int q = 0; s->dst->kind == E_INDEX && q < s->dst->nslices; q++) {
				const Expr *st = s->dst->slices[q].start;
				for (int f = 0; s->dst->slices[q].kind == SL_POINT && st && st->kind == E_IDENT && f < k->ndecls; f++)
					vec |= k->decls[f]->kind == D_FRAG && !strcmp(k->decls[f]->name, st->name);
			}
			if (s->kind == S_ATOMIC)
				*atomic = true;
			else if (vec)
				*scatter = true;
			else
				*dense = true;
		}
		write_kinds(k, s->body, s->nbody, d, dense, atomic, scatter);
		write_kinds(k, s->els, s->nels, d, dense, atomic, scatter);
	}
}

/* Name of a shape dimension expression when it is a bare identifier. */
static const char *dim_name(const Expr *e)
{
	return e && e->kind == E_IDENT ? e->name : NULL;
}

static bool same_name(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Leading batch dims: 1 when every tensor in ps has one more dim than its
 * base rank and all share the first dim's name (a batched kernel), 0 when
 * none has, -1 otherwise. */
static int batch_dims(const Kernel *k, const int *ps, const int *base, int n)
{
	int bo = k->params[ps[0]]->rank - base[0];
	if (bo != 0 && bo != 1)
		return -1;
	for (int i = 0; i < n; i++) {
		const Decl *d = k->params[ps[i]];
		if (d->rank != base[i] + bo || (bo && !same_name(dim_name(d->shape[0]), dim_name(k->params[ps[0]]->shape[0]))))
			return -1;
	}
	return bo;
}

/* Recognise the k-means assignment: Out i32[P] written; inputs X [P,R],
 * Cent [Q,R] (both bf16 or both f16), Cnorm f32[Q] (labels = argmin_j
 * Cnorm[j] - 2 X[i]·Cent[j]); or the batched form with a leading dim B on
 * all four (Out [B,P], X [B,P,R], ...). */
static void pick_kmeans(Job *j, int out)
{
	Kernel *k = j->k;
	Decl *O = k->params[out];
	int bo = O->rank - 1;
	if ((bo != 0 && bo != 1) || O->dt != DT_I32)
		return;
	DType et = DT_BF16;   /* element type of X and Cent: bf16 or f16, the same for both */
	int x = -1, c = -1, n = -1;
	const char *p = dim_name(O->shape[bo]);
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		if (d->space != SP_GLOBAL || i == out)
			continue;
		if (d->rank == 1 + bo && d->dt == DT_F32)
			n = i;
		else if (d->rank == 2 + bo && (d->dt == DT_BF16 || d->dt == DT_F16) && same_name(dim_name(d->shape[bo]), p))
			x = i, et = d->dt;
		else if (d->rank == 2 + bo && (d->dt == DT_BF16 || d->dt == DT_F16))
			c = i;
	}
	if (x < 0 || c < 0 || n < 0 || k->params[c]->dt != et)
		return;
	int ps[] = {out, x, c, n}, base[] = {1, 2, 2, 1};
	if (batch_dims(k, ps, base, 4) != bo)
		return;
	Decl *X = k->params[x], *C = k->params[c], *Nm = k->params[n];
	if (!same_name(dim_name(X->shape[bo + 1]), dim_name(C->shape[bo + 1])) || !same_name(dim_name(Nm->shape[bo]), dim_name(C->shape[bo])))
		return;
	j->oracle = 2;
	j->o_a = x;
	j->o_b = c;
	j->o_c = out;
	j->o_n = n;
	j->ob = bo ? j->tens[x].dims[0] : 1;
	j->om = j->tens[x].dims[bo];
	j->on = j->tens[c].dims[bo];
	j->ok = j->tens[x].dims[bo + 1];
}

/* Recognise the k-means divide step: inputs Sums f32[P,R], Counts i32[P],
 * Cent [P,R] (bf16/f16); outputs NewCent [P,R] (same type as Cent) and two
 * f32[P] vectors, in declaration order ‖c_new‖² then ‖c_new − c_old‖²; or
 * the batched form with a leading dim B on all six. */
static void pick_kmeans_divide(Job *j)
{
	Kernel *k = j->k;
	int sums = -1, cnt = -1, cent = -1, newc = -1, v[2] = {-1, -1}, nv = 0;
	for (int bo = 0; bo < 2 && sums < 0; bo++) {
		cnt = cent = newc = -1, nv = 0;
		for (int i = 0; i < k->nparams; i++) {
			Decl *d = k->params[i];
			bool h = d->dt == DT_BF16 || d->dt == DT_F16;
			if (d->space != SP_GLOBAL)
				continue;
			if (!j->tens[i].output && d->rank == 2 + bo && d->dt == DT_F32)
				sums = i;
			else if (!j->tens[i].output && d->rank == 1 + bo && d->dt == DT_I32)
				cnt = i;
			else if (!j->tens[i].output && d->rank == 2 + bo && h)
				cent = i;
			else if (j->tens[i].output && d->rank == 2 + bo && h)
				newc = i;
			else if (j->tens[i].output && d->rank == 1 + bo && d->dt == DT_F32 && nv < 2)
				v[nv++] = i;
		}
		if (sums >= 0 && (cnt < 0 || cent < 0 || newc < 0 || nv != 2))
			return;
	}
	if (sums < 0 || k->params[cent]->dt != k->params[newc]->dt)
		return;
	int ps[] = {sums, cnt, cent, newc, v[0], v[1]}, base[] = {2, 1, 2, 2, 1, 1};
	int bo = batch_dims(k, ps, base, 6);
	if (bo < 0)
		return;
	const char *p = dim_name(k->params[sums]->shape[bo]), *r = dim_name(k->params[sums]->shape[bo + 1]);
	for (size_t i = 1; i < NELEM(ps); i++)
		if (!same_name(dim_name(k->params[ps[i]]->shape[bo]), p))
			return;
	if (!same_name(dim_name(k->params[cent]->shape[bo + 1]), r) || !same_name(dim_name(k->params[newc]->shape[bo + 1]), r))
		return;
	j->oracle = 3;
	j->o_a = sums, j->o_b = cnt, j->o_c = cent, j->o_n = newc, j->o_d = v[0], j->o_e = v[1];
	j->ob = bo ? j->tens[sums].dims[0] : 1;
	j->on = j->tens[sums].dims[bo];
	j->ok = j->tens[sums].dims[bo + 1];
}

/* Recognise the segmented k-means update: inputs X [P,R] (bf16/f16), Order
 * i32[P] (point ids grouped by cluster), Offsets i32[S] with S = Q + 1 (segment
 * starts); output Cent [Q,R] of X's type, updated in place (an empty segment
 * keeps its centroid, so Cent is an input too: it is initialised, not poisoned). */
static void pick_kmeans_segmented(Job *j, int out)
{
	Kernel *k = j->k;
	Decl *C = k->params[out];
	if (C->rank != 2 || (C->dt != DT_BF16 && C->dt != DT_F16))
		return;
	int x = -1, ord = -1, off = -1;
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		if (d->space != SP_GLOBAL || i == out)
			continue;
		if (d->rank == 2 && d->dt == C->dt)
			x = i;
	}
	if (x < 0 || !same_name(dim_name(k->params[x]->shape[1]), dim_name(C->shape[1])))
		return;
	const char *pn = dim_name(k->params[x]->shape[0]);
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		if (d->space != SP_GLOBAL || i == out || d->rank != 1 || d->dt != DT_I32)
			continue;
		if (same_name(dim_name(d->shape[0]), pn))
			ord = i;
		else if (j->tens[i].dims[0] == j->tens[out].dims[0] + 1)
			off = i;
	}
	if (ord < 0 || off < 0)
		return;
	j->oracle = 4;
	j->o_a = x, j->o_b = ord, j->o_c = off, j->o_n = out;
	j->om = j->tens[x].dims[0];
	j->on = j->tens[out].dims[0];
	j->ok = j->tens[x].dims[1];
}

/* Recognise the segment sums of the sorted k-means update: inputs X [B,P,R]
 * (bf16/f16), Order i32[B,P], then two i32[B,Q] in declaration order (segment
 * starts, segment sizes); output Sums f32[B,Q,R]. */
static void pick_kmeans_segsum(Job *j, int out)
{
	Kernel *k = j->k;
	Decl *S = k->params[out];
	if (S->rank != 3 || S->dt != DT_F32)
		return;
	int x = -1, ord = -1, q[2] = {-1, -1}, nq = 0;
	const char *bn = dim_name(S->shape[0]), *kn = dim_name(S->shape[1]), *rn = dim_name(S->shape[2]);
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		if (d->space != SP_GLOBAL || i == out || !same_name(dim_name(d->shape[0]), bn))
			continue;
		if (d->rank == 3 && (d->dt == DT_BF16 || d->dt == DT_F16) && same_name(dim_name(d->shape[2]), rn))
			x = i;
		else if (d->rank == 2 && d->dt == DT_I32 && same_name(dim_name(d->shape[1]), kn) && nq < 2)
			q[nq++] = i;
		else if (d->rank == 2 && d->dt == DT_I32)
			ord = i;
	}
	if (x < 0 || ord < 0 || nq != 2 || !same_name(dim_name(k->params[x]->shape[1]), dim_name(k->params[ord]->shape[1])))
		return;
	j->oracle = 5;
	j->o_a = x, j->o_b = ord, j->o_c = q[0], j->o_d = q[1], j->o_n = out;
	j->ob = j->tens[x].dims[0];
	j->om = j->tens[x].dims[1];
	j->on = j->tens[out].dims[1];
	j->ok = j->tens[x].dims[2];
}

/* Recognise C[X,Y] = A[X,R] · B[Y,R]ᵀ among the global params. */
static void pick_oracle(Job *j)
{
	Kernel *k = j->k;
	int outs = 0, ins = 0, out = -1, in[2] = {-1, -1};
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		if (d->space != SP_GLOBAL)
			continue;
		if (j->tens[i].output) {
			outs++;
			out = i;
		} else {
			if (ins < 2)
				in[ins] = i;
			ins++;
		}
	}
	if (outs == 1 && ins == 3)
		pick_kmeans(j, out);
	if (outs == 1 && ins == 3 && !j->oracle)
		pick_kmeans_segmented(j, out);
	if (outs == 3 && ins == 3)
		pick_kmeans_divide(j);
	if (outs == 1 && ins == 4)
		pick_kmeans_segsum(j, out);
	if (outs != 1 || ins != 2)
		return;
	Decl *C = k->params[out], *A = k->params[in[0]], *B = k->params[in[1]];
	if (C->rank != 2 || A->rank != 2 || B->rank != 2 || A->dt != DT_BF16 || B->dt != DT_BF16 ||
	    (C->dt != DT_BF16 && C->dt != DT_F32))
		return;
	const char *x = dim_name(C->shape[0]), *y = dim_name(C->shape[1]);
	if (!same_name(dim_name(A->shape[0]), x)) {   /* B declared first: swap */
		Decl *t = A;
		A = B;
		B = t;
		int ti = in[0];
		in[0] = in[1];
		in[1] = ti;
	}
	if (!same_name(dim_name(A->shape[0]), x) || !same_name(dim_name(B->shape[0]), y) ||
	    !same_name(dim_name(A->shape[1]), dim_name(B->shape[1])))
		return;
	j->oracle = 1;
	j->o_a = in[0];
	j->o_b = in[1];
	j->o_c = out;
	j->om = j->tens[out].dims[0];
	j->on = j->tens[out].dims[1];
	j->ok = j->tens[in[0]].dims[1];
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

static int scalar_bytes(DType dt)
{
	int s = dtype_size(dt);
	return s > 0 ? s : 4;
}

/* Store scalar value v of dtype dt into buf (8-byte aligned storage). */
static void put_scalar(void *buf, DType dt, double v)
{
	switch (dt) {
	case DT_F32: { float f = (float)v; memcpy(buf, &f, 4); break; }
	case DT_BF16: { uint16_t h = oracle_f32_to_bf16((float)v); memcpy(buf, &h, 2); break; }
	case DT_I64: { int64_t x = (int64_t)v; memcpy(buf, &x, 8); break; }
	case DT_U32: { uint32_t x = (uint32_t)v; memcpy(buf, &x, 4); break; }
	case DT_BOOL: case DT_F8E4M3: { uint8_t x = (uint8_t)v; memcpy(buf, &x, 1); break; }
	default: { int32_t x = (int32_t)v; memcpy(buf, &x, 4); break; }
	}
}

/* NVRTC compile of the generated source (debug-hang builds get CAKE_DEBUG_HANG). */
static int compile(Job *j, JitResult *out, char *err, size_t errlen)
{
	JitOptions jo = {0};
	jo.arch = target_info(j->plan->target)->arch;
	const char *dbgdef[] = {"-DCAKE_DEBUG_HANG=1"};
	if (j->o->debug_hang) {
		jo.extra = dbgdef;
		jo.nextra = 1;
	}
	return jit_compile(j->src, j->k->name, &jo, out, err, errlen);
}

static void child_run(Job *j, RunReport *r, void *rec, size_t rec_bytes)
{
	const RunOpts *o = j->o;
	Plan *p = j->plan;
	Kernel *k = j->k;
	char jerr[512] = "";
	int jr = compile(j, &j->jit, jerr, sizeof jerr);
	r->nkern = j->jit.nkern < 4 ? j->jit.nkern : 4;
	memcpy(r->kern, j->jit.kern, sizeof(JitKernelInfo) * (size_t)r->nkern);
	r->cache_hit = j->jit.cache_hit;
	if (jr != JIT_OK) {
		rep_err(r, RUN_COMPILE_ERROR, "%s", jerr);
		return;
	}
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
	r->stage = 1;
	if (p->persistent) {
		long long per = j->cluster[0] * j->cluster[1] * j->cluster[2];
		long long n = j->ctas < g.sm_count ? j->ctas : g.sm_count;
		n = n / per * per;
		if (n < per)
			n = per;
		j->grid[0] = (unsigned)n;
		j->grid[1] = j->grid[2] = 1;
		j->ctas = n;
	}
	memcpy(r->grid, j->grid, sizeof r->grid);
	memcpy(r->cluster, j->cluster, sizeof r->cluster);
	r->block = j->block[0];
	r->smem = p->smem_bytes;

	void *mod, *fn;
	if (gpu_module_load(&g, j->jit.cubin, &mod) || gpu_module_func(&g, mod, p->name, &fn)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
		return;
	}
	gpu_func_info(&g, fn, &r->regs, &r->local_bytes, &(int){0});
	if (p->smem_bytes > g.smem_optin) {
		rep_err(r, RUN_LAUNCH_ERROR, "kernel needs %lld bytes of dynamic shared memory; %s allows %d per block",
		        p->smem_bytes, g.name, g.smem_optin);
		return;
	}
	if (gpu_func_set_smem(&g, fn, (int)p->smem_bytes)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
		return;
	}

	/* tensors: host images, device buffers */
	int np = k->nparams;
	void **host = xcalloc((size_t)np, sizeof *host);
	GpuPtr *dev = xcalloc((size_t)np, sizeof *dev);
	for (int i = 0; i < np; i++) {
		TensorInfo *t = &j->tens[i];
		if (!t->bytes)
			continue;
		host[i] = malloc(t->bytes);
		if (!host[i]) {
			rep_err(r, RUN_LAUNCH_ERROR, "host out of memory for '%s' (%zu bytes)", t->decl->name, t->bytes);
			return;
		}
		if (gpu_alloc(&g, &dev[i], t->bytes)) {
			rep_err(r, RUN_LAUNCH_ERROR, "allocating '%s' (%zu bytes): %s", t->decl->name, t->bytes, g.err);
			return;
		}
		if (!t->output) {
			run_fill_input(host[i], t->decl->dt, t->elems, o->seed + 0x9e37u * (uint64_t)(i + 1));
			if (gpu_htod(&g, dev[i], host[i], t->bytes)) {
				rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
				return;
			}
		}
	}
	uint16_t *cold = NULL;   /* segmented update: the centroids before the launch */
	if (j->oracle == 4) {
		/* valid structured inputs: Order grouped by random labels (some clusters empty),
		 * Offsets their segment starts; Cent initialised and kept for the oracle */
		int ci = j->o_n;
		TensorInfo *ct = &j->tens[ci];
		oracle_kmeans_segments(j->om, (int)j->on, o->seed ^ 0x5e9u, NULL, host[j->o_b], host[j->o_c]);
		run_fill_input(host[ci], ct->decl->dt, ct->elems, o->seed + 0x9e37u * (uint64_t)(ci + 1));
		cold = malloc(ct->bytes);
		if (!cold) {
			rep_err(r, RUN_INTERNAL, "host out of memory for the old centroids (%zu bytes)", ct->bytes);
			return;
		}
		memcpy(cold, host[ci], ct->bytes);
		if (gpu_htod(&g, dev[j->o_b], host[j->o_b], j->tens[j->o_b].bytes) ||
		    gpu_htod(&g, dev[j->o_c], host[j->o_c], j->tens[j->o_c].bytes)) {
			rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
			return;
		}
	}
	if (j->oracle == 5) {
		/* valid segments per batch: point ids grouped by random labels (some clusters
		 * empty), segment starts and sizes */
		long long B = j->ob, N = j->om;
		int K = (int)j->on;
		int32_t *tmp = malloc(sizeof(int32_t) * (size_t)(K + 1));
		if (!tmp) {
			rep_err(r, RUN_INTERNAL, "host out of memory for the segments (K=%d)", K);
			return;
		}
		for (long long b = 0; b < B; b++) {
			int32_t *off = (int32_t *)host[j->o_c] + b * K, *cnt = (int32_t *)host[j->o_d] + b * K;
			oracle_kmeans_segments(N, K, (o->seed ^ 0x5e9u) + (uint64_t)b, NULL, (int32_t *)host[j->o_b] + b * N, tmp);
			for (int c = 0; c < K; c++)
				off[c] = tmp[c], cnt[c] = tmp[c + 1] - tmp[c];
		}
		free(tmp);
		if (gpu_htod(&g, dev[j->o_b], host[j->o_b], j->tens[j->o_b].bytes) ||
		    gpu_htod(&g, dev[j->o_c], host[j->o_c], j->tens[j->o_c].bytes) ||
		    gpu_htod(&g, dev[j->o_d], host[j->o_d], j->tens[j->o_d].bytes)) {
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

	/* arguments, in Plan.args order (+ the recorder) */
	int na = p->nargs + 1;
	void **args = xcalloc((size_t)na, sizeof *args);
	GpuTensorMap *maps = aligned_alloc(64, sizeof(GpuTensorMap) * (size_t)(p->ntmaps > 0 ? p->ntmaps : 1));
	uint64_t *vals = xcalloc((size_t)na, sizeof *vals);
	for (int a = 0; a < p->nargs; a++) {
		PlanArg *pa = &p->args[a];
		switch (pa->kind) {
		case ARG_TMAP: {
			PlanTmap *tm = &p->tmaps[pa->index];
			int pi = 0;
			while (pi < k->nparams - 1 && k->params[pi] != tm->param_decl)
				pi++;
			uint64_t dims[MAX_RANK], strides[MAX_RANK];
			uint32_t box[MAX_RANK];
			for (int d = 0; d < tm->rank; d++) {
				long long v = 0;
				eval_expr(tm->gdims[d], k, j->dimvals, &v);
				dims[d] = (uint64_t)v;
				box[d] = (uint32_t)tm->box[d];
				if (d > 0) {
					eval_expr(tm->gstrides[d], k, j->dimvals, &v);
					strides[d - 1] = (uint64_t)v;
				}
			}
			int dt = tm->dt == DT_BF16 ? GPU_TMAP_BF16 : tm->dt == DT_F16 ? GPU_TMAP_F16
			       : tm->dt == DT_F32 ? GPU_TMAP_F32 : GPU_TMAP_U8;
			int sw = tm->swizzle == SWZ_128B ? GPU_SWZ_128B : tm->swizzle == SWZ_64B ? GPU_SWZ_64B
			       : tm->swizzle == SWZ_32B ? GPU_SWZ_32B : GPU_SWZ_NONE;
			if (gpu_tmap_encode(&g, &maps[pa->index], dt, tm->rank, dev[pi], dims, strides, box, sw)) {
				rep_err(r, RUN_LAUNCH_ERROR, "tensor map of '%s': %s", tm->param, g.err);
				return;
			}
			args[a] = &maps[pa->index];
			break;
		}
		case ARG_PTR:
			vals[a] = dev[pa->index];
			args[a] = &vals[a];
			break;
		case ARG_DIM: {
			int32_t v = (int32_t)j->dimvals[pa->index];
			memcpy(&vals[a], &v, 4);
			args[a] = &vals[a];
			break;
		}
		case ARG_SCALAR:
			put_scalar(&vals[a], pa->dt, j->scalars[pa->index]);
			args[a] = &vals[a];
			break;
		case ARG_DEBUG:
			break;
		}
	}
	int nargs = p->nargs;
	if (o->debug_hang) {
		vals[nargs] = drec;
		args[nargs] = &vals[nargs];
	}
	r->stage = 2;

	/* correctness launch: poison, launch, synchronise (an output updated in place
	 * is uploaded instead: its old contents are part of the contract) */
	for (int i = 0; i < np; i++) {
		if (!j->tens[i].output)
			continue;
		if (j->oracle == 4 && i == j->o_n ? gpu_htod(&g, dev[i], host[i], j->tens[i].bytes)
		                                  : gpu_memset8(&g, dev[i], j->tens[i].accum ? 0 : 0xFF, j->tens[i].bytes)) {
			rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
			return;
		}
	}
	gpu_sync(&g);
	if (gpu_launch(&g, fn, j->grid, j->block, j->cluster, (unsigned)p->smem_bytes, args)) {
		rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
		return;
	}
	r->stage = 3;
	if (gpu_sync(&g)) {
		rep_err(r, RUN_FAULT, "%s", g.err);
		return;
	}
	r->stage = 4;

	/* check */
	bool bad = false;
	for (int i = 0; i < np; i++) {
		TensorInfo *t = &j->tens[i];
		if (!t->output)
			continue;
		if (gpu_dtoh(&g, host[i], dev[i], t->bytes)) {
			rep_err(r, RUN_FAULT, "%s", g.err);
			return;
		}
		if ((j->oracle == 4 && i == j->o_n) || t->accum)
			continue;   /* updated in place or accumulated into zeros: never poisoned */
		int es = dtype_size(t->decl->dt);
		for (size_t e = 0; e < t->elems; e++) {
			const unsigned char *b = (const unsigned char *)host[i] + e * (size_t)es;
			bool poisoned = true;
			for (int q = 0; q < es; q++)
				poisoned &= b[q] == 0xFF;
			if (poisoned && t->sparse)
				r->unwritten_sparse++;   /* a scatter need not reach every element */
			else if (poisoned) {
				if (!r->unwritten++ && r->first_bad < 0)
					r->first_bad = (long long)e;
			}
		}
	}
	r->first_bad = r->unwritten ? r->first_bad : -1;
	if (j->oracle == 1 && !o->oracle_none) {
		int M = (int)j->om, N = (int)j->on, K = (int)j->ok;
		int nrows = M <= o->check_rows ? M : o->check_rows;
		int *rows = xmalloc(sizeof(int) * (size_t)nrows);
		uint64_t st = o->seed ^ 0x5151u;
		for (int i = 0; i < nrows; i++)
			rows[i] = nrows == M ? i : i == 0 ? 0 : i == 1 ? M - 1 : (int)(oracle_splitmix64(&st) % (uint64_t)M);
		double *ref = malloc(sizeof(double) * (size_t)nrows * (size_t)N);
		if (!ref) {
			rep_err(r, RUN_INTERNAL, "host out of memory for the oracle (%d rows x %d)", nrows, N);
			return;
		}
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		oracle_gemm_abt_bf16(host[j->o_a], host[j->o_b], M, N, K, rows, nrows, ref, (int)(ncpu > 0 ? ncpu : 1));
		OracleCmp c;
		if (j->k->params[j->o_c]->dt == DT_BF16) {
			oracle_compare_bf16_rows(host[j->o_c], N, rows, nrows, ref, &c);
			r->tol = 1e-2;
		} else {
			/* f32 output: convert the sampled rows to bf16-free doubles */
			double num = 0, den = 0;
			memset(&c, 0, sizeof c);
			c.first_bad = -1;
			for (int ri = 0; ri < nrows; ri++)
				for (int n = 0; n < N; n++) {
					double ov = ((float *)host[j->o_c])[(size_t)rows[ri] * N + n], rv = ref[(size_t)ri * N + n];
					if (!isfinite(ov)) {
						c.n_nan++;
						if (c.first_bad < 0)
							c.first_bad = (long long)rows[ri] * N + n, c.first_bad_out = ov, c.first_bad_ref = rv;
						continue;
					}
					num += (ov - rv) * (ov - rv);
					den += rv * rv;
					if (fabs(ov - rv) > 1e-3 + 1e-3 * fabs(rv) && c.first_bad < 0)
						c.first_bad = (long long)rows[ri] * N + n, c.first_bad_out = ov, c.first_bad_ref = rv;
				}
			c.rel_err = c.n_nan ? NAN : den > 0 ? sqrt(num / den) : 0;
			r->tol = 1e-5;
		}
		r->checked = 1;
		r->rows_checked = nrows;
		r->rel_err = c.rel_err;
		r->n_nan = c.n_nan;
		if (c.first_bad >= 0 && (r->first_bad < 0 || c.first_bad < r->first_bad)) {
			r->first_bad = c.first_bad;
			r->bad_out = c.first_bad_out;
			r->bad_ref = c.first_bad_ref;
		}
		r->flops = 2.0 * M * (double)N * K;
		bad = c.n_nan || !(c.rel_err <= r->tol) || c.first_bad >= 0;
		free(ref);
		free(rows);
	}
	/* batched k-means kernels: the first and the last batch are checked */
	long long nbat = j->ob > 1 ? 2 : 1, bat[2] = {0, j->ob - 1};
	if (j->oracle == 2 && !o->oracle_none) {
		int N = (int)j->om, K = (int)j->on, D = (int)j->ok;
		int nrows = N <= o->check_rows ? N : o->check_rows;
		int *rows = xmalloc(sizeof(int) * (size_t)nrows);
		uint64_t st = o->seed ^ 0x5151u;
		for (int i = 0; i < nrows; i++)
			rows[i] = nrows == N ? i : i == 0 ? 0 : i == 1 ? N - 1 : (int)(oracle_splitmix64(&st) % (uint64_t)N);
		r->tol = ORACLE_KMEANS_TOL;
		r->rel_err = 0;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		long long nbad = 0, nb;
		KmeansAssignCheck c, first = {.first_bad = -1};
		for (long long bi = 0; bi < nbat; bi++) {
			size_t b = (size_t)bat[bi];
			nb = oracle_kmeans_assign((const uint16_t *)host[j->o_a] + b * (size_t)N * (size_t)D,
			                          (const uint16_t *)host[j->o_b] + b * (size_t)K * (size_t)D,
			                          j->k->params[j->o_a]->dt == DT_F16, (const float *)host[j->o_n] + b * (size_t)K, K, D,
			                          (const int32_t *)host[j->o_c] + b * (size_t)N, rows, nrows, r->tol,
			                          (int)(ncpu > 0 ? ncpu : 1), &c);
			if (nb < 0)
				break;
			if (nb && !nbad)
				first = c, first.first_bad += (long long)b * N;   /* flat index into Out */
			nbad += nb;
			r->rel_err = c.max_tie_gap > r->rel_err ? c.max_tie_gap : r->rel_err;
			r->ties_excused += c.ties_excused;
			r->n_nan += c.nan_points;
		}
		free(rows);
		if (nb < 0) {
			rep_err(r, RUN_INTERNAL, "host out of memory for the k-means oracle (K=%d, D=%d)", K, D);
			return;
		}
		r->checked = 2;
		r->rows_checked = nrows * nbat;
		r->flops = 2.0 * N * (double)K * D * (double)j->ob;
		if (nbad && !r->unwritten) {
			rep_err(r, RUN_MISMATCH, "%lld of %lld checked points are not labelled with their float64 nearest centroid "
			        "(and are no near-tie within %.1e); first: point %lld (flat) labelled %d, nearest is %d (score gap %.3e); "
			        "%lld near-ties excused",
			        nbad, (long long)r->rows_checked, r->tol, first.first_bad, first.first_bad_out, first.first_bad_ref, first.first_bad_gap,
			        r->ties_excused);
			r->first_bad = first.first_bad;
			return;
		}
	}
	if (j->oracle == 3 && !o->oracle_none) {
		int K = (int)j->on, D = (int)j->ok;
		KmeansUpdateCheck c, first = {.first_bad = -1};
		r->tol = ORACLE_KMEANS_TOL;
		r->rel_err = 0;
		long long nbad = 0, nb = 0;
		for (long long bi = 0; bi < nbat; bi++) {
			size_t b = (size_t)bat[bi], kd = b * (size_t)K * (size_t)D, kk = b * (size_t)K;
			nb = oracle_kmeans_divide_check((const float *)host[j->o_a] + kd, (const int32_t *)host[j->o_b] + kk,
			                                (const uint16_t *)host[j->o_c] + kd, j->k->params[j->o_c]->dt == DT_F16, K, D,
			                                (const uint16_t *)host[j->o_n] + kd, (const float *)host[j->o_d] + kk,
			                                (const float *)host[j->o_e] + kk, r->tol, &c);
			if (nb < 0)
				break;
			if (nb && !nbad)
				first = c, first.first_bad += (long long)kd;
			nbad += nb;
			r->rel_err = c.rel_err > r->rel_err ? c.rel_err : r->rel_err;
			r->n_nan += c.n_nan;
			r->ties_excused += c.empty;   /* reported as the number of empty clusters kept */
		}
		if (nb < 0) {
			rep_err(r, RUN_INTERNAL, "host out of memory for the k-means divide oracle (K=%d, D=%d)", K, D);
			return;
		}
		r->checked = 3;
		r->rows_checked = K * nbat;
		if (nbad && !r->unwritten) {
			rep_err(r, RUN_MISMATCH, "k-means divide: %lld bad centroid elements (%lld NaN, %lld changed in empty "
			        "clusters; first at flat index %lld: got %g, expected %g), %lld bad norms, %lld bad shifts",
			        first.bad, first.n_nan, first.empty_changed, first.first_bad, first.first_bad_out, first.first_bad_ref,
			        first.norm_bad, first.shift_bad);
			r->first_bad = first.first_bad;
			return;
		}
	}
	if (j->oracle == 5 && !o->oracle_none) {
		int K = (int)j->on, D = (int)j->ok;
		long long N = j->om, nbad = 0, nb = 0;
		KmeansUpdateCheck c, first = {.first_bad = -1};
		r->tol = ldexp(1.0, -24);   /* per point of the segment, times Σ|x| */
		r->rel_err = 0;
		for (long long bi = 0; bi < nbat; bi++) {
			size_t b = (size_t)bat[bi];
			nb = oracle_kmeans_segsum_check((const uint16_t *)host[j->o_a] + b * (size_t)N * (size_t)D,
			                                j->k->params[j->o_a]->dt == DT_F16, N, D, K,
			                                (const int32_t *)host[j->o_b] + b * (size_t)N, (const int32_t *)host[j->o_c] + b * (size_t)K,
			                                (const int32_t *)host[j->o_d] + b * (size_t)K,
			                                (const float *)host[j->o_n] + b * (size_t)K * (size_t)D, &c);
			if (nb < 0)
				break;
			if (nb && !nbad)
				first = c, first.first_bad += (long long)(b * (size_t)K * (size_t)D);
			nbad += nb;
			r->rel_err = c.rel_err > r->rel_err || isnan(c.rel_err) ? c.rel_err : r->rel_err;
			r->n_nan += c.n_nan;
			r->ties_excused += c.empty;   /* reported as the number of empty clusters */
		}
		if (nb < 0) {
			rep_err(r, RUN_INTERNAL, nb == -1 ? "host out of memory for the segment-sum oracle (K=%d, D=%d)"
			                                  : "segment sums: the generated segments are malformed (K=%d, D=%d)", K, D);
			return;
		}
		r->checked = 5;
		r->rows_checked = K * nbat;
		if (nbad && !r->unwritten) {
			rep_err(r, RUN_MISMATCH, "segment sums: %lld bad elements (%lld NaN; first at flat index %lld: got %g, "
			        "expected %g)", nbad, first.n_nan, first.first_bad, first.first_bad_out, first.first_bad_ref);
			r->first_bad = first.first_bad;
			return;
		}
	}
	if (j->oracle == 4 && !o->oracle_none) {
		int K = (int)j->on, D = (int)j->ok;
		KmeansUpdateCheck c;
		r->tol = ORACLE_KMEANS_TOL;
		long long nbad = oracle_kmeans_segmented_check(host[j->o_a], j->k->params[j->o_a]->dt == DT_F16, j->om, D, K,
		                                               host[j->o_b], host[j->o_c], cold, host[j->o_n], r->tol, &c);
		free(cold);
		if (nbad < 0) {
			rep_err(r, RUN_INTERNAL, nbad == -1 ? "host out of memory for the segmented k-means oracle (K=%d, D=%d)"
			                                    : "segmented k-means: the generated segments are malformed (K=%d, D=%d)", K, D);
			return;
		}
		r->checked = 4;
		r->rows_checked = K;
		r->rel_err = c.rel_err;
		r->n_nan = c.n_nan;
		r->ties_excused = c.empty;   /* reported as the number of empty clusters kept */
		if (nbad && !r->unwritten) {
			rep_err(r, RUN_MISMATCH, "segmented k-means update: %lld bad centroid elements (%lld NaN, %lld changed in "
			        "empty clusters; first at flat index %lld: got %g, expected %g)", c.bad, c.n_nan, c.empty_changed,
			        c.first_bad, c.first_bad_out, c.first_bad_ref);
			r->first_bad = c.first_bad;
			return;
		}
	} else {
		free(cold);
	}
	if (r->unwritten || bad) {
		if (r->unwritten)
			rep_err(r, RUN_MISMATCH, "%lld output elements were never written (still poisoned); first at flat index %lld",
			        r->unwritten, r->first_bad);
		else if (r->n_nan)
			rep_err(r, RUN_MISMATCH, "%lld NaN/inf outputs in the checked rows; first at flat index %lld", r->n_nan,
			        r->first_bad);
		else
			rep_err(r, RUN_MISMATCH, "rel err %.3e exceeds %.0e; first bad element at flat index %lld: got %g, expected %g",
			        r->rel_err, r->tol, r->first_bad, r->bad_out, r->bad_ref);
		return;
	}
	r->stage = 5;

	/* timing */
	if (o->time) {
		void *e0, *e1;
		if (gpu_event_create(&g, &e0) || gpu_event_create(&g, &e1)) {
			rep_err(r, RUN_INTERNAL, "%s", g.err);
			return;
		}
		for (int w = 0; w < o->warmup; w++)
			if (gpu_launch(&g, fn, j->grid, j->block, j->cluster, (unsigned)p->smem_bytes, args)) {
				rep_err(r, RUN_LAUNCH_ERROR, "%s", g.err);
				return;
			}
		float *ms = xmalloc(sizeof(float) * (size_t)o->iters);
		for (int it = 0; it < o->iters; it++) {
			gpu_memset8(&g, dflush, (unsigned char)it, FLUSH_BYTES);
			for (int i = 0; i < np; i++)
				if (j->tens[i].output)
					gpu_memset8(&g, dev[i], j->tens[i].accum ? 0 : 0xFF, j->tens[i].bytes);
			gpu_event_record(&g, e0);
			if (gpu_launch(&g, fn, j->grid, j->block, j->cluster, (unsigned)p->smem_bytes, args)) {
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

/* ---- output ---- */

static void print_result(const Job *j, const RunReport *r, RunVerdict v, const char *err, const char *story)
{
	const RunOpts *o = j->o;
	const Kernel *k = j->k;
	StrBuf b = {0};
	if (o->json) {
		sb_puts(&b, "{\"verdict\":");
		sb_json_str(&b, run_verdict_name(v));
		sb_puts(&b, ",\"kernel\":");
		sb_json_str(&b, k ? k->name : "");
		sb_puts(&b, ",\"file\":");
		sb_json_str(&b, o->file);
		sb_puts(&b, ",\"dims\":{");
		for (int i = 0; k && i < k->ndims; i++)
			sb_printf(&b, "%s\"%s\":%lld", i ? "," : "", k->dims[i], j->dimvals[i]);
		sb_printf(&b, "},\"seed\":%llu", (unsigned long long)o->seed);
		sb_puts(&b, ",\"error\":");
		if (err && *err)
			sb_json_str(&b, err);
		else
			sb_puts(&b, "null");
		if (story && *story) {
			sb_puts(&b, ",\"hang_story\":");
			sb_json_str(&b, story);
		}
		if (r) {
			sb_puts(&b, ",\"device\":");
			sb_json_str(&b, r->device);
			sb_printf(&b, ",\"launch\":{\"grid\":[%u,%u,%u],\"block\":%u,\"cluster\":[%u,%u,%u],\"smem_bytes\":%lld}",
			          r->grid[0], r->grid[1], r->grid[2], r->block, r->cluster[0], r->cluster[1], r->cluster[2], r->smem);
		}
		if (j->jit.nkern)
			sb_printf(&b, ",\"compile\":{\"regs\":%d,\"stack_bytes\":%d,\"spill_stores\":%d,\"spill_loads\":%d,\"cache_hit\":%s}",
			          j->jit.kern[0].regs, j->jit.kern[0].stack_bytes, j->jit.kern[0].spill_stores,
			          j->jit.kern[0].spill_loads, j->jit.cache_hit ? "true" : "false");
		if (r && r->checked) {
			sb_printf(&b, ",\"check\":{\"oracle\":\"%s\",\"rows\":%d,\"rel_err\":",
			          r->checked == 5 ? "kmeans_segsum_f64" : r->checked == 4 ? "kmeans_segmented_f64" : r->checked == 3 ? "kmeans_divide_f64"
			          : r->checked == 2 ? "kmeans_assign_f64" : "gemm_abt_f64",
			          r->rows_checked);
			if (isfinite(r->rel_err))
				sb_printf(&b, "%.6e", r->rel_err);
			else
				sb_puts(&b, "null");
			if (r->checked == 2)
				sb_printf(&b, ",\"ties_excused\":%lld", r->ties_excused);
			if (r->checked >= 3)
				sb_printf(&b, ",\"empty_clusters\":%lld", r->ties_excused);
			sb_printf(&b, ",\"tolerance\":%.0e,\"nan\":%lld,\"unwritten\":%lld,\"first_bad\":%lld}", r->tol, r->n_nan,
			          r->unwritten, r->first_bad);
		} else if (r && r->stage >= 4) {
			sb_printf(&b, ",\"check\":{\"oracle\":null,\"unwritten\":%lld,\"unwritten_sparse\":%lld,\"first_bad\":%lld}",
			          r->unwritten, r->unwritten_sparse, r->first_bad);
		}
		if (r && r->iters) {
			sb_printf(&b, ",\"time_us\":{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f,\"iters\":%d}", r->med_us, r->min_us,
			          r->max_us, r->iters);
			if (r->flops > 0)
				sb_printf(&b, ",\"tflops\":%.1f", r->flops / (r->med_us * 1e-6) / 1e12);
		}
		sb_puts(&b, "}\n");
	} else {
		sb_printf(&b, "cake run: %s", k ? k->name : o->file);
		for (int i = 0; k && i < k->ndims; i++)
			sb_printf(&b, " %s=%lld", k->dims[i], j->dimvals[i]);
		sb_printf(&b, " seed=%llu", (unsigned long long)o->seed);
		if (r && r->device[0])
			sb_printf(&b, " on %s (%d SMs)", r->device, r->sm_count);
		sb_putc(&b, '\n');
		if (j->jit.nkern)
			sb_printf(&b, "  compile: %d registers, %d bytes stack, %d/%d bytes spilled (stores/loads)%s\n",
			          j->jit.kern[0].regs, j->jit.kern[0].stack_bytes, j->jit.kern[0].spill_stores,
			          j->jit.kern[0].spill_loads, j->jit.cache_hit ? ", cached cubin" : "");
		if (r && r->stage >= 1 && r->block)
			sb_printf(&b, "  launch:  grid %ux%ux%u%s, block %u, cluster %ux%ux%u, %lld bytes dynamic smem\n", r->grid[0],
			          r->grid[1], r->grid[2], j->plan && j->plan->persistent ? " (persistent)" : "", r->block,
			          r->cluster[0], r->cluster[1], r->cluster[2], r->smem);
		if (r && r->checked == 5)
			sb_printf(&b, "  check:   float64 segment-sum oracle on %d clusters (the sum of each segment of Order, within "
			          "n x 2^-24 x sum|x| of an f32 running sum): rel err %.3e, %lld empty segments summed to 0, %lld unwritten\n",
			          r->rows_checked, r->rel_err, r->ties_excused, r->unwritten);
		else if (r && r->checked == 4)
			sb_printf(&b, "  check:   float64 segmented k-means update oracle on %d centroids (the mean of each segment of "
			          "Order): rel err %.3e (tolerance %.1e), %lld empty clusters kept bit for bit\n", r->rows_checked,
			          r->rel_err, r->tol, r->ties_excused);
		else if (r && r->checked == 3)
			sb_printf(&b, "  check:   float64 k-means divide oracle on %d centroids: rel err %.3e (tolerance %.1e), "
			          "%lld empty clusters kept bit for bit, norms and shifts match, %lld unwritten\n", r->rows_checked,
			          r->rel_err, r->tol, r->ties_excused, r->unwritten);
		else if (r && r->checked == 2)
			sb_printf(&b, "  check:   float64 k-means assignment oracle on %d points: every label exact except %lld "
			          "near-ties excused (score gap <= %.1e x scale; largest %.3e), %lld unwritten\n", r->rows_checked,
			          r->ties_excused, r->tol, r->rel_err, r->unwritten);
		else if (r && r->checked)
			sb_printf(&b, "  check:   float64 GEMM oracle on %d rows: rel err %.3e (tolerance %.0e), %lld NaN, %lld unwritten\n",
			          r->rows_checked, r->rel_err, r->tol, r->n_nan, r->unwritten);
		else if (r && r->stage >= 4)
			sb_printf(&b, "  check:   no oracle for this kernel (unchecked values); %lld outputs unwritten", r->unwritten);
		if (r && !r->checked && r->stage >= 4 && r->unwritten_sparse)
			sb_printf(&b, " (and %lld elements of scatter/atomic-only outputs not reached, which a scatter may leave)",
			          r->unwritten_sparse);
		if (r && !r->checked && r->stage >= 4)
			sb_putc(&b, '\n');
		if (r && r->iters) {
			sb_printf(&b, "  time:    median %.1f us, min %.1f, max %.1f over %d launches (L2 flushed)", r->med_us,
			          r->min_us, r->max_us, r->iters);
			if (r->flops > 0)
				sb_printf(&b, ", %.1f TFLOP/s", r->flops / (r->med_us * 1e-6) / 1e12);
			sb_putc(&b, '\n');
		}
		if (story && *story)
			sb_printf(&b, "  hang:    %s\n", story);
		sb_printf(&b, "verdict: %s%s%s\n", run_verdict_name(v), err && *err ? ": " : "", err ? err : "");
	}
	fwrite(b.s, 1, b.len, stdout);
	fflush(stdout);
	sb_free(&b);
}

/* ---- parent ---- */

static bool driver_present(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	dlclose(h);
	return true;
}

static int exit_for(RunVerdict v)
{
	return v == RUN_OK ? 0 : v == RUN_NO_GPU ? GPU_EXIT_NO_DRIVER : 1;
}

/* Fork, run the child under the watchdog, fill *r; returns the verdict. */
static RunVerdict run_isolated(Job *j, RunReport *r_out, StrBuf *story, char *err, size_t errlen)
{
	const RunOpts *o = j->o;
	int slots = j->plan->nwarpgroups > 0 ? j->plan->nwarpgroups : 1;
	size_t rec_bytes = (size_t)j->ctas * (size_t)slots * sizeof(CakeHangRecord);
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
	r->first_bad = -1;
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
			run_hang_story(j->plan, j->k, rec, r->grid[0] ? ctas : j->ctas, story);
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

int run_main(int argc, char **argv)
{
	RunOpts o;
	int st = parse_args(argc, argv, &o);
	if (st)
		return st;
	SourceSet ss = {0};
	DiagList dl = {0};
	Ctx c;
	ctx_init(&c, &ss, &dl);
	Job j;
	memset(&j, 0, sizeof j);
	j.o = &o;
	RunReport rep;
	memset(&rep, 0, sizeof rep);
	char err[1024] = "";
	RunVerdict v = RUN_INTERNAL;
	int status = 2;
	StrBuf src = {0}, story = {0};

	int fi = src_load(&ss, o.file);
	if (fi < 0) {
		fprintf(stderr, "cake run: cannot read '%s'\n", o.file);
		goto out;
	}
	Program *prog = parse_file(&c, fi);
	if (!dl.nerr)
		sema_program(&c, prog);
	if (!dl.nerr && !o.no_verify)
		for (int i = 0; i < prog->nkernels; i++)
			verify_kernel(&c, prog->kernels[i]);
	if (!dl.nerr) {
		for (int i = 0; i < prog->nkernels; i++)
			if (!o.kname || !strcmp(prog->kernels[i]->name, o.kname)) {
				if (j.k && !o.kname) {
					fprintf(stderr, "cake run: '%s' holds several kernels; pick one with --kernel NAME\n", o.file);
					goto out;
				}
				j.k = prog->kernels[i];
			}
		if (!j.k) {
			fprintf(stderr, "cake run: no kernel %s%s in '%s'\n", o.kname ? "named " : "", o.kname ? o.kname : "", o.file);
			status = 1;
			goto out;
		}
		j.plan = derive_plan(&c, j.k);
	}
	if (dl.nerr || !j.plan) {
		StrBuf b = {0};
		diag_sort(&dl);
		diag_print_text(&b, &ss, &dl, isatty(2) && !getenv("NO_COLOR"));
		fwrite(b.s, 1, b.len, stderr);
		sb_free(&b);
		fprintf(stderr, "cake run: '%s' has errors; nothing was run\n", o.file);
		status = 1;
		goto out;
	}
	Kernel *k = j.k;
	Plan *p = j.plan;

	/* bind dims and scalars */
	if (k->ndims > (int)NELEM(j.dimvals)) {
		fprintf(stderr, "cake run: kernel '%s' has %d dims; the runner supports 64\n", k->name, k->ndims);
		goto out;
	}
	for (int b = 0; b < o.nbind; b++) {
		bool used = false;
		for (int d = 0; d < k->ndims; d++)
			if (bind_is(&o, b, k->dims[d])) {
				if (o.bind_val[b] != floor(o.bind_val[b]) || o.bind_val[b] < 1) {
					fprintf(stderr, "cake run: dim %s must be a positive integer, got %g\n", k->dims[d], o.bind_val[b]);
					goto out;
				}
				j.dimvals[d] = (long long)o.bind_val[b];
				used = true;
			}
		for (int i = 0; i < k->nparams; i++)
			if (k->params[i]->space != SP_GLOBAL && bind_is(&o, b, k->params[i]->name))
				used = true;
		if (!used) {
			fprintf(stderr, "cake run: '%.*s' is neither a dim nor a scalar parameter of kernel '%s'\n", o.bind_len[b],
			        o.bind_name[b], k->name);
			goto out;
		}
	}
	{
		StrBuf miss = {0};
		for (int d = 0; d < k->ndims; d++)
			if (!j.dimvals[d])
				sb_printf(&miss, "%s%s=...", miss.len ? " " : "", k->dims[d]);
		if (miss.len) {
			fprintf(stderr, "cake run: bind every dim of kernel '%s': missing %s\n", k->name, sb_str(&miss));
			sb_free(&miss);
			goto out;
		}
	}
	j.tens = xcalloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *j.tens);
	j.scalars = xcalloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *j.scalars);
	for (int i = 0; i < k->nparams; i++) {
		Decl *d = k->params[i];
		TensorInfo *t = &j.tens[i];
		t->decl = d;
		if (d->space != SP_GLOBAL) {
			bool set = false;
			for (int b = 0; b < o.nbind; b++)
				if (bind_is(&o, b, d->name))
					j.scalars[i] = o.bind_val[b], set = true;
			if (!set) {
				fprintf(stderr, "cake run: scalar parameter '%s' needs a value: pass %s=NUMBER\n", d->name, d->name);
				goto out;
			}
			continue;
		}
		t->output = writes_param(k->body, k->nbody, d);
		bool dense = false, atomic = false, scatter = false;
		write_kinds(k, k->body, k->nbody, d, &dense, &atomic, &scatter);
		t->accum = atomic;
		t->sparse = t->output && !dense;
		t->elems = 1;
		for (int r = 0; r < d->rank; r++) {
			long long v = 0;
			if (!eval_expr(d->shape[r], k, j.dimvals, &v) || v <= 0) {
				fprintf(stderr, "cake run: extent %d of '%s' does not evaluate to a positive integer\n", r, d->name);
				goto out;
			}
			t->dims[r] = v;
			t->elems *= (size_t)v;
		}
		t->bytes = t->elems * (size_t)scalar_bytes(d->dt);
	}

	/* refuse impossible shapes before any GPU work */
	{
		const char *failed = NULL;
		if (!eval_domain(k, j.dimvals, &failed)) {
			snprintf(err, sizeof err, "domain constraint '%s' is false for this shape", failed ? failed : "?");
			free((void *)failed);
			v = RUN_REFUSED;
			goto verdict;
		}
	}
	for (int t = 0; t < p->ntmaps; t++) {
		PlanTmap *tm = &p->tmaps[t];
		for (int d = 1; d < tm->rank; d++) {
			long long s = 0;
			if (!eval_expr(tm->gstrides[d], k, j.dimvals, &s) || s % 16) {
				snprintf(err, sizeof err,
				         "TMA contract: global stride %d of '%s' is %lld bytes, not a multiple of 16 "
				         "(make the inner extent a multiple of %d elements)", d, tm->param, s, 16 / dtype_size(tm->dt));
				v = RUN_REFUSED;
				goto verdict;
			}
		}
		for (int d = 0; d < tm->rank; d++) {
			long long e = 0;
			eval_expr(tm->gdims[d], k, j.dimvals, &e);
			if (e < 1 || e > (1ll << 32)) {
				snprintf(err, sizeof err, "TMA contract: extent %d of '%s' is %lld (must be 1..2^32)", d, tm->param, e);
				v = RUN_REFUSED;
				goto verdict;
			}
		}
	}
	j.ctas = 1;
	for (int a = 0; a < 3; a++) {
		long long e = 1;
		if (p->grid[a] && (!eval_expr(p->grid[a], k, j.dimvals, &e) || e < 1 || e > 0x7fffffff)) {
			snprintf(err, sizeof err, "grid extent %d does not evaluate to a positive 31-bit integer for this shape", a);
			v = RUN_REFUSED;
			goto verdict;
		}
		j.grid[a] = (unsigned)e;
		j.cluster[a] = p->cluster[a] > 0 ? (unsigned)p->cluster[a] : 1;
		if (!p->persistent && j.grid[a] % j.cluster[a]) {
			snprintf(err, sizeof err, "grid extent %d (%u) is not a multiple of the cluster extent %u", a, j.grid[a],
			         j.cluster[a]);
			v = RUN_REFUSED;
			goto verdict;
		}
		j.ctas *= e;
	}
	j.block[0] = (unsigned)p->block_threads;
	j.block[1] = j.block[2] = 1;
	pick_oracle(&j);
	if (j.oracle == 4 && j.om > 0x7fffffffLL) {
		snprintf(err, sizeof err, "segmented k-means with N = %lld points: Order and Offsets hold i32 point ids, so N "
		         "must be below 2^31", j.om);
		v = RUN_REFUSED;
		goto verdict;
	}
	if (j.oracle == 2) {
		/* k-means shapes the family cannot mean, refused before any GPU work */
		if (j.on > j.om) {
			snprintf(err, sizeof err, "k-means with K = %lld clusters > N = %lld points: some clusters could never "
			         "receive a point; use K <= N", j.on, j.om);
			v = RUN_REFUSED;
			goto verdict;
		}
		if (j.ok % 8) {
			snprintf(err, sizeof err, "k-means with D = %lld: D must be a multiple of 8 (16-byte rows for TMA and "
			         "wgmma k-steps); pad the points and centroids with zero columns", j.ok);
			v = RUN_REFUSED;
			goto verdict;
		}
	}

	/* lower and compile (no GPU needed) */
	if (!lower_sm90(&c, k, p, &src, o.debug_hang)) {
		StrBuf b = {0};
		diag_sort(&dl);
		diag_print_text(&b, &ss, &dl, isatty(2) && !getenv("NO_COLOR"));
		fwrite(b.s, 1, b.len, stderr);
		sb_free(&b);
		fprintf(stderr, "cake run: kernel '%s' cannot be lowered for sm_90a\n", k->name);
		status = 1;
		goto out;
	}
	j.src = sb_str(&src);
	/* NVRTC must not run in this process before the fork: it initialises
	 * driver state that makes cuInit fail in a forked child (seen on the
	 * H200 machine: CUDA_ERROR_NOT_INITIALIZED after every cache miss).
	 * With a driver, the child compiles; without one, compile here so that
	 * compile errors are still reported, then say that no GPU is present. */
	if (!driver_present()) {
		int jr = compile(&j, &j.jit, err, sizeof err);
		if (jr == JIT_NO_NVRTC) {
			fprintf(stderr, "cake run: %s\n", err);
			status = GPU_EXIT_NO_DRIVER;
			goto out;
		}
		if (jr != JIT_OK) {
			v = RUN_COMPILE_ERROR;
			goto verdict;
		}
		fprintf(stderr, "cake: %s\n", gpu_no_driver_msg());
		status = GPU_EXIT_NO_DRIVER;
		goto out;
	}
	v = run_isolated(&j, &rep, &story, err, sizeof err);
	j.jit.nkern = rep.nkern;
	memcpy(j.jit.kern, rep.kern, sizeof(JitKernelInfo) * (size_t)rep.nkern);
	j.jit.cache_hit = rep.cache_hit;
	if (v == RUN_NO_GPU) {
		fprintf(stderr, "cake: %s\n", err[0] ? err : gpu_no_driver_msg());
		status = GPU_EXIT_NO_DRIVER;
		goto out;
	}
verdict:
	print_result(&j, rep.stage || rep.done ? &rep : NULL, v, err, sb_str(&story));
	status = exit_for(v);
out:
	jit_result_free(&j.jit);
	free(j.tens);
	free(j.scalars);
	sb_free(&src);
	sb_free(&story);
	ctx_free(&c);
	diag_free(&dl);
	src_free(&ss);
	return status;
}
