/* A sweep's report for a planner, built from its archived runs: a table of
 * the points and their runs, one table per pair of axes, and charts (cost
 * against context per format, GPUs against users, and the cost-quality
 * front across formats where codec measurements are given), each with a
 * table naming the run behind every figure (wzplan-sweep(1), REPORT). */
#ifndef WZSW_REPORT_H
#define WZSW_REPORT_H

#include "archive/archive.h"
#include "common/wz_str.h"
#include "plots/chart.h"
#include "plots/table.h"
#include "sweep/sweep.h"

/* Charts of one kind beyond this many slices are left out (and said so):
 * a sweep that needs more is read through its tables. */
#define WZSW_REPORT_MAX_SLICES 48

typedef struct {
	wzp_table **tables; /* in report order */
	char **stems;       /* each table's file stem: "points", "pair-gpu-context" */
	int ntables;
	wzp_chart **charts;
	int ncharts;
	wz_buf skipped;     /* a sentence per chart left out, with the reason */
	long points;        /* the sweep's points */
	long missing;       /* of which not in the archive */
} wzsw_report;

/* Builds the report of sweep s from the runs in archive a (the oldest run
 * of each point id).  codec, when not NULL, is a run holding codec
 * measurements (wza_run.codec, from run codec_run): each format's quality
 * is its mean "nmse" over the windows measured, and the front table and
 * chart are built from it.  Points not in the archive are counted in
 * missing and left out.  The caller frees the result with
 * wzsw_report_free. */
wz_err wzsw_report_build(const wzsw_sweep *s, wza_archive *a, const wza_run *codec,
			 long long codec_run, wzsw_report **out /* OUT */, wz_diag *diag);
void wzsw_report_free(wzsw_report *r);

/* The Pareto front of n (quality error, cost) pairs, both lower-better:
 * front[i] = 1 when no other pair is at least as good in both and better
 * in one.  Pairs with a NaN are never on it. */
void wzsw_pareto(const double *error, const double *cost, int n, int *front /* OUT */);

#endif
