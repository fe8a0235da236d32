/*
 * lib.h — `cake library`: a family's kernels as a shape-dispatched C library
 * (libcake_FAMILY.so + cake_FAMILY.h + cake_FAMILY.pc) and a Python package.
 *
 * The pieces (docs/LIBRARY.md has the user's view):
 *   rt/ (.inc, .h)    the text that goes into every generated library: the
 *                     runtime (driver through dlopen, contexts, module cache,
 *                     tensor maps, launches, stream-ordered copies), the
 *                     family dispatchers (declared domain, ordered guards,
 *                     explicit fallback routes) and public functions, the
 *                     public headers. Embedded into cake (embed.c).
 *   dispatch.c        the same dispatcher text compiled into cake, so that
 *                     `--explain` and the domain tests compute exactly the
 *                     routes the library takes; the kernels' own `domain`s are
 *                     evaluated from their parsed .cake files.
 *   library.c         the generator: every kernel of the family through the
 *                     pipeline (cake_compile up to the jit: sm_90a cubins with
 *                     their ptxas report), each Plan turned into a launch
 *                     descriptor, the C source written and compiled with the
 *                     system C compiler, the .pc file and the Python package.
 *   cond.c            the clauses of --domain FILE.
 *   frontier.c        --store S: a kernel replaced by a store candidate that is
 *                     measured faster and is the same kernel to the dispatcher.
 *   python/           the Python package (ctypes, DLPack / __cuda_array_interface__).
 *
 * Module prefix: lib_.
 */
#ifndef CAKE_LIB_H
#define CAKE_LIB_H

#include "../cake.h"
#include "../harness/store.h"

#define LIB_MAX_KERNELS 64

/* ---- --domain FILE clauses (cond.c) ---- */

#define LIB_MAX_CONDS 32
typedef struct LibCondNode LibCondNode;
typedef struct LibConds {
	const char *const *vars;   /* the family's shape variables */
	int nvars;
	int n;
	char *text[LIB_MAX_CONDS]; /* each clause as written */
	LibCondNode *root[LIB_MAX_CONDS];
} LibConds;

/* Parse clauses (newline or comma separated, # comments) over vars; false with err set on
 * the first bad clause (its line and what is wrong). */
bool lib_conds_parse(LibConds *c, const char *text, const char *const *vars, int nvars, char *err, size_t errlen);
/* Release what lib_conds_parse allocated. */
void lib_conds_free(LibConds *c);
/* True when every clause holds at v (values in vars order); else *failed = the clause text. */
bool lib_conds_eval(const LibConds *c, const long long *v, const char **failed);
/* Emit `static int lib_user_domain(const void *, const long long *, const char **)` for c
 * (c may be NULL or empty: always true). */
void lib_conds_emit_c(StrBuf *o, const LibConds *c, const char *const *vars, int nvars);

/* ---- families ---- */

typedef struct LibFamily LibFamily;
typedef struct LibSet LibSet;
typedef struct LibShape LibShape;
typedef struct LibVerdict LibVerdict;

/* What a family's dispatcher does inside cake (dispatch.c), one function each:
 *   key      a NAME=VALUE of --explain that is not a shape variable (kmeans dtype= and
 *            update=, kda state=, mode=, gate=, seqlens=, cu=): 1 taken, 0 not the family's
 *            key, -1 a bad value (err says why);
 *   finish   defaults and derived variables once every key is read (false: err);
 *   explain  the explanation into buf: the route number (gemm, kda), 0 (kmeans), or minus a
 *            CAKE_*_E_* code;
 *   line     the one-line route (lib_route_line);
 *   verdict  every guard evaluated on its own (lib_verdict). */
typedef struct LibFamilyOps {
	int (*key)(const char *key, size_t kl, const char *val, size_t vl, LibShape *s, bool *set, char *err, size_t n);
	bool (*finish)(const LibFamily *fam, LibShape *s, bool *set, char *err, size_t n);
	int (*explain)(const LibSet *ls, const LibShape *s, char *buf, size_t len);
	int (*line)(const LibSet *ls, const LibShape *s, StrBuf *out);
	int (*verdict)(const LibSet *ls, const LibShape *s, LibVerdict *o);
} LibFamilyOps;

struct LibFamily {
	const char *name;                 /* "gemm", "kmeans", "kda" */
	const char *summary;              /* one line */
	const char *const *vars;          /* shape variables (--explain, --domain), in order */
	int nvars;
	const char *const *dims;          /* kernel dims, in the order of the dispatcher's fd[] */
	int ndims;
	const char *const *kernels;       /* kernel names, KID order */
	const char *const *files;         /* their .cake files (relative to the kernel folder) */
	int nkernels;
	const char *header;               /* asset names: public header, dispatcher, API */
	const char *dispatch;
	const char *api;
	const char *shape_help;           /* how --explain shapes are written */
	const char *const *fvals;         /* float values the kernels' f32 scalars take, by name (kda: lower_bound) */
	int nfvals;
	const LibFamilyOps *ops;
};

/* The family named name, or NULL. */
const LibFamily *lib_family(const char *name);
/* Comma-separated family names (for messages). */
const char *lib_family_names(void);

/* The family's kernels, compiled through the pipeline (for explain, the tests, the generator). */
typedef struct LibScratch {
	char failed[4][256];              /* texts of false kernel-domain constraints (a ring) */
	int next;
} LibScratch;

struct LibSet {
	const LibFamily *fam;
	const LibConds *user;             /* --domain clauses, or NULL */
	SourceSet srcs;
	DiagList diags;
	CakeUnit units[16];               /* one per distinct .cake file */
	const char *unit_file[16];
	int nunits;
	Kernel *kern[LIB_MAX_KERNELS];    /* KID order */
	Plan *plan[LIB_MAX_KERNELS];      /* after CAKE_DERIVE (NULL before) */
	int unit_of[LIB_MAX_KERNELS];     /* index into units */
	const char *note[LIB_MAX_KERNELS];/* where a kernel came from when not its corpus file (NULL) */
	LibScratch *scratch;
};

/* Kernels taken from a store instead of the corpus files (frontier.c), by KID: the
 * candidate's canonical text renamed to the kernel's name (NULL: the corpus file's). */
typedef struct LibOverrides {
	char *text[LIB_MAX_KERNELS];
	char id[LIB_MAX_KERNELS][STORE_ID_LEN + 1];
	char note[LIB_MAX_KERNELS][320];
} LibOverrides;

/* Compile every kernel of fam from folder dir up to stage until (CAKE_SEMA for explain,
 * CAKE_DERIVE for the tests, CAKE_JIT for the generator). Returns 0, or 1 with the reason in
 * err (a file that cannot be read, a missing kernel, findings: printed to err too). */
int lib_load(LibSet *ls, const LibFamily *fam, const char *dir, CakeStage until, const LibConds *user, StrBuf *err);
/* The same, with the kernels of ov (may be NULL) compiled from their texts instead. */
int lib_load_with(LibSet *ls, const LibFamily *fam, const char *dir, CakeStage until, const LibConds *user,
                  const LibOverrides *ov, StrBuf *err);
/* For each kernel of ls (loaded from the corpus, CAKE_SEMA or later) that has a family,
 * the store candidate that replaces it (see frontier.c: measured faster by at least
 * min_gain over the shapes both were timed at, slower at none, the same const, param and
 * domain lines, verifies and lowers today), into ov; one report line per kernel. Returns 0,
 * or 1 with err when the store cannot be read. Release ov with lib_overrides_free. */
int lib_frontier(const LibSet *ls, Store *st, double min_gain, LibOverrides *ov, StrBuf *report, char *err,
                 size_t errlen);
void lib_overrides_free(LibOverrides *ov);
/* Release everything lib_load made. */
void lib_unload(LibSet *ls);
/* Index of the kernel dim named dim among the family's dims (the fd[] order), or -1. */
int lib_dim_index(const LibFamily *fam, const char *dim);
/* Index of the float value named name among the family's fvals, or -1. */
int lib_fval_index(const LibFamily *fam, const char *name);
/* How plan p's kernel reaches tensor parameter param: bit 0 a tensor map, bit 1 a plain
 * pointer (0: not at all, or p is NULL). */
int lib_param_use(const Plan *p, const char *param);

/* ---- the dispatchers, as the libraries run them (dispatch.c) ---- */

/* One shape of a family: its variables and options. */
#define LIB_MAX_VARS 12
#define LIB_MAX_SEQS 4096      /* kda: sequences an --explain shape may list */
struct LibShape {
	long long v[LIB_MAX_VARS];        /* fam->vars order */
	int atomic;                       /* kmeans: update=atomic */
	long long ncu;                    /* kda: offsets in cu (N + 1; 0: no cu_seqlens) */
	int64_t cu[LIB_MAX_SEQS + 1];
};

/* Parse "NAME=V,NAME=V,..." into s: the family's variables and its keys (kmeans dtype=bf16|f16
 * and update=sorted|atomic; kda state=f32|bf16, mode=prefill|decode, gate=lb|softplus,
 * seqlens=L:L:.. or cu=0:O:..:T). Unset variables without a default: an error. */
bool lib_shape_parse(const LibFamily *fam, const char *spec, LibShape *s, char *err, size_t n);
/* Write the explanation of shape s. Returns the route number (gemm, kda), 0 (kmeans), or
 * minus a CAKE_*_E_* code. */
int lib_shape_explain(const LibSet *ls, const LibShape *s, StrBuf *out);
/* One-line route of shape s: "persistent_128x256", "padded>ws_128x128_s5",
 * "assign_bf16_d128+sorted_scan_k1024 Np=.. Kp=..", "split NS=.. NP=..", or "refused: CLAUSE".
 * Returns as lib_shape_explain. */
int lib_shape_line(const LibSet *ls, const LibShape *s, StrBuf *out);

/* The same for gemm and kmeans shapes given as v (fam->vars order) and the kmeans update. */
bool lib_parse_shape(const LibFamily *fam, const char *spec, long long *v, int *atomic, char *err, size_t n);
int lib_explain(const LibSet *ls, const long long *v, int atomic, StrBuf *out);
int lib_route_line(const LibSet *ls, const long long *v, int atomic, StrBuf *out);

/* What a shape runs, for the domain tests: every guard evaluated on its own. */
#define LIB_MAX_ROUTES 16
#define LIB_MAX_FD 12          /* family dims a verdict records per launch (GEMM_NFD, KM_NFD at most) */
#define LIB_MAX_LAUNCH 72      /* kda's per-sequence route: up to 63 launches */
struct LibVerdict {
	bool in_domain;
	const char *failed;               /* the false domain clause (not in the domain) */
	char failbuf[256];                /* kda: what the offsets hold when a cu_seqlens rule failed */
	int naxes;                        /* gemm 1 (kernel), kmeans 2 (assign, update) */
	int nroutes[2];
	bool guard[2][LIB_MAX_ROUTES];    /* each guard of each axis, evaluated independently */
	int route[2];                     /* the dispatcher's choice per axis (first true guard) */
	int nlaunch;                      /* kernels the shape launches, at the dims they get */
	int launch_kid[LIB_MAX_LAUNCH];
	long long launch_dims[LIB_MAX_LAUNCH][LIB_MAX_FD];   /* family dims (fd order) */
	size_t ws_bytes;                  /* gemm: the workspace of the route */
};

/* Evaluate every guard of shape s independently and record the launches the chosen routes
 * make. Returns 0 (in_domain tells whether the shape is served). */
int lib_shape_verdict(const LibSet *ls, const LibShape *s, LibVerdict *out);
/* The same for a gemm or kmeans shape v. */
int lib_verdict(const LibSet *ls, const long long *v, int atomic, LibVerdict *out);

/* kda: the chunk-slot tables of shape s as the library builds them (kda_dispatch.inc), for
 * the test that compares them with the app's (src/family/kda.c). false when the shape has
 * none (T < 64, or outside the domain). The arrays are malloc'd: free each. */
/* The library's PAIR for kda shape s on sms SMs (kda_dispatch.inc, kda_paired): for the test
 * that it is the app's kda_state_paired. */
int lib_kda_paired(const LibShape *s, long long sms);
bool lib_kda_slot_tables(const LibShape *s, long long *ns, long long *np, int32_t **sl, int32_t **cs, int32_t **ord,
                         int32_t **ps);

/* ---- the generator (library.c) ---- */

typedef struct LibGenOptions {
	const char *kernels_dir;          /* NULL: kernels/FAMILY */
	const char *domain_file;          /* NULL: none */
	const char *out_dir;
	const char *cc;                   /* NULL: $CC or "cc" */
	const char *cflags;               /* extra compiler flags (NULL: none) */
	const LibOverrides *overrides;    /* kernels from a store (NULL: none) */
	bool no_compile;                  /* write the sources only */
	bool verbose;
} LibGenOptions;

/* Generate fam's library into o->out_dir: include/cake_FAMILY.h, src/cake_FAMILY.c,
 * cake_kernels/libcake_FAMILY.so (+ lib/ symlink), lib/pkgconfig/cake_FAMILY.pc and the
 * Python package (pyproject.toml, cake_kernels/ *.py). Progress goes to log. Returns 0, 1
 * (a kernel does not compile, the C compiler failed: err says why), 2 (bad input) or
 * GPU_EXIT_NO_DRIVER when NVRTC is missing. */
int lib_generate(const LibFamily *fam, const LibGenOptions *o, StrBuf *log, char *err, size_t errlen);

/* Append s as a C string literal (quotes included). */
void lib_c_string(StrBuf *o, const char *s);

/* ---- embedded assets (embed.c) ---- */

/* The text of asset name ("cake_rt.inc", "python/cake_kernels/_native.py", ...) and its
 * length, or NULL. */
const char *lib_asset(const char *name, size_t *len);
/* Names of the Python package's files (NULL-terminated list). */
const char *const *lib_python_assets(void);

#endif
