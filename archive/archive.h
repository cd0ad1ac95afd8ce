/* The result archive: one SQLite file holding every run with its inputs and
 * figures, so that runs can be listed, exported, compared and recomputed. */
#ifndef WZA_ARCHIVE_H
#define WZA_ARCHIVE_H

#include "common/wz_error.h"

/* PRAGMA application_id of every wzplan archive: "WzPl" in ASCII. */
#define WZA_APPLICATION_ID 0x577A506C
/* PRAGMA user_version this build writes; older archives are migrated, newer
 * ones refused. */
#define WZA_SCHEMA_VERSION 2
/* The longest one SQL statement on an archive may run, in seconds; past it
 * the statement is stopped and the command fails with WZ_ERR_INPUT (an
 * archive is input: a view that recurses forever must not hang it). */
#define WZA_QUERY_LIMIT_S 10
/* File name under $XDG_DATA_HOME/wzplan/ (or ~/.local/share/wzplan/). */
#define WZA_DEFAULT_NAME "archive.sqlite"

/* A recorded input: kind "scenario", "catalog", "trace", "profile", "seed"
 * or "option"; name (e.g. "models.csv"); origin (an absolute path, or
 * "embedded:models.csv"); hash (XXH3-64, 16 hex digits) and size of the
 * bytes used; content: the text itself for small text inputs, else NULL. */
typedef struct {
	char *kind, *name, *origin, *hash, *content;
	long long size;
} wza_input;

/* One figure of a result table: (table, row, column) -> value, with an
 * optional text for non-numeric cells (value is NaN then). */
typedef struct {
	char *table, *row, *col, *text;
	double value;
} wza_figure;

/* One codec measurement: a metric of a format on a trace window, with its
 * bootstrap confidence interval (NaN when not computed). */
typedef struct {
	long long run; /* filled when loaded from an archive */
	char *window, *format, *metric, *trace_hash;
	double value, ci_low, ci_high, bits_per_value;
} wza_codec;

/* A scalar simulation result (p99 latency, fleet size, ...) for a format. */
typedef struct {
	char *format, *metric, *unit;
	double value;
} wza_sim;

/* A point of a simulation series (latency distribution, occupancy over
 * time) for a format: series names what x and y are. */
typedef struct {
	char *format, *series;
	double x, y;
} wza_point;

/* A fleet and its cost: method "scaling" or "memory". */
typedef struct {
	char *format, *method;
	long gpus, replicas;
	double reserved_usd_year, ondemand_usd_year, saving_reserved, saving_ondemand;
} wza_fleet;

/* A run in memory: built by a command and stored in one transaction, or
 * loaded back.  After an allocation failure `failed` is set and further
 * additions do nothing; wza_store refuses such a run. */
typedef struct {
	long long id;        /* 0 until stored */
	char *command;       /* "propose" */
	char *args;          /* JSON array of the arguments after the command */
	char *version;       /* program version */
	char *started, *finished; /* UTC, "2026-11-30T23:59:59Z" */
	char *status;        /* "ok" or "failed" */
	wza_input *inputs;
	int ninputs, cap_inputs;
	wza_figure *figures;
	int nfigures, cap_figures;
	wza_codec *codec;
	int ncodec, cap_codec;
	wza_sim *sim;
	int nsim, cap_sim;
	wza_point *points;
	int npoints, cap_points;
	wza_fleet *fleets;
	int nfleets, cap_fleets;
	int failed;
} wza_run;

/* Starts a run now.  argv holds the arguments after the command (may be
 * empty).  Returns NULL when out of memory; free with wza_run_free. */
wza_run *wza_run_new(const char *command, int argc, char *const *argv, const char *version);
void wza_run_free(wza_run *run);
/* Sets the end time and the status. */
void wza_run_finish(wza_run *run, const char *status);

void wza_run_input(wza_run *run, const char *kind, const char *name, const char *origin,
		   const char *hash, long long size, const char *content);
void wza_run_figure(wza_run *run, const char *table, const char *row, const char *col,
		    double value, const char *text);
void wza_run_codec(wza_run *run, const char *window, const char *format, const char *metric,
		   double value, double ci_low, double ci_high, double bits_per_value,
		   const char *trace_hash);
void wza_run_sim(wza_run *run, const char *format, const char *metric, double value,
		 const char *unit);
void wza_run_point(wza_run *run, const char *format, const char *series, double x, double y);
void wza_run_fleet(wza_run *run, const wza_fleet *fleet);

/* Look-ups in a run; NULL when absent. */
const wza_figure *wza_run_find_figure(const wza_run *run, const char *table, const char *row,
				      const char *col);
const wza_input *wza_run_find_input(const wza_run *run, const char *kind, const char *name);
/* A figure's value (NaN when absent), and its text (`absent` when the
 * figure is absent or has none). */
double wza_run_value(const wza_run *run, const char *table, const char *row, const char *col);
const char *wza_run_text(const wza_run *run, const char *table, const char *row, const char *col,
			 const char *absent);

typedef struct wza_archive wza_archive;

/* The default archive path: $WZPLAN_ARCHIVE, else
 * $XDG_DATA_HOME/wzplan/archive.sqlite, else
 * $HOME/.local/share/wzplan/archive.sqlite.  The caller frees the result. */
wz_err wza_default_path(char **out /* OUT */, wz_diag *diag);

/* Opens (and with `create`, creates, along with its folder) an archive,
 * migrating an older schema.  Refuses files that are not wzplan archives
 * and archives from a newer schema (WZ_ERR_VERSION).  Close with
 * wza_close. */
wz_err wza_open(const char *path, int create, wza_archive **out /* OUT */, wz_diag *diag);
void wza_close(wza_archive *a);
const char *wza_path(const wza_archive *a);

/* Stores a run in one transaction (BEGIN IMMEDIATE): it is there whole or
 * not at all.  Sets run->id. */
wz_err wza_store(wza_archive *a, wza_run *run, wz_diag *diag);

/* Runs without their contents, newest first. */
typedef struct {
	long long id;
	char *command, *args, *version, *started, *finished, *status;
	int nfigures;
} wza_run_info;
wz_err wza_list(wza_archive *a, wza_run_info **out /* OUT */, int *n /* OUT */, wz_diag *diag);
void wza_list_free(wza_run_info *runs, int n);

/* Loads a whole run; WZ_ERR_NOT_FOUND when there is no such id.  The caller
 * frees the result with wza_run_free. */
wz_err wza_load(wza_archive *a, long long id, wza_run **out /* OUT */, wz_diag *diag);

/* Every codec measurement in the archive (all runs), oldest run first, in a
 * run object whose codec[] carries each row's run id.  Free with
 * wza_run_free. */
wz_err wza_load_codec(wza_archive *a, wza_run **out /* OUT */, wz_diag *diag);

/* PRAGMA integrity_check: WZ_OK when "ok", WZ_ERR_CORRUPT otherwise. */
wz_err wza_check(wza_archive *a, wz_diag *diag);

/* For tests: creates a new archive at an older schema version (1..current). */
wz_err wza_create_at_version(const char *path, int version, wz_diag *diag);

#endif
