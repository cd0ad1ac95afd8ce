/* What the archive's source files share and nobody else sees. */
#ifndef WZA_INTERNAL_H
#define WZA_INTERNAL_H

#include <sqlite3.h>

#include "archive/archive.h"

struct wza_archive {
	sqlite3 *db;
	char *path;
	int readonly; /* opened read-only: the file or its folder is not writable */
};

/* Maps an SQLite result code to a wz_err with a message naming the archive
 * and what was being done ("store the run"). */
wz_err wza_sqlite_err(sqlite3 *db, int rc, const char *path, const char *doing, wz_diag *diag);
/* The same with SQLite's message DETAIL kept from the call that failed
 * (later calls on the connection replace what sqlite3_errmsg returns). */
wz_err wza_sqlite_err_detail(int rc, const char *detail, const char *path, const char *doing,
			     wz_diag *diag);
/* Runs SQL without results. */
wz_err wza_exec(wza_archive *a, const char *sql, const char *doing, wz_diag *diag);

#endif
