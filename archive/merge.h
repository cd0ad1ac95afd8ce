/* Sweep points in the archive: finding the runs of a sweep's points, and
 * merging archives (from shards of a sweep run apart) into one. */
#ifndef WZA_MERGE_H
#define WZA_MERGE_H

#include "archive/archive.h"

/* A sweep's run carries three inputs of kind "sweep": "sweep" (the
 * sweep's id), "point" (the point's id, 16 hex digits) and "params" (the
 * point's index and parameters as "key = value" lines). */
#define WZA_SWEEP_KIND "sweep"
#define WZA_SWEEP_NAME "sweep"
#define WZA_SWEEP_POINT "point"
#define WZA_SWEEP_PARAMS "params"

typedef struct {
	long long run;
	char *point, *sweep;
} wza_point_run;

/* Every run that carries a point id, oldest first; with sweep not NULL
 * only that sweep's.  Free with wza_point_runs_free. */
wz_err wza_point_runs(wza_archive *a, const char *sweep, wza_point_run **out /* OUT */,
		      int *n /* OUT */, wz_diag *diag);
void wza_point_runs_free(wza_point_run *runs, int n);

/* The point id a run carries, or NULL. */
const char *wza_run_point_id(const wza_run *run);

/* Stores a sweep point's run unless a run of the same point id is already
 * in the archive: the look and the write are one transaction (BEGIN
 * IMMEDIATE, which writers take one at a time), so two sweeps running the
 * same points at once store each point once.  *holder (may be NULL) gets
 * the run that was there, or 0 when this one was stored (run->id set).  A
 * run without a point id is stored as wza_store does. */
wz_err wza_store_point(wza_archive *a, wza_run *run, long long *holder /* OUT */, wz_diag *diag);

/* Stores runs in one transaction (store.c): all of them or none. */
wz_err wza_store_many(wza_archive *a, wza_run *const *runs, int n, wz_diag *diag);

typedef enum {
	WZA_DUP_REFUSE = 0, /* a point already there or given twice: error */
	WZA_DUP_SKIP = 1,   /* keep the first, when the figures agree */
} wza_dup_policy;

typedef struct {
	long copied;     /* runs written to the output */
	long duplicates; /* runs left out as duplicates of a point */
} wza_merge_stats;

/* Copies every run of the archives `in` into `out` (created when absent)
 * in one transaction: runs keep their inputs, figures, series and fleets
 * and get new run ids in the output.  Runs with a point id already in the
 * output or earlier in the inputs are refused, or with WZA_DUP_SKIP left
 * out (and refused when their figures differ).  Inputs that are not wzplan
 * archives, or of a schema other than this build's, are refused.  On any
 * error the output is as it was (or absent, when it was). */
wz_err wza_merge(const char *out, char *const *in, int nin, wza_dup_policy policy,
		 wza_merge_stats *stats /* OUT */, wz_diag *diag);

#endif
