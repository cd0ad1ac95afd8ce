/* Opening an archive: its location, the SQLite settings every connection
 * uses, and the schema with its migrations (archive.h). */
#include "archive/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/wz_io.h"
#include "common/wz_str.h"

/* Each entry migrates from version i to i + 1, inside one transaction.
 * Never edit a released entry: add a new one. */
static const char *const migrations[] = {
	/* 0 -> 1: runs, their inputs, and the figures of their result tables. */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  command TEXT NOT NULL,"
	"  args TEXT NOT NULL,"       /* JSON array of the arguments */
	"  version TEXT NOT NULL,"    /* program version */
	"  started TEXT NOT NULL,"    /* UTC ISO 8601 */
	"  finished TEXT NOT NULL,"
	"  status TEXT NOT NULL);"
	"CREATE TABLE inputs ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  kind TEXT NOT NULL,"       /* scenario, catalog, trace, profile, seed, option */
	"  name TEXT NOT NULL,"
	"  origin TEXT NOT NULL,"     /* absolute path or embedded:NAME */
	"  hash TEXT,"                /* XXH3-64 of the bytes used, hex */
	"  size INTEGER,"
	"  content TEXT,"             /* the text itself for small text inputs */
	"  PRIMARY KEY (run, kind, name));"
	"CREATE TABLE figures ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  tbl TEXT NOT NULL, row_key TEXT NOT NULL, col TEXT NOT NULL,"
	"  value REAL, text TEXT,"
	"  PRIMARY KEY (run, tbl, row_key, col));",
	/* 1 -> 2: codec measurements, simulation results, fleets. */
	"CREATE TABLE codec_measurements ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  window_name TEXT NOT NULL, format TEXT NOT NULL, metric TEXT NOT NULL,"
	"  value REAL NOT NULL, ci_low REAL, ci_high REAL,"
	"  bits_per_value REAL,"      /* counted from the bytes the encoder wrote */
	"  trace_hash TEXT,"
	"  PRIMARY KEY (run, window_name, format, metric));"
	"CREATE TABLE sim_results ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  format TEXT NOT NULL, metric TEXT NOT NULL, value REAL, unit TEXT,"
	"  PRIMARY KEY (run, format, metric));"
	"CREATE TABLE sim_series ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  format TEXT NOT NULL, series TEXT NOT NULL, seq INTEGER NOT NULL,"
	"  x REAL, y REAL,"
	"  PRIMARY KEY (run, format, series, seq));"
	"CREATE TABLE fleets ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  format TEXT NOT NULL, method TEXT NOT NULL,"
	"  gpus INTEGER, replicas INTEGER,"
	"  reserved_usd_year REAL, ondemand_usd_year REAL,"
	"  saving_reserved REAL, saving_ondemand REAL,"
	"  PRIMARY KEY (run, format, method));"
	"CREATE INDEX figures_by_cell ON figures (tbl, row_key, col);",
};

_Static_assert(sizeof migrations / sizeof migrations[0] == WZA_SCHEMA_VERSION,
	       "one migration per schema version");

wz_err wza_sqlite_err(sqlite3 *db, int rc, const char *path, const char *doing, wz_diag *diag)
{
	return wza_sqlite_err_detail(rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), path, doing,
				     diag);
}

wz_err wza_sqlite_err_detail(int rc, const char *detail, const char *path, const char *doing,
			     wz_diag *diag)
{
	switch (rc & 0xff) {
	case SQLITE_READONLY:
		return wz_diag_set(diag, WZ_ERR_IO,
				   "%s: cannot %s: the archive is read-only (%s); nothing stored "
				   "before was changed",
				   path, doing, detail);
	case SQLITE_FULL:
		return wz_diag_set(diag, WZ_ERR_IO,
				   "%s: cannot %s: the disk is full (%s); nothing stored before "
				   "was changed",
				   path, doing, detail);
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return wz_diag_set(diag, WZ_ERR_BUSY,
				   "%s: cannot %s: the archive stayed locked by another process (%s)",
				   path, doing, detail);
	case SQLITE_NOTADB:
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a wzplan archive (not an SQLite "
						       "database)", path);
	case SQLITE_CORRUPT:
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: the archive is damaged (%s)", path,
				   detail);
	case SQLITE_NOMEM:
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	case SQLITE_INTERRUPT:
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: cannot %s: a query ran past %d s and was stopped (a view "
				   "that never ends, or not an archive wzplan wrote)",
				   path, doing, WZA_QUERY_LIMIT_S);
	case SQLITE_ERROR:
	case SQLITE_MISMATCH:
	case SQLITE_CONSTRAINT:
		/* Our own statements are fixed: these come from an archive whose
		 * tables are not as wzplan makes them (a column missing, a type
		 * or a constraint changed), which is bad input like a damaged one. */
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: cannot %s: its tables are not as wzplan makes them (%s)",
				   path, doing, detail);
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
	case SQLITE_PERM:
	default:
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot %s: %s", path, doing, detail);
	}
}

wz_err wza_exec(wza_archive *a, const char *sql, const char *doing, wz_diag *diag)
{
	int rc = sqlite3_exec(a->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, doing, diag);
	return WZ_OK;
}

static int pragma_int(wza_archive *a, const char *pragma, int *out)
{
	sqlite3_stmt *st;
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA %s", pragma);
	int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int count_schema_objects(wza_archive *a, int *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

wz_err wza_default_path(char **out, wz_diag *diag)
{
	*out = NULL;
	const char *env = getenv("WZPLAN_ARCHIVE");
	if (env && *env) {
		*out = strdup(env);
		return *out ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	char path[4096];
	/* The XDG spec says a relative $XDG_DATA_HOME is invalid and ignored. */
	if (xdg && xdg[0] == '/')
		snprintf(path, sizeof path, "%s/wzplan/" WZA_DEFAULT_NAME, xdg);
	else if (home && home[0] == '/')
		snprintf(path, sizeof path, "%s/.local/share/wzplan/" WZA_DEFAULT_NAME, home);
	else
		return wz_diag_set(diag, WZ_ERR_MISSING,
				   "no archive location: neither $XDG_DATA_HOME nor $HOME is set; "
				   "choose one with --archive FILE or $WZPLAN_ARCHIVE");
	*out = strdup(path);
	return *out ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
}

/* Brings the schema from its version to `target`, each step in its own
 * BEGIN IMMEDIATE transaction that re-reads the version, so two processes
 * opening a new archive at once do not both migrate it. */
static wz_err migrate(wza_archive *a, int target, wz_diag *diag)
{
	for (;;) {
		wz_err err = wza_exec(a, "BEGIN IMMEDIATE", "upgrade the archive", diag);
		if (err)
			return err;
		int version = 0, app = 0, rc;
		if ((rc = pragma_int(a, "user_version", &version)) != SQLITE_OK ||
		    (rc = pragma_int(a, "application_id", &app)) != SQLITE_OK) {
			err = wza_sqlite_err(a->db, rc, a->path, "read the archive", diag);
			sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
			return err;
		}
		if (version >= target) {
			sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
			return WZ_OK;
		}
		char pragmas[128];
		snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
			 (int)WZA_APPLICATION_ID, version + 1);
		err = wza_exec(a, migrations[version], "upgrade the archive", diag);
		if (!err)
			err = wza_exec(a, pragmas, "upgrade the archive", diag);
		if (!err)
			err = wza_exec(a, "COMMIT", "upgrade the archive", diag);
		if (err) {
			sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
			return err;
		}
	}
}

wz_err wza_check_tables(wza_archive *a, int version, wz_diag *diag)
{
	static const char *const sql =
		"SELECT name, type FROM sqlite_master WHERE type != 'table' AND name IN "
		"('runs', 'inputs', 'figures', 'codec_measurements', 'sim_results', "
		"'sim_series', 'fleets')";
	if (version < 1)
		return WZ_OK;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, "read the archive", diag);
	wz_err err = WZ_OK;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: not a wzplan archive: '%.40s' is a %.20s, where wzplan keeps a "
				  "table",
				  a->path, (const char *)sqlite3_column_text(st, 0),
				  (const char *)sqlite3_column_text(st, 1));
	else if (rc != SQLITE_DONE)
		err = wza_sqlite_err(a->db, rc, a->path, "read the archive", diag);
	sqlite3_finalize(st);
	return err;
}

static long query_limit_ms(void)
{
	/* Test hook: WZ_ARCHIVE_TEST_QUERY_MS=N stops statements after N ms. */
	const char *ms = getenv("WZ_ARCHIVE_TEST_QUERY_MS");
	return ms && *ms ? atol(ms) : WZA_QUERY_LIMIT_S * 1000L;
}

static int statement_began(unsigned type, void *ctx, void *p, void *x)
{
	(void)type, (void)p, (void)x;
	wza_archive *a = ctx;
	clock_gettime(CLOCK_MONOTONIC, &a->stmt_start);
	return 0;
}

static int past_limit(void *ctx)
{
	const wza_archive *a = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (long)(now.tv_sec - a->stmt_start.tv_sec) * 1000 +
		  (now.tv_nsec - a->stmt_start.tv_nsec) / 1000000;
	return ms > query_limit_ms();
}

void wza_limit_queries(wza_archive *a)
{
	if (!a->db)
		return;
	clock_gettime(CLOCK_MONOTONIC, &a->stmt_start);
	/* A statement's clock starts when it begins to run (SQLITE_TRACE_STMT);
	 * the check runs every 1000 virtual machine steps. */
	sqlite3_trace_v2(a->db, SQLITE_TRACE_STMT, statement_began, a);
	sqlite3_progress_handler(a->db, 1000, past_limit, a);
}

/* Test hook: WZ_ARCHIVE_TEST_MAX_PAGES=N caps the file at N pages, so a
 * write fails with SQLITE_FULL as on a full disk. */
static void apply_test_limits(wza_archive *a)
{
	const char *pages = getenv("WZ_ARCHIVE_TEST_MAX_PAGES");
	if (pages && *pages) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA max_page_count = %ld", atol(pages));
		sqlite3_exec(a->db, sql, NULL, NULL, NULL);
	}
}

/* Switching to WAL needs the file to itself for a moment, and SQLite does
 * not call the busy handler for it: two processes creating one archive at
 * once retry here instead of failing. */
static wz_err set_wal(wza_archive *a, wz_diag *diag)
{
	for (int tries = 0;; tries++) {
		int rc = sqlite3_exec(a->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return WZ_OK;
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) || tries >= 750)
			return wza_sqlite_err(a->db, rc, a->path, "set up the archive", diag);
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static int reopen_immutable(wza_archive *a)
{
	wz_buf uri = { 0 };
	wz_buf_puts(&uri, "file:");
	for (const unsigned char *p = (const unsigned char *)a->path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20)
			wz_buf_printf(&uri, "%%%02X", *p);
		else
			wz_buf_append(&uri, (const char *)p, 1);
	}
	wz_buf_puts(&uri, "?immutable=1");
	if (uri.failed) {
		wz_buf_free(&uri);
		return SQLITE_NOMEM;
	}
	sqlite3_close(a->db);
	a->db = NULL;
	a->readonly = 1;
	int rc = sqlite3_open_v2(wz_buf_str(&uri), &a->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
				 NULL);
	wz_buf_free(&uri);
	wza_limit_queries(a);
	return rc;
}

static wz_err open_at(const char *path, int create, int target, wza_archive **out,
		      wz_diag *diag)
{
	*out = NULL;
	struct stat st;
	if (!create && stat(path, &st) != 0)
		return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "%s: no archive there (%s)", path,
				   strerror(errno));
	if (create) {
		char *folder = strdup(path);
		if (!folder)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		char *slash = strrchr(folder, '/');
		wz_err err = WZ_OK;
		if (slash && slash != folder) {
			*slash = '\0';
			err = wz_mkdir_p(folder, diag);
		}
		free(folder);
		if (err)
			return err;
	}
	wza_archive *a = calloc(1, sizeof *a);
	if (!a || !(a->path = strdup(path))) {
		free(a);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
	int rc = sqlite3_open_v2(path, &a->db, flags, NULL);
	if (rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM) {
		/* A read-only file still serves list, show, export and verify. */
		sqlite3_close(a->db);
		a->db = NULL;
		rc = sqlite3_open_v2(path, &a->db, SQLITE_OPEN_READONLY, NULL);
		a->readonly = 1;
	}
	wza_limit_queries(a);
	wz_err err = WZ_OK;
	if (rc != SQLITE_OK) {
		err = wza_sqlite_err(a->db, rc, path, "open the archive", diag);
		wza_close(a);
		return err;
	}
	sqlite3_busy_timeout(a->db, 15000);
	int version = 0, app = 0, nobjects = 0;
	/* The version, application id and schema count from one snapshot:
	 * read one by one, another process creating the archive could commit
	 * between them, and a new archive would look like another program's
	 * database (its tables, no application id yet). */
	int snapshot = sqlite3_exec(a->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	rc = pragma_int(a, "user_version", &version);
	if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) {
		/* A WAL archive in a folder we cannot write: SQLite cannot make
		 * its shared-memory file, but nobody can be writing there, so the
		 * file is read as immutable. */
		rc = reopen_immutable(a);
		if (rc == SQLITE_OK)
			rc = pragma_int(a, "user_version", &version);
	}
	if (!a->readonly && sqlite3_db_readonly(a->db, "main") == 1)
		a->readonly = 1;
	if (rc == SQLITE_OK)
		rc = pragma_int(a, "application_id", &app);
	if (rc == SQLITE_OK && app == 0)
		rc = count_schema_objects(a, &nobjects);
	if (snapshot)
		sqlite3_exec(a->db, "END", NULL, NULL, NULL); /* fails harmlessly after a reopen */
	if (rc != SQLITE_OK) {
		err = wza_sqlite_err(a->db, rc, path, "read the archive", diag);
	} else if (app != 0 && app != (int)WZA_APPLICATION_ID) {
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: not a wzplan archive (SQLite application_id 0x%08x)", path,
				  (unsigned)app);
	} else if (app == 0 && version != 0) {
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: not a wzplan archive (another program's SQLite database)",
				  path);
	} else if (app == 0 && nobjects > 0) {
		/* Only an empty file is ever made an archive: another program's
		 * database is left exactly as it was. */
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: not a wzplan archive (an SQLite database with %d tables or "
				  "indexes of another program; left unchanged)",
				  path, nobjects);
	} else if (app == 0 && !create) {
		err = wz_diag_set(diag, WZ_ERR_NOT_FOUND,
				  "%s: an empty file, not yet a wzplan archive (a command that "
				  "stores a run makes it one); left unchanged",
				  path);
	} else if (version > WZA_SCHEMA_VERSION) {
		err = wz_diag_set(diag, WZ_ERR_VERSION,
				  "%s: archive schema version %d is newer than this wzplan "
				  "understands (%d); use a newer wzplan, or another archive",
				  path, version, WZA_SCHEMA_VERSION);
	} else if (version < target && a->readonly) {
		err = wz_diag_set(diag, WZ_ERR_IO,
				  "%s: the archive is read-only and at schema version %d; this "
				  "wzplan needs to upgrade it to %d first",
				  path, version, target);
	} else if (!(err = wza_check_tables(a, version, diag))) {
		if (!a->readonly && version == 0) {
			/* WAL lets readers work while one process writes; set once, it
			 * stays with the file. */
			err = set_wal(a, diag);
		}
		if (!err && !a->readonly)
			err = wza_exec(a, "PRAGMA foreign_keys = ON", "set up the archive", diag);
		if (!err && version < target)
			err = migrate(a, target, diag);
	}
	if (err) {
		wza_close(a);
		return err;
	}
	apply_test_limits(a);
	*out = a;
	return WZ_OK;
}

wz_err wza_open(const char *path, int create, wza_archive **out, wz_diag *diag)
{
	return open_at(path, create, WZA_SCHEMA_VERSION, out, diag);
}

wz_err wza_create_at_version(const char *path, int version, wz_diag *diag)
{
	if (version < 1 || version > WZA_SCHEMA_VERSION)
		return wz_diag_set(diag, WZ_ERR_RANGE, "schema version %d is not in 1..%d", version,
				   WZA_SCHEMA_VERSION);
	wza_archive *a;
	wz_err err = open_at(path, 1, version, &a, diag);
	wza_close(a);
	return err;
}

void wza_close(wza_archive *a)
{
	if (!a)
		return;
	sqlite3_close(a->db);
	free(a->path);
	free(a);
}

const char *wza_path(const wza_archive *a)
{
	return a->path;
}

wz_err wza_check(wza_archive *a, wz_diag *diag)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, "check the archive", diag);
	wz_err err = WZ_OK;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		err = wza_sqlite_err(a->db, rc, a->path, "check the archive", diag);
	else if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
		err = wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: integrity check: %s", a->path,
				  (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return err;
}
