/*
 * jit.c — CUDA C++ to cubin through NVRTC, with a content-addressed cache.
 *
 * NVRTC is reached with dlopen, never linked: libnvrtc.so.13 from the loader
 * path, then /usr/local/cuda/lib64, then $CUDA_HOME/lib64 (and lib/). NVRTC
 * needs no GPU, so this file is what lets CI compile every corpus kernel for
 * sm_90a and fail on undeclared spills. A missing NVRTC is a clear error that
 * names the library and the fix.
 *
 * Options: --gpu-architecture=<arch> (callers pass the arch string of the
 * kernel's row in the target table, base/target.h; the sm_90a row's by
 * default: wgmma and setmaxnreg exist only there), -std=c++17, --ptxas-options=-v so that the program log
 * carries ptxas's resource report (registers, stack frame, spill bytes,
 * static smem per kernel), which jit_parse_ptxas() turns into JitKernelInfo.
 * With CAKE_NVRTC_LINEINFO set (non-empty) -lineinfo is added: the cubin then
 * maps SASS to the generated CUDA's lines (each statement's `// FILE.cake:N:`
 * comment sits above its code), for ncu's source view; it changes no code.
 *
 * Cache: the key is xxh3-128 over the source, every option, the arch and the
 * NVRTC version, so a toolkit upgrade or a changed macro is a miss. Entries
 * live in $XDG_CACHE_HOME/cake or ~/.cache/cake as <key>.cubin with a header
 * (magic, key, lengths and xxh3-64 checksums of the cubin and of the saved
 * ptxas log) and are written atomically (tmp + rename). An entry whose magic,
 * key, sizes or checksums do not match is treated as absent and rebuilt; a
 * cache entry is never trusted blindly.
 *
 * Signals: nvrtcCompileProgram installs its own SIGINT/SIGTERM handlers for
 * the length of the compile (they end the process with status 4) and puts
 * the old ones back afterwards. A caller that handles SIGINT itself (cake
 * evolve stops after the evaluation in flight) would lose a Ctrl-C that lands
 * mid-compile, so when SIGINT or SIGTERM has a handler of the caller's, both
 * are blocked around the compile and arrive, to that handler, right after it.
 * With the default disposition nothing is blocked: Ctrl-C ends `cake build`
 * at once, as it should.
 */
#include "gpu.h"
#include "../base/base.h"
#include "../base/target.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

typedef int nvrtcResult;
typedef void *nvrtcProgram;

typedef struct Nvrtc {
	void *lib;
	nvrtcResult (*Version)(int *, int *);
	nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
	                             const char *const *);
	nvrtcResult (*DestroyProgram)(nvrtcProgram *);
	nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
	const char *(*GetErrorString)(nvrtcResult);
} Nvrtc;

#define NVRTC_LIB "libnvrtc.so.13"

/* True when sig has a handler installed by the caller (not the default, not ignored). */
static bool caller_handles(int sig)
{
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa))
		return false;
	return (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
}

/* Open NVRTC; on failure fill err with the library name and the fix. */
static int nvrtc_open(Nvrtc *n, char *err, size_t errlen)
{
	memset(n, 0, sizeof *n);
	const char *home = getenv("CUDA_HOME");
	const char *cands[5];
	int nc = 0;
	cands[nc++] = NVRTC_LIB;
	cands[nc++] = "/usr/local/cuda/lib64/" NVRTC_LIB;
	char p1[4096], p2[4096];
	if (home && *home) {
		snprintf(p1, sizeof p1, "%s/lib64/%s", home, NVRTC_LIB);
		snprintf(p2, sizeof p2, "%s/lib/%s", home, NVRTC_LIB);
		cands[nc++] = p1;
		cands[nc++] = p2;
	}
	for (int i = 0; i < nc && !n->lib; i++)
		n->lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(err, errlen,
		         "cannot load NVRTC (%s; also tried /usr/local/cuda/lib64 and $CUDA_HOME/lib64): "
		         "install the CUDA 13 toolkit (or its NVRTC package) or set CUDA_HOME to it",
		         NVRTC_LIB);
		return -1;
	}
	int miss = 0;
#define S(f, s) do { *(void **)&n->f = dlsym(n->lib, s); if (!n->f) miss++; } while (0)
	S(Version, "nvrtcVersion");
	S(CreateProgram, "nvrtcCreateProgram");
	S(DestroyProgram, "nvrtcDestroyProgram");
	S(CompileProgram, "nvrtcCompileProgram");
	S(GetProgramLogSize, "nvrtcGetProgramLogSize");
	S(GetProgramLog, "nvrtcGetProgramLog");
	S(GetCUBINSize, "nvrtcGetCUBINSize");
	S(GetCUBIN, "nvrtcGetCUBIN");
	S(GetErrorString, "nvrtcGetErrorString");
#undef S
	if (miss) {
		snprintf(err, errlen, "%s lacks %d entry points (nvrtcGetCUBIN needs CUDA 11.1+): install the CUDA 13 toolkit",
		         NVRTC_LIB, miss);
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	return 0;
}

int jit_nvrtc_version(int *major, int *minor, char *err, size_t errlen)
{
	Nvrtc n;
	if (nvrtc_open(&n, err, errlen))
		return -1;
	n.Version(major, minor);
	return 0;   /* NVRTC stays loaded: see jit_compile */
}

const char *jit_cache_dir(const JitOptions *o, char *buf, size_t len)
{
	const char *x = getenv("XDG_CACHE_HOME");
	if (o && o->cache_dir)
		snprintf(buf, len, "%s", o->cache_dir);
	else if (x && *x)
		snprintf(buf, len, "%s/cake", x);
	else {
		const char *h = getenv("HOME");
		snprintf(buf, len, "%s/.cache/cake", h && *h ? h : "/tmp");
	}
	return buf;
}

/* ---- ptxas report ---- */

/* Find or add the info record for kernel `name`. */
static JitKernelInfo *kinfo(JitKernelInfo *k, int *n, int max, const char *name, size_t nlen)
{
	for (int i = 0; i < *n; i++)
		if (strlen(k[i].name) == nlen && !strncmp(k[i].name, name, nlen))
			return &k[i];
	if (*n >= max)
		return NULL;
	JitKernelInfo *r = &k[(*n)++];
	memset(r, 0, sizeof *r);
	snprintf(r->name, sizeof r->name, "%.*s", (int)nlen, name);
	return r;
}

/* The integer written just before position p in line (skipping blanks), or 0. */
static int num_before(const char *line, const char *p)
{
	const char *q = p;
	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return atoi(q);
}

/* Parse the "<N> bytes <what>" and "Used N registers" pieces of one line. */
static void parse_props(JitKernelInfo *cur, const char *line)
{
	const char *p;
	if ((p = strstr(line, "bytes stack frame")))
		cur->stack_bytes = num_before(line, p);
	if ((p = strstr(line, "bytes spill stores")))
		cur->spill_stores = num_before(line, p);
	if ((p = strstr(line, "bytes spill loads")))
		cur->spill_loads = num_before(line, p);
	if ((p = strstr(line, "Used ")) && strstr(line, "registers"))
		cur->regs = atoi(p + 5);
	if ((p = strstr(line, "used ")) && strstr(p, "barriers"))
		cur->barriers = atoi(p + 5);
	if ((p = strstr(line, "bytes smem")))
		cur->smem_static = num_before(line, p);
}

int jit_parse_ptxas(const char *log, JitKernelInfo *k, int max)
{
	int n = 0, entries = 0;
	JitKernelInfo *cur = NULL;
	const char *line = log;
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
		const char *q;
		entries += strstr(buf, "Compiling entry function '") != NULL;
		if ((q = strstr(buf, "Compiling entry function '")) || (q = strstr(buf, "Function properties for "))) {
			const char *nm = strchr(q, '\'') ? strchr(q, '\'') + 1 : q + strlen("Function properties for ");
			size_t nl = strcspn(nm, "' \t\r");
			cur = kinfo(k, &n, max, nm, nl);
		} else if (cur)
			parse_props(cur, buf);
		line = eol ? eol + 1 : NULL;
	}
	return entries > n ? entries : n;   /* more than max: the caller sees what it lost */
}

/* ---- cache ---- */

#define CACHE_MAGIC "CAKECUB1"

typedef struct CacheHdr {
	char magic[8];
	uint64_t key_hi, key_lo;
	uint64_t cubin_len, cubin_hash;
	uint64_t log_len, log_hash;
} CacheHdr;

static void cache_path(char *buf, size_t len, const char *dir, const char *key)
{
	snprintf(buf, len, "%s/%s.cubin", dir, key);
}

/* Load a cache entry; 0 = hit, -1 = absent or corrupt (never trusted). */
static int cache_load(const char *path, XXH128_hash_t key, JitResult *out)
{
	size_t len = 0;
	char *data = read_file(path, &len);
	if (!data)
		return -1;
	CacheHdr h;
	int ok = len >= sizeof h;
	if (ok) {
		memcpy(&h, data, sizeof h);
		ok = !memcmp(h.magic, CACHE_MAGIC, 8) && h.key_hi == key.high64 && h.key_lo == key.low64 &&
		     h.cubin_len > 0 && h.cubin_len <= len && h.log_len <= len &&
		     sizeof h + h.cubin_len + h.log_len == len &&
		     XXH3_64bits(data + sizeof h, h.cubin_len) == h.cubin_hash &&
		     XXH3_64bits(data + sizeof h + h.cubin_len, h.log_len) == h.log_hash;
	}
	if (!ok) {
		free(data);
		return -1;
	}
	out->cubin = xmalloc(h.cubin_len);
	memcpy(out->cubin, data + sizeof h, h.cubin_len);
	out->cubin_len = h.cubin_len;
	out->log = xmalloc(h.log_len + 1);
	memcpy(out->log, data + sizeof h + h.cubin_len, h.log_len);
	out->log[h.log_len] = 0;
	free(data);
	return 0;
}

static int cache_store(const char *dir, const char *path, XXH128_hash_t key, const JitResult *r)
{
	if (mkdir_p(dir))
		return -1;
	size_t loglen = strlen(r->log);
	CacheHdr h;
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.key_hi = key.high64;
	h.key_lo = key.low64;
	h.cubin_len = r->cubin_len;
	h.cubin_hash = XXH3_64bits(r->cubin, r->cubin_len);
	h.log_len = loglen;
	h.log_hash = XXH3_64bits(r->log, loglen);
	size_t total = sizeof h + r->cubin_len + loglen;
	char *buf = xmalloc(total);
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, r->cubin, r->cubin_len);
	memcpy(buf + sizeof h + r->cubin_len, r->log, loglen);
	int rc = write_file_atomic(path, buf, total);
	free(buf);
	return rc;
}

void jit_result_free(JitResult *r)
{
	free(r->cubin);
	free(r->log);
	r->cubin = NULL;
	r->log = NULL;
}

int jit_compile(const char *src, const char *name, const JitOptions *o, JitResult *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	err[0] = 0;
	Nvrtc nv;
	if (nvrtc_open(&nv, err, errlen))
		return JIT_NO_NVRTC;
	int vmaj = 0, vmin = 0;
	nv.Version(&vmaj, &vmin);

	/* options */
	const char *arch = o && o->arch ? o->arch : target_info(TGT_SM90A)->arch;
	char archopt[64];
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
	int nextra = o ? o->nextra : 0;
	const char **opts = xcalloc((size_t)nextra + 5, sizeof *opts);
	int nopt = 0;
	opts[nopt++] = archopt;
	opts[nopt++] = "-std=c++17";
	opts[nopt++] = "--ptxas-options=-v";
	const char *li = getenv("CAKE_NVRTC_LINEINFO");
	if (li && *li)
		opts[nopt++] = "-lineinfo";
	for (int i = 0; i < nextra; i++)
		opts[nopt++] = o->extra[i];

	/* key: source, options, NVRTC version */
	XXH3_state_t *st = XXH3_createState();
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, src, strlen(src) + 1);
	for (int i = 0; i < nopt; i++)
		XXH3_128bits_update(st, opts[i], strlen(opts[i]) + 1);
	char ver[32];
	snprintf(ver, sizeof ver, "nvrtc %d.%d", vmaj, vmin);
	XXH3_128bits_update(st, ver, strlen(ver) + 1);
	XXH128_hash_t key = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	snprintf(out->key, sizeof out->key, "%016llx%016llx", (unsigned long long)key.high64,
	         (unsigned long long)key.low64);

	char dir[2048], path[2200];
	jit_cache_dir(o, dir, sizeof dir);
	cache_path(path, sizeof path, dir, out->key);
	int rc = JIT_OK;
	if (!(o && o->no_cache) && cache_load(path, key, out) == 0) {
		out->cache_hit = true;
		goto done;
	}

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nvrtcProgram prog = NULL;
	nvrtcResult r = nv.CreateProgram(&prog, src, name ? name : "kernel.cu", 0, NULL, NULL);
	if (r) {
		snprintf(err, errlen, "nvrtcCreateProgram: %s", nv.GetErrorString(r));
		rc = JIT_COMPILE_ERROR;
		goto done;
	}
	sigset_t held, saved;
	bool hold = caller_handles(SIGINT) || caller_handles(SIGTERM);
	if (hold) {
		sigemptyset(&held);
		sigaddset(&held, SIGINT);
		sigaddset(&held, SIGTERM);
		sigprocmask(SIG_BLOCK, &held, &saved);
	}
	r = nv.CompileProgram(prog, nopt, opts);
	if (hold)
		sigprocmask(SIG_SETMASK, &saved, NULL);
	size_t loglen = 0;
	nv.GetProgramLogSize(prog, &loglen);
	out->log = xmalloc(loglen + 1);
	out->log[0] = 0;
	if (loglen)
		nv.GetProgramLog(prog, out->log);
	out->log[loglen] = 0;
	if (r) {
		/* first error line of the log makes the one-line reason */
		const char *e = strstr(out->log, "error");
		const char *ls = e;
		while (ls && ls > out->log && ls[-1] != '\n')
			ls--;
		size_t el = ls ? strcspn(ls, "\n") : 0;
		snprintf(err, errlen, "NVRTC failed to compile %s (%s)%s%.*s", name ? name : "kernel",
		         nv.GetErrorString(r), el ? ": " : "", (int)(el > 300 ? 300 : el), ls ? ls : "");
		nv.DestroyProgram(&prog);
		rc = JIT_COMPILE_ERROR;
		goto done;
	}
	nv.GetCUBINSize(prog, &out->cubin_len);
	out->cubin = xmalloc(out->cubin_len ? out->cubin_len : 1);
	nv.GetCUBIN(prog, out->cubin);
	nv.DestroyProgram(&prog);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->compile_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
	if (cache_store(dir, path, key, out))
		fprintf(stderr, "cake: warning: cannot write the JIT cache entry %s: %s\n", path, strerror(errno));
done:
	if (rc == JIT_OK) {
		out->nkern = jit_parse_ptxas(out->log, out->kern, (int)NELEM(out->kern));
		if (out->nkern > (int)NELEM(out->kern)) {   /* a report per kernel or none: spills must not go unseen */
			snprintf(err, errlen, "%s holds %d kernels; one translation unit reports at most %d (split the file)",
			         name ? name : "the source", out->nkern, (int)NELEM(out->kern));
			out->nkern = (int)NELEM(out->kern);
			rc = JIT_COMPILE_ERROR;
		}
	}
	free(opts);
	/* NVRTC is deliberately not dlclose'd: it keeps process-lifetime state
	 * (builtins, allocator pools) that unloading would orphan; a later
	 * dlopen of the same library is a reference-count increment. */
	return rc;
}
