/*
 * coef.c — the cost model's free coefficients and its version files (cost.h).
 *
 * A model version is a small JSON file, data/cost/NAME-vN.json (format
 * cake-cost-model/1): the version string, the GPU row it belongs to, the
 * coefficients by name, and what they were fitted on (the xxh3-64 hash of
 * the measurements, their count, the train / held-out split). `cake
 * calibrate` writes new versions; every command loads the highest-numbered
 * one it finds at run time. The newest committed files are also compiled in
 * below (builtin[]), so a binary run from any directory still predicts, and
 * tests/unit/test_cost.c checks that the two agree value for value. A
 * coefficient added after a version was fitted (v2's tile_us, overlap_max,
 * shfl_cost, epi_post; v3's handoff_us) may be missing from its file: it reads as its
 * neutral value, the one that leaves the equations that version was fitted
 * with, so h200-v1.json still predicts what it did.
 *
 * Refusal. cost_target() is the one place that decides whether the model
 * predicts for a GPU: an unknown name or a row with calibrated = false is
 * refused with the names of the calibrated rows.
 */
#include "cost.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

static const struct {
	const char *name, *doc;
	double lo, hi;
	double neutral;             /* for the coefficients added in v2: the value a file without it reads */
	bool added;                 /* added after v1: may be missing from a model file */
	int since;                  /* the structure version that added it, when after v2 (0: v1 or v2);
	                             * the fit searches the newest version's coefficients last (fit.c) */
} coefs[CC_NCOEF] = {
	[CC_EFF_TENSOR] = {"eff_tensor", "share of the GPU row's MMA ceiling a wgmma stream reaches (the datasheet's "
	                   "989.4 TFLOP/s is 1.27 x the measured 781)", 0.3, 1.27},
	[CC_EFF_L2] = {"eff_l2", "share of the L2 -> SM bandwidth the tiles' loads reach", 0.3, 1.5},
	[CC_EFF_HBM] = {"eff_hbm", "share of the DRAM ceiling the compulsory traffic reaches", 0.3, 1.1},
	[CC_EFF_VEC] = {"eff_vec", "share of the SIMT issue rate (128 lanes x clock per SM) fragment math reaches", 0.05,
	                1.0},
	[CC_OVERLAP] = {"overlap", "share of the smaller of wgmma and vector time per iteration hidden under the larger", 0,
	                1},
	[CC_LAT_SCALE] = {"tma_lat_scale", "multiplies the GPU row's TMA latency", 0.2, 5},
	[CC_SYNC_SCALE] = {"sync_scale", "multiplies the GPU row's barrier-wait latency (per wait)", 0, 20},
	[CC_LAUNCH_US] = {"launch_us", "launch overhead of one timed launch, microseconds", 0.5, 10},
	[CC_CTA_US] = {"cta_us", "start-up of one CTA (barrier init, tensor-map prefetch, setmaxnreg), microseconds", 0,
	               5},
	[CC_MEM_SERIAL] = {"mem_serial", "share of the smaller of DRAM and L2 time not hidden under the larger (L2 misses "
	                   "also pass through L2)", 0, 1},
	[CC_L2_REUSE] = {"l2_reuse", "share of the L2 capacity that keeps panels for the tiles that read them next", 0.05, 1},
	[CC_GMEM_LAT_SCALE] = {"gmem_lat_scale", "multiplies the GPU row's global-load latency", 0.2, 5},
	[CC_WGMMA_N0] = {"wgmma_n0", "a wgmma of N columns per warpgroup runs at N / (N + n0) of the rate, relative to N = 256",
	                 0, 128},
	[CC_EFF_ATOMIC] = {"eff_atomic", "share of the L2 bandwidth global atomics (red, fetch_add) reach", 0.05, 1.5},
	[CC_VSTMT_US] = {"vstmt_us", "latency of one vector statement beyond its throughput (a dependent chain: shuffles, "
	                 "reductions), microseconds", 0, 0.5},
	[CC_TILE_US] = {"tile_us", "switch from one tile to the next in a persistent CTA (tile decode, accumulator reset, "
	                "the first wait the producer's run-ahead does not cover), microseconds", 0, 5, 0, true},
	[CC_OVERLAP_MAX] = {"overlap_max", "share of the smaller of wgmma and vector time any number of consumer "
	                    "warpgroups can hide (one barrier releases them together on each stage)", 0.3, 1, 1, true},
	[CC_SHFL_COST] = {"shfl_cost", "SIMT operations one lane shuffle of a row reduction costs (a shuffle issues at 32 "
	                  "lanes per clock per SM, an ALU op at 128)", 0, 16, 0, true},
	[CC_EPI_POST] = {"epi_post", "share of the epilogue's posted global traffic (stores, reductions: nothing waits for "
	                 "them) that drains under the next tile on the SM instead of delaying it", 0, 1, 0, true},
	[CC_HANDOFF_US] = {"handoff_us", "switch of one warpgroup between its wgmma and its vector phase (the drain "
	                   "after its last wgmma, the wake-up from the wait): a third or fourth consumer warpgroup keeps "
	                   "the share p / (p + handoff_us) of its extra overlap, p its phase, microseconds", 0, 0.5, 0,
	                   true, 3},
};

const char *cost_coef_name(int i)
{
	return i >= 0 && i < CC_NCOEF ? coefs[i].name : NULL;
}

const char *cost_coef_doc(int i)
{
	return i >= 0 && i < CC_NCOEF ? coefs[i].doc : "";
}

double cost_coef_neutral(int i)
{
	return i >= 0 && i < CC_NCOEF ? coefs[i].neutral : 0;
}

int cost_coef_since(int i)
{
	if (i < 0 || i >= CC_NCOEF)
		return 0;
	return coefs[i].since > 0 ? coefs[i].since : coefs[i].added ? 2 : 1;
}

void cost_coef_bounds(int i, double *lo, double *hi)
{
	*lo = coefs[i].lo;
	*hi = coefs[i].hi;
}

void cost_prior(const GpuInfo *g, CostModel *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->version, sizeof out->version, "%s-prior", g ? g->cost_model : "?");
	snprintf(out->target, sizeof out->target, "%s", g ? g->name : "?");
	out->c[CC_EFF_TENSOR] = 1;
	out->c[CC_EFF_L2] = 1;
	out->c[CC_EFF_HBM] = 1;
	out->c[CC_EFF_VEC] = 0.5;
	out->c[CC_OVERLAP] = 0.5;
	out->c[CC_LAT_SCALE] = 1;
	out->c[CC_SYNC_SCALE] = 1;
	out->c[CC_LAUNCH_US] = g && g->launch_us.v > 0 ? g->launch_us.v : 3;
	out->c[CC_CTA_US] = 1;
	out->c[CC_MEM_SERIAL] = 0.25;
	out->c[CC_L2_REUSE] = 0.5;
	out->c[CC_GMEM_LAT_SCALE] = 1;
	out->c[CC_WGMMA_N0] = 8;
	out->c[CC_EFF_ATOMIC] = 0.5;
	out->c[CC_VSTMT_US] = 0.02;
	out->c[CC_TILE_US] = 0.5;
	out->c[CC_OVERLAP_MAX] = 0.8;
	out->c[CC_SHFL_COST] = 4;
	out->c[CC_EPI_POST] = 0.5;
	out->c[CC_HANDOFF_US] = 0.1;
	snprintf(out->data_hash, sizeof out->data_hash, "none");
	snprintf(out->fitted_on, sizeof out->fitted_on, "not fitted: the prior (efficiencies 1, vector 0.5, overlap 0.5)");
}

/* The newest committed data/cost/h200-vN.json and h100-vN.json, value for
 * value (tools/cost_builtin.py writes this block from them). */
/* BEGIN builtin (tools/cost_builtin.py) */
static const CostModel builtin[] = {
	{
		.version = "h200-v3",
		.target = "h200",
		.c = {
			[CC_EFF_TENSOR] = 1.04618,
			[CC_EFF_L2] = 0.893359,
			[CC_EFF_HBM] = 0.998437,
			[CC_EFF_VEC] = 0.542908,
			[CC_OVERLAP] = 0.574463,
			[CC_LAT_SCALE] = 0.2,
			[CC_SYNC_SCALE] = 2.25586,
			[CC_LAUNCH_US] = 3.00464,
			[CC_CTA_US] = 0,
			[CC_MEM_SERIAL] = 0.259766,
			[CC_L2_REUSE] = 0.5,
			[CC_GMEM_LAT_SCALE] = 0.94375,
			[CC_WGMMA_N0] = 8.6875,
			[CC_EFF_ATOMIC] = 0.52478,
			[CC_VSTMT_US] = 0,
			[CC_TILE_US] = 1.00537,
			[CC_OVERLAP_MAX] = 0.769922,
			[CC_SHFL_COST] = 3.80859,
			[CC_EPI_POST] = 0.53125,
			[CC_HANDOFF_US] = 0.112671,
		},
		.data_hash = "xxh3-64:da3c45d8154dd8b5",
		.fitted_on = "483 measurements from h200-real.jsonl, h200-gemm-clean-start-2026-12-01.jsonl, h200-gemm-clean-start-v3-2026-12-01.jsonl, and 3 more: 326 fitted, 157 held out (1 in 3 candidates)",
		.rows = 483, .train = 326, .heldout = 157,
	},
	{
		.version = "h100-v2",
		.target = "h100",
		.c = {
			[CC_EFF_TENSOR] = 1.04618,
			[CC_EFF_L2] = 0.893359,
			[CC_EFF_HBM] = 0.998437,
			[CC_EFF_VEC] = 0.542908,
			[CC_OVERLAP] = 0.574463,
			[CC_LAT_SCALE] = 0.2,
			[CC_SYNC_SCALE] = 2.25586,
			[CC_LAUNCH_US] = 3.00464,
			[CC_CTA_US] = 0,
			[CC_MEM_SERIAL] = 0.259766,
			[CC_L2_REUSE] = 0.5,
			[CC_GMEM_LAT_SCALE] = 0.94375,
			[CC_WGMMA_N0] = 8.6875,
			[CC_EFF_ATOMIC] = 0.52478,
			[CC_VSTMT_US] = 0,
			[CC_TILE_US] = 1.00537,
			[CC_OVERLAP_MAX] = 0.769922,
			[CC_SHFL_COST] = 3.80859,
			[CC_EPI_POST] = 0.53125,
			[CC_HANDOFF_US] = 0,
		},
		.data_hash = "xxh3-64:da3c45d8154dd8b5",
		.fitted_on = "transferred from h200-v2 (no H100 measurements yet)",
		.rows = 0, .train = 0, .heldout = 0,
	},
};
/* END builtin */

const CostModel *cost_builtin(const char *target)
{
	for (size_t i = 0; target && i < sizeof builtin / sizeof builtin[0]; i++)
		if (!strcasecmp(builtin[i].target, target))
			return &builtin[i];
	return NULL;
}

static void copy_str(char *dst, size_t n, json_t *v)
{
	snprintf(dst, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

bool cost_model_parse(const char *text, size_t len, CostModel *out, char *err, size_t n)
{
	memset(out, 0, sizeof *out);
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root) {
		snprintf(err, n, "not JSON: line %d: %s", je.line, je.text);
		return false;
	}
	bool ok = false;
	json_t *fmt = json_object_get(root, "format"), *co = json_object_get(root, "coefficients");
	if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "cake-cost-model/1")) {
		snprintf(err, n, "\"format\" must be \"cake-cost-model/1\"");
		goto out;
	}
	if (!json_is_string(json_object_get(root, "version")) || !json_is_string(json_object_get(root, "target"))) {
		snprintf(err, n, "\"version\" and \"target\" must be strings");
		goto out;
	}
	copy_str(out->version, sizeof out->version, json_object_get(root, "version"));
	copy_str(out->target, sizeof out->target, json_object_get(root, "target"));
	copy_str(out->data_hash, sizeof out->data_hash, json_object_get(root, "data_hash"));
	copy_str(out->fitted_on, sizeof out->fitted_on, json_object_get(root, "fitted_on"));
	if (!out->data_hash[0])
		snprintf(out->data_hash, sizeof out->data_hash, "none");
	out->rows = (int)json_integer_value(json_object_get(root, "rows"));
	out->train = (int)json_integer_value(json_object_get(root, "train"));
	out->heldout = (int)json_integer_value(json_object_get(root, "heldout"));
	if (!json_is_object(co)) {
		snprintf(err, n, "\"coefficients\" must be an object");
		goto out;
	}
	for (int i = 0; i < CC_NCOEF; i++) {
		json_t *v = json_object_get(co, coefs[i].name);
		if (!v && coefs[i].added) {
			out->c[i] = coefs[i].neutral;   /* a file from before the coefficient: its neutral value */
			continue;
		}
		if (!json_is_number(v)) {
			snprintf(err, n, "coefficient \"%s\" is missing or not a number", coefs[i].name);
			goto out;
		}
		out->c[i] = json_number_value(v);
		if (!(out->c[i] >= coefs[i].lo && out->c[i] <= coefs[i].hi)) {
			snprintf(err, n, "coefficient \"%s\" = %g is outside its range [%g, %g]", coefs[i].name, out->c[i],
			         coefs[i].lo, coefs[i].hi);
			goto out;
		}
	}
	const char *key;
	json_t *v;
	json_object_foreach(co, key, v) {
		int i = 0;
		while (i < CC_NCOEF && strcmp(key, coefs[i].name))
			i++;
		if (i == CC_NCOEF) {
			snprintf(err, n, "unknown coefficient \"%s\"", key);
			goto out;
		}
	}
	ok = true;
out:
	json_decref(root);
	return ok;
}

void cost_model_json(StrBuf *b, const CostModel *m)
{
	sb_puts(b, "{\n  \"format\": \"cake-cost-model/1\",\n  \"version\": ");
	sb_json_str(b, m->version);
	sb_puts(b, ",\n  \"target\": ");
	sb_json_str(b, m->target);
	sb_puts(b, ",\n  \"coefficients\": {\n");
	for (int i = 0; i < CC_NCOEF; i++)
		sb_printf(b, "    \"%s\": %.6g%s\n", coefs[i].name, m->c[i], i + 1 < CC_NCOEF ? "," : "");
	sb_puts(b, "  },\n  \"data_hash\": ");
	sb_json_str(b, m->data_hash);
	sb_puts(b, ",\n  \"fitted_on\": ");
	sb_json_str(b, m->fitted_on);
	sb_printf(b, ",\n  \"rows\": %d,\n  \"train\": %d,\n  \"heldout\": %d\n}\n", m->rows, m->train, m->heldout);
}

/* The highest N of NAME-vN.json in dir (0: none); its path into path. */
static int best_in_dir(const char *dir, const char *name, char *path, size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int best = 0;
	size_t nl = strlen(name);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *f = e->d_name;
		if (strncmp(f, name, nl) || strncmp(f + nl, "-v", 2))
			continue;
		char *end;
		long v = strtol(f + nl + 2, &end, 10);
		if (v < 1 || v > INT_MAX || strcmp(end, ".json"))
			continue;
		if (v > best) {
			best = (int)v;
			snprintf(path, n, "%.3000s/%.255s", dir, f);
		}
	}
	closedir(d);
	return best;
}

static bool load_file(const char *path, CostModel *out, char *err, size_t n)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		snprintf(err, n, "cannot read cost model '%s': %s", path, strerror(errno));
		return false;
	}
	char why[256];
	bool ok = cost_model_parse(text, len, out, why, sizeof why);
	free(text);
	if (!ok)
		snprintf(err, n, "cost model '%s': %s", path, why);
	return ok;
}

bool cost_model_load(const GpuInfo *g, const char *path, CostModel *out, char *from, size_t nfrom, char *err, size_t n)
{
	if (path) {
		if (!load_file(path, out, err, n))
			return false;
		if (from)
			snprintf(from, nfrom, "%s", path);
		return true;
	}
	char dirs[4][PATH_MAX];
	int nd = 0;
	const char *env = getenv("CAKE_COST_DIR");
	if (env && env[0])
		snprintf(dirs[nd++], PATH_MAX, "%s", env);
	snprintf(dirs[nd++], PATH_MAX, "data/cost");
	char exe[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (l > 0) {
		exe[l] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(dirs[nd++], PATH_MAX, "%.*s/../data/cost", PATH_MAX - 20, exe);
			snprintf(dirs[nd++], PATH_MAX, "%.*s/../../data/cost", PATH_MAX - 20, exe);
		}
	}
	for (int i = 0; i < nd; i++) {
		char p[PATH_MAX + 64];
		if (best_in_dir(dirs[i], g->cost_model, p, sizeof p) > 0) {
			if (!load_file(p, out, err, n))
				return false;
			if (from)
				snprintf(from, nfrom, "%s", p);
			return true;
		}
	}
	const CostModel *b = cost_builtin(g->cost_model);
	if (!b) {
		snprintf(err, n, "no cost model for '%s': no %s-vN.json in data/cost and none built in", g->name, g->cost_model);
		return false;
	}
	*out = *b;
	if (from)
		snprintf(from, nfrom, "built-in");
	return true;
}

void cost_calibrated_names(char *buf, size_t n)
{
	int ng;
	const GpuInfo *g = gpu_rows(&ng);
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < ng; i++)
		if (g[i].calibrated && at + 1 < n)
			at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? ", " : "", g[i].name);
}

const GpuInfo *cost_target(const char *name, char *err, size_t n)
{
	char cal[128];
	cost_calibrated_names(cal, sizeof cal);
	const GpuInfo *g = gpu_info(name);
	if (!g) {
		snprintf(err, n, "unknown cost target '%s'; calibrated targets: %s", name ? name : "", cal);
		return NULL;
	}
	if (!g->calibrated) {
		snprintf(err, n, "cost target '%s' (%s) is declared but not calibrated: the model does not predict for it; "
		         "calibrated targets: %s", g->name, g->product, cal);
		return NULL;
	}
	return g;
}
