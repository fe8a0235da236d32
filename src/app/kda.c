/*
 * kda.c — the KDA app (options in kda.h; the command is src/cmd/kda.c): one
 * Kimi Delta Attention layer on the GPU with a Cake IR kernel of kernels/kda/,
 * checked against the float64 recurrence and timed.
 *
 * The kernel. --mode decode runs kda_decode (kda_decode.cake, f32 state) or
 * kda_decode_bf16 (kda_decode_bf16.cake), their _lb twins with the lower-bound
 * gate: T = 1 .. 16 tokens for each of B sequences, the state read once and
 * written once. --mode prefill runs kda_prefill (B sequences of T tokens) or
 * kda_prefill_varlen (--seqlens: packed sequences, B = 1, through cu_seqlens),
 * their _lb twins, or with --state bf16 kda_prefill_bf16_lb (the lower-bound
 * gate, B sequences), from kda_prefill.cake, the software-pipelined recurrence (kda_recurrent.cake
 * is the plain one, through --kernel). With the lower-bound gate, whenever T >= 64
 * (B sequences of any T, or packed sequences through --seqlens), the default is the split
 * chunked prefill kda_split32_prep_lb+kda_split32_state_lb+kda_split_tail (with --state bf16
 * its state stage is kda_split32_state_bf16_lb; where one CTA per value half would take more
 * than a wave of the device's SMs, kda_state_paired, the paired kda_split32_state2_lb or
 * kda_split32_state2_bf16_lb, both halves on one CTA: the SM count comes from the driver
 * before anything runs, gpu_sm_count, or is taken as 132 without one) (kda_prefill_split_lb.cake: a chunk-parallel
 * prep kernel, the serial state kernel stepping every 32 tokens and the tail that places the
 * rows of the partial chunks, over 64-token chunk slots on the tensor cores; on the H200 the
 * first split chain ran 2.2x the fused kda_prefill_chunk_lb at one sequence and level with it
 * at 8 x 1024, and the 32-token chain runs 15 % ahead of the 64-token one on an H100,
 * bench/RESULTS.md). Its chunk-slot tables Sl, Cs, Ord and Ps (src/family/kda.h,
 * kda_slot_tables) are derived here from B and T or from cu_seqlens and bound by name like the
 * family's buffers, with the dims NS and NP. --kernel FILE[:NAME] runs another
 * kernel of the kda or kda_decode family instead (a chunked prefill, a
 * candidate from the search). The kernel goes through the pipeline
 * (cake_compile to the lowering, cake_jit after every CPU-side refusal) and is
 * launched through the launch layer; buffers are bound to its parameters by
 * the family's names (Q, K, V, G, Beta, Alog, Dtb, S0, SN, O, Cu, and the slot tables Sl,
 * Cs, Ord, Ps), dims by name (B, T, H, N, N1, NS, NP), the scalar lower_bound by value.
 *
 * Chains. --kernel FILE:A+B[+...] runs kernels A, B, ... of FILE in that order
 * as one layer: a chunked prefill split into a chunk-parallel prep kernel and
 * a serial state kernel. Each stage is compiled on its own (the pipeline
 * selects one kernel per call), JIT-compiled and loaded; every launch of the
 * layer (the checked one, each warm-up, each timed one, each launch captured
 * into the decode graph) is the whole chain on the app's stream, and the
 * events bracket the whole chain. After the timed launches, --iters more
 * launches time each stage apart (an event before each stage and after the
 * last), reported as every stage's median ("stage_us" in JSON). The stages' global parameters are bound by
 * name over one set of buffers: the family's names are the layer's inputs and
 * outputs as for one kernel; any other name is a workspace, allocated once on
 * the device, filled with NaN bytes (0xff) before the checked launch, shared
 * by every stage that names it, never seeded, checked or dumped. A name must
 * have one dtype and one shape in every stage that has it, and a workspace
 * must be named by at least two stages (one writes it, a later one reads it:
 * the app cannot see which, so it asks for both; a single kernel with a
 * global parameter outside the family's names is refused for the same
 * reason); otherwise the chain is refused naming the buffer and the stages. Dims and lower_bound bind per
 * stage; the gate is the chain's (some stage takes lower_bound exactly when
 * --lower-bound is given), and so is cu_seqlens (a stage that takes Cu needs
 * --seqlens; --seqlens needs some stage that takes Cu). Every stage is of one
 * family, kda or kda_decode. The family's hooks (its shape refusals, its
 * rates) and the oracle see the layer's parameter table: the union of the
 * stages' parameters by name, in order of first appearance (for one kernel,
 * its own parameters in their order, so one kernel runs exactly as before).
 *
 * Inputs are seeded: q, k, v, g_raw and beta logits uniform in [-1, 1] (bf16),
 * A_log and dt_bias from kda_fill_gate_params (long- and short-memory
 * channels), the initial state uniform in [-1, 1].
 *
 * Refused before anything is launched, in this order (exit status 2 for bad
 * input, 1 for a kernel that cannot serve the options): what
 * the options cannot mean (app_kda_refusal: empty shapes, a head dimension
 * other than 128, bad --seqlens, decode with --seqlens or more than 16
 * tokens, a lower bound outside [-5, 0)); a kernel that does not compile or
 * does not belong to a KDA family; a chain whose stages do not fit together
 * (an unknown or empty stage name, a repeated '+', two families, a buffer
 * that differs between stages, a workspace of one stage, a family buffer no
 * stage takes: exit status 1); a shape outside a kernel's `domain` or
 * refused by its family or the launch layer; a non-finite input value (a NaN
 * planted with --poison shows it). Then the kernel is compiled (NVRTC, on the
 * CPU), and only then is the GPU opened: without one the command says so in
 * one line and exits GPU_EXIT_NO_DRIVER.
 *
 * The check: the outputs of the first launch (O, and the final states SN)
 * against the float64 recurrence on --check-heads (sequence, head) pairs, with
 * the kernel's family's tolerance (kda_decode: o 4e-3, f32 state 1e-4; kda:
 * 8e-3); the whole of O and SN is scanned for NaN (both are poisoned before
 * the launch). A failed check is exit status 1.
 *
 * Timing. A decode step is a few microseconds of kernel, less than the cost
 * of a launch from the host, so decode is timed as ANCHORS.md's numbers are:
 * a CUDA graph of --graph-launches launches (20), replayed --iters times
 * between CUDA events after warm-up, time per launch = replay / launches
 * (median and minimum); the same launches one at a time are reported too.
 * The state traffic is 2 N H K V sizeof(state) bytes per launch. Prefill is
 * timed one launch at a time (events around each, median of --iters). The
 * inputs are not re-uploaded between launches: a launch reads S0 and writes
 * SN, so every launch does the same work. A launch is the whole chain.
 * The report names the chain ("prefill A+B (FILE)"; JSON "kernel": "A+B"
 * and "stages": ["A", "B"]).
 *
 * --dump DIR writes every tensor (the inputs, and O and SN of the checked
 * launch; not the workspaces) as DIR/NAME.bin with DIR/meta.json (its
 * "kernel" and "stages" as in the report): bench/kda.sh runs FLA on exactly
 * these inputs and compares.
 */
#include "kda.h"
#include "../family/kda.h"
#include "../gpu/launch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

KdaOpts app_kda_options(void)
{
	KdaOpts o;
	memset(&o, 0, sizeof o);
	o.B = 1, o.H = 32, o.T = 1, o.K = 128, o.V = 128;
	o.mode = KDA_MODE_DECODE;
	o.check = true;
	o.graph = true;
	o.iters = 0;   /* 0: the mode's default */
	o.warmup = 5;
	o.graph_launches = 20;
	o.check_heads = 64;
	o.seed = 1;
	o.dir = "kernels/kda";
	return o;
}

const char *app_kda_refusal(const KdaOpts *o, char *buf, size_t n)
{
	long long T = o->T;
	if (o->nseq) {
		T = 0;
		for (int i = 0; i < o->nseq; i++) {
			if (o->seqlens[i] <= 0) {
				snprintf(buf, n, "--seqlens: sequence %d has length %lld; every sequence needs at least one token (drop empty ones)", i,
				         o->seqlens[i]);
				return buf;
			}
			T += o->seqlens[i];
		}
		if (o->T > 0 && o->T != T && o->T != 1) {
			snprintf(buf, n, "--seqlens add up to %lld tokens, but --shape says T = %lld; cu_seqlens must end at T", T, o->T);
			return buf;
		}
		if (o->B != 1) {
			snprintf(buf, n, "--seqlens packs the sequences along T, so B must be 1 (got B = %lld)", o->B);
			return buf;
		}
		if (o->mode == KDA_MODE_DECODE) {
			snprintf(buf, n, "--seqlens is for --mode prefill; a decode step runs B sequences of T = 1 .. 16 tokens");
			return buf;
		}
	}
	KdaProblem p = {.B = o->nseq ? 1 : o->B, .T = T, .H = o->H, .K = o->K, .V = o->V, .N = o->nseq ? o->nseq : o->B,
	                .packed = o->nseq > 0, .gate = o->lower_bound_gate ? KDA_GATE_LOWER_BOUND : KDA_GATE_SOFTPLUS,
	                .lower_bound = o->lower_bound};
	if (kda_refuse_shape(&p, 128, 128, buf, n) || kda_refuse_gate(&p, buf, n))
		return buf;
	if (o->mode == KDA_MODE_DECODE && T > 16) {
		snprintf(buf, n, "--mode decode runs 1 .. 16 tokens per sequence (one step, or a speculative window), not T = %lld; use --mode prefill",
		         T);
		return buf;
	}
	return NULL;
}

/* ---- the run ---- */

#define KDA_MAX_STAGES 8

/* One kernel of the chain. */
typedef struct Stage {
	CakeUnit u;
	bool compiled;
	Kernel *k;
	Plan *p;
	char name[128];             /* as asked ("" for the file's first kernel), then the kernel's */
	long long dimvals[LAUNCH_MAX_DIMS];
	double *scalars;            /* per k->params index */
	bool has_lb;                /* takes the scalar lower_bound */
	Launch L;
	int *slot;                  /* per k->params index: the layer's parameter it binds (-1: a scalar) */
	GpuPtr *dev;                /* per k->params index: the device buffer bound to it */
} Stage;

typedef struct Run {
	const KdaOpts *o;
	SourceSet ss;
	DiagList dl;
	Stage st[KDA_MAX_STAGES];
	int nst;
	const Family *fam;
	char file[512], name[1024]; /* the file; the chain "A+B" (one kernel: its name) */
	/* The layer's parameter table: the union of the stages' parameters by name, in order of
	 * first appearance (one kernel: its own parameters, in its order). It is a Kernel value
	 * only because the family hooks (FamRun) read parameters through one; it holds params,
	 * dims, name and family and is never compiled or launched. */
	Kernel layer;
	long long dimvals[LAUNCH_MAX_DIMS];   /* indexed like layer.dims */
	double *scalars;            /* per layer.params index */
	int *first;                 /* per layer.params index: the first stage naming it */
	int *uses;                  /* per layer.params index: how many stages name it */
	bool *work;                 /* per layer.params index: a workspace (not a family name) */
	FamBuf *buf;                /* per layer.params index: extents and host images (none for workspaces) */
	GpuPtr *dev;
	long long B, T, H, N;
	int64_t *cu;
	KdaSlots slots;             /* the chunk-slot tables (NS = 0 when T < 64): Sl, Cs, Ord, Ps */
	GpuDev g;
	bool opened;
	void *stream, *graph, *ev[2];
	void *sev[KDA_MAX_STAGES + 1];  /* a chain's events: before each stage and after the last */
} Run;

static void print_diags(Run *r)
{
	StrBuf b = {0};
	diag_sort(&r->dl);
	diag_print_text(&b, &r->ss, &r->dl, false);
	fwrite(b.s ? b.s : "", 1, b.len, stderr);
	sb_free(&b);
}

/* The kernel file and the stages of the mode (or --kernel FILE[:NAME1[+NAME2...]]). 0, or 1
 * (message printed) for a chain with an empty stage name or too many stages. */
static int pick_kernel(Run *r)
{
	const KdaOpts *o = r->o;
	r->nst = 1;
	if (o->kernel) {
		const char *c = strrchr(o->kernel, ':');
		if (!(c && c != o->kernel && !strchr(c, '/'))) {
			snprintf(r->file, sizeof r->file, "%s", o->kernel);
			r->st[0].name[0] = 0;   /* the file's only (or first) kernel */
			return 0;
		}
		snprintf(r->file, sizeof r->file, "%.*s", (int)(c - o->kernel), o->kernel);
		const char *spec = c + 1;
		if (!strchr(spec, '+')) {
			snprintf(r->st[0].name, sizeof r->st[0].name, "%s", spec);
			return 0;
		}
		if (strstr(spec, "++")) {
			fprintf(stderr, "cake kda: --kernel '%s': the chain '%s' repeats the separator ('++'); name the kernels in order with "
			        "one '+' between them (FILE:NAME1+NAME2)\n", o->kernel, spec);
			return 1;
		}
		if (spec[0] == '+' || spec[strlen(spec) - 1] == '+') {
			fprintf(stderr, "cake kda: --kernel '%s': the chain '%s' has an empty stage name (a '+' at its start or end); name every "
			        "kernel (FILE:NAME1+NAME2)\n", o->kernel, spec);
			return 1;
		}
		r->nst = 0;
		for (const char *p = spec; *p;) {
			const char *e = strchr(p, '+');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			if (r->nst == KDA_MAX_STAGES) {
				fprintf(stderr, "cake kda: --kernel '%s': a chain runs at most %d kernels\n", o->kernel, KDA_MAX_STAGES);
				return 1;
			}
			snprintf(r->st[r->nst++].name, sizeof r->st[0].name, "%.*s", (int)len, p);
			p = e ? e + 1 : p + len;
		}
		return 0;
	}
	const char *lb = o->lower_bound_gate ? "_lb" : "";
	char *name = r->st[0].name;
	size_t nn = sizeof r->st[0].name;
	if (o->mode == KDA_MODE_DECODE) {
		snprintf(r->file, sizeof r->file, "%s/%s", o->dir, o->state_bf16 ? "kda_decode_bf16.cake" : "kda_decode.cake");
		snprintf(name, nn, "kda_decode%s%s", o->state_bf16 ? "_bf16" : "", lb);
	} else if (o->lower_bound_gate && r->T >= 64) {
		/* the split chunked prefill over chunk slots (B sequences of any T >= 64, or packed
		   sequences through cu_seqlens): the chunk-parallel prep kernel, the serial state
		   kernel (its bf16-state twin for --state bf16), then the tail that places the
		   partial slots' rows */
		snprintf(r->file, sizeof r->file, "%s/kda_prefill_split_lb.cake", o->dir);
		snprintf(name, nn, "kda_split32_prep_lb");
		/* the state pass paired (both value halves of a (head, sequence) on one CTA) where its
		   CTAs would take more than one wave of the device's SMs (kda_state_paired) */
		KdaProblem sp = {.B = r->B, .T = r->T, .H = r->H, .N = r->N, .cu = r->cu, .packed = r->cu != NULL};
		int sms = gpu_sm_count(o->device);
		bool pair = kda_state_paired(&sp, sms > 0 ? sms : KDA_NOMINAL_SMS);
		snprintf(r->st[1].name, sizeof r->st[1].name, "kda_split32_state%s%s_lb", pair ? "2" : "", o->state_bf16 ? "_bf16" : "");
		snprintf(r->st[2].name, sizeof r->st[2].name, "kda_split_tail");
		r->nst = 3;
	} else {
		snprintf(r->file, sizeof r->file, "%s/kda_prefill.cake", o->dir);
		snprintf(name, nn, "kda_prefill%s%s%s", o->nseq ? "_varlen" : "", o->state_bf16 ? "_bf16" : "", lb);
	}
	return 0;
}

static bool is_name(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The names of the family's buffers: the layer's inputs and outputs. Any other global
 * parameter is a workspace. */
static long long dim_value(const Run *r, const char *n)
{
	return is_name(n, "B") ? r->B : is_name(n, "T") ? r->T : is_name(n, "H") ? r->H : is_name(n, "N") ? r->N
	     : is_name(n, "N1") ? r->N + 1 : is_name(n, "NS") ? r->slots.ns : is_name(n, "NP") ? r->slots.np : -1;
}

/* "f32[1, 64, 2, 128]" */
static const char *shape_str(char *buf, size_t n, const Decl *d, const long long *dims)
{
	int o = snprintf(buf, n, "%s[", dtype_name(d->dt));
	for (int i = 0; i < d->rank && o > 0 && (size_t)o < n; i++)
		o += snprintf(buf + o, n - (size_t)o, "%s%lld", i ? ", " : "", dims[i]);
	if (o > 0 && (size_t)o < n)
		snprintf(buf + o, n - (size_t)o, "]");
	return buf;
}

/* Compile stage s to the lowering and check what needs no shape: the family, the state's
 * dtype, cu_seqlens, the dims and scalars the app binds. 0, or 1 (message printed). */
static int compile_stage(Run *r, Stage *s)
{
	const KdaOpts *o = r->o;
	CakeOptions co = cake_options(CAKE_LOWER);
	co.kernel = s->name[0] ? s->name : NULL;
	int before = r->dl.nerr;
	int rc = cake_compile_path(&s->u, &r->ss, &r->dl, r->file, &co);
	s->compiled = true;
	if (rc == 2) {
		fprintf(stderr, "cake kda: cannot read '%s' (pass --kernels DIR, the folder holding the kda .cake files)\n", r->file);
		return 1;
	}
	if (r->dl.nerr == before && s->u.nkernels == 0) {
		if (r->nst > 1)
			fprintf(stderr, "cake kda: '%s' has no kernel named '%s' (the chain %s)\n", r->file, s->name, r->name);
		else
			fprintf(stderr, "cake kda: '%s' has no kernel named '%s'\n", r->file, s->name);
		return 1;
	}
	if (s->u.failed != CAKE_STAGE_NONE) {
		print_diags(r);
		fprintf(stderr, "cake kda: kernel '%s' of '%s' cannot be lowered; nothing was run\n", s->name[0] ? s->name : "?", r->file);
		return 1;
	}
	s->k = s->u.kernels[0];
	s->p = s->u.plans[0];
	snprintf(s->name, sizeof s->name, "%s", s->k->name);
	const char *fname = s->k->family ? s->k->family->name : NULL;
	const Family *fam = fname ? family_find(family_builtin(), fname) : NULL;
	if (!fam || (!is_name(fname, "kda") && !is_name(fname, "kda_decode"))) {
		fprintf(stderr, "cake kda: kernel '%s' is not of the kda or kda_decode family (its header names %s); the app binds that "
		        "family's parameters\n", s->name, fname ? fname : "none");
		return 1;
	}
	if (s->k->family->stage != (r->nst > 1)) {
		if (r->nst > 1)
			fprintf(stderr, "cake kda: kernel '%s' is a whole layer (`family %s`), not a stage of a chain; run it alone (--kernel %s:%s), "
			        "or mark the chain's kernels `family %s stage`\n", s->name, fname, r->file, s->name, fname);
		else
			fprintf(stderr, "cake kda: kernel '%s' is one stage of a chain (`family %s stage`); run it with the other stages of its "
			        "layer, e.g. --kernel %s:%s+NEXT\n", s->name, fname, r->file, s->name);
		return 1;
	}
	if (!r->fam)
		r->fam = fam;
	else if (fam != r->fam) {
		fprintf(stderr, "cake kda: the chain %s mixes families: stage '%s' is of family %s, stage '%s' of %s; every stage of a "
		        "layer must be of one family (kda for a prefill, kda_decode for a decode step)\n", r->name, r->st[0].name,
		        r->fam->name, s->name, fam->name);
		return 1;
	}
	int s0 = fam_param(s->k, "S0");
	bool sbf16 = s0 >= 0 && s->k->params[s0]->dt == DT_BF16;
	if (s0 >= 0 && sbf16 != o->state_bf16) {
		fprintf(stderr, "cake kda: kernel '%s' keeps a%s state, but --state %s was asked for\n", s->name, sbf16 ? " bf16" : "n f32",
		        o->state_bf16 ? "bf16" : "f32");
		return 1;
	}
	bool varlen = fam_param(s->k, "Cu") >= 0;
	if (varlen && !o->nseq) {
		fprintf(stderr, "cake kda: kernel '%s' takes cu_seqlens, but no --seqlens were given\n", s->name);
		return 1;
	}
	/* dims by name */
	for (int d = 0; d < s->k->ndims && d < LAUNCH_MAX_DIMS; d++) {
		long long v = dim_value(r, s->k->dims[d]);
		if (v < 0) {
			fprintf(stderr, "cake kda: kernel '%s' has a dim '%s' that cake kda does not bind (B, T, H, N, N1, NS and NP only)\n", s->name,
			        s->k->dims[d]);
			return 1;
		}
		s->dimvals[d] = v;
	}
	/* scalars by name: the gate's lower bound */
	s->scalars = xcalloc((size_t)s->k->nparams + 1, sizeof(double));
	for (int i = 0; i < s->k->nparams; i++) {
		const Decl *d = s->k->params[i];
		if (d->space == SP_GLOBAL)
			continue;
		if (!is_name(d->name, "lower_bound")) {
			fprintf(stderr, "cake kda: kernel '%s' has a scalar parameter '%s' that cake kda does not bind\n", s->name, d->name);
			return 1;
		}
		s->scalars[i] = o->lower_bound;
		s->has_lb = true;
	}
	return 0;
}

/* The index of the layer's parameter named `name` (global or not, as `global` says), or -1. */
static int layer_param(const Run *r, const char *name, bool global)
{
	for (int i = 0; i < r->layer.nparams; i++)
		if ((r->layer.params[i]->space == SP_GLOBAL) == global && is_name(r->layer.params[i]->name, name))
			return i;
	return -1;
}

/* The layer's parameter table from the stages' (shape-checked) parameters: each name once,
 * with one dtype and one shape in every stage that names it. 0, or 1 (message printed). */
static int merge_params(Run *r)
{
	int total = 0;
	for (int s = 0; s < r->nst; s++)
		total += r->st[s].k->nparams;
	r->layer.name = r->name;
	r->layer.family = r->st[0].k->family;
	r->layer.params = xcalloc((size_t)total + 1, sizeof *r->layer.params);
	r->layer.dims = xcalloc((size_t)LAUNCH_MAX_DIMS, sizeof *r->layer.dims);
	r->buf = xcalloc((size_t)total + 1, sizeof *r->buf);
	r->first = xcalloc((size_t)total + 1, sizeof *r->first);
	r->uses = xcalloc((size_t)total + 1, sizeof *r->uses);
	r->work = xcalloc((size_t)total + 1, sizeof *r->work);
	r->scalars = xcalloc((size_t)total + 1, sizeof *r->scalars);
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		for (int d = 0; d < s->k->ndims && d < LAUNCH_MAX_DIMS; d++) {
			int j = 0;
			while (j < r->layer.ndims && !is_name(r->layer.dims[j], s->k->dims[d]))
				j++;
			if (j == r->layer.ndims && j < LAUNCH_MAX_DIMS) {
				r->layer.dims[r->layer.ndims++] = s->k->dims[d];
				r->dimvals[j] = s->dimvals[d];
			}
		}
		s->slot = xcalloc((size_t)s->k->nparams + 1, sizeof *s->slot);
		for (int i = 0; i < s->k->nparams; i++) {
			Decl *d = s->k->params[i];
			bool global = d->space == SP_GLOBAL;
			FamBuf b = {.decl = d, .rank = d->rank};
			if (global) {
				if (!launch_param_extents(&s->L, i, b.dims, &b.elems)) {
					fprintf(stderr, "cake kda: an extent of '%s' (kernel '%s') does not evaluate to a positive integer\n", d->name, s->name);
					return 1;
				}
				b.bytes = b.elems * (size_t)dtype_size(d->dt);
			}
			int j = layer_param(r, d->name, global);
			if (j < 0) {
				j = r->layer.nparams++;
				r->layer.params[j] = d;
				r->buf[j] = b;
				r->first[j] = si;
				r->work[j] = global && !kda_is_buffer(d->name);
				r->scalars[j] = global ? 0 : s->scalars[i];
			} else if (global) {
				FamBuf *a = &r->buf[j];
				bool same = a->decl->dt == d->dt && a->rank == b.rank;
				for (int e = 0; same && e < b.rank; e++)
					same = a->dims[e] == b.dims[e];
				if (!same) {
					char x[160], y[160];
					fprintf(stderr, "cake kda: buffer '%s' is %s in stage '%s' but %s in stage '%s'; the stages of a chain share a buffer "
					        "by name, so it must have one dtype and one shape in every stage (rename one, or make them agree)\n",
					        d->name, shape_str(x, sizeof x, a->decl, a->dims), r->st[r->first[j]].name,
					        shape_str(y, sizeof y, d, b.dims), s->name);
					return 1;
				}
			}
			s->slot[i] = global ? j : -1;
			if (global)
				r->uses[j]++;
		}
	}
	for (int j = 0; j < r->layer.nparams; j++)
		if (r->work[j] && r->uses[j] < 2) {
			fprintf(stderr, "cake kda: '%s' of kernel '%s' is a workspace (not one of the family's buffers Q, K, V, G, Beta, Alog, "
			        "Dtb, S0, SN, O, Cu), but no other stage of %s names it; a workspace is written by one stage and read by a later "
			        "one: chain the stage that reads it (FILE:WRITER+READER), or rename it to a family buffer\n",
			        r->layer.params[j]->name, r->st[r->first[j]].name, r->nst > 1 ? "the chain" : "the layer");
			return 1;
		}
	/* A workspace is written before it is read: the first stage that names it must be one that
	 * writes it (its plan marks the parameter an output: a store, tma store or atomic_add). */
	for (int j = 0; j < r->layer.nparams; j++) {
		if (!r->work[j])
			continue;
		const char *wn = r->layer.params[j]->name;
		int writer = -1;
		for (int si = 0; si < r->nst && writer < 0; si++)
			for (int i = 0; i < r->st[si].p->nparams; i++)
				if (is_name(r->st[si].p->params[i].name, wn) && r->st[si].p->params[i].output) {
					writer = si;
					break;
				}
		if (writer < 0) {
			fprintf(stderr, "cake kda: no stage of %s writes the workspace '%s' (every stage only reads it); a workspace carries what "
			        "one stage computes to a later one\n", r->name, wn);
			return 1;
		}
		if (writer != r->first[j]) {
			fprintf(stderr, "cake kda: stage '%s' reads the workspace '%s' before stage '%s' writes it; order the chain writer first "
			        "(FILE:%s+%s)\n", r->st[r->first[j]].name, wn, r->st[writer].name, r->st[writer].name, r->st[r->first[j]].name);
			return 1;
		}
	}
	/* the layer as a whole holds the family's contract: each stage is checked only for the family
	 * tensors it names (`family F stage`), so the union is what must name them all */
	char why[256];
	if (r->nst > 1 && r->fam->fits && !r->fam->fits(&r->layer, why, sizeof why)) {
		fprintf(stderr, "cake kda: the stages of %s together do not fit family %s: %s; add the stage that takes it (the family binds %s)\n",
		        r->name, r->fam->name, why, r->fam->params);
		return 1;
	}
	return 0;
}

/* Compile every stage to the lowering, bind dims and scalars, check the domains, the launch
 * shapes, the shared buffers and the family's refusals. Diagnostics to stderr; 0 when ready,
 * 1 for a kernel problem (unreadable, not lowerable, not a KDA kernel, not matching the
 * options, a chain whose stages do not fit together), 2 for a shape a kernel refuses. */
static int prepare(Run *r)
{
	const KdaOpts *o = r->o;
	if (!o->kernel && o->mode == KDA_MODE_PREFILL && o->state_bf16 && !o->lower_bound_gate) {
		fprintf(stderr, "cake kda: the bf16-state prefill kernels (kda_split32_state_bf16_lb, kda_prefill_bf16_lb) are written for "
		        "the lower-bound gate: pass --lower-bound L, or --state f32\n");
		return 1;
	}
	if (!o->kernel && o->mode == KDA_MODE_PREFILL && o->state_bf16 && o->nseq && r->T < 64) {
		fprintf(stderr, "cake kda: a bf16-state prefill of packed sequences runs on the chunked kernels, which need at least 64 "
		        "tokens in all (--seqlens add up to %lld); pass --state f32, or run them as B sequences\n", r->T);
		return 1;
	}
	/* the chain as asked, for messages; the kernels' own names once compiled */
	r->name[0] = 0;
	for (int s = 0; s < r->nst; s++)
		snprintf(r->name + strlen(r->name), sizeof r->name - strlen(r->name), "%s%s", s ? "+" : "", r->st[s].name);
	bool has_lb = false, varlen = false;
	for (int s = 0; s < r->nst; s++) {
		int rc = compile_stage(r, &r->st[s]);
		if (rc)
			return rc;
		has_lb |= r->st[s].has_lb;
		/* packed sequences: through cu_seqlens, or through the chunk-slot tables (Cs) */
		varlen |= fam_param(r->st[s].k, "Cu") >= 0 || fam_param(r->st[s].k, "Cs") >= 0;
	}
	r->name[0] = 0;
	for (int s = 0; s < r->nst; s++)
		snprintf(r->name + strlen(r->name), sizeof r->name - strlen(r->name), "%s%s", s ? "+" : "", r->st[s].name);
	const char *what = r->nst > 1 ? "the chain" : "kernel";
	char nm[1100];
	snprintf(nm, sizeof nm, r->nst > 1 ? "%s" : "'%s'", r->name);
	if (o->mode == KDA_MODE_DECODE && !is_name(r->fam->name, "kda_decode"))
		fprintf(stderr, "cake kda: note: %s %s is of family %s, run here as a decode step\n", what, nm, r->fam->name);
	if (o->nseq && !varlen) {
		fprintf(stderr, "cake kda: %s %s takes no cu_seqlens (nor the chunk-slot tables), but --seqlens were given\n", what, nm);
		return 1;
	}
	if (has_lb != o->lower_bound_gate) {
		fprintf(stderr, "cake kda: %s %s %s, but %s\n", what, nm, has_lb ? "uses the lower-bound gate" : "uses the softplus gate",
		        has_lb ? "no --lower-bound was given" : "--lower-bound was given (pick the kernel's _lb twin)");
		return 1;
	}
	char err[512];
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		const char *failed = NULL;
		if (!eval_domain(s->k, s->dimvals, &failed)) {
			fprintf(stderr, "cake kda: shape B=%lld T=%lld H=%lld (%lld sequences) is outside the domain of '%s': '%s' is false\n", r->B,
			        r->T, r->H, r->N, s->name, failed ? failed : "?");
			free((void *)failed);
			return 2;
		}
		if (!launch_shape(&s->L, s->p, s->dimvals, err, sizeof err)) {
			fprintf(stderr, "cake kda: kernel '%s': %s\n", s->name, err);
			return 2;
		}
	}
	/* the layer's parameters, then the family's shape refusals */
	if (merge_params(r))
		return 1;
	FamRun fr = {&r->layer, r->dimvals, r->buf, o->seed, o->check_heads, 1, NULL, r->scalars};
	FamBuf *Q = fam_buf(&fr, "Q"), *V = fam_buf(&fr, "V");
	if (Q->dims[3] != o->K || V->dims[3] != o->V) {
		fprintf(stderr, "cake kda: %s %s is written for K = %lld, V = %lld, not K = %lld, V = %lld\n", what, nm, Q->dims[3], V->dims[3],
		        o->K, o->V);
		return 1;
	}
	if (r->fam->refuse && r->fam->refuse(&fr, err, sizeof err)) {
		fprintf(stderr, "cake kda: %s\n", err);
		return 2;
	}
	return 0;
}

static double unif(uint64_t *st)
{
	return (double)(oracle_splitmix64(st) >> 11) / (double)(1ull << 53);
}

/* Seeded host inputs; outputs allocated. */
static bool make_inputs(Run *r)
{
	for (int i = 0; i < r->layer.nparams; i++) {
		FamBuf *b = &r->buf[i];
		if (b->decl->space != SP_GLOBAL || r->work[i])
			continue;   /* a workspace lives on the device only */
		b->host = malloc(b->bytes ? b->bytes : 1);
		if (!b->host) {
			fprintf(stderr, "cake kda: host out of memory for '%s' (%zu bytes)\n", b->decl->name, b->bytes);
			return false;
		}
		const char *n = b->decl->name;
		uint64_t seed = r->o->seed * 1000003u + (uint64_t)i * 0x9e37u;
		if (is_name(n, "O") || is_name(n, "SN"))
			memset(b->host, 0xff, b->bytes);
		else if (is_name(n, "Cu"))
			memcpy(b->host, r->cu, b->bytes);
		else if (kda_is_slot_table(n)) {   /* Sl, Cs, Ord, Ps: derived from the shape and cu_seqlens */
			size_t have;
			const int32_t *t = kda_slot_table(&r->slots, n, &have);
			have *= sizeof(int32_t);
			if (!t || have != b->bytes) {
				fprintf(stderr, "cake kda: the chunk-slot table '%s' of the kernel holds %zu bytes, but the shape's tables have %zu; "
				        "declare it as kda_prefill_split_lb.cake does (Sl: i32[NS, %d], Cs: i32[N1], Ord: i32[N], Ps: i32[NP])\n", n,
				        b->bytes, have, KDA_SLOT_FIELDS);
				return false;
			}
			memcpy(b->host, t, b->bytes);
		}
		else if (b->decl->dt == DT_BF16 && !is_name(n, "S0"))
			oracle_fill_bf16(b->host, b->elems, seed);
		else if (is_name(n, "S0")) {
			uint64_t st = seed;
			for (size_t e = 0; e < b->elems; e++) {
				float v = (float)(2.0 * unif(&st) - 1.0);
				if (b->decl->dt == DT_BF16)
					((uint16_t *)b->host)[e] = oracle_f32_to_bf16(v);
				else
					((float *)b->host)[e] = v;
			}
		}
	}
	FamRun fr = {.k = &r->layer, .buf = r->buf};
	FamBuf *A = fam_buf(&fr, "Alog"), *D = fam_buf(&fr, "Dtb");
	kda_fill_gate_params(A->host, D->host, r->H, r->o->K, r->o->seed ^ 0xda7au);
	return true;
}

/* --poison NAME=INDEX: a NaN into input NAME at flat INDEX. */
static bool poison(Run *r)
{
	const char *s = r->o->poison, *eq = s ? strchr(s, '=') : NULL;
	if (!s)
		return true;
	char name[64];
	snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - s) : 0, s);
	FamBuf *b = eq ? fam_buf(&(FamRun){.k = &r->layer, .buf = r->buf}, name) : NULL;
	char *end;
	long long idx = eq ? strtoll(eq + 1, &end, 10) : -1;
	if (!b || !b->host || *end || idx < 0 || (size_t)idx >= b->elems || is_name(name, "O") || is_name(name, "SN") || is_name(name, "Cu") ||
	    kda_is_slot_table(name)) {
		fprintf(stderr, "cake kda: --poison takes INPUT=INDEX with INPUT one of Q, K, V, G, Beta, Alog, Dtb, S0 and INDEX inside it (got '%s')\n", s);
		return false;
	}
	if (b->decl->dt == DT_BF16)
		((uint16_t *)b->host)[idx] = 0x7fc0;
	else
		((float *)b->host)[idx] = NAN;
	return true;
}

static KdaProblem problem_of(Run *r)
{
	FamRun fr = {.k = &r->layer, .buf = r->buf};
	KdaProblem p = {
		.B = r->B, .T = r->T, .H = r->H, .K = r->o->K, .V = r->o->V, .N = r->N, .cu = r->cu, .packed = r->cu != NULL,
		.gate = r->o->lower_bound_gate ? KDA_GATE_LOWER_BOUND : KDA_GATE_SOFTPLUS, .lower_bound = r->o->lower_bound,
		.state_bf16 = fam_buf(&fr, "S0")->decl->dt == DT_BF16,
		.q = fam_buf(&fr, "Q")->host, .k = fam_buf(&fr, "K")->host, .v = fam_buf(&fr, "V")->host, .g = fam_buf(&fr, "G")->host,
		.beta = fam_buf(&fr, "Beta")->host, .alog = fam_buf(&fr, "Alog")->host, .dtb = fam_buf(&fr, "Dtb")->host,
		.s0 = fam_buf(&fr, "S0")->host,
	};
	return p;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static bool gpu_fail(Run *r, const char *what)
{
	fprintf(stderr, "cake kda: %s: %s\n", what, r->g.err);
	return false;
}

/* One launch of the layer: every stage in order on the app's stream. 0 or the CUresult. */
static int chain_go(Run *r)
{
	for (int s = 0; s < r->nst; s++) {
		int rc = launch_go(&r->g, &r->st[s].L);
		if (rc)
			return rc;
	}
	return 0;
}

/* Times of n launches of the layer (µs each, sorted ascending), one at a time between events
 * (the events around the whole chain). */
static bool time_single(Run *r, int n, double *t)
{
	for (int i = 0; i < n; i++) {
		float ms = 0;
		if (gpu_event_record(&r->g, r->ev[0]) || chain_go(r) || gpu_event_record(&r->g, r->ev[1]) ||
		    gpu_event_elapsed_ms(&r->g, r->ev[0], r->ev[1], &ms))
			return gpu_fail(r, "timing a launch");
		t[i] = ms * 1e3;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_dbl);
	return true;
}

/* A chain's stages timed apart: n launches of the layer with an event before each stage and
 * after the last; med[s] is stage s's median time (µs). The events between stages do not
 * serialize anything the stream did not already serialize. */
static bool time_stages(Run *r, int n, double *med)
{
	double *t = xcalloc((size_t)n * (size_t)r->nst, sizeof *t);
	bool ok = true;
	for (int i = 0; ok && i < n; i++) {
		for (int s = 0; ok && s < r->nst; s++)
			ok = !gpu_event_record(&r->g, r->sev[s]) && !launch_go(&r->g, &r->st[s].L);
		ok = ok && !gpu_event_record(&r->g, r->sev[r->nst]);
		for (int s = 0; ok && s < r->nst; s++) {
			float ms = 0;
			ok = !gpu_event_elapsed_ms(&r->g, r->sev[s], r->sev[s + 1], &ms);
			t[(size_t)s * (size_t)n + (size_t)i] = ms * 1e3;
		}
	}
	for (int s = 0; ok && s < r->nst; s++) {
		qsort(t + (size_t)s * (size_t)n, (size_t)n, sizeof *t, cmp_dbl);
		med[s] = t[(size_t)s * (size_t)n + (size_t)n / 2];
	}
	free(t);
	return ok || gpu_fail(r, "timing the stages");
}

/* Per-launch times (µs, sorted) from n replays of a graph of m launches of the layer (each
 * the whole chain). */
static bool time_graph(Run *r, int m, int n, double *t)
{
	if (gpu_graph_begin(&r->g))
		return gpu_fail(r, "capturing the decode launches");
	for (int i = 0; i < m; i++)
		if (chain_go(r)) {
			void *x = NULL;
			gpu_graph_end(&r->g, &x);
			gpu_graph_destroy(&r->g, x);
			return gpu_fail(r, "capturing a launch");
		}
	if (gpu_graph_end(&r->g, &r->graph))
		return gpu_fail(r, "instantiating the graph");
	for (int i = 0; i < 3; i++)
		if (gpu_graph_launch(&r->g, r->graph))
			return gpu_fail(r, "replaying the graph");
	for (int i = 0; i < n; i++) {
		float ms = 0;
		if (gpu_event_record(&r->g, r->ev[0]) || gpu_graph_launch(&r->g, r->graph) || gpu_event_record(&r->g, r->ev[1]) ||
		    gpu_event_elapsed_ms(&r->g, r->ev[0], r->ev[1], &ms))
			return gpu_fail(r, "timing the graph");
		t[i] = ms * 1e3 / m;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_dbl);
	return true;
}

/* DIR/NAME.bin holding the n bytes at data; false (message printed) when it cannot be written. */
static bool dump_bin(const char *dir, const char *name, const void *data, size_t n)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.bin", dir, name);
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, n, f) == n;
	if (f && fclose(f))
		ok = false;
	if (!ok)
		fprintf(stderr, "cake kda: --dump: cannot write %s\n", path);
	return ok;
}

/* --dump DIR: the tensors as raw DIR/NAME.bin (row-major, the parameter's dtype) and
 * DIR/meta.json (shapes, dtypes, gate, the kernel, its time). */
static bool dump(Run *r, double t_us, const char *method)
{
	const char *dir = r->o->dump;
	char path[1024];
	for (int i = 0; i < r->layer.nparams; i++) {
		FamBuf *b = &r->buf[i];
		if (b->decl->space != SP_GLOBAL || r->work[i])
			continue;
		if (!dump_bin(dir, b->decl->name, b->host, b->bytes))
			return false;
	}
	/* cu_seqlens of packed sequences run by a layer that takes the slot tables instead: dumped
	 * too, so that a consumer of the dump (bench/kda_fla.py) sees the sequences */
	bool cu_extra = r->cu && fam_param(&r->layer, "Cu") < 0;
	if (cu_extra && !dump_bin(dir, "Cu", r->cu, sizeof(int64_t) * (size_t)(r->N + 1)))
		return false;
	StrBuf m = {0};
	sb_printf(&m, "{\"kernel\":");
	sb_json_str(&m, r->name);
	sb_puts(&m, ",\"stages\":[");
	for (int s = 0; s < r->nst; s++) {
		sb_puts(&m, s ? "," : "");
		sb_json_str(&m, r->st[s].name);
	}
	sb_printf(&m, "],\"family\":\"%s\",\"mode\":\"%s\",\"B\":%lld,\"T\":%lld,\"H\":%lld,\"K\":%lld,\"V\":%lld,\"N\":%lld,"
	          "\"varlen\":%s,\"lower_bound\":", r->fam->name, r->o->mode == KDA_MODE_DECODE ? "decode" : "prefill", r->B, r->T, r->H,
	          r->o->K, r->o->V, r->N, r->cu ? "true" : "false");
	if (r->o->lower_bound_gate)
		sb_printf(&m, "%.17g", r->o->lower_bound);
	else
		sb_puts(&m, "null");
	sb_printf(&m, ",\"tensors\":{");
	for (int i = 0, n = 0; i < r->layer.nparams; i++) {
		FamBuf *b = &r->buf[i];
		if (b->decl->space != SP_GLOBAL || r->work[i])
			continue;
		sb_printf(&m, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", n++ ? "," : "", b->decl->name, dtype_name(b->decl->dt));
		for (int d = 0; d < b->rank; d++)
			sb_printf(&m, "%s%lld", d ? "," : "", b->dims[d]);
		sb_puts(&m, "]}");
	}
	if (cu_extra)
		sb_printf(&m, ",\"Cu\":{\"dtype\":\"i64\",\"shape\":[%lld]}", r->N + 1);
	sb_printf(&m, "},\"time_us\":%.4f,\"method\":\"%s\"}\n", t_us, method);
	snprintf(path, sizeof path, "%s/meta.json", dir);
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(sb_str(&m), f) >= 0;
	if (f && fclose(f))
		ok = false;
	sb_free(&m);
	if (!ok)
		fprintf(stderr, "cake kda: --dump: cannot write %s\n", path);
	return ok;
}

int app_kda(const KdaOpts *op, StrBuf *out)
{
	Run R;
	memset(&R, 0, sizeof R);
	Run *r = &R;
	const KdaOpts *o = op;
	r->o = o;
	int status = 2;
	StrBuf rep = {0};
	double *ts = NULL, *tg = NULL;
	/* the problem */
	r->H = o->H;
	if (o->nseq) {
		r->B = 1;
		r->N = o->nseq;
		r->cu = xmalloc(sizeof(int64_t) * (size_t)(o->nseq + 1));
		r->cu[0] = 0;
		for (int i = 0; i < o->nseq; i++)
			r->cu[i + 1] = r->cu[i] + o->seqlens[i];
		r->T = r->cu[o->nseq];
	} else {
		r->B = o->B;
		r->N = o->B;
		r->T = o->T;
	}
	char why[512];
	if (r->cu && kda_refuse_seqlens(r->cu, r->N + 1, r->T, why, sizeof why)) {
		fprintf(stderr, "cake kda: %s\n", why);
		goto out;
	}
	if (o->mode == KDA_MODE_PREFILL) {   /* the chunk-slot tables (none when T < 64 or the shape is empty) */
		KdaProblem sp = {.B = r->B, .T = r->T, .H = r->H, .N = r->N, .cu = r->cu, .packed = r->cu != NULL};
		kda_slot_tables(&sp, &r->slots);
	}
	if (pick_kernel(r)) {
		status = 1;
		goto out;
	}
	int pst = prepare(r);
	if (pst) {
		status = pst;
		goto out;
	}
	if (!make_inputs(r) || !poison(r))
		goto out;
	KdaProblem p = problem_of(r);
	long long nf = kda_nonfinite(&p, why, sizeof why);
	if (nf) {
		fprintf(stderr, "cake kda: %lld non-finite input value%s (%s); refusing to run: the kernel would spread them through the state\n",
		        nf, nf == 1 ? "" : "s", why);
		goto out;
	}
	/* NVRTC (CPU work, so a kernel that does not compile is reported without a GPU too) */
	status = 1;
	char err[512];
	CakeOptions co = cake_options(CAKE_JIT);
	co.allow_spills = o->allow_spills;
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		if (cake_jit(&s->u, &co)) {
			print_diags(r);
			fprintf(stderr, "cake kda: compiling '%s': %s\n%s", s->name, s->u.error, s->u.jit.log ? s->u.jit.log : "");
			if (s->u.status == GPU_EXIT_NO_DRIVER)
				status = GPU_EXIT_NO_DRIVER;
			goto out;
		}
	}
	/* the device: only now, after every CPU-side refusal */
	int rc = gpu_open(&r->g, o->device);
	if (rc == GPU_NO_DRIVER || rc == GPU_NO_DEVICE) {
		fprintf(stderr, "cake: %s\n", rc == GPU_NO_DRIVER ? gpu_no_driver_msg() : r->g.err);
		status = GPU_EXIT_NO_DRIVER;
		goto out;
	}
	if (rc) {
		fprintf(stderr, "cake kda: %s\n", r->g.err);
		goto out;
	}
	r->opened = true;
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		if (launch_load(&r->g, &s->L, s->u.jit.cubin, err, sizeof err)) {
			fprintf(stderr, "cake kda: loading '%s': %s\n", s->name, err);
			goto out;
		}
		launch_fit(&s->L, r->g.sm_count);
	}
	if (gpu_stream_create(&r->g, &r->stream) || gpu_event_create(&r->g, &r->ev[0]) || gpu_event_create(&r->g, &r->ev[1])) {
		gpu_fail(r, "creating a stream");
		goto out;
	}
	for (int s = 0; r->nst > 1 && s <= r->nst; s++)
		if (gpu_event_create(&r->g, &r->sev[s])) {
			gpu_fail(r, "creating the stage events");
			goto out;
		}
	r->g.stream = r->stream;
	/* the layer's buffers, once: inputs uploaded, outputs poisoned, workspaces filled with NaN bytes */
	r->dev = xcalloc((size_t)r->layer.nparams + 1, sizeof *r->dev);
	for (int i = 0; i < r->layer.nparams; i++) {
		FamBuf *b = &r->buf[i];
		if (b->decl->space != SP_GLOBAL)
			continue;
		if (gpu_alloc(&r->g, &r->dev[i], b->bytes) ||
		    (r->work[i] ? gpu_memset8(&r->g, r->dev[i], 0xff, b->bytes) : gpu_htod(&r->g, r->dev[i], b->host, b->bytes))) {
			gpu_fail(r, "allocating and copying the tensors");
			goto out;
		}
	}
	/* each stage's arguments: the layer's buffers by name */
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		s->dev = xcalloc((size_t)s->k->nparams + 1, sizeof *s->dev);
		for (int i = 0; i < s->k->nparams; i++)
			if (s->slot[i] >= 0)
				s->dev[i] = r->dev[s->slot[i]];
		if (launch_args(&r->g, &s->L, s->dev, s->scalars, 0, err, sizeof err)) {
			fprintf(stderr, "cake kda: '%s': %s\n", s->name, err);
			goto out;
		}
	}
	/* the correctness launch, on poisoned outputs */
	if (chain_go(r) || gpu_stream_sync(&r->g)) {
		gpu_fail(r, "the kernel failed");
		goto out;
	}
	FamRun fr = {.k = &r->layer, .buf = r->buf};
	FamBuf *O = fam_buf(&fr, "O"), *SN = fam_buf(&fr, "SN");
	if (gpu_dtoh(&r->g, O->host, r->dev[fam_param(&r->layer, "O")], O->bytes) ||
	    gpu_dtoh(&r->g, SN->host, r->dev[fam_param(&r->layer, "SN")], SN->bytes)) {
		gpu_fail(r, "reading the outputs");
		goto out;
	}
	bool decode_fam = is_name(r->fam->name, "kda_decode");
	const KdaTol *tol = !decode_fam ? &KDA_TOL_PREFILL : p.state_bf16 ? &KDA_TOL_DECODE_BF16 : &KDA_TOL_DECODE;
	KdaCheck c = {0};
	int crc = 0;
	if (o->check) {
		int np;
		long long *pairs = kda_sample_pairs(&p, o->check_heads, 2e10, o->seed ^ 0x9a17u, &np);
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		crc = kda_check(&p, O->host, SN->host, pairs, np, tol, (int)(ncpu > 0 ? ncpu : 1), &c);
		free(pairs);
		if (crc < 0) {
			fprintf(stderr, "cake kda: host out of memory for the oracle\n");
			goto out;
		}
	}
	/* timing */
	bool decode = o->mode == KDA_MODE_DECODE;
	int iters = o->iters > 0 ? o->iters : decode ? 100 : 20;
	for (int i = 0; i < o->warmup; i++)
		if (chain_go(r)) {
			gpu_fail(r, "a warm-up launch failed");
			goto out;
		}
	ts = xcalloc((size_t)iters, sizeof *ts);
	tg = xcalloc((size_t)iters, sizeof *tg);
	if (!time_single(r, iters, ts))
		goto out;
	bool graphed = decode && o->graph;
	if (graphed && !time_graph(r, o->graph_launches, iters, tg))
		goto out;
	double stage_us[KDA_MAX_STAGES] = {0};
	if (r->nst > 1 && !time_stages(r, iters, stage_us))
		goto out;
	if (gpu_stream_sync(&r->g)) {
		gpu_fail(r, "after timing");
		goto out;
	}
	double t_med = graphed ? tg[iters / 2] : ts[iters / 2], t_min = graphed ? tg[0] : ts[0];
	double sbytes = 2.0 * (double)r->N * (double)r->H * (double)o->K * (double)o->V * (p.state_bf16 ? 2 : 4);
	double flops = 0, bytes = 0;
	FamRun rr = {&r->layer, r->dimvals, r->buf, o->seed, 0, 1, NULL, r->scalars};
	r->fam->rates(&rr, &flops, &bytes);
	bool ok = !o->check || crc == 0;
	if (o->dump && !dump(r, t_med, graphed ? "cuda_graph" : "events"))
		goto out;
	const char *gate = o->lower_bound_gate ? "lower-bound" : "softplus";
	if (o->json) {
		sb_printf(&rep, "{\"command\":\"kda\",\"mode\":\"%s\",\"kernel\":", decode ? "decode" : "prefill");
		sb_json_str(&rep, r->name);
		sb_puts(&rep, ",\"stages\":[");
		for (int s = 0; s < r->nst; s++) {
			sb_puts(&rep, s ? "," : "");
			sb_json_str(&rep, r->st[s].name);
		}
		sb_printf(&rep, "],\"file\":");
		sb_json_str(&rep, r->file);
		sb_printf(&rep, ",\"shape\":{\"B\":%lld,\"T\":%lld,\"H\":%lld,\"K\":%lld,\"V\":%lld,\"sequences\":%lld},\"state\":\"%s\",\"gate\":\"%s\","
		          "\"device\":", r->B, r->T, r->H, o->K, o->V, r->N, p.state_bf16 ? "bf16" : "f32", gate);
		sb_json_str(&rep, r->g.name);
		sb_printf(&rep, ",\"time_us\":{\"median\":%.3f,\"min\":%.3f,\"method\":\"%s\"},\"single_launch_us\":{\"median\":%.3f,\"min\":%.3f}",
		          t_med, t_min, graphed ? "cuda_graph" : "events", ts[iters / 2], ts[0]);
		if (r->nst > 1) {
			sb_puts(&rep, ",\"stage_us\":{");
			for (int s = 0; s < r->nst; s++) {
				sb_puts(&rep, s ? "," : "");
				sb_json_str(&rep, r->st[s].name);
				sb_printf(&rep, ":%.3f", stage_us[s]);
			}
			sb_puts(&rep, "}");
		}
		sb_printf(&rep, ",\"state_tb_s\":%.3f,\"hbm_tb_s\":%.3f,\"tflop_s\":%.3f", sbytes / (t_med * 1e-6) / 1e12,
		          bytes / (t_med * 1e-6) / 1e12, flops / (t_med * 1e-6) / 1e12);
		if (o->check) {   /* a non-finite error (NaN outputs) is null: JSON has no inf */
			sb_printf(&rep, ",\"check\":{\"ok\":%s,\"pairs\":%lld,\"o_rel_err\":", crc == 0 ? "true" : "false", c.heads);
			sb_printf(&rep, isfinite(c.o_rel) ? "%.3e" : "null", c.o_rel);
			sb_puts(&rep, ",\"state_rel_err\":");
			sb_printf(&rep, isfinite(c.s_rel) ? "%.3e" : "null", c.s_rel);
			sb_printf(&rep, ",\"tol_o\":%.1e,\"tol_state\":%.1e,\"o_nan\":%lld,\"state_nan\":%lld,\"bad_elements\":%lld}", tol->o,
			          tol->state, c.o_nan, c.s_nan, c.bad);
		}
		sb_printf(&rep, ",\"ok\":%s}\n", ok ? "true" : "false");
	} else {
		sb_printf(&rep, "cake kda: %s %s (%s) on %s (%d SMs) seed=%llu\n", decode ? "decode" : "prefill", r->name, r->file, r->g.name,
		          r->g.sm_count, (unsigned long long)o->seed);
		sb_printf(&rep, "  shape:   B=%lld T=%lld H=%lld K=%lld V=%lld, %lld sequence%s, %s state, %s gate\n", r->B, r->T, r->H, o->K, o->V,
		          r->N, r->N == 1 ? "" : "s", p.state_bf16 ? "bf16" : "f32", gate);
		if (graphed)
			sb_printf(&rep, "  time:    %.2f us per launch (min %.2f; a CUDA graph of %d launches, median of %d replays); %.2f us launched one at a time\n",
			          t_med, t_min, o->graph_launches, iters, ts[iters / 2]);
		else
			sb_printf(&rep, "  time:    %.2f us (min %.2f; CUDA events, median of %d launches)\n", t_med, t_min, iters);
		for (int s = 0; r->nst > 1 && s < r->nst; s++)
			sb_printf(&rep, "%s%s %.2f us%s", s ? ", " : "  stages:  ", r->st[s].name, stage_us[s], s == r->nst - 1 ? " (medians, timed apart)\n" : "");
		sb_printf(&rep, "  rate:    state traffic %.2f TB/s, all HBM traffic %.2f TB/s, %.2f TFLOP/s of recurrence work\n",
		          sbytes / (t_med * 1e-6) / 1e12, bytes / (t_med * 1e-6) / 1e12, flops / (t_med * 1e-6) / 1e12);
		if (o->check)
			sb_printf(&rep, "  check:   %lld (sequence, head) pairs vs the float64 recurrence: o rel err %.3e (tol %.1e), final state %.3e "
			          "(tol %.1e); %lld NaN in O, %lld in SN, %lld elements past the gross bound\n", c.heads, c.o_rel, tol->o, c.s_rel,
			          tol->state, c.o_nan, c.s_nan, c.bad);
		sb_printf(&rep, "verdict: %s\n", ok ? "ok" : "mismatch");
	}
	sb_puts(out, sb_str(&rep));
	status = ok ? 0 : 1;
out:
	free(ts);
	free(tg);
	if (r->opened) {
		gpu_graph_destroy(&r->g, r->graph);
		for (int i = 0; i < 2; i++)
			if (r->ev[i])
				gpu_event_destroy(&r->g, r->ev[i]);
		for (int i = 0; i <= KDA_MAX_STAGES; i++)
			if (r->sev[i])
				gpu_event_destroy(&r->g, r->sev[i]);
		for (int i = 0; r->dev && i < r->layer.nparams; i++)
			gpu_free(&r->g, r->dev[i]);
		for (int s = 0; s < r->nst; s++)
			launch_free(&r->g, &r->st[s].L);
		r->g.stream = NULL;
		gpu_stream_destroy(&r->g, r->stream);
		gpu_close(&r->g);
	} else {
		for (int s = 0; s < r->nst; s++)
			launch_free(NULL, &r->st[s].L);
	}
	for (int i = 0; r->buf && i < r->layer.nparams; i++)
		free(r->buf[i].host);
	free(r->buf);
	free(r->dev);
	free(r->scalars);
	free(r->first);
	free(r->uses);
	free(r->work);
	free(r->layer.params);
	free(r->layer.dims);
	free(r->cu);
	kda_slots_free(&r->slots);
	for (int si = 0; si < r->nst; si++) {
		Stage *s = &r->st[si];
		free(s->scalars);
		free(s->slot);
		free(s->dev);
		if (s->compiled)
			cake_unit_free(&s->u);
	}
	sb_free(&rep);
	diag_free(&r->dl);
	src_free(&r->ss);
	return status;
}
