/* What the archive's source files share and nobody else sees. */
#ifndef WZA_INTERNAL_H
#define WZA_INTERNAL_H

#include <sqlite3.h>
#include <time.h>

#include "archive/archive.h"

struct wza_archive {
	sqlite3 *db;
	char *path;
	int readonly; /* opened read-only: the file or its folder is not writable */
	struct timespec stmt_start; /* when the statement now running began */
};

/* Longest one statement may run (WZA_QUERY_LIMIT_S, archive.h) before it
 * is stopped with SQLITE_INTERRUPT: an archive is input, and a view that
 * recurses forever must not hang a command that reads it. */
void wza_limit_queries(wza_archive *a);

/* Maps an SQLite result code to a wz_err with a message naming the archive
 * and what was being done ("store the run"). */
wz_err wza_sqlite_err(sqlite3 *db, int rc, const char *path, const char *doing, wz_diag *diag);
/* The same with SQLite's message DETAIL kept from the call that failed
 * (later calls on the connection replace what sqlite3_errmsg returns). */
wz_err wza_sqlite_err_detail(int rc, const char *detail, const char *path, const char *doing,
			     wz_diag *diag);
/* Refuses an archive whose names of wzplan's tables (those of schema
 * `version`) are something other than tables: a view there would be run by
 * every query, and one that recurses never ends. */
wz_err wza_check_tables(wza_archive *a, int version, wz_diag *diag);
/* Runs SQL without results. */
wz_err wza_exec(wza_archive *a, const char *sql, const char *doing, wz_diag *diag);

#endif
