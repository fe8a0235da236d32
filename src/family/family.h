/*
 * family.h — kernel families as modules.
 *
 * A kernel names its family explicitly (`kernel NAME target sm_90a family gemm`, LANGUAGE.md §4.1);
 * nothing in Cake guesses a family from a parameter list. A family module
 * (one file under src/family/) exports one Family descriptor per kernel
 * kind it knows, and the descriptor is everything the generic runner
 * (src/gpu/run.c), the apps and the benchmarks need to know about it:
 *
 *   fits     the parameter contract: names, element types and ranks the
 *            family binds (a kernel that names the family but does not fit
 *            is CK-SEM-044, reported by the pipeline after sema);
 *   refuse   shape refusals with their messages, before any GPU work
 *            (K > N for k-means, ...);
 *   inputs   seeded inputs: the runner first fills every input with seeded
 *            random values (never zeros); the family then rewrites the ones
 *            that need structure (valid segments, permutations, ...);
 *   inout    parameters updated in place: uploaded with their input values
 *            before every launch (correctness and timed alike), never
 *            poisoned, and not required to be written everywhere;
 *   check    the float64 oracle and its tolerance; fills a FamReport;
 *   rates    FLOP and byte counts from the extents alone, for TFLOP/s, TB/s
 *            and the cost model's roofline;
 *   report   the fields of FamReport (oracle name, summary line, extra
 *            key/value fields such as ties excused or empty clusters);
 *   scalar_defaults  values for the family's scalar parameters when the
 *            caller binds none (kda: lower_bound = -5).
 *
 * The hooks see host images only (FamRun): they never touch a GPU, so they
 * are unit-tested on the CPU. The registry is a FamilyTable value; the
 * built-in one is family_builtin(), a flat list in families.c. Adding a
 * family is one new file plus one line in that list (tests/unit/test_family.c
 * proves it with a test-only family).
 *
 * Module prefix: family_ (registry), fam_ (helpers for modules).
 */
#ifndef CAKE_FAMILY_H
#define CAKE_FAMILY_H

#include "../front/front.h"
#include "oracle.h"

/* One parameter's host image for a run. Scalars have decl->space != SP_GLOBAL
 * and bytes == 0. */
typedef struct FamBuf {
	const Decl *decl;
	void *host;                 /* inputs filled; outputs read back after the launch */
	long long dims[MAX_RANK];   /* evaluated extents, outermost first */
	int rank;
	size_t elems, bytes;
} FamBuf;

/* What a family's hooks see of one run. */
typedef struct FamRun {
	const Kernel *k;
	const long long *dimvals;   /* indexed like Kernel.dims */
	FamBuf *buf;                /* per Kernel.params index */
	uint64_t seed;
	int check_rows;             /* rows/points sampled by oracles that sample */
	int nthreads;               /* CPU threads an oracle may use */
	void *state;                /* the family's own data between inputs and check */
	const double *scalars;      /* scalar parameter values per Kernel.params index (NULL: unknown) */
} FamRun;

/* The result of a family check. Fixed size and pointer-free: it crosses the
 * isolated runner's shared memory. */
typedef struct FamField {
	char key[32];               /* JSON key, e.g. "ties_excused" */
	long long val;
} FamField;

typedef struct FamReport {
	char oracle[48];            /* e.g. "gemm_abt_f64"; "" when the family has no oracle */
	long long rows;             /* rows, points or centroids compared */
	double rel_err, tol;
	long long n_nan;
	long long first_bad;        /* flat index of the first bad element, -1 if none */
	double bad_out, bad_ref;
	FamField fields[6];
	int nfields;
	char summary[384];          /* the text after "check:" when the check passes */
	char error[512];            /* the mismatch or internal-error message */
	double flops, bytes;        /* operation and byte counts (0 = unknown) */
} FamReport;

typedef struct Family {
	const char *name;           /* as written in `family NAME` */
	const char *module;         /* the file under src/family/ */
	const char *summary;        /* one line */
	const char *params;         /* the parameter contract, as text */
	const char *tolerance;      /* the oracle's tolerance and why */
	const char *const *inout;   /* parameters updated in place (NULL-terminated), or NULL */
	/* true when k's parameters fit; else false with a reason naming the parameter */
	bool (*fits)(const Kernel *k, char *why, size_t n);
	/* the same for a stage of a chain (`family F stage`): the family parameters k
	 * names fit, the ones it lacks are other stages' (NULL: the family has no chains) */
	bool (*fits_stage)(const Kernel *k, char *why, size_t n);
	/* true when the bound shape is refused (why says what and how to fix it) */
	bool (*refuse)(const FamRun *r, char *why, size_t n);
	/* rewrite the inputs that need structure; false with err on failure (may be NULL) */
	bool (*inputs)(FamRun *r, char *err, size_t n);
	/* compare the outputs: 0 pass, 1 mismatch (rep->error says how), -1 internal error */
	int (*check)(FamRun *r, FamReport *rep);
	/* release what inputs left in r->state (may be NULL) */
	void (*release)(FamRun *r);
	/* FLOP and HBM byte counts from the bound extents alone (r->buf[i].host
	 * may be NULL): what a cost model or a rate needs before any run */
	void (*rates)(const FamRun *r, double *flops, double *bytes);
	/* default values of the family's scalar parameters, written into vals (per
	 * Kernel.params index) before the caller's own bindings override them: what
	 * a run with nothing bound (the gate, the search) uses (may be NULL) */
	void (*scalar_defaults)(const Kernel *k, double *vals);
} Family;

typedef struct FamilyTable {
	const Family *const *f;
	int n;
} FamilyTable;

/* The families built into Cake (families.c). */
FamilyTable family_builtin(void);
/* The family named `name` in t, or NULL. */
const Family *family_find(FamilyTable t, const char *name);
/* k's family for running k on its own: NULL when it has none, or when it is a stage
 * (`family F stage`), which only a chain runs (cake kda --kernel FILE:A+B) */
const Family *family_of_kernel(const Kernel *k);
/* The names of t's families as an array (malloc'd; the strings are static); *n the count. */
const char **family_names(FamilyTable t, int *n);
/* Report CK-SEM-044 for every kernel of prog whose `family` clause names a
 * family of t that its parameters do not fit. Unknown names are sema's
 * CK-SEM-043. Returns the number of errors reported. */
int family_check_program(FamilyTable t, const Program *prog, DiagList *dl);
/* A fresh array of k's scalar values (per Kernel.params index): f's defaults, else 0. */
double *family_scalars(const Family *f, const Kernel *k);
/* True when parameter `name` of r's kernel is one of f's in-place parameters. */
bool family_is_inout(const Family *f, const char *name);

/* ---- helpers for family modules ---- */
/* Index of k's global parameter `name`, or -1. */
int fam_param(const Kernel *k, const char *name);
/* Check that k has a global parameter `name` with an element type in dts
 * (ndts entries) and rank in [rank_lo, rank_hi]; else false with a reason. */
bool fam_need(const Kernel *k, const char *name, const DType *dts, int ndts, int rank_lo, int rank_hi, char *why,
              size_t n);
/* The buffer of parameter `name` in r (NULL if absent). */
FamBuf *fam_buf(const FamRun *r, const char *name);
/* Append a key/value field to rep (ignored past the capacity). */
void fam_field(FamReport *rep, const char *key, long long val);
/* Rows to sample: all of 0..n-1 when n <= want, else want rows holding the
 * first and last and seeded random others (malloc'd; *nrows the count). */
int *fam_sample_rows(long long n, int want, uint64_t seed, int *nrows);

#endif
