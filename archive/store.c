/* Writing a run in one transaction and reading runs back (archive.h). */
#include "archive/internal.h"
#include "archive/merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	wza_archive *a;
	int rc;
	char msg[256]; /* SQLite's message for the step that failed: later calls replace it */
} writer;

static sqlite3_stmt *prepare(writer *w, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (w->rc == SQLITE_OK)
		w->rc = sqlite3_prepare_v2(w->a->db, sql, -1, &st, NULL);
	return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *text)
{
	if (text)
		sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* NaN means "no value": stored as NULL so SQL sees it as missing. */
static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

static void step(writer *w, sqlite3_stmt *st)
{
	if (w->rc != SQLITE_OK)
		return;
	int rc = sqlite3_step(st);
	w->rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	if (w->rc != SQLITE_OK)
		snprintf(w->msg, sizeof w->msg, "%s", sqlite3_errmsg(w->a->db));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Test hook: WZ_ARCHIVE_TEST_SLEEP_MS=N sleeps inside the write transaction
 * after half the figures, so a test can kill the process mid-write. */
static void test_pause(void)
{
	const char *ms = getenv("WZ_ARCHIVE_TEST_SLEEP_MS");
	if (ms && *ms) {
		long n = atol(ms);
		struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static void write_run(writer *w, wza_run *run, sqlite3_int64 *id)
{
	sqlite3_stmt *st = prepare(w, "INSERT INTO runs (command, args, version, started, "
				      "finished, status) VALUES (?, ?, ?, ?, ?, ?)");
	if (st) {
		bind_text(st, 1, run->command);
		bind_text(st, 2, run->args);
		bind_text(st, 3, run->version);
		bind_text(st, 4, run->started);
		bind_text(st, 5, run->finished ? run->finished : run->started);
		bind_text(st, 6, run->status);
		step(w, st);
		*id = sqlite3_last_insert_rowid(w->a->db);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO inputs VALUES (?, ?, ?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, in->kind);
		bind_text(st, 3, in->name);
		bind_text(st, 4, in->origin);
		bind_text(st, 5, in->hash);
		sqlite3_bind_int64(st, 6, in->size);
		bind_text(st, 7, in->content);
		step(w, st);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (i == run->nfigures / 2)
			test_pause();
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, f->table);
		bind_text(st, 3, f->row);
		bind_text(st, 4, f->col);
		bind_real(st, 5, f->value);
		bind_text(st, 6, f->text);
		step(w, st);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO codec_measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->ncodec; i++) {
		const wza_codec *c = &run->codec[i];
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, c->window);
		bind_text(st, 3, c->format);
		bind_text(st, 4, c->metric);
		bind_real(st, 5, c->value);
		bind_real(st, 6, c->ci_low);
		bind_real(st, 7, c->ci_high);
		bind_real(st, 8, c->bits_per_value);
		bind_text(st, 9, c->trace_hash);
		step(w, st);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO sim_results VALUES (?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->nsim; i++) {
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, run->sim[i].format);
		bind_text(st, 3, run->sim[i].metric);
		bind_real(st, 4, run->sim[i].value);
		bind_text(st, 5, run->sim[i].unit);
		step(w, st);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO sim_series VALUES (?, ?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->npoints; i++) {
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, run->points[i].format);
		bind_text(st, 3, run->points[i].series);
		sqlite3_bind_int(st, 4, i);
		bind_real(st, 5, run->points[i].x);
		bind_real(st, 6, run->points[i].y);
		step(w, st);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO fleets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	for (int i = 0; st && i < run->nfleets; i++) {
		const wza_fleet *f = &run->fleets[i];
		sqlite3_bind_int64(st, 1, *id);
		bind_text(st, 2, f->format);
		bind_text(st, 3, f->method);
		sqlite3_bind_int64(st, 4, f->gpus);
		sqlite3_bind_int64(st, 5, f->replicas);
		bind_real(st, 6, f->reserved_usd_year);
		bind_real(st, 7, f->ondemand_usd_year);
		bind_real(st, 8, f->saving_reserved);
		bind_real(st, 9, f->saving_ondemand);
		step(w, st);
	}
	sqlite3_finalize(st);
}

/* The run already holding sweep point `point` in the open transaction, or 0. */
static sqlite3_int64 point_holder(writer *w, const char *point)
{
	sqlite3_stmt *st = prepare(w, "SELECT run FROM inputs WHERE kind = '" WZA_SWEEP_KIND
				      "' AND name = '" WZA_SWEEP_POINT "' AND content = ?1 "
				      "ORDER BY run LIMIT 1");
	if (!st)
		return 0;
	bind_text(st, 1, point);
	sqlite3_int64 id = 0;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE && w->rc == SQLITE_OK)
		w->rc = rc;
	sqlite3_finalize(st);
	return id;
}

static wz_err store(wza_archive *a, wza_run *run, const char *point, long long *holder,
		    wz_diag *diag)
{
	if (holder)
		*holder = 0;
	if (run->failed)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory while collecting the run");
	if (!run->finished)
		wza_run_finish(run, run->status ? run->status : "ok");
	if (a->readonly)
		return wz_diag_set(diag, WZ_ERR_IO,
				   "%s: cannot store the run: the archive is read-only (no write "
				   "permission on the file or its folder); nothing stored before was "
				   "changed",
				   a->path);
	wz_err err = wza_exec(a, "BEGIN IMMEDIATE", "store the run", diag);
	if (err)
		return err;
	writer w = { a, SQLITE_OK, "" };
	sqlite3_int64 id = 0, there = point ? point_holder(&w, point) : 0;
	if (!there)
		write_run(&w, run, &id);
	if (w.rc == SQLITE_OK)
		w.rc = sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL);
	if (w.rc != SQLITE_OK) {
		err = *w.msg ? wza_sqlite_err_detail(w.rc, w.msg, a->path, "store the run", diag)
			     : wza_sqlite_err(a->db, w.rc, a->path, "store the run", diag);
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		return err;
	}
	if (there && holder)
		*holder = there;
	run->id = there ? 0 : id;
	return WZ_OK;
}

wz_err wza_store(wza_archive *a, wza_run *run, wz_diag *diag)
{
	return store(a, run, NULL, NULL, diag);
}

wz_err wza_store_point(wza_archive *a, wza_run *run, long long *holder, wz_diag *diag)
{
	return store(a, run, wza_run_point_id(run), holder, diag);
}

static char *col_text(sqlite3_stmt *st, int i, int *failed)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	if (!t)
		return NULL;
	char *d = strdup((const char *)t);
	if (!d)
		*failed = 1;
	return d;
}

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

wz_err wza_list(wza_archive *a, wza_run_info **out, int *n, wz_diag *diag)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db,
				    "SELECT id, command, args, version, started, finished, status, "
				    "(SELECT count(*) FROM figures f WHERE f.run = runs.id) "
				    "FROM runs ORDER BY id DESC",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, "list the runs", diag);
	int cap = 0, failed = 0;
	wza_run_info *runs = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !failed) {
		if (*n == cap) {
			int ncap = cap ? cap * 2 : 16;
			wza_run_info *p = realloc(runs, (size_t)ncap * sizeof *p);
			if (!p) {
				failed = 1;
				break;
			}
			runs = p;
			cap = ncap;
		}
		wza_run_info *r = &runs[(*n)++];
		r->id = sqlite3_column_int64(st, 0);
		r->command = col_text(st, 1, &failed);
		r->args = col_text(st, 2, &failed);
		r->version = col_text(st, 3, &failed);
		r->started = col_text(st, 4, &failed);
		r->finished = col_text(st, 5, &failed);
		r->status = col_text(st, 6, &failed);
		r->nfigures = sqlite3_column_int(st, 7);
	}
	wz_err err = WZ_OK;
	if (failed)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	else if (rc != SQLITE_DONE)
		err = wza_sqlite_err(a->db, rc, a->path, "list the runs", diag);
	sqlite3_finalize(st);
	if (err) {
		wza_list_free(runs, *n);
		*n = 0;
		return err;
	}
	*out = runs;
	return WZ_OK;
}

void wza_list_free(wza_run_info *runs, int n)
{
	for (int i = 0; i < n; i++) {
		free(runs[i].command), free(runs[i].args), free(runs[i].version);
		free(runs[i].started), free(runs[i].finished), free(runs[i].status);
	}
	free(runs);
}

/* Runs a query with the run id bound to ?1 and hands each row to fn. */
static int load_rows(wza_archive *a, const char *sql, long long id, wza_run *run,
		     void (*fn)(sqlite3_stmt *, wza_run *))
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (id)
		sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fn(st, run);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

#define T(i) (const char *)sqlite3_column_text(st, i)

static void row_input(sqlite3_stmt *st, wza_run *run)
{
	wza_run_input(run, T(0), T(1), T(2), T(3), sqlite3_column_int64(st, 4), T(5));
}

static void row_figure(sqlite3_stmt *st, wza_run *run)
{
	wza_run_figure(run, T(0), T(1), T(2), col_real(st, 3), T(4));
}

static void row_codec(sqlite3_stmt *st, wza_run *run)
{
	wza_run_codec(run, T(0), T(1), T(2), col_real(st, 3), col_real(st, 4), col_real(st, 5),
		      col_real(st, 6), T(7));
	if (!run->failed)
		run->codec[run->ncodec - 1].run = sqlite3_column_int64(st, 8);
}

static void row_sim(sqlite3_stmt *st, wza_run *run)
{
	wza_run_sim(run, T(0), T(1), col_real(st, 2), T(3));
}

static void row_point(sqlite3_stmt *st, wza_run *run)
{
	wza_run_point(run, T(0), T(1), col_real(st, 2), col_real(st, 3));
}

static void row_fleet(sqlite3_stmt *st, wza_run *run)
{
	wza_fleet f = {
		.format = (char *)T(0), .method = (char *)T(1),
		.gpus = (long)sqlite3_column_int64(st, 2), .replicas = (long)sqlite3_column_int64(st, 3),
		.reserved_usd_year = col_real(st, 4), .ondemand_usd_year = col_real(st, 5),
		.saving_reserved = col_real(st, 6), .saving_ondemand = col_real(st, 7),
	};
	wza_run_fleet(run, &f);
}

#undef T

wz_err wza_load(wza_archive *a, long long id, wza_run **out, wz_diag *diag)
{
	*out = NULL;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, "SELECT command, args, version, started, finished, "
					   "status FROM runs WHERE id = ?1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, "read the run", diag);
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		wz_err err = rc == SQLITE_DONE
				     ? wz_diag_set(diag, WZ_ERR_NOT_FOUND, "%s: no run %lld (see "
									  "'wzplan archive list')",
						   a->path, id)
				     : wza_sqlite_err(a->db, rc, a->path, "read the run", diag);
		sqlite3_finalize(st);
		return err;
	}
	wza_run *run = calloc(1, sizeof *run);
	if (!run) {
		sqlite3_finalize(st);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	run->id = id;
	run->command = col_text(st, 0, &run->failed);
	run->args = col_text(st, 1, &run->failed);
	run->version = col_text(st, 2, &run->failed);
	run->started = col_text(st, 3, &run->failed);
	run->finished = col_text(st, 4, &run->failed);
	run->status = col_text(st, 5, &run->failed);
	sqlite3_finalize(st);
	rc = load_rows(a, "SELECT kind, name, origin, hash, size, content FROM inputs "
			  "WHERE run = ?1 ORDER BY rowid", id, run, row_input);
	if (rc == SQLITE_OK)
		rc = load_rows(a, "SELECT tbl, row_key, col, value, text FROM figures "
				  "WHERE run = ?1 ORDER BY rowid", id, run, row_figure);
	if (rc == SQLITE_OK)
		rc = load_rows(a, "SELECT window_name, format, metric, value, ci_low, ci_high, "
				  "bits_per_value, trace_hash, run FROM codec_measurements "
				  "WHERE run = ?1 ORDER BY rowid", id, run, row_codec);
	if (rc == SQLITE_OK)
		rc = load_rows(a, "SELECT format, metric, value, unit FROM sim_results "
				  "WHERE run = ?1 ORDER BY rowid", id, run, row_sim);
	if (rc == SQLITE_OK)
		rc = load_rows(a, "SELECT format, series, x, y FROM sim_series "
				  "WHERE run = ?1 ORDER BY seq", id, run, row_point);
	if (rc == SQLITE_OK)
		rc = load_rows(a, "SELECT format, method, gpus, replicas, reserved_usd_year, "
				  "ondemand_usd_year, saving_reserved, saving_ondemand FROM fleets "
				  "WHERE run = ?1 ORDER BY rowid", id, run, row_fleet);
	wz_err err = WZ_OK;
	if (rc != SQLITE_OK)
		err = wza_sqlite_err(a->db, rc, a->path, "read the run", diag);
	else if (run->failed)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (err) {
		wza_run_free(run);
		return err;
	}
	*out = run;
	return WZ_OK;
}

wz_err wza_load_codec(wza_archive *a, wza_run **out, wz_diag *diag)
{
	*out = NULL;
	wza_run *run = calloc(1, sizeof *run);
	if (!run)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	int rc = load_rows(a, "SELECT window_name, format, metric, value, ci_low, ci_high, "
			      "bits_per_value, trace_hash, run FROM codec_measurements "
			      "ORDER BY run, rowid", 0, run, row_codec);
	wz_err err = WZ_OK;
	if (rc != SQLITE_OK)
		err = wza_sqlite_err(a->db, rc, a->path, "read the codec measurements", diag);
	else if (run->failed)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (err) {
		wza_run_free(run);
		return err;
	}
	*out = run;
	return WZ_OK;
}

wz_err wza_store_many(wza_archive *a, wza_run *const *runs, int n, wz_diag *diag)
{
	for (int i = 0; i < n; i++)
		if (runs[i]->failed)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory while collecting run %d", i);
	if (a->readonly)
		return wz_diag_set(diag, WZ_ERR_IO,
				   "%s: cannot store the runs: the archive is read-only; nothing "
				   "stored before was changed",
				   a->path);
	wz_err err = wza_exec(a, "BEGIN IMMEDIATE", "store the runs", diag);
	if (err)
		return err;
	writer w = { a, SQLITE_OK, "" };
	sqlite3_int64 *ids = calloc((size_t)(n > 0 ? n : 1), sizeof *ids);
	if (!ids)
		w.rc = SQLITE_NOMEM;
	for (int i = 0; i < n && w.rc == SQLITE_OK; i++)
		write_run(&w, runs[i], &ids[i]);
	if (w.rc == SQLITE_OK)
		w.rc = sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL);
	if (w.rc != SQLITE_OK) {
		err = *w.msg ? wza_sqlite_err_detail(w.rc, w.msg, a->path, "store the runs", diag)
			     : wza_sqlite_err(a->db, w.rc, a->path, "store the runs", diag);
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		free(ids);
		return err;
	}
	for (int i = 0; i < n; i++)
		runs[i]->id = ids[i];
	free(ids);
	return WZ_OK;
}
