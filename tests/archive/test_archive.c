/* Unit tests of the result archive: round trip of a run, schema identity,
 * migration from version 1, refusal of future versions and foreign files,
 * and a full disk (SQLITE_FULL) that loses nothing stored. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "tests/tap.h"

static char dir[256];

static char *path_in(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ % 4];
	snprintf(p, 512, "%s/%s", dir, name);
	return p;
}

static int pragma(const char *path, const char *name)
{
	sqlite3 *db;
	int v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		char sql[64];
		sqlite3_stmt *st;
		snprintf(sql, sizeof sql, "PRAGMA %s", name);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				v = sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(db);
	return v;
}

static int exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static wza_run *sample_run(int nfig)
{
	char *argv[] = { "--out", "p", "--users", "10,000" };
	wza_run *r = wza_run_new("propose", 4, argv, "0.1.0-test");
	wza_run_input(r, "scenario", "scenario", "embedded:product-page", "0123456789abcdef", 12,
		      "users = 10\n");
	wza_run_input(r, "trace", "w1.safetensors", "/nowhere/w1.safetensors", "fedcba9876543210",
		      1 << 20, NULL);
	for (int i = 0; i < nfig; i++) {
		char row[32];
		snprintf(row, sizeof row, "fmt-%d", i);
		wza_run_figure(r, "cost", row, "gpus", 1000.0 + i / 3.0, NULL);
	}
	wza_run_figure(r, "cost", "fmt-0", "label", NAN, "fp8, \"mixed\"");
	wza_run_codec(r, "w1", "wz-5.44", "nmse", 1.25e-3, 1.1e-3, 1.4e-3, 5.4375, "fedcba9876543210");
	wza_run_codec(r, "w1", "fp8-mix", "nmse", 2.5e-3, NAN, NAN, 8.0555, NULL);
	wza_run_sim(r, "wz-5.44", "ttft_p99", 1.75, "s");
	wza_run_point(r, "wz-5.44", "occupancy", 0, 0.5);
	wza_run_point(r, "wz-5.44", "occupancy", 60, 0.75);
	wza_fleet f = { "wz-5.44", "memory", 784, 49, 13735680, 24792902.4, 8409600, 15179328 };
	wza_run_fleet(r, &f);
	wza_run_finish(r, "ok");
	return r;
}

static void test_round_trip(void)
{
	wza_archive *a;
	wz_diag d;
	const char *p = path_in("sub/dir/a.sqlite");
	ok(wza_open(p, 1, &a, &d) == WZ_OK, "create an archive (and its folders)");
	is_long(pragma(p, "application_id"), WZA_APPLICATION_ID, "application_id is wzplan's");
	is_long(pragma(p, "user_version"), WZA_SCHEMA_VERSION, "user_version is the schema version");
	wza_run *r = sample_run(10);
	ok(wza_store(a, r, &d) == WZ_OK && r->id == 1, "store a run: id 1");
	wza_run *back = NULL;
	ok(wza_load(a, 1, &back, &d) == WZ_OK, "load it back");
	if (back) {
		is_str(back->command, "propose", "command");
		is_str(back->args, "[\"--out\",\"p\",\"--users\",\"10,000\"]", "arguments as JSON");
		is_str(back->version, "0.1.0-test", "program version");
		is_str(back->status, "ok", "status");
		is_long(back->ninputs, 2, "inputs");
		is_str(back->inputs[0].content, "users = 10\n", "scenario text kept");
		ok(back->inputs[1].content == NULL && back->inputs[1].size == (1 << 20),
		   "trace: size and hash, no content");
		is_long(back->nfigures, 11, "figures");
		const wza_figure *f = wza_run_find_figure(back, "cost", "fmt-2", "gpus");
		ok(f && f->value == 1000.0 + 2 / 3.0, "a figure's value is exact");
		f = wza_run_find_figure(back, "cost", "fmt-0", "label");
		ok(f && isnan(f->value) && !strcmp(f->text, "fp8, \"mixed\""), "a text figure");
		is_long(back->ncodec, 2, "codec measurements");
		ok(back->ncodec == 2 && back->codec[0].ci_low == 1.1e-3 && isnan(back->codec[1].ci_low),
		   "confidence intervals, NaN when absent");
		ok(back->nsim == 1 && back->npoints == 2 && back->points[1].y == 0.75, "sim results");
		ok(back->nfleets == 1 && back->fleets[0].gpus == 784, "fleets");
	}
	wza_run_free(back);
	wza_run_free(r);
	ok(wza_load(a, 99, &back, &d) == WZ_ERR_NOT_FOUND, "unknown run: not found");
	wza_run_info *runs;
	int n;
	ok(wza_list(a, &runs, &n, &d) == WZ_OK && n == 1 && runs[0].nfigures == 11, "list");
	wza_list_free(runs, n);
	ok(wza_check(a, &d) == WZ_OK, "integrity check passes");
	wza_close(a);
}

static void test_migration(void)
{
	wz_diag d;
	const char *p = path_in("v1.sqlite");
	ok(wza_create_at_version(p, 1, &d) == WZ_OK, "create a version 1 archive");
	is_long(pragma(p, "user_version"), 1, "it is at version 1");
	ok(exec(p, "INSERT INTO runs VALUES (7, 'propose', '[]', '0.0.9', '2026-01-01T00:00:00Z', "
		   "'2026-01-01T00:00:01Z', 'ok');"
		   "INSERT INTO figures VALUES (7, 'cost', 'fp8-mix', 'gpus', 1000, NULL);") ==
		   SQLITE_OK,
	   "a run written by a version 1 program");
	ok(exec(p, "SELECT count(*) FROM codec_measurements") != SQLITE_OK,
	   "version 1 has no codec table");
	wza_archive *a;
	ok(wza_open(p, 0, &a, &d) == WZ_OK, "open migrates it");
	is_long(pragma(p, "user_version"), WZA_SCHEMA_VERSION, "now at the current version");
	wza_run *back = NULL;
	ok(a && wza_load(a, 7, &back, &d) == WZ_OK && back->nfigures == 1 &&
		   back->figures[0].value == 1000,
	   "the old run survives the migration");
	wza_run_free(back);
	wza_run *r = sample_run(3);
	ok(a && wza_store(a, r, &d) == WZ_OK && r->id == 8, "a new run with codec rows lands");
	wza_run_free(r);
	wza_close(a);
}

static void test_refusals(void)
{
	wz_diag d;
	wza_archive *a = NULL;
	const char *p = path_in("future.sqlite");
	wza_create_at_version(p, WZA_SCHEMA_VERSION, &d);
	exec(p, "PRAGMA user_version = 99");
	ok(wza_open(p, 1, &a, &d) == WZ_ERR_VERSION && !a, "a future schema version is refused");
	has_str(d.msg, "schema version 99 is newer", "the message says why");
	is_long(wz_exit_status(d.code), 2, "exit status 2");
	is_long(pragma(p, "user_version"), 99, "the future archive is left alone");

	p = path_in("text.sqlite");
	FILE *f = fopen(p, "w");
	fputs("this is not a database, but it is long enough to look like a header......\n"
	      "................................................................................\n",
	      f);
	fclose(f);
	ok(wza_open(p, 1, &a, &d) == WZ_ERR_INPUT, "a text file is refused");
	has_str(d.msg, "not a wzplan archive", "named as not an archive");

	p = path_in("other.sqlite");
	exec(p, "PRAGMA application_id = 42; CREATE TABLE t(x);");
	ok(wza_open(p, 1, &a, &d) == WZ_ERR_INPUT, "another program's database is refused");
	p = path_in("plain.sqlite");
	exec(p, "CREATE TABLE t(x); PRAGMA user_version = 3;");
	ok(wza_open(p, 1, &a, &d) == WZ_ERR_INPUT, "a database with no application id is refused");
	ok(wza_open(path_in("absent.sqlite"), 0, &a, &d) == WZ_ERR_NOT_FOUND,
	   "reading an archive that does not exist: not found");

	/* Another program's database without an application id or a version,
	 * even one with a table named like ours, is left exactly as it was. */
	const char *names[] = { "foreign.sqlite", "foreign-runs.sqlite" };
	const char *sql[] = { "CREATE TABLE t(x);", "CREATE TABLE runs(id INTEGER PRIMARY KEY);" };
	for (int i = 0; i < 2; i++) {
		p = path_in(names[i]);
		exec(p, sql[i]);
		for (int create = 0; create < 2; create++) {
			ok(wza_open(p, create, &a, &d) == WZ_ERR_INPUT && !a,
			   "%s, %s: refused", names[i], create ? "writing" : "reading");
			has_str(d.msg, "not a wzplan archive", "  named as not an archive");
		}
		char wal[300];
		snprintf(wal, sizeof wal, "%s-wal", p);
		ok(pragma(p, "application_id") == 0 && pragma(p, "user_version") == 0 &&
			   pragma(p, "page_count") == 2 && access(wal, F_OK) != 0,
		   "%s: left unchanged (no id, no version, no tables added, not WAL)", names[i]);
	}
	/* An empty file is made an archive only by a command that stores. */
	p = path_in("empty.sqlite");
	fclose(fopen(p, "w"));
	ok(wza_open(p, 0, &a, &d) == WZ_ERR_NOT_FOUND && !a, "reading an empty file: no archive");
	struct stat st;
	ok(stat(p, &st) == 0 && st.st_size == 0, "  and the file is still empty");
	ok(wza_open(p, 1, &a, &d) == WZ_OK && a, "storing into an empty file makes it an archive");
	wza_close(a);
}

static void test_full_disk(void)
{
	wz_diag d;
	wza_archive *a;
	const char *p = path_in("full.sqlite");
	wza_open(p, 1, &a, &d);
	wza_run *r = sample_run(5);
	ok(wza_store(a, r, &d) == WZ_OK, "a first run lands");
	wza_run_free(r);
	wza_close(a);
	/* Cap the file at the pages it has now: the next write is a full disk. */
	setenv("WZ_ARCHIVE_TEST_MAX_PAGES", "1", 1);
	ok(wza_open(p, 1, &a, &d) == WZ_OK, "open with the disk full");
	r = sample_run(2000);
	wz_err err = wza_store(a, r, &d);
	ok(err == WZ_ERR_IO, "storing on a full disk fails");
	has_str(d.msg, "disk is full", "the message says the disk is full");
	has_str(d.msg, "nothing stored before was changed", "and that nothing was lost");
	wza_run_free(r);
	wza_close(a);
	unsetenv("WZ_ARCHIVE_TEST_MAX_PAGES");
	wza_open(p, 0, &a, &d);
	wza_run_info *runs;
	int n = 0;
	ok(wza_list(a, &runs, &n, &d) == WZ_OK && n == 1 && runs[0].nfigures == 6,
	   "the first run is whole, the failed one absent");
	wza_list_free(runs, n);
	ok(wza_check(a, &d) == WZ_OK, "integrity check passes");
	wza_close(a);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/wzplan-archive.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip();
	test_migration();
	test_refusals();
	test_full_disk();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
