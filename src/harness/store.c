/*
 * store.c — the candidate store on SQLite (the API is in store.h, the
 * reference in docs/STORE.md; printers and the export are in store_print.c).
 *
 * Opening is the delicate part, because a store path comes from the command
 * line and may name anything. It runs in two phases so that a file that is
 * not ours is never written, not even by SQLite's own housekeeping:
 *
 *   1. inspect: a file that does not start with the SQLite magic is refused
 *      before SQLite sees it. Otherwise a *read-only* connection reads
 *      PRAGMA application_id, PRAGMA user_version and the number of schema
 *      objects. A read-only connection cannot roll back a hot journal or
 *      checkpoint a WAL on close, so whatever the file is, it keeps its
 *      bytes. Foreign databases, newer schemas and unreadable files are
 *      refused here. A file with no schema objects and both pragmas 0 (a
 *      zero-length file included) is empty and will be initialised.
 *   2. open: only a file phase 1 accepted (a Cake store, an empty file, or
 *      none at all) is opened read-write. The connection sets busy_timeout,
 *      synchronous=FULL and foreign keys and switches the file to WAL first,
 *      so that initialisation and migrations are journaled in the WAL too: a
 *      crash never leaves a hot rollback journal, which phase 1's read-only
 *      connection could not roll back. Then it takes the write lock (BEGIN
 *      IMMEDIATE), judges the file again under the lock (another process may
 *      have initialised it meanwhile), applies every migration step from the
 *      file's version to STORE_SCHEMA_VERSION in that one transaction, sets
 *      user_version and application_id, and commits.
 *
 * A refused WAL-mode database may be left with -wal/-shm side files created by
 * the read-only connection; the database file itself keeps every byte.
 *
 * Migrations are an ordered table of SQL steps: step N takes the schema from
 * version N-1 to N, step 1 creates the v1 schema from nothing. A new store
 * runs every step, so the upgrade path is exercised by every store ever
 * created. A step, once released, is never edited: a change is a new step.
 *
 * Writes are one short transaction each (BEGIN IMMEDIATE, so a transaction
 * that reads before it writes never fails with a stale snapshot), committed
 * before the call returns. Candidate inserts are idempotent (ON CONFLICT DO
 * NOTHING on the content hash). An evaluation, its findings and the removal
 * of its claim commit together. Claims are rows keyed by the work item with
 * an owner and an expiry in wall-clock ms.
 *
 * Reads are single statements (their own snapshot); results are copied into
 * the caller's arena, so no statement outlives a call.
 *
 * Gate runs (v3) are the outer loop's memory: a run row names the harness
 * that re-judged the store, and its impact rows the work items whose
 * outcome it changed, written together in one transaction like an
 * evaluation and its findings.
 */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <xxhash.h>

struct Store {
	sqlite3 *db;
	char *path;
	StrBuf err;
};

static const char SQLITE_MAGIC[16] = "SQLite format 3";   /* + the NUL */

/* ------------------------------------------------------------------ schema */

/* One migration step: the schema of version `to - 1` becomes version `to`. */
typedef struct Migration {
	int to;
	const char *what;
	const char *sql;
} Migration;

static const Migration MIGRATIONS[] = {
	{1, "initial schema",
	 "CREATE TABLE meta(\n"
	 "  key   TEXT PRIMARY KEY,\n"
	 "  value TEXT NOT NULL\n"
	 ") WITHOUT ROWID;\n"
	 "CREATE TABLE candidates(\n"
	 "  id         TEXT PRIMARY KEY,\n"
	 "  text       TEXT NOT NULL,\n"
	 "  family     TEXT,\n"
	 "  parent     TEXT,\n"
	 "  origin     TEXT NOT NULL,\n"
	 "  created_ms INTEGER NOT NULL\n"
	 ");\n"
	 "CREATE INDEX candidates_family ON candidates(family);\n"
	 "CREATE INDEX candidates_parent ON candidates(parent);\n"
	 "CREATE TABLE evals(\n"
	 "  id           INTEGER PRIMARY KEY,\n"
	 "  cand         TEXT NOT NULL REFERENCES candidates(id),\n"
	 "  kernel       TEXT NOT NULL,\n"
	 "  shape        TEXT NOT NULL,\n"
	 "  seed         INTEGER NOT NULL,\n"
	 "  target       TEXT,\n"
	 "  gpu          TEXT,\n"
	 "  driver       TEXT,\n"
	 "  compiler     TEXT NOT NULL,\n"
	 "  verifier     TEXT NOT NULL,\n"
	 "  cost_model   TEXT NOT NULL,\n"
	 "  tactics      TEXT NOT NULL,\n"
	 "  harness      TEXT NOT NULL,\n"
	 "  verdict      TEXT NOT NULL,\n"
	 "  message      TEXT,\n"
	 "  predicted_us REAL,\n"
	 "  median_us    REAL,\n"
	 "  min_us       REAL,\n"
	 "  max_us       REAL,\n"
	 "  rel_err      REAL,\n"
	 "  gpu_s        REAL NOT NULL DEFAULT 0,\n"
	 "  time_ms      INTEGER NOT NULL,\n"
	 "  campaign     TEXT\n"
	 ");\n"
	 "CREATE INDEX evals_work ON evals(cand, kernel, shape, harness);\n"
	 "CREATE INDEX evals_time ON evals(time_ms);\n"
	 "CREATE TABLE diags(\n"
	 "  eval      INTEGER NOT NULL REFERENCES evals(id),\n"
	 "  seq       INTEGER NOT NULL,\n"
	 "  rule      TEXT NOT NULL,\n"
	 "  severity  TEXT NOT NULL,\n"
	 "  message   TEXT NOT NULL,\n"
	 "  file      TEXT,\n"
	 "  line      INTEGER,\n"
	 "  col       INTEGER,\n"
	 "  len       INTEGER,\n"
	 "  role      TEXT,\n"
	 "  resource  TEXT,\n"
	 "  barrier   TEXT,\n"
	 "  pipeline  TEXT,\n"
	 "  stage     INTEGER,\n"
	 "  phase     INTEGER,\n"
	 "  iter      TEXT,\n"
	 "  condition TEXT,\n"
	 "  hint      TEXT,\n"
	 "  rel_file  TEXT,\n"
	 "  rel_line  INTEGER,\n"
	 "  rel_col   INTEGER,\n"
	 "  rel_msg   TEXT,\n"
	 "  PRIMARY KEY(eval, seq)\n"
	 ") WITHOUT ROWID;\n"
	 "CREATE TABLE claims(\n"
	 "  cand       TEXT NOT NULL REFERENCES candidates(id),\n"
	 "  kernel     TEXT NOT NULL,\n"
	 "  shape      TEXT NOT NULL,\n"
	 "  harness    TEXT NOT NULL,\n"
	 "  owner      TEXT NOT NULL,\n"
	 "  claimed_ms INTEGER NOT NULL,\n"
	 "  expires_ms INTEGER NOT NULL,\n"
	 "  PRIMARY KEY(cand, kernel, shape, harness)\n"
	 ") WITHOUT ROWID;\n"},
	{2, "evals.worker; indexes for campaign listings, best/frontier and owner release",
	 "ALTER TABLE evals ADD COLUMN worker TEXT;\n"
	 "CREATE INDEX evals_campaign ON evals(campaign, time_ms);\n"
	 "CREATE INDEX evals_ok ON evals(kernel, shape, median_us) WHERE verdict = 'ok';\n"
	 "CREATE INDEX claims_owner ON claims(owner);\n"},
	{3, "gate runs and their rule-impact rows (the outer loop's re-judgements)",
	 "CREATE TABLE gate_runs(\n"
	 "  id         INTEGER PRIMARY KEY,\n"
	 "  time_ms    INTEGER NOT NULL,\n"
	 "  compiler   TEXT NOT NULL,\n"
	 "  verifier   TEXT NOT NULL,\n"
	 "  cost_model TEXT NOT NULL,\n"
	 "  tactics    TEXT NOT NULL,\n"
	 "  harness    TEXT NOT NULL,\n"
	 "  items      INTEGER NOT NULL,\n"
	 "  changed    INTEGER NOT NULL,\n"
	 "  worker     TEXT\n"
	 ");\n"
	 "CREATE INDEX gate_runs_time ON gate_runs(time_ms);\n"
	 "CREATE TABLE gate_impact(\n"
	 "  run         INTEGER NOT NULL REFERENCES gate_runs(id),\n"
	 "  seq         INTEGER NOT NULL,\n"
	 "  cand        TEXT NOT NULL REFERENCES candidates(id),\n"
	 "  kernel      TEXT NOT NULL,\n"
	 "  shape       TEXT NOT NULL,\n"
	 "  eval        INTEGER REFERENCES evals(id),\n"
	 "  old_harness TEXT NOT NULL,\n"
	 "  old_outcome TEXT NOT NULL,\n"
	 "  old_rule    TEXT,\n"
	 "  new_outcome TEXT NOT NULL,\n"
	 "  new_rule    TEXT,\n"
	 "  rule        TEXT,\n"
	 "  impact      TEXT NOT NULL,\n"
	 "  gpu_verdict TEXT,\n"
	 "  message     TEXT,\n"
	 "  PRIMARY KEY(run, seq)\n"
	 ") WITHOUT ROWID;\n"
	 "CREATE INDEX gate_impact_cand ON gate_impact(cand);\n"
	 "CREATE INDEX gate_impact_rule ON gate_impact(rule);\n"},
};

_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == STORE_SCHEMA_VERSION,
               "one migration step per schema version");

/* ----------------------------------------------------------------- helpers */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void err_reset(Store *st)
{
	st->err.len = 0;
	if (st->err.s)
		st->err.s[0] = 0;
}

/* Replace st's message with "store 'PATH': " + the formatted text. */
__attribute__((format(printf, 2, 3))) static void set_err(Store *st, const char *fmt, ...)
{
	err_reset(st);
	sb_printf(&st->err, "store '%s': ", st->path);
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	sb_puts(&st->err, s ? s : "(out of memory)");
	free(s);
}

/* A SQLite failure while doing `what`: sets the message, returns STORE_ERROR. */
static StoreStatus sql_fail(Store *st, const char *what)
{
	int rc = sqlite3_errcode(st->db);
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		set_err(st, "%s: %s (another process held the store for more than %d s; retry, or look for a stuck process)",
		        what, sqlite3_errmsg(st->db), STORE_BUSY_TIMEOUT_MS / 1000);
	else if (rc == SQLITE_FULL)
		set_err(st, "%s: %s (free disk space and retry; nothing was recorded)", what,
		        sqlite3_errmsg(st->db));
	else
		set_err(st, "%s: %s", what, sqlite3_errmsg(st->db));
	return STORE_ERROR;
}

static StoreStatus exec(Store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(st, what);
	return STORE_OK;
}

static StoreStatus begin(Store *st)
{
	return exec(st, "BEGIN IMMEDIATE", "cannot start a write transaction");
}

static StoreStatus commit(Store *st)
{
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		StoreStatus s = sql_fail(st, "cannot commit");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return s;
	}
	return STORE_OK;
}

static void rollback(Store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static sqlite3_stmt *prep(Store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		sql_fail(st, "cannot prepare a statement");
		return NULL;
	}
	return s;
}

/* Bind a string, or NULL when s is NULL. */
static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* Bind a string, or '' when s is NULL (NOT NULL version columns). */
static void bind_text0(sqlite3_stmt *s, int i, const char *v)
{
	sqlite3_bind_text(s, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

/* Bind a double; NaN is NULL. */
static void bind_dbl(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

static const char *col_str(sqlite3_stmt *s, int i, Arena *a)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	if (!t)
		return NULL;
	return arena_strndup(a, (const char *)t, (size_t)sqlite3_column_bytes(s, i));
}

static double col_dbl(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static int col_int(sqlite3_stmt *s, int i, int none)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? none : sqlite3_column_int(s, i);
}

static bool is_hex_id(const char *s)
{
	if (!s || strlen(s) != STORE_ID_LEN)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* ------------------------------------------------------------------- names */

const char *store_status_name(StoreStatus s)
{
	static const char *n[] = {"ok", "not_found", "ambiguous", "claimed", "already_done", "busy",
	                          "invalid", "missing", "not_a_db", "foreign", "too_new", "error"};
	return (unsigned)s < NELEM(n) ? n[s] : "?";
}

static const char *const VERDICT[STORE_NVERDICT] = {
	NULL, "ok", "mismatch", "hang", "fault", "compile_error", "launch_error",
	"refused", "rejected", "no_gpu", "internal_error", "dry_run",
};

const char *store_verdict_name(StoreVerdict v)
{
	return v > STORE_V_NONE && v < STORE_NVERDICT ? VERDICT[v] : "?";
}

StoreVerdict store_verdict_parse(const char *s)
{
	for (int v = 1; s && v < STORE_NVERDICT; v++)
		if (strcmp(s, VERDICT[v]) == 0)
			return (StoreVerdict)v;
	return STORE_V_NONE;
}

bool store_verdict_conclusive(StoreVerdict v)
{
	return v >= STORE_V_OK && v <= STORE_V_REJECTED;
}

/* Append "('ok','mismatch',...)": the conclusive verdicts as an SQL list. */
static void conclusive_list(StrBuf *b)
{
	sb_putc(b, '(');
	for (int v = 1, first = 1; v < STORE_NVERDICT; v++) {
		if (!store_verdict_conclusive((StoreVerdict)v))
			continue;
		sb_printf(b, "%s'%s'", first ? "" : ",", VERDICT[v]);
		first = 0;
	}
	sb_putc(b, ')');
}

/* ------------------------------------------------------------ keys, shapes */

void store_hash_text(const char *text, char id[STORE_ID_LEN + 1])
{
	XXH128_hash_t h = XXH3_128bits(text, strlen(text));
	snprintf(id, STORE_ID_LEN + 1, "%016llx%016llx", (unsigned long long)h.high64,
	         (unsigned long long)h.low64);
}

StoreStatus store_harness_key(const StoreHarness *h, StrBuf *out)
{
	const char *v[4] = {h->compiler, h->verifier, h->cost_model, h->tactics};
	static const char *k[4] = {"compiler", "verifier", "cost", "tactics"};
	for (int i = 0; i < 4; i++)
		if (v[i] && strchr(v[i], ';'))
			return STORE_INVALID;
	for (int i = 0; i < 4; i++)
		sb_printf(out, "%s%s=%s", i ? ";" : "", k[i], v[i] ? v[i] : "");
	return STORE_OK;
}

typedef struct ShapeKV {
	const char *k, *v;
	size_t kl, vl;
} ShapeKV;

static int kv_cmp(const void *a, const void *b)
{
	const ShapeKV *x = a, *y = b;
	size_t n = x->kl < y->kl ? x->kl : y->kl;
	int c = memcmp(x->k, y->k, n);
	return c ? c : (x->kl > y->kl) - (x->kl < y->kl);
}

static bool shape_name_ok(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

StoreStatus store_shape_canon(const char *shape, StrBuf *out)
{
	if (!shape)
		return STORE_INVALID;
	int cap = 1;
	for (const char *p = shape; *p; p++)
		cap += *p == ',';
	ShapeKV *kv = xcalloc((size_t)cap, sizeof *kv);
	int n = 0;
	StoreStatus rc = STORE_OK;
	const char *p = shape;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == 0)
		goto done;   /* "" or blanks: no dimensions */
	for (;;) {
		const char *e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(e - p));
		if (!eq) {
			rc = STORE_INVALID;
			goto done;
		}
		const char *k0 = p, *k1 = eq, *v0 = eq + 1, *v1 = e;
		while (k0 < k1 && (*k0 == ' ' || *k0 == '\t'))
			k0++;
		while (k1 > k0 && (k1[-1] == ' ' || k1[-1] == '\t'))
			k1--;
		while (v0 < v1 && (*v0 == ' ' || *v0 == '\t'))
			v0++;
		while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\t'))
			v1--;
		if (!shape_name_ok(k0, (size_t)(k1 - k0)) || v0 == v1) {
			rc = STORE_INVALID;
			goto done;
		}
		for (const char *q = v0; q < v1; q++)
			if (*q == ' ' || *q == '\t' || *q == '=' || *q == ';' || (unsigned char)*q < 0x20) {
				rc = STORE_INVALID;
				goto done;
			}
		/* integers lose leading zeros (keep one digit) */
		const char *d = v0;
		bool neg = *d == '-';
		if (neg)
			d++;
		bool digits = d < v1;
		for (const char *q = d; q < v1; q++)
			digits = digits && *q >= '0' && *q <= '9';
		if (digits && !neg) {
			while (v1 - v0 > 1 && *v0 == '0')
				v0++;
		}
		kv[n++] = (ShapeKV){k0, v0, (size_t)(k1 - k0), (size_t)(v1 - v0)};
		if (*e == 0)
			break;
		p = e + 1;
	}
	qsort(kv, (size_t)n, sizeof *kv, kv_cmp);
	for (int i = 1; i < n; i++)
		if (kv_cmp(&kv[i - 1], &kv[i]) == 0) {
			rc = STORE_INVALID;
			goto done;
		}
done:
	if (rc == STORE_OK)
		for (int i = 0; i < n; i++) {
			if (i)
				sb_putc(out, ',');
			sb_putn(out, kv[i].k, kv[i].kl);
			sb_putc(out, '=');
			sb_putn(out, kv[i].v, kv[i].vl);
		}
	free(kv);
	return rc;
}

/* Canonical shape of s into the arena, or NULL with st's message set. */
static const char *canon_shape(Store *st, const char *s, Arena *a)
{
	StrBuf b = {0};
	if (store_shape_canon(s ? s : "", &b) != STORE_OK) {
		set_err(st, "shape '%s' is not NAME=VALUE[,NAME=VALUE...] with distinct names", s ? s : "");
		sb_free(&b);
		return NULL;
	}
	const char *r = arena_strdup(a, sb_str(&b));
	sb_free(&b);
	return r;
}

/* Harness key of h into the arena, or NULL with st's message set. */
static const char *harness_key(Store *st, const StoreHarness *h, Arena *a)
{
	static const StoreHarness none = {0};
	StrBuf b = {0};
	if (store_harness_key(h ? h : &none, &b) != STORE_OK) {
		set_err(st, "a harness version holds ';', which the combined harness key reserves");
		sb_free(&b);
		return NULL;
	}
	const char *r = arena_strdup(a, sb_str(&b));
	sb_free(&b);
	return r;
}

/* ----------------------------------------------------------------- opening */

typedef enum { INSPECT_EMPTY, INSPECT_CAKE } InspectResult;

/* Read application id, schema version and object count from an open connection. */
static int read_header(sqlite3 *db, int *app, int *ver, int *nobj)
{
	const char *q[3] = {"PRAGMA application_id", "PRAGMA user_version",
	                    "SELECT count(*) FROM sqlite_master"};
	int *dst[3] = {app, ver, nobj};
	for (int i = 0; i < 3; i++) {
		sqlite3_stmt *s = NULL;
		int rc = sqlite3_prepare_v2(db, q[i], -1, &s, NULL);
		if (rc == SQLITE_OK) {
			rc = sqlite3_step(s);
			if (rc == SQLITE_ROW) {
				*dst[i] = sqlite3_column_int(s, 0);
				rc = SQLITE_OK;
			}
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* Judge what app/ver/nobj say about a file; sets st's message on a refusal. */
static StoreStatus judge(Store *st, int app, int ver, int nobj, InspectResult *r)
{
	if ((unsigned)app == STORE_APPLICATION_ID) {
		if (ver > STORE_SCHEMA_VERSION) {
			set_err(st,
			        "schema version %d is newer than this cake (%s) knows (%d); left it untouched: "
			        "use a newer cake, or pass --store with another path",
			        ver, CAKE_VERSION, STORE_SCHEMA_VERSION);
			return STORE_TOO_NEW;
		}
		if (ver < 1) {
			set_err(st,
			        "a Cake application id but no schema version: the file is damaged; left it "
			        "untouched: restore it from a copy, or pass --store with another path");
			return STORE_NOT_A_DB;
		}
		*r = INSPECT_CAKE;
		return STORE_OK;
	}
	if (app == 0 && ver == 0 && nobj == 0) {
		*r = INSPECT_EMPTY;
		return STORE_OK;
	}
	set_err(st,
	        "a SQLite database but not a Cake store (application_id 0x%08x, user_version %d, %d schema "
	        "objects); left it untouched: pass --store with the path of a Cake store or of a new file",
	        (unsigned)app, ver, nobj);
	return STORE_FOREIGN;
}

/* Phase 1 on an existing file: refuse without writing, or say what it is. */
static StoreStatus inspect(Store *st, const struct stat *sb, InspectResult *r)
{
	if (!S_ISREG(sb->st_mode)) {
		set_err(st, "not a regular file; pass --store with the path of a store file");
		return STORE_NOT_A_DB;
	}
	if (sb->st_size > 0) {
		char head[16] = {0};
		FILE *f = fopen(st->path, "rb");
		if (!f) {
			set_err(st, "cannot read: %s", strerror(errno));
			return STORE_ERROR;
		}
		size_t got = fread(head, 1, sizeof head, f);
		fclose(f);
		if (got < sizeof head || memcmp(head, SQLITE_MAGIC, sizeof head) != 0) {
			set_err(st,
			        "not a SQLite database (it does not start with \"SQLite format 3\"); left it "
			        "untouched: move it away, or pass --store with another path");
			return STORE_NOT_A_DB;
		}
	}
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READONLY, NULL);
	int app = 0, ver = 0, nobj = 0;
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
		rc = read_header(db, &app, &ver, &nobj);
	}
	if (rc != SQLITE_OK) {
		int code = rc & 0xff;
		const char *m = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
		StoreStatus s;
		if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
			set_err(st,
			        "SQLite cannot read it (%s); left it untouched: restore it from a copy, or pass "
			        "--store with another path",
			        m);
			s = STORE_NOT_A_DB;
		} else {
			set_err(st, "cannot inspect it: %s", m);
			s = STORE_ERROR;
		}
		sqlite3_close(db);
		return s;
	}
	sqlite3_close(db);
	return judge(st, app, ver, nobj, r);
}

/* Insert or replace a meta row (inside a transaction). */
static StoreStatus meta_set(Store *st, const char *key, const char *value)
{
	sqlite3_stmt *s = prep(st, "INSERT INTO meta(key, value) VALUES(?1, ?2) "
	                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (!s)
		return STORE_ERROR;
	bind_text(s, 1, key);
	bind_text(s, 2, value);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot write the meta table");
}

/* Phase 2, inside BEGIN IMMEDIATE: look again, then migrate from the file's version. */
static StoreStatus migrate(Store *st)
{
	int app = 0, ver = 0, nobj = 0;
	if (read_header(st->db, &app, &ver, &nobj) != SQLITE_OK)
		return sql_fail(st, "cannot read the schema version");
	InspectResult r;
	StoreStatus s = judge(st, app, ver, nobj, &r);
	if (s != STORE_OK)
		return s;
	int from = r == INSPECT_EMPTY ? 0 : ver;
	if (from == STORE_SCHEMA_VERSION)
		return STORE_OK;
	for (size_t i = 0; i < NELEM(MIGRATIONS); i++) {
		const Migration *m = &MIGRATIONS[i];
		if (m->to <= from)
			continue;
		char *emsg = NULL;
		if (sqlite3_exec(st->db, m->sql, NULL, NULL, &emsg) != SQLITE_OK) {
			set_err(st, "migration to schema v%d (%s) failed: %s; nothing was changed", m->to, m->what,
			        emsg ? emsg : sqlite3_errmsg(st->db));
			sqlite3_free(emsg);
			return STORE_ERROR;
		}
		char key[32], val[128];
		snprintf(key, sizeof key, "%s%d", from == 0 ? "created_v" : "migrated_v", m->to);
		snprintf(val, sizeof val, "cake %s at %lld ms", CAKE_VERSION, (long long)now_ms());
		if ((s = meta_set(st, key, val)) != STORE_OK)
			return s;
	}
	char sql[96];
	snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
	         (int)STORE_APPLICATION_ID, STORE_SCHEMA_VERSION);
	return exec(st, sql, "cannot set the schema version");
}

/* Switch to WAL, retrying while another connection briefly blocks the change. */
static StoreStatus set_wal(Store *st)
{
	int64_t give_up = now_ms() + STORE_BUSY_TIMEOUT_MS;
	for (;;) {
		sqlite3_stmt *s = prep(st, "PRAGMA journal_mode = WAL");
		if (!s)
			return STORE_ERROR;
		int rc = sqlite3_step(s);
		bool wal = rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
		sqlite3_finalize(s);
		if (wal)
			return STORE_OK;
		if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && now_ms() < give_up) {
			usleep(2000);
			continue;
		}
		if (rc == SQLITE_ROW) {
			set_err(st, "cannot enable WAL mode (is it on a network file system?)");
			return STORE_ERROR;
		}
		return sql_fail(st, "cannot enable WAL mode");
	}
}

/* Parent directory of path into buf ("" when none). */
static void parent_dir(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash)
		buf[0] = 0;
	else if (slash == buf)
		buf[1] = 0;
	else
		*slash = 0;
}

StoreStatus store_open(const char *path, unsigned flags, Store **out, StrBuf *err)
{
	*out = NULL;
	Store *st = xcalloc(1, sizeof *st);
	st->path = xstrdup(path && *path ? path : STORE_DEFAULT_PATH);
	StoreStatus s = STORE_OK;
	InspectResult ir = INSPECT_EMPTY;
	struct stat sb;
	bool exists = stat(st->path, &sb) == 0;
	if (!exists && errno != ENOENT) {
		set_err(st, "cannot stat: %s", strerror(errno));
		s = STORE_ERROR;
	} else if (!exists && !(flags & STORE_CREATE)) {
		set_err(st, "does not exist (a command that records evaluations creates it); pass --store "
		            "with the path of a store");
		s = STORE_MISSING;
	} else if (!exists) {
		char dir[4096];
		parent_dir(st->path, dir, sizeof dir);
		if (dir[0] && mkdir_p(dir) != 0) {
			set_err(st, "cannot create the directory '%s': %s", dir, strerror(errno));
			s = STORE_ERROR;
		}
	} else {
		s = inspect(st, &sb, &ir);
	}

	if (s == STORE_OK) {
		int oflags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
		if (sqlite3_open_v2(st->path, &st->db, oflags, NULL) != SQLITE_OK) {
			if (st->db)
				s = sql_fail(st, "cannot open");
			else {
				set_err(st, "cannot open: out of memory");
				s = STORE_ERROR;
			}
		}
	}
	if (s == STORE_OK) {
		sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
		s = exec(st, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "cannot configure");
	}
	if (s == STORE_OK)
		s = set_wal(st);
	if (s == STORE_OK && (s = begin(st)) == STORE_OK) {
		s = migrate(st);
		if (s == STORE_OK)
			s = commit(st);
		else
			rollback(st);
	}

	if (s != STORE_OK) {
		if (err)
			sb_puts(err, sb_str(&st->err));
		store_close(st);
		return s;
	}
	err_reset(st);
	*out = st;
	return STORE_OK;
}

void store_close(Store *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st->path);
	sb_free(&st->err);
	free(st);
}

const char *store_errmsg(const Store *st)
{
	return st->err.s ? st->err.s : "";
}

const char *store_path(const Store *st)
{
	return st->path;
}

int store_schema_version(Store *st)
{
	int app = 0, ver = -1, nobj = 0;
	if (read_header(st->db, &app, &ver, &nobj) != SQLITE_OK)
		return -1;
	return ver;
}

StoreStatus store_check(Store *st)
{
	err_reset(st);
	sqlite3_stmt *s = prep(st, "PRAGMA integrity_check");
	if (!s)
		return STORE_ERROR;
	StrBuf b = {0};
	int rc, rows = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);
		if (t && strcmp(t, "ok") != 0 && rows++ < 3)
			sb_printf(&b, "%s%s", b.len ? "; " : "", t);
	}
	sqlite3_finalize(s);
	StoreStatus r = STORE_OK;
	if (rc != SQLITE_DONE)
		r = sql_fail(st, "integrity check failed to run");
	else if (rows) {
		set_err(st, "integrity check failed: %s%s", sb_str(&b), rows > 3 ? "; ..." : "");
		r = STORE_ERROR;
	}
	sb_free(&b);
	return r;
}

/* -------------------------------------------------------------- candidates */

/* Whether origin is "human", "agent:NAME", "tactic:NAME" or "tactic:NAME:ARGS". */
static bool origin_ok(const char *o)
{
	if (!o)
		return false;
	if (strcmp(o, "human") == 0)
		return true;
	const char *name;
	bool tactic = strncmp(o, "tactic:", 7) == 0;
	if (tactic)
		name = o + 7;
	else if (strncmp(o, "agent:", 6) == 0)
		name = o + 6;
	else
		return false;
	size_t n = tactic ? strcspn(name, ":") : strlen(name);
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= ' ')
			return false;
	for (const char *p = name + n; *p; p++)
		if ((unsigned char)*p < 0x20)
			return false;
	return true;
}

StoreStatus store_add_candidate(Store *st, const StoreCandidate *c, char id_out[STORE_ID_LEN + 1],
                                bool *inserted)
{
	err_reset(st);
	if (inserted)
		*inserted = false;
	if (!c->text || !*c->text) {
		set_err(st, "a candidate needs its canonical text (got none)");
		return STORE_INVALID;
	}
	if (!origin_ok(c->origin)) {
		set_err(st, "origin '%s' is not tactic:NAME[:ARGS], agent:NAME or human",
		        c->origin ? c->origin : "(none)");
		return STORE_INVALID;
	}
	char parent[STORE_ID_LEN + 1] = {0};
	if (c->parent) {
		size_t n = strlen(c->parent);
		for (size_t i = 0; i < n && i < STORE_ID_LEN; i++)
			parent[i] = (char)((c->parent[i] >= 'A' && c->parent[i] <= 'F') ? c->parent[i] + 32 : c->parent[i]);
		if (n != STORE_ID_LEN || !is_hex_id(parent)) {
			set_err(st, "parent '%s' is not a full candidate id (%d hex digits)", c->parent, STORE_ID_LEN);
			return STORE_INVALID;
		}
	}
	char id[STORE_ID_LEN + 1];
	store_hash_text(c->text, id);
	if (id_out)
		memcpy(id_out, id, sizeof id);

	StoreStatus s = begin(st);
	if (s != STORE_OK)
		return s;
	sqlite3_stmt *q = prep(st, "INSERT INTO candidates(id, text, family, parent, origin, created_ms) "
	                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(id) DO NOTHING");
	if (!q) {
		rollback(st);
		return STORE_ERROR;
	}
	bind_text(q, 1, id);
	bind_text(q, 2, c->text);
	bind_text(q, 3, c->family);
	bind_text(q, 4, c->parent ? parent : NULL);
	bind_text(q, 5, c->origin);
	sqlite3_bind_int64(q, 6, c->created_ms ? c->created_ms : now_ms());
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		s = sql_fail(st, "cannot insert the candidate");
		rollback(st);
		return s;
	}
	bool added = sqlite3_changes(st->db) > 0;
	if (!added) {
		/* same id: the text must be the same too (else xxh3-128 collided) */
		q = prep(st, "SELECT text = ?2 FROM candidates WHERE id = ?1");
		if (!q) {
			rollback(st);
			return STORE_ERROR;
		}
		bind_text(q, 1, id);
		bind_text(q, 2, c->text);
		rc = sqlite3_step(q);
		bool same = rc == SQLITE_ROW && sqlite3_column_int(q, 0) == 1;
		sqlite3_finalize(q);
		if (!same) {
			rollback(st);
			if (rc != SQLITE_ROW)
				return sql_fail(st, "cannot read the candidate back");
			set_err(st, "candidate %s is stored with a different text (a hash collision or a damaged "
			            "store); nothing was written", id);
			return STORE_ERROR;
		}
	}
	if ((s = commit(st)) != STORE_OK)
		return s;
	if (inserted)
		*inserted = added;
	return STORE_OK;
}

StoreStatus store_resolve(Store *st, const char *prefix, char id[STORE_ID_LEN + 1])
{
	err_reset(st);
	char lo[STORE_ID_LEN + 2], hi[STORE_ID_LEN + 2];
	size_t n = prefix ? strlen(prefix) : 0;
	bool ok = n >= 1 && n <= STORE_ID_LEN;
	for (size_t i = 0; ok && i < n; i++) {
		char ch = prefix[i];
		if (ch >= 'A' && ch <= 'F')
			ch = (char)(ch + 32);
		ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
		lo[i] = hi[i] = ch;
	}
	if (!ok) {
		set_err(st, "'%s' is not a candidate id or id prefix (1 to %d hex digits)", prefix ? prefix : "",
		        STORE_ID_LEN);
		return STORE_INVALID;
	}
	lo[n] = 0;
	hi[n] = 'g';   /* every hex digit sorts below 'g' */
	hi[n + 1] = 0;
	sqlite3_stmt *q = prep(st, "SELECT id, count(*) OVER () FROM candidates WHERE id >= ?1 AND id < ?2 "
	                           "ORDER BY id LIMIT 4");
	if (!q)
		return STORE_ERROR;
	bind_text(q, 1, lo);
	bind_text(q, 2, hi);
	int rc, rows = 0, total = 0;
	StrBuf list = {0};
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		total = sqlite3_column_int(q, 1);
		if (rows++ == 0)
			snprintf(id, STORE_ID_LEN + 1, "%s", t);
		sb_printf(&list, "%s%s", rows > 1 ? ", " : "", t);
	}
	sqlite3_finalize(q);
	StoreStatus s = STORE_OK;
	if (rc != SQLITE_DONE)
		s = sql_fail(st, "cannot look up the candidate");
	else if (rows == 0) {
		set_err(st, "no candidate id starts with '%s'", lo);
		s = STORE_NOT_FOUND;
	} else if (total > 1) {
		set_err(st, "id prefix '%s' is ambiguous: %d candidates match (%s%s); give more digits", lo, total,
		        sb_str(&list), total > rows ? ", ..." : "");
		s = STORE_AMBIGUOUS;
	}
	sb_free(&list);
	return s;
}

StoreStatus store_get_candidate(Store *st, const char *prefix, Arena *a, StoreCandidate *out)
{
	memset(out, 0, sizeof *out);
	char id[STORE_ID_LEN + 1];
	StoreStatus s = store_resolve(st, prefix, id);
	if (s != STORE_OK)
		return s;
	sqlite3_stmt *q = prep(st, "SELECT text, family, parent, origin, created_ms FROM candidates WHERE id = ?1");
	if (!q)
		return STORE_ERROR;
	bind_text(q, 1, id);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		memcpy(out->id, id, sizeof id);
		out->text = col_str(q, 0, a);
		out->family = col_str(q, 1, a);
		out->parent = col_str(q, 2, a);
		out->origin = col_str(q, 3, a);
		out->created_ms = sqlite3_column_int64(q, 4);
		s = STORE_OK;
	} else if (rc == SQLITE_DONE) {
		set_err(st, "candidate %s vanished while being read", id);
		s = STORE_NOT_FOUND;
	} else
		s = sql_fail(st, "cannot read the candidate");
	sqlite3_finalize(q);
	return s;
}

/* ------------------------------------------------------------- evaluations */

void store_eval_init(StoreEval *e)
{
	memset(e, 0, sizeof *e);
	e->predicted_us = e->median_us = e->min_us = e->max_us = e->rel_err = NAN;
}

int store_gpu_rank(StoreVerdict v)
{
	switch (v) {
	case STORE_V_HANG: return 5;
	case STORE_V_FAULT: return 4;
	case STORE_V_MISMATCH: return 3;
	case STORE_V_LAUNCH_ERROR: return 2;
	case STORE_V_OK: return 1;
	default: return 0;
	}
}

int store_eval_cmp_item(const void *x, const void *y)
{
	const StoreEval *a = x, *b = y;
	int c = strcmp(a->cand, b->cand);
	if (!c)
		c = strcmp(a->kernel, b->kernel);
	if (!c)
		c = strcmp(a->shape, b->shape);
	if (!c)
		c = (a->id > b->id) - (a->id < b->id);
	return c;
}

/* The columns every evaluation query selects, in row_eval's order. */
#define EVAL_COLS \
	"e.id, e.cand, c.family, e.kernel, e.shape, e.seed, e.target, e.gpu, e.driver, " \
	"e.compiler, e.verifier, e.cost_model, e.tactics, e.harness, e.verdict, e.message, " \
	"e.predicted_us, e.median_us, e.min_us, e.max_us, e.rel_err, e.gpu_s, e.time_ms, " \
	"e.campaign, e.worker"
#define EVAL_FROM " FROM evals e JOIN candidates c ON c.id = e.cand"

static void row_eval(sqlite3_stmt *q, Arena *a, StoreEval *e)
{
	memset(e, 0, sizeof *e);
	e->id = sqlite3_column_int64(q, 0);
	e->cand = col_str(q, 1, a);
	e->family = col_str(q, 2, a);
	e->kernel = col_str(q, 3, a);
	e->shape = col_str(q, 4, a);
	e->seed = (uint64_t)sqlite3_column_int64(q, 5);
	e->target = col_str(q, 6, a);
	e->gpu = col_str(q, 7, a);
	e->driver = col_str(q, 8, a);
	e->harness.compiler = col_str(q, 9, a);
	e->harness.verifier = col_str(q, 10, a);
	e->harness.cost_model = col_str(q, 11, a);
	e->harness.tactics = col_str(q, 12, a);
	e->harness_key = col_str(q, 13, a);
	e->verdict = store_verdict_parse((const char *)sqlite3_column_text(q, 14));
	e->message = col_str(q, 15, a);
	e->predicted_us = col_dbl(q, 16);
	e->median_us = col_dbl(q, 17);
	e->min_us = col_dbl(q, 18);
	e->max_us = col_dbl(q, 19);
	e->rel_err = col_dbl(q, 20);
	e->gpu_s = sqlite3_column_double(q, 21);
	e->time_ms = sqlite3_column_int64(q, 22);
	e->campaign = col_str(q, 23, a);
	e->worker = col_str(q, 24, a);
}

/* Insert dl's findings for eval_id starting at seq (inside a transaction). */
static StoreStatus insert_diags(Store *st, int64_t eval_id, int seq, const SourceSet *ss, const DiagList *dl)
{
	sqlite3_stmt *q = prep(st,
	        "INSERT INTO diags(eval, seq, rule, severity, message, file, line, col, len, role, resource, "
	        "barrier, pipeline, stage, phase, iter, condition, hint, rel_file, rel_line, rel_col, rel_msg) "
	        "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)");
	if (!q)
		return STORE_ERROR;
	StoreStatus s = STORE_OK;
	for (int i = 0; i < dl->n && s == STORE_OK; i++) {
		const Diag *d = dl->items[i];
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		sqlite3_bind_int64(q, 1, eval_id);
		sqlite3_bind_int(q, 2, seq + i);
		bind_text(q, 3, d->rule ? d->rule : "?");
		bind_text(q, 4, sev_name(d->sev));
		bind_text(q, 5, d->msg ? d->msg : "");
		if (d->span.file >= 0) {
			bind_text(q, 6, ss && d->span.file < ss->n ? ss->files[d->span.file].path : NULL);
			sqlite3_bind_int(q, 7, d->span.line);
			sqlite3_bind_int(q, 8, d->span.col);
			sqlite3_bind_int(q, 9, d->span.len);
		}
		bind_text(q, 10, d->role);
		bind_text(q, 11, d->resource);
		bind_text(q, 12, d->barrier);
		bind_text(q, 13, d->pipeline);
		if (d->stage >= 0)
			sqlite3_bind_int(q, 14, d->stage);
		if (d->phase >= 0)
			sqlite3_bind_int(q, 15, d->phase);
		bind_text(q, 16, d->iter);
		bind_text(q, 17, d->condition);
		bind_text(q, 18, d->hint);
		if (d->related.file >= 0) {
			bind_text(q, 19, ss && d->related.file < ss->n ? ss->files[d->related.file].path : NULL);
			sqlite3_bind_int(q, 20, d->related.line);
			sqlite3_bind_int(q, 21, d->related.col);
		}
		bind_text(q, 22, d->related_msg);
		if (sqlite3_step(q) != SQLITE_DONE)
			s = sql_fail(st, "cannot insert a diagnostic");
	}
	sqlite3_finalize(q);
	return s;
}

/* Delete every claim on a work item (inside a transaction). */
static StoreStatus drop_claim(Store *st, const char *cand, const char *kernel, const char *shape,
                              const char *hkey, const char *owner)
{
	sqlite3_stmt *q = prep(st, "DELETE FROM claims WHERE cand = ?1 AND kernel = ?2 AND shape = ?3 "
	                           "AND harness = ?4 AND (?5 IS NULL OR owner = ?5)");
	if (!q)
		return STORE_ERROR;
	bind_text(q, 1, cand);
	bind_text(q, 2, kernel);
	bind_text(q, 3, shape);
	bind_text(q, 4, hkey);
	bind_text(q, 5, owner);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot remove the claim");
}

/* Check the work-item arguments; returns the canonical shape and harness key in a. */
static StoreStatus work_item(Store *st, const char *cand, const char *kernel, const char *shape,
                             const StoreHarness *h, Arena *a, const char **cshape, const char **hkey)
{
	if (!is_hex_id(cand)) {
		set_err(st, "'%s' is not a full candidate id (%d lowercase hex digits)", cand ? cand : "(none)",
		        STORE_ID_LEN);
		return STORE_INVALID;
	}
	if (!kernel || !*kernel) {
		set_err(st, "an evaluation needs the kernel name");
		return STORE_INVALID;
	}
	if (!(*cshape = canon_shape(st, shape, a)) || !(*hkey = harness_key(st, h, a)))
		return STORE_INVALID;
	return STORE_OK;
}

StoreStatus store_add_eval(Store *st, const StoreEval *e, const SourceSet *ss, const DiagList *dl,
                           int64_t *id_out)
{
	err_reset(st);
	Arena a;
	arena_init(&a);
	const char *shape = NULL, *hkey = NULL;
	StoreStatus s = work_item(st, e->cand, e->kernel, e->shape, &e->harness, &a, &shape, &hkey);
	if (s == STORE_OK && (e->verdict <= STORE_V_NONE || e->verdict >= STORE_NVERDICT)) {
		set_err(st, "an evaluation needs a verdict (got %d)", (int)e->verdict);
		s = STORE_INVALID;
	}
	if (s == STORE_OK && (!e->harness.compiler || !*e->harness.compiler)) {
		set_err(st, "an evaluation needs the compiler version of its harness");
		s = STORE_INVALID;
	}
	if (s != STORE_OK || (s = begin(st)) != STORE_OK) {
		arena_free(&a);
		return s;
	}
	sqlite3_stmt *q = prep(st,
	        "INSERT INTO evals(cand, kernel, shape, seed, target, gpu, driver, compiler, verifier, "
	        "cost_model, tactics, harness, verdict, message, predicted_us, median_us, min_us, max_us, "
	        "rel_err, gpu_s, time_ms, campaign, worker) "
	        "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)");
	int64_t id = 0;
	if (!q)
		s = STORE_ERROR;
	else {
		bind_text(q, 1, e->cand);
		bind_text(q, 2, e->kernel);
		bind_text(q, 3, shape);
		sqlite3_bind_int64(q, 4, (sqlite3_int64)e->seed);
		bind_text(q, 5, e->target);
		bind_text(q, 6, e->gpu);
		bind_text(q, 7, e->driver);
		bind_text0(q, 8, e->harness.compiler);
		bind_text0(q, 9, e->harness.verifier);
		bind_text0(q, 10, e->harness.cost_model);
		bind_text0(q, 11, e->harness.tactics);
		bind_text(q, 12, hkey);
		bind_text(q, 13, VERDICT[e->verdict]);
		bind_text(q, 14, e->message);
		bind_dbl(q, 15, e->predicted_us);
		bind_dbl(q, 16, e->median_us);
		bind_dbl(q, 17, e->min_us);
		bind_dbl(q, 18, e->max_us);
		bind_dbl(q, 19, e->rel_err);
		sqlite3_bind_double(q, 20, isnan(e->gpu_s) ? 0 : e->gpu_s);
		sqlite3_bind_int64(q, 21, e->time_ms ? e->time_ms : now_ms());
		bind_text(q, 22, e->campaign);
		bind_text(q, 23, e->worker);
		int rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE) {
			if ((sqlite3_extended_errcode(st->db) & 0xff) == SQLITE_CONSTRAINT)
				set_err(st, "no candidate %s: add the candidate before its evaluations", e->cand);
			else
				sql_fail(st, "cannot insert the evaluation");
			s = rc == SQLITE_CONSTRAINT ? STORE_INVALID : STORE_ERROR;
		} else
			id = sqlite3_last_insert_rowid(st->db);
	}
	if (s == STORE_OK && dl)
		s = insert_diags(st, id, 0, ss, dl);
	if (s == STORE_OK)
		s = drop_claim(st, e->cand, e->kernel, shape, hkey, NULL);
	if (s == STORE_OK)
		s = commit(st);
	else
		rollback(st);
	arena_free(&a);
	if (s == STORE_OK && id_out)
		*id_out = id;
	return s;
}

StoreStatus store_find_eval(Store *st, const char *cand, const char *kernel, const char *shape,
                            const StoreHarness *h, Arena *a, StoreEval *out)
{
	err_reset(st);
	store_eval_init(out);
	Arena t;
	arena_init(&t);
	const char *cshape = NULL, *hkey = NULL;
	StoreStatus s = work_item(st, cand, kernel, shape, h, &t, &cshape, &hkey);
	sqlite3_stmt *q = NULL;
	if (s == STORE_OK) {
		StrBuf sql = {0};
		sb_puts(&sql, "SELECT " EVAL_COLS EVAL_FROM " WHERE e.cand = ?1 AND e.kernel = ?2 AND e.shape = ?3 "
		              "AND e.harness = ?4 AND e.verdict IN ");
		conclusive_list(&sql);
		sb_puts(&sql, " ORDER BY e.time_ms DESC, e.id DESC LIMIT 1");
		q = prep(st, sb_str(&sql));
		sb_free(&sql);
		if (!q)
			s = STORE_ERROR;
	}
	if (s == STORE_OK) {
		bind_text(q, 1, cand);
		bind_text(q, 2, kernel);
		bind_text(q, 3, cshape);
		bind_text(q, 4, hkey);
		int rc = sqlite3_step(q);
		if (rc == SQLITE_ROW)
			row_eval(q, a, out);
		else if (rc == SQLITE_DONE)
			s = STORE_NOT_FOUND;
		else
			s = sql_fail(st, "cannot look up the evaluation");
	}
	sqlite3_finalize(q);
	arena_free(&t);
	return s;
}

StoreStatus store_get_eval(Store *st, int64_t id, Arena *a, StoreEval *out)
{
	err_reset(st);
	store_eval_init(out);
	sqlite3_stmt *q = prep(st, "SELECT " EVAL_COLS EVAL_FROM " WHERE e.id = ?1");
	if (!q)
		return STORE_ERROR;
	sqlite3_bind_int64(q, 1, id);
	int rc = sqlite3_step(q);
	StoreStatus s = STORE_OK;
	if (rc == SQLITE_ROW)
		row_eval(q, a, out);
	else if (rc == SQLITE_DONE) {
		set_err(st, "no evaluation %lld", (long long)id);
		s = STORE_NOT_FOUND;
	} else
		s = sql_fail(st, "cannot read the evaluation");
	sqlite3_finalize(q);
	return s;
}

/* ------------------------------------------------------------- diagnostics */

StoreStatus store_add_diags(Store *st, int64_t eval_id, const SourceSet *ss, const DiagList *dl)
{
	err_reset(st);
	StoreStatus s = begin(st);
	if (s != STORE_OK)
		return s;
	sqlite3_stmt *q = prep(st, "SELECT (SELECT count(*) FROM evals WHERE id = ?1), "
	                           "(SELECT coalesce(max(seq) + 1, 0) FROM diags WHERE eval = ?1)");
	int seq = 0;
	if (!q)
		s = STORE_ERROR;
	else {
		sqlite3_bind_int64(q, 1, eval_id);
		if (sqlite3_step(q) != SQLITE_ROW)
			s = sql_fail(st, "cannot read the evaluation");
		else if (sqlite3_column_int(q, 0) == 0) {
			set_err(st, "no evaluation %lld to attach diagnostics to", (long long)eval_id);
			s = STORE_NOT_FOUND;
		} else
			seq = sqlite3_column_int(q, 1);
		sqlite3_finalize(q);
	}
	if (s == STORE_OK)
		s = insert_diags(st, eval_id, seq, ss, dl);
	if (s == STORE_OK)
		return commit(st);
	rollback(st);
	return s;
}

StoreStatus store_eval_diags(Store *st, int64_t eval_id, Arena *a, StoreDiag **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	sqlite3_stmt *q = prep(st, "SELECT seq, rule, severity, message, file, line, col, len, role, resource, "
	                           "barrier, pipeline, stage, phase, iter, condition, hint, rel_file, rel_line, "
	                           "rel_col, rel_msg, count(*) OVER () FROM diags WHERE eval = ?1 ORDER BY seq");
	if (!q)
		return STORE_ERROR;
	sqlite3_bind_int64(q, 1, eval_id);
	int rc, i = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (!*out)
			*out = arena_alloc(a, (size_t)sqlite3_column_int(q, 21) * sizeof **out);
		StoreDiag *d = &(*out)[i++];
		d->seq = sqlite3_column_int(q, 0);
		d->rule = col_str(q, 1, a);
		const char *sev = (const char *)sqlite3_column_text(q, 2);
		d->sev = sev && strcmp(sev, "error") == 0 ? SEV_ERROR
		         : sev && strcmp(sev, "warning") == 0 ? SEV_WARNING : SEV_NOTE;
		d->msg = col_str(q, 3, a);
		d->file = col_str(q, 4, a);
		d->line = col_int(q, 5, 0);
		d->col = col_int(q, 6, 0);
		d->len = col_int(q, 7, 0);
		d->role = col_str(q, 8, a);
		d->resource = col_str(q, 9, a);
		d->barrier = col_str(q, 10, a);
		d->pipeline = col_str(q, 11, a);
		d->stage = col_int(q, 12, -1);
		d->phase = col_int(q, 13, -1);
		d->iter = col_str(q, 14, a);
		d->condition = col_str(q, 15, a);
		d->hint = col_str(q, 16, a);
		d->rel_file = col_str(q, 17, a);
		d->rel_line = col_int(q, 18, 0);
		d->rel_col = col_int(q, 19, 0);
		d->rel_msg = col_str(q, 20, a);
	}
	sqlite3_finalize(q);
	*n = i;
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot read the diagnostics");
}

/* ------------------------------------------------------------------ claims */

void store_default_owner(char *buf, size_t len)
{
	char host[256] = "localhost";
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = 0;
	snprintf(buf, len, "%s:%ld", host, (long)getpid());
}

StoreStatus store_claim(Store *st, const char *cand, const char *kernel, const char *shape,
                        const StoreHarness *h, const char *owner, int64_t lease_ms)
{
	err_reset(st);
	if (!owner || !*owner) {
		set_err(st, "a claim needs an owner (see store_default_owner)");
		return STORE_INVALID;
	}
	if (lease_ms <= 0) {
		set_err(st, "a claim needs a positive lease (got %lld ms)", (long long)lease_ms);
		return STORE_INVALID;
	}
	Arena a;
	arena_init(&a);
	const char *cshape = NULL, *hkey = NULL;
	StoreStatus s = work_item(st, cand, kernel, shape, h, &a, &cshape, &hkey);
	if (s != STORE_OK || (s = begin(st)) != STORE_OK) {
		arena_free(&a);
		return s;
	}
	int64_t now = now_ms();
	/* 1. done already? */
	StrBuf sql = {0};
	sb_puts(&sql, "SELECT 1 FROM evals WHERE cand = ?1 AND kernel = ?2 AND shape = ?3 AND harness = ?4 "
	              "AND verdict IN ");
	conclusive_list(&sql);
	sb_puts(&sql, " LIMIT 1");
	sqlite3_stmt *q = prep(st, sb_str(&sql));
	sb_free(&sql);
	if (!q)
		s = STORE_ERROR;
	else {
		bind_text(q, 1, cand);
		bind_text(q, 2, kernel);
		bind_text(q, 3, cshape);
		bind_text(q, 4, hkey);
		int rc = sqlite3_step(q);
		if (rc == SQLITE_ROW)
			s = STORE_ALREADY_DONE;
		else if (rc != SQLITE_DONE)
			s = sql_fail(st, "cannot look up the evaluation");
		sqlite3_finalize(q);
	}
	/* 2. held by another live owner? */
	if (s == STORE_OK) {
		q = prep(st, "SELECT owner, expires_ms FROM claims WHERE cand = ?1 AND kernel = ?2 AND shape = ?3 "
		             "AND harness = ?4");
		if (!q)
			s = STORE_ERROR;
		else {
			bind_text(q, 1, cand);
			bind_text(q, 2, kernel);
			bind_text(q, 3, cshape);
			bind_text(q, 4, hkey);
			int rc = sqlite3_step(q);
			if (rc == SQLITE_ROW) {
				const char *o = (const char *)sqlite3_column_text(q, 0);
				if (strcmp(o, owner) != 0 && sqlite3_column_int64(q, 1) > now)
					s = STORE_BUSY;
			} else if (rc != SQLITE_DONE)
				s = sql_fail(st, "cannot read the claims");
			sqlite3_finalize(q);
		}
	}
	/* 3. take it (new, expired, or our own renewal) */
	if (s == STORE_OK) {
		q = prep(st, "INSERT INTO claims(cand, kernel, shape, harness, owner, claimed_ms, expires_ms) "
		             "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(cand, kernel, shape, harness) DO UPDATE "
		             "SET owner = excluded.owner, claimed_ms = excluded.claimed_ms, "
		             "expires_ms = excluded.expires_ms");
		if (!q)
			s = STORE_ERROR;
		else {
			bind_text(q, 1, cand);
			bind_text(q, 2, kernel);
			bind_text(q, 3, cshape);
			bind_text(q, 4, hkey);
			bind_text(q, 5, owner);
			sqlite3_bind_int64(q, 6, now);
			sqlite3_bind_int64(q, 7, now + lease_ms);
			int rc = sqlite3_step(q);
			sqlite3_finalize(q);
			if (rc != SQLITE_DONE) {
				if (rc == SQLITE_CONSTRAINT) {
					set_err(st, "no candidate %s: add the candidate before claiming its work", cand);
					s = STORE_INVALID;
				} else
					s = sql_fail(st, "cannot write the claim");
			}
		}
	}
	arena_free(&a);
	if (s == STORE_OK) {
		s = commit(st);
		return s == STORE_OK ? STORE_CLAIMED : s;
	}
	rollback(st);
	return s;
}

StoreStatus store_release(Store *st, const char *cand, const char *kernel, const char *shape,
                          const StoreHarness *h, const char *owner)
{
	err_reset(st);
	if (!owner || !*owner) {
		set_err(st, "releasing a claim needs its owner");
		return STORE_INVALID;
	}
	Arena a;
	arena_init(&a);
	const char *cshape = NULL, *hkey = NULL;
	StoreStatus s = work_item(st, cand, kernel, shape, h, &a, &cshape, &hkey);
	if (s == STORE_OK && (s = begin(st)) == STORE_OK) {
		s = drop_claim(st, cand, kernel, cshape, hkey, owner);
		bool dropped = s == STORE_OK && sqlite3_changes(st->db) > 0;
		if (s == STORE_OK)
			s = commit(st);
		else
			rollback(st);
		if (s == STORE_OK && !dropped)
			s = STORE_NOT_FOUND;
	}
	arena_free(&a);
	return s;
}

StoreStatus store_release_all(Store *st, const char *owner, int *n)
{
	err_reset(st);
	if (n)
		*n = 0;
	if (!owner || !*owner) {
		set_err(st, "releasing claims needs their owner");
		return STORE_INVALID;
	}
	StoreStatus s = begin(st);
	if (s != STORE_OK)
		return s;
	sqlite3_stmt *q = prep(st, "DELETE FROM claims WHERE owner = ?1");
	int dropped = 0;
	if (!q)
		s = STORE_ERROR;
	else {
		bind_text(q, 1, owner);
		if (sqlite3_step(q) != SQLITE_DONE)
			s = sql_fail(st, "cannot remove the claims");
		else
			dropped = sqlite3_changes(st->db);
		sqlite3_finalize(q);
	}
	if (s == STORE_OK)
		s = commit(st);
	else
		rollback(st);
	if (s == STORE_OK && n)
		*n = dropped;
	return s;
}

/* ----------------------------------------------------------------- queries */

/* A WHERE clause built from a filter, with its bound values. */
typedef struct Where {
	StrBuf sql;
	const char *val[16];
	int n;
} Where;

static void where_add(Where *w, const char *col, const char *val)
{
	sb_printf(&w->sql, " %s %s = ?%d", w->n ? "AND" : "WHERE", col, w->n + 1);
	w->val[w->n++] = val;
}

/* Turn f into w (temporaries in a); STORE_OK or a bad filter. */
static StoreStatus where_build(Store *st, const StoreFilter *f, Arena *a, Where *w, const char *extra)
{
	memset(w, 0, sizeof *w);
	static const StoreFilter none = {0};
	if (!f)
		f = &none;
	if (f->family)
		where_add(w, "c.family", f->family);
	if (f->campaign)
		where_add(w, "e.campaign", f->campaign);
	if (f->cand) {
		char *id = arena_alloc(a, STORE_ID_LEN + 1);
		StoreStatus s = store_resolve(st, f->cand, id);
		if (s != STORE_OK)
			return s;
		where_add(w, "e.cand", id);
	}
	if (f->kernel)
		where_add(w, "e.kernel", f->kernel);
	if (f->shape) {
		const char *sh = canon_shape(st, f->shape, a);
		if (!sh)
			return STORE_INVALID;
		where_add(w, "e.shape", sh);
	}
	if (f->verdict) {
		if (store_verdict_parse(f->verdict) == STORE_V_NONE) {
			set_err(st, "'%s' is not a verdict (ok, mismatch, hang, fault, compile_error, launch_error, "
			            "refused, rejected, no_gpu, internal_error, dry_run)", f->verdict);
			return STORE_INVALID;
		}
		where_add(w, "e.verdict", f->verdict);
	}
	if (f->harness)
		where_add(w, "e.harness", f->harness);
	if (f->gpu)
		where_add(w, "e.gpu", f->gpu);
	if (extra)
		sb_printf(&w->sql, " %s %s", w->n ? "AND" : "WHERE", extra);
	sb_str(&w->sql);
	return STORE_OK;
}

static void where_bind(sqlite3_stmt *q, const Where *w)
{
	for (int i = 0; i < w->n; i++)
		bind_text(q, i + 1, w->val[i]);
}

/* Run an evaluation query (EVAL_COLS first) and collect the rows into a. */
static StoreStatus collect_evals(Store *st, const char *sql, const Where *w, Arena *a, StoreEval **out, int *n)
{
	sqlite3_stmt *q = prep(st, sql);
	if (!q)
		return STORE_ERROR;
	where_bind(q, w);
	int cap = 0, rc;
	StoreEval *v = NULL;
	*n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, (size_t)cap * sizeof *v);
		}
		row_eval(q, a, &v[(*n)++]);
	}
	sqlite3_finalize(q);
	*out = arena_alloc(a, (size_t)(*n ? *n : 1) * sizeof **out);
	if (*n)
		memcpy(*out, v, (size_t)*n * sizeof *v);
	free(v);
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot list the evaluations");
}

StoreStatus store_list_evals(Store *st, const StoreFilter *f, Arena *a, StoreEval **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	Arena t;
	arena_init(&t);
	Where w;
	StoreStatus s = where_build(st, f, &t, &w, NULL);
	if (s == STORE_OK) {
		StrBuf sql = {0};
		sb_printf(&sql, "SELECT " EVAL_COLS EVAL_FROM "%s ORDER BY e.time_ms DESC, e.id DESC", sb_str(&w.sql));
		if (f && f->limit > 0)
			sb_printf(&sql, " LIMIT %d", f->limit);
		s = collect_evals(st, sb_str(&sql), &w, a, out, n);
		sb_free(&sql);
	}
	sb_free(&w.sql);
	arena_free(&t);
	return s;
}

StoreStatus store_best(Store *st, const StoreFilter *f, Arena *a, StoreEval *out)
{
	err_reset(st);
	store_eval_init(out);
	Arena t;
	arena_init(&t);
	Where w;
	StoreStatus s = where_build(st, f, &t, &w, "e.verdict = 'ok' AND e.median_us IS NOT NULL");
	if (s == STORE_OK) {
		StrBuf sql = {0};
		sb_printf(&sql, "SELECT " EVAL_COLS EVAL_FROM "%s ORDER BY e.median_us, e.id LIMIT 1", sb_str(&w.sql));
		StoreEval *v = NULL;
		int n = 0;
		s = collect_evals(st, sb_str(&sql), &w, a, &v, &n);
		sb_free(&sql);
		if (s == STORE_OK && n == 0) {
			set_err(st, "no timed ok evaluation matches");
			s = STORE_NOT_FOUND;
		} else if (s == STORE_OK)
			*out = v[0];
	}
	sb_free(&w.sql);
	arena_free(&t);
	return s;
}

StoreStatus store_frontier(Store *st, const StoreFilter *f, Arena *a, StoreEval **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	Arena t;
	arena_init(&t);
	Where w;
	StoreStatus s = where_build(st, f, &t, &w, "e.verdict = 'ok' AND e.median_us IS NOT NULL");
	if (s == STORE_OK) {
		StrBuf sql = {0};
		sb_printf(&sql,
		          "SELECT * FROM (SELECT " EVAL_COLS ", row_number() OVER (PARTITION BY c.family, e.kernel, "
		          "e.shape ORDER BY e.median_us, e.id) AS rn" EVAL_FROM "%s) WHERE rn = 1 "
		          "ORDER BY family, kernel, shape",
		          sb_str(&w.sql));
		s = collect_evals(st, sb_str(&sql), &w, a, out, n);
		sb_free(&sql);
	}
	sb_free(&w.sql);
	arena_free(&t);
	return s;
}

StoreStatus store_counts(Store *st, const StoreFilter *f, Arena *a, StoreCounts **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	Arena t;
	arena_init(&t);
	Where w;
	StoreStatus s = where_build(st, f, &t, &w, NULL);
	sqlite3_stmt *q = NULL;
	if (s == STORE_OK) {
		StrBuf sql = {0};
		sb_printf(&sql, "SELECT e.campaign, e.verdict, count(*), total(e.gpu_s)" EVAL_FROM
		                "%s GROUP BY e.campaign, e.verdict ORDER BY e.campaign, e.verdict",
		          sb_str(&w.sql));
		q = prep(st, sb_str(&sql));
		sb_free(&sql);
		if (!q)
			s = STORE_ERROR;
	}
	StoreCounts *v = NULL;
	int cap = 0, len = 0;
	if (s == STORE_OK) {
		where_bind(q, &w);
		int rc;
		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			const char *camp = (const char *)sqlite3_column_text(q, 0);
			StoreCounts *cur = len ? &v[len - 1] : NULL;
			bool same = cur && ((!camp && !cur->campaign) ||
			                    (camp && cur->campaign && strcmp(camp, cur->campaign) == 0));
			if (!same) {
				if (len == cap) {
					cap = cap ? cap * 2 : 8;
					v = xrealloc(v, (size_t)cap * sizeof *v);
				}
				cur = &v[len++];
				memset(cur, 0, sizeof *cur);
				cur->campaign = col_str(q, 0, a);
			}
			StoreVerdict vd = store_verdict_parse((const char *)sqlite3_column_text(q, 1));
			int c = sqlite3_column_int(q, 2);
			cur->n[vd] += c;   /* a name this binary does not know lands in n[0] */
			cur->total += c;
			cur->gpu_s += sqlite3_column_double(q, 3);
		}
		if (rc != SQLITE_DONE)
			s = sql_fail(st, "cannot count the evaluations");
	}
	if (s == STORE_OK) {
		*out = arena_alloc(a, (size_t)(len ? len : 1) * sizeof **out);
		if (len)
			memcpy(*out, v, (size_t)len * sizeof *v);
		*n = len;
	}
	free(v);
	sqlite3_finalize(q);
	sb_free(&w.sql);
	arena_free(&t);
	return s;
}

/* -------------------------------------------------------------- gate runs */

static const char *const OUTCOME[STORE_NOUTCOME] = {NULL, "accepted", "rejected", "refused"};
static const char *const IMPACT[STORE_NIMPACT] = {
	NULL, "true_positive", "false_positive", "unrun", "newly_accepted", "rule_changed",
};

const char *store_outcome_name(StoreOutcome o)
{
	return o > STORE_OUT_NONE && o < STORE_NOUTCOME ? OUTCOME[o] : "?";
}

StoreOutcome store_outcome_parse(const char *s)
{
	for (int o = 1; s && o < STORE_NOUTCOME; o++)
		if (strcmp(s, OUTCOME[o]) == 0)
			return (StoreOutcome)o;
	return STORE_OUT_NONE;
}

const char *store_impact_name(StoreImpactKind k)
{
	return k > STORE_IMP_NONE && k < STORE_NIMPACT ? IMPACT[k] : "?";
}

StoreImpactKind store_impact_parse(const char *s)
{
	for (int k = 1; s && k < STORE_NIMPACT; k++)
		if (strcmp(s, IMPACT[k]) == 0)
			return (StoreImpactKind)k;
	return STORE_IMP_NONE;
}

/* Check one impact row; its canonical shape into a. */
static StoreStatus impact_ok(Store *st, const StoreImpact *r, int i, Arena *a, const char **shape)
{
	if (!is_hex_id(r->cand)) {
		set_err(st, "impact row %d: '%s' is not a full candidate id", i, r->cand ? r->cand : "(none)");
		return STORE_INVALID;
	}
	if (!r->kernel || !*r->kernel || !r->old_harness) {
		set_err(st, "impact row %d: needs the kernel and the old harness", i);
		return STORE_INVALID;
	}
	if (r->old_outcome <= STORE_OUT_NONE || r->old_outcome >= STORE_NOUTCOME || r->new_outcome <= STORE_OUT_NONE ||
	    r->new_outcome >= STORE_NOUTCOME || r->impact <= STORE_IMP_NONE || r->impact >= STORE_NIMPACT ||
	    r->gpu_verdict < STORE_V_NONE || r->gpu_verdict >= STORE_NVERDICT) {
		set_err(st, "impact row %d: needs an old outcome, a new outcome and an impact", i);
		return STORE_INVALID;
	}
	*shape = canon_shape(st, r->shape, a);
	return *shape ? STORE_OK : STORE_INVALID;
}

StoreStatus store_add_gate_run(Store *st, const StoreGateRun *run, const StoreImpact *rows, int n,
                               int64_t *id_out)
{
	err_reset(st);
	if (!run->harness.compiler || !*run->harness.compiler) {
		set_err(st, "a gate run needs the compiler version of its harness");
		return STORE_INVALID;
	}
	Arena a;
	arena_init(&a);
	const char *hkey = harness_key(st, &run->harness, &a);
	StoreStatus s = hkey ? STORE_OK : STORE_INVALID;
	const char **shapes = n > 0 ? arena_alloc(&a, (size_t)n * sizeof *shapes) : NULL;
	for (int i = 0; i < n && s == STORE_OK; i++)
		s = impact_ok(st, &rows[i], i, &a, &shapes[i]);
	if (s != STORE_OK || (s = begin(st)) != STORE_OK) {
		arena_free(&a);
		return s;
	}
	int64_t id = 0;
	sqlite3_stmt *q = prep(st, "INSERT INTO gate_runs(time_ms, compiler, verifier, cost_model, tactics, harness, "
	                           "items, changed, worker) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)");
	if (!q)
		s = STORE_ERROR;
	else {
		sqlite3_bind_int64(q, 1, run->time_ms ? run->time_ms : now_ms());
		bind_text0(q, 2, run->harness.compiler);
		bind_text0(q, 3, run->harness.verifier);
		bind_text0(q, 4, run->harness.cost_model);
		bind_text0(q, 5, run->harness.tactics);
		bind_text(q, 6, hkey);
		sqlite3_bind_int(q, 7, run->items);
		sqlite3_bind_int(q, 8, n);
		bind_text(q, 9, run->worker);
		if (sqlite3_step(q) != SQLITE_DONE)
			s = sql_fail(st, "cannot insert the gate run");
		else
			id = sqlite3_last_insert_rowid(st->db);
		sqlite3_finalize(q);
	}
	q = s == STORE_OK ? prep(st, "INSERT INTO gate_impact(run, seq, cand, kernel, shape, eval, old_harness, "
	                             "old_outcome, old_rule, new_outcome, new_rule, rule, impact, gpu_verdict, message) "
	                             "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)")
	                  : NULL;
	if (s == STORE_OK && !q)
		s = STORE_ERROR;
	for (int i = 0; i < n && s == STORE_OK; i++) {
		const StoreImpact *r = &rows[i];
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_int(q, 2, i);
		bind_text(q, 3, r->cand);
		bind_text(q, 4, r->kernel);
		bind_text(q, 5, shapes[i]);
		if (r->eval > 0)
			sqlite3_bind_int64(q, 6, r->eval);
		bind_text(q, 7, r->old_harness);
		bind_text(q, 8, OUTCOME[r->old_outcome]);
		bind_text(q, 9, r->old_rule);
		bind_text(q, 10, OUTCOME[r->new_outcome]);
		bind_text(q, 11, r->new_rule);
		bind_text(q, 12, r->rule);
		bind_text(q, 13, IMPACT[r->impact]);
		bind_text(q, 14, r->gpu_verdict > STORE_V_NONE ? VERDICT[r->gpu_verdict] : NULL);
		bind_text(q, 15, r->message);
		if (sqlite3_step(q) != SQLITE_DONE) {
			if ((sqlite3_extended_errcode(st->db) & 0xff) == SQLITE_CONSTRAINT) {
				set_err(st, "impact row %d: no candidate %s or no evaluation %lld in the store", i, r->cand,
				        (long long)r->eval);
				s = STORE_INVALID;
			} else
				s = sql_fail(st, "cannot insert an impact row");
		}
	}
	sqlite3_finalize(q);
	if (s == STORE_OK)
		s = commit(st);
	else
		rollback(st);
	arena_free(&a);
	if (s == STORE_OK && id_out)
		*id_out = id;
	return s;
}

StoreStatus store_list_gate_runs(Store *st, int limit, Arena *a, StoreGateRun **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	StrBuf sql = {0};
	sb_puts(&sql, "SELECT id, time_ms, compiler, verifier, cost_model, tactics, harness, items, changed, worker "
	              "FROM gate_runs ORDER BY time_ms DESC, id DESC");
	if (limit > 0)
		sb_printf(&sql, " LIMIT %d", limit);
	sqlite3_stmt *q = prep(st, sb_str(&sql));
	sb_free(&sql);
	if (!q)
		return STORE_ERROR;
	int cap = 0, len = 0, rc;
	StoreGateRun *v = NULL;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, (size_t)cap * sizeof *v);
		}
		StoreGateRun *r = &v[len++];
		memset(r, 0, sizeof *r);
		r->id = sqlite3_column_int64(q, 0);
		r->time_ms = sqlite3_column_int64(q, 1);
		r->harness.compiler = col_str(q, 2, a);
		r->harness.verifier = col_str(q, 3, a);
		r->harness.cost_model = col_str(q, 4, a);
		r->harness.tactics = col_str(q, 5, a);
		r->harness_key = col_str(q, 6, a);
		r->items = sqlite3_column_int(q, 7);
		r->changed = sqlite3_column_int(q, 8);
		r->worker = col_str(q, 9, a);
	}
	sqlite3_finalize(q);
	*out = arena_alloc(a, (size_t)(len ? len : 1) * sizeof **out);
	if (len)
		memcpy(*out, v, (size_t)len * sizeof *v);
	free(v);
	*n = len;
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot list the gate runs");
}

StoreStatus store_list_impact(Store *st, const char *cand, int64_t run, Arena *a, StoreImpact **out, int *n)
{
	err_reset(st);
	*out = NULL;
	*n = 0;
	char id[STORE_ID_LEN + 1] = "";
	if (cand) {
		StoreStatus s = store_resolve(st, cand, id);
		if (s != STORE_OK)
			return s;
	}
	sqlite3_stmt *q = prep(st, "SELECT i.run, r.time_ms, r.harness, i.seq, i.cand, i.kernel, i.shape, i.eval, "
	                           "i.old_harness, i.old_outcome, i.old_rule, i.new_outcome, i.new_rule, i.rule, "
	                           "i.impact, i.gpu_verdict, i.message FROM gate_impact i JOIN gate_runs r ON r.id = i.run "
	                           "WHERE (?1 IS NULL OR i.cand = ?1) AND (?2 = 0 OR i.run = ?2) "
	                           "ORDER BY r.time_ms, i.run, i.seq");
	if (!q)
		return STORE_ERROR;
	bind_text(q, 1, cand ? id : NULL);
	sqlite3_bind_int64(q, 2, run);
	int cap = 0, len = 0, rc;
	StoreImpact *v = NULL;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, (size_t)cap * sizeof *v);
		}
		StoreImpact *r = &v[len++];
		memset(r, 0, sizeof *r);
		r->run = sqlite3_column_int64(q, 0);
		r->run_ms = sqlite3_column_int64(q, 1);
		r->run_harness = col_str(q, 2, a);
		r->seq = sqlite3_column_int(q, 3);
		r->cand = col_str(q, 4, a);
		r->kernel = col_str(q, 5, a);
		r->shape = col_str(q, 6, a);
		r->eval = sqlite3_column_type(q, 7) == SQLITE_NULL ? 0 : sqlite3_column_int64(q, 7);
		r->old_harness = col_str(q, 8, a);
		r->old_outcome = store_outcome_parse((const char *)sqlite3_column_text(q, 9));
		r->old_rule = col_str(q, 10, a);
		r->new_outcome = store_outcome_parse((const char *)sqlite3_column_text(q, 11));
		r->new_rule = col_str(q, 12, a);
		r->rule = col_str(q, 13, a);
		r->impact = store_impact_parse((const char *)sqlite3_column_text(q, 14));
		r->gpu_verdict = store_verdict_parse((const char *)sqlite3_column_text(q, 15));
		r->message = col_str(q, 16, a);
	}
	sqlite3_finalize(q);
	*out = arena_alloc(a, (size_t)(len ? len : 1) * sizeof **out);
	if (len)
		memcpy(*out, v, (size_t)len * sizeof *v);
	free(v);
	*n = len;
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(st, "cannot list the impact rows");
}
