/*
 * test_store.c — the candidate store (src/harness/store.h).
 *
 * Every test works in its own directory under $TMPDIR (removed at the end)
 * and checks the file with a second, raw SQLite connection where the claim
 * is about the file itself (WAL mode, application id, schema version,
 * integrity), so the store is not trusted to report on itself.
 *
 * Groups: opening (create, reopen, default path, zero-length file);
 * candidates (content hash, idempotent insert, origins, prefix lookup);
 * evaluations (insert, find, dedup by work item, field round trip, shapes,
 * harness keys, diagnostics); migrations (v1 and v2 files written here by
 * hand with the frozen SQL of those versions, then opened; gate runs and
 * their impact rows on the migrated file); refusals (random bytes, a SQLite
 * header over garbage, foreign databases, a newer schema) with the file's
 * hash unchanged; claims (busy, renew, release, lease expiry, done);
 * processes (two forked workers racing for 50 work items, evaluated exactly
 * once; concurrent creation of one file; a writer SIGKILLed at random
 * moments 25 times, with an integrity check and every reported commit
 * present after each kill); queries, printers and the JSON lines export.
 *
 * Forked children never call cmocka: they report through pipes and their
 * exit status, and the parent asserts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>
#include <xxhash.h>

#include "harness/store.h"

/* ------------------------------------------------------------------ helpers */

static char *mk_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char tmpl[1024];
	snprintf(tmpl, sizeof tmpl, "%s/cake-store-XXXXXX", t && *t ? t : "/tmp");
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return xstrdup(d);
}

static void rm_rf(const char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static bool file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* xxh3-64 of a file's bytes; also returns its length. */
static uint64_t file_hash(const char *p, size_t *len)
{
	size_t n = 0;
	char *d = read_file(p, &n);
	assert_non_null(d);
	uint64_t h = XXH3_64bits(d, n);
	free(d);
	if (len)
		*len = n;
	return h;
}

static void write_bytes(const char *p, const void *d, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Empty b for reuse. */
static void sb_clear(StrBuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
}

static Store *open_ok(const char *path)
{
	Store *st = NULL;
	StrBuf err = {0};
	StoreStatus s = store_open(path, STORE_CREATE, &st, &err);
	if (s != STORE_OK)
		fprintf(stderr, "store_open: %s\n", sb_str(&err));
	assert_int_equal(s, STORE_OK);
	assert_non_null(st);
	sb_free(&err);
	return st;
}

/* One integer (or text) from a raw SQLite query on the file. */
static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 10000);
	return db;
}

static long long raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	long long v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

static char *raw_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	const char *t = (const char *)sqlite3_column_text(q, 0);
	char *r = xstrdup(t ? t : "(null)");
	sqlite3_finalize(q);
	return r;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *e = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &e);
	if (rc != SQLITE_OK)
		fprintf(stderr, "raw_exec: %s\n", e ? e : "?");
	sqlite3_free(e);
	assert_int_equal(rc, SQLITE_OK);
}

static const StoreHarness H = {"0.1.0", "v1-3fa2c19e", "h200-1", "t1"};
static const StoreHarness H2 = {"0.1.0", "v1-3fa2c19e", "h200-2", "t1"};

static void add_cand(Store *st, const char *text, const char *family, char id[STORE_ID_LEN + 1])
{
	StoreCandidate c = {.text = text, .family = family, .origin = "human"};
	StoreStatus s = store_add_candidate(st, &c, id, NULL);
	if (s != STORE_OK)
		fprintf(stderr, "%s\n", store_errmsg(st));
	assert_int_equal(s, STORE_OK);
}

static StoreEval mk_eval(const char *cand, const char *kernel, const char *shape, StoreVerdict v, double median)
{
	StoreEval e;
	store_eval_init(&e);
	e.cand = cand;
	e.kernel = kernel;
	e.shape = shape;
	e.harness = H;
	e.verdict = v;
	e.median_us = median;
	e.target = "sm_90a";
	e.gpu = "NVIDIA H200";
	e.driver = "13.0";
	return e;
}

static int64_t add_eval(Store *st, const StoreEval *e)
{
	int64_t id = 0;
	StoreStatus s = store_add_eval(st, e, NULL, NULL, &id);
	if (s != STORE_OK)
		fprintf(stderr, "%s\n", store_errmsg(st));
	assert_int_equal(s, STORE_OK);
	assert_true(id > 0);
	return id;
}

/* ------------------------------------------------------------------ opening */

static void test_create_reopen(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "a/b/store.db");
	/* missing without STORE_CREATE: a clear refusal, nothing created */
	Store *st = NULL;
	StrBuf err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), STORE_MISSING);
	assert_null(st);
	assert_non_null(strstr(sb_str(&err), path));
	assert_non_null(strstr(sb_str(&err), "does not exist"));
	assert_false(file_exists(path));
	char *adir = path_in(dir, "a");
	assert_false(file_exists(adir));
	sb_free(&err);

	st = open_ok(path);   /* parents created */
	assert_true(file_exists(path));
	assert_int_equal(store_schema_version(st), STORE_SCHEMA_VERSION);
	assert_string_equal(store_path(st), path);
	assert_string_equal(store_errmsg(st), "");
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel k target sm_90a\n", "gemm", id);
	/* WAL is on while the store is open: the -wal file exists next to it */
	char *wal = xmalloc(strlen(path) + 5);
	sprintf(wal, "%s-wal", path);
	assert_true(file_exists(wal));
	assert_int_equal(store_check(st), STORE_OK);
	store_close(st);

	sqlite3 *db = raw_open(path);
	char *mode = raw_text(db, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");
	free(mode);
	assert_int_equal(raw_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'created_v1'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'created_v2'"), 1);
	sqlite3_close(db);

	st = NULL;
	assert_int_equal(store_open(path, 0, &st, NULL), STORE_OK);   /* reopen, no create needed */
	Arena a;
	arena_init(&a);
	StoreCandidate c;
	assert_int_equal(store_get_candidate(st, id, &a, &c), STORE_OK);
	assert_string_equal(c.text, "kernel k target sm_90a\n");
	assert_string_equal(c.family, "gemm");
	assert_string_equal(c.origin, "human");
	assert_null(c.parent);
	assert_true(c.created_ms > 1600000000000LL);
	arena_free(&a);
	store_close(st);
	store_close(NULL);

	free(wal);
	free(adir);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_default_path(void **state)
{
	char *dir = mk_tmpdir();
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(dir), 0);
	Store *st = open_ok(NULL);
	assert_string_equal(store_path(st), STORE_DEFAULT_PATH);
	store_close(st);
	assert_true(file_exists(".cake/store.db"));
	assert_int_equal(chdir(cwd), 0);
	rm_rf(dir);
	free(dir);
}

static void test_zero_length_initialised(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "empty.db");
	write_bytes(path, "", 0);
	Store *st = NULL;
	assert_int_equal(store_open(path, 0, &st, NULL), STORE_OK);   /* exists: no STORE_CREATE needed */
	assert_int_equal(store_schema_version(st), STORE_SCHEMA_VERSION);
	store_close(st);
	size_t n = 0;
	file_hash(path, &n);
	assert_true(n >= 512);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* --------------------------------------------------------------- candidates */

static void test_candidates_idempotent(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	const char *text = "kernel gemm target sm_90a\n{\n}\n";

	/* the id is xxh3-128 of the text, canonical (big-endian) byte order */
	XXH128_canonical_t can;
	XXH128_canonicalFromHash(&can, XXH3_128bits(text, strlen(text)));
	char want[STORE_ID_LEN + 1];
	for (int i = 0; i < 16; i++)
		sprintf(want + 2 * i, "%02x", can.digest[i]);
	char id[STORE_ID_LEN + 1];
	store_hash_text(text, id);
	assert_string_equal(id, want);

	StoreCandidate c = {.text = text, .family = "gemm", .origin = "tactic:deepen:stages=5"};
	char id1[STORE_ID_LEN + 1], id2[STORE_ID_LEN + 1];
	bool ins = false;
	assert_int_equal(store_add_candidate(st, &c, id1, &ins), STORE_OK);
	assert_true(ins);
	assert_string_equal(id1, want);
	StoreCandidate c2 = {.text = text, .family = "other", .origin = "agent:claude", .parent = want};
	assert_int_equal(store_add_candidate(st, &c2, id2, &ins), STORE_OK);
	assert_false(ins);
	assert_string_equal(id2, id1);

	Arena a;
	arena_init(&a);
	StoreCandidate got;
	assert_int_equal(store_get_candidate(st, id1, &a, &got), STORE_OK);
	assert_string_equal(got.origin, "tactic:deepen:stages=5");   /* first origin kept */
	assert_string_equal(got.family, "gemm");
	assert_null(got.parent);
	sqlite3 *db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM candidates"), 1);
	sqlite3_close(db);

	/* origins: the three forms pass, others are refused with a message */
	const char *good[] = {"human", "agent:codex", "tactic:split_k", "tactic:split_k:4", "tactic:x:"};
	const char *bad[] = {"", "robot", "agent:", "tactic:", "tactic::4", "agent:a b", "Human", NULL};
	for (size_t i = 0; i < NELEM(good); i++) {
		char t[64];
		snprintf(t, sizeof t, "kernel good%zu target sm_90a\n", i);
		StoreCandidate g = {.text = t, .origin = good[i], .parent = id1};
		assert_int_equal(store_add_candidate(st, &g, NULL, &ins), STORE_OK);
		assert_true(ins);
	}
	for (size_t i = 0; i < NELEM(bad); i++) {
		StoreCandidate b = {.text = "kernel bad target sm_90a\n", .origin = bad[i]};
		assert_int_equal(store_add_candidate(st, &b, NULL, NULL), STORE_INVALID);
		assert_non_null(strstr(store_errmsg(st), "origin"));
	}
	/* parent must be a full id (uppercase is normalised) */
	StoreCandidate p = {.text = "kernel p target sm_90a\n", .origin = "human", .parent = "abc"};
	assert_int_equal(store_add_candidate(st, &p, NULL, NULL), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "parent 'abc'"));
	char upper[STORE_ID_LEN + 1];
	for (int i = 0; i <= STORE_ID_LEN; i++)
		upper[i] = (char)(id1[i] >= 'a' && id1[i] <= 'f' ? id1[i] - 32 : id1[i]);
	p.parent = upper;
	char pid[STORE_ID_LEN + 1];
	assert_int_equal(store_add_candidate(st, &p, pid, NULL), STORE_OK);
	assert_int_equal(store_get_candidate(st, pid, &a, &got), STORE_OK);
	assert_string_equal(got.parent, id1);
	/* empty text refused */
	StoreCandidate e = {.text = "", .origin = "human"};
	assert_int_equal(store_add_candidate(st, &e, NULL, NULL), STORE_INVALID);

	arena_free(&a);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_prefix_lookup(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	/* 17 candidates: two of them share a first hex digit (pigeonhole) */
	char ids[17][STORE_ID_LEN + 1];
	for (int i = 0; i < 17; i++) {
		char t[64];
		snprintf(t, sizeof t, "kernel p%d target sm_90a\n", i);
		add_cand(st, t, "f", ids[i]);
	}
	int a = -1, b = -1;
	for (int i = 0; i < 17 && a < 0; i++)
		for (int j = i + 1; j < 17; j++)
			if (ids[i][0] == ids[j][0]) {
				a = i;
				b = j;
				break;
			}
	assert_true(a >= 0);
	char pre[2] = {ids[a][0], 0};
	char out[STORE_ID_LEN + 1];
	assert_int_equal(store_resolve(st, pre, out), STORE_AMBIGUOUS);
	assert_non_null(strstr(store_errmsg(st), "ambiguous"));
	assert_non_null(strstr(store_errmsg(st), ids[a]));
	assert_non_null(strstr(store_errmsg(st), ids[b]));
	assert_non_null(strstr(store_errmsg(st), path));
	Arena ar;
	arena_init(&ar);
	StoreCandidate c;
	assert_int_equal(store_get_candidate(st, pre, &ar, &c), STORE_AMBIGUOUS);

	/* the shortest unique prefix of ids[a] resolves, in either case */
	int len = 1;
	for (;; len++) {
		int m = 0;
		for (int j = 0; j < 17; j++)
			m += strncmp(ids[j], ids[a], (size_t)len) == 0;
		if (m == 1)
			break;
	}
	char up[STORE_ID_LEN + 1];
	snprintf(up, sizeof up, "%.*s", len, ids[a]);
	for (char *q = up; *q; q++)
		if (*q >= 'a' && *q <= 'f')
			*q = (char)(*q - 32);
	assert_int_equal(store_resolve(st, up, out), STORE_OK);
	assert_string_equal(out, ids[a]);
	assert_int_equal(store_get_candidate(st, ids[b], &ar, &c), STORE_OK);
	assert_string_equal(c.id, ids[b]);
	char want[64];
	snprintf(want, sizeof want, "kernel p%d target sm_90a\n", b);
	assert_string_equal(c.text, want);

	/* nothing matches / not hex */
	char none[STORE_ID_LEN + 1];
	snprintf(none, sizeof none, "%s", ids[a]);
	none[STORE_ID_LEN - 1] = none[STORE_ID_LEN - 1] == '0' ? '1' : '0';
	assert_int_equal(store_resolve(st, none, out), STORE_NOT_FOUND);
	assert_non_null(strstr(store_errmsg(st), "no candidate"));
	assert_int_equal(store_resolve(st, "xyz", out), STORE_INVALID);
	assert_int_equal(store_resolve(st, "", out), STORE_INVALID);
	char toolong[40];
	snprintf(toolong, sizeof toolong, "%s0", ids[a]);
	assert_int_equal(store_resolve(st, toolong, out), STORE_INVALID);
	arena_free(&ar);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* -------------------------------------------------------------- evaluations */

static void test_shape_and_harness_key(void **state)
{
	StrBuf b = {0};
	assert_int_equal(store_shape_canon("M=8192,N=8192,K=8192", &b), STORE_OK);
	assert_string_equal(sb_str(&b), "K=8192,M=8192,N=8192");
	sb_clear(&b);
	assert_int_equal(store_shape_canon(" N = 0256 , M=64,K=8,KV=0 ", &b), STORE_OK);
	assert_string_equal(sb_str(&b), "K=8,KV=0,M=64,N=256");
	sb_clear(&b);
	assert_int_equal(store_shape_canon("", &b), STORE_OK);
	assert_string_equal(sb_str(&b), "");
	sb_clear(&b);
	assert_int_equal(store_shape_canon("dtype=bf16,M=-1", &b), STORE_OK);
	assert_string_equal(sb_str(&b), "M=-1,dtype=bf16");
	const char *bad[] = {"M", "M=", "=4", "M=1,M=2", "M=1,,N=2", "1M=3", "M=1 2", "M=1;N=2", "M=a=b"};
	for (size_t i = 0; i < NELEM(bad); i++) {
		sb_clear(&b);
		sb_puts(&b, "x");
		assert_int_equal(store_shape_canon(bad[i], &b), STORE_INVALID);
		assert_string_equal(sb_str(&b), "x");   /* unchanged */
	}
	sb_clear(&b);
	assert_int_equal(store_harness_key(&H, &b), STORE_OK);
	assert_string_equal(sb_str(&b), "compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1");
	sb_clear(&b);
	StoreHarness partial = {"0.1.0", NULL, "", NULL};
	assert_int_equal(store_harness_key(&partial, &b), STORE_OK);
	assert_string_equal(sb_str(&b), "compiler=0.1.0;verifier=;cost=;tactics=");
	sb_clear(&b);
	StoreHarness semi = {"0.1.0", "v;1", NULL, NULL};
	assert_int_equal(store_harness_key(&semi, &b), STORE_INVALID);
	assert_int_equal(b.len, 0);
	sb_free(&b);

	/* verdict names round-trip; conclusive = ok .. rejected */
	for (int v = 1; v < STORE_NVERDICT; v++)
		assert_int_equal(store_verdict_parse(store_verdict_name((StoreVerdict)v)), v);
	assert_int_equal(store_verdict_parse("nope"), STORE_V_NONE);
	assert_int_equal(store_verdict_parse(NULL), STORE_V_NONE);
	assert_string_equal(store_verdict_name(STORE_V_COMPILE_ERROR), "compile_error");
	assert_string_equal(store_verdict_name(STORE_V_NONE), "?");
	assert_true(store_verdict_conclusive(STORE_V_REJECTED));
	assert_true(store_verdict_conclusive(STORE_V_HANG));
	assert_false(store_verdict_conclusive(STORE_V_NO_GPU));
	assert_false(store_verdict_conclusive(STORE_V_DRY_RUN));
	assert_false(store_verdict_conclusive(STORE_V_INTERNAL_ERROR));
	assert_string_equal(store_status_name(STORE_TOO_NEW), "too_new");
}

static void test_eval_insert_find(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel gemm_bf16 target sm_90a\n", "gemm", id);

	StoreEval e = mk_eval(id, "gemm_bf16", "N=256, M=128,K=64", STORE_V_OK, 812.25);
	e.seed = 0xfedcba9876543210ULL;   /* above INT64_MAX: stored as the same 64 bits */
	e.min_us = 800.5;
	e.max_us = 830;
	e.rel_err = 1.5e-3;
	e.predicted_us = 790;
	e.gpu_s = 2.5;
	e.time_ms = 1700000000123LL;
	e.message = "ok";
	e.campaign = "c1";
	e.worker = "host:1";
	int64_t eid = add_eval(st, &e);

	Arena a;
	arena_init(&a);
	StoreEval f;
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "K=64,M=128,N=256", &H, &a, &f), STORE_OK);
	assert_int_equal(f.id, eid);
	assert_string_equal(f.cand, id);
	assert_string_equal(f.family, "gemm");
	assert_string_equal(f.kernel, "gemm_bf16");
	assert_string_equal(f.shape, "K=64,M=128,N=256");
	assert_true(f.seed == 0xfedcba9876543210ULL);
	assert_string_equal(f.target, "sm_90a");
	assert_string_equal(f.gpu, "NVIDIA H200");
	assert_string_equal(f.driver, "13.0");
	assert_string_equal(f.harness.compiler, "0.1.0");
	assert_string_equal(f.harness.verifier, "v1-3fa2c19e");
	assert_string_equal(f.harness.cost_model, "h200-1");
	assert_string_equal(f.harness.tactics, "t1");
	assert_string_equal(f.harness_key, "compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1");
	assert_int_equal(f.verdict, STORE_V_OK);
	assert_string_equal(f.message, "ok");
	assert_true(f.median_us == 812.25 && f.min_us == 800.5 && f.max_us == 830);
	assert_true(f.rel_err == 1.5e-3 && f.predicted_us == 790 && f.gpu_s == 2.5);
	assert_int_equal(f.time_ms, 1700000000123LL);
	assert_string_equal(f.campaign, "c1");
	assert_string_equal(f.worker, "host:1");

	/* other harness, kernel or shape: not the same work item */
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "K=64,M=128,N=256", &H2, &a, &f), STORE_NOT_FOUND);
	assert_int_equal(store_find_eval(st, id, "other", "K=64,M=128,N=256", &H, &a, &f), STORE_NOT_FOUND);
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "K=64,M=128,N=512", &H, &a, &f), STORE_NOT_FOUND);
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "K=64,M=128", &H, &a, &f), STORE_NOT_FOUND);

	/* nulls stay nulls */
	StoreEval n = mk_eval(id, "gemm_bf16", "M=1", STORE_V_MISMATCH, NAN);
	n.rel_err = NAN;
	n.target = n.gpu = n.driver = NULL;
	int64_t nid = add_eval(st, &n);
	assert_int_equal(store_get_eval(st, nid, &a, &f), STORE_OK);
	assert_true(isnan(f.median_us) && isnan(f.min_us) && isnan(f.max_us) && isnan(f.rel_err) &&
	            isnan(f.predicted_us));
	assert_null(f.target);
	assert_null(f.gpu);
	assert_null(f.message);
	assert_null(f.campaign);
	assert_null(f.worker);
	assert_true(f.time_ms > 1600000000000LL);   /* 0 = now */
	assert_true(f.gpu_s == 0);
	assert_int_equal(store_get_eval(st, 999999, &a, &f), STORE_NOT_FOUND);

	/* a non-conclusive verdict is not "done"; the newest conclusive one wins */
	StoreEval g = mk_eval(id, "gemm_bf16", "M=2", STORE_V_NO_GPU, NAN);
	add_eval(st, &g);
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "M=2", &H, &a, &f), STORE_NOT_FOUND);
	g.verdict = STORE_V_HANG;
	g.time_ms = 1700000001000LL;
	add_eval(st, &g);
	g.verdict = STORE_V_FAULT;
	g.time_ms = 1700000002000LL;
	int64_t newest = add_eval(st, &g);
	g.verdict = STORE_V_DRY_RUN;
	g.time_ms = 1700000003000LL;
	add_eval(st, &g);
	assert_int_equal(store_find_eval(st, id, "gemm_bf16", "M=2", &H, &a, &f), STORE_OK);
	assert_int_equal(f.id, newest);
	assert_int_equal(f.verdict, STORE_V_FAULT);

	/* refusals */
	char other[STORE_ID_LEN + 1];
	store_hash_text("never inserted", other);
	StoreEval bad = mk_eval(other, "k", "", STORE_V_OK, 1);
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "no candidate"));
	bad = mk_eval(id, "k", "", STORE_V_NONE, 1);
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	bad = mk_eval(id, "", "", STORE_V_OK, 1);
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	bad = mk_eval(id, "k", "M=1,M=2", STORE_V_OK, 1);
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "shape"));
	bad = mk_eval(id, "k", "", STORE_V_OK, 1);
	bad.harness.compiler = NULL;
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	bad = mk_eval("abc", "k", "", STORE_V_OK, 1);
	assert_int_equal(store_add_eval(st, &bad, NULL, NULL, NULL), STORE_INVALID);
	sqlite3 *db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM evals"), 6);
	sqlite3_close(db);

	arena_free(&a);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_diagnostics(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel bad target sm_90a\n", "gemm", id);

	SourceSet ss = {0};
	const char *src = "kernel bad target sm_90a\n  role mma warps 0..3\n    wait full\n";
	assert_int_equal(src_add(&ss, "dir/bad.cake", src, strlen(src)), 0);
	DiagList dl = {0};
	Diag *d = diag_add(&dl, "CK-DEAD-001", SEV_ERROR, (Span){0, 3, 5, 47, 9}, "role mma waits on full[2]");
	diag_set(&d->role, "mma");
	diag_set(&d->barrier, "full");
	diag_set(&d->pipeline, "ab");
	d->stage = 2;
	d->phase = 1;
	diag_set(&d->iter, "k=6");
	diag_set(&d->condition, "arrivals(full) == 1");
	diag_set(&d->hint, "arrive on full after the tma");
	diag_related(d, (Span){0, 2, 3, 28, 4}, "only producer declared here");
	diag_add(&dl, "CK-SCHED-002", SEV_WARNING, NOSPAN, "no location");

	StoreEval e = mk_eval(id, "bad", "", STORE_V_REJECTED, NAN);
	e.message = "2 findings";
	int64_t eid = 0;
	assert_int_equal(store_add_eval(st, &e, &ss, &dl, &eid), STORE_OK);

	Arena a;
	arena_init(&a);
	StoreDiag *v = NULL;
	int n = 0;
	assert_int_equal(store_eval_diags(st, eid, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].seq, 0);
	assert_string_equal(v[0].rule, "CK-DEAD-001");
	assert_int_equal(v[0].sev, SEV_ERROR);
	assert_string_equal(v[0].msg, "role mma waits on full[2]");
	assert_string_equal(v[0].file, "dir/bad.cake");
	assert_int_equal(v[0].line, 3);
	assert_int_equal(v[0].col, 5);
	assert_int_equal(v[0].len, 9);
	assert_string_equal(v[0].role, "mma");
	assert_null(v[0].resource);
	assert_string_equal(v[0].barrier, "full");
	assert_string_equal(v[0].pipeline, "ab");
	assert_int_equal(v[0].stage, 2);
	assert_int_equal(v[0].phase, 1);
	assert_string_equal(v[0].iter, "k=6");
	assert_string_equal(v[0].condition, "arrivals(full) == 1");
	assert_string_equal(v[0].hint, "arrive on full after the tma");
	assert_string_equal(v[0].rel_file, "dir/bad.cake");
	assert_int_equal(v[0].rel_line, 2);
	assert_int_equal(v[0].rel_col, 3);
	assert_string_equal(v[0].rel_msg, "only producer declared here");
	assert_int_equal(v[1].sev, SEV_WARNING);
	assert_null(v[1].file);
	assert_int_equal(v[1].line, 0);
	assert_int_equal(v[1].stage, -1);
	assert_int_equal(v[1].phase, -1);
	assert_null(v[1].rel_file);

	/* the helper appends after the existing findings */
	DiagList more = {0};
	diag_add(&more, "CK-RES-002", SEV_ERROR, NOSPAN, "registers");
	assert_int_equal(store_add_diags(st, eid, NULL, &more), STORE_OK);
	assert_int_equal(store_eval_diags(st, eid, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].seq, 2);
	assert_string_equal(v[2].rule, "CK-RES-002");
	assert_int_equal(store_add_diags(st, 424242, NULL, &more), STORE_NOT_FOUND);
	/* an evaluation without findings has none */
	StoreEval ok = mk_eval(id, "bad", "M=1", STORE_V_OK, 3);
	int64_t okid = add_eval(st, &ok);
	assert_int_equal(store_eval_diags(st, okid, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 0);

	/* printers */
	assert_int_equal(store_eval_diags(st, eid, &a, &v, &n), STORE_OK);
	StrBuf b = {0};
	store_print_diags(&b, v, n, STORE_FMT_TEXT);
	assert_non_null(strstr(sb_str(&b), "dir/bad.cake:3:5: error: role mma waits on full[2] [CK-DEAD-001]\n"));
	assert_non_null(strstr(sb_str(&b), "  where: role mma, barrier full, pipeline ab, stage 2, phase 1, at k=6\n"));
	assert_non_null(strstr(sb_str(&b), "  dir/bad.cake:2:3: note: only producer declared here\n"));
	assert_non_null(strstr(sb_str(&b), "warning: no location [CK-SCHED-002]\n"));
	sb_clear(&b);
	store_print_diags(&b, v, n, STORE_FMT_JSON);
	json_error_t je;
	json_t *j = json_loads(sb_str(&b), 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "cake-store-diags/1");
	json_t *arr = json_object_get(j, "diagnostics");
	assert_int_equal(json_array_size(arr), 3);
	json_t *d0 = json_array_get(arr, 0);
	assert_int_equal(json_integer_value(json_object_get(d0, "stage")), 2);
	assert_string_equal(json_string_value(json_object_get(d0, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(json_object_get(d0, "related"), "message")),
	                    "only producer declared here");
	assert_true(json_is_null(json_object_get(json_array_get(arr, 1), "file")));
	assert_true(json_is_null(json_object_get(json_array_get(arr, 1), "related")));
	json_decref(j);
	sb_free(&b);

	diag_free(&dl);
	diag_free(&more);
	src_free(&ss);
	arena_free(&a);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* --------------------------------------------------------------- migrations */

/* The v1 schema exactly as a v1 cake wrote it (frozen: never edit). */
static const char V1_SQL[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;\n"
	"CREATE TABLE candidates(id TEXT PRIMARY KEY, text TEXT NOT NULL, family TEXT, parent TEXT,\n"
	"  origin TEXT NOT NULL, created_ms INTEGER NOT NULL);\n"
	"CREATE INDEX candidates_family ON candidates(family);\n"
	"CREATE INDEX candidates_parent ON candidates(parent);\n"
	"CREATE TABLE evals(id INTEGER PRIMARY KEY, cand TEXT NOT NULL REFERENCES candidates(id),\n"
	"  kernel TEXT NOT NULL, shape TEXT NOT NULL, seed INTEGER NOT NULL, target TEXT, gpu TEXT,\n"
	"  driver TEXT, compiler TEXT NOT NULL, verifier TEXT NOT NULL, cost_model TEXT NOT NULL,\n"
	"  tactics TEXT NOT NULL, harness TEXT NOT NULL, verdict TEXT NOT NULL, message TEXT,\n"
	"  predicted_us REAL, median_us REAL, min_us REAL, max_us REAL, rel_err REAL,\n"
	"  gpu_s REAL NOT NULL DEFAULT 0, time_ms INTEGER NOT NULL, campaign TEXT);\n"
	"CREATE INDEX evals_work ON evals(cand, kernel, shape, harness);\n"
	"CREATE INDEX evals_time ON evals(time_ms);\n"
	"CREATE TABLE diags(eval INTEGER NOT NULL REFERENCES evals(id), seq INTEGER NOT NULL,\n"
	"  rule TEXT NOT NULL, severity TEXT NOT NULL, message TEXT NOT NULL, file TEXT, line INTEGER,\n"
	"  col INTEGER, len INTEGER, role TEXT, resource TEXT, barrier TEXT, pipeline TEXT,\n"
	"  stage INTEGER, phase INTEGER, iter TEXT, condition TEXT, hint TEXT, rel_file TEXT,\n"
	"  rel_line INTEGER, rel_col INTEGER, rel_msg TEXT, PRIMARY KEY(eval, seq)) WITHOUT ROWID;\n"
	"CREATE TABLE claims(cand TEXT NOT NULL REFERENCES candidates(id), kernel TEXT NOT NULL,\n"
	"  shape TEXT NOT NULL, harness TEXT NOT NULL, owner TEXT NOT NULL, claimed_ms INTEGER NOT NULL,\n"
	"  expires_ms INTEGER NOT NULL, PRIMARY KEY(cand, kernel, shape, harness)) WITHOUT ROWID;\n"
	"INSERT INTO meta VALUES('created_v1', 'cake 0.1.0 at 1700000000000 ms');\n"
	"PRAGMA application_id = 1128352581;\n"   /* 0x43414B45 */
	"PRAGMA user_version = 1;\n";

static void test_migration_v1(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "v1.db");
	char id[STORE_ID_LEN + 1];
	store_hash_text("kernel old target sm_90a\n", id);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	raw_exec(db, V1_SQL);
	char sql[2048];
	snprintf(sql, sizeof sql,
	         "INSERT INTO candidates VALUES('%s', 'kernel old target sm_90a\n', 'gemm', NULL, 'human', 1700000000000);"
	         "INSERT INTO evals(cand, kernel, shape, seed, compiler, verifier, cost_model, tactics, harness, verdict,"
	         " median_us, time_ms, campaign) VALUES('%s', 'old', 'M=64', 7, '0.1.0', 'v1-3fa2c19e', 'h200-1', 't1',"
	         " 'compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1', 'ok', 100.5, 1700000000500, 'old');"
	         "INSERT INTO claims VALUES('%s', 'old', 'M=128',"
	         " 'compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1', 'w:1', 1, 2);",
	         id, id, id);
	raw_exec(db, sql);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
	sqlite3_close(db);

	Store *st = open_ok(path);
	assert_int_equal(store_schema_version(st), STORE_SCHEMA_VERSION);
	Arena a;
	arena_init(&a);
	StoreEval f;
	/* the v1 evaluation reads back through the current API, found by its work item */
	assert_int_equal(store_find_eval(st, id, "old", "M=64", &H, &a, &f), STORE_OK);
	assert_true(f.median_us == 100.5);
	assert_int_equal(f.seed, 7);
	assert_string_equal(f.campaign, "old");
	assert_null(f.worker);   /* column added by v2, NULL for old rows */
	/* new rows use the v2 column */
	StoreEval e = mk_eval(id, "old", "M=128", STORE_V_OK, 90);
	e.worker = "w:2";
	int64_t nid = add_eval(st, &e);   /* also removes the v1 claim on M=128 (any owner) */
	assert_int_equal(store_get_eval(st, nid, &a, &f), STORE_OK);
	assert_string_equal(f.worker, "w:2");
	store_close(st);

	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('evals') WHERE name = 'worker'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'migrated_v3'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
	                             "('evals_campaign', 'evals_ok', 'claims_owner')"), 3);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'migrated_v2'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'created_v1'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'created_v2'"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM claims"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM evals"), 2);
	char *mode = raw_text(db, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");   /* the hand-made file was in rollback mode */
	free(mode);
	char *ic = raw_text(db, "PRAGMA integrity_check");
	assert_string_equal(ic, "ok");
	free(ic);
	sqlite3_close(db);

	/* a store this binary created has exactly the migrated schema */
	char *fresh = path_in(dir, "fresh.db");
	store_close(open_ok(fresh));
	sqlite3 *db2 = raw_open(fresh);
	db = raw_open(path);
	const char *q = "SELECT group_concat(name || ':' || type || ':' || \"notnull\", ',') FROM "
	                "(SELECT * FROM pragma_table_info('evals') ORDER BY cid)";
	char *c1 = raw_text(db, q), *c2 = raw_text(db2, q);
	assert_string_equal(c1, c2);
	free(c1);
	free(c2);
	q = "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master ORDER BY name)";
	c1 = raw_text(db, q);
	c2 = raw_text(db2, q);
	assert_string_equal(c1, c2);
	free(c1);
	free(c2);
	sqlite3_close(db);
	sqlite3_close(db2);
	free(fresh);

	arena_free(&a);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* The v2 step exactly as a v2 cake applied it on top of V1_SQL (frozen: never edit). */
static const char V2_SQL[] =
	"ALTER TABLE evals ADD COLUMN worker TEXT;\n"
	"CREATE INDEX evals_campaign ON evals(campaign, time_ms);\n"
	"CREATE INDEX evals_ok ON evals(kernel, shape, median_us) WHERE verdict = 'ok';\n"
	"CREATE INDEX claims_owner ON claims(owner);\n"
	"INSERT INTO meta VALUES('created_v2', 'cake 0.1.0 at 1700000000000 ms');\n"
	"PRAGMA user_version = 2;\n";

/* A v2 store with a hang and a rejection gains the gate tables; old rows read
 * back, a gate run and its impact rows go in and come out, and the migrated
 * schema is a fresh store's. */
static void test_migration_v2(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "v2.db");
	char id[STORE_ID_LEN + 1];
	store_hash_text("kernel hang target sm_90a\n", id);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	raw_exec(db, V1_SQL);
	raw_exec(db, V2_SQL);
	char sql[2048];
	snprintf(sql, sizeof sql,
	         "INSERT INTO candidates VALUES('%s', 'kernel hang target sm_90a\n', 'kmeans_assign', NULL, 'human', 1700000000000);"
	         "INSERT INTO evals(cand, kernel, shape, seed, compiler, verifier, cost_model, tactics, harness, verdict,"
	         " message, gpu_s, time_ms, worker) VALUES('%s', 'hang', 'N=256', 1, '0.1.0', 'v1-00000001', '', '',"
	         " 'compiler=0.1.0;verifier=v1-00000001;cost=;tactics=', 'hang', 'watchdog', 10.5, 1700000000500, 'gpu:1');",
	         id, id);
	raw_exec(db, sql);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 2);
	sqlite3_close(db);

	Store *st = open_ok(path);
	assert_int_equal(store_schema_version(st), 3);
	Arena a;
	arena_init(&a);
	StoreEval *v;
	int n = 0;
	StoreFilter f = {.verdict = "hang"};
	assert_int_equal(store_list_evals(st, &f, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].worker, "gpu:1");
	assert_true(v[0].gpu_s == 10.5);
	StoreGateRun *runs;
	assert_int_equal(store_list_gate_runs(st, 0, &a, &runs, &n), STORE_OK);
	assert_int_equal(n, 0);   /* a migrated store has no gate history yet */

	/* a gate run: the v2 register rule rejects what hung */
	StoreHarness now = {"0.2.0", "v1-00000002", "", ""};
	StoreGateRun run = {.harness = now, .items = 1, .worker = "ci:7", .time_ms = 1700000001000};
	StoreImpact row = {.cand = id, .kernel = "hang", .shape = "N=0256", .eval = v[0].id,
	                   .old_harness = v[0].harness_key, .old_outcome = STORE_OUT_ACCEPTED,
	                   .new_outcome = STORE_OUT_REJECTED, .new_rule = "CK-RES-002", .rule = "CK-RES-002",
	                   .impact = STORE_IMP_TRUE_POSITIVE, .gpu_verdict = STORE_V_HANG,
	                   .message = "roles need 64512 registers"};
	int64_t rid = 0;
	assert_int_equal(store_add_gate_run(st, &run, &row, 1, &rid), STORE_OK);
	assert_true(rid > 0);
	/* a bad row refuses the whole run: nothing is written */
	StoreImpact bad = row;
	bad.cand = "0123456789abcdef0123456789abcdef";   /* no such candidate */
	StoreImpact two[2] = {row, bad};
	assert_int_equal(store_add_gate_run(st, &run, two, 2, NULL), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "impact row 1"));
	bad = row;
	bad.impact = STORE_IMP_NONE;
	assert_int_equal(store_add_gate_run(st, &run, &bad, 1, NULL), STORE_INVALID);
	assert_int_equal(store_list_gate_runs(st, 0, &a, &runs, &n), STORE_OK);
	assert_int_equal(n, 1);
	assert_int_equal(runs[0].id, rid);
	assert_int_equal(runs[0].items, 1);
	assert_int_equal(runs[0].changed, 1);
	assert_string_equal(runs[0].harness.verifier, "v1-00000002");
	assert_string_equal(runs[0].worker, "ci:7");
	StoreImpact *im;
	assert_int_equal(store_list_impact(st, "ABC", 0, &a, &im, &n), STORE_NOT_FOUND);
	char pre[9];
	snprintf(pre, sizeof pre, "%.8s", id);
	assert_int_equal(store_list_impact(st, pre, 0, &a, &im, &n), STORE_OK);
	assert_int_equal(n, 1);
	assert_string_equal(im[0].shape, "N=256");
	assert_int_equal(im[0].run, rid);
	assert_true(im[0].run_ms == 1700000001000);
	assert_string_equal(im[0].run_harness, "compiler=0.2.0;verifier=v1-00000002;cost=;tactics=");
	assert_string_equal(im[0].old_harness, "compiler=0.1.0;verifier=v1-00000001;cost=;tactics=");
	assert_int_equal(im[0].old_outcome, STORE_OUT_ACCEPTED);
	assert_int_equal(im[0].new_outcome, STORE_OUT_REJECTED);
	assert_null(im[0].old_rule);
	assert_string_equal(im[0].rule, "CK-RES-002");
	assert_int_equal(im[0].impact, STORE_IMP_TRUE_POSITIVE);
	assert_int_equal(im[0].gpu_verdict, STORE_V_HANG);
	assert_int_equal(im[0].eval, v[0].id);
	assert_int_equal(store_list_impact(st, NULL, rid + 1, &a, &im, &n), STORE_OK);
	assert_int_equal(n, 0);
	/* names round-trip */
	for (int k = 1; k < STORE_NIMPACT; k++)
		assert_int_equal(store_impact_parse(store_impact_name((StoreImpactKind)k)), k);
	for (int o = 1; o < STORE_NOUTCOME; o++)
		assert_int_equal(store_outcome_parse(store_outcome_name((StoreOutcome)o)), o);
	assert_int_equal(store_outcome_parse("maybe"), STORE_OUT_NONE);
	store_close(st);

	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 3);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'migrated_v3'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'migrated_v2'"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM gate_impact"), 1);
	char *ic = raw_text(db, "PRAGMA integrity_check");
	assert_string_equal(ic, "ok");
	free(ic);
	char *fresh = path_in(dir, "fresh.db");
	store_close(open_ok(fresh));
	sqlite3 *db2 = raw_open(fresh);
	const char *qs[] = {
		"SELECT group_concat(name || ':' || type || ':' || \"notnull\", ',') FROM "
		"(SELECT * FROM pragma_table_info('gate_impact') ORDER BY cid)",
		"SELECT group_concat(name || ':' || type || ':' || \"notnull\", ',') FROM "
		"(SELECT * FROM pragma_table_info('gate_runs') ORDER BY cid)",
		"SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master ORDER BY name)",
	};
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		char *c1 = raw_text(db, qs[i]), *c2 = raw_text(db2, qs[i]);
		assert_string_equal(c1, c2);
		free(c1);
		free(c2);
	}
	sqlite3_close(db);
	sqlite3_close(db2);
	free(fresh);
	arena_free(&a);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ----------------------------------------------------------------- refusals */

/* store_open must refuse path with `want`, name it and the problem, and leave its bytes. */
static void expect_refusal(const char *path, StoreStatus want, const char *needle)
{
	size_t n0 = 0, n1 = 0;
	uint64_t h0 = file_hash(path, &n0);
	for (int flags = 0; flags <= STORE_CREATE; flags += STORE_CREATE) {
		Store *st = (Store *)1;
		StrBuf err = {0};
		StoreStatus s = store_open(path, (unsigned)flags, &st, &err);
		if (s != want)
			fprintf(stderr, "got %s: %s\n", store_status_name(s), sb_str(&err));
		assert_int_equal(s, want);
		assert_null(st);
		assert_non_null(strstr(sb_str(&err), path));
		assert_non_null(strstr(sb_str(&err), needle));
		assert_non_null(strstr(sb_str(&err), "left it untouched"));
		assert_non_null(strstr(sb_str(&err), "--store"));
		sb_free(&err);
	}
	uint64_t h1 = file_hash(path, &n1);
	assert_int_equal(n1, n0);
	assert_true(h1 == h0);
}

static void test_refuse_not_sqlite(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "junk.db");
	unsigned char junk[8192];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < sizeof junk; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		junk[i] = (unsigned char)x;
	}
	write_bytes(path, junk, sizeof junk);
	expect_refusal(path, STORE_NOT_A_DB, "not a SQLite database");
	/* SQLite never saw it: no side files */
	char *wal = path_in(dir, "junk.db-wal"), *shm = path_in(dir, "junk.db-shm");
	assert_false(file_exists(wal));
	assert_false(file_exists(shm));
	/* short text file */
	write_bytes(path, "hello", 5);
	expect_refusal(path, STORE_NOT_A_DB, "not a SQLite database");
	/* the SQLite magic over garbage: SQLite itself cannot read it */
	memcpy(junk, "SQLite format 3", 16);
	write_bytes(path, junk, sizeof junk);
	expect_refusal(path, STORE_NOT_A_DB, "SQLite cannot read it");
	/* a real store whose schema page is smashed */
	char *real = path_in(dir, "real.db");
	Store *st = open_ok(real);
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel k target sm_90a\n", "f", id);
	store_close(st);
	size_t n = 0;
	char *d = read_file(real, &n);
	assert_non_null(d);
	assert_true(n >= 4096);
	memset(d + 100, 0xA5, 3000);   /* page 1 after the header: sqlite_master's b-tree */
	write_bytes(real, d, n);
	free(d);
	expect_refusal(real, STORE_NOT_A_DB, "SQLite cannot read it");
	/* a directory */
	StrBuf err = {0};
	st = NULL;
	assert_int_equal(store_open(dir, STORE_CREATE, &st, &err), STORE_NOT_A_DB);
	assert_non_null(strstr(sb_str(&err), "not a regular file"));
	sb_free(&err);
	free(real);
	free(wal);
	free(shm);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_refuse_foreign(void **state)
{
	char *dir = mk_tmpdir();
	/* rollback-mode database with someone else's tables */
	char *path = path_in(dir, "app.db");
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	raw_exec(db, "CREATE TABLE users(name TEXT); INSERT INTO users VALUES('ada');");
	sqlite3_close(db);
	expect_refusal(path, STORE_FOREIGN, "not a Cake store");

	/* another application's id, no tables */
	char *path2 = path_in(dir, "other.db");
	assert_int_equal(sqlite3_open_v2(path2, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	raw_exec(db, "PRAGMA application_id = 1234; CREATE TABLE t(x); DROP TABLE t;");
	sqlite3_close(db);
	expect_refusal(path2, STORE_FOREIGN, "application_id 0x000004d2");

	/* a WAL database in use by its owner, with frames not yet checkpointed:
	 * neither the file nor its WAL may change */
	char *path3 = path_in(dir, "live.db");
	assert_int_equal(sqlite3_open_v2(path3, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	char *m = raw_text(db, "PRAGMA journal_mode = WAL");
	assert_string_equal(m, "wal");
	free(m);
	raw_exec(db, "PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(x); INSERT INTO t VALUES(1), (2);");
	char *wal3 = path_in(dir, "live.db-wal");
	size_t wn0 = 0, wn1 = 0;
	uint64_t wh0 = file_hash(wal3, &wn0);
	assert_true(wn0 > 0);
	expect_refusal(path3, STORE_FOREIGN, "not a Cake store");
	uint64_t wh1 = file_hash(wal3, &wn1);
	assert_int_equal(wn1, wn0);
	assert_true(wh1 == wh0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM t"), 2);
	sqlite3_close(db);

	free(wal3);
	free(path3);
	free(path2);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_refuse_newer(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel k target sm_90a\n", "f", id);
	store_close(st);
	sqlite3 *db = raw_open(path);
	char sql[64], want[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
	raw_exec(db, sql);
	sqlite3_close(db);   /* last connection: checkpointed into the file */
	snprintf(want, sizeof want, "schema version %d is newer", STORE_SCHEMA_VERSION + 1);
	expect_refusal(path, STORE_TOO_NEW, want);
	/* a Cake id with version 0 is damaged, not empty */
	db = raw_open(path);
	raw_exec(db, "PRAGMA user_version = 0");
	sqlite3_close(db);
	expect_refusal(path, STORE_NOT_A_DB, "damaged");
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ------------------------------------------------------------------- claims */

static int raw_claims(const char *path)
{
	sqlite3 *db = raw_open(path);
	int n = (int)raw_int(db, "SELECT count(*) FROM claims");
	sqlite3_close(db);
	return n;
}

static void test_claims(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	char id[STORE_ID_LEN + 1];
	add_cand(st, "kernel k target sm_90a\n", "f", id);
	const char *sh = "M=64,N=64";

	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 60000), STORE_CLAIMED);
	assert_int_equal(store_claim(st, id, "k", "N=64,M=64", &H, "B", 60000), STORE_BUSY);
	assert_int_equal(store_claim(st, id, "k", sh, &H2, "B", 60000), STORE_CLAIMED);   /* other harness */
	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 60000), STORE_CLAIMED);    /* renewal */
	assert_int_equal(raw_claims(path), 2);
	assert_int_equal(store_release(st, id, "k", sh, &H, "B"), STORE_NOT_FOUND);         /* not B's */
	assert_int_equal(store_release(st, id, "k", sh, &H, "A"), STORE_OK);
	assert_int_equal(store_claim(st, id, "k", sh, &H, "B", 60000), STORE_CLAIMED);
	int n = -1;
	assert_int_equal(store_release_all(st, "B", &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_int_equal(raw_claims(path), 0);

	/* an expired lease (its owner crashed) is taken over */
	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 1), STORE_CLAIMED);
	usleep(20000);
	assert_int_equal(store_claim(st, id, "k", sh, &H, "B", 60000), STORE_CLAIMED);
	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 60000), STORE_BUSY);

	/* finishing removes the claim in the same transaction; the item is then done */
	StoreEval e = mk_eval(id, "k", sh, STORE_V_OK, 5);
	e.worker = "B";
	add_eval(st, &e);
	assert_int_equal(raw_claims(path), 0);
	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 60000), STORE_ALREADY_DONE);
	assert_int_equal(raw_claims(path), 0);
	/* a non-conclusive result releases the claim but leaves the work to do */
	assert_int_equal(store_claim(st, id, "k", "M=1", &H, "A", 60000), STORE_CLAIMED);
	StoreEval g = mk_eval(id, "k", "M=1", STORE_V_NO_GPU, NAN);
	add_eval(st, &g);
	assert_int_equal(raw_claims(path), 0);
	assert_int_equal(store_claim(st, id, "k", "M=1", &H, "B", 60000), STORE_CLAIMED);

	/* refusals */
	assert_int_equal(store_claim(st, id, "k", sh, &H, "", 60000), STORE_INVALID);
	assert_int_equal(store_claim(st, id, "k", sh, &H, "A", 0), STORE_INVALID);
	assert_int_equal(store_claim(st, id, "", sh, &H, "A", 10), STORE_INVALID);
	char other[STORE_ID_LEN + 1];
	store_hash_text("never inserted", other);
	assert_int_equal(store_claim(st, other, "k", sh, &H, "A", 10), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "no candidate"));

	char owner[300];
	store_default_owner(owner, sizeof owner);
	char pid[32];
	snprintf(pid, sizeof pid, ":%ld", (long)getpid());
	assert_non_null(strstr(owner, pid));
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ---------------------------------------------------------------- processes */

#define RACE_ITEMS 50

/* A worker: claim each item in order, "evaluate" it, record it; report the
 * indices evaluated on fd. Exit status 0, or 10+ on a store error. */
static void race_worker(const char *path, char ids[][STORE_ID_LEN + 1], int go, int fd, int k)
{
	char b;
	if (read(go, &b, 1) != 1)
		_exit(2);
	Store *st = NULL;
	if (store_open(path, 0, &st, NULL) != STORE_OK)
		_exit(3);
	char owner[32];
	snprintf(owner, sizeof owner, "worker-%d", k);
	unsigned seed = (unsigned)getpid();
	for (int i = 0; i < RACE_ITEMS; i++) {
		StoreStatus s = store_claim(st, ids[i], "k", "M=64", &H, owner, 60000);
		if (s == STORE_ALREADY_DONE || s == STORE_BUSY)
			continue;
		if (s != STORE_CLAIMED)
			_exit(10 + (int)s);
		usleep(100 + (unsigned)rand_r(&seed) % 900);   /* the GPU run */
		StoreEval e = mk_eval(ids[i], "k", "M=64", STORE_V_OK, 10 + i);
		e.worker = owner;
		e.campaign = "race";
		if (store_add_eval(st, &e, NULL, NULL, NULL) != STORE_OK)
			_exit(40);
		if (write(fd, &i, sizeof i) != sizeof i)
			_exit(41);
	}
	store_close(st);
	_exit(0);
}

static void test_claim_race(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	char ids[RACE_ITEMS][STORE_ID_LEN + 1];
	for (int i = 0; i < RACE_ITEMS; i++) {
		char t[64];
		snprintf(t, sizeof t, "kernel race%d target sm_90a\n", i);
		add_cand(st, t, "race", ids[i]);
	}
	store_close(st);

	int go[2], out[2][2];
	assert_int_equal(pipe(go), 0);
	pid_t pid[2];
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pipe(out[k]), 0);
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0) {
			close(go[1]);
			close(out[k][0]);
			race_worker(path, ids, go[0], out[k][1], k);
		}
		close(out[k][1]);
	}
	close(go[0]);
	assert_int_equal(write(go[1], "xx", 2), 2);   /* start both at once */
	close(go[1]);

	int times[RACE_ITEMS] = {0}, per[2] = {0};
	for (int k = 0; k < 2; k++) {
		int i;
		while (read(out[k][0], &i, sizeof i) == sizeof i) {
			assert_true(i >= 0 && i < RACE_ITEMS);
			times[i]++;
			per[k]++;
		}
		close(out[k][0]);
		int status = 0;
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	for (int i = 0; i < RACE_ITEMS; i++)
		assert_int_equal(times[i], 1);   /* every item evaluated exactly once */
	assert_int_equal(per[0] + per[1], RACE_ITEMS);

	sqlite3 *db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM evals"), RACE_ITEMS);
	assert_int_equal(raw_int(db, "SELECT count(DISTINCT cand) FROM evals"), RACE_ITEMS);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM claims"), 0);
	char q[128];
	snprintf(q, sizeof q, "SELECT count(*) FROM evals WHERE worker = 'worker-0'");
	assert_int_equal(raw_int(db, q), per[0]);
	sqlite3_close(db);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_concurrent_create(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "new/s.db");
	enum { N = 4 };
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t pid[N];
	for (int k = 0; k < N; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0) {
			close(go[1]);
			char b;
			if (read(go[0], &b, 1) != 1)
				_exit(2);
			Store *st = NULL;
			StrBuf err = {0};
			if (store_open(path, STORE_CREATE, &st, &err) != STORE_OK) {
				fprintf(stderr, "child %d: %s\n", k, sb_str(&err));
				_exit(3);
			}
			char t[64], id[STORE_ID_LEN + 1];
			snprintf(t, sizeof t, "kernel c%d target sm_90a\n", k);
			StoreCandidate c = {.text = t, .origin = "human"};
			StoreStatus s = store_add_candidate(st, &c, id, NULL);
			store_close(st);
			sb_free(&err);
			_exit(s == STORE_OK ? 0 : 4);
		}
	}
	close(go[0]);
	char bytes[N] = {0};
	assert_int_equal(write(go[1], bytes, N), N);
	close(go[1]);
	for (int k = 0; k < N; k++) {
		int status = 0;
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	sqlite3 *db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM candidates"), N);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM meta WHERE key = 'created_v1'"), 1);
	sqlite3_close(db);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* The crash writer: evaluations with 10 findings each, forever; after each
 * commit, its row id goes down fd. */
static void crash_writer(const char *path, int fd, int round)
{
	Store *st = NULL;
	if (store_open(path, STORE_CREATE, &st, NULL) != STORE_OK)
		_exit(3);
	DiagList dl = {0};
	for (int d = 0; d < 10; d++)
		diag_add(&dl, "CK-CRASH-001", SEV_ERROR, NOSPAN, "finding %d with some text to make pages", d);
	for (int i = 0; i < 100000; i++) {
		char t[96], id[STORE_ID_LEN + 1];
		snprintf(t, sizeof t, "kernel crash_%d_%d target sm_90a\n", round, i);
		StoreCandidate c = {.text = t, .family = "crash", .origin = "tactic:kill:round"};
		if (store_add_candidate(st, &c, id, NULL) != STORE_OK)
			_exit(4);
		StoreEval e = mk_eval(id, "k", "M=64", STORE_V_REJECTED, NAN);
		e.campaign = "crash";
		int64_t eid = 0;
		if (store_add_eval(st, &e, NULL, &dl, &eid) != STORE_OK)
			_exit(5);
		if (write(fd, &eid, sizeof eid) != sizeof eid)
			_exit(6);
	}
	_exit(0);
}

static void test_crash_kill(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "crash.db");
	enum { ROUNDS = 25 };
	int64_t *seen = NULL;
	size_t nseen = 0, cap = 0;
	unsigned seed = (unsigned)time(NULL);
	print_message("crash test seed %u\n", seed);
	for (int r = 0; r < ROUNDS; r++) {
		int fd[2];
		assert_int_equal(pipe(fd), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fd[0]);
			crash_writer(path, fd[1], r);
		}
		close(fd[1]);
		/* kill at a random moment: early rounds may hit creation or opening */
		usleep(r < 2 ? 1000u * (unsigned)r : 2000u + (unsigned)rand_r(&seed) % 60000u);
		assert_int_equal(kill(pid, SIGKILL), 0);
		int status = 0;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);   /* it was still writing */
		int64_t id;
		while (read(fd[0], &id, sizeof id) == sizeof id) {
			if (nseen == cap) {
				cap = cap ? cap * 2 : 256;
				seen = xrealloc(seen, cap * sizeof *seen);
			}
			seen[nseen++] = id;
		}
		close(fd[0]);

		/* after every kill: the file is intact, every reported commit is there */
		Store *st = open_ok(path);
		assert_int_equal(store_check(st), STORE_OK);
		sqlite3 *db = raw_open(path);
		char *ic = raw_text(db, "PRAGMA integrity_check");
		assert_string_equal(ic, "ok");
		free(ic);
		long long total = raw_int(db, "SELECT count(*) FROM evals");
		long long diags = raw_int(db, "SELECT count(*) FROM diags");
		sqlite3_close(db);
		/* at most one commit per kill can land without being reported */
		assert_true(total >= (long long)nseen);
		assert_true(total <= (long long)nseen + r + 1);
		assert_int_equal(diags, total * 10);   /* an evaluation and its findings are one transaction */
		Arena a;
		arena_init(&a);
		for (size_t i = 0; i < nseen; i++) {
			StoreEval e;
			assert_int_equal(store_get_eval(st, seen[i], &a, &e), STORE_OK);
			assert_int_equal(e.verdict, STORE_V_REJECTED);
		}
		arena_free(&a);
		store_close(st);
	}
	print_message("crash test: %zu evaluations reported committed over %d kills\n", nseen, ROUNDS);
	assert_true(nseen > 0);
	free(seen);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ------------------------------------------------------------------ queries */

typedef struct QFix {
	char g1[STORE_ID_LEN + 1], g2[STORE_ID_LEN + 1], k1[STORE_ID_LEN + 1];
	int64_t e[8];
} QFix;

/* Two gemm candidates, one kmeans; evaluations at fixed times. */
static void query_fixture(Store *st, QFix *f)
{
	add_cand(st, "kernel g1 target sm_90a\n", "gemm", f->g1);
	add_cand(st, "kernel g2 target sm_90a\n", "gemm", f->g2);
	add_cand(st, "kernel km target sm_90a\n", "kmeans", f->k1);
	struct { const char *c; const char *kern, *shape; StoreVerdict v; double med; const char *camp; } rows[8] = {
		{f->g1, "gemm", "M=128", STORE_V_OK, 50, "c1"},
		{f->g2, "gemm", "M=128", STORE_V_OK, 40, "c1"},
		{f->g2, "gemm", "M=256", STORE_V_OK, 90, "c2"},
		{f->g1, "gemm", "M=256", STORE_V_OK, 80, "c2"},
		{f->g1, "gemm", "M=128", STORE_V_MISMATCH, 10, "c1"},   /* fast but wrong: never best */
		{f->k1, "assign", "N=1", STORE_V_OK, 7, NULL},
		{f->k1, "update", "N=1", STORE_V_HANG, NAN, NULL},
		{f->g2, "gemm", "M=128", STORE_V_OK, 40, "c2"},        /* tie with row 1: the earlier wins */
	};
	for (int i = 0; i < 8; i++) {
		StoreEval e = mk_eval(rows[i].c, rows[i].kern, rows[i].shape, rows[i].v, rows[i].med);
		e.campaign = rows[i].camp;
		e.time_ms = 1700000000000LL + 1000 * i;
		e.gpu_s = 0.5;
		e.predicted_us = i == 0 ? 45 : NAN;
		f->e[i] = add_eval(st, &e);
	}
}

static void test_queries(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	QFix f;
	query_fixture(st, &f);
	Arena a;
	arena_init(&a);
	StoreEval *v = NULL;
	int n = 0;

	/* newest first, all */
	assert_int_equal(store_list_evals(st, NULL, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(v[i].id, f.e[7 - i]);
	/* filters */
	StoreFilter flt = {.family = "gemm"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 6);
	flt = (StoreFilter){.campaign = "c1", .verdict = "ok"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, f.e[1]);
	assert_int_equal(v[1].id, f.e[0]);
	flt = (StoreFilter){.family = "gemm", .limit = 3};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].id, f.e[7]);
	char pre[9];
	snprintf(pre, sizeof pre, "%.8s", f.k1);
	flt = (StoreFilter){.cand = pre};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].family, "kmeans");
	flt = (StoreFilter){.shape = " M = 256 ", .kernel = "gemm"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	flt = (StoreFilter){.harness = "compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1", .gpu = "NVIDIA H200"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 8);
	flt = (StoreFilter){.verdict = "great"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_INVALID);
	assert_non_null(strstr(store_errmsg(st), "not a verdict"));
	flt = (StoreFilter){.family = "none"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 0);

	/* best per (family, shape): the fastest ok, ties to the earliest */
	StoreEval b;
	flt = (StoreFilter){.family = "gemm", .shape = "M=128"};
	assert_int_equal(store_best(st, &flt, &a, &b), STORE_OK);
	assert_int_equal(b.id, f.e[1]);
	assert_true(b.median_us == 40);
	flt = (StoreFilter){.family = "gemm", .shape = "M=256", .kernel = "gemm"};
	assert_int_equal(store_best(st, &flt, &a, &b), STORE_OK);
	assert_int_equal(b.id, f.e[3]);
	flt = (StoreFilter){.family = "kmeans", .kernel = "update"};
	assert_int_equal(store_best(st, &flt, &a, &b), STORE_NOT_FOUND);

	/* frontier: best per (family, kernel, shape) */
	assert_int_equal(store_frontier(st, NULL, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].id, f.e[1]);   /* gemm gemm M=128 */
	assert_int_equal(v[1].id, f.e[3]);   /* gemm gemm M=256 */
	assert_int_equal(v[2].id, f.e[5]);   /* kmeans assign N=1 */
	flt = (StoreFilter){.campaign = "c2"};
	assert_int_equal(store_frontier(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, f.e[7]);
	assert_int_equal(v[1].id, f.e[3]);

	/* counts by verdict per campaign */
	StoreCounts *c = NULL;
	assert_int_equal(store_counts(st, NULL, &a, &c, &n), STORE_OK);
	assert_int_equal(n, 3);
	assert_null(c[0].campaign);
	assert_int_equal(c[0].total, 2);
	assert_int_equal(c[0].n[STORE_V_OK], 1);
	assert_int_equal(c[0].n[STORE_V_HANG], 1);
	assert_string_equal(c[1].campaign, "c1");
	assert_int_equal(c[1].total, 3);
	assert_int_equal(c[1].n[STORE_V_OK], 2);
	assert_int_equal(c[1].n[STORE_V_MISMATCH], 1);
	assert_true(c[1].gpu_s == 1.5);
	assert_string_equal(c[2].campaign, "c2");
	assert_int_equal(c[2].total, 3);
	flt = (StoreFilter){.campaign = "c2"};
	assert_int_equal(store_counts(st, &flt, &a, &c, &n), STORE_OK);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].n[STORE_V_OK], 3);
	flt = (StoreFilter){.campaign = "zzz"};
	assert_int_equal(store_counts(st, &flt, &a, &c, &n), STORE_OK);
	assert_int_equal(n, 0);

	arena_free(&a);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

static void test_printers_export(void **state)
{
	char *dir = mk_tmpdir();
	char *path = path_in(dir, "s.db");
	Store *st = open_ok(path);
	QFix f;
	query_fixture(st, &f);
	Arena a;
	arena_init(&a);
	StoreEval *v = NULL;
	int n = 0;
	StoreFilter flt = {.family = "gemm"};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);

	/* text table: a header and one line per evaluation */
	StrBuf b = {0};
	store_print_evals(&b, v, n, STORE_FMT_TEXT);
	const char *t = sb_str(&b);
	const char *nl1 = strchr(t, '\n');
	assert_non_null(nl1);
	char *head = arena_strndup(&a, t, (size_t)(nl1 - t));
	assert_non_null(strstr(head, "ID  TIME"));
	assert_non_null(strstr(head, "VERDICT"));
	assert_non_null(strstr(head, "MEDIAN_US"));
	assert_non_null(strstr(head, "PRED/MEAS"));
	assert_non_null(strstr(t, " 0.90 "));   /* row 0: predicted 45 over measured 50 */
	assert_non_null(strstr(t, "2023-11-14T22:13:20.000Z"));
	char c12[13];
	snprintf(c12, sizeof c12, "%.12s", f.g1);
	assert_non_null(strstr(t, c12));
	assert_non_null(strstr(t, "mismatch"));
	int lines = 0;
	for (const char *p = t; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, n + 1);
	sb_clear(&b);
	store_print_evals(&b, v, 0, STORE_FMT_TEXT);
	assert_string_equal(sb_str(&b), "no evaluations\n");

	/* JSON document */
	sb_clear(&b);
	store_print_evals(&b, v, n, STORE_FMT_JSON);
	json_error_t je;
	json_t *j = json_loads(sb_str(&b), 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "cake-evals/1");
	json_t *arr = json_object_get(j, "evaluations");
	assert_int_equal(json_array_size(arr), 6);
	json_t *last = json_array_get(arr, 5);   /* the oldest: row 0 */
	assert_int_equal(json_integer_value(json_object_get(last, "id")), f.e[0]);
	assert_string_equal(json_string_value(json_object_get(last, "candidate")), f.g1);
	assert_true(json_number_value(json_object_get(last, "predicted_us")) == 45);
	assert_true(json_number_value(json_object_get(last, "median_us")) == 50);
	assert_true(json_is_null(json_object_get(last, "min_us")));
	assert_string_equal(json_string_value(json_object_get(last, "time")), "2023-11-14T22:13:20.000Z");
	assert_string_equal(json_string_value(json_object_get(last, "harness")),
	                    "compiler=0.1.0;verifier=v1-3fa2c19e;cost=h200-1;tactics=t1");
	assert_true(json_is_null(json_object_get(json_array_get(arr, 0), "predicted_us")));
	json_decref(j);

	/* a candidate and its evaluations */
	StoreCandidate c;
	assert_int_equal(store_get_candidate(st, f.g2, &a, &c), STORE_OK);
	flt = (StoreFilter){.cand = f.g2};
	assert_int_equal(store_list_evals(st, &flt, &a, &v, &n), STORE_OK);
	assert_int_equal(n, 3);
	sb_clear(&b);
	store_print_candidate(&b, &c, v, n, STORE_FMT_TEXT);
	assert_non_null(strstr(sb_str(&b), f.g2));
	assert_non_null(strstr(sb_str(&b), "\nkernel g2 target sm_90a\n"));
	assert_non_null(strstr(sb_str(&b), "3 evaluations\n"));
	sb_clear(&b);
	store_print_candidate(&b, &c, v, n, STORE_FMT_JSON);
	j = json_loads(sb_str(&b), 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "cake-candidate/1");
	json_t *cj = json_object_get(j, "candidate");
	assert_string_equal(json_string_value(json_object_get(cj, "text")), "kernel g2 target sm_90a\n");
	assert_string_equal(json_string_value(json_object_get(cj, "origin")), "human");
	assert_true(json_is_null(json_object_get(cj, "parent")));
	assert_int_equal(json_array_size(json_object_get(j, "evaluations")), 3);
	json_decref(j);

	/* counts */
	StoreCounts *cn = NULL;
	int nc = 0;
	assert_int_equal(store_counts(st, NULL, &a, &cn, &nc), STORE_OK);
	sb_clear(&b);
	store_print_counts(&b, cn, nc, STORE_FMT_TEXT);
	assert_non_null(strstr(sb_str(&b), "CAMPAIGN"));
	assert_non_null(strstr(sb_str(&b), "mismatch"));
	assert_null(strstr(sb_str(&b), "compile_error"));   /* only verdicts that occur */
	sb_clear(&b);
	store_print_counts(&b, cn, nc, STORE_FMT_JSON);
	j = json_loads(sb_str(&b), 0, &je);
	assert_non_null(j);
	json_t *camps = json_object_get(j, "campaigns");
	assert_int_equal(json_array_size(camps), 3);
	assert_true(json_is_null(json_object_get(json_array_get(camps, 0), "campaign")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(camps, 1), "verdicts"), "mismatch")), 1);
	json_decref(j);

	/* export: oldest first, one parseable object per line */
	sb_clear(&b);
	int nl = 0;
	assert_int_equal(store_export_jsonl(st, NULL, &b, &nl), STORE_OK);
	assert_int_equal(nl, 8);
	const char *p = sb_str(&b);
	for (int i = 0; i < 8; i++) {
		const char *e = strchr(p, '\n');
		assert_non_null(e);
		j = json_loadb(p, (size_t)(e - p), 0, &je);
		assert_non_null(j);
		assert_string_equal(json_string_value(json_object_get(j, "format")), "cake-measure/1");
		assert_int_equal(json_integer_value(json_object_get(j, "id")), f.e[i]);
		assert_non_null(json_object_get(j, "family"));
		assert_non_null(json_object_get(j, "kernel"));
		assert_non_null(json_object_get(j, "shape"));
		assert_non_null(json_object_get(j, "predicted_us"));
		assert_non_null(json_object_get(j, "median_us"));
		assert_non_null(json_object_get(j, "verdict"));
		assert_string_equal(json_string_value(json_object_get(j, "verifier")), "v1-3fa2c19e");
		assert_string_equal(json_string_value(json_object_get(j, "cost_model")), "h200-1");
		if (i == 6)
			assert_string_equal(json_string_value(json_object_get(j, "verdict")), "hang");
		json_decref(j);
		p = e + 1;
	}
	assert_int_equal(*p, 0);
	sb_clear(&b);
	flt = (StoreFilter){.family = "kmeans", .verdict = "ok"};
	assert_int_equal(store_export_jsonl(st, &flt, &b, &nl), STORE_OK);
	assert_int_equal(nl, 1);
	assert_non_null(strstr(sb_str(&b), "\"kernel\":\"assign\""));
	sb_free(&b);

	arena_free(&a);
	store_close(st);
	free(path);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_reopen),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_zero_length_initialised),
		cmocka_unit_test(test_candidates_idempotent),
		cmocka_unit_test(test_prefix_lookup),
		cmocka_unit_test(test_shape_and_harness_key),
		cmocka_unit_test(test_eval_insert_find),
		cmocka_unit_test(test_diagnostics),
		cmocka_unit_test(test_migration_v1),
		cmocka_unit_test(test_migration_v2),
		cmocka_unit_test(test_refuse_not_sqlite),
		cmocka_unit_test(test_refuse_foreign),
		cmocka_unit_test(test_refuse_newer),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_claim_race),
		cmocka_unit_test(test_concurrent_create),
		cmocka_unit_test(test_crash_kill),
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_printers_export),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
